"""A big log file scanned ahead by a forked child while this process works on the lines: the child reads the file
on its own, cleans each piece, scans it with hyperscan and numbers the lines of its matches (all in C, ci/native.py);
this process reads and cleans the same pieces (it needs their bytes) and gets each piece's located matches from the
child through a pipe, a few KB per 256 KB piece. The engine's scan, most of a pass's per-byte work, then runs on the
other core while this one does the per-line Python work.

Why a process and not a thread: hyperscan's Python binding takes the interpreter lock for every match it reports
(half a million in a 500 MB Maven log), so a thread scanning while this one runs Python waits for the lock at every
match; a thread that read and cleaned ahead, scanning here, lost to one pass on a quiet machine (bench/speed.py).

Results are the same as one pass (tests/ci/test_scan_ahead.py): the child's pieces are the ones this process reads
(the same file, read the same way), and a piece whose size differs from this process's (the file changed under the
scan), a child that fails or stops answering, are met by scanning here from that piece on. The child is forked with
the compiled database in memory, does not collect garbage (a collection writes to every object it visits, copying
the pages it shares with the parent) and holds one piece at a time: about 5 MB more for the process tree whatever
the log's size (README, "Scanning a big log").
"""

from __future__ import annotations

import contextlib
import os
import select
import struct
import threading
from collections.abc import Callable, Iterator
from typing import BinaryIO, NamedTuple

from . import native
from .native import Found
from .pieces import Origin, located_pieces

__all__ = ["AHEAD_FROM", "Packed", "reopenable", "scanned_ahead", "scanning"]

# A file below this is scanned in one pass: forking and the child's first piece cost a few milliseconds.
AHEAD_FROM = 4 * 1024 * 1024
# Seconds this process waits for the child's next piece before going on without it (a child that cannot answer:
# forked while another thread held hyperscan's lock; never seen, but a scan must not hang on it).
_PATIENCE = 20.0
_HEADER = struct.Struct("<qq")  # a piece's cleaned size (-1: the child failed), its packed matches' size
_FAILED = -1


class Packed(NamedTuple):
    """A piece's matches as the child located them (`native.pack_located`)."""

    data: bytes


class _Counter:
    size = 0


# Scans running in this process now, any thread: a child is forked only by the one scan running, so that no other
# thread is inside hyperscan (which keeps a global lock the child would wait on forever).
_running = 0
_running_lock = threading.Lock()


@contextlib.contextmanager
def scanning() -> Iterator[bool]:
    """Around a scan: yields whether it is the only one running in this process."""
    global _running  # noqa: PLW0603 - one count per process
    with _running_lock:
        _running += 1
        alone = _running == 1
    try:
        yield alone
    finally:
        with _running_lock:
            _running -= 1


def reopenable(stream: BinaryIO) -> tuple[str, int] | None:
    """The path `stream`'s file can be opened again by and where reading begins in it, when a child may scan it
    ahead: a regular file of at least `AHEAD_FROM` bytes from here, opened by a path that still names it, on a
    system with fork and the C extension; else None."""
    if not hasattr(os, "fork") or native.NATIVE is None:
        return None
    name = getattr(stream, "name", None)
    try:
        if not isinstance(name, str) or stream.seekable() is False:
            return None
        here, there = os.fstat(stream.fileno()), os.stat(name)
        start = stream.tell()
    except (OSError, ValueError, AttributeError):
        return None
    import stat

    if not stat.S_ISREG(here.st_mode) or not os.path.samestat(here, there) or here.st_size - start < AHEAD_FROM:
        return None
    return name, start


def scanned_ahead(pieces: Iterator[tuple[bytes, Origin | None]], where: tuple[str, int], chunk_size: int,
                  scan: Callable[[bytes], Found]) -> Iterator[tuple[bytes, Origin | None, Found | Packed]]:
    """Each of `pieces` (this process's, read from the file at `where`) with its matches: located by a child that
    reads the file on its own, or found here by `scan` once the child cannot give them."""
    r, w = os.pipe()
    with contextlib.suppress(AttributeError, OSError):  # Linux: room for a few MB of records, not 64 KB
        import fcntl

        fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 1 << 20)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child (coverage does not follow forks)
        _child(r, w, where, chunk_size, scan)
    os.close(w)
    child: _Pipe | None = _Pipe(r)
    try:
        for cleaned, origin in pieces:
            packed = child.next(len(cleaned)) if child is not None else None
            if packed is None and child is not None:
                child.close(pid)
                child = None
            yield cleaned, origin, Packed(packed) if packed is not None else scan(cleaned)
    finally:
        if child is not None:
            child.close(pid)


def _child(r: int, w: int, where: tuple[str, int], chunk_size: int,
           scan: Callable[[bytes], Found]) -> None:  # pragma: no cover - runs in the forked child
    import gc
    import signal

    code = 1
    try:
        os.close(r)
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C reaches the group: stop, say nothing
        gc.disable()
        c = native.NATIVE
        assert c is not None
        path, start = where
        with open(path, "rb") as fh, os.fdopen(w, "wb", buffering=0) as out:
            fh.seek(start)
            try:
                for cleaned, _ in located_pieces(fh, chunk_size, _Counter()):
                    packed = c.pack_located(cleaned, scan(cleaned))
                    _write(out, _HEADER.pack(len(cleaned), len(packed)) + packed)
                code = 0
            except BrokenPipeError:
                code = 0  # the scan stopped: nobody reads any more
            except BaseException:
                _write(out, _HEADER.pack(_FAILED, 0))
                raise
    finally:
        os._exit(code)


def _write(out: BinaryIO, data: bytes) -> None:  # pragma: no cover - runs in the forked child
    view = memoryview(data)
    while view:
        view = view[out.write(view) or 0:]


class _Pipe:
    """The reading end: each piece's record, waited for at most `_PATIENCE` seconds."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buf = bytearray()

    def next(self, size: int) -> bytes | None:
        """The next piece's packed matches when the child located a piece of `size` cleaned bytes; else None."""
        head = self._read(_HEADER.size)
        if head is None:
            return None
        got, length = _HEADER.unpack(head)
        if got != size:
            return None
        return self._read(length)

    def _read(self, n: int) -> bytes | None:
        buf = self._buf
        while len(buf) < n:
            ready, _, _ = select.select([self.fd], [], [], _PATIENCE)
            if not ready:
                return None
            block = os.read(self.fd, max(n - len(buf), 1 << 16))
            if not block:
                return None
            buf += block
        data = bytes(buf[:n])
        del buf[:n]
        return data

    def close(self, pid: int) -> None:
        os.close(self.fd)  # a child still writing gets a broken pipe
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)  # one waiting for a lock, or still scanning a piece nobody will read
        os.waitpid(pid, 0)
