"""Several jobs in one file: does only the failing job's evidence count?

    python bench/eval_jobs.py                 # each corpus log after another ecosystem's failing log
    python bench/eval_jobs.py --before 3 -v   # after three other logs

A downloaded run log, a GitLab or Jenkins multi-stage log or logs concatenated by hand hold several jobs; the one
diagnosed is the last that failed. For each case of the corpus (bench/corpus/cases), the file here is `--before`
failing logs of other ecosystems (taken in turn from the corpus), then the case's own log; its labels are shifted to
where its log begins. Reported beside the case alone: hit, precision/recall of `error_lines`, category accuracy,
and how many chosen lines fall in the earlier jobs (`leaked`: evidence from another job).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from eval import prf  # noqa: E402
from eval_corpus import Case, load_corpus  # noqa: E402

from repopilot.ci.engine import default_scanner, diagnose_input  # noqa: E402
from repopilot.ci.sources import open_sources  # noqa: E402


def _score(path: Path, case: Case, offset: int) -> dict[str, Any]:
    d = diagnose_input(open_sources(str(path))[0], scanner=default_scanner()).diagnosis
    pred = set(d.error_lines)
    truth = {n + offset for n in case.causal}
    p, r, _ = prf(pred, truth)
    return {"hit": float(bool(pred & truth)), "p": p, "r": r, "cat": float(d.category == case.category),
            "leaked": float(any(n <= offset for n in pred))}


def run(cases: list[Case], before: int, verbose: bool) -> tuple[dict[str, float], dict[str, float]]:
    alone: list[dict[str, Any]] = []
    joined: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "jobs.log"
        for i, case in enumerate(cases):
            # Earlier jobs: the nearest preceding cases of other ecosystems (a different tool, a different failure).
            others = [c for c in cases[:i][::-1] + cases[i + 1:][::-1] if c.ecosystem != case.ecosystem][:before]
            head = b"".join(_whole(c.path.read_bytes()) for c in others)
            path.write_bytes(head + case.path.read_bytes())
            offset = head.count(b"\n")
            alone.append(_score(case.path, case, 0))
            joined.append(_score(path, case, offset))
            if verbose and (joined[-1]["cat"] < alone[-1]["cat"] or joined[-1]["hit"] < alone[-1]["hit"]
                            or joined[-1]["leaked"]):
                print(f"  {case.name}: alone hit {alone[-1]['hit']:.0f} cat {alone[-1]['cat']:.0f}; after "
                      f"{len(others)} jobs hit {joined[-1]['hit']:.0f} cat {joined[-1]['cat']:.0f} "
                      f"leaked {joined[-1]['leaked']:.0f}")
    return _mean(alone), _mean(joined)


def _whole(data: bytes) -> bytes:
    return data if data.endswith(b"\n") else data + b"\n"


def _mean(rows: list[dict[str, Any]]) -> dict[str, float]:
    return {k: round(sum(r[k] for r in rows) / len(rows), 3) for k in rows[0]} if rows else {}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=str(ROOT / "bench" / "corpus" / "cases"))
    ap.add_argument("--before", type=int, default=1, help="other jobs' logs before each case (default 1)")
    ap.add_argument("--verbose", "-v", action="store_true")
    args = ap.parse_args(argv)
    cases = load_corpus(Path(args.corpus))
    alone, joined = run(cases, args.before, args.verbose)
    print(f"{len(cases)} logs, each alone and after {args.before} other failing job(s)")
    print(f"  {'':<22}{'hit':>7}{'prec':>7}{'recall':>8}{'category':>10}{'leaked':>8}")
    for title, s in (("alone", alone), (f"after {args.before} job(s)", joined)):
        print(f"  {title:<22}{s['hit']:>7.3f}{s['p']:>7.3f}{s['r']:>8.3f}{s['cat']:>10.3f}{s['leaked']:>8.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
