"""propose_fix and the fix agent's seed: validation feedback, bounded retries, one proposal per call."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from repopilot.app.fix_seed import describe_diagnosis, seed_messages
from repopilot.ci import DiagnosisReport
from repopilot.core import (
    Agent,
    ApprovalRequired,
    AssistantMessage,
    Budgets,
    Proposal,
    ToolContext,
    ToolRegistry,
    ToolResultMessage,
    TraceRecorder,
    diff_sha256,
    load_messages,
)
from repopilot.providers import ScriptedModel
from repopilot.repo.fixer import fix_tools
from repopilot.repo.propose import propose_fix_tool

FIX = """--- a/src/calc.py
+++ b/src/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""
BAD = FIX.replace("-    return a - b", "-    return a * b")


def _propose(diff: str, call_id: str) -> dict[str, Any]:
    return {"content": "", "tool_calls": [{"id": call_id, "name": "propose_fix",
                                           "arguments": {"diff": diff, "explanation": "add must add"}}]}


def _agent(root: Path, replies: list[Any]) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel(replies)
    rec = TraceRecorder.start("fix", "fix it", repo=str(root))
    return Agent(model, ToolRegistry(fix_tools(root)), rec, Budgets(max_steps=10)), model


def test_valid_proposal_ends_the_run_awaiting_approval(git_repo: Path) -> None:
    agent, _ = _agent(git_repo, [
        {"content": "", "tool_calls": [{"id": "r1", "name": "read_file", "arguments": {"path": "src/calc.py"}}]},
        _propose(FIX, "p1"),
    ])
    result = agent.run(seed_messages([]))
    assert result.status == "awaiting_approval"
    proposal = Proposal.model_validate(result.trace.proposal)
    assert proposal.sha256 == diff_sha256(FIX) and proposal.intact()
    assert (proposal.files, proposal.tool_call_id, proposal.run_id) == (["src/calc.py"], "p1", result.run_id)
    assert proposal.decision is None
    last = result.trace.steps[-1]
    assert last.type == "tool_result" and last.error is None and proposal.sha256 in last.result
    assert result.trace.extra["proposals"]["p1"]["sha256"] == proposal.sha256


def test_invalid_proposals_go_back_to_the_model_then_stop_the_run(git_repo: Path) -> None:
    agent, model = _agent(git_repo, [_propose(BAD, "p1"), _propose("not a diff", "p2"), _propose(BAD, "p3"),
                                     "never asked"])
    result = agent.run(seed_messages([]))
    assert result.status == "failed:invalid_proposals"
    assert len(model.calls) == 3
    second_call_msgs = model.calls[1]["messages"]
    feedback = [m for m in second_call_msgs if isinstance(m, ToolResultMessage)][-1]
    assert feedback.is_error and "does not apply" in feedback.content and "2 attempts left" in feedback.content
    third = [m for m in model.calls[2]["messages"] if isinstance(m, ToolResultMessage)][-1]
    assert "not part of a unified diff" in third.content and "1 attempt left" in third.content
    assert result.trace.proposal is None
    assert "3 of 3" in (result.answer or "")


def test_a_rerun_invalid_call_counts_once(git_repo: Path) -> None:
    t = propose_fix_tool(git_repo, max_invalid=2)
    state: dict[str, Any] = {}
    for _ in range(3):  # the same call replayed after crashes never exhausts the retries on its own
        out = t.invoke({"diff": BAD, "explanation": "x"}, ToolContext("run", "same-call", state))
        assert out.is_error and "1 attempt left" in out.content
    assert state["invalid_proposals"] == ["same-call"]


