"""Everything the package creates or adopts on disk goes through here.

Folders it makes are 0700 and files 0600, whatever the umask; nothing is opened through a
symbolic link. A folder is *shared* when another account owns it or group or others can
write in it (a shared project folder, ``/tmp``): anything already there may have been put
there by someone else, so a link there is refused, and a file or folder there is adopted
only when it is this account's and nobody else can write to it. In a folder of the user's
own, what is there is the user's.

Personal data (the store and its siblings, saved indexes, exports, the answers cache and
log) and what is loaded back as code or a model (the ONNX cache) all pass these checks;
``tests/unit/test_files.py`` lists every place the package writes a file.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from langchain_agentmem.errors import StoreError

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
"""Open flag: fail on a symbolic link (0 where the platform has none)."""

CLOEXEC = getattr(os, "O_CLOEXEC", 0)

_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


def shared_folder(folder: Path) -> bool:
    """Whether someone else can put files in ``folder`` (another owner, or writable by
    group or others)."""
    found = os.stat(folder)
    return found.st_uid != os.geteuid() or bool(found.st_mode & _OTHERS_WRITE)


def check_own_folder(folder: Path, *, private: bool = True) -> None:
    """Refuse ``folder`` when it is a link or not a folder, another user owns it or (with
    ``private``) group or others can write in it: files made there would not be private.

    Raises:
        StoreError: naming the folder and the fix.
    """
    found = os.lstat(folder)
    if stat.S_ISLNK(found.st_mode) or not stat.S_ISDIR(found.st_mode):
        raise StoreError(
            f"{str(folder)!r} is not a folder but a link or a file; remove it (it is "
            "created as a private folder)"
        )
    if found.st_uid != os.geteuid():
        raise StoreError(
            f"folder {str(folder)!r} belongs to another user (uid {found.st_uid}); use a "
            "folder of your own (AGENTMEM_HOME, or another path)"
        )
    if private and found.st_mode & _OTHERS_WRITE:
        raise StoreError(
            f"folder {str(folder)!r} is writable by others (mode "
            f"{stat.S_IMODE(found.st_mode):o}); run chmod 700 on it"
        )


def private_folders(folder: Path, *, own: bool = False) -> None:
    """Create ``folder`` and any missing folder above it, each 0700.

    A folder this creates must end up this user's own (another process may have made it
    first); with ``own``, ``folder`` is also checked when it was there already (a folder
    this package keeps private files in), and made 0700 when others may read it.

    Raises:
        StoreError: such a folder is a link, another user's, or writable by others.
    """
    folder = Path(folder)
    missing = []
    while not os.path.lexists(folder):
        missing.append(folder)
        folder = folder.parent
    if own and not missing:
        check_own_folder(folder)
        if stat.S_IMODE(os.lstat(folder).st_mode) & 0o077:
            os.chmod(folder, 0o700)  # the user's own, not a link: made private
    for new in reversed(missing):
        with contextlib.suppress(FileExistsError):
            new.mkdir(mode=0o700)
        check_own_folder(new)


def check_adopted(path: Path) -> None:
    """Refuse an existing ``path`` in a shared folder unless it is a regular file of this
    account that nobody else can write (a file there may have been planted).

    Raises:
        StoreError: naming the file and the fix.
    """
    if not shared_folder(path.parent):
        return  # the user's own folder: what is there is the user's
    found = os.lstat(path)
    folder = f"{str(path.parent)!r}, a folder others can write in"
    if stat.S_ISLNK(found.st_mode):
        raise StoreError(
            f"{str(path)!r} is a symbolic link in {folder}; remove the link or use a folder "
            "of your own"
        )
    where = f"{str(path)!r} in {folder}"
    if not stat.S_ISREG(found.st_mode):
        raise StoreError(f"{where}, is not a file; remove it or use a folder of your own")
    if found.st_uid != os.geteuid():
        raise StoreError(
            f"{where}, belongs to another user (uid {found.st_uid}): it may have been put "
            "there for you to write into; remove it or use a folder of your own"
        )
    if found.st_mode & _OTHERS_WRITE:
        raise StoreError(
            f"{where}, can be written by others (mode {stat.S_IMODE(found.st_mode):o}); run "
            "chmod 600 on it or use a folder of your own"
        )


def create_private_file(path: Path) -> bool:
    """Create ``path`` empty, 0600, and any missing folder above it (0700); an existing one is
    adopted only as :func:`check_adopted` allows.

    Returns:
        Whether it was created.

    Raises:
        StoreError: a folder or the existing file is not safe to use.
    """
    private_folders(path.parent)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | NOFOLLOW | CLOEXEC, 0o600)
    except FileExistsError:
        check_adopted(path)
        return False
    os.close(fd)
    return True


def open_private(path: Path, flags: int = os.O_WRONLY | os.O_APPEND) -> int:
    """A descriptor of ``path`` opened with ``flags`` (created 0600, folders 0700, never
    through a link); an existing file must be this account's, and is made 0600.

    Raises:
        StoreError: a folder is not safe, the path is a link, or another user's file.
    """
    private_folders(path.parent)
    try:
        fd = os.open(path, flags | os.O_CREAT | NOFOLLOW | CLOEXEC, 0o600)
    except OSError as exc:
        if os.path.islink(path):
            raise StoreError(
                f"{str(path)!r} is a symbolic link; pass the file itself, or another path"
            ) from None
        raise exc
    found = os.fstat(fd)
    if found.st_uid != os.geteuid() or not stat.S_ISREG(found.st_mode):
        os.close(fd)
        raise StoreError(
            f"{str(path)!r} is not a file of yours (uid {found.st_uid}); pass another path"
        )
    if stat.S_IMODE(found.st_mode) != 0o600:
        os.fchmod(fd, 0o600)  # personal data: its owner's only, whatever it was made with
    return fd


def private_temp(folder: Path, *, prefix: str = "", suffix: str = ".tmp") -> tuple[int, Path]:
    """A new temporary file in ``folder`` (0600, made with ``O_EXCL``): write it whole, then
    :func:`os.replace` it onto its name, so a reader never sees half of it."""
    fd, name = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=suffix)
    return fd, Path(name)


def write_file(path: Path, data: bytes, *, private: bool = True) -> None:
    """Write ``data`` to ``path`` whole: a new temporary file (0600) beside it, replaced onto
    its name, so neither a link nor a file someone put there first is written through, and a
    reader never sees half of it. Missing folders are made 0700.

    Args:
        path: Where to write.
        data: What to write.
        private: Personal data: an existing folder must be the user's own and private (made
            0700 where others may read it). Otherwise (figures a command was told to write)
            an existing folder is used as it is.

    Raises:
        StoreError: a folder is not safe to write in.
    """
    private_folders(path.parent, own=private)
    fd, temp = private_temp(path.parent, prefix=f".{path.name}-")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise


def write_figure(figure: Any, path: str | os.PathLike[str], *, dpi: int) -> None:
    """A matplotlib figure as a PNG at ``path`` (:func:`write_file`, not private: figures)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    write_file(Path(path), buffer.getvalue(), private=False)


def write_text(path: str | os.PathLike[str], text: str, *, private: bool = True) -> None:
    """``text`` (UTF-8) at ``path`` (:func:`write_file`)."""
    write_file(Path(path), text.encode("utf-8"), private=private)


__all__ = [
    "check_adopted",
    "check_own_folder",
    "create_private_file",
    "open_private",
    "private_folders",
    "private_temp",
    "shared_folder",
    "write_figure",
    "write_file",
    "write_text",
]


def agentmem_home() -> Path:
    """``$AGENTMEM_HOME``, default ``~/.agentmem``."""
    home = os.environ.get("AGENTMEM_HOME", "").strip()
    return Path(home).expanduser() if home else Path.home() / ".agentmem"
