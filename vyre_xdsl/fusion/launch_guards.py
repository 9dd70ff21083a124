"""Which invocations a dispatch launches, symbolically, and the guards that
restrict a fused arm to exactly the invocations its own dispatch launched.

A dispatch of a program over `n` logical elements with workgroup `(a, b, c)`
launches `G = fold(ceil(n / (a*b*c)))` workgroups along the logical x axis
(`vyre_xdsl.dispatch`), so its invocations are exactly

    { (x, y, z) : x < G * a, y < b, z < c }        (invocation ids)

An arm fused under a larger workgroup or a larger `n` is guarded by
`workgroup_id x < G` (same workgroup: a uniform condition, so barriers stay
legal inside) or by `invocation_id x < G*a && local_id y < b && local_id z < c`
(a workgroup that differs; such an arm uses no workgroup or local ids).

`n` is the largest count among some buffers. A runtime-sized buffer's count is
only known at run time, so a `Count` is `max(static, counts of runtime)`;
comparisons between counts are proofs (`le` answers False when unsure) and
guard bounds are emitted as IR over `vyre.buf_len` when not static.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from vyre_xdsl.dialects.vyre import TABLE_OPS, BufLenOp, ConstOp, ui32
from vyre_xdsl.dispatch import MAX_WORKGROUPS_PER_DIM, dispatch_grid

Workgroup = tuple[int, int, int]


@dataclass(frozen=True)
class Count:
    """`max(static, count of each runtime-sized buffer in runtime, 1)`."""

    static: int
    runtime: frozenset[str] = frozenset()

    @property
    def is_static(self) -> bool:
        return not self.runtime

    def __str__(self) -> str:
        terms = ([str(self.static)] if self.static > 1 or not self.runtime else []) + [
            f"len(@{name})" for name in sorted(self.runtime)
        ]
        return terms[0] if len(terms) == 1 else f"max({', '.join(terms)})"


def count_of(names: list[str], views: Mapping[str, int | None]) -> Count:
    """The count `logical_element_count` computes over `names` (views: None = runtime)."""
    static = [views[n] for n in names if views[n] is not None]
    runtime = frozenset(n for n in names if views[n] is None)
    return Count(max(static + [1]), runtime)


def count_le(a: Count, b: Count, min_counts: Mapping[str, int]) -> bool:
    """Whether `a <= b` for every run (runtime counts are at least `min_counts`)."""
    if not a.runtime <= b.runtime:
        return False
    floor = max([b.static] + [min_counts.get(name, 0) for name in b.runtime])
    return a.static <= floor


def launched_groups(n: int, workgroup: Workgroup) -> int:
    gx, gy, gz = dispatch_grid(n, workgroup)
    return gx * gy * gz


@dataclass(frozen=True)
class Launch:
    """The invocations of one dispatch: `x < groups * workgroup[0]`, `y < wy`, `z < wz`."""

    count: Count
    workgroup: Workgroup

    @property
    def threads(self) -> int:
        return math.prod(self.workgroup)

    def static_extent(self) -> int | None:
        """`groups * workgroup[0]` when the count is static."""
        if not self.count.is_static:
            return None
        return self.extent_for(self.count.static)

    def extent_for(self, n: int) -> int:
        return launched_groups(n, self.workgroup) * self.workgroup[0]

    def least_extent(self, min_counts: Mapping[str, int]) -> int:
        """The x extent for the smallest count the runtime-sized buffers may have
        (the extent only grows with the count)."""
        floor = max([self.count.static] + [min_counts.get(n, 0) for n in self.count.runtime])
        return self.extent_for(floor)


def launch_within(inner: Launch, outer: Launch, min_counts: Mapping[str, int]) -> bool:
    """Whether every invocation `inner` launches is provably launched by `outer`."""
    if any(i > o for i, o in zip(inner.workgroup[1:], outer.workgroup[1:])):
        return False
    extent = inner.static_extent()
    if extent is not None and extent <= outer.least_extent(min_counts):
        return True
    if inner.workgroup == outer.workgroup:
        return count_le(inner.count, outer.count, min_counts)
    return False


# ---------------------------------------------------------------------- guard IR


def _const(value: int, ops: list[Operation]) -> SSAValue:
    op = ConstOp(value, ui32)
    ops.append(op)
    return op.result


def _binary(name: str, a: SSAValue, b: SSAValue, ops: list[Operation]) -> SSAValue:
    op = TABLE_OPS[name](a, b)
    ops.append(op)
    return op.results[0]


def count_value(count: Count, ops: list[Operation]) -> SSAValue:
    """IR for the value of `count` (appended to `ops`)."""
    value = _const(count.static, ops)
    for name in sorted(count.runtime):
        length = BufLenOp(name)
        ops.append(length)
        value = _binary("max", value, length.result, ops)
    return value


def groups_value(launch: Launch, ops: list[Operation]) -> SSAValue:
    """IR for the number of workgroups the dispatch launches (folding included)."""
    if launch.count.is_static:
        return _const(launched_groups(launch.count.static, launch.workgroup), ops)
    n = count_value(launch.count, ops)
    one = _const(1, ops)
    # groups = (n - 1) / threads + 1   (n >= 1)
    groups = _binary(
        "add",
        _binary("div", _binary("sub", n, one, ops), _const(launch.threads, ops), ops),
        one,
        ops,
    )
    # folded over y past 65535: gy = ceil(groups / 65535), gx = ceil(groups / gy)
    limit = _const(MAX_WORKGROUPS_PER_DIM, ops)
    gy = _binary("add", _binary("div", _binary("sub", groups, one, ops), limit, ops), one, ops)
    gx = _binary("add", _binary("div", _binary("sub", groups, one, ops), gy, ops), one, ops)
    return _binary("mul", gx, gy, ops)
