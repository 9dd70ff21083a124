"""Pass pipelines from the command line: building them with clear errors, and describing
the available passes for `--help`.

```python
passes = build_pipeline("vyre-fuse{split-grid-sync=false},cse", available)
print(describe_passes(available, first=get_all_passes()))
```

Errors name what the user typed: an unknown pass gets the nearest names, a bad option
is named with its hyphens and the type it takes.
"""

from __future__ import annotations

import dataclasses
import difflib
import textwrap
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Union, get_args, get_origin, get_type_hints

from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError

from vyre_xdsl.diagnostics import VyreError

PassFactory = Callable[[], type[ModulePass]]


class PipelineError(VyreError, ValueError):
    """A pass pipeline that names an unknown pass or a bad option."""


def nearest_names(name: str, names: Iterable[str], count: int = 3) -> list[str]:
    """The registered names closest to `name` (most similar first)."""
    return difflib.get_close_matches(name, sorted(names), n=count, cutoff=0.75)


def unknown_pass_message(name: str, names: Iterable[str]) -> str:
    near = nearest_names(name, names)
    hint = f"; did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
    return f"unknown pass '{name}'{hint} (vyre-opt --help lists the passes)"


def build_pipeline(spec: str, available: Mapping[str, PassFactory]) -> tuple[ModulePass, ...]:
    """The passes of a `-p` pipeline, each checked against its class before it is built."""
    try:
        specs = list(parse_pipeline(spec))
    except ArgSpecParseError as error:
        raise PipelineError(_pipeline_syntax_message(spec, error)) from None
    for pass_spec in specs:
        if pass_spec.name not in available:
            raise PipelineError(unknown_pass_message(pass_spec.name, available))
    return tuple(_built(pass_spec, available[pass_spec.name]()) for pass_spec in specs)


def _pipeline_syntax_message(spec: str, error: ArgSpecParseError) -> str:
    """`bad pass pipeline: MESSAGE at column N`, then the pipeline and a caret."""
    lines = str(error.args[0] if error.args else error).rstrip().splitlines()
    where = next((line for line in lines if line.startswith("pass-pipeline:")), "")
    column = int(where.rsplit(":", 1)[-1]) if where[-1:].isdigit() else 0
    reason = lines[-1].strip() if lines else "malformed"
    if not column:
        return f"bad pass pipeline '{spec}': {reason}"
    return f"bad pass pipeline: {reason} (column {column})\n  {spec}\n  {' ' * (column - 1)}^"


def _built(spec: ArgSpec, cls: type[ModulePass]) -> ModulePass:
    options = pass_options(cls)
    for typed, values in spec.parameters.items():
        option = options.get(typed.replace("-", "_"))
        if option is None:
            raise PipelineError(
                f"pass '{spec.name}' has no option '{typed}'; {_options_sentence(options)}"
            )
        try:
            option.convert(values)
        except ValueError:
            given = ",".join(str(v) for v in values) if values else "nothing"
            raise PipelineError(
                f"option '{typed}' of pass '{spec.name}' takes {option.type_text}, got '{given}'"
            ) from None
    try:
        return cls.from_pass_spec(spec)
    except ValueError as error:
        raise PipelineError(f"pass '{spec.name}': {error}") from None


@dataclasses.dataclass(frozen=True)
class PassOption:
    """One option of a pass, as the user writes it (`split-grid-sync`)."""

    name: str
    hint: Any
    default: Any

    @property
    def type_text(self) -> str:
        return _type_text(self.hint)

    def convert(self, values: tuple[Any, ...]) -> Any:
        from xdsl.utils.arg_spec import _convert_arg_to_type

        return _convert_arg_to_type(values, self.hint)

    @property
    def short_type(self) -> str:
        return _type_text(self.hint, short=True)

    def __str__(self) -> str:
        default = (
            "" if self.default is dataclasses.MISSING else f" (default {_value_text(self.default)})"
        )
        return f"{self.name}={self.short_type}{default}"


def pass_options(cls: type[ModulePass]) -> dict[str, PassOption]:
    """Field name -> option, for every option `cls` takes from a pipeline."""
    hints = get_type_hints(cls)
    options: dict[str, PassOption] = {}
    for field in dataclasses.fields(cls):
        if field.name == "name" or not field.init:
            continue
        default = field.default
        if default is dataclasses.MISSING and field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        options[field.name] = PassOption(field.name.replace("_", "-"), hints[field.name], default)
    return options


def _options_sentence(options: Mapping[str, PassOption]) -> str:
    if not options:
        return "it takes no options"
    return "its options are " + ", ".join(str(option) for option in options.values())


_BASE_NAMES = {
    bool: "a bool (true or false)",
    int: "an integer",
    float: "a number",
    str: "a string",
}
_SHORT_NAMES = {bool: "bool", int: "int", float: "float", str: "string"}


def _type_text(hint: Any, short: bool = False) -> str:
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        parts = [_type_text(arg, short) for arg in get_args(hint) if arg is not type(None)]
        return "|".join(parts) if short else " or ".join(parts)
    if origin is tuple:
        element = _SHORT_NAMES.get(get_args(hint)[0], "value")
        return f"{element},..." if short else f"a comma-separated list of {element} values"
    names = _SHORT_NAMES if short else _BASE_NAMES
    return names.get(hint, getattr(hint, "__name__", str(hint)))


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple):
        return ",".join(_value_text(v) for v in value)
    return str(value)


def summary(cls: type) -> str:
    """The first sentence/paragraph of a pass's docstring, on one line."""
    doc = (cls.__doc__ or "").strip()
    first = doc.split("\n\n", 1)[0]
    return " ".join(first.split())


def describe_passes(
    available: Mapping[str, PassFactory], first: Iterable[str], width: int = 92
) -> str:
    """`--help` text: the passes named in `first` with their description and options,
    then the names of all other passes."""
    first = [name for name in first if name in available]
    lines = ["vyre passes (-p NAME or -p 'NAME{option=value ...}'):"]
    for name in first:
        cls = available[name]()
        lines += textwrap.wrap(
            summary(cls) or "(no description)",
            width,
            initial_indent=f"  {name:<22}",
            subsequent_indent=" " * 24,
            break_on_hyphens=False,
        )
        options = pass_options(cls).values()
        if options:
            lines += textwrap.wrap(
                "options: " + ", ".join(str(option) for option in options),
                width,
                initial_indent=" " * 24,
                subsequent_indent=" " * 33,
                break_on_hyphens=False,
            )
    others = sorted(name for name in available if name not in first)
    if others:
        lines += ["", f"other passes ({len(others)}, from xDSL and plugins):"]
        lines += textwrap.wrap(
            ", ".join(others),
            width,
            initial_indent="  ",
            subsequent_indent="  ",
            break_on_hyphens=False,
        )
    return "\n".join(lines)
