"""Cases of tools and situations the rest of the corpus does not cover: languages with no rule file (R, Prolog,
Tcl, Zig, Solidity, SQL, Protocol Buffers), infrastructure-as-code and acceptance-test tools (Ansible, Robot
Framework, behave, cucumber-js), newer JavaScript tool chains (Deno, Biome, Jasmine), Python packaging front ends
(uv, Poetry, pre-commit), a JSON-schema check of a workflow, a registry answering 429, a crash in a test, and
logs where a warning storm, a recovered disk-full message or a second job surround the one real failure.

Each case runs the real tool here on a small project with one injected fault and labels it from that knowledge
(GUIDELINE.md). Nothing the tools print is edited; the CI frame comes from make/shapes.py.

    python3 bench/corpus/make/wide/make.py --tools      # once: venv + npm tools under $CORPUS_WORK (/tmp/corpus-w)
    python3 bench/corpus/make/wide/make.py [CASE...]    # (re)write the cases; all when none is named

Tools: Debian 12 (`apt-get install r-base-core r-cran-testthat swi-prolog-nox tcl protobuf-compiler`), PyPI
(robotframework behave sqlfluff ansible-core pre-commit uv ziglang poetry check-jsonschema), npm (solc@0.8.28
@biomejs/biome deno jasmine @cucumber/cucumber). Registries the tools talk to are on loopback, made here.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

os.environ.setdefault("CORPUS_WORK", "/tmp/corpus-w")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kit import WORK, Step, cleanup, env, grep, project
from maker import Cases, make_all
from record import find, run, write_case
from shapes import render
from ws import wheel

PIP_TOOLS = ["pytest", "robotframework", "behave", "sqlfluff", "ansible-core", "pre-commit", "uv", "ziglang", "poetry",
             "check-jsonschema"]
NPM_TOOLS = ["solc@0.8.28", "@biomejs/biome", "deno", "jasmine", "@cucumber/cucumber"]
APT_TOOLS = ["r-base-core", "r-cran-testthat", "swi-prolog-nox", "tcl", "protobuf-compiler"]
PY = str(WORK / "tools" / "bin" / "python")
NODE_BIN = WORK / "node" / "node_modules" / ".bin"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\]8;;[^\x1b]*\x1b\\\\")


def tools() -> None:
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *APT_TOOLS], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(WORK / "tools")], check=True)
    subprocess.run([PY, "-m", "pip", "install", "-q", *PIP_TOOLS], check=True)
    (WORK / "node").mkdir(parents=True, exist_ok=True)
    (WORK / "node" / "package.json").write_text('{"name": "t", "version": "1.0.0", "private": true}\n')
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", *NPM_TOOLS], cwd=WORK / "node", check=True)


def ver(cmd: str) -> str:
    out, _ = run(cmd, cwd=WORK, env=env())
    return _ANSI.sub("", next((t for t in out if t.strip()), "?")).strip()


def pyver(pkg: str) -> str:
    return pkg + " " + ver(f"{PY} -c 'import importlib.metadata as m; print(m.version(\"{pkg}\"))'")


def plain(out: list[str]) -> list[str]:
    return [_ANSI.sub("", t) for t in out]


# A case returns (ecosystem, steps, tool, category, versions).
Made = tuple[str, list[Step], str, str, str]
CASES: Cases[Callable[[str, str], Made]] = Cases()
case = CASES.case


def steps_for(root: Path, pre: list[tuple[str, str]], name: str, cmd: str,
              causal: Callable[[list[str]], list[int]], *, post: list[tuple[str, str]] = (),
              context: str | None = None, env_extra: dict[str, str] | None = None,
              expect_fail: bool = True) -> list[Step]:
    """Run the passing set-up steps, the failing one (labelled by `causal` over its ANSI-free lines) and the
    steps that run after a failure."""
    e = env(**(env_extra or {}))
    steps = []
    for title, c in pre:
        o, code = run(c, cwd=root, env=e)
        assert code == 0, (c, o[-20:])
        steps.append(Step(title, c, o))
    out, code = run(cmd, cwd=root, env=e)
    if expect_fail:
        assert code != 0, (cmd, out[-30:])
    flat = plain(out)
    code = 128 - code if code < 0 else code  # killed by a signal: the shell's 128+N
    steps.append(Step(name, cmd, out, code or 1, causal=causal(flat),
                      context=find(flat, context) if context else []))
    for title, c in post:
        o, _ = run(c, cwd=root, env=e)
        steps.append(Step(title, c, o, always=True))
    return steps


def block(lines: list[str], start: str, stop: str = r"^\s*$", limit: int = 6) -> list[int]:
    """Each line matching `start` and the lines under it up to `stop` (not included), at most `limit` each."""
    out: list[int] = []
    for i, t in enumerate(lines):
        if re.search(start, t):
            k = i
            while k < len(lines) and k - i < limit and (k == i or not re.search(stop, lines[k])):
                out.append(k)
                k += 1
    if not out:
        raise LookupError(f"{start!r} found nothing in:\n" + "\n".join(lines[-40:]))
    return sorted(set(out))


# --- R ---------------------------------------------------------------------------------------------------------

R_STATS = """avg <- function(x) sum(x) / length(x)
med <- function(x) {
  s <- sort(x)
  n <- length(s)
  s[n %/% 2]
}
read_cfg <- function(path) readLines(file(path, "r"))
"""
R_TEST = """source(file.path("..", "..", "R", "stats.R"))

test_that("mean of values", {
  expect_equal(avg(c(1, 2, 3)), 2)
})

test_that("median of an even count", {
  expect_equal(med(c(1, 2, 3, 4)), 2.5)
})
"""
R_DESC = """Package: tidystats
Title: Small Statistics Helpers
Version: 0.2.0
Authors@R: person("Ada", "Example", email = "ada@example.org", role = c("aut", "cre"))
Description: Means, medians and configuration readers used by the reporting scripts.
License: MIT + file LICENSE
Encoding: UTF-8
"""


def r_project(name: str, shape: str, over: dict[str, str]) -> Path:
    files = {"R/stats.R": R_STATS, "tests/testthat/test-stats.R": R_TEST, "DESCRIPTION": R_DESC,
             "NAMESPACE": "export(avg)\nexport(med)\nexport(read_cfg)\n", "LICENSE": "YEAR: 2026\nCOPYRIGHT HOLDER: Ada\n"}
    files.update(over)
    return project(name, shape, files)


R_TESTDIR = "Rscript -e 'testthat::test_dir(\"tests/testthat\", stop_on_failure = TRUE)'"
R_VER = "R 4.2.2, testthat 3.1.6 (Debian)"


def testthat_blocks(o: list[str]) -> list[int]:
    """testthat: each `Failure (...)`/`Error (...)` header and its message lines up to the blank line, without
    the backtrace's runner frames."""
    out = []
    for i in block(o, r"^(?:── )?(?:Failure|Error) \(", r"^\s*$|^─|^Backtrace", limit=5):
        if o[i].startswith("Backtrace") or re.match(r"^\s+(?:\d+\.|at |▆)", o[i]):
            continue
        out.append(i)
    return out


