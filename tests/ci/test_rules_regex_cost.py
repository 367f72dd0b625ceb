"""No catalog regex backtracks badly: every trigger, `exclude` and block regex is searched on pathological lines as
long as the engine keeps (4,000 characters). A pattern such as ` *\\d* *\\|` (two stars that can match the same
spaces) takes tens of milliseconds per such line, and a block regex runs on every line a block grows over."""

from __future__ import annotations

import re
import time

import pytest

from repopilot.ci.catalog import Rule, load_catalog

RULES = load_catalog().rules
_N = 4000
LINES = [
    " " * _N, "\t" * _N, "_" * _N, "a" * _N, ":" * _N, "(" * _N, "-" * _N, "^" * _N, "=" * _N, "." * _N,
    "a:" * (_N // 2), "1:" * (_N // 2), "/a" * (_N // 2), "| " * (_N // 2), "_ " * (_N // 2), "a(" * (_N // 2),
    "x.py:" * (_N // 5), "error: " * (_N // 7), "___ " + "a " * (_N // 2 - 4) + "___", "npm ERR! " * (_N // 9),
]
_BUDGET = 0.005  # seconds per search; linear patterns take well under a millisecond here


def _patterns(rule: Rule) -> list[tuple[str, re.Pattern[str]]]:
    out = [("trigger", t) for t in rule.triggers]
    if rule.exclude is not None:
        out.append(("exclude", rule.exclude))
    for key in ("up_while", "up_until", "down_while", "down_until"):
        pat = getattr(rule.block, key)
        if pat is not None:
            out.append((key, pat))
    return out


def _cost(pattern: re.Pattern[str], line: str) -> float:
    best = 1.0
    for _ in range(3):
        started = time.perf_counter()
        pattern.search(line)
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_rule_regexes_stay_linear(rule: Rule) -> None:
    slow = [(kind, line[:12]) for kind, pat in _patterns(rule) for line in LINES if _cost(pat, line) > _BUDGET]
    assert not slow, f"regexes backtrack on long lines: {slow}"
