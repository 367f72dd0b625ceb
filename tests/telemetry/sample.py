"""A realistic recorded run for the telemetry and `runs` tests: a `fix` run driven by the real loop (scripted
model, the real read-only repository tools, a propose tool that asks for approval), with a rule diagnosis,
rule decisions, a failing tool call and hostile text (HTML and a token) in model and log output."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Any

from repopilot.core import (
    Agent,
    ApprovalRequired,
    Proposal,
    ProviderError,
    SystemMessage,
    ToolRegistry,
    TraceRecorder,
    UserMessage,
    tool,
)
from repopilot.providers import ScriptedModel
from repopilot.repo import repo_tools
from repopilot.telemetry import attach_live_exporters

INJECTION = '<script>document.title="pwned"</script><img src=x onerror="document.title=\'pwned\'">'
LEAKED_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

DIFF = """--- a/src/calc.py
+++ b/src/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""

DIAGNOSIS: dict[str, Any] = {
    "category": "test",
    "decided_by": "rules",
    "error_lines": [41, 42, 43, 47],
    "failures": [{
        "rule": "python.pytest.assertion",
        "category": "test",
        "confidence": 0.93,
        "message": "tests/test_calc.py::test_add - assert -1 == 5",
        "file": "tests/test_calc.py",
        "line": 5,
        "test": "tests/test_calc.py::test_add",
        "hint": "Run the failing test locally: pytest tests/test_calc.py::test_add",
        "lines": [
            {"line": 41, "text": "    def test_add():"},
            {"line": 42, "text": ">       assert add(2, 3) == 5"},
            {"line": 43, "text": "E       assert -1 == 5"},
            {"line": 47, "text": "FAILED tests/test_calc.py::test_add - assert -1 == 5 " + INJECTION},
        ],
    }],
    "excerpt": {"ranges": [[38, 49]], "tokens": 120,
                "text": "38: ____ test_add ____\n42: >       assert add(2, 3) == 5\n43: E       assert -1 == 5"},
    "source": "examples/pytest-failure.log",
}


def _propose_tool() -> Any:
    @tool(side_effects=True)
    def propose_fix(diff: str, explanation: str) -> str:
        """Propose a unified diff for a person to approve.

        Args:
            diff: the unified diff
            explanation: why it fixes the failure
        """
        raise ApprovalRequired(Proposal.make(diff, explanation, files=["src/calc.py"]))

    return propose_fix


def record_fix_run(repo: Path, *, slow_ms: float = 0.0, fail_model: bool = False) -> TraceRecorder:
    """Run a scripted `fix` session against `repo`; returns its recorder (the trace is in the runs dir too).
    Live OTLP export is attached as a command would attach it (it acts only when OTEL_* variables ask)."""

    def slow(reply: Any) -> Any:
        def fn(messages: Any, tools: Any) -> Any:
            time.sleep(slow_ms / 1000)
            return reply
        return fn

    replies: list[Any] = [
        {"content": "The assertion says add(2, 3) returned -1. Reading the implementation.",
         "tool_calls": [{"name": "read_file", "arguments": {"path": "src/calc.py"}, "id": "call_read"}]},
        {"content": "Checking the history " + INJECTION,
         "tool_calls": [{"name": "git_log", "arguments": {"max_count": 3}, "id": "call_log"},
                        {"name": "read_file", "arguments": {"path": "../../etc/passwd"}, "id": "call_escape"}]},
    ]
    if fail_model:
        replies.append(ProviderError("overloaded", provider="openai", status=529))
    else:
        replies.append({"content": "`add` subtracts; the fix is one character.",
                        "tool_calls": [{"name": "propose_fix", "id": "call_fix",
                                        "arguments": {"diff": DIFF, "explanation":
                                                      f"add() used '-'; token seen in log: {LEAKED_TOKEN}"}}]})
    script = [slow(r) for r in replies]
    calls = iter(script)
    model = ScriptedModel(lambda m, t: next(calls)(m, t), model="gpt-4o-mini", price_per_mtok=(0.15, 0.6))
    model.provider = "openai"
    model.endpoint = "http://127.0.0.1:9/v1"
    rec = TraceRecorder.start("fix", "Fix the failing CI run 4242 (pytest)", repo=str(repo))
    # Attached first, as a command that records rule decisions before any model call would attach it.
    attach_live_exporters(rec, model, os.environ)
    rec.step("decision", result="python.pytest.assertion",
             detail={"decision": "rule_match", "rule": "python.pytest.assertion", "confidence": 0.93,
                     "reason": "trigger 'E       assert' at line 43 inside the failing step"})
    rec.step("decision", result="rejected python.generic.traceback",
             detail={"decision": "rule_rejected", "rule": "python.generic.traceback", "confidence": 0.4,
                     "reason": "lower confidence; its lines are inside the pytest block"})
    rec.trace.diagnosis = DIAGNOSIS
    agent = Agent(model, ToolRegistry([*repo_tools(repo), _propose_tool()]), rec)
    with contextlib.suppress(ProviderError):
        agent.run([SystemMessage(content="You fix CI failures."), UserMessage(content=rec.trace.goal)])
    return rec
