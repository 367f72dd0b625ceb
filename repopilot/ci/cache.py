"""Entries of the cache of what RepoPilot computes once per catalog version (the validated catalog, the compiled
hyperscan database), in a directory the caller names (the settings' cache directory). Entries are named by a
hash of everything that goes into them, so a stale one is never read; writes are atomic and best effort (a
read-only or full disk only costs the next run the work again). A wheel also carries the entries of the bundled
catalog, made when it was built (`BUNDLED`, ci/prebuild.py): read when the user's cache has none."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ..core import new_temp_file
from .digest import blake2b

__all__ = ["BUNDLED", "SCAN_DATABASE", "bundled_scan_database", "cache_key", "has_entry", "read_bundled",
           "read_entry", "write_entry"]

BUNDLED = Path(__file__).with_name("prebuilt")  # absent in an editable install (setup.py fills it for a wheel)
# The file in `BUNDLED` naming the entry of the bundled catalog's scan databases: what a helper started before the
# catalog loads scans a big log with (ci/ahead.py).
SCAN_DATABASE = "scan-database"


def cache_key(*parts: bytes | str) -> str:
    h = blake2b(digest_size=16)
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def read_entry(directory: Path, name: str) -> bytes | None:
    """The entry's bytes, or None when there is none, or it is not a file this user alone can write (a shared
    or planted file is not trusted: it is rebuilt)."""
    try:
        with (directory / name).open("rb") as fh:
            st = os.fstat(fh.fileno())
            if st.st_uid != os.getuid() or st.st_mode & 0o022:
                return None
            return fh.read()
    except OSError:
        return None


def read_bundled(name: str) -> bytes | None:
    """The entry the installed wheel carries under `name`, or None. Installed with the code, it is trusted as the
    code is."""
    try:
        return (BUNDLED / name).read_bytes()
    except OSError:
        return None


def bundled_scan_database() -> bytes | None:
    """The scan databases' payload (ci/confirm.py) of the bundled catalog that the wheel carries, or None."""
    name = read_bundled(SCAN_DATABASE)
    return read_bundled(name.decode()) if name and name.isascii() and b"/" not in name else None


def has_entry(directory: Path | None, name: str) -> bool:
    """Whether the cache in `directory` (None: no cache) or the wheel holds an entry `name`."""
    return (directory is not None and (directory / name).is_file()) or (BUNDLED / name).is_file()


def write_entry(directory: Path, name: str, data: bytes) -> None:
    tmp: str | None = None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = new_temp_file(directory, f".{name}.")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, directory / name)
    except OSError:
        if tmp is not None:
            with contextlib.suppress(OSError):
                Path(tmp).unlink()
