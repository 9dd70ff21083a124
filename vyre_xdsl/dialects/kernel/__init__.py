"""The `kernel` dialect: kernel descriptors, the level a backend consumes (SPEC section 5).

`vyre-lower` turns every `vyre.program` into one `kernel.descriptor` (several when
the program contains `vyre.barrier grid_sync`). Nothing in a descriptor needs
re-analysis: binding slots, memory classes, visibility, bind groups, the
workgroup size, the static grid and the buffers that decide the element count
are all explicit. The body is structured (`kernel.if`, `kernel.for`,
`kernel.block`, `kernel.region`); memory is addressed by slot through one op per
memory class; named locals are function-local variables; the pure `vyre`
arithmetic ops (`vyre.add`, `vyre.const`, `vyre.select`, ...) appear unchanged.

```mlir
kernel.descriptor @axpy id "5be2...c1" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@y]
  kernel.binding @x slot 0 group 0 constant read_only : f32[1024]
  kernel.binding @y slot 1 group 0 global read_write : f32[1024]
  %i = kernel.invocation_id x
  %a = vyre.const 2.0 : f32
  %xv = kernel.load_constant slot 0 [%i] : f32
  %yv = kernel.load_global slot 1 [%i] : f32
  %p = vyre.mul %a, %xv : f32
  %s = vyre.add %p, %yv : f32
  kernel.store_global slot 1 [%i] = %s : f32
}
```

See docs/kernel-dialect.md for every op with examples.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    StringAttr,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    MemoryReadEffect,
    MemoryWriteEffect,
    NoTerminator,
    Pure,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from vyre_xdsl.dialects.names import entry_point_problem
from vyre_xdsl.dialects.syntax import (
    AXES,
    I32_MAX,
    I64_MAX,
    AtomicSyntax,
    LoadSyntax,
    StoreSyntax,
    as_region,
    count_problem,
    parse_body,
    parse_int_in,
    parse_int_list_in,
    parse_shaped_type,
    print_attrs,
    print_body,
    print_shaped_type,
)
from vyre_xdsl.dialects.traits import (
    ElementAccess,
    IdLike,
    LoadLike,
    SlotAddressed,
    StoreLike,
    TableLike,
)
from vyre_xdsl.dialects.verify import body_errors, raise_body_errors
from vyre_xdsl.dialects.vyre import ELEMENT_TYPES, SUPPORTED_TYPES, type_name, ui32

#: slots at and above this are workgroup (`shared`) slots
WORKGROUP_SLOT_BASE = 1 << 24
#: slots are WGSL binding numbers (host) or workgroup variable numbers: 32-bit
MAX_SLOT = 2**32 - 1
#: the reserved name of the trap sidecar binding (8 u32 words; layout: `vyre_xdsl.traps`)
TRAP_SIDECAR_NAME = "__vyre_descriptor_trap_sidecar"
TRAP_SIDECAR_WORDS = 8
#: the reserved name of the repetition binding: one ui32 word, the current
#: repetition of a run (`vyre.repetition`), written by the runtime per repetition
REPETITION_NAME = "__vyre_repetition"

MEMORY_CLASSES = ("global", "constant", "uniform", "shared", "scratch")
HOST_CLASSES = ("global", "constant", "uniform")
#: classes bound as storage buffers in a bind group: the host classes and
#: `scratch` (per-invocation device memory the runtime allocates: `count` is
#: the elements per invocation, the buffer holds `count` x the invocations)
BOUND_CLASSES = (*HOST_CLASSES, "scratch")
WORKGROUP_CLASSES = ("shared",)
VISIBILITIES = ("read_only", "write_only", "read_write")


def bind_group(memory_class: str) -> int | None:
    """Bind group of a memory class: 0 for global and constant, 1 for uniform, none otherwise."""
    return {"global": 0, "constant": 0, "scratch": 0, "uniform": 1}.get(memory_class)


# ============================================================================ helpers


def _parse_int_list(parser: Parser, what: str) -> list[int]:
    return parse_int_list_in(parser, what, -I32_MAX - 1, I32_MAX, f"the largest is {I32_MAX}")


def _parse_slot(parser: Parser) -> int:
    return parse_int_in(parser, "slot", 0, MAX_SLOT)


def _print_int_list(printer: Printer, values: Sequence[int]) -> None:
    printer.print_string("[" + ", ".join(str(v) for v in values) + "]")


def _dense(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i32, list(values))


def _triple(attr: DenseArrayBase) -> tuple[int, ...]:
    return tuple(int(v) for v in attr.get_values())


_print_attrs = print_attrs
_parse_body = parse_body
_print_body = print_body
_as_region = as_region


def _element(ty: Attribute | str) -> Attribute:
    return ELEMENT_TYPES[ty] if isinstance(ty, str) else ty


def _require_element_type(ty: Attribute, what: str) -> str:
    name = type_name(ty)
    if name is None:
        raise VerifyException(
            f"unsupported element type {ty} for {what}; kernels support {SUPPORTED_TYPES}"
        )
    return name


def enclosing_descriptor(op: Operation) -> DescriptorOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, DescriptorOp):
        parent = parent.parent_op()
    return parent


def _parse_slot_index(parser: Parser) -> tuple[int, SSAValue]:
    """Parse `slot N [%i]`."""
    parser.parse_keyword("slot")
    slot = _parse_slot(parser)
    parser.parse_punctuation("[")
    index = parser.parse_operand(ui32)
    parser.parse_punctuation("]")
    return slot, index


def _print_slot_index(printer: Printer, slot: int, index: SSAValue) -> None:
    printer.print_string(f" slot {slot} [")
    printer.print_operand(index)
    printer.print_string("]")


# ============================================================================ descriptor

#: the ops whose regions are scopes
SCOPE_OPS = ("kernel.if", "kernel.for", "kernel.block", "kernel.region")

#: vyre ops that have a kernel counterpart (or no place) in a descriptor body;
#: every other vyre op (the pure arithmetic) appears unchanged
_VYRE_ONLY = frozenset(
    "vyre." + name
    for name in (
        "program buffer let assign var store load buf_len atomic if loop block region "
        "barrier return trap invocation_id workgroup_id local_id repetition"
    ).split()
)


def _is_kernel_statement(op: Operation) -> bool:
    """Whether `op` may appear inside a descriptor: kernel ops and pure vyre arithmetic."""
    if op.dialect_name() == "kernel":
        return not isinstance(op, DescriptorOp)
    return op.dialect_name() == "vyre" and op.name not in _VYRE_ONLY


@irdl_op_definition
class DescriptorOp(IRDLOperation):
    """One kernel: identity, dispatch, bindings and the structured body.

    The body starts with exactly one `kernel.dispatch` and the `kernel.binding`s,
    followed by the statements run once per invocation. `id` is the BLAKE3 hex
    digest of the canonical program; `entry` the WGSL entry point name. The
    optional `attributes {...}` record provenance (`source`, `part`).

    ```mlir
    kernel.descriptor @double id "9f86d081884c7d65..." entry "main" attributes {source = "double"} {
      kernel.dispatch workgroup_size [128, 1, 1] program_workgroup_size [1, 1, 1] grid ? count [@x]
      kernel.binding @x slot 0 group 0 global read_write : ui32[?]
      %i = kernel.invocation_id x
      %v = kernel.load_global slot 0 [%i] : ui32
      %d = vyre.add %v, %v : ui32
      kernel.store_global slot 0 [%i] = %d : ui32
    }
    ```
    """

    name = "kernel.descriptor"

    sym_name = prop_def(StringAttr)
    descriptor_id = prop_def(StringAttr)
    entry_point = prop_def(StringAttr)
    body = region_def("single_block")

    traits = traits_def(IsolatedFromAbove(), NoTerminator(), SymbolOpInterface())

    def __init__(
        self,
        name: str,
        descriptor_id: str,
        body: Region | Sequence[Operation] | None = None,
        entry_point: str = "main",
        attributes: dict[str, Attribute] | None = None,
    ):
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "descriptor_id": StringAttr(descriptor_id),
                "entry_point": StringAttr(entry_point),
            },
            regions=[_as_region(body)],
            attributes=attributes or {},
        )

    @property
    def id(self) -> str:
        return self.descriptor_id.data

    @property
    def entry(self) -> str:
        return self.entry_point.data

    def dispatch(self) -> DispatchOp | None:
        for op in self.body.block.ops:
            if isinstance(op, DispatchOp):
                return op
        return None

    def bindings(self) -> Iterator[BindingOp]:
        for op in self.body.block.ops:
            if isinstance(op, BindingOp):
                yield op

    def binding_at(self, slot: int) -> BindingOp | None:
        """The first binding with this slot number."""
        for binding in self.bindings():
            if binding.slot_number == slot:
                return binding
        return None

    def binding_named(self, name: str) -> BindingOp | None:
        for binding in self.bindings():
            if binding.buffer_name == name:
                return binding
        return None

    def stored_slots(self) -> set[int]:
        """The slots this kernel stores to (`StoreLike` ops)."""
        return {op.slot_number for op in self.walk() if op.has_trait(StoreLike)}

    def statements(self) -> Iterator[Operation]:
        for op in self.body.block.ops:
            if not isinstance(op, DispatchOp | BindingOp):
                yield op

    @classmethod
    def parse(cls, parser: Parser) -> DescriptorOp:
        name = parser.parse_symbol_name()
        parser.parse_keyword("id")
        descriptor_id = parser.parse_str_literal()
        parser.parse_keyword("entry")
        entry = parser.parse_str_literal()
        attributes = {}
        if parser.parse_optional_keyword("attributes") is not None:
            attributes = parser.parse_optional_attr_dict()
        body = _parse_body(parser)
        return cls(name.data, descriptor_id, body, entry, attributes)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(" id ")
        printer.print_string_literal(self.id)
        printer.print_string(" entry ")
        printer.print_string_literal(self.entry)
        if self.attributes:
            printer.print_string(" attributes ")
            printer.print_attr_dict(self.attributes)
        _print_body(printer, self.body)

    def verify(self, verify_nested_ops: bool = True) -> None:
        # whole-body checks first (see vyre_xdsl.dialects.verify)
        raise_body_errors(
            body_errors(self, _is_kernel_statement, SCOPE_OPS, "a 'kernel.descriptor'")
        )
        super().verify(verify_nested_ops)

    def verify_(self) -> None:
        if (problem := entry_point_problem(self.entry)) is not None:
            raise VerifyException(problem)
        dispatches = [op for op in self.body.block.ops if isinstance(op, DispatchOp)]
        if len(dispatches) != 1:
            raise VerifyException(
                f"a descriptor needs exactly one 'kernel.dispatch', found {len(dispatches)}"
            )
        seen_statement = False
        for op in self.body.block.ops:
            if not isinstance(op, DispatchOp | BindingOp):
                seen_statement = True
            elif seen_statement:
                raise VerifyException(
                    f"'{op.name}' after a statement; dispatch and bindings come first"
                )


@irdl_op_definition
class DispatchOp(IRDLOperation):
    """The launch shape of a descriptor.

    `workgroup_size` is the kernel's (`@workgroup_size` in WGSL);
    `program_workgroup_size` the source program's declared one, whose ids the
    body sees (they differ only when lowering widened a `[1, 1, 1]` program).
    `grid` is the static number of workgroups per axis, or `?` when a count
    buffer is runtime-sized, or `indirect @buf` when the runtime reads it from
    words 0..2 of that host binding when the kernel is launched
    (`dispatch_workgroups_indirect`; `indirect @buf offset B`: the three words
    from byte B, a multiple of 4); `grid explicit [GX, GY, GZ]` is the
    program's own explicit grid: launched exactly, with workgroup ids that span
    every axis; `count` names the buffers whose element counts decide the
    logical element count (their maximum, at least 1).

    ```mlir
    kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [16, 1, 1] count [@y]
    kernel.dispatch workgroup_size [128, 1, 1] program_workgroup_size [1, 1, 1] grid ? count [@x, @out]
    kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid indirect @grid count [@out]
    kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid indirect @grid offset 12 count [@out]
    kernel.dispatch workgroup_size [16, 16, 1] program_workgroup_size [16, 16, 1] grid explicit [4, 4, 1] count [@b]
    ```

    The optional launch record, each part set by a pass: `elements_per_invocation W`
    (`kernel-vectorize`: each invocation runs W consecutive logical invocations),
    `groups_per_workgroup C` (`kernel-coarsen`: each workgroup runs C consecutive
    logical workgroups), `logical_grid [...]` (the grid of logical workgroups when
    `grid` is the launch grid of either), `declared_invocations N` (`vyre-lower`,
    on a widened kernel over static counts: the invocations of the program's
    declared launch).

    ```mlir
    kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [4, 1, 1] count [@y] elements_per_invocation 4 logical_grid [16, 1, 1]
    kernel.dispatch workgroup_size [256, 1, 1] program_workgroup_size [256, 1, 1] grid [1024, 1, 1] count [@x] groups_per_workgroup 8 logical_grid [8192, 1, 1]
    kernel.dispatch workgroup_size [128, 1, 1] program_workgroup_size [1, 1, 1] grid [8, 1, 1] count [@y] declared_invocations 1024
    ```
    """

    name = "kernel.dispatch"

    workgroup_size = prop_def(DenseArrayBase)
    program_workgroup_size = prop_def(DenseArrayBase)
    grid = opt_prop_def(DenseArrayBase)
    count_buffers = prop_def(ArrayAttr)
    indirect = opt_prop_def(StringAttr)
    indirect_offset = opt_prop_def(IntegerAttr)
    explicit = opt_prop_def(UnitAttr)
    # set by `kernel-vectorize`: logical invocations each launched invocation runs
    elements_per_invocation = opt_prop_def(IntegerAttr)
    # set by `kernel-coarsen`: logical workgroups each launched workgroup runs
    groups_per_workgroup = opt_prop_def(IntegerAttr)
    # the grid of logical workgroups (the ids the body sees) when the launch
    # grid (`grid`) differs from it: set with either of the two above
    logical_grid = opt_prop_def(DenseArrayBase)
    # set by `vyre-lower` on a widened kernel whose counts are static: how many
    # invocations the program's declared launch has (the kernel skips the rest)
    declared_invocations = opt_prop_def(IntegerAttr)

    traits = traits_def(HasParent(DescriptorOp))

    def __init__(
        self,
        workgroup_size: Sequence[int],
        program_workgroup_size: Sequence[int],
        grid: Sequence[int] | None,
        count_buffers: Sequence[str],
        indirect: str | None = None,
        indirect_offset: int = 0,
        explicit: bool = False,
    ):
        properties: dict[str, Attribute] = {
            "workgroup_size": _dense(workgroup_size),
            "program_workgroup_size": _dense(program_workgroup_size),
            "count_buffers": ArrayAttr([StringAttr(n) for n in count_buffers]),
        }
        if grid is not None:
            properties["grid"] = _dense(grid)
        if indirect is not None:
            properties["indirect"] = StringAttr(indirect)
        if indirect_offset:
            properties["indirect_offset"] = IntegerAttr(indirect_offset, i64)
        if explicit:
            properties["explicit"] = UnitAttr()
        super().__init__(properties=properties)

    @property
    def is_explicit(self) -> bool:
        """Whether the grid is the program's explicit one (ids span every axis)."""
        return self.explicit is not None

    @property
    def indirect_buffer(self) -> str | None:
        """The binding whose words 0..2 are the grid, or None."""
        return None if self.indirect is None else self.indirect.data

    @property
    def indirect_byte_offset(self) -> int:
        """The byte offset of the indirect grid in its binding (0 by default)."""
        return 0 if self.indirect_offset is None else self.indirect_offset.value.data

    @property
    def kernel_workgroup(self) -> tuple[int, ...]:
        return _triple(self.workgroup_size)

    @property
    def program_workgroup(self) -> tuple[int, ...]:
        return _triple(self.program_workgroup_size)

    @property
    def static_grid(self) -> tuple[int, ...] | None:
        return None if self.grid is None else _triple(self.grid)

    @property
    def count_names(self) -> tuple[str, ...]:
        return tuple(a.data for a in self.count_buffers.data)  # type: ignore[union-attr]

    @property
    def is_widened(self) -> bool:
        """Whether the kernel's workgroup differs from the program's (ids are remapped)."""
        return self.kernel_workgroup != self.program_workgroup

    @property
    def vector_width(self) -> int:
        """Logical invocations per launched invocation (`elements_per_invocation`, 1 when absent)."""
        attr = self.elements_per_invocation
        return 1 if attr is None else attr.value.data

    @property
    def coarsening(self) -> int:
        """Logical workgroups per launched workgroup (`groups_per_workgroup`, 1 when absent)."""
        attr = self.groups_per_workgroup
        return 1 if attr is None else attr.value.data

    @property
    def logical_static_grid(self) -> tuple[int, ...] | None:
        """The grid of logical workgroups: `logical_grid` when recorded, else the launch grid."""
        if self.logical_grid is not None:
            return _triple(self.logical_grid)
        return self.static_grid

    @property
    def declared_total(self) -> int | None:
        """`declared_invocations`, or None when it is not recorded."""
        attr = self.declared_invocations
        return None if attr is None else attr.value.data

    def record_launch(
        self,
        grid: Sequence[int],
        elements_per_invocation: int = 1,
        groups_per_workgroup: int = 1,
    ) -> None:
        """Record a launch grid that differs from the logical one, with the vector
        width or the coarsening that explains it (the logical grid is kept)."""
        if self.logical_grid is None:
            assert self.grid is not None
            self.properties["logical_grid"] = self.grid
        self.properties["grid"] = _dense(grid)
        for key, value in (
            ("elements_per_invocation", elements_per_invocation),
            ("groups_per_workgroup", groups_per_workgroup),
        ):
            if value > 1:
                self.properties[key] = IntegerAttr(value, i64)

    @classmethod
    def parse(cls, parser: Parser) -> DispatchOp:
        parser.parse_keyword("workgroup_size")
        workgroup = _parse_int_list(parser, "workgroup_size")
        parser.parse_keyword("program_workgroup_size")
        program = _parse_int_list(parser, "program_workgroup_size")
        parser.parse_keyword("grid")
        grid = indirect = None
        offset = 0
        explicit = parser.parse_optional_keyword("explicit") is not None
        if explicit:
            grid = _parse_int_list(parser, "grid")
        elif parser.parse_optional_keyword("indirect") is not None:
            indirect = parser.parse_symbol_name().data
            if parser.parse_optional_keyword("offset") is not None:
                offset = parser.parse_integer(allow_boolean=False, allow_negative=False)
        elif parser.parse_optional_punctuation("?") is None:
            grid = _parse_int_list(parser, "grid")
        parser.parse_keyword("count")
        names = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: parser.parse_symbol_name().data
        )
        op = cls(workgroup, program, grid, names, indirect, offset, explicit)
        for key in _LAUNCH_KEYWORDS:
            if parser.parse_optional_keyword(key) is None:
                continue
            if key == "logical_grid":
                op.properties[key] = _dense(_parse_int_list(parser, key))
            else:
                value = parse_int_in(parser, key, 1, I64_MAX)
                op.properties[key] = IntegerAttr(value, i64)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" workgroup_size ")
        _print_int_list(printer, self.kernel_workgroup)
        printer.print_string(" program_workgroup_size ")
        _print_int_list(printer, self.program_workgroup)
        printer.print_string(" grid ")
        if self.indirect_buffer is not None:
            printer.print_string("indirect ")
            printer.print_symbol_name(self.indirect_buffer)
            if self.indirect_byte_offset:
                printer.print_string(f" offset {self.indirect_byte_offset}")
        elif self.static_grid is None:
            printer.print_string("?")
        else:
            if self.is_explicit:
                printer.print_string("explicit ")
            _print_int_list(printer, self.static_grid)
        printer.print_string(" count [")
        printer.print_list(self.count_names, printer.print_symbol_name)
        printer.print_string("]")
        for key in _LAUNCH_KEYWORDS:
            attr = self.properties.get(key)
            if isinstance(attr, DenseArrayBase):
                printer.print_string(f" {key} ")
                _print_int_list(printer, _triple(attr))
            elif isinstance(attr, IntegerAttr):
                printer.print_string(f" {key} {attr.value.data}")
        _print_attrs(printer, self)

    def verify_(self) -> None:
        if self.indirect is not None and self.grid is not None:
            raise VerifyException("an indirect dispatch has no static grid")
        if self.is_explicit and self.grid is None:
            raise VerifyException("an explicit grid needs its workgroups per axis")
        if self.is_explicit and self.is_widened:
            raise VerifyException(
                "a kernel with an explicit grid runs the program's own workgroup size"
            )
        if self.indirect_offset is not None and self.indirect is None:
            raise VerifyException("an indirect grid offset needs an indirect grid")
        _verify_launch_record(self)
        if self.indirect_byte_offset < 0 or self.indirect_byte_offset % 4:
            raise VerifyException(
                f"indirect grid offset {self.indirect_byte_offset} is not a non-negative "
                "multiple of 4 bytes"
            )
        for what, values in (
            ("workgroup_size", self.kernel_workgroup),
            ("program_workgroup_size", self.program_workgroup),
            ("grid", self.static_grid),
        ):
            if values is not None and len(values) != 3:
                raise VerifyException(f"{what} must have exactly 3 axes")
            for axis, value in enumerate(values or ()):
                if value < 0:
                    raise VerifyException(
                        f"{what} is {value} on axis {AXES[axis]}; it must not be negative"
                    )


