"""The optional `failure_issues` mode of `github report`, against the loopback fake of the GitHub API: one issue
per failure of the default branch, created once, updated when the failure comes back, reopened when it was
closed, never duplicated; nothing on another branch or when the mode is off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from repopilot.app import Settings, keep_failure_issues, load_settings, report_github_run
from repopilot.ci import (
    ISSUE_LABEL,
    GitHubClient,
    Occurrence,
    ReportFailure,
    ReportLine,
    marked_fingerprint,
    next_issue_state,
    read_issue_state,
    render_failure_issue,
)
from repopilot.cli.main import main
from repopilot.core.sanitize import UNSAFE
from tests.fixtures.github.fake_runs import FakeGitHub, FakeJob, FakeRun, network_log, pytest_log
from tests.secret_samples import samples

MAIN, FEATURE = "b" * 40, "f" * 40


def _runs() -> list[FakeRun]:
    """Two pushes to main failing the same way (different days, paths, timings), one failing another way, and
    a pull request's run failing the same way."""
    return [FakeRun(1, "main", MAIN, [[FakeJob("tests", "failure", pytest_log("test_add", 1))]],
                    "2026-11-08T12:00:00Z"),
            FakeRun(2, "main", MAIN, [[FakeJob("tests", "failure", pytest_log("test_add", 2))]],
                    "2026-11-09T12:00:00Z"),
            FakeRun(3, "main", MAIN, [[FakeJob("fetch", "failure", network_log(3)),
                                       FakeJob("tests", "failure", pytest_log("test_add", 3))]],
                    "2026-11-10T12:00:00Z"),
            FakeRun(4, "feature", FEATURE, [[FakeJob("tests", "failure", pytest_log("test_add", 4))]],
                    "2026-11-11T12:00:00Z", pr=(5, "main"))]


@pytest.fixture
def fake() -> FakeGitHub:
    return FakeGitHub(runs=_runs())


def _settings(api: str, tmp_path: Path, *, on: bool = True) -> Settings:
    env = {"GITHUB_API_URL": api, "XDG_STATE_HOME": str(tmp_path / "state"), "REPOPILOT_CACHE_DIR":
           str(tmp_path / "cache"), "REPOPILOT_RUNS_DIR": str(tmp_path / "runs"),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "REPOPILOT_FAILURE_ISSUES": "true" if on else "false"}
    return load_settings(env, cwd=tmp_path)


def _report(fake: FakeGitHub, api: str, tmp_path: Path, run_id: int, *, on: bool = True) -> tuple[list[str], str]:
    """Diagnose run `run_id` as `github report` does and keep its issues; returns the issue calls made while
    keeping them (method and path) and what was skipped."""
    settings = _settings(api, tmp_path, on=on)
    found = report_github_run(f"https://github.com/acme/shop/actions/runs/{run_id}", settings, no_llm=True)
    before = len(fake.calls)
    kept = keep_failure_issues(found, settings)
    calls = [f"{m} {p.split('?')[0]}" for m, p in fake.calls[before:]]
    return calls, kept.skipped or ", ".join(f"#{i.number} {i.action}" for i in kept.issues)


def _issue_calls(calls: list[str]) -> list[str]:
    return [c for c in calls if "/issues" in c]


def test_created_once_then_updated_on_recurrence_never_duplicated(fake: FakeGitHub, tmp_path: Path) -> None:
    with fake as api:
        first, said = _report(fake, api, tmp_path, 1)
        assert said == "#1 created"
        # Opened, then looked for again: an older issue of the same failure would win (see the race below).
        assert _issue_calls(first) == ["GET /repos/acme/shop/issues", "POST /repos/acme/shop/issues",
                                       "GET /repos/acme/shop/issues"]
        issue = fake.issues[0]
        assert [x["name"] for x in issue["labels"]] == [ISSUE_LABEL]
        assert issue["title"].startswith("CI failure on main: test: ")
        state = read_issue_state(issue["body"])
        assert state is not None and state.count == 1 and state.runs == ["1"]
        fingerprint = marked_fingerprint(issue["body"])
        assert fingerprint is not None

        # The same failure on another day: the issue is updated, no second one is opened.
        again, said = _report(fake, api, tmp_path, 2)
        assert said == "#1 updated"
        assert _issue_calls(again) == ["GET /repos/acme/shop/issues", "PATCH /repos/acme/shop/issues/1"]
        assert len(fake.issues) == 1 and marked_fingerprint(fake.issues[0]["body"]) == fingerprint
        state = read_issue_state(fake.issues[0]["body"])
        assert state is not None and (state.count, state.runs, state.first_run) == (
            2, ["1", "2"], "https://github.com/acme/shop/actions/runs/1")
        assert "| seen | 2 times |" in fake.issues[0]["body"]

        # Replaying a run already counted changes nothing.
        replay, said = _report(fake, api, tmp_path, 2)
        assert said == "#1 unchanged"
        assert _issue_calls(replay) == ["GET /repos/acme/shop/issues"]
        assert read_issue_state(fake.issues[0]["body"]) == state


