"""Invocation ids of the `vyre` dialect (and the repetition counter)."""

from __future__ import annotations

from xdsl.irdl import IRDLOperation, irdl_op_definition, result_def, traits_def
from xdsl.traits import Pure

from vyre_xdsl.dialects.syntax import IdOpBase
from vyre_xdsl.dialects.vyre.common import ui32


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
