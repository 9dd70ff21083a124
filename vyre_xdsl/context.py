"""Contexts and parsing with source locations.

`LocatedParser` is the one entry point for vyre text (`vyre-opt`, `vyre-run`,
`vyre-compile`, `vyre_xdsl.parse`). Beyond xDSL's parser it:

- records each op's `file:line:col`, so verifier errors point at the source;
- accepts bytes and reports invalid UTF-8 at its line and column;
- lexes string literals in linear time (xDSL's pattern backtracks
  exponentially on an unterminated literal);
- rejects ops nested deeper than the verifier allows before Python's stack runs
  out, and reports any other too-deep input as a located error;
- words the common mistakes (an unclosed `{`, an unknown type or op, an
  undefined value, empty input) as located errors that name the fix.
"""

from __future__ import annotations

import bisect
import difflib
import re
import weakref
from collections import defaultdict

from xdsl.context import Context
from xdsl.dialects.builtin import Builtin, FileLineColLoc, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.parser import Parser
from xdsl.parser.attribute_parser import AttrParser
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Input, Position, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from vyre_xdsl.diagnostics import OWN_DIALECTS
from vyre_xdsl.dialects.verify import MAX_NESTING_DEPTH, nesting_message
from vyre_xdsl.semantics import ELEMENT_TYPE_NAMES

#: the element types, as the parser's hint lists them
TYPE_HINT = "vyre element types are " + ", ".join(ELEMENT_TYPE_NAMES)


def vyre_context() -> Context:
    """A context with `vyre`, `kernel` and every xDSL dialect registered (lazily).

    xDSL's dialects are there so that a foreign op (`arith.addf`) parses the same
    everywhere `vyre-opt` parses it; the verifier then rejects it inside a
    program with a located error.
    """
    from xdsl.dialects import get_all_dialects as xdsl_dialects

    from vyre_xdsl.dialects import get_all_dialects

    ctx = Context()
    ctx.load_dialect(Builtin)
    for name, factory in {**xdsl_dialects(), **get_all_dialects()}.items():
        if name not in ctx.registered_dialect_names:
            ctx.register_dialect(name, factory)
    return ctx


class LinearLexer(MLIRLexer):
    """xDSL's MLIR lexer with a string-literal pattern that cannot backtrack.

    xDSL's `"(?:[^"\\\\\\n\\v\\f]+|\\\\(...))*"` nests a `+` inside a `*`, so an
    unterminated literal takes time exponential in its length. Matching one
    character per repetition accepts the same literals in linear time.
    """

    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')

    def _lex_string_literal(self, start_pos: Position):
        try:
            return super()._lex_string_literal(start_pos)
        except ParseError as error:
            raise ParseError(
                Span(start_pos, start_pos + 1, self.input),
                "unterminated string literal: close it with '\"' on the same line "
                '(escape a quote inside it as \\")',
            ) from error


def decode_source(data: str | bytes, name: str) -> str:
    """`data` as text; invalid UTF-8 is a `ParseError` at its line and column."""
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        shown = data.decode("utf-8", errors="replace")
        good = data[: error.start].decode("utf-8")
        start = len(good)
        span = Span(start, start + 1, Input(shown, name))
        byte = data[error.start]
        raise ParseError(
            span,
            f"invalid UTF-8 (byte 0x{byte:02x} at byte offset {error.start}); "
            "vyre source files must be UTF-8 text",
        ) from None


#: the names that block arguments were written with, where xDSL's `name_hint`
#: dropped a `_<digits>` suffix (`%x_0` is named `x`, like `%x`): standard MLIR's
#: function arguments name the buffers (docs/mlir-input.md). Held only while the
#: parsed values live.
SOURCE_NAMES: weakref.WeakKeyDictionary[SSAValue, str] = weakref.WeakKeyDictionary()


def source_name(value: SSAValue) -> str | None:
    """The name `value` was written with in the text it was parsed from (a block
    argument's `%x_0` in full), else its `name_hint`."""
    return SOURCE_NAMES.get(value, value.name_hint)


