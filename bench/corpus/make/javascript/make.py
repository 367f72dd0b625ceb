"""JavaScript/TypeScript cases: small failing projects checked by the real tools (jest, mocha, vitest, node:test,
tsc, eslint, prettier, webpack, esbuild, npm), wrapped in the five CI shapes.

    python3 bench/corpus/make/javascript/make.py [CASE...]   # (re)write cases/javascript/*; all when none is named
Tools come from the npm registry (exact versions below), installed once per dependency set under $CORPUS_WORK.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kit import NPM_CACHE, Step, cleanup, env, grep, node_project
from maker import ANSI_COLOUR, Cases, failing, make_all, passing
from record import find, run, write_case

V = {"jest": "30.5.2", "mocha": "12.0.3", "vitest": "4.1.12", "typescript": "7.0.2", "eslint": "10.16.0",
     "@eslint/js": "10.0.1", "prettier": "3.10.1", "esbuild": "0.28.2", "webpack": "5.113.0",
     "webpack-cli": "7.3.1", "stylelint": "17.16.0", "stylelint-config-standard": "40.0.0", "sass": "1.108.2",
     "@commitlint/cli": "20.5.3", "@commitlint/config-conventional": "20.5.3"}

CART = '''"use strict";

const { formatPrice } = require("./format");

class Cart {
  constructor(currency = "EUR") {
    this.currency = currency;
    this.items = [];
    this.discount = 0;
  }

  add(name, price, qty = 1) {
    if (price < 0) throw new RangeError(`negative price for ${name}`);
    this.items.push({ name, price, qty });
    return this;
  }

  applyDiscount(percent) {
    this.discount = percent / 100;
  }

  total() {
    const sum = this.items.reduce((acc, item) => acc + item.price * item.qty, 0);
    return Math.round(sum * (1 - this.discount) * 100) / 100;
  }

  summary() {
    return { count: this.items.length, total: formatPrice(this.total(), this.currency) };
  }
}

module.exports = { Cart };
'''

FORMAT = '''"use strict";

const SYMBOLS = { EUR: "€", USD: "$", GBP: "£" };

function formatPrice(value, currency) {
  const symbol = SYMBOLS[currency];
  return `${symbol}${value.toFixed(2)}`;
}

function slugify(text) {
  return text
    .toLowerCase()
    .trim()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

module.exports = { formatPrice, slugify };
'''

JEST_CART = '''const { Cart } = require("../src/cart");

describe("Cart", () => {
  test("starts empty", () => {
    expect(new Cart().total()).toBe(0);
  });

  test("adds items", () => {
    const cart = new Cart().add("tea", 2.5).add("cake", 3, 2);
    expect(cart.total()).toBe(8.5);
  });

  test("rejects negative prices", () => {
    expect(() => new Cart().add("bad", -1)).toThrow(RangeError);
  });

  test("applies a discount", () => {
    const cart = new Cart().add("tea", 10, 10);
    cart.applyDiscount(10);
    expect(cart.total()).toBe(90);
  });

  test("summarises", () => {
    const cart = new Cart("USD").add("tea", 2.5);
    expect(cart.summary()).toEqual({ count: 1, total: "$2.50" });
  });
});
'''

JEST_FORMAT = '''const { formatPrice, slugify } = require("../src/format");

describe("formatPrice", () => {
  test("euros", () => expect(formatPrice(3, "EUR")).toBe("€3.00"));
  test("pounds", () => expect(formatPrice(1.5, "GBP")).toBe("£1.50"));
});

describe("slugify", () => {
  test("simple", () => expect(slugify("Hello World")).toBe("hello-world"));
  test("trims dashes", () => expect(slugify("  --Tea & Cake--  ")).toBe("tea-cake"));
  test("keeps digits", () => expect(slugify("Route 66")).toBe("route-66"));
});
'''


def base(over: dict[str, str | None]) -> dict[str, str]:
    files: dict[str, str | None] = {"src/cart.js": CART, "src/format.js": FORMAT, "test/cart.test.js": JEST_CART,
                                    "test/format.test.js": JEST_FORMAT, "README.md": "# shop\n", ".gitignore":
                                    "node_modules/\n"}
    files.update(over)
    return {k: v for k, v in files.items() if v is not None}


def node_version() -> tuple[str, list[str]]:
    out, _ = run("node --version && npm --version", cwd=Path("/"))
    return "node --version && npm --version", out


Made = tuple[list[Step], str, str, str]


def npm_case(name: str, shape: str, deps: list[str], files: dict[str, str], scripts: dict[str, str],
             cmd: str, tool: str, category: str, causal: Callable[[list[str]], list[int]],
             pre: list[str] = (), ctx: str | None = None, colour: bool = False,
             extra: dict[str, object] | None = None, post: list[str] = ()) -> Made:
    """`post` commands run after the failure too, as `if: always()` steps do."""
    root, ci_out = node_project(name, shape, {d: V[d] for d in deps}, files, scripts, extra)
    c0, o0 = node_version()
    steps = [Step("Set up Node", c0, o0), Step("Install", "npm ci", ci_out)]
    e = {"FORCE_COLOR": "1"} if colour else {"NO_COLOR": "1"}
    steps += [passing(p, root, env(**e), title=p.split()[-1].title()) for p in pre]
    steps.append(failing(cmd, root, env(**e), cmd.rsplit(maxsplit=1)[-1].title(), causal, ctx=ctx, ctx_limit=2,
                         strip=ANSI_COLOUR))
    for p in post:
        o, _ = run(p, cwd=root, env=env(**e))
        steps.append(Step(p.split()[0].title(), p, o, always=True))
    cleanup(root)
    made = ", ".join(f"{d} {V[d]}" for d in deps if d in V)
    return steps, tool, category, made


# --- jest ------------------------------------------------------------------------------------------------------

def jest_causal(o: list[str], e_cap: int = 6) -> list[int]:
    """FAIL headers, each `●` block's title, message, expected/received or diff lines, the `>` source line and
    caret, and the project's `at` frames."""
    idx = find(o, r"^FAIL ", limit=10)
    block = False
    kept = 0
    diff = skipping = False
    for i, t in enumerate(o):
        if re.match(r"^\s+● ", t):
            block, kept, diff, skipping = True, 0, False, False
            idx.append(i)
            continue
        if re.match(r"^(Test Suites:|PASS |FAIL )", t):
            block = False
        if not block or not t.strip():
            continue
        s = t.strip()
        if s == "Jest encountered an unexpected token":  # then generic advice until "Details:"
            idx.append(i)
            skipping = True
            continue
        if s == "Details:":
            skipping = False
            continue
        if skipping:
            continue
        if re.match(r"^>\s*\d+ \|", s):
            idx += [i, i + 1]
        elif re.match(r"^at .*\((src|test|__tests__)/", s) or re.match(r"^at (src|test)/", s):
            idx.append(i)
        elif re.match(r"^\d+ \|", s) or s.startswith("|") or s.startswith("at "):
            continue
        elif s.startswith("- Expected") or s.startswith("+ Received"):
            diff = True
            idx.append(i)
        elif diff and not re.match(r"^[+-] ", s):
            continue
        elif kept < e_cap and not s.startswith("Ran all"):
            idx.append(i)
            kept += 1
    return sorted(set(idx))


