"""Whether a kernel may run several consecutive logical invocations per invocation
(the vector form), and at which width.

`kernel-vectorize` records `vector_width(descriptor)` on the dispatch as
`elements_per_invocation`; a backend prints the kernel in that form (one wide
load or store per buffer for the W logical invocations) and launches
ceil(n / W) invocations.

```python
from vyre_xdsl.analysis.vector_form import vector_width

width = vector_width(descriptor)   # 4 for an elementwise f32 kernel over 1024 elements
```
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from vyre_xdsl import semantics
from vyre_xdsl.dialects import kernel as k
from vyre_xdsl.dialects import vyre as v

#: lanes of the widest vector a backend has (`vec4`)
VECTOR_LANES = 4
#: bytes each invocation of a vector form loads or stores per buffer, at most
VECTOR_BYTES = 16

_NOT_ELEMENTWISE = (
    k.BarrierOp,
    k.AtomicOp,
    k.TrapOp,
    k.ReturnOp,
    k.WorkgroupIdOp,
    k.LocalIdOp,
    k.LoadSharedOp,
    k.StoreSharedOp,
    *v.SUBGROUP_OPS,
)


def fixed_launch(descriptor: k.DescriptorOp) -> bool:
    """Whether the kernel must launch exactly its dispatch's grid: an explicit
    grid, or `kernel.num_workgroups` reads it (no vector form, no coarsening)."""
    d = descriptor.dispatch()
    if d is not None and d.is_explicit:
        return True
    return any(isinstance(op, k.NumWorkgroupsOp) for op in descriptor.walk())


def index_offset(index: SSAValue) -> int | None:
    """`c` (mod 2^32) when `index` is `invocation_id x + c`; None otherwise
    (`kernel.invocation_offset`)."""
    return k.invocation_offset(index)


def stored_slots(descriptor: k.DescriptorOp) -> set[int]:
    """The slots the kernel stores to."""
    return descriptor.stored_slots()


def vector_storable(tname: str, width: int) -> bool:
    """Whether `width` consecutive elements of `tname` have a vector storage form:
    four 32-bit or f16 values (a `vec4`), whole 32-bit words of 8/16-bit
    integers (one, two or four words) or of eight f16 values."""
    nbytes = semantics.ELEMENTS[tname].storage_bytes * width
    if tname in semantics.PACKED_TYPES or (tname == "f16" and width == 2 * VECTOR_LANES):
        return nbytes in (4, 8, 16)
    return width == VECTOR_LANES and nbytes in (8, 16) and (tname == "f16" or nbytes == 16)


def _elementwise_access(descriptor: k.DescriptorOp, op: Operation, stored: set[int]) -> bool:
    """A top-level access at `invocation_id x` itself, or a load at
    `invocation_id x + c` from a buffer the kernel never stores to (any other
    invocation's store could race with it)."""
    if op.parent_op() is not descriptor:
        return False
    offset = index_offset(op.index)
    if offset is None:
        return False
    if offset and (op.has_trait(k.StoreLike) or op.slot_number in stored):
        return False
    binding = descriptor.binding_at(op.slot_number)
    if binding is None or not binding.is_host or binding.is_atomic:
        return False
    if binding.element == "bf16":  # a host bf16 buffer: two halves per word
        return False
    return semantics.ELEMENTS[binding.element].family != "vector"


def elementwise(descriptor: k.DescriptorOp) -> bool:
    """Whether the kernel can run in a vector form (`vector_width`): each
    invocation runs several consecutive logical invocations with one wide access
    per buffer.

    That is exact when the program is purely elementwise: every load and store
    is at the top level and indexed by `invocation_id x` (plus a constant, for
    loads of buffers the kernel never stores to), and nothing observes the
    workgroup (barriers, workgroup memory, local/workgroup ids, atomics) or ends
    an invocation early (return, traps, signed div/mod). Logical invocations
    past the element count n are skipped; their only effects would be
    out-of-bounds stores, which do nothing. A kernel already vectorized or
    coarsened keeps its record (`kernel-vectorize` skips it)."""
    d = descriptor.dispatch()
    if d is None or d.is_widened or d.static_grid is None or fixed_launch(descriptor):
        return False
    if tuple(d.kernel_workgroup[1:]) != (1, 1) or tuple(d.program_workgroup) != tuple(
        d.kernel_workgroup
    ):
        return False
    stored = stored_slots(descriptor)
    memory_ops = 0
    for op in descriptor.walk():
        if isinstance(op, _NOT_ELEMENTWISE):
            return False
        if op.has_trait(k.IdLike) and op.axis_index != 0:
            return False
        if op.has_trait(v.TableLike) and op.semantics().trap_tag is not None:
            if semantics.ELEMENTS[v.type_name(op.operands[0].type)].is_signed:
                return False
        if op.has_trait(k.ElementAccess):
            if not _elementwise_access(descriptor, op, stored):
                return False
            memory_ops += 1
    return memory_ops > 0


def vector_width(descriptor: k.DescriptorOp) -> int:
    """How many consecutive logical invocations each invocation of the kernel
    may run: 1 (the scalar form) unless the kernel is `elementwise`; then 16
    bytes of its narrowest element type (16 for 8-bit kernels, 8 for 16-bit
    ones) when every buffer it touches has a vector storage form at that width
    (`vector_storable`) and every count it touches or launches by is a
    multiple of it (so an element is in bounds exactly when its vector is),
    else 4 under the same rule, else 1."""
    if not elementwise(descriptor):
        return 1
    narrowest = min(semantics.ELEMENTS[b.element].storage_bytes for b in _touched(descriptor))
    for width in dict.fromkeys((VECTOR_BYTES // narrowest, VECTOR_LANES)):
        if width_fits(descriptor, width):
            return width
    return 1


def _touched(descriptor: k.DescriptorOp) -> set[k.BindingOp]:
    return {
        b
        for op in descriptor.walk()
        if op.has_trait(k.ElementAccess)
        and (b := descriptor.binding_at(op.slot_number)) is not None
    }


def width_fits(descriptor: k.DescriptorOp, width: int) -> bool:
    """Whether an `elementwise` kernel may run `width` logical invocations per
    invocation: every buffer it touches is `vector_storable` at that width and
    every count it touches or launches by is a multiple of it."""
    d = descriptor.dispatch()
    assert d is not None
    touched = {
        descriptor.binding_at(op.slot_number)
        for op in descriptor.walk()
        if op.has_trait(k.ElementAccess)
    }
    counted = [descriptor.binding_named(name) for name in d.count_names]
    return all(b is not None and vector_storable(b.element, width) for b in touched) and all(
        b is not None and bool(b.static_count) and b.static_count % width == 0
        for b in [*touched, *counted]
    )


def vector_element_count(descriptor: k.DescriptorOp) -> int:
    """The logical elements a vector form of the kernel covers: the element count
    n (its count buffers' largest static count), at most the invocations of its
    logical grid (a part cut down to the workgroups of its guarded arms)."""
    d = descriptor.dispatch()
    assert d is not None and d.logical_static_grid is not None
    n = max(
        [b.static_count or 0 for name in d.count_names if (b := descriptor.binding_named(name))]
        + [1]
    )
    logical = d.logical_static_grid
    return min(n, logical[0] * logical[1] * logical[2] * d.kernel_workgroup[0])