#: `kernel.for ... {unroll}`: the loop has constant bounds and prints unrolled
#: (set by `vyre-lower`; a backend prints one scope per iteration)
UNROLL = "unroll"
#: `kernel.binding ... {written_first}` on a workgroup binding: the kernel stores
#: every element before any invocation reads it (set by `vyre-lower`), so the
#: prologue need not clear it
WRITTEN_FIRST = "written_first"
#: `kernel.barrier {workgroup_only}`: no storage element is shared across the
#: kernel's barriers, so they need not order storage memory (set by `vyre-lower`;
#: an unmarked barrier orders storage and workgroup memory)
WORKGROUP_ONLY = "workgroup_only"
#: `kernel.region "..." {coarsened}`: the region a coarsened kernel
#: (`groups_per_workgroup` above 1) runs once per logical workgroup (set by `kernel-coarsen`)
COARSENED = "coarsened"

#: the optional launch-record keywords of `kernel.dispatch`, in printed order
_LAUNCH_KEYWORDS = (
    "elements_per_invocation",
    "groups_per_workgroup",
    "logical_grid",
    "declared_invocations",
)
#: the vector widths `elements_per_invocation` may take
VECTOR_WIDTHS = (1, 2, 4, 8, 16)


def _verify_launch_record(d: DispatchOp) -> None:
    """The local rules of the launch record (`kernel-verify` checks the grid itself)."""
    width, groups = d.vector_width, d.coarsening
    if width not in VECTOR_WIDTHS:
        raise VerifyException(
            f"elements_per_invocation is {width}; it must be one of {list(VECTOR_WIDTHS)}"
        )
    if groups < 1:
        raise VerifyException(f"groups_per_workgroup is {groups}; it must be at least 1")
    if d.declared_total is not None and (not d.is_widened or d.declared_total < 1):
        raise VerifyException("declared_invocations applies only to a widened kernel (at least 1)")
    if width == 1 and groups == 1:
        if d.logical_grid is not None:
            raise VerifyException(
                "logical_grid needs elements_per_invocation or groups_per_workgroup above 1"
            )
        return
    if width > 1 and groups > 1:
        raise VerifyException("a kernel is either vectorized or coarsened, not both")
    if d.grid is None or d.logical_grid is None or d.is_explicit or d.is_widened:
        raise VerifyException(
            "elements_per_invocation or groups_per_workgroup above 1 needs a static, "
            "non-explicit grid of a kernel that is not widened, and its logical_grid"
        )
    if len(_triple(d.logical_grid)) != 3 or min(_triple(d.logical_grid)) < 1:
        raise VerifyException("logical_grid must have exactly 3 positive axes")


