"""The repository side: the sandbox, the read-only tools, diff validation, the approved apply, the weakening
guard and the disposable workspaces of verification."""

from .apply import AppliedFix, apply_fix, commit_object, rebuild_commit
from .diff import ValidatedDiff
from .fixer import FIX_SYSTEM_PROMPT, fix_tools
from .github_origin import GitHubCheckout, github_checkout, parse_remote
from .gitrun import GitFailed, GitTimeout, run_git
from .guard import check_weakening
from .propose import mark_applied
from .remote import check_push_url, checkout_pull_request, fetch_branch, push_branch, remote_url
from .sandbox import Sandbox, open_repo
from .setup_cache import SetupCache, run_setup
from .tools import MAX_LINE_BYTES, MAX_RESULT_BYTES, TOOL_SECONDS, repo_tools
from .workspace import apply_in, run_command, tool_versions, worktree

__all__ = ["FIX_SYSTEM_PROMPT", "MAX_LINE_BYTES", "MAX_RESULT_BYTES", "TOOL_SECONDS", "AppliedFix",
           "GitFailed", "GitHubCheckout", "GitTimeout", "Sandbox", "SetupCache", "ValidatedDiff", "apply_fix",
           "apply_in", "check_push_url", "check_weakening", "checkout_pull_request", "commit_object", "fetch_branch",
           "fix_tools", "github_checkout", "mark_applied", "open_repo", "parse_remote", "push_branch",
           "rebuild_commit", "remote_url", "repo_tools", "run_command", "run_git", "run_setup", "tool_versions",
           "worktree"]
