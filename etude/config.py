"""One strict loader for every TOML config: a TOML document into nested dataclasses.

A table becomes the dataclass of its field, a value is checked against the field's type
annotation by pydantic in strict mode (no "3" for an int, no 1.5 for an int, no true for an
int; an int is accepted for a float), and an unknown key or a value of the wrong type is a
`ConfigError` naming its dotted key (`rl.steps`, `loss.weights.tool_not_found`). Missing
keys keep the dataclass defaults; a TOML array is accepted for a tuple field. Checks between
fields stay with the config that needs them.

    cfg = load_toml(RunConfig, "configs/toolgrid.toml", skip=("env",))

A config whose tables do not map one-to-one onto dataclasses (`etude train`'s [model] table
overrides fields of a preset) reads the file with `read_toml` and checks each table with
`field_values`, which refuses and names keys the same way.
"""

from __future__ import annotations

import dataclasses
import tomllib
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

T = TypeVar("T")


class ConfigError(ValueError):
    """A config that does not match its dataclasses; the message names the dotted key."""


def from_dict(cls: type[T], data: Any, where: str = "") -> T:
    """An instance of dataclass `cls` from a parsed TOML table `data` (see module doc)."""
    values = field_values(cls, data, where)
    try:
        return cls(**values)
    except ValueError as err:  # the dataclass's own checks (__post_init__)
        raise ConfigError(f"[{where or 'top level'}] {err}") from err


def field_values(
    cls: type, data: Any, where: str = "", names: tuple[str, ...] | None = None
) -> dict[str, Any]:
    """The values table `data` (at dotted path `where`) gives fields of dataclass `cls`, each
    checked against its annotation (dataclass fields built with `from_dict`); `names`, when
    given, are the only fields the table may set. Builds no instance, so `cls` may have
    required fields the table leaves out (a preset's fields to override)."""
    if not isinstance(data, dict):
        raise ConfigError(f"[{where}] must be a table, got {data!r}")
    fields = [f.name for f in dataclasses.fields(cls) if f.init]
    if names is not None:
        fields = [f for f in fields if f in names]
    unknown = sorted(set(data) - set(fields))
    if unknown:
        keys = ", ".join(_dotted(where, k) for k in unknown)
        raise ConfigError(
            f"unknown key(s) {keys}; known in [{where or 'top level'}]: {', '.join(fields)}"
        )
    hints = typing.get_type_hints(cls)
    values = {}
    for key, value in data.items():
        kind, dotted = hints[key], _dotted(where, key)
        if dataclasses.is_dataclass(kind):
            values[key] = from_dict(kind, value, dotted)
            continue
        if isinstance(value, list) and _is_tuple(kind):
            value = tuple(value)  # TOML has arrays only
        try:
            values[key] = TypeAdapter(kind).validate_python(value, strict=True)
        except ValidationError as err:
            first = err.errors()[0]
            if not first["loc"]:
                raise ConfigError(f"{dotted} must be {_type_name(kind)}, got {value!r}") from None
            inner = ".".join([dotted, *map(str, first["loc"])])
            raise ConfigError(f"{inner}: {first['msg']}, got {first['input']!r}") from None
    return values


def read_toml(path: str | Path) -> dict[str, Any]:
    """The parsed TOML document at `path`; a missing file or invalid TOML is an error naming
    the path."""
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"config file {path} does not exist")
    try:
        return tomllib.loads(file.read_text())
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path} is not valid TOML: {err}") from err


def load_toml(cls: type[T], path: str | Path, skip: tuple[str, ...] = ()) -> T:
    """Read the TOML file at `path` into `cls`; top-level keys in `skip` (such as `env`,
    read by whoever dispatched on it) are left out."""
    data = read_toml(path)
    return from_dict(cls, {k: v for k, v in data.items() if k not in skip})


def _dotted(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _is_tuple(kind: Any) -> bool:
    """Whether `kind` is a tuple type, or a union with one (`tuple[int, ...] | None`)."""
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        return any(_is_tuple(k) for k in typing.get_args(kind))
    return typing.get_origin(kind) is tuple


def _type_name(kind: Any) -> str:
    return kind.__name__ if isinstance(kind, type) else str(kind).replace("typing.", "")
