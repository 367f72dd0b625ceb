"""A big file scanned ahead by a forked child (ci/ahead.py) gives what one pass gives; a child that fails, stops
answering or reads other bytes than this process is met by scanning here; no child outlives the scan; only a big
regular file, with the extension, by the one scan running, gets a child."""

from __future__ import annotations

import io
import os
import threading
import time
from pathlib import Path

import pytest

from repopilot.ci import ahead, native
from repopilot.ci.catalog import load_catalog
from repopilot.ci.pieces import located_pieces
from repopilot.ci.scanner import Scanner, ScanResult, hyperscan_available

ROOT = Path(__file__).resolve().parents[2]
_CHUNK = 16 * 1024
pytestmark = [pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform"),
              pytest.mark.skipif(not native.available(), reason="the C extension was not built")]


class _Counter:
    size = 0


def _no_children_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)  # a child still running, or one nobody reaped
    except ChildProcessError:
        return True
    return False


def _log(tmp_path: Path) -> Path:
    """Real logs of many tools, coloured Maven lines among them, a build error at the end: 100+ pieces."""
    logs = sorted((ROOT / "examples").glob("*.log")) + sorted((ROOT / "tests" / "ci" / "rule_logs").glob("*.log"))
    body = b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in logs)
    coloured = b"".join(b"[\x1b[1;34mINFO\x1b[m] Running com.example.T%d\n[\x1b[1;34mINFO\x1b[m] Tests run: 3, "
                        b"Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.1 s - in com.example.T%d\n" % (k, k)
                        for k in range(300))
    path = tmp_path / "big.log"
    path.write_bytes((body + coloured) * 4 + (ROOT / "examples" / "maven-compile-error.log").read_bytes())
    return path


def _scanner() -> Scanner:
    return Scanner(load_catalog(), engine="hyperscan" if hyperscan_available() else "re", chunk_size=_CHUNK)


def _facts(res: ScanResult) -> dict[str, object]:
    return {
        "lines": res.lines, "size": res.size, "capped": res.capped, "text": res.text,
        "hits": [(h.rule.id, h.line, h.first, h.last, h.fields, h.message, h.late) for h in res.hits],
        "groups": [(m.line, m.text) for m in res.groups], "errors": [(m.line, m.text) for m in res.errors],
        "tail": [(m.line, m.text) for m in res.tail], "keywords": [(m.line, m.text) for m in res.keywords],
        "commands": [(m.line, m.text) for m in res.commands], "losers": [(c.rule_id, c.line) for c in res.losers],
        "passed": res.passed_classes, "jobs": list(res.jobs), "in_script": res.in_script,
    }


@pytest.fixture
def small_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ahead, "AHEAD_FROM", 64 * 1024)


def _forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    forked: list[int] = []
    real = os.fork

    def counted() -> int:
        pid = real()
        if pid:
            forked.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counted)
    return forked


