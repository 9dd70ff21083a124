"""Splitting a program at its `vyre.barrier grid_sync` ops into consecutive parts.

A `grid_sync` barrier means the whole dispatch synchronises. A wgpu dispatch
cannot do that, so the program becomes one dispatch per part, recorded in
order in one submit. Every part has the buffers and element count of the whole
program; lowering launches each on the workgroups in which it can have an
effect (`geometry.active_groups`: a part whose effects sit under arm guards
runs on the grid of those arms).

1. **Hoisting** (as upstream's `hoist_grid_sync_barriers`): a `vyre.block` or
   `vyre.region` whose body holds a `grid_sync` (directly or in a nested
   block/region) is cut into one scope per side of the barrier, so that every
   `grid_sync` is at the top level. A `grid_sync` inside a loop or an `if` is
   refused by the verifier.
2. **Recomputation**: pure ops (constants, ids, arithmetic, `buf_len`) and
   loads of buffers the program never writes that a later part needs are
   cloned into that part.
3. **Spilling**: every other SSA value used after a `grid_sync` (a load of a
   written buffer, an atomic, a local read, a value computed in a split
   scope) and every named local declared before a `grid_sync` and used after
   it lives in per-invocation scratch: one `scratch` buffer per element type
   (`__vyre_spill_ui32`, ...; `i1` is kept as a `ui32` 0/1), `K` elements per
   invocation, element `p * K + slot` for the invocation's linear index `p`.
   An SSA value is stored right after its definition; a named local after its
   declaration and after every assignment. A later part that uses it reloads
   it at its start (a local as a `vyre.let` of the same name).

A `vyre.return` before a split is still refused (a returned invocation would
run later parts).

Part `K` of `@p` is `vyre.program @p_partK {source = "p", part = K,
count_buffers = [...]}`: the whole program's attributes, workgroup size and
grid, and the buffers that size the whole program's dispatch
(`dispatch.count_buffer_names`), so that every part launches the grid of the
whole program (cut to its active workgroups). `split_dispatch` adds the checks
of the whole dispatch that the parts could no longer make. The pass
`vyre-split-grid-sync` applies it to a module; `vyre-lower` to each program.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, StringAttr, SymbolRefAttr, UnitAttr, i64
from xdsl.ir import Attribute, Operation, SSAValue

from vyre_xdsl.analysis import buffers_written, declaration_of, is_expression
from vyre_xdsl.diagnostics import VyreDiagnostic
from vyre_xdsl.dialects.vyre import (
    COUNT_BUFFERS_ATTR,
    PART_ATTR,
    SCRATCH_ATTR,
    SOURCE_ATTR,
    AddOp,
    AssignOp,
    BarrierOp,
    BlockOp,
    BufferOp,
    ConstOp,
    LetOp,
    LoadOp,
    LocalIdOp,
    MulOp,
    NeOp,
    ProgramOp,
    RegionOp,
    ReturnOp,
    SelectOp,
    StoreOp,
    VarOp,
    WorkgroupIdOp,
    type_name,
)
from vyre_xdsl.dispatch import check_derived_grid, count_buffer_names, static_element_count

SPILL_PREFIX = "__vyre_spill_"


def has_grid_sync(program: ProgramOp) -> bool:
    return any(isinstance(op, BarrierOp) and op.is_grid_sync for op in program.walk())


def is_scratch_buffer(buffer: BufferOp) -> bool:
    return buffer.is_scratch


def _is_grid_sync(op: Operation) -> bool:
    return isinstance(op, BarrierOp) and op.is_grid_sync


def _contains_grid_sync(op: Operation) -> bool:
    return any(_is_grid_sync(inner) for inner in op.walk())


# ============================================================================ hoisting


def _hoisted(
    ops: list[Operation], mapping: dict[SSAValue, SSAValue], origin: dict[Operation, Operation]
) -> list[Operation]:
    """Clones of `ops` with every block/region that holds a grid_sync cut at it;
    `origin` maps every cloned op back to its original."""
    result: list[Operation] = []
    for op in ops:
        if not (isinstance(op, BlockOp | RegionOp) and _contains_grid_sync(op)):
            clone = op.clone(value_mapper=mapping)
            origin.update(zip(clone.walk(), op.walk()))
            result.append(clone)
            continue
        pieces: list[list[Operation]] = [[]]
        for inner in _hoisted(list(op.body.block.ops), mapping, origin):
            if _is_grid_sync(inner):
                result.append(_scope_like(op, pieces[-1]))
                result.append(inner)
                pieces.append([])
            else:
                pieces[-1].append(inner)
        result.append(_scope_like(op, pieces[-1]))
    return result


def _scope_like(scope: BlockOp | RegionOp, body: list[Operation]) -> Operation:
    new = BlockOp(body) if isinstance(scope, BlockOp) else RegionOp(scope.generator.data, body)
    new.attributes.update(scope.attributes)
    new.location = scope.location
    return new


# ============================================================================ spill slots


@dataclass
class _Slots:
    """Scratch slots: element type -> number of slots; value/local -> (type, slot)."""

    per_type: dict[str, int] = field(default_factory=dict)
    of: dict[object, tuple[str, int]] = field(default_factory=dict)

    def slot(self, key: object, element: str) -> tuple[str, int]:
        if key not in self.of:
            stored = "ui32" if element == "i1" else element
            self.of[key] = (element, self.per_type.get(stored, 0))
            self.per_type[stored] = self.per_type.get(stored, 0) + 1
        return self.of[key]

    def buffer(self, element: str) -> str:
        return spill_buffer_name("ui32" if element == "i1" else element)


def spill_buffer_name(element: str) -> str:
    """The scratch buffer of spilled `element` values: an identifier, so
    `vector<4xf32>` spills to `__vyre_spill_vector_4xf32`."""
    return SPILL_PREFIX + element.replace("<", "_").replace(">", "")


@dataclass
class _Part:
    """What one part needs from earlier parts."""

    recompute: set[Operation] = field(default_factory=set)
    reload_values: list[SSAValue] = field(default_factory=list)
    reload_locals: list[LetOp] = field(default_factory=list)


def split_dispatch(program: ProgramOp) -> list[ProgramOp]:
    """`split_program`, refusing (at `program`) what only the whole dispatch
    shows: an indirect grid with values live across a grid_sync, and a derived
    grid that cannot cover the whole program's static element count
    (`check_derived_grid`; a part may no longer read `vyre.invocation_id`)."""
    parts = split_program(program)
    if len(parts) == 1:
        return parts
    if program.indirect_buffer is not None and any(
        is_scratch_buffer(b) for part in parts for b in part.buffers()
    ):
        raise VyreDiagnostic(
            [
                (
                    program,
                    f"@{program.sym_name.data} has an indirect grid and values live across a "
                    "grid_sync; their scratch is sized by a grid known only on the GPU. Fix: pass "
                    "the values through a buffer, or split the program in two",
                )
            ]
        )
    n = static_element_count(program, count_buffer_names(program))
    if n is not None:
        check_derived_grid(program, n)
    return parts


def split_program(program: ProgramOp) -> list[ProgramOp]:
    """The parts of `program` between its grid_sync barriers (just `[program]` when
    it has none). Parts are new, detached programs `@p_part0`, `@p_part1`, ...
    (see the module docstring)."""
    if not has_grid_sync(program):
        return [program]
    origin: dict[Operation, Operation] = {}
    flat = ProgramOp(
        program.sym_name.data,
        program.workgroup,
        [b.clone() for b in program.buffers()] + _hoisted(list(program.statements()), {}, origin),
        grid=program.explicit_grid,
    )
    image = {original: clone for clone, original in origin.items()}

    def declaration(op: VarOp | AssignOp) -> Operation | None:
        found = declaration_of(origin[op])
        return None if found is None else image.get(found)

    segments: list[list[Operation]] = [[]]
    for op in flat.statements():
        if _is_grid_sync(op):
            segments.append([])
        else:
            segments[-1].append(op)
    segment_of = {op: k for k, ops in enumerate(segments) for top in ops for op in top.walk()}
    written = buffers_written(flat)
    errors: list[tuple[Operation | None, str]] = []
    for ops in segments[:-1]:
        for top in ops:
            for op in top.walk():
                if isinstance(op, ReturnOp):
                    errors.append(
                        (
                            op,
                            "'vyre.return' before a grid_sync: the split dispatch would run "
                            "the rest of the program for invocations that returned. "
                            "Fix: guard the later statements with a condition instead",
                        )
                    )
    slots = _Slots()
    needs = [
        _needs(ops, k, segment_of, written, slots, declaration) for k, ops in enumerate(segments)
    ]
    for buffer in program.buffers():
        if slots.of and buffer.buffer_name.startswith(SPILL_PREFIX):
            errors.append(
                (
                    buffer,
                    f"buffer name @{buffer.buffer_name} is reserved for grid_sync spills "
                    f"(prefix {SPILL_PREFIX}). Fix: rename the buffer",
                )
            )
    if errors:
        raise VyreDiagnostic(errors)
    spilled_values = {value for need in needs for value in need.reload_values}
    spilled_locals = {let for need in needs for let in need.reload_locals}
    counts = ArrayAttr([SymbolRefAttr(name) for name in count_buffer_names(program)])
    parts = []
    for k, ops in enumerate(segments):
        part = _build_part(
            program, flat, needs[k], ops, slots, spilled_values, spilled_locals, declaration
        )
        facts: dict[str, Attribute] = {
            SOURCE_ATTR: StringAttr(program.source_name),
            PART_ATTR: IntegerAttr(k, i64),
            COUNT_BUFFERS_ATTR: counts,
        }
        part.attributes.update(facts)
        part.sym_name = StringAttr(f"{program.sym_name.data}_part{k}")
        parts.append(part)
    return parts


def _needs(
    ops: list[Operation],
    k: int,
    segment_of: dict[Operation, int],
    written: set[str],
    slots: _Slots,
    declaration_of,
) -> _Part:
    """What part `k` recomputes and reloads from earlier parts."""
    need = _Part()

    def require(value: SSAValue) -> None:
        owner = value.owner
        if not isinstance(owner, Operation) or segment_of.get(owner, k) >= k:
            return
        if owner in need.recompute or value in need.reload_values:
            return
        if _recomputable(owner, written):
            need.recompute.add(owner)
            for operand in owner.operands:
                require(operand)
            return
        slots.slot(value, type_name(value.type) or str(value.type))
        need.reload_values.append(value)

    for top in ops:
        for op in top.walk():
            for operand in op.operands:
                require(operand)
            if isinstance(op, VarOp | AssignOp):
                declaration = declaration_of(op)
                if (
                    isinstance(declaration, LetOp)
                    and segment_of.get(declaration, k) < k
                    and declaration not in need.reload_locals
                ):
                    slots.slot(declaration, type_name(declaration.value.type) or "ui32")
                    need.reload_locals.append(declaration)
    return need


def _recomputable(op: Operation, written: set[str]) -> bool:
    if is_expression(op):
        return True
    return isinstance(op, LoadOp) and op.buffer_name not in written


# ============================================================================ building a part


def _build_part(
    program: ProgramOp,
    flat: ProgramOp,
    need: _Part,
    ops: list[Operation],
    slots: _Slots,
    spilled_values: set[SSAValue],
    spilled_locals: set[LetOp],
    declaration_of,
) -> ProgramOp:
    mapping: dict[SSAValue, SSAValue] = {}
    body: list[Operation] = [b.clone() for b in program.buffers()]
    for stored, count in slots.per_type.items():
        spill = BufferOp(spill_buffer_name(stored), "read_write", stored, count)
        spill.attributes[SCRATCH_ATTR] = UnitAttr()
        body.append(spill)
    statements: list[Operation] = []
    index = _Index(program.workgroup, statements, program.explicit_grid) if slots.of else None
    for value in need.reload_values:
        mapping[value] = _reload(value, slots, index, statements)
    for op in flat.walk():
        if op in need.recompute:
            statements.append(op.clone(value_mapper=mapping))
    for let in need.reload_locals:
        reloaded = _reload(let, slots, index, statements)
        new_let = LetOp(let.var_name.data, reloaded)
        new_let.location = let.location
        statements.append(new_let)
    for op in ops:
        clone = op.clone(value_mapper=mapping)
        statements.append(clone)
        if index is not None:
            statements += _insert_stores(
                op, clone, slots, index, spilled_values, spilled_locals, declaration_of
            )
    part = ProgramOp(
        program.sym_name.data, program.workgroup, body + statements, grid=program.explicit_grid
    )
    part.attributes.update(program.attributes)
    part.location = program.location
    return part


class _Index:
    """The invocation's linear index `p`, built once at the top of a part."""

    def __init__(
        self,
        workgroup: tuple[int, int, int],
        statements: list[Operation],
        grid: tuple[int, int, int] | None = None,
    ):
        wx, wy, wz = workgroup
        size = ConstOp(wx * wy * wz, "ui32")
        wid = WorkgroupIdOp(0)
        ops: list[Operation] = [size, wid]
        group = wid
        if grid is not None and grid[1:] != (1, 1):
            # an explicit grid: workgroup ids span every axis; the linear
            # workgroup is x + (y + z * GY) * GX
            group = self._linear_group(grid, ops)
        base = MulOp(group, size)
        ops += [base, lx := LocalIdOp(0)]
        p = AddOp(base, lx)
        for axis, stride, extent in ((1, wx, wy), (2, wx * wy, wz)):
            if extent == 1:  # that local id is always 0
                continue
            local, factor = LocalIdOp(axis), ConstOp(stride, "ui32")
            term = MulOp(local, factor)
            previous = p
            ops += [previous, local, factor, term]
            p = AddOp(previous, term)
        ops.append(p)
        statements.extend(ops)
        self.p = p.results[0]

    @staticmethod
    def _linear_group(grid: tuple[int, int, int], ops: list[Operation]) -> Operation:
        gx, gy, _ = grid
        wy, wz = WorkgroupIdOp(1), WorkgroupIdOp(2)
        c_gy, c_gx = ConstOp(gy, "ui32"), ConstOp(gx, "ui32")
        z_rows = MulOp(wz, c_gy)
        rows = AddOp(wy, z_rows)
        row_start = MulOp(rows, c_gx)
        linear = AddOp(ops[1], row_start)
        ops += [wy, wz, c_gy, c_gx, z_rows, rows, row_start, linear]
        return linear

    def element(self, slots: _Slots, key: object) -> tuple[str, list[Operation]]:
        """The spill buffer of `key` and the ops computing its element index."""
        element, slot = slots.of[key]
        stored = "ui32" if element == "i1" else element
        count = ConstOp(slots.per_type[stored], "ui32")
        offset = ConstOp(slot, "ui32")
        scaled = MulOp(self.p, count)
        at = AddOp(scaled, offset)
        return slots.buffer(element), [count, offset, scaled, at]


