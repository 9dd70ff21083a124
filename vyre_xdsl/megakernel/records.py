"""Strict conversion between attrs records and JSON values.

`to_json(record)` gives plain dicts, lists, strings, ints, bools and None;
`from_json(cls, data)` rebuilds the record and raises `RecordShapeError` (with
a path such as `modules[1].kernels[0].workgroup_size`) on a missing or extra
key, a wrong type (a bool is not an int), or a tuple of the wrong length.
Supported field types: int, str, bool, None, `X | None`, `tuple[X, ...]`,
fixed tuples, `dict[str, X]` and nested attrs classes.
"""

from __future__ import annotations

import types
import typing
from functools import cache
from typing import Any

import attrs


class RecordShapeError(ValueError):
    """JSON that does not have the shape of the record it should encode."""


def to_json(value: Any) -> Any:
    if attrs.has(type(value)):
        return {f.name: to_json(getattr(value, f.name)) for f in attrs.fields(type(value))}
    if isinstance(value, tuple | list):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | str):
        return value
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def from_json(cls: type, data: Any, path: str = "") -> Any:
    return _convert(cls, data, path or cls.__name__)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _convert(ty: Any, data: Any, path: str) -> Any:
    origin = typing.get_origin(ty)
    if attrs.has(ty):
        return _record(ty, data, path)
    if origin in (typing.Union, types.UnionType):
        return _union(typing.get_args(ty), data, path)
    if origin is tuple:
        return _tuple(typing.get_args(ty), data, path)
    if origin is dict:
        _, value_type = typing.get_args(ty)
        if not isinstance(data, dict):
            raise RecordShapeError(f"{path}: expected an object")
        return {k: _convert(value_type, v, f"{path}.{k}") for k, v in data.items()}
    if ty is type(None):
        if data is not None:
            raise RecordShapeError(f"{path}: expected null")
        return None
    if ty is bool:
        if not isinstance(data, bool):
            raise RecordShapeError(f"{path}: expected a boolean")
        return data
    if ty is int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise RecordShapeError(f"{path}: expected an integer")
        return data
    if ty is str:
        if not isinstance(data, str):
            raise RecordShapeError(f"{path}: expected a string")
        return data
    raise TypeError(f"unsupported record field type {ty!r}")


def _record(cls: type, data: Any, path: str) -> Any:
    if not isinstance(data, dict):
        raise RecordShapeError(f"{path}: expected an object")
    hints = _hints(cls)
    names = [f.name for f in attrs.fields(cls)]
    extra = sorted(set(data) - set(names))
    if extra:
        raise RecordShapeError(f"{path}: unexpected key {extra[0]!r}")
    missing = [n for n in names if n not in data]
    if missing:
        raise RecordShapeError(f"{path}: missing key {missing[0]!r}")
    return cls(**{n: _convert(hints[n], data[n], f"{path}.{n}") for n in names})


def _union(options: tuple[Any, ...], data: Any, path: str) -> Any:
    if data is None and type(None) in options:
        return None
    errors = []
    for option in options:
        if option is type(None):
            continue
        try:
            return _convert(option, data, path)
        except RecordShapeError as error:
            errors.append(str(error))
    raise RecordShapeError(
        errors[0] if len(errors) == 1 else f"{path}: unexpected value {data!r:.60}"
    )


def _tuple(args: tuple[Any, ...], data: Any, path: str) -> tuple[Any, ...]:
    if not isinstance(data, list):
        raise RecordShapeError(f"{path}: expected an array")
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(_convert(args[0], v, f"{path}[{k}]") for k, v in enumerate(data))
    if len(data) != len(args):
        raise RecordShapeError(f"{path}: expected {len(args)} elements, got {len(data)}")
    return tuple(_convert(t, v, f"{path}[{k}]") for k, (t, v) in enumerate(zip(args, data)))
