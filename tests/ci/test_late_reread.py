"""Late hits of a log that can be read again (a file, the stdin spool) keep where their lines are, not the bytes:
the scan reads those chunks again at its end and finds exactly what holding them would have found."""

from __future__ import annotations

import io

import pytest

from repopilot.ci import late, pieces
from repopilot.ci.catalog import load_catalog
from repopilot.ci.lines import ANSI_BYTES
from repopilot.ci.pieces import Origin, Reread, located_pieces, rereader
from repopilot.ci.scanner import _EAGER, Scanner, ScanResult, hyperscan_available
from repopilot.ci.window import Chunk

_ENGINE = "hyperscan" if hyperscan_available() else "re"


class _Forward(io.RawIOBase):
    """A stream that only reads forward (as a zip member or a job gathered from a bigger log)."""

    def __init__(self, data: bytes) -> None:
        super().__init__()
        self._data = memoryview(data)
        self._pos = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        n = min(len(buffer), len(self._data) - self._pos)
        buffer[:n] = self._data[self._pos:self._pos + n]
        self._pos += n
        return n


def _log(errors: int) -> bytes:
    out = [b"[INFO] \x1b[1mBuilding demo\x1b[m"]
    for i in range(errors):
        out.append(b"[\x1b[1;31mERROR\x1b[m] /w/src/A%d.java:[%d,5] cannot find symbol" % (i, i + 1))
        out.append(b"  symbol:   class Foo%d" % i)
        out += [b"[INFO] filler line %d of some length to fill the chunks" % k for k in range(i % 7)]
    out.append(b"[INFO] BUILD FAILURE")
    return b"\n".join(out) + b"\n"


def _scan(stream: io.BufferedIOBase | io.BytesIO) -> ScanResult:
    return Scanner(load_catalog(), engine=_ENGINE, chunk_size=16 * 1024).scan(stream)  # type: ignore[arg-type]


def _facts(res: ScanResult) -> tuple[object, ...]:
    hits = [(h.rule.id, h.line, h.first, h.last, h.fields, h.message, h.late) for h in res.hits]
    return hits, res.capped, res.text, res.passed_classes, res.lines, res.size


def test_pieces_know_where_they_lie_and_a_cut_line_cannot_be_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pieces, "MAX_LINE_BYTES", 300)
    data = b"".join(b"\x1b[32mline %d\x1b[m\n" % k for k in range(200)) + b"x" * 2000 + b"\n" + b"tail\n" * 50

    class Count:
        size = 0

    got = list(located_pieces(io.BytesIO(data), 256, Count()))
    assert None in [o for _, o in got]  # the 2000-byte line was cut: not one run of the stream
    located = [(p, o) for p, o in got if o is not None]
    assert len(located) > 10
    for piece, origin in located:
        raw = data[origin.offset:origin.offset + origin.size]
        assert ANSI_BYTES.sub(b"", raw) == piece and origin.cleaned == len(piece)
    reread = Reread(io.BytesIO(data))
    assert all(reread.piece(o) == p for p, o in located)


def test_only_streams_that_seek_cheaply_are_read_again(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "log"
    path.write_bytes(b"a\n")
    with path.open("rb") as fh:
        assert rereader(fh) is not None
    assert rereader(io.BytesIO(b"a\n")) is not None
    assert rereader(io.BufferedReader(_Forward(b"a\n"))) is None  # type: ignore[arg-type]


def test_late_hits_read_their_lines_again_and_find_what_held_bytes_find(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _log(_EAGER + 3 * late.LATE + 40)
    seen: list[tuple[bytes, Origin | None]] = []
    window_of = late.LateHits.window_of

    def spy(self: late.LateHits, item: late.LateHit):  # type: ignore[no-untyped-def]
        seen.append((item.data, item.origin))
        return window_of(self, item)

    monkeypatch.setattr(late.LateHits, "window_of", spy)
    held = _scan(io.BufferedReader(_Forward(data)))  # type: ignore[arg-type]
    assert seen and all(d and o is None for d, o in seen)  # a forward-only stream: the bytes are held
    seen.clear()
    again = _scan(io.BytesIO(data))
    assert seen and all(d == b"" and o is not None for d, o in seen)  # only where they lie
    assert sum(h.late for h in again.hits) >= late.LATE
    assert _facts(again) == _facts(held)


def test_a_log_that_changed_under_the_scan_loses_its_late_hits_to_the_count(monkeypatch: pytest.MonkeyPatch) -> None:
    data = _log(_EAGER + late.LATE)
    full = _scan(io.BytesIO(data))
    monkeypatch.setattr(Reread, "piece", lambda self, origin: None)
    changed = _scan(io.BytesIO(data))
    lost = sum(h.late for h in full.hits)
    assert lost > 0 and not any(h.late for h in changed.hits)
    assert sum(changed.capped.values()) == sum(full.capped.values()) + lost


def test_reading_a_piece_again_checks_it_is_still_there() -> None:
    data = b"one\ntwo\n"
    origin = Origin(0, len(data), len(data))
    assert Reread(io.BytesIO(data)).piece(origin) == data
    assert Reread(io.BytesIO(b"one\n")).piece(origin) is None  # the file was cut short
    hits = late.LateHits({}, Reread(io.BytesIO(b"one\n")))
    hits.add(2, (0,), ("r",), Chunk(data, 1, 2), False)
    [item] = hits.unchecked()
    hits.keep(item, data, 0, len(data), 4, origin)
    assert item.data == b"" and hits.window_of(item) is None
