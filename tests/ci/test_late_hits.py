"""The latest hits of rules past their cap cost a fixed budget however many rules fire and however long the log:
the newest are kept, the rest counted."""

from __future__ import annotations

from types import SimpleNamespace

from repopilot.ci import late
from repopilot.ci.late import LATE, LateHits
from repopilot.ci.window import Chunk


def _chunk(first: int) -> Chunk:
    return Chunk(b"x\n" * 1000, first, 1000)


def test_only_the_newest_candidates_of_a_leaving_chunk_are_checked() -> None:
    capped: dict[str, int] = {}
    hits = LateHits(capped)
    old, new = _chunk(1), _chunk(1001)
    for n in range(1, 201):  # 200 candidates of 40 rules on the old chunk
        hits.add(n, [0], [f"r{n % 40}"], old, False)
    for n in range(1001, 1001 + late._TOTAL - 10):  # and almost a full budget of newer ones
        hits.add(n, [0], [f"r{n % 40}"], new, False)
    checked = hits.leaving(old)
    assert [i.line for i in checked] == list(range(191, 201))  # the latest 10: room for no more
    assert sum(capped.values()) == 190


def test_kept_bytes_stay_within_the_budget_and_the_oldest_give_way() -> None:
    capped: dict[str, int] = {}
    hits = LateHits(capped)
    chunk = _chunk(1)
    rules = [SimpleNamespace(id=f"r{k}") for k in range(100)]
    for n in range(1, 1001):
        rule = rules[n % 100]
        hits.add(n, [0], [rule.id], chunk, False)
    for item in hits.unchecked():
        item.found = [(rule_of(item.line, rules), {}, "m")]  # type: ignore[list-item]
        hits.keep(item, b"y" * 1000, 0)
    latest = hits.latest()
    assert len(latest) == late._TOTAL
    assert [i.line for i in latest] == list(range(1001 - late._TOTAL, 1001))
    assert sum(capped.values()) == 1000 - late._TOTAL  # the others counted
    assert late._TOTAL * 1000 <= late._BUDGET


def test_a_rule_keeps_its_latest_and_at_most_late_of_them() -> None:
    hits = LateHits({})
    chunk = _chunk(1)
    rule = SimpleNamespace(id="r")
    for n in range(1, 3 * LATE):
        hits.add(n, [0], ["r"], chunk, False)
    for item in hits.unchecked():
        item.found = [(rule, {}, "m")]  # type: ignore[list-item]
        hits.keep(item, b"y", 0)
    assert [i.line for i in hits.latest()] == list(range(2 * LATE, 3 * LATE))


def rule_of(n: int, rules: list[SimpleNamespace]) -> SimpleNamespace:
    return rules[n % 100]
