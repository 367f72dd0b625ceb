"""A big file scanned ahead by a helper process (ci/ahead.py) gives what one pass gives: the first pieces scanned
here while the helper starts, the rest located by it; a helper that fails, stops answering or reads other bytes
than this process is met by scanning here; no helper outlives the scan; only a big regular file, with the C
extension and hyperscan, gets one."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import repopilot.ci.cache as cache_mod
from repopilot.ci import ahead, native
from repopilot.ci.catalog import load_catalog
from repopilot.ci.pieces import located_pieces
from repopilot.ci.scanner import Scanner, ScanResult, hyperscan_available

ROOT = Path(__file__).resolve().parents[2]
_CHUNK = 16 * 1024
pytestmark = [pytest.mark.skipif(not native.available(), reason="the C extension was not built"),
              pytest.mark.skipif(not hyperscan_available(), reason="no hyperscan wheel")]


class _Counter:
    size = 0


_HELPERS: list[object] = []  # the helper processes started by the test running


@pytest.fixture(autouse=True)
def _recorded_helpers(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(ahead, "_cpus", lambda: 2)  # a helper only pays with a second CPU; these tests want one
    real = ahead._Helper.__init__

    def recorded(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        real(self, *args, **kwargs)
        _HELPERS.append(self._proc)

    monkeypatch.setattr(ahead._Helper, "__init__", recorded)
    _HELPERS.clear()
    yield
    _HELPERS.clear()


def _no_helper_left() -> bool:
    """Every helper started was ended and reaped (none left running, none a zombie)."""
    return bool(_HELPERS) and all(p is not None and p.returncode is not None for p in _HELPERS)  # type: ignore


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
    return Scanner(load_catalog(), engine="hyperscan", chunk_size=_CHUNK)


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
    # A small file is worth a helper here, and the first piece waits until it is ready: the rest is its.
    monkeypatch.setattr(ahead, "AHEAD_FROM", 64 * 1024)
    monkeypatch.setattr(ahead, "_READY_WAIT", 20.0)


def _ahead(path: Path, sc: Scanner, pieces: Iterator[tuple[bytes, object]] | None = None) -> list[tuple[object, ...]]:
    database = sc.engine.serialized()
    assert database is not None
    with path.open("rb") as fh:
        return list(ahead.scanned_ahead(pieces or located_pieces(fh, _CHUNK, _Counter()),  # type: ignore[arg-type]
                                        (str(path), 0), _CHUNK, sc.engine.scan, database))


def _located(got: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    """Each piece with its located matches, however they were found."""
    c = native.NATIVE
    assert c is not None
    return [(p, o, c.unpack_located(f.data, 1) if isinstance(f, ahead.Packed) else c.locate(p, 1, f))  # type: ignore
            for p, o, f in got]


def _one_pass(path: Path, sc: Scanner) -> list[tuple[object, ...]]:
    with path.open("rb") as fh:
        return _located([(p, o, sc.engine.scan(p)) for p, o in located_pieces(fh, _CHUNK, _Counter())])


def test_a_scan_ahead_finds_what_one_pass_finds(tmp_path: Path, small_ahead: None,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    path, sc = _log(tmp_path), _scanner()
    kinds: list[bool] = []
    real = ahead.scanned_ahead

    def spied(*args, **kwargs):  # type: ignore[no-untyped-def]
        for got in real(*args, **kwargs):
            kinds.append(isinstance(got[2], ahead.Packed))
            yield got

    monkeypatch.setattr("repopilot.ci.scanner.scanned_ahead", spied)
    with path.open("rb") as fh:
        with_helper = sc.scan(fh, ahead=True)
    assert kinds[0] is False and all(kinds[1:]) and len(kinds) > 50  # the first here, the rest by the helper
    assert _no_helper_left()
    with path.open("rb") as fh:
        one_pass = sc.scan(fh)
    assert _facts(with_helper) == _facts(one_pass) and len(one_pass.hits) > 20


def test_pieces_come_with_the_helpers_located_matches(tmp_path: Path, small_ahead: None) -> None:
    path, sc = _log(tmp_path), _scanner()
    got = _ahead(path, sc)
    assert sum(isinstance(f, ahead.Packed) for _, _, f in got) == len(got) - 1
    assert _located(got) == _one_pass(path, sc)
    assert _no_helper_left()


@pytest.mark.parametrize("helper", [
    "import sys; sys.stdout.buffer.write(b'R'); sys.stdout.flush()",  # ready, then gone
    "import sys; sys.stdout.buffer.write(b'R'); sys.stdout.flush(); sys.stdout.buffer.write(b'x' * 40)",  # garbage
    "raise SystemExit(3)",  # never ready
])
def test_a_helper_that_fails_is_met_by_scanning_here(tmp_path: Path, small_ahead: None, helper: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ahead, "_HELPER", helper)
    monkeypatch.setattr(ahead, "_READY_WAIT", 0.5)
    path, sc = _log(tmp_path), _scanner()
    got = _ahead(path, sc)
    assert not any(isinstance(f, ahead.Packed) for _, _, f in got)
    assert _located(got) == _one_pass(path, sc)
    assert _no_helper_left()


def test_a_helper_that_fails_midway_is_met_by_reading_here_from_where_it_stopped(
        tmp_path: Path, small_ahead: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # It hands over a few pieces, then dies: the pieces it gave are not scanned again, the rest are read and
    # scanned here, and the bytes read are counted once.
    scan = "        found = databases.scan"
    dies = ahead._HELPER.replace(scan, "        if k == 4:\n            raise SystemExit(1)\n" + scan)
    assert dies != ahead._HELPER
    monkeypatch.setattr(ahead, "_HELPER", dies)
    path, sc = _log(tmp_path), _scanner()
    database = sc.engine.serialized()
    assert database is not None
    counter = _Counter()
    with path.open("rb") as fh:
        got = list(ahead.scanned_ahead(located_pieces(fh, _CHUNK, counter), (str(path), 0), _CHUNK, sc.engine.scan,
                                       database, counter))
    assert sum(isinstance(f, ahead.Packed) for _, _, f in got) == 4  # this process's next piece and three more
    assert _located(got) == _one_pass(path, sc)
    assert counter.size == path.stat().st_size
    assert _no_helper_left()


@pytest.mark.parametrize("fails", [False, True])
def test_pieces_the_helper_scanned_past_a_full_ring_are_read_here(tmp_path: Path, small_ahead: None, fails: bool,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # A ring of four pieces and a slow reader: the helper does not wait for room, and those pieces are read here
    # (or, when that fails, as if the helper failed there: from where its pieces stopped).
    monkeypatch.setattr(ahead, "_RING", 4 * _CHUNK)
    read_here: list[object] = []
    real = ahead._Helper._read_here

    def spied(self, origin):  # type: ignore[no-untyped-def]
        read_here.append(origin)
        return None if fails else real(self, origin)

    monkeypatch.setattr(ahead._Helper, "_read_here", spied)
    path, sc = _log(tmp_path), _scanner()
    database = sc.engine.serialized()
    assert database is not None
    counter, got = _Counter(), []
    with path.open("rb") as fh:
        for piece in ahead.scanned_ahead(located_pieces(fh, _CHUNK, counter), (str(path), 0), _CHUNK,
                                         sc.engine.scan, database, counter):
            got.append(piece)
            time.sleep(0.002)
    assert len(read_here) == 1 if fails else len(read_here) > 5
    assert _located(got) == _one_pass(path, sc)
    assert counter.size == path.stat().st_size
    assert _no_helper_left()


def test_a_helper_that_stops_answering_is_given_up(tmp_path: Path, small_ahead: None,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ahead, "_HELPER", "import sys, time; sys.stdout.buffer.write(b'R'); sys.stdout.flush(); "
                                          "time.sleep(3600)")
    monkeypatch.setattr(ahead, "_PATIENCE", 0.3)
    path, sc = _log(tmp_path), _scanner()
    t0 = time.monotonic()
    got = _ahead(path, sc)
    assert time.monotonic() - t0 < 10
    assert _located(got) == _one_pass(path, sc)
    assert _no_helper_left()  # killed and reaped


def test_other_bytes_than_the_helpers_are_scanned_here(tmp_path: Path, small_ahead: None) -> None:
    # As when the file changes under the scan: this process's pieces are not the helper's.
    path, sc = _log(tmp_path), _scanner()
    other = io.BytesIO(b"[ERROR] something else entirely\n" * 20_000)
    got = _ahead(path, sc, located_pieces(other, _CHUNK, _Counter()))  # type: ignore[arg-type]
    assert got and not any(isinstance(f, ahead.Packed) for _, _, f in got)
    assert _no_helper_left()


def test_a_scan_that_stops_early_leaves_no_helper(tmp_path: Path, small_ahead: None) -> None:
    path, sc = _log(tmp_path), _scanner()
    database = sc.engine.serialized()
    assert database is not None
    with path.open("rb") as fh:
        it = ahead.scanned_ahead(located_pieces(fh, _CHUNK, _Counter()), (str(path), 0), _CHUNK, sc.engine.scan,
                                 database)
        next(it)
        next(it)
        it.close()
    assert _no_helper_left()


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
            assert ahead.reopenable(fh) is None  # the helper works in C
    finally:
        native.use(was)
    moved = tmp_path / "moved.log"
    with path.open("rb") as fh:
        path.rename(moved)
        path.write_bytes(moved.read_bytes())  # another file by that name now
        assert ahead.reopenable(fh) is None
    re_only = Scanner(load_catalog(), engine="re")
    assert re_only.engine.serialized() is None  # no database to hand over: one pass
    monkeypatch.setattr(ahead, "_cpus", lambda: 1)
    with path.open("rb") as fh:
        assert ahead.reopenable(fh) is None  # one CPU: the two processes would only take turns
    assert not ahead.prestart_helper([str(path)])


def test_by_default_a_diagnosis_scans_ahead_and_the_setting_turns_it_off(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from repopilot.app import diagnose, diagnosing, load_settings, open_logs

    log = tmp_path / "build.log"
    log.write_bytes(b"[ERROR] /w/A.java:[1,5] cannot find symbol\n")
    asked: list[bool] = []
    real = diagnosing.diagnose_input

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        asked.append(kwargs["ahead"])
        return real(*args, **kwargs)

    monkeypatch.setattr(diagnosing, "diagnose_input", spy)
    for env in ({}, {"REPOPILOT_SCAN_AHEAD": "0"}):
        settings = load_settings({"REPOPILOT_RUNS_DIR": str(tmp_path / "runs"), **env}, cwd=tmp_path)
        diagnose(open_logs(str(log), settings), settings, no_llm=True, remember_runs=False)
    assert asked == [True, False]


_FRESH = """
import sys
from repopilot.ci import ahead
from repopilot.ci.catalog import load_catalog
from repopilot.ci.scanner import Scanner
ahead.AHEAD_FROM, ahead._READY_WAIT = 64 * 1024, 20.0
located = []
real_next = ahead._Helper.next
def counted(self):
    got = real_next(self)
    located.append(isinstance(got, ahead._Piece))
    return got
