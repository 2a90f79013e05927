"""Store URLs: what a URL names, the default store, and a URL with its passwords masked."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qsl, unquote, unquote_plus, urlsplit, urlunsplit

from langchain_agentmem.files import agentmem_home

_SECRET_PARAMS = ("password", "sslpassword")
_PARAM = re.compile(r"([^&;=#]*)(=?)([^&;#]*)")
MASK = "***"


def _secret_params(query: str) -> list[tuple[int, int, str]]:
    """Where the values of secret parameters sit in ``query``: ``(start, end, value)``.

    A parameter is secret by its decoded name (``pass%77ord`` is ``password`` to libpq).
    """
    found = []
    for match in _PARAM.finditer(query):
        if match.group(2) and unquote_plus(match.group(1)).strip().lower() in _SECRET_PARAMS:
            found.append((match.start(3), match.end(3), match.group(3)))
    return found


def url_secrets(url: str) -> list[str]:
    """The passwords a store URL carries (user part and ``password=`` parameters)."""
    secrets: list[str] = []
    try:
        parts = urlsplit(url)
        if parts.password:
            secrets += [parts.password, unquote(parts.password)]
        for key, value in parse_qsl(parts.query, keep_blank_values=True):
            if key.strip().lower() in _SECRET_PARAMS and value:
                secrets.append(value)
        for _, _, raw in _secret_params(parts.query):
            secrets += [raw, unquote(raw), unquote_plus(raw)]
    except ValueError:
        pass
    # Longest first, so a secret that contains another is masked whole.
    return sorted({s for s in secrets if s}, key=len, reverse=True)


def redact_url(url: str) -> str:
    """``url`` with its passwords replaced by ``***`` (for repr, logs and errors)."""
    secrets = url_secrets(url)
    if not secrets:
        return url
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if parts.password is not None:
            user, _, host = netloc.rpartition("@")
            netloc = user.split(":", 1)[0] + ":" + MASK + "@" + host
        query = parts.query
        for start, end, _ in reversed(_secret_params(query)):
            query = query[:start] + MASK + query[end:]
        out = urlunsplit(parts._replace(netloc=netloc, query=query))
    except ValueError:
        out = url
    return hide_secrets(out, url)


def hide_secrets(text: str, url: str) -> str:
    """``text`` (an error message, say) with every password of ``url`` masked."""
    for secret in url_secrets(url):
        text = text.replace(secret, MASK)
    return text


def default_store_url() -> str:
    """The embedded default store: ``sqlite:///$AGENTMEM_HOME/memory.db``."""
    return "sqlite:///" + str(agentmem_home() / "memory.db")


IN_MEMORY = (":memory:", "sqlite://", "sqlite://:memory:", "sqlite:///:memory:")


def in_memory_url(url: str) -> bool:
    """Whether ``url`` names an in-memory SQLite store (gone when the process ends)."""
    return url in IN_MEMORY


def sqlite_file(url: str) -> Path | None:
    """The file a SQLite store URL names (``~`` expanded); ``None`` for an in-memory store,
    ``"sqlite:///"`` alone and every other kind of store."""
    if url in IN_MEMORY:
        return None
    if url.startswith("sqlite:///"):
        path = url[len("sqlite:///") :]
        return Path(path).expanduser() if path else None
    if "://" not in url and url.endswith((".db", ".sqlite", ".sqlite3")):
        return Path(url).expanduser()
    return None
