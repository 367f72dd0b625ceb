"""Score the diagnosis per corpus and per ecosystem, beside baselines, and leave one ecosystem out.

    python bench/eval_corpus.py                      # the corpus (bench/corpus/cases) and CiDiff when found
    python bench/eval_corpus.py --loeo               # also leave-one-ecosystem-out on the corpus
    python bench/eval_corpus.py --corpus DIR --cidiff DIR --json bench/out/eval_corpus.json -v

Corpora: the development corpus (`cases/<ecosystem>/<case>/{fail.log,label.toml}`, see bench/corpus/README.md)
and CiDiff (`index.tsv`, `groundtruth` counted like Java's readLine; mapped onto `\\n` lines as bench/eval.py
does). Per case: hit (a causal line among `error_lines`), precision/recall/F1 of `error_lines` against the causal
lines (context lines count as wrong when predicted), the excerpt's recall of the causal lines and its tokens, and
(where labelled) the category, right or wrong, with the confidence the diagnosis gave it. Reported per corpus and
per ecosystem, with a confusion matrix and calibration (share right per confidence band). Baselines beside it: a
keyword grep over the whole log and the last 50 lines.

Leave-one-ecosystem-out (`--loeo`): for each ecosystem of the corpus, its logs are diagnosed with its rule file
(the bundled file of that stem) and every rule naming that ecosystem removed from the catalog, and with a locator
trained without that ecosystem's logs (bench/train_locator.py), all at once.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from eval import grep_lines, prf, read_truth, tail_lines  # noqa: E402

from repopilot.ci.catalog import Catalog, load_catalog  # noqa: E402
from repopilot.ci.engine import Result, diagnose_input  # noqa: E402
from repopilot.ci.scanner import Scanner  # noqa: E402
from repopilot.ci.sources import open_sources  # noqa: E402

CATEGORIES = ("test", "build", "typecheck", "lint", "dependency", "infrastructure", "network", "config", "unknown")
BANDS = ((0.0, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.85), (0.85, 1.01))


@dataclass
class Case:
    corpus: str
    name: str
    path: Path  # the fail.log
    ecosystem: str
    project: str  # cross-validation groups: never one project in both training and test
    causal: set[int]
    context: set[int] = field(default_factory=set)
    category: str | None = None  # None: not labelled (CiDiff)
    tool: str = ""
    shape: str = ""


def _spans(values: Iterable[Any]) -> set[int]:
    out: set[int] = set()
    for v in values:
        a, _, b = str(v).partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


# `make/python/make.py:pytest_parametrize` -> python/pytest_parametrize: the small project a case was made from
# (the same project rendered in several shapes is one group).
_PROJECT = re.compile(r"\bmake/(?P<eco>[\w.+-]+)/(?P<proj>[\w.+-]+)(?::(?P<func>[\w.+-]+))?")


def load_corpus(root: Path) -> list[Case]:
    """The development corpus: one case per `<ecosystem>/<case>` folder with a label."""
    cases = []
    for lab in sorted(root.glob("*/*/label.toml")):
        d = lab.parent
        label = tomllib.loads(lab.read_text())
        m = _PROJECT.search(str(label.get("made_by", "")))
        project = f"{m.group('eco')}/{m.group('func') or m.group('proj')}" if m else f"{d.parent.name}/{d.name}"
        cases.append(Case("corpus", f"{d.parent.name}/{d.name}", d / "fail.log", label["ecosystem"], project,
                          _spans(label["causal"]), _spans(label.get("context", [])), label["category"],
                          label.get("tool", ""), label.get("shape", "")))
    return cases


def load_cidiff(root: Path) -> list[Case]:
    """CiDiff: Java builds on Jenkins, and GitHub Actions runs of two workflows; no category labels."""
    cases = []
    index = root / "index.tsv"
    for row in index.read_text().splitlines()[1:]:
        name, ci = row.split("\t")[:2]
        d = root / name
        data = (d / "fail.log").read_bytes()
        e, c = read_truth(d, data)
        base = Path(name).name
        project = re.sub(r"_\d+$", "", base) if "breakages_dump" not in name else Path(name).parent.name
        cases.append(Case("cidiff", name, d / "fail.log", "java" if ci == "Jenkins" else "github-actions", project,
                          e, c, None, "", "jenkins" if ci == "Jenkins" else "github"))
    return cases


def confidence_of(res: Result) -> float:
    """The one confidence the diagnosis gives its category."""
    value = getattr(res.diagnosis, "confidence", None)
    if value is not None:
        return float(value)
    top = res.diagnosis.failures[0] if res.diagnosis.failures else None
    return max(0.0, min(1.0, top.score)) if top is not None and res.diagnosis.decided_by == "rules" else 0.0


def score_case(case: Case, scanner: Scanner, budget: int, locator: Any = None) -> dict[str, Any]:
    data = case.path.read_bytes()
    log = open_sources(str(case.path))[0]
    kwargs: dict[str, Any] = {"token_budget": budget, "scanner": scanner}
    if locator is not None:
        kwargs["locator"] = locator
    res = diagnose_input(log, **kwargs)
    pred = set(res.diagnosis.error_lines)
    shown = {n for a, b in res.excerpt.ranges for n in range(a, b + 1)}
    e = case.causal
    row: dict[str, Any] = {"corpus": case.corpus, "ecosystem": case.ecosystem, "shape": case.shape,
                           "tool": case.tool}
    for key, lines in (("rp", pred), ("grep", grep_lines(data)), ("tail", tail_lines(data))):
        p, r, f = prf(lines, e)
        row.update({f"{key}_p": p, f"{key}_r": r, f"{key}_f1": f, f"{key}_hit": float(bool(lines & e))})
    row["ex_recall"] = len(e & shown) / len(e) if e else 1.0
    row["ex_tokens"] = res.excerpt.tokens
    row["ex_hit"] = float(bool(e & shown))
    row["predicted"] = res.diagnosis.category
    row["confidence"] = round(confidence_of(res), 3)
    row["decided_by"] = res.diagnosis.decided_by
    row["top_rule"] = res.diagnosis.failures[0].rule if res.diagnosis.failures else None
    if case.category is not None:
        row["category"] = case.category
        row["correct"] = float(res.diagnosis.category == case.category)
    return row


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def mean(key: str) -> float:
        return round(statistics.mean(r[key] for r in rows), 3)

    out: dict[str, Any] = {"cases": len(rows)}
    for key, label in (("rp", "repopilot"), ("grep", "keyword_grep"), ("tail", "last_50_lines")):
        out[label] = {k: mean(f"{key}_{k}") for k in ("hit", "p", "r", "f1")}
    out["excerpt"] = {"recall": mean("ex_recall"), "hit": mean("ex_hit"),
                      "tokens_median": statistics.median(r["ex_tokens"] for r in rows),
                      "tokens_max": max(r["ex_tokens"] for r in rows)}
    labelled = [r for r in rows if "category" in r]
    if labelled:
        out["category_accuracy"] = round(statistics.mean(r["correct"] for r in labelled), 3)
        out["confusion"] = confusion(labelled)
        out["calibration"] = calibration(labelled)
    return out


def confusion(rows: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for r in rows:
        table[r["category"]][r["predicted"]] += 1
    return {k: dict(v) for k, v in sorted(table.items())}


def calibration(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for lo, hi in BANDS:
        band = [r for r in rows if lo <= r["confidence"] < hi]
        if band:
            out.append({"band": f"{lo:.2f}-{min(hi, 1.0):.2f}", "cases": len(band),
                        "correct": round(statistics.mean(r["correct"] for r in band), 3),
                        "mean_confidence": round(statistics.mean(r["confidence"] for r in band), 3)})
    return out


def by_key(rows: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[r[key]].append(r)
    return {k: summarize(v) for k, v in sorted(groups.items())}


def catalog_without(ecosystem: str) -> Catalog:
    """The bundled catalog without the ecosystem's rule file and without any rule naming the ecosystem."""
    full = load_catalog(exclude=[ecosystem])
    return Catalog(version=full.version, rules=tuple(r for r in full.rules if r.ecosystem != ecosystem))


