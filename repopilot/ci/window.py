"""The scanner's view of the log near a flagged line: the last few chunks of cleaned bytes, and their lines as text
on demand. Nothing is split or decoded ahead of need: a chunk knows the offsets of its flagged lines (found while
counting newlines once), and a line further away is reached by walking from the nearest known one."""

from __future__ import annotations

import bisect
from collections.abc import Callable

from . import native
from .lines import clean_text
from .pieces import Origin

__all__ = ["Chunk", "LineGetter", "Window"]

LineGetter = Callable[[int], "str | None"]
_WINDOW = 3  # chunks kept: the one being handled, the one before (blocks growing up) and the one after
_AVG_LINE = 160  # bytes per line assumed when a run of lines is read at once; shorter reads fall back
_MORE = 32  # lines read at once when a block grows down past the run read around its flagged line


class Chunk:
    """A chunk of cleaned bytes whose first line has number `first` (and where it lies in its stream, when it can be
    read again)."""

    def __init__(self, data: bytes, first: int, newlines: int, origin: Origin | None = None) -> None:
        self.data = data
        self.origin = origin
        self.first = first
        self.count = newlines + (0 if data.endswith(b"\n") or not data else 1)
        self.last = first + self.count - 1
        self._anchors: list[int] = [first]  # line numbers with known start offsets, sorted
        self._offsets: dict[int, int] = {first: 0}
        self._cursor = (first, 0)  # the last line whose offset was found, and that offset
        self._cache: dict[int, str] = {}

    def anchor(self, n: int, offset: int) -> None:
        if n not in self._offsets:
            self._offsets[n] = offset
            bisect.insort(self._anchors, n)

    def anchor_many(self, pairs: list[tuple[int, int]]) -> None:
        """`anchor` for many lines at once (what counting a chunk's flagged lines found): one sort, not an
        insertion per line."""
        offsets = self._offsets
        for n, offset in pairs:
            offsets.setdefault(n, offset)
        self._anchors = sorted(offsets)

    def offset(self, n: int) -> int:
        """The byte offset where line `n` starts."""
        known = self._offsets.get(n)
        if known is not None:
            return known
        k, off = self._cursor
        if k < n <= k + 4:  # the line after the last one asked for: a block growing down
            data = self.data
            while k < n:
                off = data.index(b"\n", off) + 1
                k += 1
            self._cursor = (n, off)
            return off
        i = bisect.bisect_right(self._anchors, n)
        below = self._anchors[i - 1]
        data = self.data
        if i < len(self._anchors) and self._anchors[i] - n < n - below:
            # Closer to the next known line: walk back (context lines just above a flagged line).
            k = self._anchors[i]
            off = self._offsets[k]
            while k > n:
                off = data.rfind(b"\n", 0, off - 1) + 1
                k -= 1
        else:
            k = below
            off = self._offsets[k]
            while k < n:
                off = data.index(b"\n", off) + 1
                k += 1
        if abs(k - below) > 16:
            self.anchor(n, off)
        self._cursor = (n, off)
        return off

    def line_at(self, offset: int, n_offset: int, n: int) -> int:
        """The number of the line holding byte `offset`, counted from line `n` which starts at `n_offset`."""
        if offset >= n_offset:
            return n + self.data.count(b"\n", n_offset, offset)
        return n - self.data.count(b"\n", offset, n_offset)

    def anchor_tail(self, k: int) -> None:
        """Anchors for the last `k` lines, found backwards from the end (the tail is read at EOF)."""
        data = self.data
        end = len(data) - 1 if data.endswith(b"\n") else len(data)
        n = self.last
        while n >= max(self.first, self.last - k + 1):
            start = data.rfind(b"\n", 0, end) + 1
            self.anchor(n, start)
            end = start - 1
            n -= 1
            if start == 0:
                break

    def raw(self, n: int) -> bytes:
        start = self._offsets.get(n)  # a flagged line (what asks for its bytes): no call to `offset`
        if start is None:
            start = self.offset(n)
        end = self.data.find(b"\n", start)
        return self.data[start:] if end == -1 else self.data[start:end]

    def clean(self, n: int) -> str:
        """Line `n`'s cleaned text (`clean_text`): read in place by the C form for most lines (no slice, no
        decode of the timestamp), by `clean_text` where the C form cannot tell or is off."""
        text: str | None = self._cache.get(n)
        if text is None:
            start = self._offsets.get(n)  # a flagged line's start, found while counting: no call to `offset`
            if start is None:
                start = self.offset(n)
            c = native.NATIVE
            if c is None or (text := c.clean_line(self.data, start)) is None:
                end = self.data.find(b"\n", start)
                text = clean_text(self.data[start:] if end == -1 else self.data[start:end])
            if len(self._cache) < 50000:
                self._cache[n] = text
        return text

    def span(self, n: int, size: int) -> tuple[int, int, int]:
        """Where the whole lines within `size` bytes on either side of line `n`'s start are (`data[lo:hi]`), and
        where line `n` starts in them: (lo, hi, at)."""
        data = self.data
        off = self.offset(n)
        lo = data.rfind(b"\n", 0, max(0, off - size)) + 1 if off > size else 0
        hi = data.find(b"\n", off + size)
        hi = len(data) if hi == -1 else hi + 1
        return lo, hi, off - lo

    def run(self, n: int, before: int, after: int) -> tuple[int, list[bytes], int]:
        """Raw lines around `n` read with two slices and two splits instead of a walk per line: the number of
        the first one, the lines (fewer when lines are long or the chunk ends; callers fall back) and where the
        line after them starts."""
        data = self.data
        off = self.offset(n)
        back: list[bytes] = []
        if before and off:
            lo = max(0, off - before * _AVG_LINE)
            back = data[lo:off].split(b"\n")[1 if lo else 0:-1]  # a partial first piece; the empty last one
            back = back[-before:]
        fwd = self.lines_at(off, after + 1)
        if not fwd:
            return n, [], off
        return n - len(back), back + fwd, off + sum(map(len, fwd)) + len(fwd)

    def lines_at(self, off: int, count: int) -> list[bytes]:
        """Up to `count` raw lines from the line starting at byte `off` on, by one slice and one split (fewer when
        lines are long or the chunk ends)."""
        data = self.data
        hi = off + count * _AVG_LINE
        lines = data[off:hi].split(b"\n", count)
        if len(lines) > count or hi < len(data) or data.endswith(b"\n"):
            lines.pop()  # what follows the lines asked for, a partial line, or the empty piece after the last `\n`
        return lines


