"""Run the generators of the compiled/JVM/native half of the corpus: `python bench/corpus/make/gen.py [ECO ...] [-k NAME]`.

Each `make/<folder>/gen.py` registers cases of one ecosystem or a few (`native`: fortran, pascal, d, nim;
`beam`: erlang, elixir) with `@case`; every case builds a small failing project,
runs the real tools here and writes `cases/<ecosystem>/<name>/`. Shapes rotate over the five per ecosystem.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ws import SHAPES  # noqa: E402

REGISTRY: dict[str, list[tuple[str, Callable[[str, str], None]]]] = {}


def case(ecosystem: str) -> Callable[[Callable[[str, str], None]], Callable[[str, str], None]]:
    """Register a case maker `fn(name, shape)`; the case is named after the function (dashes for underscores)."""
    def wrap(fn: Callable[[str, str], None]) -> Callable[[str, str], None]:
        REGISTRY.setdefault(ecosystem, []).append((fn.__name__.replace("_", "-"), fn))
        return fn
    return wrap


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("ecosystems", nargs="*")
    ap.add_argument("-k", default="", help="only cases whose name contains this")
    args = ap.parse_args()
    sys.modules.setdefault("gen", sys.modules[__name__])
    for folder in sorted(p.name for p in HERE.iterdir() if (p / "gen.py").is_file()):
        spec = importlib.util.spec_from_file_location(f"gen_{folder}", HERE / folder / "gen.py")
        assert spec and spec.loader
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    bad = 0
    for eco in args.ecosystems or sorted(REGISTRY):
        for i, (name, fn) in enumerate(REGISTRY.get(eco, [])):
            if args.k and args.k not in name:
                continue
            try:
                fn(name, SHAPES[(i + len(eco)) % len(SHAPES)])
            except Exception:  # one broken case must not stop the others; say which and go on
                bad += 1
                print(f"!! {eco}/{name}:\n{traceback.format_exc()}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
