"""Functions and calls of the `vyre` dialect."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet

from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import (
    EffectInstance,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    SymbolOpInterface,
    get_effects,
)
from xdsl.utils.exceptions import VerifyException

from vyre_xdsl.dialects.verify import body_errors, raise_body_errors
from vyre_xdsl.dialects.vyre.common import (
    CallEffect,
    LocalResource,
    _parse_body,
    _print_attrs,
    _print_body,
    _require_element_type,
    indexed_lets,
    is_expression,
)
from vyre_xdsl.dialects.vyre.control import BlockOp, IfOp, LoopOp
from vyre_xdsl.dialects.vyre.ids import _IdOp
from vyre_xdsl.dialects.vyre.memory import AssignOp, BufLenOp, LetOp, VarOp
from vyre_xdsl.dialects.vyre.structure import SCOPE_OPS
from vyre_xdsl.dialects.vyre.subgroups import _SubgroupIdOp


def _module_of(op: Operation) -> Operation:
    """The outermost op around `op` (the module, once `op` is inserted)."""
    top = op
    while (parent := top.parent_op()) is not None:
        top = parent
    return top


def find_func(op: Operation, name: str) -> FuncOp | None:
    """The module-level `vyre.func @name` of the module around `op`, if any."""
    top = _module_of(op)
    for region in top.regions:
        for block in region.blocks:
            for candidate in block.ops:
                if isinstance(candidate, FuncOp) and candidate.sym_name.data == name:
                    return candidate
    return None


def funcs(module: ModuleOp) -> list[FuncOp]:
    """The functions of a module, in order."""
    return [op for op in module.ops if isinstance(op, FuncOp)]


def _callees(func: FuncOp) -> Iterator[str]:
    for op in func.body.walk():
        if isinstance(op, CallOp):
            yield op.callee_name


def call_cycle(func: FuncOp) -> list[str] | None:
    """A chain of function names from `func` back to itself through calls, if any."""
    start = func.sym_name.data
    stack: list[tuple[FuncOp, list[str]]] = [(func, [start])]
    seen: set[str] = set()
    while stack:
        current, path = stack.pop()
        for name in _callees(current):
            if name == start:
                return [*path, name]
            if name in seen:
                continue
            seen.add(name)
            callee = find_func(func, name)
            if callee is not None:
                stack.append((callee, [*path, name]))
    return None


def func_effects(func: FuncOp) -> AbstractSet[EffectInstance] | None:
    """What running `func` does, seen from its caller: the effects of the ops in its
    body (and of the functions it calls), less those on its own named locals, which
    the caller cannot see. None when an op's effects are unknown."""
    effects: set[EffectInstance] = set()
    pending, seen = [func], {func.sym_name.data}
    while pending:
        current = pending.pop()
        for op in current.body.walk():
            if isinstance(op, CallOp):
                callee = find_func(op, op.callee_name)
                if callee is None:
                    return None
                if callee.sym_name.data not in seen:
                    seen.add(callee.sym_name.data)
                    pending.append(callee)
                continue
            if op.regions or op is current:
                continue
            op_effects = get_effects(op)
            if op_effects is None:
                return None
            effects.update(e for e in op_effects if not isinstance(e.resource, LocalResource))
    return frozenset(effects)


def _is_func_statement(op: Operation) -> bool:
    """Whether `op` may appear inside a function: the pure expressions (no buffer
    access, no per-invocation ids: a function computes from its arguments alone),
    named locals, `if`/`loop`/`block`, calls and the final `vyre.yield`."""
    if isinstance(op, LetOp | AssignOp | VarOp | IfOp | LoopOp | BlockOp | CallOp | YieldOp):
        return True
    if op.dialect_name() != "vyre" or isinstance(op, _IdOp | BufLenOp | _SubgroupIdOp):
        return False
    return is_expression(op)


