"""The repository side: the sandbox, the read-only tools, diff validation and the approved apply."""

from .apply import AppliedFix, apply_fix
from .fixer import FIX_SYSTEM_PROMPT, fix_tools
from .github_origin import GitHubCheckout, github_checkout
from .gitrun import GitTimeout, run_git
from .propose import mark_applied
from .remote import checkout_pull_request, fetch_branch, push_branch
from .sandbox import Sandbox, open_repo
from .tools import MAX_LINE_BYTES, MAX_RESULT_BYTES, TOOL_SECONDS, repo_tools

__all__ = ["FIX_SYSTEM_PROMPT", "MAX_LINE_BYTES", "MAX_RESULT_BYTES", "TOOL_SECONDS", "AppliedFix",
           "GitHubCheckout", "GitTimeout", "Sandbox", "apply_fix", "checkout_pull_request", "fetch_branch", "fix_tools",
           "github_checkout", "mark_applied", "open_repo", "push_branch", "repo_tools", "run_git"]