def jest_case(name: str, shape: str, over: dict[str, str | None], cmd: str = "npm test", e_cap: int = 6,
              colour: bool = False, pre: list[str] = (), extra: dict[str, object] | None = None) -> Made:
    jest_cfg = {"jest": {"testEnvironment": "node"}, **(extra or {})}
    return npm_case(name, shape, ["jest"], base(over), {"test": "jest --ci"}, cmd, "jest", "test",
                    lambda o: jest_causal(o, e_cap), pre=pre, ctx=r"^Tests:", colour=colour, extra=jest_cfg)


CASES: Cases[Callable[[str, str], Made]] = Cases()
case = CASES.case


@case
def jest_discount_assert(name: str, shape: str) -> Made:
    return jest_case(name, shape, {"src/cart.js": CART.replace("this.discount = percent / 100;",
                                                              "this.discount = percent;")})


@case
def jest_toequal_diff(name: str, shape: str) -> Made:
    return jest_case(name, shape, {"src/format.js": FORMAT.replace('USD: "$"', 'USD: "US$"')}, colour=True)


@case
def jest_typeerror(name: str, shape: str) -> Made:
    return jest_case(name, shape, {"src/cart.js": CART.replace("this.items = [];", "this.items = null;")
                                   .replace("this.items.push", "(this.items || []).push")}, cmd="npx jest --ci")


@case
def jest_suite_failed_to_run(name: str, shape: str) -> Made:
    return jest_case(name, shape, {"src/cart.js": CART.replace('require("./format")', 'require("./formatting")')})


@case
def jest_async_timeout(name: str, shape: str) -> Made:
    test = JEST_CART.replace('describe("Cart", () => {', '''describe("Cart", () => {
  test("loads prices from the catalogue", async () => {
    const load = () => new Promise((resolve) => { if (process.env.CATALOGUE) resolve(12); });
    const price = await load();
    expect(price).toBe(12);
  }, 1500);
''')
    return jest_case(name, shape, {"test/cart.test.js": test})


@case
def jest_snapshot_mismatch(name: str, shape: str) -> Made:
    test = JEST_FORMAT + '''
test("catalogue slugs", () => {
  expect(["Green Tea", "Lemon Cake", "Café Crème"].map(slugify)).toMatchSnapshot();
});
'''
    snap = '''// Jest Snapshot v1, https://jestjs.io/docs/snapshot-testing

exports[`catalogue slugs 1`] = `
[
  "green-tea",
  "lemon-cake",
  "cafe-creme",
]
`;
'''
    return jest_case(name, shape, {"test/format.test.js": test, "test/__snapshots__/format.test.js.snap": snap},
                     e_cap=10, colour=True)


@case
def jest_two_suites_fail(name: str, shape: str) -> Made:
    return jest_case(name, shape, {"src/format.js": FORMAT.replace('.replace(/^-+|-+$/g, "")', "")
                                   .replace("toFixed(2)", "toFixed(1)")}, cmd="npx jest --ci --verbose")


@case
def jest_syntax_error(name: str, shape: str) -> Made:
    return jest_case(name, shape, {"src/format.js": FORMAT.replace("return `${symbol}${value.toFixed(2)}`;",
                                                                   "return `${symbol}${value.toFixed(2)}`;\n  }")})


