"""The log as the scanner reads it: pieces of whole lines with ANSI codes removed.

Removing escape sequences costs about as much as the engine's scan of a piece (one `re` substitution in C per
piece; real Maven logs carry colour codes on most lines), and nothing else of a scan reads every byte twice.
(Cleaning in a forked process while this one scans was tried: on a loaded machine the hand-over of every piece
through a pipe cost more than it saved.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO, Protocol

from .lines import strip_ansi_bytes

__all__ = ["MAX_LINE_BYTES", "cleaned_pieces", "whole_lines"]

MAX_LINE_BYTES = 256 * 1024


class Counter(Protocol):
    size: int


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


def cleaned_pieces(stream: BinaryIO, size: int, res: Counter) -> Iterator[bytes]:
    """`whole_lines` with ANSI codes removed."""
    for block in whole_lines(stream, size, res):
        yield strip_ansi_bytes(block)
