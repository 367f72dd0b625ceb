"""A plain file that holds several unrelated jobs one after another (run logs concatenated by hand or by a tool):
the job that failed last is diagnosed. A disk that filled in an earlier job, on another machine, explains nothing
of it; within one job a machine failure still explains what follows it."""

from __future__ import annotations

from pathlib import Path

from repopilot.ci.diagnosis import job_starts
from repopilot.ci.engine import Result, diagnose_input
from repopilot.ci.sources import open_sources


def _github_job(steps: list[tuple[str, list[str], int]]) -> list[str]:
    out = ["Current runner version: '2.321.0'", "##[group]Operating System", "Ubuntu", "##[endgroup]",
           "##[group]Runner Image", "Image: ubuntu-24.04", "##[endgroup]", "##[group]Run actions/checkout@v4",
           "with:", "  fetch-depth: 1", "##[endgroup]", "Syncing repository: example/calc",
           "[command]/usr/bin/git version", "git version 2.47.1"]
    for cmd, output, code in steps:
        out += [f"##[group]Run {cmd}", cmd, "shell: /usr/bin/bash -e {0}", "##[endgroup]", *output]
        if code:
            out.append(f"##[error]Process completed with exit code {code}.")
    return [*out, "Cleaning up orphan processes"]


DISK_FULL_JOB = _github_job([
    ("npm ci", ["npm ERR! code ENOSPC", "npm ERR! syscall write",
                "npm ERR! nospc ENOSPC: no space left on device, write"], 1)])
PYTEST_JOB = _github_job([
    ("pip install -e .", ["Successfully installed calc-1.0"], 0),
    ("pytest -q", ["F.", "FAILED tests/test_calc.py::test_add - assert -1 == 5", "1 failed, 1 passed in 0.02s"], 1)])
JENKINS_JOB = [
    "Started by user admin", "Building in workspace /var/jenkins/workspace/calc", "+ make", "gcc -c calc.c",
    "calc.c:4:12: error: 'y' undeclared (first use in this function)", "    4 |     return y;",
    "      |            ^", "make: *** [Makefile:3: calc.o] Error 1",
    "Build step 'Execute shell' marked build as failure", "Finished: FAILURE"]


def _diagnose(tmp_path: Path, lines: list[str]) -> Result:
    path = tmp_path / "jobs.log"
    path.write_text("\n".join(lines) + "\n")
    return diagnose_input(open_sources(str(path))[0])


def _first_causal(res: Result) -> tuple[str, int]:
    top = next(f for f in res.diagnosis.failures if f.causal)
    return top.rule, top.trigger


def test_a_disk_full_in_an_earlier_job_does_not_outrank_the_last_jobs_failure(tmp_path: Path) -> None:
    lines = DISK_FULL_JOB + PYTEST_JOB
    res = _diagnose(tmp_path, lines)
    d = res.diagnosis
    summary = lines.index("FAILED tests/test_calc.py::test_add - assert -1 == 5") + 1
    assert _first_causal(res) == ("pytest.failed-summary", summary)
    assert d.category == "test"
    assert d.step is not None and d.step.name == "pytest -q"
    assert all(n > len(DISK_FULL_JOB) for n in d.error_lines)
    disk = next(f for f in d.failures if f.rule == "infra.disk-full")
    assert not disk.causal


def test_the_last_failing_job_wins_when_it_is_another_ci_systems(tmp_path: Path) -> None:
    lines = PYTEST_JOB + DISK_FULL_JOB + JENKINS_JOB
    res = _diagnose(tmp_path, lines)
    gcc = lines.index("calc.c:4:12: error: 'y' undeclared (first use in this function)") + 1
    assert _first_causal(res) == ("gcc.error", gcc)
    assert res.diagnosis.category == "build"
    assert res.diagnosis.step is None  # the GitHub steps that failed belong to earlier jobs


def test_within_one_job_a_full_disk_still_explains_what_follows(tmp_path: Path) -> None:
    one_job = _github_job([("npm ci", ["npm ERR! nospc ENOSPC: no space left on device, write"], 0),
                           ("pytest -q", ["FAILED tests/test_calc.py::test_add - OSError: [Errno 28] No space left "
                                          "on device"], 1)])
    res = _diagnose(tmp_path, one_job)
    assert res.diagnosis.category == "infrastructure"
    assert _first_causal(res)[0] == "infra.disk-full"


def test_one_job_has_no_sections(tmp_path: Path) -> None:
    res = _diagnose(tmp_path, PYTEST_JOB)
    assert res.diagnosis.step is not None and res.diagnosis.step.name == "pytest -q"
    assert _first_causal(res)[0] == "pytest.failed-summary"
    path = tmp_path / "jobs.log"
    from repopilot.ci.engine import default_scanner

    with path.open("rb") as fh:
        assert job_starts(default_scanner().scan(fh)) == []


