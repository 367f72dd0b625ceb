"""The compiled hyperscan database is cached; a missing, corrupt or unwritable cache only costs a compile."""

from pathlib import Path

import pytest

from repopilot.ci.catalog import load_catalog
from repopilot.ci.scanner import Scanner, hyperscan_available

pytestmark = pytest.mark.skipif(not hyperscan_available(), reason="hyperscan wheel not installed")

LOG = b"2024-01-01T00:00:00.0000000Z --- FAIL: TestThing (0.01s)\n"


def _hits(sc: Scanner) -> list[int]:
    import io

    return [h.line for h in sc.scan(io.BytesIO(LOG)).hits]


def test_second_build_loads_the_cached_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    first = Scanner(load_catalog(), engine="hyperscan", cache_dir=cache)
    files = sorted(cache.glob("hyperscan-*.db"))
    assert files, "the compiled database was not cached"

    import hyperscan

    def no_compile(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled again although a cached database exists")

    monkeypatch.setattr(hyperscan, "Database", no_compile)
    second = Scanner(load_catalog(), engine="hyperscan", cache_dir=cache)
    assert _hits(second) == _hits(first) == [1]


def test_corrupt_cache_is_compiled_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    Scanner(load_catalog(), engine="hyperscan", cache_dir=cache)
    for f in cache.glob("hyperscan-*.db"):
        f.write_bytes(b"garbage")
    assert _hits(Scanner(load_catalog(), engine="hyperscan", cache_dir=cache)) == [1]
    assert all(f.read_bytes() != b"garbage" for f in cache.glob("hyperscan-*.db"))


def test_unwritable_cache_still_scans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert _hits(Scanner(load_catalog(), engine="hyperscan", cache_dir=blocker / "sub")) == [1]
    assert not (blocker / "sub").exists()
