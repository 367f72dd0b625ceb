"""More tools no rule knows, and Windows line endings: Scheme (Guile, SRFI-64), Forth (Gforth), COBOL (GnuCOBOL),
x86 assembly (NASM), LaTeX (ChkTeX), XML Schema (xmllint), HTML (HTML Tidy), C# (Mono's mcs), Vala (valac),
Common Lisp (SBCL), AVA and Less (npm), REUSE and mdformat (PyPI).

Each case runs the real tool here on a small project with one injected fault and labels it from that knowledge
(GUIDELINE.md). Nothing the tools print is edited; the CI frame comes from make/shapes.py. Cases named `*-crlf`
are written with CRLF line endings, as a log downloaded from a Windows runner is: the same real output, its frame
and lines joined by `\\r\\n` instead of `\\n` (line numbers and labels are unchanged: a `\\r` does not start a line).

    python3 bench/corpus/make/more/make.py --tools      # once: apt + venv + npm tools (below)
    python3 bench/corpus/make/more/make.py [CASE...]    # (re)write the cases; all when none is named

Tools: Debian 12 (`apt-get install guile-3.0 gforth gnucobol3 nasm chktex libxml2-utils tidy mono-mcs valac sbcl`),
PyPI (reuse, mdformat in a venv under `$CORPUS_WORK`, default `/tmp/corpus-m`), npm (ava@6, less@4).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("CORPUS_WORK", "/tmp/corpus-m")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from kit import WORK, cleanup, grep, project  # noqa: E402
from maker import make_all  # noqa: E402
from record import write_case  # noqa: E402

# The wide generator's helpers (steps_for, block): loaded from its file, its own cases left alone.
_spec = importlib.util.spec_from_file_location("wide_make", HERE.parent / "wide" / "make.py")
assert _spec is not None and _spec.loader is not None
wide = importlib.util.module_from_spec(_spec)
_prev = os.environ["CORPUS_WORK"]
_spec.loader.exec_module(wide)
os.environ["CORPUS_WORK"] = _prev
steps_for, block, ver = wide.steps_for, wide.block, wide.ver

APT_TOOLS = ["guile-3.0", "gforth", "gnucobol3", "nasm", "chktex", "libxml2-utils", "tidy", "mono-mcs", "valac",
             "sbcl"]
PIP_TOOLS = ["reuse", "mdformat"]
NPM_TOOLS = ["ava@6", "less@4"]
TOOLS = WORK / "tools" / "bin"
NODE_BIN = WORK / "node" / "node_modules" / ".bin"

Made = tuple[str, list, str, str, str]  # ecosystem, steps, tool, category, versions
CASES: dict[str, Callable[[str, str], Made]] = {}
CRLF = {"guile-srfi64-failure-crlf", "mcs-compile-error-crlf", "sbcl-assertion-crlf", "xmllint-schema-crlf",
        "ava-assertion-crlf"}


def case(*names: str) -> Callable[[Callable[[str, str], Made]], Callable[[str, str], Made]]:
    def add(fn: Callable[[str, str], Made]) -> Callable[[str, str], Made]:
        for n in names or (fn.__name__.replace("_", "-"),):
            CASES[n] = fn
        return fn
    return add


def tools() -> None:
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *APT_TOOLS], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(WORK / "tools")], check=True)
    subprocess.run([str(TOOLS / "python"), "-m", "pip", "install", "-q", *PIP_TOOLS], check=True)
    (WORK / "node").mkdir(parents=True, exist_ok=True)
    (WORK / "node" / "package.json").write_text('{"name": "t", "version": "1.0.0", "private": true}\n')
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", *NPM_TOOLS], cwd=WORK / "node", check=True)


def first(cmd: str) -> str:
    return ver(cmd).splitlines()[0][:80]


# --- Scheme (Guile, SRFI-64) -------------------------------------------------------------------------------------

SCM_LIB = """(define-module (cart)
  #:export (cart-total cart-count))
(define (cart-total prices) (apply + prices))
(define (cart-count prices) (length prices))
"""
SCM_TEST = """(add-to-load-path (string-append (dirname (current-filename)) "/../src"))
(use-modules (srfi srfi-64) (cart))
(test-begin "cart")
(test-equal "total of two items" 7 (cart-total '(3 4)))
(test-equal "count of an empty cart" 0 (cart-count '()))
(test-equal "total of an empty cart" 0 (cart-total '()))
(define failed (test-runner-fail-count (test-runner-current)))
(test-end "cart")
(exit (if (zero? failed) 0 1))
"""


@case("guile-srfi64-failure", "guile-srfi64-failure-crlf")
def guile_srfi64_failure(name: str, shape: str) -> Made:
    root = project(name, shape, {"src/cart.scm": SCM_LIB.replace("(apply + prices)", "(apply + 1 prices)"),
                                 "tests/cart-test.scm": SCM_TEST})
    steps = steps_for(root, [("Guile version", "guile --version | head -n 1")], "Run tests",
                      "guile --no-auto-compile tests/cart-test.scm", lambda o: grep(o, r": FAIL "))
    cleanup(root)
    return "scheme", steps, "srfi-64", "test", first("guile --version")


@case()
def guile_test_read_error(name: str, shape: str) -> Made:
    test = SCM_TEST.replace("(cart-count '()))", "(cart-count '())")
    root = project(name, shape, {"src/cart.scm": SCM_LIB, "tests/cart-test.scm": test})
    steps = steps_for(root, [("Guile version", "guile --version | head -n 1")], "Run tests",
                      "guile --no-auto-compile tests/cart-test.scm",
                      lambda o: grep(o, r"unexpected end of input|missing close paren"))
    cleanup(root)
    return "scheme", steps, "guile", "test", first("guile --version")


# --- Forth (Gforth) ----------------------------------------------------------------------------------------------

@case()
def gforth_failed_assertion(name: str, shape: str) -> Made:
    lib = ": clamp ( n lo hi -- n' ) rot min max ;\n: percent ( part whole -- n ) 100 swap */ ;\n"
    test = ("require ../src/util.fs\n: test-clamp  assert( 15 0 10 clamp 10 = ) ;\n"
            ": test-percent  assert( 1 4 percent 20 = ) ;\ntest-clamp test-percent\n.\" all tests passed\" cr\nbye\n")
    root = project(name, shape, {"src/util.fs": lib, "tests/util-test.fs": test})
    steps = steps_for(root, [("Gforth version", "gforth --version 2>&1")], "Run tests",
                      "cd tests && gforth util-test.fs",
                      lambda o: grep(o, r"failed assertion", r"assertion failed", r">>>test-percent<<<"))
    cleanup(root)
    return "forth", steps, "gforth", "test", first("gforth --version 2>&1")


# --- COBOL (GnuCOBOL) --------------------------------------------------------------------------------------------

COBOL = """       IDENTIFICATION DIVISION.
       PROGRAM-ID. PAYROLL.
       DATA DIVISION.
       WORKING-STORAGE SECTION.
       01 WS-HOURS    PIC 9(3)   VALUE 40.
       01 WS-RATE     PIC 9(3)V99 VALUE 21.50.
       01 WS-GROSS    PIC 9(5)V99 VALUE 0.
       PROCEDURE DIVISION.
           COMPUTE WS-GROSS = WS-HOURS * WS-RATE.
           DISPLAY "GROSS: " WS-GROSS.
           STOP RUN.
"""


@case()
def cobc_undefined_name(name: str, shape: str) -> Made:
    src = COBOL.replace("COMPUTE WS-GROSS = WS-HOURS * WS-RATE.", "COMPUTE WS-GROSS = WS-HOURS * WS-RATES.\n"
                        "           ADD 1 TO WS-OVERTIME.")
    root = project(name, shape, {"src/payroll.cob": src})
    steps = steps_for(root, [("GnuCOBOL version", "cobc --version | head -n 1")], "Build",
                      "mkdir -p build && cobc -x -o build/payroll src/payroll.cob",
                      lambda o: grep(o, r"error: "))
    cleanup(root)
    return "cobol", steps, "cobc", "build", first("cobc --version")


# --- x86 assembly (NASM) -----------------------------------------------------------------------------------------

@case()
def nasm_syntax_error(name: str, shape: str) -> Made:
    asm = ("section .data\n    msg db 'boot ok', 10\n    len equ $ - msg\nsection .text\nglobal _start\n"
           "_start:\n    mov rax, 1\n    mov rdi, 1\n    mov rsi, [msg\n    mov rdx, len\n    syscall\n"
           "    mov rax, 60\n    xor rdi, rdi\n    syscall\n")
    root = project(name, shape, {"src/boot.asm": asm, "Makefile": "build/boot.o: src/boot.asm\n\tmkdir -p build\n"
                                 "\tnasm -f elf64 -o $@ $<\n"})
    steps = steps_for(root, [("NASM version", "nasm -v")], "Build", "make", lambda o: grep(o, r"boot\.asm:\d+: error"))
    cleanup(root)
    return "asm", steps, "nasm", "build", first("nasm -v")


# --- LaTeX (ChkTeX) ----------------------------------------------------------------------------------------------

TEX = r"""\documentclass{article}
\begin{document}
\section{Results}
The method converges quickly , as Table~\ref{tab:runs} shows.
See Figure \ref{fig:loss} for the loss curve.
All runs finished...
\end{document}
"""


@case()
def chktex_warnings(name: str, shape: str) -> Made:
    root = project(name, shape, {"paper/main.tex": TEX})

    def causal(o: list[str]) -> list[int]:
        out = []
        for i in grep(o, r"^Warning \d+ in \S+ line \d+:"):
            out += [i, i + 1, i + 2]  # the finding, the source line, the caret under it
        return out

    steps = steps_for(root, [("ChkTeX version", "chktex --version | head -n 1")], "Lint LaTeX",
                      "chktex -q -n1 paper/main.tex", causal)
    cleanup(root)
    return "latex", steps, "chktex", "lint", first("chktex --version")


# --- XML Schema (xmllint) ----------------------------------------------------------------------------------------

XSD = """<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:element name="catalog">
    <xs:complexType><xs:sequence>
      <xs:element name="book" maxOccurs="unbounded">
        <xs:complexType><xs:sequence>
          <xs:element name="title" type="xs:string"/>
          <xs:element name="price" type="xs:decimal"/>
        </xs:sequence><xs:attribute name="id" type="xs:ID" use="required"/></xs:complexType>
      </xs:element>
    </xs:sequence></xs:complexType>
  </xs:element>
</xs:schema>
"""
XML = """<?xml version="1.0"?>
<catalog>
  <book id="b1"><title>Dune</title><price>9.99</price></book>
  <book id="b2"><title>Emma</title><price>about 5</price></book>
  <book><title>Ulysses</title><price>12.50</price></book>
</catalog>
"""


@case("xmllint-schema", "xmllint-schema-crlf")
def xmllint_schema(name: str, shape: str) -> Made:
    root = project(name, shape, {"schema/catalog.xsd": XSD, "data/catalog.xml": XML})
    steps = steps_for(root, [("xmllint version", "xmllint --version 2>&1 | head -n 1")], "Validate data",
                      "xmllint --noout --schema schema/catalog.xsd data/catalog.xml",
                      lambda o: grep(o, r"Schemas validity error"))
    cleanup(root)
    return "xml", steps, "xmllint", "lint", first("xmllint --version 2>&1")


# --- HTML (HTML Tidy) --------------------------------------------------------------------------------------------

@case()
def tidy_html_errors(name: str, shape: str) -> Made:
    html = ('<!DOCTYPE html>\n<html lang="en">\n<head><title>Docs</title></head>\n<body>\n'
            '<p>Welcome <b>to the <i>docs</b></i></p>\n<img src="logo.png">\n<a href="/guide">Guide\n'
            '<table><tr><td>x</td></tr></tabel>\n</body>\n</html>\n')
    root = project(name, shape, {"site/index.html": html})
    steps = steps_for(root, [("Tidy version", "tidy -v")], "Check HTML", "tidy -q -e site/index.html",
                      lambda o: grep(o, r"^line \d+ column \d+ - (?:Error|Warning)", limit=20))
    cleanup(root)
    return "html", steps, "tidy", "lint", first("tidy -v")


# --- C# (Mono mcs) -----------------------------------------------------------------------------------------------

CS = """using System;
using System.Linq;

namespace Shop
{
    public class Cart
    {
        public int Total(int[] prices) => prices.Sum();

        public decimal Average(int[] prices)
        {
            return prices.Length == 0 ? 0 : (decimal)Total(prices) / prices.Length;
        }

        public static void Main()
        {
            Console.WriteLine(new Cart().Average(new[] { 3, 4 }));
        }
    }
}
"""


@case("mcs-compile-error", "mcs-compile-error-crlf")
def mcs_compile_error(name: str, shape: str) -> Made:
    src = CS.replace("(decimal)Total(prices)", "(decimal)Totl(prices)").replace(
        "Console.WriteLine(new Cart()", "string avg = new Cart().Average(new[] { 1 });\n            "
        "Console.WriteLine(new Cart()")
    root = project(name, shape, {"src/Cart.cs": src})
    steps = steps_for(root, [("Mono version", "mono --version | head -n 1")], "Build",
                      "mkdir -p bin && mcs -out:bin/Cart.exe src/Cart.cs", lambda o: grep(o, r": error CS\d+"))
    cleanup(root)
    return "dotnet", steps, "mcs", "build", first("mcs --version")


# --- Vala (valac) ------------------------------------------------------------------------------------------------

@case()
def valac_type_error(name: str, shape: str) -> Made:
    src = ('int add (int a, int b) {\n    return a + b;\n}\n\nvoid main () {\n    string total = add (2, 3);\n'
           '    print ("%s\\n", total);\n}\n')
    root = project(name, shape, {"src/main.vala": src})

    def causal(o: list[str]) -> list[int]:
        out = []
        for i in grep(o, r"\.vala:[\d.-]+: error:"):
            out += [i, i + 1, i + 2]  # the message, the source line, the caret
        return out

    steps = steps_for(root, [("valac version", "valac --version")], "Build",
                      "valac src/main.vala -o build/main", causal)
    cleanup(root)
    return "vala", steps, "valac", "build", first("valac --version")


# --- Common Lisp (SBCL) ------------------------------------------------------------------------------------------

@case("sbcl-assertion", "sbcl-assertion-crlf")
def sbcl_assertion(name: str, shape: str) -> Made:
    lib = "(defun cart-total (prices) (reduce #'+ prices :initial-value 1))\n"
    test = ('(load (merge-pathnames "../src/cart.lisp" *load-truename*))\n'
            "(assert (= (cart-total '(3 4)) 7))\n(format t \"all tests passed~%\")\n")
    root = project(name, shape, {"src/cart.lisp": lib, "tests/cart-test.lisp": test})

    def causal(o: list[str]) -> list[int]:
        return grep(o, r"^Unhandled SIMPLE-ERROR", r"^\s+The assertion .* failed with", r"cart-test\.lisp\"\)\)$")

    steps = steps_for(root, [("SBCL version", "sbcl --version")], "Run tests",
                      "sbcl --script tests/cart-test.lisp", causal)
    cleanup(root)
    return "lisp", steps, "sbcl", "test", first("sbcl --version")


@case()
def sbcl_undefined_function(name: str, shape: str) -> Made:
    lib = "(defun cart-total (prices) (reduce #'+ prices))\n"
    test = ('(load (merge-pathnames "../src/cart.lisp" *load-truename*))\n'
            "(unless (= (cart-sum '(3 4)) 7) (format t \"FAIL cart-sum~%\") (sb-ext:exit :code 1))\n")
    root = project(name, shape, {"src/cart.lisp": lib, "tests/cart-test.lisp": test})
    steps = steps_for(root, [("SBCL version", "sbcl --version")], "Run tests",
                      "sbcl --script tests/cart-test.lisp",
                      lambda o: grep(o, r"^Unhandled UNDEFINED-FUNCTION", r"The function .* is undefined"))
    cleanup(root)
    return "lisp", steps, "sbcl", "test", first("sbcl --version")


# --- npm: AVA, Less ----------------------------------------------------------------------------------------------

def node_env() -> dict[str, str]:
    return {"PATH": f"{NODE_BIN}:/usr/local/bin:/usr/bin:/bin", "NODE_PATH": str(WORK / "node" / "node_modules"),
            "FORCE_COLOR": "0"}


@case("ava-assertion", "ava-assertion-crlf")
def ava_assertion(name: str, shape: str) -> Made:
    lib = "export const total = (prices) => prices.reduce((a, b) => a + b, 1);\n"
    test = ("import test from 'ava';\nimport {total} from '../src/cart.js';\n\n"
            "test('total of two items', t => {\n\tt.is(total([3, 4]), 7);\n});\n\n"
            "test('total of none', t => {\n\tt.is(total([]), 0);\n});\n")
    root = project(name, shape, {"src/cart.js": lib, "test/cart.test.js": test,
                                 "package.json": '{"name": "cart", "version": "1.0.0", "type": "module"}\n'})
    (root / "node_modules").symlink_to(WORK / "node" / "node_modules")

    def causal(o: list[str]) -> list[int]:
        out = grep(o, r"^\s+✘ \[fail\]: ", limit=5)
        for i in grep(o, r"^\s+total of (?:two items|none)$", limit=5):
            out.append(i)  # the failing test's heading over its details
            out += [k for k in range(i, min(i + 12, len(o))) if re.search(r"cart\.test\.js:\d+|Difference|^\s+[-+] \d", o[k])]
        return out

    steps = steps_for(root, [("Node version", "node --version")], "Run tests", "ava", causal, env_extra=node_env())
    cleanup(root)
    return "javascript", steps, "ava", "test", "ava " + first(f"{NODE_BIN}/ava --version")


@case()
def lessc_undefined_variable(name: str, shape: str) -> Made:
    less = ("@brand: #0b5fff;\n@gap: 8px;\n\n.button {\n  color: @brand;\n  padding: @gap (@gap * 2);\n"
            "  border: 1px solid @brand-dark;\n}\n")
    root = project(name, shape, {"styles/site.less": less})
    steps = steps_for(root, [("Less version", "lessc --version")], "Build styles",
                      "mkdir -p dist && lessc styles/site.less dist/site.css",
                      lambda o: grep(o, r"NameError: variable @brand-dark is undefined", r"^7 +border: "),
                      env_extra=node_env())
    cleanup(root)
    return "css", steps, "lessc", "build", first(f"{NODE_BIN}/lessc --version")


# --- PyPI: REUSE, mdformat ---------------------------------------------------------------------------------------

def py_env() -> dict[str, str]:
    return {"PATH": f"{TOOLS}:/usr/local/bin:/usr/bin:/bin"}


@case()
def reuse_lint_missing_licence(name: str, shape: str) -> Made:
    header = "# SPDX-FileCopyrightText: 2026 Ada Example <ada@example.org>\n# SPDX-License-Identifier: MIT\n"
    root = project(name, shape, {"src/cart.py": header + "def total(p):\n    return sum(p)\n",
                                 "src/tax.py": "def vat(x):\n    return x * 0.2\n",
                                 "LICENSES/MIT.txt": "MIT License\n\nCopyright (c) 2026 Ada Example\n"})
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    steps = steps_for(root, [("REUSE version", "reuse --version")], "Licence check", "reuse lint",
                      lambda o: grep(o, r"^The following files have no copyright", r"^\* src/tax\.py$"),
                      env_extra=py_env())
    cleanup(root)
    return "licence", steps, "reuse", "lint", first(f"{TOOLS}/reuse --version")


@case()
def mdformat_check(name: str, shape: str) -> Made:
    md = "Cart\n====\n\n* add items\n* remove items\n\nSee [the guide](docs/guide.md).\n"
    root = project(name, shape, {"README.md": md, "docs/guide.md": "# Guide\n\n- one\n- two\n"})
    steps = steps_for(root, [("mdformat version", "mdformat --version")], "Check Markdown format",
                      "mdformat --check README.md docs/guide.md",
                      lambda o: grep(o, r"README\.md"), env_extra=py_env())
    cleanup(root)
    return "markdown", steps, "mdformat", "lint", first(f"{TOOLS}/mdformat --version")


def write(cname: str, fn: Callable[[str, str], Made], shape: str, n: int) -> tuple[str, Path]:
    eco, steps, tool, category, made = fn(cname, shape)
    crlf = cname in CRLF
    folder = write_case(eco, cname, steps, shape, tool=tool, category=category, seed=1300 + n, job="ci",
                        made_by=f"{made} on a small generated project (make/more/make.py:{fn.__name__}), "
                                "run here; shape by make/shapes.py"
                                + ("; written with CRLF line endings (as downloaded from a Windows "
                                   "runner)" if crlf else ""))
    if crlf:
        log = folder / "fail.log"
        log.write_bytes(log.read_bytes().replace(b"\n", b"\r\n"))
    return f"{eco}/{cname} {shape} {tool} {category}", folder


def main(argv: list[str]) -> int:
    if argv[:1] == ["--tools"]:
        tools()
        return 0
    return make_all(CASES, argv, shape_from=0, write=write)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
