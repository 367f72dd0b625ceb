"""Write docs/diagnosis-report.schema.json from the `DiagnosisReport` model (a test checks it is current)."""

import json
from pathlib import Path

from repopilot.ci import report_schema

TARGET = Path(__file__).resolve().parents[1] / "docs" / "diagnosis-report.schema.json"


def schema_text() -> str:
    return json.dumps(report_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    TARGET.write_text(schema_text())
    print(f"wrote {TARGET}")
