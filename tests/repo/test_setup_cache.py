"""The set-up step's cache: kept after a run, put back (not run) in the next workspace with the same lock files and
tools, run again when a lock file changes; bounded, and a corrupt entry is ignored."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from repopilot.core import SetupRun
from repopilot.repo import SetupCache, run_setup, worktree

SETUP = "echo ran >> {count}; mkdir -p node_modules/m && echo v1 > node_modules/m/index.js"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def _setup(root: Path, tmp_path: Path, cache: SetupCache | None,
           command: str | None = None) -> tuple[SetupRun, str | None, int]:
    count = tmp_path / "count"
    with worktree(root) as ws:
        done = run_setup(ws, ".", command or SETUP.format(count=count), cache=cache, tools={"node": "v20"},
                         env={"PATH": os.environ["PATH"]}, timeout=60, log=tmp_path / "setup.log", network=False)
        built = (ws / "node_modules" / "m" / "index.js").read_text() if (ws / "node_modules").exists() else None
    runs = len(count.read_text().splitlines()) if count.exists() else 0
    return done, built, runs


def _cache(tmp_path: Path, mb: int = 100) -> SetupCache:
    return SetupCache(tmp_path / "state" / "setup-cache", mb * 1_000_000)


def test_a_second_workspace_gets_the_set_up_back_without_running_it(git_repo: Path, tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    first, built, runs = _setup(git_repo, tmp_path, cache)
    assert first.cache == "miss" and first.exit_code == 0 and first.kept.startswith("kept (1 path")
    assert built == "v1\n" and runs == 1 and len(first.key) == 64
    second, built, runs = _setup(git_repo, tmp_path, cache)
    assert second.cache == "hit" and second.key == first.key and second.log == ""
    assert built == "v1\n" and runs == 1  # put back, not run


def test_a_changed_lock_file_is_a_miss(git_repo: Path, tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    (git_repo / "package-lock.json").write_text('{"lockfileVersion": 3}\n')
    _git(git_repo, "add", "-A")
    _git(git_repo, "commit", "-qm", "lock")
    first, _, _ = _setup(git_repo, tmp_path, cache)
    assert first.cache == "miss" and first.inputs == ["package-lock.json"]
    (git_repo / "package-lock.json").write_text('{"lockfileVersion": 3, "packages": {"m": "2"}}\n')
    _git(git_repo, "commit", "-qam", "bump")
    second, built, runs = _setup(git_repo, tmp_path, cache)
    assert second.cache == "miss" and second.key != first.key and runs == 2 and built == "v1\n"
    third, _, runs = _setup(git_repo, tmp_path, cache)
    assert third.cache == "hit" and third.key == second.key and runs == 2


def test_a_corrupt_entry_is_ignored_and_replaced(git_repo: Path, tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    first, _, _ = _setup(git_repo, tmp_path, cache)
    (cache.directory / first.key / "entry.json").write_text("{not json")
    second, built, runs = _setup(git_repo, tmp_path, cache)
    assert second.cache == "miss" and built == "v1\n" and runs == 2
    meta = json.loads((cache.directory / first.key / "entry.json").read_text())
    assert meta["paths"] == ["node_modules"]
    third, _, runs = _setup(git_repo, tmp_path, cache)
    assert third.cache == "hit" and runs == 2


def test_an_entry_whose_files_are_gone_is_ignored(git_repo: Path, tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    first, _, _ = _setup(git_repo, tmp_path, cache)
    subprocess.run(["rm", "-rf", str(cache.directory / first.key / "files")], check=True)
    second, built, runs = _setup(git_repo, tmp_path, cache)
    assert second.cache == "miss" and built == "v1\n" and runs == 2


def test_the_cache_is_bounded(git_repo: Path, tmp_path: Path) -> None:
    big = "head -c 3000000 /dev/zero > blob.bin"
    tiny = _cache(tmp_path, mb=4)  # an entry may take at most half
    done, _, _ = _setup(git_repo, tmp_path, tiny, command=big)
    assert done.cache == "miss" and done.kept.startswith("not kept: 3 MB is over half")
    assert not tiny.directory.exists() or not any(tiny.directory.iterdir())
    small = SetupCache(tmp_path / "small", 2_500)  # room for one 1,000-byte entry at a time
    a, _, _ = _setup(git_repo, tmp_path, small, command="head -c 1000 /dev/zero > a.bin")
    b, _, _ = _setup(git_repo, tmp_path, small, command="head -c 1000 /dev/zero > b.bin")
    c, _, _ = _setup(git_repo, tmp_path, small, command="head -c 1000 /dev/zero > c.bin")
    kept = {p.name for p in small.directory.iterdir()}
    assert a.kept.startswith("kept") and c.kept.startswith("kept") and kept == {b.key, c.key}


def test_a_set_up_that_changes_tracked_files_is_not_kept(git_repo: Path, tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    done, _, _ = _setup(git_repo, tmp_path, cache, command="echo more >> README.md")
    assert done.cache == "miss" and done.kept == "not kept: the set-up changed tracked files"
    again, _, _ = _setup(git_repo, tmp_path, cache, command="echo more >> README.md")
    assert again.cache == "miss"


def test_a_set_up_that_leaves_nothing_in_the_workspace_is_kept_too(git_repo: Path, tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    count = tmp_path / "count"
    first, _, _ = _setup(git_repo, tmp_path, cache, command=f"echo ran >> {count}")
    assert first.cache == "miss" and first.kept.startswith("kept (0 path")
    second, _, runs = _setup(git_repo, tmp_path, cache, command=f"echo ran >> {count}")
    assert second.cache == "hit" and runs == 1


def test_caching_off_runs_it_every_time(git_repo: Path, tmp_path: Path) -> None:
    first, _, _ = _setup(git_repo, tmp_path, None)
    second, _, runs = _setup(git_repo, tmp_path, None)
    assert first.cache == second.cache == "off" and runs == 2