@case
def r_testthat_failure(name: str, shape: str) -> Made:
    root = r_project(name, shape, {})
    steps = steps_for(root, [("R version", "R --version | head -n 1")], "Run tests", R_TESTDIR, testthat_blocks)
    cleanup(root)
    return "r", steps, "testthat", "test", R_VER


@case
def r_testthat_error(name: str, shape: str) -> Made:
    test = R_TEST + """
test_that("reads the site configuration", {
  cfg <- read_cfg("config/site.yml")
  expect_true(length(cfg) > 0)
})
"""
    root = r_project(name, shape, {"tests/testthat/test-stats.R": test, "R/stats.R": R_STATS.replace(
        "s[n %/% 2]", "if (n %% 2) s[(n + 1) / 2] else mean(s[n / 2 + 0:1])")})
    steps = steps_for(root, [("R version", "R --version | head -n 1")], "Run tests", R_TESTDIR,
                      lambda o: grep(o, r"^(?:── )?Error \(", r"^Error in `file", r"cannot open file"))
    cleanup(root)
    return "r", steps, "testthat", "test", R_VER


@case
def r_cmd_install_syntax(name: str, shape: str) -> Made:
    root = r_project(name, shape, {"R/stats.R": R_STATS.replace("s[n %/% 2]", "s[n %/% 2]]")})
    steps = steps_for(root, [("R version", "R --version | head -n 1"), ("Library", "mkdir -p /tmp/rlib")],
                      "Install package", "R CMD INSTALL --library=/tmp/rlib .",
                      lambda o: grep(o, r"^Error in parse", r"unexpected '\]'", r"^\d+:.*\]\]"))
    cleanup(root)
    return "r", steps, "R CMD INSTALL", "build", R_VER


@case
def r_missing_dependency(name: str, shape: str) -> Made:
    desc = R_DESC + "Imports: glue, yamlreader\n"
    root = r_project(name, shape, {"DESCRIPTION": desc})
    steps = steps_for(root, [("R version", "R --version | head -n 1"), ("Library", "mkdir -p /tmp/rlib")],
                      "Install package", "R CMD INSTALL --library=/tmp/rlib .",
                      lambda o: grep(o, r"dependency .yamlreader. is not available"))
    cleanup(root)
    return "r", steps, "R CMD INSTALL", "dependency", R_VER


@case
def r_install_packages_dns(name: str, shape: str) -> Made:
    script = ("install.packages('yamlreader', repos = 'https://cran.mirror.invalid', lib = '/tmp/rlib')\n")
    root = r_project(name, shape, {"ci/deps.R": script, "ci/report.R": "library(yamlreader, lib.loc = '/tmp/rlib')\n"
                                   "cfg <- read_yaml('config.yml')\n"})
    e = env()
    o1, c1 = run("mkdir -p /tmp/rlib && Rscript ci/deps.R", cwd=root, env=e)
    assert c1 == 0, o1
    f1 = plain(o1)
    s1 = Step("Install R packages", "Rscript ci/deps.R", o1,
              causal=grep(f1, r"unable to access index|cannot open URL|Could not resolve|resolve host", limit=2))
    o2, c2 = run("Rscript ci/report.R", cwd=root, env=e)
    assert c2 != 0
    s2 = Step("Render report", "Rscript ci/report.R", o2, c2,
              causal=grep(plain(o2), r"there is no package called"))
    cleanup(root)
    return "r", [Step("R version", "R --version | head -n 1", run("R --version | head -n 1", cwd=WORK)[0]), s1,
                 s2], "Rscript", "network", R_VER


# --- Prolog ----------------------------------------------------------------------------------------------------

PL_LISTS = """:- module(lists2, [rev/2, total/2, parse_pair/3]).
rev(L, R) :- rev(L, [], R).
rev([], A, A).
rev([H|T], A, R) :- rev(T, [H|A], R).
total([], 0).
total([H|T], S) :- total(T, S0), S is S0 + H.
parse_pair(Text, K, V) :- split_string(Text, "=", " ", [K, V]).
"""
PL_TEST = """:- use_module(lists).
:- use_module(library(plunit)).
:- begin_tests(lists2).
test(rev) :- rev([1,2,3], [3,2,1]).
test(total) :- total([1,2,3], S), assertion(S =:= 6).
test(total_four, [true(S == 10)]) :- total([1,2,3,4], S).
test(pair) :- parse_pair("a = 1", K, V), K == "a", V == "1".
:- end_tests(lists2).
"""
PL_VER = "SWI-Prolog 9.0.4 with plunit (Debian)"
PL_RUN = "swipl -g run_tests -t halt tests/test_lists.pl"


def pl_project(name: str, shape: str, lists: str, test: str = PL_TEST) -> Path:
    return project(name, shape, {"tests/lists.pl": lists, "tests/test_lists.pl": test, "pack.pl":
                                 "name(lists2).\nversion('0.1.0').\ntitle('List helpers').\n"})


def plunit_blocks(o: list[str]) -> list[int]:
    out = []
    for i, t in enumerate(o):
        if re.match(r"^ERROR: \S+\.pl:\d+:", t):
            out.append(i)
            k = i + 1
            while k < len(o) and (o[k].startswith("\t") or re.match(r"^ERROR:\s{3,}", o[k])):
                out.append(k)
                k += 1
    return out


@case
def plunit_wrong_answer(name: str, shape: str) -> Made:
    root = pl_project(name, shape, PL_LISTS.replace("S0 + H.", "S0 + H + 1."))
    steps = steps_for(root, [("Prolog version", "swipl --version")], "Test", PL_RUN, plunit_blocks)
    cleanup(root)
    return "prolog", steps, "plunit", "test", PL_VER


@case
def plunit_unknown_procedure(name: str, shape: str) -> Made:
    test = PL_TEST.replace(":- end_tests", "test(config) :- load_config('app.cfg', C), C \\== [].\n:- end_tests")
    root = pl_project(name, shape, PL_LISTS, test)
    steps = steps_for(root, [("Prolog version", "swipl --version")], "Test", PL_RUN, plunit_blocks)
    cleanup(root)
    return "prolog", steps, "plunit", "test", PL_VER


@case
def prolog_syntax_error(name: str, shape: str) -> Made:
    root = pl_project(name, shape, PL_LISTS.replace("rev([], A, A).", "rev([], A, A)"))
    steps = steps_for(root, [("Prolog version", "swipl --version")], "Test", PL_RUN,
                      lambda o: grep(o, r"^ERROR: \S+/tests/lists\.pl:\d+"))
    cleanup(root)
    return "prolog", steps, "swipl", "test", PL_VER


# --- Tcl -------------------------------------------------------------------------------------------------------

