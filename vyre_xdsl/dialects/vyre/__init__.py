"""The `vyre` dialect: GPU compute programs over named buffers.

A module holds one or more `vyre.program` ops, run in order; they share buffers
by name. See SPEC section 3 for the contract this file implements.

```mlir
vyre.program @axpy workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[1024]
  vyre.buffer @y binding 1 read_write : f32[1024]
  %i = vyre.invocation_id x
  %a = vyre.const 2.0 : f32
  %xv = vyre.load @x[%i] : f32
  %yv = vyre.load @y[%i] : f32
  %p = vyre.mul %a, %xv : f32
  %s = vyre.add %p, %yv : f32
  vyre.store @y[%i] = %s : f32
}
```
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from xdsl.dialect_interfaces.constant_materialization import (
    ConstantMaterializationInterface,
)
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    Float16Type,
    Float64Type,
    FloatAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    VectorType,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.interfaces import HasFolderInterface
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.pattern_rewriter import RewritePattern
from xdsl.printer import Printer
from xdsl.traits import (
    AlwaysSpeculatable,
    ConditionallySpeculatable,
    ConstantLike,
    EffectInstance,
    HasCanonicalizationPatternsTrait,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    MemoryEffect,
    MemoryEffectKind,
    MemoryWriteEffect,
    NoTerminator,
    Pure,
    Resource,
    SymbolOpInterface,
    get_effects,
)
from xdsl.utils.exceptions import VerifyException

from vyre_xdsl import semantics
from vyre_xdsl.dialects.syntax import (
    AXES,
    BARRIER_ORDERINGS,
    I32_MAX,
    BarrierOpBase,
    BlockOpBase,
    IdOpBase,
    IfOpBase,
    RegionOpBase,
    ScopeOpBase,
    TrapOpBase,
    as_region,
    count_problem,
    parse_body,
    parse_int_in,
    parse_int_triple_in,
    parse_shaped_type,
    print_attrs,
    print_body,
    print_shaped_type,
)
from vyre_xdsl.dialects.verify import body_errors, raise_body_errors
from vyre_xdsl.semantics import OPS

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
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, ProgramOp):
        parent = parent.parent_op()
    return parent


def enclosing_body(op: Operation) -> ProgramOp | FuncOp | None:
    """The `vyre.program` or `vyre.func` that contains `op`, if any."""
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
    current: Operation = op
    while True:
        sibling = current.prev_op
        while sibling is not None:
            if isinstance(sibling, LetOp) and sibling.var_name.data == name:
                return sibling
            sibling = sibling.prev_op
        parent = current.parent_op()
        if parent is None or isinstance(parent, ProgramOp | FuncOp):
            return None
        if isinstance(parent, LoopOp) and parent.var_name.data == name:
            return parent
        current = parent


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
    """The op's canonicalization patterns, from `vyre_xdsl.dialects.vyre_canonicalization`
    (imported on first use, as xDSL's own dialects do)."""

    def get_patterns(self, op: type[Operation]) -> tuple[RewritePattern, ...]:
        from vyre_xdsl.dialects.vyre_canonicalization import patterns_for

        return patterns_for(op.name)

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return ()


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

#: the ops whose regions are scopes
SCOPE_OPS = ("vyre.if", "vyre.loop", "vyre.block", "vyre.region")


#: `{` then what starts a statement (`%r =`, `vyre.op ...`, `"generic.op"(`, or `}`),
#: not an attribute entry (`name`, `name = ...`)
_BODY_START = re.compile(
    r'\{(?:\s|//[^\n]*)*(?:%|\}|"[^"\n]*"\s*\(|[A-Za-z_][\w$.]*\.[\w$.]*\s+[^\s=,}])'
)


def _body_follows(parser: Parser) -> bool:
    """Whether the next token opens the program body (rather than an attribute dict)."""
    return _BODY_START.match(parser.lexer.input.content, parser.pos) is not None


def _is_vyre_statement(op: Operation) -> bool:
    """Whether `op` may appear inside a program: any vyre op but a program."""
    return op.dialect_name() == "vyre" and not isinstance(op, ProgramOp | FuncOp | YieldOp)


@irdl_op_definition
class ProgramOp(IRDLOperation):
    """One compute program: its body runs once per invocation.

    Buffer declarations come first, then statements. The optional attribute
    dictionary after the name carries flags such as `non_composable`, and
    `indirect = @grid`: the program launches `grid[0] x grid[1] x grid[2]`
    workgroups, read from that ui32 buffer when the program starts (after the
    programs before it ran), instead of a grid derived from buffer lengths;
    `indirect_offset = B` reads the three words from byte `B` of the buffer
    (a multiple of 4; upstream's `count_offset`).

    `grid [GX, GY, GZ]` after the workgroup size launches exactly GX x GY x GZ
    workgroups (each axis 1 ... 65535), whatever the buffer lengths; the ids
    span it on every axis (`invocation_id a = workgroup_id a x workgroup_size a
    + local_id a`). It excludes `indirect`.

    ```mlir
    vyre.program @tile workgroup_size [16, 16, 1] grid [4, 2, 1] {
      vyre.buffer @out binding 0 write_only : ui32[2048]
      %x = vyre.invocation_id x
      %y = vyre.invocation_id y
      %w = vyre.const 64 : ui32
      %row = vyre.mul %y, %w : ui32
      %i = vyre.add %row, %x : ui32
      vyre.store @out[%i] = %i : ui32
    }
    ```

    ```mlir
    vyre.program @consume {indirect = @grid} workgroup_size [64, 1, 1] {
      vyre.buffer @grid binding 2 read_only : ui32[3]
      vyre.buffer @out binding 1 read_write : ui32[?]
      %i = vyre.invocation_id x
      vyre.store @out[%i] = %i : ui32
    }
    ```

    ```mlir
    vyre.program @second {indirect = @grid, indirect_offset = 12} workgroup_size [64, 1, 1] {
      vyre.buffer @grid binding 2 read_only : ui32[6]
      vyre.buffer @out binding 1 read_write : ui32[?]
      %i = vyre.invocation_id x
      vyre.store @out[%i] = %i : ui32
    }
    ```

    ```mlir
    vyre.program @double workgroup_size [64, 1, 1] {
      vyre.buffer @x binding 0 read_write : ui32[?]
      %i = vyre.invocation_id x
      %v = vyre.load @x[%i] : ui32
      %d = vyre.add %v, %v : ui32
      vyre.store @x[%i] = %d : ui32
    }
    ```
    """

    name = "vyre.program"

    sym_name = prop_def(StringAttr)
    workgroup_size = prop_def(DenseArrayBase)
    grid = opt_prop_def(DenseArrayBase)
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), NoTerminator(), SymbolOpInterface())

    def __init__(
        self,
        name: str,
        workgroup_size: Sequence[int],
        body: Region | Sequence[Operation] | None = None,
        attributes: dict[str, Attribute] | None = None,
        grid: Sequence[int] | None = None,
    ):
        properties: dict[str, Attribute] = {
            "sym_name": StringAttr(name),
            "workgroup_size": DenseArrayBase.from_list(i32, list(workgroup_size)),
        }
        if grid is not None:
            properties["grid"] = DenseArrayBase.from_list(i32, list(grid))
        super().__init__(
            properties=properties,
            regions=[_as_region(body)],
            attributes=attributes or {},
        )

    @property
    def explicit_grid(self) -> tuple[int, int, int] | None:
        """The workgroups per axis of `grid [GX, GY, GZ]`, or None (a derived or
        indirect grid)."""
        if self.grid is None:
            return None
        x, y, z = self.grid.get_values()
        return int(x), int(y), int(z)

    @property
    def workgroup(self) -> tuple[int, int, int]:
        x, y, z = self.workgroup_size.get_values()
        return int(x), int(y), int(z)

    @property
    def fixed_launch(self) -> bool:
        """Whether the program must launch exactly its own grid: it has an
        explicit one, or reads `vyre.num_workgroups` (fusion keeps it apart)."""
        if self.explicit_grid is not None:
            return True
        return any(isinstance(op, NumWorkgroupsOp) for op in self.walk())

    @property
    def non_composable(self) -> bool:
        return "non_composable" in self.attributes

    @property
    def indirect_buffer(self) -> str | None:
        """The buffer whose words 0..2 are the grid (`{indirect = @grid}`), or None."""
        attr = self.attributes.get("indirect")
        return attr.root_reference.data if isinstance(attr, SymbolRefAttr) else None

    @property
    def indirect_offset(self) -> int:
        """The byte offset of the indirect grid in its buffer (`indirect_offset = B`), 0 by default."""
        attr = self.attributes.get("indirect_offset")
        return attr.value.data if isinstance(attr, IntegerAttr) else 0

    def buffers(self) -> Iterator[BufferOp]:
        """The buffer declarations, in order."""
        for op in self.body.block.ops:
            if isinstance(op, BufferOp):
                yield op

    def buffer(self, name: str) -> BufferOp | None:
        for buffer in self.buffers():
            if buffer.sym_name.data == name:
                return buffer
        return None

    def statements(self) -> Iterator[Operation]:
        for op in self.body.block.ops:
            if not isinstance(op, BufferOp):
                yield op

    @classmethod
    def parse(cls, parser: Parser) -> ProgramOp:
        name = parser.parse_symbol_name()
        if _body_follows(parser):
            parser.raise_error(
                f"expected 'workgroup_size [X, Y, Z]' after @{name.data}, "
                f"e.g. 'vyre.program @{name.data} workgroup_size [64, 1, 1] {{ ... }}'"
            )
        attributes = parser.parse_optional_attr_dict()
        parser.parse_keyword(
            "workgroup_size", " after the program name (e.g. workgroup_size [64, 1, 1])"
        )
        sizes = parse_int_triple_in(
            parser,
            "workgroup_size",
            -I32_MAX - 1,
            I32_MAX,
            f"the limits are {list(MAX_WORKGROUP)} per axis and {MAX_INVOCATIONS} invocations",
        )
        grid = None
        if parser.parse_optional_keyword("grid") is not None:
            grid = parse_int_triple_in(
                parser,
                "grid",
                -I32_MAX - 1,
                I32_MAX,
                f"each axis launches 1 ... {MAX_GRID_PER_AXIS} workgroups",
            )
        body = _parse_body(parser)
        op = cls(name.data, sizes, body, grid=grid)
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        _print_attrs(printer, self)
        printer.print_string(" workgroup_size [")
        printer.print_string(", ".join(str(v) for v in self.workgroup_size.get_values()))
        printer.print_string("]")
        if self.explicit_grid is not None:
            printer.print_string(f" grid [{', '.join(str(g) for g in self.explicit_grid)}]")
        _print_body(printer, self.body)

    def verify(self, verify_nested_ops: bool = True) -> None:
        # whole-body checks first: the ops' own verifiers follow operand
        # definitions, which is only safe once every use is dominated
        raise_body_errors(
            body_errors(self, _is_vyre_statement, SCOPE_OPS, "a 'vyre.program'")
            or barriers_after_divergent_returns(self)
        )
        super().verify(verify_nested_ops)

    def verify_(self) -> None:
        sizes = self.workgroup_size.get_values()
        if len(sizes) != 3:
            raise VerifyException("workgroup_size must have exactly 3 axes")
        for axis, (size, limit) in enumerate(zip(sizes, MAX_WORKGROUP)):
            if size < 1:
                raise VerifyException(
                    f"workgroup_size axis {AXES[axis]} is {size}; every axis must be >= 1"
                )
            if size > limit:
                raise VerifyException(
                    f"workgroup_size axis {AXES[axis]} is {size}; the limit is {limit}"
                )
        total = int(np.prod(sizes))
        if total > MAX_INVOCATIONS:
            raise VerifyException(
                f"workgroup_size {list(sizes)} has {total} invocations; the limit is {MAX_INVOCATIONS}"
            )
        self._verify_indirect()
        self._verify_grid()
        seen: set[str] = set()
        for buffer in self.buffers():
            if buffer.sym_name.data in seen:
                raise VerifyException(f"buffer @{buffer.sym_name.data} is declared twice")
            seen.add(buffer.sym_name.data)
        seen_statement = False
        for op in self.body.block.ops:
            if not isinstance(op, BufferOp):
                seen_statement = True
            elif seen_statement:
                raise VerifyException(
                    f"buffer @{op.sym_name.data} is declared after a statement; "
                    "declarations come first"
                )

    def _verify_grid(self) -> None:
        """`grid [GX, GY, GZ]`: three axes, each 1 ... 65535; not with `indirect`."""
        if self.grid is None:
            return
        values = list(self.grid.get_values())
        if len(values) != 3:
            raise VerifyException("grid must have exactly 3 axes [GX, GY, GZ]")
        for axis, value in enumerate(values):
            if not 1 <= value <= MAX_GRID_PER_AXIS:
                raise VerifyException(
                    f"grid axis {AXES[axis]} is {value} workgroups; every axis must launch "
                    f"1 ... {MAX_GRID_PER_AXIS} workgroups (the device limit per dimension)"
                )
        if "indirect" in self.attributes:
            raise VerifyException(
                "a program has either an explicit grid or an indirect one, not both: "
                "remove 'grid [...]' or the 'indirect' attribute"
            )

    def _verify_indirect(self) -> None:
        """`{indirect = @grid}`: @grid is a declared host `ui32` buffer of at least 3
        elements (`indirect_offset / 4 + 3` with an offset)."""
        if "indirect" not in self.attributes:
            if "indirect_offset" in self.attributes:
                raise VerifyException(
                    "'indirect_offset' needs an indirect grid, e.g. "
                    "{indirect = @grid, indirect_offset = 12}"
                )
            return
        offset = self.attributes.get("indirect_offset")
        if offset is not None and not (
            isinstance(offset, IntegerAttr)
            and offset.value.data >= 0
            and offset.value.data % 4 == 0
        ):
            raise VerifyException(
                f"indirect grid offset {offset} is not a non-negative multiple of 4 bytes "
                "(the grid is three ui32 words); e.g. indirect_offset = 12"
            )
        name = self.indirect_buffer
        if name is None:
            raise VerifyException(
                "'indirect' must name a buffer of the program, e.g. {indirect = @grid}"
            )
        buffer = self.buffer(name)
        if buffer is None:
            raise VerifyException(
                f"indirect grid buffer @{name} is not declared in @{self.sym_name.data}. "
                f"Fix: declare it, e.g. 'vyre.buffer @{name} binding 3 read_only : ui32[3]'"
            )
        count = buffer.static_count
        if buffer.is_workgroup or buffer.element != "ui32":
            raise VerifyException(
                f"indirect grid buffer @{name} must be a host ui32 buffer with a static "
                "count of at least 3 (the workgroups on x, y and z)"
            )
        needed = self.indirect_offset // 4 + 3
        if count is None or count < needed:
            at = f" from byte {self.indirect_offset}" if self.indirect_offset else ""
            raise VerifyException(
                f"indirect grid buffer @{name} must be a host ui32 buffer with a static "
                f"count of at least {needed} (the workgroups on x, y and z{at})"
            )


