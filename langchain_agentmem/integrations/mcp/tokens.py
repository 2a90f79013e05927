"""The bearer tokens of ``agentmem mcp --http``, and the tokens file they come from.

A tokens file is a JSON object (UTF-8) mapping each bearer token to the user (namespace)
it reaches. It is refused unless it is a regular file of the account running the server,
readable by its owner alone (``chmod 600``), in a folder that belongs to that account (or
to root) and that not everyone can write in; a symbolic link is followed only in a folder
no one else can write in, as the package does for its own store files. Each token has at
least 16 characters, 8 of them different.

:class:`TokenFile` re-reads the file when it changes: a request looks at the file's
modification time, size and inode at most once a second, so a token removed from the file
is refused (401) from then on and a new one is let in, without a restart. A changed file
that is refused (not JSON, open to others, a token too short) leaves the tokens read
before in place, and the server logs one line naming the problem.

Usage:
    .. code-block:: python

        from langchain_agentmem.integrations.mcp.tokens import TokenFile

        tokens = TokenFile("tokens.json")  # {"<token>": "alice", ...}, chmod 600
        tokens.user("<token>")  # "alice", or None for a token not in the file
"""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import stat
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from langchain_agentmem.errors import InvalidInputError
from langchain_agentmem.validation import check_namespace

log = logging.getLogger(__name__)

MIN_TOKEN_CHARS = 16
MIN_DISTINCT_CHARS = 8
MAX_FILE_BYTES = 1 << 20
"""A tokens file larger than this (1 MiB) is refused: it is read on the event loop."""
CHECK_EVERY_S = 1.0
"""How often at most a :class:`TokenFile` looks whether its file changed."""
MAKE_TOKEN = 'python -c "import secrets; print(secrets.token_urlsafe(32))"'
"""A command line printing a good token."""
MAKE_FILE = (
    '(umask 077; python -c "import json, secrets; '
    "print(json.dumps({secrets.token_urlsafe(32): 'alice'}))\" > tokens.json)"
)
"""A command line writing a private tokens file with one token for ``alice``."""

_ROOT = 0


def _digest(token: str) -> bytes:
    # Looked up by digest: the time a lookup takes says nothing about the tokens.
    return hashlib.sha256(token.encode("utf-8")).digest()


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for number, (key, value) in enumerate(pairs, 1):
        if key in seen:
            raise InvalidInputError(f"token number {number} appears twice; give each token once")
        seen[key] = value
    return seen


def check_tokens(tokens: object, *, source: str = "tokens") -> dict[str, str]:
    """``tokens`` checked: a mapping of bearer tokens (16+ characters, 8+ different) to
    user names."""
    if not isinstance(tokens, Mapping) or not tokens:
        raise InvalidInputError(
            f'{source} must be a non-empty JSON object {{"<token>": "<user>", ...}}, '
            f"got {type(tokens).__name__}"
        )
    checked: dict[str, str] = {}
    for number, (token, user) in enumerate(tokens.items(), 1):
        # Never the token itself in a message: it is a secret.
        where = f"token number {number} in {source}"
        if not isinstance(token, str) or len(token.strip()) < MIN_TOKEN_CHARS:
            raise InvalidInputError(
                f"{where} is shorter than {MIN_TOKEN_CHARS} characters; use a long random "
                f"one ({MAKE_TOKEN})"
            )
        if token != token.strip():
            raise InvalidInputError(f"{where} starts or ends with whitespace; remove it")
        distinct = len(set(token))
        if distinct < MIN_DISTINCT_CHARS:
            raise InvalidInputError(
                f"{where} has only {distinct} different characters (at least "
                f"{MIN_DISTINCT_CHARS}); use a random one ({MAKE_TOKEN})"
            )
        checked[token] = check_namespace(user, what=f"the user of token number {number}")
    return checked


def _refuse(file: Path, problem: str) -> InvalidInputError:
    return InvalidInputError(f"tokens file {str(file)!r} {problem}")


def _check_folder(folder: Path, file: Path) -> bool:
    """Refuse a folder another account owns or everyone can write in; say whether group
    members may write in it (a link planted there would not be the owner's)."""
    found = os.stat(folder)
    if found.st_uid not in (os.geteuid(), _ROOT):
        raise _refuse(
            file,
            f"is in {str(folder)!r}, a folder of another user (uid {found.st_uid}); keep "
            "it in a folder of your own",
        )
    if found.st_mode & stat.S_IWOTH:
        raise _refuse(
            file,
            f"is in {str(folder)!r}, a folder everyone can write in (mode "
            f"{stat.S_IMODE(found.st_mode):04o}); keep it in a folder of your own",
        )
    return bool(found.st_mode & stat.S_IWGRP)


