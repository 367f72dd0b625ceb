"""SOURCE handling: files, stdin, and clear one-line errors for what cannot be diagnosed."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from repopilot.ci.sources import open_sources
from repopilot.core import InputError


def test_file(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(b"hello\n")
    [inp] = open_sources(str(log))
    assert inp.size == 6 and inp.name == str(log)
    with inp.open() as a, inp.open() as b:  # a fresh stream each time
        assert a.read() == b.read() == b"hello\n"


@pytest.mark.parametrize(("setup", "message"), [
    (lambda p: None, "no such file"),
    (lambda p: p.mkdir(), "is a directory"),
    (lambda p: p.write_bytes(b""), "is empty"),
    (lambda p: p.write_bytes(b"\x7fELF\x00\x00\x01binary"), "looks binary"),
])
def test_bad_files(tmp_path: Path, setup, message: str) -> None:
    path = tmp_path / "x.log"
    setup(path)
    with pytest.raises(InputError, match=message) as info:
        open_sources(str(path))
    assert "\n" not in str(info.value)


def test_stdin_is_spooled_and_rereadable(monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"line\n" * 100000
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    [inp] = open_sources("-")
    assert inp.name == "stdin" and inp.size == len(data)
    for _ in range(2):
        with inp.open() as fh:
            assert fh.read() == data


def test_empty_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    with pytest.raises(InputError, match="stdin is empty"):
        open_sources("-")


def test_not_a_run_url() -> None:
    with pytest.raises(InputError, match="not a GitHub Actions run URL"):
        open_sources("https://example.com/some/page")


def test_zip_and_run_urls_reach_their_sources(tmp_path: Path) -> None:
    z = tmp_path / "logs.zip"
    z.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(InputError, match="zip"):
        open_sources(str(z))