# --- mocha / node:test / vitest ---------------------------------------------------------------------------------

MOCHA_CART = JEST_CART.replace('const { Cart } = require("../src/cart");',
                               'const assert = require("node:assert/strict");\nconst { Cart } = require("../src/cart");') \
    .replace("test(", "it(").replace("expect(new Cart().total()).toBe(0);", "assert.equal(new Cart().total(), 0);") \
    .replace("expect(cart.total()).toBe(8.5);", "assert.equal(cart.total(), 8.5);") \
    .replace("expect(() => new Cart().add(\"bad\", -1)).toThrow(RangeError);",
             "assert.throws(() => new Cart().add(\"bad\", -1), RangeError);") \
    .replace("expect(cart.total()).toBe(90);", "assert.equal(cart.total(), 90);") \
    .replace('expect(cart.summary()).toEqual({ count: 1, total: "$2.50" });',
             'assert.deepEqual(cart.summary(), { count: 1, total: "$2.50" });')


def mocha_causal(o: list[str]) -> list[int]:
    idx: list[int] = []
    start = grep(o, r"^\s+\d+ failing")[0]
    kept = 0
    for i in range(start + 1, len(o)):
        s = o[i].strip()
        if re.match(r"^\d+\) ", s):
            idx.append(i)
            kept = 0
            if i + 1 < len(o) and o[i + 1].strip().endswith(":"):
                idx.append(i + 1)
            continue
        if not s or (s.endswith(":") and i - 1 in idx):
            continue
        if s.startswith("at "):
            if re.search(r"\((src|test)/|/(src|test)/", s) and "node_modules" not in s:
                idx.append(i)
            continue
        if kept < 6 and (re.match(r"^(Uncaught )?\w*(Error|Exception)\b", s) or "!==" in s or
                         (re.match(r"^[+-]\S|^[+-] {2,}\S", s) and "expected - actual" not in s
                         and "actual - expected" not in s)):
            idx.append(i)
            kept += 1
    return sorted(set(idx))


def mocha_case(name: str, shape: str, over: dict[str, str | None], cmd: str = "npm test") -> Made:
    files = base({"test/cart.test.js": MOCHA_CART, "test/format.test.js": None, **over})
    return npm_case(name, shape, ["mocha"], files, {"test": "mocha --reporter spec"}, cmd, "mocha", "test",
                    mocha_causal, ctx=r"^\s+\d+ (passing|failing)")


@case
def mocha_strict_equal(name: str, shape: str) -> Made:
    return mocha_case(name, shape, {"src/cart.js": CART.replace("(1 - this.discount)", "this.discount")})


@case
def mocha_deep_equal(name: str, shape: str) -> Made:
    return mocha_case(name, shape, {"src/format.js": FORMAT.replace("value.toFixed(2)", "value")})


@case
def mocha_timeout(name: str, shape: str) -> Made:
    test = MOCHA_CART.replace('describe("Cart", () => {', '''describe("Cart", () => {
  it("syncs with the server", function (done) {
    this.timeout(500);
    const cart = new Cart();
    setTimeout(() => { if (cart.items.length) done(); }, 10);
  });
''')
    return mocha_case(name, shape, {"test/cart.test.js": test})


@case
def mocha_hook_error(name: str, shape: str) -> Made:
    test = MOCHA_CART.replace('describe("Cart", () => {', '''describe("Cart", () => {
  let fixtures;
  before(() => {
    fixtures = JSON.parse(require("node:fs").readFileSync(__dirname + "/fixtures/items.json", "utf8"));
  });
''')
    return mocha_case(name, shape, {"test/cart.test.js": test}, cmd="npx mocha --reporter spec")


NODE_TEST = '''import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { slugify, formatPrice } = require("../src/format.js");

describe("slugify", () => {
  test("lowercases", () => assert.equal(slugify("ABC"), "abc"));
  test("joins words", () => assert.equal(slugify("Tea Time"), "tea-time"));
  test("drops accents", () => assert.equal(slugify("Café"), "cafe"));
});

describe("formatPrice", () => {
  test("two decimals", () => assert.equal(formatPrice(2, "EUR"), "€2.00"));
  test("unknown currency", () => assert.throws(() => formatPrice(2, "XYZ"), /unknown currency/));
});
'''


def tap_causal(o: list[str]) -> list[int]:
    """TAP: each leaf `not ok` line (not a parent that only failed through its subtests), its error lines, the
    expected/actual pair and the project's stack frame."""
    idx: list[int] = []
    for i, t in enumerate(o):
        if re.match(r"^\s*not ok \d+ ", t):
            body = o[i + 1:i + 40]
            if any("failureType: 'subtestsFailed'" in b for b in body[:6]):
                continue
            idx.append(i)
            j = i + 1
            in_error = False
            while j < len(o) and not re.match(r"^\s*(ok|not ok) \d+ |^\s*\.\.\.$", o[j]):
                s = o[j].strip()
                key = re.match(r"^(\w+):", s)
                if key:
                    in_error = key.group(1) == "error"
                    if key.group(1) in ("error", "expected", "actual", "location"):
                        idx.append(j)
                elif in_error and s:
                    idx.append(j)
                elif "/test/" in s and "node_modules" not in s and not in_error:
                    idx.append(j)
                    break
                j += 1
    return sorted(set(idx))