def _reload(key: object, slots: _Slots, index: _Index, statements: list[Operation]) -> SSAValue:
    element, _ = slots.of[key]
    name, ops = index.element(slots, key)
    statements.extend(ops)
    load = LoadOp(name, ops[-1], "ui32" if element == "i1" else element)
    statements.append(load)
    if element != "i1":
        return load.results[0]
    zero = ConstOp(0, "ui32")
    truth = NeOp(load, zero)
    statements.extend([zero, truth])
    return truth.results[0]


def _store_ops(key: object, value: SSAValue, slots: _Slots, index: _Index) -> list[Operation]:
    element, _ = slots.of[key]
    name, ops = index.element(slots, key)
    if element == "i1":
        one, zero = ConstOp(1, "ui32"), ConstOp(0, "ui32")
        chosen = SelectOp(value, one, zero)
        ops += [one, zero, chosen]
        value = chosen.results[0]
    store = StoreOp(name, ops[3], value)
    return [*ops, store]


def _insert_stores(
    original: Operation,
    clone: Operation,
    slots: _Slots,
    index: _Index,
    spilled_values: set[SSAValue],
    spilled_locals: set[LetOp],
    declaration_of,
) -> list[Operation]:
    """After every op (in `clone`) that defines a spilled value or sets a
    spilled local, store it to its scratch slot. Returns the stores that
    follow `clone` itself (the caller places top-level ops)."""
    after_clone: list[Operation] = []
    pairs = list(zip(original.walk(), clone.walk()))
    for old, new in pairs:
        stores: list[Operation] = []
        for old_result, new_result in zip(old.results, new.results):
            if old_result in spilled_values:
                stores += _store_ops(old_result, new_result, slots, index)
        if isinstance(old, LetOp) and old in spilled_locals:
            stores += _store_ops(old, new.value, slots, index)
        if isinstance(old, AssignOp):
            declaration = declaration_of(old)
            if declaration in spilled_locals:
                stores += _store_ops(declaration, new.value, slots, index)
        if not stores:
            continue
        if new is clone:
            after_clone = stores
        else:
            new.parent.insert_ops_after(stores, new)
    return after_clone
