"""A conversation and tools shared by the adapter tests."""

from __future__ import annotations

from repopilot.core import (
    AssistantMessage,
    Message,
    ModelResponse,
    SystemMessage,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
    tool,
)
from repopilot.providers.http_client import RetryPolicy

FAST = RetryPolicy(max_retries=2, initial_wait=0.01, max_wait=0.02)
SYSTEM = "You are RepoPilot. Use the tools."
QUESTION = "What does add do?"
KEY = "sk-test-0123456789abcdefghijklmnop"


@tool
def read_file(path: str, start_line: int | None = None) -> str:
    """Read a file.

    Args:
        path: Path inside the repository.
        start_line: First line to show.
    """
    return f"contents of {path}"


@tool
def list_files(path: str = ".") -> str:
    """List files."""
    return path


TOOLS: list[ToolSpec] = [read_file.spec, list_files.spec]


def first_turn() -> list[Message]:
    return [SystemMessage(content=SYSTEM), UserMessage(content=QUESTION)]


def second_turn(resp: ModelResponse, *, error_on: int | None = None) -> list[Message]:
    """The conversation after `resp`: its assistant turn, then one result per call (the `error_on`-th an error)."""
    msgs: list[Message] = [*first_turn(), resp.message]
    for i, call in enumerate(resp.tool_calls):
        msgs.append(ToolResultMessage(tool_call_id=call.id, name=call.name, content=f"result {i} of {call.name}",
                                      is_error=i == error_on))
    return msgs


def assistant(msgs: list[Message]) -> AssistantMessage:
    found = [m for m in msgs if isinstance(m, AssistantMessage)]
    return found[-1]
