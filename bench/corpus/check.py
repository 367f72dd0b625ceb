"""Validate the corpus: every case has a log and a label whose fields, category and spans are right.

    python bench/corpus/check.py [CORPUS_DIR]      # exit 1 and one line per problem when any label is wrong
"""

from __future__ import annotations

import sys
import tomllib
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
CATEGORIES = {"test", "build", "typecheck", "lint", "dependency", "infrastructure", "network", "config", "unknown"}
SHAPES = {"github", "gitlab", "travis", "jenkins", "plain", "azure"}
REQUIRED = ("tool", "ecosystem", "shape", "category", "causal", "source", "made_by", "licence")


def spans(values: list[str]) -> set[int]:
    out: set[int] = set()
    for v in values:
        a, _, b = str(v).partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def problems(case: Path) -> list[str]:
    log, lab = case / "fail.log", case / "label.toml"
    if not log.is_file() or not lab.is_file():
        return [f"{case}: needs fail.log and label.toml"]
    label = tomllib.loads(lab.read_text())
    out = [f"{case}: missing {k}" for k in REQUIRED if k not in label]
    if out:
        return out
    n = log.read_bytes().count(b"\n") + 1
    if label["category"] not in CATEGORIES:
        out.append(f"{case}: category {label['category']!r}")
    if label["shape"] not in SHAPES:
        out.append(f"{case}: shape {label['shape']!r}")
    if label["ecosystem"] != case.parent.name:
        out.append(f"{case}: ecosystem {label['ecosystem']!r} but folder {case.parent.name!r}")
    causal = spans(label["causal"])
    if not causal and label["category"] != "unknown":
        out.append(f"{case}: no causal lines")
    if any(not 1 <= i <= n for i in causal | spans(label.get("context", []))):
        out.append(f"{case}: a span is outside the file's {n} lines")
    if label["source"] == "public" and not label.get("url"):
        out.append(f"{case}: a public log needs its url")
    return out


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "cases"
    cases = sorted(p for p in root.glob("*/*") if p.is_dir())
    found = [msg for case in cases for msg in problems(case)]
    for msg in found:
        print(msg)
    labels = [tomllib.loads((c / "label.toml").read_text()) for c in cases if (c / "label.toml").is_file()]
    shapes = dict(Counter(lab["shape"] for lab in labels))
    print(f"{len(cases)} cases, {len({lab['tool'] for lab in labels})} tools, "
          f"{len({lab['ecosystem'] for lab in labels})} ecosystems; shapes {shapes}; "
          f"categories {dict(Counter(lab['category'] for lab in labels))}; {len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
