"""Score the diagnosis on a corpus in the cidiff format, beside two baselines, in one run.

    python bench/eval.py [CORPUS] [--json bench/out/eval.json] [--budget 1500] [--with-baseline-log]

CORPUS (default ../shared/datasets/cidiff from the repository root) has `index.tsv` and one folder per case
with `fail.log`, `pass.log` and `groundtruth` (E = error lines, C = context lines). The ground truth counts
lines the way Java's readLine does (`\\r`, `\\n` and `\\r\\n` all end a line); RepoPilot counts `\\n` only, so
the labels are mapped onto `\\n`-lines before scoring.

Per case: precision, recall and F1 of the predicted lines against the E lines (C lines count as wrong when
predicted), a hit when any E line is predicted; for RepoPilot also the excerpt's recall of the E lines and its
tokens. Baselines: `grep -Ei` with the scanner's keywords over the whole log, and the last 50 lines.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from repopilot.ci.engine import default_scanner, diagnose_input  # noqa: E402
from repopilot.ci.excerpt import estimate_tokens  # noqa: E402
from repopilot.ci.lines import clean_text, display_text  # noqa: E402
from repopilot.ci.scanner import KEYWORDS  # noqa: E402
from repopilot.ci.sources import open_sources  # noqa: E402

_EOL = re.compile(rb"\r\n|\r|\n")
_KW = re.compile(KEYWORDS, re.IGNORECASE)


def java_to_nl(data: bytes) -> list[int]:
    """Index i (0-based Java line) -> 1-based `\\n` line number."""
    out = [1]
    nl = 1
    for m in _EOL.finditer(data):
        if b"\n" in m.group():
            nl += 1
        out.append(nl)
    return out


def read_truth(case: Path, data: bytes) -> tuple[set[int], set[int]]:
    mapping = java_to_nl(data)
    e: set[int] = set()
    c: set[int] = set()
    for raw in (case / "groundtruth").read_text().splitlines()[1:]:
        raw = raw.strip()
        if not raw:
            continue
        kind, span = raw.split()
        a, _, b = span.partition("-")
        for j in range(int(a), int(b or a) + 1):
            if 1 <= j <= len(mapping):
                (e if kind == "E" else c).add(mapping[j - 1])
    return e, c


def prf(pred: set[int], truth: set[int]) -> tuple[float, float, float]:
    if not pred or not truth:
        return (0.0, 0.0, 0.0) if truth else (1.0, 1.0, 1.0)
    tp = len(pred & truth)
    p, r = tp / len(pred), tp / len(truth)
    return p, r, (2 * p * r / (p + r) if tp else 0.0)


def grep_lines(data: bytes) -> set[int]:
    return {i for i, raw in enumerate(data.split(b"\n"), 1) if _KW.search(clean_text(raw))}


def tail_lines(data: bytes, n: int = 50) -> set[int]:
    total = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    return set(range(max(1, total - n + 1), total + 1))


def shown_ceiling(data: bytes, e: set[int], budget: int) -> float:
    """The share of the E lines any excerpt could show within `budget`: the cheapest lines first, as the excerpt
    renders them (number gutter, 240 characters at most), without context, headers or fold lines."""
    lines = data.split(b"\n")
    costs = sorted(estimate_tokens(f"{n:>6} | " + display_text(clean_text(lines[n - 1]))[:242]) + 1
                   for n in e if n <= len(lines))
    used = shown = 0
    for c in costs:
        if used + c > budget:
            break
        used += c
        shown += 1
    return shown / len(e) if e else 1.0


def summarize(rows: list[dict[str, float]], prefix: str) -> dict[str, float]:
    keys = ("p", "r", "f1", "hit")
    return {k: round(statistics.mean(r[f"{prefix}_{k}"] for r in rows), 3) for k in keys}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", nargs="?", default=str(ROOT / ".." / "shared" / "datasets" / "cidiff"))
    ap.add_argument("--json", default=str(ROOT / "bench" / "out" / "eval.json"))
    ap.add_argument("--budget", type=int, default=1500, help="excerpt token budget")
    ap.add_argument("--with-baseline-log", action="store_true", help="also pass each case's pass.log as --baseline")
    ap.add_argument("--engine", choices=["hyperscan", "re"], default=None)
    ap.add_argument("--verbose", "-v", action="store_true", help="one line per case")
    args = ap.parse_args(argv)
    corpus = Path(args.corpus)
    index = corpus / "index.tsv"
    if not index.is_file():
        print(f"eval: no index.tsv in {corpus}: CORPUS is the CiDiff data set (77 failing CI logs with hand-labelled "
              "error lines, Apache-2.0) from https://github.com/labri-progress/cidiff (folder data/, commit "
              "3cad9e8), laid out with an index.tsv (one row per case: case, CI, format, spans) and one folder per "
              "case holding fail.log, pass.log and groundtruth; pass its path (default: ../shared/datasets/cidiff "
              "beside this repository). The tests never need it.", file=sys.stderr)
        return 2
    scanner = default_scanner(args.engine)
    rows: list[dict[str, float]] = []
    started = time.perf_counter()
    with index.open() as fh:
        cases = [r["case"] for r in csv.DictReader(fh, delimiter="\t")]
    for name in cases:
        case = corpus / name
        data = (case / "fail.log").read_bytes()
        e, _c = read_truth(case, data)
        log = open_sources(str(case / "fail.log"))[0]
        base = open_sources(str(case / "pass.log"))[0] if args.with_baseline_log else None
        res = diagnose_input(log, baseline=base, token_budget=args.budget, scanner=scanner)
        pred = set(res.diagnosis.error_lines)
        shown = {n for a, b in res.excerpt.ranges for n in range(a, b + 1)}
        row: dict[str, float] = {}
        for key, lines in (("rp", pred), ("grep", grep_lines(data)), ("tail", tail_lines(data))):
            p, r, f = prf(lines, e)
            row.update({f"{key}_p": p, f"{key}_r": r, f"{key}_f1": f, f"{key}_hit": float(bool(lines & e))})
        folded = {n for a, b in res.excerpt.folded for n in range(a, b + 1)}
        row["ex_recall"] = len(e & shown) / len(e) if e else 1.0
        row["ex_recall_shown"] = len(e & (shown - folded)) / len(e) if e else 1.0
        row["ex_shown_ceiling"] = shown_ceiling(data, e, args.budget)
        row["ex_e"] = len(e)
        row["ex_e_covered"] = len(e & shown)
        row["ex_e_shown"] = len(e & (shown - folded))
        row["ex_tokens"] = res.excerpt.tokens
        row["ex_hit"] = float(bool(e & shown))
        rows.append(row)
        if args.verbose:
            top = res.diagnosis.failures[0].rule if res.diagnosis.failures else "-"
            print(f"{row['rp_p']:.2f} {row['rp_r']:.2f} {row['rp_f1']:.2f} ex={row['ex_recall']:.2f}/"
                  f"{res.excerpt.tokens:>4} {res.diagnosis.category:<14} {top:<28} {name}")
    elapsed = time.perf_counter() - started
    summary = {
        "cases": len(rows),
        "repopilot": summarize(rows, "rp"),
        "keyword_grep": summarize(rows, "grep"),
        "last_50_lines": summarize(rows, "tail"),
        "excerpt": {
            "recall_mean": round(statistics.mean(r["ex_recall"] for r in rows), 3),
            "recall_median": round(statistics.median(r["ex_recall"] for r in rows), 3),
            "recall_shown_only_mean": round(statistics.mean(r["ex_recall_shown"] for r in rows), 3),
            "recall_pooled": round(sum(r["ex_e_covered"] for r in rows) / sum(r["ex_e"] for r in rows), 3),
            "recall_shown_only_ceiling_mean": round(statistics.mean(r["ex_shown_ceiling"] for r in rows), 3),
            "recall_shown_only_pooled": round(sum(r["ex_e_shown"] for r in rows) / sum(r["ex_e"] for r in rows), 3),
            "over_budget": sum(1 for r in rows if r["ex_tokens"] > args.budget),
            "tokens_median": statistics.median(r["ex_tokens"] for r in rows),
            "tokens_max": max(r["ex_tokens"] for r in rows),
            "hit": round(statistics.mean(r["ex_hit"] for r in rows), 3),
        },
        "budget": args.budget,
        "with_baseline_log": args.with_baseline_log,
        "engine": scanner.engine.name,
        "seconds": round(elapsed, 2),
    }
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"summary": summary, "cases": dict(zip(cases, rows, strict=True))}, indent=1))
    print(f"{'method':<16}{'precision':>10}{'recall':>8}{'F1':>7}{'hit':>7}")
    for label, key in (("repopilot", "repopilot"), ("keyword grep", "keyword_grep"),
                       ("last 50 lines", "last_50_lines")):
        s = summary[key]
        assert isinstance(s, dict)
        print(f"{label:<16}{s['p']:>10.3f}{s['r']:>8.3f}{s['f1']:>7.3f}{s['hit']:>7.3f}")
    ex = summary["excerpt"]
    print(f"excerpt: recall mean {ex['recall_mean']:.3f}, median {ex['recall_median']:.3f}, pooled "
          f"{ex['recall_pooled']:.3f} (lines shown or folded; shown only: mean {ex['recall_shown_only_mean']:.3f}, "
          f"pooled {ex['recall_shown_only_pooled']:.3f}; at most {ex['recall_shown_only_ceiling_mean']:.3f} could "
          f"be shown within the budget); tokens median {ex['tokens_median']}, max "
          f"{ex['tokens_max']} (budget {args.budget}, {ex['over_budget']} cases over)")
    print(f"{len(rows)} cases in {elapsed:.1f}s, engine {scanner.engine.name}; details in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
