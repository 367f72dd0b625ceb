"""A big log file scanned ahead by a helper process while this one works on the lines: the helper reads the file on
its own, cleans each piece, scans it with hyperscan and numbers the lines of its matches (in C, ci/native.py); it
puts each cleaned piece in memory shared with this process (a ring of a few MB) and sends its located matches
through a pipe, a few KB per 256 KB piece. This process takes each piece out of the ring (one copy, where reading
and cleaning it here took three passes over its bytes) and does the per-line Python work: the engine's scan and
the reading, most of a pass's per-byte work, run on the other core.

Why a process and not a thread: hyperscan's Python binding takes the interpreter lock for every match it reports
(half a million in a 500 MB Maven log), so a thread scanning while this one runs Python waits for the lock at every
match. Why a new interpreter and not a fork: a forked child shares this process's pages until either writes to
one, and this process's per-line work writes all over its heap, so the pair's memory grew with the time the scan
took (31 MB at 10 MB, 54 MB at 500 MB from a wheel). The helper is a small interpreter of its own (`python -S`,
hyperscan and two of RepoPilot's modules: about 10 MB whatever the log's size) that is ready after 30-40 ms. `diagnose`
starts it before the program loads (`prestart_helper`), and from a wheel gives it its task at once, so it scans from
the file's start while this process loads; otherwise this process reads and scans the first pieces itself until the
helper is ready, and hands it the rest at a piece's end. (Pieces handed over through the pipe instead of shared
memory cost more than reading them here: two more copies through the kernel, and the helper waiting on a full pipe.)
When the ring is full the helper goes on a few dozen pieces further rather than wait, and this process reads those
from the file (`_NOT_GIVEN`).

Results are the same as one pass (tests/ci/test_scan_ahead.py): the helper's pieces are the ones one pass reads (the
same file, read the same way from the same place), which this process checks on the helper's first piece against
its own next one; a helper whose first piece differs (the file changed, or the pieces were cut elsewhere), that
fails or stops answering is met by reading and scanning here from where its pieces stopped.
"""

from __future__ import annotations

import contextlib
import io
import mmap
import os
import select
import stat
import struct
import sys
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import IO, Any, BinaryIO, NamedTuple

from . import native
from .native import Found
from .pieces import CHUNK_SIZE, Origin, cleaned_again

__all__ = ["AHEAD_FROM", "Packed", "discard", "prestart_helper", "reopenable", "scanned_ahead"]