ahead._Helper.next = counted
with open(sys.argv[1], "rb") as fh:
    res = Scanner(load_catalog(), engine="hyperscan", chunk_size=16 * 1024).scan(fh, ahead=True)
print(sum(located), "subprocess" in sys.modules, res.lines)
"""


def test_a_scan_ahead_starts_its_helper_without_importing_subprocess(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = _log(tmp_path)
    out = subprocess.run([sys.executable, "-c", _FRESH, str(path)], capture_output=True, text=True, check=True,
                         cwd=ROOT, timeout=120).stdout.split()
    # The helper located pieces (it was started and answered), and importing `subprocess` was not needed for it.
    assert int(out[0]) > 10 and out[1] == "False" and int(out[2]) == path.read_bytes().count(b"\n")


@pytest.fixture
def no_bundled(monkeypatch: pytest.MonkeyPatch) -> None:
    # An editable install: the wheel's databases are not there to give a helper started early.
    monkeypatch.setattr(cache_mod, "bundled_scan_database", lambda: None)


@pytest.fixture
def bundled(monkeypatch: pytest.MonkeyPatch) -> bytes:
    # A wheel: it carries the bundled catalog's databases (ci/prebuild.py; tests/ci/test_prebuilt.py).
    database = _scanner().engine.serialized()
    assert database is not None
    monkeypatch.setattr(cache_mod, "bundled_scan_database", lambda: database)
    return database


def test_a_helper_started_early_is_taken_by_the_scan(tmp_path: Path, small_ahead: None, no_bundled: None) -> None:
    path, sc = _log(tmp_path), _scanner()
    assert ahead.prestart_helper([str(path)], _CHUNK)
    [early] = ahead._EARLY
    assert early.task is None
    got = _ahead(path, sc)
    assert not ahead._EARLY and [early.proc] == _HELPERS  # the scan took it, started no other
    assert sum(isinstance(f, ahead.Packed) for _, _, f in got) == len(got) - 1
    assert _located(got) == _one_pass(path, sc)
    assert _no_helper_left()


def test_a_helper_given_its_task_early_scans_from_the_start(tmp_path: Path, small_ahead: None,
                                                            bundled: bytes) -> None:
    path, sc = _log(tmp_path), _scanner()
    assert ahead.prestart_helper([str(path)], _CHUNK)
    [early] = ahead._EARLY
    assert early.task is not None and early.task.database == bundled
    got = _ahead(path, sc)
    assert not ahead._EARLY and [early.proc] == _HELPERS  # the scan took it, started no other
    assert all(isinstance(f, ahead.Packed) for _, _, f in got) and len(got) > 50  # the first one too
    assert _located(got) == _one_pass(path, sc)
    assert _no_helper_left()
    with path.open("rb") as fh:
        one_pass = sc.scan(fh)
    assert ahead.prestart_helper([str(path)], _CHUNK)
    with path.open("rb") as fh:
        assert _facts(sc.scan(fh, ahead=True)) == _facts(one_pass)


@pytest.mark.parametrize("change", ["database", "pieces", "file", "start"])
def test_a_helper_given_another_task_early_is_ended_and_another_scans(tmp_path: Path, small_ahead: None,
                                                                      bundled: bytes, change: str) -> None:
    path, sc = _log(tmp_path), _scanner()
    assert ahead.prestart_helper([str(path)], _CHUNK * 2 if change == "pieces" else _CHUNK)
    [early] = ahead._EARLY
    if change == "database":
        ahead._EARLY[0] = early._replace(task=early.task._replace(database=bundled + b"\0"))  # type: ignore
    if change == "file":  # written again since (the same size): its pieces may not be the ones read now
        time.sleep(0.01)
        path.write_bytes(path.read_bytes())
    database = sc.engine.serialized()
    assert database is not None
    with path.open("rb") as fh:
        start = 1 if change == "start" else 0
        fh.seek(start)
        got = list(ahead.scanned_ahead(located_pieces(fh, _CHUNK, _Counter()), (str(path), start), _CHUNK,
                                       sc.engine.scan, database))
    assert early.proc.returncode is not None and len(_HELPERS) == 1 and _HELPERS[0] is not early.proc
    assert not isinstance(got[0][2], ahead.Packed)  # the first piece scanned here while the other one started
    assert sum(isinstance(f, ahead.Packed) for _, _, f in got) == len(got) - 1
    assert _no_helper_left()


def test_a_helper_started_early_that_no_scan_takes_is_ended(tmp_path: Path, small_ahead: None,
                                                             bundled: bytes) -> None:
    path, sc = _log(tmp_path), _scanner()
    assert ahead.prestart_helper([str(path)], _CHUNK)
    [early] = ahead._EARLY
    with path.open("rb") as fh:
        sc.scan(fh, ahead=False)  # one pass: no helper
    assert not ahead._EARLY and early.proc.returncode is not None  # killed and reaped


def test_a_helper_started_early_is_ended_when_the_log_is_scanned_in_parts(tmp_path: Path, small_ahead: None,
                                                                          bundled: bytes) -> None:
    from repopilot.ci.split import scan_file

    path, sc = _log(tmp_path), _scanner()
    assert ahead.prestart_helper([str(path)], _CHUNK)
    [early] = ahead._EARLY
    res = scan_file(sc, path, path.stat().st_size, 2, min_part=64 * 1024)
    assert not ahead._EARLY and early.proc.returncode is not None  # it was scanning: killed and reaped
    with path.open("rb") as fh:
        assert res.lines == sc.scan(fh).lines


def test_diagnose_of_a_big_file_starts_the_helper_before_the_program_loads(tmp_path: Path,
                                                                            small_ahead: None) -> None:
    from repopilot.app.early import start_early

    path = _log(tmp_path)
    small = tmp_path / "small.log"
    small.write_bytes(b"[ERROR] x\n")
    try:
        for argv in (["history", str(path)], ["diagnose", str(small)], ["diagnose", "--format", "json"],
                     ["diagnose", str(tmp_path / "missing.log")], ["diagnose", str(tmp_path)]):
            start_early(argv)
            assert not ahead._EARLY, argv
        start_early(["diagnose", "--baseline", str(small), str(path), "--no-llm"])
        assert len(ahead._EARLY) == 1
    finally:
        ahead.discard()
    assert not ahead._EARLY
