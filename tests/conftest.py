"""Shared test set-up. Tests never reach the network: any connection to a non-loopback address fails loudly."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from repopilot.core import trace as trace_module

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


class NetworkBlocked(RuntimeError):
    pass


def _is_loopback(host: Any) -> bool:
    if isinstance(host, bytes):
        host = host.decode()
    if host in ("localhost", "", None):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


def _guard(address: Any) -> None:
    if isinstance(address, tuple) and address and not _is_loopback(address[0]):
        raise NetworkBlocked(f"test tried to reach the network: {address!r}")


def _connect(self: socket.socket, address: Any) -> None:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _guard(address)
    return _real_connect(self, address)


def _connect_ex(self: socket.socket, address: Any) -> int:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _guard(address)
    return _real_connect_ex(self, address)


def _getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    if host is not None and not _is_loopback(host):
        raise NetworkBlocked(f"test tried to resolve a network host: {host!r}")
    return _real_getaddrinfo(host, *args, **kwargs)


@pytest.fixture(autouse=True)
def _block_network(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("live") is None:
        monkeypatch.setattr(socket.socket, "connect", _connect)
        monkeypatch.setattr(socket.socket, "connect_ex", _connect_ex)
        monkeypatch.setattr(socket, "getaddrinfo", _getaddrinfo)
    yield


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Each test gets its own runs directory and no model or credentials from the developer's shell."""
    monkeypatch.setenv("REPOPILOT_RUNS_DIR", str(tmp_path / "runs"))
    # Code below the application layer is given its runs directory instead of reading the environment.
    monkeypatch.setattr(trace_module, "_RUNS_DIR", [tmp_path / "runs"])
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # never the developer's own config file
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # nor their recorded runs
    monkeypatch.setenv("REPOPILOT_CACHE_DIR", str(tmp_path / "cache"))
    # Verifying a proposal runs its project's tests twice in workspaces: only the tests about it turn it on.
    monkeypatch.setenv("REPOPILOT_VERIFY", "0")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # the failure history: never the developer's
    monkeypatch.delenv("REPOPILOT_HISTORY", raising=False)
    monkeypatch.delenv("REPOPILOT_FAILURE_ISSUES", raising=False)  # a test that files issues turns it on
    for name in ("REPOPILOT_MODEL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GITHUB_TOKEN",
                 "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GEMINI_BASE_URL", "OLLAMA_HOST", "GITHUB_API_URL",
                 "OTEL_EXPORTER_OTLP_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A small git repository with one commit."""
    import subprocess

    root = tmp_path / "repo"
    root.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "test@example.com")
    git("config", "user.name", "Test")
    (root / "README.md").write_text("# Sample\n\nA sample project.\n")
    (root / "src").mkdir()
    (root / "src" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(
        "from src.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    git("add", "-A")
    git("commit", "-q", "-m", "initial")
    return root
