"""A package's face is its `__all__`, and it is exactly what the package's clients use: every name another layer
(or a test, bench or script) imports from a package is declared there, every declared name is imported by one of
them (or is a type of the package's public signatures, listed below), and no layer reaches past another's face
into its modules."""

import ast
import importlib
from pathlib import Path

import pytest

import repopilot

ROOT = Path(repopilot.__file__).parent
PACKAGES = ("core", "ci", "repo", "telemetry", "providers", "app", "service")
CLIENTS = tuple(ROOT.parent / d for d in ("tests", "bench", "scripts"))
# Declared for Python callers though no client here imports them: the types of the faces' own signatures, and the
# adapters a caller may build (or register) directly instead of through `REPOPILOT_MODEL`.
FOR_CALLERS = {
    "app": {"ApprovedPullRequest", "CommentOutcome", "GitHubRunReport", "Observer", "Published", "PullRequestHead",
            "ReportFailure"},
    "service": {"Work"},
    "providers": {"AnthropicModel", "GeminiModel", "OllamaModel", "OpenAIModel", "ScriptExhausted", "register"},
}
# Modules a layer may import past a face: the sanitiser (the CLI's own concern) and the lazy-export helper that
# every package face is built with.
PAST_THE_FACE = {"core.sanitize", "core.lazy"}


def _face_imports(package: str, *, clients: bool = False) -> set[str]:
    """Names other layers import with `from ..PACKAGE import NAME` (or `from repopilot.PACKAGE import NAME`);
    with `clients`, also the names the tests, benches and scripts import."""
    names: set[str] = set()
    paths = [*ROOT.rglob("*.py"), *(p for d in CLIENTS if clients for p in d.rglob("*.py"))]
    for path in paths:
        if path.is_relative_to(ROOT) and path.relative_to(ROOT).parts[0] == package:
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


@pytest.mark.parametrize("package", PACKAGES)
def test_every_declared_name_has_a_client(package: str) -> None:
    declared = set(importlib.import_module(f"repopilot.{package}").__all__)
    unused = declared - _face_imports(package, clients=True) - FOR_CALLERS.get(package, set())
    assert not unused, f"repopilot.{package} declares {sorted(unused)}, which nothing imports: drop them"


def test_no_layer_reaches_past_another_face() -> None:
    past = []
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.ImportFrom) and node.level >= 2 and node.module and "." in node.module
                    and node.module not in PAST_THE_FACE):
                past.append(f"{path.relative_to(ROOT)}: {node.module}")
    assert past == []


@pytest.mark.parametrize("package", PACKAGES)
def test_every_declared_name_resolves(package: str) -> None:
    # The faces are lazy (PEP 562): a name in `__all__` that the lazy table lost would only fail at run time.
    face = importlib.import_module(f"repopilot.{package}")
    assert [name for name in face.__all__ if not hasattr(face, name)] == []
