"""Element types, shared parse/print helpers and the memory effects of the `vyre` ops."""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float64Type,
    IntegerType,
    Signedness,
    StringAttr,
    SymbolRefAttr,
    VectorType,
    f32,
    i1,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue, TypeAttribute
from xdsl.parser import Parser
from xdsl.pattern_rewriter import RewritePattern
from xdsl.printer import Printer
from xdsl.traits import (
    ConditionallySpeculatable,
    EffectInstance,
    HasCanonicalizationPatternsTrait,
    IsTerminator,
    MemoryEffect,
    MemoryEffectKind,
    Pure,
    Resource,
    get_effects,
)
from xdsl.utils.exceptions import VerifyException

from vyre_xdsl import semantics
from vyre_xdsl.dialects.syntax import as_region, parse_body, print_attrs, print_body
from vyre_xdsl.semantics import OPS

if TYPE_CHECKING:
    from vyre_xdsl.dialects.vyre.calls import FuncOp
    from vyre_xdsl.dialects.vyre.structure import BufferOp, ProgramOp

ui32 = IntegerType(32, Signedness.UNSIGNED)
si32 = IntegerType(32, Signedness.SIGNED)

_FLOAT_ATTRIBUTES: dict[str, TypeAttribute] = {
    "f16": Float16Type(),
    "bf16": BFloat16Type(),
    "f32": f32,
    "f64": Float64Type(),
}


def _type_attribute(t: semantics.ElementType) -> TypeAttribute:
    """The xDSL builtin type that spells element type `t` in the IR."""
    if t.family == "bool":
        return i1
    if t.family == "float":
        return _FLOAT_ATTRIBUTES[t.name]
    if t.family == "vector":
        assert t.lane is not None
        return VectorType(_type_attribute(semantics.ELEMENTS[t.lane]), [t.lanes])
    signedness = Signedness.SIGNED if t.is_signed else Signedness.UNSIGNED
    return IntegerType(t.bits, signedness)


#: IR type name -> type attribute, for every element type of `semantics.ELEMENTS`
ELEMENT_TYPES: dict[str, TypeAttribute] = {
    name: _type_attribute(t) for name, t in semantics.ELEMENTS.items()
}
_TYPE_NAMES: dict[Attribute, str] = {ty: name for name, ty in ELEMENT_TYPES.items()}
#: the element types as an error message lists them
SUPPORTED_TYPES = ", ".join(semantics.ELEMENT_TYPE_NAMES)

ACCESS_MODES = ("read_only", "read_write", "write_only", "uniform", "workgroup")
MAX_WORKGROUP = (1024, 1024, 64)
MAX_INVOCATIONS = 1024
#: workgroups per axis of an explicit grid (WebGPU's maxComputeWorkgroupsPerDimension)
MAX_GRID_PER_AXIS = 65535
#: program bindings are host slots, which lie below 2^24 (the workgroup slots start there)
MAX_BINDING = 2**24 - 1


def type_name(t: Attribute) -> str | None:
    """The IR spelling (`ui32`, `si8`, `bf16`, `vector<4xf32>`, ...) of a vyre element
    type, else None."""
    return _TYPE_NAMES.get(t)


def element_info(t: Attribute) -> semantics.ElementType | None:
    """The `semantics.ElementType` of a vyre element type, else None."""
    name = _TYPE_NAMES.get(t)
    return None if name is None else semantics.ELEMENTS[name]


def is_float_type(t: Attribute) -> bool:
    info = element_info(t)
    return info is not None and info.is_float


def _require_element_type(t: Attribute, what: str) -> str:
    name = type_name(t)
    if name is None:
        raise VerifyException(
            f"unsupported element type {t} for {what}; vyre supports {SUPPORTED_TYPES}"
        )
    return name


# ============================================================================ helpers


def enclosing_program(op: Operation) -> ProgramOp | None:
    """The `vyre.program` that contains `op`, if any."""
    from vyre_xdsl.dialects.vyre.structure import ProgramOp

    parent = op.parent_op()
    while parent is not None and not isinstance(parent, ProgramOp):
        parent = parent.parent_op()
    return parent


def enclosing_body(op: Operation) -> ProgramOp | FuncOp | None:
    """The `vyre.program` or `vyre.func` that contains `op`, if any."""
    from vyre_xdsl.dialects.vyre.calls import FuncOp
    from vyre_xdsl.dialects.vyre.structure import ProgramOp

    parent = op.parent_op()
    while parent is not None and not isinstance(parent, ProgramOp | FuncOp):
        parent = parent.parent_op()
    return parent


