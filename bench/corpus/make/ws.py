"""A throw-away project for one generated case: write its files, run its CI steps for real, label, write the case.

The project lives where the CI system of the chosen shape would check it out (so paths in compiler output look
like that CI's), and is removed afterwards. Steps run until the first one that fails, as a CI job does.

    c = Case("rust", "cargo-e0308", shape="github")
    c.files({"Cargo.toml": ..., "src/main.rs": ...})
    c.step("Build", "cargo build", causal=lambda out: block(out, r"^error\\[", 4))
    c.write(tool="cargo", category="build", made_by=f"{version('rustc --version')} ...")

Causal lines are chosen by the generator from its knowledge of the injected failure (GUIDELINE.md), as
0-based indexes into the failing step's output; they are checked non-empty and printed for review.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from record import find, run, write_case
from shapes import SHAPES, Step

__all__ = ["SHAPES", "Case", "block", "find", "shape_for", "version", "wheel"]

ROOTS = {"github": "/home/runner/work/{p}/{p}", "gitlab": "/builds/acme/{p}", "travis": "/home/travis/build/acme/{p}",
         "jenkins": "/var/jenkins/workspace/{p}", "plain": "/tmp/build/{p}", "azure": "/home/vsts/work/1/s"}
MAX_BYTES = 300_000
Labeller = Callable[[list[str]], Iterable[int]]


def shape_for(i: int, offset: int = 0) -> str:
    """Shapes in rotation so each generator spreads its cases over all five."""
    return SHAPES[(i + offset) % len(SHAPES)]


def version(cmd: str) -> str:
    """The first line a tool prints about its version (what `made_by` records)."""
    out = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    text = (out.stdout or out.stderr).strip().splitlines()
    return text[0].strip() if text else cmd


def block(lines: list[str], pattern: str, after: int = 0, limit: int = 3, stop: str | None = None) -> list[int]:
    """Each line matching `pattern` (first `limit`) with up to `after` lines under it, cut at a line matching `stop`."""
    rx, out = re.compile(pattern), []
    hits = [i for i, text in enumerate(lines) if rx.search(text)][:limit]
    for i in hits:
        out.append(i)
        for j in range(i + 1, min(i + 1 + after, len(lines))):
            if stop and re.search(stop, lines[j]):
                break
            out.append(j)
    return out


class Case:
    def __init__(self, ecosystem: str, name: str, shape: str, project: str | None = None) -> None:
        self.ecosystem, self.name, self.shape = ecosystem, name, shape
        self.project = project or name
        self.dir = Path(ROOTS[shape].format(p=self.project))
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True)
        self.steps: list[Step] = []
        self.failed = False
        self.seed = int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)
        if self.seed % 3:  # two jobs in three open with the runner's system facts, as many workflows do
            self.step("System info", "uname -srm && sed -n 's/^PRETTY_NAME=//p' /etc/os-release && nproc && "
                      "free -m | sed -n 1,2p && df -h . | tail -1")

    def files(self, mapping: dict[str, str]) -> None:
        for rel, text in mapping.items():
            path = self.dir / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip("\n"))

    def sh(self, cmd: str, env: dict[str, str] | None = None) -> tuple[list[str], int]:
        """Run a command in the project without recording it as a step (preparation such as `git init`)."""
        return run(["bash", "-c", cmd], cwd=self.dir, env=env)

    def step(self, name: str, cmd: str, causal: Labeller | None = None, context: Labeller | None = None,
             env: dict[str, str] | None = None, timeout: float = 600, show: str | None = None) -> list[str]:
        """Run one CI step for real; a failing step must be labelled and ends the job."""
        if self.failed:
            return []
        out, code = run(["bash", "-e", "-o", "pipefail", "-c", cmd], cwd=self.dir, env=env, timeout=timeout)
        step = Step(name, show or cmd, out, code)
        if code:
            if causal is None:
                raise RuntimeError(f"{self.name}: step {name!r} failed unexpectedly:\n" + "\n".join(out[-40:]))
            step.causal = sorted(set(causal(out)))
            step.context = sorted(set(context(out))) if context else []
            self.failed = True
        elif causal is not None:
            raise RuntimeError(f"{self.name}: step {name!r} was meant to fail but passed:\n" + "\n".join(out[-40:]))
        self.steps.append(step)
        return out

    def write(self, *, tool: str, category: str, made_by: str) -> Path:
        if not self.failed:
            raise RuntimeError(f"{self.name}: no step failed")
        failing = self.steps[-1]
        if not failing.causal and category != "unknown":
            raise RuntimeError(f"{self.name}: no causal line:\n" + "\n".join(failing.output[-40:]))
        folder = write_case(self.ecosystem, self.name, self.steps, self.shape, tool=tool, category=category,
                            made_by=made_by + "; shape by make/shapes.py", seed=self.seed, job=self.project)
        size = (folder / "fail.log").stat().st_size
        if size > MAX_BYTES:
            raise RuntimeError(f"{self.name}: log is {size} bytes")
        if os.environ.get("CORPUS_REVIEW"):
            print(f"== {self.ecosystem}/{self.name} [{self.shape}] {tool} {category}")
            for i in failing.causal:
                print(f"   {failing.output[i][:160]}")
        self.clean()
        return folder

    def clean(self) -> None:
        shutil.rmtree(self.dir.parent if self.shape == "github" else self.dir, ignore_errors=True)


def wheel(dest: Path, dist: str, version: str, requires: Iterable[str] = ()) -> Path:
    """A minimal real wheel in `dest` (a vendored dependency or an index's content, not a tool's output)."""
    import io
    import zipfile

    mod = dist.replace("-", "_")
    info = f"{mod}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires)
    files = {f"{mod}/__init__.py": f"__version__ = '{version}'\n", f"{info}/METADATA": meta,
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: corpus\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
             f"{info}/RECORD": ""}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for k, v in files.items():
            z.writestr(k, v)
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / f"{mod}-{version}-py3-none-any.whl"
    path.write_bytes(buf.getvalue())
    return path