@case
def node_test_tap(name: str, shape: str) -> Made:
    root_files = base({"test/cart.test.js": None, "test/format.test.js": None, "test/format.test.mjs": NODE_TEST})
    return npm_case(name, shape, ["prettier"], root_files, {"test": "node --test --test-reporter=tap test/",
                                                            "lint": "prettier --check src"},
                    "npm test", "node:test", "test", tap_causal, pre=["npm ls --depth=0"], ctx=r"^# (pass|fail) ")


@case
def node_test_spec(name: str, shape: str) -> Made:
    root_files = base({"test/cart.test.js": None, "test/format.test.js": None,
                       "test/format.test.mjs": NODE_TEST.replace('"tea-time"', '"tea_time"')})

    def causal(o: list[str]) -> list[int]:
        start = grep(o, r"failing tests:")[0]
        idx = [i for i in range(start + 1, len(o)) if re.match(r"^\s*(✖|AssertionError|TypeError|Error)", o[i])
               or (re.search(r"\(file://\S+/test/", o[i]) and "node_modules" not in o[i]) or "!==" in o[i]]
        idx += [i for i in range(start + 1, len(o)) if re.match(r"^\s+[+-] '", o[i])][:6]
        return sorted(set(idx))
    return npm_case(name, shape, [], root_files, {"test": "node --test --test-reporter=spec test/"}, "npm test",
                    "node:test", "test", causal, ctx=r"^ℹ (pass|fail) ")


VITEST_TEST = '''import { describe, expect, it } from "vitest";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { Cart } = require("../src/cart.js");

describe("Cart", () => {
  it("adds", () => {
    expect(new Cart().add("tea", 2).total()).toBe(2);
  });
  it("discounts", () => {
    const cart = new Cart().add("tea", 20);
    cart.applyDiscount(25);
    expect(cart.total()).toBe(15);
  });
  it("summarises in pounds", () => {
    expect(new Cart("GBP").add("cake", 4.5).summary()).toEqual({ count: 1, total: "£4.50" });
  });
});
'''


def vitest_causal(o: list[str]) -> list[int]:
    idx: list[int] = []
    start = grep(o, r"Failed Tests \d+")[0]
    for i in range(start + 1, len(o)):
        s = o[i].strip()
        if re.match(r"^(FAIL|×) ", s) or re.match(r"^\w*(Error|Exception):", s) or s.startswith("❯ test/") or \
                s.startswith("❯ src/") or \
                (re.match(r"^[+-] ", s) and not re.match(r"^[+-] (Expected|Received)$", s)):
            idx.append(i)
        elif re.match(r"^\d+\|", s) and i + 1 < len(o) and re.match(r"^\s*\|\s+\^", o[i + 1]):
            idx += [i, i + 1]
    return sorted(set(idx))


@case
def vitest_assert(name: str, shape: str) -> Made:
    files = base({"test/cart.test.js": None, "test/format.test.js": None, "test/cart.test.mjs": VITEST_TEST,
                  "src/cart.js": CART.replace("Math.round(sum * (1 - this.discount) * 100) / 100",
                                              "Math.round(sum * (1 - this.discount))")})
    return npm_case(name, shape, ["vitest"], files, {"test": "vitest run"}, "npm test", "vitest", "test",
                    vitest_causal, ctx=r"Tests\s+\d+ failed")


@case
def vitest_throw(name: str, shape: str) -> Made:
    files = base({"test/cart.test.js": None, "test/format.test.js": None, "test/cart.test.mjs": VITEST_TEST,
                  "src/format.js": FORMAT.replace("const symbol = SYMBOLS[currency];",
                                                  "const symbol = SYMBOLS[currency.code];")})
    return npm_case(name, shape, ["vitest"], files, {"test": "vitest run --reporter=verbose"}, "npm test",
                    "vitest", "test", vitest_causal, ctx=r"Tests\s+\d+ failed", colour=True)


# --- TypeScript -------------------------------------------------------------------------------------------------

TSCONFIG = json.dumps({"compilerOptions": {"target": "es2022", "module": "nodenext", "strict": True,
                                           "noEmit": True, "skipLibCheck": True}, "include": ["src"]}, indent=2)
TS_CART = '''export interface Item {
  name: string;
  price: number;
  qty: number;
}

export class Cart {
  private items: Item[] = [];
  private discount = 0;

  add(name: string, price: number, qty = 1): this {
    this.items.push({ name, price, qty });
    return this;
  }

  applyDiscount(percent: number): void {
    this.discount = percent / 100;
  }

  total(): number {
    const sum = this.items.reduce((acc, item) => acc + item.price * item.qty, 0);
    return Math.round(sum * (1 - this.discount) * 100) / 100;
  }
}
'''
TS_MAIN = '''import { Cart } from "./cart.js";

const cart = new Cart().add("tea", 2.5).add("cake", 3, 2);
cart.applyDiscount(10);
console.log(cart.total().toFixed(2));
'''


