"""Agent-loop overhead: the same N tool calls through RepoPilot's loop, mini-swe-agent and pydantic-ai.

    pip install -e '.[bench]'          # the peers (optional; a peer that is not installed is skipped)
    python bench/agent_loop.py [--n 10 50 200] [--runs 5]

All in one process, interleaved run by run, so the machine's load hits every framework alike. Each framework gets
a scripted model that asks for one tool call per turn, N times, then answers; the tool returns a short string.
Overhead per step = (wall time of the run - time inside the model function and the tool) / N: what the framework
itself costs per tool call. RepoPilot's figure includes writing its trace (redacted, to a temporary directory),
since that is what its loop does. Targets (issue 16): at most 2 ms per step at N = 200, and within 2x of the
faster peer at each N. Medians of --runs runs. (mini-swe-agent creates ~/.config/mini-swe-agent when imported.)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from repopilot.core import (  # noqa: E402
    Agent,
    AssistantMessage,
    Budgets,
    Message,
    ModelResponse,
    SystemMessage,
    ToolCall,
    ToolRegistry,
    ToolSpec,
    TraceRecorder,
    UserMessage,
    tool,
)

RESULT = "ok: " + "x" * 60


class Clock:
    """Time spent inside the model function and the tool, which is not the framework's overhead."""

    def __init__(self) -> None:
        self.inside = 0.0

    def timed(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.inside += time.perf_counter() - started
        return wrapper


# -- RepoPilot ----------------------------------------------------------------------------------------------------

class _Scripted:
    provider, model, endpoint = "bench", "scripted", None

    def __init__(self, n: int, clock: Clock) -> None:
        self.n, self.turn = n, 0
        self.chat = clock.timed(self._chat)  # type: ignore[method-assign]

    def _chat(self, messages: Sequence[Message], tools: Sequence[ToolSpec], **_: Any) -> ModelResponse:
        self.turn += 1
        if self.turn > self.n:
            return ModelResponse(message=AssistantMessage(content="done"))
        call = ToolCall(id=f"c{self.turn}", name="work", arguments={"i": self.turn})
        return ModelResponse(message=AssistantMessage(content="", tool_calls=[call]), finish_reason="tool_calls")


def run_repopilot(n: int) -> float:
    clock = Clock()

    @tool
    def work(i: int) -> str:
        """Do one unit of work.

        Args:
            i: Which unit.
        """
        return clock.timed(lambda: RESULT)()

    with tempfile.TemporaryDirectory() as tmp:
        rec = TraceRecorder.start("ask", "bench", directory=Path(tmp))
        agent = Agent(_Scripted(n, clock), ToolRegistry([work]), rec, Budgets(max_steps=n + 5))  # type: ignore[arg-type]
        started = time.perf_counter()
        result = agent.run([SystemMessage(content="sys"), UserMessage(content="go")])
        wall = time.perf_counter() - started
    assert result.status == "completed" and rec.trace.totals.tool_calls == n, result.status
    return (wall - clock.inside) / n


# -- pydantic-ai --------------------------------------------------------------------------------------------------

def run_pydantic_ai(n: int) -> float:
    from pydantic_ai import Agent as PAgent
    from pydantic_ai.messages import ModelResponse as PResponse
    from pydantic_ai.messages import TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import UsageLimits

    clock = Clock()
    state = {"turn": 0}

    def model(messages: list[Any], info: AgentInfo) -> PResponse:
        state["turn"] += 1
        if state["turn"] > n:
            return PResponse(parts=[TextPart("done")])
        return PResponse(parts=[ToolCallPart("work", {"i": state["turn"]}, tool_call_id=f"c{state['turn']}")])

    agent = PAgent(FunctionModel(clock.timed(model)))

    @agent.tool_plain
    def work(i: int) -> str:
        """Do one unit of work."""
        return clock.timed(lambda: RESULT)()

    started = time.perf_counter()
    out = agent.run_sync("go", usage_limits=UsageLimits(request_limit=n + 5))
    wall = time.perf_counter() - started
    assert out.output == "done" and state["turn"] == n + 1
    return (wall - clock.inside) / n


# -- mini-swe-agent -----------------------------------------------------------------------------------------------

def run_mini_swe_agent(n: int) -> float:
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.exceptions import Submitted
    from minisweagent.models.test_models import DeterministicModel, make_output

    clock = Clock()

    class Env:
        """In process: a command costs a function call, as RepoPilot's and pydantic-ai's tools do (its local
        environment would start a shell per command). Ends the run as mini-swe-agent's own environments do."""

        def execute(self, action: dict[str, Any], cwd: str = "", **_: Any) -> dict[str, Any]:
            output = clock.timed(lambda: {"output": RESULT, "returncode": 0, "exception_info": ""})()
            if action.get("command", "").startswith("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"):
                raise Submitted({"role": "exit", "content": "done",
                                 "extra": {"exit_status": "Submitted", "submission": "done"}})
            return output

        def get_template_vars(self, **_: Any) -> dict[str, Any]:
            return {}

        def serialize(self) -> dict[str, Any]:
            return {}

    outputs = [make_output(f"step {i}", [{"command": f"echo {i}"}], cost=0.0) for i in range(n)]
    outputs.append(make_output("done", [{"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}], cost=0.0))
    model = DeterministicModel(outputs=outputs, cost_per_call=0.0)
    model.query = clock.timed(model.query)  # type: ignore[method-assign]
    agent = DefaultAgent(model, Env(), system_template="sys", instance_template="{{task}}",  # type: ignore[arg-type]
                         step_limit=n + 5, cost_limit=0)
    started = time.perf_counter()
    result = agent.run("go")
    wall = time.perf_counter() - started
    assert result.get("exit_status") == "Submitted" and agent.n_calls == n + 1, result
    return (wall - clock.inside) / n


PEERS: dict[str, Callable[[int], float]] = {"mini-swe-agent": run_mini_swe_agent, "pydantic-ai": run_pydantic_ai}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[10, 50, 200])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    runners: dict[str, Callable[[int], float]] = {"repopilot": run_repopilot}
    for name, fn in PEERS.items():
        try:
            fn(2)
            runners[name] = fn
        except ImportError as exc:
            print(f"{name}: not installed ({exc.name}); pip install -e '.[bench]'")
    ok = True
    print(f"overhead per tool call in ms, median of {args.runs} interleaved runs (one process)")
    print("     N  " + "".join(f"{name:>16s}" for name in runners) + "   repopilot / faster peer")
    for n in args.n:
        samples: dict[str, list[float]] = {name: [] for name in runners}
        for _ in range(args.runs):
            for name, fn in runners.items():
                samples[name].append(fn(n))
        med = {name: statistics.median(v) * 1000 for name, v in samples.items()}
        peers = [v for name, v in med.items() if name != "repopilot"]
        ratio = med["repopilot"] / min(peers) if peers else float("nan")
        print(f"  {n:4d}  " + "".join(f"{med[name]:16.3f}" for name in runners) + f"   {ratio:.2f}x")
        ok &= (not peers or ratio <= 2.0) and (n != 200 or med["repopilot"] <= 2.0)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
