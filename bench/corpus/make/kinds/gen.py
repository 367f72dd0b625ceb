"""Failure kinds that real CI logs are full of and the rest of the corpus had few of: Gradle builds (compile, test,
build script, dependency resolution, javadoc), Python jobs failing outside the test runner (tox without the asked
interpreter, a plain doctest or unittest run, a missing secret), Ruby version and gem conflicts, npm engine and
script failures, and the machine's own failures (a step killed by SIGKILL, a time limit, permission denied).

Every case runs the real tool here on a small project written here with one injected fault (labels come from that
knowledge, by GUIDELINE.md). Tools: Debian 12 `gradle` 4.4.1 (offline, JUnit 4 from /usr/share/java), ruby 3.1 with
bundler/rspec/minitest/rubocop, node 18 with npm 9, coreutils; PyPI tox, pytest, sphinx in a venv under
`$CORPUS_WORK` (default `/tmp/corpus-k`; make it once with `python3 -m venv $CORPUS_WORK/tools &&
$CORPUS_WORK/tools/bin/pip install 'tox==4.*' 'pytest==8.*' 'sphinx==8.*'`), then
`python3 bench/corpus/make/gen.py ECOSYSTEM -k NAME`.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

from gen import case
from ws import Case, block, find, version

WORK = Path(os.environ.get("CORPUS_WORK", "/tmp/corpus-k"))
TOOLS = WORK / "tools" / "bin"
PY_ENV = {"PATH": f"{TOOLS}:/usr/local/bin:/usr/bin:/bin", "PIP_CONFIG_FILE": "/dev/null", "CI": "true",
          "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "HOME": str(WORK / "home")}
GRADLE_ENV = {"GRADLE_USER_HOME": str(WORK / "gradle-home"), "CI": "true", "LANG": "C.UTF-8"}


def made(name: str, tool: str) -> str:
    return f"{tool} on make/kinds/gen.py:{name}, a small project written here, run here"


# ---------------------------------------------------------------- java: Gradle

GRADLE = version("gradle --version 2>/dev/null | sed -n 's/^Gradle //p'")
BUILD_GRADLE = """apply plugin: 'java'

sourceCompatibility = 17
targetCompatibility = 17

dependencies {
    testCompile files('/usr/share/java/junit4.jar', '/usr/share/java/hamcrest-core.jar')
}
"""
SHIPPING = """package org.example.shipping;

import java.util.List;

/** Shipping cost of a parcel by weight band. */
public final class Shipping {
    private static final List<Integer> BANDS = List.of(1000, 5000, 20000);
    private static final int[] PRICES = {495, 895, 1995};

    private Shipping() {
    }

