"""Write one corpus case from real tool output: run a command, keep its output, wrap it, label it.

    from record import run, write_case
    out, code = run(["pytest", "-q"], cwd=project)          # the real tool's output lines and exit code
    steps = [Step("Install", "pip install -e .", install_out), Step("Test", "pytest -q", out, code,
             causal=find(out, "E   assert", "FAILED tests/"))]
    write_case("python", "pytest-assert", steps, "github", tool="pytest", category="test",
               made_by="pytest 8.3 on a calc project with an off-by-one")
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from shapes import Step, render

__all__ = ["CASES", "find", "run", "write_case"]

# CORPUS_CASES lets a generator write elsewhere first (e.g. while the test suite reads cases/)
CASES = Path(os.environ.get("CORPUS_CASES", Path(__file__).resolve().parents[1] / "cases"))


def run(
    cmd: list[str] | str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 600
) -> tuple[list[str], int]:
    """The command's merged stdout+stderr as lines (as a CI runner captures them) and its exit code."""
    proc = subprocess.run(cmd, cwd=cwd, shell=isinstance(cmd, str), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=timeout, env={**os.environ, **(env or {})})
    text = proc.stdout.decode("utf-8", "replace")
    return text.rstrip("\n").split("\n") if text else [], proc.returncode


def find(lines: list[str], *patterns: str, limit: int = 3) -> list[int]:
    """0-based indexes of the lines matching any regex pattern, at most `limit` hits per pattern."""
    out: list[int] = []
    for pat in patterns:
        rx = re.compile(pat)
        out += [i for i, text in enumerate(lines) if rx.search(text)][:limit]
    return sorted(set(out))


def _spans(nums: list[int]) -> list[str]:
    out: list[str] = []
    for n in sorted(set(nums)):
        if out and int(out[-1].split("-")[-1]) == n - 1:
            out[-1] = f"{out[-1].split('-')[0]}-{n}"
        else:
            out.append(str(n))
    return out


def write_case(ecosystem: str, case: str, steps: list[Step], shape: str, *, tool: str, category: str,
               made_by: str, seed: int = 0, job: str = "build", licence: str = "Apache-2.0") -> Path:
    """Render the steps in `shape` and write cases/<ecosystem>/<case>/{fail.log,label.toml}."""
    text, causal, context = render(steps, shape, job=job, seed=seed)
    if not causal and category != "unknown":
        raise ValueError(f"{ecosystem}/{case}: no causal line was labelled")
    folder = CASES / ecosystem / case
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fail.log").write_text(text)

    def q(s: str) -> str:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

    label = [f"tool = {q(tool)}", f"ecosystem = {q(ecosystem)}", f"shape = {q(shape)}",
             f"category = {q(category)}", f"causal = {_spans(causal)!r}".replace("'", '"'),
             f"context = {_spans(context)!r}".replace("'", '"'), 'source = "generated"',
             f"made_by = {q(made_by)}", f"licence = {q(licence)}"]
    (folder / "label.toml").write_text("\n".join(label) + "\n")
    return folder
