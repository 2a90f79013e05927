"""The wheel a user builds works on its own: no repository file needed.

``pip wheel . --no-deps`` builds it; it is installed (``--no-deps``) into a fresh virtual
environment whose dependencies come from this one's site-packages (a ``.pth`` file, since
nothing can be downloaded here), and run from an empty folder: the bundled embedding
model and the shipped learned policy must load from installed packages alone.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CHECK = """
import langchain_agentmem, sys
from langchain_agentmem import AgentMemory
assert langchain_agentmem.__file__.startswith(sys.prefix), langchain_agentmem.__file__
with AgentMemory("sqlite:///memory.db", policy="learned", capacity=10) as memory:
    memory.add("My name is Alice and I play the cello.", namespace="alice")
    memory.add("The weather was fine.", namespace="alice")
    hit = memory.search("What instrument do I play?", namespace="alice", k=1)[0]
    assert hit.text.startswith("My name is Alice"), hit
    assert memory.decisions("alice")[0].reason.startswith("learned"), memory.decisions("alice")
print("ok", langchain_agentmem.__version__)
"""


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, f"{args}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.mark.slow
def test_the_wheel_installs_and_remembers_from_an_empty_folder(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["AGENTMEM_HOME"] = str(tmp_path / "home")
    dist = tmp_path / "dist"
    build = tmp_path / "src"  # a copy of the checkout's files, so the build leaves nothing here
    listed = _run(["git", "ls-files", "-co", "--exclude-standard", "-z"], ROOT, env)
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():
            (build / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, build / name)
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            ".",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "-w",
            str(dist),
        ],
        build,
        env,
    )
    (wheel,) = dist.glob("langchain_agentmem-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.startswith("langchain_agentmem/policies/data/") for n in names)
    assert "langchain_agentmem/ranking/data/near_words.tsv" in names
    assert not any(n.startswith(("tests/", "benchmarks/", "docs/")) for n in names)

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp_path, env)
    python = venv / "bin" / "python"
    purelib = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            tmp_path,
            env,
        ).strip()
    )
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (purelib / "_deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--no-index",
            "--quiet",
            str(wheel),
        ],
        tmp_path,
        env,
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _run([str(python), "-c", CHECK], empty, env).startswith("ok ")
    version = _run([str(venv / "bin" / "agentmem"), "--version"], empty, env)
    assert version.startswith("agentmem ")
    assert {p.name for p in empty.iterdir()} <= {"memory.db", "memory.db.indexes"}