def tsc_case(name: str, shape: str, over: dict[str, str], cmd: str = "npm run typecheck") -> Made:
    files = {"tsconfig.json": TSCONFIG, "src/cart.ts": TS_CART, "src/main.ts": TS_MAIN, **over}

    def causal(o: list[str]) -> list[int]:
        errs = grep(o, r"error TS\d+:", limit=20)
        more = [i for e in errs for i in range(e + 1, e + 6) if i < len(o) and re.match(r"^\s*(\d+\s|~|\s+~)", o[i])]
        more += [i for e in errs for i in (e + 1,) if i < len(o) and o[i].startswith("  ") and
                 not re.match(r"^\s*\d+ ", o[i])]
        return sorted(set(errs + more))
    return npm_case(name, shape, ["typescript"], files, {"typecheck": "tsc -p .", "build": "tsc -p ."}, cmd,
                    "tsc", "typecheck", causal, ctx=r"^Found \d+ error")


@case
def tsc_assignable(name: str, shape: str) -> Made:
    return tsc_case(name, shape, {"src/main.ts": TS_MAIN + 'const label: number = cart.total().toFixed(2);\n'
                                                          'console.log(label);\n'})


@case
def tsc_missing_property(name: str, shape: str) -> Made:
    return tsc_case(name, shape, {"src/main.ts": TS_MAIN.replace('.add("cake", 3, 2)', '.add("cake", "3", 2)')
                                  + "console.log(cart.count);\n"}, cmd="npx tsc -p . --pretty")


@case
def tsc_cannot_find_module(name: str, shape: str) -> Made:
    return tsc_case(name, shape, {"src/main.ts": 'import { formatPrice } from "./format.js";\n' + TS_MAIN +
                                  'console.log(formatPrice(cart.total(), "EUR"));\n'})


@case
def tsc_implicit_any(name: str, shape: str) -> Made:
    return tsc_case(name, shape, {"src/util.ts": "export function sum(values) {\n  return values.reduce((a, b) => "
                                  "a + b, 0);\n}\n\nexport function first<T>(xs: T[]): T {\n  return xs[0] ?? null;\n}\n"},
                    cmd="npx tsc -p . --pretty false")


# --- eslint / prettier ------------------------------------------------------------------------------------------

ESLINT_CFG = '''import js from "@eslint/js";

export default [
  js.configs.recommended,
  {
    languageOptions: { sourceType: "commonjs", globals: { require: "readonly", module: "writable",
      process: "readonly", console: "readonly", __dirname: "readonly" } },
    rules: { eqeqeq: "error", "no-console": "warn", "prefer-const": "error" },
  },
  { ignores: ["test/**"] },
];
'''


def eslint_causal(o: list[str]) -> list[int]:
    idx: list[int] = []
    header = -1
    for i, t in enumerate(o):
        if t.startswith("/"):
            header = i
        elif re.match(r"^\s+\d+:\d+\s+error\s", t):
            idx += [header, i] if header >= 0 else [i]
    return sorted(set(idx))


def eslint_case(name: str, shape: str, over: dict[str, str], cmd: str = "npm run lint",
                pre: list[str] = ()) -> Made:
    files = base({"eslint.config.mjs": ESLINT_CFG, **over})
    return npm_case(name, shape, ["eslint", "@eslint/js", "jest"], files,
                    {"lint": "eslint src", "test": "jest --ci"}, cmd, "eslint", "lint", eslint_causal, pre=pre,
                    ctx=r"^✖ \d+ problems?", extra={"jest": {"testEnvironment": "node"}})


@case
def eslint_unused_and_undef(name: str, shape: str) -> Made:
    return eslint_case(name, shape, {"src/format.js": FORMAT.replace(
        "  const symbol = SYMBOLS[currency];", "  const symbol = SYMBOLS[currency];\n  const unused = currency.length;\n"
        "  console.log(symbl);")})


@case
def eslint_eqeqeq_prefer_const(name: str, shape: str) -> Made:
    return eslint_case(name, shape, {"src/cart.js": CART.replace("if (price < 0)", "if (price == null || price < 0)")
                                     .replace("const sum =", "let sum =").replace(
        "  summary() {", "  debug() {\n    console.log(this.items);\n  }\n\n  summary() {")})


@case
def eslint_parse_error(name: str, shape: str) -> Made:
    return eslint_case(name, shape, {"src/cart.js": CART.replace("applyDiscount(percent) {",
                                                                 "applyDiscount(percent) {{")},
                       cmd="npx eslint src --max-warnings 0")


def prettier_case(name: str, shape: str, over: dict[str, str], pre: list[str] = ()) -> Made:
    files = base(over)
    return npm_case(name, shape, ["prettier", "jest"], files, {"format:check": "prettier --check .",
                                                               "test": "jest --ci"},
                    "npm run format:check", "prettier", "lint",
                    lambda o: grep(o, r"^\[warn\] (?!Code style)", limit=20), pre=pre,
                    ctx=r"Code style issues", extra={"jest": {"testEnvironment": "node"}})


@case
def prettier_check(name: str, shape: str) -> Made:
    return prettier_case(name, shape, {"src/cart.js": CART.replace("  add(name, price, qty = 1) {",
                                                                   "  add(name,price,qty=1){")}, pre=["npm test"])


@case
def prettier_check_many(name: str, shape: str) -> Made:
    return prettier_case(name, shape, {"src/format.js": FORMAT.replace('"', "'"),
                                       "README.md": "# shop\n*  one\n*  two\n", "test/cart.test.js":
                                       JEST_CART.replace("  test(", "    test(")})


