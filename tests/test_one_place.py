"""Concerns that live in exactly one place (issue 10): one git runner, one retry policy and Retry-After parser,
one run-URL parser. This fails if a second copy returns."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import repopilot

ROOT = Path(repopilot.__file__).parent
PYPROJECT = ROOT.parent / "pyproject.toml"


def _sources() -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text() for p in ROOT.rglob("*.py")}


def _imports(text: str) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_one_git_runner() -> None:
    # Every git child is started by repo/gitrun.py; `github report` diagnoses in process (no self-invocation).
    # The verification workspace runs the project's own command (never git: its worktrees go through gitrun).
    # The scanner's helper (ci/ahead.py) is a bare interpreter running its own few lines (neither git nor the CLI).
    # A program started without `subprocess` (`os.posix_spawn`: the helper, whose start is on a scan's path) counts
    # (ci/split.py's forked workers run this process's own code, no program).
    sources = _sources()
    users = {name for name, text in sources.items()
             if "subprocess" in _imports(text) or re.search(r"\bos\.(?:posix_spawnp?|exec\w*|spawn\w*)\(", text)}
    assert users == {"repo/gitrun.py", "repo/workspace.py", "ci/ahead.py"}, users
    assert not re.search(r"""\[\s*["']git["']""", sources["repo/workspace.py"])
    assert not re.search(r"""["']git["']|repopilot\.cli|["']-m["']""", sources["ci/ahead.py"])


def test_one_retry_policy_and_retry_after_parser() -> None:
    sources = _sources()
    parsers = {name for name, text in sources.items() if re.search(r"""["']retry-after["']""", text)}
    assert parsers == {"core/retry.py"}
    assert not any("tenacity" in _imports(text) for text in sources.values())
    assert "tenacity" not in PYPROJECT.read_text()


def test_one_run_url_parser() -> None:
    holders = {name for name, text in _sources().items() if re.search(r"actions/runs/\(", text)}
    assert holders == {"ci/runurl.py"}


def test_rich_stays_in_the_cli_and_one_module_draws_progress() -> None:
    # The layers below the CLI report progress through callbacks; only the CLI prints, and one module draws bars.
    sources = _sources()
    printers = {name for name, text in sources.items() if "rich" in _imports(text)}
    assert printers and all(name.startswith("cli/") for name in printers), printers
    bars = {name for name, text in sources.items() if re.search(r"\brich\.progress\b|\.status\(", text)}
    assert bars == {"cli/progress.py"}, bars
