"""SOURCE input that never ends or never starts (issue 15, item 4): piped stdin stops at a cap and leaves no spool
behind whatever ends the process; a FIFO (or any non-regular file) is refused instead of blocking forever."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from repopilot.ci import open_sources
from repopilot.core import InputError

ROOT = Path(__file__).resolve().parents[2]
LOG = b"##[group]Run go build ./...\nmain.go:3:2: undefined: fmt.Printn\n##[error]Process completed with exit code 1.\n"


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_stdin_past_the_cap_is_refused_and_nothing_is_left(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    _stdin(monkeypatch, b"y\n" * 100_000)
    with pytest.raises(InputError, match="stdin is larger than 100,000 bytes"):
        open_sources("-", max_stdin_bytes=100_000)
    assert list(tmp_path.iterdir()) == []


def test_stdin_spool_reads_independently_and_has_no_name(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    _stdin(monkeypatch, LOG)
    [inp] = open_sources("-")
    assert list(tmp_path.iterdir()) == []  # never on disk under a name, so no kill can leave it behind
    first, second = inp.open(), inp.open()
    assert first.readline() == LOG.splitlines(keepends=True)[0]
    assert second.read() == LOG  # its own position, not the first reader's
    assert first.read() == b"".join(LOG.splitlines(keepends=True)[1:])


def _cli(args: list[str], tmp_path: Path, **kw: object) -> subprocess.Popen[bytes]:
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), "REPOPILOT_RUNS_DIR": str(tmp_path / "runs")}
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return subprocess.Popen([sys.executable, "-m", "repopilot.cli.main", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)  # type: ignore[call-overload]


def test_sigterm_while_spooling_stdin_leaves_no_file(tmp_path: Path) -> None:
    proc = _cli(["diagnose", "-"], tmp_path, stdin=subprocess.PIPE)
    assert proc.stdin is not None
    for _ in range(20):  # a few MB, and the pipe stays open: the spool is mid-way when the signal comes
        proc.stdin.write(b"y\n" * 100_000)
    proc.stdin.flush()
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)
    proc.stdin.close()
    assert list((tmp_path / "tmp").iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_source_is_refused_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "build.log"
    os.mkfifo(fifo)
    proc = _cli(["diagnose", str(fifo)], tmp_path)
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 2
    assert b"not a regular file" in err and b"Traceback" not in err
