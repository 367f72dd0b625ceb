"""Which lines of an error's block are causal, whatever the tool: the runtime's stack frames are context, the values
an assertion printed under its message are causal, blank/ruled lines and zero counts never are, and a tool that
reports through a list of offenders has its header and items read."""

from __future__ import annotations

from pathlib import Path

from repopilot.ci.causal_lines import filler, foreign_frames, listed_offenders, value_lines
from repopilot.ci.engine import diagnose_input
from repopilot.ci.sources import open_sources


def _texts(lines: list[str]) -> dict[int, str]:
    return {i: t for i, t in enumerate(lines, 1)}


def test_frames_of_the_runtime_and_libraries_are_foreign_the_projects_are_not() -> None:
    lines = [
        'Traceback (most recent call last):',
        '  File "/home/runner/work/app/app/src/calc.py", line 4, in div',
        '  File "/usr/lib/python3.11/unittest/case.py", line 57, in testPartExecutor',
        '  File "/opt/venv/lib/python3.11/site-packages/_pytest/runner.py", line 341, in from_call',
        "\tat com.acme.invoice.Money.parse(Money.java:27)",
        "\tat org.junit.runners.ParentRunner.run(ParentRunner.java:413)",
        "    at Object.<anonymous> (test/cart.test.js:5:56)",
        "    at _getError (node_modules/jest-circus/build/jestAdapterInit.js:1985:12)",
        "\t/usr/lib/go-1.19/src/testing/testing.go:1446 +0x10b",
        "\t/home/runner/work/ledger/ledger/big_test.go:8 +0x92",
        '6: ((LAMBDA NIL :IN "/var/jenkins/workspace/cart/tests/cart-test.lisp"))',
        "7: (SB-INT:SIMPLE-EVAL-IN-LEXENV (ASSERT (= (CART-TOTAL (QUOTE (3 4))) 7)) #<NULL-LEXENV>)",
        '2: (INVOKE-DEBUGGER #<SIMPLE-ERROR "~@<The assertion ~S failed~:[.~:; ~',
        "                                           with ~:*~{~S = ~S~^, ~}.~]~:@>\" {10013BB1B3}>)",
        "AssertionError: assert 4 == 5",
        "   3: core::panicking::panic_fmt",
        "   4: ledger::tests::sums",
        "       (ex_unit 1.14.0) lib/ex_unit/runner.ex:512: ExUnit.Runner.exec_test/1",
        "#1 /builds/acme/shop/vendor/phpunit/phpunit/src/Framework/TestCase.php(1608): Cart->total()",
        "/root/.pyenv/versions/3.11.7/lib/python3.11/pathlib.py:1044: FileNotFoundError",
        "tests/conftest.py:9: ",
    ]
    texts = _texts(lines)
    assert foreign_frames(texts, texts) == {3, 4, 6, 8, 9, 12, 13, 14, 16, 18, 19, 20}


def test_the_values_under_an_assertion_are_causal() -> None:
    tcl = _texts(["==== words-1.1 counts words FAILED", "---- Result was:", "4",
                  "---- Result should have been (exact matching):", "3", "==== words-1.1 FAILED"])
    assert value_lines([1, 2], tcl) == {3, 4, 5}
    rust = _texts(["assertion `left == right` failed", "  left: 14", " right: 6", "note: run with RUST_BACKTRACE=1"])
    assert value_lines([1], rust) == {2, 3}
    r = _texts(["med(c(1, 2, 3, 4)) not equal to 2.5.", "1/1 mismatches", "[1] 2 - 2.5 == -0.5", "\u2500" * 20])
    assert value_lines([1, 2], r) == {3}
    go = _texts(["--- FAIL: ExampleParse (0.00s)", "got:", "3.10", "-0.-7", "want:", "3.10", "-0.07", "FAIL"])
    assert value_lines([1], go) == {2, 3, 4, 5, 6, 7}
    # Not an assertion: the line after a message is not taken for a value.
    assert value_lines([1], _texts(["error: build failed", "make: *** [all] Error 1"])) == set()


