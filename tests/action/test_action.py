"""The GitHub Action: action.yml's wiring and `repopilot github report`, against the loopback GitHub API with a
fake GITHUB_* environment."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

import repopilot.ci
from repopilot.app import COMMENT_MARKER, DiagnosisReport, LogInput, github_report, load_settings, resolve_run_url
from repopilot.cli.main import app, main
from repopilot.core import GitHubAPIError
from repopilot.providers import ScriptedModel
from tests.fixtures.github.fake_github import OWNER, REPO, RUN_ID, TOKEN, FakeGitHub, github

__all__ = ["github"]

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
# Both halves of the other branch's work: the engine and the `diagnose` command with its formats.
DIAGNOSE_AVAILABLE = hasattr(repopilot.ci, "diagnose_source") and "diagnose" in typer.main.get_group(app).commands
needs_diagnose = pytest.mark.skipif(not DIAGNOSE_AVAILABLE, reason="`repopilot diagnose` is not on this branch yet")

FAKE_MARKDOWN = "## RepoPilot diagnosis\n\n"
FAKE_ANNOTATION = "::error file=src/app.py,line=3,title=lint::F401 `os` imported but unused\n"


# -- a small reader for action.yml (no YAML library is a dependency) -------------------------------------------

def _action() -> dict[str, Any]:
    """inputs {name: default} and steps [{name, env, run}] from action.yml, by its fixed indentation."""
    lines = ACTION.read_text().splitlines()
    inputs: dict[str, str] = {}
    steps: list[dict[str, Any]] = []
    section = current_input = None
    block: list[str] | None = None
    for line in lines:
        if block is not None:
            if line.startswith("        ") or not line.strip():
                block.append(line[8:])
                continue
            block = None
        if re.match(r"^\S", line):
            section = line.split(":")[0]
            continue
        if section == "inputs":
            if m := re.match(r"^  ([\w-]+):$", line):
                current_input = m.group(1)
            elif (m := re.match(r"^    default: (.*)$", line)) and current_input:
                inputs[current_input] = m.group(1).strip().strip("'")
        elif section == "runs":
            if m := re.match(r"^    - name: (.*)$", line):
                steps.append({"name": m.group(1), "env": {}, "run": "", "shell": None})
            elif m := re.match(r"^        ([A-Z_]+): (.*)$", line):
                steps[-1]["env"][m.group(1)] = m.group(2)
            elif m := re.match(r"^      shell: (.*)$", line):
                steps[-1]["shell"] = m.group(1)
            elif re.match(r"^      run: \|$", line):
                block = []
                steps[-1]["run_lines"] = block
            elif m := re.match(r"^\s+using: (.*)$", line):
                steps.append({"using": m.group(1)})
    for step in steps:
        step["run"] = "\n".join(step.pop("run_lines", [])).strip() + "\n"
    return {"inputs": inputs, "steps": [s for s in steps if "name" in s],
            "using": [s["using"] for s in steps if "using" in s]}


def _evaluate(value: str, inputs: dict[str, str]) -> str:
    """The `${{ inputs.a || inputs.b }}` expressions action.yml uses, evaluated like the runner does."""
    match = re.fullmatch(r"\$\{\{\s*(.*?)\s*\}\}", value)
    if not match:
        return value
    for term in match.group(1).split("||"):
        name = term.strip().removeprefix("inputs.")
        assert name in inputs, f"action.yml uses an unknown input {name!r}"
        if inputs[name]:
            return inputs[name]
    return ""


def test_action_yml_is_a_composite_action_with_the_documented_inputs() -> None:
    action = _action()
    assert action["using"] == ["composite"]
    assert action["inputs"]["github-token"] == "${{ github.token }}"
    assert action["inputs"]["run-id"] == "${{ github.event.workflow_run.id }}"
    assert action["inputs"]["comment-on-pr"] == "false"
    assert action["inputs"]["failure-issues"] == "false"
    assert action["inputs"]["model"] == ""
    install, diagnose = action["steps"]
    assert '-m pip install' in install["run"] and '"$GITHUB_ACTION_PATH"' in install["run"]
    assert diagnose["run"].strip().endswith("repopilot\" github report")
    assert diagnose["env"]["GITHUB_TOKEN"] == "${{ inputs.github-token }}"
    for step in action["steps"]:
        assert step["shell"] == "bash"
        # Inputs travel through env only: an expression inside a script would be shell injection.
        assert "${{" not in step["run"], step["name"]


def test_action_yml_has_no_plain_scalar_that_yaml_would_misread() -> None:
    # `key: text with: colon` or `key: text #comment` is not what it looks like in YAML; quote or fold instead.
    for number, line in enumerate(ACTION.read_text().splitlines(), 1):
        match = re.match(r"^\s*(?:- )?[\w-]+: (?![>|'\"]|\$\{\{)(.*)$", line)
        if match:
            assert ": " not in match.group(1) and " #" not in match.group(1), f"action.yml:{number}: {line}"


def test_action_yml_and_documented_workflows_parse_as_yaml() -> None:
    yaml = pytest.importorskip("yaml")
    data = yaml.safe_load(ACTION.read_text())
    mine = _action()
    assert {name: str(spec.get("default", "")) for name, spec in data["inputs"].items()} == mine["inputs"]
    assert [step["run"] for step in data["runs"]["steps"]] == [step["run"] for step in mine["steps"]]
    assert [step["env"] for step in data["runs"]["steps"]] == [step["env"] for step in mine["steps"]]
    doc = (ROOT / "docs" / "github-action.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", doc, re.S)
    assert blocks
    workflow = yaml.safe_load(blocks[0])
    trigger = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true; GitHub does not
    assert trigger["workflow_run"]["types"] == ["completed"]
    assert "conclusion == 'failure'" in workflow["jobs"]["diagnose"]["if"]
    for block in blocks[1:]:
        yaml.safe_load(block)


# -- `repopilot github report` with the diagnosis stubbed (runs on every branch) --------------------------------

@pytest.fixture
def actions_env(github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The variables a runner sets, pointing at the fake API; returns the step-summary file."""
    summary = tmp_path / "step_summary.md"
    summary.write_text("# earlier step\n")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"action": "completed", "workflow_run": {
        "id": RUN_ID, "html_url": github.run_url, "conclusion": "failure", "pull_requests": []}}))
    for name, value in {"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": f"{OWNER}/{REPO}",
                        "GITHUB_SERVER_URL": "https://github.com", "GITHUB_API_URL": github.url,
                        "GITHUB_TOKEN": TOKEN, "GITHUB_STEP_SUMMARY": str(summary),
                        "GITHUB_EVENT_NAME": "workflow_run", "GITHUB_EVENT_PATH": str(event),
                        "GITHUB_RUN_ID": "1"}.items():
        monkeypatch.setenv(name, value)
    return summary