@irdl_op_definition
class BufferOp(IRDLOperation):
    """Declares a buffer of the enclosing program.

    ```mlir
    vyre.buffer @x binding 0 read_only : f32[1024]
    vyre.buffer @out binding 1 read_write output : ui32[?]
    vyre.buffer @tile workgroup : f32[64]
    ```
    """

    name = "vyre.buffer"

    sym_name = prop_def(StringAttr)
    binding = opt_prop_def(IntegerAttr)
    access = prop_def(StringAttr)
    element_type = prop_def(TypeAttribute)
    count = opt_prop_def(IntegerAttr)
    output = opt_prop_def(UnitAttr)

    traits = traits_def(HasParent(ProgramOp), SymbolOpInterface(), DeclaresBuffer())

    def __init__(
        self,
        name: str,
        access: str,
        element_type: Attribute | str,
        count: int | None,
        binding: int | None = None,
        output: bool = False,
    ):
        if isinstance(element_type, str):
            element_type = ELEMENT_TYPES[element_type]
        properties: dict[str, Attribute] = {
            "sym_name": StringAttr(name),
            "access": StringAttr(access),
            "element_type": element_type,
        }
        if binding is not None:
            properties["binding"] = IntegerAttr(binding, i64)
        if count is not None:
            properties["count"] = IntegerAttr(count, i64)
        if output:
            properties["output"] = UnitAttr()
        super().__init__(properties=properties)

    @property
    def buffer_name(self) -> str:
        return self.sym_name.data

    @property
    def access_mode(self) -> str:
        return self.access.data

    @property
    def element(self) -> str:
        return type_name(self.element_type) or str(self.element_type)

    @property
    def static_count(self) -> int | None:
        """The declared element count, or None when runtime-sized (`?`)."""
        return None if self.count is None else self.count.value.data

    @property
    def binding_slot(self) -> int | None:
        return None if self.binding is None else self.binding.value.data

    @property
    def is_output(self) -> bool:
        return self.output is not None

    @property
    def is_workgroup(self) -> bool:
        return self.access_mode == "workgroup"

    @classmethod
    def parse(cls, parser: Parser) -> BufferOp:
        name = parser.parse_symbol_name()
        binding = None
        if parser.parse_optional_keyword("binding") is not None:
            binding = parse_int_in(parser, "binding", 0, MAX_BINDING)
        pos = parser.pos
        access = parser.parse_identifier()
        if access not in ACCESS_MODES:
            parser.raise_error(
                f"expected access mode, one of {', '.join(ACCESS_MODES)}", pos, parser.pos
            )
        output = parser.parse_optional_keyword("output") is not None
        element_type, count = parse_shaped_type(parser)
        op = cls(name.data, access, element_type, count, binding, output)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.buffer_name)
        if self.binding_slot is not None:
            printer.print_string(f" binding {self.binding_slot}")
        printer.print_string(f" {self.access_mode}")
        if self.is_output:
            printer.print_string(" output")
        print_shaped_type(printer, self.element_type, self.static_count)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        if self.access_mode not in ACCESS_MODES:
            raise VerifyException(
                f"unknown access mode '{self.access_mode}'; expected one of {', '.join(ACCESS_MODES)}"
            )
        _require_element_type(self.element_type, f"buffer @{self.buffer_name}")
        if (problem := count_problem(self.static_count, f"buffer @{self.buffer_name}")) is not None:
            raise VerifyException(problem)
        if self.binding_slot is not None and not 0 <= self.binding_slot <= MAX_BINDING:
            raise VerifyException(
                f"binding {self.binding_slot} of buffer @{self.buffer_name} is out of range; "
                f"bindings are between 0 and {MAX_BINDING} (2^24 - 1)"
            )
        if self.is_workgroup:
            if self.binding is not None:
                raise VerifyException(f"workgroup buffer @{self.buffer_name} takes no binding")
            if not self.static_count:
                raise VerifyException(
                    f"workgroup buffer @{self.buffer_name} needs a static element count > 0"
                )
            if self.is_output:
                raise VerifyException(f"workgroup buffer @{self.buffer_name} cannot be an output")


# ============================================================================ statements


class _NamedValueOp(IRDLOperation):
    """Shared parse/print of `vyre.let @v = %x : T` and `vyre.assign @v = %x : T`."""

    var_name = prop_def(StringAttr)
    value = operand_def()

    def __init__(self, var_name: str, value: SSAValue | Operation):
        super().__init__(operands=[value], properties={"var_name": StringAttr(var_name)})

    @classmethod
    def parse(cls, parser: Parser):
        name = _parse_name(parser)
        parser.parse_punctuation("=")
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        value = parser.resolve_operand(unresolved, parser.parse_type())
        op = cls(name.data, value)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        _print_name(printer, self.var_name)
        printer.print_string(" = ")
        printer.print_operand(self.value)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)
        _print_attrs(printer, self)


