"""Attribution against recorded run histories (issue 12): every scenario of tests/fixtures/github/fake_runs.py
(re-runs that pass, base-branch failures, infrastructure faults, genuine new failures, runs without a base,
unreadable base logs, mixtures in one run) is served by a loopback fake of the GitHub REST API and its run URL
diagnosed; every identifying failure must get the expected label, with evidence (a run URL or a history row)
unless the label is "not enough evidence". Reports correct labels and API calls per run; then each run URL is
diagnosed a second time, as a new process would (the same state and caches), and its API calls reported: how many
were answered 304 Not Modified (GitHub does not count those against the rate limit; ci/api_cache.py) and how many
the rate limit counts.

    python bench/attribution_bench.py [-v] [--json bench/out/attribution.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fixtures.github.fake_runs import check_labels, diagnose_repeatedly, scenarios  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = []
    labels: Counter[str] = Counter()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="attribution-bench-") as tmp:
        for n, scenario in enumerate(scenarios()):
            (reports, calls, _), (second, again, free) = diagnose_repeatedly(scenario, Path(tmp) / str(n), times=2)
            problems = check_labels(scenario, reports)
            problems += [f"diagnosed again: {p}" for p in check_labels(scenario, second)]  # the cache changes none
            failures = [f for r in reports for f in r.identifying_failures()]
            labels.update(f.attribution.label for f in failures if f.attribution)
            rows.append({"scenario": scenario.name, "correct": not problems, "problems": problems,
                         "failures": len(failures), "api_calls": calls, "again_calls": again,
                         "again_not_modified": free})
            if args.verbose or problems:
                print(f"{'ok ' if not problems else 'BAD'} {scenario.name}: {calls} API calls; again {again} "
                      f"({free} not modified)"
                      + "".join(f"\n    {p}" for p in problems), file=sys.stderr)
    right = sum(r["correct"] for r in rows)
    calls = [r["api_calls"] for r in rows]
    print(f"{len(rows)} run histories, {sum(r['failures'] for r in rows)} failures "
          f"({', '.join(f'{k} {v}' for k, v in sorted(labels.items()))}): {right}/{len(rows)} runs labelled "
          f"correctly with evidence ({right / len(rows):.0%}); API calls per run: median "
          f"{statistics.median(calls):g}, max {max(calls)}; {time.perf_counter() - started:.1f} s")
    again = [r["again_calls"] for r in rows]
    counted = [r["again_calls"] - r["again_not_modified"] for r in rows]
    print(f"diagnosed again (a new process, the same caches): API calls per run median {statistics.median(again):g}, "
          f"max {max(again)}; of them counted by the rate limit (not 304 Not Modified) median "
          f"{statistics.median(counted):g}, max {max(counted)}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0 if right == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
