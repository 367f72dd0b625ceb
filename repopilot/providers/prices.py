"""What a call cost, for models whose price is known. Unknown models cost None ("unknown"), never a guess.

USD per million tokens, from the providers' public price pages (2025). Dated snapshots and `-latest` aliases
resolve to their family (`gpt-4o-mini-2024-07-18` -> `gpt-4o-mini`). Prices change: this table is a floor
for budgets, not an invoice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core import Usage

__all__ = ["PRICES", "Price", "cost_of", "price_for"]


@dataclass(frozen=True)
class Price:
    input: float
    output: float
    # Cached prompt tokens read back; None means billed as ordinary input.
    cache_read: float | None = None
    # Tokens written to a prompt cache (Anthropic); None means billed as ordinary input.
    cache_write: float | None = None


def _anthropic(inp: float, out: float) -> Price:
    return Price(inp, out, cache_read=inp * 0.1, cache_write=inp * 1.25)


def _openai(inp: float, out: float, cached: float) -> Price:
    return Price(inp, out, cache_read=cached)


PRICES: dict[str, dict[str, Price]] = {
    "openai": {
        "gpt-4o": _openai(2.50, 10.00, 1.25),
        "gpt-4o-mini": _openai(0.15, 0.60, 0.075),
        "gpt-4.1": _openai(2.00, 8.00, 0.50),
        "gpt-4.1-mini": _openai(0.40, 1.60, 0.10),
        "gpt-4.1-nano": _openai(0.10, 0.40, 0.025),
        "gpt-5": _openai(1.25, 10.00, 0.125),
        "gpt-5-mini": _openai(0.25, 2.00, 0.025),
        "gpt-5-nano": _openai(0.05, 0.40, 0.005),
        "o3": _openai(2.00, 8.00, 0.50),
        "o3-mini": _openai(1.10, 4.40, 0.55),
        "o4-mini": _openai(1.10, 4.40, 0.275),
    },
    "anthropic": {
        "claude-3-haiku": _anthropic(0.25, 1.25),
        "claude-3-5-haiku": _anthropic(0.80, 4.00),
        "claude-3-5-sonnet": _anthropic(3.00, 15.00),
        "claude-3-7-sonnet": _anthropic(3.00, 15.00),
        "claude-sonnet-4": _anthropic(3.00, 15.00),
        "claude-sonnet-4-5": _anthropic(3.00, 15.00),
        "claude-haiku-4-5": _anthropic(1.00, 5.00),
        "claude-opus-4": _anthropic(15.00, 75.00),
        "claude-opus-4-1": _anthropic(15.00, 75.00),
    },
    "gemini": {
        "gemini-1.5-flash": Price(0.075, 0.30),
        "gemini-1.5-pro": Price(1.25, 5.00),
        "gemini-2.0-flash": Price(0.10, 0.40, cache_read=0.025),
        "gemini-2.0-flash-lite": Price(0.075, 0.30),
        "gemini-2.5-flash": Price(0.30, 2.50, cache_read=0.075),
        "gemini-2.5-flash-lite": Price(0.10, 0.40, cache_read=0.025),
        "gemini-2.5-pro": Price(1.25, 10.00, cache_read=0.31),
    },
}

# Snapshot suffixes: -2024-07-18, -20250514, -001, -latest, and the `models/` prefix Gemini echoes back.
_SUFFIX = re.compile(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-\d{3}|-latest)$")


def _family(model: str) -> str:
    name = model.strip().lower().removeprefix("models/")
    while True:
        stripped = _SUFFIX.sub("", name)
        if stripped == name:
            return name
        name = stripped


def price_for(provider: str, model: str) -> Price | None:
    table = PRICES.get(provider, {})
    return table.get(model.lower()) or table.get(_family(model))


def cost_of(provider: str, model: str, usage: Usage) -> float | None:
    """USD for one call, or None when the model's price is unknown. `usage.input_tokens` is the whole
    prompt; the cached parts of it are billed at their own rates where the table has them."""
    price = price_for(provider, model)
    if price is None:
        return None
    read = usage.cache_read_tokens
    write = usage.cache_creation_tokens
    plain = max(0, usage.input_tokens - read - write)
    total = (plain * price.input
             + read * (price.input if price.cache_read is None else price.cache_read)
             + write * (price.input if price.cache_write is None else price.cache_write)
             + usage.output_tokens * price.output)
    return total / 1_000_000
