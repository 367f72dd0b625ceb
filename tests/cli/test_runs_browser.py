"""The exported trace page in a real headless Chromium (Debian's `chromium`; scripts/install-browser.sh).

The page must render every step with its scripts running under its own Content-Security-Policy, and the
hostile text in the trace must stay text. With REPOPILOT_UPDATE_DOCS=1 the screenshot replaces
docs/trace-page.png, the picture in the README."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from repopilot.cli.main import main
from tests.telemetry.sample import record_fix_run

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DOCS_SHOT = Path(__file__).resolve().parents[2] / "docs" / "trace-page.png"


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (run scripts/install-browser.sh)")
    profile = tmp_path / "chromium-profile"
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def page(git_repo: Path, tmp_path: Path) -> Path:
    rec = record_fix_run(git_repo, slow_ms=250)
    target = tmp_path / "trace.html"
    assert main(["trace", "export", rec.trace.run_id, "--html", str(target)]) == 0
    return target


def test_chromium_renders_every_step(page: Path, tmp_path: Path) -> None:
    result = _chromium(tmp_path, "--dump-dom", page.as_uri())
    dom = result.stdout
    assert result.returncode == 0, result.stderr[-2000:]
    assert 'data-ready="1"' in dom  # the inline script ran (the page's CSP allows it, nothing else)
    assert len(re.findall(r'<tr class="step[^"]*" data-kinds=', dom)) == 13
    for kind in ("llm_call", "tool_call", "tool_result", "decision"):
        assert f'<span class="type t-{kind}">{kind}</span>' in dom
    assert "<title>RepoPilot run " in dom and "pwned</title>" not in dom
    assert "<img" not in dom  # the model's <img onerror> stayed text
    assert "&lt;script&gt;document.title" in dom
    assert '<span class="del">-    return a - b</span>' in dom


def test_filter_buttons_hide_other_steps(page: Path, tmp_path: Path) -> None:
    dom = _chromium(tmp_path, "--dump-dom", page.as_uri() + "#filter=error").stdout
    visible = re.findall(r'<tr class="step[^"]*" data-kinds="([^"]*)"', dom)
    hidden = re.findall(r'<tr class="step[^"]*hidden[^"]*" data-kinds="([^"]*)"', dom)
    assert len(visible) == 13 and len(hidden) == 12
    shown = [k for k in visible if "error" in k.split()]
    assert shown == ["tool_result tool error"]
    assert '<button type="button" data-filter="error" class="active">' in dom


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_chromium_screenshot(page: Path, tmp_path: Path) -> None:
    shot = tmp_path / "trace-page.png"
    result = _chromium(tmp_path, "--window-size=1280,1800", f"--screenshot={shot}", page.as_uri())
    assert result.returncode == 0 and shot.exists(), result.stderr[-2000:]
    assert _png_size(shot) == (1280, 1800)
    # A blank or error page compresses to a few kilobytes; the timeline, diff and cards do not.
    assert shot.stat().st_size > 60_000
    if os.environ.get("REPOPILOT_UPDATE_DOCS") == "1":
        DOCS_SHOT.parent.mkdir(exist_ok=True)
        shutil.copyfile(shot, DOCS_SHOT)