class LocatedParser(Parser):
    """A parser that records each op's file:line:col as its location.

    Verifier diagnostics then point at the source of the offending op.
    """

    def __init__(
        self, ctx: Context, input: str | bytes, name: str = "<unknown>", line_offset: int = 0
    ):
        text = decode_source(input, name)
        # Parser.__init__, with the linear-time lexer (the first token is lexed
        # when the state is made, so the lexer cannot be swapped afterwards)
        AttrParser.__init__(self, ParserState(LinearLexer(Input(text, name))), ctx)
        self.ssa_values = dict()
        self.blocks = dict()
        self.forward_block_references = defaultdict(list)
        self.forward_ssa_references = dict()

        self.line_offset = line_offset
        self.file_name = name
        # offsets where lines start, for O(log n) locations (xDSL's Span.get_location
        # counts newlines from the start of the file, quadratic over a whole parse)
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self._depth = 0
        self._open_regions: list[Position] = []
        self._first_use: dict[str, Span] = {}
        self._op_types: list[type[Operation] | None] = []

    def _register_ssa_definition(self, name: str, values, span: Span) -> None:
        super()._register_ssa_definition(name, values, span)
        for value in values:
            # only where xDSL kept a shorter hint (`%x_0` as `x`); `%0` has none
            if isinstance(value, BlockArgument) and value.name_hint not in (None, name):
                SOURCE_NAMES[value] = name

    # ------------------------------------------------------------------ module

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        if self._current_token.kind == MLIRTokenKind.EOF:
            self.raise_error(
                "empty input: expected a 'vyre.program' "
                "(e.g. 'vyre.program @main workgroup_size [64, 1, 1] { ... }')"
            )
        try:
            module = super().parse_module(allow_implicit_module)
        except RecursionError:
            self.raise_error(f"input nested too deeply to parse; {nesting_message()}")
        except ParseError as error:
            raise self._explained(error) from None
        if not isinstance(module.location, FileLineColLoc):
            # the implicit module starts where the file does (errors about the
            # whole module, such as "no program", point there)
            module.location = FileLineColLoc(
                StringAttr(self.file_name), IntAttr(1 + self.line_offset), IntAttr(1)
            )
        return module

    def parse_optional_builtin_int_or_float_attr(self):
        """As xDSL's, but a hexadecimal float literal with more bits than its type
        (`0x123456789 : f32`) is a located error, not Python's OverflowError."""
        span = self._current_token.span
        try:
            return super().parse_optional_builtin_int_or_float_attr()
        except OverflowError:
            self.raise_error(
                f"hexadecimal literal '{span.text}' has more bits than its float type holds "
                "(f16: 4 hex digits, f32: 8, f64: 16)",
                span,
            )

    def _explained(self, error: ParseError) -> ParseError:
        """`error`, or a clearer located error for the same mistake."""
        if error.msg.startswith("values used but not defined") and self.forward_ssa_references:
            name, span = min(
                (
                    (n, self._first_use[n])
                    for n in self.forward_ssa_references
                    if n in self._first_use
                ),
                key=lambda item: item[1].start,
                default=(None, None),
            )
            if span is not None:
                hint = named_local_hint(self.lexer.input.content, name, span.start)
                return ParseError(
                    span,
                    f"use of undefined value %{name}: "
                    + (
                        hint
                        or "define it before this use "
                        "(a value defined inside a nested region is not visible after it)"
                    ),
                )
        literal = error.span.text
        if error.msg == "Expected ':'":
            # at the end of what came before (the next line's '}' says nothing)
            text = self.lexer.input.content
            end = error.span.start
            while end > 0 and text[end - 1].isspace():
                end -= 1
            if 0 < end < error.span.start:
                return ParseError(
                    Span(end - 1, end, self.lexer.input),
                    f"expected ':' and a type after this (e.g. ': f32'), got '{literal}'",
                )
        if error.msg == "Expected an operand." and re.fullmatch(
            r"-?[0-9][0-9.eE+-]*|true|false", literal
        ):
            return ParseError(
                error.span,
                f"expected an SSA value (%name), not the literal '{literal}': operands are "
                f"values, so define it first, e.g. '%c = vyre.const {literal} : ui32'",
            )
        condition = re.fullmatch(
            r"operand is used with type i1, but has been previously used or defined with type (\w+)",
            error.msg,
        )
        if condition and condition.group(1) != "i1":
            ty = condition.group(1)
            return ParseError(
                error.span,
                f"{error.msg}; an i1 value (a condition) comes from a comparison, e.g. "
                f"'%c = vyre.ne %v, %zero : {ty}'",
            )
        custom = re.fullmatch(r"Operation (\S+) does not have a custom format\.", error.msg)
        if custom:
            name = custom.group(1)
            return ParseError(
                error.span,
                f"'{name}' has no custom syntax in xDSL: write it in MLIR's generic form, "
                f'"{name}"(operands) <{{properties}}> ({{regions}}) : (operand types) -> '
                "(result types) (mlir-opt --mlir-print-op-generic prints it; "
                "docs/mlir-input.md shows scf.parallel and the gpu ops)",
            )
        if error.msg == "Could not parse entire input!":
            return ParseError(
                error.span,
                f"expected an operation, got '{error.span.text}' "
                "(e.g. 'vyre.program @main workgroup_size [64, 1, 1] { ... }')",
            )
        return error

    # ------------------------------------------------------------------ ops

    def parse_operation(self) -> Operation:
        span = self._current_token.span
        self._depth += 1
        self._op_types.append(None)  # the op's type, once its name is parsed
        try:
            # module, program, the scopes and a statement, with room to spare so
            # that the verifier reports programs just past the limit precisely
            if self._depth > MAX_NESTING_DEPTH + 4:
                self.raise_error(nesting_message(), span)
            op = super().parse_operation()
        except VerifyException as error:
            # xDSL's declarative formats check type constraints while parsing
            self.raise_error(f"{error}", span)
        except (ParseError, RecursionError):
            raise
        except Exception as error:
            self._foreign_parser_failed(error, span)
            raise
        finally:
            self._depth -= 1
            self._op_types.pop()
        if isinstance(op.location, FileLineColLoc):
            return op
        line = bisect.bisect_right(self._line_starts, span.start)
        col = span.start - self._line_starts[line - 1] + 1
        op.location = FileLineColLoc(
            StringAttr(self.file_name), IntAttr(line + self.line_offset), IntAttr(col)
        )
        return op

    def _foreign_parser_failed(self, error: Exception, span: Span) -> None:
        """Raise a located `ParseError` for `error`, raised while the innermost op
        parsed its custom syntax, when that op is not the project's own: some of
        xDSL's op parsers (linalg's) fail on malformed text with an `IndexError`
        or a `ValueError`. An error of a vyre or kernel op's parser (a bug of the
        project's) passes through every op around it unchanged."""
        op_type = self._op_types[-1]
        if getattr(error, "_vyre_passed", False) or op_type is None:
            return
        if op_type.dialect_name() in OWN_DIALECTS:
            error._vyre_passed = True  # type: ignore[attr-defined]
            return
        reason = next(iter(str(error).splitlines()), "")[:200]
        self.raise_error(
            f"malformed '{op_type.name}': its parser failed ({type(error).__name__}: "
            f"{reason}); check the op's syntax, or write it in the generic form",
            span,
        )

    def _get_op_by_name(self, name: str) -> type[Operation]:
        if (
            op_type := self.ctx.get_optional_op(
                name, dialect_stack=self._parser_state.dialect_stack
            )
        ) is not None:
            if self._op_types:
                self._op_types[-1] = op_type
            return op_type
        # the name was the token just consumed
        start = self.lexer.input.content.rfind(name, 0, self.pos)
        start = start if start >= 0 else self.pos
        self.raise_error(
            f"unknown op '{name}'{self._op_suggestion(name)}", start, start + len(name)
        )

    def _op_suggestion(self, name: str) -> str:
        dialect_name = name.split(".", 1)[0]
        dialect = self.ctx.get_optional_dialect(dialect_name) if "." in name else None
        if dialect is None:
            return "; vyre ops are spelled 'vyre.<op>'"
        prefix = dialect_name + "."
        names = [op.name.removeprefix(prefix) for op in dialect.operations]
        close = difflib.get_close_matches(name.removeprefix(prefix), names, n=1)
        if close:
            return f"; did you mean '{prefix}{close[0]}'?"
        return f"; the {dialect_name} dialect has no such op"

    def resolve_operand(self, operand, type: Attribute):
        name = operand.operand_name
        if name not in self.ssa_values and name not in self.forward_ssa_references:
            self._first_use[name] = operand.span
        return super().resolve_operand(operand, type)

    # ------------------------------------------------------------------ regions

    def parse_optional_region(self, arguments=None) -> Region | None:
        self._open_regions.append(self.pos)
        try:
            return super().parse_optional_region(arguments)
        finally:
            self._open_regions.pop()

    def _parse_block(self) -> Block:
        if self._current_token.kind != MLIRTokenKind.CARET_IDENT and self._open_regions:
            opened = self._open_regions[-1]
            line = bisect.bisect_right(self._line_starts, opened)
            col = opened - self._line_starts[line - 1] + 1
            if self._current_token.kind == MLIRTokenKind.EOF:
                self.raise_error(
                    f"missing '}}': the '{{' at {line + self.line_offset}:{col} is never closed",
                    opened,
                    opened + 1,
                )
            self.raise_error(
                f"expected an operation or the '}}' that closes the '{{' at "
                f"{line + self.line_offset}:{col}, got '{self._current_token.text}'"
            )
        return super()._parse_block()

    # ------------------------------------------------------------------ types

    def parse_type(self) -> Attribute:
        if (ty := self.parse_optional_type()) is not None:
            return ty
        token = self._current_token
        if token.kind == MLIRTokenKind.BARE_IDENT:
            self.raise_error(f"unknown type '{token.text}'; {TYPE_HINT}")
        self.raise_error(f"type expected; {TYPE_HINT}")


