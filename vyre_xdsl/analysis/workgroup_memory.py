"""What a kernel's workgroup shares: which workgroup buffers are written in full
before any read, and whether its barriers must order storage memory too.

A backend clears workgroup memory in the kernel's prologue (drivers do not all
zero it); a buffer that `written_before_read` accepts needs no clear.
`vyre-lower` marks such a binding `written_first`, and the backend reads the mark.
When `storage_shared_across_barriers` is False, `vyre-lower` marks the kernel's
barriers `workgroup_only`: they need not order storage memory.

```python
from vyre_xdsl.analysis.workgroup_memory import written_before_read

written_before_read(descriptor, binding)  # True: stored in full before any read
```
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation, SSAValue

from vyre_xdsl.analysis.loops import constant_ui32
from vyre_xdsl.analysis.tiling import affine_form
from vyre_xdsl.analysis.uniformity import is_kernel_workgroup_uniform
from vyre_xdsl.analysis.vector_form import index_offset
from vyre_xdsl.dialects import kernel as k
from vyre_xdsl.dialects import vyre as v

#: the ops an index computed from `local_id x` and constants may go through
#: (`lane_values` evaluates them with the semantics table)
LANE_INDEX_OPS = ("add", "sub", "mul", "shl", "shr", "bit_and", "bit_or", "bit_xor", "min", "max")


def _memory_ops(descriptor: k.DescriptorOp):
    """(op, binding) for every load, store and atomic of `descriptor`, in program order."""
    return _memory_ops_of(list(descriptor.walk()))


def written_before_read(descriptor: k.DescriptorOp, binding: k.BindingOp) -> bool:
    """Whether every element of workgroup buffer `binding` is stored before any
    invocation can read it, so that the prologue need not zero it: either its own
    element by each invocation (`own_element_first`) or the whole buffer by
    top-level stores before a barrier (`stored_in_full_first`)."""
    return own_element_first(descriptor, binding) or stored_in_full_first(descriptor, binding)


def own_element_first(descriptor: k.DescriptorOp, binding: k.BindingOp) -> bool:
    """Whether the first op that touches `binding` is a store at `local_id x`, in
    a kernel with barriers whose one-dimensional workgroup is exactly as wide as
    the buffer, no `return` comes before it, and the store is at the top level of
    the kernel or of the then-branch of a top-level `kernel.if` on a
    workgroup-uniform condition that holds every access to the buffer (a fused
    arm's guard: a workgroup either runs the whole arm, its store first, or never
    touches the buffer)."""
    dispatch = descriptor.dispatch()
    if dispatch is None or binding.is_host:
        return False
    wx, wy, wz = dispatch.kernel_workgroup
    if dispatch.is_widened or (wy, wz) != (1, 1) or binding.static_count != wx:
        return False
    if not any(isinstance(op, k.BarrierOp) for op in descriptor.walk()):
        return False
    first = _first_access(descriptor, binding)
    if first is None or not _stores_own_element(first):
        return False
    scope = first.parent_op()
    if scope is descriptor:
        return True
    if not isinstance(scope, k.IfOp) or scope.parent_op() is not descriptor:
        return False
    if first.parent_block() is not scope.then_region.block or not is_kernel_workgroup_uniform(
        scope.cond
    ):
        return False
    inside = set(scope.then_region.walk())
    return all(op in inside for op, b in _memory_ops(descriptor) if b is binding)


def stored_in_full_first(descriptor: k.DescriptorOp, binding: k.BindingOp) -> bool:
    """Whether top-level stores write every element of workgroup buffer `binding`
    before the barrier that follows its first access, with no other access and no
    `return` in between: each store's index is a function of `local_id x` and
    constants (`lane_values`), and over the one-dimensional workgroup's
    invocations the indices cover the whole buffer. A coarsened scan's staging
    area, stored at `(l + j W) ^ (((l + j W) >> 5) & (k - 1))` for j < k, is one.

    ```mlir
    kernel.binding @tile slot 16777216 shared read_write : f32[512]
    %l = kernel.local_id x
    %c256 = vyre.const 256 : ui32
    %j = vyre.add %l, %c256 : ui32
    kernel.store_shared @tile[%l] = %a : f32
    kernel.store_shared @tile[%j] = %b : f32
    kernel.barrier
    ```
    """
    dispatch = descriptor.dispatch()
    count = binding.static_count
    if dispatch is None or binding.is_host or count is None or dispatch.is_widened:
        return False
    wx, wy, wz = dispatch.kernel_workgroup
    if (wy, wz) != (1, 1):
        return False
    first = _first_access(descriptor, binding)
    if first is None or first.parent_op() is not descriptor:
        return False
    statements = list(descriptor.statements())
    covered = np.zeros(count, dtype=bool)
    for op in statements[statements.index(first) :]:
        if isinstance(op, k.BarrierOp):
            return bool(covered.all())
        inner = list(op.walk())
        if any(isinstance(o, k.ReturnOp) for o in inner):
            return False
        touching = [o for o, b in _memory_ops_of(inner) if b is binding]
        if not touching:
            continue
        if touching != [op] or not isinstance(op, k.StoreSharedOp):
            return False
        index = lane_values(op.index, wx)
        if index is None:
            return False
        covered[index[index < count]] = True
    return False


def lane_values(value: SSAValue, lanes: int) -> np.ndarray | None:
    """`value` (a ui32) in each of `lanes` invocations when it is computed from
    `local_id x` and constants through `LANE_INDEX_OPS`, else None."""
    owner = value.owner
    if isinstance(owner, k.LocalIdOp):
        return np.arange(lanes, dtype=np.uint32) if owner.axis_index == 0 else None
    if isinstance(owner, v.ConstOp):
        literal = owner.literal()
        if isinstance(literal, bool) or not isinstance(literal, int) or literal < 0:
            return None
        return np.full(lanes, literal, dtype=np.uint32)
    if not isinstance(owner, v.BinaryOp) or v.type_name(owner.result.type) != "ui32":
        return None
    kind = owner.name.removeprefix("vyre.")
    if kind not in LANE_INDEX_OPS:
        return None
    lhs, rhs = lane_values(owner.lhs, lanes), lane_values(owner.rhs, lanes)
    if lhs is None or rhs is None:
        return None
    return owner.semantics().evaluate(lhs, rhs)


def _memory_ops_of(ops: list[Operation]):
    """(op, binding) for each load, store and atomic among `ops`."""
    for op in ops:
        if op.has_trait(k.ElementAccess) or isinstance(op, k.AtomicOp):
            binding = op.binding()
            if binding is not None:
                yield op, binding


def _first_access(descriptor: k.DescriptorOp, binding: k.BindingOp) -> Operation | None:
    """The first op (in program order) that touches `binding`; None when there is
    none or a `return` comes before it."""
    for op in descriptor.walk():
        if isinstance(op, k.ReturnOp):
            return None
        if op.has_trait(k.ElementAccess) or isinstance(op, k.AtomicOp):
            if op.slot_number == binding.slot_number:
                return op
    return None


def _stores_own_element(op: Operation) -> bool:
    index = op.index.owner
    return (
        isinstance(op, k.StoreSharedOp) and isinstance(index, k.LocalIdOp) and index.axis_index == 0
    )


def _in_loop(op: Operation, descriptor: k.DescriptorOp) -> bool:
    parent = op.parent_op()
    while parent is not None and parent is not descriptor:
        if isinstance(parent, k.ForOp):
            return True
        parent = parent.parent_op()
    return False


def _invocation_private(descriptor: k.DescriptorOp) -> set[str]:
    """The storage buffers each of whose elements only one invocation touches:
    every access to them is a plain load or store at `invocation_id x` itself,
    and the kernel's workgroup is one-dimensional and not widened (so
    `invocation_id x` differs between any two invocations of the dispatch).
    A fused producer and consumer at the same element are such a buffer."""
    dispatch = descriptor.dispatch()
    if dispatch is None or dispatch.is_widened or tuple(dispatch.kernel_workgroup[1:]) != (1, 1):
        return set()
    private: dict[str, bool] = {}
    for op, binding in _memory_ops(descriptor):
        own = op.has_trait(k.ElementAccess) and index_offset(op.index) == 0
        private[binding.buffer_name] = private.get(binding.buffer_name, True) and own
    return {name for name, own in private.items() if own}


#: the most values of one half of `owned_elements`'s search, and the most
#: distinct constants of one buffer's accesses (beyond them, no proof)
MAX_OWNED_SEARCH = 1 << 16
MAX_OWNED_OFFSETS = 256


def _id_key(op: Operation) -> str | None:
    """The `affine_form` key of a kernel id on axis x or y."""
    if isinstance(op, k.LocalIdOp | k.WorkgroupIdOp | k.InvocationIdOp) and op.axis_index < 2:
        prefix = {k.LocalIdOp: "l", k.WorkgroupIdOp: "w", k.InvocationIdOp: "i"}[type(op)]
        return prefix + "xy"[op.axis_index]
    return None


def owned_elements(descriptor: k.DescriptorOp) -> set[str]:
    """The storage buffers of which no two invocations of the dispatch touch the
    same element. Every access is a load or store whose index is one affine form
    of the local and workgroup ids (`affine_form`) plus a constant that may
    differ from access to access (`c . ids + e_s`), over a static grid of one
    layer, with no value wrapping past 2^32. Then two invocations meet only if
    `c . d = e_t - e_s` for a nonzero difference `d` of their ids inside the
    launch; the search splits the ids into the x pair and the y pair and
    compares the sums each can make (meet in the middle), giving up past
    `MAX_OWNED_SEARCH` sums or `MAX_OWNED_OFFSETS` constants.

    Where the tiles overhang the outputs, that form alone meets itself (the
    column past the edge of one row is the next row's first), and the guards
    decide (`_apart_under_guards`): when every access sits under a guard
    `X_s < n` (a `kernel.if` then-branch whose condition is an `lt` term of a
    conjunction) with the index `n * H_s + X_s`, the index gives `H_s` and
    `X_s` apart, and no two invocations meet when no two give one pair."""
    dispatch = descriptor.dispatch()
    grid = None if dispatch is None else dispatch.logical_static_grid
    if dispatch is None or dispatch.is_widened or grid is None or grid[2] != 1:
        return set()
    tx, ty, tz = dispatch.kernel_workgroup
    if tz != 1:
        return set()
    extents = {"lx": tx, "ly": ty, "wx": grid[0], "wy": grid[1]}
    accesses: dict[str, list[Operation] | None] = {}
    for op, binding in _memory_ops(descriptor):
        known = accesses.get(binding.buffer_name, [])
        plain = op.has_trait(k.ElementAccess)
        accesses[binding.buffer_name] = None if not plain or known is None else [*known, op]
    return {
        name for name, ops in accesses.items() if ops and _owned_by_one(ops, descriptor, extents)
    }


def _owned_by_one(ops: list[Operation], descriptor: k.DescriptorOp, extents) -> bool:
    forms = [_id_form(op.index, extents) for op in ops]
    if any(form is None for form in forms):
        return False
    if _apart(forms, extents):
        return True
    guards = [_guards(op, descriptor, extents) for op in ops]
    return _apart_under_guards(forms, guards, extents)


#: an affine form of the ids: coefficients of lx, ly, wx, wy, and a constant
IdForm = tuple[dict[str, int], int]


def _id_form(value: SSAValue, extents: dict[str, int]) -> IdForm | None:
    """`value` as an affine form of the local and workgroup ids (an invocation
    id is `workgroup id * workgroup size + local id`), or None."""
    form = affine_form(value, leaf=_id_key)
    if form is None:
        return None
    terms = dict(form)
    ix, iy = terms.pop("ix", 0), terms.pop("iy", 0)
    linear = {
        "lx": terms.pop("lx", 0) + ix,
        "ly": terms.pop("ly", 0) + iy,
        "wx": terms.pop("wx", 0) + ix * extents["lx"],
        "wy": terms.pop("wy", 0) + iy * extents["ly"],
    }
    constant = terms.pop("", 0)
    return None if terms else (linear, constant)


def _exact(form: IdForm, extents: dict[str, int]) -> bool:
    """Whether `form`'s 32-bit value is its value over the integers on the
    launch: no negative coefficient (a wrapped one), no value past 2^32."""
    linear, constant = form
    if any(c >= 1 << 31 for c in linear.values()):
        return False
    return sum(c * (extents[key] - 1) for key, c in linear.items()) + constant < 1 << 32


def _apart(forms: list[IdForm], extents: dict[str, int]) -> bool:
    """Whether the index forms `forms` never give two invocations one element."""
    linear = forms[0][0]
    offsets = {constant for _, constant in forms}
    if any(form[0] != linear for form in forms) or len(offsets) > MAX_OWNED_OFFSETS:
        return False
    if not all(_exact(form, extents) for form in forms):
        return False
    x = _sums(linear["lx"], extents["lx"], linear["wx"], extents["wx"])
    y = _sums(linear["ly"], extents["ly"], linear["wy"], extents["wy"])
    if x is None or y is None:
        return False
    e = np.array(sorted(offsets), dtype=np.int64)
    deltas = np.unique(e[:, None] - e[None, :])
    (all_x, nonzero_x), (all_y, nonzero_y) = x, y
    for delta in deltas:
        need = delta - all_y  # an x-half sum that completes a collision
        if delta == 0:
            # not both halves zero: a nonzero x-half, or a zero x-half and a nonzero y-half
            if np.isin(need, nonzero_x).any() or (nonzero_y == 0).any():
                return False
        elif np.isin(need, all_x).any():
            return False
    return True


def _guards(op: Operation, descriptor: k.DescriptorOp, extents) -> list[tuple[IdForm, int]]:
    """The bounds `X < n` (`X` an exact affine form of the ids, `n` a constant)
    that hold wherever `op` runs: the `lt` terms of the conjunction of each
    `kernel.if` that holds `op` in its then-branch."""
    out = []
    child, parent = op, op.parent_op()
    while parent is not None and parent is not descriptor:
        if isinstance(parent, k.IfOp) and child.parent_region() is parent.then_region:
            out += _lt_terms(parent.cond, extents)
        child, parent = parent, parent.parent_op()
    return out


def _lt_terms(cond: SSAValue, extents: dict[str, int]) -> list[tuple[IdForm, int]]:
    op = cond.owner
    if isinstance(op, v.AndOp) and cond.type == v.i1:
        return [term for operand in op.operands for term in _lt_terms(operand, extents)]
    if not isinstance(op, v.LtOp):
        return []
    form, bound = _id_form(op.lhs, extents), constant_ui32(op.rhs)
    if form is None or bound is None or bound < 1 or not _exact(form, extents):
        return []
    return [(form, bound)]


def _apart_under_guards(
    forms: list[IdForm], guards: list[list[tuple[IdForm, int]]], extents: dict[str, int]
) -> bool:
    """Whether the accesses `forms`, each under its `guards`, never give two
    invocations one element: for some bound `n`, each index is `n * H_s + X_s`
    with a guard `X_s < n` (so the index gives `H_s` and `X_s`), the `X_s`
    share their ids' coefficients and use the ids of one axis, the `H_s` those
    of the other axis, and no two invocations give one pair `(H_s, X_s)`."""
    if not all(_exact(form, extents) for form in forms):
        return False
    for n in sorted({bound for _, bound in guards[0]}):
        parts = [_split(form, own, n) for form, own in zip(forms, guards, strict=True)]
        if all(part is not None for part in parts) and _pairs_apart(parts, extents):
            return True
    return False


def _split(form: IdForm, guards: list[tuple[IdForm, int]], n: int):
    """`(H, X)` with `form = n * H + X` for a guard `X < n` of `guards`, or None."""
    linear, constant = form
    for (x_linear, x_constant), bound in guards:
        if bound != n or (constant - x_constant) % n:
            continue
        rest = {key: c - x_linear[key] for key, c in linear.items()}
        if any(c % n for c in rest.values()):
            continue
        h = ({key: c // n for key, c in rest.items()}, (constant - x_constant) // n)
        return h, (x_linear, x_constant)
    return None


def _pairs_apart(parts, extents: dict[str, int]) -> bool:
    (h_linear, _), (x_linear, _) = parts[0]
    if any(h[0] != h_linear or x[0] != x_linear for h, x in parts):
        return False
    if len(parts) > MAX_OWNED_OFFSETS:
        return False
    axes = [_axis(x_linear), _axis(h_linear)]
    if None in axes or axes[0] == axes[1]:
        return False
    x = _axis_sums(x_linear, axes[0], extents)
    h = _axis_sums(h_linear, axes[1], extents)
    if x is None or h is None:
        return False
    (all_x, nonzero_x), (all_h, nonzero_h) = x, h
    offsets = np.array([(hc, xc) for (_, hc), (_, xc) in parts], dtype=np.int64)
    deltas = np.unique((offsets[:, None, :] - offsets[None, :, :]).reshape(-1, 2), axis=0)
    for dh, dx in deltas:
        # a nonzero difference of ids on either axis that makes both differences
        if (dx in nonzero_x and dh in all_h) or (dx in all_x and dh in nonzero_h):
            return False
    return True


def _axis(linear: dict[str, int]) -> str | None:
    """The axis ("x" or "y") of every id that `linear` uses, or None when it
    uses ids of both axes or none."""
    used = {key[1] for key, c in linear.items() if c}
    return used.pop() if len(used) == 1 else None


def _axis_sums(linear: dict[str, int], axis: str, extents: dict[str, int]):
    local, group = "l" + axis, "w" + axis
    return _sums(linear[local], extents[local], linear[group], extents[group])


def _sums(c_local: int, n_local: int, c_group: int, n_group: int):
    """The values `c_local * a + c_group * b` for differences `a`, `b` of two
    ids in [0, n): all of them, and those of a nonzero (a, b); None when there
    are more than `MAX_OWNED_SEARCH`."""
    if (2 * n_local - 1) * (2 * n_group - 1) > MAX_OWNED_SEARCH:
        return None
    a = np.arange(-(n_local - 1), n_local, dtype=np.int64)
    b = np.arange(-(n_group - 1), n_group, dtype=np.int64)
    sums = (c_local * a[:, None] + c_group * b[None, :]).ravel()
    zero = ((a[:, None] == 0) & (b[None, :] == 0)).ravel()
    return np.unique(sums), np.unique(sums[~zero])


def _stored_after_every_barrier(descriptor: k.DescriptorOp) -> set[str]:
    """The storage buffers that are only stored to (no load, no atomic), each
    store after the kernel's last barrier and in no loop holding a barrier: no
    barrier ever follows a write to them, so none has to order it (a tiled
    matrix product's outputs)."""
    order = {op: n for n, op in enumerate(descriptor.walk())}
    barriers = [op for op in order if isinstance(op, k.BarrierOp)]
    last = max((order[op] for op in barriers), default=-1)
    looping = {
        loop
        for barrier in barriers
        for loop in _ancestors(barrier, descriptor)
        if isinstance(loop, k.ForOp)
    }
    only: dict[str, bool] = {}
    for op, binding in _memory_ops(descriptor):
        late = (
            op.has_trait(k.StoreLike)
            and order[op] > last
            and not looping.intersection(_ancestors(op, descriptor))
        )
        only[binding.buffer_name] = only.get(binding.buffer_name, True) and late
    return {name for name, late in only.items() if late}


def _ancestors(op: Operation, descriptor: k.DescriptorOp) -> list[Operation]:
    out = []
    parent = op.parent_op()
    while parent is not None and parent is not descriptor:
        out.append(parent)
        parent = parent.parent_op()
    return out


def storage_shared_across_barriers(descriptor: k.DescriptorOp) -> bool:
    """Whether a barrier must also order storage memory (`storageBarrier()`).

    It must when an invocation could, after a barrier, read or overwrite a
    storage element that another invocation of its workgroup wrote before it:
    some storage buffer (the trap sidecar aside) is written by one op and
    accessed by another, or written inside a loop (a later iteration runs
    after the barrier), unless every access to it is a load or store at
    `invocation_id x` itself in a one-dimensional workgroup (`_invocation_private`):
    then each element belongs to one invocation; or it is only stored to, after
    the last barrier (`_stored_after_every_barrier`); or no two invocations touch
    one element of it (`owned_elements`: a tiled matrix product that reads its
    output's initial values before its barriers and stores them after). Otherwise
    invocations never meet in storage memory and `workgroupBarrier()` alone is the
    whole barrier. naga
    prints `storageBarrier()` as a device-scope memory barrier, which NVIDIA's
    driver turns into a fence that waits for every outstanding global access: in
    a workgroup tree that fence per step was most of the kernel's time.
    """
    accesses: dict[str, list[tuple[bool, bool]]] = {}
    private = _invocation_private(descriptor) | _stored_after_every_barrier(descriptor)
    for op, binding in _memory_ops(descriptor):
        if not binding.is_host or binding.is_trap_sidecar:
            continue
        if binding.buffer_name in private:
            continue
        writes = op.has_trait(k.StoreLike) or isinstance(op, k.AtomicOp)
        accesses.setdefault(binding.buffer_name, []).append(
            (writes, writes and _in_loop(op, descriptor))
        )
    shared = [
        name
        for name, ops in accesses.items()
        if any(writes for writes, _ in ops) and (len(ops) > 1 or any(loop for _, loop in ops))
    ]
    return bool(shared) and not set(shared) <= owned_elements(descriptor)