def _open_checked(file: Path) -> int:
    """An open descriptor of ``file``, refused unless it is private (see the module)."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)  # a FIFO must not hang the server
    if os.name != "posix":
        return os.open(file, flags)
    group_writes = _check_folder(file.absolute().parent, file)
    linked = file.is_symlink()
    if linked:
        if group_writes:
            raise _refuse(
                file,
                "is a symbolic link in a folder others can write in; remove the link and "
                "put the file itself there",
            )
        _check_folder(Path(os.path.realpath(file)).parent, file)
    try:
        fd = os.open(file, flags | (0 if linked else nofollow))
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a link put there since the look above
            raise _refuse(file, "became a symbolic link; put the file itself there") from None
        raise
    try:
        found = os.fstat(fd)
        mode = stat.S_IMODE(found.st_mode)
        if not stat.S_ISREG(found.st_mode):
            raise _refuse(file, "is not a regular file; give the path of a JSON file")
        if found.st_uid != os.geteuid():
            raise _refuse(
                file,
                f"belongs to another user (uid {found.st_uid}); the account running the "
                "server must own it: copy it to a file of your own (chmod 600)",
            )
        if mode & 0o077:
            raise _refuse(
                file,
                f"is open to group or others (mode {mode:04o}); make it private with: "
                f"chmod 600 {file}",
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


def _parse(raw: bytes, file: Path) -> object:
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _refuse(
            file,
            f"is not UTF-8 text (byte 0x{raw[exc.start]:02x} at position {exc.start}); "
            "save it as UTF-8",
        ) from None
    try:
        return json.loads(text, object_pairs_hook=_unique)
    except InvalidInputError:
        raise
    except json.JSONDecodeError as exc:
        raise _refuse(
            file,
            f"is not JSON ({exc.msg}, line {exc.lineno}); "
            'write a JSON object {"<token>": "<user>", ...}',
        ) from None
    except (ValueError, RecursionError):  # a number too long, JSON nested too deeply
        raise _refuse(
            file,
            'is not a flat JSON object; write {"<token>": "<user>", ...} and nothing else',
        ) from None


def read_tokens(path: str | os.PathLike[str]) -> dict[str, str]:
    """The bearer tokens of a tokens file, refused unless the file is private.

    Raises:
        InvalidInputError: the file cannot be read, is open to group or others, belongs
            to another user, lies in a folder others control (see the module), is not a
            UTF-8 JSON object of tokens to users, or names a token too short or too plain.
    """
    file = Path(path)
    try:
        fd = _open_checked(file)
        with open(fd, "rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise _refuse(file, f"cannot be read ({exc.strerror or exc})") from None
    if len(raw) > MAX_FILE_BYTES:
        raise _refuse(file, f"is larger than {MAX_FILE_BYTES:,} bytes; list the tokens only")
    return check_tokens(_parse(raw, file), source=f"tokens file {str(file)!r}")


class Tokens:
    """Bearer tokens to users, looked up by digest.

    Args:
        tokens: Each bearer token (16+ characters, 8+ different) to its user.
    """

    def __init__(self, tokens: Mapping[str, str]) -> None:
        self._set(check_tokens(tokens))

    def _set(self, tokens: Mapping[str, str]) -> None:
        self._users = {_digest(t): u for t, u in tokens.items()}

    def user(self, token: str) -> str | None:
        """The user ``token`` reaches, or ``None``."""
        return self._users.get(_digest(token))

    @property
    def users(self) -> set[str]:
        """The users the tokens reach."""
        return set(self._users.values())


_Stamp = tuple[int, ...] | None


def _stamp(file: Path) -> _Stamp:
    """What changes when the file is written, replaced, re-linked or re-moded."""
    try:
        link, found = os.lstat(file), os.stat(file)
    except OSError:
        return None
    return (
        link.st_ino,
        link.st_mtime_ns,
        found.st_dev,
        found.st_ino,
        found.st_size,
        found.st_mtime_ns,
        found.st_ctime_ns,
    )


class TokenFile(Tokens):
    """The tokens of a tokens file, re-read when the file changes.

    Args:
        path: The tokens file (see :func:`read_tokens`); read, and checked, at once.
        check_every: Seconds at least between two looks at the file.
        clock: Seconds of a monotonic clock (a test's own).

    Raises:
        InvalidInputError: the file as :func:`read_tokens` refuses it.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        check_every: float = CHECK_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = Path(path)
        self._check_every = check_every
        self._clock = clock
        self._seen = _stamp(self.path)  # before reading: a change meanwhile is read next
        self._set(read_tokens(self.path))
        self._checked = clock()

    def user(self, token: str) -> str | None:
        """The user ``token`` reaches in the file as it is now (looked at once a second)."""
        now = self._clock()
        if now - self._checked >= self._check_every:
            self._checked = now
            self._reload()
        return super().user(token)

    def _reload(self) -> None:
        stamp = _stamp(self.path)
        if stamp == self._seen:
            return
        self._seen = stamp
        try:
            tokens = read_tokens(self.path)
        except InvalidInputError as exc:
            log.warning(
                "the tokens file changed and was not loaded: %s; the %d tokens read before "
                "stay in use",
                exc,
                len(self._users),
            )
            return
        self._set(tokens)
        log.info(
            "tokens file %r changed: %d tokens for %d users now",
            str(self.path),
            len(self._users),
            len(self.users),
        )