@irdl_op_definition
class BindingOp(IRDLOperation):
    """One binding slot: name, slot, bind group, memory class, visibility, element type and count.

    Host classes (`global`, `constant`, `uniform`) carry a bind group; `shared`
    (workgroup memory) and `scratch` do not. `atomic` marks a binding targeted by
    atomics (an `array<atomic<u32>>` in WGSL); `trap_sidecar` the binding the
    trap sidecar is recorded in. `no_clear` (set by `kernel-elide-clears`) says
    that this kernel writes every element of the buffer before anything reads
    it, so a runtime need not zero the buffer first when this kernel is the
    first of a run to bind it.

    ```mlir
    kernel.binding @x slot 0 group 0 constant read_only : f32[1024]
    kernel.binding @cnt slot 2 group 0 global read_write atomic : ui32[?]
    kernel.binding @p slot 3 group 1 uniform read_only : ui32[4]
    kernel.binding @tile slot 16777216 shared read_write : f32[64]
    kernel.binding @__vyre_descriptor_trap_sidecar slot 4 group 0 global read_write trap_sidecar : ui32[8]
    kernel.binding @__vyre_repetition slot 5 group 0 constant read_only repetition : ui32[1]
    kernel.binding @out slot 1 group 0 global write_only no_clear : f32[1024]
    ```

    `repetition` marks the binding that holds the current repetition of a run
    (read by `kernel.repetition`): the runtime binds, for repetition r, one
    word holding r.
    """

    name = "kernel.binding"

    sym_name = prop_def(StringAttr)
    slot = prop_def(IntegerAttr)
    group = opt_prop_def(IntegerAttr)
    memory_class = prop_def(StringAttr)
    visibility = prop_def(StringAttr)
    element_type = prop_def(TypeAttribute)
    count = opt_prop_def(IntegerAttr)
    atomic = opt_prop_def(UnitAttr)
    trap_sidecar = opt_prop_def(UnitAttr)
    repetition = opt_prop_def(UnitAttr)
    no_clear = opt_prop_def(UnitAttr)

    traits = traits_def(HasParent(DescriptorOp), SymbolOpInterface())

    def __init__(
        self,
        name: str,
        slot: int,
        memory_class: str,
        visibility: str,
        element_type: Attribute | str,
        count: int | None,
        *,
        group: int | None = None,
        atomic: bool = False,
        trap_sidecar: bool = False,
        repetition: bool = False,
        no_clear: bool = False,
    ):
        properties: dict[str, Attribute] = {
            "sym_name": StringAttr(name),
            "slot": IntegerAttr(slot, i64),
            "memory_class": StringAttr(memory_class),
            "visibility": StringAttr(visibility),
            "element_type": _element(element_type),
        }
        if group is not None:
            properties["group"] = IntegerAttr(group, i64)
        if count is not None:
            properties["count"] = IntegerAttr(count, i64)
        if atomic:
            properties["atomic"] = UnitAttr()
        if trap_sidecar:
            properties["trap_sidecar"] = UnitAttr()
        if repetition:
            properties["repetition"] = UnitAttr()
        if no_clear:
            properties["no_clear"] = UnitAttr()
        super().__init__(properties=properties)

    @property
    def buffer_name(self) -> str:
        return self.sym_name.data

    @property
    def slot_number(self) -> int:
        return self.slot.value.data

    @property
    def group_number(self) -> int | None:
        return None if self.group is None else self.group.value.data

    @property
    def mem_class(self) -> str:
        return self.memory_class.data

    @property
    def access(self) -> str:
        return self.visibility.data

    @property
    def element(self) -> str:
        return type_name(self.element_type) or str(self.element_type)

    @property
    def static_count(self) -> int | None:
        return None if self.count is None else self.count.value.data

    @property
    def is_atomic(self) -> bool:
        return self.atomic is not None

    @property
    def is_trap_sidecar(self) -> bool:
        return self.trap_sidecar is not None

    @property
    def is_repetition(self) -> bool:
        return self.repetition is not None

    @property
    def is_no_clear(self) -> bool:
        """Marked by `kernel-elide-clears`: the kernel writes every element before any read."""
        return self.no_clear is not None

    @property
    def is_host(self) -> bool:
        """Bound as a storage buffer in a bind group (a host class or `scratch`)."""
        return self.mem_class in BOUND_CLASSES

    @property
    def is_scratch(self) -> bool:
        return self.mem_class == "scratch"

    @classmethod
    def parse(cls, parser: Parser) -> BindingOp:
        name = parser.parse_symbol_name().data
        parser.parse_keyword("slot")
        slot = _parse_slot(parser)
        group = None
        if parser.parse_optional_keyword("group") is not None:
            group = parse_int_in(parser, "group", 0, I64_MAX)
        pos = parser.pos
        memory_class = parser.parse_identifier()
        if memory_class not in MEMORY_CLASSES:
            parser.raise_error(
                f"expected a memory class, one of {', '.join(MEMORY_CLASSES)}", pos, parser.pos
            )
        pos = parser.pos
        visibility = parser.parse_identifier()
        if visibility not in VISIBILITIES:
            parser.raise_error(
                f"expected a visibility, one of {', '.join(VISIBILITIES)}", pos, parser.pos
            )
        atomic = parser.parse_optional_keyword("atomic") is not None
        sidecar = parser.parse_optional_keyword("trap_sidecar") is not None
        repetition = parser.parse_optional_keyword("repetition") is not None
        no_clear = parser.parse_optional_keyword("no_clear") is not None
        element_type, count = parse_shaped_type(parser)
        op = cls(
            name,
            slot,
            memory_class,
            visibility,
            element_type,
            count,
            group=group,
            atomic=atomic,
            trap_sidecar=sidecar,
            repetition=repetition,
            no_clear=no_clear,
        )
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.buffer_name)
        printer.print_string(f" slot {self.slot_number}")
        if self.group_number is not None:
            printer.print_string(f" group {self.group_number}")
        printer.print_string(f" {self.mem_class} {self.access}")
        if self.is_atomic:
            printer.print_string(" atomic")
        if self.is_trap_sidecar:
            printer.print_string(" trap_sidecar")
        if self.is_repetition:
            printer.print_string(" repetition")
        if self.is_no_clear:
            printer.print_string(" no_clear")
        print_shaped_type(printer, self.element_type, self.static_count)
        _print_attrs(printer, self)

    def verify_(self) -> None:
        if self.mem_class not in MEMORY_CLASSES:
            raise VerifyException(
                f"unknown memory class '{self.mem_class}'; expected one of {', '.join(MEMORY_CLASSES)}"
            )
        if self.access not in VISIBILITIES:
            raise VerifyException(
                f"unknown visibility '{self.access}'; expected one of {', '.join(VISIBILITIES)}"
            )
        _require_element_type(self.element_type, f"binding @{self.buffer_name}")
        if not 0 <= self.slot_number <= MAX_SLOT:
            raise VerifyException(
                f"slot {self.slot_number} of binding @{self.buffer_name} is out of range; "
                f"slots are between 0 and {MAX_SLOT} (2^32 - 1)"
            )
        if (
            problem := count_problem(self.static_count, f"binding @{self.buffer_name}")
        ) is not None:
            raise VerifyException(problem)
        expected_group = bind_group(self.mem_class)
        if self.group_number != expected_group:
            want = "no bind group" if expected_group is None else f"bind group {expected_group}"
            raise VerifyException(
                f"binding @{self.buffer_name} of class {self.mem_class} takes {want}, "
                f"not {self.group_number if self.group_number is not None else 'none'}"
            )
        if self.mem_class in (*WORKGROUP_CLASSES, "scratch") and not self.static_count:
            raise VerifyException(
                f"{self.mem_class} binding @{self.buffer_name} needs a static element count > 0"
            )
        if self.is_atomic and self.element != "ui32":
            raise VerifyException(f"atomic binding @{self.buffer_name} must hold ui32")
        if self.is_no_clear and (
            self.mem_class != "global" or self.access == "read_only" or self.is_trap_sidecar
        ):
            raise VerifyException(
                f"binding @{self.buffer_name}: 'no_clear' applies only to a writable global "
                "binding that is not the trap sidecar"
            )


