"""`repopilot diagnose` end to end through the CLI entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repopilot.ci import DiagnosisReport
from repopilot.ci.render import render_github
from repopilot.cli.main import main
from repopilot.core import read_trace

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ci"


def test_the_bundled_example_is_behind_a_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", "--example"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("example: go-build-error.log")
    assert "build" in out and "credentials_test.go:88" in out and "hint:" in out


def test_json_contract(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["diagnose", str(FIXTURES / "go-mod-fail.log"), "--format", "json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["category"] == "dependency" and r["decided_by"] == "rules" and r["error_lines"] == [685]
    assert r["failures"][0]["lines"][0]["line"] == 685
    traces = list((tmp_path / "runs").glob("*.json"))
    assert len(traces) == 1
    trace = read_trace(traces[0]).model_dump(mode="json")
    assert trace["command"] == "diagnose" and trace["diagnosis"]["category"] == "dependency"
    assert trace["status"] == "completed"


def test_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", str(FIXTURES / "gradle-test-failure.log"), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("### RepoPilot") and "| `gradle.test-failed` | test |" in out and "```text" in out


def test_github_annotations(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", str(FIXTURES / "go-build-error.log"), "--format", "github"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert 1 <= len(lines) <= 10
    assert lines[0].startswith("::error file=internal/command/cliconfig/credentials_test.go,line=88,col=9,title=")
    assert all("\n" not in line and "\r" not in line for line in lines)


def test_github_escaping_and_limit() -> None:
    failure = {"rule": "x.y", "category": "test", "confidence": 0.9, "message": "50% done\r\nnext: a,b",
               "lines": [{"line": 3, "text": "t"}], "file": "a,b:c.go", "line": 3, "causal": True}
    report = {"log": "l", "category": "test", "failures": [failure] * 30, "excerpt": {"text": ""}}
    out = render_github([DiagnosisReport.model_validate(report)]).splitlines()
    assert len(out) == 10
    assert out[0].startswith("::error file=a%2Cb%3Ac.go,line=3,title=RepoPilot%3A test (x.y)::"
                             "50%25 done%0D%0Anext: a,b")


def test_no_llm_with_unknown_log(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPOPILOT_MODEL", "scripted:demo")
    log = tmp_path / "x.log"
    log.write_text("nothing to see\nall fine\n")
    assert main(["diagnose", str(log), "--no-llm", "--format", "json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["decided_by"] == "none" and r["category"] == "unknown" and r["excerpt"]["text"]


@pytest.mark.parametrize(("args", "message"), [
    (["diagnose", "/no/such/file.log"], "no such file"),
    (["diagnose", "-"], "stdin is empty"),
])
def test_bad_input_exits_2_with_one_line(capsys: pytest.CaptureFixture[str], args: list[str], message: str,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_token_budget_too_small(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", str(FIXTURES / "go-mod-fail.log"), "--token-budget", "5"]) == 2
