"""The size, count and time bounds of docs/security.md are settings: read once at the edge (environment or config
file) and passed down to the tools, the loop, the sources and the provider client."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from repopilot.app import load_settings, tool_bounds
from repopilot.cli.main import main
from repopilot.core import ConfigError, read_trace
from repopilot.providers import resolve_model
from repopilot.providers.http_client import reply_bounds_from_env
from repopilot.repo import MAX_LINE_BYTES, MAX_RESULT_BYTES, TOOL_SECONDS


def test_defaults_and_environment(tmp_path: Path) -> None:
    default = load_settings({}, cwd=tmp_path)
    assert tool_bounds(default) == {}  # the tools' own defaults
    assert (TOOL_SECONDS, MAX_RESULT_BYTES, MAX_LINE_BYTES) == (30.0, 200_000, 2_000)
    assert default.max_tool_calls_per_turn == 16 and default.max_stdin_bytes == 1 << 30
    env = load_settings({"REPOPILOT_TOOL_SECONDS": "2.5", "REPOPILOT_MAX_TOOL_RESULT_BYTES": "5000",
                         "REPOPILOT_MAX_TOOL_CALLS_PER_TURN": "3"}, cwd=tmp_path)
    assert tool_bounds(env) == {"tool_seconds": 2.5, "max_result_bytes": 5000}
    assert env.max_tool_calls_per_turn == 3
    assert env.origins["tool_seconds"] == "env REPOPILOT_TOOL_SECONDS"


@pytest.mark.parametrize("value", ["0", "-1", "many", "nan", "inf"])
def test_bad_bounds_are_config_errors(value: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="tool_seconds"):
        load_settings({"REPOPILOT_TOOL_SECONDS": value}, cwd=tmp_path)
    with pytest.raises(ConfigError, match="REPOPILOT_MAX_REPLY_BYTES"):
        reply_bounds_from_env({"REPOPILOT_MAX_REPLY_BYTES": value})


def test_reply_bounds_reach_the_provider_client() -> None:
    model = resolve_model("openai:gpt-4o-mini", {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
                                                 "REPOPILOT_MAX_REPLY_BYTES": "1000",
                                                 "REPOPILOT_MAX_REPLY_SECONDS": "7"})
    http = model.http  # type: ignore[attr-defined]
    assert (http.max_reply_bytes, http.max_reply_seconds) == (1000, 7.0)


def test_the_per_turn_cap_setting_reaches_ask(git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "script.json"
    calls = [{"name": "read_file", "arguments": {"path": "src/calc.py"}} for _ in range(5)]
    script.write_text(json.dumps([{"tool_calls": calls}, "done"]))
    monkeypatch.setenv("REPOPILOT_MODEL", f"scripted:{script}")
    monkeypatch.setenv("REPOPILOT_MAX_TOOL_CALLS_PER_TURN", "2")
    assert main(["ask", "what is in calc.py?", "--repo", str(git_repo), "--json"]) == 0
    trace = read_trace(Path(json.loads(capsys.readouterr().out)["trace"]))
    assert len([s for s in trace.steps if s.type == "tool_result"]) == 2
    [capped] = [s for s in trace.steps if s.type == "decision" and s.result == "tool_calls_capped"]
    assert capped.detail["limit"] == 2 and len(capped.detail["skipped"]) == 3


def test_the_stdin_cap_setting_reaches_diagnose(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("REPOPILOT_MAX_STDIN_BYTES", "1000")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"error: boom\n" * 1000)))
    assert main(["diagnose", "-"]) == 2
    assert "stdin is larger than 1,000 bytes" in capsys.readouterr().err
