"""Every benchmark and experiment script still imports against the package as it is now.

The scripts are run by hand, not by the suite; without this, a name moved or renamed in the
package leaves a script that fails on its first line the next time someone reruns it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(p for p in (ROOT / "benchmarks").rglob("*.py") if p.name != "__init__.py")


def test_scripts_found() -> None:
    assert len(SCRIPTS) > 40, SCRIPTS  # the glob looks where the scripts are


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_script_imports(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # as `PYTHONPATH=$PWD python benchmarks/.../x.py` runs it: the root and its own folder
    monkeypatch.syspath_prepend(str(ROOT))
    monkeypatch.syspath_prepend(str(path.parent))
    name = f"_benchmark_script_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)  # runs nothing: each script's work is under __main__