    /** The price in cents for a parcel of {@code grams}. */
    public static int price(int grams) {
        for (int i = 0; i < BANDS.size(); i++) {
            if (grams <= BANDS.get(i)) {
                return PRICES[i];
            }
        }
        throw new IllegalArgumentException("too heavy: " + grams + " g");
    }
}
"""
SHIPPING_TEST = """package org.example.shipping;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class ShippingTest {
    @Test
    public void smallParcel() {
        assertEquals(495, Shipping.price(800));
    }

    @Test
    public void bandEdgeIsInclusive() {
        assertEquals(895, Shipping.price(5000));
    }

    @Test(expected = IllegalArgumentException.class)
    public void tooHeavy() {
        Shipping.price(25000);
    }
}
"""
GSRC = "src/main/java/org/example/shipping/"
GTST = "src/test/java/org/example/shipping/"


def gradle_project(c: Case, build: str = BUILD_GRADLE, **over: str) -> None:
    files = {"build.gradle": build, "settings.gradle": "rootProject.name = 'shipping'\n",
             GSRC + "Shipping.java": SHIPPING, GTST + "ShippingTest.java": SHIPPING_TEST}
    files.update(over)
    c.files(files)
    c.step("Set up JDK", "java -version 2>&1")


def gradle(c: Case, tasks: str, causal, context=None) -> None:  # type: ignore[no-untyped-def]
    c.step("Build with Gradle", f"gradle --offline --no-daemon --console=plain {tasks}", causal, context,
           env=GRADLE_ENV, show=f"./gradlew {tasks}")


def gmade(name: str) -> str:
    return made(name, f"Gradle {GRADLE} (Debian 12), {version('javac -version 2>&1')}")


@case("java")
def gradle_compile_error(name: str, shape: str) -> None:
    c = Case("java", name, shape, "shipping")
    gradle_project(c, **{GSRC + "Shipping.java": SHIPPING.replace("return PRICES[i];", "return PRICES.get(i);")})
    gradle(c, "build", lambda o: block(o, r"\.java:\d+: error: ", after=2) + find(o, r"^  (symbol|location): ", limit=2))
    c.write(tool="gradle", category="build", made_by=gmade(name))


@case("java")
def gradle_test_failure(name: str, shape: str) -> None:
    c = Case("java", name, shape, "shipping")
    gradle_project(c, **{GSRC + "Shipping.java": SHIPPING.replace("grams <= BANDS", "grams < BANDS")})
    gradle(c, "build", lambda o: block(o, r" > \w+ FAILED$", after=1),
           context=lambda o: find(o, r"^\d+ tests completed, \d+ failed", limit=1))
    c.write(tool="gradle", category="test", made_by=gmade(name))


@case("java")
def gradle_test_full_exception(name: str, shape: str) -> None:
    c = Case("java", name, shape, "shipping")
    build = BUILD_GRADLE + "\ntest {\n    testLogging {\n        events 'failed'\n        exceptionFormat 'full'\n    }\n}\n"
    gradle_project(c, build, **{GSRC + "Shipping.java": SHIPPING.replace("{495, 895, 1995}", "{495, 995, 1995}")})
    gradle(c, "test", lambda o: find(o, r" > \w+ FAILED$", r"^\s+java\.lang\.AssertionError", r"at org\.example\.", limit=2))
    c.write(tool="gradle", category="test", made_by=gmade(name))


@case("java")
def gradle_build_script_error(name: str, shape: str) -> None:
    c = Case("java", name, shape, "shipping")
    gradle_project(c, BUILD_GRADLE.replace("testCompile files(", "testImplementaton files("))
    gradle(c, "build", lambda o: find(o, r"^Build file '.*build\.gradle' line: \d+", r"^> Could not find method", limit=1))
    c.write(tool="gradle", category="config", made_by=gmade(name))


@case("java")
def gradle_dependency_not_found(name: str, shape: str) -> None:
    c = Case("java", name, shape, "shipping")
    c.sh("mkdir -p /tmp/corpus-k-empty-repo")
    build = BUILD_GRADLE.replace("dependencies {", "repositories {\n    maven { url 'file:///tmp/corpus-k-empty-repo' }\n}\n\n"
                                                    "dependencies {\n    compile 'com.google.guava:guava:31.1-jre'")
    gradle_project(c, build)
    gradle(c, "build", lambda o: find(o, r"Could not resolve all (files|dependencies) for configuration", limit=1)
           + find(o, r"^\s*> (Could not find|No cached version of) com\.google\.guava", limit=2))
    c.write(tool="gradle", category="dependency", made_by=gmade(name))


@case("java")
def gradle_javadoc_error(name: str, shape: str) -> None:
    c = Case("java", name, shape, "shipping")
    gradle_project(c, **{GSRC + "Shipping.java": SHIPPING.replace("/** The price in cents for a parcel of {@code grams}. */",
                                                                   "/**\n     * The price in cents.\n     *\n     * @param weight the weight\n"
                                                                   "     * @returns the price\n     */")})
    gradle(c, "javadoc", lambda o: block(o, r"\.java:\d+: error: ", after=2))
    c.write(tool="gradle javadoc", category="lint", made_by=gmade(name))


# ---------------------------------------------------------------- python

PYV = version(f"{TOOLS}/python --version") if TOOLS.exists() else "Python 3"
CALC = '''"""Small arithmetic helpers."""


def mean(values):
    """The arithmetic mean.

    >>> mean([1, 2, 3, 4])
    2.5
    >>> mean([2])
    2.0
    """
    return sum(values) / len(values)


def clamp(x, lo, hi):
    """Clamp x into [lo, hi].

    >>> clamp(5, 0, 3)
    3
    >>> clamp(-2, 0, 3)
    0
    """
    return max(lo, min(x, hi))
'''
CALC_TEST = '''import unittest

from calc import clamp, mean


class MeanTest(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([1, 2, 3, 4]), 2.5)

    def test_clamp(self):
        self.assertEqual(clamp(9, 0, 3), 3)
'''


def py_case(name: str, shape: str, files: dict[str, str]) -> Case:
    c = Case("python", name, shape, "calc")
    c.files({"src/calc/__init__.py": CALC, "tests/test_calc.py": CALC_TEST, **files})
    c.step("Set up Python", "python --version && python -m pip --version", env=PY_ENV)
    return c


@case("python")
def tox_missing_interpreter(name: str, shape: str) -> None:
    ini = "[tox]\nenvlist = py38, py311\nskip_missing_interpreters = false\n\n[testenv]\ndeps = pytest\n" \
          "commands = pytest -q tests\n"
    c = py_case(name, shape, {"tox.ini": ini, "pyproject.toml": "[project]\nname = 'calc'\nversion = '0.1'\n"})
    c.step("Test", "tox -e py38", lambda o: find(o, r"could not find python interpreter", limit=1), env=PY_ENV)
    c.write(tool="tox", category="config", made_by=made(name, version(f"{TOOLS}/tox --version")))


@case("python")
def doctest_module(name: str, shape: str) -> None:
    c = py_case(name, shape, {"src/calc/__init__.py": CALC.replace("max(lo, min(x, hi))", "min(lo, max(x, hi))")})
    c.step("Doctests", "python -m doctest -o NORMALIZE_WHITESPACE src/calc/__init__.py",
           lambda o: [i for i in block(o, r"^File \".*\", line \d+, in ", after=6)
                      if not o[i].startswith("*****")][:14], env=PY_ENV,
           context=lambda o: find(o, r"^\*\*\*Test Failed\*\*\* \d+ failures", limit=1))
    c.write(tool="doctest", category="test", made_by=made(name, PYV + " doctest"))


@case("python")
def unittest_import_failure(name: str, shape: str) -> None:
    test = CALC_TEST.replace("from calc import clamp, mean", "from calc import clamp, mean, median")
    c = py_case(name, shape, {"tests/test_calc.py": test})
    c.step("Test", "PYTHONPATH=src python -m unittest discover -s tests -v",
           lambda o: find(o, r"ImportError: Failed to import test module", r"^ImportError: cannot import name",
                          r'File ".*tests/test_calc\.py", line \d+', limit=1), env=PY_ENV)
    c.write(tool="unittest", category="test", made_by=made(name, PYV + " unittest"))


DEPLOY = '''"""Upload the built docs to the documentation bucket."""
import os
import pathlib


def main():
    site = pathlib.Path("site")
    token = os.environ["DOCS_UPLOAD_TOKEN"]
    files = sorted(p for p in site.rglob("*") if p.is_file())
    print(f"uploading {len(files)} files with a token of {len(token)} characters")


if __name__ == "__main__":
    main()
'''


@case("python")
def python_missing_secret(name: str, shape: str) -> None:
    c = py_case(name, shape, {"scripts/upload_docs.py": DEPLOY, "site/index.html": "<h1>calc</h1>\n"})
    c.step("Upload docs", "python scripts/upload_docs.py",
           lambda o: find(o, r"^KeyError: 'DOCS_UPLOAD_TOKEN'", r'File ".*scripts/upload_docs\.py", line 8', limit=1),
           env=PY_ENV)
    c.write(tool="python", category="config", made_by=made(name, PYV))


@case("python")
def pytest_import_file_mismatch(name: str, shape: str) -> None:
    same = "from calc import mean\n\n\ndef test_mean_one():\n    assert mean([3]) == 3\n"
    c = py_case(name, shape, {"tests/unit/test_util.py": same, "tests/integration/test_util.py": same})
    c.step("Test", "PYTHONPATH=src python -m pytest -p no:cacheprovider tests",
           lambda o: find(o, r"^_+ ERROR collecting ", r"^import file mismatch:", r"^imported module 'test_util' has this",
                          r"^which is not the same as the test file we want to collect:", limit=1)
           + find(o, r"^  /.*/tests/(unit|integration)/test_util\.py$", limit=2), env=PY_ENV)
    c.write(tool="pytest", category="test", made_by=made(name, version(f"{TOOLS}/pytest --version")))


@case("python")
def sphinx_autodoc_import_failed(name: str, shape: str) -> None:
    conf = "project = 'calc'\nextensions = ['sphinx.ext.autodoc']\nimport sys, os\nsys.path.insert(0, os.path.abspath('../src'))\n"
    c = py_case(name, shape, {"docs/conf.py": conf,
                              "docs/index.rst": "calc\n====\n\n.. automodule:: calc.stats\n   :members:\n"})
    c.step("Docs", "sphinx-build -W --keep-going -b html docs docs/_build",
           lambda o: find(o, r"WARNING: autodoc: failed to import", r"No module named 'calc\.stats'", limit=1), env=PY_ENV)
    c.write(tool="sphinx-build", category="lint", made_by=made(name, version(f"{TOOLS}/sphinx-build --version")))


# ---------------------------------------------------------------- ruby

RUBY = version("ruby --version")
BUNDLER = version("bundle --version")
RB_LIB = """# Rounds prices to the nearest five cents, as the tills do.
module Till
  def self.round(cents)
    (cents / 5.0).round * 5
  end
