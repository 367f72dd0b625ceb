"""Wrap real tool output into the log shapes CI systems write: GitHub Actions, GitLab, Travis, Jenkins, plain, and
Azure Pipelines (`azure`: rendered on request, outside the rotation over SHAPES, so that adding it re-shaped no
case already made).

The tool output inside is real (captured from the tool run here); only the frame around it — runner banners,
step headers, folds, timestamps, exit trailers — is written by this module, the way each CI system writes it.
Labels are given as 0-based indexes into a step's own output and come back as 1-based line numbers of the
rendered file, counted by `\\n` (the project's convention), so labelling never depends on the frame.

    from shapes import Step, render
    text, causal, context = render([Step("Test", "pytest -q", out_lines, 1, causal=[12, 13])], "github")
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

__all__ = ["ALL_SHAPES", "SHAPES", "Step", "render"]

SHAPES = ("github", "gitlab", "travis", "jenkins", "plain")  # the rotation the generators shape their cases by
ALL_SHAPES = (*SHAPES, "azure")
ESC = "\x1b"


@dataclass
class Step:
    name: str
    command: str
    output: list[str]
    exit_code: int = 0
    causal: list[int] = field(default_factory=list)  # 0-based indexes into `output`
    context: list[int] = field(default_factory=list)
    # runs even after an earlier step failed (GitHub `if: always()`, GitLab after_script, Travis after_failure,
    # Jenkins post { always }), so the failing step's lines are not the log's last ones
    always: bool = False


@dataclass
class _Doc:
    lines: list[str] = field(default_factory=list)
    causal: list[int] = field(default_factory=list)
    context: list[int] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.lines.append(text)

    def add_output(self, step: Step, prefix: Callable[[], str] = lambda: "") -> None:
        for i, text in enumerate(step.output):
            self.lines.append(prefix() + text)
            if i in step.causal:
                self.causal.append(len(self.lines))
            if i in step.context:
                self.context.append(len(self.lines))


def render(steps: list[Step], shape: str, *, job: str = "build", seed: int = 0) -> tuple[str, list[int], list[int]]:
    """The log text (ending in a newline) and the 1-based causal and context line numbers."""
    rng = random.Random(seed)
    doc = _Doc()
    {"github": _github, "gitlab": _gitlab, "travis": _travis, "jenkins": _jenkins, "plain": _plain,
     "azure": _azure}[shape](doc, steps, job, rng)
    return "\n".join(doc.lines) + "\n", doc.causal, doc.context


def _clock(rng: random.Random) -> Callable[[], str]:
    t = datetime(2026, 11, rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59), tzinfo=UTC)

    def tick() -> str:
        nonlocal t
        t += timedelta(microseconds=rng.randint(200, 90_000))
        return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond:06d}0Z "

    return tick


def _github(doc: _Doc, steps: list[Step], job: str, rng: random.Random) -> None:
    ts = _clock(rng)
    for text in ("Current runner version: '2.321.0'", "##[group]Operating System", "Ubuntu", "24.04.1",
                 "LTS", "##[endgroup]", "##[group]Runner Image", "Image: ubuntu-24.04", "Version: 20261124.1.0",
                 "##[endgroup]", "Secret source: Actions", "Prepare workflow directory",
                 "Prepare all required actions", "Getting action download info",
                 "Download action repository 'actions/checkout@v4' (SHA:11bd71901bbe5b1630ceea73d27597364c9af683)",
                 f"Complete job name: {job}", "##[group]Run actions/checkout@v4", "with:",
                 "  fetch-depth: 1", "##[endgroup]", "Syncing repository: example/project",
                 "[command]/usr/bin/git version", "git version 2.47.1",
                 "[command]/usr/bin/git init /home/runner/work/project/project",
                 "[command]/usr/bin/git -c protocol.version=2 fetch --no-tags --prune --no-recurse-submodules "
                 "--depth=1 origin +refs/heads/main*:refs/remotes/origin/main",
                 "[command]/usr/bin/git checkout --progress --force -B main refs/remotes/origin/main",
                 "Switched to a new branch 'main'"):
        doc.add(ts() + text)
    failed = False
    for step in steps:
        if failed and not step.always:
            continue
        cmd_lines = step.command.splitlines() or [""]
        doc.add(ts() + f"##[group]Run {cmd_lines[0]}")
        for extra in cmd_lines:
            doc.add(ts() + f"{ESC}[36;1m{extra}{ESC}[0m")
        doc.add(ts() + "shell: /usr/bin/bash -e {0}")
        doc.add(ts() + "##[endgroup]")
        doc.add_output(step, ts)
        if step.exit_code:
            doc.add(ts() + f"##[error]Process completed with exit code {step.exit_code}.")
            failed = True
    doc.add(ts() + "Post job cleanup.")
    doc.add(ts() + "[command]/usr/bin/git version")
    doc.add(ts() + "git version 2.47.1")
    doc.add(ts() + "Cleaning up orphan processes")


def _gitlab(doc: _Doc, steps: list[Step], job: str, rng: random.Random) -> None:
    t0 = 1764500000 + rng.randint(0, 10_000_000)
    clear = f"\r{ESC}[0K"
    head = f"{ESC}[0K{ESC}[36;1m"
    doc.add(f"{ESC}[0KRunning with gitlab-runner 17.6.0 (374d34fd){ESC}[0;m")
    doc.add(f"{ESC}[0K  on shared-runner-7 t3_Xz9kQ, system ID: s_1a2b3c4d5e6f{ESC}[0;m")
    doc.add(f"section_start:{t0}:prepare_executor{clear}{head}Preparing the \"docker\" executor{ESC}[0;m{ESC}[0;m")
    doc.add(f"{ESC}[0KUsing Docker executor with image debian:bookworm ...{ESC}[0;m")
    doc.add(f"section_end:{t0 + 3}:prepare_executor{clear}")
    doc.add(f"section_start:{t0 + 3}:get_sources{clear}{head}Getting source from Git repository{ESC}[0;m")
    doc.add(f"{ESC}[32;1mFetching changes with git depth set to 20...{ESC}[0;m")
    doc.add("Initialized empty Git repository in /builds/group/project/.git/")
    doc.add(f"{ESC}[32;1mChecking out 4e1f2a9c as detached HEAD (ref is main)...{ESC}[0;m")
    doc.add(f"section_end:{t0 + 5}:get_sources{clear}")
    doc.add(f"section_start:{t0 + 5}:step_script{clear}{head}Executing \"step_script\" stage of the job script"
            f"{ESC}[0;m")
    failed = 0
    for n, step in enumerate(steps):  # noqa: B007 (n is read after the loop: the step the script stopped at)
        for cmd in step.command.splitlines() or [""]:
            doc.add(f"{ESC}[32;1m$ {cmd}{ESC}[0;m")
        doc.add_output(step)
        if step.exit_code:
            failed = step.exit_code
            break
    doc.add(f"section_end:{t0 + 60}:step_script{clear}")
    after = [s for s in steps[n + 1:] if s.always] if failed else []
    if after:
        doc.add(f"section_start:{t0 + 60}:after_script{clear}{head}Running after_script{ESC}[0;m")
        doc.add(f"{ESC}[32;1mRunning after script...{ESC}[0;m")
        for step in after:
            for cmd in step.command.splitlines() or [""]:
                doc.add(f"{ESC}[32;1m$ {cmd}{ESC}[0;m")
            doc.add_output(step)
        doc.add(f"section_end:{t0 + 60}:after_script{clear}")
    doc.add(f"section_start:{t0 + 60}:cleanup_file_variables{clear}{head}Cleaning up project directory and file "
            f"based variables{ESC}[0;m")
    doc.add(f"section_end:{t0 + 61}:cleanup_file_variables{clear}")
    if failed:
        doc.add(f"{ESC}[31;1mERROR: Job failed: exit code {failed}")
        doc.add(f"{ESC}[0;m")
    else:
        doc.add(f"{ESC}[32;1mJob succeeded{ESC}[0;m")


def _travis(doc: _Doc, steps: list[Step], job: str, rng: random.Random) -> None:
    clear = f"\r{ESC}[0K"
    doc.add(f"travis_fold:start:worker_info{clear}{ESC}[33;1mWorker information{ESC}[0m")
    doc.add("hostname: 9b1f2c3d-travis-worker")
    doc.add("version: v6.2.22 https://github.com/travis-ci/worker/tree/0b6c4c9")
    doc.add(f"travis_fold:end:worker_info{clear}")
    doc.add(f"travis_fold:start:git.checkout{clear}travis_time:start:0a1b2c3d{clear}$ git clone --depth=50 "
            "https://github.com/example/project.git example/project")
    doc.add("Cloning into 'example/project'...")
    doc.add(f"travis_time:end:0a1b2c3d:start=1,finish=2,duration=1{clear}")
    doc.add(f"travis_fold:end:git.checkout{clear}")
    for n, step in enumerate(steps):
        tag = f"{rng.getrandbits(32):08x}"
        doc.add(f"travis_time:start:{tag}{clear}$ {step.command.splitlines()[0] if step.command else ''}")
        doc.add_output(step)
        doc.add(f"travis_time:end:{tag}:start={n},finish={n + 1},duration=1{clear}")
        if step.exit_code:
            doc.add("")
            doc.add(f"{ESC}[31;1mThe command \"{step.command.splitlines()[0]}\" exited with {step.exit_code}."
                    f"{ESC}[0m")
            for k, post in enumerate(s for s in steps[n + 1:] if s.always):
                doc.add(f"travis_fold:start:after_failure.{k + 1}{clear}$ {post.command.splitlines()[0]}")
                doc.add_output(post)
                doc.add(f"travis_fold:end:after_failure.{k + 1}{clear}")
            break
    doc.add("")
    doc.add("Done. Your build exited with 1." if any(s.exit_code for s in steps) else "Done. Your build exited with 0.")


def _jenkins(doc: _Doc, steps: list[Step], job: str, rng: random.Random) -> None:
    for text in ("Started by user admin", "[Pipeline] Start of Pipeline", "[Pipeline] node",
                 f"Running on agent-{rng.randint(1, 9)} in /var/jenkins/workspace/{job}", "[Pipeline] {",
                 "[Pipeline] stage", "[Pipeline] { (Checkout)", "[Pipeline] checkout",
                 "The recommended git tool is: NONE", " > git rev-parse --resolve-git-dir /var/jenkins/workspace/.git",
                 "Checking out Revision 4e1f2a9c0b7d (refs/remotes/origin/main)", "[Pipeline] }"):
        doc.add(text)
    failed = 0
    for step in (s for s in steps if not s.always):
        doc.add("[Pipeline] stage")
        doc.add(f"[Pipeline] {{ ({step.name})")
        if failed:
            doc.add(f"Stage \"{step.name}\" skipped due to earlier failure(s)")
            doc.add("[Pipeline] }")
            continue
        doc.add("[Pipeline] sh")
        for cmd in step.command.splitlines() or [""]:
            doc.add(f"+ {cmd}")
        doc.add_output(step)
        doc.add("[Pipeline] }")
        failed = failed or step.exit_code
    post = [s for s in steps if s.always]
    if post:
        doc.add("[Pipeline] stage")
        doc.add("[Pipeline] { (Declarative: Post Actions)")
        for step in post:
            doc.add("[Pipeline] sh")
            for cmd in step.command.splitlines() or [""]:
                doc.add(f"+ {cmd}")
            doc.add_output(step)
        doc.add("[Pipeline] }")
    for text in ("[Pipeline] // node", "[Pipeline] End of Pipeline"):
        doc.add(text)
    if failed:
        doc.add(f"ERROR: script returned exit code {failed}")
        doc.add("Finished: FAILURE")
    else:
        doc.add("Finished: SUCCESS")


def _plain(doc: _Doc, steps: list[Step], job: str, rng: random.Random) -> None:
    failed = False
    for step in steps:
        if failed and not step.always:
            continue
        for cmd in step.command.splitlines() or [""]:
            doc.add(f"+ {cmd}")
        doc.add_output(step)
        failed = failed or bool(step.exit_code)


# What an Azure Pipelines task prints before the script's output: its banner, then (the Command line task) the
# script it generated.
_AZURE_BANNER = ("==============================================================================",
                 "Task         : Command line",
                 "Description  : Run a command line script using Bash on Linux and macOS and cmd.exe on Windows",
                 "Version      : 2.246.1",
                 "Author       : Microsoft Corporation",
                 "Help         : https://docs.microsoft.com/azure/devops/pipelines/tasks/utility/command-line",
                 "==============================================================================")


def _azure(doc: _Doc, steps: list[Step], job: str, rng: random.Random) -> None:
    """A job's log as Azure Pipelines writes it: every line timestamped, each task between `##[section]Starting:`
    and `##[section]Finishing:` inside the job's own section, a failing script task's `##[error]Bash exited with
    code 'N'.`; after a failure only the steps that always run, then the post-job checkout and Finalize Job."""
    ts = _clock(rng)
    repo = "example/project"
    head = (f"##[section]Starting: {job}", "##[section]Starting: Initialize job",
            f"Agent name: 'Azure Pipelines {rng.randint(1, 9)}'", f"Agent machine name: 'fv-az{rng.randint(100, 999)}'",
            "Current agent version: '4.248.0'", "##[group]Operating System", "Ubuntu", "24.04.1", "LTS",
            "##[endgroup]", "##[group]Runner Image", "Image: ubuntu-24.04", "Version: 20261124.1.0",
            "##[endgroup]", "Current image version: '20261124.1.0'", "Agent running as: 'vsts'",
            "Prepare build directory.", "Set build variables.", "Download all required tasks.",
            "Downloading task: CmdLine (2.246.1)", "Checking job knob settings.",
            "   Knob: AgentToolsDirectory = /opt/hostedtoolcache Source: ${AGENT_TOOLSDIRECTORY} ",
            "Start tracking orphan processes.", "##[section]Finishing: Initialize job",
            f"##[section]Starting: Checkout {repo}@main to s", "==============================================================================",
            "Task         : Get sources",
            "Description  : Get sources from a repository. Supports Git, TfsVC, and SVN repositories.",
            "Version      : 1.0.0", "Author       : Microsoft",
            "Help         : [More Information](https://go.microsoft.com/fwlink/?LinkId=798199)",
            "==============================================================================",
            f"Syncing repository: {repo} (GitHub)", "git version", "git version 2.47.1",
            '##[command]git init "/home/vsts/work/1/s"',
            "Initialized empty Git repository in /home/vsts/work/1/s/.git/",
            f"##[command]git remote add origin https://github.com/{repo}",
            "##[command]git config gc.auto 0",
            '##[command]git -c http.extraheader="AUTHORIZATION: basic ***" fetch --force --tags --prune '
            "--prune-tags --progress --no-recurse-submodules origin --depth=1",
            "##[command]git checkout --progress --force refs/remotes/origin/main",
            "HEAD is now at 4e1f2a9 Merge pull request #42 from example/fix",
            f"##[section]Finishing: Checkout {repo}@main to s")
    for text in head:
        doc.add(ts() + text)
    failed = False
    for step in steps:
        if failed and not step.always:
            continue  # skipped steps leave no lines in the job's log
        doc.add(ts() + f"##[section]Starting: {step.name}")
        for text in (*_AZURE_BANNER, "Generating script.", "Script contents:", *(step.command.splitlines() or [""]),
                     "========================== Starting Command Output ===========================",
                     f"/usr/bin/bash --noprofile --norc /home/vsts/work/_temp/{rng.getrandbits(128):032x}.sh"):
            doc.add(ts() + text)
        doc.add_output(step, ts)
        if step.exit_code:
            doc.add(ts() + "")
            doc.add(ts() + f"##[error]Bash exited with code '{step.exit_code}'.")
            failed = True
        doc.add(ts() + f"##[section]Finishing: {step.name}")
    for text in (f"##[section]Starting: Post-job: Checkout {repo}@main to s",
                 f"Cleaning any cached credential from repository: {repo} (GitHub)",
                 f"##[section]Finishing: Post-job: Checkout {repo}@main to s", "##[section]Starting: Finalize Job",
                 "Cleaning up task key", "Start cleaning up orphan processes.",
                 f"Terminate orphan process: pid ({rng.randint(2000, 9000)}) (node)",
                 "##[section]Finishing: Finalize Job", f"##[section]Finishing: {job}"):
        doc.add(ts() + text)
