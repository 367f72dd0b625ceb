"""`Record`: the base of the typed records every `repopilot diagnose` makes (the report, the trace, the failure
history's rows). They are standard-library dataclasses, checked by mypy where the code builds them, and validated
by pydantic where data comes back from outside (a trace file, the service's database, a report read as JSON):
`model_validate` builds pydantic's validator for the class on first use.

Why not pydantic models: importing pydantic and building the models' schemas cost about 100 ms, a third of a
small log's whole `diagnose`, which reads nothing back. The few methods they used keep pydantic's names, so the
callers (and pydantic, which validates dataclasses natively, with their `__post_init__`) see the same contract.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = ["Record", "plain"]


class Record:
    """Base of a `@dataclass(slots=True)` record. `__pydantic_config__` is pydantic's configuration of the class
    (a plain dict: setting it imports nothing); reading ignores unknown keys, as a pydantic model does."""

    __slots__ = ()
    __pydantic_config__: ClassVar[dict[str, Any]] = {"extra": "ignore"}
    __dataclass_fields__: ClassVar[dict[str, Any]]  # set by @dataclass on each record class

    @classmethod
    def model_validate(cls, data: object) -> Self:
        """`data` (JSON-like, or a record already) as this record, validated; pydantic's ValidationError (a
        ValueError) when it is not one."""
        if isinstance(data, cls):
            return data
        return _adapter(cls).validate_python(data)  # type: ignore[no-any-return]

    @classmethod
    def model_validate_json(cls, text: str | bytes) -> Self:
        return _adapter(cls).validate_json(text)  # type: ignore[no-any-return]

    @classmethod
    def model_json_schema(cls, mode: Literal["validation", "serialization"] = "validation") -> dict[str, Any]:
        return _adapter(cls).json_schema(mode=mode)

    def model_dump(self, *, mode: Literal["python", "json"] = "python", exclude: set[str] | None = None
                   ) -> dict[str, Any]:
        """The fields as a dict (nested records too); `mode="json"` as JSON would hold them (lists for tuples)."""
        json_ready = mode == "json"
        return {name: plain(getattr(self, name), json_ready=json_ready) for name in _field_names(type(self))
                if not exclude or name not in exclude}

    def model_dump_json(self, *, indent: int | None = None) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=indent, ensure_ascii=False)

    def model_copy(self, *, update: dict[str, Any] | None = None) -> Self:
        """A shallow copy with the fields in `update` replaced (not validated, as pydantic's is not)."""
        return dataclasses.replace(self, **(update or {}))


_ADAPTERS: dict[type, TypeAdapter[Any]] = {}


def _adapter(cls: type) -> TypeAdapter[Any]:
    adapter = _ADAPTERS.get(cls)
    if adapter is None:
        from pydantic import TypeAdapter

        adapter = _ADAPTERS[cls] = TypeAdapter(cls)
    return adapter


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
# The record classes `plain` has dumped (their instances are neither strings nor numbers), by their field names.
_RECORD_FIELDS: dict[type, tuple[str, ...]] = {}
# The exact types a report is made of, answered first by one lookup each (a 50 MB log's report holds thousands of
# values); their subclasses and everything else take the checks below, in their order.
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _field_names(kind: type) -> tuple[str, ...]:
    """The names `dataclasses.fields` gives for a record class, in its order, worked out once per class."""
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(f.name for f in dataclasses.fields(kind))
    return names


def plain(value: Any, *, json_ready: bool = True) -> Any:
    """`value` with records made dicts, recursively; `json_ready`: also tuples and sets made lists, paths and enums
    their text or value, and pydantic models dumped, as pydantic's JSON mode does."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    # The items of a list and a record's fields are mostly scalars: passed on without a call each.
    if kind is list:
        return [v if type(v) in _SCALARS else plain(v, json_ready=json_ready) for v in value]
    # A record class met before goes to its branch at once (a 50 MB log's report holds 600 records).
    names = _RECORD_FIELDS.get(kind)
    if names is None:
        if isinstance(value, str | int | float | bool) or value is None:
            return value
        if isinstance(value, Record):
            names = _RECORD_FIELDS[kind] = _field_names(kind)
    if names is not None:
        return {name: v if type(v) in _SCALARS else plain(v, json_ready=json_ready)
                for name in names for v in (getattr(value, name),)}
    if isinstance(value, dict):
        return {k: plain(v, json_ready=json_ready) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v, json_ready=json_ready) for v in value]
    if isinstance(value, tuple):
        items = [plain(v, json_ready=json_ready) for v in value]
        return items if json_ready else tuple(items)
    if not json_ready:
        return value
    if isinstance(value, set | frozenset):
        return [plain(v) for v in value]
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.value
    dump = getattr(value, "model_dump", None)  # a pydantic model (a message, a receipt) inside a step
    if callable(dump):
        return dump(mode="json")
    return value