def _buffer_of(op: Operation, name: str) -> BufferOp:
    program = enclosing_program(op)
    if program is None:
        raise VerifyException(f"'{op.name}' must be inside a 'vyre.program'")
    buffer = program.buffer(name)
    if buffer is None:
        raise VerifyException(f"buffer @{name} is not declared in program @{program.sym_name.data}")
    return buffer


def find_local_declaration(op: Operation, name: str) -> Operation | None:
    """The `vyre.let` or `vyre.loop` that declares named local `name` visible at `op`."""
    from vyre_xdsl.dialects.vyre.calls import FuncOp
    from vyre_xdsl.dialects.vyre.control import LoopOp
    from vyre_xdsl.dialects.vyre.structure import ProgramOp

    current: Operation = op
    while True:
        let = _let_before(current, name)
        if let is not None:
            return let
        parent = current.parent_op()
        if parent is None or isinstance(parent, ProgramOp | FuncOp):
            return None
        if isinstance(parent, LoopOp) and parent.var_name.data == name:
            return parent
        current = parent


def _let_before(op: Operation, name: str) -> Operation | None:
    """The nearest `vyre.let @name` before `op` in its block."""
    from vyre_xdsl.dialects.vyre.memory import LetOp

    block = op.parent
    indexes = _LET_INDEX.get()
    if indexes is not None and block is not None:
        index = indexes.get(block)
        if index is None:
            index = indexes[block] = _BlockLets(block, LetOp)
        return index.before(op, name)
    sibling = op.prev_op
    while sibling is not None:
        if isinstance(sibling, LetOp) and sibling.var_name.data == name:
            return sibling
        sibling = sibling.prev_op
    return None


class _BlockLets:
    """The `vyre.let`s of one block by name, in order, and each op's position: the
    nearest let before an op is a binary search instead of a walk back through the
    block (which made verifying a block of N ops take N^2 steps)."""

    def __init__(self, block: Block, let_type: type[Operation]):
        self.position: dict[Operation, int] = {}
        self.lets: dict[str, tuple[list[int], list[Operation]]] = {}
        for position, op in enumerate(block.ops):
            self.position[op] = position
            if isinstance(op, let_type):
                positions, ops = self.lets.setdefault(op.var_name.data, ([], []))
                positions.append(position)
                ops.append(op)

    def before(self, op: Operation, name: str) -> Operation | None:
        found = self.lets.get(name)
        if found is None:
            return None
        positions, ops = found
        k = bisect.bisect_left(positions, self.position[op])
        return ops[k - 1] if k > 0 else None


#: block -> its lets, while `indexed_lets` is active (None: look up by walking); one
#: per thread, so that verifying in one thread never reads another's index
_LET_INDEX: ContextVar[dict[Block, _BlockLets] | None] = ContextVar("vyre_let_index", default=None)


@contextmanager
def indexed_lets() -> Iterator[None]:
    """Within this block `find_local_declaration` indexes each block it looks in once,
    instead of walking back from every op. The IR must not change inside it: a
    verifier, which only reads, runs in it."""
    if _LET_INDEX.get() is not None:  # already inside one
        yield
        return
    token = _LET_INDEX.set({})
    try:
        yield
    finally:
        _LET_INDEX.reset(token)


def _parse_name(parser: Parser) -> StringAttr:
    return parser.parse_symbol_name()


def _print_name(printer: Printer, name: StringAttr) -> None:
    printer.print_symbol_name(name.data)


def _parse_buffer_index(parser: Parser) -> tuple[SymbolRefAttr, SSAValue]:
    """Parse `@buf[%i]`."""
    buffer = SymbolRefAttr(parser.parse_symbol_name())
    parser.parse_punctuation("[")
    index = parser.parse_operand(ui32)
    parser.parse_punctuation("]")
    return buffer, index


def _print_buffer_index(printer: Printer, buffer: SymbolRefAttr, index: SSAValue) -> None:
    printer.print_string(" ")
    printer.print_symbol_name(buffer.root_reference.data)
    printer.print_string("[")
    printer.print_operand(index)
    printer.print_string("]")


