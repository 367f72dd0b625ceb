import json
from pathlib import Path

import pytest

from repopilot.cli.main import main
from repopilot.core import read_trace


def test_ask_without_a_model_exits_2_and_says_how_to_configure(
        git_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["ask", "what is this?", "--repo", str(git_repo)])
    err = capsys.readouterr().err
    assert code == 2
    assert "REPOPILOT_MODEL" in err and "Traceback" not in err


def test_ask_with_the_demo_model_answers_and_prints_a_summary(
        git_repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPOPILOT_MODEL", "scripted:demo")
    code = main(["ask", "what is this?", "--repo", str(git_repo), "--json"])
    captured = capsys.readouterr()
    assert code == 0
    payload = json.loads(captured.out)
    assert payload["status"] == "completed"
    assert "A sample project." in payload["answer"]
    trace = read_trace(Path(payload["trace"])).model_dump(mode="json")
    assert trace["run_id"] == payload["run_id"]
    assert [s["tool_name"] for s in trace["steps"] if s["type"] == "tool_call"] == [
        "list_files", "git_log", "read_file"]
    for label in ("goal", "steps", "model calls", "tool calls", "errors", "tokens", "cost", "duration", "trace"):
        assert label in captured.err


def test_ask_budget_exhaustion_still_exits_0_with_the_status(
        git_repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPOPILOT_MODEL", "scripted:demo")
    code = main(["ask", "what is this?", "--repo", str(git_repo), "--max-steps", "1", "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0
    assert payload["status"] == "budget_exhausted:steps"


@pytest.mark.parametrize("args,needle", [
    (["ask", "   "], "goal is empty"),
    (["ask", "q", "--repo", "/nonexistent/path"], "does not exist"),
    (["ask", "q", "--max-steps", "0"], "max-steps"),
    (["nonsense-command"], "No such command"),
])
def test_bad_usage_exits_2_without_traceback(
        args: list[str], needle: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPOPILOT_MODEL", "scripted:demo")
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2
    assert needle in err and "Traceback" not in err


def test_not_a_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPOPILOT_MODEL", "scripted:demo")
    assert main(["ask", "q", "--repo", str(tmp_path)]) == 2
    assert "not inside a git repository" in capsys.readouterr().err


def test_malformed_model_spec(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPOPILOT_MODEL", "gpt-4o")
    assert main(["ask", "q"]) == 2
    assert "provider:model" in capsys.readouterr().err
    monkeypatch.setenv("REPOPILOT_MODEL", "nosuch:model")
    assert main(["ask", "q"]) == 2
    assert "unknown provider" in capsys.readouterr().err
