"""Which workgroup buffers of a kernel are written in full before any read.

A backend clears workgroup memory in the kernel's prologue (drivers do not all
zero it); a buffer that `written_before_read` accepts needs no clear.
`vyre-lower` marks such a binding `written_first`, and the backend reads the mark.

```python
from vyre_xdsl.analysis.workgroup_memory import written_before_read

written_before_read(descriptor, binding)  # True: each invocation stores its own element first
```
"""

from __future__ import annotations

from xdsl.ir import Operation

from vyre_xdsl.analysis.uniformity import is_kernel_workgroup_uniform
from vyre_xdsl.dialects import kernel as k


def _memory_ops(descriptor: k.DescriptorOp):
    """(op, binding) for every load, store and atomic of `descriptor`, in program order."""
    for op in descriptor.walk():
        if isinstance(op, (k._LoadOp, k._StoreOp, k.AtomicOp)):  # noqa: SLF001
            binding = op.binding()
            if binding is not None:
                yield op, binding


def written_before_read(descriptor: k.DescriptorOp, binding: k.BindingOp) -> bool:
    """Whether every element of workgroup buffer `binding` is stored before any
    invocation can read it, so that the prologue need not zero it: the first op
    that touches it is a store at `local_id x` in a kernel with barriers whose
    one-dimensional workgroup is exactly as wide as the buffer, no `return`
    comes before it, and the store is at the top level of the kernel or of the
    then-branch of a top-level `kernel.if` on a workgroup-uniform condition that
    holds every access to the buffer (a fused arm's guard: a workgroup either
    runs the whole arm, its store first, or never touches the buffer)."""
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


def _first_access(descriptor: k.DescriptorOp, binding: k.BindingOp) -> Operation | None:
    """The first op (in program order) that touches `binding`; None when there is
    none or a `return` comes before it."""
    for op in descriptor.walk():
        if isinstance(op, k.ReturnOp):
            return None
        if isinstance(op, k._LoadOp | k._StoreOp | k.AtomicOp):  # noqa: SLF001
            if op.slot_number == binding.slot_number:
                return op
    return None


def _stores_own_element(op: Operation) -> bool:
    index = op.index.owner
    return (
        isinstance(op, k.StoreSharedOp) and isinstance(index, k.LocalIdOp) and index.axis_index == 0
    )