# A file below this is scanned in one pass: the helper's start-up is worth it only when it has a few MB to scan.
AHEAD_FROM = 4 * 1024 * 1024
# Seconds this process waits for the helper's next piece before going on without it (one that cannot answer).
_PATIENCE = 20.0
# Seconds a piece waits for the helper to be ready: none (it is scanned here meanwhile); tests wait for it.
_READY_WAIT = 0.0
# A piece's record from the helper: its cleaned size (-1: the helper's pieces ended), its packed matches' size, where
# its cleaned bytes are in the ring (`_FOLLOWS`, `_NOT_GIVEN`), where it lies in the file from where the helper
# began (-1: nowhere, a long line cut), its size there, and the bytes the helper read for it.
_RECORD = struct.Struct("<qqqqqq")
_FOLLOWS = -1  # the piece's bytes follow its record in the pipe (a piece bigger than half the ring)
# The ring was full: rather than wait for room, the helper went on to scan the next pieces, and this process reads
# this one from the file itself (reading and cleaning a piece costs a third of scanning it). A helper held to the
# ring's 32 pieces of lead fell behind where the log is slow to scan and fast to work through: this process waited
# 8 ms of 50 MB for it.
_NOT_GIVEN = -2
# The most pieces the helper is ahead by with some of them `_NOT_GIVEN`; past it, it waits for room in the ring. A
# piece read here costs this process about twice one taken from the ring: a helper ahead without bound, faster than
# this process, would hand over nearly every piece that way.
_LEAD = 48
_OFFSET = struct.Struct("<q")  # where the helper starts: bytes from where this process began reading
_ACK = struct.Struct("<qq")  # the ring's bytes this process has taken out, from the start, and the pieces taken
_READY = b"R"
# What the helper is given: the database's size, the pieces' size, the path's size, where to start reading (-1: it
# is told once it is ready, `_OFFSET`).
_TASK = struct.Struct("<qqqq")
# The memory the helper hands cleaned pieces over in, shared with it (a piece bigger than half of it comes through
# the pipe): room for about 30 pieces, so that neither process waits on the other's moments of slowness (with 8
# pieces each waited at almost every piece, 10 ms more at 50 MB).
_RING = 8 * 1024 * 1024
# The helper: its task (the file, the pieces' size, the databases as ci/confirm.py's payload, where to start) on
# stdin, records on stdout, the cleaned pieces in the ring (its descriptor 3). It may be started before its task is
# known, or given one to begin at once (`prestart_helper`). Only what it needs is imported (not `site`: the paths
# are given, RepoPilot's first), so it starts in a few tens of milliseconds and holds about 10 MB of its own.
_HELPER = """
import mmap, os, select, struct, sys, types
sys.path[:0] = sys.argv[3:]
for name in ("repopilot", "repopilot.ci"):  # the two modules it needs, without the packages' start-up (2 MB)
    package = sys.modules[name] = types.ModuleType(name)
    package.__path__ = [sys.argv[3] + "/" + name.replace(".", "/")]
import hyperscan
from repopilot.ci import _native
from repopilot.ci.confirm import load
from repopilot.ci.pieces import mapped_pieces
task, record, offset, ack = struct.Struct("<qqqq"), struct.Struct("<qqqqqq"), struct.Struct("<q"), struct.Struct("<qq")
out = sys.stdout.buffer
size = int(sys.argv[1])
ring = mmap.mmap(3, size)
def given(n):  # stdin is read unbuffered: select sees every ack not read yet
    got = os.read(0, n)
    if not got:  # this process is gone
        sys.exit(1)
    return got
def exactly(n):
    data = b""
    while len(data) < n:
        data += given(n - len(data))
    return data
pending = b""
def acked(taken, wait):  # the last ack sent (after one more, when `wait`)
    global pending
    while wait or select.select([0], [], [], 0)[0]:
        pending += given(4096)
        whole = len(pending) - len(pending) % ack.size
        if whole:
            taken, pending, wait = ack.unpack_from(pending, whole - ack.size), pending[whole:], False
    return taken
database, chunk, path, start = task.unpack(exactly(task.size))
path = os.fsdecode(exactly(path))
databases = load(exactly(database), hyperscan)
scratches = databases.scratches()
if start < 0:
    out.write(b"R"); out.flush()
    (start,) = offset.unpack(exactly(offset.size))
class Count: size = 0
count, read, written, (taken, consumed) = Count(), 0, 0, (0, 0)
lead = int(sys.argv[2])
with open(path, "rb") as fh:
    fh.seek(start)
    for k, (cleaned, origin) in enumerate(mapped_pieces(fh, chunk, count)):
        found = databases.scan(cleaned, scratches, _native)
        packed = _native.pack_located(cleaned, found)
        n, at = len(cleaned), -1
        if n <= size // 2:
            (taken, consumed), at = acked((taken, consumed), False), written % size
            skip = size - at if at + n > size else 0  # at the ring's end: the piece goes to its start
            if written + skip + n - taken > size and origin is not None and k - consumed < lead:
                at = -2  # no room: not waited for, read there
            else:
                written, at = written + skip, 0 if skip else at
                while written + n - taken > size:  # wait for room
                    taken, consumed = acked((taken, consumed), True)
                ring[at:at + n] = cleaned
                written += n
        where = (origin.offset, origin.size) if origin is not None else (-1, 0)
        out.write(record.pack(n, len(packed), at, *where, count.size - read) + (cleaned if at == -1 else b"") + packed)
        out.flush()
        read = count.size
        if k % 16 == 15:
            _native.trim()  # else the buffers' holes grew the helper by 8 MB at 500 MB
out.write(record.pack(-1, 0, 0, 0, 0, 0)); out.flush()
"""


