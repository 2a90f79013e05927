"""What every ``agentmem`` command's parser shares.

Each command is added with :func:`add_command`: its help shows the defaults and a few
example lines, its numbers are checked while the line is parsed (before any work starts),
and an unknown flag is reported with that command's own usage (:func:`parse_args`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

STORE_HELP = "store URL (default: $AGENTMEM_HOME/memory.db)"
"""The help of every command's ``--store``."""

_EXAMPLES = "examples:\n"
_PARSER = "_command_parser"
"""The attribute of parsed arguments that holds the parser of the command they name."""


class HelpFormatter(argparse.HelpFormatter):
    """Wraps the description, keeps example lines as written, tells each option's default.

    An option whose help already names its default, or whose default is ``None`` or
    ``False`` (nothing to tell), is shown as written.
    """

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith(_EXAMPLES):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if (
            "default" in text
            or not action.option_strings
            or action.default is None
            or action.default is False
            or action.default == argparse.SUPPRESS
        ):
            return text
        default = action.default
        if isinstance(default, list | tuple):
            return f"{text} (default: {','.join(str(v) for v in default)})"
        return text + " (default: %(default)s)"


def add_command(
    sub: Any,
    name: str,
    *,
    help: str,
    description: str | None = None,
    examples: Sequence[str] = (),
) -> argparse.ArgumentParser:
    """Add the command ``name`` to ``sub`` (a parser's subparsers).

    Args:
        sub: What ``ArgumentParser.add_subparsers`` returned.
        name: The command's name.
        help: One line for the list of commands.
        description: The command's own help text (default: ``help``).
        examples: Command lines shown under "examples:" in the command's help.
    """
    epilog = _EXAMPLES + "\n".join(f"  {line}" for line in examples) if examples else None
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=help,
        description=description or help[:1].upper() + help[1:],
        epilog=epilog,
        formatter_class=HelpFormatter,
    )
    parser.set_defaults(**{_PARSER: parser})
    return parser


def examples_of(parser: argparse.ArgumentParser) -> list[str]:
    """The example command lines a parser's help shows."""
    epilog = parser.epilog or ""
    return [line.strip() for line in epilog.splitlines()[1:] if line.strip()]


def positive_int(value: str) -> int:
    """An argument type: a whole number >= 1."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value!r}")
    return number


def whole_number(value: str) -> int:
    """An argument type: a whole number >= 0."""
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {value!r}")
    return number


def port_number(value: str) -> int:
    """An argument type: a TCP port, 1 to 65535."""
    try:
        number = int(value)
    except ValueError:
        number = 0
    if not 1 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 1 to 65535, got {value!r}")
    return number


def existing_store(url: str | None, command: str) -> str | None:
    """Refuse to create a SQLite file just to read or erase it; ``None`` when all is well."""
    from langchain_agentmem.backends.url import default_store_url, sqlite_file

    path = sqlite_file(default_store_url() if url is None else url)
    if path is None or path.exists():
        return None
    problem = f"agentmem {command}: no store at {str(path)!r}; pass --store with the store's URL"
    if url is not None and url.startswith("sqlite:///") and not path.is_absolute():
        problem += (
            f" (sqlite:///{path} is a path relative to the current folder; an absolute path "
            f"takes four slashes: sqlite:////{path})"
        )
    return problem


def parse_args(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse ``argv``; an unknown argument is reported with its command's usage (exit 2)."""
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        owner: argparse.ArgumentParser = getattr(args, _PARSER, parser)
        owner.error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def cutoffs(value: str) -> list[int]:
    """``--k``: comma-separated cut-offs such as ``1,5,10``, each at least 1, sorted."""
    try:
        ks = sorted({int(part) for part in value.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--k takes comma-separated integers such as 1,5,10,20, got {value!r}"
        ) from None
    if not ks or ks[0] < 1:
        raise argparse.ArgumentTypeError(f"--k values must be >= 1, got {value!r}")
    return ks
