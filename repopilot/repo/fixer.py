"""The fix agent's system prompt and tools (read-only repository tools plus `propose_fix`). Its first message,
built from the diagnosis, is the application layer's (`app.fix_seed`): this package does not know reports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core import Tool
from .propose import Verifier, propose_fix_tool
from .tools import repo_tools

__all__ = ["FIX_SYSTEM_PROMPT", "fix_tools"]

FIX_SYSTEM_PROMPT = """You are RepoPilot, fixing a failing CI run in a git repository.
You are given a diagnosis of the failure: its category, the causal log lines and an excerpt of the log.
1. Read the files the diagnosis points at (read_file, search_code) before changing anything.
2. Propose the smallest change that fixes the cause with propose_fix: either one edit (path, old_text copied
   exactly from the file, new_text) or a unified diff against HEAD whose context lines are copied exactly from
   the files as they are now. Never edit tests to make them pass unless the test itself is wrong, and say so
   if it is.
3. If a proposal is refused as invalid, read the error, re-read the file and send a corrected diff.
4. If the failure cannot be fixed in the repository (infrastructure, network, secrets), do not propose a diff:
   explain what a person should do instead.
You cannot run code or tests yourself. Each proposal is checked before a person sees it: a diff that skips,
deletes or loosens tests or silences a check is refused, and the failing command is run with your diff; if it
still fails you are shown its output and may propose again. Nothing is applied without a person's approval."""

def fix_tools(root: Path, *, verify: Verifier | None = None, **bounds: Any) -> list[Tool]:
    """The tools of the fix agent, bound to the repository at `root` (`bounds` as `repo_tools` takes them);
    `verify` checks each valid proposal before it is recorded (the application layer's verification)."""
    tools = {t.name: t for t in repo_tools(root, **bounds)}
    # In the order a fix uses them: reading the code the diagnosis names, proposing, then history. Small local
    # models weigh the list top-down (SmolLM2 called the first git tool over and over; bench/LIVE.md).
    first = [tools.pop(name) for name in ("read_file", "search_code", "list_files")]
    return [*first, propose_fix_tool(root, verify=verify), *tools.values()]
