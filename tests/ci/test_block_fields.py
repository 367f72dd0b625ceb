"""Rules take fields from a line of their block (`fields_from`), may require the next line to match
(`next_line`), and see lines without any terminal escape sequence, through the scanner and the example check."""

from __future__ import annotations

import io
import re

import pytest

from repopilot.ci.blocks import _any_segment, fires, match_line, match_text
from repopilot.ci.catalog import Catalog, load_catalog, load_rule_files
from repopilot.ci.lines import clean_text, segments, strip_ansi_bytes
from repopilot.ci.scanner import Scanner
from repopilot.core import ConfigError

RULE = """
format = 1
[[rule]]
id = "t.err"
category = "build"
ecosystem = "x"
tool = "x"
trigger = '^ERR (?P<code>E\\d+)(?:: (?P<message>.+))?$'
block = {{ up_while = '^  case ', down_while = '^  ', max_lines = 20 }}
confidence = 0.9
hint = "h"
{extra}
[[rule.example]]
text = "ERR E1"
match = true
[[rule.example]]
text = "WARN E1"
match = false
"""


def _rule(extra: str):
    return load_rule_files([("t.toml", RULE.format(extra=extra).encode())]).rules[0]


FIELDS = """fields_from = [
    { pattern = '^  at (?P<file>\\S+):(?P<line>\\d+)$' },
    { pattern = '^  case (?P<test>\\S+)$', search = "up" },
    { pattern = '^  reason: (?P<message>.+)$', search = "from_end" },
]"""
LOG = "start\n  case alpha\nERR E7\n  at a.c:3\n  at b.c:9\n  reason: first\n  reason: last\nend\n"


def test_fields_come_from_block_lines_nearest_first_or_from_the_end() -> None:
    hits = match_text(_rule(FIELDS), LOG)
    assert [(h.line, h.first, h.last) for h in hits] == [(3, 2, 7)]
    f = hits[0].fields
    assert f == {"code": "E7", "file": "a.c", "line": "3", "test": "alpha", "message": "last"}
    assert hits[0].message == "last"  # the trigger had no message of its own


def test_trigger_groups_win_and_templates_see_block_fields() -> None:
    hits = match_text(_rule(FIELDS), LOG.replace("ERR E7", "ERR E7: own words"))
    assert hits[0].fields["message"] == "own words" and hits[0].message == "own words"
    templated = _rule(FIELDS + '\nmessage = "{test} broke at {file}:{line}"')
    assert match_text(templated, LOG)[0].message == "alpha broke at a.c:3"


def test_fields_are_searched_only_inside_the_block() -> None:
    hits = match_text(_rule(FIELDS), "  at z.c:1\nERR E1\nnext\n  at a.c:3\n")
    assert hits[0].fields == {"code": "E1"} and hits[0].message == "ERR E1"


def test_next_line_condition() -> None:
    rule = _rule("next_line = '^ *--> \\S+:\\d+$'")
    assert [h.line for h in match_text(rule, "ERR E1\nERR E2\n  --> a.rs:3\nERR E3")] == [2]


def test_scanner_applies_both_across_chunk_boundaries() -> None:
    rule = _rule(FIELDS + "\nnext_line = '^  at '")
    catalog = Catalog(version="t", rules=(rule,))
    log = ("filler line\n" * 50 + LOG + "ERR E9\nno location\n") * 40
    ref = match_text(rule, log)
    for chunk in (64, 1 << 20):
        res = Scanner(catalog, engine="re", chunk_size=chunk).scan(io.BytesIO(log.encode()))
        assert [(h.line, h.first, h.last, h.fields, h.message) for h in res.hits] == \
            [(h.line, h.first, h.last, h.fields, h.message) for h in ref]
    assert len(ref) == 40 and all(h.fields["file"] == "a.c" for h in ref)


@pytest.mark.parametrize(("extra", "error"), [
    ("fields_from = { pattern = 'x' }", "array of tables"),
    ("fields_from = [{ pattern = '(?P<nope>x)' }]", "nope"),
    ("fields_from = [{ pattern = 'x' }]", "named groups"),
    ("fields_from = [{ pattern = '(?P<file>x)', search = 'sideways' }]", "search"),
    ("fields_from = [{ pattern = '(?P<file>x)', where = 'up' }]", "unknown keys"),
    ("next_line = '('", "bad regex"),
])
def test_bad_fields_from_and_next_line_are_refused(extra: str, error: str) -> None:
    with pytest.raises(ConfigError, match=error):
        _rule(extra)


