"""The category from what failed, not only from what was printed, with one confidence that means what it says.

Evidence, each a (category, strength) with where it came from:
- the rules that fired (the best causal failure, others of other categories less);
- the failing step's command or name (`npm run lint`, `cargo fmt --check`, `tox -e typecheck`, a Jenkins stage),
  a Make target that failed, the Maven plugin and goal (`maven-checkstyle-plugin:…:check`), the Gradle task;
- the exit code's conventions (137: killed, usually out of memory; 143: terminated, usually a time limit; 127 and
  126: the shell found no such command, or could not run it);
- the words of the causal lines (assertions, compiler errors, `would reformat`, `Could not resolve host`).
Support for a category is the noisy-or of its evidence; the confidence is that support, lowered by the strongest
evidence for a category that cannot also be true (a lint command whose output reads like a test failure). Below
`SAY_UNKNOWN` the category is `unknown`: a low confidence rather than a confident wrong category.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from typing import Any

from .diagnosis import CONFIDENT, Diagnosis, is_trailer
from .fingerprint import CONSEQUENCES
from .locator import candidates, find_end
from .scanner import ScanResult
from .words import ascii_lower, may_hold

__all__ = ["SAY_UNKNOWN", "Evidence", "command_category", "decide_category", "gather_evidence"]

SAY_UNKNOWN = 0.5  # below this confidence the category is `unknown`
_RIVAL_WEIGHT = 0.7


@dataclass(frozen=True)
class Evidence:
    """One reason for a category, with its strength and where it came from."""

    category: str
    strength: float
    source: str  # rule | command | goal | task | exit-code | lines
    detail: str


# What a command runs, by the purpose of the check (the labelling guideline's categories). Specific tools first:
# their purpose is their name; umbrella words (test, build, check, ci) run many checks and count less.
_SPECIFIC: tuple[tuple[str, str], ...] = (
    ("config", r"\b(?:actionlint|check-jsonschema|kubeval|kubeconform|composer validate|terraform validate|"
               r"config validate|compose config|validate-\w+|\w+-validate)\b"),
    ("typecheck", r"\b(?:mypy|pyright|basedpyright|pytype|pyre|tsc|vue-tsc|flow(?: check)?|"
                  r"srb tc|sorbet|steep|phpstan|psalm|dialyzer|typecheck|type-check|typecheck\w*|types?:check|"
                  r"check-types|check:types|mix dialyzer|ty check)\b"),
    # `\w*lint` (commitlint, splint, yamllint); `git diff --exit-code` after a generator or formatter ran.
    ("lint", r"\b(?:\w*lint\w*|git diff --exit-code|git diff --quiet|eslint|tslint|stylelint|oxlint|"
             r"biome (?:check|lint|ci)|ruff(?! format\b(?!.*--check))|"
             r"flake8|pylint|pycodestyle|pydocstyle|bandit|black\b[^|;&]*--check|isort\b[^|;&]*--check|"
             r"prettier\b[^|;&]*--(?:check|list-different)|fmt\b[^|;&]*--check|format\b[^|;&]*--check|"
             r"--check-formatted|gofmt|goimports|golangci-lint|staticcheck|go vet|revive|rustfmt|clippy|"
             r"rubocop|standardrb|reek|checkstyle|spotless\w*|ktlint|detekt|pmd|spotbugs|shellcheck|shfmt|"
             r"yamllint|hadolint|markdownlint|mdl|codespell|cspell|typos|vale|editorconfig\w*|"
             r"clang-format|clang-tidy|cppcheck|cpplint|swiftlint|swiftformat|credo|phpcs|php-cs-fixer|pint|"
             r"scalafmt|scalastyle|hlint|ormolu|stylua|luacheck|selene|tflint|terraform fmt|sqlfluff|djlint|"
             r"htmlhint|jsonlint|taplo|nixfmt|alejandra|buf lint|protolint|licen[cs]e\w*|reuse lint|"
             r"pre-commit|style(?:check|guide)?|code-?style|dartfmt|dart format|dart analyze|mix format|"
             r"cargo fmt|deno (?:lint|fmt)|"
             r"perlcritic|perltidy|(?:perl|ruby)\b[^|;&]*\s-\w*c\b|php\b[^|;&]*\s-\w*l\b|(?:ba|z|da)?sh -\w*n\b|"
             r"py_compile|compileall|xref|"
             r"format:check|check:format|fmt:check|lint:\w+|docs?|rustdoc|cargo doc|javadoc|sphinx-build|"
             r"mkdocs build --strict|go mod tidy|mod tidy|\w+-check|"
             # automake's own recursion targets (`check-am`) are no check of their own; `check-TESTS` runs the tests.
             r"check-(?!(?:am|recursive|local|TESTS|DejaGNU|coverage)\b)\w+|"
             r"elm-format|cabal-fmt|zig fmt|gofumpt|xmllint|rstcheck|doc8|vulture|semgrep|rat|"
             r"tidy|htmlhint|html-validate|chktex|lacheck|mdformat|\w+fmt\b[^|;&]*--check|\w+format\b[^|;&]*--check|"
             r"reuse|addlicense|spell\w*|proselint|alex|textlint|write-good|"
             # A checker of one kind of file (podchecker, linkchecker, a `twine check` of the package's metadata).
             r"\w+checker|twine check)\b"),
    ("dependency", r"\b(?:npm (?:ci|install|i)|yarn install|yarn$|pnpm (?:install|i)|bun install|"
                   r"pip (?:install|download|sync)|pip-compile|pip-sync|poetry (?:install|lock|update)|"
                   r"uv (?:sync|lock|pip)|"
                   r"pipenv (?:install|sync|lock)|conda (?:env )?(?:create|install|update)|bundle install|bundle$|"
                   r"gem install|composer (?:install|update)|go mod (?:download|verify)|go get|"
                   r"cargo (?:fetch|update|generate-lockfile)|dotnet restore|nuget restore|mix deps\.get|"
                   r"dependency:\w+|apt(?:-get)? install|apk add|brew install|vcpkg install|conan install|"
                   r"swift package resolve|dart pub get|flutter pub get|pub get|cabal update|stack setup|"
                   r"rebar3 get-deps|opam install|renv::restore|Pkg\.instantiate|install-deps|deps|terraform init|"
                   r"tofu init|helm dep(?:endency)? (?:update|build))\b"),
    ("test", r"\b(?:coverage\b[^|;&]*--fail-under|--cov-fail-under|(?:g?make|ninja)\s+(?:-\S+\s+)*(?:check|test)\b|"
             # Coverage tools run the tests under them, and their gates are the test run's (the guideline).
             r"check-TESTS|check-coverage|nyc|c8|coverage (?:run|report)|"
             # A memory checker runs a program (the tests) under it: what it finds is the test run's (the guideline).
             r"valgrind|"
             r"pytest|py\.test|unittest|doctest|nose2?|tox|nox|jest|vitest|mocha|ava|jasmine|karma|tap|tape|"
             r"playwright|cypress|rspec|minitest|cucumber|behave|phpunit|pest|codeception|go test|gotestsum|"
             r"cargo (?:test|nextest)|ctest|dotnet test|mix test|exunit|busted|prove|bats|deno test|bun test|"
             r"swift test|stack test|cabal test|dune (?:test|runtest)|lein test|sbt test|gradle\w* test|"
             r"mvn\w* test|meson test|zig build test|julia .*Pkg\.test|R CMD check|testthat|elm-test|"
             r"flutter test|dart test|rake (?:test|spec)\w*|test\w*|spec\w*|e2e)\b"),
    ("build", r"\b(?:build\w*|compile\w*|make|cmake|ninja|meson compile|bazel build|cargo build|go build|"
              r"javac|gcc|g\+\+|clang\+?\+?|cc|webpack|rollup|esbuild|vite build|parcel|next build|"
              r"msbuild|dotnet build|swift build|swiftc|kotlinc|scalac|ghc|cabal build|stack build|dune build|"
              r"zig build|mix compile|elm make|assemble\w*|package|jar|wheel|sdist|setup\.py|python -m build|"
              r"docker build|buildx|podman build|mkdocs build|hugo|jekyll|nix build|rebar3 compile|"
              # Compilers and code generators by their own names: what they do is build.
              r"protoc|buf generate|buf build|flatc|thrift|capnp compile|grpc_tools\.protoc|fpc|lazbuild|"
              r"nim (?:c|cpp|js|compile)|nimble build|gdc|ldc2|dmd|gfortran|ifort|flang|valac|cobc|gnatmake|"
              r"gprbuild|nasm|yasm|ocamlopt|ocamlc|ocamlfind|erlc|elixirc|crystal build|shards build|"
              r"dart compile|rustc|solc|solcjs|zig build-exe|zig build-lib|sbcl --non-interactive --load|"
              r"tcc|emcc|wasm-pack build|lessc|sassc?|stylus|coffee|install)\b"),
)


@cache
def _specific_rx() -> tuple[tuple[str, re.Pattern[str]], ...]:
    # Compiled on first use, as the two tables below: only logs with a failing command, goal or task read them, and
    # compiling them took a share of every `repopilot diagnose` start-up.
    return tuple((cat, re.compile(rx, re.IGNORECASE)) for cat, rx in _SPECIFIC)


# Words that name several checks at once (`make check`, `npm test` running a linter first, `mvn verify`).
# tox and nox run sessions of any purpose (lint, typecheck, tests): which one failed says what failed.
_UMBRELLA = re.compile(r"^(?:test\w*|spec\w*|build\w*|make|install|package|check|verify|ci|all|compile\w*|tox|nox)$",
                       re.IGNORECASE)

_GENERIC_PROGRAMS = {"make", "gmake", "install", "build", "test", "check", "ci", "all", "package", "compile", "tox",
                     "nox"}

# Maven plugins and Gradle tasks by what they check.
_PLUGIN = (
    ("test", r"surefire|failsafe|scalatest|jacoco|pitest|karma|jest|frontend.*test"),
    ("build", r"compiler|kotlin|scala|jar|war|assembly|shade|antrun|exec|frontend|protoc|bundle|resources|"
              r"install|deploy|source|gwt"),
    ("lint", r"checkstyle|pmd|spotbugs|findbugs|spotless|license|rat|javadoc|formatter|fmt|editorconfig|"
             r"sortpom|impsort|forbiddenapis|animal-sniffer|revapi|japicmp|clirr|modernizer|errorprone|ktlint|"
             r"detekt|cpd|duplicate-finder|tidy"),
    ("dependency", r"dependency|versions|flatten"),
    ("config", r"enforcer"),
)


@cache
def _plugin_rx() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((cat, re.compile(rx, re.IGNORECASE)) for cat, rx in _PLUGIN)


_MAVEN_GOAL = re.compile(r"Failed to execute goal (?:(?P<group>[\w.-]+):)?(?P<plugin>[\w.-]+?)(?::[\w.-]+)?:"
                         r"(?P<goal>[\w-]+) \(|Failed to execute goal on project \S+: (?P<deps>Could not \w+ "
                         r"dependencies)")
_GRADLE_TASK = re.compile(r"Execution failed for task '(?::[\w.-]+)*:(?P<task>[\w.-]+)'")
_TASK = (
    ("test", r"^(?:test|\w*Test|\w*Tests|check\w*Test|connected\w*Test|jacoco\w*)$"),
    ("lint", r"^(?:\w*[Cc]heckstyle\w*|spotless\w*|ktlint\w*|detekt\w*|lint\w*|pmd\w*|spotbugs\w*|javadoc|"
             r"license\w*|\w*[Ff]ormat\w*|apiCheck|rat)$"),
    ("build", r"^(?:compile\w*|kapt\w*|ksp\w*|assemble\w*|jar|bundle\w*|process\w*|merge\w*|link\w*|dex\w*|"
              r"shadowJar|build\w*|generate\w*|javaPreCompile\w*)$"),
    ("dependency", r"^(?:dependencies|dependencyInsight|resolve\w*|download\w*)$"),
)


@cache
def _task_rx() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((cat, re.compile(rx)) for cat, rx in _TASK)


def pattern_tables() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """The tables above, compiled (for a wheel's build: ci/prebuild.py)."""
    return _specific_rx() + _plugin_rx() + _task_rx()


_MAKE_TARGET = re.compile(r"make(?:\[\d+\])?: \*\*\* \[(?:[^\]:]*:\d+: )?(?P<target>[^\]]+)\] Error \d+")
_TRAVIS_CMD = re.compile(r"^The command \"(?P<cmd>.+)\" exited with (?P<code>\d+)")
_NPM_SCRIPT = re.compile(r"^> (?:[@\w./-]+@[\w.-]+ )?(?P<script>[\w:.-]+)(?: /\S*)?$")
_ECHO = re.compile(r"(?:^|\| )(?:\$|\+) (?P<cmd>\S.*)$")
_STAGE = re.compile(r"^\[Pipeline\] \{ \((?P<stage>[^)]+)\)")
_EXIT_CODE = re.compile(r"\bexit (?:code|status):? '?(?P<code>\d+)|\bexited with (?:code )?'?(?P<exited>\d+)")
# A process inside the step killed by a signal, whatever the step's own code (a forked test JVM's `Process Exit Code:
# 137`, make's `Error 137` for its recipe, go's `signal: killed`): 128 + 9 is SIGKILL, the OOM killer's signal.
_INNER_KILL = re.compile(r"\bexit (?:code|status):? '?(?P<code>137|143)\b|\] Error (?P<make>137|143)$|"
                         r"(?P<signal>signal: killed|Killed signal terminated program)", re.IGNORECASE)

# A test that compared values and found them different (`assert 2 == 2.5`, `expected:<121> but was:<112>`,
# `expected 255, got 0`, `` `actual`: 15 ``): the code under test computed a wrong value, whatever network or disk
# trouble the log shows beside it (a flaky test's `Connection reset`, a cache that did not fit).
_ASSERTED = re.compile(
    r"\bexpected\b:?\s*(?:<[^>]*>|\S+)[,;]?\s+(?:but (?:was|got)|got|received|actual)\b|\bbut was:?\s*<|"
    r"^\s*E\s+(?:Assertion\w*: )?assert\b|\bassert(?:_eq|_equal|Equals?)?\b.{0,80}(?:==|!=)|\bnot equal to\b|"
    r"^\s*[`']?(?:actual|expected|left|right)[`']?\s*:\s*\S|\bExpected\b.{0,60}\bReceived\b|AssertionError\b.{0,40}"
    r"(?:expected|==|!=)", re.IGNORECASE)


# Words of the causal lines: (category, strength of one line, of several, pattern).
_CUES = (
    # Values compared and found different (see _ASSERTED): a test's own statement, whatever ran it.
    ("test", 0.55, 0.65, None),
    ("test", 0.3, 0.5, r"\bassert\w*|\bexpected\b.*\b(?:got|but|to|received|actual)\b|\bAssertionError\b|"
     r"\bnot ok \d|\b(?:test|spec|example)s? (?:failed|failure)|(?-i:\bFAIL(?:ED)?\b)(?!.*\[build failed\])|"
     r"\bTests? failed\b|(?-i:^(?:FAILED|ERROR) \S+::\S+)|Test suite failed to run|"
     r"\b\d+ (?:failed|failing)\b|\b(?:REQUIRE|CHECK|EXPECT|ASSERT)\w*\s*\(|Assertion .* failed|Sanitizer|"
     r"runtime error|Invalid (?:read|write) of size|definitely lost|\bexpected:? .* (?:but was|got|actual)|"
     r"unhandled exception|panicked at|check failed|\bERROR at (?:setup|teardown) of\b|"
     # A coverage gate belongs to the test run (the guideline's `test`).
     r"\bcoverage (?:failure|threshold)|\bfail[-_]under\b|\bcoverage\b.{0,60}\b(?:less than|below|not met|"
     r"does not meet|not reached)|Required test coverage|Coverage checks have not been met"),
    ("build", 0.3, 0.5, r"undefined reference|cannot find symbol|\bcompil(?:e|ation|er)\b|syntax error|\blinker\b|"
     r"ld returned|collect2|No rule to make target|error\[E\d+\]|cannot find -l|"
     r"[\w./-]+\.[A-Za-z]\w{0,5}(?::\d+(?::\d+)?:?|\(\d+(?:, ?\d+)?\):?) (?:fatal )?(?:Error|error)\b|"
     r"\b(?:undeclared|undefined) (?:identifier|symbol|variable|name)|identifier not found|type mismatch|"
     r"has no IMPLICIT type|not in scope|unresolved reference|(?:unable to|cannot|can't) resolve symbol|"
     r"unbound identifier|unresolved (?:external )?symbol"),
    # go test's own word that a package's tests did not compile.
    ("build", 0.5, 0.5, r"\[(?:build|setup) failed\]"),
    # A missing file says little of what failed (a test reading a fixture, a build reading a source): weak.
    ("build", 0.25, 0.3, r"cannot stat|No such file or directory"),
    ("typecheck", 0.4, 0.55, r"\bincompatible types?\b|is not assignable|has no attribute|\bTS\d{4}\b|"
     r"\btype[- ]?check(?:ing|er)? failed|"
     r"Argument of type|\[(?:arg-type|return-value|assignment|attr-defined|union-attr|call-arg|type-var|misc)\]|"
     r"\btype (?:error|mismatch)\b|\breportGeneralTypeIssues\b|\breport\w+Issue"),
    ("lint", 0.3, 0.5, r"would reformat|would be reformatted|reformatted|not (?:properly )?formatted|"
     r"\bformatting\b|\blint\w*\b|\bcheckstyle\b|\bviolations?\b|code style|trailing whitespace|"
     r"line too long|imported but unused|unused (?:import|variable)|misspell\w*|licen[cs]e header|"
     r"[\w./-]+:\d+:\d+:? \[?[A-Z]{1,4}\d{2,4}\]?\b|\bSC\d{4}\b|^diff --git|^--- a/|^\+\+\+ b/"),
    # Findings a check reports as warnings, with a place and no error: what failed was a check that fails on them.
    ("lint", 0.3, 0.45, r"^(?!.*\berror).*\bwarning\b.*\bline \d+|^(?!.*\berror).*\bline \d+.*\bwarning\b"),
    ("dependency", 0.55, 0.55, r"could not (?:resolve|find|collect|download|fetch) (?:\w+ )?(?:dependenc|artifact|"
     r"package|module|crate|gem|version)|unable to resolve (?!symbol|identifier|reference|name|type|method|"
     r"variable|class|function)|no matching (?:distribution|version|package)|"
     r"ERESOLVE|version solving failed|ResolutionImpossible|conflicting dependencies|"
     r"(?:failed to|could not) (?:select a version|fetch|download|load source for)|"
     r"lock ?file .*(?:needs to be updated|out of date|outdated|not up to date)|needs to be updated but --locked|"
     r"frozen-lockfile|lock ?file\b.{0,80}(?:--locked|--frozen)\b|"
     r"cannot find module providing|module lookup disabled|not (?:found )?in (?:the )?"
     r"(?:registry|index)|Could not find a package configuration|Library \"?[\w.-]+\"? not found|"
     r"in any known package|cannot satisfy|could not be resolved|dependency resolution|"
     # Terraform's provider installer, registries that hold no such name or version.
     r"Failed to query available provider|Could not retrieve the list of available versions|"
     r"not found in any of the (?:search locations|repositor|registr)|"
     r"\b(?:dependenc(?:y|ies)|package|module|collection|plugin|library|gem|crate)\b[^.;]{0,60}\b(?:is|are|was|were) "
     r"not (?:available|installed)|missing (?:collection|dependenc(?:y|ies)|package)|"
     # Gradle's and Maven's resolvers (`Could not find com.acme:lib:1.2.`), pkg-config through configure.
     r"Could not resolve all (?:files|dependencies|artifacts)|Could not find [\w.-]+:[\w.-]+:[\w.$-]+|"
     r"Package requirements \(.*\) were not met|Package '[^']+', required by .* not found"),
    ("dependency", 0.3, 0.3, r"Cannot find module|ModuleNotFoundError|No module named|"
     r"\bno (?:package|module|gem|crate|library) (?:called|named)\b|cannot load such file|"
     r"\bLoadError\b|requires .* but .* is installed"),
    # The machine's own statements that it ran out of memory or disk, or killed the process: they say what failed
    # whatever step printed them.
    ("infrastructure", 0.8, 0.8, r"No space left on device|\bENOSPC\b|^\s*(?:\S+: )?(?:line \d+: )?(?:\d+ )?Killed\b|"
     r"out of memory|Cannot allocate memory|OutOfMemoryError|^\s*MemoryError\b|Java heap space|"
     r"GC overhead limit exceeded|"
     r"std::bad_alloc|heap out of memory|memory allocation of \d+ bytes failed|Killed signal terminated program|"
     r"signal: killed|Process Exit Code: 137|runner has received a shutdown|lost communication with the server|"
     r"Disk quota exceeded|"
     # The CI system's own time limits (GitHub's step and job timeouts, GitLab's, Travis's, Jenkins's).
     r"The (?:action|job|step) has timed out|has exceeded the maximum execution time|execution took longer than|"
     r"exceeded the maximum time limit for jobs|Build timed out \(after"),
    ("infrastructure", 0.6, 0.6, r"\bKilled\b|\bOOM\b|\bMemoryError\b|\bSIGKILL\b|exceeded the maximum "
     r"execution time|The operation was canceled|job exceeded"),
    ("network", 0.55, 0.55, r"Could not resolve host|Temporary failure in name resolution|Connection (?:refused|"
     r"reset|timed out)|\b(?:ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|getaddrinfo|SSL)\b|TLS handshake|"
     r"certificate verify failed|Network is unreachable|\b(?:502|503|504) (?:Bad Gateway|Service|"
     r"Gateway)|Service Unavailable|Bad Gateway|Gateway Time-?out|rate limit|Too Many Requests|Read timed out|"
     r"Failed to connect|Name or service not known|"
     r"cannot open URL|unable to access (?:the )?(?:index|repository|URL)|\bE429\b"),
    # A failure "for dependency `x`": whatever the tool could not do, it was for a dependency.
    ("dependency", 0.65, 0.65, r"\bfor dependency [`'\":]?[\w.@/-]|\bneeded to build dependency\b|"
     r"\bDependency \"[^\"]+\" not found\b"),
    ("config", 0.6, 0.6, r"unknown (?:\w+ )?(?:option|setting|field|key|command|argument|flag|property|"
     r"lifecycle phase|configuration|config)|unrecognized (?:option|arguments?|setting|key|field)|"
     r"missing separator|Missing script|invalid (?:config\w*|option|setting|key|workflow|manifest)|"
     r"(?:failed to|could not|cannot|unable to|errors?) (?:pars(?:e|ing)|load|read) [^.]{0,60}(?:manifest|config\w*|"
     r"\.ya?ml|\.toml|\.json|\.xml|go\.mod|pom|settings|workflow)|Non-parseable|unbound variable|is not set\b|"
     r"mapping values are not allowed|did not find expected|found character that cannot start|"
     r"couldn't find (?:a |the )?config|Configuration for rule|not a valid (?:yaml|toml|json)|^usage: |"
     # A runtime or language version the job asks for and the runner lacks (the guideline's `config`).
     r"requires a different Python|Unsupported engine|\bEBADENGINE\b|engine \"\w+\" is incompatible|"
     r"Your Ruby version is .* but your Gemfile specified|release version \d+ not supported|"
     r"invalid (?:target|source) release|could not find python interpreter|InterpreterNotFound|"
     r"JAVA_HOME\b.{0,60}\b(?:not defined|invalid|does not point|not set)|"
     # A build file its tool cannot evaluate (Gradle's script, Maven's model), a test filter that matched nothing.
     r"A problem occurred (?:evaluating|configuring) (?:root )?project|^Build file '.*' line: \d+|"
     r"Could not find method \w+\(\) for arguments|"
     r"Some problems were encountered while processing the POMs|The build could not read \d+ projects?|"
     r"No tests were executed|No tests found|no tests ran\b|No test files found|No tests to run|"
     # npm's placeholder `test` script; a tool's own configuration rejected (pyproject's `project.name`, ESLint's
     # flat config), or an error a tool reports at a line of its configuration file.
     r"Error: no test specified|\bconfiguration error\b|invalid [\w.-]+ config(?:uration)?\b|"
     r"\b(?:key|option|setting|property)\b[^.]{0,40}\bnot supported in (?:the )?(?:\w+ )?config|"
     r"^\s*(?:pyproject\.toml|setup\.cfg|tox\.ini|\.?mypy\.ini|\.flake8|\.pylintrc|tsconfig[\w.]*\.json|"
     r"\.eslintrc[\w.]*|Cargo\.toml|go\.mod|\.golangci\.ya?ml|\.pre-commit-config\.yaml)[:(]\d+.{0,20}\berror\b"),
)
# Test runners' closing counts, read from the lines before the end (guideline: not causal, but they say what ran).
_TEST_SUMMARY = re.compile(r"\b\d+ (?:tests?|examples?|assertions?|checks?|specs?|cases?)\b.*\b[1-9]\d* (?:failed|"
                           r"failures?|errors?)\b|\b\d+ failed\b.*\b\d+ passed\b|\b\d+ passed\b.*\b[1-9]\d* (?:failed|"
                           r"errors?)\b|\bFAILED \((?:failures|errors)=|"
                           r"\bTests:\s+\d+ failed|^not ok \d|Tests run: \d+, Failures: [1-9]|"
                           # `Cases: 5  Tried: 5  Errors: 0  Failures: 2`, `Checks: 4, Failures: 1`, tcltest's
                           # `Total 3 Passed 2 Skipped 0 Failed 1`, `2 tests failed`, `1/1 modules FAILED unittests`
                           r"\b(?:cases|checks|tests|tried|ran|total|examples)\b:?\s*\d+\b.*\b(?:failures|failed|"
                           r"errors):?\s*[1-9]|\b[1-9]\d* tests? failed\b|\bmodules? FAILED unittests", re.IGNORECASE)
_CUE_RX = tuple((cat, one, many, _ASSERTED if rx is None else re.compile(rx, re.IGNORECASE))
                for cat, one, many, rx in _CUES)
# Words one of which every match of each cue (of `_CUE_RX`, in order; None: none is known, the cue is always tried),
# of _ASSERTED and of _TEST_SUMMARY holds, lower-case: a line holding none is not tried (ci/words.py). Derived
# from the patterns by tests/ci/cue_words.py; tests/ci/test_verdict_words.py fails when a pattern is
# edited without them and prints them anew.
_CUE_WORDS: tuple[tuple[str, ...] | None, ...] = (
    # test 0.55
    ('actual', 'assert', 'but was', 'expected', 'left', 'not equal to', 'right'),
    # test 0.3
    ('assert', 'check', 'coverage', 'definitely lost', 'error', 'expect', 'fail', 'invalid ', 'not ok ',
     'panicked at', 'require', 'sanitizer', 'under', 'unhandled exception'),
    # build 0.3
    (' resolve symbol', 'cannot find -l', 'cannot find symbol', 'collect2', 'compil', 'error',
     'has no implicit type', 'identifier not found', 'ld returned', 'linker', 'no rule to make target',
     'not in scope', 'type mismatch', 'unbound identifier', 'unde', 'unresolved '),
    # build 0.5
    (' failed]',),
    # build 0.25
    ('cannot stat', 'no such file or directory'),
    # typecheck 0.4
    None,
    # lint 0.3
    None,
    # lint 0.3
    ('warning',),
    # dependency 0.55
    ("', required by ", 'conflicting dependencies', 'could not', 'dependency resolution', 'eresolve', 'failed to',
     'file ', 'in any known package', 'lock', 'missing ', 'module lookup disabled', 'no matching ', 'not ',
     'package requirements (', 'resolutionimpossible', 'unable to resolve ', 'version solving failed'),
    # dependency 0.3
    (' is installed', 'cannot find module', 'cannot load such file', 'loaderror', 'modulenotfounderror', 'no '),
    # infrastructure 0.8
    (' has timed out', 'build timed out (after', 'cannot allocate memory', 'disk quota exceeded', 'enospc',
     'exceeded the maximum time limit for jobs', 'execution took longer than', 'gc overhead limit exceeded',
     'has exceeded the maximum execution time', 'java heap space', 'killed', 'lost communication with the server',
     'memory allocation of ', 'memoryerror', 'no space left on device', 'out of memory', 'process exit code: 137',
     'runner has received a shutdown', 'std::bad_alloc'),
    # infrastructure 0.6
    ('exceeded the maximum execution time', 'job exceeded', 'killed', 'memoryerror', 'oom', 'sigkill',
     'the operation was canceled'),
    # network 0.55
    ('cannot open url', 'certificate verify failed', 'connection ', 'could not resolve host', 'e429', 'eai_again',
     'econnrefused', 'econnreset', 'enotfound', 'etimedout', 'failed to connect', 'gateway', 'getaddrinfo',
     'network is unreachable', 'rate limit', 'read timed out', 'service', 'ssl',
     'temporary failure in name resolution', 'tls handshake', 'too many requests', 'unable to access '),
    # dependency 0.65
    ('dependency "', 'for dependency ', 'needed to build dependency'),
    # config 0.6
    (' but your gemfile specified', '" is incompatible', 'a problem occurred ', "build file '",
     'configuration for rule', 'could not find method ', 'could not find python interpreter', "couldn't find ",
     'did not find expected', 'ebadengine', 'error', 'found character that cannot start', 'interpreternotfound',
     'invalid ', 'is not set', 'java_home', 'load', 'mapping values are not allowed', 'missing script',
     'missing separator', 'no test files found', 'no tests found', 'no tests ran', 'no tests to run',
     'no tests were executed', 'not a valid ', 'not supported in ', 'pars', 'read', 'release version ',
     'requires a different python', 'some problems were encountered while processing the poms', 'unbound variable',
     'unknown ', 'unrecognized ', 'unsupported engine', 'usage: '),
)
_ASSERTED_WORDS = ('actual', 'assert', 'but was', 'expected', 'left', 'not equal to', 'right')
_TEST_SUMMARY_WORDS = (' passed', 'error', 'failed', 'failure', 'not ok ')


def _said(rx: re.Pattern[str], words: tuple[str, ...] | None, text: str, low: str | None) -> bool:
    """Whether `rx` matches `text` (whose lower-case form is `low` when it is ASCII, else None)."""
    return may_hold(words, low) and rx.search(text) is not None


_CUE_GATED = tuple((cat, one, many, rx, words) for (cat, one, many, rx), words in zip(_CUE_RX, _CUE_WORDS,
                                                                                      strict=True))
# A failure of this kind explains a failure of any step; these combinations are normal, not a conflict.
_EXPLAINS_ANY = {"infrastructure", "network", "dependency", "config"}
_EXPLAINS_ORDER = ("infrastructure", "network", "config", "dependency")
_MACHINE = 0.75


# A word's start up to its last `/` that is not its last character: what `(?:\S*/)+(?=\S)` removes, tried only
# where a word starts (tests/ci/test_verdict.py compares the two).
_PATH_TOKEN = re.compile(r"(?<!\S)\S*/(?=\S)")
_ENV_ASSIGN = re.compile(r"^(?:\w+=\S*\s+)+")


def _normalise(command: str) -> tuple[str, str]:
    """The command with directories dropped from paths and `_` read as a word break (`./build/io_test` ->
    `io test`), and its program name."""
    text = _ENV_ASSIGN.sub("", command.strip().splitlines()[0] if command.strip() else "")
    text = _PATH_TOKEN.sub("", text)
    program = text.split(" ", 1)[0] if text else ""
    return text.replace("_", " "), program.replace("_", " ")


_CHAIN = re.compile(r"\s(?:&&|\|\||;)\s|;\s")


def command_category(command: str) -> tuple[str, float, str] | None:
    """What a command checks: (category, strength, the word that says so), or None. A tool named for its
    purpose (`eslint`, `pytest`, `cargo fmt --check`) is strong evidence; an umbrella word (`test`, `build`,
    `make`) is weak, unless it is the program's own name (`./io_test`). A chain of commands whose parts check
    different things (`ghc --make spec.hs && ./spec`: a build, then the tests) says only weakly which failed."""
    line = command.strip().splitlines()[0] if command.strip() else ""
    parts = [p for p in _CHAIN.split(line) if p.strip()]
    if len(parts) < 2:
        return _one_command(command)
    found = [got for p in parts if (got := _one_command(p)) is not None]
    if not found:
        return None
    best = max(reversed(found), key=lambda g: g[1])  # on a tie the later part: it ran only if the others passed
    if any(g[0] != best[0] and g[1] >= 0.5 for g in found):
        return best[0], min(best[1], 0.45), best[2]
    return best


# A compiler told to run what it built (`nim c -r`, `go run`, `cargo run`): it checks whatever the program does.
_BUILD_AND_RUN = re.compile(r"\s(?:-r|--run)\b|\b(?:go|cargo|zig|dotnet|swift|dart|deno|bun|stack|cabal) run\b")


# A test class or program named as one (`shop.CartTestKt`, `com.acme.InvoiceTests`, `TestParser`): JUnit's and
# most xUnit's convention, and what a job runs by hand when it has no runner.
_TEST_CLASS = re.compile(r"(?<=[a-z0-9])Tests?(?=[A-Z]|\b)|\bTests?(?=[A-Z][a-z])")


def _inside_name(text: str, start: int, word: str) -> bool:
    """A match that is a file's extension, a dotted name's part or part of a flag (`shop.jar`, `--leak-check=full`),
    not what the command runs (`go-staticcheck`, `cart-test.lisp` stay)."""
    if start == 0 or word.startswith("-"):
        return False
    if text[start - 1] == ".":
        return True
    token = text.rfind(" ", 0, start) + 1
    return text[start - 1] == "-" and text.startswith("-", token)


def _one_command(command: str) -> tuple[str, float, str] | None:
    text, program = _normalise(command)
    best: tuple[str, float, str] | None = None
    for cat, rx in _specific_rx():
        for m in rx.finditer(text):
            if _inside_name(text, m.start(), m.group(0)):
                continue
            word = m.group(0).strip()
            strength = 0.7
            if _UMBRELLA.match(word):
                # A program named for its purpose (`./io_test`, `testledger`) is a test binary, not `make`.
                own_name = m.start() < len(program) and program.lower() not in _GENERIC_PROGRAMS
                strength = 0.5 if own_name else 0.35
            if best is None or strength > best[1]:
                best = (cat, strength, word)
    if best is not None and best[0] == "build" and _BUILD_AND_RUN.search(text):
        return best[0], min(best[1], 0.35), best[2]
    if (best is None or best[1] < 0.5) and (t := _TEST_CLASS.search(command)):
        return "test", 0.5, t.group(0)
    return best


def _failing_commands(diag: Diagnosis, res: ScanResult, texts: dict[int, str]) -> list[tuple[str, str]]:
    """What the failing step ran, best first: (where it was found, text): the GitHub step (an Azure task's script,
    then its name), Travis's "The command ... exited", the last command echo before the end, the Jenkins stage."""
    out: list[tuple[str, str]] = []
    if diag.step is not None and diag.step.command:  # the script itself says more than a step's display name
        out.append(("step", diag.step.command))
    if diag.step is not None and diag.step.name:
        out.append(("step", diag.step.name))
    end = diag.step.error_line if diag.step is not None else res.lines
    for n in sorted(texts, reverse=True):
        m = _TRAVIS_CMD.match(texts[n])
        if m:
            out.append(("step", m.group("cmd")))
            break
    echoes = [(c.line, c.text) for c in res.commands if c.line <= end and diag.in_job(c.line)]
    # Every echo holds `$ ` or `+ `: a substring test spares most lines the search.
    echoes += [(n, t) for n, t in texts.items()
               if n <= end and ((("$ " in t or "+ " in t) and _ECHO.search(t)) or _STAGE.match(t))]
    command = stage = None
    for _n, t in sorted(echoes, reverse=True):
        if command is None and (m := _ECHO.search(t)):
            command = m.group("cmd")
        if stage is None and (st := _STAGE.match(t)):
            stage = st.group("stage")
    if command:
        out.append(("command", command))
    if stage:
        out.append(("stage", stage))
    return out


def _classify(table: tuple[tuple[str, re.Pattern[str]], ...], word: str) -> str | None:
    return next((cat for cat, rx in table if rx.search(word)), None)


# A rule that says only where a tool reported an error, not what failed.
_SAYS_NOTHING = frozenset({"github.error-annotation"})
# Rules that say only that a tool's run failed (make's `*** [target] Error 1`, Maven's `Failed to execute goal`):
# what failed is the target's or the goal's purpose, which the goal and target evidence reads; `make` runs anything
# (though mostly a build).
_CONSEQUENCE_CAP = 0.45


def _rule_evidence(diag: Diagnosis) -> list[Evidence]:
    """The best causal failure of each category (repeats of one kind are one piece of evidence); a rule that
    reports the consequence of another failure (fingerprint.CONSEQUENCES) counts as weak evidence."""
    out: list[Evidence] = []
    seen: set[str] = set()
    for f in sorted(diag.failures, key=lambda f: f.rule in CONSEQUENCES):  # stable: specific rules first
        if not f.causal or f.rule == "locator" or f.category == "unknown" or f.category in seen:
            continue
        if f.rule in _SAYS_NOTHING:
            continue
        seen.add(f.category)
        strength = min(0.97, max(0.0, f.score)) * (1.0 if not out else 0.6)
        if f.rule in CONSEQUENCES:
            strength = min(strength, _CONSEQUENCE_CAP)
        out.append(Evidence(f.category, strength, "rule", f.rule))
    return out


def gather_evidence(diag: Diagnosis, res: ScanResult) -> list[Evidence]:
    texts = candidates(res)
    if diag.job_first or diag.job_last:  # a log of several jobs: what another job ran or printed says nothing of
        texts = diag.job_lines(texts)  # this one's failure
    out = _rule_evidence(diag)
    for where, cmd in _failing_commands(diag, res, texts):
        got = command_category(cmd)
        if got is not None:
            out.append(Evidence(got[0], got[1], "command", f"{where} `{cmd[:80]}` ({got[2]})"))
            break
    goals = _goal_evidence(texts)
    if any(e.source in ("goal", "task", "make-target") for e in goals):
        # The goal or target read from the same line says what a consequence rule says, and better.
        out = [e for e in out if e.detail not in CONSEQUENCES]
    out += goals
    code = diag.step.exit_code if diag.step is not None else None
    if code is None:
        for n in sorted(texts, reverse=True)[:30]:
            m = _EXIT_CODE.search(texts[n])
            if m:
                code = int(m.group("code") or m.group("exited"))
                break
    if code not in (137, 143):
        code = _inner_kill(diag, texts) or code
    if code in (137, 143):
        out.append(Evidence("infrastructure", 0.75 if code == 137 else 0.6, "exit-code",
                            f"exit code {code} ({'killed, usually out of memory' if code == 137 else 'terminated'})"))
    elif code in (126, 127):  # the shell's own codes: a command that is not there, or cannot be run
        out.append(Evidence("config", 0.6 if code == 127 else 0.55, "exit-code",
                            f"exit code {code} ({'command not found' if code == 127 else 'not executable'})"))
    end = diag.step.error_line if diag.step is not None else res.lines
    out += _line_evidence(diag, texts, end)
    return out


def _inner_kill(diag: Diagnosis, texts: dict[int, str]) -> int | None:
    """The code of a process the step ran that a signal killed, read from the failing step's last lines."""
    end = diag.step.error_line if diag.step is not None else max(texts, default=0)
    for n in sorted((n for n in texts if n <= end), reverse=True)[:80]:
        if m := _INNER_KILL.search(texts[n]):
            return 137 if m.group("signal") else int(m.group("code") or m.group("make"))
    return None


# The Enforcer's rules by what they check: the project's dependencies, else the build's environment and settings.
_ENFORCER_RULE = re.compile(r"\bRule \d+: [\w.$]*?\b(?P<rule>\w+) failed\b")
_DEPENDENCY_RULE = re.compile(r"Dependenc|Banned|Convergence|UpperBound|Release|Snapshot|Duplicate|Repositor|Plugin",
                              re.IGNORECASE)


def _enforcer_category(texts: dict[int, str]) -> str:
    for n in sorted(texts, reverse=True):
        if "failed" in texts[n] and (m := _ENFORCER_RULE.search(texts[n])):
            return "dependency" if _DEPENDENCY_RULE.search(m.group("rule")) else "config"
    return "config"


# A session runner's report of the command that failed inside it (nox; tox 4's `env: exit 1 (0.3 seconds) dir> cmd`)
# and of the sessions that failed (nox, tox 4, tox 3).
_RUNNER_COMMAND = re.compile(r"^nox > Command (?P<cmd>.+?) failed with exit code|"
                             r"^(?P<env>[\w.-]+): exit [1-9]\d* \([\d.]+ seconds\) \S*> (?P<cmd2>.+?)(?: pid=\d+)?$")
_SESSION = re.compile(r"^nox > Session (?P<nox>[\w.-]+)(?:\([^)]*\))? failed|^\s*(?P<tox>[\w.-]+): FAIL code [1-9]|"
                      r"^ERROR:\s+(?P<tox3>[\w.-]+): commands failed")


def _runner_evidence(t: str) -> Evidence | None:
    if m := _RUNNER_COMMAND.match(t):
        cmd = m.group("cmd") or m.group("cmd2")
        if got := command_category(cmd):
            return Evidence(got[0], got[1], "runner-command", f"`{cmd[:80]}` ({got[2]})")
    elif m := _SESSION.match(t):
        name = m.group("nox") or m.group("tox") or m.group("tox3")
        if got := command_category(name):
            return Evidence(got[0], min(got[1], 0.6), "runner-command", f"session {name}")
    return None


def _goal_evidence(texts: dict[int, str]) -> list[Evidence]:
    out: list[Evidence] = []
    npm_seen = False
    for n in sorted(texts, reverse=True):
        t = texts[n]
        if (t.startswith("nox > ") or ": " in t) and (e := _runner_evidence(t)) is not None:
            out.append(e)
        elif "Failed to execute goal" in t and (m := _MAVEN_GOAL.search(t)):
            if m.group("deps"):
                out.append(Evidence("dependency", 0.85, "goal", m.group("deps")))
            elif cat := _classify(_plugin_rx(), m.group("plugin")):
                # A goal that analyses rather than fetches (`dependency:analyze`) is a check of the code.
                if cat == "dependency" and m.group("goal").startswith("analy"):
                    cat = "lint"
                strength = 0.85 if "antrun" not in m.group("plugin") else 0.4
                if cat == "config" and "enforcer" in m.group("plugin"):
                    cat = _enforcer_category(texts)
                out.append(Evidence(cat, strength, "goal", f"{m.group('plugin')}:{m.group('goal')}"))
        elif "Execution failed for task" in t and (m := _GRADLE_TASK.search(t)):
            if cat := _classify(_task_rx(), m.group("task")):
                out.append(Evidence(cat, 0.85, "task", m.group("task")))
        elif "Error " in t and (m := _MAKE_TARGET.search(t)):
            got = command_category(m.group("target").rsplit("/", 1)[-1])
            if got is not None:
                out.append(Evidence(got[0], min(got[1], 0.6), "make-target", m.group("target")))
        elif t.startswith("> ") and not npm_seen and (m := _NPM_SCRIPT.match(t)):
            npm_seen = True  # the script that ran last: the ones before it finished before it began
            got = command_category(m.group("script"))
            if got is not None:
                out.append(Evidence(got[0], got[1], "npm-script", m.group("script")))
        if len(out) >= 3:
            break
    return out


# A compiler's (or parser's) diagnostic, whatever the language: a source location with line and column, and
# within the next lines the quoted source with a caret under the fault.
_LOCATION = re.compile(r"^\s*(?:-->\s*|\S+ )?[\w./\\-]+\.[A-Za-z]\w{0,9}:\d+:\d+\b(?!.*\bwarning\b|.*\b0x[0-9a-f]{4,})")
# rustc and its kin put the level on the line above the location (`warning: unused variable` / `  --> a.rs:3:9`).
_WARNING_ABOVE = re.compile(r"^\s*warning\b", re.IGNORECASE)
_CARET_LINE = re.compile(r"^\s*(?:\d+\s*)?\|?\s*[\^~]+[\s\^~-]*$|^\s*\|\s*[\^~]+")


_SOURCE_LOCATION = re.compile(r"^\s*[\w./\\-]*\.(?:go|rs|c|cc|cpp|cxx|h|hh|hpp|java|kt|kts|scala|cs|fs|swift|m|mm|"
                              r"ts|tsx|js|jsx|mjs|cjs|py|pyi|rb|php|ex|exs|erl|hs|ml|nim|zig|d|f90|f|pas|v|sv|vhd|"
                              r"sol|dart|cr|jl|lua|pl|pm|clj|rkt|vala|adb|ads)(?::\d+|\(\d+)")


def _line_evidence(diag: Diagnosis, texts: dict[int, str], end: int) -> list[Evidence]:
    counts: dict[tuple[str, float, float], int] = defaultdict(int)
    shown = diag.texts
    diagnostics = 0
    for n in diag.error_lines[:200]:
        text = shown.get(n, "")
        if _CARET_LINE.match(shown.get(n + 1, "")):
            continue  # quoted source under a message: code, not words about the failure
        words = _PATH_TOKEN.sub("", text) if "/" in text else text
        if _LOCATION.match(text) and not _WARNING_ABOVE.match(shown.get(n - 1, "")) and any(
                _CARET_LINE.match(shown.get(k, "")) for k in range(n + 1, n + 5)):
            diagnostics += 1
        # A message at a place in source code is the compiler's or the checker's about the code (`a.go:12:46: unknown
        # field 'When' in struct literal`), not about a configuration.
        said: set[str] = {"config"} if _SOURCE_LOCATION.match(words) else set()
        low = ascii_lower(words)
        for cat, one, many, rx, needs in _CUE_GATED:  # a line counts once per category, for its strongest cue
            if cat not in said and _said(rx, needs, words, low):
                said.add(cat)
                counts[(cat, one, many)] += 1
    out = [Evidence(cat, one if k == 1 else many, "lines", f"{k} causal line(s) read as {cat}")
           for (cat, one, many), k in counts.items()]
    if diagnostics:
        out.append(Evidence("build", 0.5, "lines", f"{diagnostics} compiler-style diagnostic(s): a location, the "
                                                   "source line and a caret"))
    summary = next((texts[n] for n in sorted(texts, reverse=True) if n <= end and end - n <= 40
                    and _said(_TEST_SUMMARY, _TEST_SUMMARY_WORDS, texts[n], ascii_lower(texts[n]))), None)
    if summary is not None:
        out.append(Evidence("test", 0.6, "lines", f"a test runner's count: {summary.strip()[:80]}"))
    return out


def _asserted(diag: Diagnosis) -> bool:
    shown = diag.texts
    return any(_said(_ASSERTED, _ASSERTED_WORDS, text, ascii_lower(text))
               for text in (shown.get(n, "") for n in diag.error_lines[:200]))


def _support(evidence: list[Evidence]) -> dict[str, float]:
    miss: dict[str, float] = defaultdict(lambda: 1.0)
    for e in evidence:
        miss[e.category] *= 1.0 - e.strength
    return {cat: 1.0 - m for cat, m in miss.items()}


def decide_category(diag: Diagnosis, res: ScanResult) -> list[Evidence]:
    """Set the diagnosis's category, confidence and `confident` from all the evidence; return the evidence."""
    evidence = [e for e in gather_evidence(diag, res) if e.category != "unknown"]
    support = _support(evidence)
    winner, confidence, rivals = _weigh(evidence, support, diag) if support else ("unknown", 0.0, [])
    if winner == "dependency" or confidence < SAY_UNKNOWN:
        # A package that could not be had, or nothing clear: a network or machine failure the job printed before
        # (a step that carried on after it) is what explains it.
        background, lines = _background(diag, res)
        if background is not None:
            support_with = _support([*evidence, background])
            won, conf, against = _weigh([*evidence, background], support_with, diag)
            if won == background.category:  # its lines are causal only when they are what explains the failure
                evidence, support = [*evidence, background], support_with
                winner, confidence, rivals = won, conf, against
                _add_background(diag, res, lines, background)
    if not support:
        diag.category, diag.confidence, diag.confident, diag.decided_by = "unknown", 0.0, False, "none"
        diag.escalation_reason = diag.escalation_reason or "no evidence of what failed"
        _record(diag, evidence, support, "unknown", 0.0, "no evidence")
        return evidence
    diag.confidence = confidence
    if confidence < SAY_UNKNOWN:
        diag.category, diag.confident, diag.decided_by = "unknown", False, "none"
        diag.escalation_reason = (f"evidence too weak or in conflict: {winner} {confidence:.2f}"
                                  + (f" against {rivals[0].category} ({rivals[0].source})" if rivals else ""))
        why = "weak or conflicting evidence"
    else:
        diag.category = winner
        diag.confident = confidence >= CONFIDENT
        diag.decided_by = _decider(evidence, winner, diag)
        for f in diag.failures:
            if f.rule == "locator":
                f.category = winner
        why = "strongest evidence" + (f" against {rivals[0].category}" if rivals else "")
        if diag.located:
            _say_it(diag, res, winner)
        if not diag.confident:
            diag.escalation_reason = f"not confident: {winner} {confidence:.2f} < {CONFIDENT}"
    _record(diag, evidence, support, diag.category, confidence, why)
    return evidence


# A line that says nothing of a failure: a success or progress report, or no words at all (a diff's `}`).
_SAYS_NOTHING_WRONG = re.compile(r"^\W*$|^\s*(?:PASS|ok|✓|✔)\b|\b(?:passed|passing|succeeded|successful(?:ly)?|"
                                 r"verified|up to date|up-to-date|done)\W*$|^\s*(?:Checking|Running|Downloading|"
                                 r"Installing|Compiling|Building|Fetching|Resolving|Ran)\b", re.IGNORECASE)
_SAY_REACH = 60  # lines before the failing step's end looked at when no step or command says where it began
_SAY_LINES = 3
# How checkers list what they reject: a line that is only a file's path (`gofmt -l`, `terraform fmt -check`).
_BARE_PATH = re.compile(r"^\s*[\w./\\-]*\.[A-Za-z]\w{0,9}\s*$")


def _say_it(diag: Diagnosis, res: ScanResult, category: str) -> None:
    """When every line the locator chose says nothing of a failure (a coverage gate's verdict under a table of
    passing tests, a formatter's list of files), the failing step's lines that say what the category's check
    found are the causal ones: its words (`Coverage for branches (75%) does not meet "global" threshold`), or for a
    lint check the files it listed after the command."""
    if not all(_SAYS_NOTHING_WRONG.search(diag.texts.get(n, "")) for n in diag.error_lines):
        return
    texts = candidates(res)
    end = find_end(texts, res.lines, diag.step.error_line if diag.step is not None else None)
    start = diag.step.header_line if diag.step is not None and diag.step.header_line else 0
    echoes = [c.line for c in res.commands if start <= c.line <= end]
    start = max([start, end - _SAY_REACH, *echoes[-1:]])
    cues = [rx for cat, one, _many, rx in _CUE_RX if cat == category and one >= 0.3]
    said = [n for n in sorted(texts) if start <= n <= end and diag.in_job(n) and not is_trailer(texts[n])
            and (any(rx.search(texts[n]) for rx in cues) or (category == "lint" and _BARE_PATH.match(texts[n])))]
    if not said:
        return
    lines = said[-_SAY_LINES:]
    diag.error_lines = []  # they replace the locator's lines, which said nothing of a failure
    _make_causal(diag, texts, lines, "the check's own words",
                 f"no chosen line stated a failure; these say what the {category} check found")


def _weigh(evidence: list[Evidence], support: dict[str, float], diag: Diagnosis
           ) -> tuple[str, float, list[Evidence]]:
    """The winning category, its confidence (its support lowered by evidence that cannot also be true), the rivals."""
    winner = _winner(evidence, support, diag)
    built = _build_only(evidence)
    asserted = _asserted(diag)
    rivals = [e for e in evidence if e.category != winner and not _compatible(winner, e, built, asserted)]
    rival = max(_support(rivals).values(), default=0.0)
    return winner, round(support[winner] * (1.0 - _RIVAL_WEIGHT * rival), 3), rivals


_BACKGROUND = 0.55
_BACKGROUND_LINES = 3


def _background(diag: Diagnosis, res: ScanResult) -> tuple[Evidence | None, list[int]]:
    """The machine's or the network's own statements printed in the job before the failure and not among its
    causal lines (`Warning: unable to access index … cannot open URL`, `ENOSPC` warnings of an install that went
    on): evidence of what caused it, and its first lines. None when a test compared values."""
    if _asserted(diag):
        return None, []
    texts = candidates(res)
    end = diag.step.error_line if diag.step is not None else res.lines
    chosen = set(diag.error_lines)
    found: dict[str, list[int]] = defaultdict(list)
    for n in sorted(texts):
        if n > end or n in chosen or not diag.in_job(n) or is_trailer(texts[n]):
            continue
        low = ascii_lower(texts[n])
        for cat, one, _many, rx, needs in _CUE_GATED:
            if cat in ("network", "infrastructure") and one >= 0.55 and _said(rx, needs, texts[n], low):
                found[cat].append(n)
                break
    if not found:
        return None, []
    cat = max(found, key=lambda c: (len(found[c]), c == "infrastructure"))
    lines = found[cat][:_BACKGROUND_LINES]
    return Evidence(cat, _BACKGROUND, "background", f"{len(found[cat])} {cat} line(s) before the failure, first "
                                                     f"at line {lines[0]}"), lines


def _add_background(diag: Diagnosis, res: ScanResult, lines: list[int], why: Evidence) -> None:
    """The lines stating the cause become causal (the guideline: a cause printed by a step that went on)."""
    _make_causal(diag, candidates(res), lines, "cause printed before the failure",
                 f"{why.category} statements in the job before the failing step's error")


def _make_causal(diag: Diagnosis, texts: dict[int, str], lines: list[int], decision: str, why: str) -> None:
    """`lines` become causal lines of the diagnosis, shown with its first causal failure, and the trace says why."""
    diag.error_lines = sorted(set(diag.error_lines) | set(lines))
    diag.texts = {**diag.texts, **{n: texts[n] for n in lines}}
    host = next((f for f in diag.failures if f.causal), None)
    if host is not None:
        host.extra_ranges += [(n, n) for n in lines]
    diag.decisions.append({"decision": decision, "lines": lines, "why": why})


def _winner(evidence: list[Evidence], support: dict[str, float], diag: Diagnosis) -> str:
    """The most supported category, except: a machine, network, dependency or configuration failure seen in the
    output explains a failing build or test step (unless a confident rule says otherwise); a step whose tool
    is named for linting or type checking failed for that purpose even when its output looks like a compiler's
    or a test's."""
    winner = max(support, key=lambda c: (support[c], c == _top_rule_category(diag)))
    cause = _cause(evidence, support, diag, winner)
    if cause is not None:
        return cause
    purpose = [e for e in evidence if e.source in ("command", "goal", "task", "npm-script", "runner-command")
               and e.category in ("lint", "typecheck", "config") and e.strength >= 0.6]
    named = max(purpose, key=lambda e: e.strength, default=None)
    if named is not None and winner in ("build", "test") and not any(
            e.source == named.source and e.category == winner and e.strength >= named.strength for e in evidence):
        return named.category  # (unless the runner names a test or build command that failed as well)
    if winner == "test":
        # A test run whose code did not compile failed to build (the guideline's `build`).
        said: dict[str, float] = defaultdict(float)
        for e in evidence:
            if e.source in ("rule", "lines") and e.detail not in CONSEQUENCES:
                said[e.category] = max(said[e.category], e.strength)
        if said.get("build", 0.0) >= 0.45 and said.get("test", 0.0) < 0.45:
            return "build"
    return winner


def _cause(evidence: list[Evidence], support: dict[str, float], diag: Diagnosis, winner: str) -> str | None:
    """The category of a failure that explains the step's (the machine, the network, the configuration, a
    dependency), or of a test that compared values whatever else was printed; None when neither decides."""
    strong_other = any(e.source == "rule" and e.strength >= 0.7 and e.category not in _EXPLAINS_ANY
                       for e in evidence)
    cause = [e for e in evidence if e.category in _EXPLAINS_ANY and e.source in (
        "rule", "lines", "goal", "task", "exit-code", "background") and e.strength >= 0.55]
    if _asserted(diag):
        # Values compared and found different: the test failed on its own, whatever network or disk trouble was
        # printed beside it; only the step's own exit code or goal says otherwise.
        cause = [e for e in cause if e.source in ("exit-code", "goal", "task")]
        if not cause and winner in _EXPLAINS_ANY and support.get("test", 0.0) >= SAY_UNKNOWN:
            return "test"
        if winner == "build" and not any(e.category == "build" and e.strength >= 0.5 for e in evidence):
            return "test"  # `make sim` that ran a testbench: make's own words say only that it failed
    # The machine saying it killed the step or ran out of memory or disk outweighs a rule that read the step's
    # failure (Surefire's "There are test failures" after its forked JVM was killed).
    machine = [e for e in cause if e.category == "infrastructure" and e.strength >= _MACHINE]
    if not (machine or (cause and not strong_other)):
        return None
    # The failure that explains the others: a full disk or a network error explains a download that failed (a
    # registry's 502 under Gradle's "Could not resolve"; also when it was printed before, by a step that went on:
    # `background`); between a configuration and a dependency failure the stronger evidence.
    best = max(cause, key=lambda e: (e.category in ("infrastructure", "network"), e.strength,
                                     -_EXPLAINS_ORDER.index(e.category)))
    earlier = next((e for e in cause if e.source == "background"), None)
    return earlier.category if earlier is not None and best.category == "dependency" else best.category


_COMMAND_SOURCES = frozenset({"command", "goal", "task", "make-target", "npm-script", "exit-code", "runner-command"})


def _decider(evidence: list[Evidence], winner: str, diag: Diagnosis) -> str:
    """Who decided: the strongest evidence for the winning category came from a rule, from the failing step's
    command (its name, goal, task, exit code), or from the causal lines the locator chose."""
    best = max((e for e in evidence if e.category == winner), key=lambda e: e.strength, default=None)
    if best is not None and best.source in _COMMAND_SOURCES:
        return "command"
    if best is not None and best.source == "lines" and diag.located:
        return "locator"
    return "rules"


def _top_rule_category(diag: Diagnosis) -> str | None:
    top = next((f for f in diag.failures if f.causal and f.rule != "locator"), None)
    return top.category if top is not None else None


def _build_only(evidence: list[Evidence]) -> bool:
    """The failing step ran a build tool by name (`cargo build`, `go build`, `gcc`), which runs no tests."""
    return any(e.source == "command" and e.category == "build" and e.strength >= 0.7 for e in evidence)


def _compatible(winner: str, e: Evidence, built: bool = False, asserted: bool = False) -> bool:
    """Evidence for another category that does not contradict the winner: an umbrella command (`make`, `npm
    test`, `mvn install` run many checks), a weaker failure of a kind that breaks any step, a build command
    whose build ran the tests or the linter, output that reads like a test's from a step that only built (a build
    script that panicked, an assertion in a code generator)."""
    if e.source in ("command", "goal") and e.strength < 0.5:  # `make`, `npm test`, maven-antrun-plugin
        return True
    if e.source == "rule" and e.detail in CONSEQUENCES:  # make or Maven saying that whatever it ran failed
        return True
    if asserted and winner == "test" and e.source in ("lines", "background", "rule") and e.category in _EXPLAINS_ANY:
        return True  # network or disk trouble beside a test that compared values: not what failed
    if built and winner == "build" and e.category == "test" and e.source == "lines":
        return True
    if winner in _EXPLAINS_ANY:
        return True
    if winner in ("lint", "typecheck") and e.category in ("build", "test") and e.source in ("rule", "lines"):
        return True  # a linter or type checker reports in a compiler's format
    if e.source in ("command", "make-target", "npm-script", "runner-command") and e.category in ("test", "build"):
        return winner in ("build", "test", "lint", "typecheck")
    return e.source == "lines" and e.strength < 0.4


def _record(diag: Diagnosis, evidence: list[Evidence], support: dict[str, float], category: str,
            confidence: float, why: str) -> None:
    entry: dict[str, Any] = {
        "decision": "category", "category": category, "confidence": confidence, "why": why,
        "support": {k: round(v, 3) for k, v in sorted(support.items(), key=lambda kv: -kv[1])},
        "evidence": [{"category": e.category, "strength": round(e.strength, 3), "source": e.source,
                      "detail": e.detail} for e in evidence],
    }
    diag.decisions[:] = [d for d in diag.decisions if d.get("decision") != "category"]
    diag.decisions.insert(0, entry)
