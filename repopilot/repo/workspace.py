"""Disposable workspaces for verification: `git worktree add --detach` of a commit in a new temporary directory
outside the repository, the proposal applied there (never in the person's working tree, index, branches or
stashes), a command run in it with a time limit, a scrubbed environment, its output kept in a log file and, when
the machine allows (`unshare -rn`), no network. The worktree is removed (and pruned) afterwards.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import IO

from ..core import SandboxError
from .diff import git_apply_args
from .gitrun import GitFailed, run_git

__all__ = ["MAX_OUTPUT_BYTES", "Ran", "apply_in", "network_isolation", "run_command", "tool_versions", "worktree"]

MAX_OUTPUT_BYTES = 8 * 1024 * 1024  # kept of one command's output; the rest is read and dropped
_SHELL = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]  # as GitHub Actions runs `run:` steps


@dataclass(frozen=True)
class Ran:
    exit_code: int | None  # None: stopped at the time limit, or it could not start
    timed_out: bool
    duration_s: float
    output_sha256: str
    output_bytes: int
    log: Path


@contextmanager
def worktree(root: Path, commit: str = "HEAD", *, deadline: float | None = None) -> Iterator[Path]:
    """A detached worktree of `commit` in a fresh temporary directory (outside `root`), removed on exit."""
    base = run_git(root, ["rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"], deadline=deadline).strip()
    tmp = Path(tempfile.mkdtemp(prefix="repopilot-verify-")).resolve()
    if tmp.is_relative_to(root.resolve()):  # a TMPDIR inside the repository: refuse rather than nest
        shutil.rmtree(tmp, ignore_errors=True)
        raise SandboxError(f"the temporary directory {tmp} is inside the repository; set TMPDIR elsewhere")
    path = tmp / "work"
    try:
        run_git(root, ["worktree", "add", "--detach", "--quiet", str(path), base], deadline=deadline, timeout=300)
        yield path
    finally:
        run_git(root, ["worktree", "remove", "--force", str(path)], check=False)
        shutil.rmtree(tmp, ignore_errors=True)
        run_git(root, ["worktree", "prune"], check=False)


def apply_in(path: Path, diff: str, strip: int) -> None:
    """Apply `diff` to the worktree at `path` (its files and its own index). SandboxError when it does not apply."""
    args = [a for a in git_apply_args(strip) if a != "--cached"]
    try:
        run_git(path, ["apply", "--index", *args[1:]], input=diff)
    except GitFailed as exc:
        raise SandboxError(f"the diff does not apply in the workspace: {exc}") from None


@lru_cache(maxsize=1)
def network_isolation() -> tuple[str, ...]:
    """The prefix that runs a command without network (`unshare -rn`), or () when this machine does not allow it."""
    if shutil.which("unshare") is None:
        return ()
    try:
        done = subprocess.run(["unshare", "-rn", "true"], check=False, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ()
    return ("unshare", "-rn", "--") if done.returncode == 0 else ()


def run_command(cwd: Path, command: str, *, env: Mapping[str, str], timeout: float, log: Path,
                network: bool = False, max_bytes: int = MAX_OUTPUT_BYTES) -> Ran:
    """Run `command` with bash in `cwd`: stdout and stderr together into `log` (at most `max_bytes` kept), killed
    with its process group at `timeout` seconds. Without `network`, in a new network namespace when possible."""
    prefix = () if network else network_isolation()
    log.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    started = time.monotonic()
    with log.open("wb") as sink:
        try:
            proc = subprocess.Popen([*prefix, *_SHELL, command], cwd=cwd, env=dict(env), start_new_session=True,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        except OSError as exc:
            sink.write(f"could not start: {exc}\n".encode())
            return Ran(None, False, 0.0, "", 0, log)
        assert proc.stdout is not None
        kept = [0]
        pump = threading.Thread(target=_pump, args=(proc.stdout, sink, digest, kept, max_bytes), daemon=True)
        pump.start()
        timed_out = False
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            if proc.poll() is None:
                _kill_group(proc)
            proc.wait()
            pump.join(5.0)
            proc.stdout.close()
    return Ran(None if timed_out else proc.returncode, timed_out, round(time.monotonic() - started, 3),
               digest.hexdigest(), kept[0], log)


def _pump(stream: IO[bytes], sink: IO[bytes], digest: hashlib._Hash, kept: list[int], cap: int) -> None:
    read = getattr(stream, "read1", stream.read)
    while True:
        try:
            chunk = read(64 * 1024)
        except (OSError, ValueError):
            return
        if not chunk:
            return
        room = cap - kept[0]
        if room > 0:
            part = chunk[:room]
            sink.write(part)
            digest.update(part)
            kept[0] += len(part)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


_VERSION_OF = {"python": ["python3", "--version"], "node": ["node", "--version"],
               "go": ["go", "version"], "cargo": ["cargo", "--version"], "java": ["java", "-version"],
               "mvn": ["mvn", "-v"], "gcc": ["gcc", "--version"], "make": ["make", "--version"],
               "perl": ["perl", "-e", "print $^V"], "ruby": ["ruby", "--version"], "bash": ["bash", "--version"]}


def tool_versions(command: str, env: Mapping[str, str]) -> dict[str, str]:
    """The first version line of the tools `command` names (and bash), for the receipt's environment."""
    words = set(command.replace("\n", " ").split()) | {"bash"}
    names = {n for n in _VERSION_OF if n in words or (n == "python" and any(w.startswith("python")
                                                                           or w == "pytest" for w in words))}
    names |= {"java"} if "mvn" in words else set()
    names |= {"node"} if words & {"npm", "npx", "jest"} else set()
    out: dict[str, str] = {}
    for name in sorted(names):
        try:
            done = subprocess.run(_VERSION_OF[name], check=False, capture_output=True, timeout=20,
                                  env=dict(env), stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            out[name] = "not found"
            continue
        text = (done.stdout or done.stderr).decode("utf-8", "replace").strip().splitlines()
        out[name] = text[0][:120] if text else f"exit {done.returncode}"
    return out