# --- bundlers ---------------------------------------------------------------------------------------------------

ENTRY = '''import { formatPrice } from "./format.js";
import { Cart } from "./cart.js";

const cart = new Cart().add("tea", 2.5);
document.querySelector("#total").textContent = formatPrice(cart.total(), "EUR");
'''
ESM_CART = CART.replace('"use strict";\n\nconst { formatPrice } = require("./format");\n',
                        'import { formatPrice } from "./format.js";\n').replace("module.exports = { Cart };",
                                                                                 "export { Cart };")
ESM_FORMAT = FORMAT.replace('"use strict";\n\n', "").replace("module.exports = { formatPrice, slugify };",
                                                              "export { formatPrice, slugify };")


@case
def webpack_module_not_found(name: str, shape: str) -> Made:
    files = {"src/index.js": ENTRY.replace('"./format.js"', '"./formatting.js"'), "src/cart.js": ESM_CART,
             "src/format.js": ESM_FORMAT, "webpack.config.js":
             'module.exports = { mode: "production", entry: "./src/index.js", output: { filename: "app.js" } };\n'}
    return npm_case(name, shape, ["webpack", "webpack-cli"], files, {"build": "webpack"}, "npm run build",
                    "webpack", "build", lambda o: grep(o, r"^ERROR in ", r"^Module not found: "),
                    ctx=r"compiled with \d+ error")


@case
def webpack_syntax_error(name: str, shape: str) -> Made:
    files = {"src/index.js": ENTRY, "src/cart.js": ESM_CART.replace("total() {", "total() {{"),
             "src/format.js": ESM_FORMAT}
    return npm_case(name, shape, ["webpack", "webpack-cli"], files, {"build": "webpack --mode production"},
                    "npm run build", "webpack", "build",
                    lambda o: grep(o, r"^ERROR in ", r"^Module parse failed: ") + find(o, r"^> \d+ \|", limit=3),
                    ctx=r"compiled with \d+ error")


@case
def esbuild_could_not_resolve(name: str, shape: str) -> Made:
    files = {"src/index.js": ENTRY.replace('"./cart.js"', '"./basket.js"'), "src/cart.js": ESM_CART,
             "src/format.js": ESM_FORMAT}

    def causal(o: list[str]) -> list[int]:
        e = grep(o, r"\[ERROR\]")
        return sorted(set(e + [i for x in e for i in range(x + 2, x + 5) if i < len(o) and o[i].strip()]))
    return npm_case(name, shape, ["esbuild"], files, {"build": "esbuild src/index.js --bundle --outfile=dist/app.js"},
                    "npm run build", "esbuild", "build", causal, ctx=r"^\d+ errors?$")


@case
def esbuild_syntax(name: str, shape: str) -> Made:
    files = {"src/index.js": ENTRY, "src/cart.js": ESM_CART, "src/format.js": ESM_FORMAT.replace(
        "return `${symbol}${value.toFixed(2)}`;", "return `${symbol}${value.toFixed(2)};")}

    def causal(o: list[str]) -> list[int]:
        e = grep(o, r"\[ERROR\]")
        return sorted(set(e + [i for x in e for i in range(x + 2, x + 5) if i < len(o) and o[i].strip()]))
    return npm_case(name, shape, ["esbuild"], files, {"build": "esbuild src/index.js --bundle --minify "
                                                               "--outfile=dist/app.js"},
                    "npm run build", "esbuild", "build", causal, ctx=r"^\d+ errors?$")


# --- npm itself -------------------------------------------------------------------------------------------------

def npm_fail(name: str, shape: str, mutate: Callable[[Path], None], cmd: str, category: str,
             causal: Callable[[list[str]], list[int]], install: bool = False) -> Made:
    root, ci_out = node_project(name, shape, {"jest": V["jest"]}, base({}), {"test": "jest --ci"},
                                {"jest": {"testEnvironment": "node"}})
    mutate(root)
    c0, o0 = node_version()
    steps = [Step("Set up Node", c0, o0)]
    if install:
        steps.append(Step("Install", "npm ci", ci_out))
    out, code = run(cmd, cwd=root, env=env(npm_config_cache=NPM_CACHE, NO_COLOR="1"))
    assert code != 0, out
    out = [re.sub(r"/root/\.npm/_logs/", "/home/runner/.npm/_logs/", t) for t in out]
    steps.append(Step(cmd.rsplit(maxsplit=1)[-1].title(), cmd, out, code, causal=causal(out)))
    cleanup(root)
    return steps, "npm", category, "npm " + o0[1]


def _add_dep(root: Path, name: str, ver: str) -> None:
    pkg = json.loads((root / "package.json").read_text())
    pkg.setdefault("dependencies", {})[name] = ver
    (root / "package.json").write_text(json.dumps(pkg, indent=2) + "\n")


@case
def npm_ci_lock_out_of_sync(name: str, shape: str) -> Made:
    def mutate(root: Path) -> None:
        shutil.rmtree(root / "node_modules")
        _add_dep(root, "left-pad", "1.3.0")
    return npm_fail(name, shape, mutate, "npm ci", "dependency",
                    lambda o: grep(o, r"can only install packages when", r"Missing: "))


