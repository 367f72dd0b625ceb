"""The job-log cache is bounded: past `log_cache_mb` the least recently used logs go, never a log this process
handed out, never a file that is not the cache's own; downloads a dead process left are neither served nor kept."""

from __future__ import annotations

import os
import time
from pathlib import Path

from repopilot.app import github_access, load_settings
from repopilot.ci import DEFAULT_LOG_CACHE_MB
from repopilot.ci.github import github_log_inputs
from repopilot.ci.github_api import GitHubAccess
from tests.fixtures.github.fake_github import LINT_LOG, TEST_LOG, TOKEN, FakeGitHub, github

__all__ = ["github"]  # the fixture, imported for pytest

KB = 1000


def _fetch(github: FakeGitHub, cache: Path, mb: int = 1) -> list[bytes]:
    access = GitHubAccess(token=TOKEN, api_url=github.url, log_cache=cache, log_cache_mb=mb)
    return [log.open().read() for log in github_log_inputs(github.run_url, access)]


def _put(cache: Path, name: str, size: int, age_s: float) -> Path:
    path = cache / name
    path.write_bytes(b"x" * size)
    when = time.time() - age_s
    os.utime(path, (when, when))
    return path


def _downloads(github: FakeGitHub) -> int:
    return len([p for p in github.paths() if p.startswith("/blob/")])


def test_past_the_bound_the_least_recently_used_logs_go(github: FakeGitHub, tmp_path: Path) -> None:
    cache = tmp_path / "logs"
    cache.mkdir()
    oldest = _put(cache, "acme_shop_1.log", 400 * KB, age_s=300)
    older = _put(cache, "acme_shop_2.log", 400 * KB, age_s=200)
    used = _put(cache, "acme_shop_3.log", 400 * KB, age_s=100)
    mine = _put(cache, "notes.txt", 2000 * KB, age_s=1000)  # not the cache's own: never counted nor removed
    os.utime(used)  # a hit: used just now, so it stays
    assert _fetch(github, cache) == [TEST_LOG, LINT_LOG]
    left = {p.name for p in cache.iterdir()}
    assert left == {used.name, mine.name, "octo_demo_102.log", "octo_demo_103.log"}
    assert not oldest.exists() and not older.exists()
    assert sum(p.stat().st_size for p in cache.glob("*.log")) <= 800 * KB  # down to 80% of the 1 MB bound


def test_a_cached_hit_is_served_and_marked_used(github: FakeGitHub, tmp_path: Path) -> None:
    cache = tmp_path / "logs"
    assert _fetch(github, cache) == [TEST_LOG, LINT_LOG]
    log = cache / "octo_demo_102.log"
    os.utime(log, (1, 1))
    assert _fetch(github, cache) == [TEST_LOG, LINT_LOG]
    assert _downloads(github) == 2  # the second time from the cache
    assert log.stat().st_mtime > time.time() - 60  # touched: evicted last


def test_logs_handed_out_stay_while_in_use_even_past_the_bound(github: FakeGitHub, tmp_path: Path) -> None:
    cache = tmp_path / "logs"
    cache.mkdir()
    # Newer than anything this run downloads: by use alone, the run's own logs would go first.
    future = [_put(cache, f"acme_shop_{i}.log", 600 * KB, age_s=-3600) for i in range(3)]
    access = GitHubAccess(token=TOKEN, api_url=github.url, log_cache=cache, log_cache_mb=1)
    first = github_log_inputs(github.run_url, access)
    assert [log.open().read() for log in first] == [TEST_LOG, LINT_LOG]
    assert sum(p.exists() for p in future) == 1  # two went to get under the bound; the run's logs stayed


def test_partial_downloads_are_never_served_and_stale_ones_go(github: FakeGitHub, tmp_path: Path) -> None:
    cache = tmp_path / "logs"
    cache.mkdir()
    # A killed process's download of the very log asked for, an hour old, and one under way in another process.
    stale = _put(cache, "octo_demo_102.log.k1l2l3.part", 10 * KB, age_s=2 * 3600)
    fresh = _put(cache, "octo_demo_103.log.a1b2c3.part", 10 * KB, age_s=5)
    assert _fetch(github, cache, mb=DEFAULT_LOG_CACHE_MB) == [TEST_LOG, LINT_LOG]
    assert _downloads(github) == 2  # fetched again, not taken from the partial file
    assert not stale.exists() and fresh.exists()
    assert sorted(p.name for p in cache.glob("*.log")) == ["octo_demo_102.log", "octo_demo_103.log"]


def test_an_entry_that_is_not_a_readable_file_is_fetched_again(github: FakeGitHub, tmp_path: Path) -> None:
    cache = tmp_path / "logs"
    cache.mkdir()
    (cache / "octo_demo_102.log").symlink_to(tmp_path / "gone")  # dangling: not a log to serve
    assert _fetch(github, cache) == [TEST_LOG, LINT_LOG]
    assert (cache / "octo_demo_102.log").is_file() and not (cache / "octo_demo_102.log").is_symlink()


def test_the_bound_is_a_setting_with_a_default(tmp_path: Path) -> None:
    assert load_settings({}, tmp_path).log_cache_mb == DEFAULT_LOG_CACHE_MB == 1024
    settings = load_settings({"REPOPILOT_LOG_CACHE_MB": "50"}, tmp_path)
    assert settings.log_cache_mb == 50 and github_access(settings).log_cache_mb == 50
