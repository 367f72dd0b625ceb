"""Rules decide where they fire; the locator extends a rule's block to the whole error: a rule whose block is its
trigger line alone (a user's rule, a runner's heading) gets the message, expected/actual pair and location lines
printed under it, a few lines at most, never a warning or a ruled heading beside it."""

from __future__ import annotations

from pathlib import Path

from repopilot.ci.catalog import load_catalog
from repopilot.ci.engine import Result, diagnose_input
from repopilot.ci.scanner import Scanner
from repopilot.ci.sources import open_sources

RULE = """\
format = 1
ecosystem = "javascript"
tool = "cucumber-js"

[[rule]]
id = "mine.scenario-failed"
title = "a failed cucumber scenario"
category = "test"
trigger = '^\\d+\\) Scenario: (?P<test>.+) # (?P<file>\\S+):(?P<line>\\d+)$'
confidence = 0.9
hint = "Run the scenario alone."

[[rule.example]]
text = "1) Scenario: Removing the only item empties the cart # features/cart.feature:7"
match = true

[[rule.example]]
text = "2 scenarios (1 failed, 1 passed)"
match = false
"""

LOG = """\
+ npx cucumber-js --format progress
.......F

Failures:

1) Scenario: Removing the only item empties the cart # features/cart.feature:7
   ✖ Then the cart is empty # features/steps/cart.js:10
       AssertionError [ERR_ASSERTION]: Expected values to be strictly deep-equal:
       + actual - expected
           at World.<anonymous> (/srv/ci/cart/features/steps/cart.js:10:48)

WARNING: the progress formatter is deprecated
2 scenarios (1 failed, 1 passed)
8 steps (1 failed, 7 passed)
"""


def _diagnose(tmp_path: Path) -> Result:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "mine.toml").write_text(RULE)
    log = tmp_path / "cucumber.log"
    log.write_text(LOG)
    return diagnose_input(open_sources(str(log))[0], scanner=Scanner(load_catalog([rules])))


def test_a_one_line_rule_block_grows_over_its_error(tmp_path: Path) -> None:
    d = _diagnose(tmp_path).diagnosis
    top = d.failures[0]
    assert (top.rule, top.trigger, top.causal) == ("mine.scenario-failed", 6, True)
    assert not d.located  # the rule decided; the locator only grew its block
    # The failing step, the assertion and its frame in the project's file joined the scenario's heading.
    assert {6, 7, 8} <= set(d.error_lines)
    assert top.ranges()[0] != (6, 6) and top.ranges()[0][0] == 6
    grown = next(x for x in d.decisions if x.get("decision") == "blocks grown")
    assert set(grown["lines"]) <= set(range(7, 13))
    assert d.category == "test"


def test_growth_stops_at_blank_lines_warnings_and_counts(tmp_path: Path) -> None:
    d = _diagnose(tmp_path).diagnosis
    assert max(d.error_lines) <= 10  # not the blank line, the deprecation warning or the closing counts
    assert 5 not in d.error_lines  # the blank line above the heading