@irdl_op_definition
class LetOp(_NamedValueOp):
    """Declares named local `v` in the current scope.

    Shadowing a visible name is an error.

    ```mlir
    %zero = vyre.const 0 : ui32
    vyre.let @acc = %zero : ui32
    ```
    """

    name = "vyre.let"
    traits = traits_def(DeclaresLocal())

    def verify_(self) -> None:
        _require_element_type(self.value.type, f"named local @{self.var_name.data}")
        if enclosing_body(self) is None:
            raise VerifyException("'vyre.let' must be inside a 'vyre.program' or a 'vyre.func'")
        previous = find_local_declaration(self, self.var_name.data)
        if previous is not None:
            raise VerifyException(
                f"named local @{self.var_name.data} is already declared in a visible scope; "
                "shadowing is not allowed"
            )


@irdl_op_definition
class AssignOp(_NamedValueOp):
    """Mutates the nearest visible named local.

    ```mlir
    vyre.assign @acc = %next : ui32
    ```
    """

    name = "vyre.assign"
    traits = traits_def(LocalWriteEffect())

    def verify_(self) -> None:
        declaration = find_local_declaration(self, self.var_name.data)
        if declaration is None:
            raise VerifyException(f"assignment to undeclared named local @{self.var_name.data}")
        if isinstance(declaration, LoopOp):
            raise VerifyException(
                f"@{self.var_name.data} is a loop variable and cannot be assigned"
            )
        if declaration.value.type != self.value.type:
            raise VerifyException(
                f"@{self.var_name.data} has type {declaration.value.type}, "
                f"but a {self.value.type} is assigned"
            )


@irdl_op_definition
class VarOp(IRDLOperation):
    """Reads named local `v` (a `vyre.let` or a loop variable).

    ```mlir
    %a = vyre.var @acc : ui32
    ```
    """

    name = "vyre.var"
    var_name = prop_def(StringAttr)
    result = result_def()
    traits = traits_def(LocalReadEffect())

    def __init__(self, var_name: str, result_type: Attribute | str):
        if isinstance(result_type, str):
            result_type = ELEMENT_TYPES[result_type]
        super().__init__(properties={"var_name": StringAttr(var_name)}, result_types=[result_type])

    @classmethod
    def parse(cls, parser: Parser) -> VarOp:
        name = _parse_name(parser)
        parser.parse_punctuation(":")
        op = cls(name.data, parser.parse_type())
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        _print_name(printer, self.var_name)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        declaration = find_local_declaration(self, self.var_name.data)
        if declaration is None:
            raise VerifyException(f"read of undeclared named local @{self.var_name.data}")
        declared = ui32 if isinstance(declaration, LoopOp) else declaration.value.type
        if declared != self.result.type:
            raise VerifyException(
                f"@{self.var_name.data} has type {declared}, but is read as {self.result.type}"
            )


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Stores to a buffer element; an out-of-bounds store does nothing.

    ```mlir
    vyre.store @out[%i] = %v : f32
    ```
    """

    name = "vyre.store"
    buffer = prop_def(SymbolRefAttr)
    index = operand_def()
    value = operand_def()
    traits = traits_def(BufferWriteEffect())

    def __init__(self, buffer: str, index: SSAValue | Operation, value: SSAValue | Operation):
        super().__init__(operands=[index, value], properties={"buffer": SymbolRefAttr(buffer)})

    @property
    def buffer_name(self) -> str:
        return self.buffer.root_reference.data

    @classmethod
    def parse(cls, parser: Parser) -> StoreOp:
        buffer, index = _parse_buffer_index(parser)
        parser.parse_punctuation("=")
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        value = parser.resolve_operand(unresolved, parser.parse_type())
        op = cls(buffer.root_reference.data, index, value)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        _print_buffer_index(printer, self.buffer, self.index)
        printer.print_string(" = ")
        printer.print_operand(self.value)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        _require_ui32_index(self.index)
        buffer = _buffer_of(self, self.buffer_name)
        if buffer.access_mode in ("read_only", "uniform"):
            raise VerifyException(f"store to {buffer.access_mode} buffer @{self.buffer_name}")
        if buffer.element_type != self.value.type:
            raise VerifyException(
                f"buffer @{self.buffer_name} holds {buffer.element_type}, "
                f"but a {self.value.type} is stored"
            )


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
                "whose condition or bounds depend on the invocation)"
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


# ============================================================================ expressions


def _bits_dtype(info: semantics.ElementType) -> np.dtype:
    """The unsigned integer dtype as wide as one value of float type `info`."""
    return np.dtype(f"uint{info.bits}")


def _format_float(value: float, tname: str = "f32") -> str:
    """A float literal of type `tname` that parses back to the same bits: the
    shortest decimal that does (`0.005`, not the f64 digits of the f32
    nearest to it), or the hex bit pattern for an infinity or a NaN."""
    info = semantics.ELEMENTS[tname]
    typed = np.array(value, dtype=info.dtype)
    bits = typed.view(_bits_dtype(info))
    if not np.isfinite(typed.astype(np.float64)):
        digits = info.bits // 4
        return f"0x{int(bits):0{digits}X}"
    exact = float(typed)
    for precision in range(1, 18):
        shortest = float(f"{exact:.{precision}g}")
        with np.errstate(over="ignore"):  # 4e+38 rounds to an f32 infinity: not it
            if np.array(shortest, dtype=info.dtype).view(_bits_dtype(info)) == bits:
                break
    text = repr(shortest)  # those digits, as Python writes a float (17 always suffice)
    mantissa, e, exponent = text.partition("e")
    if e and "." not in mantissa:  # an MLIR float literal needs the point: 1.0e+300
        text = f"{mantissa}.0e{exponent}"
    return text


@irdl_op_definition
class ConstOp(IRDLOperation, HasFolderInterface):
    """A literal. An f32 may be written as a hex bit pattern (`0x7FC00000 : f32`).

    A float of any width may be written as a hex bit pattern of its width
    (`0x7E00 : f16`).

    ```mlir
    %a = vyre.const 7 : ui32
    %b = vyre.const -3 : si32
    %c = vyre.const 1.5 : f32
    %d = vyre.const true : i1
    %e = vyre.const 255 : ui8
    %f = vyre.const 0.5 : bf16
    ```
    """

    name = "vyre.const"
    value = prop_def(IntegerAttr | FloatAttr)
    result = result_def()
    traits = traits_def(Pure(), ConstantLike())

    def __init__(
        self, value: int | float | bool | IntegerAttr | FloatAttr, ty: Attribute | str | None = None
    ):
        if isinstance(ty, str):
            ty = ELEMENT_TYPES[ty]
        if isinstance(value, IntegerAttr | FloatAttr):
            attr = value
            ty = value.type
        elif is_float_type(ty):
            info = element_info(ty)
            assert info is not None
            attr = FloatAttr(float(np.array(value, dtype=info.dtype)), ty)
        elif ty == i1:
            attr = IntegerAttr(-1 if value else 0, i1)
        else:
            assert ty is not None, "a type is needed for an integer constant"
            attr = IntegerAttr(int(value), ty)
        super().__init__(properties={"value": attr}, result_types=[ty])

    def literal(self) -> int | float | bool:
        """The value as a Python scalar (bool for i1)."""
        if isinstance(self.value, FloatAttr):
            return float(self.value.value.data)
        if self.result.type == i1:
            return self.value.value.data != 0
        return self.value.value.data

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        return (self.value,)

    @classmethod
    def parse(cls, parser: Parser) -> ConstOp:
        start = parser.pos
        boolean = parser.parse_optional_boolean()
        is_hex = parser._current_token.text.lower().startswith("0x")  # noqa: SLF001
        number = None if boolean is not None else parser.parse_number()
        end = parser.pos
        parser.parse_punctuation(":")
        type_start = parser.pos
        ty = parser.parse_type()
        info = element_info(ty)
        if info is None:
            parser.raise_error(
                f"unsupported element type {ty}; vyre supports {SUPPORTED_TYPES}",
                type_start,
                parser.pos,
            )
        if boolean is not None and ty != i1:
            parser.raise_error(f"'true'/'false' are i1 literals, not {ty}", start, end)
        if info.family == "vector":
            parser.raise_error(f"there are no {ty} literals", type_start, parser.pos)
        if boolean is not None:
            value: int | float | bool = boolean
        elif info.is_float:
            value = _parse_float(number, is_hex, info)
            if value is None:
                parser.raise_error(
                    f"hex literal out of range for a {info.name} bit pattern", start, end
                )
        else:
            if not isinstance(number, int):
                parser.raise_error(f"expected an integer literal for {ty}", start, end)
            lo, hi = info.int_range
            if not lo <= number <= hi:
                parser.raise_error(
                    f"literal {number} is out of range for {ty} [{lo}, {hi}]", start, end
                )
            value = number
        op = cls(value, ty)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        literal = self.literal()
        if isinstance(literal, bool):
            text = "true" if literal else "false"
        elif isinstance(literal, float):
            text = _format_float(literal, type_name(self.result.type) or "f32")
        else:
            text = str(literal)
        printer.print_string(f" {text} : ")
        printer.print_attribute(self.result.type)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        _require_element_type(self.result.type, "'vyre.const'")
        if self.value.type != self.result.type:
            raise VerifyException(
                f"literal type {self.value.type} differs from result type {self.result.type}"
            )


def _parse_float(number: int | float, is_hex: bool, info: semantics.ElementType) -> float | None:
    """A float literal: a decimal number, or a hex bit pattern of the type's width
    such as 0x7F800000 (f32) or 0x7C00 (f16)."""
    if not is_hex:
        return float(number)
    if not 0 <= number < 2**info.bits:
        return None
    return float(np.array(number, dtype=_bits_dtype(info)).view(info.dtype))


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Loads a buffer element; out of bounds gives the typed zero.

    ```mlir
    %v = vyre.load @x[%i] : f32
    ```
    """

    name = "vyre.load"
    buffer = prop_def(SymbolRefAttr)
    index = operand_def()
    result = result_def()
    traits = traits_def(BufferReadEffect(), AlwaysSpeculatable())

    def __init__(self, buffer: str, index: SSAValue | Operation, result_type: Attribute | str):
        if isinstance(result_type, str):
            result_type = ELEMENT_TYPES[result_type]
        super().__init__(
            operands=[index],
            properties={"buffer": SymbolRefAttr(buffer)},
            result_types=[result_type],
        )

    @property
    def buffer_name(self) -> str:
        return self.buffer.root_reference.data

    @classmethod
    def parse(cls, parser: Parser) -> LoadOp:
        buffer, index = _parse_buffer_index(parser)
        parser.parse_punctuation(":")
        op = cls(buffer.root_reference.data, index, parser.parse_type())
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        _print_buffer_index(printer, self.buffer, self.index)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        _require_ui32_index(self.index)
        buffer = _buffer_of(self, self.buffer_name)
        if buffer.element_type != self.result.type:
            raise VerifyException(
                f"buffer @{self.buffer_name} holds {buffer.element_type}, "
                f"but is loaded as {self.result.type}"
            )


