"""Model calls go through their own concurrency-limited gate with a per-installation budget: at most
`model_concurrency` calls at once across every worker (PostgreSQL advisory locks, one connection per caller as
on separate machines), none for an installation past its daily budget, and a caller that finds every slot taken
for too long gets a provider error instead of waiting forever. Fix runs have their own `model` queue."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import psycopg
import pytest

import repopilot.service.model_gate as model_gate
from repopilot.core import AssistantMessage, ModelResponse, ProviderError
from repopilot.service import Store, prepare_database
from repopilot.service.model_gate import GatedModel


class SlowModel:
    provider, model, endpoint = "fake", "slow", None

    def __init__(self) -> None:
        self.calls = self.in_flight = self.most = 0
        self.lock = threading.Lock()

    def chat(self, messages: Sequence[Any], tools: Sequence[Any], **_: Any) -> ModelResponse:
        with self.lock:
            self.calls += 1
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
        time.sleep(0.2)
        with self.lock:
            self.in_flight -= 1
        return ModelResponse(message=AssistantMessage(content="ok"))


@pytest.fixture
def store(database: str, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.setattr(model_gate, "_POLL", 0.02)
    prepare_database(database)
    return Store(database)


def test_at_most_the_configured_calls_run_at_once_across_workers(store: Store) -> None:
    inner = SlowModel()
    errors: list[BaseException] = []

    def call() -> None:
        try:
            GatedModel(inner, store, installation_id=1, slots=2, budget_usd=5.0).chat([], [])
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=call) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == [] and inner.calls == 6 and inner.most == 2


def test_a_call_that_finds_every_slot_taken_gives_up_without_calling(store: Store) -> None:
    inner = SlowModel()
    with psycopg.connect(store.url, autocommit=True) as other:  # another worker holds both slots
        other.execute("SELECT pg_advisory_lock(%s, 0), pg_advisory_lock(%s, 1)", (model_gate._SLOTS,) * 2)
        with pytest.raises(ProviderError, match="slots stayed busy"):
            GatedModel(inner, store, installation_id=1, slots=2, budget_usd=5.0, wait=0.3).chat([], [])
    assert inner.calls == 0
    GatedModel(inner, store, installation_id=1, slots=2, budget_usd=5.0).chat([], [])  # freed with the connection
    assert inner.calls == 1


def test_an_installation_past_its_budget_gets_no_model_call(store: Store) -> None:
    inner = SlowModel()
    store.add_usage(7, calls=3, input_tokens=1000, output_tokens=100, cost=5.01)
    with pytest.raises(ProviderError, match="model budget"):
        GatedModel(inner, store, installation_id=7, slots=2, budget_usd=5.0).chat([], [])
    GatedModel(inner, store, installation_id=8, slots=2, budget_usd=5.0).chat([], [])  # another installation
    assert inner.calls == 1
