"""The approved apply: exactly the recorded diff becomes one commit on a new branch `repopilot/<run_id>`, made
with plumbing on a private index (read-tree, apply --cached, write-tree, commit-tree, update-ref), so the
working tree, the real index and the current branch are never touched. Nothing is pushed.

The commit message carries the run id and the diff's sha256 as trailers: an approval interrupted after the
branch was created is recognised on the next `approve` instead of failing or committing twice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..core import ApprovalError, diff_sha256
from .diff import InvalidDiff, git_apply_args, validate_diff
from .gitindex import temp_index
from .gitrun import GitFailed, run_git

__all__ = ["AppliedFix", "apply_fix", "branch_for", "commit_object", "find_applied", "head_branch", "rebuild_commit"]

_FALLBACK_IDENT = {"GIT_AUTHOR_NAME": "RepoPilot", "GIT_AUTHOR_EMAIL": "repopilot@localhost",
                   "GIT_COMMITTER_NAME": "RepoPilot", "GIT_COMMITTER_EMAIL": "repopilot@localhost"}


@dataclass(frozen=True)
class AppliedFix:
    branch: str
    commit: str
    base: str
    files: list[str]
    already: bool = False  # the branch already held this run's commit for this diff


def branch_for(run_id: str) -> str:
    return f"repopilot/{run_id}"


def _ident_env(root: Path) -> dict[str, str]:
    # The person's own git identity when configured; otherwise commit-tree would refuse to run.
    try:
        run_git(root, ["var", "GIT_COMMITTER_IDENT"])
        run_git(root, ["var", "GIT_AUTHOR_IDENT"])
        return {}
    except GitFailed:
        return dict(_FALLBACK_IDENT)


def find_applied(root: Path, run_id: str, sha256: str) -> str | None:
    """The commit of branch `repopilot/<run_id>` when it exists; ApprovalError if it holds something else."""
    ref = f"refs/heads/{branch_for(run_id)}"
    try:
        commit = run_git(root, ["rev-parse", "--verify", "--quiet", ref]).strip()
    except GitFailed:
        return None
    message = run_git(root, ["log", "-1", "--no-show-signature", "--format=%B", commit])
    if re.search(rf"^RepoPilot-Run: {re.escape(run_id)}$", message, re.M) and \
            re.search(rf"^RepoPilot-Diff-SHA256: {sha256}$", message, re.M):
        return commit
    raise ApprovalError(f"branch {branch_for(run_id)} already exists and does not hold this proposal; "
                        "delete or rename it, then approve again")


_SUBJECT = 72 - len("repopilot: ")  # git's customary subject width, prefix included


def _subject(first_line: str) -> str:
    """The first sentence when it fits, else the line cut at a word boundary with `…`."""
    sentence = re.split(r"(?<=[.!?])\s", first_line, maxsplit=1)[0]
    if len(sentence) <= _SUBJECT:
        return sentence
    cut = first_line[: _SUBJECT - 1].rsplit(" ", 1)[0] if " " in first_line[: _SUBJECT - 1] else \
        first_line[: _SUBJECT - 1]
    return cut.rstrip(" ,;:") + "…"


def _message(run_id: str, sha256: str, explanation: str, who: str) -> str:
    """Subject, then the whole explanation as the model wrote it (paragraphs kept; nothing cut off), then the
    trailers. The body repeats the first line unless the subject is all of it."""
    text = "\n".join(line.rstrip() for line in explanation.strip().splitlines())
    first, _, rest = text.partition("\n")
    subject = _subject(first.strip()) if first.strip() else "proposed fix"
    body = rest.strip("\n") if subject == first.strip() else text
    parts = [f"repopilot: {subject}"]
    if body:
        parts.append(body)
    parts.append(f"RepoPilot-Run: {run_id}\nRepoPilot-Diff-SHA256: {sha256}\nApproved-by: {who}")
    return "\n\n".join(parts) + "\n"


def head_branch(root: Path) -> str | None:
    """The branch HEAD is on, or None when HEAD is detached."""
    name = run_git(root, ["symbolic-ref", "--quiet", "--short", "HEAD"], check=False).strip()
    return name or None


def _check_base(root: Path, base: str, base_branch: str | None) -> None:
    """Refuse when HEAD is not where the proposal was made: the new branch would start from HEAD, so it would
    carry commits nobody reviewed together with this diff."""
    head = run_git(root, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], check=False).strip()
    branch = head_branch(root)
    if head == base and (base_branch is None or branch == base_branch):
        return
    where = f"{base[:12]} on {base_branch or 'a detached HEAD'}"
    now = f"{head[:12] or 'no commit'} on {branch or 'a detached HEAD'}"
    extra = run_git(root, ["rev-list", "--count", f"{base}..{head}"], check=False).strip() if head else ""
    carried = f"; {extra} commit(s) on HEAD are not in that base" if extra.isdigit() and extra != "0" else ""
    raise ApprovalError(f"HEAD has changed since the proposal was made: it was checked against {where}, HEAD is "
                        f"now {now}{carried}. The new branch would start from the current HEAD and carry what "
                        "was not reviewed with this diff; nothing was applied. To apply it on top of the current "
                        "HEAD anyway, approve again with --onto-current")


def apply_fix(root: Path, diff: str, *, run_id: str, sha256: str, explanation: str, who: str,
              base: str | None = None, base_branch: str | None = None, onto_current: bool = False) -> AppliedFix:
    """Commit `diff` on top of HEAD as branch `repopilot/<run_id>`. The diff must hash to `sha256`. With `base`
    (the commit the proposal was checked against; `base_branch` its branch), HEAD must still be there unless
    `onto_current`."""
    if diff_sha256(diff) != sha256:
        raise ApprovalError("the diff does not match its recorded sha256; refusing to apply an altered proposal")
    branch = branch_for(run_id)
    try:
        run_git(root, ["check-ref-format", f"refs/heads/{branch}"])
    except GitFailed:
        raise ApprovalError(f"{branch!r} is not a valid branch name") from None
    existing = find_applied(root, run_id, sha256)
    if existing is not None:
        parent = run_git(root, ["rev-parse", f"{existing}^"]).strip()
        files = run_git(root, ["diff-tree", "--no-commit-id", "--name-only", "-r", "-z", existing]).split("\0")
        return AppliedFix(branch, existing, parent, sorted(f for f in files if f), already=True)
    try:
        checked = validate_diff(root, diff)
    except InvalidDiff as exc:
        raise ApprovalError(f"the approved diff can no longer be applied: {exc}") from None
    if checked.diff != diff:
        # validate_diff only ever adds a final newline; a recorded diff always has one already.
        raise ApprovalError("the recorded diff is not in its normalised form; refusing to apply it")
    if base is not None and not onto_current:
        _check_base(root, base, base_branch)
    env_ident = _ident_env(root)
    with temp_index(root, checked.base) as env:
        run_git(root, git_apply_args(checked.strip), input=diff, env=env)
        tree = run_git(root, ["write-tree"], env=env).strip()
    base_tree = run_git(root, ["rev-parse", f"{checked.base}^{{tree}}"]).strip()
    if tree == base_tree:
        raise ApprovalError("the diff changes nothing against HEAD; no branch was created")
    message = _message(run_id, sha256, explanation, who)
    commit = run_git(root, ["commit-tree", "--no-gpg-sign", tree, "-p", checked.base, "-F", "-"], input=message,
                     env=env_ident).strip()
    try:
        # The empty old value makes git refuse when the branch appeared meanwhile: never overwrite a branch.
        run_git(root, ["update-ref", "-m", f"repopilot: approved run {run_id}", f"refs/heads/{branch}", commit, ""])
    except GitFailed as exc:
        raise ApprovalError(f"could not create branch {branch}: {exc}") from None
    return AppliedFix(branch, commit, checked.base, checked.files)


def commit_object(root: Path, commit: str) -> str:
    """`commit` as git stores it (tree, parent, author, committer, message): recorded with the approval, so a
    checkout that lacks the commit can make exactly it again (`rebuild_commit`)."""
    return str(run_git(root, ["cat-file", "commit", commit]))


def rebuild_commit(root: Path, diff: str, commit: str, stored: str) -> None:
    """Make the approved `commit` again in `root` (a fresh checkout of the branch it was made on) from its stored
    object and the approved diff. The object names its tree and parent: the diff applied to that parent must give
    that tree, and the object must hash to `commit`; otherwise ApprovalError, and nothing is made."""
    header = stored.partition("\n\n")[0]
    tree = re.findall(r"^tree ([0-9a-f]{40,64})$", header, re.M)
    parents = re.findall(r"^parent ([0-9a-f]{40,64})$", header, re.M)
    if len(tree) != 1 or len(parents) != 1:
        raise ApprovalError(f"the recorded object of the approved commit {commit[:12]} is not a one-parent commit; "
                            "nothing was pushed")
    parent = parents[0]
    found = run_git(root, ["rev-parse", "--verify", "--quiet", f"{parent}^{{commit}}"], check=False).strip()
    if found != parent:
        raise ApprovalError(f"the approved commit {commit[:12]} is not here and cannot be made again: its parent "
                            f"{parent[:12]} is not in this checkout (the branch was rewritten since); nothing was "
                            "pushed. Ask for a new proposal on the current head")
    try:
        checked = validate_diff(root, diff, base=parent)
    except InvalidDiff as exc:
        raise ApprovalError(f"the approved diff no longer applies to {parent[:12]}: {exc}; nothing was pushed") \
            from None
    with temp_index(root, parent) as env:
        run_git(root, git_apply_args(checked.strip), input=diff, env=env)
        built = run_git(root, ["write-tree"], env=env).strip()
    made = run_git(root, ["hash-object", "-t", "commit", "--stdin"], input=stored).strip() \
        if built == tree[0] else ""
    if made != commit:
        raise ApprovalError(f"the approved commit {commit[:12]} could not be made again here (the diff on "
                            f"{parent[:12]} gives another {'commit' if made else 'tree'}); nothing was pushed")
    run_git(root, ["hash-object", "-t", "commit", "-w", "--stdin"], input=stored)
