"""One streaming pass over a log for the whole catalog.

The raw bytes are read in large chunks; each chunk (ANSI codes removed, which keeps every newline) is scanned
once by a multi-pattern engine — hyperscan when its wheel is installed, else Python `re` — for every rule's
trigger and a few structural markers. Python then looks only at the flagged lines: it re-checks the trigger
with capture groups and grows the block, reading neighbouring lines from the previous, current and next chunk.
A rule's first `_EAGER` hits (and the first `_EAGER_TOTAL` of all rules) are grown at once; after that only the
latest are, when the scan ends (ci/late.py; the others are counted in `capped`), so a log with tens of thousands
of identical errors costs a flagged line a few microseconds. Memory is bounded by three chunks plus what is kept
per hit, whatever the log size.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ..core import ConfigError
from . import confirm, native
from .ahead import Packed, discard, reopenable, scanned_ahead
from .blocks import Hit, block_fields, extend_block, fires, match_line, next_line_ok
from .cache import cache_key, has_entry, read_bundled, read_entry, write_entry
from .catalog import SCAN_LINE_START, Catalog, Rule
from .late import LATE_BYTES, LateHit, LateHits
from .lines import clean_start, display_text
from .pieces import CHUNK_SIZE, Origin, Reread, located_pieces, rereader
from .testclasses import PassedClasses
from .window import Chunk, LineGetter, Window

__all__ = ["CHUNK_SIZE", "JOB_START", "KEYWORDS", "Candidate", "Marker", "ScanResult", "Scanner",
           "hyperscan_available", "hyperscan_cached"]

# The keyword fallback (and the grep baseline of the benchmarks): lines an error usually sits on.
KEYWORDS = r"error|fail|fatal|exception|panic:|killed|timed out|denied"
# Structural markers of GitHub Actions logs at a line start or after the runner's timestamp (`...Z `).
_STRUCTURE = {
    "group": r"(?:^|Z )##\[group\]",
    "endgroup": r"(?:^|Z )##\[endgroup\]",
    "error": r"(?:^|Z )##\[error\]",
    # Azure Pipelines' task boundaries (`##[section]Starting: Run tests` … `##[section]Finishing: Run tests`).
    "section": r"(?:^|Z )##\[section\](?:Starting|Finishing): ",
    # A build tool's own "it worked" line: failures before it did not stop the job.
    "success": r"BUILD SUCCESS",
    # Where a job's log begins (JOB_START): found in the one pass wherever it is, so that in a log of several jobs
    # only the failing job's evidence counts.
    "job": r"(?:^|Z )(?:##\[group\](?:Operating System|Runner Image)|Current runner version:|Requested labels: |"
           r"Running with "
           r"gitlab-runner\b|travis_fold:start:worker_info\b|\[Pipeline\] Start of Pipeline|Started by )",
    # Where a job's log ends (JOB_END): what follows it is another job's.
    "jobend": r"(?:^|Z )(?:Finished: [A-Z_]+\r?$|ERROR: Job failed\b|Job succeeded\r?$|Done\. Your build exited with "
              r"\d|Cleaning up orphan processes\r?$)",
}
# Where a job's log begins, on a line's display text: a log may hold several jobs (a run's logs concatenated, a
# downloaded run log): GitHub's set-up, GitLab's runner banner, Travis's worker fold, a Jenkins build's cause.
JOB_START = re.compile(r"^(?:##\[group\](?:Operating System|Runner Image)$|Current runner version:|Requested labels: |"
                       r"Running with gitlab-runner\b|travis_fold:start:worker_info\b|"
                       r"\[Pipeline\] Start of Pipeline$|"
                       r"Started by (?:user|timer|upstream project|an SCM change|GitHub|remote host|"
                       r"branch indexing)\b)")
JOB_END = re.compile(r"^(?:Finished: [A-Z_]+|ERROR: Job failed\b.*|Job succeeded|Done\. Your build exited with \d+\.?|"
                     r"Cleaning up orphan processes)\s*$")
_KEEP_JOBS = 10000  # job starts (and ends) kept (the latest: the job diagnosed is near the end)
_KEEP_KEYWORDS = 400  # most recent keyword lines kept for the fallback
# Structural markers kept (the first ones: the failing step is the first whose exit marker says so). A real
# log has tens of steps; only a concatenation of hundreds of logs reaches this (each kept marker costs memory:
# with 4000 a 500 MB log held 2 MB more).
_KEEP_MARKERS = 1000
_TAIL = 200
_CONTEXT = 3  # lines kept around each block for the excerpt
_BEFORE_ERROR = 15
# Lines read at once around a flagged line: most blocks fit (the rest is read line by line).
_NEAR_BEFORE = 8
_NEAR_AFTER = 32
# Hits of one rule grown into blocks: the first ones (the earliest error usually causes the rest), then only the
# latest ones (where the job stopped); the others are counted (javac stops at 100 errors by default).
_EAGER = 100
# Hits grown at once over all rules: past it every rule keeps only its latest (ci/late.py), so a log where a
# hundred rules fire thousands of times costs what an ordinary one does. The labelled logs stay far below it.
_EAGER_TOTAL = 300
_MAX_LOSERS = 2000
_MAX_HITS = 20000
_MAX_PLANS = 4096  # distinct sets of patterns flagged on one line whose plan is kept (a log has a few dozen)
# Pieces between two returns of the C heap's free pages (`native.trim`: memory flat in the log's size). Each return
# makes the next pieces' buffers fault their pages in again: every 16 pieces, that cost a tenth of the main process's
# CPU at 500 MB, for the same peak memory as every 64 (one pass: 32.0 MB at 500 MB; every 256: 33.3 MB).
_TRIM_EVERY = 64
_SUCCESS = re.compile(r"\bBUILD SUCCESS(?:FUL)?\b")
# What a piece of the log is to `Scanner.scan_pieces`: read before the part scanned, the part, read after it.
LEAD, OWN, TRAIL = "lead", "own", "trail"
# A piece for `Scanner.scan_pieces`: cleaned bytes of whole lines, what they are, where they lie in the log (when it
# can be read again).
Piece = tuple[bytes, str, Origin | None]

ProgressFn = Callable[[int], None]
# A flagged line's rules (catalog indexes), structure markers, and its rules' ids: see `Scanner._plan`.
_Plan = tuple[tuple[int, ...], frozenset[str], tuple[str, ...]]


def hyperscan_available() -> bool:
    try:
        import hyperscan  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass(slots=True)
class Marker:
    """A line the scan keeps with its text (a group header, a tail line)."""

    line: int
    text: str


@dataclass(slots=True)
class Candidate:
    """A rule that fired on a line but lost to another rule there (kept for the trace)."""

    rule_id: str
    line: int
    winner: str


@dataclass
class ScanResult:
    """What one pass over a log found: the rules' hits, the markers and the lines kept for later."""

    lines: int = 0
    size: int = 0
    engine: str = ""
    hits: list[Hit] = field(default_factory=list)
    losers: list[Candidate] = field(default_factory=list)
    groups: list[Marker] = field(default_factory=list)
    endgroups: list[int] = field(default_factory=list)
    successes: list[int] = field(default_factory=list)
    # Lines where a job's log begins (JOB_START) and ends (JOB_END), the latest ones: a concatenation of thousands
    # of logs has thousands of each, kept as machine integers (8 bytes each, not a 32-byte object per line).
    jobs: array[int] = field(default_factory=lambda: array("q"))
    job_ends: array[int] = field(default_factory=lambda: array("q"))
    # (first, last) line spans of test classes that ran and passed (Surefire's `Running X` .. `Tests run: ..
    # Failures: 0, Errors: 0 .. - in X`)
    passed_classes: list[tuple[int, int]] = field(default_factory=list)
    errors: list[Marker] = field(default_factory=list)
    # Azure Pipelines' `##[section]Starting: X` / `##[section]Finishing: X` lines (the first `_KEEP_MARKERS`), and
    # under a task's start the end of its banner with the script a Command line task printed there (`Script
    # contents:`), by the start's line.
    sections: list[Marker] = field(default_factory=list)
    scripts: dict[int, Marker] = field(default_factory=dict)
    keywords: list[Marker] = field(default_factory=list)
    tail: list[Marker] = field(default_factory=list)
    # Display text of every line a hit or marker may show: blocks with a little context, markers' lines.
    text: dict[int, str] = field(default_factory=dict)
    in_script: set[int] = field(default_factory=set)  # hit lines inside a step's `##[group]Run` header
    hits_dropped: int = 0  # flagged lines beyond the cap on hits
    capped: dict[str, int] = field(default_factory=dict)  # rule id -> its hits not examined (past the cap)
    # The last command echoes near the end (`$ cmd`, `+ cmd`, a Jenkins stage): what the failing step ran.
    commands: list[Marker] = field(default_factory=list)

    def line_text(self, n: int) -> str | None:
        return self.text.get(n)