# ============================================================================ memory


class _MemoryOp(IRDLOperation):
    """Shared helpers of the slot-addressed memory ops."""

    slot = prop_def(IntegerAttr)
    traits = traits_def(SlotAddressed())
    #: the memory classes this op may address
    CLASSES: ClassVar[tuple[str, ...]] = ()

    @property
    def slot_number(self) -> int:
        return self.slot.value.data

    def binding(self) -> BindingOp | None:
        descriptor = enclosing_descriptor(self)
        return None if descriptor is None else descriptor.binding_at(self.slot_number)


class _SlotAddress:
    """The address of a slot-addressed load, store or atomic, `slot N [%i]` (see
    `syntax.MemoryOpSyntax`)."""

    ADDRESS_SYNTAX: ClassVar[str] = "slot N [%i]"

    @classmethod
    def parse_address(cls, parser: Parser) -> tuple[int, SSAValue]:
        return _parse_slot_index(parser)

    def print_address(self, printer: Printer) -> None:
        op: Any = self
        _print_slot_index(printer, op.slot_number, op.index)


class _LoadOp(_SlotAddress, LoadSyntax, _MemoryOp):
    index = operand_def(ui32)
    result = result_def()
    traits = traits_def(MemoryReadEffect(), LoadLike())

    def __init__(self, slot: int, index: SSAValue | Operation, result_type: Attribute | str):
        super().__init__(
            operands=[index],
            properties={"slot": IntegerAttr(slot, i64)},
            result_types=[_element(result_type)],
        )

    def verify_(self) -> None:
        _require_element_type(self.result.type, f"'{self.name}'")


