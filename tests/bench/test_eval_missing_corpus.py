"""`bench/eval.py` without its corpus says what the corpus is and where it comes from (issue 13)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_missing_corpus_names_its_source(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "eval.py"), str(tmp_path / "none")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "https://github.com/labri-progress/cidiff" in done.stderr and "index.tsv" in done.stderr
