"""Tools the model can call: a decorator builds the JSON Schema from type hints and the docstring, arguments
are validated with pydantic, and every failure becomes an error result the model reads (never a crash)."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, get_args, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from .approval import EndRun
from .errors import RepoPilotError
from .messages import ToolCall, ToolSpec

__all__ = ["Tool", "ToolContext", "ToolOutcome", "ToolRegistry", "tool"]

@dataclass
class ToolContext:
    """Injected into tools that declare a parameter of this type; not part of the schema.
    `run_id` + `tool_call_id` key any side effect so it never happens twice for one call."""

    run_id: str
    tool_call_id: str
    state: dict[str, Any] = field(default_factory=dict)
    # The `time.monotonic()` time the run's seconds budget ends; a tool that waits (a git child) stops there.
    deadline: float | None = None

@dataclass
class ToolOutcome:
    content: str
    is_error: bool = False

_ARG_LINE = re.compile(r"^\s{2,}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.+)$")

def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The summary (text before `Args:`) and per-argument descriptions from a Google-style docstring."""
    doc = inspect.cleandoc(doc or "")
    summary_lines: list[str] = []
    args: dict[str, str] = {}
    in_args = False
    current: str | None = None
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped in ("Args:", "Arguments:", "Parameters:"):
            in_args = True
            continue
        if in_args:
            if stripped.endswith(":") and not line.startswith(" "):
                in_args = False  # another section, e.g. Returns:
                continue
            m = _ARG_LINE.match(line)
            if m:
                current = m.group(1)
                args[current] = m.group(2).strip()
            elif current and stripped:
                args[current] += " " + stripped
        else:
            summary_lines.append(line)
    return "\n".join(summary_lines).strip(), args

def _strip_titles(schema: Any) -> Any:
    # pydantic adds "title" everywhere; models read the descriptions, titles only cost tokens.
    if isinstance(schema, dict):
        return {k: _strip_titles(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema

class Tool:
    """A function the model can call. Build one with `@tool` or `Tool(func)`."""

    def __init__(self, func: Callable[..., Any], *, name: str | None = None,
                 description: str | None = None, side_effects: bool = False) -> None:
        self.func = func
        self.name = name or func.__name__
        self.side_effects = side_effects
        summary, arg_docs = _parse_docstring(func.__doc__ or "")
        self.description = description or summary or self.name
        hints = get_type_hints(func)
        fields: dict[str, Any] = {}
        self._context_param: str | None = None
        for pname, param in inspect.signature(func).parameters.items():
            annotation = hints.get(pname, Any)
            if annotation is ToolContext or ToolContext in get_args(annotation):
                self._context_param = pname
                continue
            default = ... if param.default is inspect.Parameter.empty else param.default

            fields[pname] = (annotation, Field(default, description=arg_docs.get(pname)))
        self.args_model: type[BaseModel] = create_model(
            f"{self.name}_args", __config__=ConfigDict(extra="forbid"), **fields
        )
        self.parameters: dict[str, Any] = _strip_titles(self.args_model.model_json_schema())

    @property
    def spec(self) -> ToolSpec:
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters)

    def invoke(self, arguments: dict[str, Any], ctx: ToolContext | None = None) -> ToolOutcome:
        try:
            validated = self.args_model.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(arguments)'}: {e['msg']}" for e in exc.errors()
            )
            return ToolOutcome(f"invalid arguments for {self.name}: {problems}", is_error=True)
        kwargs = {k: getattr(validated, k) for k in type(validated).model_fields}
        if self._context_param is not None:
            kwargs[self._context_param] = ctx
        try:
            result = self.func(**kwargs)
        except EndRun:  # approval and other run-ending outcomes belong to the loop
            raise
        except RepoPilotError as exc:
            return ToolOutcome(f"{self.name} failed: {exc}", is_error=True)
        except Exception as exc:  # a tool's bug must reach the model as text, not end the run
            return ToolOutcome(f"{self.name} raised {type(exc).__name__}: {exc}", is_error=True)
        return ToolOutcome(result if isinstance(result, str) else json.dumps(result, default=str, indent=1))

def tool(func: Callable[..., Any] | None = None, *, name: str | None = None,
         side_effects: bool = False) -> Any:
    """Decorator: `@tool` or `@tool(name=..., side_effects=True)` turns a typed, documented function into a Tool."""
    if func is None:
        return lambda f: Tool(f, name=name, side_effects=side_effects)
    return Tool(func, name=name, side_effects=side_effects)

class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for t in tools:
            self.add(t)

    def add(self, t: Tool) -> None:
        if t.name in self._tools:
            raise ValueError(f"duplicate tool name {t.name!r}")
        self._tools[t.name] = t

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def specs(self) -> list[ToolSpec]:
        return [t.spec for t in self._tools.values()]

    def execute(self, call: ToolCall, ctx: ToolContext | None = None) -> ToolOutcome:
        if call.arguments_error is not None:
            return ToolOutcome(
                f"the arguments for {call.name} were not valid JSON ({call.arguments_error}); "
                "send a JSON object", is_error=True)
        t = self._tools.get(call.name)
        if t is None:
            known = ", ".join(sorted(self._tools)) or "none"
            return ToolOutcome(f"unknown tool {call.name!r}; available tools: {known}", is_error=True)
        return t.invoke(call.arguments, ctx)
