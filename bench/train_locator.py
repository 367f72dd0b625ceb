"""Train the locator's weights offline and write them into the package.

    pip install -e '.[bench]'            # numpy and scikit-learn: training only, never needed at run time
    python bench/train_locator.py        # cross-validate, then train on everything and write the weights
    python bench/train_locator.py --no-write --cidiff   # also train on CiDiff; only print the figures

Every labelled log is scanned once with the bundled catalog; its candidate lines (repopilot.ci.locator.candidates)
get their features and a label (a causal line of the case, or not; context lines are left out of training).
The model is a logistic regression on standardised features; the threshold (and how far blocks grow) is the one
that gives the best mean per-log F1 plus hit rate on the training logs. Cross-validation groups logs by project,
so one project is never in both training and test, and the headline figure leaves one ecosystem out at a time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402
from eval_corpus import Case, load_cidiff, load_corpus  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from repopilot.ci.catalog import load_catalog  # noqa: E402
from repopilot.ci.diagnosis import failing_region  # noqa: E402
from repopilot.ci.locator import (  # noqa: E402
    FEATURES,
    LocatorModel,
    candidates,
    detect_shape,
    extend_picked,
    feature_rows,
    find_end,
)
from repopilot.ci.scanner import Scanner  # noqa: E402

EXTEND = (1.0, 0.7, 0.5)  # candidate block-growth floors, as shares of the threshold
WEIGHTS = ROOT / "repopilot" / "ci" / "locator_weights.json"


@dataclass
class Sample:
    case: Case
    lines: list[int]
    x: np.ndarray
    y: np.ndarray
    missed: int  # causal lines that are not candidates (no model can find them)


_CACHE: dict[str, Sample] = {}
_SCANNER: list[Scanner] = []


def extract(case: Case) -> Sample:
    key = str(case.path)
    if key in _CACHE:
        return _CACHE[key]
    if not _SCANNER:
        _SCANNER.append(Scanner(load_catalog()))
    with case.path.open("rb") as fh:
        res = _SCANNER[0].scan(fh)
    texts = candidates(res)
    region = failing_region(res)
    end = find_end(texts, res.lines, region[1] if region else None)
    rows = feature_rows(texts, end=end, shape=detect_shape(texts.values()), step_start=region[0] if region else None)
    lines = [n for n in sorted(rows) if n not in case.context or n in case.causal]
    x = np.array([[rows[n].get(f, 0.0) for f in FEATURES] for n in lines], dtype=float).reshape(-1, len(FEATURES))
    y = np.array([1.0 if n in case.causal else 0.0 for n in lines])
    sample = Sample(case, lines, x, y, len(case.causal - set(rows)))
    _CACHE[key] = sample
    return sample


def fit(samples: list[Sample], c: float = 0.3) -> LocatorModel:
    x = np.vstack([s.x for s in samples])
    y = np.concatenate([s.y for s in samples])
    # Each log weighs the same, however many candidates it has.
    w = np.concatenate([np.full(len(s.y), 1.0 / max(1, len(s.y))) for s in samples]) * len(samples)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    clf = LogisticRegression(C=c, max_iter=2000)
    clf.fit((x - mean) / scale, y, sample_weight=w)
    model = LocatorModel(features=FEATURES, coef=tuple(round(float(v), 5) for v in clf.coef_[0]),
                         bias=round(float(clf.intercept_[0]), 5), mean=tuple(round(float(v), 5) for v in mean),
                         scale=tuple(round(float(v), 5) for v in scale))
    best = max((objective(samples, model, t, e), t, e) for t in np.arange(0.2, 0.91, 0.05) for e in EXTEND)
    return LocatorModel(**{**model.__dict__, "threshold": round(float(best[1]), 2), "extend": float(best[2])})


def probabilities(sample: Sample, model: LocatorModel) -> np.ndarray:
    z = model.bias + ((sample.x - np.array(model.mean)) / np.array(model.scale)) @ np.array(model.coef)
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


def chosen(sample: Sample, model: LocatorModel, threshold: float | None = None,
           extend: float | None = None) -> set[int]:
    """What locate() picks, on precomputed features."""
    t = model.threshold if threshold is None else threshold
    p = probabilities(sample, model)
    picked = [(float(pi), n) for pi, n in zip(p, sample.lines, strict=True) if pi >= t]
    if not picked and len(p):
        i = int(np.argmax(p))
        picked = [(float(p[i]), sample.lines[i])]
    picked = sorted(picked, key=lambda q: (-q[0], -q[1]))[:model.max_lines]
    prob = {n: float(pi) for pi, n in zip(p, sample.lines, strict=True)}
    return extend_picked({n for _, n in picked}, prob, t * (model.extend if extend is None else extend))


def case_scores(sample: Sample, pred: set[int]) -> tuple[float, float, float, float]:
    truth = sample.case.causal
    tp = len(pred & truth)
    if not pred or not truth:
        return 0.0, 0.0, 0.0, 0.0
    p, r = tp / len(pred), tp / len(truth)
    return p, r, (2 * p * r / (p + r) if tp else 0.0), float(tp > 0)


def objective(samples: list[Sample], model: LocatorModel, t: float, e: float = 1.0) -> float:
    """Mean per-log F1 plus the hit rate: a diagnosis without one right line helps nobody, however precise."""
    scores = [case_scores(s, chosen(s, model, t, e)) for s in samples]
    return statistics.mean(sc[2] + sc[3] for sc in scores)


def report(title: str, pairs: list[tuple[Sample, set[int]]]) -> dict[str, float]:
    scores = [case_scores(s, pred) for s, pred in pairs]
    out = {k: round(statistics.mean(v[i] for v in scores), 3) for i, k in enumerate(("p", "r", "f1", "hit"))}
    ceiling = statistics.mean(1.0 if s.missed < len(s.case.causal) else 0.0 for s, _ in pairs)
    print(f"{title:<44} logs {len(pairs):>4}  hit {out['hit']:.3f}  P {out['p']:.3f}  R {out['r']:.3f}  "
          f"F1 {out['f1']:.3f}  (candidate hit ceiling {ceiling:.3f})")
    return out


def grouped_cv(samples: list[Sample], key: str, folds: int | None = None) -> list[tuple[Sample, set[int]]]:
    groups = sorted({getattr(s.case, key) for s in samples})
    buckets = [groups[i::folds] for i in range(folds)] if folds is not None else [[g] for g in groups]
    out = []
    for bucket in buckets:
        test = [s for s in samples if getattr(s.case, key) in bucket]
        train = [s for s in samples if getattr(s.case, key) not in bucket]
        if not test or not train:
            continue
        model = fit(train)
        out += [(s, chosen(s, model)) for s in test]
    return out


_EVAL_CACHE: dict[frozenset[str], LocatorModel] = {}


def train_for_eval(cases: list[Case]) -> LocatorModel | None:
    """The locator trained on `cases` only (bench/eval_corpus.py's leave-one-ecosystem-out); None with fewer than
    5 labelled logs to train on."""
    labelled = [c for c in cases if c.causal]
    if len(labelled) < 5:
        return None
    key = frozenset(c.name for c in labelled)
    if key not in _EVAL_CACHE:
        _EVAL_CACHE[key] = fit([extract(c) for c in labelled])
    return _EVAL_CACHE[key]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=str(ROOT / "bench" / "corpus" / "cases"))
    ap.add_argument("--cidiff", nargs="?", const="/work/shared/datasets/cidiff", default=None,
                    help="also train on CiDiff (a folder; default /work/shared/datasets/cidiff)")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--out", default=str(WEIGHTS))
    args = ap.parse_args(argv)
    cases = load_corpus(Path(args.corpus)) if Path(args.corpus).is_dir() else []
    if args.cidiff:
        cases += load_cidiff(Path(args.cidiff))
    cases = [c for c in cases if c.causal]
    if len(cases) < 5:
        print("train_locator: fewer than 5 labelled logs", file=sys.stderr)
        return 2
    samples = [extract(c) for c in cases]
    print(f"{len(samples)} logs, {sum(len(s.y) for s in samples)} candidate lines, "
          f"{int(sum(s.y.sum() for s in samples))} causal among them, "
          f"{sum(s.missed for s in samples)} causal lines not candidates")
    report("cross-validated by project (10 folds)", grouped_cv(samples, "project", 10))
    loeo = grouped_cv(samples, "ecosystem")
    report("leave one ecosystem out", loeo)
    model = fit(samples)
    report("trained and scored on all (optimistic)", [(s, chosen(s, model)) for s in samples])
    info: dict[str, Any] = {"logs": len(samples), "ecosystems": len({c.ecosystem for c in cases}),
                            "trained_by": "bench/train_locator.py"}
    model = LocatorModel(**{**model.__dict__, "info": info})
    top = sorted(zip(model.features, model.coef, strict=True), key=lambda fc: -abs(fc[1]))[:12]
    print("threshold", model.threshold, "; strongest weights:", ", ".join(f"{f} {c:+.2f}" for f, c in top))
    if not args.no_write:
        Path(args.out).write_text(json.dumps(model.to_dict(), indent=1) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
