"""Which ops are expressions, which may trap, and which a pass may move freely.

An *expression* computes its results from its operands alone: constants, the
id ops, `buf_len` (fixed for a run), the semantics-table ops, `select`, `fma`,
`cast` and `bitcast` (every expression op but `load` and `atomic`). It may
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

from vyre_xdsl.dialects.vyre import TableOpEffect, TrapOp, is_expression

__all__ = ["contains_trap", "is_expression", "is_speculatable", "may_trap"]


def may_trap(op: Operation) -> bool:
    """Whether `op` itself may end its invocation with a trap.

    `vyre.trap`, and a semantics-table op whose rule traps on its operand type
    (`si32` `div` and `mod`: the op's `TableOpEffect` says so). Nested ops are
    not looked at: see `contains_trap`.
    """
    if isinstance(op, TrapOp):
        return True
    return op.has_trait(TableOpEffect) and TableOpEffect.may_trap(op)


def contains_trap(op: Operation) -> bool:
    """Whether `op` or any op nested in it may trap (a program needs a trap sidecar)."""
    return any(may_trap(inner) for inner in op.walk())


def is_speculatable(op: Operation) -> bool:
    """Whether running `op` more often, earlier or not at all can change nothing
    but its own results: an expression that cannot trap."""
    return is_expression(op) and not may_trap(op)