@case
def npm_missing_script(name: str, shape: str) -> Made:
    return npm_fail(name, shape, lambda r: None, "npm run lint", "config",
                    lambda o: grep(o, r"Missing script: "), install=True)


@case
def npm_notarget(name: str, shape: str) -> Made:
    def mutate(root: Path) -> None:
        shutil.rmtree(root / "node_modules")
        _add_dep(root, "left-pad", "99.0.0")
    return npm_fail(name, shape, mutate, "npm install", "dependency",
                    lambda o: grep(o, r"notarget No matching version", r"^npm error notarget In most cases"))


# --- added in the second round (after the frame learnt `always` steps) --------------------------------------

@case
def jest_coverage_threshold(name: str, shape: str) -> Made:
    extra = {"jest": {"testEnvironment": "node", "collectCoverage": True,
                      "coverageThreshold": {"global": {"lines": 95, "branches": 90}}}}
    files = base({"test/cart.test.js": JEST_CART.replace('  test("rejects negative prices", () => {\n    expect(() => '
                                                         'new Cart().add("bad", -1)).toThrow(RangeError);\n  });\n', "")})
    return npm_case(name, shape, ["jest"], files, {"test": "jest --ci"}, "npm test", "jest", "test",
                    lambda o: grep(o, r"^Jest: Coverage for \w+ .* does not meet", limit=4),
                    ctx=r"^Tests:", extra=extra, post=["ls coverage"])


@case
def jest_each_table(name: str, shape: str) -> Made:
    test = JEST_FORMAT + '''
describe.each([
  ["EUR", 1, "€1.00"],
  ["USD", 2.5, "$2.50"],
  ["GBP", 1234.5, "£1,234.50"],
  ["JPY", 100, "¥100"],
])("formatPrice(%s, %d)", (currency, value, want) => {
  test(`is ${want}`, () => expect(formatPrice(value, currency)).toBe(want));
});
'''
    return jest_case(name, shape, {"test/format.test.js": test}, cmd="npx jest --ci --reporters=default")


@case
def tsc_build_emit(name: str, shape: str) -> Made:
    cfg = json.dumps({"compilerOptions": {"target": "es2022", "module": "nodenext", "strict": True,
                                          "outDir": "dist", "rootDir": "src", "declaration": True}, "include": ["src"]}, indent=2)
    files = {"tsconfig.json": cfg, "src/cart.ts": TS_CART.replace("private discount = 0;", "private discount;")
             .replace("return this;", "return this.items.length;"), "src/main.ts": TS_MAIN}

    def causal(o: list[str]) -> list[int]:
        errs = grep(o, r"error TS\d+:", limit=20)
        return sorted(set(errs + [e + 1 for e in errs if e + 1 < len(o) and o[e + 1].startswith("  ")]))
    return npm_case(name, shape, ["typescript"], files, {"build": "tsc -p .", "lint": "tsc --noEmit -p ."},
                    "npm run build", "tsc", "build", causal, ctx=r"^Found \d+ error", post=["ls -R dist"])


@case
def eslint_warnings_one_error(name: str, shape: str) -> Made:
    return eslint_case(name, shape, {"src/cart.js": CART.replace("  total() {", "  total() {\n    console.log(\"total\");")
                                     .replace("  summary() {", "  summary() {\n    console.log(\"summary\");\n"
                                              "    if (this.items.length = 0) return null;")})


@case
def mocha_uncaught_async(name: str, shape: str) -> Made:
    test = MOCHA_CART.replace('describe("Cart", () => {', '''describe("Cart", () => {
  it("saves asynchronously", (done) => {
    const cart = new Cart().add("tea", 1);
    setTimeout(() => {
      const saved = JSON.parse(cart.toJSON());
      assert.equal(saved.items.length, 1);
      done();
    }, 5);
  });
''')
    return mocha_case(name, shape, {"test/cart.test.js": test})


@case
def vitest_inline_snapshot(name: str, shape: str) -> Made:
    test = VITEST_TEST.replace('''  it("adds", () => {''', '''  it("renders a receipt", () => {
    const cart = new Cart("EUR").add("tea", 2.5).add("cake", 3.25);
    expect(cart.summary()).toMatchInlineSnapshot(`
      {
        "count": 2,
        "total": "€5.75",
      }
    `);
  });
  it("adds", () => {''')
    files = base({"test/cart.test.js": None, "test/format.test.js": None, "test/cart.test.mjs": test,
                  "src/cart.js": CART.replace("count: this.items.length", "count: this.items.length, items: "
                                              "this.items.map((i) => i.name)")})
    return npm_case(name, shape, ["vitest"], files, {"test": "vitest run"}, "npm test", "vitest", "test",
                    vitest_causal, ctx=r"Tests\s+\d+ failed", post=["npm ls --depth=0"])



# --- third round: more tools of the ecosystem ----------------------------------------------------------------

CSS = """:root {
  --brand: #1a73e8;
}

.cart {
  display: grid;
  gap: 8px;
}

.cart__total {
  font-weight: 600;
  color: var(--brand);
}
"""


