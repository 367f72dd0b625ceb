"""Logs that fool a keyword grep, and tools the rest of the corpus lacks.

Real CI logs are mostly successful output: installs that print `npm warn deprecated`, pip's resolver `ERROR:` that
does not fail the job, compiler command lines full of `-Werror`, configure's `checking for strerror... yes`,
`Failures: 0, Errors: 0` summaries, tests named `test_error_*` that pass, `console.error` from passing tests, flaky
tests that fail once and pass on a rerun, downloads retried and then served. The cases here put such output around
one real failure, and add tools and languages the corpus had none or few of (Ant, Clojure, Crystal, Ada, Racket,
Kotlin, Cabal, Terraform, R CMD check, dub, Icarus Verilog, GHDL) and failures that are not tests (dependency
resolution, a test JVM killed from outside, Maven out of heap, npm on a full disk, a dependency that does not build).

Each case runs the real tools here on a small project written here with one injected fault and labels it from that
knowledge (GUIDELINE.md); nothing a tool prints is edited (a loopback address is replaced by `*.internal.example`,
as in make/wide), the CI frame comes from make/shapes.py. Shapes are chosen per case, weighted to the GitHub,
Travis and Jenkins logs that outside users bring.

    python3 bench/corpus/make/wider/make.py --tools     # once: venv + npm tools under $CORPUS_WORK (/tmp/corpus-x)
    python3 bench/corpus/make/wider/make.py [CASE...]   # (re)write the cases; all when none is named

Tools: Debian 12 (`apt-get install ant ant-optional junit4 clojure crystal gnat racket cabal-install kotlin dub ldc
iverilog ghdl r-base-core`, with maven, gcc, cmake, autoconf, automake, golang and rustup's cargo), Terraform (the
HashiCorp release binary on PATH), PyPI (pytest, pytest-rerunfailures, pytest-timeout, tox, ruff, mypy: each job
installs what it pins into its own venv), npm (jest, mocha, typescript, eslint and the packages each project pins,
installed by the job from the npm registry).
"""

from __future__ import annotations

import http.server
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from record import run  # noqa: E402
from ws import Case, block, find, version, wheel  # noqa: E402

WORK = Path(os.environ.get("CORPUS_WORK", "/tmp/corpus-x"))
TOOLS = WORK / "tools" / "bin"
PIP_TOOLS = ["pytest==8.3.4", "pytest-rerunfailures==16.7", "mypy==1.13.0"]
APT_TOOLS = ["ant", "ant-optional", "junit4", "clojure", "crystal", "gnat", "racket", "cabal-install", "kotlin", "dub", "ldc",
             "iverilog", "ghdl",
             "r-base-core"]
BASE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "CI": "true", "LANG": "C.UTF-8", "PIP_CONFIG_FILE": "/dev/null",
            "PIP_FIND_LINKS": "", "PIP_CONSTRAINT": "", "PIP_CACHE_DIR": str(WORK / "pip-cache"),
            "PYTHONDONTWRITEBYTECODE": "1", "HOME": str(WORK / "home"), "npm_config_cache": str(WORK / "npm-cache"),
            "NO_COLOR": "1"}
CASES: list[tuple[str, Callable[[str, str], None], str]] = []


def case(shape: str) -> Callable[[Callable[[str, str], None]], Callable[[str, str], None]]:
    """Register a case maker `fn(name, shape)`, named after the function, in the shape given here."""
    def add(fn: Callable[[str, str], None]) -> Callable[[str, str], None]:
        CASES.append((fn.__name__.replace("_", "-"), fn, shape))
        return fn
    return add


def tools() -> None:
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *APT_TOOLS], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(WORK / "tools")], check=True)
    subprocess.run([str(TOOLS / "pip"), "install", "-q", *PIP_TOOLS], check=True, env={**os.environ, **BASE_ENV})


def made(fn: str, tools_used: str) -> str:
    return f"{tools_used} on a small project written here (make/wider/make.py:{fn}), run here"


def e(**extra: str) -> dict[str, str]:
    return {**BASE_ENV, **extra}


def lines_of(out: list[str], pattern: str) -> list[int]:
    """Every line matching `pattern`; fails loudly when none does."""
    hits = [i for i, t in enumerate(out) if re.search(pattern, t)]
    if not hits:
        raise LookupError(f"{pattern!r} found nothing in:\n" + "\n".join(out[-40:]))
    return hits


def need(found: list[int], pattern: str, out: list[str]) -> list[int]:
    if not found:
        if os.environ.get("CORPUS_DUMP"):
            Path(os.environ["CORPUS_DUMP"]).write_text("\n".join(out))
        raise LookupError(f"{pattern!r} found nothing in:\n" + "\n".join(out[-40:]))
    return found


def req(out: list[str], *patterns: str, limit: int = 3) -> list[int]:
    """`find` that fails loudly when a pattern matches nothing (a label never silently loses a line)."""
    got: list[int] = []
    for p in patterns:
        got += need(find(out, p, limit=limit), p, out)
    return sorted(set(got))


# ================================================================ Python: noise around the failure

PY_LIB = '''"""Parse and validate order records from the partner feed."""
import warnings
from datetime import datetime


class FeedError(ValueError):
    """A record the feed should not have sent."""


def parse_line(line):
    fields = line.rstrip("\\n").split(";")
    if len(fields) != 3:
        raise FeedError(f"expected 3 fields, got {len(fields)}")
    sku, qty, when = fields
    return {"sku": sku.strip(), "qty": int(qty), "at": datetime.utcfromtimestamp(int(when))}


def parse_all(lines, strict=True):
    out, errors = [], []
    for n, line in enumerate(lines, 1):
        try:
            out.append(parse_line(line))
        except (FeedError, ValueError) as exc:
            if strict:
                raise
            errors.append((n, str(exc)))
    return out, errors


def total_quantity(records):
    return sum(r["qty"] for r in records if r["qty"] > 0)


def legacy_total(records):
    warnings.warn("legacy_total() is deprecated, use total_quantity()", DeprecationWarning, stacklevel=2)
    return total_quantity(records)
'''
PY_TESTS = '''import pytest

from feed import FeedError, legacy_total, parse_all, parse_line, total_quantity


def test_parse_line_ok():
    assert parse_line("A-1;3;1700000000")["qty"] == 3


def test_error_on_missing_field():
    with pytest.raises(FeedError):
        parse_line("A-1;3")


def test_error_message_names_count():
    with pytest.raises(FeedError, match="got 2"):
        parse_line("A-1;3")


def test_fail_fast_in_strict_mode():
    with pytest.raises(ValueError):
        parse_all(["A-1;x;1700000000"])


def test_errors_collected_when_lenient():
    _, errors = parse_all(["A-1;x;1700000000", "B-2;1;1700000000"], strict=False)
    assert errors == [(1, "invalid literal for int() with base 10: 'x'")]


def test_legacy_total_still_works():
    assert legacy_total([{"qty": 2}, {"qty": 5}]) == 7


@pytest.mark.parametrize("qty", [0, 1, 7])
def test_failure_free_roundtrip(qty):
    assert parse_line(f"Z;{qty};1700000000")["qty"] == qty


def test_total_counts_returns():
    records = [{"qty": 4}, {"qty": -1}, {"qty": 2}]
    assert total_quantity(records) == 5
'''


def pytest_failure(out: list[str], test: str) -> list[int]:
    """pytest's block for one failed test (header, `>` line, `E` lines, the location line) and its short-summary
    line with the continuation lines under it (GUIDELINE.md: the short summary carries the message)."""
    start = need(find(out, rf"^_+ {re.escape(test)}(\[.*\])? _+$", limit=1), test, out)[0]
    got, in_diff = [start], False
    for i in range(start + 1, len(out)):
        t = out[i]
        if re.match(r"^(_{3,} |={3,} )", t):
            break
        if re.match(r"^E\s+Full diff:", t):
            in_diff = True  # the full diff repeats what the `E` lines above it said
        if (re.match(r"^(>|E) ", t) and t[1:].strip() and not in_diff) or re.match(r"^[\w/.-]+\.py:\d+: \w", t):
            got.append(i)
    # the short summary's line that carries the message (-rR lists bare names first: those are context)
    s = need(find(out, rf"^FAILED \S+::{re.escape(test)}\S* - ", limit=1)
             or find(out, rf"^FAILED \S+::{re.escape(test)}", limit=1), "FAILED", out)[0]
    got.append(s)
    k = s + 1
    while k < len(out) and out[k].startswith(" ") and "Full diff:" not in out[k]:
        if out[k].strip():
            got.append(k)
        k += 1
    return got


def py_venv(c: Case, reqs: str) -> None:
    c.step("Set up Python", "python3 --version && python3 -m venv .venv", env=e())
    c.step("Install dependencies", f".venv/bin/pip install {reqs}", env=e())


@case("github")
def pip_resolver_conflict_then_pytest(name: str, shape: str) -> None:
    """pip's resolver `ERROR:` about an installed conflict does not fail the job; a test does, later."""
    c = Case("python", name, shape)
    c.files({"src/feed.py": PY_LIB, "tests/test_feed.py": PY_TESTS,
             "requirements.txt": "pytest==8.3.4\nacme-schema==1.2.0\nacme-client==3.1.0\n",
             "requirements-dev.txt": "acme-schema==2.0.1\n",
             "pytest.ini": "[pytest]\npythonpath = src\n"})
    wheel(c.dir / "vendor", "acme-schema", "1.2.0")
    wheel(c.dir / "vendor", "acme-schema", "2.0.1")
    wheel(c.dir / "vendor", "acme-client", "3.1.0", ("acme-schema<2,>=1.1",))
    py_venv(c, "--find-links vendor -r requirements.txt")
    c.step("Install dev pins", ".venv/bin/pip install --find-links vendor -r requirements-dev.txt", env=e())
    c.step("Run tests", ".venv/bin/pytest -v -p no:cacheprovider tests",
           lambda o: pytest_failure(o, "test_total_counts_returns"),
           context=lambda o: find(o, r"^=+ \d+ failed"), env=e())
    c.write(tool="pytest", category="test",
            made_by=made(name, "pip " + version(f"{c.dir}/.venv/bin/pip --version").split()[1]
                         + ", pytest 8.3.4"))



@case("travis")
def pytest_flaky_rerun_then_fail(name: str, shape: str) -> None:
    """A flaky test fails once and passes on its rerun (pytest-rerunfailures); another fails on every run."""
    flaky = "import pathlib\n" + PY_TESTS + """

def test_fetch_feed_flaky():
    marker = pathlib.Path(__file__).parent / ".feed-first-try"
    if not marker.exists():
        marker.write_text("1")
        raise ConnectionError("partner feed: connection reset by peer (first try)")
    assert parse_line("A-9;2;1700000000")["sku"] == "A-9"
"""
    c = Case("python", name, shape)
    c.files({"src/feed.py": PY_LIB.replace('if r["qty"] > 0', ""), "pytest.ini": "[pytest]\npythonpath = src\n",
             "tests/test_feed.py": flaky.replace('assert errors == [(1, "invalid literal',
                                                 'assert errors == [(1, "invalid  literal'),
             "requirements-dev.txt": "pytest==8.3.4\npytest-rerunfailures==16.7\n"})
    py_venv(c, "-r requirements-dev.txt")
    c.step("Test", ".venv/bin/pytest -v -p no:cacheprovider --reruns 2 -rfR tests",
           lambda o: pytest_failure(o, "test_errors_collected_when_lenient"),
           context=lambda o: find(o, r"^=+ \d+ failed"), env=e(),
           show="pytest -v --reruns 2 -rfR tests")
    c.write(tool="pytest", category="test", made_by=made(name, "pytest 8.3.4, pytest-rerunfailures 16.7"))


