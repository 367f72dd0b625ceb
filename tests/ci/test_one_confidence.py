"""One confidence everywhere: the text, the JSON (`confident` derived from it and the one threshold), `runs show`,
the trace page's decision table (rule and confidence filled) and excerpt header; `decided_by` names who decided
(a rule, the locator, the failing step's command); a model reply that was not used says why."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from repopilot.ci.diagnosis import CONFIDENT
from repopilot.ci.engine import diagnose_input
from repopilot.ci.report import DiagnosisReport
from repopilot.ci.sources import open_sources
from repopilot.cli.main import main
from repopilot.cli.render import render_text
from repopilot.core import TraceRecorder
from repopilot.providers import ScriptedModel

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ci"


def _log(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(f"2026-01-01T00:00:{i:02d}.0000000Z {line}\n" for i, line in enumerate(lines)))
    return path


def _lint_by_command(tmp_path: Path) -> Path:
    # No rule knows `frobcheck`: the step's command (`npm run lint`) says what failed.
    return _log(tmp_path / "cmd.log", [
        "##[group]Run npm run lint", "npm run lint", "##[endgroup]", "> app@1.0.0 lint", "> frobcheck src",
        "src/widget.js needs attention", "1 file needs attention", "##[error]Process completed with exit code 1."])


def _test_by_locator(tmp_path: Path) -> Path:
    # No rule and no telling command: the lines the locator chose read as a test failure.
    return _log(tmp_path / "loc.log", [
        "##[group]Run ./run-suite.sh", "./run-suite.sh", "##[endgroup]", "suite: starting 14 checks",
        "check 3: assertion mismatch, expected 4 but got 5", "  at widget_spec line 7", "suite: 1 check failed",
        "##[error]Process completed with exit code 1."])


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(args) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("make", [
    lambda tmp: EXAMPLES / "go-build-error.log", lambda tmp: FIXTURES / "maven-compile-error.log",
    lambda tmp: FIXTURES / "go-mod-pass.log", _lint_by_command, _test_by_locator])
def test_the_same_confidence_in_every_view(make: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = str(make(tmp_path))  # type: ignore[operator]
    report = json.loads(_cli(["diagnose", log, "--format", "json", "--no-llm"], capsys))
    conf = report["confidence"]
    assert report["confident"] is (conf >= CONFIDENT)
    assert ("escalation_reason" in report) is (conf < CONFIDENT)
    assert f"confidence {conf:.2f})" in _cli(["diagnose", log, "--no-llm"], capsys).splitlines()[0]
    assert f"Decided by {report['decided_by']} (confidence {conf:.2f})" in _cli(
        ["diagnose", log, "--format", "markdown", "--no-llm"], capsys)
    shown = _cli(["runs", "show", "latest"], capsys)
    assert f"(decided by {report['decided_by']}, confidence {conf:.2f})" in shown
    # Every number the timeline calls a confidence is this one.
    assert set(re.findall(r"(?<!rule )confidence (\d\.\d\d)", shown)) <= {f"{conf:.2f}"}
    page = _cli(["trace", "export", "latest", "--html", "-"], capsys)
    rows = re.findall(r"<tr><td class=num>\d+</td>.*?</tr>", page.split('id="decisions"')[1])
    category = [r for r in rows if "<code>category</code>" in r or "<code>rules</code>" in r]
    assert category and all(f"<td class=num>{conf:.2f}</td>" in r for r in category)
    if report["failures"]:
        assert all(re.search(r"<td><code>[^<]+</code></td><td class=num>", r) for r in category)  # rule filled
    # The excerpt's lines, not a Python list.
    assert re.search(r"Excerpt for a model \(\d+ tokens, lines \d[\d, -]*\)", page) and "ranges [" not in page


def test_decided_by_names_the_rule_the_command_or_the_locator(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    def decided(log: Path) -> tuple[str, str]:
        r = json.loads(_cli(["diagnose", str(log), "--format", "json", "--no-llm"], capsys))
        return r["decided_by"], r["category"]

    assert decided(EXAMPLES / "go-build-error.log") == ("rules", "build")
    assert decided(_lint_by_command(tmp_path)) == ("command", "lint")
    assert decided(_test_by_locator(tmp_path)) == ("locator", "test")
    head = _cli(["diagnose", str(_lint_by_command(tmp_path)), "--no-llm"], capsys).splitlines()[0]
    assert "(decided by command, confidence" in head and "rule locator" not in head


@pytest.mark.parametrize(("reply", "why"), [
    ("not json at all", "no JSON object in the reply"),
    ('{"category": "weather", "error_lines": [3]}', "does not match the schema"),
])
def test_a_rejected_model_reply_says_why(reply: str, why: str, tmp_path: Path) -> None:
    log = tmp_path / "unsure.log"
    log.write_text("setup\nrunning\nthe widget exploded: failure in stage 3\ndone\n")
    rec = TraceRecorder.start("diagnose", "test", directory=tmp_path / "runs")
    report = diagnose_input(open_sources(str(log))[0], model=ScriptedModel([reply]), recorder=rec).report()
    assert report.decided_by == "none" and report.model_note is not None
    assert "rejected" in report.model_note and why in report.model_note
    assert report.contract()["model_note"] == report.model_note
    text = render_text([report])
    assert "decided by none" in text and "model: the model's reply was rejected (" in text and why in text


def test_a_report_without_a_model_note_leaves_it_out() -> None:
    report = DiagnosisReport.model_validate({"category": "build", "decided_by": "rules", "confidence": 0.9})
    assert "model_note" not in report.contract()
    assert "model:" not in render_text([report])
