"""The `vyre` dialect object: every op and attribute."""

from __future__ import annotations

from xdsl.dialect_interfaces.constant_materialization import ConstantMaterializationInterface
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Attribute, Dialect, Operation

from vyre_xdsl.dialects.vyre.arithmetic import (
    TABLE_OPS,
    BitcastOp,
    CastOp,
    ConstOp,
    FmaOp,
    SelectOp,
)
from vyre_xdsl.dialects.vyre.atomics import AtomicOp
from vyre_xdsl.dialects.vyre.calls import CallOp, FuncOp, YieldOp
from vyre_xdsl.dialects.vyre.control import (
    BarrierOp,
    BlockOp,
    IfOp,
    LoopOp,
    RegionOp,
    ReturnOp,
    TrapOp,
)
from vyre_xdsl.dialects.vyre.ids import (
    InvocationIdOp,
    LocalIdOp,
    NumWorkgroupsOp,
    RepetitionOp,
    WorkgroupIdOp,
)
from vyre_xdsl.dialects.vyre.memory import AssignOp, BufLenOp, LetOp, LoadOp, StoreOp, VarOp
from vyre_xdsl.dialects.vyre.structure import BufferOp, ProgramOp
from vyre_xdsl.dialects.vyre.subgroups import SUBGROUP_OPS
from vyre_xdsl.dialects.vyre.vectors import ExtractOp, FromElementsOp


class VyreConstantMaterialization(ConstantMaterializationInterface):
    def materialize_constant(self, value: Attribute, type: Attribute) -> Operation:
        assert isinstance(value, IntegerAttr | FloatAttr)
        return ConstOp(value)


Vyre = Dialect(
    "vyre",
    [
        ProgramOp,
        BufferOp,
        LetOp,
        AssignOp,
        VarOp,
        StoreOp,
        IfOp,
        LoopOp,
        BlockOp,
        RegionOp,
        BarrierOp,
        ReturnOp,
        TrapOp,
        ConstOp,
        LoadOp,
        BufLenOp,
        InvocationIdOp,
        WorkgroupIdOp,
        LocalIdOp,
        RepetitionOp,
        NumWorkgroupsOp,
        *TABLE_OPS.values(),
        SelectOp,
        FmaOp,
        FromElementsOp,
        ExtractOp,
        CastOp,
        BitcastOp,
        AtomicOp,
        FuncOp,
        YieldOp,
        CallOp,
        *SUBGROUP_OPS,
    ],
    [],
    [VyreConstantMaterialization()],
)
