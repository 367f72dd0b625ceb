"""Trace overhead: what recording costs in a long agent run, and whether a late step costs more than an early one.

    python bench/trace_overhead.py [--steps 1000] [--runs 5] [--result-bytes 5000]

A scripted model asks for one tool call per turn, `--steps` times; the tool returns `--result-bytes` of real log
text (from examples/, different for every call). Tracing time is the time spent inside the recorder (step, save,
finish), copying the conversation into the trace, and redacting tool results: measured per loop iteration (one
model reply, its tool call and its result). Targets (issue 10): at most 2 s of tracing for 1,000 steps with 5 KB
results, and the 1,000th step at most 2x the 10th (each the median of the 11 iterations around it, so one
scheduler hiccup does not decide). Medians over `--runs` runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from repopilot.core import (  # noqa: E402
    Agent,
    AssistantMessage,
    Budgets,
    ModelResponse,
    Redactor,
    SystemMessage,
    ToolCall,
    ToolRegistry,
    TraceRecorder,
    UserMessage,
    tool,
)
from repopilot.core.loop import Agent as _Agent  # noqa: E402


class _Model:
    """One tool call per turn, then an answer; costs nothing itself (the scripted provider estimates tokens by
    serialising the whole conversation, which would only slow the bench down)."""

    provider, model, endpoint = "bench", "scripted", None

    def __init__(self, steps: int) -> None:
        self.steps, self.turn = steps, 0

    def chat(self, messages: Any, tools: Any, **_: Any) -> ModelResponse:
        self.turn += 1
        if self.turn > self.steps:
            return ModelResponse(message=AssistantMessage(content="done"))
        call = ToolCall(id=f"c{self.turn}", name="read_log", arguments={"n": self.turn})
        return ModelResponse(message=AssistantMessage(content="", tool_calls=[call]), finish_reason="tool_calls")


def _corpus() -> str:
    text = "".join(p.read_text(errors="replace") for p in sorted((ROOT / "examples").rglob("*.log")))
    return text or "FAILED tests/test_x.py::test_y - AssertionError: expected 1, got 2\n" * 100


class Meter:
    """Adds up time spent in the wrapped functions, counting only the outermost call."""

    def __init__(self) -> None:
        self.total = 0.0
        self.depth = 0
        self.originals: list[tuple[Any, str, Any]] = []

    def unwrap(self) -> None:
        for owner, name, original in self.originals:
            setattr(owner, name, original)

    def wrap(self, owner: Any, name: str) -> None:
        original: Callable[..., Any] = getattr(owner, name)
        self.originals.append((owner, name, original))

        def timed(*args: Any, **kwargs: Any) -> Any:
            if self.depth:
                return original(*args, **kwargs)
            self.depth += 1
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.total += time.perf_counter() - started
                self.depth -= 1

        setattr(owner, name, timed)


def one_run(steps: int, result_bytes: int, directory: Path) -> tuple[float, list[float], float]:
    corpus = _corpus()
    meter = Meter()
    for owner, name in ((TraceRecorder, "step"), (TraceRecorder, "save"), (TraceRecorder, "finish"),
                        (_Agent, "_persist_messages"), (Redactor, "text")):
        meter.wrap(owner, name)

    @tool
    def read_log(n: int) -> str:
        """Read part of the log.

        Args:
            n: Which part.
        """
        start = (n * 997) % max(1, len(corpus) - result_bytes)
        return f"part {n}\n" + corpus[start: start + result_bytes]

    per_step: list[float] = []
    state = {"last": 0.0}

    class Ticker:
        def on_step(self, trace: Any, step: Any) -> None:
            if step.type == "tool_result":
                per_step.append(meter.total - state["last"])
                state["last"] = meter.total

        def on_finish(self, trace: Any) -> None:
            pass

    rec = TraceRecorder.start("ask", "bench", directory=directory,
                              redactor=Redactor(["not-a-real-key-0123456789abcdef"]))
    rec.listeners.append(Ticker())
    agent = Agent(_Model(steps), ToolRegistry([read_log]), rec, Budgets(max_steps=steps + 5))  # type: ignore[arg-type]
    started = time.perf_counter()
    result = agent.run([SystemMessage(content="sys"), UserMessage(content="go")])
    wall = time.perf_counter() - started
    assert result.status == "completed", result.status
    meter.unwrap()
    return meter.total, per_step, wall


def _around(values: list[float], index: int, half: int = 5) -> float:
    lo = max(0, index - half)
    return statistics.median(values[lo: index + half + 1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--result-bytes", type=int, default=5000)
    args = parser.parse_args()
    totals, early, late, raw_early, raw_late, walls = [], [], [], [], [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            total, per_step, wall = one_run(args.steps, args.result_bytes, Path(tmp))
        totals.append(total)
        walls.append(wall)
        early.append(_around(per_step, 9))
        late.append(_around(per_step, len(per_step) - 1))
        raw_early.append(per_step[9])
        raw_late.append(per_step[-1])
    total, e, lt = statistics.median(totals), statistics.median(early), statistics.median(late)
    print(f"trace overhead, {args.steps} steps with {args.result_bytes}-byte tool results, median of {args.runs} runs")
    print(f"  tracing in all:           {total:.3f} s   (target <= 2 s)   whole run {statistics.median(walls):.3f} s")
    print(f"  step 10 (median of 11):   {e * 1000:.3f} ms   raw {statistics.median(raw_early) * 1000:.3f} ms")
    print(f"  step {args.steps} (median of 6):  {lt * 1000:.3f} ms   raw {statistics.median(raw_late) * 1000:.3f} ms")
    print(f"  late / early:             {lt / e:.2f}x   (target <= 2x)")
    ok = total <= 2.0 and lt <= 2 * e
    print("  PASS" if ok else "  FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
