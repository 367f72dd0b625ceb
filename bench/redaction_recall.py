"""Redaction: recall on a seeded set of real-format secrets, false positives and speed on real logs.

    python bench/redaction_recall.py [EXTRA_LOG_DIR ...]      e.g. /work/shared/datasets/cidiff

Recall: the 44 fake but format-valid credentials of tests/secret_samples.py, each in the line it is typically
leaked in, redacted by the default rules (gitleaks' vendored set plus RepoPilot's); a sample counts as caught
when neither the secret nor a long middle part of it remains. (tests/telemetry/test_secret_recall.py asserts the
same through every output: stdout, trace, `runs show`, HTML, OTLP, Markdown.)

False positives: every line of the real logs in examples/, tests/ci/rule_logs and the directories given is
redacted; these logs hold no credentials, so every redaction counts as a false positive. Reported per rule, with
examples, and the time per MB.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from repopilot.core import Redactor  # noqa: E402
from tests.secret_samples import ENV_SECRET, samples  # noqa: E402


def recall() -> tuple[int, int, list[str]]:
    redactor = Redactor([ENV_SECRET])
    missed = []
    items = samples()
    for name, line, secret in items:
        out = redactor.text(line)
        if secret in out or (len(secret) > 24 and secret[8:-8] in out):
            missed.append(name)
    return len(items) - len(missed), len(items), missed


def false_positives(dirs: list[Path]) -> None:
    rules = Redactor().rules
    files = [p for d in dirs for p in sorted(d.rglob("*")) if p.is_file() and p.suffix in (".log", ".txt", "")]
    lines = hit_lines = 0
    size = 0
    per_rule: Counter[str] = Counter()
    examples: dict[str, str] = {}
    started = time.perf_counter()
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        size += len(text)
        for line in text.splitlines():
            lines += 1
            hits = list(rules.hits(line))
            if hits:
                hit_lines += 1
                for rule_id, (a, b) in hits:
                    per_rule[rule_id] += 1
                    examples.setdefault(rule_id, f"{path.name}: …{line[max(0, a - 30): b + 10]}…")
    took = time.perf_counter() - started
    print(f"false positives on {len(files)} real logs ({size / 1e6:.1f} MB, {lines} lines): "
          f"{hit_lines} lines redacted ({hit_lines / max(lines, 1) * 100:.3f}%), "
          f"{took / max(size / 1e6, 1e-9):.2f} s per MB line by line")
    for rule_id, count in per_rule.most_common():
        print(f"  {rule_id:40s} {count:6d}   e.g. {examples[rule_id][:110]!r}")


def main() -> int:
    caught, total, missed = recall()
    print(f"recall on the seeded set: {caught}/{total} = {caught / total:.1%}" + (f"  missed: {missed}" if missed
                                                                                 else ""))
    dirs = [ROOT / "examples", ROOT / "tests" / "ci" / "rule_logs"] + [Path(a) for a in sys.argv[1:]]
    false_positives([d for d in dirs if d.is_dir()])
    return 0 if caught == total else 1


if __name__ == "__main__":
    sys.exit(main())
