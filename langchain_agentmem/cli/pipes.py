"""What a command does when the reader of its standard output goes away (``| head -1``).

As the Python docs advise (``signal``, "Note on SIGPIPE"): the ``BrokenPipeError`` is
caught, stdout is pointed at the null device so the interpreter's last flush writes
nowhere, and the command ends quietly with :data:`READER_GONE`. What it did before stands
(an export is read-only; a finished erase or import is not rolled back).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

READER_GONE = 141
"""Exit status when the reader of stdout went away: 128 + SIGPIPE, what a shell reports for
a command a closed pipe ended (``yes | head -1``), so ``set -o pipefail`` scripts see it
alike."""


def reader_gone() -> int:
    """Point stdout at the null device (nothing left in its buffer is written anywhere, and
    no "Exception ignored ... BrokenPipeError" ends the run); :data:`READER_GONE`."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout has no file descriptor
        pass
    return READER_GONE


def to_stdout(run: Callable[[], int]) -> int:
    """``run()``, its output flushed; :func:`reader_gone` when the reader went away."""
    try:
        code = run()
        sys.stdout.flush()  # a reader that went away is found here, not at exit
    except BrokenPipeError:
        return reader_gone()
    return code
