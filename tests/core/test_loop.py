import time
from pathlib import Path
from typing import Any

import pytest

from repopilot.core import (
    Agent,
    Budgets,
    ProviderError,
    RunTrace,
    Step,
    SystemMessage,
    ToolRegistry,
    ToolResultMessage,
    TraceRecorder,
    UserMessage,
    read_trace,
    tool,
)
from repopilot.providers import ScriptedModel


@tool
def add(a: int, b: int) -> str:
    """Add two integers.

    Args:
        a: The first.
        b: The second.
    """
    return str(a + b)


@tool
def explode() -> str:
    """Always fails."""
    raise RuntimeError("disk on fire")


@tool
def big() -> str:
    """Return a very large result."""
    return "x" * 50_000


def make_agent(tmp_path: Path, replies: Any, budgets: Budgets | None = None, **kw: Any) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel(replies, **{k: v for k, v in kw.items() if k == "price_per_mtok"})
    rec = TraceRecorder.start("ask", "test goal", directory=tmp_path)
    agent_kw = {k: v for k, v in kw.items() if k != "price_per_mtok"}
    return Agent(model, ToolRegistry([add, explode, big]), rec, budgets or Budgets(), **agent_kw), model


def start(agent: Agent) -> Any:
    return agent.run([SystemMessage(content="sys"), UserMessage(content="go")])


def load(path: Path) -> dict[str, Any]:
    return read_trace(path).model_dump(mode="json")


def test_tool_calls_run_in_order_and_results_pair_by_id(tmp_path: Path) -> None:
    agent, model = make_agent(tmp_path, [
        {"tool_calls": [{"id": "c1", "name": "add", "arguments": {"a": 1, "b": 2}},
                        {"id": "c2", "name": "add", "arguments": {"a": 10, "b": 20}}]},
        "the sums are 3 and 30",
    ])
    result = start(agent)
    assert result.status == "completed"
    assert result.answer == "the sums are 3 and 30"
    second_call = model.calls[1]["messages"]
    results = [m for m in second_call if isinstance(m, ToolResultMessage)]
    assert [(r.tool_call_id, r.content) for r in results] == [("c1", "3"), ("c2", "30")]
    trace = load(result.trace_path)
    assert [s["type"] for s in trace["steps"]] == [
        "llm_call", "tool_call", "tool_result", "tool_call", "tool_result", "llm_call"]
    assert trace["totals"]["model_calls"] == 2 and trace["totals"]["tool_calls"] == 2
    for s in trace["steps"]:
        for key in ("step_number", "timestamp", "type", "model", "tool_name", "arguments", "result", "error",
                    "duration_ms", "input_tokens", "output_tokens"):
            assert key in s
    assert trace["steps"][0]["input_tokens"] > 0


def test_every_tool_failure_becomes_an_error_result_and_the_loop_goes_on(tmp_path: Path) -> None:
    agent, model = make_agent(tmp_path, [
        {"tool_calls": [
            {"id": "u", "name": "no_such_tool", "arguments": {}},
            {"id": "j", "name": "add", "arguments_error": "Expecting value: line 1 column 1"},
            {"id": "v", "name": "add", "arguments": {"a": "one", "b": 2}},
            {"id": "x", "name": "explode", "arguments": {}},
        ]},
        "done",
    ])
    result = start(agent)
    assert result.status == "completed"
    results = {m.tool_call_id: m for m in model.calls[1]["messages"] if isinstance(m, ToolResultMessage)}
    assert all(r.is_error for r in results.values())
    assert "unknown tool 'no_such_tool'" in results["u"].content and "add" in results["u"].content
    assert "not valid JSON" in results["j"].content
    assert "invalid arguments for add" in results["v"].content and "a:" in results["v"].content
    assert "RuntimeError: disk on fire" in results["x"].content
    assert load(result.trace_path)["totals"]["errors"] >= 4


