"""GitHub problem matchers imported as rules, and a user's rule folder (REPOPILOT_RULES)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repopilot.ci import diagnose_source
from repopilot.ci.blocks import match_text
from repopilot.ci.engine import default_scanner
from repopilot.ci.matchers import name_groups, rules_from_problem_matcher
from repopilot.core import ConfigError

TSC = {"problemMatcher": [{"owner": "tsc", "pattern": [{
    "regexp": r"^([^\s].*)[\(:](\d+)[,:](\d+)(?:\):\s+|\s+-\s+)(error|warning|info)\s+TS(\d+)\s*:\s*(.*)$",
    "file": 1, "line": 2, "column": 3, "severity": 4, "code": 5, "message": 6}]}]}
ESLINT_STYLISH = {"problemMatcher": [{"owner": "eslint-stylish", "pattern": [
    {"regexp": r"^([^\s].*)$", "file": 1},
    {"regexp": r"^\s+(\d+):(\d+)\s+(error|warning|info)\s+(.*)\s\s+(.*)$", "line": 1, "column": 2,
     "severity": 3, "message": 4, "code": 5, "loop": True}]}]}


def test_name_groups() -> None:
    assert name_groups(r"^(a)(?:b)(c)\((d)[(]", {1: "file", 3: "line"}) == r"^(?P<file>a)(?:b)(?:c)\((?P<line>d)[(]"


def test_single_pattern_matcher() -> None:
    [rule] = rules_from_problem_matcher(json.dumps(TSC), category="typecheck", ecosystem="javascript")
    assert rule.id == "matcher.tsc" and rule.category == "typecheck"
    [hit] = match_text(rule, "noise\nsrc/app.ts(12,5): error TS2322: Type 'string' is not assignable.\n")
    assert hit.line == 2
    assert hit.fields == {"file": "src/app.ts", "line": "12", "column": "5", "code": "2322",
                          "message": "Type 'string' is not assignable."}


def test_multi_line_matcher_block() -> None:
    [rule] = rules_from_problem_matcher(ESLINT_STYLISH, category="lint")
    log = "/w/src/a.js\n  3:7  error  'x' is assigned a value but never used  no-unused-vars\n\n"
    [hit] = match_text(rule, log)
    assert (hit.first, hit.last) == (1, 2) and hit.fields["line"] == "3"
    assert hit.fields["file"] == "/w/src/a.js"  # from the matcher's first pattern, the line above


@pytest.mark.parametrize("bad", ["{", '{"x": 1}', '{"problemMatcher": [{"owner": "a", "pattern": [{"regexp": "("}]}]}',
                                 '{"problemMatcher": [{"owner": "a", "pattern": [{"regexp": "(?=x)a"}]}]}'])
def test_bad_matchers(bad: str) -> None:
    with pytest.raises(ConfigError):
        rules_from_problem_matcher(bad)


def test_warning_matchers_are_skipped() -> None:
    pattern = [{"regexp": "^w: (.*)$", "message": 1}]
    doc = {"problemMatcher": [{"owner": "w", "severity": "warning", "pattern": pattern}]}
    assert rules_from_problem_matcher(doc) == []


def test_user_rules_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "tsc.json").write_text(json.dumps(TSC))
    log = tmp_path / "build.log"
    # A warning: the bundled tsc.error rule (errors only) stays silent, so the line is the user's rule's alone.
    log.write_text("> tsc -p .\nsrc/app.ts(12,5): warning TS6133: 'x' is declared but never used.\n")
    scanner = default_scanner(None, (rules,))
    [report] = [r.contract() for r in diagnose_source(str(log), scanner=scanner)]
    assert report["failures"][0]["rule"] == "matcher.tsc"
    assert report["failures"][0]["file"] == "src/app.ts" and report["error_lines"] == [2]