end
"""
RB_TEST = """require "minitest/autorun"
require_relative "../lib/till"

class TillTest < Minitest::Test
  def test_rounds_down
    assert_equal 100, Till.round(102)
  end

  def test_rounds_up
    assert_equal 105, Till.round(103)
  end
end
"""


def rb_case(name: str, shape: str, files: dict[str, str]) -> Case:
    c = Case("ruby", name, shape, "till")
    c.files({"lib/till.rb": RB_LIB, "test/till_test.rb": RB_TEST,
             "Rakefile": 'require "rake/testtask"\n\nRake::TestTask.new(:test) do |t|\n  t.pattern = "test/*_test.rb"\n'
                         'end\n\ntask default: :test\n', **files})
    c.step("Set up Ruby", "ruby --version && bundle --version")
    return c


@case("ruby")
def bundler_ruby_version_mismatch(name: str, shape: str) -> None:
    c = rb_case(name, shape, {"Gemfile": 'source "https://rubygems.org"\n\nruby "3.3.4"\n\ngem "rake"\ngem "minitest"\n'})
    c.step("Install gems", "bundle install --local", lambda o: find(o, r"Your Ruby version is .*, but your Gemfile specified",
                                                                    limit=1))
    c.write(tool="bundler", category="config", made_by=made(name, f"{BUNDLER}, {RUBY}"))


@case("ruby")
def bundler_version_conflict(name: str, shape: str) -> None:
    gemfile = 'source "https://rubygems.org"\n\ngem "rake"\ngem "rspec", "~> 3.12"\ngem "rspec-core", "3.10.1"\n'
    c = rb_case(name, shape, {"Gemfile": gemfile})
    c.step("Install gems", "bundle install --local",
           lambda o: find(o, r"Could not find compatible versions|could not find compatible versions|"
                             r"Could not find gem 'rspec-core \(= 3\.10\.1\)'", limit=1)
           + find(o, r"^\s+rspec-core \(= 3\.10\.1\)", limit=1))
    c.write(tool="bundler", category="dependency", made_by=made(name, f"{BUNDLER}, {RUBY}"))


@case("ruby")
def rake_minitest_failure(name: str, shape: str) -> None:
    c = rb_case(name, shape, {"lib/till.rb": RB_LIB.replace(".round * 5", ".floor * 5")})
    c.step("Test", "rake test",
           lambda o: block(o, r"^  \d+\) Failure:$", after=3), env={"MT_NO_PLUGINS": "1"},
           context=lambda o: find(o, r"^\d+ runs, \d+ assertions, [1-9]\d* failures", limit=1))
    c.write(tool="minitest", category="test", made_by=made(name, f"rake {version('rake --version')}, {RUBY}"))


@case("ruby")
def rubocop_github_format(name: str, shape: str) -> None:
    lib = RB_LIB.replace("  def self.round(cents)\n", "  def self.round(cents)\n    unused = cents * 2\n")
    c = rb_case(name, shape, {"lib/till.rb": lib, ".rubocop.yml": "AllCops:\n  NewCops: enable\n  SuggestExtensions: false\n"})
    c.step("Lint", "rubocop --format github lib", lambda o: find(o, r"^::error ", limit=6))
    c.write(tool="rubocop", category="lint", made_by=made(name, f"rubocop {version('rubocop --version')}, {RUBY}"))


# ---------------------------------------------------------------- javascript

NODE = version("node --version")
NPM = version("npm --version")


def js_case(name: str, shape: str, pkg: str, files: dict[str, str] | None = None) -> Case:
    c = Case("javascript", name, shape, "web-shop")
    c.files({"package.json": pkg, "src/index.js": "export const total = (xs) => xs.reduce((a, b) => a + b, 0);\n",
             **(files or {})})
    c.step("Set up Node", "node --version && npm --version")
    return c


@case("javascript")
def npm_engine_unsupported(name: str, shape: str) -> None:
    pkg = '{\n  "name": "web-shop",\n  "version": "2.1.0",\n  "private": true,\n  "engines": {\n    "node": ">=22.11.0"\n  },\n' \
          '  "scripts": {\n    "test": "node --test"\n  }\n}\n'
    c = js_case(name, shape, pkg, {".npmrc": "engine-strict=true\n"})
    c.sh("npm install --package-lock-only --ignore-scripts --engine-strict=false >/dev/null 2>&1")
    c.step("Install", "npm ci", lambda o: find(o, r"EBADENGINE", r"Unsupported engine", r"Not compatible with your version",
                                                r'Required: \{"node":">=22\.11\.0"\}', r"Actual: ", limit=1))
    c.write(tool="npm", category="config", made_by=made(name, f"npm {NPM}, node {NODE}"))


@case("javascript")
def npm_script_tool_not_found(name: str, shape: str) -> None:
    pkg = '{\n  "name": "web-shop",\n  "version": "2.1.0",\n  "private": true,\n  "scripts": {\n' \
          '    "build": "tsc -p tsconfig.json",\n    "test": "node --test"\n  }\n}\n'
    c = js_case(name, shape, pkg, {"tsconfig.json": '{ "compilerOptions": { "outDir": "dist" } }\n'})
    c.step("Build", "npm run build", lambda o: find(o, r"tsc: not found|tsc: command not found", limit=1))
    c.write(tool="npm", category="config", made_by=made(name, f"npm {NPM}, node {NODE}"))


PUBLISH = """// Publish the release notes to the changelog service.
const token = process.env.CHANGELOG_TOKEN;
if (!token) {
  throw new Error("CHANGELOG_TOKEN is not set; add it to the repository secrets");
}
console.log("publishing with token of length", token.length);
"""


@case("javascript")
def node_missing_secret(name: str, shape: str) -> None:
    pkg = '{\n  "name": "web-shop",\n  "version": "2.1.0",\n  "private": true,\n  "scripts": {\n' \
          '    "release-notes": "node scripts/publish-notes.js"\n  }\n}\n'
    c = js_case(name, shape, pkg, {"scripts/publish-notes.js": PUBLISH})
    c.step("Publish notes", "npm run release-notes",
           lambda o: find(o, r"^Error: CHANGELOG_TOKEN is not set", r"at .*scripts/publish-notes\.js:4", limit=1))
    c.write(tool="node", category="config", made_by=made(name, f"npm {NPM}, node {NODE}"))


# ---------------------------------------------------------------- shell: the machine's own failures

CRUNCH = '''"""Aggregate the day's events into hourly buckets."""
import time

