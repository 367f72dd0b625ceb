from typing import Literal

import pytest

from repopilot.core import Tool, ToolCall, ToolContext, ToolRegistry, tool


@tool
def search(pattern: str, path: str = ".", max_results: int = 50, mode: Literal["regex", "literal"] = "regex",
           ctx: ToolContext | None = None) -> str:
    """Search the code.

    Longer explanation that is still part of the description.

    Args:
        pattern: What to look for.
        path: Where to look,
            relative to the root.
        max_results: How many at most.

    Returns:
        Matching lines.
    """
    return f"{pattern}|{path}|{max_results}|{mode}|{ctx.tool_call_id if ctx else None}"


def test_schema_comes_from_type_hints_and_docstring() -> None:
    spec = search.spec
    assert spec.name == "search"
    assert spec.description.startswith("Search the code.") and "Longer explanation" in spec.description
    assert "Returns" not in spec.description
    params = spec.parameters
    assert params["required"] == ["pattern"]
    assert params["additionalProperties"] is False
    props = params["properties"]
    assert set(props) == {"pattern", "path", "max_results", "mode"}  # the context is injected, not asked for
    assert props["pattern"] == {"type": "string", "description": "What to look for."}
    assert props["path"]["description"] == "Where to look, relative to the root."
    assert props["max_results"]["type"] == "integer" and props["max_results"]["default"] == 50
    assert props["mode"]["enum"] == ["regex", "literal"]
    assert "title" not in str(params)


def test_arguments_are_validated_and_context_injected() -> None:
    reg = ToolRegistry([search])
    out = reg.execute(ToolCall(id="c9", name="search", arguments={"pattern": "x", "max_results": "7"}),
                      ToolContext(run_id="r", tool_call_id="c9"))
    assert out.content == "x|.|7|regex|c9" and not out.is_error
    bad = reg.execute(ToolCall(id="c1", name="search", arguments={"pattern": "x", "mode": "fuzzy"}))
    assert bad.is_error and "mode" in bad.content
    missing = reg.execute(ToolCall(id="c2", name="search", arguments={}))
    assert missing.is_error and "pattern" in missing.content and "Field required" in missing.content


def test_non_string_results_are_serialised() -> None:
    @tool
    def stats() -> dict[str, int]:
        """Numbers."""
        return {"files": 3}

    assert '"files": 3' in stats.invoke({}).content


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        ToolRegistry([search, Tool(search.func)])


def test_named_tool_with_side_effects_flag() -> None:
    @tool(name="propose", side_effects=True)
    def _p(diff: str) -> str:
        """Propose.

        Args:
            diff: The diff.
        """
        return diff

    assert _p.name == "propose" and _p.side_effects
    assert _p.parameters["properties"]["diff"]["description"] == "The diff."
