"""A big log file scanned ahead by a helper process while this one works on the lines: the helper reads the file on
its own, cleans each piece, scans it with hyperscan and numbers the lines of its matches (in C, ci/native.py); this
process reads and cleans the same pieces (it needs their bytes) and gets each piece's located matches through a
pipe, a few KB per 256 KB piece. The engine's scan, most of a pass's per-byte work, then runs on the other core
while this one does the per-line Python work.

Why a process and not a thread: hyperscan's Python binding takes the interpreter lock for every match it reports
(half a million in a 500 MB Maven log), so a thread scanning while this one runs Python waits for the lock at every
match. Why a new interpreter and not a fork: a forked child shares this process's pages until either writes to
one, and this process's per-line work writes all over its heap, so the pair's memory grew with the time the scan
took (31 MB at 10 MB, 54 MB at 500 MB from a wheel). The helper is a small interpreter of its own (`python -S`,
hyperscan and two of RepoPilot's modules: about 10 MB whatever the log's size) that is ready after 30-40 ms; until
then this process scans the first pieces itself, and hands the helper the rest at a piece's end.

Results are the same as one pass (tests/ci/test_scan_ahead.py): the helper's pieces are the ones this process
reads (the same file, read the same way from the same place), and a piece whose size differs from this process's
(the file changed under the scan), or a helper that fails or stops answering, is met by scanning here from that
piece on.
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import stat
import struct
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, BinaryIO, NamedTuple

from . import native
from .native import Found
from .pieces import Origin

__all__ = ["AHEAD_FROM", "Packed", "reopenable", "scanned_ahead"]

# A file below this is scanned in one pass: the helper's start-up is worth it only when it has a few MB to scan.
AHEAD_FROM = 4 * 1024 * 1024
# Seconds this process waits for the helper's next piece before going on without it (one that cannot answer).
_PATIENCE = 20.0
# Seconds a piece waits for the helper to be ready: none (it is scanned here meanwhile); tests wait for it.
_READY_WAIT = 0.0
_HEADER = struct.Struct("<qq")  # a piece's cleaned size, its packed matches' size
_OFFSET = struct.Struct("<q")  # where the helper starts: bytes from where this process began reading
_READY = b"R"
# The helper: the databases (ci/confirm.py's payload) and where to start on stdin, records on stdout. Only what it
# needs is imported (not `site`: the paths are given, RepoPilot's first), so it starts in a few tens of milliseconds
# and holds about 10 MB of its own.
_HELPER = """
import struct, sys, types
sys.path[:0] = sys.argv[4:]
for name in ("repopilot", "repopilot.ci"):  # the two modules it needs, without the packages' start-up (2 MB)
    package = sys.modules[name] = types.ModuleType(name)
    package.__path__ = [sys.argv[4] + "/" + name.replace(".", "/")]
import hyperscan
from repopilot.ci import _native
from repopilot.ci.confirm import load
from repopilot.ci.pieces import located_pieces
header, offset = struct.Struct("<qq"), struct.Struct("<q")
fin, out = sys.stdin.buffer, sys.stdout.buffer
databases = load(fin.read(int(sys.argv[3])), hyperscan)
scratches = databases.scratches()
out.write(b"R"); out.flush()
(start,) = offset.unpack(fin.read(offset.size))
class Count: size = 0
with open(sys.argv[1], "rb") as fh:
    fh.seek(start)
    for k, (cleaned, _) in enumerate(located_pieces(fh, int(sys.argv[2]), Count())):
        found = databases.scan(cleaned, scratches, _native)
        packed = _native.pack_located(cleaned, found)
        out.write(header.pack(len(cleaned), len(packed)) + packed); out.flush()
        if k % 16 == 15:
            _native.trim()  # else the buffers' holes grew the helper by 8 MB at 500 MB
"""


class Packed(NamedTuple):
    """A piece's matches as the helper located them (`native.pack_located`)."""

    data: bytes