@irdl_op_definition
class BufLenOp(IRDLOperation):
    """The element count of a buffer, as `ui32`.

    ```mlir
    %n = vyre.buf_len @x
    ```
    """

    name = "vyre.buf_len"
    buffer = prop_def(SymbolRefAttr)
    result = result_def(ui32)
    traits = traits_def(Pure())

    def __init__(self, buffer: str):
        super().__init__(properties={"buffer": SymbolRefAttr(buffer)}, result_types=[ui32])

    @property
    def buffer_name(self) -> str:
        return self.buffer.root_reference.data

    @classmethod
    def parse(cls, parser: Parser) -> BufLenOp:
        op = cls(parser.parse_symbol_name().data)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.buffer_name)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        _buffer_of(self, self.buffer_name)


class _IdOp(IdOpBase):
    """Shared parse/print of the invocation id ops: `%g = vyre.invocation_id x`."""


@irdl_op_definition
class InvocationIdOp(_IdOp):
    """The global invocation id on one axis.

    ```mlir
    %g = vyre.invocation_id x
    ```
    """

    name = "vyre.invocation_id"


@irdl_op_definition
class WorkgroupIdOp(_IdOp):
    """The workgroup id on one axis.

    ```mlir
    %w = vyre.workgroup_id y
    ```
    """

    name = "vyre.workgroup_id"


@irdl_op_definition
class LocalIdOp(_IdOp):
    """The invocation id within its workgroup on one axis.

    ```mlir
    %l = vyre.local_id z
    ```
    """

    name = "vyre.local_id"


@irdl_op_definition
class RepetitionOp(IRDLOperation):
    """The current repetition of a run, `0 .. N - 1`, when the module runs
    `repeat=N` times (`exe.run(inputs, repeat=N)`, `vyre-run --repeat N`); 0 in
    a run without `repeat`. The same value in every invocation and every
    program of one repetition. Pure (no memory effects), but not a constant:
    no pass may fold it.

    ```mlir
    %r = vyre.repetition
    ```
    """

    name = "vyre.repetition"

    result = result_def(ui32)
    traits = traits_def(Pure())
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__(result_types=[ui32])


@irdl_op_definition
class NumWorkgroupsOp(_IdOp):
    """The number of workgroups launched on one axis: the explicit grid's, the
    derived grid's (as launched: folded over y past 65535 workgroups) or the
    indirect grid's.

    ```mlir
    %n = vyre.num_workgroups x
    ```
    """

    name = "vyre.num_workgroups"


def _constant_array(value: SSAValue) -> np.ndarray | None:
    owner = value.owner
    if not isinstance(owner, ConstOp):
        return None
    tname = type_name(owner.result.type)
    return semantics.literal_array(owner.literal(), tname)


def _attribute_for(array: np.ndarray, ty: Attribute) -> Attribute:
    scalar = array.reshape(-1)[0]
    if is_float_type(ty):
        return FloatAttr(float(scalar), ty)
    if ty == i1:
        return IntegerAttr(-1 if bool(scalar) else 0, i1)
    return IntegerAttr(int(scalar), ty)


class _TableOp(IRDLOperation, HasFolderInterface):
    """An op whose meaning is the `semantics.OPS` entry named after it."""

    @classmethod
    def semantics(cls) -> semantics.OpSemantics:
        return OPS[cls.name.removeprefix("vyre.")]

    def _check_operand_type(self, ty: Attribute) -> None:
        sem = self.semantics()
        tname = type_name(ty)
        if tname not in sem.types:
            raise VerifyException(
                f"'{self.name}' does not accept {ty}; it takes {', '.join(sem.types)}"
            )

    def fold(self) -> Sequence[SSAValue | Attribute] | None:
        sem = self.semantics()
        if sem.ulp and any(is_float_type(v.type) for v in self.operands):
            return None  # approximate on the GPU: leave it to the device
        args = [_constant_array(v) for v in self.operands]
        if any(a is None for a in args):
            return None
        if sem.traps is not None and (mask := sem.traps(*args)) is not None and mask.any():
            return None
        with np.errstate(all="ignore"):
            result = np.asarray(sem.evaluate(*args))
        return (_attribute_for(result, self.results[0].type),)