class _Engine:
    name = "re"
    entry: str | None = None  # the name of its compiled databases in the cache (None: it has none)

    def scan(self, data: bytes) -> native.Found:
        """(end offset, pattern id) of every match (ends first: sorting them is a plain sort)."""
        raise NotImplementedError

    def serialized(self) -> bytes | None:
        """The compiled database, for a helper process to load (None: this engine has none)."""
        return None



class _ReEngine(_Engine):
    """The fallback without hyperscan. Python `re` pays for every position it tries, so the patterns anchored at a
    line start are joined into one alternation per case mode: one pass finds the lines where any of them matches,
    and each such line is reported for all of them (the Python check that follows sorts them out)."""

    name = "re"

    def __init__(self, patterns: list[tuple[bytes, bool]]) -> None:
        prefix = SCAN_LINE_START.encode()
        self._single: list[tuple[int, re.Pattern[bytes]]] = []
        self._joined: list[tuple[list[int], re.Pattern[bytes]]] = []
        groups: dict[bool, list[int]] = {False: [], True: []}
        for i, (p, ci) in enumerate(patterns):
            if p.startswith(prefix):
                groups[ci].append(i)
            else:
                self._single.append((i, re.compile(p, re.MULTILINE | (re.IGNORECASE if ci else 0))))
        for ci, ids in groups.items():
            if ids:
                body = b"|".join(b"(?:" + patterns[i][0][len(prefix):] + b")" for i in ids)
                rx = re.compile(prefix + b"(?:" + body + b")", re.MULTILINE | (re.IGNORECASE if ci else 0))
                self._joined.append((ids, rx))

    def scan(self, data: bytes) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for i, rx in self._single:
            out.extend((m.end(), i) for m in rx.finditer(data))
        for ids, rx in self._joined:
            for m in rx.finditer(data):
                end = m.end()
                out.extend((end, i) for i in ids)
        return out