@contextmanager
def flaky_index(wheels: Path, drops: int) -> Iterator[str]:
    """A PEP 503 index on 127.0.0.1 that drops the first `drops` connections without an answer, then serves."""
    seen = {"n": 0}

    class H(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a: object) -> None:
            pass

        def do_GET(self) -> None:
            seen["n"] += 1
            if seen["n"] <= drops:
                self.close_connection = True
                self.connection.close()
                return
            parts = [p for p in self.path.split("/") if p]
            names = sorted(w.name for w in wheels.glob("*.whl"))
            if len(parts) == 2 and parts[0] == "files" and parts[1] in names:
                body = (wheels / parts[1]).read_bytes()
            elif len(parts) == 2:
                want = parts[1].replace("-", "_")
                body = ("<html><body>" + "".join(f'<a href="/files/{n}">{n}</a>' for n in names
                                                   if n.startswith(want + "-")) + "</body></html>").encode()
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream" if parts[0] == "files" else "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()


def unloop(c: Case, url: str, host: str) -> None:
    """The loopback address the generator served from, shown as the internal host a company index has."""
    for st in c.steps:
        st.command = st.command.replace(url, host)
        st.output = [t.replace(url, host).replace(url.removeprefix("http://"), host.removeprefix("https://"))
                     for t in st.output]


@case("jenkins")
def pip_retry_then_mypy(name: str, shape: str) -> None:
    """pip's `WARNING: Retrying ... connection broken` for an index that drops connections, then the install
    succeeds; the job fails later, in mypy."""
    lib = PY_LIB.replace("def total_quantity(records):", "def total_quantity(records: list[dict[str, int]]) -> int:")
    lib = lib.replace("def parse_line(line):", "def parse_line(line: str) -> dict[str, object]:")
    lib += '\n\ndef summary(lines: list[str]) -> int:\n    records, _ = parse_all(lines, strict=False)\n' \
           '    return f"{total_quantity(records)} items"\n'
    c = Case("python", name, shape)
    wheel(WORK / "wheels-retry", "acme-schema", "1.2.0")
    c.files({"src/feed.py": lib, "requirements.txt": "acme-schema==1.2.0\n", "mypy.ini": "[mypy]\nfiles = src\n"})
    c.step("Set up Python", "python3 --version && python3 -m venv .venv", env=e())
    c.step("Install tools", ".venv/bin/pip install mypy==1.13.0", env=e())
    with flaky_index(WORK / "wheels-retry", drops=2) as url:
        c.step("Install dependencies", f".venv/bin/pip install --index-url {url}/simple -r requirements.txt",
               env=e(PIP_DEFAULT_TIMEOUT="5"))
    unloop(c, url, "https://pypi.internal.example")
    c.step("Type check", ".venv/bin/mypy", lambda o: req(o, r"^src/feed\.py:\d+: error: "),
           context=lambda o: find(o, r"^Found \d+ error"), env=e())
    c.write(tool="mypy", category="typecheck", made_by=made(name, "pip 23.0.1, mypy 1.13.0; the index on "
                                                                  "loopback drops its first two connections"))


# ================================================================ JavaScript: npm noise

def npm_project(c: Case, deps: dict[str, str], scripts: dict[str, str], files: dict[str, str],
                lock: bool = True) -> None:
    """package.json (+ a lockfile made once per dependency set, as a repository commits it) and the sources."""
    import hashlib
    import json
    pkg = {"name": c.project, "version": "2.3.0", "private": True, "scripts": scripts, "devDependencies": deps}
    c.files({"package.json": json.dumps(pkg, indent=2) + "\n", **files})
    if not lock:
        return
    place = WORK / "npm" / hashlib.sha1(json.dumps(deps, sort_keys=True).encode()).hexdigest()[:12]
    if not (place / "package-lock.json").is_file():
        place.mkdir(parents=True, exist_ok=True)
        (place / "package.json").write_text(json.dumps({**pkg, "name": "app", "scripts": {}}, indent=2) + "\n")
        out, code = run("npm install --no-audit --no-fund", cwd=place, env=e())
        assert code == 0, out[-20:]
    data = json.loads((place / "package-lock.json").read_text())
    data["name"] = data["packages"][""]["name"] = c.project
    data["packages"][""]["version"] = "2.3.0"
    (c.dir / "package-lock.json").write_text(json.dumps(data, indent=2) + "\n")


HOMES = {"github": "/home/runner", "gitlab": "/root", "travis": "/home/travis", "jenkins": "/var/jenkins",
         "plain": "/root"}


def npm_env(c: Case) -> dict[str, str]:
    """npm's cache where that CI's user has it (npm prints its log path there)."""
    return e(npm_config_cache=f"{HOMES[c.shape]}/.npm")


def legacy_dep(c: Case) -> dict[str, str]:
    """A vendored package (a tarball in the repository) whose `engines` excludes this node: npm's non-fatal
    `npm warn EBADENGINE` block, in the install output of every job that uses it."""
    c.files({"vendor/legacy-format/package.json": '{"name": "legacy-format", "version": "1.4.2", "main": "index.js",'
             ' "engines": {"node": ">=14 <19"}}\n', "vendor/legacy-format/index.js": "module.exports = String;\n"})
    c.sh("cd vendor && npm pack ./legacy-format >/dev/null 2>&1 && rm -r legacy-format", env=e())
    return {"legacy-format": "file:vendor/legacy-format-1.4.2.tgz"}


CART_JS = """class CartError extends Error {}

function addItem(cart, item) {
  if (!item || !item.sku) {
    console.error(`rejecting item without sku: ${JSON.stringify(item)}`);
    throw new CartError('item needs a sku');
  }
  return { ...cart, items: [...cart.items, item] };
}

function total(cart) {
  return cart.items.reduce((sum, i) => sum + i.price * (i.qty || 1), 0);
}

function discount(cart, code) {
  if (code === 'SPRING10') return Math.round(total(cart) * 0.9);
  console.warn(`unknown discount code ${code}, ignoring`);
  return total(cart);
}

module.exports = { CartError, addItem, total, discount };
"""
CART_TEST = """const { CartError, addItem, total, discount } = require('../src/cart');

const empty = { items: [] };

describe('addItem', () => {
  test('throws an error when the sku is missing', () => {
    expect(() => addItem(empty, { price: 3 })).toThrow(CartError);
  });
  test('fails gracefully on null items', () => {
    expect(() => addItem(empty, null)).toThrow('item needs a sku');
  });
  test('adds an item', () => {
    expect(addItem(empty, { sku: 'a', price: 3 }).items).toHaveLength(1);
  });
});

describe('total', () => {
  test('sums prices times quantities', () => {
    const cart = { items: [{ sku: 'a', price: 3, qty: 2 }, { sku: 'b', price: 4 }] };
    expect(total(cart)).toBe(10);
  });
  test('error-free on an empty cart', () => {
    expect(total(empty)).toBe(0);
  });
});

describe('discount', () => {
  test('ignores unknown codes with a warning', () => {
    expect(discount({ items: [{ sku: 'a', price: 10 }] }, 'BOGUS')).toBe(10);
  });
  test('applies SPRING10', () => {
    expect(discount({ items: [{ sku: 'a', price: 10 }, { sku: 'b', price: 5 }] }, 'SPRING10')).toBe(14);
  });
});
"""


@case("github")
def jest_console_error_noise(name: str, shape: str) -> None:
    """`npm warn deprecated` from the install, `console.error` blocks from passing tests, test names with
    'error' and 'fails'; one test really fails."""
    c = Case("javascript", name, shape)
    npm_project(c, {"jest": "29.7.0", **legacy_dep(c)}, {"test": "jest --ci"},
                {"src/cart.js": CART_JS.replace("Math.round", "Math.floor"), "test/cart.test.js": CART_TEST},
                lock=False)
    c.step("Install", "npm install --no-audit --no-fund", env=npm_env(c))
    c.step("Test", "npm test", lambda o: jest_failure(o), env=npm_env(c))
    c.write(tool="jest", category="test", made_by=made(name, "npm " + version("npm --version") + ", jest 29.7.0"))


def jest_failure(o: list[str]) -> list[int]:
    """jest's `●` header of the failed test, its expect line and Expected/Received pair, the `>` source line and
    the frame in the project's test file."""
    head = lines_of(o, r"^\s+● discount › applies SPRING10$")[0]
    got = [head]
    for i in range(head + 1, min(head + 30, len(o))):
        t = o[i]
        if re.match(r"^\s+● ", t):
            break
        if re.search(r"expect\(|Expected:|Received:|^\s+>\s+\d+ \|| at .*test/cart\.test\.js:\d+", t):
            got.append(i)
    return got


TS_SRC = """export interface Item {
  sku: string;
  price: number;
  qty?: number;
}

export function total(items: Item[]): number {
  return items.reduce((sum, i) => sum + i.price * (i.qty ?? 1), 0);
}

export function label(item: Item): string {
  const unused = item.sku.length;
  return `${item.sku} x${item.qty}`;
}

export function cheapest(items: Item[]): Item {
  let best: Item = items[0];
  for (const i of items) if (i.price < best.price) best = i;
  return best.price;
}
"""


@case("jenkins")
def eslint_warnings_then_tsc(name: str, shape: str) -> None:
    """ESLint passes with warnings (`0 errors, N warnings`); the type check after it fails."""
    c = Case("javascript", name, shape)
    eslintrc = ('{"root": true, "parser": "@typescript-eslint/parser", "plugins": ["@typescript-eslint"],\n'
                ' "extends": ["eslint:recommended", "plugin:@typescript-eslint/recommended"],\n'
                ' "rules": {"@typescript-eslint/no-unused-vars": "warn", "no-console": "warn",'
                ' "prefer-const": "warn"}}\n')
    npm_project(c, {**legacy_dep(c), "eslint": "8.57.1", "@typescript-eslint/parser": "7.18.0",
                    "@typescript-eslint/eslint-plugin": "7.18.0", "typescript": "5.6.3"},
                {"lint": "eslint src --ext .ts", "typecheck": "tsc --noEmit -p ."},
                {"src/cart.ts": TS_SRC, "src/log.ts": "export function log(msg: string): void {\n"
                 "  console.log(`[cart] ${msg}`);\n}\n", ".eslintrc.json": eslintrc,
                 "tsconfig.json": '{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs",'
                                  ' "noEmit": true}, "include": ["src"]}\n'}, lock=False)
    c.step("Install", "npm install --no-audit --no-fund", env=npm_env(c))
    c.step("Lint", "npm run lint", env=npm_env(c))
    c.step("Type check", "npm run typecheck", lambda o: block(o, r"^src/cart\.ts\(\d+,\d+\): error TS", after=0),
           env=npm_env(c))
    c.write(tool="tsc", category="typecheck",
            made_by=made(name, "npm " + version("npm --version") + ", eslint 8.57.1, typescript 5.6.3"))


