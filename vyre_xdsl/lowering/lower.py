"""`vyre.program` -> `kernel.descriptor` (SPEC section 5; upstream `vyre-lower`).

One conversion per op kind into a fresh descriptor body. The conversion is a
single structural walk rather than a set of rewrite patterns because every op
needs the descriptor-wide facts decided first (slots, memory classes, atomic
targets, the loop variables in scope), and a grid_sync split produces several
descriptors from one program.

```python
from vyre_xdsl.lowering.lower import lower_program
descriptors = lower_program(program)        # list[kernel.DescriptorOp]
```
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.dialects.builtin import IntegerAttr, StringAttr, UnitAttr, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from vyre_xdsl import semantics
from vyre_xdsl.analysis import atomic_buffers, contains_trap, declaration_of, is_expression
from vyre_xdsl.analysis.loops import constant_trip_range, unrolled_sizes
from vyre_xdsl.analysis.workgroup_memory import (
    storage_shared_across_barriers,
    written_before_read,
)
from vyre_xdsl.diagnostics import VyreDiagnostic
from vyre_xdsl.dialects import kernel as k
from vyre_xdsl.dialects import vyre as v
from vyre_xdsl.dispatch import (
    check_derived_grid,
    count_buffer_names,
    declared_invocations,
    launch_grid,
    static_element_count,
)
from vyre_xdsl.lowering.descriptor_id import descriptor_id
from vyre_xdsl.lowering.geometry import (
    active_groups,
    fixes_launch,
    kernel_workgroup_size,
)
from vyre_xdsl.lowering.privatize import (
    DEFAULT_BINS_PER_INVOCATION,
    candidates,
    privatize_program,
)
from vyre_xdsl.lowering.split import is_scratch_buffer, split_dispatch
from vyre_xdsl.target_profile import DEFAULT_PROFILE, TargetProfile

#: vyre access mode -> (memory class, visibility)
ACCESS_CLASSES: dict[str, tuple[str, str]] = {
    "read_only": ("constant", "read_only"),
    "uniform": ("uniform", "read_only"),
    "write_only": ("global", "write_only"),
    "read_write": ("global", "read_write"),
    "workgroup": ("shared", "read_write"),
}


def assign_slots(program: v.ProgramOp) -> dict[str, int]:
    """Buffer name -> slot. A host buffer keeps its binding when no earlier buffer
    claimed it, else takes the lowest slot below 2^24 that no buffer declares or
    holds; workgroup buffers take 2^24, 2^24 + 1, ... in declaration order."""
    slots: dict[str, int] = {}
    host = [b for b in program.buffers() if not b.is_workgroup]
    claimed: set[int] = set()
    for buffer in host:
        slot = buffer.binding_slot
        if slot is not None and slot not in claimed and slot < k.WORKGROUP_SLOT_BASE:
            slots[buffer.buffer_name] = slot
            claimed.add(slot)
    free = 0
    for buffer in host:
        if buffer.buffer_name in slots:
            continue
        while free in claimed:
            free += 1
        slots[buffer.buffer_name] = free
        claimed.add(free)
    workgroup = [b for b in program.buffers() if b.is_workgroup]
    for offset, buffer in enumerate(workgroup):
        slots[buffer.buffer_name] = k.WORKGROUP_SLOT_BASE + offset
    return slots


def needs_sidecar(program: v.ProgramOp) -> bool:
    """Whether the kernel needs the trap sidecar: it may trap, or it has a loop
    (in WGSL: `vyre.loop`, `compare_exchange`, and a store of a value packed
    with its neighbours into a 32-bit word), where a driver that leaves loops
    early (Mesa's lavapipe, after 65535 iterations) is detected and reported
    through the sidecar."""
    if contains_trap(program):
        return True
    for op in program.walk():
        if isinstance(op, v.LoopOp):
            return True
        if isinstance(op, v.StoreOp) and v.type_name(op.value.type) in semantics.PACKED_TYPES:
            return True
        if isinstance(op, v.AtomicOp) and op.kind.data in ("compare_exchange", "fetch_nand"):
            return True
    return False


def lower_program(
    program: v.ProgramOp, profile: TargetProfile = DEFAULT_PROFILE, privatize: bool = True
) -> list[k.DescriptorOp]:
    """The descriptors of `program`, one per part between grid_sync barriers
    (`split_dispatch`, as `vyre-split-grid-sync`). With `privatize`, each part's
    qualifying global atomics first go through a workgroup copy
    (`privatize_program`, as `vyre-privatize-atomics`, with the profile's
    workgroup storage); `program` itself is never changed."""
    parts = split_dispatch(program)
    if privatize:
        storage = profile.max_workgroup_storage_bytes
        parts = [_privatized(part, program, storage) for part in parts]
    return [lower_part(part, profile) for part in parts]


def lower_part(part: v.ProgramOp, profile: TargetProfile = DEFAULT_PROFILE) -> k.DescriptorOp:
    """The descriptor of one dispatch: a program without grid_sync, or a part of
    one (`@p_partK {source = "p", part = K, count_buffers = [...]}`), lowered
    as it stands (no privatization). A part runs on the whole program's
    geometry: its recorded `count_buffers` size the dispatch, and the grid is
    cut to the part's active workgroups (`active_workgroups` when recorded)."""
    workgroup = kernel_workgroup_size(part, profile)
    counts = count_buffer_names(part)
    n = static_element_count(part, counts)
    if n is not None:
        check_derived_grid(part, n)
    attributes: dict[str, Attribute] = {"source": StringAttr(part.source_name)}
    if part.part_index is not None:
        attributes["part"] = IntegerAttr(part.part_index, i64)
    indirect = part.indirect_buffer
    grid = None if indirect or n is None else _part_grid(part, n, workgroup)
    explicit = part.explicit_grid
    if explicit is not None:
        grid = explicit  # launched exactly, whatever the counts say
    dispatch = k.DispatchOp(
        workgroup,
        part.workgroup,
        grid,
        counts,
        indirect,
        part.indirect_offset,
        explicit=explicit is not None,
    )
    dispatch.location = part.location
    descriptor = k.DescriptorOp(
        part.sym_name.data, descriptor_id(part), [dispatch], attributes=attributes
    )
    descriptor.location = part.location
    _Lowering(part, descriptor).run()
    record_backend_facts(descriptor, n)
    return descriptor


def record_backend_facts(descriptor: k.DescriptorOp, n: int | None) -> None:
    """The facts a backend prints by, recorded on the kernel IR: `unroll` on each
    `kernel.for` that prints unrolled (`unrolled_sizes`), `written_first` on each
    workgroup binding the kernel stores in full before any read
    (`written_before_read`), `workgroup_only` on every barrier when no storage
    element is shared across them (`storage_shared_across_barriers`), and on a
    widened kernel over `n` static elements the invocations of the program's
    declared launch (`declared_invocations`)."""
    dispatch = descriptor.dispatch()
    assert dispatch is not None
    if dispatch.is_widened and n is not None:
        total = declared_invocations(n, dispatch.program_workgroup)
        dispatch.properties["declared_invocations"] = IntegerAttr(total, i64)
    for binding in descriptor.bindings():
        if written_before_read(descriptor, binding):
            binding.attributes[k.WRITTEN_FIRST] = UnitAttr()
    barriers = [op for op in descriptor.walk() if isinstance(op, k.BarrierOp)]
    if barriers and not storage_shared_across_barriers(descriptor):
        for barrier in barriers:
            barrier.attributes[k.WORKGROUP_ONLY] = UnitAttr()
    sizes: dict[Operation, int | None] = {}
    for op in descriptor.statements():
        sizes.update(unrolled_sizes(op, k.ForOp))
    for loop, size in sizes.items():
        if size is not None and constant_trip_range(loop) is not None:
            loop.attributes[k.UNROLL] = UnitAttr()


def _privatized(part: v.ProgramOp, program: v.ProgramOp, storage: int) -> v.ProgramOp:
    """`part` with its atomics privatized (a copy when `part` is `program`).
    A widened `[1, 1, 1]` program has no workgroup to share a copy in; it has
    fewer invocations than `candidates` asks for, so it is never privatized."""
    if not candidates(part, storage, DEFAULT_BINS_PER_INVOCATION):
        return part  # nothing to privatize: no copy
    copy = part.clone() if part is program else part
    privatize_program(copy, storage)
    return copy


def _part_grid(part: v.ProgramOp, n: int, workgroup: tuple[int, int, int]) -> tuple[int, int, int]:
    """The grid of one part: the program's grid for `n` elements, cut down to the
    workgroups in which the part can have an effect (`active_groups`, or the
    `active_workgroups` that privatization recorded before it added a flush to
    every workgroup: a part whose effects all sit under arm guards runs on the
    grid of those arms)."""
    groups = None
    if not fixes_launch(part):
        groups = part.recorded_active_workgroups
        if groups is None:
            groups = active_groups(part)
    if groups is not None:
        n = min(n, max(groups, 1) * math.prod(part.workgroup))
    return launch_grid(n, workgroup, part.workgroup)


@dataclass
class _Lowering:
    """Converts one program (part) into the body of `descriptor`."""

    program: v.ProgramOp
    descriptor: k.DescriptorOp
    values: dict[SSAValue, SSAValue] = field(default_factory=dict)
    loops: dict[v.LoopOp, SSAValue] = field(default_factory=dict)
    slots: dict[str, int] = field(default_factory=dict)
    classes: dict[str, str] = field(default_factory=dict)

    def run(self) -> None:
        block = self.descriptor.body.block
        for binding in self._bindings():
            block.add_op(binding)
        self._convert_block(self.program.body.block, block)

    # ------------------------------------------------------------------ bindings

    def _bindings(self) -> list[k.BindingOp]:
        self.slots = assign_slots(self.program)
        atomics = atomic_buffers(self.program)
        bindings = []
        for buffer in self.program.buffers():
            memory_class, visibility = (
                ("scratch", "read_write")
                if is_scratch_buffer(buffer)
                else ACCESS_CLASSES[buffer.access_mode]
            )
            self.classes[buffer.buffer_name] = memory_class
            binding = k.BindingOp(
                buffer.buffer_name,
                self.slots[buffer.buffer_name],
                memory_class,
                visibility,
                buffer.element_type,
                buffer.static_count,
                group=k.bind_group(memory_class),
                atomic=buffer.buffer_name in atomics,
            )
            binding.location = buffer.location
            bindings.append(binding)
        if needs_sidecar(self.program):
            # after every host and scratch slot (scratch slots are below 2^24 too)
            host = [s for n, s in self.slots.items() if self.classes[n] != "shared"]
            sidecar = k.BindingOp(
                k.TRAP_SIDECAR_NAME,
                max(host, default=-1) + 1,
                "global",
                "read_write",
                "ui32",
                k.TRAP_SIDECAR_WORDS,
                group=0,
                atomic=True,
                trap_sidecar=True,
            )
            sidecar.location = self.program.location
            bindings.append(sidecar)
        if any(isinstance(op, v.RepetitionOp) for op in self.program.walk()):
            bindings.append(self._repetition_binding(bindings))
        return bindings

    def _repetition_binding(self, bindings: list[k.BindingOp]) -> k.BindingOp:
        """The binding `kernel.repetition` reads: the lowest slot below 2^24 that
        no other binding (host, scratch or the trap sidecar) holds."""
        taken = {b.slot_number for b in bindings}
        slot = next(s for s in range(len(taken) + 1) if s not in taken)
        self.slots[k.REPETITION_NAME] = slot
        binding = k.BindingOp(
            k.REPETITION_NAME, slot, "constant", "read_only", "ui32", 1, group=0, repetition=True
        )
        binding.location = self.program.location
        return binding

    # ------------------------------------------------------------------ body

    def _convert_block(self, source: Block, target: Block) -> None:
        for op in source.ops:
            if isinstance(op, v.BufferOp):
                continue
            converted = self._convert(op)
            if converted is not None:
                converted.location = op.location
                target.add_op(converted)

    def _region(self, source: Region) -> Region:
        block = Block()
        if source.blocks:
            self._convert_block(source.block, block)
        return Region(block)

    def _value(self, value: SSAValue) -> SSAValue:
        return self.values.get(value, value)

    def _bind(self, old: SSAValue, new: SSAValue) -> None:
        self.values[old] = new
        if new.name_hint is None:
            new.name_hint = old.name_hint

    def _slot(self, name: str) -> int:
        return self.slots[name]

    def _convert(self, op: Operation) -> Operation | None:
        handler = _HANDLERS.get(type(op))
        if handler is not None:
            return handler(self, op)
        if is_expression(op) or isinstance(op, v.SUBGROUP_OPS):
            # subgroup ops pass through unchanged, like the pure arithmetic
            return op.clone(value_mapper=self.values)
        raise VyreDiagnostic([(op, f"vyre-lower cannot lower '{op.name}'")])

    # one method per op kind -------------------------------------------------

    def _load(self, op: v.LoadOp) -> Operation:
        memory_class = self.classes[op.buffer_name]
        new = k.LOAD_OPS[memory_class](
            self._slot(op.buffer_name), self._value(op.index), op.result.type
        )
        self._bind(op.result, new.result)
        return new

    def _store(self, op: v.StoreOp) -> Operation:
        memory_class = self.classes[op.buffer_name]
        store = k.STORE_OPS.get(memory_class)
        if store is None:  # the vyre verifier rejects these; kernel-verify reports them too
            store = k.StoreGlobalOp
        return store(self._slot(op.buffer_name), self._value(op.index), self._value(op.value))

    def _atomic(self, op: v.AtomicOp) -> Operation:
        expected = None if op.expected is None else self._value(op.expected)
        ordering = None if op.ordering is None else op.ordering.data
        new = k.AtomicOp(
            op.kind.data,
            self._slot(op.buffer_name),
            self._value(op.index),
            self._value(op.value),
            expected,
            ordering,
        )
        self._bind(op.result, new.result)
        return new

    def _buf_len(self, op: v.BufLenOp) -> Operation:
        new = k.BufferLengthOp(self._slot(op.buffer_name))
        self._bind(op.result, new.result)
        return new

    def _id(self, op: Operation) -> Operation:
        new = _ID_OPS[type(op)](op.axis_index)
        self._bind(op.result, new.result)
        return new

    def _repetition(self, op: v.RepetitionOp) -> Operation:
        new = k.RepetitionOp(self.slots[k.REPETITION_NAME])
        self._bind(op.result, new.result)
        return new

    def _let(self, op: v.LetOp) -> Operation:
        return k.LocalOp(op.var_name.data, self._value(op.value))

    def _assign(self, op: v.AssignOp) -> Operation:
        return k.LocalStoreOp(op.var_name.data, self._value(op.value))

    def _var(self, op: v.VarOp) -> Operation | None:
        declaration = declaration_of(op)
        if isinstance(declaration, v.LoopOp):
            self.values[op.result] = self.loops[declaration]
            return None
        new = k.LocalLoadOp(op.var_name.data, op.result.type)
        self._bind(op.result, new.result)
        return new

    def _if(self, op: v.IfOp) -> Operation:
        then_region = self._region(op.then_region)
        else_region = self._region(op.else_region) if op.has_else else None
        return k.IfOp(self._value(op.cond), then_region, else_region)

    def _loop(self, op: v.LoopOp) -> Operation:
        new = k.ForOp(self._value(op.lower), self._value(op.upper))
        induction = new.induction
        induction.name_hint = op.var_name.data
        self.loops[op] = induction
        self._convert_block(op.body.block, new.body.block)
        return new

    def _block(self, op: v.BlockOp) -> Operation:
        return k.BlockOp(self._region(op.body))

    def _scope_region(self, op: v.RegionOp) -> Operation:
        return k.RegionOp(op.generator.data, self._region(op.body))

    def _barrier(self, op: v.BarrierOp) -> Operation:
        return k.BarrierOp(op.ordering.data)

    def _return(self, op: v.ReturnOp) -> Operation:
        return k.ReturnOp()

    def _trap(self, op: v.TrapOp) -> Operation:
        return k.TrapOp(self._value(op.address), op.tag.data)


_ID_OPS: dict[type[Operation], type[Operation]] = {
    v.InvocationIdOp: k.InvocationIdOp,
    v.WorkgroupIdOp: k.WorkgroupIdOp,
    v.LocalIdOp: k.LocalIdOp,
    v.NumWorkgroupsOp: k.NumWorkgroupsOp,
}

_HANDLERS: dict[type[Operation], Callable[[_Lowering, Operation], Operation | None]] = {
    v.LoadOp: _Lowering._load,
    v.StoreOp: _Lowering._store,
    v.AtomicOp: _Lowering._atomic,
    v.BufLenOp: _Lowering._buf_len,
    v.InvocationIdOp: _Lowering._id,
    v.WorkgroupIdOp: _Lowering._id,
    v.LocalIdOp: _Lowering._id,
    v.RepetitionOp: _Lowering._repetition,
    v.NumWorkgroupsOp: _Lowering._id,
    v.LetOp: _Lowering._let,
    v.AssignOp: _Lowering._assign,
    v.VarOp: _Lowering._var,
    v.IfOp: _Lowering._if,
    v.LoopOp: _Lowering._loop,
    v.BlockOp: _Lowering._block,
    v.RegionOp: _Lowering._scope_region,
    v.BarrierOp: _Lowering._barrier,
    v.ReturnOp: _Lowering._return,
    v.TrapOp: _Lowering._trap,
}
