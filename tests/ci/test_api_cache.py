"""GitHub API answers kept between processes (ci/api_cache.py): a second diagnosis of the same run URL asks
again only with the answers' ETags (304s cost no rate limit) and does not ask at all for a finished attempt's
jobs; a changed answer (the run re-run) is read anew; one token's answers never serve another; the cache stays
within its bound."""

from __future__ import annotations

from pathlib import Path

from repopilot.app import diagnose, load_settings, open_logs
from repopilot.ci.api_cache import ApiCache, CachedAnswer, is_final
from tests.fixtures.github.fake_runs import FakeGitHub, FakeJob, FakeRun, diagnose_repeatedly, pytest_log, scenarios

SCENARIOS = {s.name: s for s in scenarios()}


def test_a_second_diagnosis_asks_with_etags_and_skips_finished_attempts(tmp_path: Path) -> None:
    scenario = SCENARIOS["pytest: inherited (main fails the same way)"]
    (_, first, first_304), (reports, second, second_304) = diagnose_repeatedly(scenario, tmp_path, times=2)
    assert first_304 == 0
    assert second < first  # the attempt's jobs were not asked for again
    assert second_304 >= 3  # the run, the repository, the base branch's runs: unchanged, free
    assert second - second_304 == 1  # what the rate limit counts: the job's log, downloaded again
    assert [f.attribution.label for r in reports for f in r.identifying_failures() if f.attribution] == \
        ["inherited"]
    assert any((tmp_path / "cache" / "github-api").glob("*.json"))


def _diagnose(fake: FakeGitHub, api: str, state: Path, url: str) -> str:
    env = {"GITHUB_API_URL": api, "XDG_STATE_HOME": str(state / "state"), "REPOPILOT_CACHE_DIR": str(state / "c"),
           "REPOPILOT_RUNS_DIR": str(state / "runs"), "XDG_CONFIG_HOME": str(state / "config")}
    settings = load_settings(env, cwd=state)
    reports = diagnose(open_logs(url, settings), settings, no_llm=True)
    labels = [f.attribution.label for r in reports for f in r.identifying_failures() if f.attribution]
    assert len(labels) == 1
    return labels[0]


def test_a_run_re_run_after_it_was_kept_is_read_anew(tmp_path: Path) -> None:
    pr = FakeRun(2, "feature", "f" * 40, [[FakeJob("tests", "failure", pytest_log("test_add", 1))]],
                 "2026-11-10T12:00:00Z", pr=(5, "main"))
    fake = FakeGitHub(runs=[FakeRun(1, "main", "b" * 40, [[FakeJob("tests", "success", "ok\n")]],
                                    "2026-11-09T12:00:00Z"), pr])
    url = "https://github.com/acme/shop/actions/runs/2/attempts/1"
    with fake as api:
        assert _diagnose(fake, api, tmp_path, url) == "new"
        pr.attempts.append([FakeJob("tests", "success", "ok\n")])  # re-run: the second attempt passes
        before = len(fake.calls)
        assert _diagnose(fake, api, tmp_path, url) == "flaky"
    asked = [path for _, path in fake.calls[before:]]
    assert "/repos/acme/shop/actions/runs/2/attempts/2/jobs" in [p.split("?")[0] for p in asked]


def test_one_token_s_answers_never_serve_another(tmp_path: Path) -> None:
    url = "https://api.github.com/repos/a/b/actions/jobs/1"
    ApiCache(tmp_path, "https://api.github.com token-a").put(url, CachedAnswer(body=b"{}", final=True))
    assert ApiCache(tmp_path, "https://api.github.com token-a").get(url) is not None
    assert ApiCache(tmp_path, "https://api.github.com token-b").get(url) is None
    assert not any("token" in p.read_text() for p in tmp_path.glob("*.json"))  # no token is written


def test_unreadable_entries_are_misses(tmp_path: Path) -> None:
    cache = ApiCache(tmp_path, "who")
    cache.put("u", CachedAnswer(body=b"[]", etag='"x"'))
    for path in tmp_path.glob("*.json"):
        path.write_text("{not json")
    assert cache.get("u") is None


def test_the_cache_stays_within_its_bound(tmp_path: Path) -> None:
    cache = ApiCache(tmp_path, "who", max_bytes=20_000)
    for n in range(100):
        cache.put(f"u{n}", CachedAnswer(body=b"x" * 900, etag=f'"{n}"'))
    assert sum(p.stat().st_size for p in tmp_path.glob("*.json")) <= 20_000
    assert cache.get("u99") is not None and cache.get("u0") is None  # the oldest went first
    assert not list(tmp_path.glob(".*.tmp"))


def test_only_finished_jobs_are_final() -> None:
    done = {"status": "completed", "conclusion": "failure"}
    assert is_final("/repos/a/b/actions/runs/1/attempts/1/jobs", {"jobs": [done, done]})
    assert not is_final("/repos/a/b/actions/runs/1/attempts/1/jobs", {"jobs": [done, {"status": "in_progress"}]})
    assert is_final("/repos/a/b/actions/jobs/7", done)
    assert not is_final("/repos/a/b/actions/runs/1/jobs", {"jobs": [done]})  # the latest attempt: a re-run moves it
    assert not is_final("/repos/a/b/actions/runs/1", {"status": "completed"})  # a run can be re-run
