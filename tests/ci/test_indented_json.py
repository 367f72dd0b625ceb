"""`indented_json` is `json.dumps(data, ensure_ascii=False, indent=1)`, the same text (its differential test)."""

from __future__ import annotations

import enum
import json
import random
from typing import Any

import pytest

from repopilot.ci.render import indented_json


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1)


_STRINGS = ["", "a", "é", "日本", "\n", "\t\"\\", "\x00\x1f\x7f", "\u2028\u2029", "\ud83d", "😀", "[REDACTED]", " x "]
_NUMBERS = [0, -1, 1 << 70, 0.0, -0.0, 1.5, 1e300, 1e-300, 0.1, float("inf"), float("-inf"), float("nan")]


def _random(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth > 4 or roll < 0.45:
        return rng.choice([*_STRINGS, *_NUMBERS, True, False, None])
    if roll < 0.7:
        return [_random(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(_STRINGS) + str(i): _random(rng, depth + 1) for i in range(rng.randint(0, 4))}


def test_random_json_data_is_written_as_json_writes_it() -> None:
    rng = random.Random(16)
    for _ in range(3000):
        data = _random(rng, 0)
        assert indented_json(data) == _dumps(data)


class _Label(enum.StrEnum):
    NEW = "new"


class _Count(enum.IntEnum):
    ONE = 1


@pytest.mark.parametrize("data", [
    {"a": (1, [2, ()])},  # tuples
    {3: "x", 2.5: "y", True: "z", None: "n"},  # keys that are not strings
    {"label": _Label.NEW, "n": _Count.ONE},  # subclasses of str and int
    [{"ok": 1}, {"nested": {"t": (None,)}}],
    "text", 3, 2.5, None, True, [], {},
])
def test_anything_else_is_left_to_json(data: Any) -> None:
    assert indented_json(data) == _dumps(data)


def test_a_cycle_is_refused_as_json_refuses_it() -> None:
    data: dict[str, Any] = {"a": []}
    data["a"].append(data)
    with pytest.raises(ValueError, match="Circular reference"):
        indented_json(data)


def test_what_json_cannot_write_fails_as_in_json() -> None:
    with pytest.raises(TypeError):
        indented_json({"a": {1, 2}})