class BinaryOp(_TableOp):
    """`%r = vyre.OP %a, %b : T` with both operands and the result of type T."""

    T: ClassVar = VarConstraint("T", AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    traits = traits_def(TableOpEffect(), VyreCanonicalization())
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($result)"

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        super().__init__(operands=[lhs, rhs], result_types=[SSAValue.get(lhs).type])

    def verify_(self) -> None:
        self._check_operand_type(self.lhs.type)


class CompareOp(_TableOp):
    """`%r = vyre.OP %a, %b : T` comparing two T operands to an `i1`."""

    T: ClassVar = VarConstraint("T", AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(i1)
    traits = traits_def(TableOpEffect(), VyreCanonicalization())
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs)"

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        super().__init__(operands=[lhs, rhs], result_types=[i1])

    def verify_(self) -> None:
        self._check_operand_type(self.lhs.type)


class UnaryOp(_TableOp):
    """`%r = vyre.OP %a : T`."""

    T: ClassVar = VarConstraint("T", AnyAttr())
    operand = operand_def(T)
    result = result_def(T)
    traits = traits_def(TableOpEffect(), VyreCanonicalization())
    assembly_format = "$operand attr-dict `:` type($result)"

    def __init__(self, operand: SSAValue | Operation):
        super().__init__(operands=[operand], result_types=[SSAValue.get(operand).type])

    def verify_(self) -> None:
        self._check_operand_type(self.operand.type)


class PredicateOp(_TableOp):
    """`%r = vyre.OP %a : T` giving an `i1`."""

    operand = operand_def()
    result = result_def(i1)
    traits = traits_def(TableOpEffect(), VyreCanonicalization())
    assembly_format = "$operand attr-dict `:` type($operand)"

    def __init__(self, operand: SSAValue | Operation):
        super().__init__(operands=[operand], result_types=[i1])

    def verify_(self) -> None:
        self._check_operand_type(self.operand.type)


class LogicOp(CompareOp):
    """`%r = vyre.OP %a, %b : T` combining the truth of two T operands (an `i1`, or
    a `ui32` that is true when non-zero) into an `i1`."""


class UnsignedResultBinaryOp(_TableOp):
    """`%r = vyre.OP %a, %b : T` whose result is a `ui32` whatever T is (upstream's
    result type of `abs_diff` and `mul_high`)."""

    T: ClassVar = VarConstraint("T", AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(ui32)
    traits = traits_def(TableOpEffect(), VyreCanonicalization())
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs)"

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        super().__init__(operands=[lhs, rhs], result_types=[ui32])

    def verify_(self) -> None:
        self._check_operand_type(self.lhs.type)


class UnsignedResultUnaryOp(_TableOp):
    """`%r = vyre.OP %a : T` whose result is a `ui32` whatever T is (upstream's
    `unpack*`)."""

    operand = operand_def()
    result = result_def(ui32)
    traits = traits_def(TableOpEffect(), VyreCanonicalization())
    assembly_format = "$operand attr-dict `:` type($operand)"

    def __init__(self, operand: SSAValue | Operation):
        super().__init__(operands=[operand], result_types=[ui32])

    def verify_(self) -> None:
        self._check_operand_type(self.operand.type)


# One class per entry of the semantics table. The class gives the op its name,
# its operand shape (the base class) and its documentation; the arithmetic rule is
# looked up in `semantics.OPS` by mnemonic, never written here.


@irdl_op_definition
class AddOp(BinaryOp):
    """Addition; `ui32` and `si32` wrap around.

    ```mlir
    %r = vyre.add %a, %b : ui32
    ```
    """

    name = "vyre.add"


@irdl_op_definition
class SubOp(BinaryOp):
    """Subtraction; `ui32` and `si32` wrap around.

    ```mlir
    %r = vyre.sub %a, %b : ui32
    ```
    """

    name = "vyre.sub"


@irdl_op_definition
class MulOp(BinaryOp):
    """Multiplication; `ui32` and `si32` wrap around.

    ```mlir
    %r = vyre.mul %a, %b : ui32
    ```
    """

    name = "vyre.mul"


@irdl_op_definition
class DivOp(BinaryOp):
    """Division. `ui32` by 0 gives 4294967295; `si32` by 0, or INT_MIN by -1, traps
    (so the op is not pure on `si32`); `f32` division is IEEE, within 3 ULP on a GPU.

    ```mlir
    %r = vyre.div %a, %b : ui32
    ```
    """

    name = "vyre.div"


@irdl_op_definition
class ModOp(BinaryOp):
    """Truncated remainder (the sign of the dividend). `ui32` by 0 gives 0; `si32` by 0,
    or INT_MIN by -1, traps (so the op is not pure on `si32`).

    ```mlir
    %r = vyre.mod %a, %b : ui32
    ```
    """

    name = "vyre.mod"


@irdl_op_definition
class MinOp(BinaryOp):
    """The smaller operand; `f32`: a NaN operand gives the other one, min(-0, +0) is -0.

    ```mlir
    %r = vyre.min %a, %b : ui32
    ```
    """

    name = "vyre.min"


@irdl_op_definition
class MaxOp(BinaryOp):
    """The larger operand; `f32`: a NaN operand gives the other one, max(-0, +0) is +0.

    ```mlir
    %r = vyre.max %a, %b : ui32
    ```
    """

    name = "vyre.max"


@irdl_op_definition
class BitAndOp(BinaryOp):
    """Bitwise and.

    ```mlir
    %r = vyre.bit_and %a, %b : ui32
    ```
    """

    name = "vyre.bit_and"


@irdl_op_definition
class BitOrOp(BinaryOp):
    """Bitwise or.

    ```mlir
    %r = vyre.bit_or %a, %b : ui32
    ```
    """

    name = "vyre.bit_or"


@irdl_op_definition
class BitXorOp(BinaryOp):
    """Bitwise exclusive or.

    ```mlir
    %r = vyre.bit_xor %a, %b : ui32
    ```
    """

    name = "vyre.bit_xor"


@irdl_op_definition
class ShlOp(BinaryOp):
    """Shift left; the shift amount is masked to its low 5 bits.

    ```mlir
    %r = vyre.shl %a, %b : ui32
    ```
    """

    name = "vyre.shl"


@irdl_op_definition
class ShrOp(BinaryOp):
    """Shift right (arithmetic on `si32`, logical on `ui32`); the amount is masked to 5 bits.

    ```mlir
    %r = vyre.shr %a, %b : ui32
    ```
    """

    name = "vyre.shr"


@irdl_op_definition
class AbsDiffOp(UnsignedResultBinaryOp):
    """`|a - b|` without wrap-around, as a `ui32` (also for `si32` operands, where
    it is exact: the distance is below 2^32).

    ```mlir
    %r = vyre.abs_diff %a, %b : si32  // %r : ui32
    ```
    """

    name = "vyre.abs_diff"


@irdl_op_definition
class SaturatingAddOp(BinaryOp):
    """Addition clamped to 4294967295.

    ```mlir
    %r = vyre.saturating_add %a, %b : ui32
    ```
    """

    name = "vyre.saturating_add"


@irdl_op_definition
class SaturatingSubOp(BinaryOp):
    """Subtraction clamped to 0.

    ```mlir
    %r = vyre.saturating_sub %a, %b : ui32
    ```
    """

    name = "vyre.saturating_sub"


@irdl_op_definition
class MulHighOp(UnsignedResultBinaryOp):
    """The high 32 bits of the 64-bit product, as a `ui32`; `si32` operands
    multiply as signed numbers (the result holds the bits of the signed high word).

    ```mlir
    %r = vyre.mul_high %a, %b : si32  // %r : ui32
    ```
    """

    name = "vyre.mul_high"


@irdl_op_definition
class SaturatingMulOp(BinaryOp):
    """Multiplication clamped to 4294967295 (`ui32`, as upstream).

    ```mlir
    %r = vyre.saturating_mul %a, %b : ui32
    ```
    """

    name = "vyre.saturating_mul"


@irdl_op_definition
class RotateLeftOp(BinaryOp):
    """Rotate left by the low 5 bits of the amount.

    ```mlir
    %r = vyre.rotate_left %a, %b : ui32
    ```
    """

    name = "vyre.rotate_left"


@irdl_op_definition
class RotateRightOp(BinaryOp):
    """Rotate right by the low 5 bits of the amount.

    ```mlir
    %r = vyre.rotate_right %a, %b : ui32
    ```
    """

    name = "vyre.rotate_right"


@irdl_op_definition
class EqOp(CompareOp):
    """Equality (`f32`: IEEE, NaN is unequal to everything).

    ```mlir
    %r = vyre.eq %a, %b : ui32  // %r : i1
    ```
    """

    name = "vyre.eq"


@irdl_op_definition
class NeOp(CompareOp):
    """Inequality (`f32`: IEEE, true when an operand is NaN).

    ```mlir
    %r = vyre.ne %a, %b : ui32  // %r : i1
    ```
    """

    name = "vyre.ne"


@irdl_op_definition
class LtOp(CompareOp):
    """Less than (`f32`: false when an operand is NaN).

    ```mlir
    %r = vyre.lt %a, %b : ui32  // %r : i1
    ```
    """

    name = "vyre.lt"


@irdl_op_definition
class LeOp(CompareOp):
    """Less than or equal (`f32`: false when an operand is NaN).

    ```mlir
    %r = vyre.le %a, %b : ui32  // %r : i1
    ```
    """

    name = "vyre.le"


@irdl_op_definition
class GtOp(CompareOp):
    """Greater than (`f32`: false when an operand is NaN).

    ```mlir
    %r = vyre.gt %a, %b : ui32  // %r : i1
    ```
    """

    name = "vyre.gt"


@irdl_op_definition
class GeOp(CompareOp):
    """Greater than or equal (`f32`: false when an operand is NaN).

    ```mlir
    %r = vyre.ge %a, %b : ui32  // %r : i1
    ```
    """

    name = "vyre.ge"


@irdl_op_definition
class AndOp(LogicOp):
    """Logical and of two `i1`, or of the truth of two `ui32` (non-zero is true).

    ```mlir
    %r = vyre.and %a, %b : i1
    %t = vyre.and %x, %y : ui32  // %t : i1
    ```
    """

    name = "vyre.and"


@irdl_op_definition
class OrOp(LogicOp):
    """Logical or of two `i1`, or of the truth of two `ui32` (non-zero is true).

    ```mlir
    %r = vyre.or %a, %b : i1
    %t = vyre.or %x, %y : ui32  // %t : i1
    ```
    """

    name = "vyre.or"


@irdl_op_definition
class NotOp(PredicateOp):
    """Logical not of an `i1`, or whether a `ui32` is zero (upstream's truthiness).

    ```mlir
    %r = vyre.not %a : i1
    %z = vyre.not %x : ui32  // %z : i1
    ```
    """

    name = "vyre.not"


@irdl_op_definition
class NegOp(UnaryOp):
    """Negation; `si32` wraps (neg INT_MIN is INT_MIN).

    ```mlir
    %r = vyre.neg %a : si32
    ```
    """

    name = "vyre.neg"


@irdl_op_definition
class BitNotOp(UnaryOp):
    """Bitwise complement.

    ```mlir
    %r = vyre.bit_not %a : ui32
    ```
    """

    name = "vyre.bit_not"


@irdl_op_definition
class PopcountOp(UnaryOp):
    """The number of one bits.

    ```mlir
    %r = vyre.popcount %a : ui32
    ```
    """

    name = "vyre.popcount"


@irdl_op_definition
class ClzOp(UnaryOp):
    """The number of leading zero bits (32 for 0).

    ```mlir
    %r = vyre.clz %a : ui32
    ```
    """

    name = "vyre.clz"


@irdl_op_definition
class CtzOp(UnaryOp):
    """The number of trailing zero bits (32 for 0).

    ```mlir
    %r = vyre.ctz %a : ui32
    ```
    """

    name = "vyre.ctz"


@irdl_op_definition
class ReverseBitsOp(UnaryOp):
    """The 32 bits in reverse order.

    ```mlir
    %r = vyre.reverse_bits %a : ui32
    ```
    """

    name = "vyre.reverse_bits"


@irdl_op_definition
class AbsOp(UnaryOp):
    """Absolute value; `si32` wraps (abs INT_MIN is INT_MIN).

    ```mlir
    %r = vyre.abs %a : ui32
    ```
    """

    name = "vyre.abs"


@irdl_op_definition
class SignOp(UnaryOp):
    """-1, 0 or 1 (`f32`: NaN stays NaN).

    ```mlir
    %r = vyre.sign %a : si32
    ```
    """

    name = "vyre.sign"


@irdl_op_definition
class SqrtOp(UnaryOp):
    """Square root (within 3 ULP on a GPU).

    ```mlir
    %r = vyre.sqrt %a : f32
    ```
    """

    name = "vyre.sqrt"


@irdl_op_definition
class InverseSqrtOp(UnaryOp):
    """`1 / sqrt(a)` (within 3 ULP on a GPU).

    ```mlir
    %r = vyre.inverse_sqrt %a : f32
    ```
    """

    name = "vyre.inverse_sqrt"


@irdl_op_definition
class FloorOp(UnaryOp):
    """Round toward negative infinity.

    ```mlir
    %r = vyre.floor %a : f32
    ```
    """

    name = "vyre.floor"


@irdl_op_definition
class CeilOp(UnaryOp):
    """Round toward positive infinity.

    ```mlir
    %r = vyre.ceil %a : f32
    ```
    """

    name = "vyre.ceil"


@irdl_op_definition
class RoundOp(UnaryOp):
    """Round to nearest, ties to even.

    ```mlir
    %r = vyre.round %a : f32
    ```
    """

    name = "vyre.round"


@irdl_op_definition
class TruncOp(UnaryOp):
    """Round toward zero.

    ```mlir
    %r = vyre.trunc %a : f32
    ```
    """

    name = "vyre.trunc"


@irdl_op_definition
class ExpOp(UnaryOp):
    """`e^a` (approximate on a GPU: 64 ULP).

    ```mlir
    %r = vyre.exp %a : f32
    ```
    """

    name = "vyre.exp"


@irdl_op_definition
class Exp2Op(UnaryOp):
    """`2^a` (approximate on a GPU: 64 ULP).

    ```mlir
    %r = vyre.exp2 %a : f32
    ```
    """

    name = "vyre.exp2"


@irdl_op_definition
class LogOp(UnaryOp):
    """Natural logarithm (approximate on a GPU: 16 ULP).

    ```mlir
    %r = vyre.log %a : f32
    ```
    """

    name = "vyre.log"


@irdl_op_definition
class Log2Op(UnaryOp):
    """Base-2 logarithm (approximate on a GPU: 16 ULP).

    ```mlir
    %r = vyre.log2 %a : f32
    ```
    """

    name = "vyre.log2"


@irdl_op_definition
class SinOp(UnaryOp):
    """Sine (approximate on a GPU; see the semantics table for its budget).

    ```mlir
    %r = vyre.sin %a : f32
    ```
    """

    name = "vyre.sin"


@irdl_op_definition
class CosOp(UnaryOp):
    """Cosine (approximate on a GPU; see the semantics table for its budget).

    ```mlir
    %r = vyre.cos %a : f32
    ```
    """

    name = "vyre.cos"


@irdl_op_definition
class TanOp(UnaryOp):
    """Tangent (approximate on a GPU; see the semantics table for its budget).

    ```mlir
    %r = vyre.tan %a : f32
    ```
    """

    name = "vyre.tan"


@irdl_op_definition
class TanhOp(UnaryOp):
    """Hyperbolic tangent (approximate on a GPU; see the semantics table for its budget).

    ```mlir
    %r = vyre.tanh %a : f32
    ```
    """

    name = "vyre.tanh"


@irdl_op_definition
class ReciprocalOp(UnaryOp):
    """`1 / a` (within 3 ULP on a GPU).

    ```mlir
    %r = vyre.reciprocal %a : f32
    ```
    """

    name = "vyre.reciprocal"


@irdl_op_definition
class AcosOp(UnaryOp):
    """Arc cosine (NaN outside [-1, 1]; WGSL's accuracy is inherited from `atan2`).

    ```mlir
    %r = vyre.acos %a : f32
    ```
    """

    name = "vyre.acos"


@irdl_op_definition
class AsinOp(UnaryOp):
    """Arc sine (NaN outside [-1, 1]; WGSL's accuracy is inherited from `atan2`).

    ```mlir
    %r = vyre.asin %a : f32
    ```
    """

    name = "vyre.asin"


@irdl_op_definition
class AtanOp(UnaryOp):
    """Arc tangent (within 4096 ULP on a GPU).

    ```mlir
    %r = vyre.atan %a : f32
    ```
    """

    name = "vyre.atan"


@irdl_op_definition
class SinhOp(UnaryOp):
    """Hyperbolic sine (WGSL: as accurate as `(exp(a) - exp(-a)) * 0.5`).

    ```mlir
    %r = vyre.sinh %a : f32
    ```
    """

    name = "vyre.sinh"


@irdl_op_definition
class CoshOp(UnaryOp):
    """Hyperbolic cosine (WGSL: as accurate as `(exp(a) + exp(-a)) * 0.5`).

    ```mlir
    %r = vyre.cosh %a : f32
    ```
    """

    name = "vyre.cosh"


@irdl_op_definition
class Unpack4LowOp(UnsignedResultUnaryOp):
    """The low nibble of a 32-bit integer, `a & 0xF`, as a `ui32`.

    ```mlir
    %r = vyre.unpack4_low %a : ui32
    ```
    """

    name = "vyre.unpack4_low"


@irdl_op_definition
class Unpack4HighOp(UnsignedResultUnaryOp):
    """The second nibble of a 32-bit integer, `(a >> 4) & 0xF`, as a `ui32`
    (upstream's definition: bits 4..7, not the top nibble).

    ```mlir
    %r = vyre.unpack4_high %a : si32  // %r : ui32
    ```
    """

    name = "vyre.unpack4_high"


@irdl_op_definition
class Unpack8LowOp(UnsignedResultUnaryOp):
    """The low byte of a 32-bit integer, `a & 0xFF`, as a `ui32`.

    ```mlir
    %r = vyre.unpack8_low %a : ui32
    ```
    """

    name = "vyre.unpack8_low"


@irdl_op_definition
class Unpack8HighOp(UnsignedResultUnaryOp):
    """The high byte of a 32-bit integer, `(a >> 24) & 0xFF`, as a `ui32`.

    ```mlir
    %r = vyre.unpack8_high %a : si32  // %r : ui32
    ```
    """

    name = "vyre.unpack8_high"


@irdl_op_definition
class IsNanOp(PredicateOp):
    """Whether the operand is a NaN.

    ```mlir
    %r = vyre.is_nan %a : f32  // %r : i1
    ```
    """

    name = "vyre.is_nan"


@irdl_op_definition
class IsInfOp(PredicateOp):
    """Whether the operand is an infinity.

    ```mlir
    %r = vyre.is_inf %a : f32  // %r : i1
    ```
    """

    name = "vyre.is_inf"


@irdl_op_definition
class IsFiniteOp(PredicateOp):
    """Whether the operand is neither NaN nor an infinity.

    ```mlir
    %r = vyre.is_finite %a : f32  // %r : i1
    ```
    """

    name = "vyre.is_finite"


#: every op whose meaning is an entry of the semantics table, in table order
_TABLE_OP_CLASSES: tuple[type[_TableOp], ...] = (
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    ModOp,
    MinOp,
    MaxOp,
    BitAndOp,
    BitOrOp,
    BitXorOp,
    ShlOp,
    ShrOp,
    AbsDiffOp,
    SaturatingAddOp,
    SaturatingSubOp,
    SaturatingMulOp,
    MulHighOp,
    RotateLeftOp,
    RotateRightOp,
    EqOp,
    NeOp,
    LtOp,
    LeOp,
    GtOp,
    GeOp,
    AndOp,
    OrOp,
    NotOp,
    NegOp,
    BitNotOp,
    PopcountOp,
    ClzOp,
    CtzOp,
    ReverseBitsOp,
    AbsOp,
    SignOp,
    SqrtOp,
    InverseSqrtOp,
    FloorOp,
    CeilOp,
    RoundOp,
    TruncOp,
    ExpOp,
    Exp2Op,
    LogOp,
    Log2Op,
    SinOp,
    CosOp,
    TanOp,
    TanhOp,
    ReciprocalOp,
    AcosOp,
    AsinOp,
    AtanOp,
    SinhOp,
    CoshOp,
    Unpack4LowOp,
    Unpack4HighOp,
    Unpack8LowOp,
    Unpack8HighOp,
    IsNanOp,
    IsInfOp,
    IsFiniteOp,
)

#: mnemonic -> op class, one per entry of the semantics table
TABLE_OPS: dict[str, type[_TableOp]] = {
    cls.name.removeprefix("vyre."): cls for cls in _TABLE_OP_CLASSES
}


@irdl_op_definition
class SelectOp(IRDLOperation):
    """Picks `%a` where the condition holds, else `%b`.

    ```mlir
    %r = vyre.select %c, %a, %b : f32
    ```
    """

    name = "vyre.select"
    T: ClassVar = VarConstraint("T", AnyAttr())
    cond = operand_def(i1)
    true_value = operand_def(T)
    false_value = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure(), VyreCanonicalization())
    assembly_format = "$cond `,` $true_value `,` $false_value attr-dict `:` type($result)"

    def __init__(self, cond, true_value, false_value):
        super().__init__(
            operands=[cond, true_value, false_value],
            result_types=[SSAValue.get(true_value).type],
        )

    def verify_(self) -> None:
        _require_element_type(self.result.type, "'vyre.select'")


