"""Shell cases: shellcheck findings, failing bats suites and `set -e` scripts that stop on a real error, run here
(shellcheck and bats from Debian), wrapped in the five CI shapes.

    python3 bench/corpus/make/shell/make.py [CASE...]
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kit import Step, cached, cleanup, env, first3, grep, project, version
from maker import ANSI_CSI, Cases, failing, make_all, passing
from record import write_case

Made = tuple[list[Step], str, str, str]

RELEASE = '''#!/usr/bin/env bash
# Build the release tarball and its checksum.
set -euo pipefail

VERSION=$(cat VERSION)
OUT=dist/tool-$VERSION
SRC_DIR=src

rm -rf dist
mkdir -p $OUT
for f in $(ls $SRC_DIR/*.sh); do
  cp $f $OUT/
done
cd $OUT
tar czf ../tool-$VERSION.tar.gz .
sha256sum ../tool-$VERSION.tar.gz > ../SHA256SUMS
echo "built $OUT"
'''

LIB = '''#!/usr/bin/env bash
# Helpers sourced by the CLI.

log() {
  echo "[$(date +%H:%M:%S)] $*" >&2
}

slugify() {
  echo "$1" | tr '[:upper:]' '[:lower:]' | sed -e 's/[^a-z0-9]\\+/-/g' -e 's/^-//' -e 's/-$//'
}

semver_gt() {
  [ "$(printf '%s\\n%s\\n' "$1" "$2" | sort -V | tail -n1)" = "$1" ] && [ "$1" != "$2" ]
}

count_lines() {
  wc -l < "$1" | tr -d ' '
}
'''

BATS = '''#!/usr/bin/env bats

setup() {
  source "$BATS_TEST_DIRNAME/../src/lib.sh"
}

@test "slugify lowercases" {
  run slugify "Hello"
  [ "$status" -eq 0 ]
  [ "$output" = "hello" ]
}

@test "slugify joins words" {
  run slugify "Hello Big World"
  [ "$output" = "hello-big-world" ]
}

@test "slugify trims punctuation" {
  run slugify "--Tea & Cake!"
  [ "$output" = "tea-cake" ]
}

@test "semver_gt compares versions" {
  semver_gt 1.10.0 1.9.0
}

@test "semver_gt is strict" {
  run semver_gt 1.2.0 1.2.0
  [ "$status" -eq 1 ]
}

@test "count_lines counts" {
  printf 'a\\nb\\nc\\n' > "$BATS_TEST_TMPDIR/f"
  run count_lines "$BATS_TEST_TMPDIR/f"
  [ "$output" -eq 3 ]
}
'''


def files(over: dict[str, str | None]) -> dict[str, str]:
    f: dict[str, str | None] = {"VERSION": "1.4.2\n", "src/release.sh": RELEASE, "src/lib.sh": LIB,
                                "test/lib.bats": BATS, "README.md": "# tool\n"}
    f.update(over)
    return {k: v for k, v in f.items() if v is not None}


def apt_step() -> Step:
    cmd = "sudo apt-get install -y --no-install-recommends shellcheck bats"
    out = cached("apt:shellcheck,bats", "apt-get install -y --no-install-recommends shellcheck bats")
    return Step("Install tools", cmd, out)


def sh_case(name: str, shape: str, over: dict[str, str | None], cmd: str, tool: str, category: str,
            causal: Callable[[list[str]], list[int]], pre: list[str] = (), ctx: str | None = None,
            made: str = "", apt: bool = True) -> Made:
    root = project(name, shape, files(over))
    steps = [apt_step()] if apt else []
    steps += [passing(p, root, env()) for p in pre]
    steps.append(failing(cmd, root, env(), tool.title(), causal, ctx=ctx, strip=ANSI_CSI))
    cleanup(root)
    return steps, tool, category, made or version(f"{tool} --version | grep -m1 -i version")


CASES: Cases[Callable[[str, str], Made]] = Cases()
case = CASES.case


def sc_tty(o: list[str]) -> list[int]:
    """tty format: `In FILE line N:`, the source line, and each `^-- SCnnnn` marker under it."""
    idx: list[int] = []
    for i, t in enumerate(o):
        if re.match(r"^In \S+ line \d+:$", t):
            idx += [i, i + 1]
        elif re.search(r"\^-+ SC\d{4} \((error|warning)\)|\^-- SC\d{4} \((error|warning)\)", t) or \
                (re.search(r"SC\d{4} \((error|warning|info|style)\):", t) and "^" in t):
            idx.append(i)
    return sorted(set(idx))


@case
def shellcheck_release_script(name: str, shape: str) -> Made:
    return sh_case(name, shape, {}, "shellcheck src/*.sh", "shellcheck", "lint", sc_tty,
                   made=version("shellcheck --version | sed -n 2p"))


@case
def shellcheck_gcc_format(name: str, shape: str) -> Made:
    return sh_case(name, shape, {}, "shellcheck -f gcc -S warning src/release.sh src/lib.sh", "shellcheck",
                   "lint", lambda o: grep(o, r"^src/\S+:\d+:\d+: (error|warning)", limit=20),
                   pre=["bats test"], made=version("shellcheck --version | sed -n 2p"))


@case
def shellcheck_deploy_cd(name: str, shape: str) -> Made:
    deploy = '''#!/bin/sh
# Copy the site to the web root.
TARGET=${1:-/var/www/site}
BUILD_DIR=public

cd $BUILD_DIR
files=`find . -type f | wc -l`
echo "deploying $files files to $TARGET"
if [ $files == 0 ]; then
  echo "nothing to deploy"; exit 1
fi
rsync -a --delete ./ $TARGET
read answer
echo $answer
'''
    return sh_case(name, shape, {"scripts/deploy.sh": deploy}, "shellcheck scripts/deploy.sh src/lib.sh",
                   "shellcheck", "lint", sc_tty, made=version("shellcheck --version | sed -n 2p"))


@case
def shellcheck_checkstyle_errors_only(name: str, shape: str) -> Made:
    bad = LIB.replace('echo "$1" | tr', 'echo $1 | tr').replace("count_lines() {", "count_lines() {\n  local n=$(wc -l $1)\n"
                                                                  "  [[ $n > 10 ]] && echo big")
    return sh_case(name, shape, {"src/lib.sh": bad}, "shellcheck --severity=warning --format=tty src/lib.sh",
                   "shellcheck", "lint", sc_tty, pre=["bash -n src/lib.sh"],
                   made=version("shellcheck --version | sed -n 2p"))


def bats_tap(o: list[str]) -> list[int]:
    """bats TAP: each `not ok` line and the `#` lines under it that say where and what failed."""
    idx: list[int] = []
    for i, t in enumerate(o):
        if t.startswith("not ok "):
            idx.append(i)
            j = i + 1
            while j < len(o) and o[j].startswith("#"):
                if re.search(r"\(in test file |\(from function |failed|`", o[j]) or \
                        re.search(r"command not found|No such file", o[j]):
                    idx.append(j)
                j += 1
    return sorted(set(idx))


def bats_pretty(o: list[str]) -> list[int]:
    idx: list[int] = []
    for i, t in enumerate(o):
        if "✗ " in t:
            idx.append(i)
            j = i + 1
            while j < len(o) and o[j].startswith("   "):
                if re.search(r"\(in test file |\(from function |failed|`|command not found|No such", o[j]):
                    idx.append(j)
                j += 1
    return sorted(set(idx))


@case
def bats_tap_output_mismatch(name: str, shape: str) -> Made:
    return sh_case(name, shape, {"src/lib.sh": LIB.replace("-e 's/-$//'", "")}, "bats --tap test", "bats",
                   "test", bats_tap, pre=["shellcheck -S error src/lib.sh"], ctx=r"^1\.\.\d+")


@case
def bats_pretty_status(name: str, shape: str) -> Made:
    return sh_case(name, shape, {"src/lib.sh": LIB.replace('&& [ "$1" != "$2" ]', "")}, "bats --formatter pretty "
                   "test", "bats", "test", bats_pretty, ctx=r"^\d+ tests?, \d+ failures?")


@case
def bats_missing_helper(name: str, shape: str) -> Made:
    test = BATS.replace('run count_lines "$BATS_TEST_TMPDIR/f"', 'run line_count "$BATS_TEST_TMPDIR/f"')
    return sh_case(name, shape, {"test/lib.bats": test}, "bats --tap --timing test", "bats", "test", bats_tap)


@case
def bats_setup_fails(name: str, shape: str) -> Made:
    test = BATS.replace('source "$BATS_TEST_DIRNAME/../src/lib.sh"', 'source "$BATS_TEST_DIRNAME/../src/helpers.sh"')
    return sh_case(name, shape, {"test/lib.bats": test}, "bats --tap test", "bats", "test",
                   lambda o: first3(o, bats_tap(o)), pre=["shellcheck src/lib.sh"])


# --- plain `set -e` scripts -----------------------------------------------------------------------------------

MAKEFILE = '''VERSION := $(shell cat VERSION)

.PHONY: all lint test release

all: lint test release

lint:
\tbash -n src/release.sh src/lib.sh

test:
\t@echo "unit tests: skipped on this runner"

release:
\tbash src/release.sh
'''


@case
def script_cp_cannot_stat(name: str, shape: str) -> Made:
    rel = RELEASE.replace("cd $OUT\n", "cp docs/CHANGELOG.md $OUT/\ncd $OUT\n")
    return sh_case(name, shape, {"src/release.sh": rel, "Makefile": MAKEFILE}, "make release", "bash", "build",
                   lambda o: grep(o, r"^cp: cannot stat"), pre=["make lint test"], made=version("bash --version"),
                   apt=False)


@case
def script_unbound_variable(name: str, shape: str) -> Made:
    publish = '''#!/usr/bin/env bash
set -euo pipefail
echo "publishing $(cat VERSION)"
echo "target: ${REGISTRY_URL}/tool"
curl --fail -sS -T dist/tool.tar.gz "${REGISTRY_URL}/tool/$(cat VERSION)"
'''
    return sh_case(name, shape, {"scripts/publish.sh": publish}, "bash scripts/publish.sh", "bash", "config",
                   lambda o: grep(o, r"unbound variable"), pre=["bash src/release.sh"], made=version("bash --version"),
                   apt=False)


@case
def script_command_not_found(name: str, shape: str) -> Made:
    bump = '''#!/usr/bin/env bash
set -e
current=$(cat VERSION)
echo "current version: $current"
next=$(git-chglog --next-tag-only "$current")
echo "$next" > VERSION
git tag "v$next"
'''
    return sh_case(name, shape, {"scripts/bump.sh": bump}, "./scripts/bump.sh", "bash", "config",
                   lambda o: grep(o, r"command not found"), made=version("bash --version"), apt=False)


@case
def script_tar_missing_dir(name: str, shape: str) -> Made:
    pkg = '''#!/usr/bin/env bash
set -eo pipefail
echo "::group::packaging"
mkdir -p out
tar -czvf out/site.tar.gz build/site README.md
echo "::endgroup::"
ls -l out
'''
    return sh_case(name, shape, {"scripts/package.sh": pkg}, "bash -x scripts/package.sh", "bash", "build",
                   lambda o: grep(o, r"^tar: build/site: Cannot", r"^tar: Exiting with failure"),
                   made=version("bash --version"), apt=False)


@case
def script_test_assertion(name: str, shape: str) -> Made:
    check = '''#!/usr/bin/env bash
# Smoke test of the built CLI: each line is "input|expected".
set -u
source src/lib.sh
fail=0
while IFS='|' read -r input want; do
  got=$(slugify "$input")
  if [ "$got" = "$want" ]; then
    echo "ok   slugify '$input' -> '$got'"
  else
    echo "FAIL slugify '$input': expected '$want', got '$got'"
    fail=1
  fi
done < test/cases.txt
exit $fail
'''
    cases = "Hello|hello\nHello World|hello-world\nTea & Cake|tea-cake\n  padded  |padded\nC++ Rocks|c-rocks\n" \
            "Ünïcode|unicode\n"
    return sh_case(name, shape, {"scripts/smoke.sh": check, "test/cases.txt": cases}, "bash scripts/smoke.sh",
                   "bash", "test", lambda o: grep(o, r"^FAIL "), made=version("bash --version"), apt=False)


@case
def script_make_recipe_fails(name: str, shape: str) -> Made:
    mk = MAKEFILE.replace("\tbash -n src/release.sh src/lib.sh", "\tfor f in src/release.sh src/lib.sh src/cli.sh; do bash -n $$f; done")
    return sh_case(name, shape, {"Makefile": mk}, "make all", "make", "lint",
                   lambda o: grep(o, r"src/cli\.sh: No such file"), made=version("make --version"), apt=False)



@case
def script_missing_secret(name: str, shape: str) -> Made:
    deploy = '''#!/usr/bin/env bash
# Publish the release tarball to the artifact store.
set -eo pipefail
: "${ARTIFACT_URL:=https://artifacts.example.com/tool}"
echo "release $(cat VERSION) -> $ARTIFACT_URL"
if [ -z "${ARTIFACT_TOKEN:-}" ]; then
  echo "ERROR: ARTIFACT_TOKEN is not set; add it to the repository secrets" >&2
  exit 3
fi
curl --fail -H "Authorization: Bearer $ARTIFACT_TOKEN" -T "dist/tool-$(cat VERSION).tar.gz" "$ARTIFACT_URL/"
'''
    return sh_case(name, shape, {"scripts/publish.sh": deploy}, "bash scripts/publish.sh", "bash", "config",
                   lambda o: grep(o, r"^ERROR: ARTIFACT_TOKEN"), pre=["bash src/release.sh"],
                   made=version("bash --version"), apt=False)



@case
def shfmt_diff(name: str, shape: str) -> Made:
    ugly = LIB.replace("log() {\n  echo", "log()\n{\n    echo").replace("slugify() {", "slugify () {")
    return sh_case(name, shape, {"src/lib.sh": ugly}, "shfmt -d -i 2 src", "shfmt", "lint",
                   lambda o: grep(o, r"^(---|\+\+\+) src/\S+", limit=4), pre=["shellcheck -S error src/lib.sh"],
                   made=version("shfmt --version") + " (shfmt, Debian)", apt=False)


def write(cname: str, fn: Callable[[str, str], Made], shape: str, n: int) -> tuple[str, Path]:
    steps, tool, category, made = fn(cname, shape)
    folder = write_case("shell", cname, steps, shape, tool=tool, category=category, seed=200 + n,
                        made_by=f"{made} on a small generated project (make/shell/make.py:{fn.__name__}), run here; "
                                "shape by make/shapes.py", job="ci")
    return f"{cname} {shape} {tool} {category}", folder


def main(argv: list[str]) -> int:
    return make_all(CASES, argv, shape_from=2, write=write)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
