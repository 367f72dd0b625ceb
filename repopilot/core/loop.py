"""The ReAct loop: ask the model, run the tools it calls, feed back the results, until it answers without
tools or a budget runs out. Every model reply and tool result is written to the trace before going on, so a
run killed at any point resumes from its trace without asking answered turns again."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from .approval import ApprovalRequired, EndRun, Proposal, decision_message
from .budgets import MAX_TOOL_CALLS_PER_TURN, Budgets, BudgetTracker
from .errors import DeadlineExceeded, RepoPilotError
from .messages import AssistantMessage, Message, ToolCall, ToolResultMessage, UserMessage
from .model import Model, TextCallback
from .tools import ToolContext, ToolRegistry
from .trace import RunTrace, TraceRecorder
from .waits import waiting

__all__ = ["Agent", "RunResult", "dump_messages", "load_messages"]

_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
# A rough tokens-per-character ratio, only for deciding when to elide old tool results.
_CHARS_PER_TOKEN = 4
_KEEP_RECENT_RESULTS = 2
_REPEAT_NOTE = ("[you made this same call in an earlier turn and got this same result: repeating it tells you "
                "nothing new; take a different step, or give your answer]\n")


def dump_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json") for m in messages]


def load_messages(data: list[dict[str, Any]]) -> list[Message]:
    return _MESSAGES.validate_python(data)


@dataclass
class RunResult:
    run_id: str
    status: str
    answer: str | None
    trace_path: Path
    trace: RunTrace


class _RunEnded(Exception):
    pass


class Agent:
    def __init__(
        self,
        model: Model,
        tools: ToolRegistry,
        recorder: TraceRecorder,
        budgets: Budgets | None = None,
        *,
        max_result_chars: int = 16_000,
        context_tokens: int | None = None,
        on_text: TextCallback | None = None,
        max_tool_calls_per_turn: int = MAX_TOOL_CALLS_PER_TURN,
    ) -> None:
        self.model = model
        self.tools = tools
        self.rec = recorder
        t = recorder.trace
        self.budgets = budgets or Budgets.model_validate(t.budgets.get("limits", {}))
        self.tracker = BudgetTracker(
            self.budgets,
            steps=t.totals.model_calls,
            tokens=t.totals.input_tokens + t.totals.output_tokens,
            cost=t.totals.cost or 0.0,
            elapsed_before=t.totals.duration_ms / 1000,
        )
        if t.totals.cost is None:
            self.tracker.cost_known = False
        self.max_result_chars = max_result_chars
        self.context_tokens = context_tokens
        self.on_text = on_text
        self.max_tool_calls_per_turn = max_tool_calls_per_turn
        self.messages: list[Message] = load_messages(t.messages)
        # Each call made so far -> the index of the first reply that made it, kept up to date as the conversation
        # grows (`_index_calls`), so telling a repeated call costs the same at step 200 as at step 2.
        self._first_call: dict[tuple[str, str], int] = {}
        self._indexed = self._latest_reply = 0
        t.model = t.model or f"{model.provider}:{model.model}"
        t.provider = t.provider or model.provider
        self._sync_budgets()

    # -- public -------------------------------------------------------------------------------------------
    def run(self, messages: Sequence[Message]) -> RunResult:
        """Start a new conversation from `messages` (system prompt and the user's goal)."""
        self.messages = list(messages)
        self._first_call, self._indexed, self._latest_reply = {}, 0, 0
        self._persist_messages(since=0)
        self.rec.save()
        return self._drive()

    def resume(self, extra: Sequence[Message] = ()) -> RunResult:
        """Continue from the trace: unanswered tool calls of the last reply run first, then the loop goes on.

        The trace may have been written by a process killed between two writes, so the state is read from what
        was recorded, not from the status alone: a proposal nobody decided on stops here (awaiting approval); a
        recorded final answer ends the run without asking again; after a decision the model is told the outcome
        once (the message is persisted with the `running` status, so resuming again does not repeat it).
        """
        t = self.rec.trace
        proposal = Proposal.model_validate(t.proposal) if t.proposal else None
        if proposal is not None and proposal.decision is None:
            if t.status != "awaiting_approval":
                self._finish("awaiting_approval", t.answer)
            return self._result()
        if proposal is not None and t.status in ("approved", "rejected", "awaiting_approval"):
            extra = [decision_message(proposal), *extra]
        elif not extra and self._answered():
            last = self.messages[-1]
            assert isinstance(last, AssistantMessage)
            self._finish(self._answered_status(), last.content)
            return self._result()
        return self._drive(extra)

    def _result(self) -> RunResult:
        t = self.rec.trace
        return RunResult(t.run_id, t.status, t.answer, self.rec.path, t)

    def _answered(self) -> bool:
        """The conversation ends with the model's final answer (a killed run may not have said so yet)."""
        return bool(self.messages) and isinstance(self.messages[-1], AssistantMessage) \
            and not self.messages[-1].tool_calls

    def _answered_status(self) -> str:
        # The final answer after a budget ran out follows a budget decision step with no tool result after it.
        for step in reversed(self.rec.trace.steps):
            if step.type == "tool_result":
                break
            if step.type == "decision" and step.detail.get("decision") == "budget_exhausted":
                return f"budget_exhausted:{step.detail.get('budget')}"
        return "completed"

    # -- the loop -----------------------------------------------------------------------------------------
    def _drive(self, extra: Sequence[Message] = ()) -> RunResult:
        try:
            pending = self._pending_calls()
            if pending:
                self._run_tools(pending)
            # After the pending results, so every call keeps its result right after it; and saved together with
            # the `running` status, so a run killed before this point is told `extra` again when resumed.
            self.messages.extend(extra)
            self.rec.trace.status = "running"
            self.rec.trace.finished_at = None
            self._persist_messages()
            self.rec.save()
            while True:
                which = self.tracker.exhausted()
                if which is not None:
                    self._final_answer(which)
                    break
                try:
                    reply = self._call_model(with_tools=True)
                except DeadlineExceeded:
                    # The model was cut off at the deadline (already an error step): asking it again would only
                    # overrun further, so the run ends here, as out of time.
                    self._out_of_time()
                    break
                if not reply.tool_calls:
                    self._finish("completed", reply.content)
                    break
                self._run_tools(reply.tool_calls)
        except _RunEnded:
            pass
        except KeyboardInterrupt:
            self.rec.step("error", error="interrupted by the user (Ctrl-C); resume with `repopilot resume`")
            self._finish("interrupted", None)
            raise
        except RepoPilotError:
            self._finish("failed", None)
            raise
        except Exception as exc:
            self.rec.step("error", error=f"{type(exc).__name__}: {exc}", detail={"kind": "bug"})
            self._finish("failed", None)
            raise
        return self._result()

    def _call_model(self, *, with_tools: bool, deadline: float | None = None) -> AssistantMessage:
        self._elide_if_needed()
        specs = self.tools.specs if with_tools else []
        started = time.monotonic()
        # Streamed text shows progress by itself; otherwise whoever shows waits says what this one is.
        wait = nullcontext() if self.on_text is not None else waiting(f"waiting for the model {self.model.model}")
        try:
            with wait:
                resp = self.model.chat(self.messages, specs, on_text=self.on_text,
                                       deadline=deadline or self.tracker.deadline())
        except RepoPilotError as exc:
            # Recorded here, where the duration is known; whoever catches it only decides the run's status.
            self.rec.step("error", model=self.model.model, error=str(exc), duration_ms=_ms(started),
                          detail={"kind": type(exc).__name__, "during": "llm_call"})
            raise
        self.tracker.record(tokens=resp.usage.total_tokens, cost=resp.cost)
        self.messages.append(resp.message)
        self._persist_messages()
        self._sync_budgets()
        self.rec.step(
            "llm_call",
            model=resp.model or self.model.model,
            arguments={"messages": len(self.messages) - 1, "tools": [s.name for s in specs]},
            result={"text": resp.message.content,
                    "tool_calls": [c.model_dump(mode="json") for c in resp.message.tool_calls]},
            duration_ms=_ms(started),
            input_tokens=resp.usage.input_tokens,
            output_tokens=resp.usage.output_tokens,
            cost=resp.cost,
            detail={"finish_reason": resp.finish_reason, "response_id": resp.response_id,
                    "retries": resp.retries, "usage": resp.usage.model_dump()},
        )
        return resp.message

    def _run_tools(self, calls: Sequence[ToolCall]) -> None:
        run, skipped = calls[:self.max_tool_calls_per_turn], calls[self.max_tool_calls_per_turn:]
        for index, call in enumerate(run):
            self.rec.step("tool_call", tool_name=call.name, tool_call_id=call.id, arguments=call.arguments,
                          error=call.arguments_error)
            started = time.monotonic()
            ctx = ToolContext(run_id=self.rec.trace.run_id, tool_call_id=call.id, state=self.rec.trace.extra,
                              deadline=self.tracker.deadline())
            try:
                outcome = self.tools.execute(call, ctx)
            except EndRun as end:
                self._end_run(end, call, [*run[index + 1:], *skipped], started)
                raise _RunEnded from None
            # Before the result, so a cut result keeps it.
            content = (_REPEAT_NOTE if self._repeated(call) else "") + outcome.content
            self._record_result(call, content, outcome.is_error, started)
        if skipped:
            self._answer_skipped(skipped, len(calls))

    def _repeated(self, call: ToolCall) -> bool:
        """Whether the model made this exact read-only call in an earlier turn (models, small ones most, loop on
        one call; the note on its result says so, the call itself still runs)."""
        spec = self.tools.get(call.name)
        if spec is None or spec.side_effects or call.arguments_error is not None:
            return False
        self._index_calls()
        # The call is in the latest reply (tools run right after it, or first thing on resume): an earlier turn
        # made it when its first sighting is in an earlier message than the latest reply.
        return self._first_call.get(_call_key(call), self._latest_reply) < self._latest_reply

    def _index_calls(self) -> None:
        """Note the calls of the replies appended since the last look (messages are only appended, or replaced
        as a whole by `run`, which starts the index again)."""
        for i in range(self._indexed, len(self.messages)):
            msg = self.messages[i]
            if isinstance(msg, AssistantMessage):
                self._latest_reply = i
                for c in msg.tool_calls:
                    self._first_call.setdefault(_call_key(c), i)
        self._indexed = len(self.messages)

    def _answer_skipped(self, skipped: Sequence[ToolCall], total: int) -> None:
        """Calls past the per-turn cap get an error result the model reads; one decision step records them all, so
        a reply with thousands of calls costs one write, not thousands."""
        limit = self.max_tool_calls_per_turn
        note = (f"not run: at most {limit} tool calls are run per turn and this reply had {total}; call the ones "
                "you still need in your next turn")
        self.messages.extend(ToolResultMessage(tool_call_id=c.id, name=c.name, content=note, is_error=True)
                             for c in skipped)
        self._persist_messages()
        self.rec.step("decision", result="tool_calls_capped", error=note,
                      detail={"decision": "tool_calls_capped", "limit": limit, "calls": total,
                              "skipped": [c.id for c in skipped]})

    def _end_run(self, end: EndRun, call: ToolCall, rest: Sequence[ToolCall], started: float) -> None:
        content = end.message
        if isinstance(end, ApprovalRequired):
            content = f"{end.message} (sha256 {end.proposal.sha256})"
            # Set before the result is saved, so the proposal and its result reach the file in one write: a run
            # killed right after still knows it awaits approval.
            self.rec.trace.proposal = end.proposal.model_dump(mode="json")
        self._record_result(call, content, not isinstance(end, ApprovalRequired), started)
        # Every call of the turn gets a result, or the conversation could not be sent again (providers pair
        # calls and results strictly).
        for other in rest:
            self.rec.step("tool_call", tool_name=other.name, tool_call_id=other.id, arguments=other.arguments)
            self._record_result(other, f"not run: the run stopped at {call.name} ({end.status})", True,
                                time.monotonic())
        self._finish(end.status, content)

    def _record_result(self, call: ToolCall, content: str, is_error: bool, started: float) -> None:
        # Redacted before it is cut (a secret straddling the cut would leak its prefix) and before it enters the
        # conversation (a `.env` read must not send the key to the provider).
        content = self.rec.redactor.text(content)
        shown = content
        detail: dict[str, Any] = {}
        if len(content) > self.max_result_chars:
            shown = (content[: self.max_result_chars]
                     + f"\n…[truncated: {self.max_result_chars} of {len(content)} characters shown]")
            detail = {"truncated": True, "chars": len(content), "chars_sent": self.max_result_chars}
        self.messages.append(ToolResultMessage(tool_call_id=call.id, name=call.name, content=shown,
                                               is_error=is_error))
        self._persist_messages()
        self.rec.step("tool_result", tool_name=call.name, tool_call_id=call.id, result=content,
                      error=content if is_error else None, duration_ms=_ms(started), detail=detail)

    def _final_answer(self, which: str) -> None:
        self.rec.step("decision", result=f"budget_exhausted:{which}",
                      detail={"decision": "budget_exhausted", "budget": which, "usage": self.tracker.usage(),
                              "limits": self.budgets.model_dump()})
        self.messages.append(UserMessage(content=(
            f"The {which} budget for this run has run out. Do not call tools. Give your final answer now, "
            "based only on what you have found so far, and say what remains unchecked.")))
        self._persist_messages()
        answer: str | None = None
        try:
            answer = self._call_model(with_tools=False, deadline=self._grace_deadline(which)).content
        except RepoPilotError:
            answer = None  # the error is already a step; the run still ends as exhausted, not failed
        self._finish(f"budget_exhausted:{which}", answer)

    def _grace_deadline(self, which: str) -> float | None:
        """Out of time, the final answer still gets a short, bounded grace: a fifth of the budget, 2-30 s."""
        if which != "seconds" or self.budgets.max_seconds is None:
            return None
        return time.monotonic() + min(30.0, max(2.0, self.budgets.max_seconds / 5))

    def _out_of_time(self) -> None:
        self.rec.step("decision", result="budget_exhausted:seconds",
                      detail={"decision": "budget_exhausted", "budget": "seconds", "during": "llm_call",
                              "usage": self.tracker.usage(), "limits": self.budgets.model_dump()})
        self._finish("budget_exhausted:seconds", None)

    # -- state --------------------------------------------------------------------------------------------
    def _pending_calls(self) -> list[ToolCall]:
        """Tool calls of the last assistant turn that have no result yet (a run killed mid-tools)."""
        for i in range(len(self.messages) - 1, -1, -1):
            msg = self.messages[i]
            if isinstance(msg, AssistantMessage):
                answered = {m.tool_call_id for m in self.messages[i + 1:] if isinstance(m, ToolResultMessage)}
                return [c for c in msg.tool_calls if c.id not in answered]
        return []

    def _elide_if_needed(self) -> None:
        if self.context_tokens is None:
            return
        limit = int(self.context_tokens * 0.8)
        size = len(json.dumps(dump_messages(self.messages))) // _CHARS_PER_TOKEN
        if size <= limit:
            return
        results = [i for i, m in enumerate(self.messages) if isinstance(m, ToolResultMessage)]
        elided: list[dict[str, Any]] = []
        first = len(self.messages)
        for i in results[:-_KEEP_RECENT_RESULTS]:
            msg = self.messages[i]
            assert isinstance(msg, ToolResultMessage)
            if msg.content.startswith("[elided"):
                continue
            saved = len(msg.content)
            msg.content = (f"[elided to save context: {saved} characters; the result of this call is kept "
                           "in the trace. Call the tool again if you need it.]")
            elided.append({"tool_call_id": msg.tool_call_id, "tool_name": msg.name, "chars": saved})
            first = min(first, i)
            size -= (saved - len(msg.content)) // _CHARS_PER_TOKEN
            if size <= limit:
                break
        if elided:
            self._persist_messages(since=first)
            self.rec.step("decision", result="elided_old_tool_results",
                          detail={"decision": "elide_context", "elided": elided, "estimated_tokens": size,
                                  "context_tokens": self.context_tokens})

    def _persist_messages(self, since: int | None = None) -> None:
        """Copy the conversation into the trace: what was appended, or everything from `since` when earlier
        messages changed (a new run, elided results). Only those are dumped and written."""
        kept = self.rec.trace.messages
        start = min(len(kept), len(self.messages)) if since is None else since
        kept[start:] = dump_messages(self.messages[start:])
        if since is not None:
            self.rec.messages_changed(since)

    def _sync_budgets(self) -> None:
        self.rec.trace.budgets = {"limits": self.budgets.model_dump(), "used": self.tracker.usage()}

    def _finish(self, status: str, answer: str | None) -> None:
        self._sync_budgets()
        self.rec.finish(status, answer=answer)


def _call_key(call: ToolCall) -> tuple[str, str]:
    # Arguments compared as values: the same call with its keys in another order is the same call.
    return call.name, json.dumps(call.arguments, sort_keys=True, default=str)


def _ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)
