"""Help as people read it: `SOURCE` and `[SOURCE]` in the usage line, `--repo PATH` and `--max-steps INTEGER`,
`--format [text|json|markdown|github]` beside the options; not typer's own `{source}`, `<str>` and `<int range>`
(issue 13). Typer builds every command's help from its parameter classes, so those are adjusted once here."""

from __future__ import annotations

from typing import Any

from typer import core

__all__ = ["plain_help"]

_NAMES = {"str": "TEXT", "int": "INTEGER", "float": "NUMBER", "path": "PATH", "bool": ""}


def _argument_usage(self: Any) -> str:
    name = (self.metavar or self.name or "").upper()
    name = name if self.required else f"[{name}]"
    return name + ("..." if self.nargs != 1 else "")


def _argument_name(self: Any) -> str:
    return (self.metavar or self.name or "").upper()


def _value(self: Any, ctx: Any) -> str:
    if isinstance(self, core.TyperArgument):  # its name says what it is: `SOURCE`, not `SOURCE TEXT`
        return ""
    if self.metavar is not None:
        return str(self.metavar)
    label = str(_ORIGINAL[0](self, ctx)).strip("<>")
    if "|" in label:
        return f"[{label}]"
    words = label.split()
    return " ".join(_NAMES.get(w, w.upper()) for w in words if w != "range").strip()


_ORIGINAL: list[Any] = []  # typer's own display_type, which names the type


def plain_help() -> None:
    """Install the plain names (idempotent). tests/cli/test_help.py reads every command's help for leftovers."""
    if _ORIGINAL:
        return
    base: Any = core._TyperParameter
    _ORIGINAL.append(base.display_type)
    base.display_type = _value
    core.TyperArgument._usage_display_name = _argument_usage  # type: ignore[method-assign]
    core.TyperArgument.display_name_raw = property(_argument_name)  # type: ignore[assignment,method-assign]
