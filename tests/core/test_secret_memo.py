"""`SecretRules.redact` remembers what it answered for a text (a report quotes the same log lines many times and the
trace redacts the report again): the answer from memory is the one a fresh search gives, memory stays bounded, and
what a `Redactor` learns later still applies to a text it has seen before."""

from __future__ import annotations

import pytest

from repopilot.core import REDACTED, Redactor
from repopilot.core import secret_rules as sr
from tests.secret_samples import samples

_CLEAN = ["[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0", "go: downloading example.com/mod v1.2.3", ""]


def _fresh() -> sr.SecretRules:
    base = sr.default_rules()
    return sr.SecretRules(base.rules, base.free, base.source)


def test_remembered_answers_are_the_searched_ones() -> None:
    rules, reference = _fresh(), _fresh()
    texts = [line for _, line, _ in samples()] + _CLEAN
    for _ in range(2):  # the first pass searches and remembers, the second answers from memory
        for text in texts:
            # the reference's memory is bypassed: every answer it gives is searched for
            assert rules.redact(text, REDACTED) == reference._redact(text, REDACTED), text
    assert any(rules.redact(line, REDACTED)[1] for _, line, _ in samples())  # the samples do hold credentials


def test_the_found_list_is_a_copy() -> None:
    rules = _fresh()
    _, line, secret = samples()[0]
    first = rules.redact(line, REDACTED)[1]
    first.clear()
    assert rules.redact(line, REDACTED)[1], "a caller's change to the list reached the memory"
    assert secret not in rules.redact(line, REDACTED)[0]


def test_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sr, "_MEMO_CHARS", 100)
    rules = _fresh()
    texts = [f"line {i} of a log that holds nothing secret" for i in range(20)]
    for text in texts:
        rules.redact(text, REDACTED)
        assert rules._memo_chars <= 100
    assert (REDACTED, texts[0]) not in rules._memo and (REDACTED, texts[-1]) in rules._memo
    assert rules._memo_chars == sum(len(t) for _, t in rules._memo)
    big = "x" * (sr._MEMO_TEXT + 1)
    rules.redact(big, REDACTED)
    assert (REDACTED, big) not in rules._memo


def test_a_value_learned_later_is_redacted_from_a_text_seen_before() -> None:
    token = "Zq8Rk2Lm9Vx4Tw7Yp3Nc"
    echoed = f"echo {token} | docker login --password-stdin"
    redactor = Redactor()
    assert redactor.text(echoed) == echoed  # the token alone does not look like a credential
    assert token not in redactor.text(f"password={token}")  # now it is known
    assert redactor.text(echoed) == f"echo {REDACTED} | docker login --password-stdin"


def test_a_clean_text_is_answered_without_a_search_until_something_is_learned(
        monkeypatch: pytest.MonkeyPatch) -> None:
    redactor = Redactor(rules=_fresh())
    searched: list[str] = []
    real = redactor.rules.redact
    monkeypatch.setattr(redactor.rules, "redact", lambda text, mask: searched.append(text) or real(text, mask))
    for _ in range(3):
        assert [redactor.text(t) for t in _CLEAN] == _CLEAN
    assert searched == _CLEAN  # once each
    _, line, secret = samples()[0]
    assert secret not in redactor.text(line)  # something learned: the clean texts are searched again
    assert [redactor.text(t) for t in _CLEAN] == _CLEAN and searched[-3:] == _CLEAN


def test_the_clean_texts_remembered_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    # (the package's `redact` is the function: the module by its name)
    monkeypatch.setattr(importlib.import_module("repopilot.core.redact"), "_CLEAN_CHARS", 100)
    redactor = Redactor(rules=_fresh())
    texts = [f"line {i} of a log that holds nothing secret" for i in range(20)]
    for text in texts:
        assert redactor.text(text) == text
        assert redactor._clean_chars <= 100
    assert texts[0] not in redactor._clean and texts[-1] in redactor._clean
    assert redactor._clean_chars == sum(len(t) for t in redactor._clean)


def test_a_text_found_clean_while_a_credential_was_learned_is_searched_again() -> None:
    # A thread finds the echo clean, another learns the token meanwhile and the first notes the echo afterwards:
    # the echo is not answered from what was clean before the token was known.
    token = "Zq8Rk2Lm9Vx4Tw7Yp3Nc"
    echoed = f"echo {token} | docker login --password-stdin"
    redactor = Redactor()
    before = redactor._learning
    assert token not in redactor.text(f"password={token}")
    redactor._note_clean(echoed, before)
    assert redactor.text(echoed) == f"echo {REDACTED} | docker login --password-stdin"
