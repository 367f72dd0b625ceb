"""New temporary files for atomic writes (written, then renamed over the file they replace), made the way
`tempfile.mkstemp` makes them: a new random name in the target's directory, created exclusively (never an existing
file or a link someone planted), readable and writable by this user alone. Not `tempfile` itself: it imports
shutil, random and, through them, the compression modules: about 10 M instructions of every `repopilot diagnose`,
which writes its trace this way."""

from __future__ import annotations

import errno
import os
from pathlib import Path

__all__ = ["new_temp_file"]

# tempfile's own flags for mkstemp.
_FLAGS = (os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
          | getattr(os, "O_BINARY", 0))
_ATTEMPTS = 100  # tempfile.TMP_MAX is 10000; 48 random bits make a second attempt rare already


def new_temp_file(directory: Path | str, prefix: str, suffix: str = "") -> tuple[int, str]:
    """A file newly created in `directory` as `prefix` + random + `suffix`, mode 0600, open for reading and
    writing: its descriptor and path (what `tempfile.mkstemp(suffix, prefix, directory)` returns)."""
    for _ in range(_ATTEMPTS):
        path = os.path.join(directory, f"{prefix}{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(path, _FLAGS, 0o600), path
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused name for a temporary file", str(directory))
