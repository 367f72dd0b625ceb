"""The repository side: the sandbox, the read-only tools, diff validation and the approved apply."""

from .fixer import FIX_SYSTEM_PROMPT, fix_tools
from .sandbox import Sandbox, check_ref, open_repo, run_git
from .tools import repo_tools

__all__ = ["FIX_SYSTEM_PROMPT", "Sandbox", "check_ref", "fix_tools", "open_repo", "repo_tools", "run_git"]
