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


def _patterns(rule: object) -> list[object]:
    block = rule.block  # type: ignore[attr-defined]
    found = [*rule.triggers, rule.exclude, rule.next_line, *(f.pattern for f in rule.fields_from),  # type: ignore[attr-defined]
             block.up_while, block.up_until, block.down_while, block.down_until]
    return [p for p in found if p is not None]


def test_every_bundled_regex_compiles_and_its_groups_read_as_compiled() -> None:
    """The bundled rules' regexes are not compiled when a fresh machine loads the catalog (see load_rule_files):
    this is where they are, and where the group names read from their source are held to the compiled ones."""
    import re

    from repopilot.ci.catalog import _package_rule_files

    files = _package_rule_files()
    catalog = load_rule_files(files, tested=len(files))
    checked = 0
    for rule in catalog.rules:
        for pattern in _patterns(rule):
            read = pattern.group_names()  # type: ignore[attr-defined]
            assert set(re.compile(pattern.pattern, pattern.flags).groupindex) == read, rule.id  # type: ignore[attr-defined]
            checked += 1
    assert checked > 300
    assert load_rule_files(files) == catalog  # compiled at load or not, the same rules


def test_a_users_bad_regex_is_still_refused_at_load(tmp_path: object) -> None:
    from pathlib import Path

    folder = Path(str(tmp_path))
    (folder / "mine.toml").write_text(GOOD.replace("(?P<message>.+)$", "(?P<message>.+$"))
    with pytest.raises(ConfigError, match="bad regex"):
        load_catalog([folder])
