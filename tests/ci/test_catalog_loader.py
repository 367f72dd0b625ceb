"""The loader refuses what a rule author can get wrong, naming the file and rule."""

from __future__ import annotations

import pytest

from repopilot.ci.catalog import load_catalog, load_rule_files
from repopilot.core import ConfigError

GOOD = '''
format = 1
[[rule]]
id = "x.one"
category = "build"
ecosystem = "x"
tool = "x"
trigger = '^boom: (?P<message>.+)$'
confidence = 0.9
hint = "h"
[[rule.example]]
text = "boom: bad"
match = true
[[rule.example]]
text = "no boom"
match = false
'''


def _load(text: str) -> object:
    return load_rule_files([("t.toml", text.encode())])


def test_good_file_loads() -> None:
    cat = load_rule_files([("_catalog.toml", b'version = "7"'), ("t.toml", GOOD.encode())])
    assert cat.version == "7"
    assert cat.rules[0].id == "x.one" and cat.rules[0].source == "t.toml"


@pytest.mark.parametrize(("change", "expected"), [
    (('category = "build"', 'category = "compile"'), "category 'compile' is not one of"),
    (("format = 1", "format = 2"), "format = 1"),
    (("confidence = 0.9", "confidence = 1.5"), "confidence"),
    (("'^boom: (?P<message>.+)$'", "'^boom(?!x)'"), "lookarounds"),
    (("'^boom: (?P<message>.+)$'", "'^boom: (?P<msg>.+)$'"), "unknown named groups"),
    (("'^boom: (?P<message>.+)$'", "'^boom: ('"), "bad regex"),
    (('hint = "h"', 'hint = "h"\nflavour = 1'), "unknown keys"),
    (("match = false", "match = true"), "near-miss negative"),
    (('id = "x.one"', 'id = "X One"'), "valid `id`"),
])
def test_bad_files_are_refused(change: tuple[str, str], expected: str) -> None:
    with pytest.raises(ConfigError, match=r"t\.toml") as info:
        _load(GOOD.replace(*change))
    assert expected in str(info.value)


def test_duplicate_ids_refused() -> None:
    with pytest.raises(ConfigError, match="already defined"):
        load_rule_files([("a.toml", GOOD.encode()), ("b.toml", GOOD.encode())])


def test_not_toml_refused() -> None:
    with pytest.raises(ConfigError, match="not valid TOML"):
        _load("[[rule]\n")


def test_extra_rules_directory(tmp_path) -> None:
    (tmp_path / "mine.toml").write_text(GOOD.replace("x.one", "mine.one"))
    cat = load_catalog([tmp_path])
    assert "mine.one" in {r.id for r in cat.rules}
    with pytest.raises(ConfigError, match="not found"):
        load_catalog([tmp_path / "nope"])
