"""Service mode keeps the failure history in PostgreSQL: the same answers as the CLI's SQLite file (the same
scenarios run on both), nothing lost when workers record at once, and the worker's diagnoses recorded there (a
second failure of the same kind is "seen 2 times", whichever worker diagnosed the first)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from repopilot.app import FailureHistory
from repopilot.ci import HistoryStore
from repopilot.service import PostgresHistory, prepare_database
from tests.ci.test_failure_history import FP_A, FP_B, _run
from tests.service.conftest import Service

Factory = Callable[[], FailureHistory]


@pytest.fixture(params=["sqlite", "postgres"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Factory:
    if request.param == "sqlite":
        return lambda: HistoryStore(tmp_path / "h.sqlite3")
    url = request.getfixturevalue("database")
    prepare_database(url)
    return lambda: PostgresHistory(url)


def test_counts_first_commit_branches_and_no_double_counting(make_store: Factory) -> None:
    store = make_store()
    assert store.record_many([_run("1", "c1", [FP_A], at=100.0)]) == 1
    assert store.record_many([_run("2", "c2", [FP_A, FP_B], branch="feature", at=200.0),
                              _run("2", "c2", [FP_A, FP_B], branch="feature", at=300.0)]) == 1  # once
    top = store.recurring()
    assert [(r.fingerprint, r.count) for r in top] == [(FP_A, 2), (FP_B, 1)]
    assert (top[0].first_seen, top[0].last_seen, top[0].first_commit, top[0].branches) == \
        (100.0, 200.0, "c1", ["feature", "main"])
    store.record_many([_run("0", "c0", [FP_A], at=50.0)])  # late, but earlier: the first sighting
    assert store.recurring(fingerprints=[FP_B, FP_A])[1].first_commit == "c0"
    assert [r.run_id for r in store.rows(FP_B)] == ["2"]
    row = store.rows(repository="acme/shop", job="test", commit="c2")[0]
    assert store.fingerprints_of(row.id) == {FP_A, FP_B}


def test_flake_rate_is_the_share_of_commits_where_the_job_also_passed(make_store: Factory) -> None:
    store = make_store()
    store.record_many([_run("1", "c1", [FP_A]), _run("2", "c2", [FP_A])])
    assert store.recurring()[0].flake_rate == 0.0
    store.record_many([_run("1", "c1", [], conclusion="success", attempt=2)])
    assert store.recurring()[0].flake_rate == 0.5
    store.record_many([_run("4", "c3", [], conclusion="success"), _run("5", "c3", [FP_A])])
    r = store.recurring()[0]
    assert (r.commits, r.flaky_commits) == (3, 2)


def test_prune_forgets_old_rows_and_rebuilds_the_summary(make_store: Factory) -> None:
    store = make_store()
    now = 1_000_000_000.0
    store.record_many([_run("1", "c1", [FP_A], at=now - 100 * 86_400), _run("2", "c2", [FP_A, FP_B],
                       at=now - 86_400), _run("3", "c2", [], conclusion="success", at=now - 86_400, attempt=2)])
    assert store.prune(90, now=now) == 1
    a = store.recurring(fingerprints=[FP_A])[0]
    assert (a.count, a.first_commit, a.flake_rate, a.branches) == (1, "c2", 1.0, ["main"])
    assert store.count() == 2
    assert store.prune_if_due(0, now=now + 10) == 0
    assert store.prune_if_due(0, now=now + 2 * 86_400) == 2



def test_asked_fingerprints_come_back_in_the_order_asked_each_once(make_store: Factory) -> None:
    """Both stores read through the one query builder (ci/history_sql.py): the same answers to the same asks."""
    store = make_store()
    store.record_many([_run("1", "c1", [FP_A, FP_B]), _run("2", "c2", [FP_A], branch="dev")])
    asked = store.recurring(fingerprints=[FP_B, "f" * 16, FP_A, FP_B])
    assert [(r.fingerprint, r.count, r.branches) for r in asked] == [(FP_B, 1, ["main"]), (FP_A, 2, ["dev", "main"])]
    assert store.recurring(fingerprints=[]) == []
    assert [r.run_id for r in store.rows(FP_A, branch="dev")] == ["2"]
    assert [r.run_id for r in store.rows(FP_A, limit=1)] == ["2"]
    assert store.rows(FP_B, commit="c2") == []
    assert store.fingerprints_of(10_000) == set()

def test_texts_neither_store_can_hold_as_they_are_are_stored_alike(make_store: Factory) -> None:
    """A file name that is not UTF-8 (lone surrogates) and a NUL from a log line: PostgreSQL refuses both, SQLite
    the first; each store keeps them as U+FFFD, however the record came to hold them."""
    store = make_store()
    run = _run("1", "c1", [FP_A], branch="ma\udcffin")
    run.job, run.failures[0].message = "t\udcffest", "broken\x00log"
    assert store.record_many([run]) == 1
    row = store.rows(FP_A)[0]
    assert (row.job, row.branch) == ("t\ufffdest", "ma\ufffdin")
    a = store.recurring()[0]
    assert (a.message, a.branches) == ("broken\ufffdlog", ["ma\ufffdin"])


def test_concurrent_workers_lose_nothing(database: str) -> None:
    """Four writers at once, two of them recording passes of the commits the others record failures on: every
    diagnosis is counted, and every failing commit that also passed is counted flaky (whichever came first)."""
    prepare_database(database)
    errors: list[BaseException] = []

    def write(kind: str, prefix: str) -> None:
        store = PostgresHistory(database)  # each worker its own connections
        try:
            for i in range(25):
                if kind == "fail":
                    store.record_many([_run(f"{prefix}{i}", f"c{i}", [FP_A, f"{prefix}{i:015d}"[-16:]])])
                else:
                    store.record_many([_run(f"{prefix}{i}", f"c{i}", [], conclusion="success")])
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=write, args=a) for a in (("fail", "x"), ("fail", "y"), ("pass", "p"),
                                                                 ("pass", "q"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    store = PostgresHistory(database)
    assert store.count() == 100
    a = store.recurring(fingerprints=[FP_A])[0]
    assert (a.count, a.commits, a.flaky_commits) == (50, 25, 25)


REPO = "octo/demo"


def test_the_workers_record_into_postgresql_not_into_a_file(service: Service, tmp_path: Path) -> None:
    service.github.add_repo(REPO, 7)
    for run_id in (1, 2):  # the same failure in two runs of two pull requests
        payload = service.github.add_run(REPO, run_id, head_sha=f"{run_id:x}" * 40, pull_request=10 + run_id)
        assert service.deliver("workflow_run", payload).status_code == 202
        service.work()
    history = PostgresHistory(service.settings.database_url)
    top = history.recurring()
    assert top and top[0].count == 2
    assert sorted({r.run_id for r in history.rows(top[0].fingerprint)}) == ["1", "2"]
    # The second diagnosis knew the first: its comment says so.
    assert "seen 2 times" in service.github.comments_on(REPO, 12)[0]["body"]
    path = service.settings.base.history_path()
    assert path is None or not path.exists()
