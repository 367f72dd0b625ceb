"""Issue 13 item 4: every table fits 80 columns, read through a pseudo-terminal of 80 columns: run ids whole on
one line, statuses abbreviated rather than wrapped, free text cut with `…`, the least useful columns dropped;
values a person must read whole (paths, endpoints) fold inside their cell. Piped output keeps every column."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from repopilot.cli.table import Column, fit
from repopilot.core import TraceRecorder
from tests.cli.terminal import ROOT, run_in_terminal


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    runs = tmp_path / "a-rather-long-directory-name" / "that-goes-on-and-on" / "until-it-cannot-fit" / "runs"
    long_goal = "what does the build of this repository do when the cache is cold and the network is down"
    for command, goal, status, model in (
            ("ask", long_goal, "budget_exhausted:seconds", "anthropic:claude-3-5-haiku-latest"),
            ("fix", "fix the CI failure in /home/someone/projects/a/long/path/ci.log", "awaiting_approval",
             "openai:gpt-4o-mini"),
            ("fix", "fix it", "failed:invalid_proposals", "openai:gpt-4o-mini")):
        TraceRecorder.start(command, goal, model=model, directory=runs).finish(status)
    return {"REPOPILOT_RUNS_DIR": str(runs), "XDG_CONFIG_HOME": str(tmp_path / "config")}


def _fits(lines: list[str]) -> None:
    assert lines and max(len(line) for line in lines) <= 80


def test_runs_list_at_80_columns(env: dict[str, str]) -> None:
    diagnosed = run_in_terminal(["diagnose", str(ROOT / "examples" / "go-build-error.log"), "-q"], env=env)
    assert diagnosed.code == 0
    screen = run_in_terminal(["runs", "list"], env=env)
    assert screen.code == 0
    _fits(screen.lines)
    ids = sorted(p.stem for p in Path(env["REPOPILOT_RUNS_DIR"]).glob("*.json"))
    body = screen.lines[2:]
    assert len(body) == 4  # one line per run: nothing wrapped
    assert sorted(line.split()[0] for line in body) == ids  # each id whole
    assert any("budget:seconds" in line for line in body) and any("awaiting" in line for line in body)
    assert any("what does the build" in line and "…" in line for line in body)
    piped = subprocess.run([sys.executable, "-m", "repopilot.cli.main", "runs", "list"], capture_output=True,
                           text=True, env={**os.environ, **env}, cwd=ROOT, timeout=60, check=True).stdout
    assert piped.split()[:10] == ["run", "id", "started", "command", "goal", "status", "model", "steps", "tokens",
                                   "cost"]
    assert "budget_exhausted:seconds" in piped  # whole when piped


def test_runs_show_models_and_config_at_80_columns(env: dict[str, str]) -> None:
    diagnosed = run_in_terminal(["diagnose", str(ROOT / "examples" / "go-build-error.log"), "-q"], env=env)
    assert diagnosed.code == 0
    shown = run_in_terminal(["runs", "show", "latest"], env=env)
    timeline = shown.lines[shown.index("timeline"):shown.index("decisions and approvals")]
    _fits(timeline)
    assert sum("│ decision" in line for line in timeline) >= 2  # one line per step: nothing wrapped
    models = run_in_terminal(["models"], env=env)
    _fits(models.lines[:models.index("model: ")])
    assert any("googleapis" in line for line in models.lines)  # folded, not cut
    config = run_in_terminal(["config"], env=env)
    _fits(config.lines)
    assert "until-it-cannot-fit" in config.text.replace("\n", "").replace("│", "").replace(" ", "")


def test_columns_drop_in_their_order_and_return_with_room() -> None:
    columns = [Column("id"), Column("extra", drop=2), Column("more", drop=1), Column("text", flexible=True)]
    rows = [["x" * 30, "y" * 20, "z" * 20, "free text"]]
    assert fit(columns, rows, 200)[0] == [0, 1, 2, 3]
    assert fit(columns, rows, 80)[0] == [0, 2, 3]  # `extra` (drop=2) goes first
    assert fit(columns, rows, 60)[0] == [0, 3]
