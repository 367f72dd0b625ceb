"""The secret rules' keyword detector (`_trie`) walks runs of one-child nodes at once; the regex it makes is the
one the plain recursive form makes (so it matches the same, and the wheel's precompiled form of it still fits)."""

from __future__ import annotations

import random
import re
from typing import Any

from repopilot.core.secret_rules import _trie, default_rules


def _reference(words: list[str]) -> str:
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        if "" in node:
            return ""
        alts = [re.escape(c) + emit(sub) for c, sub in sorted(node.items())]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return emit(root)


def test_the_detector_is_the_plain_tries_regex() -> None:
    keywords = default_rules()._keywords
    assert _trie(keywords) == _reference(keywords)
    rnd = random.Random(16)
    for _ in range(500):
        words = sorted({"".join(rnd.choice("ab.-(é") for _ in range(rnd.randint(1, 7)))
                        for _ in range(rnd.randint(1, 12))})
        assert _trie(words) == _reference(words), words
