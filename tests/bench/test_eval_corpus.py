"""The corpus bench scores what it says: hits, line precision/recall, category accuracy and calibration, per
ecosystem, and a leave-one-ecosystem-out run that really removes the ecosystem's rules."""

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PYTEST_LOG = """\
============================= test session starts ==============================
collected 12 items

tests/test_io.py .....F......                                            [100%]

=================================== FAILURES ===================================
________________________________ test_roundtrip ________________________________

    def test_roundtrip():
>       assert load(dump({"a": 1})) == {"a": 2}
E       AssertionError

tests/test_io.py:7: AssertionError
=========================== short test summary info ============================
FAILED tests/test_io.py::test_roundtrip - AssertionError
========================= 1 failed, 11 passed in 0.05s =========================
"""


def _bench():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(ROOT / "bench"))
    spec = importlib.util.spec_from_file_location("eval_corpus", ROOT / "bench" / "eval_corpus.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["eval_corpus"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def _case(root: Path, eco: str, name: str, log: str, category: str, causal: list[str]) -> None:
    d = root / eco / name
    d.mkdir(parents=True)
    (d / "fail.log").write_text(log)
    spans = ", ".join(f'"{s}"' for s in causal)
    (d / "label.toml").write_text(
        f'tool = "t"\necosystem = "{eco}"\nshape = "plain"\ncategory = "{category}"\ncausal = [{spans}]\n'
        f'source = "generated"\nmade_by = "make/{eco}/{name}"\nlicence = "Apache-2.0"\n')


def test_scores_a_small_corpus_and_leaves_each_ecosystem_out(tmp_path: Path) -> None:
    bench = _bench()
    corpus = tmp_path / "cases"
    _case(corpus, "python", "pytest", PYTEST_LOG, "test", ["7", "10-11", "13", "15"])
    _case(corpus, "python", "wrongcat", PYTEST_LOG, "lint", ["15"])
    out = tmp_path / "out.json"
    assert bench.main(["--corpus", str(corpus), "--no-cidiff", "--loeo", "--shipped-locator", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    s = report["corpus"]["summary"]
    assert s["cases"] == 2
    assert s["repopilot"]["hit"] == 1.0
    assert s["category_accuracy"] == 0.5  # one label says lint: the test diagnosis is wrong there
    assert s["confusion"] == {"lint": {"test": 1}, "test": {"test": 1}}
    assert sum(b["cases"] for b in s["calibration"]) == 2
    assert set(report["corpus"]["ecosystems"]) == {"python"}
    # Held out, no python rule may fire.
    assert all(not (r["top_rule"] or "").startswith("pytest.") for r in report["corpus_loeo"]["cases"])


def test_catalog_without_an_ecosystem_drops_its_file_and_its_rules() -> None:
    bench = _bench()
    rules = bench.catalog_without("python").rules
    assert rules and all(r.ecosystem != "python" and not r.source.endswith("python.toml") for r in rules)
    assert not [r for r in bench.catalog_without("cpp").rules if r.source.endswith("cpp.toml")]
