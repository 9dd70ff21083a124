"""Which buffers a kernel descriptor writes in full (kernel-dialect IR).

`writes_every_element(descriptor, binding)` is True only when it is proven
that every element of the binding is stored by this kernel and that the
kernel never reads the binding, so its contents before the kernel cannot
show: a runtime may then skip zeroing the buffer (`kernel-elide-clears`). The
proof is deliberately narrow; anything it does not recognise is "not proven":

- the binding is a writable, non-atomic `global` binding of 32-bit elements
  (one element per storage word) that no load or atomic of the kernel
  addresses;
- some `kernel.store_global` to it stores at index `kernel.invocation_id x`,
  and every invocation reaches it: it is at the top level of the body, or
  inside `kernel.block`/`kernel.region` scopes and `kernel.if`s whose
  condition is `invocation_id x < B` (or a conjunction of such) with `B` a
  `ui32` constant at least the binding's count or the binding's own
  `kernel.buffer_length`; nothing before it on the way there (in the body or
  in an enclosing scope) may end the invocation (`kernel.return`, a trap, an
  op that may trap). A store in a loop or under any other condition does not
  count;
- or, a tiled store: every invocation reaches (by the same rule, with no
  guard) stores to the binding at `g * T + local_id x + c_j`, with `T` and
  each `c_j` `ui32` constants, whose ranges `[c_j, c_j + W)` for a program
  workgroup `[W, 1, 1]` cover `[0, T)`: each workgroup writes a tile of `T`
  elements, as a coarsened scan's add-back does. `g` is the workgroup's index
  among the `G` of a static launch, not widened: `workgroup_id x` (the
  logical workgroup, or an explicit grid `[G, 1, 1]`), or `workgroup_id x +
  workgroup_id y * GX` over an explicit grid `[GX, GY, 1]`. `G * T` must be at
  least the binding's count, and no index may pass `2^32 - 1`;
- the launch has at least as many `invocation_id x` values as the binding has
  elements: a static grid of G logical workgroups has G times the program's
  workgroup x size of them (a kernel widened from `[1, 1, 1]`: at least the
  smaller of its invocations and the logical element count); a runtime grid
  (`?`) covers the logical element count, the largest of the count buffers, so
  it covers a runtime-sized binding that is a count buffer, or a static one no
  larger than a static count buffer (only for a one-dimensional program
  workgroup). Indirect grids are never proven.

```python
from vyre_xdsl.analysis import covered_bindings, writes_every_element

names = covered_bindings(descriptor)   # {"out"}
```
"""

from __future__ import annotations

import math

from xdsl.ir import Operation, SSAValue

from vyre_xdsl import semantics
from vyre_xdsl.analysis.expressions import may_trap
from vyre_xdsl.analysis.tiling import affine_form
from vyre_xdsl.dialects import kernel as k
from vyre_xdsl.dialects.vyre import AndOp, ConstOp, LtOp, ui32

U32_MAX = 0xFFFFFFFF


def writes_every_element(descriptor: k.DescriptorOp, binding: k.BindingOp) -> bool:
    """Whether `descriptor` provably stores every element of `binding` and never
    reads it (see the module docstring for what is recognised)."""
    if (
        binding.mem_class != "global"
        or binding.access == "read_only"
        or binding.is_atomic
        or binding.is_trap_sidecar
        or binding.element not in semantics.ELEMENTS
        or semantics.ELEMENTS[binding.element].storage_bytes != 4
    ):
        return False
    slot = binding.slot_number
    for op in descriptor.body.walk():
        if isinstance(op, k.LoadGlobalOp | k.AtomicOp) and op.slot_number == slot:
            return False
    if _launch_covers(descriptor, binding) and _stores_everywhere(
        descriptor.body.block.ops, binding
    ):
        return True
    return _tiles_cover(descriptor, binding)


def covered_bindings(descriptor: k.DescriptorOp) -> set[str]:
    """The names of the bindings `descriptor` writes every element of (`writes_every_element`)."""
    return {b.buffer_name for b in descriptor.bindings() if writes_every_element(descriptor, b)}


# ---------------------------------------------------------------------- launch


def _launch_covers(descriptor: k.DescriptorOp, binding: k.BindingOp) -> bool:
    dispatch = descriptor.dispatch()
    if dispatch is None or dispatch.indirect_buffer is not None:
        return False
    program = dispatch.program_workgroup
    count = binding.static_count
    counts = [descriptor.binding_named(name) for name in dispatch.count_names]
    static_counts = [b.static_count for b in counts if b is not None and b.static_count is not None]
    grid = dispatch.logical_static_grid
    if grid is not None:
        if count is None or grid[2] != 1:
            return False
        groups = grid[0] * grid[1]
        if dispatch.is_widened:
            if program != (1, 1, 1):
                return False
            # the kernel skips program ids past the declared launch, which has
            # at least the logical element count of them
            ids = min(groups * math.prod(dispatch.kernel_workgroup), max(static_counts + [1]))
        else:
            ids = groups * program[0]
        return count <= ids
    if program[1:] != (1, 1):
        return False
    # a runtime grid launches ids for the logical element count: the largest count buffer
    if binding.buffer_name in dispatch.count_names:
        return True
    return count is not None and any(count <= c for c in static_counts)


