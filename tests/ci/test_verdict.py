"""The category from what failed (the step's command, Maven goals, Gradle tasks, exit codes, the rules), with one
confidence: the one printed is the one that decided; weak or conflicting evidence says `unknown`."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest

from repopilot.ci.catalog import Catalog, load_catalog
from repopilot.ci.engine import diagnose_input, to_report
from repopilot.ci.scanner import Scanner
from repopilot.ci.sources import open_sources
from repopilot.ci.verdict import SAY_UNKNOWN, command_category

# The case: a clean pytest log that came out `unknown` while its failure printed confidence 0.90.
PYTEST = """\
============================= test session starts ==============================
platform linux -- Python 3.11.9, pytest-8.3.3, pluggy-1.5.0
collected 12 items

tests/test_io.py .....F......                                            [100%]

=================================== FAILURES ===================================
________________________________ test_roundtrip ________________________________

    def test_roundtrip():
>       assert load(dump({"a": 1})) == {"a": 2}
E       AssertionError

tests/test_io.py:7: AssertionError
=========================== short test summary info ============================
FAILED tests/test_io.py::test_roundtrip - AssertionError
========================= 1 failed, 11 passed in 0.05s =========================
"""
TS = "2024-05-01T10:00:00.0000000Z "


def _shaped(shape: str) -> str:
    if shape == "plain":
        return PYTEST
    head = [f"{TS}##[group]Run pytest -q"]
    if shape == "github-closed":
        head += [f"{TS}pytest -q", f"{TS}shell: /usr/bin/bash -e {{0}}", f"{TS}##[endgroup]"]
    body = [TS + line for line in PYTEST.splitlines()]
    return "\n".join([*head, *body, f"{TS}##[error]Process completed with exit code 1."]) + "\n"


def _diagnose(tmp_path: Path, text: str, scanner: Scanner | None = None) -> dict:  # type: ignore[type-arg]
    path = tmp_path / "fail.log"
    path.write_text(text)
    return to_report(diagnose_input(open_sources(str(path))[0], scanner=scanner)).contract()


@pytest.mark.parametrize("shape", ["plain", "github-open-group", "github-closed"])
def test_a_clean_pytest_failure_is_a_test_failure_with_one_good_confidence(tmp_path: Path, shape: str) -> None:
    r = _diagnose(tmp_path, _shaped(shape))
    assert r["category"] == "test"
    assert r["decided_by"] == "rules"
    assert r["confident"] is True
    assert r["confidence"] >= 0.8
    # The failing test's lines are the causal lines, wherever the log came from.
    texts = [line["text"] for f in r["failures"] if f["causal"] for line in f["lines"]]
    assert any("FAILED tests/test_io.py::test_roundtrip" in t for t in texts)


def test_the_printed_confidence_is_the_deciding_one(tmp_path: Path) -> None:
    from repopilot.ci.report import DiagnosisReport
    from repopilot.cli.render import render_text

    r = _diagnose(tmp_path, PYTEST)
    head = render_text([DiagnosisReport.model_validate(r)]).splitlines()[0]
    assert f"confidence {r['confidence']:.2f}" in head
    assert "test (decided by rules" in head


@pytest.mark.parametrize(("command", "category"), [
    ("npm run lint", "lint"),
    ("cargo fmt --check", "lint"),
    ("tox -e typecheck", "typecheck"),
    ("mypy src", "typecheck"),
    ("./build/io_test --gtest_brief", "test"),
    ("python -m pytest -q tests", "test"),
    ("cmake --build build -j2", "build"),
    ("npm ci", "dependency"),
    ("black --check .", "lint"),
    ("mkdir -p gen && protoc -I proto --python_out=gen proto/shop/api/order.proto", "build"),
    ("fpc -Fusrc -FEbuild tests/testledger.pas", "build"),
    ("nim c -r src/main.nim", "build"),
    ("cobc -x -o build/payroll src/payroll.cob", "build"),
    # A linter named for it whatever its prefix, and a check that a generator or formatter left nothing to commit.
    ("echo 'Fixed it.' | npx commitlint", "lint"),
    ("go mod tidy && git diff --exit-code go.mod go.sum", "lint"),
    # A syntax check by the interpreter itself, whatever flags come first.
    ("perl -Ilib -wc lib/Shop/Cart.pm", "lint"),
    ("for f in lib/*.rb; do ruby -wc $f || exit 1; done", "lint"),
    # doctest runs the documentation's examples: a test (the guideline), not a documentation check.
    ("python -m doctest -v src/shop/pricing.py", "test"),
    # A checker of one kind of file is a lint check; a type checker stays a type check.
    ("podchecker lib/Shop/Cart.pm", "lint"),
    ("twine check dist/*", "lint"),
    ("typechecker src", "typecheck"),
])
def test_commands_say_what_they_check(command: str, category: str) -> None:
    got = command_category(command)
    assert got is not None and got[0] == category


def test_a_chain_of_different_checks_is_weak_evidence() -> None:
    # A build, then the tests it built: which of the two failed is for the output to say.
    got = command_category("ghc --make -isrc -o build/spec test/Spec.hs && ./build/spec")
    assert got is not None and got[1] < SAY_UNKNOWN
    # A chain of one purpose stays strong.
    got = command_category("mkdir -p build && cargo clippy -- -D warnings")
    assert got is not None and got[0] == "lint" and got[1] >= 0.7


def test_umbrella_commands_are_weak_evidence() -> None:
    got = command_category("make")
    assert got is not None and got[1] < 0.5
    assert command_category("echo hello") is None


@lru_cache(maxsize=4)
def _without(ecosystem: str) -> Scanner:
    full = load_catalog(exclude=[ecosystem])
    return Scanner(Catalog(full.version, tuple(r for r in full.rules if r.ecosystem != ecosystem)))


MAVEN_CHECKSTYLE = """\
[INFO] --- maven-checkstyle-plugin:3.3.1:check (validate) @ demo ---
[ERROR] src/main/java/demo/App.java:[12,5] (whitespace) WhitespaceAround: '=' is not preceded with whitespace.
[INFO] BUILD FAILURE
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-checkstyle-plugin:3.3.1:check (validate) \
on project demo: You have 1 Checkstyle violation. -> [Help 1]
"""
GRADLE_DETEKT = """\
> Task :app:detekt FAILED
/home/runner/work/demo/app/src/main/kotlin/App.kt:3:1: Unexpected blank line [NoBlankLines]

