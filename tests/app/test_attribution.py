"""Attribution against a loopback fake of the GitHub API: NEW, INHERITED, FLAKY, INFRA and "not enough
evidence", each with the evidence that decided it; offline, the local history answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repopilot.cli.main import main
from tests.fixtures.github.fake_runs import FakeGitHub, attribute_scenario, check_labels, scenarios

PICKED = ("pytest: new (main passes)", "go: inherited (main fails the same way)", "pytest: flaky (the re-run passed)",
          "pytest: not enough evidence (main's log is gone)", "go: push to main, already failing",
          "pytest: a cancelled main run is skipped", "mixture: new, inherited and infra in one run",
          "mixture: a flake beside a new failure")
SCENARIOS = {s.name: s for s in scenarios()}


def test_there_are_at_least_thirty_recorded_histories() -> None:
    assert len(SCENARIOS) >= 30
    assert {label for s in SCENARIOS.values() for label in s.expected.values()} == {
        "new", "inherited", "flaky", "infra", "unknown"}


@pytest.mark.parametrize("name", PICKED)
def test_each_failure_gets_the_right_label_with_evidence(name: str, tmp_path: Path) -> None:
    scenario = SCENARIOS[name]
    reports, calls = attribute_scenario(scenario, tmp_path)
    assert check_labels(scenario, reports) == []
    assert 3 <= calls <= 12  # a handful of API calls per run


def test_inherited_names_the_base_job_and_new_names_the_base_run(tmp_path: Path) -> None:
    reports, _ = attribute_scenario(SCENARIOS["mixture: new, inherited and infra in one run"], tmp_path)
    by_job = {r.job: r.identifying_failures()[0].attribution for r in reports}
    assert by_job["go"] is not None and by_job["go"].evidence[0].url == \
        "https://github.com/acme/shop/actions/runs/1/job/1101"
    assert by_job["unit"] is not None and by_job["unit"].evidence[0].url == \
        "https://github.com/acme/shop/actions/runs/1"
    assert reports[0].commit == "f" * 40 and reports[0].branch == "feature"


def test_a_first_time_user_sees_whose_failure_it_is(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = SCENARIOS["go: inherited (main fails the same way)"]
    with FakeGitHub(runs=scenario.runs) as api:
        monkeypatch.setenv("GITHUB_API_URL", api)
        assert main(["diagnose", scenario.url, "--no-llm"]) == 0
    text = capsys.readouterr().out
    assert "INHERITED: the latest completed run on main fails with the same fingerprint" in text
    assert "evidence: https://github.com/acme/shop/actions/runs/1/job/1100" in text


def test_offline_the_history_answers(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = SCENARIOS["go: inherited (main fails the same way)"]
    with FakeGitHub(runs=scenario.runs) as api:  # online once: main's failure is recorded
        monkeypatch.setenv("GITHUB_API_URL", api)
        assert main(["diagnose", scenario.url, "--no-llm", "--format", "json"]) == 0
        capsys.readouterr()
        logs = tmp_path / "logs"
        assert main(["github", "logs", scenario.url, "--out", str(logs)]) == 0
        capsys.readouterr()
    # Later, in the job itself, no API: the log file and the Actions environment.
    monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:9")  # nothing listens there
    for name, value in {"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "acme/shop", "GITHUB_JOB": "go-tests",
                        "GITHUB_SHA": "f" * 40, "GITHUB_BASE_REF": "main", "GITHUB_RUN_ID": "77"}.items():
        monkeypatch.setenv(name, value)
    assert main(["diagnose", str(next(logs.glob("*.log"))), "--no-llm", "--format", "json"]) == 0
    failure = json.loads(capsys.readouterr().out)["failures"][0]
    assert failure["attribution"]["label"] == "inherited"
    assert failure["attribution"]["evidence"][0]["kind"] == "history"


def test_without_any_evidence_it_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "ci.log"
    log.write_text(SCENARIOS["go: new (main passes)"].runs[1].attempts[0][0].log or "")
    assert main(["diagnose", str(log), "--no-llm"]) == 0
    assert "NOT ENOUGH EVIDENCE" in capsys.readouterr().out


def test_the_job_summary_groups_failures_by_attribution_new_first(tmp_path: Path) -> None:
    from repopilot.ci import RENDERERS

    reports, _ = attribute_scenario(SCENARIOS["mixture: new, inherited and infra in one run"], tmp_path)
    markdown = RENDERERS["markdown"](reports)
    new = markdown.index("**NEW: most likely caused by this change** (1)")
    infra = markdown.index("**INFRA: the runner or the network failed, not the code** (1)")
    inherited = markdown.index("**INHERITED: the base branch already fails this way** (1)")
    assert new < infra < inherited < markdown.index("### RepoPilot: `")
    assert "(https://github.com/acme/shop/actions/runs/1/job/1101)" in markdown[inherited:]