def _always_tools(messages: Any, tools: Any) -> Any:
    if not tools:
        return "final answer from what was found"
    return {"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 1}}]}


def test_steps_budget_forces_a_final_answer_without_tools(tmp_path: Path) -> None:
    agent, model = make_agent(tmp_path, _always_tools, Budgets(max_steps=3))
    result = start(agent)
    assert result.status == "budget_exhausted:steps"
    assert result.answer == "final answer from what was found"
    assert len(model.calls) == 4  # 3 steps, then one last call
    assert model.calls[-1]["tools"] == []
    trace = load(result.trace_path)
    decision = [s for s in trace["steps"] if s["type"] == "decision"]
    assert decision and decision[0]["detail"]["budget"] == "steps"


def test_tokens_budget(tmp_path: Path) -> None:
    agent, _ = make_agent(tmp_path, _always_tools, Budgets(max_steps=100, max_tokens=150))
    result = start(agent)
    assert result.status == "budget_exhausted:tokens"
    assert result.answer


def test_cost_budget_when_prices_are_known(tmp_path: Path) -> None:
    agent, _ = make_agent(tmp_path, _always_tools, Budgets(max_steps=100, max_cost=0.0001),
                          price_per_mtok=(10.0, 30.0))
    result = start(agent)
    assert result.status == "budget_exhausted:cost"
    assert load(result.trace_path)["totals"]["cost"] > 0


def test_unknown_price_never_exhausts_cost_and_reports_unknown(tmp_path: Path) -> None:
    agent, _ = make_agent(tmp_path, _always_tools, Budgets(max_steps=4, max_cost=0.0))
    result = start(agent)
    assert result.status == "budget_exhausted:steps"
    assert load(result.trace_path)["totals"]["cost"] is None


def test_seconds_budget(tmp_path: Path) -> None:
    def slow(messages: Any, tools: Any) -> Any:
        time.sleep(0.05)
        return _always_tools(messages, tools)

    agent, _ = make_agent(tmp_path, slow, Budgets(max_steps=1000, max_seconds=0.2))
    result = start(agent)
    assert result.status == "budget_exhausted:seconds"
    assert result.answer == "final answer from what was found"


def test_large_results_are_truncated_for_the_model_but_kept_whole_in_the_trace(tmp_path: Path) -> None:
    agent, model = make_agent(tmp_path, [{"tool_calls": [{"id": "b", "name": "big", "arguments": {}}]}, "ok"],
                              max_result_chars=1000)
    result = start(agent)
    sent = next(m for m in model.calls[1]["messages"] if isinstance(m, ToolResultMessage))
    assert len(sent.content) < 1200 and "truncated" in sent.content
    step = next(s for s in load(result.trace_path)["steps"] if s["type"] == "tool_result")
    assert len(step["result"]) == 50_000
    assert step["detail"]["truncated"] is True


def test_provider_error_fails_the_run_with_an_error_step(tmp_path: Path) -> None:
    agent, _ = make_agent(tmp_path, [ProviderError("overloaded", provider="scripted", status=529)])
    with pytest.raises(ProviderError):
        start(agent)
    trace = load(agent.rec.path)
    assert trace["status"] == "failed"
    assert trace["steps"][-1]["type"] == "error" and "529" in trace["steps"][-1]["error"]


def test_ctrl_c_marks_the_run_interrupted(tmp_path: Path) -> None:
    agent, _ = make_agent(tmp_path, [KeyboardInterrupt()])
    with pytest.raises(KeyboardInterrupt):
        start(agent)
    assert load(agent.rec.path)["status"] == "interrupted"


def test_trace_is_rewritten_after_every_step(tmp_path: Path) -> None:
    seen: list[int] = []

    class Watcher:
        def on_step(self, trace: RunTrace, step: Step) -> None:
            on_disk = load(tmp_path / f"{trace.run_id}.json")
            seen.append(len(on_disk["steps"]))
            assert on_disk["steps"][-1]["step_number"] == step.step_number

        def on_finish(self, trace: RunTrace) -> None:
            pass

    agent, _ = make_agent(tmp_path, [{"tool_calls": [{"name": "add", "arguments": {"a": 1, "b": 2}}]}, "3"])
    agent.rec.listeners.append(Watcher())
    start(agent)
    assert seen == [1, 2, 3, 4]
    assert not list(tmp_path.glob("*.tmp")), "temp files left behind"


def test_a_failing_listener_never_breaks_the_run(tmp_path: Path) -> None:
    class Broken:
        def on_step(self, trace: RunTrace, step: Step) -> None:
            raise ValueError("exporter down")

        def on_finish(self, trace: RunTrace) -> None:
            raise AssertionError("not called after being dropped")

    agent, _ = make_agent(tmp_path, ["hello"])
    agent.rec.listeners.append(Broken())
    assert start(agent).status == "completed"
    assert agent.rec.listener_errors and "exporter down" in agent.rec.listener_errors[0]


def test_old_tool_results_are_elided_near_the_context_budget(tmp_path: Path) -> None:
    replies = [{"tool_calls": [{"id": f"b{i}", "name": "big", "arguments": {}}]} for i in range(4)] + ["done"]
    agent, model = make_agent(tmp_path, replies, context_tokens=8000, max_result_chars=20_000)
    result = start(agent)
    last = [m for m in model.calls[-1]["messages"] if isinstance(m, ToolResultMessage)]
    assert last[0].content.startswith("[elided")
    assert not last[-1].content.startswith("[elided")
    trace = load(result.trace_path)
    elisions = [s for s in trace["steps"] if s["type"] == "decision" and s["detail"]["decision"] == "elide_context"]
    assert elisions and elisions[0]["detail"]["elided"][0]["tool_call_id"] == "b0"
    # The trace still holds every result whole (the repeats behind the note saying they are repeats).
    assert all(s["result"].endswith("x" * 50_000) for s in trace["steps"] if s["type"] == "tool_result")


def test_resume_runs_only_unanswered_tool_calls_and_never_reasks_answered_turns(tmp_path: Path) -> None:
    calls: list[str] = []

    @tool
    def record(tag: str) -> str:
        """Record a tag.

        Args:
            tag: The tag.
        """
        calls.append(tag)
        return f"recorded {tag}"

    model = ScriptedModel([{"tool_calls": [{"id": "t1", "name": "record", "arguments": {"tag": "one"}},
                                           {"id": "t2", "name": "record", "arguments": {"tag": "two"}}]}])
    rec = TraceRecorder.start("ask", "g", directory=tmp_path)
    agent = Agent(model, ToolRegistry([record]), rec, Budgets())

    # Simulate a crash after the first tool result: make the second execution blow up the process.
    original = record.func

    def crash_on_two(tag: str) -> str:
        if tag == "two":
            raise KeyboardInterrupt
        return original(tag)

    record.func = crash_on_two
    with pytest.raises(KeyboardInterrupt):
        agent.run([UserMessage(content="go")])
    record.func = original
    assert calls == ["one"]

    resumed_model = ScriptedModel(["all recorded"])
    resumed = Agent(resumed_model, ToolRegistry([record]), TraceRecorder.resume(rec.trace.run_id, tmp_path))
    result = resumed.resume()
    assert result.status == "completed" and result.answer == "all recorded"
    assert calls == ["one", "two"]  # "one" was not recomputed
    assert len(resumed_model.calls) == 1  # the answered first turn was not asked again
    sent = [m for m in resumed_model.calls[0]["messages"] if isinstance(m, ToolResultMessage)]
    assert [m.tool_call_id for m in sent] == ["t1", "t2"]
    trace = load(result.trace_path)
    assert trace["totals"]["model_calls"] == 2


def test_tool_calls_past_the_per_turn_cap_are_answered_not_run(tmp_path: Path) -> None:
    ran: list[int] = []

    @tool
    def count(n: int) -> str:
        """Count a call.

        Args:
            n: Its number.
        """
        ran.append(n)
        return "ok"

    calls = [{"id": f"c{i}", "name": "count", "arguments": {"n": i}} for i in range(300)]
    model = ScriptedModel([{"tool_calls": calls}, "done"])
    rec = TraceRecorder.start("ask", "goal", directory=tmp_path)
    agent = Agent(model, ToolRegistry([count]), rec, Budgets(max_steps=1), max_tool_calls_per_turn=5)
    result = start(agent)
    assert ran == [0, 1, 2, 3, 4]
    assert result.status == "budget_exhausted:steps" and result.answer == "done"
    sent = [m for m in model.calls[1]["messages"] if isinstance(m, ToolResultMessage)]
    assert [m.tool_call_id for m in sent] == [f"c{i}" for i in range(300)]  # every call paired, in order
    assert all(m.is_error and "at most 5 tool calls" in m.content for m in sent[5:])
    trace = load(result.trace_path)
    capped = [s for s in trace["steps"] if s["type"] == "decision" and s["result"] == "tool_calls_capped"]
    assert len(capped) == 1 and len(capped[0]["detail"]["skipped"]) == 295


def test_a_repeated_read_only_call_runs_again_with_a_note_before_its_result(tmp_path: Path) -> None:
    same = {"name": "add", "arguments": {"a": 1, "b": 2}}
    agent, model = make_agent(tmp_path, [
        {"tool_calls": [{"id": "c1", **same}]},
        {"tool_calls": [{"id": "c2", **same}, {"id": "c3", "name": "add", "arguments": {"a": 2, "b": 2}}]},
        "done",
    ])
    result = start(agent)
    results = {m.tool_call_id: m.content for m in model.calls[2]["messages"] if isinstance(m, ToolResultMessage)}
    assert results["c1"] == "3" and results["c3"] == "4"  # first time, and a different call: no note
    assert results["c2"].startswith("[you made this same call in an earlier turn") and results["c2"].endswith("\n3")
    assert result.status == "completed"


def test_repeats_are_told_across_turns_only_by_value_and_after_a_resume(tmp_path: Path) -> None:
    """The seen calls are kept as the conversation grows: twice in one reply is not a repeat, the same arguments in
    another key order are, and a resumed run knows the calls made before it was stopped."""
    agent, model = make_agent(tmp_path, [
        {"tool_calls": [{"id": "c1", "name": "add", "arguments": {"a": 1, "b": 2}},
                        {"id": "c2", "name": "add", "arguments": {"a": 1, "b": 2}}]},
        {"tool_calls": [{"id": "c3", "name": "add", "arguments": {"b": 2, "a": 1}},
                        {"id": "c4", "name": "add", "arguments": {"a": 5, "b": 5}}]},
        "done",
    ])
    start(agent)
    noted = {m.tool_call_id: m.content.startswith("[you made this same call")
             for m in model.calls[2]["messages"] if isinstance(m, ToolResultMessage)}
    assert noted == {"c1": False, "c2": False, "c3": True, "c4": False}

    # Stopped (Ctrl-C) while running the second reply's call: the resumed run knows the first reply's call from
    # what it loaded from the trace, so the pending repeat still gets its note.
    stop = [False, True]

    @tool
    def look(path: str) -> str:
        """Read a file.

        Args:
            path: The file.
        """
        if stop.pop(0):
            raise KeyboardInterrupt
        return f"contents of {path}"

    rec = TraceRecorder.start("ask", "goal", directory=tmp_path)
    first = Agent(ScriptedModel([{"tool_calls": [{"id": "r1", "name": "look", "arguments": {"path": "a.py"}}]},
                                 {"tool_calls": [{"id": "r2", "name": "look", "arguments": {"path": "a.py"}}]}]),
                  ToolRegistry([look]), rec, Budgets())
    with pytest.raises(KeyboardInterrupt):
        start(first)
    stop.append(False)
    resumed_model = ScriptedModel(["done"])
    resumed = Agent(resumed_model, ToolRegistry([look]), TraceRecorder.resume(rec.trace.run_id, tmp_path))
    assert resumed.resume().status == "completed"
    results = {m.tool_call_id: m.content for m in resumed_model.calls[0]["messages"]
               if isinstance(m, ToolResultMessage)}
    assert results["r1"] == "contents of a.py"
    assert results["r2"].startswith("[you made this same call") and results["r2"].endswith("contents of a.py")
