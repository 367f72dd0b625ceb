"""The log as the scanner reads it: pieces of whole lines with ANSI codes removed.

Removing escape sequences is the one step of a scan that Python cannot make cheaper (one `re` substitution per
piece, about as long as the engine's scan of it), so on a big log file on Linux with a second CPU it runs in a
forked process that reads the file by its own handle and streams the cleaned pieces through a pipe, while this
process scans and reads the flagged lines. Everything else (other platforms, streams that are not regular
files, small logs, a process with threads) cleans in line. Should the cleaning process fail, the rest of the
file is read here, from where it stopped.
"""

from __future__ import annotations

import contextlib
import os
import stat
import struct
import sys
import threading
from collections.abc import Generator, Iterator
from typing import BinaryIO, Protocol

from .lines import strip_ansi_bytes

__all__ = ["MAX_LINE_BYTES", "PARALLEL_FROM", "cleaned_pieces", "whole_lines"]

MAX_LINE_BYTES = 256 * 1024
PARALLEL_FROM = 48 * 1024 * 1024  # below this, a second process costs more than it saves
_HEADER = struct.Struct("<qq")  # raw bytes read, cleaned bytes that follow (-1: the end)
_F_SETPIPE_SZ = 1031  # Linux: a pipe that holds a whole piece


class Counter(Protocol):
    size: int


class _Read:
    size = 0


def whole_lines(stream: BinaryIO, size: int, res: Counter) -> Iterator[bytes]:
    """The stream in pieces of about `size` bytes that end at a line end (the last may not); `res.size` counts
    what was read. A line longer than a piece is kept only in part: memory stays bounded."""
    leftover = b""
    while True:
        block = stream.read(size)
        if not block:
            if leftover:
                yield leftover
            return
        res.size += len(block)
        if not block.endswith(b"\n"):
            # Complete the last line from the stream rather than carrying a partial line over.
            rest = stream.readline(size)
            res.size += len(rest)
            block += rest
        if leftover:
            block, leftover = leftover + block, b""
        if not block.endswith(b"\n"):
            cut = block.rfind(b"\n")
            if cut == -1:
                leftover = block[:MAX_LINE_BYTES]
                continue
            block, leftover = block[: cut + 1], block[cut + 1:]
        yield block


def _forkable(stream: BinaryIO, expected: int | None) -> int | None:
    """The file descriptor to clean from in another process, or None to clean here."""
    if expected is None or expected < PARALLEL_FROM or sys.platform != "linux" or not hasattr(os, "fork"):
        return None
    if threading.active_count() > 1 or len(os.sched_getaffinity(0)) < 2:
        return None
    try:
        fd = stream.fileno()
        return fd if stat.S_ISREG(os.fstat(fd).st_mode) else None
    except (AttributeError, OSError, ValueError):
        return None


def cleaned_pieces(stream: BinaryIO, size: int, res: Counter, expected: int | None = None) -> Iterator[bytes]:
    """`whole_lines` with ANSI codes removed; `expected`: the log's size when known (big ones are cleaned in
    another process, see the module's note)."""
    fd = _forkable(stream, expected)
    if fd is None:
        for block in whole_lines(stream, size, res):
            yield strip_ansi_bytes(block)
        return
    start = stream.tell()
    done = yield from _from_child(fd, start, size, res)
    if not done:
        stream.seek(start + res.size)
        for block in whole_lines(stream, size, res):
            yield strip_ansi_bytes(block)


def _from_child(fd: int, start: int, size: int, res: Counter) -> Generator[bytes, None, bool]:
    """The cleaned pieces a forked process sends; returns whether it sent them all (if not, `res.size` says
    where to go on from: only pieces received are counted, so going on repeats nothing)."""
    r, w = os.pipe()
    with contextlib.suppress(OSError):
        import fcntl

        fcntl.fcntl(w, _F_SETPIPE_SZ, 1 << 20)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; coverage does not follow it
        os.close(r)
        _clean_in_child(fd, start, size, w)
    os.close(w)
    done = False
    try:
        with os.fdopen(r, "rb", buffering=1 << 20) as pipe:
            while True:
                head = pipe.read(_HEADER.size)
                if len(head) < _HEADER.size:
                    break
                raw, n = _HEADER.unpack(head)
                if n < 0:
                    res.size += raw
                    done = True
                    break
                data = pipe.read(n)
                if len(data) < n:
                    break
                res.size += raw
                yield data
    finally:
        if not done:
            with contextlib.suppress(OSError):
                os.kill(pid, 9)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
    return done


def _clean_in_child(fd: int, start: int, size: int, w: int) -> None:  # pragma: no cover - runs in the child
    status = 1
    try:
        # A handle of its own (its own offset): the parent's file position never moves.
        with open(f"/proc/self/fd/{fd}", "rb") as fh, os.fdopen(w, "wb", buffering=0) as out:
            fh.seek(start)
            read = _Read()
            before = 0
            for block in whole_lines(fh, size, read):
                cleaned = strip_ansi_bytes(block)
                out.write(_HEADER.pack(read.size - before, len(cleaned)))
                out.write(cleaned)
                before = read.size
            out.write(_HEADER.pack(read.size - before, -1))
        status = 0
    except BaseException:  # noqa: S110 - the parent reads the rest itself
        pass
    finally:
        os._exit(status)
