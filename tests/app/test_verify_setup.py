"""The set-up step of verification (`--verify-setup`) is cached across runs: the receipt and the trace say
whether each workspace's set-up ran (a miss) or was put back (a hit), and a diff that changes a lock file misses."""

from __future__ import annotations

from pathlib import Path

from repopilot.app import receipt_lines
from repopilot.core import load_trace
from tests.app.test_verify import PYTEST, _propose, _run
from tests.cli.test_fix import FIX

LOCK = "\n".join(["--- a/requirements.txt", "+++ b/requirements.txt", "@@ -1 +1 @@", "-six==1.16.0", "+six==1.17.0"])


def _flags(tmp_path: Path) -> dict[str, str]:
    count = tmp_path / "setup-ran"
    return {"verify_cmd": PYTEST, "xdg_state_home": str(tmp_path / "state"),
            "verify_setup": f"echo ran >> {count}; mkdir -p .deps && echo ok > .deps/installed"}


def _ran(tmp_path: Path) -> int:
    return len((tmp_path / "setup-ran").read_text().splitlines())


def test_the_set_up_runs_once_and_the_receipt_says_so(git_repo: Path, tmp_path: Path) -> None:
    done = _run(git_repo, tmp_path, [_propose("p1", FIX)], **_flags(tmp_path))
    r = done.proposal.receipt if done.proposal else None
    assert r is not None and r.outcome == "verified"
    assert r.before and r.before.setup and r.before.setup.cache == "miss" and r.before.setup.kept.startswith("kept")
    assert r.after and r.after.setup and r.after.setup.cache == "hit" and r.after.setup.key == r.before.setup.key
    assert _ran(tmp_path) == 1
    text = "\n".join(receipt_lines(r))
    assert "set-up: cache miss" in text and "set-up: cache hit" in text

    # Another fix run of the same repository: HEAD's workspace gets the kept set-up too (the trace records it).
    again = _run(git_repo, tmp_path, [_propose("p1", FIX)], **_flags(tmp_path))
    (step,) = [s for s in load_trace(again.trace.run_id).steps if s.type == "verification"]
    assert step.detail["before"]["setup"]["cache"] == "hit" and step.detail["after"]["setup"]["cache"] == "hit"
    assert step.result == "verified" and _ran(tmp_path) == 1


def test_a_diff_that_changes_a_lock_file_runs_the_set_up_again(git_repo: Path, tmp_path: Path) -> None:
    import subprocess

    (git_repo / "requirements.txt").write_text("six==1.16.0\n")
    subprocess.run(["git", "-C", str(git_repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(git_repo), "commit", "-qm", "reqs"], check=True)
    both = FIX + LOCK + "\n"
    done = _run(git_repo, tmp_path, [_propose("p1", both)], **_flags(tmp_path))
    r = done.proposal.receipt if done.proposal else None
    assert r is not None and r.before and r.after and r.before.setup and r.after.setup
    assert r.before.setup.cache == "miss" and r.after.setup.cache == "miss"
    assert r.before.setup.key != r.after.setup.key and r.after.setup.inputs == ["requirements.txt"]
    assert _ran(tmp_path) == 2


def test_the_cache_is_set_in_the_verify_table_and_lives_in_the_state_directory(tmp_path: Path) -> None:
    from repopilot.app import load_settings

    (tmp_path / "repopilot.toml").write_text("[verify]\nsetup_cache = false\nsetup_cache_mb = 100\n")
    settings = load_settings({"XDG_STATE_HOME": str(tmp_path / "state")}, tmp_path)
    assert settings.verify_setup_cache is False and settings.verify_setup_cache_mb == 100
    assert settings.setup_cache_dir() == tmp_path / "state" / "repopilot" / "setup-cache"
    default = load_settings({}, tmp_path / "elsewhere")
    assert default.verify_setup_cache and default.verify_setup_cache_mb == 2048
