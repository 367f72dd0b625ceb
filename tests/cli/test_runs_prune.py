"""`repopilot runs prune`: old runs go, oldest first; a run awaiting approval or in use by another process stays."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from repopilot.cli.main import main
from repopilot.core import TraceRecorder, list_traces

# Another process in the middle of the run: it holds the run's lock.
HOLD = ("import fcntl, sys, time\nf = open(sys.argv[1], 'a')\nfcntl.flock(f, fcntl.LOCK_EX)\n"
        "print('held', flush=True)\ntime.sleep(60)\n")


def _run(runs: Path, days_ago: int, status: str, command: str = "diagnose") -> str:
    rec = TraceRecorder.start(command, f"{status} {days_ago}d", directory=runs)
    rec.trace.started_at = (datetime.now(UTC) - timedelta(days=days_ago)).isoformat().replace("+00:00", "Z")
    rec.finish(status)  # rewrites the header with the started_at above
    return rec.trace.run_id


def test_prune_by_age_keeps_pending_and_busy_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = tmp_path / "runs"
    old = _run(runs, 40, "completed")
    waiting = _run(runs, 40, "awaiting_approval", "fix")
    busy = _run(runs, 40, "running", "ask")
    fresh = _run(runs, 1, "completed")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(runs / f"{busy}.lock")], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert main(["runs", "prune", "--older-than", "30d", "--dry-run"]) == 0
        assert capsys.readouterr().out.split() == ["would", "delete", old, "diagnose", "completed"]
        assert len(list(list_traces())) == 4  # a dry run deletes nothing
        assert main(["runs", "prune", "--older-than", "30d"]) == 0
    finally:
        holder.kill()
        holder.wait()
    err = capsys.readouterr().err
    assert "deleted 1 runs" in err and "kept 2 awaiting approval or in use" in err
    assert {t.run_id for t in list_traces()} == {waiting, busy, fresh}
    assert not (runs / f"{old}.json").exists() and not (runs / f"{old}.lock").exists()
    assert main(["runs", "prune", "--keep", "0"]) == 0  # the busy run's process is gone: now it is history
    assert {t.run_id for t in list_traces()} == {waiting}
    assert "deleted 2 runs" in capsys.readouterr().err
    assert main(["runs", "list", "--json"]) == 0
    assert [r["run_id"] for r in json.loads(capsys.readouterr().out)] == [waiting]


@pytest.mark.parametrize("args", [[], ["--older-than", "soon"], ["--older-than", "30"]])
def test_prune_needs_a_clear_criterion(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "prune", *args]) == 2
    assert capsys.readouterr().err.startswith("repopilot: ")
