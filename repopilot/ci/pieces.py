"""The log as the scanner reads it: pieces of whole lines with ANSI codes removed.

Removing escape sequences costs about as much as the engine's scan of a piece (one `re` substitution in C per
piece; real Maven logs carry colour codes on most lines), and nothing else of a scan reads every byte twice.
A big file is read and cleaned by the helper that scans it ahead (ci/ahead.py), which hands the pieces over in
shared memory (through a pipe, on a loaded machine, the hand-over cost more than it saved).

A piece read from a file (or the stdin spool, or bytes in memory) can be read again from where it lies: the scanner
keeps where the lines around its latest hits are instead of the bytes (ci/late.py), so what it holds does not
grow with the log.
"""

from __future__ import annotations

import io
import mmap
import os
import stat
from collections.abc import Generator, Iterator
from typing import BinaryIO, NamedTuple, Protocol

from . import native
from .lines import strip_ansi_bytes

__all__ = ["CHUNK_SIZE", "MAX_LINE_BYTES", "Origin", "Reread", "cleaned_again", "cleaned_pieces", "located_pieces",
           "mapped_pieces", "rereader", "whole_lines"]

# Small chunks stay in the CPU cache between the passes over them (cleaning, scan, line counting) and keep the
# buffers a pass holds small: 256 KB took a tenth less CPU and 10 MB less peak memory than 1 MB at 500 MB.
# Here, for a helper started before the scanner exists (ci/ahead.py), which cuts its pieces so.
CHUNK_SIZE = 256 * 1024
MAX_LINE_BYTES = 256 * 1024
# How much of a file `mapped_pieces` maps at once: what the process holds of it stays this small.
_MAP_WINDOW = 1024 * 1024


class Counter(Protocol):
    size: int


class Origin(NamedTuple):
    """Where a piece's raw bytes lie in its stream (from where reading began), and its size once cleaned."""

    offset: int
    size: int
    cleaned: int


def located_lines(stream: BinaryIO, size: int, res: Counter) -> Iterator[tuple[bytes, int | None]]:
    """`whole_lines`, each piece with the offset of its first byte from where reading began (None when the piece is
    not one run of the stream: a line longer than `MAX_LINE_BYTES`, cut)."""
    leftover = b""
    start: int | None = 0  # where the piece being gathered begins
    read = 0
    while True:
        block = stream.read(size)
        if not block:
            if leftover:
                yield leftover, start
            return
        read += len(block)
        res.size += len(block)
        if not block.endswith(b"\n"):
            # Complete the last line from the stream rather than carrying a partial line over.
            rest = stream.readline(size)
            read += len(rest)
            res.size += len(rest)
            block += rest
        if leftover:
            block, leftover = leftover + block, b""
        if not block.endswith(b"\n"):
            cut = block.rfind(b"\n")
            if cut == -1:
                if len(block) > MAX_LINE_BYTES:
                    start = None
                leftover = block[:MAX_LINE_BYTES]
                continue
            block, leftover = block[: cut + 1], block[cut + 1:]
        yield block, start
        start = read - len(leftover)


def whole_lines(stream: BinaryIO, size: int, res: Counter) -> Iterator[bytes]:
    """The stream in pieces of about `size` bytes that end at a line end (the last may not); `res.size` counts
    what was read. A line longer than a piece is kept only in part: memory stays bounded."""
    for block, _ in located_lines(stream, size, res):
        yield block


def cleaned_pieces(stream: BinaryIO, size: int, res: Counter) -> Iterator[bytes]:
    """`whole_lines` with ANSI codes removed."""
    for block in whole_lines(stream, size, res):
        yield strip_ansi_bytes(block)


def located_pieces(stream: BinaryIO, size: int, res: Counter) -> Iterator[tuple[bytes, Origin | None]]:
    """`cleaned_pieces`, each with where it lies in the stream (None: it cannot be read again)."""
    for block, start in located_lines(stream, size, res):
        cleaned = strip_ansi_bytes(block)
        yield cleaned, None if start is None else Origin(start, len(block), len(cleaned))