TCL_LIB = """namespace eval strutil {
    proc slug {s} {
        return [string map {" " "-"} [string tolower $s]]
    }
    proc pad {s n} {
        return [format "%-${n}s" $s]
    }
    proc words {s} {
        return [llength [split $s " "]]
    }
}
"""
TCL_TEST = """package require tcltest
namespace import ::tcltest::*
source [file join [file dirname [info script]] .. lib strutil.tcl]

test slug-1.1 {lower case and dashes} {
    strutil::slug "Hello World"
} hello-world

test pad-1.1 {pads to width} {
    strutil::pad ab 4
} "ab  "

test words-1.1 {counts words} {
    strutil::words "one two three"
} 3

cleanupTests
"""
TCL_ALL = """package require tcltest
::tcltest::configure -testdir [file dirname [file normalize [info script]]] -singleproc 1
set failed 0
proc ::tcltest::cleanupTestsHook {} {
    variable numTests
    set ::failed [expr {$::failed + $numTests(Failed)}]
}
::tcltest::runAllTests
exit [expr {$failed > 0}]
"""
TCL_VER = "Tcl 8.6.13 with tcltest 2.5 (Debian)"


@case
def tcltest_wrong_result(name: str, shape: str) -> Made:
    lib = TCL_LIB.replace('return [llength [split $s " "]]', 'return [expr {[llength [split $s " "]] + 1}]')
    root = project(name, shape, {"lib/strutil.tcl": lib, "tests/strutil.test": TCL_TEST,
                                 "tests/all.tcl": TCL_ALL})
    steps = steps_for(root, [("Tcl version", "echo 'puts [info patchlevel]' | tclsh")], "Test", "tclsh tests/all.tcl",
                      lambda o: sorted(grep(o, r"^==== words-1\.1 counts words FAILED") + after(o, r"^---- Result was:", 1)
                                     + after(o, r"^---- Result should have been", 1)))
    cleanup(root)
    return "tcl", steps, "tcltest", "test", TCL_VER


@case
def tcltest_error(name: str, shape: str) -> Made:
    lib = TCL_LIB.replace('format "%-${n}s" $s', 'format "%-${width}s" $s')
    root = project(name, shape, {"lib/strutil.tcl": lib, "tests/strutil.test": TCL_TEST.replace(
        "string map", "string map"), "tests/all.tcl": TCL_ALL})
    steps = steps_for(root, [("Tcl version", "echo 'puts [info patchlevel]' | tclsh")], "Test", "tclsh tests/all.tcl",
                      lambda o: grep(o, r"^==== pad-1\.1 pads", r"Test generated error",
                                     r"can't read \"width\""))
    cleanup(root)
    return "tcl", steps, "tcltest", "test", TCL_VER


@case
def tcl_script_error(name: str, shape: str) -> Made:
    gen = """# Writes the version header the C build includes.
set fh [open VERSION r]
set version [string trim [read $fh]]
close $fh
set out [open $outdir/version.h w]
puts $out "#define APP_VERSION \\"$version\\""
close $out
"""
    root = project(name, shape, {"VERSION": "2.4.0\n", "tools/genversion.tcl": gen, "lib/strutil.tcl": TCL_LIB})
    steps = steps_for(root, [("Tcl version", "echo 'puts [info patchlevel]' | tclsh")], "Generate headers",
                      "tclsh tools/genversion.tcl", lambda o: grep(o, r"can't read \"outdir\"", r"^\s+while executing",
                                                                   r"\"open \$outdir"))
    cleanup(root)
    return "tcl", steps, "tclsh", "build", TCL_VER


# --- Protocol Buffers ------------------------------------------------------------------------------------------

PROTO_COMMON = """syntax = "proto3";
package shop.common;

message Money {
  string currency = 1;
  int64 units = 2;
}
"""
PROTO_API = """syntax = "proto3";
package shop.api;

import "shop/common/money.proto";

message Item {
  string sku = 1;
  string title = 2;
  shop.common.Money price = 3;
}

message Order {
  string id = 1;
  repeated Item items = 2;
  shop.common.Money total = 3;
}
"""
PROTOC = "mkdir -p gen && protoc -I proto --python_out=gen proto/shop/api/order.proto proto/shop/common/money.proto"


def protoc_case(name: str, shape: str, over: dict[str, str], causal: Callable[[list[str]], list[int]]) -> Made:
    files = {"proto/shop/common/money.proto": PROTO_COMMON, "proto/shop/api/order.proto": PROTO_API}
    files.update(over)
    root = project(name, shape, files)
    steps = steps_for(root, [("protoc version", "protoc --version")], "Generate code", PROTOC, causal)
    cleanup(root)
    return "protobuf", steps, "protoc", "build", ver("protoc --version") + " (Debian)"


@case
def protoc_syntax(name: str, shape: str) -> Made:
    return protoc_case(name, shape, {"proto/shop/api/order.proto": PROTO_API.replace("string title = 2;",
                                                                                     "string title = 2")},
                       lambda o: grep(o, r"order\.proto:\d+:\d+:"))


@case
def protoc_import_missing(name: str, shape: str) -> Made:
    return protoc_case(name, shape, {"proto/shop/api/order.proto": PROTO_API.replace(
        "shop/common/money.proto", "shop/common/currency.proto")},
        lambda o: grep(o, r"currency\.proto: File not found|not found or had errors", r"is not defined"))


@case
def protoc_duplicate_field(name: str, shape: str) -> Made:
    return protoc_case(name, shape, {"proto/shop/api/order.proto": PROTO_API.replace(
        "shop.common.Money total = 3;", "shop.common.Money total = 2;")},
        lambda o: grep(o, r"Field number 2 has already been used"))


# --- SQL (sqlfluff) --------------------------------------------------------------------------------------------

SQL_ORDERS = """select
    o.id,
    o.customer_id,
    sum(i.amount) as total
from orders as o
inner join items as i on o.id = i.order_id
where o.status = 'paid'
group by o.id, o.customer_id
"""
SQLFLUFF_CFG = "[sqlfluff]\ndialect = ansi\nmax_line_length = 100\n"


def sql_case(name: str, shape: str, over: dict[str, str], causal: Callable[[list[str]], list[int]],
             cmd: str = "sqlfluff lint models/") -> Made:
    files = {"models/orders.sql": SQL_ORDERS, ".sqlfluff": SQLFLUFF_CFG,
             "models/customers.sql": "select\n    id,\n    name\nfrom customers\n"}
    files.update(over)
    root = project(name, shape, files)
    steps = steps_for(root, [("sqlfluff version", "sqlfluff --version")], "Lint SQL", cmd, causal)
    cleanup(root)
    return "sql", steps, "sqlfluff", "lint", pyver("sqlfluff")


@case
def sqlfluff_violations(name: str, shape: str) -> Made:
    bad = SQL_ORDERS.replace("    o.customer_id,", "    o.customer_id,   ").replace("from orders as o", "FROM orders o")
    return sql_case(name, shape, {"models/orders.sql": bad},
                    lambda o: grep(o, r"^== \[models/orders\.sql\] FAIL", r"^L:\s+\d+ \| P:", limit=10))


