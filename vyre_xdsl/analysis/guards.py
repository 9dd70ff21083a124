"""Index guards: the CUDA-style `if i < N` around a program's work.

A program launched over more invocations than it has elements (the grid is
rounded up to whole workgroups) often guards its body by `invocation_id x < N`.
These functions say what such a condition guarantees, so that a pass can
compare `N` with what it knows of the dispatch:

- `index_bounds(cond)`: bounds `B_1 .. B_k` (each a constant or the length of
  a buffer) such that `cond` holds in every invocation whose `invocation_id x`
  is below all of them. Recognized: `lt %i, %N`, `gt %N, %i`, `le %i, %C` and
  `ge %C, %i` (as `< C + 1`), on `ui32` or on a cast of `%i` to another
  integer type compared with a positive constant of that type (`si32`, `ui64`,
  ...; the cast keeps the value of every `%i` below the constant), and `and`
  of such conditions (`: i1`). `%i` is `vyre.invocation_id x`, `%N` a
  `vyre.const` or a `vyre.buf_len` (`ui32`).
- `index_guards(op, stop)`: the bounds of every `vyre.if` between `op` and
  `stop` when `op` sits in their then-branches (provenance `vyre.region`s in
  between are transparent), or None when anything else (a loop, an else
  branch, a condition that is not an index guard) encloses it. Then `op` runs
  in every invocation whose `invocation_id x` is below all the bounds, and
  in an invocation where it does not run, `invocation_id x` is at least one
  of them.

```python
from vyre_xdsl.analysis import index_bounds, index_guards

index_bounds(if_op.cond)        # (IndexBound(constant=28),) for `lt %j, %M` with M = 28
index_guards(store, program)    # the same, for a store inside that if
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerType, Signedness
from xdsl.ir import Operation, SSAValue

from vyre_xdsl.analysis.indices import is_invocation_x
from vyre_xdsl.dialects.vyre import BufLenOp, CastOp, ConstOp, IfOp, RegionOp, i1, ui32

__all__ = ["IndexBound", "index_bounds", "index_guards"]


@dataclass(frozen=True)
class IndexBound:
    """`invocation_id x < constant`, or `< buf_len(@length_of)` (exactly one is set)."""

    constant: int | None = None
    length_of: str | None = None

    def __str__(self) -> str:
        return str(self.constant) if self.length_of is None else f"len(@{self.length_of})"


def _owner(value: SSAValue) -> Operation | None:
    owner = value.owner
    return owner if isinstance(owner, Operation) else None


def _is_index(value: SSAValue) -> bool:
    """`invocation_id x` itself (`ui32`)."""
    return is_invocation_x(value)


def _cast_index(value: SSAValue) -> IntegerType | None:
    """The integer type `T` when `value` is `vyre.cast (invocation_id x) : ui32 to T`."""
    op = _owner(value)
    if (
        isinstance(op, CastOp)
        and is_invocation_x(op.input)
        and isinstance(value.type, IntegerType)
        and value.type != i1
    ):
        return value.type
    return None


def _constant(value: SSAValue) -> int | None:
    op = _owner(value)
    if isinstance(op, ConstOp) and isinstance(value.type, IntegerType) and value.type != i1:
        literal = op.literal()
        return literal if isinstance(literal, int) else None
    return None


def _fits(bound: int, ty: IntegerType) -> bool:
    """Whether a cast to `ty` keeps the value of every `ui32` below `bound`."""
    width = ty.width.data
    top = 2 ** (width - 1) if ty.signedness.data == Signedness.SIGNED else 2**width
    return 0 < bound <= top


def _strict_bound(index: SSAValue, limit: SSAValue, slack: int) -> IndexBound | None:
    """The bound for `index < limit + slack` (slack 1: `<=`), or None."""
    if _is_index(index):
        constant = _constant(limit)
        if constant is not None and limit.type == ui32:
            return IndexBound(constant=constant + slack)
        op = _owner(limit)
        if isinstance(op, BufLenOp) and slack == 0:
            return IndexBound(length_of=op.buffer_name)
        return None
    ty = _cast_index(index)
    constant = _constant(limit)
    if ty is None or constant is None or limit.type != ty:
        return None
    bound = constant + slack
    return IndexBound(constant=bound) if _fits(bound, ty) else None


def index_bounds(cond: SSAValue) -> tuple[IndexBound, ...] | None:
    """Bounds such that `cond` holds whenever `invocation_id x` is below all of
    them, or None when `cond` is not an index guard (module docstring)."""
    op = _owner(cond)
    if op is None or len(op.operands) != 2:
        return None
    a, b = op.operands
    name = op.name.removeprefix("vyre.")
    if name == "and" and cond.type == i1:
        left, right = index_bounds(a), index_bounds(b)
        if left is None or right is None:
            return None
        return left + right
    found = {
        "lt": lambda: _strict_bound(a, b, 0),
        "gt": lambda: _strict_bound(b, a, 0),
        "le": lambda: _strict_bound(a, b, 1),
        "ge": lambda: _strict_bound(b, a, 1),
    }.get(name, lambda: None)()
    return None if found is None else (found,)


def index_guards(op: Operation, stop: Operation) -> tuple[IndexBound, ...] | None:
    """The bounds of the index guards around `op` up to (not including) `stop`,
    or None when something else encloses it (module docstring)."""
    bounds: tuple[IndexBound, ...] = ()
    child = op
    parent = op.parent_op()
    while parent is not stop:
        if parent is None:
            return None
        if isinstance(parent, IfOp):
            if child.parent_region() is not parent.then_region:
                return None
            found = index_bounds(parent.cond)
            if found is None:
                return None
            bounds += found
        elif not isinstance(parent, RegionOp):
            return None
        child = parent
        parent = parent.parent_op()
    return bounds