def _load_database(hyperscan: Any, directory: Path | None, name: str) -> tuple[confirm.Prefiltered, bytes] | None:
    """The cached databases (else the ones the wheel carries) with the payload they were loaded from, or None when
    there are none or they cannot be used (hyperscan checks the format and the platform, here and when a scratch
    space is made for it: a database built on a machine with other CPU features is refused; anything refused is
    compiled again)."""
    data = (read_entry(directory, name) if directory is not None else None) or read_bundled(name)
    if data is None:
        return None
    try:
        loaded = confirm.load(data, hyperscan)
        loaded.scratches()
    except (hyperscan.error, TypeError, ValueError):
        return None
    return loaded, data


def _machine() -> str:
    """`platform.machine()`, which on a POSIX system is `os.uname().machine`: without importing `platform` (a few
    milliseconds of every start) where that holds."""
    if hasattr(os, "uname"):
        return os.uname().machine
    import platform

    return platform.machine()


# What hyperscan compiles: each pattern with its case flag, and the exact scan forms of the patterns given as
# prefilters (pattern id -> form and case flag).
_Patterns = list[tuple[bytes, bool]]
_Exact = dict[int, tuple[bytes, bool]]


def _database_name(hyperscan: Any, patterns: _Patterns, exact: _Exact) -> str:
    # Keyed by everything that goes into it: a database of another version, machine or catalog is never read.
    version = getattr(hyperscan, "__version__", "")
    return f"hyperscan-{cache_key(version, _machine(), repr(patterns), repr(sorted(exact.items())))}.db"


def hyperscan_cached(patterns: _Patterns, cache_dir: Path | None, exact: _Exact | None = None) -> bool:
    """Whether a compiled database for `patterns` is in `cache_dir` or the wheel (and hyperscan is installed)."""
    try:
        import hyperscan
    except ImportError:
        return False
    return has_entry(cache_dir, _database_name(hyperscan, patterns, exact or {}))


def _compiled(hyperscan: Any, patterns: list[tuple[int, bytes, bool]]) -> Any:
    """A block-mode database of (pattern id, pattern, case flag)."""
    flags = [hyperscan.HS_FLAG_MULTILINE | (hyperscan.HS_FLAG_CASELESS if ci else 0) for _, _, ci in patterns]
    db = hyperscan.Database()
    try:
        db.compile(expressions=[p for _, p, _ in patterns], ids=[i for i, _, _ in patterns],
                   elements=len(patterns), flags=flags)
    except hyperscan.error as exc:
        raise ConfigError(f"a rule's trigger cannot be scanned by hyperscan: {exc} (see rules/FORMAT.md, "
                          "Triggers)") from None
    return db


class _HyperscanEngine(_Engine):
    """The catalog's patterns in one database, prefilters in place of the scan forms `exact` names, whose matches
    a second database of those forms confirms (ci/confirm.py)."""

    name = "hyperscan"

    def __init__(self, patterns: _Patterns, cache_dir: Path | None, exact: _Exact | None = None) -> None:
        import hyperscan

        self._hs = hyperscan
        exact = exact or {}
        # Compiling the catalog takes ~0.3 s, a hundred times the scan of an ordinary log, so the compiled
        # databases are kept in the user's cache.
        self.entry = name = _database_name(hyperscan, patterns, exact)
        # The payload is kept for a helper process (`serialized`): dumping the databases again costs ~4 ms.
        self._serialized: bytes | None = None
        found = _load_database(hyperscan, cache_dir, name)
        if found is None:
            mask = bytes(pid in exact for pid in range(len(patterns)))
            db = _compiled(hyperscan, [(i, p, ci) for i, (p, ci) in enumerate(patterns)])
            exact_db = _compiled(hyperscan, [(i, p, ci) for i, (p, ci) in sorted(exact.items())]) if exact else None
            loaded = confirm.Prefiltered(hyperscan, db, exact_db, mask)
            if cache_dir is not None:
                with contextlib.suppress(hyperscan.error):
                    self._serialized = self._payload(loaded)
                    write_entry(cache_dir, name, self._serialized)
        else:
            loaded, self._serialized = found
        self._prefiltered = loaded
        self._db = loaded.database
        self._scratches = loaded.scratches()
        self._scratch = self._scratches[0]
        # A scratch space serves one scan at a time: a process scanning in several threads (the service's worker
        # runs jobs side by side with one cached scanner) gives each thread its own clones.
        self._local = threading.local()
        self._owner = threading.get_ident()

    def _payload(self, loaded: confirm.Prefiltered) -> bytes:
        dumpb = self._hs.dumpb
        exact = dumpb(loaded.exact) if loaded.exact is not None else b""
        return confirm.pack(dumpb(loaded.database), exact, loaded.mask)

    def _thread_scratches(self) -> tuple[Any, Any | None]:
        if threading.get_ident() == self._owner:
            return self._scratches
        scratches = getattr(self._local, "scratches", None)
        if scratches is None:
            main, exact = self._scratches
            scratches = self._local.scratches = (main.clone(), exact.clone() if exact is not None else None)
        return scratches

    def scan(self, data: bytes) -> native.Found:
        # With the extension, its collector is the callback: a match costs a C call, no Python frame or tuple (a
        # 500 MB Maven log has half a million, most of them on passing test classes).
        found: native.Found = self._prefiltered.scan(data, self._thread_scratches(), native.NATIVE)
        return found

    def serialized(self) -> bytes | None:
        if self._serialized is None:
            self._serialized = self._payload(self._prefiltered)
        return self._serialized


