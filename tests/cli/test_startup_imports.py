"""`repopilot diagnose FILE` imports what it runs: no OTLP exporter, pygments, repository tools, escalation or
other commands (each command's module is imported only when that command runs), and no HTTP client or model
adapter: the providers' registry declares their names and variables as data, and `GitHubAccess` lives beside the
run-URL parser. (httpx itself imports its own CLI, rich.progress and pygments with it.) Nor pydantic: the records it
makes are dataclasses, validated by pydantic only when read back (core/record.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "go-build-error.log"
FORBIDDEN = ("httpx", "ssl", "click", "repopilot.providers.http_client", "repopilot.providers.openai",
             "repopilot.providers.anthropic", "repopilot.providers.gemini", "repopilot.providers.ollama",
             "repopilot.providers.demo", "repopilot.ci.github_api", "repopilot.ci.github",
             "pygments", "opentelemetry", "repopilot.repo", "repopilot.cli.fix", "repopilot.cli.ask",
             "repopilot.cli.runs", "rich.syntax", "rich.progress", "repopilot.ci.escalate",
             # the agent loop, and the span exporters (no model, no OTEL_* variables)
             "repopilot.core.loop", "repopilot.telemetry.live", "repopilot.telemetry.otlp",
             # the model contract and its messages (pydantic models built for nothing), the span planner
             "repopilot.core.model", "repopilot.core.messages", "repopilot.telemetry.spans",
             # the typer app: its common case is read by the quick path (cli/diagnose_run.py)
             "typer", "repopilot.cli.app",
             # rich: JSON on stdout and the summary on a stderr that is no terminal are plain text
             "rich", "repopilot.cli.rich_console",
             # pydantic (about 100 ms with its schemas): the report, trace and history are dataclass records
             # (core/record.py), validated by pydantic only when read back
             "pydantic", "pydantic_core",
             # only when there is something to read: --debug's traceback; run ids come from os.urandom, package
             # data from the package's files
             "traceback", "secrets", "importlib.resources", "importlib.metadata",
             # OpenSSL's hashes (the built-in SHA-256 and BLAKE2b give the same digests: ci/digest.py), `platform`
             # for the machine's name (os.uname), signals for the forked scan's workers (the default is one pass)
             "hashlib", "_hashlib", "platform", "signal",
             # what `dataclasses` imports to name a class without a docstring (its signature): every dataclass a
             # diagnose makes has one, and `inspect` is imported on first use (repopilot/__init__.py)
             "inspect", "ast", "dis", "tokenize",
             # tempfile (with shutil, random and the compression modules): atomic writes make their temporary file
             # themselves (core/atomic.py); stdin is spooled and a pager looked for only when there is one
             "tempfile", "shutil", "random", "bz2", "lzma")
# Warm (the catalog validated once and cached), TOML is parsed only from a config file, and there is none here.
FORBIDDEN_WARM = (*FORBIDDEN, "tomllib")

_CHILD = """
import json, sys
from repopilot.cli.main import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def _modules(tmp_path: Path, *args: str) -> list[str]:
    env = {**os.environ, "REPOPILOT_RUNS_DIR": str(tmp_path / "runs"), "REPOPILOT_CACHE_DIR": str(tmp_path / "c"),
           "XDG_CONFIG_HOME": str(tmp_path / "config")}  # no user config file (and no project one in tmp_path)
    for name in ("REPOPILOT_MODEL", "FORCE_COLOR", "TTY_COMPATIBLE"):  # no model; stderr is a pipe, left plain
        env.pop(name, None)
    proc = subprocess.run([sys.executable, "-c", _CHILD, *args], capture_output=True, text=True, env=env, cwd=tmp_path,
                          check=False, timeout=120)
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, proc.stderr
    return report["modules"]


def _loaded(modules: list[str], name: str) -> bool:
    return any(m == name or m.startswith(name + ".") for m in modules)


def test_diagnose_of_a_file_imports_no_exporter_pygments_or_other_command(tmp_path: Path) -> None:
    cold = _modules(tmp_path, "diagnose", str(EXAMPLE), "--format", "json", "--no-llm")
    assert "repopilot.ci.scanner" in cold  # it did diagnose
    assert [m for m in FORBIDDEN if _loaded(cold, m)] == []
    warm = _modules(tmp_path, "diagnose", str(EXAMPLE), "--format", "json", "--no-llm")
    assert [m for m in FORBIDDEN_WARM if _loaded(warm, m)] == []


def test_help_still_lists_every_command(tmp_path: Path) -> None:
    env = {**os.environ, "REPOPILOT_RUNS_DIR": str(tmp_path / "runs")}
    out = subprocess.run([sys.executable, "-m", "repopilot.cli.main", "--help"], capture_output=True, text=True,
                         env=env, check=True, timeout=120).stdout
    for command in ("ask", "diagnose", "fix", "approve", "reject", "resume", "github", "models", "runs", "trace"):
        assert command in out


def test_a_builtin_provider_is_imported_when_a_model_is_made() -> None:
    code = ("import sys; from repopilot.providers import provider_variables, resolve_model\n"
            "assert 'OPENAI_API_KEY' in provider_variables() and 'httpx' not in sys.modules\n"
            "m = resolve_model('openai:gpt-4o-mini', {'OPENAI_API_KEY': 'k'})\n"
            "print(type(m).__name__, m.endpoint, 'httpx' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120).stdout
    assert out.split() == ["OpenAIModel", "https://api.openai.com/v1", "True"]


def test_a_dataclass_without_a_docstring_is_still_named_by_its_signature() -> None:
    # The package imports `dataclasses` with `inspect` deferred: the first class that needs it imports it, once.
    code = ("import sys, repopilot, dataclasses\n"
            "before = 'inspect' in sys.modules\n"
            "@dataclasses.dataclass\n"
            "class A:\n"
            "    x: int\n"
            "import inspect\n"
            "print(before, A.__doc__, dataclasses.inspect.signature is inspect.signature)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120).stdout
    assert out.split() == ["False", "A(x:", "int)", "True"]