def test_a_scan_ahead_finds_what_one_pass_finds(tmp_path: Path, small_ahead: None,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    path, sc = _log(tmp_path), _scanner()
    forked = _forks(monkeypatch)
    with path.open("rb") as fh:
        with_child = sc.scan(fh, ahead=True)
    assert len(forked) == 1 and _no_children_left()
    with path.open("rb") as fh:
        one_pass = sc.scan(fh)
    assert len(forked) == 1
    assert _facts(with_child) == _facts(one_pass) and len(one_pass.hits) > 20


def test_pieces_come_with_the_childs_located_matches(tmp_path: Path, small_ahead: None) -> None:
    path, sc = _log(tmp_path), _scanner()
    assert native.NATIVE is not None
    with path.open("rb") as fh:
        got = list(ahead.scanned_ahead(located_pieces(fh, _CHUNK, _Counter()), (str(path), 0), _CHUNK,
                                       sc.engine.scan))
    with path.open("rb") as fh:
        want = [(p, o, native.NATIVE.locate(p, 1, sc.engine.scan(p)))
                for p, o in located_pieces(fh, _CHUNK, _Counter())]
    assert len(got) == len(want) > 50
    assert all(isinstance(found, ahead.Packed) for _, _, found in got)  # every piece from the child
    for (p, o, found), (q, r, located) in zip(got, want, strict=True):
        assert (p, o) == (q, r)
        assert isinstance(found, ahead.Packed) and native.NATIVE.unpack_located(found.data, 1) == located
    assert _no_children_left()


def _pieces_and_matches(got: list[tuple[bytes, object, object]], sc: Scanner) -> list[tuple[bytes, object]]:
    assert native.NATIVE is not None
    out = []
    for p, _, found in got:
        if isinstance(found, ahead.Packed):
            out.append((p, native.NATIVE.unpack_located(found.data, 1)))
        else:
            out.append((p, native.NATIVE.locate(p, 1, found)))  # type: ignore[arg-type]
    return out


def test_a_child_that_fails_is_met_by_scanning_here(tmp_path: Path, small_ahead: None) -> None:
    path, sc = _log(tmp_path), _scanner()
    parent = os.getpid()
    scanned_here = 0

    def scan(data: bytes):  # type: ignore[no-untyped-def]
        nonlocal scanned_here
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        scanned_here += 1
        return sc.engine.scan(data)

    with path.open("rb") as fh:
        got = list(ahead.scanned_ahead(located_pieces(fh, _CHUNK, _Counter()), (str(path), 0), _CHUNK, scan))
    assert scanned_here == len(got) > 50  # every piece scanned here
    with path.open("rb") as fh:
        want = [(p, o, sc.engine.scan(p)) for p, o in located_pieces(fh, _CHUNK, _Counter())]
    assert _pieces_and_matches(got, sc) == _pieces_and_matches(want, sc)  # type: ignore[arg-type]
    assert _no_children_left()


def test_a_child_that_stops_answering_is_given_up(tmp_path: Path, small_ahead: None,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path, sc = _log(tmp_path), _scanner()
    monkeypatch.setattr(ahead, "_PATIENCE", 0.3)
    parent = os.getpid()
    calls = 0

    def scan(data: bytes):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        if os.getpid() != parent and calls > 3:
            time.sleep(3600)  # as if waiting for a lock forever
        return sc.engine.scan(data)

    t0 = time.monotonic()
    with path.open("rb") as fh:
        got = list(ahead.scanned_ahead(located_pieces(fh, _CHUNK, _Counter()), (str(path), 0), _CHUNK, scan))
    assert time.monotonic() - t0 < 10
    assert [isinstance(f, ahead.Packed) for _, _, f in got[:4]] == [True, True, True, False]  # then scanned here
    with path.open("rb") as fh:
        want = [(p, o, sc.engine.scan(p)) for p, o in located_pieces(fh, _CHUNK, _Counter())]
    assert _pieces_and_matches(got, sc) == _pieces_and_matches(want, sc)  # type: ignore[arg-type]
    assert _no_children_left()  # killed and reaped


def test_other_bytes_than_the_childs_are_scanned_here(tmp_path: Path, small_ahead: None) -> None:
    # As when the file changes under the scan: this process's pieces are not the child's.
    path, sc = _log(tmp_path), _scanner()
    other = io.BytesIO(b"[ERROR] something else entirely\n" * 20_000)
    got = list(ahead.scanned_ahead(located_pieces(other, _CHUNK, _Counter()), (str(path), 0), _CHUNK,
                                   sc.engine.scan))
    assert got and not any(isinstance(f, ahead.Packed) for _, _, f in got)
    assert _no_children_left()


def test_a_scan_that_stops_early_leaves_no_child(tmp_path: Path, small_ahead: None) -> None:
    path, sc = _log(tmp_path), _scanner()
    with path.open("rb") as fh:
        it = ahead.scanned_ahead(located_pieces(fh, _CHUNK, _Counter()), (str(path), 0), _CHUNK, sc.engine.scan)
        next(it)
        it.close()
    assert _no_children_left()


def test_only_a_big_regular_file_with_the_extension_is_scanned_ahead(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path = _log(tmp_path)
    small = tmp_path / "small.log"
    small.write_bytes(b"[ERROR] x\n")
    monkeypatch.setattr(ahead, "AHEAD_FROM", 64 * 1024)
    with path.open("rb") as fh:
        assert ahead.reopenable(fh) == (str(path), 0)
        fh.seek(path.stat().st_size - 1000)
        assert ahead.reopenable(fh) is None  # what is left to read is small
    with small.open("rb") as fh:
        assert ahead.reopenable(fh) is None
    assert ahead.reopenable(io.BytesIO(path.read_bytes())) is None  # no file to open again
    was = native.use(False)
    try:
        with path.open("rb") as fh:
            assert ahead.reopenable(fh) is None  # the child works in C
    finally:
        native.use(was)
    moved = tmp_path / "moved.log"
    with path.open("rb") as fh:
        path.rename(moved)
        path.write_bytes(moved.read_bytes())  # another file by that name now
        assert ahead.reopenable(fh) is None


def test_no_child_while_another_scan_runs(tmp_path: Path, small_ahead: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # Hyperscan keeps a global lock; a child forked while another thread holds it would wait forever.
    path, sc = _log(tmp_path), _scanner()
    forked = _forks(monkeypatch)
    inside, done = threading.Event(), threading.Event()

    def other_scan() -> None:
        with ahead.scanning():
            inside.set()
            done.wait(10)

    t = threading.Thread(target=other_scan)
    t.start()
    inside.wait(10)
    try:
        with path.open("rb") as fh:
            sc.scan(fh, ahead=True)
    finally:
        done.set()
        t.join()
    assert forked == []
    with path.open("rb") as fh:
        sc.scan(fh, ahead=True)
    assert len(forked) == 1
