"""A mkdocs hook: serve the benchmark results and notebooks with the site, from where they are.

The pages link to ``results/...``, ``experiments/results/...``, ``data/...`` and
``notebooks/...``; those
files stay in ``benchmarks/`` and ``notebooks/`` (no copies to fall out of date), and a
link to one that is gone fails ``mkdocs build --strict``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

SERVED = {
    "benchmarks": ("results/*", "experiments/results/*", "data/*"),
    ".": ("notebooks/*.ipynb",),
}


def on_files(files: Files, config: Any) -> Files:
    """Add the repository's result files and notebooks to the site's files."""
    root = Path(config["config_file_path"]).parent
    for folder, patterns in SERVED.items():
        base = root / folder
        for pattern in patterns:
            for path in sorted(base.glob(pattern)):
                if path.is_file():
                    files.append(
                        File(
                            path.relative_to(base).as_posix(),
                            src_dir=str(base),
                            dest_dir=config["site_dir"],
                            use_directory_urls=config["use_directory_urls"],
                        )
                    )
    return files
