"""What the per-ecosystem generators share: a project folder at the path a CI runner would use, tool versions,
real install output cached per requirement set, shape rotation, and labelling helpers over real output.

The tools run from TOOLS (a venv made once by `make/python/make.py --tools`) or from Debian/npm; nothing here
edits a tool's output. Projects are laid out under the path the shape's runner uses (`/home/runner/work/...`
for GitHub Actions, `/builds/...` for GitLab, ...), so the paths the tools print look like the CI's own.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from record import run
from shapes import SHAPES, Step

__all__ = ["SHAPES", "WORK", "Step", "after", "between", "cached", "env", "grep", "project", "shape_of", "version"]

WORK = Path(os.environ.get("CORPUS_WORK", "/tmp/corpus-a"))
TOOLS = WORK / "tools" / "bin"
ROOTS = {"github": "/home/runner/work/{n}/{n}", "gitlab": "/builds/group/{n}",
         "travis": "/home/travis/build/example/{n}", "jenkins": "/var/jenkins/workspace/{n}",
         "plain": "/srv/ci/{n}", "azure": "/home/vsts/work/1/s"}


def env(**extra: str) -> dict[str, str]:
    """A CI-like environment: the tool venv and npm bins first, no colour tricks, no user pip config."""
    base = {"PATH": f"{TOOLS}:{WORK / 'node' / 'node_modules' / '.bin'}:/usr/local/bin:/usr/bin:/bin",
            "PIP_CONFIG_FILE": "/dev/null", "PIP_FIND_LINKS": "", "CI": "true", "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1", "HOME": str(WORK / "home")}
    return {**base, **extra}


def shape_of(i: int) -> str:
    return SHAPES[i % len(SHAPES)]


def project(name: str, shape: str, files: dict[str, str]) -> Path:
    """A fresh project folder at the runner's path for `shape`, holding `files` (path -> text)."""
    root = Path(ROOTS[shape].format(n=name))
    if root.exists():
        shutil.rmtree(root)
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        if rel.endswith(".sh") or rel.startswith("bin/"):
            p.chmod(0o755)
    return root


def cleanup(root: Path) -> None:
    shutil.rmtree(root, ignore_errors=True)


def version(cmd: str) -> str:
    out, _ = run(cmd, cwd=WORK, env=env())
    return (out[0] if out else "?").strip()


def cached(key: str, cmd: str, cwd: Path | None = None, extra_env: dict[str, str] | None = None) -> list[str]:
    """Real output of an install command, run once per `key` and reused (same requirements, same output)."""
    cache = WORK / "cache" / (hashlib.sha1(key.encode()).hexdigest()[:16] + ".json")
    if cache.is_file():
        return list(json.loads(cache.read_text()))
    cache.parent.mkdir(parents=True, exist_ok=True)
    place = cwd or (WORK / "install" / cache.stem)
    place.mkdir(parents=True, exist_ok=True)
    out, code = run(cmd, cwd=place, env=env(**(extra_env or {})))
    if code:
        raise RuntimeError(f"install {key!r} failed:\n" + "\n".join(out[-20:]))
    cache.write_text(json.dumps(out))
    return out


def grep(lines: list[str], *patterns: str, limit: int = 3) -> list[int]:
    """0-based indexes of lines matching any pattern (at most `limit` per pattern); raises when one finds none,
    so a label never silently loses a causal line because the tool's wording changed."""
    out: list[int] = []
    for pat in patterns:
        rx = re.compile(pat)
        hits = [i for i, text in enumerate(lines) if rx.search(text)][:limit]
        if not hits:
            raise LookupError(f"pattern {pat!r} found nothing in:\n" + "\n".join(lines[-40:]))
        out += hits
    return sorted(set(out))


def between(lines: list[str], start: str, stop: str, pick: str) -> list[int]:
    """Indexes of lines matching `pick` inside each block that begins at `start` and ends before `stop`."""
    out: list[int] = []
    inside = False
    for i, text in enumerate(lines):
        if re.search(start, text):
            inside = True
        elif inside and re.search(stop, text):
            inside = False
        if inside and re.search(pick, text):
            out.append(i)
    return out


def first3(lines: list[str], idx: list[int]) -> list[int]:
    """The guideline's rule for identical repeats: of labelled lines with the same text, keep the first three."""
    seen: dict[str, int] = {}
    out: list[int] = []
    for i in sorted(set(idx)):
        key = lines[i].strip()
        seen[key] = seen.get(key, 0) + 1
        if seen[key] <= 3:
            out.append(i)
    return out


def after(lines: list[str], pat: str, n: int) -> list[int]:
    """The first line matching `pat` and the `n` lines after it."""
    i = grep(lines, pat, limit=1)[0]
    return list(range(i, min(len(lines), i + n + 1)))


NPM_CACHE = os.environ.get("CORPUS_NPM_CACHE", "/root/.npm")


def npm_deps(deps: dict[str, str]) -> tuple[Path, list[str]]:
    """A node_modules for `deps` (name -> exact version), installed once, and the real output of `npm ci` there
    (the step a CI job runs); projects link to it instead of installing again."""
    key = "npm:" + json.dumps(deps, sort_keys=True)
    place = WORK / "npm" / hashlib.sha1(key.encode()).hexdigest()[:12]
    if not (place / "package-lock.json").is_file():
        place.mkdir(parents=True, exist_ok=True)
        (place / "package.json").write_text(json.dumps(
            {"name": "app", "version": "1.0.0", "private": True, "devDependencies": deps}, indent=2) + "\n")
        out, code = run("npm install --no-audit --no-fund", cwd=place, env=env(npm_config_cache=NPM_CACHE))
        if code:
            raise RuntimeError("\n".join(out[-20:]))
    out = cached(key, "rm -rf node_modules && npm ci", cwd=place, extra_env={"npm_config_cache": NPM_CACHE})
    return place, out


def node_project(name: str, shape: str, deps: dict[str, str], files: dict[str, str],
                 scripts: dict[str, str], extra: dict[str, object] | None = None) -> tuple[Path, list[str]]:
    """A project whose package.json holds `scripts` and `deps`, its lockfile and linked node_modules."""
    place, ci_out = npm_deps(deps)
    pkg = {"name": name, "version": "1.2.0", "private": True, "scripts": scripts, "devDependencies": deps,
           **(extra or {})}
    root = project(name, shape, {"package.json": json.dumps(pkg, indent=2) + "\n", **files})
    lock = json.loads((place / "package-lock.json").read_text())
    lock["name"] = name
    lock["packages"][""]["name"] = name
    lock["packages"][""]["version"] = "1.2.0"
    (root / "package-lock.json").write_text(json.dumps(lock, indent=2) + "\n")
    # hard links, not a symlink: node resolves symlinks to their real path, which would show in stack traces
    run(["cp", "-al", str(place / "node_modules"), str(root / "node_modules")], cwd=root)
    return root, ci_out
