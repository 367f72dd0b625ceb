"""The latest hits of rules past their cap, kept within a fixed budget whatever the log's size.

A flagged line whose rules are all past their first hits costs a queue entry. When its chunk is about to leave
memory it is checked and the bytes around it are kept, to be grown into a block (and looked at for a passing
test class around it) when the scan ends, unless
enough newer candidates already wait in the chunks still in memory to take every place it could have had: then
it is only counted. The bytes kept are bounded over all rules (the oldest give theirs up first: where a job
stopped is near its end), so a log where a hundred rules fire thousands of times costs what a small one does.
Kept hits refer to their chunk's bytes while they would take at least as many bytes copied out (dense hits
share a chunk instead of copying 32 KB each; with a hold of a fixed 1 MB instead, a log with a late hit every few
lines still copied most of them, a tenth of the scan's CPU at 500 MB), and copy their own lines out once they
would take fewer (then the chunk goes). So what late hits hold, chunks and copies, stays within the bytes they
keep plus the chunk being checked. When the log can be read again (a file, the stdin spool: ci/pieces.py), a kept
hit holds only where its chunk lies and the chunk is read again when the scan ends: then late hits hold no log
bytes at all (the same accounting decides which are kept, so the same ones are).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from . import native
from .catalog import Rule
from .pieces import Origin, Reread
from .window import Chunk, LineGetter, Window

__all__ = ["LATE", "LATE_BYTES", "LateHit", "LateHits"]

LATE = 50  # latest hits grown per rule
_ROOM = 2 * LATE  # candidates a rule's queue holds (room for lines the check rejects)
LATE_BYTES = 16 * 1024  # kept on each side of a late hit: what its block can grow into
_TOTAL = 128  # late hits kept over all rules
_BUDGET = 8 * 1024 * 1024  # and their bytes
# Chunks that leave memory between two lettings-go of dead candidates: a rule's queue holds at most `_ROOM` of them
# whenever they go, and rebuilding every queue a chunk's candidates were in as each chunk leaves cost a fifth of
# what a 50 MB log's late candidates do.
_LET_GO_EVERY = 8
# Shared by every candidate until it is checked (a checked one gets a list of its own). A tuple, so that it can be
# the field's plain default: a default factory cost a call per candidate.
_NOT_CHECKED: tuple[tuple[Rule, dict[str, str], str], ...] = ()


def _newlines(data: bytes, start: int, end: int) -> int:
    """The newlines in `data[start:end]`, counted in C when it is built: `bytes.count` looks at one byte at a time,
    and counting the 32 KB kept around each of the latest hits twice was a fifth of growing them at the end."""
    c = native.NATIVE
    if c is None:
        return data.count(b"\n", start, end)
    count: int = c.newlines(memoryview(data)[start:end])
    return count


@dataclass(slots=True)
class LateHit:
    """A line flagged late in the scan, held until the scan's end decides whether it is kept."""

    line: int
    idxs: tuple[int, ...]  # the rules flagged on the line
    rule_ids: tuple[str, ...]  # the queues it is in
    chunk: Chunk | None  # while unchecked
    in_script: bool = False
    # The rules that fired, winner first (a list of its own once checked: tens of thousands wait unchecked).
    found: Sequence[tuple[Rule, dict[str, str], str]] = _NOT_CHECKED
    data: bytes = b""  # the bytes holding the whole lines kept around the trigger: `data[lo:hi]`
    lo: int = 0
    hi: int = 0
    at: int = 0  # where the trigger line starts in `data[lo:hi]`
    size: int = 0  # `hi - lo` while kept, else 0
    queued: int = 0  # the rule queues still holding it (none: it is never checked)
    origin: Origin | None = None  # where its chunk lies, when kept without its bytes (`data` is then empty)

    def window(self, source: bytes | None = None) -> Window:
        """The bytes kept around it (or read again: its chunk's, `source`) as a window of their own (line numbers as
        in the log)."""
        data = (self.data if source is None else source)[self.lo:self.hi]
        before = _newlines(data, 0, self.at)
        chunk = Chunk(data, self.line - before, before + _newlines(data, self.at, len(data)))
        chunk.anchor(self.line, self.at)
        window = Window()
        window.push(chunk)
        return window

    def getter(self) -> LineGetter:
        return self.window().get


