"""Uniformity: whether a value is the same in every invocation.

Two scopes matter:

- *workgroup-uniform* (`is_workgroup_uniform`): the same in every invocation of
  one workgroup. A barrier is legal only under control flow that is
  workgroup-uniform (SPEC section 3.2), so the `vyre.barrier` verifier needs
  this; it is defined with the dialect (dialects sit below the analyses) and
  re-exported here. Constants, `buf_len`, `workgroup_id`, loop variables with
  workgroup-uniform bounds and pure ops over them.
- *dispatch-uniform* (`is_dispatch_uniform`): the same in every invocation of
  the whole dispatch, whatever the workgroup geometry. Expressions over
  constants and `buf_len` only: no id at all (not even `workgroup_id`), no
  named local, no buffer contents. Fusion's index reasoning needs this one.

Kernel-dialect IR has its own id ops; `is_kernel_workgroup_uniform` answers the
first question there (the WGSL printer needs it to leave out a workgroup-memory
clear).

```python
from vyre_xdsl.analysis import is_dispatch_uniform, is_workgroup_uniform

is_workgroup_uniform(wid)   # True for %wid = vyre.workgroup_id x
is_dispatch_uniform(wid)    # False: it differs between workgroups
```
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from vyre_xdsl.analysis.expressions import is_expression, is_speculatable
from vyre_xdsl.dialects import kernel
from vyre_xdsl.dialects.vyre import (
    InvocationIdOp,
    LocalIdOp,
    SubgroupLocalIdOp,
    WorkgroupIdOp,
    is_workgroup_uniform,
    uniform_through,
)

__all__ = ["is_dispatch_uniform", "is_kernel_workgroup_uniform", "is_workgroup_uniform"]

_ID_OPS = (InvocationIdOp, WorkgroupIdOp, LocalIdOp, SubgroupLocalIdOp)


def is_dispatch_uniform(value: SSAValue) -> bool:
    """Whether `value` is the same in every invocation of the dispatch: expressions
    over constants and `buf_len` (conservative)."""
    op = value.owner
    if not isinstance(op, Operation) or isinstance(op, _ID_OPS) or not is_expression(op):
        return False
    return all(is_dispatch_uniform(operand) for operand in op.operands)


def is_kernel_workgroup_uniform(value: SSAValue) -> bool:
    """Whether `value`, in kernel-dialect IR, is the same in every invocation of a
    workgroup (conservative): constants, `kernel.workgroup_id`,
    `kernel.buffer_length` and expressions over them that cannot trap. Named
    locals and loop variables count as varying. Iterative, like
    `is_workgroup_uniform`, so a long chain cannot exhaust the Python stack.

    ```python
    # %w = kernel.workgroup_id x ; %c = vyre.lt %w, %n : ui32
    is_kernel_workgroup_uniform(c)   # True; with kernel.local_id x, False
    ```
    """
    return uniform_through(value, _kernel_uniformity_step)


def _kernel_uniformity_step(value: SSAValue) -> tuple[bool | None, Sequence[SSAValue]]:
    owner = value.owner
    if isinstance(owner, kernel.WorkgroupIdOp | kernel.BufferLengthOp):
        return None, ()
    if not isinstance(owner, Operation) or not is_speculatable(owner):
        return False, ()
    if isinstance(owner, kernel.InvocationIdOp | kernel.LocalIdOp | kernel.LocalLoadOp):
        return False, ()
    return None, tuple(owner.operands)