class Packed(NamedTuple):
    """A piece's matches as the helper located them (`native.pack_located`)."""

    data: bytes


def _can_help() -> bool:
    """Whether a helper can be started and pays: it needs the C extension, an interpreter to start, pipes that can be
    waited on (POSIX), and a second CPU (on one, the two processes take turns: a tenth more CPU for nothing)."""
    return native.NATIVE is not None and bool(sys.executable) and os.name == "posix" and _cpus() > 1


def _cpus() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def reopenable(stream: BinaryIO) -> tuple[str, int] | None:
    """The path `stream`'s file can be opened again by and where reading begins in it, when a helper may scan it
    ahead: a regular file with at least `AHEAD_FROM` bytes from here, opened by a path that still names it, with the
    C extension, where pipes can be waited on (POSIX), on two CPUs or more; else None."""
    if not _can_help():
        return None
    name = getattr(stream, "name", None)
    try:
        if not isinstance(name, str) or not stream.seekable():
            return None
        here, there = os.fstat(stream.fileno()), os.stat(name)
        start = stream.tell()
    except (OSError, ValueError, AttributeError):
        return None
    if not stat.S_ISREG(here.st_mode) or not os.path.samestat(here, there) or here.st_size - start < AHEAD_FROM:
        return None
    return os.path.abspath(name), start


def scanned_ahead(pieces: Iterator[tuple[bytes, Origin | None]], where: tuple[str, int], chunk_size: int,
                  scan: Callable[[bytes], Found], database: bytes, counter: Any = None
                  ) -> Iterator[tuple[bytes, Origin | None, Found | Packed]]:
    """Each of `pieces` (this process's, read from the file at `where`; `counter.size` counts the bytes read, as
    `located_pieces` does) with its matches: found here by `scan` until the helper is ready, then the helper's
    pieces (its cleaned bytes and located matches); after a helper fails, this process's pieces again from where
    the helper's stopped."""
    helper = _Helper(where, chunk_size, database)
    try:
        it = iter(pieces)
        if helper.state != _Helper.SCANNING:  # (one started early with its task scans them all)
            for cleaned, origin in it:
                if helper.state == _Helper.STARTING and origin is not None and helper.ready():
                    helper.start_at(origin.offset + origin.size)  # the pieces after this one are the helper's
                yield cleaned, origin, scan(cleaned)
                if helper.state == _Helper.SCANNING:
                    break
            else:
                return
        given = yield from _from_helper(helper, it, scan, counter)
        if given is None:  # the helper's pieces went to the end
            return
        for _ in range(given):  # what the helper gave before it failed: read again here to go on from there
            if next(it, None) is None:
                break
        for cleaned, origin in it:
            yield cleaned, origin, scan(cleaned)
    finally:
        helper.stop()


def _from_helper(helper: _Helper, it: Iterator[tuple[bytes, Origin | None]], scan: Callable[[bytes], Found],
                 counter: Any) -> Generator[tuple[bytes, Origin | None, Found | Packed], None, int | None]:
    """The helper's pieces until they end (then None): the first must be this process's next one (else the file
    changed, or the helper's pieces are cut elsewhere: it is stopped and this one scanned here, then 0), which is
    used as read here. When the helper fails after that: the number of its pieces given since (read here again to
    go on, so their bytes are taken off `counter` here to be counted once)."""
    mine = next(it, None)
    if mine is None:
        return None
    got = helper.next()
    if not isinstance(got, _Piece) or len(got.cleaned) != len(mine[0]) or got.origin != mine[1]:
        helper.stop()
        yield mine[0], mine[1], scan(mine[0])
        return 0
    yield mine[0], mine[1], Packed(got.packed)
    given = counted = 0
    while isinstance(got := helper.next(), _Piece):
        if counter is not None:
            counter.size += got.read
            counted += got.read
        given += 1
        yield got.cleaned, got.origin, Packed(got.packed)
    if got == _END:
        return None
    helper.stop()
    if counter is not None:
        counter.size -= counted
    return given


