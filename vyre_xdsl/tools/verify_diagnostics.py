"""MLIR's `-verify-diagnostics` checking: `expected-*` annotations against emitted diagnostics.

An input file states the diagnostics it expects next to the code that causes them,
the way MLIR test suites do:

```mlir
vyre.program @p workgroup_size [1, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[4]
  %i = vyre.invocation_id x
  %v = vyre.const 1.0 : f32
  // expected-error @+1 {{store to read_only buffer @x}}
  vyre.store @x[%i] = %v : f32
}
```

An annotation is `expected-KIND[-re] [@WHERE] {{MESSAGE}}` in a comment, where KIND is
`error`, `warning`, `note` or `remark`; WHERE is `+N`/`-N` (lines below/above the
annotation), `above`/`below` (the nearest line that is not itself an annotation) or
`unknown` (a diagnostic without a location); without WHERE the annotation's own line is
meant. MESSAGE must occur in the diagnostic's text; with `-re`, the parts of MESSAGE in
`{{...}}` are regular expressions.

```python
expected = expected_diagnostics(text)
problems = check_diagnostics(expected, emitted, "in.mlir")   # [] when everything matched
```
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

KINDS = ("error", "warning", "note", "remark")

_ANNOTATION = re.compile(
    r"expected-(?P<kind>error|warning|note|remark)(?P<re>-re)?"
    r"[ \t]*(?:@(?P<where>[+-][0-9]+|above|below|unknown))?"
    r"[ \t]*\{\{(?P<message>.*)\}\}[ \t]*$"
)
_MENTION = re.compile(r"//[ \t]*expected-(error|warning|note|remark)\b")


class AnnotationError(ValueError):
    """A malformed `expected-*` annotation (the message names its line)."""


@dataclass(frozen=True)
class Expected:
    """One expected diagnostic: `line` is None for `@unknown`."""

    kind: str
    line: int | None
    message: str
    annotation_line: int
    regex: bool = False

    def matches_text(self, text: str) -> bool:
        if not self.regex:
            return self.message in text
        return re.search(_regex_of(self.message), text) is not None


@dataclass(frozen=True)
class Emitted:
    """One diagnostic the tool produced: `line` is None when it has no location."""

    kind: str
    line: int | None
    message: str
    column: int | None = None


def _regex_of(message: str) -> str:
    """MLIR's `-re` form: literal text, with `{{...}}` parts taken as regular expressions."""
    parts = re.split(r"\{\{(.*?)\}\}", message)
    return "".join(part if index % 2 else re.escape(part) for index, part in enumerate(parts))


def has_annotations(text: str) -> bool:
    """Whether `text` carries any `expected-*` annotation in a comment."""
    return _MENTION.search(text) is not None


def expected_diagnostics(text: str, line_offset: int = 0) -> list[Expected]:
    """Every `expected-*` annotation of `text` (lines numbered from `line_offset + 1`)."""
    lines = text.splitlines()
    expected: list[Expected] = []
    waiting_below: list[tuple[str, bool, str, int]] = []
    last_code_line: int | None = None
    for index, line in enumerate(lines):
        number = index + 1 + line_offset
        match = _ANNOTATION.search(line)
        if match is None:
            if _MENTION.search(line):
                raise AnnotationError(
                    f"line {number}: malformed annotation (expected-KIND [@WHERE] {{{{MESSAGE}}}}): "
                    f"{line.strip()}"
                )
            # like MLIR, every other line (blank ones too) is a target for @above/@below
            last_code_line = number
            expected += [Expected(k, number, m, at, r) for k, r, m, at in waiting_below]
            waiting_below = []
            continue
        kind, regex, message = match["kind"], match["re"] is not None, match["message"]
        where = match["where"]
        if where == "below":
            waiting_below.append((kind, regex, message, number))
            continue
        expected.append(
            Expected(kind, _target_line(where, number, last_code_line), message, number, regex)
        )
    if waiting_below:
        raise AnnotationError(f"line {waiting_below[0][3]}: '@below' with no line below it")
    return expected


def _target_line(where: str | None, number: int, last_code_line: int | None) -> int | None:
    if where is None:
        return number
    if where == "unknown":
        return None
    if where == "above":
        if last_code_line is None:
            raise AnnotationError(f"line {number}: '@above' with no line above it")
        return last_code_line
    target = number + int(where)
    if target < 1:
        raise AnnotationError(f"line {number}: '@{where}' points before the first line")
    return target


def check_diagnostics(
    expected: Sequence[Expected], emitted: Sequence[Emitted], file: str
) -> list[str]:
    """Problems, as `file:line: error: ...` lines; empty when every emitted diagnostic was
    expected and every expected one was emitted.

    A diagnostic at an expected line whose text or kind differs is reported as
    *mismatched* (naming both); the rest are *unexpected* or *not produced*."""
    unmatched = list(expected)
    strays: list[Emitted] = []
    for diagnostic in emitted:
        hit = next((e for e in unmatched if _matches(e, diagnostic)), None)
        if hit is None:
            strays.append(diagnostic)
        else:
            unmatched.remove(hit)
    problems: list[str] = []
    for diagnostic in strays:
        partner = next((e for e in unmatched if e.line == diagnostic.line), None)
        if partner is not None:
            unmatched.remove(partner)
            problems.append(_mismatch(partner, diagnostic, file))
        else:
            problems.append(
                f"{_where(file, diagnostic.line, diagnostic.column)}: error: unexpected "
                f"{diagnostic.kind}: {diagnostic.message}"
            )
    for missing in unmatched:
        problems.append(
            f"{file}:{missing.annotation_line}: error: expected {missing.kind} "
            f'"{missing.message}" was not produced'
            + ("" if missing.line is not None else " (at an unknown location)")
            + (
                f" at line {missing.line}"
                if missing.line not in (None, missing.annotation_line)
                else ""
            )
        )
    return problems


def _matches(expected: Expected, emitted: Emitted) -> bool:
    return (
        expected.kind == emitted.kind
        and expected.line == emitted.line
        and expected.matches_text(emitted.message)
    )


def _mismatch(expected: Expected, emitted: Emitted, file: str) -> str:
    what = (
        f"'{emitted.kind}' diagnostic emitted when expecting a '{expected.kind}'"
        if emitted.kind != expected.kind and expected.matches_text(emitted.message)
        else f'mismatched {expected.kind}: expected "{expected.message}", got '
        f'{emitted.kind} "{emitted.message}"'
    )
    return f"{_where(file, emitted.line, emitted.column)}: error: {what}"


def _where(file: str, line: int | None, column: int | None) -> str:
    if line is None:
        return f"{file}: <unknown location>"
    return f"{file}:{line}" + (f":{column}" if column is not None else "")