@irdl_op_definition
class LoadGlobalOp(_LoadOp):
    """Loads an element of a `global` slot; out of bounds gives the typed zero.

    ```mlir
    %v = kernel.load_global slot 1 [%i] : f32
    ```
    """

    name = "kernel.load_global"
    CLASSES: ClassVar[tuple[str, ...]] = ("global", "scratch")


@irdl_op_definition
class LoadConstantOp(_LoadOp):
    """Loads an element of a read-only `constant` slot; out of bounds gives the typed zero.

    ```mlir
    %v = kernel.load_constant slot 0 [%i] : f32
    ```
    """

    name = "kernel.load_constant"
    CLASSES: ClassVar[tuple[str, ...]] = ("constant",)


@irdl_op_definition
class LoadUniformOp(_LoadOp):
    """Loads an element of a `uniform` slot (bind group 1); out of bounds gives the typed zero.

    ```mlir
    %v = kernel.load_uniform slot 3 [%i] : ui32
    ```
    """

    name = "kernel.load_uniform"
    CLASSES: ClassVar[tuple[str, ...]] = ("uniform",)


@irdl_op_definition
class LoadSharedOp(_LoadOp):
    """Loads an element of workgroup memory (`shared` or `scratch`); out of bounds gives 0.

    ```mlir
    %v = kernel.load_shared slot 16777216 [%l] : f32
    ```
    """

    name = "kernel.load_shared"
    CLASSES: ClassVar[tuple[str, ...]] = WORKGROUP_CLASSES


