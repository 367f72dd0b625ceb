"""Azure Pipelines cases: cases of the compiled/JVM half (`make/<folder>/gen.py`) made again in the `azure` shape,
under their own names (`azure-<case>`), so the corpus holds the sixth CI log shape with real tool output.

    python bench/corpus/make/azure/make.py [CASE ...]     # CASE as `go/test-subtest-errorf`; all when none is named

The shape is outside the five the generators rotate over (make/shapes.py `SHAPES`): adding it re-shaped nothing.
Each case's maker is the original one, run here again with the real tools; only its name and frame differ.
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

import gen  # noqa: E402  (the registry the generators fill)

SHAPE = "azure"
# Across ecosystems and categories: tests, compile errors, a linter, a docs check.
CASES = ("go/test-subtest-errorf", "go/vet-printf", "cpp/gcc-undeclared", "cpp/ld-undefined-reference",
         "rust/test-assert-eq", "rust/e0308-mismatched", "java/surefire-assert-equals",
         "java/mvn-cannot-find-symbol", "java/javadoc-doclint")


def _load(folder: str) -> None:
    spec = importlib.util.spec_from_file_location(f"gen_{folder}", HERE / folder / "gen.py")
    assert spec and spec.loader
    spec.loader.exec_module(importlib.util.module_from_spec(spec))


def _say_how(eco: str, name: str) -> None:
    """The label's `made_by` names this script as well as the original maker (`make/<eco>/gen.py:azure-<name>`
    names no function of that generator)."""
    from record import CASES as OUT

    label = OUT / eco / f"azure-{name}" / "label.toml"
    text = label.read_text()
    label.write_text(text.replace("; shape by make/shapes.py", f"; made by make/azure/make.py with the maker of {name}"
                                  "; shape by make/shapes.py"))


def main(argv: list[str]) -> int:
    sys.modules.setdefault("gen", gen)
    wanted = argv or list(CASES)
    for folder in sorted({w.split("/")[0] for w in wanted}):
        _load(folder)
    makers = {f"{eco}/{name}": fn for eco, items in gen.REGISTRY.items() for name, fn in items}
    bad = 0
    for want in wanted:
        try:
            eco, name = want.split("/")
            makers[want](f"azure-{name}", SHAPE)
            _say_how(eco, name)
            print("wrote", want)
        except Exception:  # one broken case must not stop the others; say which and go on
            bad += 1
            print(f"!! {want}:\n{traceback.format_exc()}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
