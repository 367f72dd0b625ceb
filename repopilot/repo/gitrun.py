"""The one way RepoPilot runs git: an argument list (never a shell), in a root the user named, with everything a
repository's config could use to run a program or move the work tree neutralised, bounded in bytes and time.

A repository is untrusted input. Its `.git/config` and `.gitattributes` can name programs git would run (filter
drivers, textconv, external diff, fsmonitor, hooks, gpg for signatures) and can move the work tree
(`core.worktree=/`); the environment can do the same (`GIT_DIR`, `GIT_WORK_TREE`, `GIT_CONFIG_*`). So every
call clears the `GIT_*` environment, skips the system config, pins the work tree to the root, turns those
settings off with `-c` overrides, and blanks every filter/diff/merge driver the config defines (git has no
switch to ignore in-tree attributes before 2.40, so the drivers they name are emptied instead).

A call has a hard time limit: git runs in its own process group, which is killed (children included) when the
limit or the run's deadline passes, even while it is still writing output.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO

from ..core import InputError, SandboxError

__all__ = ["DEFAULT_GIT_TIMEOUT_S", "GitFailed", "GitOutput", "GitTimeout", "run_git"]

DEFAULT_GIT_TIMEOUT_S = 60.0
_STDERR_CAP = 64 * 1024
_CHUNK = 64 * 1024
# Settings that would run a program the repository chooses, or change what a read shows.
_NEUTRAL = {
    "core.fsmonitor": "false",
    "core.hooksPath": "/dev/null",
    "core.attributesFile": "/dev/null",
    "core.pager": "cat",
    "diff.external": "",
    "color.ui": "false",
    "log.showSignature": "false",
    "commit.gpgSign": "false",
    "tag.gpgSign": "false",
    "gpg.program": "false",
    "gpg.ssh.program": "false",
    "gpg.x509.program": "false",
    "submodule.recurse": "false",
    "diff.ignoreSubmodules": "all",
    "protocol.allow": "never",
}
# Driver settings that name programs; every driver the config defines gets these emptied.
_DRIVER_KEYS = r"^(filter|diff|merge)\..+\.(clean|smudge|process|textconv|command|driver)$"
# The person's own identity may come from the environment; nothing else of git's does.
_KEPT_ENV = frozenset({"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"})
_FIXED_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "GIT_CONFIG_NOSYSTEM": "1",
              "GIT_ATTR_NOSYSTEM": "1", "GIT_PAGER": "cat", "LC_ALL": "C"}


class GitOutput(str):
    """Git's stdout as text, with `truncated` set when it was cut at the byte cap."""

    truncated: bool = False


class GitFailed(SandboxError):
    """A git command exited non-zero; `stderr` holds its message for callers that explain it."""

    def __init__(self, message: str, stderr: str) -> None:
        super().__init__(message)
        self.stderr = stderr


class GitTimeout(SandboxError):
    """A git command was stopped (its process group killed) at its time limit or the run's deadline."""


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The child environment: the caller's without any `GIT_*` variable (identity aside), plus fixed settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in _KEPT_ENV}
    return {**env, **_FIXED_ENV, **(extra or {})}


def _overrides(settings: Mapping[str, str]) -> list[str]:
    return [arg for key, value in settings.items() for arg in ("-c", f"{key}={value}")]


def _driver_blanks(root: Path) -> dict[str, str]:
    """Config entries (as GIT_CONFIG_COUNT/KEY/VALUE variables, which take any name, unlike `-c name=value`) that
    empty every filter/diff/merge driver program the repository's config defines."""
    out = _spawn_and_collect(["git", "--work-tree", str(root), *_overrides(_NEUTRAL), "config", "-z", "--name-only",
                              "--get-regexp", _DRIVER_KEYS], root, git_env(), None, 1_000_000,
                             time.monotonic() + DEFAULT_GIT_TIMEOUT_S, "config")
    blanks: dict[str, str] = {}
    for name in out.stdout.decode("utf-8", "replace").split("\0"):
        if name:
            blanks[name] = ""
            if name.startswith("filter."):
                blanks[name.rsplit(".", 1)[0] + ".required"] = "false"
    env = {"GIT_CONFIG_COUNT": str(len(blanks))}
    for i, name in enumerate(blanks):
        env[f"GIT_CONFIG_KEY_{i}"] = name
        env[f"GIT_CONFIG_VALUE_{i}"] = blanks[name]
    return env


def _config_env(blanks: dict[str, str], config: Mapping[str, str]) -> dict[str, str]:
    """The driver blanks plus `config`, as one GIT_CONFIG_COUNT list (environment, never the command line)."""
    count = int(blanks.get("GIT_CONFIG_COUNT", "0"))
    env = dict(blanks)
    for i, (key, value) in enumerate(config.items(), start=count):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    env["GIT_CONFIG_COUNT"] = str(count + len(config))
    return env


