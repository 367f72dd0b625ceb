"""The repository side: the sandbox, the read-only tools, diff validation and the approved apply."""

from .sandbox import Sandbox, check_ref, open_repo, run_git
from .tools import repo_tools

__all__ = ["Sandbox", "check_ref", "open_repo", "repo_tools", "run_git"]
