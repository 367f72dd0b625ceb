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
from collections.abc import Iterator
from typing import BinaryIO, NamedTuple, Protocol

from .lines import strip_ansi_bytes

__all__ = ["MAX_LINE_BYTES", "Origin", "Reread", "cleaned_pieces", "located_pieces", "rereader", "whole_lines"]

MAX_LINE_BYTES = 256 * 1024


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