def run_git(root: Path, args: list[str], *, input: str | None = None, env: Mapping[str, str] | None = None,
            max_bytes: int = 4_000_000, check: bool = True, timeout: float = DEFAULT_GIT_TIMEOUT_S,
            deadline: float | None = None, config: Mapping[str, str] | None = None) -> GitOutput:
    """Run `git args` in `root`; stdout capped at `max_bytes`. Stopped at `timeout` seconds or at `deadline` (a
    `time.monotonic()` value), whichever comes first: GitTimeout. A non-zero exit is GitFailed when `check`.
    `config` adds settings through the environment (a credential header must not show in the process list)."""
    ends = time.monotonic() + timeout
    by_deadline = deadline is not None and deadline < ends
    end = deadline if by_deadline and deadline is not None else ends
    what = args[0] if args else "git"

    def stopped() -> GitTimeout:
        why = "the run's time budget ran out" if by_deadline else f"it took longer than {timeout:.0f}s"
        return GitTimeout(f"git {what} was stopped: {why}")

    if time.monotonic() >= end:
        raise stopped()
    command = ["git", "--work-tree", str(root), *_overrides(_NEUTRAL), *args]
    child_env = git_env({**_config_env(_driver_blanks(root), config or {}), **(env or {})})
    done = _spawn_and_collect(command, root, child_env, input, max_bytes, end, what)
    if done.timed_out:
        raise stopped()
    if check and done.returncode != 0 and not done.truncated:
        stderr = done.stderr.decode("utf-8", "replace").strip()
        last = stderr.splitlines()[-1] if stderr else f"exit {done.returncode}"
        raise GitFailed(f"git {what} failed: {last}", stderr)
    result = GitOutput(done.stdout[:max_bytes].decode("utf-8", "replace"))
    result.truncated = done.truncated
    return result


class _Done:
    def __init__(self) -> None:
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.returncode = 0
        self.truncated = False
        self.timed_out = False


def _spawn_and_collect(command: list[str], cwd: Path, env: Mapping[str, str], input: str | None, max_bytes: int,
                       end: float, what: str) -> _Done:
    done = _Done()
    try:
        # Its own session: a kill reaches git's children too, and nothing is left running after a timeout.
        proc = subprocess.Popen(command, cwd=cwd, env=dict(env), start_new_session=True, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE,
                                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL)
    except FileNotFoundError:
        raise InputError("git is not installed or not on PATH") from None
    except NotADirectoryError:
        raise SandboxError(f"git {what}: {cwd} is not a directory") from None
    assert proc.stdout is not None and proc.stderr is not None
    reader = threading.Thread(target=_pump, args=(proc.stdout, done.stdout, max_bytes + 1), daemon=True)
    drainer = threading.Thread(target=_pump, args=(proc.stderr, done.stderr, _STDERR_CAP, True), daemon=True)
    threads = [reader, drainer]
    if input is not None:
        threads.append(threading.Thread(target=_feed, args=(proc.stdin, input.encode("utf-8")), daemon=True))
    for t in threads:
        t.start()
    try:
        reader.join(max(0.0, end - time.monotonic()))  # ends at EOF, or once the cap is reached
        done.truncated = len(done.stdout) > max_bytes
        if reader.is_alive():
            done.timed_out = True
        elif not done.truncated:
            try:
                proc.wait(max(0.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                done.timed_out = True
    finally:
        if proc.poll() is None:
            _kill_group(proc)
        proc.wait()
        for t in threads:
            t.join(5.0)
        for stream in (proc.stdout, proc.stderr, proc.stdin):
            if stream is not None:
                stream.close()
    done.returncode = proc.returncode
    return done


def _pump(stream: IO[bytes], sink: bytearray, cap: int, drain: bool = False) -> None:
    """Copy `stream` into `sink` up to `cap` bytes; with `drain`, read on (discarding) so the writer never blocks."""
    read = getattr(stream, "read1", stream.read)
    while True:
        try:
            chunk = read(_CHUNK)
        except (OSError, ValueError):  # closed under us after a kill
            return
        if not chunk:
            return
        room = cap - len(sink)
        if room > 0:
            sink += chunk[:room]
        if len(sink) >= cap and not drain:
            return


def _feed(stream: IO[bytes] | None, data: bytes) -> None:
    if stream is None:
        return
    try:
        stream.write(data)
        stream.close()
    except (BrokenPipeError, OSError, ValueError):  # git stopped reading (it failed, or was killed)
        pass


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
