"""The core must stay free of HTTP clients and provider SDKs: import it in a clean interpreter and look."""

import json
import subprocess
import sys


def test_importing_core_imports_no_http_client_or_sdk() -> None:
    code = (
        "import sys, json; import repopilot.core; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('httpx','requests','urllib3','aiohttp','openai','anthropic','google','ollama','httpcore',"
        "'repopilot'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = json.loads(out)
    assert [m for m in loaded if not m.startswith("repopilot")] == []
    # Nor does the core pull in the other layers.
    assert [m for m in loaded if m.startswith("repopilot.") and not m.startswith("repopilot.core")] == []


def test_core_sources_import_only_stdlib_and_pydantic() -> None:
    import ast
    import pathlib

    import repopilot.core as core

    allowed = set(sys.stdlib_module_names) | {"pydantic", "__future__"}
    for path in pathlib.Path(core.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in allowed, f"{path.name} imports {name}"