@irdl_op_definition
class FuncOp(IRDLOperation):
    """A function at module level, beside the programs: pure expressions of its
    arguments, named locals, `if`/`loop`/`block` and calls, ending in `vyre.yield`.

    It declares no buffers and reads no ids; calls to it are inlined before fusion,
    lowering and interpretation (`vyre-inline`). Recursion is an error.

    ```mlir
    vyre.func @lerp(%a: f32, %b: f32, %t: f32) -> f32 {
      %d = vyre.sub %b, %a : f32
      %r = vyre.fma %d, %t, %a : f32
      vyre.yield %r : f32
    }
    ```
    """

    name = "vyre.func"
    sym_name = prop_def(StringAttr)
    function_type = prop_def(FunctionType)
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), SymbolOpInterface())

    def __init__(
        self,
        name: str,
        argument_types: Sequence[Attribute],
        result_type: Attribute,
        body: Region | None = None,
    ):
        if body is None:
            body = Region(Block(arg_types=argument_types))
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "function_type": FunctionType.from_lists(list(argument_types), [result_type]),
            },
            regions=[body],
        )

    @property
    def argument_types(self) -> tuple[Attribute, ...]:
        return tuple(self.function_type.inputs.data)

    @property
    def result_type(self) -> Attribute:
        return self.function_type.outputs.data[0]

    @property
    def yield_op(self) -> YieldOp | None:
        last = self.body.block.last_op
        return last if isinstance(last, YieldOp) else None

    @classmethod
    def parse(cls, parser: Parser) -> FuncOp:
        name = parser.parse_symbol_name()
        arguments = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=True)
        )
        parser.parse_punctuation("->", " and the result type after the arguments")
        result_type = parser.parse_type()
        body = _parse_body(parser, arguments)
        op = cls(name.data, [a.type for a in arguments], result_type, body)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string("(")
        printer.print_list(self.body.block.args, printer.print_block_argument)
        printer.print_string(") -> ")
        printer.print_attribute(self.result_type)
        _print_body(printer, self.body)
        _print_attrs(printer, self)

    def verify(self, verify_nested_ops: bool = True) -> None:
        with indexed_lets():  # verifying changes nothing
            raise_body_errors(body_errors(self, _is_func_statement, SCOPE_OPS, "a 'vyre.func'"))
            super().verify(verify_nested_ops)

    def verify_(self) -> None:
        name = self.sym_name.data
        if len(self.function_type.outputs.data) != 1:
            raise VerifyException(f"function @{name} must have exactly one result type")
        block_types = tuple(arg.type for arg in self.body.block.args)
        if block_types != self.argument_types:
            raise VerifyException(f"the arguments of function @{name} do not match its type")
        for index, ty in enumerate((*self.argument_types, self.result_type)):
            what = (
                f"argument #{index} of function @{name}"
                if index < len(block_types)
                else f"the result of function @{name}"
            )
            _require_element_type(ty, what)
        if self.yield_op is None:
            raise VerifyException(f"function @{name} must end with 'vyre.yield %r : T'")
        if self.yield_op.value.type != self.result_type:
            raise VerifyException(
                f"function @{name} returns {self.result_type}, but yields a {self.yield_op.value.type}"
            )
        if (cycle := call_cycle(self)) is not None:
            chain = " -> ".join(f"@{n}" for n in cycle)
            raise VerifyException(
                f"recursive call {chain}; vyre functions are inlined and cannot recurse"
            )


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a function with its result; the last op of a `vyre.func` body.

    ```mlir
    vyre.yield %r : f32
    ```
    """

    name = "vyre.yield"
    value = operand_def()
    traits = traits_def(IsTerminator(), HasParent(FuncOp), Pure())

    def __init__(self, value: SSAValue | Operation):
        super().__init__(operands=[value])

    @classmethod
    def parse(cls, parser: Parser) -> YieldOp:
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        op = cls(parser.resolve_operand(unresolved, parser.parse_type()))
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.value)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)
        _print_attrs(printer, self)


def _defined_operand(parser: Parser, operand: UnresolvedOperand) -> SSAValue:
    """The already-defined value that `operand` names (a parse error otherwise)."""
    values = parser.ssa_values.get(operand.operand_name)
    if values is None or operand.index >= len(values):
        parser.raise_error(
            f"call argument %{operand.operand_name} is used before its definition", operand.span
        )
    return values[operand.index]


@irdl_op_definition
class CallOp(IRDLOperation):
    """Calls a module-level `vyre.func`; its effects are the callee's (a call of a
    pure function is pure).

    ```mlir
    %r = vyre.call @lerp(%x, %y, %t) : f32
    ```
    """

    name = "vyre.call"
    callee = prop_def(SymbolRefAttr)
    arguments = var_operand_def()
    result = result_def()
    traits = traits_def(CallEffect())

    def __init__(
        self, callee: str, arguments: Sequence[SSAValue | Operation], result_type: Attribute
    ):
        super().__init__(
            operands=[list(arguments)],
            properties={"callee": SymbolRefAttr(callee)},
            result_types=[result_type],
        )

    @property
    def callee_name(self) -> str:
        return self.callee.root_reference.data

    @classmethod
    def parse(cls, parser: Parser) -> CallOp:
        callee = parser.parse_symbol_name()
        unresolved = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        parser.parse_punctuation(":")
        result_type = parser.parse_type()
        # the syntax names only the result type: an argument is a value defined
        # above the call (dominance), whose type the verifier checks against the callee
        arguments = [_defined_operand(parser, u) for u in unresolved]
        op = cls(callee.data, arguments, result_type)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.callee_name)
        printer.print_string("(")
        printer.print_list(self.arguments, printer.print_operand)
        printer.print_string(") : ")
        printer.print_attribute(self.result.type)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        name = self.callee_name
        callee = find_func(self, name)
        if callee is None:
            raise VerifyException(
                f"call to undefined function @{name}; define it with 'vyre.func @{name}(...) -> T {{ ... }}' at module level"
            )
        expected = callee.argument_types
        if len(self.arguments) != len(expected):
            raise VerifyException(
                f"function @{name} takes {len(expected)} argument(s), but the call passes {len(self.arguments)}"
            )
        for index, (arg, ty) in enumerate(zip(self.arguments, expected)):
            if arg.type != ty:
                raise VerifyException(
                    f"argument #{index} of the call to @{name} is a {arg.type}, but the function takes {ty}"
                )
        if self.result.type != callee.result_type:
            raise VerifyException(
                f"function @{name} returns {callee.result_type}, but the call expects {self.result.type}"
            )
