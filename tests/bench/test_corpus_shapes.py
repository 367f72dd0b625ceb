"""bench/corpus/make/shapes.py frames real tool output the way each CI system writes it; the labels it returns must
point at the tool's lines in the rendered log, and the Azure Pipelines frame must read as Azure to the diagnosis."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from repopilot.ci.engine import diagnose_input
from repopilot.ci.sources import open_sources

MAKE = Path(__file__).resolve().parents[2] / "bench" / "corpus" / "make"


def _shapes() -> ModuleType:
    spec = importlib.util.spec_from_file_location("corpus_shapes", MAKE / "shapes.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["corpus_shapes"] = mod  # dataclasses look their module up while the class is made
    spec.loader.exec_module(mod)
    return mod


OUT = ["collected 2 items", "tests/test_io.py F.", "E       assert 1 == 2", "tests/test_io.py:6: AssertionError",
       "1 failed, 1 passed in 0.02s"]


def test_the_rotation_is_the_five_shapes_the_cases_were_made_in() -> None:
    shapes = _shapes()
    assert shapes.SHAPES == ("github", "gitlab", "travis", "jenkins", "plain")
    assert tuple(shapes.ALL_SHAPES) == (*shapes.SHAPES, "azure")


def test_labels_point_at_the_tool_output_in_every_shape() -> None:
    shapes = _shapes()
    for shape in shapes.ALL_SHAPES:
        steps = [shapes.Step("Test", "pytest -q", OUT, 1, causal=[2, 3])]
        text, causal, _ = shapes.render(steps, shape)
        lines = text.split("\n")
        assert [lines[n - 1].endswith(OUT[i]) for n, i in zip(causal, (2, 3), strict=True)] == [True, True], shape


def test_an_azure_job_reads_as_azure_with_its_failing_task(tmp_path: Path) -> None:
    shapes = _shapes()
    steps = [shapes.Step("Install", "pip install -e .", ["Successfully installed calc-0.1"]),
             shapes.Step("Run tests", "pytest -q", OUT, 1, causal=[2]),
             shapes.Step("Skipped after the failure", "make docs", ["never printed"]),
             shapes.Step("Upload report", "ls reports", ["junit.xml"], always=True)]
    text, causal, _ = shapes.render(steps, "azure", job="Linux", seed=3)
    assert "never printed" not in text and "junit.xml" in text
    starts = text.count("##[section]Starting: ")
    # the job, Initialize job, the checkout, three tasks (not the skipped one), the post-job checkout, Finalize Job
    assert starts == text.count("##[section]Finishing: ") == 8
    path = tmp_path / "azure.log"
    path.write_text(text)
    res = diagnose_input(open_sources(str(path))[0])
    step = res.diagnosis.step
    assert step is not None and (step.name, step.exit_code, step.command) == ("Run tests", 1, "pytest -q")
    assert causal[0] in res.diagnosis.error_lines