FAILURE: Build failed with an exception.

* What went wrong:
Execution failed for task ':app:detekt'.
> Analysis failed with 1 weighted issues.
"""


@pytest.mark.parametrize(("text", "category", "source"), [
    (MAVEN_CHECKSTYLE, "lint", "goal"), (GRADLE_DETEKT, "lint", "task")])
def test_maven_goals_and_gradle_tasks_name_the_check_without_any_java_rule(
        tmp_path: Path, text: str, category: str, source: str) -> None:
    r = _diagnose(tmp_path, text, _without("java"))
    assert all(not f["rule"].startswith(("maven.", "gradle.", "checkstyle.")) for f in r["failures"])
    assert r["category"] == category
    diag = diagnose_input(open_sources(str(tmp_path / "fail.log"))[0], scanner=_without("java")).diagnosis
    decision = next(d for d in diag.decisions if d.get("decision") == "category")
    assert any(e["source"] == source and e["category"] == category for e in decision["evidence"])


def _enforcer(rule: str, message: str) -> str:
    return (f"[INFO] --- maven-enforcer-plugin:3.1.0:enforce (enforce) @ demo ---\n"
            f"[ERROR] Rule 0: org.apache.maven.plugins.enforcer.{rule} failed with message:\n"
            f"{message}\n[INFO] BUILD FAILURE\n"
            "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-enforcer-plugin:3.1.0:enforce (enforce) on "
            "project demo: Some Enforcer rules have failed. Look above for specific messages explaining why the rule "
            "failed. -> [Help 1]\n")


@pytest.mark.parametrize(("rule", "message", "category"), [
    ("BannedDependencies", "Found Banned Dependency: commons-logging:commons-logging:jar:1.2", "dependency"),
    ("DependencyConvergence", "Dependency convergence error for org.slf4j:slf4j-api:1.7.36", "dependency"),
    ("RequireJavaVersion", "Detected JDK Version: 17.0.9 is not in the allowed range [21,).", "config"),
    ("RequireMavenVersion", "Detected Maven Version: 3.8.7 is not in the allowed range [3.9,).", "config")])
def test_the_enforcer_fails_for_what_its_rule_checks(tmp_path: Path, rule: str, message: str, category: str) -> None:
    r = _diagnose(tmp_path, _enforcer(rule, message), _without("java"))
    assert r["category"] == category


def test_a_registry_answering_503_to_an_install_is_the_network(tmp_path: Path) -> None:
    text = ("+ bundle install --retry 1\nFetching source index from http://gems.internal.example/\n\n"
            "Retrying fetcher due to error (2/2): Bundler::HTTPError Could not fetch specs from "
            "http://gems.internal.example/ due to underlying error <bad response Service Unavailable 503 "
            "(http://gems.internal.example/specs.4.8.gz)>\n")
    r = _diagnose(tmp_path, text, _without("ruby"))
    assert r["category"] == "network"


BUILD_SCRIPT_PANIC = """\
+ cargo build --workspace --locked
   Compiling ledger v0.1.0 (/builds/acme/ledger)