@case
def sqlfluff_parse_error(name: str, shape: str) -> Made:
    bad = SQL_ORDERS.replace("group by o.id", "group o.id")
    return sql_case(name, shape, {"models/orders.sql": bad},
                    lambda o: grep(o, r"^== \[models/orders\.sql\] FAIL", r"PRS|unparsable|Couldn't find", limit=4))


@case
def sqlfluff_github_annotations(name: str, shape: str) -> Made:
    bad = SQL_ORDERS.replace("sum(i.amount) as total", "SUM(i.amount) total")
    return sql_case(name, shape, {"models/orders.sql": bad}, lambda o: grep(o, r"^::(?:error|warning)", limit=10),
                    cmd="sqlfluff lint --format github-annotation-native --annotation-level failure models/")


# --- Ansible ---------------------------------------------------------------------------------------------------

ANSIBLE_CFG = "[defaults]\ninventory = inventory.ini\nroles_path = ./roles\nretry_files_enabled = False\nstdout_callback = default\n"
INVENTORY = "[local]\nlocalhost ansible_connection=local ansible_python_interpreter=/usr/bin/python3\n"


def ansible_case(name: str, shape: str, play: str, causal: Callable[[list[str]], list[int]], category: str,
                 extra: dict[str, str] | None = None, cmd: str = "ansible-playbook tests/test.yml") -> Made:
    files = {"ansible.cfg": ANSIBLE_CFG, "inventory.ini": INVENTORY, "tests/test.yml": play,
             "roles/app/defaults/main.yml": "app_user: deploy\napp_dir: /tmp/ansible-app\n"}
    files.update(extra or {})
    root = project(name, shape, files)
    steps = steps_for(root, [("Ansible version", "ansible --version | head -n 1")], "Run role tests", cmd, causal,
                      env_extra={"ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0",
                                 "ANSIBLE_LOCAL_TEMP": "/tmp/ansible-tmp", "ANSIBLE_HOME": "/tmp/ansible-home"})
    cleanup(root)
    return "ansible", steps, "ansible-playbook", category, pyver("ansible-core")


ROLE_TASKS = """- name: Create the application directory
  ansible.builtin.file:
    path: "{{ app_dir }}"
    state: directory
    mode: "0755"

- name: Write the service configuration
  ansible.builtin.copy:
    dest: "{{ app_dir }}/app.conf"
    content: |
      user = {{ app_user }}
      port = {{ app_port }}
    mode: "0644"
"""
PLAY = """- name: Test the app role
  hosts: local
  gather_facts: false
  roles:
    - app
  tasks:
    - name: Read the written configuration
      ansible.builtin.slurp:
        src: /tmp/ansible-app/app.conf
      register: conf

    - name: The configuration names the service user
      ansible.builtin.assert:
        that:
          - "'user = deploy' in (conf.content | b64decode)"
          - "'port = 8080' in (conf.content | b64decode)"
        fail_msg: "app.conf does not hold the expected settings"
"""


@case
def ansible_assert_failed(name: str, shape: str) -> Made:
    return ansible_case(name, shape, PLAY, lambda o: grep(o, r"^fatal: \[localhost\]: FAILED!", r"^TASK \[The conf",
                                                          r"^\[ERROR\]: Task failed", r"^Origin: ", r'^\s+"assertion"',
                                                          r'^\s+"msg"', limit=1), "test",
                        {"roles/app/tasks/main.yml": ROLE_TASKS,
                         "roles/app/defaults/main.yml": "app_user: deploy\napp_dir: /tmp/ansible-app\napp_port: 80\n"})


@case
def ansible_undefined_variable(name: str, shape: str) -> Made:
    return ansible_case(name, shape, PLAY, lambda o: grep(o, r"^fatal: \[localhost\]: FAILED!",
                                                          r"^TASK \[app : Write the service", r"^\[ERROR\]: Task failed",
                                                          r"^Error while resolving value", limit=1), "config",
                        {"roles/app/tasks/main.yml": ROLE_TASKS})


@case
def ansible_missing_collection(name: str, shape: str) -> Made:
    tasks = ROLE_TASKS + """
- name: Open the service port
  community.general.ufw:
    rule: allow
    port: "{{ app_port }}"
"""
    return ansible_case(name, shape, PLAY, lambda o: grep(o, r"^\[ERROR\]: couldn't resolve module", r"^Origin: ",
                                                          r"^\[WARNING\]: Error loading plugin", limit=1), "dependency",
                        {"roles/app/tasks/main.yml": tasks})


@case
def ansible_command_failed_with_warnings(name: str, shape: str) -> Made:
    tasks = ROLE_TASKS.replace("{{ app_port }}", "8080") + """
- name: Render the site templates
  ansible.builtin.shell: echo "rendering {{ item }}" && echo "template {{ item }} uses a deprecated filter" >&2
  loop: "{{ range(1, 41) | list }}"
  changed_when: false
""" + """
- name: Validate the configuration
  ansible.builtin.command: /usr/bin/test -f {{ app_dir }}/app.schema.json
  changed_when: false
"""
    play = PLAY.replace("gather_facts: false", "gather_facts: false\n  vars:\n    legacy_mode: yes\n    "
                        "retries_count: '3'")
    return ansible_case(name, shape, play, lambda o: grep(o, r"^fatal: \[localhost\]: FAILED!",
                                                          r"^TASK \[app : Validate", r"^\[ERROR\]: Task failed",
                                                          r"^Origin: .*main\.yml", limit=1), "test",
                        {"roles/app/tasks/main.yml": tasks}, cmd="ansible-playbook -v tests/test.yml")


# --- Robot Framework, behave, cucumber-js, Jasmine --------------------------------------------------------------

ROBOT_LIB = '''"""Keywords for the price calculator."""


def total_price(*prices):
    return round(sum(float(p) for p in prices) * 1.2, 2)


def discount(price, percent):
    return round(float(price) * (100 - float(percent)) / 100, 1)
'''
ROBOT_SUITE = """*** Settings ***
Library    PriceLib.py

*** Test Cases ***
Total Includes Tax
    ${total}=    Total Price    10    20
    Should Be Equal As Numbers    ${total}    36

Discount Is Applied
    ${p}=    Discount    80    25
    Should Be Equal As Numbers    ${p}    60

Free Shipping Threshold
    ${total}=    Total Price    40    45
    Should Be True    ${total} > 100
"""


def robot_case(name: str, shape: str, suite: str, lib: str, causal: Callable[[list[str]], list[int]]) -> Made:
    root = project(name, shape, {"tests/PriceLib.py": lib, "tests/price.robot": suite})
    steps = steps_for(root, [("Robot version", "robot --version || true")], "Acceptance tests",
                      "robot --outputdir results --console verbose tests", causal,
                      post=[("Upload results", "ls results")])
    cleanup(root)
    return "robot", steps, "robot", "test", pyver("robotframework")