# How shells and CI systems echo a command: GitLab/plain `$ cmd`, `set -x`/Jenkins `+ cmd`, Travis
# `travis_time:start:ID\r$ cmd`, a Jenkins stage `[Pipeline] { (Name)`.
_COMMAND_ECHOES = (b"\n$ ", b"\n+ ", b"\r$ ", b"\n[Pipeline] { (")
_KEEP_COMMANDS = 4


def _last_commands(window: Window) -> list[Marker]:
    """The last few command echoes of each kind in the chunks still in memory, found backwards with `rfind` (a
    few calls, whatever the log's size)."""
    found: dict[int, Marker] = {}
    for chunk in reversed(window.chunks):
        data = chunk.data
        for echo in _COMMAND_ECHOES:
            end = len(data)
            for _ in range(_KEEP_COMMANDS):
                at = data.rfind(echo, 0, end)
                if at == -1:
                    break
                n = chunk.first + data.count(b"\n", 0, at + 1)
                if n not in found and n <= chunk.last:
                    chunk.anchor(n, at + 1 if echo[0] == 10 else data.rfind(b"\n", 0, at) + 1)
                    found[n] = Marker(n, display_text(chunk.clean(n)))
                end = at
        if len(found) >= _KEEP_COMMANDS:
            break
    return [found[n] for n in sorted(found)]


def _patterns(catalog: Catalog) -> tuple[list[tuple[str, int | str]], list[tuple[bytes, bool]],
                                         list[tuple[bytes, bool]]]:
    """Each pattern's target (("rule", rule index) or ("struct", name)), the scan forms with their case flag, and
    the same with each rule's prefilter in place of its scan form where it has one (what hyperscan scans)."""
    targets: list[tuple[str, int | str]] = []
    exact: list[tuple[bytes, bool]] = []
    prefiltered: list[tuple[bytes, bool]] = []
    rows = zip(catalog.rules, catalog.scan_forms, catalog.prefilters, strict=True)
    for i, (rule, forms, prefilters) in enumerate(rows):
        for form, pre in zip(forms, prefilters, strict=True):
            exact.append((form.encode("utf-8"), rule.ignore_case))
            prefiltered.append(((pre or form).encode("utf-8"), rule.ignore_case))
            targets.append(("rule", i))
    for name, pat in _STRUCTURE.items():
        exact.append((pat.encode("utf-8"), False))
        prefiltered.append((pat.encode("utf-8"), False))
        targets.append(("struct", name))
    return targets, exact, prefiltered


