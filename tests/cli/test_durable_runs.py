"""Issue 15 item 6: a live `ask` holds its run's lock; a full disk and an edited trace end with one clear line and
exit 2, never "internal error"."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from repopilot.cli.main import main
from repopilot.core import read_trace
from repopilot.core.trace_log import read_run
from repopilot.providers import PROVIDERS, ProviderInfo, ScriptedModel


def test_a_live_ask_holds_its_run_lock(git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    held: list[bool] = []

    def reply(messages: Any, tools: Any) -> Any:
        # While the run is live, another process trying the lock (as `resume` does) is refused.
        (lock,) = (tmp_path / "runs").glob("*.lock")
        with lock.open("a") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held.append(False)
            except BlockingIOError:
                held.append(True)
        return "the answer"

    monkeypatch.setitem(PROVIDERS, "lockprobe", ProviderInfo(name="lockprobe",
                                                             factory=lambda m, env: ScriptedModel(reply)))
    monkeypatch.setenv("REPOPILOT_MODEL", "lockprobe:x")
    assert main(["ask", "what is here?", "--repo", str(git_repo)]) == 0
    assert held == [True]


def test_resuming_a_live_ask_is_refused_without_a_model_call(git_repo: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[int] = []

    def reply(messages: Any, tools: Any) -> Any:
        (trace,) = (tmp_path / "runs").glob("*.json")
        env = {**os.environ, "REPOPILOT_MODEL": "scripted:demo"}
        done = subprocess.run([sys.executable, "-m", "repopilot.cli.main", "resume", trace.stem], env=env,
                              capture_output=True, text=True, timeout=60, check=False)
        seen.append(done.returncode)
        assert "in use by another repopilot process" in done.stderr, done.stderr
        return "the answer"

    monkeypatch.setitem(PROVIDERS, "lockprobe", ProviderInfo(name="lockprobe",
                                                             factory=lambda m, env: ScriptedModel(reply)))
    monkeypatch.setenv("REPOPILOT_MODEL", "lockprobe:x")
    assert main(["ask", "what is here?", "--repo", str(git_repo)]) == 0
    assert seen == [2]


@pytest.mark.parametrize("edit", [
    lambda d: d["messages"][1].update(content={"not": "text"}),
    lambda d: d["messages"].append({"role": "wizard", "content": "hi"}),
    lambda d: d["budgets"].update(limits={"max_steps": "many"}),
], ids=["message-content", "message-role", "budget-limit"])
def test_an_edited_trace_with_wrong_types_is_refused_with_exit_2(edit: Any, git_repo: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("REPOPILOT_MODEL", "scripted:demo")
    assert main(["ask", "what is here?", "--repo", str(git_repo)]) == 0
    (path,) = (tmp_path / "runs").glob("*.json")
    data = read_run(path)[0]
    data["status"] = "interrupted"
    edit(data)
    path.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["resume", path.stem]) == 2
    err = capsys.readouterr().err
    assert "not a valid RepoPilot trace" in err and "internal error" not in err and "Traceback" not in err


@pytest.fixture
def tiny_disk() -> Any:
    """A 256 KiB tmpfs: a real full disk. Needs root and mount; skipped where either is missing."""
    where = Path(f"/tmp/repopilot-full-{uuid.uuid4().hex[:8]}")
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(where)],
                             capture_output=True, check=False).returncode == 0
    if not mounted:
        where.rmdir()
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)
        shutil.rmtree(where, ignore_errors=True)


def test_a_full_disk_ends_the_run_with_a_clear_message(tiny_disk: Path, git_repo: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    big = "\n".join(f"line {i} " + "x" * 70 for i in range(2000))  # 150 KB: a few results fill the disk
    (git_repo / "big.txt").write_text(big)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(
        [{"tool_calls": [{"name": "read_file", "arguments": {"path": "big.txt"}}]}] * 6 + ["done"]))
    monkeypatch.setenv("REPOPILOT_MODEL", f"scripted:{script}")
    monkeypatch.setenv("REPOPILOT_RUNS_DIR", str(tiny_disk))
    code = main(["ask", "read it", "--repo", str(git_repo)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "No space left on device" in err and "internal error" not in err and "Traceback" not in err
    (path,) = tiny_disk.glob("*.json")
    trace = read_trace(path)  # what was written before the disk filled is intact
    assert trace.status == "failed", "the short status line fits once the torn line is cut"
    assert not list(tiny_disk.glob("*.tmp"))
