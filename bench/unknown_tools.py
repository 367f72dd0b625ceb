"""What `diagnose` says about logs of tools that no rule knows: the locator's and the category decision's
showing on output no rule was written for (issue 9's "five logs of tools that no rule knows").

    python bench/unknown_tools.py            # the listed corpus cases, with the bundled catalog
    python bench/unknown_tools.py --all      # every corpus case no bundled rule fires on

Each listed case is checked to be unknown to every rule (no rule fires causally on it); a case a new rule comes
to know is reported as such, so the list stays honest. Per case: the category and confidence with who decided,
the chosen error lines beside the labelled causal lines, and whether they meet.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from eval_corpus import Case, load_corpus  # noqa: E402

from repopilot.ci.catalog import load_catalog  # noqa: E402
from repopilot.ci.engine import Result, diagnose_input  # noqa: E402
from repopilot.ci.scanner import Scanner  # noqa: E402
from repopilot.ci.sources import open_sources  # noqa: E402

# Tools with no rule file and no rule: test runners, compilers and an infrastructure-as-code tool.
CASES = (
    "r/r-testthat-failure",
    "prolog/plunit-wrong-answer",
    "tcl/tcltest-wrong-result",
    "zig/zig-compile-error",
    "ansible/ansible-missing-collection",
    "protobuf/protoc-import-missing",
    "robot/robot-failed-check",
    "solidity/solc-type-error",
    "lisp/sbcl-assertion",
    "scheme/guile-srfi64-failure-crlf",
    "forth/gforth-failed-assertion",
    "cobol/cobc-undefined-name",
    "vala/valac-type-error",
    "xml/xmllint-schema",
    "latex/chktex-warnings",
    "html/tidy-html-errors",
)


def rule_fired(res: Result) -> str | None:
    return next((f.rule for f in res.diagnosis.failures if f.causal and f.rule not in ("locator",
                                                                                       "github.error-annotation")),
                None)


def show(case: Case, res: Result) -> None:
    d = res.diagnosis
    lines = case.path.read_bytes().split(b"\n")
    hit = set(d.error_lines) & case.causal
    print(f"\n== {case.name} ({case.tool}; labelled {case.category})")
    print(f"   diagnose: category {d.category} (confidence {d.confidence:.2f}, decided by {d.decided_by}); "
          f"{len(d.error_lines)} error lines, {len(hit)} of {len(case.causal)} labelled causal lines among them")
    for n in d.error_lines[:8]:
        mark = "*" if n in case.causal else " "
        text = lines[n - 1].decode("utf-8", "replace").rstrip("\r")[:110] if n <= len(lines) else ""
        print(f"   {mark}{n:>5}: {text}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=str(ROOT / "bench" / "corpus" / "cases"))
    ap.add_argument("--all", action="store_true", help="every case no rule fires on, not only the listed ones")
    args = ap.parse_args(argv)
    cases = {c.name: c for c in load_corpus(Path(args.corpus))}
    scanner = Scanner(load_catalog())
    names = sorted(cases) if args.all else [n for n in CASES if n in cases]
    shown = 0
    for name in names:
        case = cases[name]
        res = diagnose_input(open_sources(str(case.path))[0], scanner=scanner)
        rule = rule_fired(res)
        if rule is not None:
            if not args.all:
                print(f"\n== {name}: a rule knows it now ({rule}); drop it from the list")
            continue
        show(case, res)
        shown += 1
    print(f"\n{shown} logs of tools no rule knows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
