"""When the rules are unsure: ONE model call, through the core Agent with no tools, reads the excerpt and answers
with the category and the causal lines as JSON. A reply that does not validate leaves the heuristic result in
place; either way the trace says what happened."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from ..core import (
    Agent,
    Budgets,
    Message,
    Model,
    ModelResponse,
    ProviderError,
    RepoPilotError,
    SystemMessage,
    TextCallback,
    ToolRegistry,
    ToolSpec,
    TraceRecorder,
    UserMessage,
)
from .catalog import CATEGORIES
from .diagnosis import Diagnosis
from .excerpt import Excerpt
from .report import Category

__all__ = ["ESCALATION_PROMPT", "LLMVerdict", "escalate", "parse_verdict"]

ESCALATION_PROMPT = f"""You diagnose failing CI jobs. You get an excerpt of a job log: numbered lines
("  123 | text"), gaps shown as "...". Find the lines that explain WHY the job failed (the error blocks that
caused it, not generic trailers such as "Process completed with exit code 1").
Answer with ONE JSON object and nothing else:
{{"category": one of {list(CATEGORIES)}, "error_lines": [line numbers from the excerpt], "summary": "one
sentence", "hint": "the usual next action"}}"""

class LLMVerdict(BaseModel):
    category: Category
    error_lines: list[int] = Field(default_factory=list, max_length=2000)
    summary: str = ""
    hint: str = ""


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse_verdict(text: str | None) -> LLMVerdict:
    """The model's reply as a verdict; raises ValueError when it is not the JSON asked for."""
    if not text or not text.strip():
        raise ValueError("empty reply")
    body = text.strip()
    fenced = _FENCE.search(body)
    if fenced:
        body = fenced.group(1).strip()
    start, end = body.find("{"), body.rfind("}")
    if start == -1 or end <= start:
        raise ValueError("no JSON object in the reply")
    try:
        data = json.loads(body[start:end + 1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON: {exc.msg}") from None
    try:
        return LLMVerdict.model_validate(data)
    except ValidationError as exc:
        raise ValueError(f"reply does not match the schema: {exc.errors()[0].get('msg', 'invalid')}") from None


class _OneCall:
    """Lets exactly one model call through: escalation is one call, whatever the model does."""

    def __init__(self, model: Model) -> None:
        self._model = model
        self.model = model.model
        self.provider = getattr(model, "provider", "unknown")
        self.endpoint = getattr(model, "endpoint", None)
        self.calls = 0

    def chat(self, messages: Sequence[Message], tools: Sequence[ToolSpec], *,
             on_text: TextCallback | None = None, deadline: float | None = None) -> ModelResponse:
        self.calls += 1
        if self.calls > 1:
            raise ProviderError("escalation allows one model call; the model asked for more", provider="repopilot")
        return self._model.chat(messages, tools, on_text=on_text, deadline=deadline)


def escalate(diag: Diagnosis, excerpt: Excerpt, model: Model, recorder: TraceRecorder) -> dict[str, Any]:
    """Ask the model once. Updates `diag` when the reply validates; returns what happened, for the trace."""
    recorder.step("decision", result="escalate", detail={"decision": "escalate", "why": diag.escalation_reason,
                                                         "excerpt_tokens": excerpt.tokens})
    shown = {n for a, b in excerpt.ranges for n in range(a, b + 1)}
    once = _OneCall(model)
    agent = Agent(once, ToolRegistry(), recorder, Budgets(max_steps=1))
    prompt = f"Log: {diag.name}\n\n{excerpt.text}"
    try:
        result = agent.run([SystemMessage(content=ESCALATION_PROMPT), UserMessage(content=prompt)])
        reply = result.answer
    except RepoPilotError as exc:
        failed: dict[str, Any] = {"decision": "escalation failed", "why": str(exc), "kept": "heuristic result"}
        diag.model_note = f"the model call failed ({str(exc)[:200]}); the rules' result is kept"
        recorder.step("decision", result="escalation_failed", error=str(exc), detail=failed)
        return failed
    try:
        verdict = parse_verdict(reply)
    except ValueError as exc:
        rejected: dict[str, Any] = {"decision": "malformed model reply", "why": str(exc), "kept": "heuristic result"}
        diag.model_note = f"the model's reply was rejected ({str(exc)[:200]}); the rules' result is kept"
        diag.decisions.append(rejected)
        recorder.step("decision", result="escalation_rejected", error=str(exc), detail=rejected)
        return rejected
    lines = sorted({n for n in verdict.error_lines if n in shown})
    diag.category = verdict.category
    diag.decided_by = "llm"
    if lines:
        diag.error_lines = lines
    outcome: dict[str, Any] = {"decision": "model verdict used", "category": verdict.category,
                               "error_lines": len(lines),
                               "ignored_lines": len(set(verdict.error_lines)) - len(lines),
                               "summary": verdict.summary[:300]}
    diag.decisions.append(outcome)
    if verdict.summary:
        diag.llm_summary = verdict.summary[:500]
    if verdict.hint:
        diag.llm_hint = verdict.hint[:500]
    recorder.step("decision", result="escalation_used", detail=outcome)
    return outcome
