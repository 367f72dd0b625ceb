from __future__ import annotations

from pathlib import Path

import pytest

from repopilot.core import RunTrace, load_trace

from .receiver import otlp_receiver  # noqa: F401  (a fixture for the tests of this folder)
from .sample import record_fix_run


@pytest.fixture
def fix_run(git_repo: Path) -> RunTrace:
    """A finished scripted `fix` run, as read back from its trace file (redacted, like any later reader)."""
    rec = record_fix_run(git_repo, slow_ms=20)
    return load_trace(rec.trace.run_id)