# ---------------------------------------------------------------------- body


def _stores_everywhere(ops, binding: k.BindingOp) -> bool:
    """Whether every invocation with id x below the binding's count reaches a
    store of `binding` at index id x among `ops` (a block's ops, in order)."""
    for op in ops:
        if (
            isinstance(op, k.StoreGlobalOp)
            and op.slot_number == binding.slot_number
            and _is_invocation_x(op.index)
        ):
            return True
        if isinstance(op, k.BlockOp | k.RegionOp) and _stores_everywhere(
            op.body.block.ops, binding
        ):
            return True
        if (
            isinstance(op, k.IfOp)
            and _guard_passes_all(op.cond, binding)
            and _stores_everywhere(op.then_region.block.ops, binding)
        ):
            return True
        if _may_end_invocation(op):
            return False
    return False


def _tiles_cover(descriptor: k.DescriptorOp, binding: k.BindingOp) -> bool:
    """Whether stores reached by every invocation write a tile of `T` elements
    per workgroup (`g * T + local_id x + c_j`, `g` the workgroup's index) that
    together cover the binding (see the module docstring)."""
    dispatch = descriptor.dispatch()
    if dispatch is None or dispatch.indirect_buffer is not None or dispatch.is_widened:
        return False
    program, count = dispatch.program_workgroup, binding.static_count
    if program[1:] != (1, 1) or count is None:
        return False
    stores = _stores_reached(descriptor.body.block.ops, binding)
    forms = {_tile_form(store.index, dispatch) for store in stores}
    if not forms or None in forms or len({form[:2] for form in forms}) != 1:
        return False
    groups, tile, _ = next(iter(forms))
    offsets = sorted(offset for _, _, offset in forms)
    width = program[0]
    last = (groups - 1) * tile + width - 1 + offsets[-1]
    if tile == 0 or groups * tile < count or last > U32_MAX:
        return False
    covered = 0  # [0, covered) is written in every tile
    for offset in offsets:
        if offset > covered:
            return False
        covered = max(covered, offset + width)
    return covered >= tile


def _stores_reached(ops, binding: k.BindingOp) -> list[k.StoreGlobalOp]:
    """The stores of `binding` among `ops` (entering blocks and regions) that
    every invocation reaches: those before the first op that may end it."""
    stores = []
    for op in ops:
        if isinstance(op, k.StoreGlobalOp) and op.slot_number == binding.slot_number:
            stores.append(op)
        elif isinstance(op, k.BlockOp | k.RegionOp):
            stores.extend(_stores_reached(op.body.block.ops, binding))
        if _may_end_invocation(op):
            break
    return stores


def _tile_form(index: SSAValue, dispatch: k.DispatchOp) -> tuple[int, int, int] | None:
    """`(G, T, c)` when `index` is `g * T + local_id x + c` (`affine_form` over
    the ids), with `g` the index of the workgroup among the `G` of the launch:
    `workgroup_id x` over a static logical grid (the logical workgroup) or an
    explicit grid `[G, 1, 1]`, or `workgroup_id x + workgroup_id y * GX` over an
    explicit grid `[GX, GY, 1]`; else None."""
    grid = dispatch.logical_static_grid
    form = affine_form(index, leaf=_id_key)
    if grid is None or grid[2] != 1 or form is None or form.get("lane") != 1:
        return None
    if set(form) - {"lane", "wx", "wy", ""}:
        return None
    tile, y = form.get("wx", 0), form.get("wy", 0)
    if dispatch.is_explicit and grid[1] > 1 and y != grid[0] * tile:
        return None
    if y and not dispatch.is_explicit:
        return None
    return grid[0] * grid[1], tile, form.get("", 0)


def _id_key(op: Operation) -> str | None:
    """The `affine_form` key of a lane or workgroup id (`local_id x`, `workgroup_id x`/`y`)."""
    if isinstance(op, k.LocalIdOp) and op.axis_index == 0:
        return "lane"
    if isinstance(op, k.WorkgroupIdOp) and op.axis_index < 2:
        return ("wx", "wy")[op.axis_index]
    return None


def _may_end_invocation(op: Operation) -> bool:
    return any(isinstance(inner, k.ReturnOp | k.TrapOp) or may_trap(inner) for inner in op.walk())


def _is_invocation_x(value: SSAValue) -> bool:
    owner = value.owner
    return isinstance(owner, k.InvocationIdOp) and owner.axis_index == 0


def _guard_passes_all(cond: SSAValue, binding: k.BindingOp) -> bool:
    """Whether `cond` holds in every invocation whose id x is below the binding's count."""
    owner = cond.owner
    if isinstance(owner, AndOp):
        return all(_guard_passes_all(operand, binding) for operand in owner.operands)
    if not isinstance(owner, LtOp) or not _is_invocation_x(owner.operands[0]):
        return False
    bound = owner.operands[1].owner
    if isinstance(bound, k.BufferLengthOp):
        return bound.slot_number == binding.slot_number
    if isinstance(bound, ConstOp) and bound.result.type == ui32:
        count = binding.static_count
        return count is not None and int(bound.literal()) >= count
    return False
