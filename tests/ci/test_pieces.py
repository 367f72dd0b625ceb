"""The cleaned pieces a scan reads: the same bytes whether a forked process cleans them or this one does, also
when the cleaning process stops half-way."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest

from repopilot.ci import pieces
from repopilot.ci.catalog import load_catalog
from repopilot.ci.scanner import Scanner

pytestmark = pytest.mark.skipif(sys.platform != "linux" or len(os.sched_getaffinity(0)) < 2,
                                reason="cleaning in another process: Linux with two CPUs")


class _Size:
    size = 0


def _log(tmp_path: Path) -> Path:
    lines = []
    for i in range(6000):
        lines.append(b"[\x1b[1;34mINFO\x1b[m] step %d \x1b]8;;http://x\x07link\x1b]8;;\x07 done" % i)
        if i % 700 == 0:
            lines.append(b"[\x1b[1;31mERROR\x1b[m] /w/src/A%d.java:[%d,5] cannot find symbol" % (i, i))
    path = tmp_path / "big.log"
    path.write_bytes(b"\n".join(lines) + b"\nno newline at the end")
    return path


def _serial(path: Path) -> tuple[bytes, int]:
    got = _Size()
    with path.open("rb") as fh:
        data = b"".join(pieces.cleaned_pieces(fh, 16 * 1024, got))
    return data, got.size


def _forked(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[bytes, int, int]:
    forks = []
    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(pieces, "PARALLEL_FROM", 0)
    monkeypatch.setattr(pieces.os, "fork", fork)
    got = _Size()
    with path.open("rb") as fh:
        data = b"".join(pieces.cleaned_pieces(fh, 16 * 1024, got, expected=path.stat().st_size))
        assert fh.tell() in (0, path.stat().st_size)  # the child read through a handle of its own
    return data, got.size, len(forks)


def test_a_forked_cleaner_gives_the_same_pieces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _log(tmp_path)
    data, size = _serial(path)
    assert b"\x1b" not in data and data.count(b"\n") == path.read_bytes().count(b"\n")
    forked, forked_size, forks = _forked(path, monkeypatch)
    assert forks == 1
    assert (forked, forked_size) == (data, size) and size == path.stat().st_size


def test_when_the_cleaner_stops_the_rest_is_read_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _log(tmp_path)
    data, size = _serial(path)
    real_child = pieces._clean_in_child

    def dies_early(fd: int, start: int, size: int, w: int) -> None:
        # The child sends two pieces, then stops as if killed.
        with open(f"/proc/self/fd/{fd}", "rb") as fh, os.fdopen(w, "wb", buffering=0) as out:
            read = pieces._Read()
            before = 0
            for i, block in enumerate(pieces.whole_lines(fh, size, read)):
                if i == 2:
                    os._exit(1)
                cleaned = pieces.strip_ansi_bytes(block)
                out.write(pieces._HEADER.pack(read.size - before, len(cleaned)) + cleaned)
                before = read.size
        real_child(fd, start, size, w)

    monkeypatch.setattr(pieces, "_clean_in_child", dies_early)
    forked, forked_size, forks = _forked(path, monkeypatch)
    assert forks == 1
    assert (forked, forked_size) == (data, size)


def test_small_logs_and_streams_are_cleaned_in_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pieces.os, "fork", lambda: pytest.fail("forked"))
    path = _log(tmp_path)
    with path.open("rb") as fh:
        assert b"".join(pieces.cleaned_pieces(fh, 16 * 1024, _Size(), expected=path.stat().st_size))
    monkeypatch.setattr(pieces, "PARALLEL_FROM", 0)
    stream = io.BytesIO(path.read_bytes())
    assert b"".join(pieces.cleaned_pieces(stream, 16 * 1024, _Size(), expected=10**9)) == _serial(path)[0]


def test_a_scan_is_the_same_either_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _log(tmp_path)
    scanner = Scanner(load_catalog(), engine="re", chunk_size=16 * 1024)
    with path.open("rb") as fh:
        here = scanner.scan(fh)
    monkeypatch.setattr(pieces, "PARALLEL_FROM", 0)
    with path.open("rb") as fh:
        there = scanner.scan(fh, size=path.stat().st_size)
    assert (here.lines, here.size) == (there.lines, there.size)
    assert [(h.rule.id, h.line, h.first, h.last) for h in here.hits] == \
        [(h.rule.id, h.line, h.first, h.last) for h in there.hits]
    assert [h.line for h in here.hits] == [2 + i + i // 700 for i in range(0, 6000, 700)]