for hour in range(24):
    print(f"bucket {hour:02d}: 1{hour:02d}412 events", flush=True)
    time.sleep(0.02)
print("joining with the customer table", flush=True)
time.sleep(30)
print("done")
'''


def kill_when(pattern: str, after: float, stop: threading.Event, sig: int = signal.SIGKILL) -> None:
    """Signal (SIGKILL: the OOM killer's signal; nothing here can make the kernel's own OOM killer act on a 24 GiB
    machine safely) the process whose command line holds `pattern`, `after` seconds after it appears."""
    seen = None
    while not stop.is_set():
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            except OSError:
                continue
            if pattern in cmd and not cmd.startswith("bash"):
                seen = seen or time.monotonic()
                if time.monotonic() - seen > after:
                    os.kill(int(pid), sig)
                    return
        time.sleep(0.05)


def _nightly_killed(c: Case, sig: int, says: str) -> Case:
    """The nightly script's Python job, stopped from outside by `sig` once it runs; `says` is the shell's report."""
    c.files({"jobs/crunch.py": CRUNCH, "ci/nightly.sh": "#!/bin/bash\nset -e\necho \"nightly aggregation for $(date -u +%F)\"\n"
                                                          "python3 jobs/crunch.py\necho aggregated\n"})
    stop = threading.Event()
    t = threading.Thread(target=kill_when, args=("jobs/crunch.py", 1.2, stop, sig))
    t.start()
    try:
        c.step("Aggregate", "bash ci/nightly.sh", lambda o: find(o, says, limit=1))
    finally:
        stop.set()
        t.join()
    return c


@case("shell")
def script_step_sigkilled(name: str, shape: str) -> None:
    c = _nightly_killed(Case("shell", name, shape, "events"), signal.SIGKILL, r"Killed")
    c.write(tool="bash", category="infrastructure",
            made_by=made(name, version("bash --version") + "; SIGKILLed by the generator's watchdog (the OOM killer's signal)"))


WAIT = """#!/bin/bash
# Wait for the database the integration tests need.
until (echo > /dev/tcp/127.0.0.1/9) 2>/dev/null; do
  echo "waiting for postgres at 127.0.0.1:9 ..."
  sleep 1
done
"""


@case("shell")
def timeout_wait_for_service(name: str, shape: str) -> None:
    c = Case("shell", name, shape, "events")
    c.files({"ci/wait-for-db.sh": WAIT})
    c.sh("chmod +x ci/wait-for-db.sh")
    c.step("Wait for database", "timeout --verbose 4 ci/wait-for-db.sh",
           lambda o: find(o, r"^timeout: sending signal TERM", limit=1))
    c.write(tool="timeout", category="infrastructure", made_by=made(name, version("timeout --version")))


@case("shell")
def script_not_executable(name: str, shape: str) -> None:
    c = Case("shell", name, shape, "events")
    c.files({"ci/release.sh": "#!/bin/bash\nset -euo pipefail\necho \"tagging v$(cat VERSION)\"\n", "VERSION": "1.8.2\n"})
    c.sh("chmod -x ci/release.sh")
    c.step("Release", "./ci/release.sh", lambda o: find(o, r"release\.sh: Permission denied", limit=1))
    c.write(tool="bash", category="config", made_by=made(name, version("bash --version")))


@case("shell")
def script_write_permission_denied(name: str, shape: str) -> None:
    c = Case("shell", name, shape, "events")
    c.files({"ci/install.sh": "#!/bin/bash\nset -e\necho 'installing events-cli 1.8.2'\nmkdir -p build\n"
                              "printf '#!/bin/sh\\necho events\\n' > build/events\ninstall -m 0755 build/events "
                              "/usr/local/lib/events/bin/events\necho installed\n"})
    c.sh("chmod -R a+rwX . && mkdir -p /usr/local/lib/events/bin && chmod 0755 /usr/local/lib/events/bin")
    try:
        c.step("Install CLI", "setpriv --reuid=nobody --regid=nogroup --clear-groups bash ci/install.sh",
               lambda o: find(o, r"Permission denied", limit=1), show="bash ci/install.sh")
    finally:
        c.sh("rm -rf /usr/local/lib/events")
    c.write(tool="install", category="config", made_by=made(name, version("install --version") + ", run as an unprivileged user"))


# ---------------------------------------------------------------- more of the same kinds (second batch)

@case("python")
def pip_requires_python(name: str, shape: str) -> None:
    pyproject = "[build-system]\nrequires = ['setuptools>=61']\nbuild-backend = 'setuptools.build_meta'\n\n" \
                "[project]\nname = 'calc'\nversion = '0.4.0'\nrequires-python = '>=3.13'\n\n" \
                "[tool.setuptools.packages.find]\nwhere = ['src']\n"
    c = py_case(name, shape, {"pyproject.toml": pyproject})
    c.sh(f"rm -rf {WORK}/venv-rp && {TOOLS}/python -m venv {WORK}/venv-rp")
    c.step("Install", f"{WORK}/venv-rp/bin/python -m pip install .",
           lambda o: find(o, r"^ERROR: Package 'calc' requires a different Python", limit=1), env=PY_ENV,
           show="pip install .")
    c.write(tool="pip", category="config", made_by=made(name, version(f"{WORK}/venv-rp/bin/python -m pip --version")))


@case("javascript")
def npm_ci_without_lockfile(name: str, shape: str) -> None:
    pkg = '{\n  "name": "web-shop",\n  "version": "2.1.0",\n  "private": true,\n  "scripts": {\n    "test": "node --test"\n  }\n}\n'
    c = js_case(name, shape, pkg)
    c.step("Install", "npm ci", lambda o: block(o, r"can only install with an existing package-lock\.json", after=2))
    c.write(tool="npm", category="dependency", made_by=made(name, f"npm {NPM}, node {NODE}"))


@case("javascript")
def npm_test_no_test_specified(name: str, shape: str) -> None:
    pkg = '{\n  "name": "web-shop",\n  "version": "2.1.0",\n  "private": true,\n  "scripts": {\n' \
          '    "test": "echo \\"Error: no test specified\\" && exit 1"\n  }\n}\n'
    c = js_case(name, shape, pkg)
    c.step("Test", "npm test", lambda o: find(o, r"^Error: no test specified$", limit=1))
    c.write(tool="npm", category="config", made_by=made(name, f"npm {NPM}, node {NODE}"))


@case("shell")
def make_no_rule_for_target(name: str, shape: str) -> None:
    c = Case("shell", name, shape, "events")
    c.files({"Makefile": "all: build\n\nbuild:\n\tmkdir -p out && echo built > out/events\n\nlint:\n\ttrue\n"})
    c.step("Build", "make build")
    c.step("Test", "make test", lambda o: find(o, r"No rule to make target 'test'", limit=1))
    c.write(tool="make", category="config", made_by=made(name, version("make --version")))


@case("shell")
def script_step_sigterm(name: str, shape: str) -> None:
    c = _nightly_killed(Case("shell", name, shape, "events"), signal.SIGTERM, r"Terminated")
    c.write(tool="bash", category="infrastructure",
            made_by=made(name, version("bash --version") + "; SIGTERMed by the generator's watchdog (as a runner "
                               "stopping a cancelled or timed-out job does)"))


@case("java")
def mvn_java_home_invalid(name: str, shape: str) -> None:
    c = Case("java", name, shape, "invoice")
    c.files({"pom.xml": "<project><modelVersion>4.0.0</modelVersion><groupId>com.acme</groupId>"
                        "<artifactId>invoice</artifactId><version>1.0</version></project>\n"})
    c.step("Build", "mvn -B verify", lambda o: block(o, r"JAVA_HOME environment variable is not defined correctly", after=1),
           env={"JAVA_HOME": "/usr/lib/jvm/temurin-21-jdk-amd64"})
    c.write(tool="maven", category="config", made_by=made(name, version("mvn -v 2>&1 | sed 's/\\x1b\\[[0-9;]*m//g'")
                                                           + ", JAVA_HOME pointing at a JDK the runner lacks"))
