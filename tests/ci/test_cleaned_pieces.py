"""The log as the scanner reads it: pieces of whole lines, escape codes removed exactly as from the whole log,
wherever a read ends (inside an escape code too)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from repopilot.ci.lines import ANSI_BYTES
from repopilot.ci.pieces import cleaned_pieces

_LINES = [
    b"[\x1b[1;34mINFO\x1b[m] Building demo 1.0",  # SGR colours, as Maven prints them
    b"\x1b]0;title\x07\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\ done",  # OSC: title, hyperlink (BEL, ST)
    b"progress 10%\rprogress 100%\r",  # CR-separated progress, CRLF ending
    b"plain line without escapes",
    b"\x1b(B\x1b[m\x1b[?25l\x1b7reset\x1b8",  # nF charset, private mode, Fp save/restore
    b"",
]


class _Count:
    size = 0


@pytest.mark.parametrize("size", [1, 3, 7, 16, 64, 4096])
def test_pieces_are_cleaned_as_the_whole_log_wherever_reads_end(size: int) -> None:
    data = b"\n".join(_LINES * 3) + b"\n"
    counter = _Count()
    pieces = list(cleaned_pieces(io.BytesIO(data), size, counter))
    assert counter.size == len(data)
    assert all(p.endswith(b"\n") for p in pieces)  # whole lines: no escape code is ever cut in two
    assert b"".join(pieces) == ANSI_BYTES.sub(b"", data)
    assert b"".join(pieces).count(b"\n") == data.count(b"\n")  # line numbers unchanged
    assert b"\x1b" not in b"".join(pieces)


def test_a_log_without_escapes_is_passed_through_as_read() -> None:
    data = b"".join(b"line %d\r\n" % k for k in range(1000))
    pieces = list(cleaned_pieces(io.BytesIO(data), 256, _Count()))
    assert b"".join(pieces) == data


@pytest.mark.parametrize("body", [
    b"",
    b"one line without an end",
    b"\x1b[31mred\x1b[0m line\n" * 3000,
    b"short\n" + b"x" * 5000 + b"\n" + b"y" * 3000 + b"\nend",  # lines longer than a piece and its completion
    (b"[INFO] \x1b[1mBuilding\x1b[m\n" * 50 + b"z" * 2500) * 20,
])
@pytest.mark.parametrize("skip", [0, 33])
def test_mapped_pieces_are_the_pieces_read(tmp_path: Path, body: bytes, skip: int) -> None:
    # The scan-ahead helper reads through a mapping (pieces.mapped_pieces): the same pieces, where they lie and
    # the bytes counted, as reading gives, however lines fall around the piece size.
    from repopilot.ci.pieces import located_pieces, mapped_pieces

    path = tmp_path / "log"
    path.write_bytes(b"h" * skip + body)

    class Count:
        size = 0

    for size in (1024, 4096, 256 * 1024):
        read, mapped = Count(), Count()
        with path.open("rb") as a, path.open("rb") as b:
            a.seek(skip)
            b.seek(skip)
            assert list(mapped_pieces(b, size, mapped)) == list(located_pieces(a, size, read)), size
        assert mapped.size == read.size == len(body)
