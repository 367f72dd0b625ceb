"""One failure per error (`_merge_same_failure`): a failure is compared with the kept ones through their bounds
first (the first and last line of all their ranges) and their ranges only when a line is within them. The merges
are the ones comparing every range gives: the rule's reference below, on random failures."""

from __future__ import annotations

import copy
import random
from typing import Any

from repopilot.ci.diagnosis import Failure, _merge_same_failure


def _reference(ranked: list[Failure], decisions: list[dict[str, Any]]) -> list[Failure]:
    """Every kept failure of the category, every range compared (the rule as first written)."""
    kept: list[Failure] = []
    for f in ranked:
        own = f.ranges()
        host = next((k for k in kept if k.category == f.category and k.rule != f.rule and (
            (k.test is not None and k.test == f.test)
            or any(a <= f.trigger <= b for a, b in k.ranges())
            or any(a <= k.trigger <= b for a, b in own))), None)
        if host is None:
            kept.append(f)
            continue
        host.extra_ranges += own
        host.more_ranges += f.more_ranges
        for name in ("file", "line", "column", "test", "package"):
            if getattr(host, name) is None:
                setattr(host, name, getattr(f, name))
        decisions.append({"rule": f.rule, "line": f.trigger, "decision": "merged",
                          "why": f"the same failure as {host.rule} at line {host.trigger}"})
    return kept


def _failures(rnd: random.Random) -> list[Failure]:
    out = []
    for _ in range(rnd.randint(1, 60)):
        first = rnd.randint(1, 400)
        last = first + rnd.choice([0, 0, 1, 3, 12])
        extra = [(a, a + rnd.randint(0, 4)) for a in rnd.sample(range(1, 420), rnd.choice([0, 0, 1, 2]))]
        out.append(Failure(rule=rnd.choice("abcd"), category=rnd.choice(["test", "build"]), confidence=0.5,
                           message="m", first=first, last=last, trigger=rnd.randint(first, last),
                           test=rnd.choice([None, None, "t1", "t2"]), file=rnd.choice([None, "f.py"]),
                           extra_ranges=extra))
    return out


def test_the_merges_are_the_ones_every_range_gives() -> None:
    rnd = random.Random(16)
    merged = 0
    for _ in range(400):
        ranked = _failures(rnd)
        theirs: list[dict[str, Any]] = []
        ours: list[dict[str, Any]] = []
        expected = _reference(copy.deepcopy(ranked), theirs)
        got = _merge_same_failure(copy.deepcopy(ranked), ours)
        assert got == expected and ours == theirs
        merged += len(ours)
    assert merged > 1000  # the cases merge often, through each of the three tests