@irdl_op_definition
class FmaOp(IRDLOperation):
    """Fused multiply-add `a * b + c`, rounded once, on a float type (f16, bf16,
    f32, f64).

    ```mlir
    %r = vyre.fma %a, %b, %c : f32
    %h = vyre.fma %x, %y, %z : f16
    ```
    """

    name = "vyre.fma"
    T: ClassVar = VarConstraint("T", AnyAttr())
    a = operand_def(T)
    b = operand_def(T)
    c = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$a `,` $b `,` $c attr-dict `:` type($result)"

    def __init__(self, a, b, c):
        super().__init__(operands=[a, b, c], result_types=[SSAValue.get(a).type])

    def verify_(self) -> None:
        if not is_float_type(self.result.type):
            raise VerifyException(
                f"'vyre.fma' takes a float type (f16, bf16, f32, f64), not {self.result.type}"
            )


class _ConversionOp(IRDLOperation):
    """Shared parse/print of `%r = vyre.cast %x : si32 to f32`."""

    input = operand_def()
    result = result_def()
    traits = traits_def(Pure(), VyreCanonicalization())
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def __init__(self, value: SSAValue | Operation, target: Attribute | str):
        if isinstance(target, str):
            target = ELEMENT_TYPES[target]
        super().__init__(operands=[value], result_types=[target])

    @property
    def source_name(self) -> str:
        return type_name(self.input.type) or str(self.input.type)

    @property
    def target_name(self) -> str:
        return type_name(self.result.type) or str(self.result.type)


@irdl_op_definition
class CastOp(_ConversionOp):
    """Numeric conversion between any two scalar element types.

    A float to an integer truncates toward zero and saturates (NaN gives 0);
    integer to integer is two's complement (truncate to the target width,
    sign-extend a signed source, zero-extend an unsigned one); to i1 is `!= 0`;
    from i1 is 0 or 1; to a float rounds to nearest even.

    ```mlir
    %r = vyre.cast %x : si32 to f32
    %b = vyre.cast %w : ui32 to ui8
    ```
    """

    name = "vyre.cast"

    def verify_(self) -> None:
        pair = (type_name(self.input.type), type_name(self.result.type))
        if pair not in semantics.CAST_PAIRS:
            raise VerifyException(
                f"no cast from {self.input.type} to {self.result.type}; casts are between "
                "scalar element types (a vector is reinterpreted with 'vyre.bitcast')"
            )