@case("travis")
def npm_eresolve_peer_conflict(name: str, shape: str) -> None:
    """`npm install` cannot resolve a peer dependency (ERESOLVE), with deprecation warnings nowhere near it."""
    c = Case("javascript", name, shape)
    npm_project(c, {"react": "17.0.2", "react-dom": "18.3.1", "jest": "29.7.0"}, {"test": "jest"},
                {"src/index.js": "module.exports = require('react');\n"}, lock=False)
    c.step("Install", "npm install --no-audit --no-fund",
           lambda o: req(o, r"ERESOLVE unable to resolve dependency tree", r"^npm error Found: react@",
                         r"^npm error Could not resolve dependency:", r"^npm error peer react@\S+ from react-dom@",
                         limit=1), env=npm_env(c))
    c.write(tool="npm", category="dependency", made_by=made(name, "npm " + version("npm --version")
                                                             + " against the npm registry"))



# ================================================================ Java: Maven reruns and a killed fork, Ant

def java_gen():  # type: ignore[no-untyped-def]
    """make/java/gen.py's project, pom and Maven step (its own cases are left alone)."""
    import importlib.util
    import types
    sys.modules.setdefault("gen", types.SimpleNamespace(case=lambda eco: (lambda fn: fn)))  # type: ignore[arg-type]
    spec = importlib.util.spec_from_file_location("java_gen", HERE.parent / "java" / "gen.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ERROR_MAPPER = """package com.acme.invoice;

/** Maps failures of the tax service to user-facing error codes. */
public final class ErrorMapper {
    private ErrorMapper() {
    }

    public static String code(Throwable error) {
        if (error instanceof IllegalArgumentException) {
            return "E_INPUT";
        }
        return error == null ? "E_NONE" : "E_INTERNAL";
    }
}
"""
ERROR_MAPPER_TEST = """package com.acme.invoice;

import static org.junit.Assert.assertEquals;

import java.io.File;
import java.io.IOException;
import org.junit.Test;

public class ErrorMapperTest {
    @Test
    public void errorOnBadInputIsInputError() {
        assertEquals("E_INPUT", ErrorMapper.code(new IllegalArgumentException("bad")));
    }

    @Test
    public void failureWithoutCauseIsNone() {
        assertEquals("E_NONE", ErrorMapper.code(null));
    }

    @Test
    public void remoteRatesEventuallyLoad() throws IOException {
        File marker = new File("target/remote-rates-attempt");
        if (marker.createNewFile()) {
            throw new IOException("Connection reset while loading remote rates (attempt 1)");
        }
        assertEquals("E_INTERNAL", ErrorMapper.code(new IllegalStateException()));
    }
}
"""


@case("github")
def surefire_flaky_rerun_then_failure(name: str, shape: str) -> None:
    """Surefire reruns failing tests: a flaky one fails once and passes (`Flakes: 1`, its first run's stack trace);
    a real one fails on every run."""
    j = java_gen()
    c = Case("java", name, shape, "invoice")
    pom = j.pom(props="\n    <surefire.rerunFailingTestsCount>2</surefire.rerunFailingTestsCount>")
    j.project(c, pom, **{j.SRC + "ErrorMapper.java": ERROR_MAPPER, j.TST + "ErrorMapperTest.java": ERROR_MAPPER_TEST,
                         j.SRC + "TaxTable.java": j.TAX.replace('rates.put("NL", 21);', 'rates.put("NL", 12);')})
    j.setup(c)

    def causal(o: list[str]) -> list[int]:
        flaky = lines_of(o, r"ErrorMapperTest\)\s+Time elapsed")[0]
        real = [i for i in j.surefire(o) if i < flaky and "ErrorMapperTest" not in o[i]]
        return need(real, "InvoiceTest", o) + req(o, r"^\[ERROR\] com\.acme\.invoice\.InvoiceTest\.\w+",
                                                  r"^\[ERROR\]\s+Run 1: InvoiceTest\.", limit=1)

    j.mvn(c, "verify", causal, ntp=True)
    c.write(tool="maven-surefire-plugin", category="test",
            made_by=made(name, f"{j.MVN}, {j.JAVAC}, JUnit 4.13.2, surefire.rerunFailingTestsCount=2 against "
                               "Debian's maven-repo"))


def kill_when(pattern: str, rss_mb: int, stop: threading.Event) -> None:
    """SIGKILL the process whose command line holds `pattern` once its RSS passes `rss_mb` (the OOM killer's act;
    the generator stands in for the kernel, as make/infra does)."""
    while not stop.is_set():
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            found = re.search(r"VmRSS:\s+(\d+)", status)
            if pattern in cmd and found and int(found.group(1)) > rss_mb * 1024:
                os.kill(int(pid), signal.SIGKILL)
                return
        time.sleep(0.05)


@case("jenkins")
def surefire_fork_oom_killed(name: str, shape: str) -> None:
    """The forked test JVM is SIGKILLed at an RSS limit (the OOM killer): `The forked VM terminated without properly
    saying goodbye`, with `Tests run: …, Errors: 0` lines of the classes that ran before it."""
    j = java_gen()
    big = """package com.acme.invoice;

import static org.junit.Assert.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.Test;

public class ZBulkImportTest {
    @Test
    public void importsALargeBatch() {
        List<long[]> rows = new ArrayList<>();
        for (int i = 0; i < 4000; i++) {
            rows.add(new long[250_000]);
        }
        assertEquals(4000, rows.size());
    }
}
"""
    c = Case("java", name, shape, "invoice")
    pom = j.pom(props="\n    <argLine>-Xmx3g</argLine>")
    j.project(c, pom, **{j.SRC + "ErrorMapper.java": ERROR_MAPPER,
                         j.TST + "ErrorMapperTest.java": ERROR_MAPPER_TEST.replace("marker.createNewFile()", "false"),
                         j.TST + "ZBulkImportTest.java": big})
    j.setup(c)
    stop = threading.Event()
    watch = threading.Thread(target=kill_when, args=("surefirebooter", 700, stop))
    watch.start()
    try:
        j.mvn(c, "verify", lambda o: req(o, r"The forked VM terminated without properly saying goodbye", limit=1)
              + req(o, r"^\[ERROR\] Process Exit Code: 137", r"^\[ERROR\] Crashed tests:",
                      r"^\[ERROR\] com\.acme\.invoice\.ZBulkImportTest$", limit=1), ntp=True)
    finally:
        stop.set()
        watch.join()
    c.write(tool="maven-surefire-plugin", category="infrastructure",
            made_by=made(name, f"{j.MVN}, {j.JAVAC}, JUnit 4.13.2 against Debian's maven-repo; the forked JVM "
                               "SIGKILLed at 700 MB RSS by the generator's watchdog (the OOM killer's signal)"))


ANT_BUILD = """<project name="ledger" default="test" basedir=".">
  <property name="src" location="src"/>
  <property name="test.src" location="test"/>
  <property name="build" location="build"/>
  <path id="test.path">
    <pathelement location="${build}/classes"/>
    <pathelement location="${build}/test-classes"/>
    <pathelement location="/usr/share/java/junit4.jar"/>
    <pathelement location="/usr/share/java/hamcrest-core.jar"/>
  </path>
  <target name="init">
    <tstamp/>
    <mkdir dir="${build}/classes"/>
    <mkdir dir="${build}/test-classes"/>
    <mkdir dir="${build}/reports"/>
  </target>
  <target name="compile" depends="init" description="compile the sources">
    <javac srcdir="${src}" destdir="${build}/classes" includeantruntime="false" debug="true" release="17">
      <compilerarg value="-Xlint:deprecation"/>
    </javac>
  </target>
  <target name="compile-tests" depends="compile">
    <javac srcdir="${test.src}" destdir="${build}/test-classes" classpathref="test.path" includeantruntime="false"
           release="17"/>
  </target>
  <target name="test" depends="compile-tests" description="run the unit tests">
    <junit printsummary="yes" haltonfailure="no" failureproperty="tests.failed" fork="yes">
      <classpath refid="test.path"/>
      <formatter type="plain" usefile="false"/>
      <formatter type="xml"/>
      <batchtest todir="${build}/reports">
        <fileset dir="${test.src}" includes="**/*Test.java"/>
      </batchtest>
    </junit>
    <fail if="tests.failed" message="Unit tests failed; see ${build}/reports"/>
  </target>
</project>
"""
LEDGER = """package org.example.ledger;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;

public class Ledger {
    private final List<BigDecimal> entries = new ArrayList<>();

    public void post(BigDecimal amount) {
        if (amount.signum() == 0) {
            throw new IllegalArgumentException("error: zero posting");
        }
        entries.add(amount);
    }

    public BigDecimal balance() {
        BigDecimal sum = BigDecimal.ZERO;
        for (BigDecimal e : entries) {
            sum = sum.add(e);
        }
        return sum;
    }

    @SuppressWarnings("unused")
    public int yearOpened() {
        return new Date().getYear() + 1900;
    }
}
"""
LEDGER_TEST = """package org.example.ledger;

import static org.junit.Assert.assertEquals;

import java.math.BigDecimal;
import org.junit.Test;

public class LedgerTest {
    @Test
    public void balanceSumsPostings() {
        Ledger l = new Ledger();
        l.post(new BigDecimal("10.50"));
        l.post(new BigDecimal("-2.25"));
        assertEquals(new BigDecimal("8.25"), l.balance());
    }

    @Test(expected = IllegalArgumentException.class)
    public void errorOnZeroPosting() {
        new Ledger().post(BigDecimal.ZERO);
    }
}
"""
ROUND_TEST = """package org.example.ledger;

import static org.junit.Assert.assertEquals;

import java.math.BigDecimal;
import java.math.RoundingMode;
import org.junit.Test;

public class RoundingTest {
    @Test
    public void failsNothingOnExactCents() {
        assertEquals("1.10", new BigDecimal("1.10").setScale(2, RoundingMode.HALF_EVEN).toPlainString());
    }

    @Test
    public void roundsHalfUpForInvoices() {
        assertEquals("2.35", new BigDecimal("2.345").setScale(2, RoundingMode.HALF_EVEN).toPlainString());
    }
}
"""


def ant_made(fn: str) -> str:
    return made(fn, version("ant -version") + ", " + version("javac -version 2>&1") + ", JUnit 4.13.2")


@case("travis")
def ant_junit_failure(name: str, shape: str) -> None:
    """Ant: javac's deprecation warning, a passing test class, a failing one (`Testcase: … FAILED`), the build
    failed by `<fail>`."""
    c = Case("java", name, shape, "ledger")
    c.files({"build.xml": ANT_BUILD, "src/org/example/ledger/Ledger.java": LEDGER,
             "test/org/example/ledger/LedgerTest.java": LEDGER_TEST,
             "test/org/example/ledger/RoundingTest.java": ROUND_TEST})
    c.step("Set up JDK", "java -version 2>&1 && ant -version")
    c.step("Build", "ant -noinput -buildfile build.xml test",
           lambda o: block(o, r"Testcase: roundsHalfUpForInvoices took", after=4),
           context=lambda o: find(o, r"Tests run: \d+, Failures: [1-9]", limit=1))
    c.write(tool="ant", category="test", made_by=ant_made(name))


@case("jenkins")
def ant_javac_error(name: str, shape: str) -> None:
    """Ant: javac errors under `[javac]`, after a deprecation warning of the same compile."""
    c = Case("java", name, shape, "ledger")
    c.files({"build.xml": ANT_BUILD,
             "src/org/example/ledger/Ledger.java": LEDGER.replace("sum = sum.add(e);", "sum = sum + e;"),
             "test/org/example/ledger/LedgerTest.java": LEDGER_TEST})
    c.step("Set up JDK", "java -version 2>&1 && ant -version")
    c.step("Build", "ant -noinput test",
           lambda o: block(o, r"\[javac\] /\S+\.java:\d+: error: ", after=4))
    c.write(tool="ant", category="build", made_by=ant_made(name))



# ================================================================ C: configure, -Werror command lines, make check

CONFIGURE_AC = """AC_INIT([ledgerc], [0.9.1], [dev@example.org])
AM_INIT_AUTOMAKE([foreign -Wall -Werror subdir-objects])
AC_PROG_CC
AM_PROG_AR
AC_PROG_RANLIB
AC_CHECK_HEADERS([error.h errno.h stdlib.h string.h])
AC_CHECK_FUNCS([strerror strerror_r error_at_line perror])
AC_FUNC_ERROR_AT_LINE
AC_CONFIG_FILES([Makefile])
AC_OUTPUT
"""
MAKEFILE_AM = """AM_CFLAGS = -Wall -Wextra -Werror -Werror=format-security -Wno-error=unused-parameter
lib_LIBRARIES = libledger.a
libledger_a_SOURCES = src/ledger.c src/errors.c
check_PROGRAMS = tests/test_errors tests/test_ledger
tests_test_errors_LDADD = libledger.a
tests_test_ledger_LDADD = libledger.a
TESTS = $(check_PROGRAMS)
"""
LEDGER_C = """#include "ledger.h"

long ledger_balance(const long *cents, int n) {
    long sum = 0;
    for (int i = 0; i < n; i++) {
        sum += cents[i];
    }
    return sum;
}

int ledger_valid(long amount) { return amount != 0; }
"""
ERRORS_C = """#include <string.h>
#include "ledger.h"

const char *ledger_strerror(int code) {
    switch (code) {
    case LEDGER_OK: return "ok";
    case LEDGER_ERR_ZERO: return "error: zero amount";
    default: return strerror(code);
    }
}
"""
LEDGER_H = """#ifndef LEDGER_H
#define LEDGER_H
enum { LEDGER_OK = 0, LEDGER_ERR_ZERO = -1 };
long ledger_balance(const long *cents, int n);
int ledger_valid(long amount);
const char *ledger_strerror(int code);
#endif
"""
TEST_ERRORS_C = """#include <stdio.h>
#include <string.h>
#include "../src/ledger.h"

int main(void) {
    int failures = 0;
    if (strcmp(ledger_strerror(LEDGER_ERR_ZERO), "error: zero amount") != 0) failures++;
    if (strcmp(ledger_strerror(LEDGER_OK), "ok") != 0) failures++;
    printf("test_errors: %d failures\\n", failures);
    return failures ? 1 : 0;
}
"""
TEST_LEDGER_C = """#include <stdio.h>
#include "../src/ledger.h"

static int check(const char *what, long got, long want) {
    if (got != want) {
        fprintf(stderr, "%s:%d: %s: expected %ld, got %ld\\n", __FILE__, __LINE__, what, want, got);
        return 1;
    }
    return 0;
}

int main(void) {
    long cents[] = {1050, -225, 0, 400};
    int failed = check("balance of four postings", ledger_balance(cents, 4), 1225);
    failed += check("balance of none", ledger_balance(cents, 0), 0);
    return failed ? 1 : 0;
}
"""


def c_files(c: Case, ledger: str = LEDGER_C) -> None:
    c.files({"configure.ac": CONFIGURE_AC, "Makefile.am": MAKEFILE_AM, "src/ledger.c": ledger,
             "src/errors.c": ERRORS_C, "src/ledger.h": LEDGER_H, "tests/test_errors.c": TEST_ERRORS_C,
             "tests/test_ledger.c": TEST_LEDGER_C})


@case("travis")
def autotools_make_check_after_configure(name: str, shape: str) -> None:
    """configure's `checking for strerror... yes`, compile lines full of `-Werror`, the harness's `# ERROR: 0`, a
    passing `test_errors`; one test fails, and the job prints test-suite.log after the failure."""
    c = Case("cpp", name, shape, "ledgerc")
    c_files(c, LEDGER_C.replace("sum += cents[i];", "sum += cents[i] > 0 ? cents[i] : 0;"))
    c.step("Bootstrap", "autoreconf -fi 2>&1")
    c.step("Configure", "./configure CFLAGS='-O2 -g'")
    c.step("Build", "make V=1")
    c.step("Test", "make check", lambda o: req(o, r"^FAIL: tests/test_ledger$", limit=1),
           context=lambda o: find(o, r"^# FAIL:\s+1", limit=1))
    post(c, "Show test log", "cat test-suite.log", lambda o: req(o, r"test_ledger\.c:\d+: balance of four postings",
                                                                  r"^FAIL tests/test_ledger \(exit status: 1\)",
                                                                  limit=1))
    finish(c, tool="make check", category="test",
           made=made(name, f"{version('autoconf --version')}, {version('automake --version')}, "
                           f"{version('gcc --version')}"))


@case("github")
def cmake_verbose_link_error(name: str, shape: str) -> None:
    """`cmake --build --verbose`: every compile line carries `-Werror -Wall -Wextra`, sources named errors.c; the
    link fails on an undefined reference."""
    c = Case("cpp", name, shape, "ledgerc")
    c_files(c)
    c.files({"CMakeLists.txt": """cmake_minimum_required(VERSION 3.20)
project(ledgerc C)
add_compile_options(-Wall -Wextra -Werror -Werror=format-security -Wno-error=deprecated-declarations)
add_library(ledger STATIC src/ledger.c)
add_executable(test_errors tests/test_errors.c)
target_link_libraries(test_errors ledger)
add_executable(test_ledger tests/test_ledger.c)
target_link_libraries(test_ledger ledger)
enable_testing()
add_test(NAME errors COMMAND test_errors)
add_test(NAME ledger COMMAND test_ledger)
"""})
    c.step("Configure", "cmake -S . -B build -DCMAKE_BUILD_TYPE=Debug")
    c.step("Build", "cmake --build build --verbose -j 1",
           lambda o: req(o, r"in function `main'|in function .main.:", r"undefined reference to `ledger_strerror'",
                         limit=2))
    c.write(tool="ld", category="build", made_by=made(name, f"{version('cmake --version')}, "
                                                             f"{version('gcc --version')}, GNU ld"))


def post(c: Case, title: str, cmd: str, causal: Callable[[list[str]], list[int]] | None = None) -> None:
    """A step that runs after the failure (Travis after_failure, GitHub `if: always()`, Jenkins post)."""
    from shapes import Step
    out, _ = run(["bash", "-c", cmd], cwd=c.dir)
    c.steps.append(Step(title, cmd, out, causal=causal(out) if causal else [], always=True))


def finish(c: Case, *, tool: str, category: str, made: str) -> None:
    """Case.write for a job whose last steps ran after the failure."""
    from record import write_case
    assert c.failed
    write_case(c.ecosystem, c.name, c.steps, c.shape, tool=tool, category=category,
               made_by=made + "; shape by make/shapes.py", seed=c.seed, job=c.project)
    if os.environ.get("CORPUS_REVIEW"):
        print(f"== {c.ecosystem}/{c.name} [{c.shape}] {tool} {category}")
        for st in c.steps:
            for i in st.causal:
                print(f"   {st.output[i][:160]}")
    c.clean()


# ================================================================ Go and Rust: passing tests named for errors

GO_SRC = """package feed

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

var ErrFields = errors.New("wrong number of fields")

type Record struct {
	SKU string
	Qty int
}

func ParseLine(line string) (Record, error) {
	f := strings.Split(strings.TrimSpace(line), ";")
	if len(f) != 2 {
		return Record{}, fmt.Errorf("parse %q: %w", line, ErrFields)
	}
	q, err := strconv.Atoi(f[1])
	if err != nil {
		return Record{}, fmt.Errorf("parse %q: %w", line, err)
	}
	return Record{SKU: f[0], Qty: q}, nil
}

func Total(rs []Record) int {
	t := 0
	for _, r := range rs {
		t += r.Qty
	}
	return t
}
"""
GO_TEST = """package feed

import (
	"errors"
	"testing"
)

func TestParseErrorOnMissingField(t *testing.T) {
	_, err := ParseLine("A-1")
	if !errors.Is(err, ErrFields) {
		t.Fatalf("want ErrFields, got %v", err)
	}
	t.Logf("error: %v (expected)", err)
}

func TestFailFastOnBadQuantity(t *testing.T) {
	if _, err := ParseLine("A-1;x"); err == nil {
		t.Fatal("want an error")
	} else {
		t.Logf("got expected failure: %v", err)
	}
}

func TestParseLine(t *testing.T) {
	r, err := ParseLine("A-1;3")
	if err != nil || r.Qty != 3 {
		t.Fatalf("ParseLine: %v %v", r, err)
	}
}

func TestTotalSkipsReturns(t *testing.T) {
	rs := []Record{{"a", 4}, {"b", -1}, {"c", 2}}
	if got := Total(rs); got != 6 {
		t.Errorf("Total(%v) = %d, want 6", rs, got)
	}
}
"""


@case("github")
def go_test_verbose_error_names(name: str, shape: str) -> None:
    """`go test -v`: passing tests named TestParseError…/TestFailFast… that log `error:` and `failure:`; one test
    fails."""
    c = Case("go", name, shape, "feed")
    c.files({"go.mod": "module example.com/feed\n\ngo 1.19\n", "feed.go": GO_SRC, "feed_test.go": GO_TEST})
    genv = {"GOPATH": str(WORK / "gopath"), "GOCACHE": str(WORK / "gocache"), "GOFLAGS": "-mod=mod",
            "GOPROXY": "off", "HOME": str(WORK / "home")}
    c.step("Set up Go", "go version", env=genv)
    c.step("Vet", "go vet ./...", env=genv)
    c.step("Test", "go test -v -count=1 ./...",
           lambda o: req(o, r"^--- FAIL: TestTotalSkipsReturns", r"^\s+feed_test\.go:\d+: Total", limit=1),
           context=lambda o: find(o, r"^FAIL\s+example\.com/feed", limit=1), env=genv)
    c.write(tool="go test", category="test", made_by=made(name, version("go version")))


RUST_LIB = """use std::fmt;

#[derive(Debug, PartialEq)]
pub enum FeedError {
    Fields(usize),
    Quantity(String),
}

impl fmt::Display for FeedError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            FeedError::Fields(n) => write!(f, "error: expected 2 fields, got {}", n),
            FeedError::Quantity(q) => write!(f, "error: bad quantity {:?}", q),
        }
    }
}

