"""What the LangGraph store contract tests share: the embedder, counts, and threads started
together (the ``memory`` and ``store`` fixtures are in this folder's conftest)."""

from __future__ import annotations

import threading
from typing import Any

from tests.stores import HashEmbeddings

EMB = HashEmbeddings()
THREADS = 8
PUTS_PER_THREAD = 20
TRIALS = 20


def run_threads(n: int, target: Any) -> list[BaseException]:
    """Run ``target(i)`` in ``n`` threads started together; the errors they raised."""
    errors: list[BaseException] = []
    barrier = threading.Barrier(n)

    def run(i: int) -> None:
        barrier.wait()
        try:
            target(i)
        except BaseException as exc:  # collected: the test counts them
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return errors
