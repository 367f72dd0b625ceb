"""Model calls across every worker: at most `model_concurrency` fix runs talk to models at once (PostgreSQL
advisory locks as the slots, so the bound holds over all machines, and a worker that dies frees its slot with its
connection), and an installation that has spent its daily budget gets no more until tomorrow."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from ..core import RunTrace
from .queue import Transient
from .store import Store

__all__ = ["model_slot", "record_usage"]

_SLOTS = 0x6D6F64  # "mod": the advisory-lock namespace of the model slots
_POLL = 0.5


@contextmanager
def model_slot(store: Store, slots: int, *, wait: float = 600.0) -> Iterator[int]:
    """Hold one of `slots` model slots while the block runs; `Transient` (retry later) if none frees in `wait`."""
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
                raise Transient(f"all {slots} model slots busy for {wait:.0f} s")
            time.sleep(_POLL)


def record_usage(store: Store, installation_id: int, traces: list[RunTrace]) -> None:
    """Add the runs' model calls, tokens and cost to the installation's spend today."""
    totals = [t.totals for t in traces if t.totals.model_calls]
    if totals:
        store.add_usage(installation_id, sum(t.model_calls for t in totals), sum(t.input_tokens for t in totals),
                        sum(t.output_tokens for t in totals), sum(t.cost or 0.0 for t in totals))