def run(cases: list[Case], scanner_for: Callable[[Case], Scanner], budget: int,
        locator_for: Callable[[Case], Any], verbose: bool) -> list[dict[str, Any]]:
    rows = []
    for case in cases:
        row = score_case(case, scanner_for(case), budget, locator_for(case))
        row["name"] = case.name
        rows.append(row)
        if verbose:
            cat = f"{row['predicted']}/{row.get('category', '-')}"
            print(f"  {row['rp_p']:.2f} {row['rp_r']:.2f} {row['rp_f1']:.2f} hit={row['rp_hit']:.0f} "
                  f"ex={row['ex_recall']:.2f}/{row['ex_tokens']:>4} {cat:<24} {row['confidence']:.2f} "
                  f"{row['top_rule'] or '-':<28} {case.corpus}:{case.name}")
    return rows


def loeo(cases: list[Case], budget: int, train: Callable[[list[Case]], Any] | None,
         verbose: bool) -> list[dict[str, Any]]:
    rows = []
    for eco in sorted({c.ecosystem for c in cases}):
        held = [c for c in cases if c.ecosystem == eco]
        scanner = Scanner(catalog_without(eco))
        locator = train([c for c in cases if c.ecosystem != eco]) if train is not None else None
        if verbose:
            print(f" held out {eco}: {len(held)} logs, {len(scanner.catalog.rules)} rules left")
        rows += run(held, lambda _c, s=scanner: s, budget, lambda _c, lo=locator: lo, verbose)
    return rows


def print_summary(title: str, s: dict[str, Any]) -> None:
    ex = s["excerpt"]
    cat = f", category {s['category_accuracy']:.3f}" if "category_accuracy" in s else ""
    print(f"{title}: {s['cases']} logs")
    print(f"  {'method':<14}{'hit':>7}{'prec':>7}{'recall':>8}{'F1':>7}")
    for label in ("repopilot", "keyword_grep", "last_50_lines"):
        m = s[label]
        print(f"  {label:<14}{m['hit']:>7.3f}{m['p']:>7.3f}{m['r']:>8.3f}{m['f1']:>7.3f}")
    print(f"  excerpt recall {ex['recall']:.3f} (hit {ex['hit']:.3f}), tokens median {ex['tokens_median']}, "
          f"max {ex['tokens_max']}{cat}")
    for band in s.get("calibration", []):
        print(f"  confidence {band['band']}: {band['cases']:>4} logs, {band['correct']:.3f} right "
              f"(mean confidence {band['mean_confidence']:.3f})")