@irdl_op_definition
class BitcastOp(_ConversionOp):
    """Reinterprets the bits of a value as another type of the same width
    (not i1): `f32`/`ui32`/`si32`, `f16`/`bf16`/`ui16`/`si16`, `ui8`/`si8`,
    `f64`/`ui64`/`si64`/`vector<2xui32>`, `vector<4xui32>`/`vector<4xf32>`.

    ```mlir
    %bits = vyre.bitcast %x : f32 to ui32
    ```
    """

    name = "vyre.bitcast"

    def verify_(self) -> None:
        for ty in (self.input.type, self.result.type):
            _require_element_type(ty, "'vyre.bitcast'")
        pair = (type_name(self.input.type), type_name(self.result.type))
        if pair not in semantics.BITCAST_PAIRS:
            raise VerifyException(
                f"no bitcast from {self.input.type} to {self.result.type}: a bitcast is "
                "between two non-i1 types of the same width"
            )


@irdl_op_definition
class AtomicOp(IRDLOperation):
    """Atomic read-modify-write on a writable `ui32` buffer (global or workgroup);
    returns the old value.

    OP is `add or and xor min max exchange fetch_nand` (`~(old & v)`), or
    `compare_exchange`/`compare_exchange_weak` with an expected value (the weak
    one may fail spuriously on a GPU). An optional memory ordering follows OP:
    `relaxed acquire release acq_rel seq_cst` (default `seq_cst`, upstream's);
    WGSL can only honour relaxed atomicity (see docs/wgsl.md).

    ```mlir
    %old = vyre.atomic add @counter[%zero], %one : ui32
    %prev = vyre.atomic compare_exchange @lock[%i], %expected, %new : ui32
    %bits = vyre.atomic fetch_nand relaxed @flags[%i], %mask : ui32
    ```
    """

    name = "vyre.atomic"
    kind = prop_def(StringAttr)
    #: upstream's memory ordering; absent means `seq_cst` (the default)
    ordering = opt_prop_def(StringAttr)
    buffer = prop_def(SymbolRefAttr)
    index = operand_def(ui32)
    expected = opt_operand_def(ui32)
    value = operand_def(ui32)
    result = result_def(ui32)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(BufferReadWriteEffect())

    def __init__(
        self,
        kind: str,
        buffer: str,
        index: SSAValue | Operation,
        value: SSAValue | Operation,
        expected: SSAValue | Operation | None = None,
        ordering: str | None = None,
    ):
        super().__init__(
            operands=[index, [] if expected is None else [expected], value],
            properties={"kind": StringAttr(kind), "buffer": SymbolRefAttr(buffer)},
            result_types=[ui32],
        )
        if ordering is not None:
            self.properties["ordering"] = StringAttr(ordering)

    @property
    def buffer_name(self) -> str:
        return self.buffer.root_reference.data

    @classmethod
    def parse(cls, parser: Parser) -> AtomicOp:
        pos = parser.pos
        kind = parser.parse_identifier()
        if kind not in semantics.ATOMIC_OPS:
            parser.raise_error(
                f"expected atomic op, one of {', '.join(semantics.ATOMIC_OPS)}", pos, parser.pos
            )
        ordering = None
        for candidate in semantics.ATOMIC_ORDERINGS:
            if parser.parse_optional_keyword(candidate) is not None:
                ordering = candidate
                break
        buffer, index = _parse_buffer_index(parser)
        parser.parse_punctuation(",")
        first = parser.parse_operand(ui32)
        expected = None
        if kind in semantics.COMPARE_EXCHANGE_OPS:
            if parser.parse_optional_punctuation(",") is None:
                parser.raise_error(
                    f"'{kind}' takes an expected value and a new value: "
                    f"vyre.atomic {kind} @buf[%i], %expected, %new : ui32"
                )
            expected, value = first, parser.parse_operand(ui32)
        else:
            value = first
        parser.parse_punctuation(":")
        ty = parser.parse_type()
        if ty != ui32:
            parser.raise_error(f"atomics operate on ui32, not {ty}")
        op = cls(kind, buffer.root_reference.data, index, value, expected, ordering)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data}")
        if self.ordering is not None:
            printer.print_string(f" {self.ordering.data}")
        _print_buffer_index(printer, self.buffer, self.index)
        printer.print_string(", ")
        if self.expected is not None:
            printer.print_operand(self.expected)
            printer.print_string(", ")
        printer.print_operand(self.value)
        printer.print_string(" : ui32")
        _print_attrs(printer, self)

    def verify_(self) -> None:
        if self.kind.data not in semantics.ATOMIC_OPS:
            raise VerifyException(f"unknown atomic op '{self.kind.data}'")
        if (self.kind.data in semantics.COMPARE_EXCHANGE_OPS) != (self.expected is not None):
            raise VerifyException(
                "'compare_exchange' and 'compare_exchange_weak' take an expected value, and only they"
            )
        if self.ordering is not None and self.ordering.data not in semantics.ATOMIC_ORDERINGS:
            raise VerifyException(
                f"unknown memory ordering '{self.ordering.data}'; expected one of "
                f"{', '.join(semantics.ATOMIC_ORDERINGS)}"
            )
        buffer = _buffer_of(self, self.buffer_name)
        if buffer.element_type != ui32:
            raise VerifyException(
                f"atomics need a ui32 buffer; @{self.buffer_name} holds {buffer.element_type}"
            )
        if buffer.access_mode not in ("read_write", "write_only", "workgroup"):
            raise VerifyException(
                "atomics need a writable buffer (read_write, write_only or workgroup); "
                f"@{self.buffer_name} is {buffer.access_mode}"
            )


# ============================================================================ subgroups


@dataclass(frozen=True)
class SubgroupResource(Resource):
    """The lanes of the invocation's subgroup: a collective reads every lane's operand."""

    def name(self) -> str:
        return "subgroup"


class SubgroupCollectiveEffect(MemoryEffect, ConditionallySpeculatable):
    """Reads and writes the `SubgroupResource`: a collective depends on which lanes run
    it, so it is never moved, merged or speculated (conservative; not dead-code either)."""

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance]:
        return frozenset(
            (
                EffectInstance(MemoryEffectKind.READ, resource=SubgroupResource()),
                EffectInstance(MemoryEffectKind.WRITE, resource=SubgroupResource()),
            )
        )

    @classmethod
    def is_speculatable(cls, op: Operation) -> bool:
        return False


def subgroup_geometry_problem(op: Operation) -> str | None:
    """Why the program around subgroup op `op` cannot have subgroups, else None."""
    program = enclosing_program(op)
    if program is None:
        return None
    sizes = list(program.workgroup_size.get_values())
    if sizes[1:] == [1, 1]:
        return None
    return (
        f"'{op.name}' needs a one-dimensional workgroup_size [X, 1, 1]; program "
        f"@{program.sym_name.data} has {sizes}, and how a GPU forms the "
        "subgroups of a multi-dimensional workgroup is not specified"
    )


def collective_problem(op: Operation, what: str) -> str | None:
    """Why `op` (a barrier-like collective) may not run where it is, else None: under
    invocation-dependent control flow, or after a `vyre.return` only some take."""
    if (divergent := _divergent_ancestor(op)) is not None:
        return (
            f"{what} under invocation-dependent control flow ('{divergent.name}' whose "
            "condition or bounds depend on the invocation); every invocation of the "
            "workgroup must reach it (WGSL subgroup uniformity)"
        )
    program = enclosing_program(op)
    if program is None:
        return None
    for earlier in program.walk():
        if earlier is op:
            break
        if isinstance(earlier, ReturnOp) and _divergent_ancestor(earlier) is not None:
            return f"{what} after a 'vyre.return' that only some invocations take"
    return None


class _SubgroupIdOp(IRDLOperation):
    """Shared parse/print of `%n = vyre.subgroup_size` and `vyre.subgroup_local_id`."""

    result = result_def(ui32)
    traits = traits_def(Pure())
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__(result_types=[ui32])

    def verify_(self) -> None:
        if (problem := subgroup_geometry_problem(self)) is not None:
            raise VerifyException(problem)


@irdl_op_definition
class SubgroupSizeOp(_SubgroupIdOp):
    """The number of invocations in a subgroup (the same for the whole dispatch).

    ```mlir
    %n = vyre.subgroup_size
    ```
    """

    name = "vyre.subgroup_size"


@irdl_op_definition
class SubgroupLocalIdOp(_SubgroupIdOp):
    """The invocation's lane within its subgroup, `0 .. subgroup_size - 1`.

    ```mlir
    %l = vyre.subgroup_local_id
    ```
    """

    name = "vyre.subgroup_local_id"


class _SubgroupCollectiveOp(IRDLOperation):
    traits = traits_def(SubgroupCollectiveEffect())

    def verify_(self) -> None:
        problem = subgroup_geometry_problem(self) or collective_problem(self, f"'{self.name}'")
        if problem is not None:
            raise VerifyException(problem)


@irdl_op_definition
class SubgroupReduceOp(_SubgroupCollectiveOp):
    """Combines `%x` over all lanes of the subgroup; every lane gets the result.
    KIND: `add`, `mul`, `min`, `max` (ui32, si32, f32), `and`, `or`, `xor` (ui32, si32).

    ```mlir
    %r = vyre.subgroup_reduce add %x : f32
    ```
    """

    name = "vyre.subgroup_reduce"
    kind = prop_def(StringAttr)
    value = operand_def()
    result = result_def()

    def __init__(self, kind: str, value: SSAValue | Operation):
        value = SSAValue.get(value)
        super().__init__(
            operands=[value], properties={"kind": StringAttr(kind)}, result_types=[value.type]
        )

    @classmethod
    def parse(cls, parser: Parser) -> SubgroupReduceOp:
        kind = parser.parse_identifier(" (add, mul, min, max, and, or, xor)")
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        op = cls(kind, parser.resolve_operand(unresolved, parser.parse_type()))
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data} ")
        printer.print_operand(self.value)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        kind = self.kind.data
        if kind not in semantics.SUBGROUP_REDUCE:
            raise VerifyException(
                f"unknown subgroup reduction '{kind}'; expected one of {', '.join(semantics.SUBGROUP_REDUCE)}"
            )
        types = semantics.SUBGROUP_REDUCE[kind][0]
        if type_name(self.value.type) not in types:
            raise VerifyException(
                f"'vyre.subgroup_reduce {kind}' does not accept {self.value.type}; it takes {', '.join(types)}"
            )
        if self.result.type != self.value.type:
            raise VerifyException("the result type of 'vyre.subgroup_reduce' is its operand's")
        super().verify_()


