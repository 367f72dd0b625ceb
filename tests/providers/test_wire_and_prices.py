"""Argument normalisation, stream framing, call ids and prices."""

from __future__ import annotations

import pytest

from repopilot.core import Usage
from repopilot.providers.prices import cost_of, price_for
from repopilot.providers.wire import is_synthetic_id, iter_ndjson, iter_sse, new_call_id, parse_arguments


@pytest.mark.parametrize(("raw", "expected"), [
    ({"path": "a"}, {"path": "a"}),
    ('{"path": "a"}', {"path": "a"}),
    ('"{\\"path\\": \\"a\\"}"', {"path": "a"}),  # a JSON string of a JSON string
    ("", {}),
    ('{"pattern": "a\tb\nc"}', {"pattern": "a\tb\nc"}),  # raw control characters inside a string
    ("   ", {}),
    (None, {}),
])
def test_arguments_normalised_to_dicts(raw: object, expected: dict[str, object]) -> None:
    assert parse_arguments(raw) == (expected, None)


@pytest.mark.parametrize("raw", ['{"path": "a"', "[1, 2]", "42", "not json"])
def test_bad_arguments_give_an_error_not_an_exception(raw: str) -> None:
    args, error = parse_arguments(raw)
    assert args == {} and error


def test_call_ids_are_unique_and_marked() -> None:
    ids = {new_call_id() for _ in range(1000)}
    assert len(ids) == 1000 and all(is_synthetic_id(i) for i in ids)
    assert not is_synthetic_id("call_abc") and not is_synthetic_id("toolu_01")


def test_sse_framing() -> None:
    lines = [": comment", "event: a", "data: {\"x\":", "data: 1}", "", "id: 7", "data: [DONE]", "", "data: tail"]
    events = list(iter_sse(lines))
    assert [(e.event, e.data) for e in events] == [("a", '{"x":\n1}'), ("message", "[DONE]"), ("message", "tail")]
    assert events[0].json() == {"x": 1}


def test_ndjson_framing() -> None:
    assert list(iter_ndjson(['{"a": 1}', "", '{"b": 2}'])) == [{"a": 1}, {"b": 2}]


def test_cost_of_known_models_and_snapshots() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert cost_of("openai", "gpt-4o-mini", usage) == pytest.approx(0.75)
    assert cost_of("openai", "gpt-4o-mini-2024-07-18", usage) == pytest.approx(0.75)
    assert cost_of("anthropic", "claude-3-5-haiku-latest", usage) == pytest.approx(4.80)
    assert cost_of("anthropic", "claude-sonnet-4-20250514", usage) == pytest.approx(18.0)
    assert cost_of("gemini", "models/gemini-2.0-flash-001", usage) == pytest.approx(0.50)


def test_cached_tokens_are_billed_at_their_rate() -> None:
    # 1M prompt tokens of which 600k read from cache: Anthropic bills those at a tenth.
    usage = Usage(input_tokens=1_000_000, cache_read_tokens=600_000, output_tokens=0)
    assert cost_of("anthropic", "claude-3-5-haiku", usage) == pytest.approx(0.4 * 0.8 + 0.6 * 0.08)


@pytest.mark.parametrize(("provider", "model"), [
    ("openai", "my-finetune"), ("ollama", "llama3.2"), ("openai", "gpt-4o-mini-fast"), ("nope", "gpt-4o"),
    ("openai", ""),
])
def test_unknown_models_cost_none(provider: str, model: str) -> None:
    assert price_for(provider, model) is None
    assert cost_of(provider, model, Usage(input_tokens=10, output_tokens=10)) is None