class _Piece(NamedTuple):
    """A piece from the helper: its cleaned bytes, where it lies (from where this process began reading), its
    packed located matches, and the bytes the helper read for it."""

    cleaned: bytes
    origin: Origin | None
    packed: bytes
    read: int


_END = "end"  # the helper's pieces ended (its last record)


def _ring() -> tuple[int, mmap.mmap] | None:
    """Memory to share with the helper (its descriptor and this process's map of it), or None when there is none."""
    try:
        if hasattr(os, "memfd_create"):
            fd = os.memfd_create("repopilot-scan-ahead")
        else:  # pragma: no cover - not Linux: a temporary file's pages, unlinked at once
            import tempfile

            with tempfile.TemporaryFile() as spool:
                fd = os.dup(spool.fileno())
        if fd == 3:  # the number the helper gets it as: a dup2 onto itself would leave it closing at exec
            fd, was = os.dup(fd), fd
            os.close(was)
        try:
            os.ftruncate(fd, _RING)
            return fd, mmap.mmap(fd, _RING)
        except BaseException:
            os.close(fd)
            raise
    except (OSError, ValueError):
        return None


class _Task(NamedTuple):
    """What a helper started early was given: the file (as it was then), to read from its start in pieces of
    `chunk_size`, and the databases to scan them with."""

    file: os.stat_result
    chunk_size: int
    database: bytes

    def fits(self, where: tuple[str, int], chunk_size: int, database: bytes) -> bool:
        """Whether its pieces are the ones a scan of `where` in pieces of `chunk_size` with `database` reads: the
        same file, unchanged since (its first piece is checked too, `_from_helper`), from its start."""
        try:
            now = os.stat(where[0])
        except OSError:
            return False
        return (where[1] == 0 and chunk_size == self.chunk_size and database == self.database
                and os.path.samestat(now, self.file) and now.st_size == self.file.st_size
                and now.st_mtime_ns == self.file.st_mtime_ns)


class _Early(NamedTuple):
    """A helper started before it was needed (`prestart_helper`), with its ring and, when it was given one at once,
    its task (None: a scan gives it)."""

    proc: _Child
    ring: mmap.mmap
    task: _Task | None


_EARLY: list[_Early] = []


def prestart_helper(paths: list[str], chunk_size: int = CHUNK_SIZE) -> bool:
    """Start a helper now when one of `paths` names a regular file big enough to be scanned ahead, for its scan to
    come: the helper's start-up (an interpreter, hyperscan's module: 20-30 ms) then overlaps this process's own
    instead of the first pieces' scan. Where the wheel carries the bundled catalog's databases, the helper is given
    them and the file at once, and scans it from its start in pieces of `chunk_size` while this process loads; the
    scan takes its pieces if those are its own databases, pieces and file (`_Task.fits`), else it starts another.
    Called by a command before it loads (app/early.py); a scan that does not need the helper ends it (`discard`).
    Whether one was started."""
    if _EARLY or not _can_help():
        return False
    for path in paths:
        try:
            found = os.stat(path)
        except (OSError, ValueError):
            continue
        if stat.S_ISREG(found.st_mode) and found.st_size >= AHEAD_FROM:
            started = _start()
            if started is not None:
                _EARLY.append(_Early(*started, _given_early(started[0], os.path.abspath(path), found, chunk_size)))
            return started is not None
    return False


def _given_early(proc: _Child, path: str, found: os.stat_result, chunk_size: int) -> _Task | None:
    """The task a helper started early is given at once (to scan `path` from its start with the databases the wheel
    carries for the bundled catalog), or None: no such databases (an editable install), or no helper to take it."""
    from .cache import bundled_scan_database  # read while the helper's interpreter starts

    database = bundled_scan_database()
    if database is None:
        return None
    encoded = os.fsencode(path)
    try:
        proc.stdin.write(_TASK.pack(len(database), chunk_size, len(encoded), 0) + encoded + database)
    except OSError:
        return None
    return _Task(found, chunk_size, database)


