"""Python's cyclic garbage collector, paused while a batch of writes applies.

A batch holds its items, their ops and rows until it commits, so every young collection
during it promotes them, and every few thousand items the collector walks the whole heap
(the process's, not only this package's: a host holding many Python objects pays the most).
Applying a batch makes no reference cycles (a test checks that a collection after one finds
nothing to free), so pausing the cyclic collector for it loses no memory: objects are still
freed when their last reference goes, and the collector runs again as usual afterwards.
Batches that overlap without end (threads writing all the time) would keep it paused: once
it has been paused for :data:`MAX_PAUSED` seconds, the batch that ends collects once (a
collection runs while the collector is paused) and the count starts again. A long batch (an
import of many records) calls :func:`breathe` as it goes, which does the same.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_paused = 0
"""Batches now running with the collector paused (threads share one collector)."""
_was_enabled = False
"""Whether the collector ran before the first of them paused it."""
_since = 0.0
"""When the collector was last paused or, paused since, last collected (monotonic)."""
MAX_PAUSED = 10.0
"""Seconds of overlapping batches after which the one that ends collects once."""


def breathe() -> None:
    """Inside a long batch: collect once when the collector has been paused for
    :data:`MAX_PAUSED` seconds (as a batch that ends does), so no thread of the process goes
    without a collection for the length of an import."""
    global _since
    with _lock:
        due = _paused > 0 and _was_enabled and time.monotonic() - _since > MAX_PAUSED
        if due:
            _since = time.monotonic()
    if due:
        gc.collect()


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic collector inside (reference-counted across threads); restore it as
    it was when the last paused batch ends, however it ends."""
    global _paused, _was_enabled, _since
    with _lock:
        if _paused == 0:
            _was_enabled = gc.isenabled()
            _since = time.monotonic()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _lock:
            _paused -= 1
            if _paused == 0 and _was_enabled:
                gc.enable()
            elif _was_enabled and time.monotonic() - _since > MAX_PAUSED:
                _since = time.monotonic()
                gc.collect()
