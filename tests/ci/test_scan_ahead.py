"""The next piece read and scanned in a thread: pieces and matches come out in order, exactly as a scan in turn gives
them; a failure in the thread reaches the scan; a scan that stops early leaves no thread behind."""

from __future__ import annotations

import io
import threading

import pytest

from repopilot.ci.ahead import scanned_ahead
from repopilot.ci.catalog import load_catalog
from repopilot.ci.scanner import Scanner, hyperscan_available


def _threads() -> set[str]:
    return {t.name for t in threading.enumerate()}


def test_pieces_come_out_in_order_with_their_matches() -> None:
    pieces = [bytes([65 + k % 26]) * (k + 1) for k in range(200)]
    got = list(scanned_ahead(iter(pieces), lambda p: [(len(p), p[0])]))
    assert got == [(p, [(len(p), p[0])]) for p in pieces]
    assert "repopilot-scan-ahead" not in _threads()


def test_one_piece_starts_no_thread() -> None:
    seen: list[str] = []
    got = list(scanned_ahead([b"only"], lambda p: seen.append(threading.current_thread().name) or []))
    assert got == [(b"only", [])] and seen == [threading.current_thread().name]


def test_a_failure_while_reading_ahead_reaches_the_scan() -> None:
    def pieces():  # type: ignore[no-untyped-def]
        yield b"a"
        yield b"b"
        raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone"):
        list(scanned_ahead(pieces(), lambda p: []))
    assert "repopilot-scan-ahead" not in _threads()


def test_a_scan_that_stops_early_stops_the_thread() -> None:
    read: list[int] = []

    def pieces():  # type: ignore[no-untyped-def]
        for k in range(10_000):
            read.append(k)
            yield b"x"

    it = scanned_ahead(pieces(), lambda p: [])
    assert next(it) == (b"x", [])
    it.close()
    assert "repopilot-scan-ahead" not in _threads()
    assert len(read) <= 3  # the first, the second, and at most one read ahead


@pytest.mark.skipif(not hyperscan_available(), reason="no hyperscan wheel")
def test_a_scan_ahead_finds_what_a_scan_in_turn_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    error = b"[INFO] line %d\n[ERROR] /w/A%d.java:[%d,5] cannot find symbol\n  symbol: class F%d\n"
    log = b"".join(error % (k, k, k, k) for k in range(3000)) + b"[INFO] BUILD FAILURE\n"
    sc = Scanner(load_catalog(), engine="hyperscan", chunk_size=8 * 1024)
    threads: set[str] = set()
    scan, bound = sc.engine.scan, sc.engine.bound

    def spy(fn):  # type: ignore[no-untyped-def]
        def spied(data: bytes) -> list[tuple[int, int]]:
            threads.add(threading.current_thread().name)
            return fn(data)  # type: ignore[no-any-return]
        return spied

    monkeypatch.setattr(sc.engine, "bound", lambda: spy(bound()))
    monkeypatch.setattr(sc.engine, "scan", spy(scan))
    ahead = sc.scan(io.BytesIO(log), ahead=True)
    # The first piece scanned by the scan's thread, the others ahead, one at a time with the same scratch space.
    assert threads == {threading.current_thread().name, "repopilot-scan-ahead"}
    threads.clear()
    in_turn = sc.scan(io.BytesIO(log))
    assert threads == {threading.current_thread().name}

    def facts(res):  # type: ignore[no-untyped-def]
        return ([(h.rule.id, h.line, h.first, h.last, h.fields, h.late) for h in res.hits], res.capped, res.text,
                res.lines, res.size, [m.line for m in res.tail])

    assert facts(ahead) == facts(in_turn) and len(ahead.hits) > 100


def test_the_process_keeps_one_malloc_arena_before_a_thread_reads_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    from repopilot.ci import ahead

    real = ahead.one_malloc_arena
    calls: list[str] = []
    monkeypatch.setattr(ahead, "one_malloc_arena", lambda: calls.append(threading.current_thread().name))
    list(scanned_ahead([b"only"], lambda p: []))
    assert calls == []  # one piece: no thread, nothing changed
    list(scanned_ahead([b"a", b"b"], lambda p: []))
    assert calls == [threading.current_thread().name]
    assert real() is real()  # once per process (glibc says whether it took it)


def test_the_setting_turns_reading_ahead_on_for_a_diagnosis(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from repopilot.app import diagnose, diagnosing, load_settings, open_logs

    log = tmp_path / "build.log"
    log.write_bytes(b"[ERROR] /w/A.java:[1,5] cannot find symbol\n")
    asked: list[bool] = []
    real = diagnosing.diagnose_input

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        asked.append(kwargs["ahead"])
        return real(*args, **kwargs)

    monkeypatch.setattr(diagnosing, "diagnose_input", spy)
    for env in ({}, {"REPOPILOT_SCAN_AHEAD": "1"}):
        settings = load_settings({"REPOPILOT_RUNS_DIR": str(tmp_path / "runs"), **env}, cwd=tmp_path)
        diagnose(open_logs(str(log), settings), settings, no_llm=True, remember_runs=False)
    assert asked == [False, True]  # off unless asked for