@pytest.mark.parametrize(("raw", "clean"), [
    ("\x1b[1m\x1b[31merror\x1b(B\x1b[m: x", "error: x"),  # tput sgr0 = ESC ( B, ESC [ m
    ("\x1b)0\x1b#8ok", "ok"),  # other charset and DEC line sequences
    ("\x1b7a\x1b8b\x1b=c\x1b>d\x1bMe\x1bc", "abcde"),  # save/restore cursor, keypad modes, reverse index, reset
    ("\x1b[?25lq\x1b[>4;2m\x1b[?25h", "q"),  # CSI with private parameter bytes
    ("\x1b]8;;https://x\x1b\\link\x1b]8;;\x07", "link"),  # OSC hyperlinks ended by ST or BEL
    ("\x1bPq#0;2\x1b\\done", "done"),  # a DCS string
])
def test_escape_sequences_are_stripped(raw: str, clean: str) -> None:
    assert clean_text(raw) == clean
    assert strip_ansi_bytes(raw.encode() + b"\nnext\n") == clean.encode() + b"\nnext\n"


def test_a_trigger_matches_after_tput_sgr0() -> None:
    rule = load_catalog().by_id("rustc.error")
    hits = match_text(rule, "\x1b(B\x1b[m\x1b[1merror[E0308]\x1b(B\x1b[m: mismatched types\n --> src/a.rs:1:2\n")
    assert hits and hits[0].fields["file"] == "src/a.rs" and hits[0].message == "mismatched types"


GAP = """
format = 1
[[rule]]
id = "t.exc"
category = "build"
ecosystem = "x"
tool = "x"
trigger = '^(?P<message>\\w+Exception: .*)$'
block = {{ down_while = '^\\s+at ', {gap} max_lines = 50 }}
confidence = 0.9
hint = "h"
[[rule.example]]
text = "BadException: x"
match = true
[[rule.example]]
text = "fine"
match = false
"""
TRACES = ("BoomException: first line\nsecond line of the message\n\n  at a(A.java:1)\n  at b(B.java:2)\n"
          "[INFO] between\nBoomException: again\n  at a(A.java:1)\nunrelated 1\nunrelated 2\nunrelated 3\n"
          "unrelated 4\n  at z(Z.java:9)\n")


def _gap_rule(gap: str):
    return load_rule_files([("t.toml", GAP.format(gap=gap).encode())]).rules[0]


def test_down_gap_takes_a_multi_line_message_but_not_the_next_failure() -> None:
    plain = [(h.first, h.last) for h in match_text(_gap_rule(""), TRACES)]
    assert plain == [(1, 1), (7, 8)]
    gapped = [(h.first, h.last) for h in match_text(_gap_rule("down_gap = 3,"), TRACES)]
    # The message's second line and the blank line are taken; `[INFO] between` is followed by a new exception
    # (a block of its own), and four unrelated lines are more than the gap.
    assert gapped == [(1, 5), (7, 8)]


@pytest.mark.parametrize("gap", ["down_gap = 11,", "down_gap = -1,", "down_gap = 'x',"])
def test_bad_down_gap_is_refused(gap: str) -> None:
    with pytest.raises(ConfigError, match="down_gap"):
        _gap_rule(gap)


def test_fires_says_what_match_line_finds_on_every_segment() -> None:
    rules = {r.id: r for r in load_catalog().rules}
    excluding = next(r for r in rules.values() if r.exclude is not None)
    lines = ["ERR E1", "[ERROR] /w/src/A.java:[3,5] cannot find symbol", "progress 10%\r[ERROR] /w/B.java:[1,2] x",
             "panic: test timed out after 10m0s", "panic: runtime error: index out of range", "", "\r\r",
             "fatal: [host]: UNREACHABLE!", "nothing to see here"]
    fired = 0
    for rule in [_rule(""), excluding, *rules.values()]:
        for line in lines:
            assert fires(rule, line) is (match_line(rule, line) is not None), (rule.id, line)
            fired += fires(rule, line)
    assert fired >= 3  # the lines above do fire some rules (a `\r` segment among them)
    assert fires(rules["maven.compile-error"], "progress 10%\r[ERROR] /w/B.java:[1,2] x")


def test_a_block_pattern_is_tried_on_every_segment_of_a_line() -> None:
    pattern = re.compile(r"^\s+at ")
    lines = ["\tat a.B.c(B.java:1)", "progress 10%\r\tat a.B.c(B.java:1)", "\tat x\r\n", "x\r\r", "", "at start",
             "Caused by: y\r  at z"]
    seen = [_any_segment(pattern, line) for line in lines]
    assert seen == [any(pattern.search(s) for s in segments(line)) for line in lines]
    assert seen == [True, True, True, False, False, False, True]
