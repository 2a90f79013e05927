"""Every place the package writes a file goes through ``langchain_agentmem.files``; what that
module refuses (links, files and folders another account could have planted), it refuses
everywhere."""

from __future__ import annotations

import ast
import os
import stat
from collections import Counter
from pathlib import Path

import pytest

from langchain_agentmem.errors import StoreError
from langchain_agentmem.files import (
    check_adopted,
    create_private_file,
    open_private,
    private_folders,
    write_file,
)

PACKAGE = Path(__file__).resolve().parents[2] / "langchain_agentmem"

MODULE_WRITES = {
    "os": {"open", "replace", "rename", "link", "symlink", "chmod", "mkdir", "makedirs"},
    "shutil": {"copy", "copy2", "copyfile", "copytree", "move"},
    "tempfile": {"mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryDirectory"},
    "np": {"save", "savez", "savez_compressed"},
    "faiss": {"write_index"},
    "onnx": {"save"},
}
"""``module.function`` calls that create, write, move or change a file or folder."""

METHOD_WRITES = {"write_text", "write_bytes", "mkdir", "touch", "symlink_to", "savefig"}
"""Methods (of a ``Path``, a figure) that do."""

ALLOWED = Counter(
    {
        # The index folder's files, each made by files.private_temp first: the naming key
        # linked into place, the faiss index written into its temporary file, both renamed.
        ("langchain_agentmem/index/persist.py", "link"): 1,
        ("langchain_agentmem/index/persist.py", "write_index"): 1,
        ("langchain_agentmem/index/persist.py", "replace"): 2,
        # An export: a new file beside the target (O_EXCL | O_NOFOLLOW, 0600) written through
        # its descriptor and renamed over it; a file already there read first, not followed.
        ("langchain_agentmem/memory/transfer.py", "replace"): 1,
        ("langchain_agentmem/memory/transfer.py", "open"): 3,
        # Arrays into a buffer that files.write_file writes.
        ("langchain_agentmem/policies/learned.py", "savez"): 1,
        ("langchain_agentmem/rl/data.py", "savez"): 1,
        # A bench's scratch store: a new folder of its own (mkdtemp: 0700, a fresh name).
        ("langchain_agentmem/cli/bench.py", "TemporaryDirectory"): 1,
        ("langchain_agentmem/cli/longmemeval.py", "TemporaryDirectory"): 1,
        ("langchain_agentmem/rl/synthetic.py", "TemporaryDirectory"): 1,
        # The ONNX export: made in a new folder inside the model's private folder
        # (files.private_folders), the checked model renamed from a files.private_temp.
        ("langchain_agentmem/embedding/quantized.py", "TemporaryDirectory"): 1,
        ("langchain_agentmem/embedding/quantized.py", "replace"): 1,
        # A chat thread's lock file: O_NOFOLLOW, 0600, in a folder files.private_folders made.
        ("langchain_agentmem/cli/chat/threads.py", "open"): 1,
        # Not files: the store's "used at" column, standard output to /dev/null, the tokens
        # file opened to be read.
        ("langchain_agentmem/memory/reads.py", "touch"): 1,
        ("langchain_agentmem/cli/pipes.py", "open"): 1,
        ("langchain_agentmem/integrations/mcp/tokens.py", "open"): 2,
    }
)
"""Writes outside ``files.py``, each with why it is safe (and how many there are)."""


def _calls(path: Path) -> Counter[str]:
    """The write calls of one module, by their last name (builtin ``open`` with a mode that
    writes counted as ``open``)."""
    found: Counter[str] = Counter()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute):
            owner = func.value.id if isinstance(func.value, ast.Name) else None
            if owner in MODULE_WRITES:
                if func.attr in MODULE_WRITES[owner]:
                    found[func.attr] += 1
            elif func.attr in METHOD_WRITES or (func.attr == "open" and _writes(node)):
                found[func.attr] += 1
        elif isinstance(func, ast.Name) and func.id == "open" and _writes(node):
            found["open"] += 1
    return found