def test_a_new_failure_beside_a_known_one_gets_its_own_issue(fake: FakeGitHub, tmp_path: Path) -> None:
    with fake as api:
        _report(fake, api, tmp_path, 1)
        calls, said = _report(fake, api, tmp_path, 3)
    assert sorted(said.split(", ")) == ["#1 updated", "#2 created"]
    assert _issue_calls(calls).count("POST /repos/acme/shop/issues") == 1
    assert {marked_fingerprint(i["body"]) for i in fake.issues} == {
        marked_fingerprint(fake.issues[0]["body"]), marked_fingerprint(fake.issues[1]["body"])}
    assert fake.issues[1]["title"].startswith("CI failure on main: network: ")


def test_two_runs_opening_the_same_new_failure_at_once_leave_one_open_issue(
        fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run 2 lists the issues (none yet) and is about to open one when run 1, just as new, lists and opens its
    own first: run 2 opens a second issue, finds run 1's older one when it looks again, closes its own as a
    duplicate and counts its run in run 1's issue."""
    real_create = GitHubClient.create_issue
    raced: list[str] = []

    def create_after_the_other_run(self: GitHubClient, owner: str, repo: str, fields: dict[str, Any]) -> Any:
        if not raced:  # run 2's creation: run 1 runs through, from listing to opening, in between
            raced.append("run 1")
            raced.append(_report(fake, api, tmp_path / "other", 1)[1])
        return real_create(self, owner, repo, fields)

    with fake as api:
        found = report_github_run("https://github.com/acme/shop/actions/runs/2", _settings(api, tmp_path),
                                  no_llm=True)
        monkeypatch.setattr(GitHubClient, "create_issue", create_after_the_other_run)
        kept = keep_failure_issues(found, _settings(api, tmp_path))
    assert raced == ["run 1", "#1 created"]
    assert [(i.number, i.action) for i in kept.issues] == [(1, "updated")]
    first, second = fake.issues
    assert (first["state"], second["state"], second["state_reason"]) == ("open", "closed", "not_planned")
    assert marked_fingerprint(first["body"]) == marked_fingerprint(second["body"])
    state = read_issue_state(first["body"])
    assert state is not None and (state.count, sorted(state.runs)) == (2, ["1", "2"])
    assert fake.comments[2][0]["body"].startswith("Duplicate of #1")


def test_a_younger_open_duplicate_is_closed_by_the_next_run(fake: FakeGitHub, tmp_path: Path) -> None:
    """A listing that lagged let two issues of one failure stay open: the next run of it closes the younger."""
    with fake as api:
        _report(fake, api, tmp_path, 1)
        fake.issues.append({**fake.issues[0], "number": 2, "html_url": "https://github.com/acme/shop/issues/2"})
        calls, said = _report(fake, api, tmp_path, 2)
    assert said == "#1 updated"
    assert [i["state"] for i in fake.issues] == ["open", "closed"]
    assert _issue_calls(calls) == ["GET /repos/acme/shop/issues", "POST /repos/acme/shop/issues/2/comments",
                                   "PATCH /repos/acme/shop/issues/2", "PATCH /repos/acme/shop/issues/1"]


def test_found_beyond_the_first_page_of_issues(fake: FakeGitHub, tmp_path: Path) -> None:
    with fake as api:
        _report(fake, api, tmp_path, 1)
        for n in range(4):  # newer labelled issues of others push ours to page 3
            fake.issues.append({"number": 10 + n, "title": "other", "body": "not ours", "state": "open",
                                "labels": [{"name": ISSUE_LABEL}], "state_reason": None, "html_url": "x"})
        calls, said = _report(fake, api, tmp_path, 2)
    assert said == "#1 updated"
    assert _issue_calls(calls).count("GET /repos/acme/shop/issues") == 3
    assert len(fake.issues) == 5


def test_closed_then_recurring_is_reopened_with_a_comment(fake: FakeGitHub, tmp_path: Path) -> None:
    with fake as api:
        _report(fake, api, tmp_path, 1)
        fake.issues[0].update(state="closed", state_reason="completed")
        calls, said = _report(fake, api, tmp_path, 2)
    assert said == "#1 reopened"
    assert _issue_calls(calls) == ["GET /repos/acme/shop/issues", "PATCH /repos/acme/shop/issues/1",
                                   "POST /repos/acme/shop/issues/1/comments"]
    assert fake.issues[0]["state"] == "open"
    assert "https://github.com/acme/shop/actions/runs/2" in fake.comments[1][0]["body"]


def test_closed_as_not_planned_stays_closed_and_only_counts(fake: FakeGitHub, tmp_path: Path) -> None:
    with fake as api:
        _report(fake, api, tmp_path, 1)
        fake.issues[0].update(state="closed", state_reason="not_planned")
        calls, said = _report(fake, api, tmp_path, 2)
    assert said == "#1 kept closed"
    assert _issue_calls(calls) == ["GET /repos/acme/shop/issues", "PATCH /repos/acme/shop/issues/1"]
    assert fake.issues[0]["state"] == "closed" and not fake.comments
    state = read_issue_state(fake.issues[0]["body"])
    assert state is not None and state.count == 2


def test_nothing_for_a_pull_request_run(fake: FakeGitHub, tmp_path: Path) -> None:
    with fake as api:
        calls, said = _report(fake, api, tmp_path, 4)
    assert said == "a pull_request run, not of the default branch main"
    assert _issue_calls(calls) == [] and fake.issues == []


def test_nothing_on_another_branch(tmp_path: Path) -> None:
    fake = FakeGitHub(runs=_runs(), default_branch="trunk")
    with fake as api:
        calls, said = _report(fake, api, tmp_path, 1)
    assert said == "a run of main, not of the default branch trunk"
    assert _issue_calls(calls) == [] and fake.issues == []


def test_nothing_when_off(fake: FakeGitHub, tmp_path: Path) -> None:
    with fake as api:
        calls, said = _report(fake, api, tmp_path, 1, on=False)
    assert said == "the failure_issues mode is off"
    assert calls == [] and fake.issues == []


def test_the_cli_flag_and_the_action_variable_turn_it_on(fake: FakeGitHub, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    with fake as api:
        for name, value in {"GITHUB_API_URL": api, "XDG_STATE_HOME": str(tmp_path / "state"),
                            "REPOPILOT_CACHE_DIR": str(tmp_path / "cache"), "REPOPILOT_RUNS_DIR": str(tmp_path / "r"),
                            "XDG_CONFIG_HOME": str(tmp_path / "config")}.items():
            monkeypatch.setenv(name, value)
        for name in ("GITHUB_STEP_SUMMARY", "REPOPILOT_FAILURE_ISSUES", "GITHUB_EVENT_PATH", "REPOPILOT_RUN"):
            monkeypatch.delenv(name, raising=False)
        url = "https://github.com/acme/shop/actions/runs/1"
        assert main(["github", "report", url, "--no-annotations", "--summary-file", str(tmp_path / "s.md")]) == 0
        assert fake.issues == []  # off by default
        assert main(["github", "report", url, "--no-annotations", "--summary-file", str(tmp_path / "s.md"),
                     "--failure-issues"]) == 0
        assert "issue #1 created: https://github.com/acme/shop/issues/1" in capsys.readouterr().err
        monkeypatch.setenv("REPOPILOT_FAILURE_ISSUES", "true")  # what the Action's `failure-issues` input sets
        assert main(["github", "report", "https://github.com/acme/shop/actions/runs/2", "--no-annotations",
                     "--summary-file", str(tmp_path / "s.md")]) == 0
        assert "issue #1 updated" in capsys.readouterr().err
    assert len(fake.issues) == 1


def test_the_issue_text_is_sanitised_and_redacted() -> None:
    secret = next(s for kind, _, s in samples() if kind == "github-pat")
    failure = ReportFailure(rule="pytest-failed", category="test", message=f"boom \x1b[2K\u202e {secret}",
                            lines=[ReportLine(line=3, text=f"E  {secret} \x1b]52;c;aGk=\x07 ```")])
    occ = Occurrence(run_id="9", run_url="https://github.com/a/b/actions/runs/9", commit="c" * 40, branch="main",
                     at="2026-11-10T12:00:00Z", jobs=["te\x1bst"], failure=failure)
    title, body = render_failure_issue(occ, next_issue_state(None, occ))
    for text in (title, body):
        assert UNSAFE.search(text) is None
        assert secret not in text
    assert marked_fingerprint(body) == failure.fingerprint
    state = read_issue_state(body)
    assert state is not None and state.count == 1


def test_an_edited_state_starts_the_count_again() -> None:
    assert read_issue_state("<!-- repopilot:state={not json} -->") is None
    assert read_issue_state("no state here") is None
    failure = ReportFailure(rule="r", message="m")
    occ = Occurrence(run_id="1", run_url="https://github.com/a/b/actions/runs/1", branch="main", at="t", jobs=["j"],
                     failure=failure)
    assert next_issue_state(None, occ).count == 1
