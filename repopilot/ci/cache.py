"""The user's cache of what RepoPilot computes once per catalog version (the validated catalog, the compiled
hyperscan database): `~/.cache/repopilot`, `$XDG_CACHE_HOME/repopilot` or `$REPOPILOT_CACHE_DIR`. Entries are
named by a hash of everything that goes into them, so a stale one is never read; writes are atomic and best
effort (a read-only or full disk only costs the next run the work again)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path

__all__ = ["cache_dir", "cache_key", "read_entry", "write_entry"]


def cache_dir() -> Path:
    base = os.environ.get("REPOPILOT_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    path = Path(base).expanduser()
    return path if os.environ.get("REPOPILOT_CACHE_DIR") else path / "repopilot"


def cache_key(*parts: bytes | str) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()[:32]


def read_entry(name: str) -> bytes | None:
    """The entry's bytes, or None when there is none, or it is not a file this user alone can write (a shared
    or planted file is not trusted: it is rebuilt)."""
    path = cache_dir() / name
    try:
        with path.open("rb") as fh:
            st = os.fstat(fh.fileno())
            if st.st_uid != os.getuid() or st.st_mode & 0o022:
                return None
            return fh.read()
    except OSError:
        return None


def write_entry(name: str, data: bytes) -> None:
    path = cache_dir() / name
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                Path(tmp).unlink()
