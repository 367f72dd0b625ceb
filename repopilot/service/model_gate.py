"""Model calls across every worker: at most `model_concurrency` calls to models at once (PostgreSQL advisory
locks as the slots, so the bound holds over all machines, and a worker that dies frees its slot with its
connection), and an installation that has spent its daily budget gets no more until tomorrow.

Every model call of a job goes through `GatedModel` (the application layer wraps each model it builds with
`Settings.model_gate`): a fix run's turns and a diagnosis's escalation alike, each holding a slot only while the
model answers, not while tools run or logs download."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import psycopg

from ..core import Message, Model, ModelResponse, ProviderError, RunTrace, TextCallback, ToolSpec
from .store import Store

__all__ = ["GatedModel", "SlotsBusy", "model_slot", "record_usage"]

_SLOTS = 0x6D6F64  # "mod": the advisory-lock namespace of the model slots
_POLL = 0.5


class SlotsBusy(Exception):
    """No model slot freed in time."""


@contextmanager
def model_slot(store: Store, slots: int, *, wait: float = 600.0) -> Iterator[int]:
    """Hold one of `slots` model slots while the block runs; SlotsBusy if none frees in `wait` seconds."""
    deadline = time.monotonic() + wait
    with psycopg.connect(store.url, autocommit=True, connect_timeout=10) as conn:
        while True:
            for slot in range(slots):
                row = conn.execute("SELECT pg_try_advisory_lock(%s, %s)", (_SLOTS, slot)).fetchone()
                if row and row[0]:
                    try:
                        yield slot
                    finally:
                        conn.execute("SELECT pg_advisory_unlock(%s, %s)", (_SLOTS, slot))
                    return
            if time.monotonic() > deadline:
                raise SlotsBusy(f"all {slots} model slots stayed busy for {wait:.0f} s; try again later")
            time.sleep(_POLL)


class GatedModel:
    """`inner`, called only within the installation's budget and while holding a model slot."""

    def __init__(self, inner: Model, store: Store, *, installation_id: int, slots: int, budget_usd: float,
                 wait: float = 600.0) -> None:
        self.inner, self.store, self.installation_id = inner, store, installation_id
        self.slots, self.budget_usd, self.wait = slots, budget_usd, wait
        self.provider, self.model, self.endpoint = inner.provider, inner.model, inner.endpoint

    def chat(self, messages: Sequence[Message], tools: Sequence[ToolSpec], *, on_text: TextCallback | None = None,
             deadline: float | None = None) -> ModelResponse:
        if self.store.spent_today(self.installation_id) >= self.budget_usd:
            raise ProviderError(f"this installation has used its model budget for today (${self.budget_usd:.2f})",
                                provider=self.provider)
        wait = self.wait if deadline is None else max(0.0, min(self.wait, deadline - time.monotonic()))
        try:
            with model_slot(self.store, self.slots, wait=wait):
                return self.inner.chat(messages, tools, on_text=on_text, deadline=deadline)
        except SlotsBusy as exc:
            raise ProviderError(str(exc), provider=self.provider) from None


def record_usage(store: Store, installation_id: int, traces: list[RunTrace]) -> None:
    """Add the runs' model calls, tokens and cost to the installation's spend today."""
    totals = [t.totals for t in traces if t.totals.model_calls]
    if totals:
        store.add_usage(installation_id, sum(t.model_calls for t in totals), sum(t.input_tokens for t in totals),
                        sum(t.output_tokens for t in totals), sum(t.cost or 0.0 for t in totals))
