"""A big log file scanned on several cores: the file is cut into parts, each scanned by a forked process (the
compiled catalog and hyperscan database are in memory before the fork, so a worker starts at once), and their
results merged with each part's line numbers shifted by the lines before it.

A part starts where one pass ends one of its pieces, so it is read in the same pieces, and with the pieces around
it (`LEAD` before, `TRAIL` after) as context only: a block that runs across a cut grows as in one pass, and what
depends on the pieces in memory at the end (tail, last commands, keywords) is the same. What one pass decides from
everything before a line is merged afterwards: each rule's first `_EAGER` hits while fewer than `_EAGER_TOTAL`
are kept, then the latest ones within ci/late.py's budget, the others counted; a hit inside the block the same
rule's last hit of the previous part holds is dropped. Only a regular file is split (stdin, zips and downloads
stream through one pass), and only when each part is big enough to pay for its worker. A worker that fails is
rescanned in this process. Memory: each worker is a process of its own, holding what a pass holds plus the
parent's pages that either of them writes to after the fork (about 35 MB more per worker at 500 MB; bench/speed.py
shows the tree's peak): the price of the wall time saved, which is why it is not the default (`scan_workers`).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import pickle
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO

from .ahead import discard
from .blocks import Hit
from .late import _TOTAL as LATE_TOTAL
from .late import LATE
from .lines import strip_ansi_bytes
from .pieces import Reread, located_pieces
from .scanner import (
    _BEFORE_ERROR,
    _CONTEXT,
    _EAGER,
    _EAGER_TOTAL,
    _KEEP_MARKERS,
    _MAX_HITS,
    _MAX_LOSERS,
    LEAD,
    OWN,
    TRAIL,
    Candidate,
    Marker,
    Piece,
    ProgressFn,
    Scanner,
    ScanResult,
)

__all__ = ["SPLIT_FROM", "scan_file", "split_points"]

# A part below this is not worth a worker: forking, the context read twice and the merge cost a few
# milliseconds, about what scanning 4 MB saves.
SPLIT_FROM = 8 * 1024 * 1024


def _read_ends(fh: BinaryIO, size: int, chunk: int) -> Iterator[tuple[int, bool]]:
    """Where one pass over the file (`whole_lines`) ends each of its reads, and whether the piece it yields there
    ends with the read (at a line end; else the rest of a very long line is carried into the next piece)."""
    pos = 0
    while pos + chunk < size:
        fh.seek(pos + chunk - 1)
        whole = fh.read(1) == b"\n"
        pos += chunk
        if not whole:
            rest = fh.readline(chunk)
            pos += len(rest)
            whole = rest.endswith(b"\n")
        yield pos, whole


def split_points(path: Path, size: int, parts: int, chunk: int) -> list[int]:
    """Offsets cutting the file into about `parts` equal parts (0 and `size` included), each where one pass reading
    `chunk` bytes at a time ends a piece: a part is read in the very pieces one pass reads, so what depends on the
    pieces in memory (the tail, the last commands, the keywords near the end) is the same. Fewer parts when the
    pieces are too big to cut at."""
    cuts = [0]
    targets = [size * k // parts for k in range(1, parts)]
    with path.open("rb") as fh:
        for pos, whole in _read_ends(fh, size, chunk):
            if not targets:
                break
            if whole and pos >= targets[0]:
                cuts.append(pos)
                targets = [t for t in targets if t > pos]
    cuts.append(size)
    return cuts


class _Bounded:
    """The next `left` bytes of a stream, as `whole_lines` reads them."""

    def __init__(self, stream: BinaryIO, left: int) -> None:
        self._stream = stream
        self._left = left

    def read(self, n: int) -> bytes:
        data = self._stream.read(min(n, self._left))
        self._left -= len(data)
        return data

    def readline(self, n: int) -> bytes:
        data = self._stream.readline(min(n, self._left))
        self._left -= len(data)
        return data


def _part_pieces(fh: BinaryIO, start: int, end: int, size: int, chunk_size: int, res: ScanResult
                 ) -> Iterator[Piece]:
    # A chunk on each side: as far as a block reaches in one pass (the window holds the chunks on either side).
    if start > 0:
        lo = max(0, start - chunk_size)
        fh.seek(lo)
        lead = fh.read(start - lo)
        cut = lead.find(b"\n") + 1 if lo else 0  # whole lines only
        if cut or not lo:
            yield strip_ansi_bytes(lead[cut:]), LEAD, None
    fh.seek(start)
    for piece, origin in located_pieces(_Bounded(fh, end - start), chunk_size, res):  # type: ignore[arg-type]
        yield piece, OWN, origin
    if end < size:  # the next part's first piece, as one pass reads it
        trail = fh.read(chunk_size)
        if not trail.endswith(b"\n"):
            trail += fh.readline(chunk_size)
        cut = trail.rfind(b"\n") + 1
        if cut:
            yield strip_ansi_bytes(trail[:cut]), TRAIL, None


def _scan_part(scanner: Scanner, path: Path, start: int, end: int, size: int,
               progress: ProgressFn | None = None) -> ScanResult:
    """Lines numbered from 1 at `start` (its context before is line 0 and less)."""
    res = ScanResult(engine=scanner.engine.name)
    with path.open("rb") as fh:
        # The latest hits' lines are read again from the part when the scan ends (ci/late.py): not held.
        return scanner.scan_pieces(_part_pieces(fh, start, end, size, scanner.chunk_size, res), res,
                                   progress=progress, at_end=end >= size, reread=Reread(fh, start))


def _pack(res: ScanResult, scanner: Scanner) -> bytes:
    """The result for the pipe, rules by their index in the catalog (the parent has the same catalog)."""
    index = {id(r): i for i, r in enumerate(scanner.catalog.rules)}
    hits = [(index[id(h.rule)], h.line, h.first, h.last, h.fields, h.message, h.late) for h in res.hits]
    return pickle.dumps((replace(res, hits=[]), hits), protocol=pickle.HIGHEST_PROTOCOL)


def _unpack(data: bytes, scanner: Scanner) -> ScanResult:
    res: ScanResult
    res, hits = pickle.loads(data)  # noqa: S301 - written by our own forked child, never read from outside
    rules = scanner.catalog.rules
    res.hits = [Hit(rules[i], n, a, b, f, m, late) for i, n, a, b, f, m, late in hits]
    return res


def _fork_part(scanner: Scanner, path: Path, start: int, end: int, size: int) -> tuple[int, int]:
    """A child scanning one part: its pid and the pipe its packed result comes through."""
    import gc  # only when a log is scanned in parts (the default is one pass)
    import signal

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child (coverage does not follow forks)
        code = 1
        try:
            os.close(r)
            signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C reaches the group: stop, say nothing
            # A collection writes to every object it visits, copying the pages shared with the parent; what a
            # worker allocates is bounded and freed when it exits.
            gc.disable()
            data = _pack(_scan_part(scanner, path, start, end, size), scanner)
            with os.fdopen(w, "wb") as out:
                out.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    return pid, r


def _collect(pid: int, fd: int) -> bytes | None:
    """The child's packed result, None when it failed."""
    with os.fdopen(fd, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    return data if os.waitstatus_to_exitcode(status) == 0 and data else None


def scan_file(scanner: Scanner, path: Path, size: int, workers: int, progress: ProgressFn | None = None, *,
              min_part: int | None = None) -> ScanResult:
    """Scan the file at `path` in up to `workers` parts of at least `min_part` bytes (default `SPLIT_FROM`) at
    once, this process scanning the first; a smaller file in one pass."""
    parts = max(1, min(workers, size // (min_part or SPLIT_FROM)))
    cuts = split_points(path, size, parts, scanner.chunk_size) if parts > 1 else [0, size]
    if len(cuts) <= 2:
        with path.open("rb") as fh:
            return scanner.scan(fh, progress=progress)
    import signal  # only when a log is scanned in parts (the default is one pass)

    discard()  # a helper started to scan it ahead (app/early.py), already scanning: the parts do without it
    spans = list(itertools.pairwise(cuts))
    children: dict[int, tuple[int, int]] = {}  # part -> (pid, pipe)
    try:
        for k, (a, b) in enumerate(spans[1:], start=1):
            children[k] = _fork_part(scanner, path, a, b, size)
        share = len(spans)  # this process sees its own part only: the bar moves for all of them
        shown = None if progress is None else (lambda n: progress(n * share))
        results = [_scan_part(scanner, path, *spans[0], size, shown)]
        for k in range(1, len(spans)):
            data = _collect(*children.pop(k))
            results.append(_scan_part(scanner, path, *spans[k], size) if data is None else _unpack(data, scanner))
    finally:
        for pid, fd in children.values():  # an error or Ctrl-C here: no worker outlives the scan
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            with contextlib.suppress(OSError):
                os.close(fd)
    merged = merge(results)
    merged.size = size
    if progress is not None:
        progress(size)
    return merged


def _shift_markers(items: list[Marker], by: int) -> list[Marker]:
    return [Marker(m.line + by, m.text) for m in items]


def merge(parts: list[ScanResult]) -> ScanResult:
    """One result from the parts' results, in order (each numbered from 1 at its own first line)."""
    out = ScanResult(engine=parts[0].engine)
    base = 0
    hits: list[list[Hit]] = []
    for part in parts:
        hits.append(_add_part(out, part, base))
        base += part.lines
    last = parts[-1]
    by = base - last.lines
    out.keywords, out.commands, out.tail = (_shift_markers(m, by) for m in (last.keywords, last.commands, last.tail))
    out.lines = base
    out.hits = _cap_hits(out, hits, [bool(p.capped) for p in parts])
    out.passed_classes.sort(key=lambda s: (s[1], s[0]))
    shown = _shown(out, out.hits)
    out.text = {n: t for n, t in out.text.items() if n in shown}
    lines = {h.line for h in out.hits}
    out.losers = [c for c in out.losers if c.line in lines]
    out.in_script &= lines
    return out


def _add_part(out: ScanResult, part: ScanResult, by: int) -> list[Hit]:
    """Adds what `part` found but its hits, which it returns (shifted by `by` lines)."""
    # The same rule's last block of the parts before: a hit inside it is a line that block holds.
    open_blocks = {h.rule.id: h for h in out.hits}
    hits = []
    for h in part.hits:
        prev = open_blocks.get(h.rule.id)
        if prev is None or not prev.first <= h.line + by <= prev.last:
            hits.append(replace(h, line=h.line + by, first=h.first + by, last=h.last + by))
    out.hits += hits
    out.losers += [Candidate(c.rule_id, c.line + by, c.winner) for c in part.losers][: _MAX_LOSERS - len(out.losers)]
    room = _KEEP_MARKERS
    out.groups += _shift_markers(part.groups, by)[: room - len(out.groups)]
    out.errors += _shift_markers(part.errors, by)[: room - len(out.errors)]
    out.sections += _shift_markers(part.sections, by)[: room - len(out.sections)]
    out.scripts.update({n + by: Marker(m.line + by, m.text) for n, m in part.scripts.items()})
    out.endgroups += [n + by for n in part.endgroups][: room - len(out.endgroups)]
    out.successes += [n + by for n in part.successes][: room - len(out.successes)]
    out.jobs.extend(n + by for n in part.jobs)
    out.job_ends.extend(n + by for n in part.job_ends)
    out.passed_classes += [(a + by, b + by) for a, b in part.passed_classes]
    for n, text in part.text.items():
        out.text.setdefault(n + by, text)
    out.in_script |= {n + by for n in part.in_script}
    out.hits_dropped += part.hits_dropped
    for rid, count in part.capped.items():
        out.capped[rid] = out.capped.get(rid, 0) + count
    return hits


def _cap_hits(res: ScanResult, parts: list[list[Hit]], saturated: list[bool]) -> list[Hit]:
    """The hits one pass keeps: each rule's first `_EAGER` while fewer than `_EAGER_TOTAL` are kept, then the
    latest ones (ci/late.py); the others are counted. `saturated`: whether a part gave up late hits of its own
    (then the hits it grew first are not among the log's latest, and nothing before it is)."""
    counts: dict[str, int] = {}
    eager: list[Hit] = []
    rest: list[Hit] = []
    candidates: list[Hit] = []
    for k, hits in enumerate(parts):
        if saturated[k]:
            candidates = []
        for h in hits:
            rid = h.rule.id
            if not h.late and len(eager) < _EAGER_TOTAL and counts.get(rid, 0) < _EAGER:
                counts[rid] = counts.get(rid, 0) + 1
                eager.append(h)
                continue
            rest.append(h)
            if h.late or not saturated[k]:
                candidates.append(h)
    # The latest over all rules (ci/late.py's budget), and of those each rule's latest.
    per_rule: dict[str, list[Hit]] = {}
    for h in sorted(candidates, key=lambda h: h.line)[-LATE_TOTAL:]:
        per_rule.setdefault(h.rule.id, []).append(h)
    late = {id(h): h for hits in per_rule.values() for h in hits[-LATE:]}
    for h in rest:
        if id(h) not in late:
            res.capped[h.rule.id] = res.capped.get(h.rule.id, 0) + 1
    kept = sorted([*eager, *late.values()], key=lambda h: h.line)
    if len(kept) > _MAX_HITS:
        res.hits_dropped += len(kept) - _MAX_HITS
        kept = kept[:_MAX_HITS]
    return kept


def _shown(res: ScanResult, hits: list[Hit]) -> set[int]:
    """The lines the scan keeps text for: blocks with their context, group headers, error annotations with the
    lines before the first few."""
    lines = {n for h in hits for n in range(h.first - _CONTEXT, h.last + _CONTEXT + 1)}
    lines |= {m.line for m in res.groups}
    for k, m in enumerate(res.errors):
        lines |= set(range(m.line - _BEFORE_ERROR, m.line + 2)) if k < 20 else {m.line}
    return lines