@case
def robot_failed_check(name: str, shape: str) -> Made:
    return robot_case(name, shape, ROBOT_SUITE, ROBOT_LIB.replace("* (100 - float(percent)) / 100, 1)",
                                                                    "* float(percent) / 100, 1)"),
                      lambda o: after(o, r"^Discount Is Applied\s+\| FAIL \|", 1))


@case
def robot_keyword_missing(name: str, shape: str) -> Made:
    suite = ROBOT_SUITE.replace("    ${p}=    Discount    80    25", "    ${p}=    Apply Discount    80    25")
    return robot_case(name, shape, suite, ROBOT_LIB, lambda o: after(o, r"^Discount Is Applied\s+\| FAIL \|", 1))


def after(lines: list[str], pat: str, n: int) -> list[int]:
    i = grep(lines, pat, limit=1)[0]
    return list(range(i, min(len(lines), i + n + 1)))


BEHAVE_FEATURE = """Feature: Shopping cart
  Scenario: Adding an item updates the total
    Given an empty cart
    When I add an item priced 12.50
    Then the cart total is 12.50

  Scenario: Removing the only item empties the cart
    Given an empty cart
    When I add an item priced 3.00
    And I remove the last item
    Then the cart is empty
"""
BEHAVE_STEPS = '''from behave import given, then, when


@given("an empty cart")
def empty(context):
    context.cart = []


@when("I add an item priced {price:f}")
def add(context, price):
    context.cart.append(price)


@when("I remove the last item")
def remove(context):
    context.cart = context.cart[:-1]


@then("the cart total is {total:f}")
def total(context, total):
    assert round(sum(context.cart) * 1.1, 2) == total, f"total was {sum(context.cart) * 1.1:.2f}"


@then("the cart is empty")
def is_empty(context):
    assert context.cart == []
'''


@case
def behave_step_failed(name: str, shape: str) -> Made:
    root = project(name, shape, {"features/cart.feature": BEHAVE_FEATURE, "features/steps/cart.py": BEHAVE_STEPS})
    steps = steps_for(root, [("behave version", "behave --version")], "BDD tests",
                      "behave --no-color --format plain features",
                      lambda o: grep(o, r"^ASSERT FAILED", r"Then the cart total is 12\.50 \.\.\. failed", limit=1),
                      context=r"^\s+features/cart\.feature:2\s")
    cleanup(root)
    return "python", steps, "behave", "test", pyver("behave")


CUKE_STEPS = """const { Given, When, Then } = require('@cucumber/cucumber');
const assert = require('node:assert');

Given('an empty cart', function () { this.cart = []; });
When('I add an item priced {float}', function (p) { this.cart.push(p); });
When('I remove the last item', function () { this.cart.shift(); });
Then('the cart total is {float}', function (t) {
  assert.strictEqual(this.cart.reduce((a, b) => a + b, 0), t);
});
Then('the cart is empty', function () { assert.deepStrictEqual(this.cart, []); });
"""


@case
def cucumber_js_failed(name: str, shape: str) -> Made:
    feature = BEHAVE_FEATURE.replace("priced 3.00\n    And I remove", "priced 3.00\n    And I add an item priced 4."
                                     "00\n    And I remove")
    root = project(name, shape, {"features/cart.feature": feature, "features/steps/cart.js": CUKE_STEPS,
                                 "package.json": '{"name": "cart", "version": "1.0.0", "private": true}\n'})
    run(["ln", "-s", str(WORK / "node" / "node_modules"), str(root / "node_modules")], cwd=root)
    steps = steps_for(root, [("Node version", "node --version")], "Acceptance tests",
                      "npx cucumber-js --format progress",
                      lambda o: grep(o, r"^\d+\) Scenario: Removing", r"✖ (?:Then|And) the cart is empty",
                                     r"AssertionError", r"^\s+\+ actual|^\s+- expected|^\+\s+4|^\s+\[$", limit=2))
    cleanup(root)
    return "javascript", steps, "cucumber-js", "test", "@cucumber/cucumber " + ver(f"{NODE_BIN}/cucumber-js --version")


JASMINE_SRC = """function slugify(s) {
  return s.toLowerCase().trim().replace(/\\s+/g, '_');
}
function wordCount(s) {
  return s.split(' ').length;
}
module.exports = { slugify, wordCount };
"""
JASMINE_SPEC = """const { slugify, wordCount } = require('../src/text');

describe('slugify', () => {
  it('lower-cases and dashes', () => {
    expect(slugify('Hello World')).toBe('hello-world');
  });
  it('trims', () => {
    expect(slugify('  a  ')).toBe('a');
  });
});

describe('wordCount', () => {
  it('counts words', () => {
    expect(wordCount('one two three')).toEqual(3);
  });
});
"""


@case
def jasmine_failed(name: str, shape: str) -> Made:
    root = project(name, shape, {"src/text.js": JASMINE_SRC, "spec/text.spec.js": JASMINE_SPEC,
                                 "spec/support/jasmine.json": '{"spec_dir": "spec", "spec_files": ["**/*.spec.js"]}\n',
                                 "package.json": '{"name": "text", "version": "1.0.0", "private": true}\n'})
    run(["ln", "-s", str(WORK / "node" / "node_modules"), str(root / "node_modules")], cwd=root)
    steps = steps_for(root, [("Node version", "node --version")], "Unit tests", "npx jasmine",
                      lambda o: grep(o, r"^\d+\) slugify lower-cases", r"Expected '.*' to be 'hello-world'",
                                     r"at .*spec/text\.spec\.js:\d+", limit=1))
    cleanup(root)
    return "javascript", steps, "jasmine", "test", "jasmine " + ver(f"{NODE_BIN}/jasmine --version | head -n 1")


# --- Deno and Biome ---------------------------------------------------------------------------------------------

DENO_SRC = """export function parseDuration(text: string): number {
  const m = /^(\\d+)(ms|s|m)$/.exec(text);
  if (!m) throw new Error(`bad duration: ${text}`);
  const n = Number(m[1]);
  return m[2] === "ms" ? n : m[2] === "s" ? n * 1000 : n * 60_000;
}
"""
DENO_TEST = """import assert from "node:assert";
import { parseDuration } from "./duration.ts";

Deno.test("parses seconds", () => {
  assert.strictEqual(parseDuration("3s"), 3000);
});

Deno.test("parses minutes", () => {
  assert.strictEqual(parseDuration("2m"), 120_000);
});

Deno.test("rejects hours", () => {
  assert.throws(() => parseDuration("1h"));
});
"""


def deno_case(name: str, shape: str, over: dict[str, str], cmd: str, causal: Callable[[list[str]], list[int]],
              category: str) -> Made:
    files = {"src/duration.ts": DENO_SRC, "src/duration_test.ts": DENO_TEST, "deno.json": '{"lock": false}\n'}
    files.update(over)
    root = project(name, shape, files)
    steps = steps_for(root, [("Deno version", "deno --version")], cmd.split()[1].title(), cmd, causal,
                      env_extra={"NO_COLOR": "1", "DENO_DIR": str(WORK / "deno")})
    cleanup(root)
    return "javascript", steps, "deno", category, ver("deno --version")


