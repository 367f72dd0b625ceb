"""Imports go one way: cli -> app -> ci, repo, telemetry, providers -> core. The domain packages import only
core, never each other; the CLI reaches the domain only through the application layer (and core's types).
The service (webhook receiver and workers) is another client of the application layer beside the CLI: it
imports app and core, nothing below imports it, and the CLI reaches it only to start it (`serve`, `worker`).
The table is exact: an allowed edge that the code does not use is an error too, so it cannot drift."""

import ast
from pathlib import Path

import pytest

import repopilot

DOMAIN = ("ci", "repo", "telemetry", "providers")
ALLOWED = {
    "core": set(),
    **{layer: {"core"} for layer in DOMAIN},
    "app": {"core", *DOMAIN},
    "service": {"core", "app"},  # another client of the application layer
    "cli": {"core", "app", "service"},  # the domain only through the application layer; the service to start it
}
ROOT = Path(repopilot.__file__).parent


def _imported_layers(path: Path) -> set[str]:
    layers: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level >= 2 and node.module:  # from ..x import y
                layers.add(node.module.split(".")[0])
            elif node.level == 0 and node.module and node.module.startswith("repopilot."):
                layers.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            layers.update(a.name.split(".")[1] for a in node.names if a.name.startswith("repopilot."))
    return layers


def _used(layer: str) -> set[str]:
    return set().union(*(_imported_layers(p) for p in (ROOT / layer).rglob("*.py"))) - {layer}


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_the_layers_below_it(layer: str) -> None:
    for path in (ROOT / layer).rglob("*.py"):
        used = _imported_layers(path) - {layer} - {"__version__"}
        assert used <= ALLOWED[layer], f"{path.relative_to(ROOT)} imports {sorted(used - ALLOWED[layer])}"


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_the_table_allows_only_what_the_code_uses(layer: str) -> None:
    assert ALLOWED[layer] <= _used(layer), f"{layer} is allowed {sorted(ALLOWED[layer] - _used(layer))} unused"


def test_every_package_is_in_the_table() -> None:
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert packages == set(ALLOWED)
