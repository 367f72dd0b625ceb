"""`repopilot runs list|show` and `trace export --html`, through the real entry point (exit codes included)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from repopilot.cli.main import main
from repopilot.core import RunTrace, TraceRecorder, load_trace
from tests.telemetry.sample import INJECTION, LEAKED_TOKEN, record_fix_run


@pytest.fixture
def two_runs(git_repo: Path) -> tuple[RunTrace, RunTrace]:
    """An older `ask` run with no known price and a newer `fix` run."""
    old = TraceRecorder.start("ask", "Where is add defined?", run_id="20250101-000000-aaaaaa")
    old.step("llm_call", model="local-model", input_tokens=10, output_tokens=5, cost=None, duration_ms=1500.0,
             result={"text": "In src/calc.py", "tool_calls": []}, detail={"finish_reason": "stop"})
    old.finish("completed", answer="In src/calc.py")
    new = record_fix_run(git_repo, slow_ms=5)
    return load_trace(old.trace.run_id), load_trace(new.trace.run_id)


def test_list_plain_columns_newest_first(two_runs: tuple[RunTrace, RunTrace],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    old, new = two_runs
    assert main(["runs", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert re.split(r"\s{2,}", lines[0]) == ["run id", "started", "command", "goal", "status", "model", "steps",
                                              "tokens", "cost", "duration"]
    assert len(lines) == 3
    assert lines[1].startswith(new.run_id) and "awaiting_approval" in lines[1] and "openai:gpt-4o-mini" in lines[1]
    assert f"{new.totals.input_tokens}/{new.totals.output_tokens}" in lines[1]
    assert lines[2].startswith(old.run_id) and "unknown" in lines[2] and "Where is add defined?" in lines[2]
    assert "\x1b[" not in "".join(lines)  # no colour codes when piped
    assert main(["runs", "list", "--limit", "1"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_list_json(two_runs: tuple[RunTrace, RunTrace], capsys: pytest.CaptureFixture[str]) -> None:
    old, new = two_runs
    assert main(["runs", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["run_id"] for r in rows] == [new.run_id, old.run_id]
    assert rows[0]["steps"] == 13 and rows[0]["command"] == "fix" and rows[0]["cost"] > 0
    assert rows[1]["cost"] is None and rows[1]["status"] == "completed" and rows[1]["input_tokens"] == 10


def test_list_without_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "list"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "no runs recorded" in captured.err
    assert main(["runs", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_show_is_a_readable_timeline(two_runs: tuple[RunTrace, RunTrace], capsys: pytest.CaptureFixture[str]) -> None:
    _, new = two_runs
    assert main(["runs", "show", new.run_id]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"run {new.run_id} · fix · awaiting_approval")
    rows = [line for line in text.splitlines() if re.match(r"^\s*\d+\s+\+", line)]
    assert len(rows) == 13
    assert re.search(r"3\s+\+\S+\s+llm_call\s+gpt-4o-mini\s+\d+ms\s+\d+/\d+\s+calls read_file", text)
    assert re.search(r"10\s+\+\S+\s+tool_result\s+read_file\s+\d+ms\s+error: read_file failed", text)
    assert "rule_match: python.pytest.assertion" in text  # a rule decision
    assert "python.pytest.assertion (test, rule confidence 0.93) at tests/test_calc.py:5" in text
    assert "    43 | E       assert -1 == 5" in text  # a causal line with its number
    assert "-    return a - b\n+    return a + b" in text  # the proposed diff
    assert re.search(r"tokens\s+\d+ in / \d+ out", text) and "duration" in text
    assert re.search(r"budgets\s+steps 3 / 20 · tokens \d+ / no limit", text)
    assert LEAKED_TOKEN not in text


def test_show_json_and_latest(two_runs: tuple[RunTrace, RunTrace], capsys: pytest.CaptureFixture[str]) -> None:
    _, new = two_runs
    assert main(["runs", "show", "latest", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["run_id"] == new.run_id and len(data["steps"]) == 13
    assert new.proposal is not None and data["proposal"]["sha256"] == new.proposal["sha256"]


@pytest.mark.parametrize("run_id, message", [
    ("../../etc/passwd", "not a run id"),
    ("20990101-000000-ffffff", "no run '20990101-000000-ffffff'"),
])
def test_show_bad_ids_exit_2_with_one_line(run_id: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "show", run_id]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and message in captured.err and "Traceback" not in captured.err


def test_show_unreadable_trace_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "20250101-000000-bbbbbb.json").write_text("{not json")
    assert main(["runs", "show", "20250101-000000-bbbbbb"]) == 2
    assert "is not a RepoPilot trace" in capsys.readouterr().err


def test_html_export_is_complete_escaped_and_offline(two_runs: tuple[RunTrace, RunTrace], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _, new = two_runs
    target = tmp_path / "out" / "run.html"
    assert main(["trace", "export", new.run_id, "--html", str(target)]) == 0
    assert capsys.readouterr().err == f"wrote {target} (13 steps)\n"  # nothing else when piped: no spinner
    page = target.read_text()
    assert page.count('<tr class="step') == 13
    for step in new.steps:
        assert f'id="step-{step.step_number}"' in page
    for section in ("diagnosis", "timeline", "decisions", "proposal", "errors", "totals"):
        assert f'id="{section}"' in page
    assert '<span class="add">+    return a + b</span>' in page
    assert '<span class="del">-    return a - b</span>' in page
    assert '<span class="ln">43</span>E       assert -1 == 5' in page
    # Hostile text is shown, never interpreted.
    assert INJECTION not in page and "<img" not in page and page.count("<script") == 1
    assert "&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;" in page
    assert LEAKED_TOKEN not in page
    # Self-contained: nothing to fetch.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert "default-src 'none'" in page
    assert "budgets (used / limit): steps 3 / 20 · tokens " in page


def test_html_to_stdout_and_usage_errors(two_runs: tuple[RunTrace, RunTrace], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    old, _ = two_runs
    assert main(["trace", "export", old.run_id, "--html", "-"]) == 0
    assert capsys.readouterr().out.startswith("<!DOCTYPE html>")
    assert main(["trace", "export", old.run_id]) == 2
    assert "--html FILE and/or --otlp ENDPOINT" in capsys.readouterr().err
    assert main(["trace", "export", old.run_id, "--html", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert main(["trace", "export", "nope!", "--html", str(tmp_path / "x.html")]) == 2
    assert not (tmp_path / "x.html").exists()


def test_tables_use_rich_on_a_terminal(two_runs: tuple[RunTrace, RunTrace], monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from repopilot.cli import runs, table

    monkeypatch.setattr(runs, "stdout_is_terminal", lambda: True)
    monkeypatch.setattr(table, "stdout_is_terminal", lambda: True)
    monkeypatch.setattr(runs.out, "width", 200)
    assert main(["runs", "list"]) == 0
    text = capsys.readouterr().out
    assert "┃" in text and "━" in text and two_runs[1].run_id in text
    assert main(["runs", "show", two_runs[1].run_id]) == 0
    assert "┃ type" in capsys.readouterr().out


def test_html_of_a_failed_run_without_diagnosis(git_repo: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    rec = record_fix_run(git_repo, fail_model=True)
    rec.trace.diagnosis = None
    rec.save()
    target = tmp_path / "failed.html"
    assert main(["trace", "export", rec.trace.run_id, "--html", str(target)]) == 0
    page = target.read_text()
    assert 'class="badge status-failed" id="status">failed<' in page
    assert 'id="diagnosis"' not in page and 'id="proposal"' not in page
    assert "Errors (2)" in page and "openai: overloaded (HTTP 529)" in page
    assert page.count('<tr class="step has-error"') == 2
