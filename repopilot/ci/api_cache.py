"""GitHub API answers kept on disk between processes: attribution asks the same questions of the same runs each
time a run URL is diagnosed (the run, its attempts' jobs, the repository, the base branch's runs).

- An answer that cannot change is served from the file without a request: the jobs of a run attempt, or a job,
  once every job in it is completed (a re-run makes a new attempt; it never changes an old one).
- Any other answer is asked for again with its `ETag` (`If-None-Match`) or `Last-Modified`: GitHub answers
  `304 Not Modified` when nothing changed, and a 304 does not count against the rate limit. A run's own JSON is
  one of these: a completed run can be re-run, which changes its attempt count.
- Keyed by the URL and by who asks (a hash of the API and the token: GitHub's answers vary by authorization), so
  one token's answers are never served to another. Each entry is written to a temporary file and renamed into
  place, so concurrent processes never read half an entry. Bounded in size: past `max_bytes` the least recently
  used entries go. A cache that cannot be read or written costs requests, never a diagnosis.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .digest import sha256
from .disk_bound import DiskEntry, cache_entries, evict_least_recent, touch

__all__ = ["DEFAULT_MAX_BYTES", "ApiCache", "CachedAnswer", "is_final"]

DEFAULT_MAX_BYTES = 32 << 20  # job listings are a few KB; 32 MB holds thousands of them
_FINAL_PATH = re.compile(r"/actions/(?:runs/\d+/attempts/\d+/jobs|jobs/\d+)$")


@dataclass(frozen=True)
class CachedAnswer:
    body: bytes
    etag: str | None = None
    last_modified: str | None = None
    link: str | None = None  # pagination
    final: bool = False  # cannot change: served without asking

    def validators(self) -> dict[str, str]:
        """The headers of a conditional request for this answer."""
        headers = {}
        if self.etag:
            headers["If-None-Match"] = self.etag
        if self.last_modified:
            headers["If-Modified-Since"] = self.last_modified
        return headers


def is_final(path: str, data: Any) -> bool:
    """Whether the answer at API `path` can no longer change: an attempt's jobs or a job, every job completed."""
    if not _FINAL_PATH.search(path) or not isinstance(data, dict):
        return False
    jobs = data.get("jobs") if "jobs" in data else [data]
    return isinstance(jobs, list) and bool(jobs) and all(
        isinstance(job, dict) and job.get("status") == "completed" for job in jobs)


class ApiCache:
    """The answers kept under `directory` for one API and token (`identity`)."""

    def __init__(self, directory: Path, identity: str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.directory = directory
        self.max_bytes = max_bytes
        self._who = sha256(identity.encode("utf-8", "replace")).hexdigest()[:16]
        self._total: int | None = None  # bytes under `directory`, counted at the first write of this process

    def _path(self, url: str) -> Path:
        return self.directory / f"{sha256(f'{self._who} {url}'.encode()).hexdigest()[:40]}.json"

    def get(self, url: str) -> CachedAnswer | None:
        path = self._path(url)
        try:
            data = json.loads(path.read_bytes())
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("url") != url or not isinstance(data.get("body"), str):
            return None
        touch(path)  # recently used: evicted last
        return CachedAnswer(body=data["body"].encode(), etag=_text(data.get("etag")),
                            last_modified=_text(data.get("last_modified")), link=_text(data.get("link")),
                            final=data.get("final") is True)

    def put(self, url: str, answer: CachedAnswer) -> None:
        record = json.dumps({"url": url, "etag": answer.etag, "last_modified": answer.last_modified,
                             "link": answer.link, "final": answer.final,
                             "body": answer.body.decode("utf-8", "replace")}).encode()
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(record)
                os.replace(tmp, self._path(url))
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
        except OSError:
            return
        self._bound(len(record))

    def _entries(self) -> list[DiskEntry]:
        return cache_entries(self.directory, lambda name: name.endswith(".json"))

    def _bound(self, written: int) -> None:
        # Counted once per process, then kept up to date, so a write lists the directory only past the bound.
        if self._total is None:
            self._total = sum(e.size for e in self._entries())
        else:
            self._total += written
        if self._total > self.max_bytes:
            self._total = evict_least_recent(self._entries(), self.max_bytes)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