class Scanner:
    """Compiled once per catalog; `scan()` may be called for many logs."""

    def __init__(self, catalog: Catalog, *, engine: str | None = None, chunk_size: int = CHUNK_SIZE,
                 cache_dir: Path | None = None, compile_hyperscan: bool = True) -> None:
        """`cache_dir`: where the compiled hyperscan database is kept between processes (None: not kept).
        `engine`: "hyperscan", "re", or None for hyperscan when it is installed — and, with
        `compile_hyperscan=False`, only when its database is already in `cache_dir` (a small log scans faster
        with `re` than hyperscan compiles)."""
        self.catalog = catalog
        self.chunk_size = chunk_size
        # Pattern id -> ("rule", rule index) or ("struct", name).
        self._targets, patterns, prefiltered = _patterns(catalog)
        # The same as tables a flagged line reads (rule index or -1; structure name or "").
        self._rule_of = [int(what) if kind == "rule" else -1 for kind, what in self._targets]
        self._struct_of = [str(what) if kind == "struct" else "" for kind, what in self._targets]
        self._plans: dict[frozenset[int], _Plan] = {}
        # Hyperscan scans a prefilter in place of a scan form it would follow through every line's first word
        # (ci/prefilter.py) and confirms its matches with the exact form (ci/confirm.py); Python `re` scans the
        # exact forms (it has no literal matcher to gain from a prefilter).
        exact = {pid: form for pid, (form, pre) in enumerate(zip(patterns, prefiltered, strict=True)) if form != pre}
        use_hs = engine == "hyperscan" or (engine is None and hyperscan_available() and (
            compile_hyperscan or hyperscan_cached(prefiltered, cache_dir, exact)))
        self.engine: _Engine = _HyperscanEngine(prefiltered, cache_dir, exact) if use_hs else _ReEngine(patterns)
        # The keyword fallback only matters near where the job failed: it is scanned at the end, over the
        # chunks still in memory, not over the whole log.
        kw = [(KEYWORDS.encode(), True)]
        self._keywords: _Engine = _HyperscanEngine(kw, cache_dir) if use_hs else _ReEngine(kw)

    def scan(self, stream: BinaryIO, *, progress: ProgressFn | None = None, ahead: bool = False) -> ScanResult:
        """`ahead`: a big regular file is scanned by a helper process ahead of this process's work on the lines
        (ci/ahead.py); the result is the same."""
        res = ScanResult(engine=self.engine.name)
        reread = rereader(stream)
        where = reopenable(stream) if ahead else None
        database = self.engine.serialized() if where is not None else None
        located = located_pieces(stream, self.chunk_size, res)
        if where is not None and database is not None:
            triples = scanned_ahead(located, where, self.chunk_size, self.engine.scan, database, res)
        else:
            discard()  # a helper started for this scan (app/early.py) that it does not need
            triples = ((p, o, self.engine.scan(p)) for p, o in located)
        scanned = (((p, OWN, o if reread is not None else None), found) for p, o, found in triples)
        return self._scan(scanned, res, progress=progress, reread=reread)

    def scan_pieces(self, pieces: Iterable[Piece], res: ScanResult, *, progress: ProgressFn | None = None,
                    at_end: bool = True, reread: Reread | None = None) -> ScanResult:
        """Scan cleaned pieces of whole lines. Pieces marked `LEAD` (before the part of the log this scan
        answers for; numbered up to line 0) and `TRAIL` (after it) are only context for blocks that run into
        them: ci/split.py scans a big file in parts this way. `at_end`: the last piece is the log's end (the tail,
        the last commands and keywords are read there). `reread`: reads a piece again by its origin."""
        return self._scan(((p, self._matches(p)) for p in pieces), res, progress=progress, at_end=at_end,
                          reread=reread)

    def _matches(self, piece: Piece) -> native.Found | None:
        """The engine's matches in a piece the scan answers for (None for context)."""
        return self.engine.scan(piece[0]) if piece[1] == OWN else None

    def _scan(self, scanned: Iterable[tuple[Piece, native.Found | Packed | None]], res: ScanResult, *,
              progress: ProgressFn | None, at_end: bool = True, reread: Reread | None) -> ScanResult:
        window = Window()
        state = _State(res, reread)
        pending: tuple[list[int], dict[int, set[int]]] | None = None
        next_line = 1
        pushed = 0
        for (cleaned, role, origin), matches in scanned:
            if role == LEAD:
                newlines = cleaned.count(b"\n")
                chunk = Chunk(cleaned, 1 - newlines, newlines)
                chunk.anchor_tail(_NEAR_BEFORE + _CONTEXT)
                window.push(chunk)
                continue
            if role == OWN:
                order, by_line, newlines, anchors = self._locate(cleaned, next_line, matches or [])
            else:
                order, by_line, newlines, anchors = [], {}, cleaned.count(b"\n"), []
            chunk = Chunk(cleaned, next_line, newlines, origin)
            chunk.anchor_many(anchors)
            if role == OWN:
                next_line = chunk.last + 1
            if window.full():
                state.release(window.chunks[0], self.catalog.rules, window)
            window.push(chunk)
            pushed += 1
            if pushed % _TRIM_EVERY == 0 and native.NATIVE is not None:
                native.NATIVE.trim()
            state.classes.advance(chunk)
            # A chunk's hits are handled once the next chunk is in memory: blocks may run into it.
            if pending is not None:
                self._process(*pending, window, state)
            pending = (order, by_line) if role == OWN else None
            if progress is not None:
                progress(res.size)
        if pending is not None:
            self._process(*pending, window, state)
        state.finish(self.catalog.rules, window)
        res.lines = next_line - 1
        res.passed_classes = state.classes.sorted_spans()
        if at_end:
            self._at_end(res, window)
        return res

    def _at_end(self, res: ScanResult, window: Window) -> None:
        res.keywords = self._tail_keywords(window)
        res.commands = _last_commands(window)
        if window.chunks:
            window.chunks[-1].anchor_tail(_TAIL)
        for n in range(max(1, res.lines - _TAIL + 1), res.lines + 1):
            text = window.get(n)
            if text is not None:
                res.tail.append(Marker(n, display_text(text)))

    def _tail_keywords(self, window: Window) -> list[Marker]:
        """The last `_KEEP_KEYWORDS` lines where a keyword matches in the chunks still in memory (the last few MB:
        where a job stops is near the end): found newest chunk first, until there are enough (an older chunk's lines
        would not be among the last), their lines numbered in C as the flagged lines are. A big log's last chunks
        hold thousands of such lines, each numbered and kept in Python before."""
        recent: list[Chunk] = []
        for chunk in reversed(window.chunks):
            recent.insert(0, chunk)
            if sum(len(c.data) for c in recent) >= 4 * 1024 * 1024:
                break
        lines: list[tuple[Chunk, int, int]] = []  # (chunk, line, where it starts), newest chunk first
        for chunk in reversed(recent):
            _, _, _, anchors = self._locate(chunk.data, chunk.first, self._keywords.scan(chunk.data))
            lines[:0] = [(chunk, n, at) for n, at in anchors]
            if len(lines) >= _KEEP_KEYWORDS:
                break
        found = []
        for chunk, n, at in lines[-_KEEP_KEYWORDS:]:
            chunk.anchor(n, at)
            found.append(Marker(n, display_text(window.get(n) or "")))
        return found

    @staticmethod
    def _locate(data: bytes, first: int, found: native.Found | Packed
                ) -> tuple[list[int], dict[int, set[int]], int, list[tuple[int, int]]]:
        """Line numbers of the matches (one counting pass over the chunk, which also gives its newline count), and
        the offset where each flagged line starts."""
        c = native.NATIVE
        if isinstance(found, Packed):  # located by the helper scanning ahead (which only runs with the extension)
            assert c is not None
            return c.unpack_located(found.data, first)  # type: ignore[no-any-return]
        if c is not None:
            return c.locate(data, first, found)  # type: ignore[no-any-return]
        matches = native.pairs(found)
        matches.sort()
        count, rfind = data.count, data.rfind
        line = first
        pos = 0
        by_line: dict[int, set[int]] = {}
        order: list[int] = []
        anchors: list[tuple[int, int]] = []
        pids: set[int] = set()
        last = first - 1
        for end, pid in matches:
            at = end - 1 if end else 0
            if at > pos:
                line += count(b"\n", pos, at)
                pos = at
            if line != last:  # sorted by end: a line's matches come together
                anchors.append((line, rfind(b"\n", 0, at) + 1))
                pids = by_line[line] = set()
                order.append(line)
                last = line
            pids.add(pid)
        newlines = (line - first) + count(b"\n", pos)
        return order, by_line, newlines, anchors

    def _process(self, order: list[int], by_line: dict[int, set[int]], window: Window, state: _State) -> None:
        chunk = window.chunk_of(order[0]) if order else None
        state.at_chunk(chunk)
        # A flagged line costs a few hundred nanoseconds when it is a late candidate or a marker its bytes tell, so
        # those are handled here, without a call for the line, its plan's lookup or the candidate's rules' caps (a
        # call was a tenth of their cost).
        plans = self._plans
        add = state.late.add
        for n in order:
            pids = by_line[n]
            idxs, structs, rule_ids = plans.get(frozenset(pids)) or self._plan(pids)
            if not structs and idxs and (state.eager >= _EAGER_TOTAL or state.past_eager(rule_ids)):
                # A late candidate: all its rules are past their first hits (or all rules together past theirs).
                on = chunk if chunk is not None and chunk.first <= n <= chunk.last else window.chunk_of(n)
                add(n, idxs, rule_ids, on, state.in_group and state.group_is_run)
                continue
            if not idxs and state.markers_from_bytes(n, structs, window):
                continue
            self._line(n, idxs, structs, window, state)

    def _plan(self, pids: set[int]) -> _Plan:
        """What a flagged line's pattern ids call for: its rules (catalog order), its structure markers, and its
        rules' ids (the queues it waits in as a late candidate). Lines flag few distinct sets of patterns, so each
        set is worked out once per scanner."""
        key = frozenset(pids)
        plan = self._plans.get(key)
        if plan is None:
            rule_of = self._rule_of
            idxs = tuple(sorted({rule_of[p] for p in key if rule_of[p] >= 0}))
            structs = frozenset(self._struct_of[p] for p in key if rule_of[p] < 0)
            plan = (idxs, structs, tuple(self.catalog.rules[i].id for i in idxs))
            if len(self._plans) < _MAX_PLANS:
                self._plans[key] = plan
        return plan

    def _line(self, n: int, idxs: tuple[int, ...], structs: frozenset[str], window: Window, state: _State) -> None:
        """A flagged line read as text: its markers, then its rules."""
        chunk = state.chunk
        if chunk is None or not chunk.first <= n <= chunk.last:
            chunk = window.chunk_of(n)
            if chunk is None:
                return
        text = chunk.clean(n)  # `window.get(n)`
        state.structure(n, text, structs, window)
        if idxs:
            state.rules(n, text, idxs, self.catalog.rules, window)


