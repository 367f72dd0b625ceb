"""Durable runs: a fix run killed with SIGKILL at each kind of step resumes from its trace, asks no answered
model turn again, re-runs no tool whose result was recorded, records one proposal and applies it once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from repopilot.core import diff_sha256, load_trace

FIX = """--- a/src/calc.py
+++ b/src/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""
FINAL = "Fixed: add() now adds."
SCRIPT = [
    {"content": "Reading.", "tool_calls": [
        {"id": "t1", "name": "read_file", "arguments": {"path": "src/calc.py"}},
        {"id": "t2", "name": "search_code", "arguments": {"pattern": "add", "fixed_string": True}}]},
    {"content": "", "tool_calls": [{"id": "t3", "name": "propose_fix",
                                    "arguments": {"diff": FIX, "explanation": "add() must add."}}]},
    FINAL,
]

# Runs the real CLI with a scripted model; DRIVER_KILL names the point at which the process SIGKILLs itself.
DRIVER = r'''
import json, os, signal, sys
from pathlib import Path
from repopilot.core import AssistantMessage, ToolRegistry, TraceRecorder
from repopilot.providers import PROVIDERS, ProviderInfo, ScriptedModel
import repopilot.app.fix_runs as fix_runs

LOG = Path(os.environ["DRIVER_LOG"])
KILL = os.environ.get("DRIVER_KILL", "")
SCRIPT = json.loads(Path(os.environ["DRIVER_SCRIPT"]).read_text())

def note(**event):
    with LOG.open("a") as fh:
        fh.write(json.dumps(event) + "\n")

def die(point):
    if KILL == point:
        note(kind="killed", at=point)
        os.kill(os.getpid(), signal.SIGKILL)

def reply(messages, tools):
    turn = sum(isinstance(m, AssistantMessage) for m in messages)
    note(kind="model", turn=turn)
    die(f"model:{turn}")
    return SCRIPT[turn]

PROVIDERS["drv"] = ProviderInfo(name="drv", factory=lambda m, env: ScriptedModel(reply))

_execute = ToolRegistry.execute
def execute(self, call, ctx=None):
    note(kind="tool", id=call.id)
    die(f"tool:{call.id}")
    return _execute(self, call, ctx)
ToolRegistry.execute = execute

_step = TraceRecorder.step
def step(self, type, **fields):
    s = _step(self, type, **fields)
    die(f"step:{type}:{sum(x.type == type for x in self.trace.steps)}")
    return s
TraceRecorder.step = step

import repopilot.core.trace_log as trace_log
_write = os.write
_writes = [0]
def write(fd, data):
    # Appending to the trace file: half a line reaches the file, then the process dies (a torn last line).
    if os.readlink(f"/proc/self/fd/{fd}").endswith(".json"):
        _writes[0] += 1
        if KILL == f"write:{_writes[0]}":
            _write(fd, data[: len(data) // 2])
        die(f"write:{_writes[0]}")
    return _write(fd, data)
trace_log.os.write = write

_apply = fix_runs.apply_fix
def apply_fix(*args, **kwargs):
    applied = _apply(*args, **kwargs)
    die("applied")
    return applied
fix_runs.apply_fix = apply_fix

from repopilot.cli.main import main
sys.exit(main(sys.argv[1:]))
'''

KILL_POINTS = [
    "model:0",             # waiting for the first reply
    "step:llm_call:1",     # reply persisted, its tools not started
    "step:tool_call:1",    # first tool call recorded, not run
    "tool:t1",             # inside a read-only tool
    "step:tool_result:1",  # between the two tools of one turn
    "model:1",
    "tool:t3",             # inside propose_fix
    "step:tool_result:3",  # proposal recorded, run not yet marked awaiting approval
    "applied",             # branch created, approval not yet recorded
    "step:approval:1",     # approval recorded, run not yet marked approved
    "model:2",             # final answer after the approval
    "step:llm_call:3",     # final answer persisted, run not yet marked completed
    "write:4",             # mid-write of the trace file: half a line written (a torn last line)
    "write:9",
]


