"""The verdict's cues try their pattern only on a line that holds one of its words (`_CUE_WORDS`): the words are
the ones the patterns need (derived by tests/ci/cue_words.py, checked independently by the locator's coverage
check), so a line without them could not match, and every line gets the answer the pattern alone gives."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from repopilot.ci import verdict as v
from repopilot.ci.words import ascii_lower
from tests.ci.cue_words import needed_words
from tests.ci.test_locator import _covered

ROOT = Path(__file__).resolve().parents[2]
GATED = [*((rx, words) for (_, _, _, rx), words in zip(v._CUE_RX, v._CUE_WORDS, strict=True)),
         (v._ASSERTED, v._ASSERTED_WORDS), (v._TEST_SUMMARY, v._TEST_SUMMARY_WORDS)]


def test_the_words_are_the_ones_the_patterns_need() -> None:
    derived = [needed_words(rx.pattern, rx.flags) for rx, _ in GATED]
    assert derived == [words for _, words in GATED], (
        "a cue changed: set ci/verdict.py's _CUE_WORDS (and _ASSERTED_WORDS, _TEST_SUMMARY_WORDS) to\n"
        + "\n".join(map(repr, derived)))
    assert sum(words is not None for _, words in GATED) >= 13  # most cues are gated


def test_every_match_holds_one_of_the_words() -> None:
    from re import _parser  # type: ignore[attr-defined]

    for rx, words in GATED:
        if words is not None:
            assert all(w == w.lower() for w in words), rx.pattern
            assert _covered(_parser.parse(rx.pattern, rx.flags), words, True), rx.pattern


def test_the_derivation() -> None:
    assert needed_words(r"\bfoo\b|bar") == ("bar", "foo")
    assert needed_words(r"(?:abc|de)?xyzw+") == ("xyz",)  # an optional part is not needed
    assert needed_words(r"(?:abc|de)fg") is None  # nothing of three letters every match holds
    assert needed_words(r"x(?:aaa|bbb)c+", re.IGNORECASE) == ("aaa", "bbb")
    assert needed_words(r"(?-i:FAIL)ed|Error", re.IGNORECASE) == ("error", "fail")  # a group ends a run
    assert needed_words(r"(?=.*secret)abc|(?!zzz)def") == ("abc", "def")  # lookarounds hold nothing needed
    assert needed_words(r"check failed|check") == ("check",)  # a word holding another is dropped


@pytest.mark.parametrize("cue", range(len(GATED)))
def test_gated_and_ungated_answers_are_the_same(cue: int) -> None:
    rx, words = GATED[cue]
    lines = [line for d in ("examples", "tests/ci/rule_logs") for log in sorted((ROOT / d).glob("*.log"))
             for line in log.read_text(errors="replace").splitlines()]
    lines += ["Killed", "OOMKilled", "\u017fsl handshake", "\u212aILLED", "ECONNRESET", "connection refused",
              "expected: 3 but was: 4", "AssertionError: expected 1 == 2", "5 tests, 2 failures", "not ok 3 - x",
              "No space left on device", "E429 Too Many Requests", "usage: tool [-h]", "ÉRROR: ünïcode"]
    assert len(lines) > 1000
    for text in lines:
        assert v._said(rx, words, text, ascii_lower(text)) == (rx.search(text) is not None), (rx.pattern[:60], text)
