"""The set-up step of verification (`--verify-setup`, `[verify] setup`), cached across runs. Installing
dependencies is slow and gives the same result for every workspace made from the same lock files, so what a
set-up leaves in a workspace is kept in the state directory and put back into the next workspace with the same
key instead of running it again.

The key: the set-up command, the directory it runs in, the sha256 of every lock or manifest file the workspace
tracks (requirements*.txt, pyproject.toml, package-lock.json, go.sum, Cargo.lock, pom.xml, …), the versions of
the tools the set-up names, the machine and whether the network was allowed. A diff that changes a lock file
changes the key.

What is kept: the files and directories the set-up created that git does not track (untracked or ignored:
node_modules/, .venv/, target/ …); a set-up that only installs outside the workspace keeps an empty entry, and a
hit then skips it. A set-up that changed a tracked file is not cached (putting the change back could undo the
diff's). Bounded: an entry over half the limit is not kept, and the least recently used entries are evicted past
the limit. An entry that cannot be read, or whose files are missing, is ignored and removed."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..core import SetupRun
from .gitrun import GitFailed, run_git
from .workspace import run_command

__all__ = ["SetupCache", "run_setup", "setup_key"]

FORMAT = 1
_MANIFEST = re.compile(
    r"(?:^|/)(?:requirements[^/]*\.(?:txt|in)|constraints[^/]*\.txt|pyproject\.toml|setup\.py|setup\.cfg|"
    r"poetry\.lock|Pipfile(?:\.lock)?|uv\.lock|pdm\.lock|package(?:-lock)?\.json|npm-shrinkwrap\.json|yarn\.lock|"
    r"pnpm-lock\.yaml|bun\.lockb?|go\.(?:mod|sum|work)|Cargo\.(?:toml|lock)|rust-toolchain(?:\.toml)?|pom\.xml|"
    r"build\.gradle(?:\.kts)?|settings\.gradle(?:\.kts)?|gradle\.lockfile|gradle-wrapper\.properties|"
    r"Gemfile(?:\.lock)?|composer\.(?:json|lock)|mix\.lock|Package\.resolved|\.tool-versions|\.nvmrc|"
    r"\.python-version)$")
_MAX_INPUTS = 500  # lock and manifest files hashed into a key (a monorepo's first 500, by path)
_SHOWN_INPUTS = 20


@dataclass(frozen=True)
class SetupCache:
    directory: Path
    max_bytes: int  # the whole cache; 0 turns caching off


def setup_key(ws: Path, cwd: str, command: str, tools: Mapping[str, str], network: bool
              ) -> tuple[str, list[str]]:
    """(the key, the lock and manifest files it covers) for running `command` in `ws / cwd`."""
    listed = run_git(ws, ["ls-files", "-z", "--cached"], max_bytes=64_000_000)
    inputs = sorted(p for p in set(listed.split("\0")) if p and _MANIFEST.search(p))[:_MAX_INPUTS]
    digests = {p: _file_sha(ws / p) for p in inputs}
    what = {"format": FORMAT, "command": command, "cwd": cwd, "files": digests, "tools": dict(sorted(tools.items())),
            "network": network, "machine": f"{platform.system()}-{platform.machine()}"}
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest(), inputs


def _file_sha(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
    except OSError:
        return "unreadable"
    return digest.hexdigest()


def run_setup(ws: Path, cwd: str, command: str, *, cache: SetupCache | None, tools: Mapping[str, str],
              env: Mapping[str, str], timeout: float, log: Path, network: bool) -> SetupRun:
    """The set-up in workspace `ws`: put back from `cache` when it holds this key, else run (and kept)."""
    started = time.monotonic()
    if cache is None or cache.max_bytes <= 0:
        ran = run_command(ws / cwd, command, env=env, timeout=timeout, log=log, network=network)
        return SetupRun(cache="off", exit_code=ran.exit_code, timed_out=ran.timed_out, duration_s=ran.duration_s,
                        log=str(ran.log))
    key, inputs = setup_key(ws, cwd, command, tools, network)
    shown = inputs[:_SHOWN_INPUTS]
    if _restore(cache, key, ws):
        return SetupRun(cache="hit", key=key, inputs=shown, exit_code=0,
                        duration_s=round(time.monotonic() - started, 3))
    before = _status(ws)
    ran = run_command(ws / cwd, command, env=env, timeout=timeout, log=log, network=network)
    kept = _store(cache, key, ws, before) if ran.exit_code == 0 else "not kept: the set-up failed"
    return SetupRun(cache="miss", key=key, inputs=shown, exit_code=ran.exit_code, timed_out=ran.timed_out,
                    duration_s=round(time.monotonic() - started, 3), log=str(ran.log), kept=kept)


# -- the workspace's state ----------------------------------------------------------------------------------

def _status(ws: Path) -> set[str]:
    """`git status` entries (untracked and ignored directories collapsed), e.g. `?? node_modules/`."""
    out = run_git(ws, ["status", "--porcelain=v1", "-z", "--ignored=traditional", "--untracked-files=normal"],
                  max_bytes=64_000_000)
    entries, parts, i = set(), out.split("\0"), 0
    while i < len(parts):
        entry = parts[i]
        if entry:
            entries.add(entry)
            if entry[0] in "RC":  # a rename or copy: the next field is its source
                i += 1
        i += 1
    return entries


def _created(before: set[str], after: set[str]) -> list[str] | None:
    """The paths the set-up created outside git's tracking; None when it changed a tracked file."""
    new = after - before
    if any(not e.startswith(("?? ", "!! ")) for e in new):
        return None
    return sorted(e[3:].rstrip("/") for e in new)


