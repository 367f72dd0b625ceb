"""The repository side: the sandbox, the read-only tools, diff validation and the approved apply."""

from .gitrun import GitFailed, GitTimeout, run_git
from .sandbox import Sandbox, check_ref, open_repo
from .tools import repo_tools

__all__ = ["GitFailed", "GitTimeout", "Sandbox", "check_ref", "open_repo", "repo_tools", "run_git"]