def mapped_pieces(stream: BinaryIO, size: int, res: Counter) -> Iterator[tuple[bytes, Origin | None]]:
    """`located_pieces` of a regular file, read through a mapping of a few MB at a time: ANSI codes are removed
    straight from the page cache, where reading copied every byte into a new buffer first (and a piece's last line
    once more), a tenth of the scan-ahead helper's work (ci/ahead.py). Only the helper reads this way: a file cut
    short under a mapping ends the process that reads it (SIGBUS), and a helper that ends is met by reading in the
    main process. The pieces are the ones `located_lines` cuts (a read of `size` bytes completed to the next line
    end by a `readline` of at most `size`); where that needs its carried-over part (a line longer than `size`, a
    last line without a newline), or the file grew, reading goes on the usual way from that piece."""
    try:
        start, end = stream.tell(), os.fstat(stream.fileno()).st_size
        regular = stat.S_ISREG(os.fstat(stream.fileno()).st_mode) and native.NATIVE is not None
    except (OSError, ValueError, AttributeError):
        regular = False
    if not regular:
        yield from located_pieces(stream, size, res)
        return
    pos = yield from _mapped(stream, start, end, size, res)
    stream.seek(pos)
    for cleaned, origin in located_pieces(stream, size, res):
        yield cleaned, None if origin is None else origin._replace(offset=origin.offset + pos - start)


def _mapped(stream: BinaryIO, base: int, end: int, size: int, res: Counter
            ) -> Generator[tuple[bytes, Origin | None], None, int]:
    """The pieces `mapped_pieces` reads through the mapping; where they stop."""
    strip = native.NATIVE.strip_ansi  # type: ignore[union-attr]
    pos, lo, hi = base, 0, 0  # the next piece's start, and the part of the file mapped
    mapped: mmap.mmap | None = None
    try:
        while pos < end:
            if pos + 2 * size + 1 > hi and hi < end:
                if mapped is not None:
                    mapped.close()
                lo = pos - pos % mmap.ALLOCATIONGRANULARITY
                hi = min(end, lo + max(_MAP_WINDOW, 4 * size))
                mapped = mmap.mmap(stream.fileno(), hi - lo, access=mmap.ACCESS_READ, offset=lo)
            assert mapped is not None
            cut = _piece_end(mapped, pos - lo, min(pos + size, end) - lo, min(pos + 2 * size, end) - lo)
            if cut is None:
                break
            view = memoryview(mapped)[pos - lo:cut]
            try:
                cleaned = strip(view)
            finally:
                view.release()
            res.size += cut + lo - pos
            yield cleaned, Origin(pos - base, cut + lo - pos, len(cleaned))
            pos = cut + lo
    finally:
        if mapped is not None:
            mapped.close()
    return pos


def _piece_end(mapped: mmap.mmap, pos: int, read_end: int, line_end: int) -> int | None:
    """Where the piece at `pos` ends in `mapped` when `located_lines` would cut it there with nothing carried over:
    after the read ending at `read_end` if that is a line end, else after the next newline before `line_end`.
    None when it would not (no such newline, or the file's end without one)."""
    if mapped[read_end - 1] == 10:
        return read_end
    nl = mapped.find(b"\n", read_end, line_end)
    return None if nl == -1 else nl + 1


class Reread:
    """Reads pieces again from a stream that can seek cheaply, by their `Origin`."""

    def __init__(self, stream: BinaryIO, base: int | None = None) -> None:
        """`base`: where reading began in `stream` (None: where it is now)."""
        self._stream = stream
        self._base = stream.tell() if base is None else base

    def piece(self, origin: Origin) -> bytes | None:
        """The piece as `located_pieces` gave it, or None when the stream no longer holds it (the file changed)."""
        try:
            self._stream.seek(self._base + origin.offset)
            raw = self._stream.read(origin.size)
        except (OSError, ValueError):
            return None
        return cleaned_again(raw, origin)


def cleaned_again(raw: bytes, origin: Origin) -> bytes | None:
    """A piece's bytes read again from where `origin` says, cleaned as `located_pieces` gave it; None when they are
    not the piece's (the file changed)."""
    cleaned = strip_ansi_bytes(raw) if len(raw) == origin.size else b""
    return cleaned if len(cleaned) == origin.cleaned else None


def rereader(stream: BinaryIO) -> Reread | None:
    """A `Reread` for a plain file, the stdin spool or bytes in memory; None for a stream that only reads forward or
    seeks by reading again (a zip member, a job's lines gathered from a bigger log)."""
    if not isinstance(stream, (io.BufferedReader, io.BytesIO)):
        return None
    try:
        return Reread(stream) if stream.seekable() else None
    except (OSError, ValueError):
        return None