def named_local_hint(text: str, name: str, position: int) -> str | None:
    """The fix for `%name` used undefined at `position` when a loop variable or a
    `vyre.let` named `@name` is visible there: it is read with `vyre.var`."""
    declarations = re.finditer(
        rf"vyre\.(loop|let)\s+@{re.escape(name)}\s*=(?:\s*%[^\s:]+\s*:\s*(\w+))?",
        text[:position],
    )
    for found in reversed(list(declarations)):
        kind, type_name = found.group(1), found.group(2) or "ui32"
        if not _in_scope_of(text[found.end() : position], opens_scope=kind == "loop"):
            continue
        what = "the loop variable" if kind == "loop" else "the named local"
        return (
            f"{what} @{name} is not an SSA value; read it with "
            f"'%{name} = vyre.var @{name} : {type_name}' before this use"
        )
    return None


def _in_scope_of(between: str, opens_scope: bool) -> bool:
    """Whether a name declared just before `between` is visible just after it: a
    loop's variable inside the body the next `{` opens, a `vyre.let`'s in the rest
    of its scope (braces counted; vyre text has none in strings or comments that
    matter here)."""
    depth = 0
    opened = not opens_scope
    for char in between:
        if char == "{":
            depth += 1
            opened = True
        elif char == "}":
            depth -= 1
            if depth < (1 if opens_scope else 0):
                return False
    return opened


def parse_module(text: str | bytes, name: str = "<input>", ctx: Context | None = None) -> ModuleOp:
    """Parse (but do not verify) `text` into a module, recording op locations."""
    return LocatedParser(ctx or vyre_context(), text, name).parse_module()
