"""New temporary files for atomic writes, made as tempfile.mkstemp makes them, without importing tempfile."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from repopilot.core import atomic, new_temp_file


def test_a_new_file_only_this_user_can_read_named_by_prefix_and_suffix(tmp_path: Path) -> None:
    fd, path = new_temp_file(tmp_path, ".run.", ".tmp")
    with os.fdopen(fd, "wb") as fh:
        fh.write(b"x")
    name = Path(path).name
    assert Path(path).parent == tmp_path and name.startswith(".run.") and name.endswith(".tmp")
    assert len(name) > len(".run..tmp") and Path(path).read_bytes() == b"x"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert new_temp_file(tmp_path, ".run.", ".tmp")[1] != path  # a new name each time


def test_an_existing_name_or_a_planted_link_is_never_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "victim"
    target.write_bytes(b"keep")
    taken = bytes(6)
    (tmp_path / f"p{taken.hex()}").symlink_to(target)
    fresh = b"\x01" * 6
    draws = iter([taken, taken, fresh])
    monkeypatch.setattr(atomic.os, "urandom", lambda n: next(draws))
    fd, path = new_temp_file(tmp_path, "p")
    os.close(fd)
    assert Path(path).name == f"p{fresh.hex()}" and target.read_bytes() == b"keep"
    monkeypatch.setattr(atomic.os, "urandom", lambda n: taken)
    with pytest.raises(FileExistsError):
        new_temp_file(tmp_path, "p")
