"""A wheel carries the validated catalog and hyperscan's database (ci/prebuild.py, made by setup.py's build hook):
a fresh machine of the same platform uses them without validating or compiling anything, and anything that does
not fit (another platform's database, a damaged file) is made again, as on a machine without them."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

import repopilot.ci.cache as cache_mod
import repopilot.ci.catalog as catalog_mod
from repopilot.ci import Scanner, write_prebuilt
from repopilot.ci.catalog import load_catalog
from repopilot.ci.scanner import hyperscan_available


@pytest.fixture
def bundled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    into = tmp_path / "prebuilt"
    names = write_prebuilt(into)
    assert any(n.startswith("catalog-") for n in names)
    assert any(n.startswith("hyperscan-") for n in names) == hyperscan_available()
    monkeypatch.setattr(cache_mod, "BUNDLED", into)
    return into


def test_a_fresh_cache_uses_the_bundled_catalog_without_validating_it(bundled: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    expected = load_catalog()

    def no_validation(*args: object, **kwargs: object) -> None:
        raise AssertionError("the bundled catalog was validated again")

    monkeypatch.setattr(catalog_mod, "load_rule_files", no_validation)
    empty = tmp_path / "cache"
    assert load_catalog(cache_dir=empty) == expected
    assert not empty.exists()  # nothing to cache: the wheel holds it


@pytest.mark.skipif(not hyperscan_available(), reason="hyperscan is not installed")
def test_a_fresh_cache_scans_with_the_bundled_database_without_compiling(bundled: Path, tmp_path: Path) -> None:
    empty = tmp_path / "cache"
    scanner = Scanner(load_catalog(cache_dir=empty), cache_dir=empty, compile_hyperscan=False)
    assert scanner.engine.name == "hyperscan"
    assert not empty.exists()  # a compiled database would have been cached here
    found = scanner.scan(io.BytesIO(b"# example\n./main.go:3:2: undefined: foo\n"))
    assert found.engine == "hyperscan"
    assert found.hits


@pytest.mark.skipif(not hyperscan_available(), reason="hyperscan is not installed")
def test_the_bundled_scan_databases_are_named_for_a_helper_started_before_the_catalog_loads(bundled: Path,
                                                                                           tmp_path: Path) -> None:
    # ci/ahead.py gives them to the helper of a big log at once; the scan takes its pieces only if they are its own.
    empty = tmp_path / "cache"
    scanner = Scanner(load_catalog(cache_dir=empty), cache_dir=empty, compile_hyperscan=False)
    assert (bundled / cache_mod.SCAN_DATABASE).read_text() == scanner.engine.entry
    payload = scanner.engine.serialized()
    assert payload and cache_mod.bundled_scan_database() == payload
    (bundled / cache_mod.SCAN_DATABASE).write_text("../../elsewhere.db")
    assert cache_mod.bundled_scan_database() is None


@pytest.mark.skipif(not hyperscan_available(), reason="hyperscan is not installed")
def test_a_bundled_database_that_does_not_load_is_compiled_again(bundled: Path, tmp_path: Path) -> None:
    for db in bundled.glob("hyperscan-*.db"):
        db.write_bytes(b"built for another machine")
    empty = tmp_path / "cache"
    scanner = Scanner(load_catalog(cache_dir=empty), cache_dir=empty)
    assert scanner.engine.name == "hyperscan"
    assert len(list(empty.glob("hyperscan-*.db"))) == 2  # compiled here, and cached



def test_a_cached_catalog_keeps_its_scan_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = load_catalog()
    assert expected.scan_forms == tuple(tuple(catalog_mod.scan_pattern(t.pattern) for t in r.triggers)
                                        for r in expected.rules)
    load_catalog(cache_dir=tmp_path)  # validated and cached

    def refuse(trigger: str) -> str:
        raise AssertionError("worked out again")

    monkeypatch.setattr(catalog_mod, "scan_pattern", refuse)
    assert load_catalog(cache_dir=tmp_path).scan_forms == expected.scan_forms