class Harness:
    def __init__(self, tmp_path: Path, repo: Path, kill: str) -> None:
        self.repo = repo
        self.runs = tmp_path / "runs"
        self.log = tmp_path / "driver.log"
        self.kill = kill
        self.driver = tmp_path / "driver.py"
        self.driver.write_text(DRIVER)
        script = tmp_path / "script.json"
        script.write_text(json.dumps(SCRIPT))
        ci_log = tmp_path / "ci.log"
        ci_log.write_text("E       assert -1 == 5\nFAILED tests/test_calc.py::test_add\n")
        self.ci_log = ci_log
        self.env = {**os.environ, "REPOPILOT_RUNS_DIR": str(self.runs), "REPOPILOT_MODEL": "drv:script",
                    "DRIVER_LOG": str(self.log), "DRIVER_SCRIPT": str(script), "USER": "tester"}
        self.codes: list[int] = []
        self.answered_at_kill = 0
        self.results_at_kill: set[str | None] = set()

    def events(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def killed(self) -> bool:
        return any(e["kind"] == "killed" for e in self.events())

    def run(self, *argv: str) -> int:
        env = dict(self.env)
        if not self.killed():
            env["DRIVER_KILL"] = self.kill
        proc = subprocess.run([sys.executable, str(self.driver), *argv], env=env, capture_output=True, text=True,
                              timeout=60, check=False, stdin=subprocess.DEVNULL)
        assert "Traceback" not in proc.stderr, proc.stderr
        self.codes.append(proc.returncode)
        if proc.returncode == -signal.SIGKILL:
            t = load_trace(self.run_id(), self.runs)
            self.answered_at_kill = sum(s.type == "llm_call" for s in t.steps)
            self.results_at_kill = {s.tool_call_id for s in t.steps if s.type == "tool_result"}
        return proc.returncode

    def run_id(self) -> str:
        (path,) = self.runs.glob("*.json")
        return path.stem


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.mark.parametrize("kill", KILL_POINTS)
def test_resume_after_sigkill(tmp_path: Path, git_repo: Path, kill: str) -> None:
    h = Harness(tmp_path, git_repo, kill)
    h.run("fix", str(h.ci_log), "--repo", str(git_repo), "--no-llm-diagnosis")
    run_id = h.run_id()
    for _ in range(10):  # drive the run to its end the way a person would
        status = load_trace(run_id, h.runs).status
        if status == "completed":
            break
        if status == "awaiting_approval":
            h.run("approve", run_id, "--sha256", diff_sha256(FIX))
        else:
            h.run("resume", run_id)
    assert h.killed(), f"the kill point {kill} was never reached"
    assert -signal.SIGKILL in h.codes

    t = load_trace(run_id, h.runs)
    assert t.status == "completed" and t.answer == FINAL
    # What was recorded when the process died decides what may happen again: nothing recorded is redone.
    events = h.events()
    cut = next(i for i, e in enumerate(events) if e["kind"] == "killed")
    before, after = events[:cut], events[cut + 1:]
    for part in (before, after):
        turns = [e["turn"] for e in part if e["kind"] == "model"]
        tools = [e["id"] for e in part if e["kind"] == "tool"]
        assert len(turns) == len(set(turns)) and len(tools) == len(set(tools))
    assert not {e["turn"] for e in after if e["kind"] == "model"} & set(range(h.answered_at_kill))
    assert not {e["id"] for e in after if e["kind"] == "tool"} & h.results_at_kill
    asked = Counter(e["turn"] for e in events if e["kind"] == "model")
    ran = Counter(e["id"] for e in events if e["kind"] == "tool")
    assert set(asked) == {0, 1, 2} and set(ran) == {"t1", "t2", "t3"}
    if kill.startswith("model:"):  # the turn in flight was never answered: asked again, and only it
        assert asked == Counter({n: 2 if n == int(kill[6:]) else 1 for n in range(3)})
    if kill.startswith("tool:"):  # the tool in flight had no result: run again, and only it
        assert ran == Counter({i: 2 if i == kill[5:] else 1 for i in ("t1", "t2", "t3")})
    # The trace holds each answer, each result, one proposal and one approval exactly once.
    assert [s.type for s in t.steps].count("llm_call") == 3
    results = [s.tool_call_id for s in t.steps if s.type == "tool_result"]
    assert sorted(results) == ["t1", "t2", "t3"]
    assert list(t.extra["proposals"]) == ["t3"]
    assert [s.type for s in t.steps].count("approval") == 1
    assert t.totals.model_calls == 3
    # The fix is one commit on its branch; the original branch is untouched.
    assert _git(git_repo, "rev-list", "--count", f"main..repopilot/{run_id}").strip() == "1"
    assert _git(git_repo, "show", f"repopilot/{run_id}:src/calc.py").endswith("a + b\n")
    assert (git_repo / "src" / "calc.py").read_text().endswith("a - b\n")
    assert _git(git_repo, "status", "--porcelain") == ""