class _StoreOp(_SlotAddress, StoreSyntax, _MemoryOp):
    index = operand_def(ui32)
    value = operand_def()
    traits = traits_def(MemoryWriteEffect(), StoreLike())

    def __init__(self, slot: int, index: SSAValue | Operation, value: SSAValue | Operation):
        super().__init__(operands=[index, value], properties={"slot": IntegerAttr(slot, i64)})

    def verify_(self) -> None:
        _require_element_type(self.value.type, f"'{self.name}'")


@irdl_op_definition
class StoreGlobalOp(_StoreOp):
    """Stores to a writable `global` slot; an out-of-bounds store does nothing.

    ```mlir
    kernel.store_global slot 1 [%i] = %s : f32
    ```
    """

    name = "kernel.store_global"
    CLASSES: ClassVar[tuple[str, ...]] = ("global", "scratch")


@irdl_op_definition
class StoreSharedOp(_StoreOp):
    """Stores to workgroup memory; an out-of-bounds store does nothing.

    ```mlir
    kernel.store_shared slot 16777216 [%l] = %v : f32
    ```
    """

    name = "kernel.store_shared"
    CLASSES: ClassVar[tuple[str, ...]] = WORKGROUP_CLASSES


@irdl_op_definition
class AtomicOp(_SlotAddress, AtomicSyntax, _MemoryOp):
    """Atomic read-modify-write on a `ui32` `global` or `shared` slot; returns the
    old value (0 and no effect when the index is out of bounds).

    ```mlir
    %old = kernel.atomic add slot 2 [%i], %one : ui32
    %prev = kernel.atomic compare_exchange slot 2 [%i], %expected, %new : ui32
    ```
    """

    name = "kernel.atomic"
    CLASSES: ClassVar[tuple[str, ...]] = ("global", *WORKGROUP_CLASSES)

    kind = prop_def(StringAttr)
    #: upstream's memory ordering; absent means `seq_cst` (the default)
    ordering = opt_prop_def(StringAttr)
    index = operand_def(ui32)
    expected = opt_operand_def(ui32)
    value = operand_def(ui32)
    result = result_def(ui32)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(
        self,
        kind: str,
        slot: int,
        index: SSAValue | Operation,
        value: SSAValue | Operation,
        expected: SSAValue | Operation | None = None,
        ordering: str | None = None,
    ):
        super().__init__(
            operands=[index, [] if expected is None else [expected], value],
            properties={"kind": StringAttr(kind), "slot": IntegerAttr(slot, i64)},
            result_types=[ui32],
        )
        if ordering is not None:
            self.properties["ordering"] = StringAttr(ordering)

    def verify_(self) -> None:
        self.verify_kind_and_ordering()


