"""Logs that fool a keyword grep, and tools the rest of the corpus lacks.

Real CI logs are mostly successful output: installs that print `npm warn deprecated`, pip's resolver `ERROR:` that
does not fail the job, compiler command lines full of `-Werror`, configure's `checking for strerror... yes`,
`Failures: 0, Errors: 0` summaries, tests named `test_error_*` that pass, `console.error` from passing tests, flaky
tests that fail once and pass on a rerun, downloads retried and then served. The cases here put such output around
one real failure, and add tools and languages the corpus had none or few of (Ant, Clojure, Crystal, Ada, Racket,
Kotlin, Cabal, Terraform, R CMD check, ...) and failures that are not tests (dependency resolution, a test JVM
killed from outside).

Each case runs the real tools here on a small project written here with one injected fault and labels it from that
knowledge (GUIDELINE.md); nothing a tool prints is edited (a loopback address is replaced by `*.internal.example`,
as in make/wide), the CI frame comes from make/shapes.py. Shapes are chosen per case, weighted to the GitHub,
Travis and Jenkins logs that outside users bring.

    python3 bench/corpus/make/wider/make.py --tools     # once: venv + npm tools under $CORPUS_WORK (/tmp/corpus-x)
    python3 bench/corpus/make/wider/make.py [CASE...]   # (re)write the cases; all when none is named

Tools: Debian 12 (`apt-get install ant ant-optional junit4 clojure crystal gnat racket cabal-install kotlin
terraform r-base-core`, maven, gradle, gcc, cmake, autoconf, automake, golang, rustup's cargo), PyPI (pytest,
pytest-rerunfailures, mypy in a venv), npm (jest, typescript, eslint and the packages each project pins, from
the npm registry).
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
from ws import Case, block, find, version  # noqa: E402

WORK = Path(os.environ.get("CORPUS_WORK", "/tmp/corpus-x"))
TOOLS = WORK / "tools" / "bin"
PIP_TOOLS = ["pytest==8.3.4", "pytest-rerunfailures==16.7", "mypy==1.13.0"]
APT_TOOLS = ["ant", "ant-optional", "junit4", "clojure", "crystal", "gnat", "racket", "cabal-install", "kotlin",
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

def wheel(dest: Path, dist: str, ver: str, requires: tuple[str, ...] = ()) -> Path:
    """A minimal real wheel (a vendored dependency, not a tool's output)."""
    import io
    import zipfile
    mod = dist.replace("-", "_")
    info = f"{mod}-{ver}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {dist}\nVersion: {ver}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    files = {f"{mod}/__init__.py": f"__version__ = '{ver}'\n", f"{info}/METADATA": meta,
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: corpus\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
             f"{info}/RECORD": ""}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for k, v in files.items():
            z.writestr(k, v)
    dest.mkdir(parents=True, exist_ok=True)
    (dest / f"{mod}-{ver}-py3-none-any.whl").write_bytes(buf.getvalue())
    return dest


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
