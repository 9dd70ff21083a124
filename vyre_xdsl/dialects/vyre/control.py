"""Control flow of the `vyre` dialect: scopes, loops, barriers, return and trap."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import MemoryWriteEffect
from xdsl.utils.exceptions import VerifyException

from vyre_xdsl.dialects.syntax import (
    BarrierOpBase,
    BlockOpBase,
    IfOpBase,
    RegionOpBase,
    ScopeOpBase,
    TrapOpBase,
)
from vyre_xdsl.dialects.vyre.arithmetic import ConstOp
from vyre_xdsl.dialects.vyre.common import (
    ScopeEffect,
    _as_region,
    _parse_body,
    _parse_name,
    _print_attrs,
    _print_body,
    _print_name,
    enclosing_body,
    find_local_declaration,
    is_expression,
    ui32,
)
from vyre_xdsl.dialects.vyre.ids import InvocationIdOp, LocalIdOp, NumWorkgroupsOp, WorkgroupIdOp
from vyre_xdsl.dialects.vyre.memory import BufLenOp, VarOp
from vyre_xdsl.dialects.vyre.structure import ProgramOp


class _ScopeOp(ScopeOpBase):
    traits = traits_def(ScopeEffect())


@irdl_op_definition
class IfOp(IfOpBase):
    """Runs `then` when the `i1` condition holds, else `else`; each branch is a scope.

    ```mlir
    vyre.if %c {
      vyre.store @out[%i] = %a : ui32
    } else {
      vyre.store @out[%i] = %b : ui32
    }
    ```
    """

    name = "vyre.if"
    traits = traits_def(ScopeEffect())


@irdl_op_definition
class LoopOp(_ScopeOp):
    """Half-open counted loop, step 1; bounds are evaluated once.

    The loop variable is a `ui32` named local read with `vyre.var`; each
    iteration is a fresh scope.

    ```mlir
    vyre.loop @k = %lo to %hi {
      %k = vyre.var @k : ui32
    }
    ```
    """

    name = "vyre.loop"
    var_name = prop_def(StringAttr)
    lower = operand_def(ui32)
    upper = operand_def(ui32)
    body = region_def("single_block")

    def __init__(
        self,
        var_name: str,
        lower: SSAValue | Operation,
        upper: SSAValue | Operation,
        body: Region | Sequence[Operation] | None = None,
    ):
        super().__init__(
            operands=[lower, upper],
            properties={"var_name": StringAttr(var_name)},
            regions=[_as_region(body)],
        )

    @classmethod
    def parse(cls, parser: Parser) -> LoopOp:
        name = _parse_name(parser)
        parser.parse_punctuation("=")
        lower = parser.parse_operand(ui32)
        parser.parse_keyword("to")
        upper = parser.parse_operand(ui32)
        body = _parse_body(parser)
        op = cls(name.data, lower, upper, body)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        _print_name(printer, self.var_name)
        printer.print_string(" = ")
        printer.print_operand(self.lower)
        printer.print_string(" to ")
        printer.print_operand(self.upper)
        _print_body(printer, self.body)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        if enclosing_body(self) is None:
            raise VerifyException("'vyre.loop' must be inside a 'vyre.program' or a 'vyre.func'")
        if find_local_declaration(self, self.var_name.data) is not None:
            raise VerifyException(
                f"loop variable @{self.var_name.data} shadows a visible named local"
            )


@irdl_op_definition
class BlockOp(BlockOpBase):
    """A scope.

    ```mlir
    vyre.block {
      vyre.let @t = %x : f32
    }
    ```
    """

    name = "vyre.block"
    traits = traits_def(ScopeEffect())


@irdl_op_definition
class RegionOp(RegionOpBase):
    """A scope that carries provenance (the generator that produced it).

    ```mlir
    vyre.region "vyre.fuse.arm0" {
      vyre.store @out[%i] = %v : f32
    }
    ```
    """

    name = "vyre.region"
    traits = traits_def(ScopeEffect())


def is_workgroup_uniform(value: SSAValue) -> bool:
    """Whether `value` is the same for every invocation of a workgroup (conservative).

    Constants, `buf_len`, `workgroup_id`, reads of a loop variable whose bounds
    are workgroup-uniform, and pure ops over such values. The barrier verifier
    needs it, so it lives here; `vyre_xdsl.analysis` re-exports it next to the
    dispatch-wide notion. Iterative over the definitions it depends on, so a
    long chain of ops cannot exhaust the Python stack.
    """
    return uniform_through(value, _uniformity_step)


def uniform_through(
    value: SSAValue, step: Callable[[SSAValue], tuple[bool | None, Sequence[SSAValue]]]
) -> bool:
    """Whether no value `value` depends on is varying, by `step`: (False, ()) for a
    varying value, else (None, the values its uniformity depends on). Iterative,
    each value visited once."""
    seen: set[SSAValue] = set()
    pending = [value]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        verdict, operands = step(current)
        if verdict is False:
            return False
        pending.extend(operands)
    return True


def _uniformity_step(value: SSAValue) -> tuple[bool | None, Sequence[SSAValue]]:
    """(False, ()) when `value` may vary per invocation; else (None, the values its
    uniformity depends on)."""
    from vyre_xdsl.dialects.vyre.subgroups import SubgroupLocalIdOp

    owner = value.owner
    if not isinstance(owner, Operation):
        return False, ()
    if isinstance(owner, ConstOp | BufLenOp | WorkgroupIdOp | NumWorkgroupsOp):
        return None, ()
    if isinstance(owner, InvocationIdOp | LocalIdOp | SubgroupLocalIdOp):
        return False, ()
    if isinstance(owner, VarOp):
        declaration = find_local_declaration(owner, owner.var_name.data)
        if isinstance(declaration, LoopOp):
            return None, (declaration.lower, declaration.upper)
        return False, ()
    if is_expression(owner):
        return None, tuple(owner.operands)
    return False, ()


#: what the barrier and collective errors say counts as uniform (`_uniformity_step`)
UNIFORM_VALUES = (
    "the same in every invocation of a workgroup are constants, buf_len, workgroup_id, "
    "num_workgroups, the variable of a loop with such bounds and pure ops of them, not a "
    "loaded value (even from a uniform buffer: give a size as a buffer's buf_len)"
)


def _is_uniform_loop(loop: LoopOp) -> bool:
    return is_workgroup_uniform(loop.lower) and is_workgroup_uniform(loop.upper)


def _divergent_ancestor(op: Operation) -> Operation | None:
    """The innermost `if`/`loop` around `op` whose control depends on the invocation."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, ProgramOp):
        if isinstance(parent, IfOp) and not is_workgroup_uniform(parent.cond):
            return parent
        if isinstance(parent, LoopOp) and not _is_uniform_loop(parent):
            return parent
        parent = parent.parent_op()
    return None


