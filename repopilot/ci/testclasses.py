"""Surefire/Failsafe test classes that passed, found only around hits.

Maven prints `Running CLASS` when a test class starts and `Tests run: N, Failures: 0, Errors: 0, ... - in CLASS`
when it passed; what a passing class printed (a logged exception) did not fail the build. Those two lines come
once per test class, tens of thousands of times in a big Maven log, so the scanner does not flag them: for each
hit it looks back for the nearest `Running` lines in memory (each looked up once) and at the next few `Tests run:`
lines after them for their class's summary, and records the span when that class passed. Both kinds of line are
found with byte searches in C from the hit outwards, never listed for a whole chunk (a big Maven log has tens of
thousands). A summary not yet read is looked for in the next chunks.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from .lines import clean_text
from .window import Chunk, Window

__all__ = ["PassedClasses"]

_CLASS_START = re.compile(r"^(?:\[INFO\] )?Running (?P<cls>[\w$]+(?:\.[\w$]+)+)\s*$")
_CLASS_PASSED = re.compile(r"^(?:\[INFO\] )?Tests run: [1-9]\d*, Failures: 0, Errors: 0, Skipped: \d+, "
                           r"Time elapsed: [\d.,]+ ?s(?:ec)?(?: <<<.*)? -+ ?(?:in )?(?P<cls>[\w$]+(?:\.[\w$]+)+)\s*$")
_CLASS_SUMMARY = re.compile(r"^(?:\[\w+\] )?Tests run: \d+, .* -+ ?(?:in )?(?P<cls>[\w$]+(?:\.[\w$]+)+)\s*$")
_RUNNING = b"Running "
_TESTS_RUN = b"Tests run: "
_LOOK_BACK = 3  # `Running` lines considered before a hit (parallel forks interleave classes)
_BACK_BYTES = 256 * 1024  # how far back a class start is looked for
_PENDING_BYTES = 4 * 1024 * 1024  # how far past the window a class's summary is looked for
_MAX_PENDING = 16
_SUMMARIES = 8  # summaries looked at after a class starts
_MAX_SPANS = 20000
_GAP = 4096  # bytes searched to join a look-up to what is known (a line's rest)
_MAX_FOUND = 16  # chunks whose `Tests run: ` places are kept (the window holds 3, a late hit's its own)


@dataclass
class _Pending:
    """A test class whose run started and whose summary is still being looked for."""

    cls: bytes
    start: int  # the `Running` line
    left: int  # summaries still to look at
    bytes_left: int


class _Found:
    """Where `Tests run: ` occurs in one chunk's bytes, each place searched once: every occurrence starting in
    `[lo, hi)` is in `at`. Hits near each other look for the summaries after their classes' starts in the same
    bytes, and where a chunk holds none (a Gradle or Go part of the log) each look-up searched the whole rest of
    the window: most of what a hit's look-up cost."""

    __slots__ = ("at", "data", "hi", "lo")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.lo = self.hi = 0
        self.at: list[int] = []

    def find(self, pos: int) -> int:
        """`data.find(_TESTS_RUN, pos)`."""
        data = self.data
        if self.hi < pos <= self.hi + _GAP:
            # Just past what is known (the end of the line last found): search only the bytes between.
            gap = data.find(_TESTS_RUN, self.hi, pos + len(_TESTS_RUN) - 1)
            while gap != -1:
                self.at.append(gap)
                gap = data.find(_TESTS_RUN, gap + 1, pos + len(_TESTS_RUN) - 1)
            self.hi = pos
        elif not self.lo <= pos <= self.hi:
            first = data.find(_TESTS_RUN, pos)
            if pos < self.lo and (first == -1 or first >= self.lo):
                self.lo = pos  # none between: what is known grows down
            else:
                self.lo = pos
                self.at = [] if first == -1 else [first]
                self.hi = len(data) if first == -1 else first + 1
                return first
        at = self.at
        i = bisect.bisect_left(at, pos)
        if i < len(at):
            return at[i]
        found = data.find(_TESTS_RUN, self.hi)
        if found == -1:
            self.hi = len(data)
        else:
            at.append(found)
            self.hi = found + 1
        return found


def _line_bounds(data: bytes, pos: int) -> tuple[int, int]:
    start = data.rfind(b"\n", 0, pos) + 1
    end = data.find(b"\n", pos)
    return start, len(data) if end == -1 else end