pub fn parse_line(line: &str) -> Result<(String, i64), FeedError> {
    let fields: Vec<&str> = line.trim().split(';').collect();
    if fields.len() != 2 {
        return Err(FeedError::Fields(fields.len()));
    }
    let qty = fields[1].parse::<i64>().map_err(|_| FeedError::Quantity(fields[1].to_string()))?;
    Ok((fields[0].to_string(), qty))
}

pub fn total(lines: &[&str]) -> i64 {
    let mut sum = 0;
    for line in lines {
        match parse_line(line) {
            Ok((_, q)) => sum += q,
            Err(error) => {}
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_on_missing_field() {
        assert_eq!(parse_line("a"), Err(FeedError::Fields(1)));
    }

    #[test]
    fn error_display_names_the_quantity() {
        assert_eq!(FeedError::Quantity("x".into()).to_string(), "error: bad quantity \\"x\\"");
    }

    #[test]
    fn fails_nothing_on_valid_lines() {
        assert_eq!(parse_line("a;3"), Ok(("a".to_string(), 3)));
    }

    #[test]
    fn total_skips_bad_lines() {
        assert_eq!(total(&["a;3", "b;x", "c;-1"]), 3);
    }
}
"""


@case("travis")
def cargo_warnings_then_test_failure(name: str, shape: str) -> None:
    """cargo's `warning: unused variable: \\`error\\``, passing tests named error_*/fails_*; one test fails."""
    c = Case("rust", name, shape, "feed")
    c.files({"Cargo.toml": '[package]\nname = "feed"\nversion = "0.3.0"\nedition = "2021"\n\n[dependencies]\n',
             "src/lib.rs": RUST_LIB})
    c.step("Toolchain", "rustc --version && cargo --version")
    c.step("Build", "cargo build --offline 2>&1")
    c.step("Test", "cargo test --offline 2>&1",
           lambda o: req(o, r"^---- tests::total_skips_bad_lines stdout ----", r"panicked at src/lib\.rs:\d+:\d+",
                         r"assertion `left == right` failed", r"^\s+left: ", r"^\s+right: ", limit=1),
           context=lambda o: find(o, r"^test result: FAILED", limit=1))
    c.write(tool="cargo test", category="test", made_by=made(name, version("cargo --version")))


# ================================================================ R CMD check: pages of OK, one ERROR

@case("jenkins")
def r_cmd_check_tests_error(name: str, shape: str) -> None:
    """`R CMD check`: dozens of `* checking … OK` lines (some named for errors), then the tests fail."""
    c = Case("r", name, shape, "ledgr")
    c.files({"DESCRIPTION": "Package: ledgr\nTitle: Ledger Balances\nVersion: 0.2.0\n"
             "Authors@R: person('Ada', 'Example', email = 'ada@example.org', role = c('aut', 'cre'))\n"
             "Description: Sums postings and reports errors in ledger files.\nLicense: Apache License 2.0\n"
             "Encoding: UTF-8\nSuggests: testthat (>= 3.0.0)\nConfig/testthat/edition: 3\n",
             "NAMESPACE": "export(balance)\nexport(error_message)\n",
             "R/balance.R": "balance <- function(x) sum(x[x > 0])\n"
                            "error_message <- function(code) paste0('error: ', code)\n",
             "man/balance.Rd": "\\name{balance}\n\\alias{balance}\n\\alias{error_message}\n\\title{Balance}\n"
                               "\\usage{\nbalance(x)\nerror_message(code)\n}\n\\arguments{\n"
                               "\\item{x}{postings}\n\\item{code}{an error code}\n}\n"
                               "\\value{A number or a string.}\n\\description{Sums postings.}\n",
             "tests/testthat.R": "library(testthat)\nlibrary(ledgr)\ntest_check('ledgr')\n",
             "tests/testthat/test-balance.R": "test_that('error_message formats codes', {\n"
                                              "  expect_equal(error_message('E1'), 'error: E1')\n})\n\n"
                                              "test_that('balance includes refunds', {\n"
                                              "  expect_equal(balance(c(10, -2, 5)), 13)\n})\n"})
    c.step("R version", "R --version | head -n 1")
    c.step("Build", "cd .. && R CMD build --no-build-vignettes ledgr")
    c.step("Check", "cd .. && _R_CHECK_FORCE_SUGGESTS_=false R CMD check --no-manual ledgr_0.2.0.tar.gz",
           lambda o: req(o, r"── Failure \('test-balance\.R:\d+(:\d+)?'\): balance includes refunds",
                         r"balance\(c\(10, -2, 5\)\) .*not equal to 13", r"`actual`: 15", r"`expected`: 13",
                         limit=1),
           context=lambda o: find(o, r"^Status: 1 ERROR", r"^Running the tests in .tests/testthat\.R. failed", limit=1))
    c.sh("rm -rf ../ledgr_0.2.0.tar.gz ../ledgr.Rcheck")
    c.write(tool="R CMD check", category="test", made_by=made(name, version("R --version") + ", testthat "
                                                                 + version("Rscript -e 'cat(format(packageVersion(\"testthat\")))'")))



# ================================================================ languages the corpus had no case of

@case("github")
def clojure_test_failure(name: str, shape: str) -> None:
    """clojure.test: `FAIL in (test-name) (file.clj:N)` with expected/actual, after a passing error-path test."""
    c = Case("clojure", name, shape, "cart")
    c.files({"src/cart/core.clj": "(ns cart.core)\n\n(defn total [items]\n  (reduce + (map :price items)))\n\n"
             "(defn add-item [cart item]\n  (when-not (:sku item)\n    (throw (ex-info \"error: item needs a sku\" "
             "{:item item})))\n  (conj cart item))\n",
             "test/cart/core_test.clj": "(ns cart.core-test\n  (:require [clojure.test :refer [deftest is "
             "testing run-tests]]\n            [cart.core :refer [total add-item]]))\n\n"
             "(deftest add-item-error-without-sku\n  (is (thrown? clojure.lang.ExceptionInfo (add-item [] "
             "{:price 3}))))\n\n(deftest total-counts-quantities\n  (testing \"two of a kind\"\n"
             "    (is (= 10 (total [{:sku \"a\" :price 3 :qty 2} {:sku \"b\" :price 4}])))))\n",
             "bin/test.clj": "(require 'cart.core-test)\n(let [{:keys [fail error]} (clojure.test/run-tests "
             "'cart.core-test)]\n  (shutdown-agents)\n  (System/exit (if (zero? (+ fail error)) 0 1)))\n"})
    c.step("Clojure version", "clojure -e '(println (clojure-version))'")
    c.step("Test", "clojure -cp src:test bin/test.clj",
           lambda o: req(o, r"^FAIL in \(total-counts-quantities\) \(core_test\.clj:\d+\)", r"^two of a kind$",
                         r"^expected: \(= 10", r"^  actual: \(not \(= 10 7\)\)", limit=1),
           context=lambda o: find(o, r"^\d+ failures, \d+ errors\.", limit=1))
    c.write(tool="clojure.test", category="test", made_by=made(name, "Clojure " + version(
        "clojure -e '(println (clojure-version))'")))


@case("jenkins")
def clojure_unresolved_symbol(name: str, shape: str) -> None:
    """The namespace under test does not compile: `Syntax error compiling at (cart/core.clj:N:M)`."""
    c = Case("clojure", name, shape, "cart")
    c.files({"src/cart/core.clj": "(ns cart.core)\n\n(defn total [items]\n  (reduce + (map :price itemz)))\n",
             "test/cart/core_test.clj": "(ns cart.core-test\n  (:require [clojure.test :refer [deftest is]]\n"
             "            [cart.core :refer [total]]))\n\n(deftest total-sums\n  (is (= 7 (total [{:price 3} "
             "{:price 4}]))))\n",
             "bin/test.clj": "(require 'cart.core-test)\n(let [{:keys [fail error]} (clojure.test/run-tests "
             "'cart.core-test)]\n  (System/exit (if (zero? (+ fail error)) 0 1)))\n"})
    c.step("Test", "clojure -cp src:test bin/test.clj",
           lambda o: req(o, r"Syntax error compiling at \(.*cart/core\.clj:\d+:\d+\)",
                         r"Unable to resolve symbol: itemz in this context", limit=1))
    c.write(tool="clojure", category="test", made_by=made(name, "Clojure " + version(
        "clojure -e '(println (clojure-version))'")))


CRYSTAL_SRC = """class Cart
  getter items = [] of {String, Int32}

  def add(sku : String, price : Int32)
    raise ArgumentError.new("error: empty sku") if sku.empty?
    @items << {sku, price}
    self
  end

  def total : Int32
    @items.sum { |(_, price)| price }
  end
end
"""
CRYSTAL_SPEC = """require "spec"
require "../src/cart"

describe Cart do
  it "raises an error on an empty sku" do
    expect_raises(ArgumentError, "error: empty sku") { Cart.new.add("", 3) }
  end

  it "sums prices" do
    Cart.new.add("a", 3).add("b", 4).total.should eq 8
  end
end
"""


@case("travis")
def crystal_spec_failure(name: str, shape: str) -> None:
    """`crystal spec`: `Failure/Error:` with Expected/got and the spec's location, after a passing error spec."""
    c = Case("crystal", name, shape, "cart")
    c.files({"src/cart.cr": CRYSTAL_SRC, "spec/cart_spec.cr": CRYSTAL_SPEC, "shard.yml": "name: cart\nversion: 0.1.0\n"})
    c.step("Crystal version", "crystal --version | head -n 1", env=e(CRYSTAL_CACHE_DIR=str(WORK / "crystal")))
    c.step("Spec", "crystal spec --no-color",
           lambda o: req(o, r"^\s+1\) Cart sums prices", r"Failure/Error: ", r"^\s+Expected: 8", r"^\s+got: 7",
                         r"# spec/cart_spec\.cr:\d+", limit=1),
           context=lambda o: find(o, r"^\d+ examples, 1 failures", limit=1), env=e(CRYSTAL_CACHE_DIR=str(WORK / "crystal")))
    c.write(tool="crystal spec", category="test", made_by=made(name, version("crystal --version")))


@case("github")
def crystal_undefined_method(name: str, shape: str) -> None:
    """`crystal build`: `Error: undefined method` with the source excerpt and caret."""
    c = Case("crystal", name, shape, "cart")
    c.files({"src/cart.cr": CRYSTAL_SRC.replace("@items.sum", "@items.summ"),
             "src/main.cr": 'require "./cart"\nputs Cart.new.add("a", 3).total\n',
             "shard.yml": "name: cart\nversion: 0.1.0\n"})
    c.step("Build", "crystal build --no-color src/main.cr -o bin/cart",
           lambda o: [i for i in req(o, r"^Error: undefined method 'summ'", limit=1)
                      + block(o, r"^In src/cart\.cr:\d+:\d+", after=4, limit=1) if o[i].strip()],
           env=e(CRYSTAL_CACHE_DIR=str(WORK / "crystal")))
    c.write(tool="crystal", category="build", made_by=made(name, version("crystal --version")))


ADA_SPEC = """package Ledger is
   type Cents is range -10_000_000 .. 10_000_000;
   type Postings is array (Positive range <>) of Cents;
   function Balance (P : Postings) return Cents;
end Ledger;
"""
ADA_BODY = """package body Ledger is
   function Balance (P : Postings) return Cents is
      Sum : Cents := 0;
   begin
      for C of P loop
         Sum := Sum + C;
      end loop;
      return Sum;
   end Balance;
end Ledger;
"""
ADA_TEST = """with Ada.Text_IO; use Ada.Text_IO;
with Ledger; use Ledger;

procedure Test_Ledger is
begin
   Put_Line ("test_error_paths: ok");
   pragma Assert (Balance ((1 => 1050, 2 => -225)) = 825, "balance of two postings");
   pragma Assert (Balance ((1 => 100, 2 => 200, 3 => -50)) = 300, "balance with a refund");
   Put_Line ("all ledger tests passed");
end Test_Ledger;
"""


@case("jenkins")
def gnat_compile_error(name: str, shape: str) -> None:
    """gnatmake: `file.adb:L:C: error:` lines (GNAT 12), then `gnatmake: "…" compilation error`."""
    c = Case("ada", name, shape, "ledger")
    c.files({"src/ledger.ads": ADA_SPEC, "src/ledger.adb": ADA_BODY.replace("Sum := Sum + C;", "Sum := Sum + C\n"),
             "tests/test_ledger.adb": ADA_TEST})
    c.step("GNAT version", "gnatmake --version | head -n 1")
    c.step("Build", "mkdir -p obj && gnatmake -gnata -gnatwa -D obj -aIsrc tests/test_ledger.adb -o obj/test_ledger",
           lambda o: req(o, r"ledger\.adb:\d+:\d+: (error: )?", limit=3))
    c.write(tool="gnatmake", category="build", made_by=made(name, version("gnatmake --version")))


@case("travis")
def gnat_assertion_failure(name: str, shape: str) -> None:
    """A GNAT test program's `pragma Assert` fails: `raised ADA.ASSERTIONS.ASSERTION_ERROR : message`."""
    c = Case("ada", name, shape, "ledger")
    c.files({"src/ledger.ads": ADA_SPEC, "src/ledger.adb": ADA_BODY.replace("Sum := Sum + C;",
                                                                            "Sum := Sum + abs C;"),
             "tests/test_ledger.adb": ADA_TEST})
    c.step("Build", "mkdir -p obj && gnatmake -q -gnata -D obj -aIsrc tests/test_ledger.adb -o obj/test_ledger")
    c.step("Test", "./obj/test_ledger", lambda o: req(o, r"^raised .*ASSERTION_ERROR : balance of two postings",
                                                      limit=1))
    c.write(tool="gnat", category="test", made_by=made(name, version("gnatmake --version")))


RKT_SRC = """#lang racket/base
(provide total add-item)
(define (total items) (for/sum ([i items]) (* (hash-ref i 'price) (hash-ref i 'qty 1))))
(define (add-item cart item)
  (unless (hash-ref item 'sku #f) (error 'add-item "error: item needs a sku"))
  (cons item cart))
"""
RKT_TEST = """#lang racket/base
(require rackunit "../cart.rkt")
(test-case "add-item raises an error without a sku"
  (check-exn exn:fail? (lambda () (add-item '() (hash 'price 3)))))
(test-case "total multiplies quantities"
  (check-equal? (total (list (hash 'price 3 'qty 2) (hash 'price 4))) 10))
"""


@case("gitlab")
def raco_test_failure(name: str, shape: str) -> None:
    """`raco test`: rackunit's FAILURE block (name, location, actual, expected)."""
    c = Case("racket", name, shape, "cart")
    c.files({"cart.rkt": RKT_SRC.replace("(hash-ref i 'qty 1)", "(hash-ref i 'qty 0)"), "tests/cart-test.rkt": RKT_TEST})
    c.step("Racket version", "racket --version")
    c.step("Test", "raco test tests",
           lambda o: req(o, r"^FAILURE$", r"^name:\s+check-equal\?", r"^location:\s+.*cart-test\.rkt:\d+:\d+",
                         r"^actual:\s+6", r"^expected:\s+10", limit=1),
           context=lambda o: find(o, r"^\d+/\d+ test failures", limit=1))
    c.write(tool="raco test", category="test", made_by=made(name, version("racket --version")))


@case("plain")
def raco_make_unbound_identifier(name: str, shape: str) -> None:
    """`raco make`: `file.rkt:L:C: name: unbound identifier` with its context lines."""
    c = Case("racket", name, shape, "cart")
    c.files({"cart.rkt": RKT_SRC.replace("(cons item cart)", "(cons item carts)"), "tests/cart-test.rkt": RKT_TEST})
    c.step("Compile", "raco make -v cart.rkt tests/cart-test.rkt",
           lambda o: block(o, r"cart\.rkt:\d+:\d+: carts: unbound identifier", after=1, limit=1))
    c.write(tool="raco make", category="build", made_by=made(name, version("racket --version")))


KT_SRC = """package shop

data class Item(val sku: String, val price: Int, val qty: Int = 1)

class CartException(message: String) : Exception(message)

fun total(items: List<Item>): Int = items.sumBy { it.price * it.qty }

fun requireSku(item: Item): Item {
    if (item.sku.isEmpty()) throw CartException("error: item needs a sku")
    return item
}
"""
KT_TEST = """package shop

fun main() {
    try {
        requireSku(Item("", 3))
        error("expected a CartException")
    } catch (e: CartException) {
        println("errorWithoutSku: ok")
    }
    val got = total(listOf(Item("a", 3, 2), Item("b", 4)))
    check(got == 10) { "total of two items should be 10 but was $got" }
    println("all cart tests passed")
}
"""


@case("travis")
def kotlinc_unresolved_reference(name: str, shape: str) -> None:
    """kotlinc: `file.kt:L:C: error: unresolved reference:` with the source line and caret, after warnings."""
    c = Case("kotlin", name, shape, "shop")
    c.files({"src/shop/Cart.kt": KT_SRC.replace("items.sumBy { it.price * it.qty }",
                                                "items.sumBy { it.price * it.quantity }"),
             "test/shop/CartTest.kt": KT_TEST})
    c.step("Kotlin version", "kotlinc -version 2>&1")
    c.step("Build", "mkdir -p build && kotlinc src test -d build/shop.jar 2>&1",
           lambda o: block(o, r"src/shop/Cart\.kt:\d+:\d+: error: unresolved reference: quantity", after=2))
    c.write(tool="kotlinc", category="build", made_by=made(name, version("kotlinc -version 2>&1")))


@case("github")
def kotlin_check_failed(name: str, shape: str) -> None:
    """A Kotlin test program's `check` fails: `Exception in thread "main" java.lang.IllegalStateException`."""
    c = Case("kotlin", name, shape, "shop")
    c.files({"src/shop/Cart.kt": KT_SRC.replace("it.price * it.qty", "it.price"), "test/shop/CartTest.kt": KT_TEST})
    c.step("Build", "mkdir -p build && kotlinc src test -d build/shop.jar 2>&1")
    c.step("Test", "kotlin -cp build/shop.jar shop.CartTestKt",
           lambda o: req(o, r"^Exception in thread \"main\" java\.lang\.IllegalStateException: total of two items",
                         r"^\s+at shop\.CartTestKt\.main\(CartTest\.kt:\d+\)", limit=1))
    c.write(tool="kotlin", category="test", made_by=made(name, version("kotlinc -version 2>&1")))


CABAL = """cabal-version: 2.4
name:          ledger
version:       0.1.0
build-type:    Simple

library
  exposed-modules: Ledger
  hs-source-dirs:  src
  build-depends:   base >=4 && <5{deps}
  default-language: Haskell2010

test-suite ledger-test
  type:             exitcode-stdio-1.0
  main-is:          Main.hs
  hs-source-dirs:   test
  build-depends:    base, ledger
  default-language: Haskell2010
"""
HS_SRC = "module Ledger (balance) where\n\nbalance :: [Int] -> Int\nbalance = sum . filter (> 0)\n"
HS_TEST = """module Main (main) where

import Control.Monad (unless)
import Ledger (balance)
import System.Exit (exitFailure)

main :: IO ()
main = do
  putStrLn "errorOnEmptyLedger: ok"
  let got = balance [1050, -225]
  unless (got == 825) $ do
    putStrLn ("test/Main.hs: balance [1050, -225]: expected 825, got " ++ show got)
    exitFailure
"""


def cabal_env() -> dict[str, str]:
    """cabal with no package server (a job that never ran `cabal update` and has no index): it builds against
    GHC's own packages and says so."""
    config = WORK / "cabal" / "config"
    if not config.is_file():
        subprocess.run(["cabal", "user-config", "init"], env={**os.environ, "CABAL_DIR": str(config.parent)},
                       check=True, capture_output=True)
        config.write_text(re.sub(r"(?ms)^repository hackage\.haskell\.org\n.*?^$\n", "", config.read_text()))
    return e(CABAL_DIR=str(WORK / "cabal"))


@case("jenkins")
def cabal_missing_dependency(name: str, shape: str) -> None:
    """`cabal build` cannot resolve a package it has no index for: `Could not resolve dependencies`."""
    c = Case("haskell", name, shape, "ledger")
    c.files({"ledger.cabal": CABAL.replace("{deps}", ", containers, aeson >=2.0"), "src/Ledger.hs": HS_SRC,
             "test/Main.hs": HS_TEST})
    c.step("Versions", "ghc --version && cabal --version", env=cabal_env())
    c.step("Build", "cabal build --offline all",
           lambda o: req(o, r"Could not resolve dependencies", r"unknown package: aeson", limit=1), env=cabal_env())
    c.write(tool="cabal", category="dependency", made_by=made(name, version("cabal --version") + ", "
                                                               + version("ghc --version")))


@case("github")
def cabal_test_failure(name: str, shape: str) -> None:
    """`cabal test --test-show-details=direct`: the suite's own message, then `Test suite ledger-test: FAIL`."""
    c = Case("haskell", name, shape, "ledger")
    c.files({"ledger.cabal": CABAL.replace("{deps}", ""), "src/Ledger.hs": HS_SRC, "test/Main.hs": HS_TEST})
    c.step("Versions", "ghc --version && cabal --version", env=cabal_env())
    c.step("Build", "cabal build --offline all", env=cabal_env())
    c.step("Test", "cabal test --offline --test-show-details=direct",
           lambda o: req(o, r"^test/Main\.hs: balance \[1050, -225\]: expected 825", limit=1),
           context=lambda o: find(o, r"^Test suite ledger-test: FAIL", r"^0 of 1 test suites", limit=1),
           env=cabal_env())
    c.write(tool="cabal test", category="test", made_by=made(name, version("cabal --version") + ", "
                                                              + version("ghc --version")))


TF_MAIN = """terraform {
  required_version = ">= 1.5"
}

variable "environment" {
  type    = string
  default = "staging"
}

locals {
  name_prefix = "shop-${var.environment}"
  tags = {
    owner = "platform"
    env   = var.environment
  }
}

resource "terraform_data" "release" {
  input = {
    name = "${local.name_prefix}-release"
    tags = local.tags
  }
}

output "release_name" {
  value = terraform_data.release.output.name
}
"""


def tf_env() -> dict[str, str]:
    return e(TF_IN_AUTOMATION="1", TF_CLI_CONFIG_FILE="/dev/null", CHECKPOINT_DISABLE="1")


@case("github")
def terraform_fmt_check(name: str, shape: str) -> None:
    """`terraform fmt -check -diff`: the files it would rewrite, with the diff."""
    c = Case("terraform", name, shape, "infra")
    bad = TF_MAIN.replace('    owner = "platform"\n    env   = var.environment', '    owner = "platform"\n    env = var.environment')
    c.files({"main.tf": bad, "modules/net/main.tf": 'variable "cidr" {\n  type = string\n}\n'})
    c.step("Terraform version", "terraform version", env=tf_env())
    c.step("Format", "terraform fmt -check -recursive -diff -no-color",
           lambda o: req(o, r"^main\.tf$", limit=1), env=tf_env())
    c.write(tool="terraform fmt", category="lint", made_by=made(name, version("terraform version")))


@case("travis")
def terraform_validate_undeclared(name: str, shape: str) -> None:
    """`terraform validate`: `Error: Reference to undeclared input variable` with its block and source lines."""
    c = Case("terraform", name, shape, "infra")
    c.files({"main.tf": TF_MAIN.replace("env   = var.environment", "env   = var.enviroment")})
    c.step("Init", "terraform init -input=false -no-color", env=tf_env())
    c.step("Validate", "terraform validate -no-color",
           lambda o: req(o, r"Error: Reference to undeclared input variable", r"on main\.tf line \d+, in locals:",
                         r"^\s*│?\s*\d+:\s+env\s+= var\.enviroment",
                         r"An input variable with the name \"enviroment\" has not", r"^\s*│?\s*mean \"environment\"",
                         limit=1), env=tf_env())
    c.write(tool="terraform validate", category="config", made_by=made(name, version("terraform version")))


@case("jenkins")
def terraform_init_provider_missing(name: str, shape: str) -> None:
    """`terraform init` against a provider mirror that lacks the provider: `Failed to query available provider
    packages`."""
    c = Case("terraform", name, shape, "infra")
    mirror = c.dir / "vendor" / "providers"  # a vendored mirror the job was meant to fill first
    mirror.mkdir(parents=True, exist_ok=True)
    c.files({"main.tf": TF_MAIN.replace('  required_version = ">= 1.5"', '  required_version = ">= 1.5"\n'
                                        '  required_providers {\n    aws = {\n      source  = "hashicorp/aws"\n'
                                        '      version = "~> 5.40"\n    }\n  }'),
             ".terraformrc": f'provider_installation {{\n  filesystem_mirror {{\n    path = "{mirror}"\n  }}\n}}\n'})
    c.step("Init", "terraform init -input=false -no-color",
           lambda o: req(o, r"Error: Failed to query available provider packages",
                         r"Could not retrieve the list of available versions for provider hashicorp/aws",
                         r"^provider registry\.terraform\.io/hashicorp/aws was not found", r"^search locations$",
                         limit=1),
           env={**tf_env(), "TF_CLI_CONFIG_FILE": str(c.dir / ".terraformrc")})
    c.write(tool="terraform init", category="dependency", made_by=made(name, version("terraform version")
                                                                        + "; an empty provider mirror"))



# ================================================================ more noise for the languages outside users bring most

@case("github")
def tox_lint_ok_then_tests_fail(name: str, shape: str) -> None:
    """tox runs a passing lint env (`lint: OK`) and a failing test env; its closing summary mixes OK and FAIL."""
    c = Case("python", name, shape, "feed")
    c.files({"src/feed.py": PY_LIB, "tests/test_feed.py": PY_TESTS.replace("assert total_quantity(records) == 5",
                                                                          "assert total_quantity(records) == 5\n"
                                                                          "    assert total_quantity([]) == 0"),
             "pyproject.toml": "[build-system]\nrequires = ['setuptools>=61']\nbuild-backend = 'setuptools.build_meta'\n\n"
                               "[project]\nname = 'feed'\nversion = '0.5.0'\n\n[tool.setuptools]\npackage-dir = "
                               "{'' = 'src'}\npy-modules = ['feed']\n",
             "tox.ini": "[tox]\nenv_list = lint, py311\n\n[testenv]\ndeps = pytest==8.3.4\n"
                        "commands = pytest -q -p no:cacheprovider tests\n\n[testenv:lint]\nskip_install = true\n"
                        "deps = ruff==0.7.4\ncommands = ruff check --output-format=concise src tests\n"})
    c.step("Set up Python", "python3 --version && python3 -m venv .venv && .venv/bin/pip install -q tox==4.23.2",
           env=e())
    c.step("Tox", ".venv/bin/tox", lambda o: pytest_failure(o, "test_total_counts_returns"),
           context=lambda o: find(o, r"^\s+py311: FAIL code 1", limit=1), env=e(), show="tox")
    c.write(tool="pytest", category="test", made_by=made(name, "tox 4.23.2, ruff 0.7.4, pytest 8.3.4"))


@case("travis")
def pip_sdist_c_extension_fails(name: str, shape: str) -> None:
    """`pip install -r requirements.txt` builds a vendored sdist whose C extension does not compile: gcc's error
    inside pip's `Building wheel` output, then `Failed building wheel` and `Could not build wheels`."""
    c = Case("python", name, shape, "feed")
    c.files({"vendor/fastsum/setup.py": "from setuptools import Extension, setup\n\nsetup(name='fastsum', version='1.0.3', "
                                        "ext_modules=[Extension('fastsum', ['fastsum.c'], "
                                        "extra_compile_args=['-Wall', '-Werror=implicit-function-declaration'])])\n",
             "vendor/fastsum/pyproject.toml": "[build-system]\nrequires = ['setuptools>=61', 'wheel']\n"
                                              "build-backend = 'setuptools.build_meta'\n",
             "vendor/fastsum/fastsum.c": """#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *total(PyObject *self, PyObject *args) {
    PyObject *seq;
    if (!PyArg_ParseTuple(args, "O", &seq)) return NULL;
    long sum = 0;
    Py_ssize_t n = PySequence_Length(seq);
    for (Py_ssize_t i = 0; i < n; i++) sum += PyLong_AsLong(PySequence_GetItem(seq, i));
    return PyLong_FromLong(sum)
}

static PyMethodDef methods[] = {{"total", total, METH_VARARGS, "error-free sum"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "fastsum", NULL, -1, methods};
PyMODINIT_FUNC PyInit_fastsum(void) { return PyModule_Create(&mod); }
""",
             "requirements.txt": "pytest==8.3.4\n./vendor/fastsum\n", "src/feed.py": PY_LIB})
    c.step("Set up Python", "python3 --version && python3 -m venv .venv", env=e())
    c.step("Install dependencies", ".venv/bin/pip install -r requirements.txt",
           lambda o: block(o, r"fastsum\.c:\d+:\d+: error: ", after=3, limit=1)
           + req(o, r"^\s*ERROR: Failed building wheel for fastsum", limit=1),
           context=lambda o: find(o, r"Could not build wheels for fastsum", limit=1), env=e())
    c.write(tool="pip", category="dependency",
            made_by=made(name, "pip 23.0.1, setuptools from PyPI, " + version("gcc --version")))


@case("jenkins")
def surefire_ignored_failures_then_javadoc(name: str, shape: str) -> None:
    """`-Dmaven.test.failure.ignore=true`: a test fails and Maven carries on (`[ERROR] Tests run: …, Failures: 1`,
    `BUILD` goes on); the build then fails in javadoc, the job's real failure."""
    j = java_gen()
    c = Case("java", name, shape, "invoice")
    jd = ("<configuration><doclint>all</doclint><failOnWarnings>true</failOnWarnings></configuration>"
          "<executions><execution><id>docs</id><goals><goal>javadoc</goal></goals><phase>verify</phase>"
          "</execution></executions>")
    pom = j.pom(plugins=j.PLUGIN.format(a="maven-javadoc-plugin", v="3.4.1", extra=jd))
    j.project(c, pom, **{j.SRC + "TaxTable.java": j.TAX.replace('rates.put("NL", 21);', 'rates.put("NL", 12);'),
                         j.SRC + "Money.java": j.MONEY.replace("     * @param percent the percentage",
                                                               "     * @param pct the percentage")})
    j.setup(c)
    j.mvn(c, "-Dmaven.test.failure.ignore=true verify",
          lambda o: block(o, r"^\[ERROR\] /\S+Money\.java:\d+: error: ", after=2, limit=1)
          + req(o, r"^\[ERROR\] Failed to execute goal org.apache.maven.plugins:maven-javadoc-plugin", limit=1),
          ntp=True)
    c.write(tool="maven-javadoc-plugin", category="lint",
            made_by=made(name, f"{j.MVN}, {j.JAVAC}, JUnit 4.13.2, maven-javadoc-plugin 3.4.1 against Debian's "
                               "maven-repo; test failures ignored by -Dmaven.test.failure.ignore=true"))


MOCHA_TEST = """const assert = require('assert');
const { addItem, total, discount } = require('../src/cart');

describe('cart', function () {
  it('should throw an error when the sku is missing', function () {
    assert.throws(() => addItem({ items: [] }, { price: 3 }), /item needs a sku/);
  });
  it('should fail gracefully on null items', function () {
    assert.throws(() => addItem({ items: [] }, null));
  });
  it('sums prices', function () {
    assert.strictEqual(total({ items: [{ sku: 'a', price: 3, qty: 2 }] }), 6);
  });
  it('loads the price list from the pricing service', function (done) {
    const fetchPrices = (cb) => setTimeout(() => cb(null, { a: 3 }), 5000);
    fetchPrices((err, prices) => {
      assert.ifError(err);
      assert.strictEqual(prices.a, 3);
      done();
    });
  });
  it('warns on unknown discount codes', function () {
    assert.strictEqual(discount({ items: [{ sku: 'a', price: 10 }] }, 'BOGUS'), 10);
  });
});
"""


@case("travis")
def mocha_timeout_with_error_names(name: str, shape: str) -> None:
    """mocha: passing `should throw an error…`/`should fail gracefully…` tests and console output; one test times
    out (`Error: Timeout of 2000ms exceeded`)."""
    c = Case("javascript", name, shape, "cart")
    npm_project(c, {"mocha": "10.8.2"}, {"test": "mocha --reporter spec"},
                {"src/cart.js": CART_JS, "test/cart.test.js": MOCHA_TEST}, lock=False)
    c.step("Install", "npm install --no-audit --no-fund", env=npm_env(c))
    c.step("Test", "npm test", lambda o: req(o, r"^\s+1\) cart$", r"^\s+loads the price list from the pricing service:$",
                                             r"Error: Timeout of 2000ms exceeded", limit=1), env=npm_env(c))
    c.write(tool="mocha", category="test", made_by=made(name, "npm " + version("npm --version") + ", mocha 10.8.2"))


@case("github")
def npm_ci_no_space_left(name: str, shape: str) -> None:
    """`npm ci` into a node_modules on a full disk (a tiny tmpfs): npm only warns (`npm warn tar TAR_ENTRY_ERROR
    ENOSPC`) and exits 0; the next step fails on the half-written install."""
    c = Case("javascript", name, shape, "cart")
    npm_project(c, {"jest": "29.7.0", "typescript": "5.6.3"}, {"test": "jest"},
                {"src/cart.js": CART_JS, "test/cart.test.js": CART_TEST})
    nm = c.dir / "node_modules"
    nm.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=25m", "tmpfs", str(nm)], check=True)
    try:
        out = c.step("Install", "npm ci --no-audit --no-fund", env=npm_env(c))
        c.steps[-1].causal = need(find(out, r"TAR_ENTRY_ERROR ENOSPC: no space left on device", limit=3), "ENOSPC", out)
        c.step("Test", "npm test", lambda o: req(o, r"jest: not found|Cannot find module|Error: ", limit=1),
               env=npm_env(c))
    finally:
        subprocess.run(["umount", str(nm)], check=False)
    c.write(tool="npm", category="infrastructure", made_by=made(name, "npm " + version("npm --version")
                                                                 + "; node_modules on a 25 MiB tmpfs"))


@case("jenkins")
def pytest_timeout_in_test(name: str, shape: str) -> None:
    """pytest-timeout stops a hanging test (`Failed: Timeout >2.0s`) among passing `test_error_*` tests."""
    hang = PY_TESTS + """

def test_fetch_partner_feed():
    import socket
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    client = socket.create_connection(server.getsockname())
    client.recv(1024)  # the partner never answers
"""
    c = Case("python", name, shape, "feed")
    c.files({"src/feed.py": PY_LIB.replace('if r["qty"] > 0', ""), "tests/test_feed.py": hang,
             "pytest.ini": "[pytest]\npythonpath = src\ntimeout = 2\n",
             "requirements-dev.txt": "pytest==8.3.4\npytest-timeout==2.3.1\n"})
    py_venv(c, "-r requirements-dev.txt")
    c.step("Test", ".venv/bin/pytest -p no:cacheprovider -v tests",
           lambda o: req(o, r"^_+ test_fetch_partner_feed _+$", r"^E\s+Failed: Timeout", r"^tests/test_feed\.py:\d+: ",
                         r"^FAILED tests/test_feed\.py::test_fetch_partner_feed", limit=1),
           context=lambda o: find(o, r"^=+ \d+ failed", limit=1), env=e(), show="pytest -v tests")
    c.write(tool="pytest", category="test", made_by=made(name, "pytest 8.3.4, pytest-timeout 2.3.1"))



# ================================================================ the machine, coverage gates, and a few more languages

@case("travis")
def maven_out_of_memory_packaging(name: str, shape: str) -> None:
    """Maven itself runs out of heap (MAVEN_OPTS=-Xmx40m) while the jar plugin packs a big build:
    `Error assembling JAR: … Java heap space`, after compiling and passing tests."""
    j = java_gen()
    c = Case("java", name, shape, "invoice")
    consts = "".join(f"    public static final long R{i} = {i}L * K;\n" for i in range(1500))
    many = {j.SRC + f"gen/Rates{k}.java": f"package com.acme.invoice.gen;\n\npublic final class Rates{k} {{\n"
            f"    private static final long K = {k}L;\n\n    private Rates{k}() {{\n    }}\n\n{consts}}}\n"
            for k in range(12)}
    j.project(c, **many)
    j.setup(c)
    c.files({".mvn/settings.xml": j.SETTINGS.format(repo=j.WARM)})
    c.step("Build", "MAVEN_OPTS=-Xmx40m mvn -B -ntp -s .mvn/settings.xml verify",
           lambda o: req(o, r"^\[ERROR\] Failed to execute goal .*Java heap space", limit=1))
    c.write(tool="maven-jar-plugin", category="infrastructure",
            made_by=made(name, f"{j.MVN} with MAVEN_OPTS=-Xmx40m, {j.JAVAC}, against Debian's maven-repo"))


@case("github")
def jest_coverage_gate_after_passing_tests(name: str, shape: str) -> None:
    """Every test passes (names with 'error' and 'fails'); the coverage gate fails the run:
    `Jest: "global" coverage threshold for lines (90%) not met`."""
    c = Case("javascript", name, shape, "cart")
    tests = CART_TEST.split("describe('discount'", maxsplit=1)[0]
    npm_project(c, {"jest": "29.7.0"}, {"test": "jest --ci --coverage"},
                {"src/cart.js": CART_JS, "test/cart.test.js": tests,
                 "jest.config.js": "module.exports = {\n  collectCoverageFrom: ['src/**/*.js'],\n"
                                   "  coverageThreshold: { global: { lines: 90, branches: 80 } },\n};\n"}, lock=False)
    c.step("Install", "npm install --no-audit --no-fund", env=npm_env(c))
    c.step("Test", "npm test", lambda o: req(o, r'Jest: "global" coverage threshold for (lines|branches) \(\d+%\) not met',
                                             limit=2), env=npm_env(c))
    c.write(tool="jest", category="test", made_by=made(name, "npm " + version("npm --version") + ", jest 29.7.0"))


UNITTEST = """import unittest

from feed import FeedError, legacy_total, parse_line, total_quantity


class FeedTest(unittest.TestCase):
    def test_error_on_missing_field(self):
        with self.assertRaises(FeedError):
            parse_line("A-1;3")

    def test_fail_fast_on_bad_quantity(self):
        with self.assertRaises(ValueError):
            parse_line("A-1;x;1700000000")

    def test_legacy_total(self):
        self.assertEqual(legacy_total([{"qty": 2}]), 2)

    def test_total_counts_returns(self):
        self.assertEqual(total_quantity([{"qty": 4}, {"qty": -1}, {"qty": 2}]), 5)

    def test_parse_line_ok(self):
        self.assertEqual(parse_line("A-1;3;1700000000")["qty"], 3)


if __name__ == "__main__":
    unittest.main()
"""


@case("travis")
def unittest_verbose_error_names(name: str, shape: str) -> None:
    """`python -m unittest -v`: `test_error_… ok` lines, DeprecationWarnings on stderr; one FAIL with its
    traceback."""
    c = Case("python", name, shape, "feed")
    c.files({"src/feed.py": PY_LIB, "tests/test_feed.py": UNITTEST})
    c.step("Set up Python", "python3 --version", env=e())
    c.step("Test", "PYTHONPATH=src python3 -W default -m unittest discover -v -s tests",
           lambda o: req(o, r"^FAIL: test_total_counts_returns \(test_feed\.FeedTest", r'File ".*tests/test_feed\.py", '
                         r"line \d+, in test_total_counts_returns", r"^AssertionError: 6 != 5", limit=1),
           context=lambda o: find(o, r"^FAILED \(failures=1\)", limit=1), env=e(),
           show="python -m unittest discover -v -s tests")
    c.write(tool="unittest", category="test", made_by=made(name, version("python3 --version")))


D_SRC = """module cart;

struct Item { string sku; int price; int qty = 1; }

int total(const Item[] items) {
    int sum = 0;
    foreach (i; items) sum += i.price;
    return sum;
}

unittest {
    assert(total([]) == 0, "error-free on an empty cart");
}

unittest {
    auto items = [Item("a", 3, 2), Item("b", 4)];
    assert(total(items) == 10, "total multiplies quantities");
}
"""


@case("github")
def dub_test_failure(name: str, shape: str) -> None:
    """`dub test` with LDC: `core.exception.AssertError@source/cart.d(N): message`."""
    c = Case("d", name, shape, "cart")
    c.files({"dub.json": '{"name": "cart", "targetType": "library"}\n', "source/cart.d": D_SRC})
    c.step("Versions", "ldc2 --version | head -n 1 && dub --version | head -n 1", env=e())
    c.step("Test", "dub test --compiler=ldc2 --skip-registry=all",
           lambda o: req(o, r"AssertError@source/cart\.d\(\d+\): total multiplies quantities", limit=1),
           context=lambda o: find(o, r"modules passed unittests|\d+/\d+ modules FAILED", limit=1), env=e())
    c.write(tool="dub test", category="test", made_by=made(name, version("ldc2 --version") + ", "
                                                            + version("dub --version")))


VERILOG_ACC = """module acc8(input clk, input rst, input [7:0] d, output reg [7:0] q);
  always @(posedge clk) begin
    if (rst) q <= 8'd0;
    else q <= q + d;
  end
endmodule
"""
VERILOG_TB = """`timescale 1ns/1ps
module tb;
  reg clk = 0, rst = 1;
  reg [7:0] d = 0;
  wire [7:0] q;
  acc8 dut(.clk(clk), .rst(rst), .d(d), .q(q));
  always #5 clk = ~clk;
  initial begin
    $display("test_error_free_reset: start");
    @(posedge clk); #1 rst = 0; d = 8'd3;
    @(posedge clk); @(posedge clk); #1;
    if (q !== 8'd6) $fatal(1, "accumulate: expected 6, got %0d", q);
    d = 8'd250;
    @(posedge clk); #1;
    if (q !== 8'd255) $fatal(1, "saturate: expected 255, got %0d", q);
    $display("all accumulator tests passed");
    $finish;
  end
endmodule
"""


@case("jenkins")
def iverilog_testbench_fatal(name: str, shape: str) -> None:
    """Icarus Verilog: a testbench's `$fatal` after a passing check."""
    c = Case("verilog", name, shape, "acc8")
    c.files({"rtl/acc8.v": VERILOG_ACC, "tb/tb.v": VERILOG_TB, "Makefile":
             "sim: build/tb.vvp\n\tvvp -n build/tb.vvp\n\nbuild/tb.vvp: rtl/acc8.v tb/tb.v\n\tmkdir -p build\n"
             "\tiverilog -g2012 -Wall -o $@ $^\n"})
    c.step("Simulate", "make sim", lambda o: req(o, r"saturate: expected 255, got \d+", limit=1))
    c.write(tool="iverilog", category="test", made_by=made(name, version("iverilog -V 2>&1")))


VHDL_ACC = """library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;

entity acc8 is
  port (clk, rst : in std_logic; d : in unsigned(7 downto 0); q : out unsigned(7 downto 0));
end entity;

architecture rtl of acc8 is
  signal acc : unsigned(7 downto 0) := (others => '0');
begin
  process (clk) begin
    if rising_edge(clk) then
      if rst = '1' then acc <= (others => '0');
      else acc <= acc + dd;
      end if;
    end if;
  end process;
  q <= acc;
end architecture;
"""


@case("plain")
def ghdl_analysis_error(name: str, shape: str) -> None:
    """GHDL: `file.vhd:L:C: no declaration for` with its source line and caret, from analysis."""
    c = Case("vhdl", name, shape, "acc8")
    c.files({"rtl/acc8.vhd": VHDL_ACC})
    c.step("GHDL version", "ghdl --version | sed -n 1p")
    c.step("Analyse", "mkdir -p build && ghdl -a --std=08 --workdir=build rtl/acc8.vhd",
           lambda o: block(o, r"acc8\.vhd:\d+:\d+: no declaration for", after=2, limit=1))
    c.write(tool="ghdl", category="build", made_by=made(name, version("ghdl --version")))



@case("jenkins")
def pip_require_hashes_mismatch(name: str, shape: str) -> None:
    """`pip install --require-hashes`: a vendored wheel was rebuilt and its hash no longer matches the lock:
    `THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE`."""
    c = Case("python", name, shape, "feed")
    wheel(c.dir / "vendor", "acme-schema", "1.2.0")
    c.files({"requirements.lock": "acme-schema==1.2.0 \\\n    --hash=sha256:"
                                  "3f7a1c9e2b4d6f8a0c1e3b5d7f9a2c4e6b8d0f1a3c5e7b9d1f3a5c7e9b1d3f5a\n",
             "src/feed.py": PY_LIB})
    c.step("Set up Python", "python3 --version && python3 -m venv .venv", env=e())
    c.step("Install locked dependencies", ".venv/bin/pip install --no-index --find-links vendor --require-hashes "
           "-r requirements.lock",
           lambda o: req(o, r"THESE PACKAGES DO NOT MATCH THE HASHES", r"^\s+acme-schema==1\.2\.0 from ",
                         r"^\s+Expected sha256 ", r"^\s+Got\s+", limit=1), env=e())
    c.write(tool="pip", category="dependency", made_by=made(name, "pip " + version(f"{c.dir}/.venv/bin/pip --version")
                                                             .split()[1]))


# ================================================================ driver

def main(argv: list[str]) -> int:
    if argv[:1] == ["--tools"]:
        tools()
        return 0
    bad = 0
    for name, fn, shape in CASES:
        if argv and name not in argv:
            continue
        try:
            fn(name, shape)
            print("wrote", name, shape)
        except Exception as exc:  # one broken case must not stop the others; it is reported and retried
            bad += 1
            print("FAILED", name, type(exc).__name__, str(exc)[:3000])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
