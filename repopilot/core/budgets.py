"""Limits on a run: model steps, total tokens, wall-clock seconds and cost (when prices are known)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from .record import Record

__all__ = ["DEFAULT_MAX_STEPS", "MAX_TOOL_CALLS_PER_TURN", "BudgetTracker", "Budgets"]

DEFAULT_MAX_STEPS = 20  # model calls before a final answer is forced
# Tool calls run per model turn; the rest are answered with an error the model reads (a reply with 1,000 calls
# must not run 1,000 tools whatever the step budget says).
MAX_TOOL_CALLS_PER_TURN = 16


@dataclass(slots=True, kw_only=True)
class Budgets(Record):
    """The limits of one agent run: steps, tokens, seconds and cost (None: no limit)."""

    # A record, not a pydantic model: the settings read the defaults above on every command, most never run the loop.

    max_steps: int | None = DEFAULT_MAX_STEPS
    max_tokens: int | None = None
    max_seconds: float | None = None
    max_cost: float | None = None


class BudgetTracker:
    """Counts use against `Budgets`. `elapsed_before` carries the time a resumed run had already spent."""

    def __init__(self, budgets: Budgets, *, steps: int = 0, tokens: int = 0, cost: float = 0.0,
                 elapsed_before: float = 0.0) -> None:
        self.budgets = budgets
        self.steps = steps
        self.tokens = tokens
        self.cost = cost
        self.cost_known = True
        self._started = time.monotonic() - elapsed_before

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._started

    def record(self, *, tokens: int, cost: float | None) -> None:
        self.steps += 1
        self.tokens += tokens
        if cost is None:
            self.cost_known = False
        else:
            self.cost += cost

    def exhausted(self) -> str | None:
        """The name of the first budget that has run out (`steps`, `tokens`, `seconds`, `cost`), else None."""
        b = self.budgets
        if b.max_steps is not None and self.steps >= b.max_steps:
            return "steps"
        if b.max_tokens is not None and self.tokens >= b.max_tokens:
            return "tokens"
        if b.max_seconds is not None and self.elapsed >= b.max_seconds:
            return "seconds"
        # Only priced calls count: calls of unknown price add nothing, and the trace reports the cost as unknown.
        if b.max_cost is not None and self.cost > 0 and self.cost >= b.max_cost:
            return "cost"
        return None

    def deadline(self) -> float | None:
        """The monotonic time at which the seconds budget runs out, for adapters that wait on retries."""
        if self.budgets.max_seconds is None:
            return None
        return self._started + self.budgets.max_seconds

    def usage(self) -> dict[str, object]:
        return {
            "steps": self.steps,
            "tokens": self.tokens,
            "seconds": round(self.elapsed, 3),
            "cost": round(self.cost, 6) if self.cost_known else None,
        }
