"""Traits of the `vyre` and `kernel` ops that passes ask with `op.has_trait(...)`.

They name what a pass needs to know about an op without naming its class (or a
dialect's private base class), so that a pass written outside this package, or
a new op that fits, works the same way. Each trait promises the accessors listed
in its docstring; it adds no verification of its own.

```python
from vyre_xdsl.dialects.traits import ElementAccess

def touched_indices(body):
    return [op.index for op in body.walk() if op.has_trait(ElementAccess)]
```

`vyre_xdsl.dialects.vyre` and `vyre_xdsl.dialects.kernel` re-export every trait.
"""

from __future__ import annotations

from xdsl.traits import OpTrait


class ElementAccess(OpTrait):
    """Reads or writes one element of memory at the `ui32` operand `index`: the
    base of `LoadLike` and `StoreLike`, so `op.has_trait(ElementAccess)` asks for
    either (atomics are neither).
    """


class LoadLike(ElementAccess):
    """Reads one element of memory: the `ui32` operand `index`, the element as
    `result`; out of bounds gives the typed zero.

    Carried by `vyre.load` (the buffer is `op.buffer_name`) and every
    `kernel.load_*` (the binding is `op.slot_number`, see `SlotAddressed`).
    """


class StoreLike(ElementAccess):
    """Writes operand `value` to one element of memory at the `ui32` operand
    `index`; out of bounds does nothing.

    Carried by `vyre.store` (`op.buffer_name`) and every `kernel.store_*`
    (`op.slot_number`). Atomics are neither `LoadLike` nor `StoreLike`: they are
    `vyre.atomic` and `kernel.atomic`.
    """


class SlotAddressed(OpTrait):
    """A `kernel` op that reaches a binding by its slot: `op.slot_number` (an int)
    and `op.binding()` (the `kernel.binding` of that slot in the enclosing
    descriptor, or None).

    Carried by `kernel.load_*`, `kernel.store_*`, `kernel.atomic`,
    `kernel.buffer_length` and `kernel.repetition`.
    """


class IdLike(OpTrait):
    """An invocation id on one axis, as a `ui32` `result`: `op.axis_index` is 0, 1
    or 2 (x, y, z).

    Carried by `invocation_id`, `workgroup_id`, `local_id` and `num_workgroups` of
    both dialects (not by `vyre.repetition` or the subgroup ids).
    """


class TableLike(OpTrait):
    """A `vyre` op whose meaning is the semantics-table entry named after it:
    `op.semantics()` is that `vyre_xdsl.semantics.OpSemantics` (types, result
    type, numpy evaluation, trap tag); `vyre.TABLE_OPS` maps each mnemonic to its
    class.
    """


__all__ = ["ElementAccess", "IdLike", "LoadLike", "SlotAddressed", "StoreLike", "TableLike"]