_SECTION = ("##[section]Starting: ", "##[section]Finishing: ")
_HEAD_LINES = 24  # an Azure task's banner (7 lines), "Generating script.", "Script contents:", the script, …
_RULE_LINE = "=" * 20
_TASK_SHELL = re.compile(r"^(?:##)?(?:\[command\])?\S*(?:bash|sh|cmd(?:\.exe)?|pwsh(?:\.exe)?|powershell(?:\.exe)?)"
                         r"\b.*_temp[/\\]", re.IGNORECASE)


def _azure_head(n: int, get: LineGetter) -> Marker | None:
    """What an Azure Pipelines task prints under its start before the process's own output: the task's banner
    (between two `=====` rules), then for a Command line task `Script contents:`, the script, and `Starting Command
    Output`. Its last line and the script (or ""), else None (a section with no banner: the job's own)."""
    rules = 0
    last = 0
    script: list[str] | None = None
    for k in range(n + 1, n + _HEAD_LINES + 1):
        t = get(k)
        if t is None or t.startswith("##[section]"):
            break
        if "Starting Command Output" in t:
            # The shell the task starts on the generated script (`/usr/bin/bash --noprofile --norc …/_temp/x.sh`).
            shell = get(k + 1)
            end = k + 1 if shell is not None and _TASK_SHELL.search(shell) else k
            return Marker(end, "\n".join(script or []).strip())
        if script is not None:
            script.append(display_text(t))
        elif t.startswith(_RULE_LINE) and rules < 2:
            rules += 1
            last = k
        elif t.strip() == "Script contents:":
            script = []
        elif rules == 0:
            return None  # no banner right under the start
    return Marker(last, "") if rules == 2 else None