class BufferAddress:
    """The address of a `vyre` memory op, `@buf[%i]` (see `syntax.MemoryOpSyntax`)."""

    ADDRESS_SYNTAX: ClassVar[str] = "@buf[%i]"

    @classmethod
    def parse_address(cls, parser: Parser) -> tuple[str, SSAValue]:
        buffer, index = _parse_buffer_index(parser)
        return buffer.root_reference.data, index

    def print_address(self, printer: Printer) -> None:
        op: Any = self
        _print_buffer_index(printer, op.buffer, op.index)


def _require_ui32_index(index: SSAValue) -> None:
    if index.type != ui32:
        raise VerifyException(f"index must be ui32, got {index.type}")


_print_attrs = print_attrs
_parse_body = parse_body
_print_body = print_body
_as_region = as_region


# ============================================================================ effects
#
# Every op states exactly what it touches, so that any pass that respects xDSL's
# effect interface (`xdsl.traits.get_effects`: dce, cse, canonicalize, hoisting)
# keeps a module's results and traps:
#
# - a buffer is a resource of its own (`BufferResource`, by symbol): loads read it,
#   stores write it, atomics read and write it; a declaration allocates it;
# - a named local is a resource of its own (`LocalResource`, by name): `vyre.let`
#   allocates and writes it, `vyre.assign` writes it, `vyre.var` reads it;
# - an op that may trap writes the `TrapResource` (si32 `div`/`mod`), and is not
#   speculatable; `vyre.trap`, `vyre.return` and barriers keep the conservative
#   write on xDSL's default resource (they order against everything);
# - what cannot change while a program runs is no effect: a buffer that the program
#   declares `read_only` or `uniform` (nothing may write it, the verifier sees to
#   that), and a buffer's length (`vyre.buf_len`).


@dataclass(frozen=True)
class BufferResource(Resource):
    """The contents of one buffer, named by its symbol."""

    buffer: str

    def name(self) -> str:
        return f"buffer @{self.buffer}"


@dataclass(frozen=True)
class LocalResource(Resource):
    """One named local (`vyre.let`, or a loop variable), named by its symbol."""

    local: str

    def name(self) -> str:
        return f"local @{self.local}"


@dataclass(frozen=True)
class TrapResource(Resource):
    """The trap sidecar: an op that may trap writes it and ends its invocation."""

    def name(self) -> str:
        return "trap"


#: the effect of an op that may trap
TRAP_EFFECT = EffectInstance(MemoryEffectKind.WRITE, resource=TrapResource())

#: buffer access modes that no op of the program may write
IMMUTABLE_ACCESS = ("read_only", "uniform")


def buffer_effect(kind: MemoryEffectKind, buffer: str) -> EffectInstance:
    """`kind` on the buffer named `buffer`."""
    return EffectInstance(kind, SymbolRefAttr(buffer), BufferResource(buffer))


def local_effect(kind: MemoryEffectKind, local: str) -> EffectInstance:
    """`kind` on the named local `local`."""
    return EffectInstance(kind, SymbolRefAttr(local), LocalResource(local))


def _is_immutable_buffer(op: Operation, buffer: str) -> bool:
    """Whether the program around `op` declares `buffer` read_only or uniform."""
    program = enclosing_program(op)
    declaration = None if program is None else program.buffer(buffer)
    return declaration is not None and declaration.access_mode in IMMUTABLE_ACCESS


class BufferReadEffect(MemoryEffect):
    """Reads the op's `buffer`; no effect when the program cannot change that buffer."""

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance]:
        name = op.buffer.root_reference.data
        if _is_immutable_buffer(op, name):
            return frozenset()
        return frozenset((buffer_effect(MemoryEffectKind.READ, name),))


class BufferWriteEffect(MemoryEffect):
    """Writes the op's `buffer`."""

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance]:
        name = op.buffer.root_reference.data
        return frozenset((buffer_effect(MemoryEffectKind.WRITE, name),))


class BufferReadWriteEffect(MemoryEffect):
    """Reads and writes the op's `buffer` (atomics)."""

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance]:
        name = op.buffer.root_reference.data
        return frozenset(
            (
                buffer_effect(MemoryEffectKind.READ, name),
                buffer_effect(MemoryEffectKind.WRITE, name),
            )
        )


class DeclaresBuffer(MemoryEffect):
    """Allocates the declared buffer: a declaration is never dead code."""

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance]:
        return frozenset((buffer_effect(MemoryEffectKind.ALLOC, op.sym_name.data),))