def print_ecosystems(per: dict[str, dict[str, Any]]) -> None:
    print(f"  {'ecosystem':<16}{'logs':>5}{'hit':>7}{'F1':>7}{'ex.rec':>8}{'tokens':>8}{'cat':>7}{'grep hit':>9}")
    for eco, s in per.items():
        cat = f"{s['category_accuracy']:>7.3f}" if "category_accuracy" in s else f"{'-':>7}"
        print(f"  {eco:<16}{s['cases']:>5}{s['repopilot']['hit']:>7.3f}{s['repopilot']['f1']:>7.3f}"
              f"{s['excerpt']['recall']:>8.3f}{s['excerpt']['tokens_median']:>8}{cat}"
              f"{s['keyword_grep']['hit']:>9.3f}")


def print_confusion(conf: dict[str, dict[str, int]]) -> None:
    cols = [c for c in CATEGORIES if any(c in row for row in conf.values())]
    print("  labelled \\ predicted " + "".join(f"{c[:6]:>7}" for c in cols))
    for truth, row in conf.items():
        print(f"  {truth:<21}" + "".join(f"{row.get(c, 0):>7}" for c in cols))


def _default_cidiff() -> Path | None:
    for p in (ROOT.parent / "shared" / "datasets" / "cidiff", Path("/work/shared/datasets/cidiff")):
        if (p / "index.tsv").is_file():
            return p
    return None


def _trainer() -> Callable[[list[Case]], Any] | None:
    try:
        from train_locator import train_for_eval
    except ImportError:
        return None
    return train_for_eval  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=str(ROOT / "bench" / "corpus" / "cases"))
    ap.add_argument("--cidiff", default=None, help="CiDiff folder (default: ../shared/datasets/cidiff if found)")
    ap.add_argument("--no-cidiff", action="store_true")
    ap.add_argument("--loeo", action="store_true", help="also leave one ecosystem out (rules and locator)")
    ap.add_argument("--shipped-locator", action="store_true",
                    help="with --loeo: hold out only the rules, keep the shipped locator weights (no bench extra)")
    ap.add_argument("--budget", type=int, default=1500)
    ap.add_argument("--json", default=str(ROOT / "bench" / "out" / "eval_corpus.json"))
    ap.add_argument("--verbose", "-v", action="store_true")
    args = ap.parse_args(argv)
    trainer = _trainer() if args.loeo and not args.shipped_locator else None
    if args.loeo and trainer is None and not args.shipped_locator:
        # Without numpy and scikit-learn the shipped weights, trained on every ecosystem, would be used: the
        # held-out figure would not be one. Refuse rather than print it under that name.
        print("--loeo needs the bench extra to retrain the locator without each held-out ecosystem: "
              "pip install -e '.[bench]' (or --shipped-locator: rules held out, the shipped weights kept)",
              file=sys.stderr)
        return 2
    started = time.perf_counter()
    corpus = load_corpus(Path(args.corpus)) if Path(args.corpus).is_dir() else []
    cidiff_dir = Path(args.cidiff) if args.cidiff else _default_cidiff()
    cidiff = [] if args.no_cidiff or cidiff_dir is None else load_cidiff(cidiff_dir)
    if not corpus and not cidiff:
        print(f"eval_corpus: no cases in {args.corpus} and no CiDiff", file=sys.stderr)
        return 2
    full = Scanner(load_catalog())
    report: dict[str, Any] = {}
    for label, cases in (("corpus", corpus), ("cidiff", cidiff)):
        if not cases:
            continue
        rows = run(cases, lambda _c: full, args.budget, lambda _c: None, args.verbose)
        report[label] = {"summary": summarize(rows), "ecosystems": by_key(rows, "ecosystem"),
                         "shapes": by_key(rows, "shape"), "cases": rows}
        print_summary(label, report[label]["summary"])
        print_ecosystems(report[label]["ecosystems"])
        if "confusion" in report[label]["summary"]:
            print_confusion(report[label]["summary"]["confusion"])
    if args.loeo and corpus:
        rows = loeo(corpus, args.budget, trainer, args.verbose)
        report["corpus_loeo"] = {"summary": summarize(rows), "ecosystems": by_key(rows, "ecosystem"), "cases": rows}
        held = ("its rules held out, the shipped locator" if trainer is None
                else "its rules and locator training held out")
        print_summary(f"corpus, leave one ecosystem out ({held})",
                      report["corpus_loeo"]["summary"])
        print_ecosystems(report["corpus_loeo"]["ecosystems"])
        print_confusion(report["corpus_loeo"]["summary"]["confusion"])
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1))
    print(f"done in {time.perf_counter() - started:.1f}s; details in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
