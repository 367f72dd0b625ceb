"""A big log file scanned in parts by forked processes finds what one pass finds, with the same line numbers."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest

from repopilot.ci import split
from repopilot.ci.catalog import load_catalog
from repopilot.ci.engine import diagnose_input
from repopilot.ci.pieces import whole_lines
from repopilot.ci.scanner import Scanner, ScanResult, hyperscan_available
from repopilot.ci.sources import open_sources

ROOT = Path(__file__).resolve().parents[2]
_CHUNK = 16 * 1024  # small chunks: many boundaries
pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")


def _real_log(tmp_path: Path, copies: int = 3) -> Path:
    """Real logs of many tools, concatenated (coloured Maven output among them), a build error at the end."""
    logs = sorted((ROOT / "examples").glob("*.log")) + sorted((ROOT / "tests" / "ci" / "rule_logs").glob("*.log"))
    body = b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in logs)
    coloured = b"[\x1b[1;34mINFO\x1b[m] Running com.example.FooTest\n[\x1b[1;31mERROR\x1b[m] Tests run: 3, " \
               b"Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.1 s <<< FAILURE! - in com.example.FooTest\n"
    path = tmp_path / "big.log"
    path.write_bytes(body * copies + coloured + (ROOT / "examples" / "maven-compile-error.log").read_bytes())
    return path


def _scanner() -> Scanner:
    engine = "hyperscan" if hyperscan_available() else "re"
    return Scanner(load_catalog(), engine=engine, chunk_size=_CHUNK)


def _facts(res: ScanResult) -> dict[str, object]:
    return {
        "lines": res.lines, "size": res.size,
        "hits": [(h.rule.id, h.line, h.first, h.last, h.fields, h.message) for h in res.hits],
        "groups": [(m.line, m.text) for m in res.groups], "endgroups": res.endgroups, "successes": res.successes,
        "errors": [(m.line, m.text) for m in res.errors], "tail": [(m.line, m.text) for m in res.tail],
        "keywords": [(m.line, m.text) for m in res.keywords], "commands": [(m.line, m.text) for m in res.commands],
        "losers": [(c.rule_id, c.line, c.winner) for c in res.losers], "in_script": res.in_script,
    }


@pytest.mark.parametrize(("workers", "last_newline"), [(2, True), (3, True), (2, False)])
def test_parts_find_what_one_pass_finds(tmp_path: Path, workers: int, last_newline: bool) -> None:
    path = _real_log(tmp_path)
    if not last_newline:  # the last line unfinished, as when a job is killed mid-line
        path.write_bytes(path.read_bytes().rstrip(b"\n"))
    sc = _scanner()
    with path.open("rb") as fh:
        one = sc.scan(fh)
    size = path.stat().st_size
    cuts = split.split_points(path, size, workers, _CHUNK)
    assert len(cuts) == workers + 1 and all(b > a for a, b in itertools.pairwise(cuts))
    with path.open("rb") as fh:
        ends = list(itertools.accumulate(len(p) for p in whole_lines(fh, _CHUNK, ScanResult())))
    assert set(cuts[1:]) <= set(ends)  # where one pass ends a piece (so at line ends)
    parts = split.scan_file(sc, path, size, workers, min_part=_CHUNK)
    assert len(one.hits) > 50 and one.errors and one.tail
    assert _facts(parts) == _facts(one)
    # The lines kept for display: the same (a part may keep a context line one pass could no longer read).
    assert one.text.items() <= parts.text.items() and len(parts.text) - len(one.text) <= 3


def test_a_block_across_a_cut_is_grown_whole(tmp_path: Path) -> None:
    stack = b"".join(b"\tat com.example.Foo.m%d(Foo.java:%d)\n" % (i, i) for i in range(30))
    path = tmp_path / "stack.log"
    for before in range(3000, 3700, 7):  # a log whose cut falls inside the stack trace
        filler = b"".join(b"[INFO] line %d of the build\n" % i for i in range(before))
        data = filler + b"Exception in thread \"main\" java.lang.IllegalStateException: boom\n" + stack + filler
        path.write_bytes(data)
        trigger = before + 1
        cut = split.split_points(path, len(data), 2, _CHUNK)[1]
        if trigger < data.count(b"\n", 0, cut) + 1 < trigger + 30:
            break
    else:
        pytest.fail("no cut inside the stack trace")
    sc = _scanner()
    with path.open("rb") as fh:
        one = sc.scan(fh)
    parts = split.scan_file(sc, path, len(data), 2, min_part=_CHUNK)
    assert [(h.rule.id, h.line, h.first, h.last) for h in parts.hits] == \
           [(h.rule.id, h.line, h.first, h.last) for h in one.hits]
    hit = next(h for h in parts.hits if h.line == trigger)
    assert hit.last >= trigger + 29


def test_a_failed_worker_is_rescanned_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _real_log(tmp_path, copies=1)
    sc = _scanner()
    size = path.stat().st_size
    expected = _facts(split.scan_file(sc, path, size, 2, min_part=_CHUNK))

    def broken(res: ScanResult, scanner: Scanner) -> bytes:
        raise RuntimeError("the worker breaks")

    monkeypatch.setattr(split, "_pack", broken)  # only the forked worker packs its result
    assert _facts(split.scan_file(sc, path, size, 2, min_part=_CHUNK)) == expected


def test_small_files_and_streams_keep_one_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_fork() -> int:
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", no_fork)
    path = _real_log(tmp_path, copies=1)
    [log] = open_sources(str(path))
    assert log.path == path
    assert diagnose_input(log, workers=4).diagnosis.failures  # below the size worth a worker
    assert split.scan_file(_scanner(), path, path.stat().st_size, 1).hits


def test_the_diagnosis_of_a_split_log_is_the_one_pass_diagnosis(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    path = _real_log(tmp_path)
    [log] = open_sources(str(path))
    one = diagnose_input(log, workers=1).report().contract()
    forks: list[int] = []
    real_fork = os.fork

    def counted() -> int:
        forks.append(1)
        return real_fork()

    monkeypatch.setattr(os, "fork", counted)
    monkeypatch.setattr(split, "SPLIT_FROM", _CHUNK)
    assert diagnose_input(log, workers=2).report().contract() == one
    assert forks


def test_by_default_a_big_file_is_one_pass_in_this_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Forked workers cost memory (README, "Scanning a big log"): only an explicit `scan_workers` > 1 starts them."""

    def no_fork() -> int:
        raise AssertionError("forked")

    monkeypatch.setattr(os, "fork", no_fork)
    monkeypatch.setattr(split, "SPLIT_FROM", _CHUNK)  # even where a part would be worth a worker
    path = _real_log(tmp_path)
    [log] = open_sources(str(path))
    assert diagnose_input(log).diagnosis.failures
    assert diagnose_input(log, workers=0).diagnosis.failures