def discard() -> None:
    """End a helper started early that no scan took."""
    while _EARLY:
        early = _EARLY.pop()
        _end(early.proc, early.ring)


def _start() -> tuple[_Child, mmap.mmap] | None:
    """The helper process, with its ring (None when there is no memory to share)."""
    ring = _ring()
    if ring is None:
        return None
    fd, shared = ring
    paths = [str(Path(__file__).resolve().parents[2]), *_module_dirs("hyperscan")]
    try:
        proc = _Child([sys.executable, "-S", "-c", _HELPER, str(_RING), str(_LEAD), *paths], fd)
    except OSError:
        shared.close()
        return None
    finally:
        os.close(fd)  # the helper has its own
    for pipe in (proc.stdin.fileno(), proc.stdout.fileno()):
        with contextlib.suppress(ImportError, AttributeError, OSError):  # Linux: room for the database and for a
            import fcntl  # few hundred pieces' records, not 64 KB: neither side waits on the other

            fcntl.fcntl(pipe, fcntl.F_SETPIPE_SZ, 1 << 20)
    return proc, shared


def _end(proc: _Child, ring: mmap.mmap) -> None:
    with contextlib.suppress(OSError):
        proc.kill()  # one still scanning a piece nobody will read, or waiting on a full pipe
    for pipe in (proc.stdin, proc.stdout):
        with contextlib.suppress(OSError):
            pipe.close()
    proc.wait()
    with contextlib.suppress(BufferError):
        ring.close()


class _Helper:
    """The helper process, its pipes and the ring it hands pieces over in."""

    STARTING, SCANNING, STOPPED = "starting", "scanning", "stopped"

    def __init__(self, where: tuple[str, int], chunk_size: int, database: bytes) -> None:
        self._path, self._base = where
        self._file: int | None = None  # the file, opened here when a piece is to be read here (`_NOT_GIVEN`)
        self._start = 0  # where the helper's pieces begin, from where this process began reading
        self._taken = 0  # the ring's bytes taken out, as the helper counts them
        self._pieces = 0  # the helper's pieces taken
        self._buf = bytearray()
        self._proc: _Child | None = None
        self.state = self.STOPPED
        started = _EARLY.pop() if _EARLY else None
        if started is not None and started.task is not None:
            if started.task.fits(where, chunk_size, database):
                self._take_over(started.proc, started.ring)
                self.state = self.SCANNING  # from the file's start, where this process begins
                return
            _end(started.proc, started.ring)  # it scans another file, in other pieces or with other databases
            started = None
        proc_ring = (started.proc, started.ring) if started is not None else _start()
        if proc_ring is None:
            return
        self._take_over(*proc_ring)
        self.state = self.STARTING
        encoded = os.fsencode(self._path)
        try:  # the pipe takes it while the helper starts (it reads it first)
            self._in.write(_TASK.pack(len(database), chunk_size, len(encoded), -1) + encoded + database)
        except OSError:
            self.stop()

    def _take_over(self, proc: _Child, ring: mmap.mmap) -> None:
        self._proc, self._map = proc, ring
        self._in: IO[bytes] = proc.stdin
        self._out = proc.stdout.fileno()

    def ready(self) -> bool:
        """Whether the helper has loaded the database (waiting `_READY_WAIT` seconds at most)."""
        if self.state != self.STARTING or not select.select([self._out], [], [], _READY_WAIT)[0]:
            return False
        if self._read(len(_READY), 0) != _READY:
            self.stop()
            return False
        return True

    def start_at(self, offset: int) -> None:
        """The helper scans from `offset` bytes after where this process began reading."""
        try:
            self._in.write(_OFFSET.pack(self._base + offset))
        except OSError:
            self.stop()
            return
        self._start = offset
        self.state = self.SCANNING

    def next(self) -> _Piece | str | None:
        """The helper's next piece, `_END` after its last, None when it failed or stopped answering."""
        head = self._read(_RECORD.size, _PATIENCE)
        if head is None:
            return None
        size, packed_size, at, offset, raw, read = _RECORD.unpack(head)
        if size < 0:
            return _END
        origin = Origin(self._start + offset, raw, size) if offset >= 0 else None
        if at == _FOLLOWS:
            cleaned = self._read(size, _PATIENCE)
        elif at == _NOT_GIVEN:
            cleaned = self._read_here(origin) if origin is not None else None
        else:
            cleaned = self._take(at, size)
        packed = self._read(packed_size, _PATIENCE) if cleaned is not None else None
        if cleaned is None or packed is None:
            return None
        self._pieces += 1
        with contextlib.suppress(OSError):  # a helper that is done no longer reads them (its records still count)
            self._in.write(_ACK.pack(self._taken, self._pieces))
        return _Piece(cleaned, origin, packed, read)

    def _read_here(self, origin: Origin) -> bytes | None:
        """A piece the helper scanned but did not put in the ring, read and cleaned here from the file it reads (None
        when the file no longer holds it)."""
        try:
            if self._file is None:
                self._file = os.open(self._path, os.O_RDONLY)
            raw = os.pread(self._file, origin.size, self._base + origin.offset)
        except OSError:
            return None
        return cleaned_again(raw, origin)

    def _take(self, at: int, size: int) -> bytes | None:
        """A piece's bytes out of the ring, where the helper says it put them (it counts them the same way)."""
        pos = self._taken % _RING
        if pos + size > _RING:
            self._taken += _RING - pos
            pos = 0
        if at != pos:
            return None
        data = self._map[at:at + size]
        self._taken += size
        return data

    def _read(self, n: int, patience: float) -> bytes | None:
        buf = self._buf
        while len(buf) < n:
            if not select.select([self._out], [], [], patience)[0]:
                return None
            block = os.read(self._out, max(n - len(buf), 1 << 16))
            if not block:
                return None
            buf += block
        data = bytes(buf[:n])
        del buf[:n]
        return data

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        self.state = self.STOPPED
        if self._file is not None:
            os.close(self._file)
            self._file = None
        if proc is not None:
            _end(proc, self._map)


