"""Run the CLI as a person does: in a pseudo-terminal of a given size, read back through a terminal emulator
(pyte), so a test sees the screen, not the bytes. Stdin is the terminal too unless `stdin` bytes are piped."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from pathlib import Path

import pyte

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Screen:
    code: int
    lines: list[str]  # what the terminal shows, trailing blanks cut, empty lines at the end dropped
    raw: str

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def index(self, needle: str, start: int = 0) -> int:
        """The first screen line from `start` on holding `needle`."""
        return next(i for i, line in enumerate(self.lines) if i >= start and needle in line)


def run_in_terminal(args: list[str], *, columns: int = 80, rows: int = 300, stdin: bytes | None = None,
                    answers: tuple[tuple[str, bytes], ...] = (), env: dict[str, str] | None = None,
                    cwd: Path | None = None, timeout: float = 60,
                    python_args: tuple[str, ...] = ("-m", "repopilot.cli.main")) -> Screen:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    full_env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(columns), "LINES": str(rows),
                **(env or {})}
    full_env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, *python_args, *args], stdin=subprocess.PIPE if stdin is not None
                            else slave, stdout=slave, stderr=slave, env=full_env, cwd=cwd or ROOT,
                            start_new_session=True)
    os.close(slave)
    if stdin is not None and proc.stdin is not None:
        proc.stdin.write(stdin)
        proc.stdin.close()
    pending = list(answers)  # (text to wait for, what to type once it shows)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if not ready:
            if proc.poll() is not None and not select.select([master], [], [], 0.05)[0]:
                break
            continue
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not data:
            break
        chunks.append(data)
        if pending and pending[0][0] in b"".join(chunks).decode("utf-8", "replace"):
            os.write(master, pending.pop(0)[1])
    os.close(master)
    code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    raw = b"".join(chunks).decode("utf-8", "replace")
    screen = pyte.Screen(columns, rows)
    pyte.Stream(screen).feed(raw)
    lines = [line.rstrip() for line in screen.display]
    while lines and not lines[-1]:
        lines.pop()
    return Screen(code=code, lines=lines, raw=raw)
