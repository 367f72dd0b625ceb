"""The catalog is validated once per catalog version: later loads read the user's cache, and a cache that is
stale, corrupt or not the user's own is rebuilt."""

from __future__ import annotations

import io
import os
import tomllib
from pathlib import Path

import pytest

from repopilot.ci import engine as engine_mod
from repopilot.ci.catalog import LazyPattern, load_catalog
from repopilot.ci.engine import default_scanner
from repopilot.ci.scanner import Scanner, hyperscan_available, hyperscan_cached

RULE = """format = 1
[[rule]]
id = "u.thing"
category = "build"
ecosystem = "x"
tool = "x"
trigger = '^THING (?P<message>.+)$'
confidence = 0.9
hint = "h"
[[rule.example]]
text = "THING broke"
match = true
[[rule.example]]
text = "thing"
match = false
"""


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


def _no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the rule files were parsed again")

    monkeypatch.setattr(tomllib, "loads", refuse)  # the catalog imports it only to parse


def test_second_load_reads_the_cache_and_equals_the_first(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = load_catalog(cache_dir=cache)
    assert list(cache.glob("catalog-*.pickle"))
    _no_parsing(monkeypatch)
    second = load_catalog(cache_dir=cache)
    assert second == first and second.version == first.version
    trig = second.rules[0].triggers[0]
    assert isinstance(trig, LazyPattern) and trig._rx is None  # compiled only when first used
    trig.search("no match here")
    assert trig._rx is not None


def test_a_changed_rule_file_is_a_new_entry(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "u.toml").write_text(RULE)
    assert load_catalog([rules], cache_dir=cache).by_id("u.thing").confidence == 0.9
    (rules / "u.toml").write_text(RULE.replace("confidence = 0.9", "confidence = 0.7"))
    assert load_catalog([rules], cache_dir=cache).by_id("u.thing").confidence == 0.7
    assert len(list(cache.glob("catalog-*.pickle"))) == 2


@pytest.mark.parametrize("spoil", ["corrupt", "shared"])
def test_a_corrupt_or_shared_entry_is_rebuilt(cache: Path, spoil: str) -> None:
    load_catalog(cache_dir=cache)
    [entry] = cache.glob("catalog-*.pickle")
    if spoil == "corrupt":
        entry.write_bytes(b"not a pickle")
    else:
        os.chmod(entry, 0o666)  # anyone could have written it: not trusted
    assert len(load_catalog(cache_dir=cache).rules) > 100
    if spoil == "corrupt":
        assert entry.read_bytes() != b"not a pickle"
    else:
        assert entry.stat().st_mode & 0o022 == 0


@pytest.mark.skipif(not hyperscan_available(), reason="hyperscan wheel not installed")
def test_a_small_log_on_a_fresh_machine_is_scanned_before_hyperscan_compiles(cache: Path) -> None:
    engine_mod._scanner.cache_clear()  # scanners built for other tests' caches
    small = default_scanner(cache_dir=cache, size=12 * 1024)
    assert small.engine.name == "re"  # nothing compiled yet: `re` is faster than compiling
    assert not list(cache.glob("hyperscan-*.db"))
    engine_mod._scanner.cache_clear()
    again = default_scanner(cache_dir=cache, size=12 * 1024)  # the next run: the machine has run RepoPilot before
    assert again.engine.name == "hyperscan" and list(cache.glob("hyperscan-*.db"))
    assert default_scanner(cache_dir=cache, size=50 * 1024 * 1024).engine.name == "hyperscan"
    data = (Path(__file__).resolve().parents[2] / "examples" / "go-build-error.log").read_bytes()
    sc = Scanner(load_catalog(cache_dir=cache), cache_dir=cache, compile_hyperscan=False)
    assert sc.engine.name == "hyperscan"  # once compiled, every log uses it
    assert [h.line for h in sc.scan(io.BytesIO(data)).hits] == [h.line for h in small.scan(io.BytesIO(data)).hits]
    assert not hyperscan_cached([(b"x", False)], cache)
    engine_mod._scanner.cache_clear()