class _Child:
    """The helper process with its standard input and output as pipes (its errors go nowhere): what
    `subprocess.Popen` gives, by `os.posix_spawn`, since importing `subprocess` (with `signal` and `selectors`)
    took 3 ms of every scan ahead before its first piece. Only on POSIX, as scanning ahead (`reopenable`)."""

    def __init__(self, argv: list[str], shared: int) -> None:
        # Python makes its descriptors not inheritable, so the child gets only its pipe ends, as 0 and 1 (dup2 clears
        # the flag), and what this process was given inheritable (which `Popen` would close: the helper lives only
        # as long as the scan). A process started with its standard streams closed may get a pipe end numbered 0 or
        # 1, which a dup2 onto itself may leave closing at exec: that helper fails, and is met by scanning here.
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        try:
            self.pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[
                (os.POSIX_SPAWN_DUP2, in_r, 0), (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, shared, 3),
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
        except BaseException:
            for fd in (in_r, in_w, out_r, out_w):
                os.close(fd)
            raise
        os.close(in_r)
        os.close(out_w)
        self.stdin: IO[bytes] = io.FileIO(in_w, "wb")  # unbuffered, as `Popen(bufsize=0)` gives
        self.stdout: IO[bytes] = io.FileIO(out_r, "rb")
        self.returncode: int | None = None

    def kill(self) -> None:
        if self.returncode is None:
            os.kill(self.pid, 9)  # SIGKILL (its number on every POSIX system; `signal` is not imported for it)

    def wait(self) -> int:
        if self.returncode is None:
            self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        return self.returncode


def _module_dirs(name: str) -> list[str]:
    """The directory `name` is imported from (the helper runs without `site`), if it is importable here."""
    module: Any = sys.modules.get(name)
    if module is None:
        import importlib.util

        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
    else:
        origin = getattr(module, "__file__", None)
    return [str(Path(origin).resolve().parents[1])] if origin else []