error: failed to run custom build command for `ledger v0.1.0 (/builds/acme/ledger)`
  thread 'main' panicked at build.rs:7:9:
  assertion failed: schema.exists()
"""
NIM_RUN = """\
+ nim c --hints:off -o:build/tconf -r tests/tconf
[Suite] conf parsing
    /builds/acme/conf/tests/tconf.nim(9, 18): Check failed: parse("a=1").len == 2
  [FAILED] two keys
"""
COVERAGE_GATE = """\
+ coverage report -m --fail-under=85
Name                   Stmts   Miss  Cover   Missing
TOTAL                     32     17    47%
Coverage failure: total of 47 is less than fail-under=85
"""
MEMORY_ERROR = """\
+ python scripts/build_index.py
Traceback (most recent call last):
  File "/builds/acme/app/scripts/build_index.py", line 9, in <module>
    table = [0] * (10 ** 10)
MemoryError
"""


@pytest.mark.parametrize(("text", "ecosystem", "category"), [
    # A build tool by name runs no tests: an assertion in its build script is the build failing.
    (BUILD_SCRIPT_PANIC, "rust", "build"),
    # A compiler told to run what it built checks whatever the program does (here a test suite).
    (NIM_RUN, "nim", "test"),
    (COVERAGE_GATE, "python", "test"),
    (MEMORY_ERROR, "python", "infrastructure"),
    ("+ cargo test --locked\n     Running unittests src/lib.rs\nmemory allocation of 1342177280 bytes failed\n"
     "error: test failed, to rerun pass `--lib`\n", "rust", "infrastructure"),
    ("+ cargo build --locked\n    Updating crates.io index\nerror: cannot update the lock file "
     "/builds/acme/stock/Cargo.lock because --locked was passed to prevent this\n", "rust", "dependency"),
    # A compiler's warnings before the tests ran do not make a failed test a build failure.
    ("+ cargo test --locked\nwarning: unused variable: `factor`\n  --> crates/stock/src/main.rs:27:9\n   |\n"
     "27 |     let factor = 2;\n   |         ^^^^^^ help: if this is intentional, prefix it with an underscore\n\n"
     "running 3 tests\ntest quantities_from_file ... FAILED\n\nfailures:\n\n---- quantities_from_file stdout ----\n"
     "Error: ParseIntError { kind: InvalidDigit }\n\ntest result: FAILED. 2 passed; 1 failed; 0 ignored\n",
     "rust", "test"),
    # A test that reads a missing fixture failed as a test, not as a build.
    ("+ pytest -q\nE       FileNotFoundError: [Errno 2] No such file or directory: 'tests/data/prices.json'\n"
     "ERROR tests/test_report.py::test_total - FileNotFoundError: [Errno 2] No such file or directory\n"
     "1 error in 0.05s\n", "python", "test")])
def test_what_the_step_ran_and_what_it_printed_together(tmp_path: Path, text: str, ecosystem: str,
                                                        category: str) -> None:
    r = _diagnose(tmp_path, text, _without(ecosystem))
    assert r["category"] == category


def test_exit_137_is_the_machine_when_nothing_else_is_known(tmp_path: Path) -> None:
    text = "\n".join(TS + t for t in ["##[group]Run ./shard.sh", "./shard.sh", "##[endgroup]", "shard 1 of 4",
                                      "shard 2 of 4", "##[error]Process completed with exit code 137."]) + "\n"
    r = _diagnose(tmp_path, text, _without("ci"))
    assert r["category"] == "infrastructure"


def test_conflicting_weak_evidence_says_unknown_with_a_low_confidence(tmp_path: Path) -> None:
    # A lint step whose only output is one line that reads like a failing test: no rule, two purposes.
    text = "$ npm run lint\nexpected 3 but got 4\nsomething went wrong\n"
    r = _diagnose(tmp_path, text)
    assert r["category"] in ("lint", "unknown")
    if r["category"] == "unknown":
        assert r["confidence"] < SAY_UNKNOWN
    r = _diagnose(tmp_path, "all done\n")
    assert r["category"] == "unknown" and r["confidence"] < SAY_UNKNOWN and r["decided_by"] == "none"


# Test runners no rule knows, their closing counts in their own words (HUnit, Check, tcltest, the JUnit console).
@pytest.mark.parametrize("summary", [
    "Cases: 5  Tried: 5  Errors: 0  Failures: 2",
    "75%: Checks: 4, Failures: 1, Errors: 0",
    "all.tcl:\tTotal\t3\tPassed\t2\tSkipped\t0\tFailed\t1",
    "[         2 tests failed          ]",
])
def test_a_test_runners_closing_count_says_test(tmp_path: Path, summary: str) -> None:
    # A build and its test binary in one step: the command alone cannot say which of the two failed.
    text = "\n".join(["$ ghc --make -o build/spec test/Spec.hs && ./build/spec", "[1 of 1] Compiling Main",
                      "Linking build/spec ...", "### Failure in: 1:total", "expected: 7", " but got: 8", summary,
                      "ERROR: Job failed: exit code 1"]) + "\n"
    r = _diagnose(tmp_path, text, _without("haskell"))
    assert r["category"] == "test"


def test_no_failure_in_the_count_is_no_test_evidence(tmp_path: Path) -> None:
    text = "$ ./run-checks.sh\nCases: 5  Tried: 5  Errors: 0  Failures: 0\nsomething went wrong\n"
    diag = diagnose_input(open_sources(str(_write(tmp_path, text)))[0]).diagnosis
    decision = next(d for d in diag.decisions if d.get("decision") == "category")
    assert not any(e["detail"].startswith("a test runner's count") for e in decision["evidence"])


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "fail.log"
    path.write_text(text)
    return path


# A job whose setup is wrong (the runtime it asks for is not on the runner, a build file its tool cannot evaluate, a
# test filter that matched nothing): `config` (the guideline), whatever the step ran, and with no rule of the tool.
@pytest.mark.parametrize(("ecosystem", "text"), [
    ("python", "+ python -m pip install .\nProcessing /srv/ci/shop\nERROR: Package 'shop' requires a different "
               "Python: 3.11.4 not in '>=3.13'\n"),
    ("javascript", "+ npm ci\nnpm error code EBADENGINE\nnpm error engine Unsupported engine\nnpm error notsup "
                   'Required: {"node":">=22"}\n'),
    ("ruby", "+ bundle install\nYour Ruby version is 3.1.2, but your Gemfile specified 3.3.0\n"),
    ("java", "+ mvn -B compile\n[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0:"
             "compile (default-compile) on project shop: Fatal error compiling: error: release version 21 not "
             "supported -> [Help 1]\n"),
    ("java", "+ ./gradlew build\n\nFAILURE: Build failed with an exception.\n\n* Where:\nBuild file "
             "'/srv/ci/shop/build.gradle' line: 12\n\n* What went wrong:\nA problem occurred evaluating root "
             "project 'shop'.\n> Could not find method implementaton() for arguments [x] on object of type "
             "DefaultDependencyHandler.\n"),
    ("python", "+ tox -e py38\npy38: skipped because could not find python interpreter matching any of the specs "
               "py38\n  py38: SKIP (0.01 seconds)\n  evaluation failed :( (0.05 seconds)\n"),
])
def test_a_setup_that_is_wrong_is_config_whatever_the_step_ran(tmp_path: Path, ecosystem: str, text: str) -> None:
    r = _diagnose(tmp_path, text, _without(ecosystem))
    assert r["category"] == "config"


@pytest.mark.parametrize(("ecosystem", "text"), [
    ("java", "+ ./gradlew build\n> Task :compileJava FAILED\n\nFAILURE: Build failed with an exception.\n\n* What "
             "went wrong:\nExecution failed for task ':compileJava'.\n> Could not resolve all files for configuration "
             "':compileClasspath'.\n   > Could not find com.acme:ledger-core:2.4.1.\n"),
    ("cpp", "+ ./configure\nchecking for JSON... no\nconfigure: error: Package requirements (jansson >= 2.13) were not "
            "met:\n\nPackage 'jansson', required by 'virtual:world', not found\n"),
])
def test_a_resolver_that_cannot_find_a_package_is_dependency(tmp_path: Path, ecosystem: str, text: str) -> None:
    r = _diagnose(tmp_path, text, _without(ecosystem))
    assert r["category"] == "dependency"


def test_an_error_in_a_fixture_is_a_test_failure(tmp_path: Path) -> None:
    text = ("+ pytest -q\n.E\n==================================== ERRORS ====================================\n"
            "_________________ ERROR at teardown of test_scratch _________________\n\n"
            "    @pytest.fixture\n    def scratch(tmp_path):\n        yield tmp_path\n"
            ">       (tmp_path / 'x').unlink()\n"
            "E       FileNotFoundError: [Errno 2] No such file or directory: '/tmp/x'\n\n"
            "tests/conftest.py:9: FileNotFoundError\n1 passed, 1 error in 0.03s\n")
    r = _diagnose(tmp_path, text, _without("python"))
    assert r["category"] == "test"


@pytest.mark.parametrize("trailer", ["##[error]Process completed with exit code 127.",
                                     "ERROR: Job failed: exit code 127",
                                     'The command "./scripts/release.sh" exited with 127.'])
def test_exit_127_says_the_command_is_not_there(tmp_path: Path, trailer: str) -> None:
    # What the shell said is not a line any rule knows (a localised shell): the exit code speaks.
    text = f"+ ./scripts/release.sh\n./scripts/release.sh: Zeile 4: semver: Befehl nicht gefunden\n{trailer}\n"
    r = _diagnose(tmp_path, text)
    assert r["category"] == "config"
    diag = diagnose_input(open_sources(str(tmp_path / "fail.log"))[0]).diagnosis
    decision = next(d for d in diag.decisions if d.get("decision") == "category")
    assert any(e["source"] == "exit-code" and e["category"] == "config" for e in decision["evidence"])


def test_an_umbrella_goal_does_not_contradict_what_its_output_says(tmp_path: Path) -> None:
    """maven-antrun-plugin runs whatever Ant task the build names: its goal is weak evidence of a build, and a
    checkstyle report under it says what failed."""
    lines = "".join(f"[ERROR] [checkstyle] [ERROR] /srv/ci/shop/src/main/java/shop/Cart.java:{n}:9: '{n}' is a magic "
                    "number. [MagicNumber]\n" for n in (11, 14, 19))
    text = ("[INFO] --- maven-antrun-plugin:3.1.0:run (checkstyle) @ shop ---\n" + lines +
            "[INFO] BUILD FAILURE\n[ERROR] Failed to execute goal org.apache.maven.plugins:maven-antrun-plugin:3.1.0:"
            "run (checkstyle) on project shop: An Ant BuildException has occured: Got 3 errors and 0 warnings. "
            "-> [Help 1]\n")
    r = _diagnose(tmp_path, text, _without("java"))
    assert r["category"] == "lint"


@pytest.mark.parametrize(("command", "category"), [
    # GNU Coding Standards: `make check` runs the package's self-tests; automake's own recursion targets say nothing.
    ("make check -j2", "test"),
    ("check-TESTS", "test"),
    # A test class run by hand (JUnit's naming), not the jar it is read from.
    ("kotlin -cp build/shop.jar shop.CartTestKt", "test"),
    ("java -cp build/classes org.junit.runner.JUnitCore com.acme.InvoiceTest", "test"),
    ("bundle exec rake test", "test"),
    ("terraform init -input=false", "dependency"),
])
def test_conventions_of_build_tools_say_what_ran(command: str, category: str) -> None:
    got = command_category(command)
    assert got is not None and got[0] == category


def test_a_file_extension_is_not_a_command_word() -> None:
    assert command_category("check-am") is None
    got = command_category("ruby -Ilib bin/report.jar.rb")
    assert got is None or got[2] != "jar"


SUREFIRE_FORK_KILLED = """\
[INFO] --- maven-surefire-plugin:2.22.3:test (default-test) @ invoice ---
[INFO] Running com.acme.invoice.BulkImportTest
[INFO] Tests run: 7, Failures: 0, Errors: 0, Skipped: 0
[INFO] BUILD FAILURE
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:2.22.3:test (default-test) on \
project invoice: There are test failures.
[ERROR] The forked VM terminated without properly saying goodbye. VM crash or System.exit called?
[ERROR] Process Exit Code: 137
[ERROR] Crashed tests:
[ERROR] com.acme.invoice.BulkImportTest
"""
MAVEN_HEAP = """\
[INFO] --- maven-jar-plugin:3.3.0:jar (default-jar) @ invoice ---
[INFO] BUILD FAILURE
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-jar-plugin:3.3.0:jar (default-jar) on project invoice: \
Error assembling JAR: Problem creating jar: Execution exception: Java heap space -> [Help 1]
"""


@pytest.mark.parametrize("without", ["java", "none"])
@pytest.mark.parametrize("text", [SUREFIRE_FORK_KILLED, MAVEN_HEAP])
def test_the_machine_killing_a_step_outweighs_the_rule_that_read_its_failure(tmp_path: Path, text: str,
                                                                             without: str) -> None:
    r = _diagnose(tmp_path, text, _without(without))
    assert r["category"] == "infrastructure"


FLAKY_THEN_ASSERT = """\
+ pytest -q
tests/test_rates.py::test_remote_rates RERUN
E   ConnectionResetError: [Errno 104] Connection reset by peer
tests/test_rates.py::test_remote_rates PASSED
tests/test_invoice.py::test_gross FAILED
E       assert 112 == 121
FAILED tests/test_invoice.py::test_gross - assert 112 == 121
1 failed, 12 passed, 1 rerun in 0.31s
"""
R_CHECK_WARNING = """\
+ R CMD check --no-manual ledgr_0.2.0.tar.gz
* checking package dependencies ...Warning: unable to access index for repository https://cran.example/src/contrib:
  cannot open URL 'https://cran.example/src/contrib/PACKAGES'
 OK
