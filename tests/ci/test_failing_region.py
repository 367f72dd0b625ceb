"""Where the job failed decides which evidence counts: a machine failure the job survived (a cache step that hit a
full disk and carried on) is not the cause of a later test failure; what a rule found in another job or step
gives way to what the locator finds in the failing step; and the category of tools no rule knows comes from the
shape of what they printed (a compiler's diagnostic, a package that is not available)."""

from __future__ import annotations

from pathlib import Path

from repopilot.ci.engine import diagnose_input
from repopilot.ci.sources import open_sources

TS = "2026-11-14T10:44:01.0000000Z "

# Real output (bench/corpus/cases/python/disk-full-recovered-then-test), plain shape.
DISK_THEN_TEST = """\
+ python --version
Python 3.11.7
+ head -c 300000 /dev/urandom > blob && cp blob /mnt/cache/pip-cache.bin || echo 'cache not saved, continuing'
cp: error writing '/mnt/cache/pip-cache.bin': No space left on device
cache not saved, continuing
+ python -m pytest -q -p no:cacheprovider
F                                                                        [100%]
=================================== FAILURES ===================================
__________________________________ test_mean ___________________________________

    def test_mean():
>       assert mean([1, 2, 3, 4]) == 2.5
E       assert 2 == 2.5
E        +  where 2 = mean([1, 2, 3, 4])

tests/test_calc.py:5: AssertionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_mean - assert 2 == 2.5
 +  where 2 = mean([1, 2, 3, 4])
1 failed in 0.06s
"""