def barriers_after_divergent_returns(program: Operation) -> list[tuple[Operation, str]]:
    """Each `vyre.barrier` of `program` after a `vyre.return` that only some
    invocations take (in program order), with its error: one walk of the program."""
    errors: list[tuple[Operation, str]] = []
    returned = False
    for op in program.walk():
        if isinstance(op, ReturnOp) and _divergent_ancestor(op) is not None:
            returned = True
        elif returned and isinstance(op, BarrierOp):
            errors.append((op, "barrier after a 'vyre.return' that only some invocations take"))
    return errors


def _only_scopes_above(op: Operation) -> bool:
    """Whether every op between `op` and its program is a `vyre.block`/`vyre.region`."""
    parent = op.parent_op()
    while isinstance(parent, BlockOp | RegionOp):
        parent = parent.parent_op()
    return isinstance(parent, ProgramOp)


@irdl_op_definition
class BarrierOp(BarrierOpBase):
    """Workgroup barrier; `grid_sync` is dispatch-wide and only legal where a pass
    splits the dispatch there.

    ```mlir
    vyre.barrier
    vyre.barrier acq_rel
    vyre.barrier grid_sync
    ```
    """

    name = "vyre.barrier"

    @property
    def is_grid_sync(self) -> bool:
        return self.ordering.data == "grid_sync"

    def verify_(self) -> None:
        super().verify_()
        if (divergent := _divergent_ancestor(self)) is not None:
            raise VerifyException(
                f"barrier under invocation-dependent control flow ('{divergent.name}' "
                f"whose condition or bounds depend on the invocation); {UNIFORM_VALUES}"
            )
        if self.is_grid_sync and not _only_scopes_above(self):
            raise VerifyException(
                "'grid_sync' barrier must be at the top level of its program or in "
                "'vyre.block'/'vyre.region' scopes there (not in a loop or an if)"
            )
        # a barrier after a `vyre.return` only some invocations take is found by
        # the program's own verifier, in one walk (`barriers_after_divergent_returns`)


@irdl_op_definition
class ReturnOp(IRDLOperation):
    """Ends this invocation.

    ```mlir
    vyre.return
    ```
    """

    name = "vyre.return"
    traits = traits_def(MemoryWriteEffect())
    assembly_format = "attr-dict"


@irdl_op_definition
class TrapOp(TrapOpBase):
    """Records (tag, address, invocation) in the trap sidecar and ends the invocation.

    ```mlir
    vyre.trap %addr "bad_index"
    ```
    """

    name = "vyre.trap"