def test_layout_lines_zero_counts_and_advice_are_filler_but_a_zero_value_is_not() -> None:
    for text in ("", "   ", "\u2500" * 30, "=====", "* Missing licenses: 0", "Read errors: 0", "0 failures",
                 "[ERROR] ", "[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.",
                 "> Run with --stacktrace option to get the stack trace.", "travis_time:start:f54689fc",
                 "$ make CC=gcc", "+ ./run-tests.sh", "[Pipeline] sh", "##[group]Run make",
                 "Tests:       1 failed, 12 passed, 13 total",
                 "Found 2 errors in the same file, starting at: src/a.ts:3",
                 "[ FAIL 1 | WARN 0 | SKIP 0 | PASS 1 ]", "FAILED (failures=1)", "3 examples, 1 failure",
                 "test result: ok. 6 passed; 0 failed; 0 ignored", "make: *** [Makefile:8: calc] Error 1",
                 "error: test failed, to rerun pass `-p stock --test flows`", "failures:", "Failures:"):
        assert filler(text), text
    # A compiler's caret under the quoted source is part of the error.
    # ... and so is a diff's added line in an assertion (not a shell's `+ cmd` echo).
    for text in ("Expected: 0", "  left: 0", "Tests run: 5, Failures: 1", "error: x is 0 here", "      ~~~~~",
                 "          ^", "+   \"total\": \"4.50\",", "+   total: '$2.5'",
                 "make: *** No rule to make target 'src/history.o', needed by 'calc'.  Stop."):
        assert not filler(text), text


def test_a_problem_header_and_its_items_are_listed_but_not_an_install_list() -> None:
    texts = _texts(["# MISSING COPYRIGHT AND LICENSING INFORMATION", "",
                    "The following files have no copyright and licensing information:", "* src/tax.py",
                    "* src/cart.py", "", "The following NEW packages will be installed:", "  libfoo.so"])
    assert listed_offenders(texts, 1, 8) == {3, 4, 5}


def test_an_unknown_tools_list_of_offenders_is_diagnosed(tmp_path: Path) -> None:
    log = ["+ lint-licences", "# MISSING COPYRIGHT AND LICENSING INFORMATION", "",
           "The following files have no copyright and licensing information:", "* src/tax.py", "", "# SUMMARY", "",
           "* Bad licenses: 0", "* Missing licenses: 0", "* Read errors: 0",
           "Unfortunately, your project is not compliant with the specification :-(",
           "Build step 'Execute shell' marked build as failure", "Finished: FAILURE"]
    path = tmp_path / "job.log"
    path.write_text("\n".join(log) + "\n")
    d = diagnose_input(open_sources(str(path))[0]).diagnosis
    assert {4, 5} <= set(d.error_lines)
    assert not {9, 10, 11} & set(d.error_lines)


def test_ci_systems_exit_lines_are_trailers_not_causes() -> None:
    from repopilot.ci.diagnosis import is_trailer

    for text in ("##[error]Bash exited with code '1'.", "Cmd.exe exited with code '2'.",
                 "##[error]Process completed with exit code 1.", "ERROR: Job failed: exit code 1"):
        assert is_trailer(text), text
    assert not is_trailer("error: the compiler exited with code 1 because src/a.c does not parse")


def test_a_frame_behind_a_level_tag_is_read_as_a_frame() -> None:
    # Maven prints its own stack under `[ERROR] `: the build tool's frames are foreign, the project's are not.
    texts = {1: "[ERROR] org.apache.maven.surefire.booter.SurefireBooterForkException: The forked VM terminated",
             2: "[ERROR] \tat org.apache.maven.plugin.surefire.booterclient.ForkStarter.fork(ForkStarter.java:669)",
             3: "[ERROR] \tat com.acme.invoice.TaxTable.load(TaxTable.java:12)",
             4: "[ERROR] \tat org.codehaus.plexus.classworlds.launcher.Launcher.main(Launcher.java:348)"}
    assert foreign_frames(texts, texts) == {2, 4}


def test_a_header_the_pattern_takes_ends_in_a_colon() -> None:
    # listed_offenders tries the header's pattern only on a line that ends in `:` once trailing spaces are gone.
    from repopilot.ci.causal_lines import _LIST_HEADER

    root = Path(__file__).resolve().parents[2]
    lines = [line for d in ("examples", "tests/ci/rule_logs") for log in sorted((root / d).glob("*.log"))
             for line in log.read_text(errors="replace").splitlines()]
    headers = [f"The following files have no licence information:{end}"
               for end in ("", " ", "\t", "\u2003", "\u3000 \n", "\n", "\x1c", "\x85")]
    taken = [t for t in lines + headers if _LIST_HEADER.match(t)]
    assert len(taken) >= len(headers)
    assert all(t.rstrip().endswith(":") for t in taken)
    assert not _LIST_HEADER.match("The following files have no licence information: x")
