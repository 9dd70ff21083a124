"""Which ops are expressions, which may trap, and which a pass may move freely.

An *expression* computes its results from its operands alone: constants, the
id ops, `buf_len` (fixed for a run), the semantics-table ops, `select`, `fma`,
`cast` and `bitcast` (SPEC section 3.3 without `load` and `atomic`). It may
still trap: `si32` `div`/`mod` by zero or INT_MIN / -1 ends the invocation.
An op is *speculatable* when it is an expression that cannot trap: running it
where the program would not have run it changes nothing, so it can be hoisted,
duplicated or dropped.

```python
from vyre_xdsl.analysis import is_expression, is_speculatable, may_trap

may_trap(div_si32)        # True: vyre.div on si32 may trap
is_expression(div_si32)   # True: its result depends on its operands only
is_speculatable(div_si32) # False: moving it could add or drop a trap
```
"""

from __future__ import annotations

from xdsl.ir import Operation

from vyre_xdsl.dialects.vyre import (
    TABLE_OPS,
    BitcastOp,
    BufLenOp,
    CastOp,
    ConstOp,
    FmaOp,
    InvocationIdOp,
    LocalIdOp,
    SelectOp,
    TrapOp,
    WorkgroupIdOp,
    si32,
)

#: the op classes whose results are a function of their operands (and the run's buffer lengths)
EXPRESSION_OPS: tuple[type[Operation], ...] = (
    ConstOp,
    BufLenOp,
    InvocationIdOp,
    WorkgroupIdOp,
    LocalIdOp,
    SelectOp,
    FmaOp,
    CastOp,
    BitcastOp,
    *TABLE_OPS.values(),
)


def is_expression(op: Operation) -> bool:
    """Whether `op` computes its results from its operands alone (it may still trap)."""
    return isinstance(op, EXPRESSION_OPS)


def may_trap(op: Operation) -> bool:
    """Whether `op` itself may end its invocation with a trap.

    `vyre.trap`, and a semantics-table op whose rule traps on its operand type
    (`si32` `div` and `mod`). Nested ops are not looked at: see `contains_trap`.
    """
    if isinstance(op, TrapOp):
        return True
    semantics = getattr(type(op), "semantics", None)
    return (
        semantics is not None
        and semantics().traps is not None
        and any(operand.type == si32 for operand in op.operands)
    )


def contains_trap(op: Operation) -> bool:
    """Whether `op` or any op nested in it may trap (a program needs a trap sidecar)."""
    return any(may_trap(inner) for inner in op.walk())


def is_speculatable(op: Operation) -> bool:
    """Whether running `op` more often, earlier or not at all can change nothing
    but its own results: an expression that cannot trap."""
    return is_expression(op) and not may_trap(op)
