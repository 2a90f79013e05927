"""Records of each thread in creation order: whose neighbours lift whom in hybrid search."""

from __future__ import annotations

import bisect


class ThreadOrder:
    """Records of each thread in creation order, to find a record's neighbours."""

    def __init__(self) -> None:
        self._lists: dict[str, list[tuple[float, int]]] = {}
        self._where: dict[int, tuple[str, tuple[float, int]]] = {}
        self._prev: dict[int, int] = {}
        self._next: dict[int, int] = {}
        self._asks: set[int] = set()
        self._speaker: dict[int, str | None] = {}

    def add(
        self,
        rid: int,
        thread: str | None,
        created_at: float,
        *,
        asks: bool = False,
        speaker: str | None = None,
    ) -> None:
        """Place ``rid`` in its thread (a record without a thread has no neighbours).

        ``asks``: the record asks something, so it lifts only the record after it, and
        not when the same known ``speaker`` said that one (the asker's own next words are
        not its answer; ``None``: unknown).
        """
        rid = int(rid)
        self.remove(rid)
        if thread is None:
            return
        if asks:
            self._asks.add(rid)
        self._speaker[rid] = speaker
        key = (float(created_at), rid)
        keys = self._lists.setdefault(thread, [])
        i = bisect.bisect_left(keys, key)
        keys.insert(i, key)
        self._where[rid] = (thread, key)
        if i > 0:
            before = keys[i - 1][1]
            self._prev[rid], self._next[before] = before, rid
        if i + 1 < len(keys):
            after = keys[i + 1][1]
            self._next[rid], self._prev[after] = after, rid

    def remove(self, rid: int) -> None:
        """Take ``rid`` out (missing ones are ignored)."""
        rid = int(rid)
        found = self._where.pop(rid, None)
        if found is None:
            return
        self._asks.discard(rid)
        self._speaker.pop(rid, None)
        thread, key = found
        keys = self._lists[thread]
        del keys[bisect.bisect_left(keys, key)]
        if not keys:
            del self._lists[thread]
        before, after = self._prev.pop(rid, None), self._next.pop(rid, None)
        if before is not None:
            if after is not None:
                self._next[before] = after
            else:
                del self._next[before]
        if after is not None:
            if before is not None:
                self._prev[after] = before
            else:
                del self._prev[after]

    def neighbours(self, rid: int) -> list[int]:
        """The records just before and after ``rid`` in its thread."""
        out = []
        before = self._prev.get(rid)
        if before is not None:
            out.append(before)
        after = self._next.get(rid)
        if after is not None:
            out.append(after)
        return out

    def lifters(self, rid: int) -> list[int]:
        """The neighbours whose score may lift ``rid``: the record before it unless that one
        asks and the same known speaker said both (a question is about its answer, not the
        asker's next words), and the one after it unless that one asks (nor about what
        came before it)."""
        out = []
        before = self._prev.get(rid)
        if before is not None and not (
            before in self._asks
            and self._speaker[before] is not None
            and self._speaker[before] == self._speaker[rid]
        ):
            out.append(before)
        after = self._next.get(rid)
        if after is not None and after not in self._asks:
            out.append(after)
        return out