def _writes(node: ast.Call) -> bool:
    """Whether an ``open(...)`` call's mode writes (a literal mode with w, a, x or +)."""
    modes = [a for a in node.args[1:2]] + [k.value for k in node.keywords if k.arg == "mode"]
    return any(
        isinstance(m, ast.Constant) and isinstance(m.value, str) and set(m.value) & set("wax+")
        for m in modes
    )


def test_every_write_goes_through_the_files_module() -> None:
    seen: Counter[tuple[str, str]] = Counter()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = str(path.relative_to(PACKAGE.parent))
        if module == "langchain_agentmem/files.py":
            continue
        for name, n in _calls(path).items():
            seen[module, name] += n
    unexpected = {k: v for k, v in seen.items() if v > ALLOWED.get(k, 0)}
    assert not unexpected, (
        f"files written outside langchain_agentmem.files: {unexpected}; write them through "
        "its helpers (or add the place to ALLOWED with why it is safe)"
    )
    stale = {k for k, v in ALLOWED.items() if v and seen.get(k, 0) < v}
    assert not stale, f"ALLOWED names writes that are gone: {stale}"


@pytest.fixture
def shared(tmp_path: Path) -> Path:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)  # anyone can put files here
    return folder


def test_folders_are_made_private_and_foreign_ones_refused(tmp_path: Path, shared: Path) -> None:
    made = tmp_path / "a" / "b"
    private_folders(made)
    assert stat.S_IMODE(made.stat().st_mode) == stat.S_IMODE(made.parent.stat().st_mode) == 0o700
    with pytest.raises(StoreError, match="writable by others"):
        private_folders(shared, own=True)
    link = tmp_path / "link"
    link.symlink_to(made)
    with pytest.raises(StoreError, match="not a folder but a link"):
        private_folders(link, own=True)
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    loose.chmod(0o755)
    private_folders(loose, own=True)  # the user's own: made private
    assert stat.S_IMODE(loose.stat().st_mode) == 0o700


def test_a_file_planted_in_a_shared_folder_is_not_adopted(tmp_path: Path, shared: Path) -> None:
    planted = shared / "store.db"
    planted.write_bytes(b"")
    planted.chmod(0o666)  # another account's file would be writable by it: refused either way
    with pytest.raises(StoreError, match="can be written by others"):
        create_private_file(planted)
    planted.chmod(0o600)
    assert create_private_file(planted) is False  # the user's own, private: used
    link = shared / "out.log"
    link.symlink_to(tmp_path / "victim")
    with pytest.raises(StoreError, match="is a symbolic link in"):
        check_adopted(link)
    with pytest.raises(StoreError, match="is a symbolic link"):
        open_private(link)
    assert not (tmp_path / "victim").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file of another user takes root")
def test_another_accounts_file_is_refused(shared: Path) -> None:
    planted = shared / "store.db"
    planted.write_bytes(b"")
    planted.chmod(0o600)
    os.chown(planted, 65534, 65534)
    with pytest.raises(StoreError, match=r"belongs to another user \(uid 65534\)"):
        create_private_file(planted)
    with pytest.raises(StoreError, match="not a file of yours"):
        open_private(planted, os.O_RDONLY)


def test_written_whole_and_private(tmp_path: Path) -> None:
    target = tmp_path / "new" / "data.bin"
    write_file(target, b"secret")
    assert target.read_bytes() == b"secret"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    figures = tmp_path / "figures"
    figures.mkdir(mode=0o755)
    figures.chmod(0o755)
    write_file(figures / "plot.png", b"png", private=False)  # a folder the user named
    assert stat.S_IMODE(figures.stat().st_mode) == 0o755
    aside = tmp_path / "aside"
    (figures / "link.png").symlink_to(aside)
    write_file(figures / "link.png", b"png", private=False)  # the link replaced, not followed
    assert not aside.exists() and not (figures / "link.png").is_symlink()
    assert sorted(p.name for p in figures.iterdir()) == ["link.png", "plot.png"]  # no temp left
