"""Python's cyclic garbage collector, paused while a batch of writes applies.

A batch holds its items, their ops and rows until it commits, so every young collection
during it promotes them, and every few thousand items the collector walks the whole heap
(the process's, not only this package's: a host holding many Python objects pays the most).
Applying a batch makes no reference cycles (a test checks that a collection after one finds
nothing to free), so pausing the cyclic collector for it loses no memory: objects are still
freed when their last reference goes, and the collector runs again as usual afterwards.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_paused = 0
"""Batches now running with the collector paused (threads share one collector)."""
_was_enabled = False
"""Whether the collector ran before the first of them paused it."""


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector inside (reference-counted across threads); restore it as
    it was when the last paused batch ends, however it ends."""
    global _paused, _was_enabled
    with _lock:
        if _paused == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _lock:
            _paused -= 1
            if _paused == 0 and _was_enabled:
                gc.enable()