def test_propose_fix_is_idempotent_per_call(git_repo: Path) -> None:
    t = propose_fix_tool(git_repo)
    state: dict[str, Any] = {}
    ctx = ToolContext("run-1", "call-1", state)
    with pytest.raises(ApprovalRequired) as first:
        t.invoke({"diff": FIX, "explanation": "add must add"}, ctx)
    # The repository moves on; the replayed call must return what it recorded, not validate or record anew.
    (git_repo / "src" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    subprocess.run(["git", "commit", "-qam", "fixed by hand"], cwd=git_repo, check=True)
    with pytest.raises(ApprovalRequired) as again:
        t.invoke({"diff": FIX, "explanation": "something else"}, ctx)
    assert again.value.proposal == first.value.proposal
    assert list(state["proposals"]) == ["call-1"]
    # A different call is a different proposal (and this one no longer applies).
    out = t.invoke({"diff": FIX, "explanation": "x"}, ToolContext("run-1", "call-2", state))
    assert out.is_error and "does not apply" in out.content


@pytest.mark.parametrize(("diff", "explanation", "needle"), [
    (FIX, "  ", "explanation is empty"),
    (FIX, "x" * 5000, "keep it under"),
    (FIX.replace("+    return a + b", "+    api_key = 'sk-abcdefghijklmnopqrstuvwx'"), "x", "credential"),
])
def test_refusals_before_validation(git_repo: Path, diff: str, explanation: str, needle: str) -> None:
    out = propose_fix_tool(git_repo).invoke({"diff": diff, "explanation": explanation},
                                            ToolContext("r", "c", {}))
    assert out.is_error and needle in out.content


def test_no_second_proposal_after_an_applied_one(git_repo: Path) -> None:
    out = propose_fix_tool(git_repo).invoke({"diff": FIX, "explanation": "x"},
                                            ToolContext("r", "c", {"applied_branch": "repopilot/r"}))
    assert out.is_error and "already approved" in out.content


def test_calls_after_the_proposal_in_the_same_turn_get_results(git_repo: Path) -> None:
    agent, _ = _agent(git_repo, [{"content": "", "tool_calls": [
        {"id": "p1", "name": "propose_fix", "arguments": {"diff": FIX, "explanation": "x"}},
        {"id": "r1", "name": "read_file", "arguments": {"path": "README.md"}},
    ]}])
    result = agent.run(seed_messages([]))
    assert result.status == "awaiting_approval"
    messages = load_messages(result.trace.messages)
    calls = {c.id for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls}
    answered = {m.tool_call_id: m for m in messages if isinstance(m, ToolResultMessage)}
    assert set(answered) == calls
    assert answered["r1"].is_error and "not run" in answered["r1"].content


REPORT = {
    "category": "test", "decided_by": "rules", "error_lines": [7, 8], "source": "ci.log", "run_id": None,
    "failures": [{"rule": "pytest-assert", "category": "test", "confidence": 0.9,
                  "message": "test_add failed: assert -1 == 5", "file": "tests/test_calc.py", "line": 5,
                  "test": "tests/test_calc.py::test_add", "hint": "check add()",
                  "lines": [{"line": 7, "text": "E   assert -1 == 5"}, {"line": 8, "text": "FAILED test_add"}]}],
    "excerpt": {"ranges": [[5, 9]], "tokens": 30, "text": "     7 | E   assert -1 == 5\n"},
}


def test_seed_carries_the_diagnosis_not_the_log() -> None:
    system, user = seed_messages([DiagnosisReport.model_validate(REPORT)])
    assert "propose_fix" in system.content
    text = user.content
    for needle in ("Category: test (decided by rules)", "tests/test_calc.py:5", "hint: check add()",
                   "tests/test_calc.py::test_add", "     7 | E   assert -1 == 5", "lines 5-9"):
        assert needle in text


def test_seed_excerpt_is_capped() -> None:
    big = {**REPORT, "excerpt": {"ranges": [[1, 5000]], "tokens": 99_999, "text": "x" * 50_000 + "TAIL"}}
    text = describe_diagnosis([DiagnosisReport.model_validate(big)], max_excerpt_chars=1000)
    assert "TAIL" in text and len(text) < 2000 and "cut" in text
    assert "No rule recognised" in describe_diagnosis([DiagnosisReport.model_validate({**REPORT, "failures": []})])
