"""A package's face is its `__all__`: every name another layer imports from a package is declared there (no
reaching for a name the package does not offer), and the CLI imports nothing past the faces of app and core
except the sanitiser module."""

import ast
import importlib
from pathlib import Path

import pytest

import repopilot

ROOT = Path(repopilot.__file__).parent
PACKAGES = ("core", "ci", "repo", "telemetry", "providers", "app", "service")


def _face_imports(package: str) -> set[str]:
    """Names other layers import with `from ..PACKAGE import NAME` (or `from repopilot.PACKAGE import NAME`)."""
    names: set[str] = set()
    for path in ROOT.rglob("*.py"):
        layer = path.relative_to(ROOT).parts[0]
        if layer == package:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or not node.module:
                continue
            if (node.level >= 2 and node.module == package) or \
                    (node.level == 0 and node.module == f"repopilot.{package}"):
                names.update(a.name for a in node.names)
    return names


@pytest.mark.parametrize("package", PACKAGES)
def test_other_layers_import_only_declared_names(package: str) -> None:
    declared = set(importlib.import_module(f"repopilot.{package}").__all__)
    undeclared = _face_imports(package) - declared
    assert not undeclared, f"repopilot.{package} is used for {sorted(undeclared)}, not in its __all__"


def test_the_cli_stays_at_the_faces() -> None:
    allowed = {"app", "core", "core.sanitize", "service"}  # the one sanitiser is the CLI's own concern
    for path in (ROOT / "cli").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level >= 2 and node.module:
                assert node.module in allowed, f"cli/{path.name} imports past a face: {node.module}"
