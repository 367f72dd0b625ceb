"""Imports go one way: cli -> repo, ci, telemetry -> providers -> core. A layer never imports one below it."""

import ast
from pathlib import Path

import pytest

import repopilot

ALLOWED = {
    "core": set(),
    "providers": {"core"},
    "ci": {"core", "providers"},
    "repo": {"core", "providers"},
    "telemetry": {"core"},
    "cli": {"core", "providers", "ci", "repo", "telemetry"},
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


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_layer_imports_only_the_layers_above_it(layer: str) -> None:
    for path in (ROOT / layer).rglob("*.py"):
        used = _imported_layers(path) - {layer}
        assert used <= ALLOWED[layer], f"{path.relative_to(ROOT)} imports {sorted(used - ALLOWED[layer])}"