def _diagnose(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    p = tmp_path / "job.log"
    p.write_text(text)
    return diagnose_input(open_sources(str(p))[0]).diagnosis


def test_a_full_disk_the_job_carried_on_after_is_not_the_cause(tmp_path: Path) -> None:
    d = _diagnose(tmp_path, DISK_THEN_TEST)
    assert d.category == "test"
    assert 4 not in d.error_lines
    assert {12, 13, 18} <= set(d.error_lines)
    assert any(x.get("decision") == "not causal" and x.get("rule") == "infra.disk-full" for x in d.decisions)


def test_a_full_disk_that_stopped_the_job_still_is(tmp_path: Path) -> None:
    text = "\n".join(DISK_THEN_TEST.splitlines()[:4]).replace(" || echo 'cache not saved, continuing'", "") + "\n"
    d = _diagnose(tmp_path, text)
    assert d.category == "infrastructure"
    assert 4 in d.error_lines


def _github(steps: list[tuple[str, list[str], int]]) -> list[str]:
    out = ["Current runner version: '2.321.0'"]
    for cmd, lines, code in steps:
        out += [f"##[group]Run {cmd}", cmd, "shell: /usr/bin/bash -e {0}", "##[endgroup]", *lines]
        if code:
            out.append(f"##[error]Process completed with exit code {code}.")
    out += ["Post job cleanup.", "Cleaning up orphan processes"]
    return [TS + t for t in out]


# shellcheck's style notes from a passing job, then a second job of the run whose protoc step fails (real output,
# bench/corpus/cases/protobuf/protoc-in-second-job).
LINT_JOB = _github([("shellcheck -S style -f gcc scripts/gen.sh || true", [
    "scripts/gen.sh:2:10: warning: Iterating over ls output is fragile. Use globs. [SC2045]",
    "scripts/gen.sh:2:43: note: Double quote to prevent globbing and word splitting. [SC2086]"], 0)])
PROTOC_JOB = _github([("protoc --version", ["libprotoc 3.21.12"], 0),
                      ("mkdir -p gen && protoc -I proto --python_out=gen proto/shop/api/order.proto", [
                          'shop/api/order.proto:14:12: "Itme" is not defined.'], 1)])


def test_a_rule_hit_in_another_job_gives_way_to_the_failing_step(tmp_path: Path) -> None:
    lines = LINT_JOB + PROTOC_JOB
    d = _diagnose(tmp_path, "\n".join(lines) + "\n")
    failing = next(i for i, t in enumerate(lines, 1) if "is not defined" in t)
    assert d.error_lines == [failing]
    assert not any(f.causal for f in d.failures if f.rule.startswith("shellcheck"))


def test_a_rule_hit_outside_stands_when_the_failing_step_shows_no_error(tmp_path: Path) -> None:
    # One job: an earlier step's findings are what there is to read about the step that failed silently.
    lint_step = ("shellcheck -S style -f gcc scripts/gen.sh || true", [
        "scripts/gen.sh:2:10: warning: Iterating over ls output is fragile. Use globs. [SC2045]",
        "scripts/gen.sh:2:43: note: Double quote to prevent globbing and word splitting. [SC2086]"], 0)
    lines = _github([lint_step, ("make release", ["packaging 3 files", "done"], 2)])
    d = _diagnose(tmp_path, "\n".join(lines) + "\n")
    assert any(f.causal and f.rule.startswith("shellcheck") for f in d.failures)


def test_a_rule_hit_in_another_job_does_not_stand_for_a_silent_failing_step(tmp_path: Path) -> None:
    # Another job's findings (a passing lint job) say nothing of this job's failure: only its own lines are read.
    quiet = _github([("make release", ["packaging 3 files", "done"], 2)])
    lines = LINT_JOB + quiet
    d = _diagnose(tmp_path, "\n".join(lines) + "\n")
    assert not any(f.causal and f.rule.startswith("shellcheck") for f in d.failures)
    assert all(n > len(LINT_JOB) for n in d.error_lines)


# zig's real output for a compile error inside `zig test`: no rule knows zig.
ZIG = _github([("zig test src/mathx.zig", [
    "src/mathx.zig:12:12: error: use of undeclared identifier 'totl'",
    "    return totl;",
    "           ^~~~"], 1)])
# R CMD INSTALL with an Imports entry that is not installed (real output).
R_DEP = _github([("R CMD INSTALL --library=/tmp/rlib .", [
    "* installing *source* package \u2018tidystats\u2019 ...",
    "ERROR: dependency \u2018yamlreader\u2019 is not available for package \u2018tidystats\u2019",
    "* removing \u2018/tmp/rlib/tidystats\u2019"], 1)])


def test_a_compiler_style_diagnostic_of_an_unknown_language_is_a_build_failure(tmp_path: Path) -> None:
    d = _diagnose(tmp_path, "\n".join(ZIG) + "\n")
    assert d.category == "build"
    evidence = next(x for x in d.decisions if x.get("decision") == "category")["evidence"]
    assert any("compiler-style" in e["detail"] for e in evidence)


def test_a_package_that_is_not_available_is_a_dependency_failure(tmp_path: Path) -> None:
    d = _diagnose(tmp_path, "\n".join(R_DEP) + "\n")
    assert d.category == "dependency"


def _jenkins(stages: list[tuple[str, list[str]]], failed: int) -> str:
    out = ["Started by user admin", "[Pipeline] Start of Pipeline", "[Pipeline] node"]
    for i, (name, lines) in enumerate(stages):
        out += ["[Pipeline] stage", f"[Pipeline] {{ ({name})"]
        if i > failed:
            out += [f'Stage "{name}" skipped due to earlier failure(s)', "[Pipeline] }"]
            continue
        out += ["[Pipeline] sh", *lines, "[Pipeline] }"]
    out += ["[Pipeline] // node", "[Pipeline] End of Pipeline", "ERROR: script returned exit code 1",
            "Finished: FAILURE"]
    return "\n".join(out) + "\n"


def test_jenkins_failing_stage_bounds_the_region(tmp_path: Path) -> None:
    # A version probe piped to `head` dies of a broken pipe in a stage that passed; the next stage fails.
    probe = ["+ tool --version | head -n 1", "tool 2.19", "Traceback (most recent call last):",
             '  File "/usr/lib/python3/dist-packages/tool/cli.py", line 12, in main', "    print(version)",
             "BrokenPipeError: [Errno 32] Broken pipe"]
    failing = ["+ python -m pytest -q", *DISK_THEN_TEST.splitlines()[6:]]
    text = _jenkins([("Version", probe), ("Test", failing), ("Deploy", [])], failed=1)
    d = _diagnose(tmp_path, text)
    assert d.category == "test"
    broken = next(i for i, t in enumerate(text.splitlines(), 1) if t.startswith("BrokenPipeError"))
    assert broken not in d.error_lines
    assert d.region is not None and d.region[0] < min(d.error_lines)


def test_words_inside_paths_are_not_read_as_error_words() -> None:
    from repopilot.ci.locator import feature_rows

    rows = feature_rows({10: "Output:  /builds/group/robot-failed-check/results/output.xml",
                         11: "Discount Is Applied        | FAIL |"}, end=12, shape="gitlab")
    assert rows[10]["err_word"] == 0.0
    assert rows[11]["err_word"] == 1.0


def test_a_stack_frame_with_a_caret_is_not_a_compiler_diagnostic(tmp_path: Path) -> None:
    frames = _github([("zig test src/mathx.zig", [
        "2/2 mathx.test.sum of a slice...expected 10, found 14",
        "FAIL (TestExpectedEqual)",
        "/home/runner/work/p/p/src/mathx.zig:22:5: 0x124ef47 in test.sum of a slice (mathx.zig)",
        "    try std.testing.expectEqual(@as(i32, 10), sum(&xs));",
        "    ^",
        "0 passed; 0 skipped; 1 failed."], 1)])
    d = _diagnose(tmp_path, "\n".join(frames) + "\n")
    evidence = next(x for x in d.decisions if x.get("decision") == "category")["evidence"]
    assert not any("compiler-style" in e["detail"] for e in evidence)
    assert d.category == "test"


def test_the_locator_does_not_choose_a_steps_script_header(tmp_path: Path) -> None:
    lines = _github([("Rscript -e 'testthat::test_dir(\"tests\", stop_on_failure = TRUE)'", [
        "Failure ('test-stats.R:8'): median of an even count",
        "med(c(1, 2, 3, 4)) not equal to 2.5.",
        "[ FAIL 1 | WARN 0 | SKIP 0 | PASS 1 ]",
        "Error: Test failures",
        "Execution halted"], 1)])
    d = _diagnose(tmp_path, "\n".join(lines) + "\n")
    header = next(i for i, t in enumerate(lines, 1) if "stop_on_failure" in t and "##[group]" not in t)
    assert header not in d.error_lines
    failure = next(i for i, t in enumerate(lines, 1) if "Failure ('test-stats.R:8')" in t)
    assert failure in d.error_lines