class PassedClasses:
    """(first, last) spans of test classes that passed around the hits, in `spans`."""

    def __init__(self) -> None:
        self.spans: list[tuple[int, int]] = []
        self._seen: set[tuple[int, int]] = set()
        self._pending: list[_Pending] = []
        # A chunk's first line -> how far its `Running` lines were searched, and the nearest one found before
        # there (-1: none): hits near each other search only the bytes between them.
        self._probes: dict[int, tuple[int, int]] = {}
        self._looked: set[tuple[int, int]] = set()  # (chunk, offset) of `Running` lines already looked up
        self._summaries: dict[int, _Found] = {}  # a chunk's first line -> its `Tests run: ` places found so far

    def check(self, n: int, window: Window) -> None:
        """Look up the classes that started last before line `n` (each once); keep the spans of those that
        passed. The diagnosis tells whether a span holds a hit's block."""
        for start, cls in self._starts_before(n, window):
            self._settle(cls, start, *self._summary_of(cls, start, window.chunks, _SUMMARIES))

    def check_apart(self, n: int, window: Window) -> None:
        """`check` in a window of its own (the bytes kept around a late hit), not the scan's."""
        self._probes.clear()
        self.check(n, window)

    def advance(self, chunk: Chunk) -> None:
        """A new chunk was read: look in it for the summaries still awaited."""
        pending, self._pending = self._pending, []
        for p in pending:
            found, left = self._summary_of(p.cls, p.start, [chunk], p.left)
            if found is not None or p.bytes_left > len(chunk.data):
                self._settle(p.cls, p.start, found, left, p.bytes_left - len(chunk.data))

    def _settle(self, cls: bytes, start: int, found: tuple[int, bool] | None, left: int,
                bytes_left: int = _PENDING_BYTES) -> None:
        if found is not None:
            if found[1]:
                self._add(start, found[0])
        elif left > 0 and len(self._pending) < _MAX_PENDING:
            self._pending.append(_Pending(cls, start, left, bytes_left))

    def _add(self, start: int, end: int) -> None:
        if (start, end) not in self._seen and len(self.spans) < _MAX_SPANS:
            self._seen.add((start, end))
            self.spans.append((start, end))

    def sorted_spans(self) -> list[tuple[int, int]]:
        """By their end, as the diagnosis looks them up."""
        return sorted(self.spans, key=lambda s: (s[1], s[0]))

    def _starts_before(self, first: int, window: Window) -> list[tuple[int, bytes]]:
        """The nearest `Running CLASS` lines before line `first` not looked up yet: (line, class). Found backwards
        with `rfind` from the hit, so a hit costs a few searches in C however many classes the chunk holds."""
        found: list[tuple[int, bytes]] = []
        seen = 0
        for chunk in reversed(window.chunks):
            if chunk.first >= first:
                continue
            data = chunk.data
            ref_line = min(first, chunk.last + 1)
            ref_off = chunk.offset(ref_line) if ref_line <= chunk.last else len(data)
            lo = max(0, ref_off - _BACK_BYTES)
            probe = self._probes.get(chunk.first)
            if probe is not None and probe[0] <= ref_off:
                pos = data.rfind(_RUNNING, max(lo, probe[0]), ref_off)
                if pos == -1 and probe[1] >= lo:
                    pos = probe[1]
            else:
                pos = data.rfind(_RUNNING, lo, ref_off)
            self._remember(chunk.first, ref_off, pos, window)
            if pos == -1:
                if lo > 0:
                    return found
                continue
            if probe is not None and pos == probe[1]:
                return found  # the same `Running` lines as for the previous hit: looked up already
            while pos != -1 and seen < _LOOK_BACK:
                a, b = _line_bounds(data, pos)
                key = (chunk.first, a)
                if key in self._looked:
                    seen += 1
                else:
                    m = _CLASS_START.match(clean_text(data[a:b]))
                    if m is not None:
                        seen += 1
                        if len(self._looked) >= _MAX_SPANS:
                            self._looked.clear()  # hits move forward: old keys are not asked for again
                        self._looked.add(key)
                        found.append((chunk.line_at(a, ref_off, ref_line), m.group("cls").encode()))
                pos = data.rfind(_RUNNING, lo, pos)
            if seen >= _LOOK_BACK or lo > 0:
                break
        return found

    def _remember(self, first: int, upto: int, nearest: int, window: Window) -> None:
        if first not in self._probes and len(self._probes) > 4 * len(window.chunks):
            live = {c.first for c in window.chunks}
            self._probes = {k: v for k, v in self._probes.items() if k in live}
        self._probes[first] = (upto, nearest)

    def _found_in(self, chunk: Chunk) -> _Found:
        """The `Tests run: ` places of `chunk` known so far (a chunk's first line names it in the scan; a late
        hit's window of its own holds other bytes under the same number)."""
        found = self._summaries.get(chunk.first)
        if found is None or found.data is not chunk.data:
            if len(self._summaries) >= _MAX_FOUND:
                self._summaries.clear()  # hits move forward: the chunks asked about before have left memory
            found = self._summaries[chunk.first] = _Found(chunk.data)
        return found

    def _summary_of(self, cls_name: bytes, start: int, chunks: list[Chunk], budget: int
                    ) -> tuple[tuple[int, bool] | None, int]:
        """The summary line of the class that started at line `start`: its number and whether the class passed,
        looked for among the next `budget` summaries of any class (a class's own is the first, or one of the
        first few when forks interleave); and what is left of the budget."""
        name = cls_name.decode()
        for chunk in chunks:
            if chunk.last <= start:
                continue
            data = chunk.data
            ref_line = max(start + 1, chunk.first)
            ref_off = chunk.offset(ref_line)
            summaries = self._found_in(chunk)
            pos = summaries.find(ref_off)
            while pos != -1:
                if budget <= 0:
                    return None, 0
                budget -= 1
                a, b = _line_bounds(data, pos)
                if data.find(cls_name, a, b) != -1:
                    text = clean_text(data[a:b])
                    m = _CLASS_SUMMARY.match(text)
                    if m is not None and m.group("cls") == name:
                        return (chunk.line_at(a, ref_off, ref_line), _CLASS_PASSED.match(text) is not None), budget
                pos = summaries.find(b)
        return None, budget