@pytest.fixture
def fake_diagnose(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Replace the in-process diagnosis with one that only records the logs it got (downloaded the real way), and
    the renderers with ones that say which logs they were given."""
    calls: list[tuple[str, str]] = []
    seen: list[LogInput] = []

    def diagnose(inputs: list[LogInput], settings: Any, **kwargs: Any) -> list[DiagnosisReport]:
        calls.append(("diagnose", ",".join(str(i.job) for i in inputs)))
        seen[:] = inputs
        return [DiagnosisReport(job=i.job, source=i.source) for i in inputs]

    def markdown(reports: list[DiagnosisReport]) -> str:
        calls.append(("render", "markdown"))
        return FAKE_MARKDOWN + "".join(f"- **{i.job}** failed in step *{i.failed_step}*\n" for i in seen)

    def annotations(reports: list[DiagnosisReport]) -> str:
        calls.append(("render", "github"))
        return FAKE_ANNOTATION

    monkeypatch.setattr(github_report, "diagnose", diagnose)
    monkeypatch.setattr(github_report, "RENDERERS", {"markdown": markdown, "github": annotations})
    return calls


def test_report_writes_summary_annotations_and_pr_comment(github: FakeGitHub, actions_env: Path,
                                                         fake_diagnose: list[tuple[str, str]],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    github.pull_requests = [12]
    code = main(["github", "report", "--comment-on-pr"])
    out, err = capsys.readouterr()

    assert code == 0, err
    # The run came from the workflow_run event payload.
    # One diagnosis of both failed jobs' logs, rendered twice.
    assert fake_diagnose == [("diagnose", "test (3.12),lint"), ("render", "markdown"), ("render", "github")]
    summary = actions_env.read_text()
    assert summary.startswith("# earlier step\n")  # appended, never overwritten
    assert "- **test (3.12)** failed in step *Run tests*\n- **lint** failed in step *Ruff*" in summary
    assert out == FAKE_ANNOTATION
    assert github.comments == [{"id": 1, "number": 12,
                                "body": f"{COMMENT_MARKER}\n" + summary.split("\n", 1)[1].rstrip("\n")
                                + "\n"}]
    # One download per failed job.
    assert len(github.paths("/blob/")) == 2
    assert TOKEN not in out + err + summary


def test_report_keeps_one_comment_per_pull_request(github: FakeGitHub, actions_env: Path,
                                                   fake_diagnose: list[tuple[str, str]],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    github.pull_requests = [12]
    github.comments = [{"id": 1, "number": 12, "body": "Looks good to me"}]
    assert main(["github", "report", "--comment-on-pr"]) == 0
    assert main(["github", "report", "--comment-on-pr"]) == 0
    err = capsys.readouterr().err
    assert "commented on #12" in err and "updated the comment on #12" in err
    assert [c["id"] for c in github.comments] == [1, 2]
    assert github.comments[1]["edits"] == 1 and github.comments[1]["body"].startswith(COMMENT_MARKER)


def test_report_without_a_pull_request_skips_the_comment(github: FakeGitHub, actions_env: Path,
                                                         fake_diagnose: list[tuple[str, str]],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["github", "report", "--comment-on-pr"])
    _, err = capsys.readouterr()
    assert code == 0
    assert "no comment posted" in err
    assert github.comments == [] and not [r for r in github.requests if r.method == "POST"]


def test_report_comment_is_off_by_default(github: FakeGitHub, actions_env: Path,
                                          fake_diagnose: list[tuple[str, str]]) -> None:
    github.pull_requests = [12]
    assert main(["github", "report"]) == 0
    assert github.comments == []
    assert f"/repos/{OWNER}/{REPO}/actions/runs/{RUN_ID}" not in github.paths()


def test_report_on_a_run_without_failures_says_so_and_succeeds(github: FakeGitHub, actions_env: Path,
                                                               fake_diagnose: list[tuple[str, str]]) -> None:
    for job in github.jobs:
        job["conclusion"] = "success"
    assert main(["github", "report"]) == 0
    assert "Nothing to diagnose" in actions_env.read_text()
    assert fake_diagnose == []


def test_report_without_summary_file_prints_markdown(github: FakeGitHub, actions_env: Path,
                                                     fake_diagnose: list[tuple[str, str]],
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    assert main(["github", "report", "--no-annotations"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(FAKE_MARKDOWN) and "::error" not in out


def test_report_keeps_the_summary_under_the_runners_limit(github: FakeGitHub, actions_env: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(github_report, "diagnose", lambda inputs, settings, **kw: [])
    monkeypatch.setattr(github_report, "RENDERERS", {"markdown": lambda reports: "é" * 2_000_000,
                                                     "github": lambda reports: ""})
    assert main(["github", "report"]) == 0
    summary = actions_env.read_bytes()
    assert 1_000_000 < len(summary) <= 1024 * 1024
    assert summary.decode().endswith("_(report truncated to fit the job summary limit)_\n\n")


def test_report_forwards_a_failed_diagnosis_exit_code_redacted(github: FakeGitHub, actions_env: Path,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    def failing(inputs: list[LogInput], settings: Any, **kwargs: Any) -> list[DiagnosisReport]:
        raise GitHubAPIError(f"GitHub API failed with {TOKEN}")

    monkeypatch.setattr(github_report, "diagnose", failing)
    code = main(["github", "report"])
    _, err = capsys.readouterr()
    assert code == 4
    assert "GitHub API failed with [REDACTED]" in err and TOKEN not in err
    assert actions_env.read_text().endswith("The diagnosis failed: GitHub API failed with [REDACTED]\n\n")


def test_report_api_failure_exits_4(github: FakeGitHub, actions_env: Path, fake_diagnose: list[tuple[str, str]],
                                    capsys: pytest.CaptureFixture[str]) -> None:
    github.fail(r"/jobs$", 503, times=99)
    assert main(["github", "report"]) == 4
    assert "gave up after 4 attempts" in capsys.readouterr().err


# -- which run ---------------------------------------------------------------------------------------------------

def test_run_url_resolution(actions_env: Path, monkeypatch: pytest.MonkeyPatch, github: FakeGitHub) -> None:
    def resolve(run: str) -> str:
        return resolve_run_url(run, load_settings(os.environ))

    assert resolve("") == github.run_url  # the workflow_run payload
    assert resolve("77") == f"https://github.com/{OWNER}/{REPO}/actions/runs/77"
    assert resolve("https://github.com/a/b/actions/runs/5/job/6") == "https://github.com/a/b/actions/runs/5/job/6"
    monkeypatch.delenv("GITHUB_EVENT_PATH")
    assert resolve("") == f"https://github.com/{OWNER}/{REPO}/actions/runs/1"  # the current run
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://ghe.example.com/")
    assert resolve("9") == f"https://ghe.example.com/{OWNER}/{REPO}/actions/runs/9"


def test_no_run_anywhere_is_a_usage_error(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("GITHUB_EVENT_PATH", "GITHUB_RUN_ID", "GITHUB_REPOSITORY", "REPOPILOT_RUN"):
        monkeypatch.delenv(name, raising=False)
    assert main(["github", "report"]) == 2
    assert "no run to report on" in capsys.readouterr().err
    assert main(["github", "report", "12"]) == 2
    assert "needs GITHUB_REPOSITORY" in capsys.readouterr().err


def test_unreadable_event_payload_is_an_input_error(actions_env: Path, monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(bad))
    assert main(["github", "report"]) == 2
    assert "unreadable event payload" in capsys.readouterr().err


# -- the action's own step, run by bash the way the runner runs it --------------------------------------------

def _run_action_step(github: FakeGitHub, summary: Path, tmp_path: Path, inputs: dict[str, str]
                     ) -> subprocess.CompletedProcess[str]:
    action = _action()
    values = {**{k: v for k, v in action["inputs"].items() if "${{" not in v}, **inputs}
    values.setdefault("github-token", TOKEN)
    values.setdefault("run-id", str(RUN_ID))  # what ${{ github.event.workflow_run.id }} gives
    # The install step's result, without reinstalling: the venv's scripts are this test's interpreter.
    runner_temp = tmp_path / "runner_temp"
    bin_dir = runner_temp / "repopilot-venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "repopilot").write_text(f"#!/bin/sh\nexec {sys.executable} -m repopilot.cli.main \"$@\"\n")
    (bin_dir / "repopilot").chmod(0o755)
    step = action["steps"][1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "REPOPILOT_"))}
    env.update({"RUNNER_TEMP": str(runner_temp), "GITHUB_ACTION_PATH": str(ROOT), "GITHUB_API_URL": github.url,
                "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": f"{OWNER}/{REPO}",
                "GITHUB_STEP_SUMMARY": str(summary), "PYTHONPATH": str(ROOT)})
    env.update({name: _evaluate(value, values) for name, value in step["env"].items()})
    return subprocess.run(["bash", "-e", "-c", step["run"]], env=env, capture_output=True, text=True, timeout=120,
                          check=False)


def test_action_step_on_a_green_run_reports_nothing_to_diagnose(github: FakeGitHub, tmp_path: Path) -> None:
    for job in github.jobs:
        job["conclusion"] = "success"
    summary = tmp_path / "summary.md"
    done = _run_action_step(github, summary, tmp_path, {"comment-on-pr": "true"})
    assert done.returncode == 0, done.stderr
    assert "Nothing to diagnose" in summary.read_text()
    # The token from the input reached the API (every call authenticated, none refused).
    assert github.requests and all(r.headers.get("authorization") == f"Bearer {TOKEN}" for r in github.requests)
    assert TOKEN not in done.stdout + done.stderr


@needs_diagnose
def test_action_step_end_to_end(github: FakeGitHub, tmp_path: Path) -> None:
    github.pull_requests = [12]
    summary = tmp_path / "summary.md"
    done = _run_action_step(github, summary, tmp_path, {"comment-on-pr": "true"})

    assert done.returncode == 0, done.stderr
    report = summary.read_text()
    assert report.strip(), "the job summary got no report"
    assert "::error" in done.stdout
    assert len(github.comments) == 1 and github.comments[0]["number"] == 12
    body = github.comments[0]["body"]
    assert body.startswith(COMMENT_MARKER) and report.strip() in body
    assert len(github.paths("/blob/")) == 2  # logs downloaded once for both formats
    assert TOKEN not in done.stdout + done.stderr + report


# -- one diagnosis per log ---------------------------------------------------------------------------------------

def test_report_diagnoses_each_log_once_in_process(github: FakeGitHub, actions_env: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The real diagnosis, counted: one scan and at most one model call per failed job's log, one trace, however
    many formats are rendered (summary, annotations, PR comment)."""
    from repopilot.ci.scanner import Scanner
    from repopilot.core import list_traces

    scans: list[int] = []
    real_scan = Scanner.scan

    def counting_scan(self: Scanner, stream: Any, **kwargs: Any) -> Any:
        scans.append(1)
        return real_scan(self, stream, **kwargs)

    monkeypatch.setattr(Scanner, "scan", counting_scan)
    replies = [{"content": json.dumps({"category": "lint", "error_lines": [2], "summary": "unused import"})}] * 5
    model = ScriptedModel(replies)
    monkeypatch.setattr(github_report, "diagnose", _with_model(github_report.diagnose, model))
    github.pull_requests = [12]
    assert main(["github", "report", "--comment-on-pr", "--model", "scripted:demo"]) == 0
    out = capsys.readouterr().out
    assert len(scans) == 2, "each failed job's log is scanned exactly once"
    assert len(model.calls) <= 2, "at most one model call per log"
    assert [t.command for t in list_traces()] == ["diagnose"]  # one diagnosis, one trace
    summary = actions_env.read_text()
    assert "test (3.12)" in summary or "tests/test_calc.py" in summary
    assert "::error" in out and len(github.comments) == 1
    assert len(github.paths("/blob/")) == 2


def _with_model(diagnose: Any, model: Any) -> Any:
    from repopilot.app import diagnosing

    def run(inputs: list[LogInput], settings: Any, **kwargs: Any) -> list[DiagnosisReport]:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(diagnosing, "model_for", lambda settings, required=True: model)
            result: list[DiagnosisReport] = diagnose(inputs, settings, **kwargs)
            return result

    return run