class _SlotValueOp(_MemoryOp):
    """A `ui32` value read through a binding, written `OP slot N`."""

    def __init__(self, slot: int):
        super().__init__(properties={"slot": IntegerAttr(slot, i64)}, result_types=[ui32])

    @classmethod
    def parse(cls, parser: Parser) -> _SlotValueOp:
        parser.parse_keyword("slot")
        op = cls(_parse_slot(parser))
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" slot {self.slot_number}")
        _print_attrs(printer, self)


@irdl_op_definition
class BufferLengthOp(_SlotValueOp):
    """The element count of a slot as `ui32` (the declared count, or the bound length when `?`).

    ```mlir
    %n = kernel.buffer_length slot 0
    ```
    """

    name = "kernel.buffer_length"
    CLASSES: ClassVar[tuple[str, ...]] = MEMORY_CLASSES
    result = result_def(ui32)
    traits = traits_def(Pure())


@irdl_op_definition
class RepetitionOp(_SlotValueOp):
    """The current repetition of the run (`vyre.repetition`), read from the
    `repetition` binding at `slot` (one ui32 word the runtime binds per
    repetition, so that all repetitions are one submission).

    ```mlir
    kernel.binding @__vyre_repetition slot 2 group 0 constant read_only repetition : ui32[1]
    %r = kernel.repetition slot 2
    ```
    """

    name = "kernel.repetition"
    CLASSES: ClassVar[tuple[str, ...]] = ("constant",)
    result = result_def(ui32)
    traits = traits_def(Pure())