@case
def deno_test_failed(name: str, shape: str) -> Made:
    return deno_case(name, shape, {"src/duration.ts": DENO_SRC.replace("n * 60_000", "n * 6_000")}, "deno test src/",
                     lambda o: grep(o, r"^parses minutes => ", r"^error: AssertionError", r"^\d+ !== \d+",
                                    r"^\s+at .*duration_test\.ts", limit=1), "test")


@case
def deno_lint(name: str, shape: str) -> Made:
    src = DENO_SRC.replace("  const n = Number(m[1]);", "  var n = Number(m[1]);\n  let unused = 1;")
    return deno_case(name, shape, {"src/duration.ts": src}, "deno lint src/",
                     lambda o: grep(o, r"^error\[[\w-]+\]", r"^\s+--> .*duration\.ts:\d+", limit=3), "lint")


@case
def deno_check(name: str, shape: str) -> Made:
    test = DENO_TEST.replace('parseDuration("2m"), 120_000', 'parseDuration(120), 120_000')
    return deno_case(name, shape, {"src/duration_test.ts": test}, "deno check src/",
                     lambda o: grep(o, r"TS2345|not assignable", r"^\s+at .*duration_test\.ts:\d+", limit=2),
                     "typecheck")


@case
def deno_fmt_check(name: str, shape: str) -> Made:
    src = DENO_SRC.replace('  if (!m) throw', '    if (!m) throw').replace('"ms" ? n', "'ms' ? n")
    return deno_case(name, shape, {"src/duration.ts": src}, "deno fmt --check src/",
                     lambda o: grep(o, r"^from .*duration\.ts:", r"^error: Found \d+ not formatted", limit=1), "lint")


@case
def biome_ci(name: str, shape: str) -> Made:
    src = DENO_SRC.replace(": string", "").replace(": number", "").replace("const n", "var n") + \
        "\nexport function isDebug(x) {\n  return x == 'yes';\n}\n"
    root = project(name, shape, {"src/duration.js": src, "biome.json": '{"formatter": {"enabled": false}}\n',
                                 "package.json": '{"name": "d", "version": "1.0.0", "private": true}\n'})
    run(["ln", "-s", str(WORK / "node" / "node_modules"), str(root / "node_modules")], cwd=root)
    steps = steps_for(root, [("Node version", "node --version")], "Lint", "npx biome ci src",
                      lambda o: grep(o, r"^src/duration\.js:\d+:\d+ .*lint/", r"^\s+[×✖] Using ==", limit=4),
                      env_extra={"NO_COLOR": "1"})
    cleanup(root)
    return "javascript", steps, "biome", "lint", "biome " + ver(f"{NODE_BIN}/biome --version")


# --- Zig, Solidity ---------------------------------------------------------------------------------------------

ZIG = f"{PY} -m ziglang"
ZIG_SRC = """const std = @import("std");

pub fn clamp(x: i32, lo: i32, hi: i32) i32 {
    if (x < lo) return lo;
    if (x > hi) return hi;
    return x;
}

pub fn sum(xs: []const i32) i32 {
    var total: i32 = 0;
    for (xs) |x| total += x;
    return total;
}

test "clamp keeps values inside" {
    try std.testing.expectEqual(@as(i32, 5), clamp(5, 0, 10));
    try std.testing.expectEqual(@as(i32, 10), clamp(42, 0, 10));
}

test "sum of a slice" {
    const xs = [_]i32{ 1, 2, 3, 4 };
    try std.testing.expectEqual(@as(i32, 10), sum(&xs));
}
"""


def zig_case(name: str, shape: str, src: str, cmd: str, causal: Callable[[list[str]], list[int]],
             category: str) -> Made:
    root = project(name, shape, {"src/mathx.zig": src})
    steps = steps_for(root, [("Zig version", f"{ZIG} version")], cmd.split(maxsplit=1)[0].title(),
                      cmd.replace("zig ", f"{ZIG} ", 1), causal, env_extra={"ZIG_GLOBAL_CACHE_DIR": str(WORK / "zig")})
    steps[-1].command = cmd
    cleanup(root)
    return "zig", steps, "zig", category, "zig " + ver(f"{ZIG} version") + " (PyPI ziglang)"


@case
def zig_test_failed(name: str, shape: str) -> Made:
    return zig_case(name, shape, ZIG_SRC.replace("total += x;", "total += x + 1;"), "zig test src/mathx.zig",
                    lambda o: grep(o, r"sum of a slice\.\.\.", r"^FAIL \(TestExpectedEqual\)|FAIL \(TestExpected",
                                   r"src/mathx\.zig:\d+:\d+: 0x", limit=1), "test")


@case
def zig_compile_error(name: str, shape: str) -> Made:
    return zig_case(name, shape, ZIG_SRC.replace("return total;", "return totl;"), "zig test src/mathx.zig",
                    lambda o: block(o, r"src/mathx\.zig:\d+:\d+: error:", r"^\S", limit=3), "build")


@case
def zig_fmt_check(name: str, shape: str) -> Made:
    return zig_case(name, shape, ZIG_SRC.replace("    if (x < lo) return lo;", "  if (x < lo)   return lo;"),
                    "zig fmt --check src", lambda o: grep(o, r"src/mathx\.zig"), "lint")


SOL = """// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

contract Vault {
    mapping(address => uint256) public balances;
    uint256 public totalDeposits;

    event Deposited(address indexed who, uint256 amount);

    function deposit() external payable {
        require(msg.value > 0, "zero deposit");
        balances[msg.sender] += msg.value;
        totalDeposits += msg.value;
        emit Deposited(msg.sender, msg.value);
    }

    function withdraw(uint256 amount) external {
        require(balances[msg.sender] >= amount, "insufficient");
        balances[msg.sender] -= amount;
        payable(msg.sender).transfer(amount);
    }
}
"""


def sol_case(name: str, shape: str, src: str, causal: Callable[[list[str]], list[int]]) -> Made:
    root = project(name, shape, {"contracts/Vault.sol": src})
    steps = steps_for(root, [("solc version", f"{NODE_BIN}/solcjs --version")], "Compile contracts",
                      "solcjs --bin --abi -o build contracts/Vault.sol", causal,
                      env_extra={"PATH": f"{NODE_BIN}:" + env()["PATH"]})
    cleanup(root)
    return "solidity", steps, "solcjs", "build", "solc-js " + ver(f"{NODE_BIN}/solcjs --version")


@case
def solc_parser_error(name: str, shape: str) -> Made:
    return sol_case(name, shape, SOL.replace("totalDeposits += msg.value;", "totalDeposits += msg.value"),
                    lambda o: block(o, r"^ParserError:", r"^\s*$", limit=5))


@case
def solc_type_error(name: str, shape: str) -> Made:
    return sol_case(name, shape, SOL.replace("balances[msg.sender] -= amount;", "balance[msg.sender] -= amount;"),
                    lambda o: block(o, r"^DeclarationError:|^TypeError:", r"^\s*$", limit=5))


