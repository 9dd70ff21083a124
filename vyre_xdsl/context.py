"""Contexts and parsing with source locations."""

from __future__ import annotations

import bisect
import re

from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, FileLineColLoc, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.parser import Parser


def vyre_context() -> Context:
    """A context with builtin, `vyre` and `kernel` registered."""
    from vyre_xdsl.dialects import get_all_dialects

    ctx = Context()
    ctx.load_dialect(Builtin)
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx


class LocatedParser(Parser):
    """A parser that records each op's file:line:col as its location.

    Verifier diagnostics then point at the source of the offending op.
    """

    def __init__(self, ctx: Context, input: str | bytes, name: str = "<unknown>", line_offset: int = 0):
        super().__init__(ctx, input, name)
        self.line_offset = line_offset
        self.file_name = name
        content = self.lexer.input.content
        # offsets where lines start, for O(log n) locations (xDSL's Span.get_location
        # counts newlines from the start of the file, quadratic over a whole parse)
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", content)]

    def parse_operation(self) -> Operation:
        span = self._current_token.span
        op = super().parse_operation()
        if isinstance(op.location, FileLineColLoc):
            return op
        line = bisect.bisect_right(self._line_starts, span.start)
        col = span.start - self._line_starts[line - 1] + 1
        op.location = FileLineColLoc(
            StringAttr(self.file_name), IntAttr(line + self.line_offset), IntAttr(col)
        )
        return op


def parse_module(text: str, name: str = "<input>", ctx: Context | None = None) -> ModuleOp:
    """Parse (but do not verify) `text` into a module, recording op locations."""
    return LocatedParser(ctx or vyre_context(), text, name).parse_module()