class DeclaresLocal(MemoryEffect):
    """Allocates and writes the declared named local: never dead code."""

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance]:
        name = op.var_name.data
        return frozenset(
            (
                local_effect(MemoryEffectKind.ALLOC, name),
                local_effect(MemoryEffectKind.WRITE, name),
            )
        )


class LocalWriteEffect(MemoryEffect):
    """Writes the op's named local (`var_name`)."""

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance]:
        return frozenset((local_effect(MemoryEffectKind.WRITE, op.var_name.data),))


class LocalReadEffect(MemoryEffect):
    """Reads the op's named local (`var_name`)."""

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance]:
        return frozenset((local_effect(MemoryEffectKind.READ, op.var_name.data),))


def _locals_declared_in(op: Operation) -> set[str]:
    """The named locals declared inside `op` (its `vyre.let`s and loops, itself included)."""
    from vyre_xdsl.dialects.vyre.control import LoopOp
    from vyre_xdsl.dialects.vyre.memory import LetOp

    return {inner.var_name.data for inner in op.walk() if isinstance(inner, LetOp | LoopOp)}


class ScopeEffect(MemoryEffect):
    """The effects of the scope's body, less those on named locals declared inside it.

    Shadowing is an error, so a name declared inside the scope is not visible
    around it: effects on it cannot be observed outside.
    """

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance] | None:
        effects: set[EffectInstance] = set()
        for region in op.regions:
            for block in region.blocks:
                for child in block.ops:
                    child_effects = get_effects(child)
                    if child_effects is None:
                        return None
                    effects.update(child_effects)
        inner = _locals_declared_in(op)
        return {
            e
            for e in effects
            if not (isinstance(e.resource, LocalResource) and e.resource.local in inner)
        }


def _may_trap_on(mnemonic: str, operand_type: Attribute, arity: int) -> bool:
    """Whether the table op `mnemonic` can trap on operands of `operand_type`
    (the semantics table's `traps` answers None for a type that never traps)."""
    sem = OPS[mnemonic]
    tname = type_name(operand_type)
    if sem.traps is None or tname is None:
        return sem.traps is not None
    zeros = [np.zeros(1, dtype=semantics.NUMPY_DTYPES[tname])] * arity
    return sem.traps(*zeros) is not None


class TableOpEffect(MemoryEffect, ConditionallySpeculatable):
    """No effect, unless the semantics table says the op may trap on its operand
    type (si32 `div`/`mod`): then it writes the trap sidecar and is not speculatable."""

    @classmethod
    def may_trap(cls, op: Operation) -> bool:
        if not op.operands:
            return False
        mnemonic = op.name.removeprefix("vyre.")
        return _may_trap_on(mnemonic, op.operands[0].type, len(op.operands))

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance]:
        return frozenset((TRAP_EFFECT,)) if cls.may_trap(op) else frozenset()

    @classmethod
    def is_speculatable(cls, op: Operation) -> bool:
        return not cls.may_trap(op)


class VyreCanonicalization(HasCanonicalizationPatternsTrait):
    """The op's canonicalization patterns, from `vyre_xdsl.dialects.vyre.canonicalization`
    (imported on first use, as xDSL's own dialects do)."""

    def get_patterns(self, op: type[Operation]) -> tuple[RewritePattern, ...]:
        from vyre_xdsl.dialects.vyre.canonicalization import patterns_for

        return patterns_for(op.name)

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return ()


class CallEffect(MemoryEffect, ConditionallySpeculatable):
    """A call does what its callee does: nothing when the callee is pure; it writes
    the trap sidecar when the callee may trap (then it is not speculatable);
    unknown (conservative) while the callee cannot be found."""

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance] | None:
        from vyre_xdsl.dialects.vyre.calls import find_func, func_effects

        callee = find_func(op, op.callee_name)
        return None if callee is None else func_effects(callee)

    @classmethod
    def is_speculatable(cls, op: Operation) -> bool:
        return cls.get_effects(op) == frozenset()


def is_expression(op: Operation) -> bool:
    """Whether `op` computes its results from its operands alone (it may still
    trap, so it is not always xDSL-`Pure`). The barrier verifier needs it, so it
    lives here; `vyre_xdsl.analysis` re-exports it."""
    return (
        not op.regions
        and (op.has_trait(Pure) or op.has_trait(TableOpEffect) or op.has_trait(CallEffect))
        and not op.has_trait(IsTerminator)
    )


# ============================================================================ structure
