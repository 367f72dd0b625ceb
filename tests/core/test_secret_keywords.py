"""The C pass over a text for the secret rules' keywords (core/_keywords.c) finds exactly the set the regex finds
(`SecretRules._keywords_matched`): on every keyword alone, inside words, overlapping, cut short, in texts of every
string width, on random texts made of the keywords' own characters and on every line of the bundled logs; and a
whole redaction gives the same text either way."""

from __future__ import annotations

import random
import shutil
import sysconfig
from pathlib import Path

import pytest

from repopilot.core import secret_rules
from repopilot.core.secret_rules import SecretRule, SecretRules, default_rules
from tests.secret_samples import samples

ROOT = Path(__file__).resolve().parents[2]
needs_c = pytest.mark.skipif(secret_rules._present is None, reason="the C extension was not built")


def test_the_extension_is_built_where_a_compiler_is() -> None:
    # As ci/_native: an install on a machine with a C compiler builds it (setup.py), so a build that silently
    # stopped working fails here rather than only making every report's redaction slower.
    if not (shutil.which(sysconfig.get_config_var("CC").split()[0]) or shutil.which("cc")):
        pytest.skip("no C compiler")
    assert secret_rules._present is not None


def _sample_lines() -> list[str]:
    return [line.replace("{s}", secret) for _, line, secret in samples()]


def _both(rules: SecretRules, text: str) -> tuple[set[str], set[str]]:
    low = text.lower()
    return rules._keywords_in(low), rules._keywords_matched(low)


@needs_c
def test_every_keyword_alone_inside_words_overlapping_and_cut_short() -> None:
    rules = default_rules()
    assert rules._index is not None
    for k in rules._keywords:
        for text in (k, f"x{k}y", f"{k}{k}", k[:-1], k[1:], f"{k[:-1]} {k[-1]}", f"é{k}", f"{k}😀", f"K{k}"):
            c, rx = _both(rules, text)
            assert c == rx, text
    c, rx = _both(rules, "xoxe.xoxb-1 sk-ant-api03 s.sk_live api_org_ ?&://")
    assert c == rx and {"xoxe.xoxb-", "xoxb", "sk-ant-api03", "sk-", "sk", "s.", "sk_live", "api", "api_org_",
                        "?", "&", "://"} <= c


@needs_c
def test_random_texts_of_the_keywords_own_characters() -> None:
    rules = default_rules()
    alphabet = [*sorted({c for k in rules._keywords for c in k}), " ", "\n", "é", "İ", "K", "😀", "\x00"]
    rnd = random.Random(17)
    for _ in range(3000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 40)))
        if rnd.random() < 0.5:  # with a keyword or two inside
            at = rnd.randint(0, len(text))
            text = text[:at] + rnd.choice(rules._keywords) + text[at:]
        c, rx = _both(rules, text)
        assert c == rx, text


@needs_c
def test_every_line_of_the_bundled_logs_and_the_secret_samples() -> None:
    rules = default_rules()
    texts = _sample_lines()
    for path in sorted((ROOT / "examples").glob("*.log")) + sorted((ROOT / "tests/ci/rule_logs").glob("*.log")):
        texts += path.read_text(encoding="utf-8", errors="replace").splitlines()
    for text in texts:
        c, rx = _both(rules, text)
        assert c == rx, text
    whole = "\n".join(texts)
    assert _both(rules, whole)[0] == _both(rules, whole)[1]


def test_a_redaction_is_the_same_with_the_regex_alone() -> None:
    texts = _sample_lines()
    fast, slow = default_rules(), SecretRules(default_rules().rules, default_rules().free)
    slow._index = None
    for text in texts:
        assert fast.redact(text, "[R]") == slow.redact(text, "[R]")


def test_keywords_that_are_not_all_ascii_are_left_to_the_regex() -> None:
    rules = SecretRules([SecretRule(id="x", regex="clé=(\\w+)", keywords=("clé",)),
                         SecretRule(id="y", regex="tok=(\\w+)", keywords=("tok",))])
    assert rules._index is None
    assert rules._keywords_in("la clé=abc tok=1") == {"clé", "tok"}


@needs_c
def test_a_bad_index_is_refused() -> None:
    present = secret_rules._present
    assert present is not None
    with pytest.raises(TypeError):
        present("abc", ((),) * 127)
    with pytest.raises(TypeError):
        present("abc", ((),) * 97 + ("abc",) + ((),) * 30)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        present("abc", ((),) * 97 + (("aé",),) + ((),) * 30)
    assert present("abc", ((),) * 97 + (("ab", "abd"),) + ((),) * 30) == {"ab"}
