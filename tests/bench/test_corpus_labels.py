"""The development corpus in bench/corpus is only worth its figures if every label is well-formed."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "bench" / "corpus"


def _check_module():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("corpus_check", CORPUS / "check.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_case_is_labelled_by_the_guideline() -> None:
    check = _check_module()
    cases = sorted(p for p in (CORPUS / "cases").glob("*/*") if p.is_dir())
    assert [msg for case in cases for msg in check.problems(case)] == []


def test_the_checker_catches_a_span_outside_the_log(tmp_path: Path) -> None:
    check = _check_module()
    case = tmp_path / "python" / "bad"
    case.mkdir(parents=True)
    (case / "fail.log").write_text("one\ntwo\n")
    (case / "label.toml").write_text(
        'tool = "pytest"\necosystem = "python"\nshape = "plain"\ncategory = "test"\ncausal = ["9"]\n'
        'source = "generated"\nmade_by = "x"\nlicence = "Apache-2.0"\n'
    )
    assert any("outside" in msg for msg in check.problems(case))
    (case / "label.toml").write_text((case / "label.toml").read_text().replace('"test"', '"tests"'))
    assert any("category" in msg for msg in check.problems(case))
