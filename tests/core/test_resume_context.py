"""In-process resume and context management: what a resumed run is told, what it is not asked again, and how
old tool results are shortened for the model while the trace keeps them whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from repopilot.core import (
    Agent,
    AssistantMessage,
    Budgets,
    Proposal,
    ProviderError,
    SystemMessage,
    ToolRegistry,
    ToolResultMessage,
    TraceRecorder,
    UserMessage,
    load_messages,
    load_trace,
)
from repopilot.providers import ScriptedModel
from repopilot.repo import repo_tools


def _read(call_id: str, path: str = "big.txt") -> dict[str, Any]:
    return {"content": "", "tool_calls": [{"id": call_id, "name": "read_file", "arguments": {"path": path}}]}


def _start(root: Path, model: ScriptedModel, **kwargs: Any) -> Agent:
    rec = TraceRecorder.start("ask", "goal", repo=str(root))
    return Agent(model, ToolRegistry(repo_tools(root)), rec, **kwargs)


def _seed() -> list[Any]:
    return [SystemMessage(content="sys"), UserMessage(content="read big.txt")]


def test_old_tool_results_are_elided_for_the_model_and_kept_in_the_trace(git_repo: Path) -> None:
    (git_repo / "big.txt").write_text("".join(f"line {i:04d} of a large file\n" for i in range(150)))
    model = ScriptedModel([_read("a1"), _read("a2"), _read("a3"), _read("a4"), "done"])
    agent = _start(git_repo, model, context_tokens=1500, budgets=Budgets(max_steps=10))
    result = agent.run(_seed())
    assert result.status == "completed"
    decisions = [s for s in result.trace.steps if s.type == "decision" and
                 s.detail.get("decision") == "elide_context"]
    assert decisions, "no elision was recorded"
    elided_ids = [e["tool_call_id"] for d in decisions for e in d.detail["elided"]]
    assert "a1" in elided_ids and "a4" not in elided_ids
    assert all(e["chars"] > 4000 for d in decisions for e in d.detail["elided"])
    # The trace keeps every result whole ...
    full = {s.tool_call_id: s.result for s in result.trace.steps if s.type == "tool_result"}
    assert all("line 0149" in full[i] for i in ("a1", "a2", "a3", "a4"))
    # ... the model saw the elided form of old results and the recent ones whole ...
    last_call = model.calls[-1]["messages"]
    seen = {m.tool_call_id: m.content for m in last_call if isinstance(m, ToolResultMessage)}
    assert seen["a1"].startswith("[elided") and "line 0149" in seen["a4"] and "line 0149" in seen["a3"]
    # ... and a resumed run continues from the same, elided conversation.
    persisted = {m.tool_call_id: m.content for m in load_messages(result.trace.messages)
                 if isinstance(m, ToolResultMessage)}
    assert persisted["a1"].startswith("[elided")


def test_no_elision_below_the_budget(git_repo: Path) -> None:
    model = ScriptedModel([_read("a1", "README.md"), "done"])
    result = _start(git_repo, model, context_tokens=100_000).run(_seed())
    assert not [s for s in result.trace.steps if s.type == "decision"]


def _approved_run(root: Path, decision: str) -> str:
    model = ScriptedModel([_read("a1", "README.md")])
    rec = TraceRecorder.start("fix", "goal", repo=str(root))
    agent = Agent(model, ToolRegistry(repo_tools(root)), rec, Budgets(max_steps=10))
    with pytest.raises(ProviderError):
        agent.run(_seed())  # the script runs out after one turn: the run fails, resumable
    proposal = Proposal.make("--- a/x\n+++ b/x\n", "why", tool_call_id="a1", decision=decision,
                             branch="repopilot/r", commit="abc", reason="too broad")
    rec.trace.proposal = proposal.model_dump(mode="json")
    rec.finish(decision)
    return rec.trace.run_id


@pytest.mark.parametrize(("decision", "needle"), [("approved", "approved"), ("rejected", "too broad")])
def test_the_decision_is_told_once_even_if_interrupted(git_repo: Path, decision: str, needle: str) -> None:
    run_id = _approved_run(git_repo, decision)
    interrupting = ScriptedModel([KeyboardInterrupt()])
    agent = Agent(interrupting, ToolRegistry(repo_tools(git_repo)), TraceRecorder.resume(run_id))
    with pytest.raises(KeyboardInterrupt):
        agent.resume()
    assert load_trace(run_id).status == "interrupted"
    model = ScriptedModel(["finished"])
    result = Agent(model, ToolRegistry(repo_tools(git_repo)), TraceRecorder.resume(run_id)).resume()
    assert result.status == "completed"
    told = [m for m in model.calls[0]["messages"] if isinstance(m, UserMessage) and "proposal" in m.content]
    assert len(told) == 1 and needle in told[0].content


def test_a_recorded_final_answer_is_not_asked_again(git_repo: Path) -> None:
    model = ScriptedModel(["the answer"])
    agent = _start(git_repo, model)
    agent.run(_seed())
    rec = TraceRecorder.resume(agent.rec.trace.run_id)
    rec.trace.status = "running"  # as if killed after the reply was saved, before the run was marked
    rec.save()
    never = ScriptedModel([])
    result = Agent(never, ToolRegistry(repo_tools(git_repo)), rec).resume()
    assert (result.status, result.answer, never.calls) == ("completed", "the answer", [])


def test_a_recorded_budget_answer_keeps_its_status(git_repo: Path) -> None:
    model = ScriptedModel([_read("a1", "README.md"), "partial answer"])
    agent = _start(git_repo, model, budgets=Budgets(max_steps=1))
    assert agent.run(_seed()).status == "budget_exhausted:steps"
    rec = TraceRecorder.resume(agent.rec.trace.run_id)
    rec.trace.status = "running"
    rec.save()
    result = Agent(ScriptedModel([]), ToolRegistry(repo_tools(git_repo)), rec).resume()
    assert (result.status, result.answer) == ("budget_exhausted:steps", "partial answer")


def test_undecided_proposal_stops_without_a_model_call(git_repo: Path) -> None:
    rec = TraceRecorder.start("fix", "goal", repo=str(git_repo))
    rec.trace.messages = [m.model_dump(mode="json") for m in _seed()]
    rec.trace.messages.append(AssistantMessage(content="x").model_dump(mode="json"))
    rec.trace.proposal = Proposal.make("d\n", "e").model_dump(mode="json")
    rec.save()
    never = ScriptedModel([])
    result = Agent(never, ToolRegistry([]), rec).resume()
    assert result.status == "awaiting_approval" and never.calls == []


def test_pending_results_come_before_the_decision_message(git_repo: Path) -> None:
    # Killed while the other calls of the proposing turn were being answered, then approved.
    from repopilot.core import ToolCall
    rec = TraceRecorder.start("fix", "goal", repo=str(git_repo))
    turn = AssistantMessage(content="", tool_calls=[ToolCall(id="p1", name="propose_fix", arguments={}),
                                                    ToolCall(id="r1", name="read_file",
                                                             arguments={"path": "README.md"})])
    done = ToolResultMessage(tool_call_id="p1", name="propose_fix", content="proposal recorded")
    rec.trace.messages = [m.model_dump(mode="json") for m in [*_seed(), turn, done]]
    rec.trace.proposal = Proposal.make("d\n", "e", tool_call_id="p1", decision="approved").model_dump(mode="json")
    rec.finish("approved")
    model = ScriptedModel(["summary"])
    result = Agent(model, ToolRegistry(repo_tools(git_repo)), rec).resume()
    assert result.status == "completed"
    roles = [(m.role, getattr(m, "tool_call_id", None)) for m in model.calls[0]["messages"]]
    assert roles[-3:] == [("tool", "p1"), ("tool", "r1"), ("user", None)]