LOAD_OPS: dict[str, type[_LoadOp]] = {
    "global": LoadGlobalOp,
    "constant": LoadConstantOp,
    "uniform": LoadUniformOp,
    "shared": LoadSharedOp,
    "scratch": LoadGlobalOp,
}
STORE_OPS: dict[str, type[_StoreOp]] = {
    "global": StoreGlobalOp,
    "shared": StoreSharedOp,
    "scratch": StoreGlobalOp,
}


# ids, locals and structure live in control.py; bound here after every name they use
from vyre_xdsl.dialects.kernel.control import (  # noqa: E402
    BarrierOp,
    BlockOp,
    ForOp,
    IfOp,
    InvocationIdOp,
    LocalIdOp,
    LocalLoadOp,
    LocalOp,
    LocalStoreOp,
    NumWorkgroupsOp,
    RegionOp,
    ReturnOp,
    TrapOp,
    WorkgroupIdOp,
    find_local,
)

Kernel = Dialect(
    "kernel",
    [
        DescriptorOp,
        DispatchOp,
        BindingOp,
        LoadGlobalOp,
        LoadConstantOp,
        LoadUniformOp,
        LoadSharedOp,
        StoreGlobalOp,
        StoreSharedOp,
        AtomicOp,
        BufferLengthOp,
        RepetitionOp,
        InvocationIdOp,
        WorkgroupIdOp,
        LocalIdOp,
        NumWorkgroupsOp,
        LocalOp,
        LocalStoreOp,
        LocalLoadOp,
        IfOp,
        ForOp,
        BlockOp,
        RegionOp,
        BarrierOp,
        ReturnOp,
        TrapOp,
    ],
    [],
)


def invocation_offset(index: SSAValue) -> int | None:
    """`c` (mod 2^32) when `index` is `kernel.invocation_id x + c` (a `vyre.add` or
    `vyre.sub` of a ui32 `vyre.const`, or the id itself: 0); None otherwise."""
    from vyre_xdsl.dialects.vyre import AddOp, ConstOp, SubOp

    owner = index.owner
    if isinstance(owner, InvocationIdOp):
        return 0 if owner.axis_index == 0 else None
    if not isinstance(owner, AddOp | SubOp):
        return None
    a, b = owner.operands
    offsets = [(a, b)] if isinstance(owner, SubOp) else [(a, b), (b, a)]
    for base, constant in offsets:
        c = constant.owner
        if (
            isinstance(base.owner, InvocationIdOp)
            and base.owner.axis_index == 0
            and isinstance(c, ConstOp)
            and constant.type == ui32
        ):
            value = int(c.literal())
            return (-value if isinstance(owner, SubOp) else value) % (1 << 32)
    return None


def descriptors(module: Operation) -> list[DescriptorOp]:
    """The descriptors of a module, in dispatch order."""
    return [op for op in module.walk() if isinstance(op, DescriptorOp)]


__all__ = [
    "Kernel",
    "descriptors",
    "invocation_offset",
    "find_local",
    "TRAP_SIDECAR_NAME",
    "TRAP_SIDECAR_WORDS",
    "REPETITION_NAME",
    "WORKGROUP_SLOT_BASE",
    "ElementAccess",
    "IdLike",
    "LoadLike",
    "SlotAddressed",
    "StoreLike",
    "TableLike",
]