# --- Python packaging front ends, pre-commit, a schema check ---------------------------------------------------

@contextmanager
def index(files: dict[str, list[Path]], status: int = 200) -> Iterator[str]:
    """A PEP 503 simple index on 127.0.0.1 (or one that answers every request with `status`)."""
    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a: object) -> None:
            pass

        def do_HEAD(self) -> None:
            self.head_only = True
            self.do_GET()

        def do_GET(self) -> None:
            if status != 200:
                self.send_response(status)
                self.send_header("Retry-After", "60")
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"Too Many Requests\n")
                return
            parts = [p for p in self.path.split("/") if p]
            body: bytes
            if not parts:
                body = ("<html><body>" + "".join(f'<a href="/{k}/">{k}</a>' for k in files) + "</body></html>").encode()
            elif len(parts) == 1 and parts[0] in files:
                body = ("<html><body>" + "".join(f'<a href="/files/{w.name}">{w.name}</a>' for w in files[parts[0]])
                        + "</body></html>").encode()
            elif len(parts) == 2 and parts[0] == "files":
                w = next((w for ws in files.values() for w in ws if w.name == parts[1]), None)
                if w is None:
                    self.send_error(404)
                    return
                body = w.read_bytes()
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html" if not self.path.endswith(".whl") else
                             "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not getattr(self, "head_only", False):
                self.wfile.write(body)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()


def index_wheels() -> dict[str, list[Path]]:
    d = WORK / "wheels"
    return {"acme-core": [wheel(d, "acme-core", "1.4.0"), wheel(d, "acme-core", "1.5.2")],
            "acme-http": [wheel(d, "acme-http", "2.0.0", ["acme-core>=2.0"])]}


PYPROJECT = """[project]
name = "billing"
version = "0.4.0"
requires-python = ">=3.10"
dependencies = ["acme-http>=2.0", "acme-core>=1.4,<2"]
"""


@case
def uv_no_solution(name: str, shape: str) -> Made:
    with index(index_wheels()) as url:
        root = project(name, shape, {"pyproject.toml": PYPROJECT, "src/billing/__init__.py": ""})
        steps = steps_for(root, [("uv version", "uv --version")], "Lock dependencies",
                          f"uv lock --index-url {url}/ --no-cache",
                          lambda o: grep(o, r"No solution found", r"Because|we can conclude|unsatisfiable", limit=4),
                          env_extra={"NO_COLOR": "1", "UV_NO_CONFIG": "1"})
    for s in steps:
        s.command = s.command.replace(url, "https://pypi.internal.example")
    cleanup(root)
    return "python", steps, "uv", "dependency", ver("uv --version")


@case
def poetry_lock_conflict(name: str, shape: str) -> Made:
    py = PYPROJECT.replace('dependencies = ["acme-http>=2.0", "acme-core>=1.4,<2"]',
                           'dependencies = ["acme-http>=2.0", "acme-core>=1.4,<2"]\n\n[tool.poetry]\n'
                           'package-mode = false\n\n[[tool.poetry.source]]\nname = "internal"\nurl = "URL/"\n'
                           'priority = "primary"\n')
    with index(index_wheels()) as url:
        root = project(name, shape, {"pyproject.toml": py.replace("URL", url), "src/billing/__init__.py": ""})
        steps = steps_for(root, [("Poetry version", "poetry --version")], "Install dependencies", "poetry lock",
                          lambda o: grep(o, r"version solving failed|Because", r"depends on acme", limit=3),
                          env_extra={"NO_COLOR": "1", "POETRY_CACHE_DIR": str(WORK / "poetry-cache"),
                                     "POETRY_CONFIG_DIR": str(WORK / "poetry-config")})
    cleanup(root)
    return "python", steps, "poetry", "dependency", ver("poetry --version")


@case
def npm_registry_rate_limited(name: str, shape: str) -> Made:
    with index({}, status=429) as url:
        root = project(name, shape, {"package.json": json.dumps(
            {"name": "web", "version": "1.0.0", "private": True, "dependencies": {"left-pad": "1.3.0"}}) + "\n"})
        steps = steps_for(root, [("Node version", "node --version")], "Install dependencies",
                          f"npm install --registry {url}/ --fetch-retries=1 --fetch-retry-mintimeout=100 "
                          "--fetch-retry-maxtimeout=200 --no-audit --no-fund",
                          lambda o: grep(o, r"E429|429 Too Many", limit=2),
                          env_extra={"npm_config_cache": str(WORK / "npm-429-cache")})
    for s in steps:
        s.output = [t.replace(url, "https://registry.internal.example") for t in s.output]
        s.command = s.command.replace(url, "https://registry.internal.example")
    cleanup(root)
    return "javascript", steps, "npm", "network", "npm " + ver("npm --version")


PRECOMMIT = """repos:
  - repo: local
    hooks:
      - id: no-print
        name: no print statements
        entry: '^\\s*print\\('
        language: pygrep
        types: [python]
      - id: no-todo
        name: no TODO without an issue
        entry: 'TODO(?!\\(#\\d+\\))'
        language: pygrep
        types: [python]
      - id: yaml-parses
        name: yaml files parse
        entry: python3 -c "import sys, json; [json.load(open(f)) for f in sys.argv[1:] if f.endswith('.json')]"
        language: system
        files: \\.json$
"""


def precommit_case(name: str, shape: str, over: dict[str, str], causal: Callable[[list[str]], list[int]]) -> Made:
    files = {".pre-commit-config.yaml": PRECOMMIT, "src/app.py": "def run(x):\n    return x * 2\n",
             "config/app.json": '{"debug": false}\n'}
    files.update(over)
    root = project(name, shape, files)
    run("git init -q && git add -A && git -c user.email=ci@example.org -c user.name=ci commit -qm init", cwd=root)
    steps = steps_for(root, [("pre-commit version", "pre-commit --version")], "pre-commit",
                      "pre-commit run --all-files --show-diff-on-failure --color never", causal,
                      env_extra={"PRE_COMMIT_HOME": str(WORK / "pre-commit")})
    cleanup(root)
    return "python", steps, "pre-commit", "lint", ver("pre-commit --version")


@case
def precommit_pygrep(name: str, shape: str) -> Made:
    app = "def run(x):\n    print('debug', x)\n    # TODO remove\n    return x * 2\n"
    return precommit_case(name, shape, {"src/app.py": app},
                          lambda o: grep(o, r"^no print statements\.+Failed", r"^src/app\.py:2:",
                                         r"^no TODO without an issue\.+Failed", r"^src/app\.py:3:", limit=1))


@case
def precommit_system_hook(name: str, shape: str) -> Made:
    return precommit_case(name, shape, {"config/app.json": '{"debug": false,}\n'},
                          lambda o: grep(o, r"^yaml files parse\.+Failed", r"JSONDecodeError|Expecting property",
                                         limit=1))