class _SubgroupLaneOp(_SubgroupCollectiveOp):
    """Shared parse/print/verify of `%r = vyre.subgroup_shuffle %x, %lane : T`."""

    value = operand_def()
    lane = operand_def(ui32)
    result = result_def()

    def __init__(self, value: SSAValue | Operation, lane: SSAValue | Operation):
        value = SSAValue.get(value)
        super().__init__(operands=[value, lane], result_types=[value.type])

    @classmethod
    def parse(cls, parser: Parser):
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        lane = parser.parse_operand(ui32)
        parser.parse_punctuation(":")
        op = cls(parser.resolve_operand(unresolved, parser.parse_type()), lane)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.value)
        printer.print_string(", ")
        printer.print_operand(self.lane)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        if type_name(self.value.type) not in semantics.SUBGROUP_VALUE_TYPES:
            raise VerifyException(
                f"'{self.name}' does not accept {self.value.type}; it takes "
                f"{', '.join(semantics.SUBGROUP_VALUE_TYPES)}"
            )
        if self.result.type != self.value.type:
            raise VerifyException(f"the result type of '{self.name}' is its operand's")
        super().verify_()


@irdl_op_definition
class SubgroupShuffleOp(_SubgroupLaneOp):
    """The value of `%x` in lane `%lane` of the subgroup (each lane may name another);
    a lane number past the subgroup gives 0 (upstream's rule).

    ```mlir
    %r = vyre.subgroup_shuffle %x, %lane : ui32
    ```
    """

    name = "vyre.subgroup_shuffle"


@irdl_op_definition
class SubgroupBroadcastOp(_SubgroupLaneOp):
    """The value of `%x` in lane `%lane`, the same lane for the whole workgroup (the
    verifier requires `%lane` to be workgroup-uniform); past the subgroup: 0.

    ```mlir
    %zero = vyre.const 0 : ui32
    %r = vyre.subgroup_broadcast %x, %zero : f32
    ```
    """

    name = "vyre.subgroup_broadcast"

    def verify_(self) -> None:
        super().verify_()
        if not is_workgroup_uniform(self.lane):
            raise VerifyException(
                "the lane of 'vyre.subgroup_broadcast' must be the same for every invocation "
                "(a constant, buf_len, workgroup id...); use 'vyre.subgroup_shuffle' for a per-lane source"
            )


@irdl_op_definition
class SubgroupBallotOp(_SubgroupCollectiveOp):
    """A `ui32` bitmask with bit k set when `%c` holds in lane k of the subgroup
    (lanes 0 to 31: upstream's result type).

    ```mlir
    %b = vyre.subgroup_ballot %c
    ```
    """

    name = "vyre.subgroup_ballot"
    cond = operand_def(i1)
    result = result_def(ui32)

    def __init__(self, cond: SSAValue | Operation):
        super().__init__(operands=[cond], result_types=[ui32])

    @classmethod
    def parse(cls, parser: Parser) -> SubgroupBallotOp:
        op = cls(parser.parse_operand(i1))
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.cond)
        _print_attrs(printer, self)


#: the subgroup ops (they need the GPU's subgroup feature)
SUBGROUP_OPS = (
    SubgroupSizeOp,
    SubgroupLocalIdOp,
    SubgroupReduceOp,
    SubgroupShuffleOp,
    SubgroupBroadcastOp,
    SubgroupBallotOp,
)


# ============================================================================ functions


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


class CallEffect(MemoryEffect, ConditionallySpeculatable):
    """A call does what its callee does: nothing when the callee is pure; it writes
    the trap sidecar when the callee may trap (then it is not speculatable);
    unknown (conservative) while the callee cannot be found."""

    @classmethod
    def get_effects(cls, op: Operation) -> AbstractSet[EffectInstance] | None:
        callee = find_func(op, op.callee_name)
        return None if callee is None else func_effects(callee)

    @classmethod
    def is_speculatable(cls, op: Operation) -> bool:
        return cls.get_effects(op) == frozenset()


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


# ============================================================================ vectors


def _vector_info(ty: Attribute, what: str) -> semantics.ElementType:
    info = element_info(ty)
    if info is None or info.family != "vector":
        names = ", ".join(n for n, t in semantics.ELEMENTS.items() if t.family == "vector")
        raise VerifyException(f"'{what}' builds or reads a vector type ({names}), not {ty}")
    return info


@irdl_op_definition
class FromElementsOp(IRDLOperation):
    """A vector from its lanes, in order (lane 0 first); each operand has the
    lane type.

    ```mlir
    %v = vyre.from_elements %lo, %hi : vector<2xui32>
    %q = vyre.from_elements %a, %b, %c, %d : vector<4xf32>
    ```
    """

    name = "vyre.from_elements"
    elements = var_operand_def()
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, elements: Sequence[SSAValue | Operation], ty: Attribute | str):
        if isinstance(ty, str):
            ty = ELEMENT_TYPES[ty]
        super().__init__(operands=[list(elements)], result_types=[ty])

    @classmethod
    def parse(cls, parser: Parser) -> FromElementsOp:
        unresolved = parser.parse_comma_separated_list(
            parser.Delimiter.NONE, parser.parse_unresolved_operand
        )
        parser.parse_punctuation(":")
        start = parser.pos
        ty = parser.parse_type()
        info = element_info(ty)
        if info is None or info.family != "vector":
            parser.raise_error(f"'vyre.from_elements' builds a vector type, not {ty}", start)
        lane = ELEMENT_TYPES[info.lane]
        op = cls([parser.resolve_operand(u, lane) for u in unresolved], ty)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.elements, printer.print_operand)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        info = _vector_info(self.result.type, self.name)
        if len(self.elements) != info.lanes:
            raise VerifyException(
                f"'vyre.from_elements' needs {info.lanes} lanes for {info.name}, got {len(self.elements)}"
            )
        lane = ELEMENT_TYPES[info.lane]
        for index, element in enumerate(self.elements):
            if element.type != lane:
                raise VerifyException(
                    f"lane {index} of 'vyre.from_elements' is a {element.type}; {info.name} has {info.lane} lanes"
                )


@irdl_op_definition
class ExtractOp(IRDLOperation):
    """Lane `LANE` (a constant, from 0) of a vector, as the lane type.

    ```mlir
    %hi = vyre.extract %v[1] : vector<2xui32>
    ```
    """

    name = "vyre.extract"
    vector = operand_def()
    lane = prop_def(IntegerAttr)
    result = result_def()
    traits = traits_def(Pure())

    def __init__(self, vector: SSAValue | Operation, lane: int):
        ty = SSAValue.get(vector).type
        info = element_info(ty)
        lane_type = ELEMENT_TYPES[info.lane] if info is not None and info.lane else ty
        super().__init__(
            operands=[vector],
            properties={"lane": IntegerAttr(lane, i32)},
            result_types=[lane_type],
        )

    @property
    def lane_index(self) -> int:
        return self.lane.value.data

    @classmethod
    def parse(cls, parser: Parser) -> ExtractOp:
        unresolved = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        start = parser.pos
        lane = parser.parse_integer()
        parser.parse_punctuation("]")
        parser.parse_punctuation(":")
        type_start = parser.pos
        ty = parser.parse_type()
        info = element_info(ty)
        if info is None or info.family != "vector":
            parser.raise_error(f"'vyre.extract' reads a vector type, not {ty}", type_start)
        if not 0 <= lane < info.lanes:
            parser.raise_error(
                f"lane {lane} is out of range for {info.name} (0 to {info.lanes - 1})", start
            )
        op = cls(parser.resolve_operand(unresolved, ty), lane)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.vector)
        printer.print_string(f"[{self.lane_index}] : ")
        printer.print_attribute(self.vector.type)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        info = _vector_info(self.vector.type, self.name)
        if not 0 <= self.lane_index < info.lanes:
            raise VerifyException(
                f"lane {self.lane_index} is out of range for {info.name} (0 to {info.lanes - 1})"
            )
        if self.result.type != ELEMENT_TYPES[info.lane]:
            raise VerifyException(f"'vyre.extract' of {info.name} gives a {info.lane}")


class VyreConstantMaterialization(ConstantMaterializationInterface):
    def materialize_constant(self, value: Attribute, type: Attribute) -> Operation:
        assert isinstance(value, IntegerAttr | FloatAttr)
        return ConstOp(value)


Vyre = Dialect(
    "vyre",
    [
        ProgramOp,
        BufferOp,
        LetOp,
        AssignOp,
        VarOp,
        StoreOp,
        IfOp,
        LoopOp,
        BlockOp,
        RegionOp,
        BarrierOp,
        ReturnOp,
        TrapOp,
        ConstOp,
        LoadOp,
        BufLenOp,
        InvocationIdOp,
        WorkgroupIdOp,
        LocalIdOp,
        RepetitionOp,
        NumWorkgroupsOp,
        *TABLE_OPS.values(),
        SelectOp,
        FmaOp,
        FromElementsOp,
        ExtractOp,
        CastOp,
        BitcastOp,
        AtomicOp,
        FuncOp,
        YieldOp,
        CallOp,
        *SUBGROUP_OPS,
    ],
    [],
    [VyreConstantMaterialization()],
)


def programs(module: ModuleOp) -> list[ProgramOp]:
    """The programs of a module, in program order."""
    return [op for op in module.ops if isinstance(op, ProgramOp)]


__all__ = [
    "AXES",
    "BARRIER_ORDERINGS",
    "ELEMENT_TYPES",
    "TABLE_OPS",
    "Vyre",
    "programs",
    "type_name",
    "ui32",
    "si32",
    "f32",
    "i1",
    "ArrayAttr",
]