class Window:
    """The last few chunks; reads any line they hold."""

    def __init__(self) -> None:
        self.chunks: list[Chunk] = []

    def full(self) -> bool:
        """Whether the next push drops the oldest chunk."""
        return len(self.chunks) >= _WINDOW

    def push(self, chunk: Chunk) -> None:
        self.chunks.append(chunk)
        if len(self.chunks) > _WINDOW:
            self.chunks.pop(0)

    def chunk_of(self, n: int) -> Chunk | None:
        for c in self.chunks:
            if c.first <= n <= c.last:
                return c
        return None

    def get(self, n: int) -> str | None:
        for c in self.chunks:  # chunk_of, without its frame: this is called for every flagged line and more
            if c.first <= n <= c.last:
                return c.clean(n)
        return None

    def near(self, n: int, before: int, after: int) -> LineGetter:
        """A getter that reads lines `n-before .. n+after` from one run read on first use (each cleaned on first
        use), the run read further in the same way when a block grows down past it, and any other line of the
        window the usual way: what growing a block around a flagged line reads."""
        run: list[bytes] | None = None
        cleaned: list[str | None] = []
        start = end = n
        more_at = -1  # where line `end` starts in `chunk` (-1: the run ends with the chunk or a long line)
        chunk: Chunk | None = None
        get = self.get

        def read_more() -> bool:
            """The next lines after the run added to it (False: none could be)."""
            nonlocal end, more_at
            assert run is not None and chunk is not None
            more = chunk.lines_at(more_at, _MORE) if end <= chunk.last else []
            if not more:
                more_at = -1
                return False
            run.extend(more)
            cleaned.extend([None] * len(more))
            end += len(more)
            more_at += sum(map(len, more)) + len(more)
            return True

        def near_get(k: int) -> str | None:
            nonlocal run, start, end, cleaned, more_at, chunk
            if run is None:
                chunk = self.chunk_of(n)
                start, run, more_at = chunk.run(n, before, after) if chunk is not None else (n, [], -1)
                end = start + len(run)
                cleaned = [None] * len(run)
            while end <= k < end + _MORE and more_at >= 0 and read_more():
                pass
            if start <= k < end:
                i = k - start
                text = cleaned[i]
                if text is None:
                    line = run[i]
                    c = native.NATIVE
                    if c is None or (text := c.clean_line(line, 0)) is None:
                        text = clean_text(line)
                    cleaned[i] = text
                return text
            return get(k)

        return near_get