def reopenable(stream: BinaryIO) -> tuple[str, int] | None:
    """The path `stream`'s file can be opened again by and where reading begins in it, when a helper may scan it
    ahead: a regular file with at least `AHEAD_FROM` bytes from here, opened by a path that still names it, with the
    C extension, where pipes can be waited on (POSIX); else None."""
    if native.NATIVE is None or not sys.executable or os.name != "posix":
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
                  scan: Callable[[bytes], Found], database: bytes) -> Iterator[tuple[bytes, Origin | None,
                                                                                     Found | Packed]]:
    """Each of `pieces` (this process's, read from the file at `where`) with its matches: found here by `scan`
    until the helper is ready and after it fails, located by the helper (which loads `database`) in between."""
    helper = _Helper(where, chunk_size, database)
    try:
        for cleaned, origin in pieces:
            packed = helper.next(len(cleaned)) if helper.state == _Helper.SCANNING else None
            if packed is None and helper.state == _Helper.SCANNING:
                helper.stop()  # it failed, stopped answering or read other bytes: the rest is scanned here
            if packed is not None:
                yield cleaned, origin, Packed(packed)
                continue
            if helper.state == _Helper.STARTING and origin is not None and helper.ready():
                helper.start_at(origin.offset + origin.size)  # the next piece is the helper's
            yield cleaned, origin, scan(cleaned)
    finally:
        helper.stop()


class _Helper:
    """The helper process and its pipes."""

    STARTING, SCANNING, STOPPED = "starting", "scanning", "stopped"

    def __init__(self, where: tuple[str, int], chunk_size: int, database: bytes) -> None:
        path, self._base = where
        paths = [str(Path(__file__).resolve().parents[2]), *_module_dirs("hyperscan")]
        self._proc: _Child | None = _Child(
            [sys.executable, "-S", "-c", _HELPER, path, str(chunk_size), str(len(database)), *paths])
        self.state = self.STARTING
        self._buf = bytearray()
        self._in: IO[bytes] = self._proc.stdin
        self._out = self._proc.stdout.fileno()
        for fd in (self._in.fileno(), self._out):
            with contextlib.suppress(ImportError, AttributeError, OSError):  # Linux: room for the database and
                import fcntl  # for a few hundred pieces' records, not 64 KB: neither side waits on the other

                fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, 1 << 20)
        try:
            self._in.write(database)  # the pipe takes it while the helper starts (it reads it first)
        except OSError:
            self.stop()

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
            self._in.close()
        except OSError:
            self.stop()
            return
        self.state = self.SCANNING

    def next(self, size: int) -> bytes | None:
        """The next piece's packed matches when the helper located a piece of `size` cleaned bytes; else None."""
        head = self._read(_HEADER.size, _PATIENCE)
        if head is None:
            return None
        got, length = _HEADER.unpack(head)
        return self._read(length, _PATIENCE) if got == size else None

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
        if proc is None:
            return
        with contextlib.suppress(OSError):
            proc.kill()  # one still scanning a piece nobody will read, or waiting on a full pipe
        for pipe in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                pipe.close()
        proc.wait()


class _Child:
    """The helper process with its standard input and output as pipes (its errors go nowhere): what
    `subprocess.Popen` gives, by `os.posix_spawn`, since importing `subprocess` (with `signal` and `selectors`)
    took 3 ms of every scan ahead before its first piece. Only on POSIX, as scanning ahead (`reopenable`)."""

    def __init__(self, argv: list[str]) -> None:
        # Python makes its descriptors not inheritable, so the child gets only its pipe ends, as 0 and 1 (dup2 clears
        # the flag), and what this process was given inheritable (which `Popen` would close: the helper lives only
        # as long as the scan). A process started with its standard streams closed may get a pipe end numbered 0 or
        # 1, which a dup2 onto itself may leave closing at exec: that helper fails, and is met by scanning here.
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        try:
            self.pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[
                (os.POSIX_SPAWN_DUP2, in_r, 0), (os.POSIX_SPAWN_DUP2, out_w, 1),
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