@dataclass(slots=True)
class _Held:
    """A chunk's bytes that kept hits refer to."""

    data: bytes
    items: list[LateHit] = field(default_factory=list)
    kept: int = 0  # of `items`, those still kept
    kept_bytes: int = 0  # their sizes: what copying their lines out would take


class _Queue:
    """A rule's latest `_ROOM` candidates, as numbered slots: a candidate that can no longer be grown (cut, rejected
    by the check, given up) is let go while its slot still counts, so that the same ones leave the queue as if it
    stayed (a log where rules fire thousands of times would otherwise hold a hundred dead candidates per rule)."""

    __slots__ = ("added", "slots")

    def __init__(self) -> None:
        self.added = 0  # slots ever taken
        self.slots: deque[tuple[int, LateHit]] = deque()  # (slot number, candidate), the live ones

    def items(self) -> list[LateHit]:
        return [i for _, i in self.slots]


def _dead(item: LateHit) -> bool:
    return item.chunk is None and not item.size


class LateHits:
    """Per rule its latest `_ROOM` candidates; `capped` counts the rest."""

    def __init__(self, capped: dict[str, int], reread: Reread | None = None) -> None:
        self.capped = capped
        self._reread = reread  # chunks that can be read again are not held (`keep`)
        self._last: tuple[Origin | None, bytes | None] = (None, None)  # the chunk read again last
        self.queues: dict[str, _Queue] = {}
        self._dirty: set[str] = set()  # queues that may hold dead candidates
        self._waiting: dict[int, list[LateHit]] = {}  # a chunk's first line -> the candidates on it
        self._live = 0  # of those, the ones still queued (counted as they change: summing them took longer)
        self._left = 0  # chunks that left memory
        self._kept: deque[LateHit] = deque()  # checked ones holding bytes, oldest first
        self._kept_count = 0
        self._kept_bytes = 0
        self._held: dict[int, _Held] = {}  # id of the bytes -> the chunk kept hits refer to
        self._newest: _Held | None = None  # the chunk being checked: more of its hits may be kept

    def __bool__(self) -> bool:
        return bool(self.queues)

    def count(self, rid: str) -> None:
        self.capped[rid] = self.capped.get(rid, 0) + 1

    def add(self, n: int, idxs: tuple[int, ...], rule_ids: tuple[str, ...], chunk: Chunk | None,
            in_script: bool) -> None:
        item = LateHit(n, idxs, rule_ids, chunk, in_script)
        queues = self.queues
        for rid in rule_ids:
            queue = queues.get(rid)
            if queue is None:
                queue = queues[rid] = _Queue()
            slot = queue.added
            queue.added = slot + 1
            slots = queue.slots
            if slot >= _ROOM:  # slot `slot - _ROOM` leaves the queue (counted)
                if slots and slots[0][0] == slot - _ROOM:
                    old = slots.popleft()[1]
                    old.queued -= 1
                    if not old.queued:  # in no queue: given up
                        # Still waiting on a chunk in memory (candidates checked or cut have none: nothing is
                        # added while those `leaving` returned are checked).
                        self._live -= old.chunk is not None
                        if old.size:
                            self._drop(old)
                        else:  # it holds nothing (never checked, rejected, cut or given up)
                            old.chunk = None
                capped = self.capped
                capped[rid] = capped.get(rid, 0) + 1
            slots.append((slot, item))
            item.queued += 1
        if chunk is not None:
            self._live += item.queued > 0
            waiting = self._waiting.get(chunk.first)
            if waiting is None:
                self._waiting[chunk.first] = [item]
            else:
                waiting.append(item)

    def leaving(self, chunk: Chunk) -> list[LateHit]:
        """The candidates on `chunk` (about to leave memory) worth checking: the latest ones, as many as the newer
        ones in memory leave places for (the others are counted)."""
        self._left += 1
        if self._left % _LET_GO_EVERY == 0:
            self._let_dead_go()
        queued = [i for i in self._waiting.pop(chunk.first, ()) if i.queued]
        self._live -= len(queued)
        # Each is checked now, or cut: most are dead once the chunk is gone (those no queue holds are in none).
        self._dirty.update(*{i.rule_ids for i in queued})
        items = [i for i in queued if i.chunk is chunk]
        newer = self._live  # the queued candidates on the chunks still in memory
        cut = max(0, len(items) - max(0, _TOTAL - newer))
        for i in items[:cut]:
            i.chunk = None
            self.count(i.rule_ids[0])
        return items[cut:]

    def unchecked(self) -> list[LateHit]:
        """At the end: the candidates still in memory, in line order."""
        items = {id(i): i for q in self.queues.values() for _, i in q.slots if i.chunk is not None}
        return sorted(items.values(), key=lambda i: i.line)

    def keep(self, item: LateHit, data: bytes, lo: int, hi: int, at: int, origin: Origin | None = None) -> None:
        """`item` fired: keep the lines `data[lo:hi]` around it (its trigger line at `at` in them), giving up the
        oldest kept ones past the budget. `origin`: where `data` lies in the log, when it can be read again."""
        item.data, item.lo, item.hi, item.at, item.size = data, lo, hi, at, hi - lo
        if origin is not None and self._reread is not None:
            item.data, item.origin = b"", origin
        elif hi - lo < len(data):
            self._hold(item)
        if len(self._kept) > 4 * _TOTAL:  # entries given up since they were kept
            self._kept = deque(i for i in self._kept if i.size)
        self._kept.append(item)
        self._kept_count += 1
        self._kept_bytes += item.size
        capped = self.capped
        while self._kept_count > _TOTAL or self._kept_bytes > _BUDGET:
            old = self._kept.popleft()
            if old.size:
                rid = old.found[0][0].id
                capped[rid] = capped.get(rid, 0) + 1
                self._drop(old)

    def _hold(self, item: LateHit) -> None:
        """`item` refers to its chunk's bytes; the chunk checked before it lets its bytes go if they are sparse."""
        entry = self._held.get(id(item.data))
        if entry is None:
            if self._newest is not None:
                self._let_go_if_sparse(self._newest)
            entry = self._held[id(item.data)] = self._newest = _Held(item.data)
        entry.items.append(item)
        entry.kept += 1
        entry.kept_bytes += item.size

    def _let_go_if_sparse(self, entry: _Held) -> None:
        """When the kept hits on `entry` take fewer bytes than their chunk, they copy their lines out and the
        chunk goes."""
        data = entry.data
        if entry.kept_bytes >= len(data) or self._held.get(id(data)) is not entry:
            return
        del self._held[id(data)]
        for i in entry.items:
            if i.data is data:
                i.data, i.lo, i.hi = data[i.lo:i.hi], 0, i.hi - i.lo

    def window_of(self, item: LateHit) -> Window | None:
        """The lines kept around a kept `item` as a window, its chunk read again if it was kept without its bytes
        (None when the log no longer holds them). Kept hits come in line order: each chunk is read once."""
        if item.origin is None:
            return item.window()
        if self._last[0] != item.origin and self._reread is not None:
            self._last = (item.origin, self._reread.piece(item.origin))
        chunk = self._last[1]
        return None if chunk is None else item.window(chunk)

    def _let_dead_go(self) -> None:
        for rid in self._dirty:
            queue = self.queues[rid]
            queue.slots = deque(s for s in queue.slots if not _dead(s[1]))
        self._dirty.clear()

    def _drop(self, item: LateHit) -> None:
        data, size = item.data, item.size
        item.found, item.data, item.size, item.chunk, item.origin = _NOT_CHECKED, b"", 0, None, None
        if item.queued:  # one that left its last queue is in none to let go of
            self._dirty.update(item.rule_ids)
        if not size:
            return
        self._kept_count -= 1
        self._kept_bytes -= size
        entry = self._held.get(id(data))
        if entry is not None and entry.data is data:
            entry.kept -= 1
            entry.kept_bytes -= size
            if not entry.kept:  # no kept hit refers to the chunk any more
                del self._held[id(data)]
                if entry is self._newest:
                    self._newest = None
            elif entry is not self._newest:
                self._let_go_if_sparse(entry)

    def latest(self) -> list[LateHit]:
        """Each rule's latest `LATE` that it won, in line order."""
        late: dict[int, LateHit] = {}
        for rid, queue in self.queues.items():
            won = [i for _, i in queue.slots if i.found and i.found[0][0].id == rid]
            for i in won[-LATE:]:
                late[i.line] = i
        return [late[n] for n in sorted(late)]