def _keep_latest(lines: array[int], n: int) -> None:
    lines.append(n)
    if len(lines) > _KEEP_JOBS:
        del lines[: _KEEP_JOBS // 2]


# The fields of a late candidate's rules until it is grown into a block (never mutated).
_UNREAD: dict[str, str] = {}


def _with_fields(found: Sequence[tuple[Rule, dict[str, str], str]],
                 text: str) -> list[tuple[Rule, dict[str, str], str]]:
    """A late hit's rules with the fields and message each reads from its trigger line (they fired on it)."""
    out = []
    for rule, _, _ in found:
        got = match_line(rule, text)
        out.append((rule, *got) if got is not None else (rule, {}, ""))
    return out


class _State:
    """What the pass remembers between flagged lines."""

    def __init__(self, res: ScanResult, reread: Reread | None = None) -> None:
        self.res = res
        self.in_group = False
        self.group_is_run = False
        self.open_blocks: dict[str, Hit] = {}  # rule id -> its latest hit, to absorb lines inside its block
        self.classes = PassedClasses()
        self.counts: dict[str, int] = {}  # rule id -> hits so far
        self.eager = 0  # hits grown at once, all rules
        self.late = LateHits(res.capped, reread)
        self.shared: dict[tuple[tuple[int, ...], tuple[str, ...]], tuple[tuple[int, ...], tuple[str, ...]]] = {}
        self.chunk: Chunk | None = None  # the chunk whose flagged lines are being handled (`at_chunk`)
        self.past_markers: set[frozenset[str]] = set()  # sets of markers whose kept ones are all there are
        self.past: set[tuple[str, ...]] = set()  # sets of rules all past their first `_EAGER` hits

    def keep(self, first: int, last: int, get: LineGetter) -> None:
        keep = self.res.text
        for k in range(max(1, first), last + 1):
            if k not in keep:
                t = get(k)
                if t is None:
                    continue
                # `display_text` of a line without `\r` (nearly all) is the line right-stripped: no call per line.
                keep[k] = t.rstrip() if "\r" not in t else display_text(t)

    def structure(self, n: int, text: str, structs: frozenset[str], window: Window) -> None:
        res = self.res
        if "group" in structs and text.startswith("##[group]"):
            self.in_group = True
            self.group_is_run = text.startswith("##[group]Run ")
            if len(res.groups) < _KEEP_MARKERS:
                res.groups.append(Marker(n, shown := display_text(text)))
                res.text[n] = shown
        elif "endgroup" in structs and text.startswith("##[endgroup]"):
            self.in_group = False
            if len(res.endgroups) < _KEEP_MARKERS:
                res.endgroups.append(n)
        if "error" in structs and text.startswith("##[error]") and len(res.errors) < _KEEP_MARKERS:
            res.errors.append(Marker(n, shown := display_text(text)))
            res.text[n] = shown
            if len(res.errors) <= 20:
                # What led to the annotation: the excerpt shows a failing step's tail from here.
                self.keep(n - _BEFORE_ERROR, n + 1, window.get)
        if "section" in structs and text.startswith(_SECTION) and len(res.sections) < _KEEP_MARKERS:
            res.sections.append(Marker(n, shown := display_text(text)))
            res.text[n] = shown
            if shown.startswith("##[section]Starting: ") and (head := _azure_head(n, window.get)) is not None:
                res.scripts[n] = head
        if "success" in structs and _SUCCESS.search(text) and len(res.successes) < _KEEP_MARKERS:
            res.successes.append(n)
        if "job" in structs and JOB_START.match(display_text(text)):
            _keep_latest(res.jobs, n)
        if "jobend" in structs and JOB_END.match(display_text(text)):
            _keep_latest(res.job_ends, n)

    def markers_from_bytes(self, n: int, structs: frozenset[str], window: Window) -> bool:
        """`structure` for a line flagged only for markers that need no text of it (True: done): past the first
        `_KEEP_MARKERS` groups a line only opens or closes one, which its bytes tell (`clean_start`), and
        an error annotation or a success line past theirs changes nothing. A big Actions log has tens of
        thousands of such lines, each decoded and cleaned otherwise."""
        res = self.res
        if structs not in self.past_markers:
            if ("job" in structs or "jobend" in structs  # every job start and end is kept (a few per job)
                    or ("group" in structs and len(res.groups) < _KEEP_MARKERS)
                    or ("error" in structs and len(res.errors) < _KEEP_MARKERS)
                    or ("success" in structs and len(res.successes) < _KEEP_MARKERS)
                    or ("section" in structs and len(res.sections) < _KEEP_MARKERS)):
                return False
            self.past_markers.add(structs)  # the markers kept only grow: past them once, past them for good
        if "group" not in structs and "endgroup" not in structs:
            return True
        chunk = self.chunk_of(n, window)
        if chunk is None:
            return False
        raw = chunk.raw(n)
        start = clean_start(raw)
        if start is None:
            return False
        if "group" in structs and raw.startswith(b"##[group]", start):
            self.in_group = True
            self.group_is_run = raw.startswith(b"##[group]Run ", start)
        elif "endgroup" in structs and raw.startswith(b"##[endgroup]", start):
            self.in_group = False
            if len(res.endgroups) < _KEEP_MARKERS:
                res.endgroups.append(n)
        return True

    def rules(self, n: int, text: str, idxs: tuple[int, ...], rules: tuple[Rule, ...], window: Window) -> None:
        if len(self.res.hits) >= _MAX_HITS:
            self.res.hits_dropped += 1  # memory stays bounded on pathological logs
            return
        get = window.near(n, _NEAR_BEFORE, _NEAR_AFTER)
        found: list[tuple[Rule, dict[str, str], str]] = []
        for i in idxs:
            rule = rules[i]
            got = match_line(rule, text)
            if got is not None and next_line_ok(rule, get, n):
                found.append((rule, got[0], got[1]))
        if not found:
            return
        found.sort(key=lambda f: -f[0].confidence)  # stable: catalog order breaks ties
        rule = found[0][0]
        prev = self.open_blocks.get(rule.id)
        if prev is not None and prev.first <= n <= prev.last:
            return  # a line of the block this rule already holds
        if self.counts.get(rule.id, 0) >= _EAGER or self.eager >= _EAGER_TOTAL:
            # Flagged with a rule under its cap, won by one past it (or past the total).
            self._enqueue(n, idxs, (rule.id,), window)
            return
        self.counts[rule.id] = self.counts.get(rule.id, 0) + 1
        self.eager += 1
        if rule.category != "infrastructure":  # the diagnosis discounts no infrastructure failure
            self.classes.check(n, window)
        self.hit(n, found, get, self.in_group and self.group_is_run)

    def past_eager(self, rule_ids: tuple[str, ...]) -> bool:
        """Whether all these rules are past their first `_EAGER` hits: a line flagged for them is a late candidate
        (ci/late.py). Their hits only grow: once past, past for good."""
        if rule_ids in self.past:
            return True
        counts = self.counts
        if any(counts.get(rid, 0) < _EAGER for rid in rule_ids):
            return False
        self.past.add(rule_ids)
        return True

    def at_chunk(self, chunk: Chunk | None) -> None:
        """The flagged lines handled next are on `chunk` (each chunk's come together): what they look up in it
        needs no search of the window (a few hundred nanoseconds a line; a late candidate costs a few times
        that)."""
        self.chunk = chunk

    def chunk_of(self, n: int, window: Window) -> Chunk | None:
        """`window.chunk_of(n)`."""
        chunk = self.chunk
        if chunk is not None and chunk.first <= n <= chunk.last:
            return chunk  # the window's chunks hold lines apart: no other one holds `n`
        return window.chunk_of(n)

    def _enqueue(self, n: int, idxs: tuple[int, ...], rule_ids: tuple[str, ...], window: Window) -> None:
        # Candidates wait by the thousand and most flag the same few rules: they share one tuple of each.
        key = (tuple(idxs), rule_ids)
        shared = self.shared.setdefault(key, key)
        self.late.add(n, *shared, self.chunk_of(n, window), self.in_group and self.group_is_run)

    def release(self, chunk: Chunk, rules: tuple[Rule, ...], window: Window) -> None:
        """`chunk` is about to leave memory: check the late candidates on it that may still matter."""
        for item in self.late.leaving(chunk):
            self._settle(item, rules, window)

    def _settle(self, item: LateHit, rules: tuple[Rule, ...], window: Window) -> None:
        chunk, item.chunk = item.chunk, None
        if chunk is None:
            return
        n = item.line
        text = chunk.clean(n)
        get: LineGetter | None = None  # lines around it, read only for a rule with a `next_line` condition
        found: list[tuple[Rule, dict[str, str], str]] = []
        for i in item.idxs:
            rule = rules[i]
            if not fires(rule, text):
                continue
            if rule.next_line is not None:
                get = get or window.near(n, _NEAR_BEFORE, _NEAR_AFTER)
                if not next_line_ok(rule, get, n):
                    continue
            found.append((rule, _UNREAD, ""))  # fields read if it is grown into a block (`finish`)
        if not found:
            return
        if len(found) > 1:
            found.sort(key=lambda f: -f[0].confidence)
        item.found = found
        self.late.keep(item, chunk.data, *chunk.span(n, LATE_BYTES), chunk.origin)

    def hit(self, n: int, found: list[tuple[Rule, dict[str, str], str]], get: LineGetter, in_script: bool, *,
            late: bool = False) -> None:
        """Grow the winner's block around trigger line `n` and record the hit."""
        rule, fields, message = found[0]
        for other, _, _ in found[1:]:
            if len(self.res.losers) < _MAX_LOSERS:
                self.res.losers.append(Candidate(other.id, n, rule.id))
        prev = self.open_blocks.get(rule.id)
        if prev is not None and prev.first <= n <= prev.last:
            return
        # The winner decides what the failure is; the block is the widest any matching rule describes (a
        # generic rule such as disk-full knows nothing of the Maven block it sits in).
        first, last = extend_block(rule, get, n)
        for other, _, _ in found[1:]:
            a, b = extend_block(other, get, n)
            first, last = min(first, a), max(last, b)
        fields, message = block_fields(rule, get, n, first, last, fields, message)
        hit = Hit(rule=rule, line=n, first=first, last=last, fields=fields, message=message, late=late)
        self.res.hits.append(hit)
        self.open_blocks[rule.id] = hit
        if in_script:
            self.res.in_script.add(n)
        self.keep(first - _CONTEXT, last + _CONTEXT, get)

    def finish(self, rules: tuple[Rule, ...], window: Window) -> None:
        """Grow the latest hits each rule kept into blocks, then put all hits in line order."""
        if not self.late:
            return
        for item in self.late.unchecked():  # in line order: what the budget gives up is the oldest
            self._settle(item, rules, window)
        for item in self.late.latest():
            around = self.late.window_of(item)
            if around is None:  # the log changed under the scan: its lines are gone
                self.late.count(item.found[0][0].id)
                continue
            if item.found[0][0].category != "infrastructure":
                self.classes.check_apart(item.line, around)
            self.hit(item.line, _with_fields(item.found, around.get(item.line) or ""), around.get, item.in_script,
                     late=True)
        self.res.hits.sort(key=lambda h: h.line)