@case
def jsonschema_workflow(name: str, shape: str) -> Made:
    wf = """name: ci
on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Test
        run: make test
        timeout-minutes: ten
"""
    root = project(name, shape, {".github/workflows/ci.yml": wf, "Makefile": "test:\n\ttrue\n"})
    steps = steps_for(root, [("check-jsonschema version", "check-jsonschema --version")], "Validate workflows",
                      "check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/ci.yml",
                      lambda o: grep(o, r"Schema validation errors", r"ci\.yml::\$", limit=3))
    cleanup(root)
    return "ci", steps, "check-jsonschema", "config", ver("check-jsonschema --version")


# --- crashes, warning storms, recovered errors, two jobs -------------------------------------------------------

@case
def pytest_segfault(name: str, shape: str) -> Made:
    test = ("import ctypes\n\nfrom fastparse import parse\n\n\ndef test_parse_small():\n    assert parse(b'ab') == 2\n\n\n"
            "def test_parse_native_buffer():\n    buf = ctypes.string_at(1, 16)\n    assert parse(buf) == 16\n")
    root = project(name, shape, {"fastparse.py": "def parse(b):\n    return len(b)\n", "tests/test_parse.py": test,
                                 "pytest.ini": "[pytest]\npythonpath = .\n"})
    steps = steps_for(root, [("Python version", "python --version")], "Test", "python -m pytest -q -p no:cacheprovider",
                      lambda o: grep(o, r"Fatal Python error: Segmentation fault", r"tests/test_parse\.py\", line 11",
                                     r"Segmentation fault", limit=1),
                      env_extra={"PATH": f"{WORK / 'tools' / 'bin'}:" + env()["PATH"]})
    cleanup(root)
    return "python", steps, "pytest", "test", pyver("pytest") if Path(PY).exists() else "pytest"


@case
def gcc_warning_storm(name: str, shape: str) -> Made:
    body = "".join(f"int handler_{k}(int a, int b) {{\n    int unused_{k} = a;\n    return b;\n}}\n" for k in range(40))
    src = "#include <stdio.h>\n" + body + "int main(void) {\n    printf(\"%d\\n\", handler_1(1, 2));\n" \
        "    return handler_2(3, 4) + missing_total;\n}\n"
    root = project(name, shape, {"src/handlers.c": src, "Makefile": "CFLAGS=-Wall -Wextra -O0\nall: app\napp: "
                                 "src/handlers.c\n\t$(CC) $(CFLAGS) -o $@ $<\n"})
    steps = steps_for(root, [("gcc version", "gcc --version | head -n 1")], "Build", "make",
                      lambda o: block(o, r"error: .missing_total. undeclared", r"^\S", limit=3))
    cleanup(root)
    return "cpp", steps, "gcc", "build", ver("gcc --version | head -n 1") + ", make 4.3"


@case
def disk_full_recovered_then_test(name: str, shape: str) -> Made:
    """A cache step hits a full disk and carries on (`|| echo`), a later test fails: the test is the cause."""
    test = "from calc import mean\n\n\ndef test_mean():\n    assert mean([1, 2, 3, 4]) == 2.5\n"
    root = project(name, shape, {"calc.py": "def mean(xs):\n    return sum(xs) // len(xs)\n",
                                 "tests/test_calc.py": test, "pytest.ini": "[pytest]\npythonpath = .\n"})
    cache = root / ".cache-mnt"
    cache.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(cache)], check=True)
    try:
        steps = steps_for(root, [("Python version", "python --version"),
                                 ("Save pip cache", "head -c 300000 /dev/urandom > blob && "
                                  "cp blob .cache-mnt/pip-cache.bin || echo 'cache not saved, continuing'")],
                          "Test", "python -m pytest -q -p no:cacheprovider",
                          lambda o: grep(o, r"^_+ test_mean _+$", r"^>\s+assert", r"^E\s+", r"^tests/test_calc\.py:\d+: Assert",
                                         r"^FAILED tests/test_calc\.py::test_mean", r"^ \+  where", limit=2),
                          env_extra={"PATH": f"{WORK / 'tools' / 'bin'}:" + env()["PATH"]})
    finally:
        subprocess.run(["umount", str(cache)], check=False)
    for s in steps:
        s.command = s.command.replace(".cache-mnt", "/mnt/cache")
        s.output = [t.replace(".cache-mnt", "/mnt/cache") for t in s.output]
    assert any("No space left" in t for s in steps for t in s.output)
    cleanup(root)
    return "python", steps, "pytest", "test", pyver("pytest") + ", cp (GNU coreutils 9.1), /mnt/cache a 64 KiB tmpfs"


@case
def protoc_in_second_job(name: str, shape: str) -> Made:
    """Two jobs of one run in one file (a downloaded run log): a passing lint job with warnings, then the failure."""
    return protoc_case(name, shape, {"proto/shop/api/order.proto": PROTO_API.replace(
        "repeated Item items = 2;", "repeated Itme items = 2;")}, lambda o: grep(o, r"order\.proto:\d+:\d+:"))


MULTI_JOB = {"protoc-in-second-job"}


def first_job(shape: str, seed: int) -> str:
    """A passing job with tool warnings (shellcheck's style notes are not failures here)."""
    root = project("lint-job", shape, {"scripts/gen.sh": "#!/bin/sh\nfor f in $(ls proto/*.proto); do echo $f; done\n"})
    out, _ = run("shellcheck -S style -f gcc scripts/gen.sh || true", cwd=root, env=env())
    cleanup(root)
    text, _, _ = render([Step("Lint scripts", "shellcheck -S style -f gcc scripts/gen.sh || true", out)], shape,
                        job="lint", seed=seed)
    return text


def write(cname: str, fn: Callable[[str, str], Made], shape: str, n: int) -> tuple[str, Path]:
    eco, steps, tool, category, made = fn(cname, shape)
    folder = write_case(eco, cname, steps, shape, tool=tool, category=category, seed=900 + n, job="ci",
                        made_by=f"{made} on a small generated project (make/wide/make.py:{fn.__name__}), "
                                "run here; shape by make/shapes.py"
                                + ("; a passing lint job's log before it, as a run's logs are joined"
                                   if cname in MULTI_JOB else ""))
    if cname in MULTI_JOB:
        prefix = first_job(shape, 700 + n)
        shift = prefix.count("\n")
        log = folder / "fail.log"
        log.write_text(prefix + log.read_text())
        lab = (folder / "label.toml").read_text()
        lab = re.sub(r"^(causal|context) = (\[.*\])$", lambda m, shift=shift: m.group(1) + " = " + json.dumps(
            ["-".join(str(int(x) + shift) for x in s.split("-")) for s in json.loads(m.group(2))]),
            lab, flags=re.M)
        (folder / "label.toml").write_text(lab)
    return f"{eco}/{cname} {shape} {tool} {category}", folder


def main(argv: list[str]) -> int:
    if argv[:1] == ["--tools"]:
        tools()
        return 0
    return make_all(CASES, argv, shape_from=0, write=write)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