* checking tests ...
  Running 'testthat.R'
 ERROR
  -- Failure ('test-balance.R:6'): balance includes refunds ----------------
  balance(c(10, -2, 5)) (`actual`) not equal to 13 (`expected`).
    `actual`: 15
  `expected`: 13
  Error: Test failures
"""


@pytest.mark.parametrize(("text", "ecosystem"), [(FLAKY_THEN_ASSERT, "none"), (R_CHECK_WARNING, "r")])
def test_network_words_beside_a_failed_assertion_do_not_make_it_network(tmp_path: Path, text: str,
                                                                        ecosystem: str) -> None:
    r = _diagnose(tmp_path, text, _without(ecosystem))
    assert r["category"] == "test"


def test_a_network_failure_printed_before_a_missing_package_explains_it(tmp_path: Path) -> None:
    text = ("+ Rscript ci/deps.R\nWarning: unable to access index for repository https://cran.mirror.invalid/src/contrib:\n"
            "  cannot open URL 'https://cran.mirror.invalid/src/contrib/PACKAGES'\nWarning message:\n"
            "package 'yamlreader' is not available for this version of R\n+ Rscript ci/report.R\n"
            "Error in library(yamlreader) : \n  there is no package called 'yamlreader'\nExecution halted\n")
    r = _diagnose(tmp_path, text, _without("r"))
    assert r["category"] == "network"
    assert 2 in r["error_lines"]


def test_make_failing_says_only_that_what_it_ran_failed(tmp_path: Path) -> None:
    # A testbench run through `make sim`: the values it compared say test; make's trailer does not say build.
    text = ("+ make sim\niverilog -g2012 -Wall -o build/tb tb/tb.v rtl/acc8.v\nvvp build/tb\n"
            "PASS: add\nFATAL: tb/tb.v:15: saturate: expected 255, got 0\n       Time: 36000 Scope: tb\n"
            "make: *** [Makefile:6: sim] Error 1\n")
    r = _diagnose(tmp_path, text, _without("none"))
    assert r["category"] == "test"


@pytest.mark.parametrize(("text", "category"), [
    ("+ clojure -M:test\nSyntax error compiling at (cart/core.clj:4:13).\n"
     "Unable to resolve symbol: itemz in this context\n", "build"),
    ("+ npx nyc --check-coverage npm test\n  12 passing (40ms)\n"
     "ERROR: Coverage for lines (71.5%) does not meet global threshold (80%)\n", "test"),
])
def test_what_the_words_of_the_failure_mean(tmp_path: Path, text: str, category: str) -> None:
    r = _diagnose(tmp_path, text, _without("none"))
    assert r["category"] in (category, "unknown")
    assert r["category"] != "dependency"


NOX_LINT = """\
+ nox --non-interactive
nox > Running session tests
nox > pytest -q
12 passed in 0.04s
nox > Session tests was successful in 1 seconds.
nox > Running session lint
nox > ruff check src tests
src/calc/summary.py:1:1: F401 [*] `os` imported but unused
Found 1 error.
nox > Command ruff check src tests failed with exit code 1
nox > Session lint failed.
"""
TOX_TYPES = """\
+ tox run
types: commands[0]> mypy src
src/shop/cart.py:9: error: Incompatible return value type (got "str", expected "int")  [return-value]
Found 1 error in 1 file (checked 3 source files)
types: exit 1 (0.41 seconds) /builds/acme/shop> mypy src pid=311
  py311: OK (2.10=setup[1.90]+cmd[0.20] seconds)
  types: FAIL code 1 (3.02=setup[2.61]+cmd[0.41] seconds)
  evaluation failed :( (5.20 seconds)
"""


@pytest.mark.parametrize(("text", "category"), [(NOX_LINT, "lint"), (TOX_TYPES, "typecheck")])
def test_a_session_runner_fails_for_the_session_that_failed(tmp_path: Path, text: str, category: str) -> None:
    # tox and nox run sessions of every purpose: the failed session and the command inside it decide.
    r = _diagnose(tmp_path, text, _without("python"))
    assert r["category"] == category


@pytest.mark.parametrize(("text", "category"), [
    # go test's own word that the package's tests did not compile (a compiler message, not a configuration's).
    ("+ go test ./...\n# example.com/ledger [example.com/ledger.test]\n"
     "ledger/ledger_test.go:12:46: unknown field 'When' in struct literal of type Entry\n"
     "FAIL\texample.com/ledger [build failed]\nFAIL\n", "build"),
    # An error at a line of the tool's configuration file.
    ("+ mypy shop_api\npyproject.toml:1: error: Error importing plugin \"pydantic.mypy\": No module named 'pydantic'"
     "  [misc]\nFound 1 error in 1 file (errors prevented further checking)\n", "config"),
    # npm's placeholder test script.
    ("+ npm test\n\n> shop@1.0.0 test\n> echo \"Error: no test specified\" && exit 1\n\nError: no test specified\n",
     "config"),
    # A failure for a dependency is the dependency's, whatever the tool could not do.
    ("+ mix test\nCould not find Hex, which is needed to build dependency :jason\n"
     "** (Mix) Could not find an SCM for dependency :jason from Cart.MixProject\n", "dependency"),
    ("+ meson setup builddir\nmeson.build:3:0: ERROR: Dependency \"jansson\" not found, tried pkgconfig and cmake\n",
     "dependency"),
])
def test_what_failed_read_from_the_failures_own_words(tmp_path: Path, text: str, category: str) -> None:
    r = _diagnose(tmp_path, text, _without("none"))
    assert r["category"] == category


def test_a_count_of_zero_failures_is_no_test_evidence(tmp_path: Path) -> None:
    text = ("+ bundle exec rake\n5 runs, 6 assertions, 0 failures, 0 errors, 0 skips\nrake aborted!\n"
            "NoMethodError: undefined method `lines' for nil:NilClass\n/srv/ci/app/Rakefile:17:in `block'\n")
    diag = diagnose_input(open_sources(str(_write(tmp_path, text)))[0], scanner=_without("ruby")).diagnosis
    decision = next(d for d in diag.decisions if d.get("decision") == "category")
    assert not any("runner's count" in e["detail"] for e in decision["evidence"])


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "fail.log"
    path.write_text(text)
    return path


JEST_GATE = """\
+ npm test

> shop@1.2.0 test
> jest --ci --coverage

PASS test/cart.test.js
PASS test/format.test.js
-----------|---------|----------|---------|---------|-------------------
File       | % Stmts | % Branch | % Funcs | % Lines | Uncovered Line #s
-----------|---------|----------|---------|---------|-------------------
All files  |   94.73 |       75 |     100 |     100 |
-----------|---------|----------|---------|---------|-------------------
Jest: Coverage for branches (75%) does not meet "global" threshold (90%)

Test Suites: 2 passed, 2 total
Tests:       9 passed, 9 total
Ran all test suites.
"""
GOFMT_LIST = """\
+ go mod download && go mod verify
all modules verified
+ test -z "$(gofmt -l . | tee /dev/stderr)"
ledger/ledger.go
money/money.go
"""


@pytest.mark.parametrize(("text", "ecosystem", "category", "said"), [
    (JEST_GATE, "javascript", "test", "does not meet"), (GOFMT_LIST, "go", "lint", "ledger/ledger.go")])
def test_a_check_that_printed_no_error_word_is_read_by_its_own_words(tmp_path: Path, text: str, ecosystem: str,
                                                                     category: str, said: str) -> None:
    # The locator's choice says nothing of a failure (`PASS …`, `all modules verified`): the failing step's lines
    # that state what its check found are the causal ones.
    r = _diagnose(tmp_path, text, _without(ecosystem))
    assert r["category"] == category
    lines = text.splitlines()
    assert any(said in lines[n - 1] for n in r["error_lines"])
    assert not any(lines[n - 1].startswith(("PASS", "all modules")) for n in r["error_lines"])


@pytest.mark.parametrize(("command", "category"), [
    # A flag's name is not what the command runs; a memory checker runs the tests under it.
    ("valgrind --error-exitcode=1 --leak-check=full ./history_test", "test"),
    ("npx nyc --check-coverage npm test", "test"),
])
def test_flags_are_not_commands(command: str, category: str) -> None:
    got = command_category(command)
    assert got is not None and got[0] == category


@pytest.mark.parametrize(("text", "category"), [
    # The CI system's own time limit.
    (f"{TS}##[group]Run pytest -q\n{TS}pytest -q\n{TS}##[endgroup]\n{TS}tests/test_a.py ........\n"
     f"{TS}##[error]The action has timed out.\n", "infrastructure"),
    # A registry's 502 under the resolver's "Could not resolve": the network, not the dependency.
    ("+ ./gradlew build\n* What went wrong:\nExecution failed for task ':compileJava'.\n"
     "> Could not resolve all files for configuration ':compileClasspath'.\n"
     "   > Could not resolve com.google.guava:guava:32.1.2-jre.\n"
     "         > Could not GET 'https://repo.maven.apache.org/maven2/com/google/guava/guava/32.1.2-jre/"
     "guava-32.1.2-jre.pom'. Received status code 502 from server: Bad Gateway\n", "network"),
])
def test_what_explains_a_failure_outranks_the_failure(tmp_path: Path, text: str, category: str) -> None:
    r = _diagnose(tmp_path, text)
    assert r["category"] == category


def test_a_targets_purpose_is_not_outweighed_by_make_saying_it_failed(tmp_path: Path) -> None:
    # make.target-failed says only that the recipe failed; the target `lint` says what it checked.
    text = ("+ make ci\nshellcheck scripts/*.sh\n\nIn scripts/deploy.sh line 4:\nrm -rf $TARGET/\n       ^-----^ "
            "SC2086 (info): Double quote to prevent globbing and word splitting.\n\n"
            "make: *** [Makefile:5: lint] Error 1\n")
    r = _diagnose(tmp_path, text, _without("shell"))
    assert r["category"] == "lint"


def test_every_command_echo_holds_the_substring_that_gates_its_search() -> None:
    import random

    from repopilot.ci.verdict import _ECHO

    rnd = random.Random(18)
    texts = ["$ make test", "+ npm ci", "x | $ go test ./...", "$", "+", "$  a", "a$ b", "|+ x", "\t+ y"]
    texts += ["".join(rnd.choice("$+| ab\t") for _ in range(rnd.randint(0, 12))) for _ in range(5000)]
    for text in texts:
        if _ECHO.search(text):
            assert "$ " in text or "+ " in text, text


def test_the_path_parts_removed_are_the_ones_the_first_form_removed() -> None:
    import random
    import re

    from repopilot.ci.verdict import _PATH_TOKEN

    first = re.compile(r"(?:\S*/)+(?=\S)")  # nested repeats, tried at every character of a word
    rnd = random.Random(20)
    root = Path(__file__).resolve().parents[2]
    lines = ["".join(rnd.choice("ab/ \t.\u00a0\u2003x//") for _ in range(rnd.randint(0, 16))) for _ in range(50000)]
    for log in sorted((root / "examples").glob("*.log")) + sorted((root / "tests/ci/rule_logs").glob("*.log")):
        lines += log.read_text(encoding="utf-8", errors="replace").splitlines()
    for line in lines:
        assert _PATH_TOKEN.sub("", line) == first.sub("", line), line