@case
def stylelint_css(name: str, shape: str) -> Made:
    bad = CSS.replace("  gap: 8px;\n", "  gap: 8px;\n  display: flex;\n").replace("color: var(--brand);",
                                                                            "color: #1a73e;") + ".empty {}\n"
    files = base({"src/styles/cart.css": bad, ".stylelintrc.json": '{"extends": "stylelint-config-standard"}\n'})

    def causal(o: list[str]) -> list[int]:
        idx: list[int] = []
        header = -1
        for i, t in enumerate(o):
            if re.match(r"^\S+\.css$", t.strip()):
                header = i
            elif re.match(r"^\s+\d+:\d+\s+✖", t):
                idx += [header, i]
        return sorted(set(x for x in idx if x >= 0))
    return npm_case(name, shape, ["stylelint", "stylelint-config-standard"], files,
                    {"lint:css": "stylelint \"src/**/*.css\""}, "npm run lint:css", "stylelint", "lint", causal,
                    ctx=r"✖ \d+ problems?")


@case
def sass_undefined_variable(name: str, shape: str) -> Made:
    scss = """@use "sass:color";

$brand: #1a73e8;

.cart {
  display: grid;

  &__total {
    font-weight: 600;
    color: $brand-dark;
  }
}
"""
    files = base({"src/styles/main.scss": scss})

    def causal(o: list[str]) -> list[int]:
        e = grep(o, r"^Error: ")
        near = [i for x in e for i in range(x + 1, min(len(o), x + 8))]
        return sorted(set(e + [i for i in near if re.match(r"^\s*\d+ │", o[i]) or "^" in o[i] or
                               re.search(r"\.scss \d+:\d+", o[i])]))
    return npm_case(name, shape, ["sass"], files, {"build:css": "sass src/styles/main.scss dist/main.css"},
                    "npm run build:css", "sass", "build", causal)


@case
def commitlint_message(name: str, shape: str) -> Made:
    files = base({"commitlint.config.mjs": 'export default { extends: ["@commitlint/config-conventional"] };\n'})
    return npm_case(name, shape, ["@commitlint/cli", "@commitlint/config-conventional"], files, {},
                    "echo 'Fixed the discount rounding.' | npx commitlint", "commitlint", "lint",
                    lambda o: grep(o, r"^✖\s+\S.*\[[a-z-]+\]$", r"^⧗\s+input:", limit=5),
                    ctx=r"found \d+ problems")


def _pm_project(name: str, shape: str) -> Path:
    from kit import project as mk
    pkg = {"name": name, "version": "1.2.0", "private": True, "dependencies": {"left-pad": "1.3.0"}}
    return mk(name, shape, {"package.json": json.dumps(pkg, indent=2) + "\n", "index.js": "module.exports = 1;\n"})


def _pm_case(name: str, shape: str, tool: str, lock_cmd: str, cmd: str,
             causal: Callable[[list[str]], list[int]]) -> Made:
    root = _pm_project(name, shape)
    e = {"npm_config_cache": NPM_CACHE, "YARN_CACHE_FOLDER": str(Path(NPM_CACHE).parent / ".yarn-cache"),
         "NO_COLOR": "1", "FORCE_COLOR": "0"}
    o, c = run(lock_cmd, cwd=root, env=env(**e))
    assert c == 0, o
    shutil.rmtree(root / "node_modules", ignore_errors=True)
    pkg = json.loads((root / "package.json").read_text())
    pkg["dependencies"]["is-number"] = "7.0.0"
    (root / "package.json").write_text(json.dumps(pkg, indent=2) + "\n")
    c0, o0 = node_version()
    steps = [Step("Set up Node", c0, o0)]
    v, _ = run(f"{tool} --version", cwd=root, env=env(**e))
    steps.append(Step(f"Set up {tool}", f"{tool} --version", v))
    out, code = run(cmd, cwd=root, env=env(**e))
    assert code != 0, out
    steps.append(Step("Install", cmd, out, code, causal=causal(out)))
    cleanup(root)
    return steps, tool, "dependency", f"{tool} {v[0].strip()}"


@case
def yarn_frozen_lockfile(name: str, shape: str) -> Made:
    return _pm_case(name, shape, "yarn", "yarn install --non-interactive", "yarn install --frozen-lockfile",
                    lambda o: grep(o, r"lockfile needs to be updated"))


@case
def pnpm_outdated_lockfile(name: str, shape: str) -> Made:
    return _pm_case(name, shape, "pnpm", "pnpm install --no-frozen-lockfile", "pnpm install --frozen-lockfile",
                    lambda o: grep(o, r"ERR_PNPM_OUTDATED_LOCKFILE", r"specifiers in the lockfile|is-number",
                                   limit=2))


def write(cname: str, fn: Callable[[str, str], Made], shape: str, n: int) -> tuple[str, Path]:
    steps, tool, category, made = fn(cname, shape)
    folder = write_case("javascript", cname, steps, shape, tool=tool, category=category, seed=100 + n,
                        made_by=f"{tool} ({made}, node {steps[0].output[0]}) on a small generated project "
                                f"(make/javascript/make.py:{fn.__name__}), run here; shape by make/shapes.py",
                        job="test" if category == "test" else "ci")
    return f"{cname} {shape} {tool} {category}", folder


def main(argv: list[str]) -> int:
    return make_all(CASES, argv, shape_from=3, write=write)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
