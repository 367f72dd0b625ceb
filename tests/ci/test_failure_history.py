"""The failure history store: counts, first commit, branches, flake rate, retention, and concurrent writers."""

from __future__ import annotations

import multiprocessing
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path

import pytest

from repopilot.ci import FailureRow, HistoryRow, HistorySQL, HistoryStore, RunPlace, RunRecord

FP_A, FP_B = "a" * 16, "b" * 16


def _run(run_id: str, commit: str, fps: list[str], *, branch: str = "main", job: str = "test",
         conclusion: str = "failure", at: float | None = None, attempt: int = 1) -> RunRecord:
    return RunRecord(repository="acme/shop", job=job, branch=branch, commit=commit, run_id=run_id, attempt=attempt,
                     conclusion=conclusion,  # type: ignore[arg-type]
                     recorded_at=at if at is not None else time.time(),
                     failures=[FailureRow(fingerprint=f, rule="pytest.failure", category="test", message=f"m {f[0]}")
                               for f in fps])


def test_counts_first_commit_branches_and_no_double_counting(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    assert store.record(_run("1", "c1", [FP_A], at=100.0))
    assert store.record(_run("2", "c2", [FP_A, FP_B], branch="feature", at=200.0))
    assert not store.record(_run("2", "c2", [FP_A, FP_B], branch="feature", at=300.0))  # the same job again
    top = store.recurring()
    assert [(r.fingerprint, r.count) for r in top] == [(FP_A, 2), (FP_B, 1)]
    a = top[0]
    assert (a.first_seen, a.last_seen, a.first_commit, a.branches) == (100.0, 200.0, "c1", ["feature", "main"])
    # A record that arrives late but happened earlier becomes the first sighting.
    store.record(_run("0", "c0", [FP_A], at=50.0))
    assert store.recurring(fingerprints=[FP_A])[0].first_commit == "c0"
    assert [r.run_id for r in store.rows(FP_B)] == ["2"]


def test_flake_rate_is_the_share_of_commits_where_the_job_also_passed(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    store.record(_run("1", "c1", [FP_A]))
    store.record(_run("2", "c2", [FP_A]))
    assert store.recurring()[0].flake_rate == 0.0
    store.record(_run("1", "c1", [], conclusion="success", attempt=2))  # the re-run passed
    assert store.recurring()[0].flake_rate == 0.5
    store.record(_run("3", "c2", [], conclusion="success", job="lint"))  # another job passing says nothing
    assert store.recurring()[0].flake_rate == 0.5
    # Passing first, failing later on the same commit counts too.
    store.record(_run("4", "c3", [], conclusion="success"))
    store.record(_run("5", "c3", [FP_A]))
    r = store.recurring()[0]
    assert (r.commits, r.flaky_commits) == (3, 2)


def test_prune_forgets_old_rows_and_rebuilds_the_summary(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    now = 1_000_000_000.0
    store.record(_run("1", "c1", [FP_A], at=now - 100 * 86_400))
    store.record(_run("2", "c2", [FP_A, FP_B], at=now - 86_400))
    store.record(_run("3", "c2", [], conclusion="success", at=now - 86_400, attempt=2))
    assert store.prune(90, now=now) == 1
    a = store.recurring(fingerprints=[FP_A])[0]
    assert (a.count, a.first_commit, a.flake_rate) == (1, "c2", 1.0)
    assert store.count() == 2
    assert store.prune_if_due(0, now=now + 10) == 0  # pruned a moment ago: not due
    assert store.prune_if_due(0, now=now + 2 * 86_400) == 2


def _writer(path: str, prefix: str, n: int) -> None:
    store = HistoryStore(Path(path))
    for i in range(n):
        store.record(_run(f"{prefix}{i}", f"c{i}", [FP_A, f"{prefix}{i:015d}"[-16:]]))


def test_two_writers_at_once_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "h.sqlite3"
    HistoryStore(path).count()  # created before the writers race
    ctx = multiprocessing.get_context("spawn")
    writers = [ctx.Process(target=_writer, args=(str(path), p, 60)) for p in ("x", "y")]
    for w in writers:
        w.start()
    for w in writers:
        w.join(60)
    assert [w.exitcode for w in writers] == [0, 0]
    store = HistoryStore(path)
    assert store.count() == 120
    assert store.recurring(fingerprints=[FP_A])[0].count == 120


def test_a_record_is_a_place_and_what_was_found_there() -> None:
    place = RunPlace(repository="acme/shop", workflow="CI", branch="main", commit="c" * 40, run_id="7", attempt=2,
                     url="https://github.com/acme/shop/actions/runs/7", job="\udcff-job")
    record = RunRecord.at(place, job="unit", source="https://github.com/acme/shop/actions/runs/7",
                          failures=[FailureRow(fingerprint=FP_A)])
    assert isinstance(record, RunPlace)
    assert (record.repository, record.workflow, record.branch, record.run_id, record.attempt, record.job) == (
        "acme/shop", "CI", "main", "7", 2, "unit")  # the place's fields, the job overridden
    assert record.key() == "run:acme/shop:7:2:unit"
    assert place.job == "\ufffd-job"  # a name that is not UTF-8 is storable as a place too
    assert {f.name for f in fields(RunPlace)} < {f.name for f in fields(RunRecord)}  # one definition of where


TABLES = {"diagnoses": "d", "failures": "f", "summary": "s", "branches": "b", "fp_commits": "c", "passes": "p",
          "meta": "m"}


def test_the_query_builder_takes_only_plain_table_names_and_known_markers() -> None:
    # The names are joined into the queries' text, so anything but an identifier is refused up front.
    with pytest.raises(ValueError, match="identifiers"):
        HistorySQL(param="?", **{**TABLES, "diagnoses": "d; DROP TABLE x"})
    with pytest.raises(ValueError, match="marker"):
        HistorySQL(param=":x", **TABLES)
    sql = HistorySQL(param="%s", **TABLES)
    seen: list[tuple[str, list[object]]] = []
    assert sql.rows(lambda q, a: seen.append((q, a)) or [], "fp", job="test", limit=3) == []
    assert seen[0][1] == ["fp", "test", 3] and seen[0][0].count("%s") == 3 and "?" not in seen[0][0]


class _Cursor:
    rowcount = 1

    def fetchone(self) -> tuple[int]:
        return (7,)

    def __iter__(self) -> Iterator[tuple[int]]:
        return iter([])


def test_writes_are_built_by_the_same_dialect_with_every_text_made_storable() -> None:
    """The writes go through the one builder too: the dialect's marker and names only, one argument per marker,
    and every text cleaned on the way in, even one set after the record was made."""
    sql = HistorySQL(param="%s", **TABLES)
    seen: list[tuple[str, list[object]]] = []

    def write(query: str, args: list[object]) -> _Cursor:
        seen.append((query, args))
        return _Cursor()

    run = _run("1", "c1", [FP_A], conclusion="success")
    run.job, run.failures[0].message = "\udcffjob", "nul\x00here"
    assert sql.insert(write, run)
    sql.prune(write, 0.0, 1.0)
    assert len(seen) > 8 and all("?" not in q and q.count("%s") == len(a) for q, a in seen)
    assert all(" diagnoses" not in q and " summary " not in q for q, _ in seen)  # only the dialect's names
    texts = [a for _, args in seen for a in args if isinstance(a, str)]
    assert "\ufffdjob" in texts and "nul\ufffdhere" in texts
    assert not any("\x00" in t or "\udcff" in t for t in texts)


def test_a_history_row_is_a_place_as_recorded(tmp_path: Path) -> None:
    # One definition of a run's place: a row read back is a RunPlace with its row id, workflow included.
    assert {f.name for f in fields(RunPlace)} < {f.name for f in fields(HistoryRow)}
    store = HistoryStore(tmp_path / "h.sqlite3")
    store.record(RunRecord.at(RunPlace(repository="acme/shop", workflow="CI", job="\udcfftest", commit="c1"),
                              run_id="9", failures=[FailureRow(fingerprint=FP_A)]))
    row = store.rows(FP_A)[0]
    assert isinstance(row, RunPlace)
    assert (row.workflow, row.job, row.run_id, row.attempt, row.conclusion) == (
        "CI", "\ufffdtest", "9", None, "failure")
    assert HistoryRow(id=1, recorded_at=0.0, branch="\udcfe").branch == "\ufffd"  # cleaned as every place is


def test_calls_inside_held_share_one_connection_closed_on_leaving(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[sqlite3.Connection] = []
    real = sqlite3.connect

    def connect(*args: object, **kwargs: object) -> sqlite3.Connection:
        opened.append(real(*args, **kwargs))  # type: ignore[arg-type]
        return opened[-1]

    monkeypatch.setattr(sqlite3, "connect", connect)
    store = HistoryStore(tmp_path / "h.sqlite3")
    with store.held():
        assert store.record(_run("1", "c1", [FP_A]))
        with store.held():  # nested: the same connection
            assert store.rows(FP_A)[0].run_id == "1"
        assert store.recurring()[0].count == 1
        store.prune_if_due(30)
        assert store.fingerprints_of(store.rows(FP_A)[0].id) == {FP_A}
    assert len(opened) == 1
    with pytest.raises(sqlite3.ProgrammingError):  # closed on leaving
        opened[0].execute("SELECT 1")
    assert store.count() == 1 and len(opened) == 2  # outside: a connection per call, as before


def test_a_write_that_fails_inside_held_is_rolled_back_and_the_connection_goes_on(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    with store.held():
        with pytest.raises(RuntimeError), store._write() as db:
            db.execute("INSERT INTO meta (name, value) VALUES ('x', 'y')")
            raise RuntimeError("interrupted")
        assert store.record(_run("1", "c1", [FP_A]))
    assert store.count() == 1
    with store._connect() as db:
        assert db.execute("SELECT COUNT(*) FROM meta WHERE name = 'x'").fetchone()[0] == 0