GITLAB_LINT_JOB = [
    "Running with gitlab-runner 17.5.0 (abc123)", "  on docker-runner abc123", "Preparing the \"docker\" executor",
    "Using Docker executor with image python:3.12 ...", "Pulling docker image python:3.12 ...",
    "Using docker image sha256:0123abcd for python:3.12 ...", "Preparing environment",
    "Running on runner-abc123-project-42-concurrent-0 via docker-runner...", "Getting source from Git repository",
    "Fetching changes with git depth set to 20...", "Initialized empty Git repository in /builds/group/app/.git/",
    "Created fresh repository.", "Checking out 1a2b3c4d as detached HEAD (ref is main)...",
    "Skipping Git submodules setup", "Executing \"step_script\" stage of the job script",
    "section_start:1700000000:step_script", "$ yamllint -s .", "./.gitlab-ci.yml",
    "  3:1       error    syntax error: mapping values are not allowed here (syntax)",
    "section_end:1700000001:step_script", "ERROR: Job failed: exit code 1"]


def test_a_job_start_far_from_any_error_still_ends_the_earlier_job(tmp_path: Path) -> None:
    # The Jenkins job's first line is hundreds of lines before its error and the log's end: the scan finds job
    # starts wherever they are, so the GitLab job's failing command, markers and error do not speak for it.
    progress = [f"[{i:3d}/400] Compiling module_{i}.c" for i in range(400)]
    jenkins = [JENKINS_JOB[0], *progress, *JENKINS_JOB[1:]]
    lines = GITLAB_LINT_JOB + jenkins
    res = _diagnose(tmp_path, lines)
    d = res.diagnosis
    start = len(GITLAB_LINT_JOB) + 1
    assert d.job_first == start
    assert d.category == "build"
    assert d.error_lines and all(n > start for n in d.error_lines)
    cat = next(x for x in d.decisions if x.get("decision") == "category")
    assert not any("yamllint" in e["detail"] or e["category"] in ("lint", "config") for e in cat["evidence"])
    path = tmp_path / "jobs.log"
    from repopilot.ci.engine import default_scanner

    for engine in ("re", "hyperscan"):
        with path.open("rb") as fh:
            assert job_starts(default_scanner(engine).scan(fh)) == [1, start]


PLAIN_JOB = ["+ ./ci/check-catalog.sh", "checking catalog/prices.json", "catalog/prices.json: price of 'tea' is not a "
             "number: \"two\"", "1 file with errors"]


def test_a_job_without_a_banner_begins_after_the_last_ones_end(tmp_path: Path) -> None:
    # The Jenkins job ends (`Finished: FAILURE`); the output that follows is another job's (it ends failing, as
    # Travis says it), whose error no rule knows: the gcc error of the Jenkins job is not its cause.
    lines = [*JENKINS_JOB, *PLAIN_JOB, "Done. Your build exited with 1."]
    d = _diagnose(tmp_path, lines).diagnosis
    start = len(JENKINS_JOB) + 1
    assert d.job_first == start
    assert d.error_lines and all(n >= start for n in d.error_lines)
    assert d.category != "build"


def test_a_banner_after_another_jobs_lines_begins_a_second_job(tmp_path: Path) -> None:
    # Plain output of one job, then a Jenkins job: its banner is the only one, but the lines before it are not its.
    lines = [*PLAIN_JOB, *[f"progress {i}" for i in range(20)], *JENKINS_JOB]
    d = _diagnose(tmp_path, lines).diagnosis
    start = len(lines) - len(JENKINS_JOB) + 1
    assert d.job_first == start
    assert d.category == "build"
    assert all(n >= start for n in d.error_lines)


def test_a_job_that_passed_after_the_failing_one_is_not_diagnosed(tmp_path: Path) -> None:
    passed = ["Started by user admin", "Building in workspace /var/jenkins/workspace/docs", "+ make docs",
              *[f"rendering page {i}" for i in range(30)], "Finished: SUCCESS"]
    lines = JENKINS_JOB + passed
    d = _diagnose(tmp_path, lines).diagnosis
    gcc = JENKINS_JOB.index("calc.c:4:12: error: 'y' undeclared (first use in this function)") + 1
    assert gcc in d.error_lines
    assert d.category == "build"


def test_a_github_job_that_passed_after_the_failing_one_is_not_diagnosed(tmp_path: Path) -> None:
    passed = _github_job([("npm run docs", [f"rendered page {i}" for i in range(30)], 0)])
    lines = PYTEST_JOB + passed
    d = _diagnose(tmp_path, lines).diagnosis
    summary = lines.index("FAILED tests/test_calc.py::test_add - assert -1 == 5") + 1
    assert summary in d.error_lines
    assert d.category == "test"
    assert d.step is not None and d.step.name == "pytest -q"
    assert d.job_last == len(PYTEST_JOB)
