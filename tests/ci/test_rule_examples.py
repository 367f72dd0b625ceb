"""Every rule of the bundled catalog against its own examples: positives fire (with the stated block lines and
fields), near misses do not, through both scan engines' pattern forms."""

from __future__ import annotations

import io
import re

import pytest

from repopilot.ci.blocks import match_text
from repopilot.ci.catalog import CATEGORIES, Catalog, Rule, load_catalog, scan_pattern
from repopilot.ci.scanner import Scanner, hyperscan_available

CATALOG = load_catalog()
RULES = CATALOG.rules


def _ids(rule: Rule) -> str:
    return rule.id


def test_catalog_has_rules_and_version() -> None:
    assert CATALOG.version != "0"
    assert len(RULES) >= 1
    assert len({r.id for r in RULES}) == len(RULES)


@pytest.mark.parametrize("rule", RULES, ids=_ids)
def test_rule_examples(rule: Rule) -> None:
    assert rule.category in CATEGORIES
    assert any(e.match for e in rule.examples) and any(not e.match for e in rule.examples)
    for i, ex in enumerate(rule.examples, 1):
        hits = match_text(rule, ex.text)
        if not ex.match:
            assert not hits, f"example {i} (negative) fired on lines {[h.line for h in hits]}"
            continue
        assert hits, f"example {i} (positive) did not fire"
        if ex.lines is not None:
            got = sorted({n for h in hits for n in range(h.first, h.last + 1)})
            assert got == sorted(ex.lines), f"example {i}: block lines {got} != {sorted(ex.lines)}"
        for key, value in ex.fields.items():
            assert hits[0].fields.get(key) == value, f"example {i}: field {key}={hits[0].fields.get(key)!r}"


@pytest.mark.parametrize("rule", RULES, ids=_ids)
def test_rule_examples_through_the_scanner(rule: Rule) -> None:
    """The same verdicts from the real streaming scanner, with each engine available."""
    engines = ["re"] + (["hyperscan"] if hyperscan_available() else [])
    for engine in engines:
        scanner = Scanner(Catalog(version="t", rules=(rule,)), engine=engine)
        for i, ex in enumerate(rule.examples, 1):
            res = scanner.scan(io.BytesIO(ex.text.encode("utf-8")))
            expected = [(h.line, h.first, h.last) for h in match_text(rule, ex.text)]
            got = [(h.line, h.first, h.last) for h in res.hits]
            assert got == expected, f"{engine}, example {i}: {got} != {expected}"


@pytest.mark.parametrize("rule", RULES, ids=_ids)
def test_rule_triggers_compile_for_both_engines(rule: Rule) -> None:
    flags = re.MULTILINE | (re.IGNORECASE if rule.ignore_case else 0)
    for pat in rule.scan_patterns:
        re.compile(pat.encode("utf-8"), flags)
    hyperscan = pytest.importorskip("hyperscan")
    db = hyperscan.Database()
    pats = [p.encode("utf-8") for p in rule.scan_patterns]
    hs_flags = hyperscan.HS_FLAG_MULTILINE | (hyperscan.HS_FLAG_CASELESS if rule.ignore_case else 0)
    db.compile(expressions=pats, ids=list(range(len(pats))), elements=len(pats), flags=[hs_flags] * len(pats))


def test_scan_pattern_shapes() -> None:
    assert scan_pattern(r"^--- FAIL: (?P<test>\S+)") == r"(?:^|\r|Z )(?:--- FAIL: (?:\S+))"
    assert scan_pattern(r"error: (?P<message>.+)$") == "error: ."
    assert scan_pattern(r"foo.*") == "foo"
    assert scan_pattern(r"exit code 137$") == r"exit code 137(?:\r|$)"
    assert scan_pattern(r"a\.+") == r"a\.+"
    # Cut at the first top-level wildcard: a superset of the trigger, cheaper to scan.
    assert scan_pattern(r"x\.go:\d+: (?P<message>.+) \((?P<code>\w+)\)$") == r"x\.go:\d+: ."
    assert scan_pattern(r"a.*b(c)") == "a"
    # Not inside groups or alternations, where cutting would lose matches.
    assert scan_pattern(r"(?:a.+b|c)d") == r"(?:a.+b|c)d"
    assert scan_pattern(r"a.+b|c") == r"a.+b|c"
    assert scan_pattern(r"[.+]x") == r"[.+]x"
