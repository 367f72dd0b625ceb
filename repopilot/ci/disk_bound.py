"""Keeping a cache directory under a size bound: past the bound, the least recently used entries go (a use touches
an entry's modification time), down to a share of the bound so the next writes do not evict again. The GitHub
API's answers (ci/api_cache.py) and the downloaded job logs (ci/github.py) are bounded this way.

Only the entries a cache names as its own are counted and removed (a directory a user pointed the cache at may
hold other files), and several processes may share a directory: an entry another process removed or is writing
is skipped, never an error. A cache that cannot be bounded costs disk space, never a diagnosis."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DiskEntry", "cache_entries", "evict_least_recent", "touch"]

KEEP_AFTER_EVICTION = 0.8  # evict down to this share of the bound


@dataclass(frozen=True, order=True)
class DiskEntry:
    used: float  # the last use (modification time): the oldest go first
    size: int
    path: Path


def cache_entries(directory: Path, is_entry: Callable[[str], bool]) -> list[DiskEntry]:
    """The entries under `directory` (not recursive) whose file names `is_entry` accepts."""
    found = []
    with contextlib.suppress(OSError), os.scandir(directory) as listing:
        for item in listing:
            if not is_entry(item.name):
                continue
            with contextlib.suppress(OSError):  # removed by another process meanwhile
                stat = item.stat(follow_symlinks=False)
                found.append(DiskEntry(stat.st_mtime, stat.st_size, Path(item.path)))
    return found


def evict_least_recent(entries: Collection[DiskEntry], max_bytes: int, *,
                       keep: Collection[Path] = ()) -> int:
    """When `entries` hold more than `max_bytes`, remove the least recently used (never those in `keep`: in use
    by this process) until they hold at most `KEEP_AFTER_EVICTION` of it. Returns the bytes left."""
    total = sum(e.size for e in entries)
    if total <= max_bytes:
        return total
    kept = set(keep)
    for entry in sorted(entries):
        if total <= max_bytes * KEEP_AFTER_EVICTION:
            break
        if entry.path in kept:
            continue
        try:
            entry.path.unlink()
        except FileNotFoundError:
            pass  # another process removed it: gone all the same
        except OSError:
            continue  # cannot be removed here: it still takes its room
        total -= entry.size
    return total


def touch(path: Path) -> None:
    """Mark an entry as just used, so it goes last."""
    with contextlib.suppress(OSError):
        os.utime(path)
