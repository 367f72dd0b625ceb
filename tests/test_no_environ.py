"""Settings are read once, at the edge: no module below the application layer reads the environment. They are
given what they need (runs directory, rule folders, caches, GitHub access, provider variables, OTEL_*)."""

import ast
from pathlib import Path

import pytest

import repopilot

ROOT = Path(repopilot.__file__).parent
BELOW_APP = ("core", "ci", "repo", "telemetry", "providers")
# Where the environment is passed on, not read: child processes inherit it. (path, why)
PASSED_ON = {
    "repo/gitrun.py": "git's child environment is the inherited one minus GIT_* (not configuration)",
    "ci/ahead.py": "the scan-ahead helper's environment is the inherited one, as `Popen` gave it (not configuration)",
}
PENDING: set[str] = set()  # modules waiting for another change to stop reading it (none left)
_NAMES = ("environ", "getenv", "environb", "putenv")


def _reads(node: ast.AST) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr in _NAMES and isinstance(node.value, ast.Name) and node.value.id == "os"
    if isinstance(node, ast.ImportFrom):
        return node.module == "os" and any(a.name in _NAMES for a in node.names)
    return False


def _environ_reads(path: Path) -> list[int]:
    return [getattr(node, "lineno", 0) for node in ast.walk(ast.parse(path.read_text())) if _reads(node)]


@pytest.mark.parametrize("layer", BELOW_APP)
def test_no_module_below_app_reads_the_environment(layer: str) -> None:
    for path in sorted((ROOT / layer).rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in PASSED_ON or rel in PENDING:
            continue
        assert not _environ_reads(path), f"{rel} reads the environment at lines {_environ_reads(path)}"


def test_the_exceptions_are_still_needed() -> None:
    # An exception that no longer reads the environment must leave the list, so the list cannot grow stale.
    for rel in PASSED_ON:
        assert _environ_reads(ROOT / rel), f"{rel} no longer reads the environment: remove it from PASSED_ON"


def test_the_cli_writes_no_environment_variables() -> None:
    for path in sorted((ROOT / "cli").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    assert not (isinstance(target, ast.Subscript) and "environ" in ast.unparse(target.value)), \
                        f"{path.name} writes an environment variable: {ast.unparse(node)}"