# -- the cache ----------------------------------------------------------------------------------------------

def _safe(path: str) -> bool:
    p = PurePosixPath(path)
    return bool(path) and not p.is_absolute() and ".." not in p.parts and p.parts[0] != ".git"


def _read_entry(entry: Path, key: str) -> list[str] | None:
    try:
        data = json.loads((entry / "entry.json").read_text())
        paths = data["paths"]
        if data.get("format") != FORMAT or data.get("key") != key or not isinstance(paths, list) \
                or not all(isinstance(p, str) and _safe(p) for p in paths):
            return None
        files = entry / "files"
        if not all(os.path.lexists(files / p) for p in paths):
            return None
        return paths
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _restore(cache: SetupCache, key: str, ws: Path) -> bool:
    entry = cache.directory / key
    if not entry.is_dir():
        return False
    paths = _read_entry(entry, key)
    if paths is None:  # corrupt or half-written by a killed process: ignored, and made room for a good one
        shutil.rmtree(entry, ignore_errors=True)
        return False
    if any(os.path.lexists(ws / p) for p in paths):  # the workspace has its own file there: run the set-up
        return False
    try:
        for p in paths:
            _copy(entry / "files" / p, ws / p)
        os.utime(entry / "entry.json")  # used: the last to be evicted
    except OSError:
        for p in paths:
            _remove(ws / p)
        return False
    return True


def _store(cache: SetupCache, key: str, ws: Path, before: set[str]) -> str:
    try:
        paths = _created(before, _status(ws))
    except GitFailed:
        return "not kept: the workspace's state could not be read"
    if paths is None:
        return "not kept: the set-up changed tracked files"
    if not all(_safe(p) for p in paths):
        return "not kept: the set-up wrote outside the workspace's tree"
    size = sum(_size(ws / p) for p in paths)
    if size > cache.max_bytes // 2:
        return f"not kept: {size // 1_000_000} MB is over half the cache's limit"
    tmp = cache.directory / f".tmp-{key[:16]}-{uuid.uuid4().hex[:8]}"
    try:
        (tmp / "files").mkdir(parents=True)
        for p in paths:
            _copy(ws / p, tmp / "files" / p)
        (tmp / "entry.json").write_text(json.dumps({"format": FORMAT, "key": key, "paths": paths, "bytes": size}))
        _evict(cache, room=size)
        shutil.rmtree(cache.directory / key, ignore_errors=True)
        os.replace(tmp, cache.directory / key)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        return f"not kept: {type(exc).__name__}"
    return f"kept ({len(paths)} path(s), {size} bytes)"


def _evict(cache: SetupCache, room: int) -> None:
    """Least recently used entries go until `room` more bytes fit; stale temporary copies go too."""
    entries: list[tuple[float, int, Path]] = []
    for entry in cache.directory.iterdir():
        if entry.name.startswith(".tmp-"):
            if time.time() - entry.stat().st_mtime > 3600:
                shutil.rmtree(entry, ignore_errors=True)
            continue
        try:
            meta = entry / "entry.json"
            entries.append((meta.stat().st_mtime, int(json.loads(meta.read_text()).get("bytes", 0)), entry))
        except (OSError, ValueError, TypeError, AttributeError):
            shutil.rmtree(entry, ignore_errors=True)
    total = sum(size for _, size, _ in entries)
    for _, size, entry in sorted(entries, key=lambda e: e[0]):
        if total + room <= cache.max_bytes:
            break
        shutil.rmtree(entry, ignore_errors=True)
        total -= size


def _copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir() and not src.is_symlink():
        shutil.copytree(src, dst, symlinks=True)
    else:
        shutil.copy2(src, dst, follow_symlinks=False)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _size(path: Path) -> int:
    if path.is_symlink() or not path.is_dir():
        return path.lstat().st_size if os.path.lexists(path) else 0
    return sum(p.lstat().st_size for p in path.rglob("*") if not p.is_dir() or p.is_symlink())
