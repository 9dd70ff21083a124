"""Vectorized atomics with sequential semantics.

The lanes of one `vyre.atomic` statement apply their operations one after another
in increasing linear invocation order; each gets the value the element held just
before its own operation (the *old* value). Out-of-bounds lanes do nothing and
get 0.

`add`, `or`, `and`, `xor`, `min`, `max` and `exchange` are associative, so every
lane's old value comes from a segmented inclusive scan over the lanes grouped by
address (Hillis-Steele: log2 of the largest group's size numpy passes, a cumulative
sum for `add`). `fetch_nand` (`~(old & v)`) and the compare-exchanges are not
associative: they run in rounds, round r applying the r-th lane of every address
at once, so they need as many Python-level rounds as the most contended address
has lanes (the one scalar path of the interpreter). `compare_exchange_weak`
never fails spuriously here (a weak compare-exchange may, on a GPU).

Memory orderings do not change anything here: the lanes run one after another.

On a GPU the order is some serialization chosen by the hardware, so only uses
whose result does not depend on the order (counters, histograms, max/min
reductions) compare exactly across backends.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from vyre_xdsl.semantics import ATOMIC_COMBINE, COMPARE_EXCHANGE_OPS


def atomic(
    kind: str,
    data: np.ndarray,
    addr: np.ndarray,
    in_bounds: np.ndarray,
    value: np.ndarray,
    expected: np.ndarray | None = None,
) -> np.ndarray:
    """Apply one atomic statement to `data`; return each lane's old value.

    `addr`, `in_bounds`, `value` and `expected` hold one entry per lane, lanes in
    increasing linear invocation order.
    """
    old = np.zeros(addr.shape[0], dtype=np.uint32)
    positions = np.flatnonzero(in_bounds)
    if positions.size == 0:
        return old
    order = positions[np.argsort(addr[positions], kind="stable")]
    a, v = addr[order], value[order].astype(np.uint32)
    head = group_heads(a)
    before = data[a]
    if kind in COMPARE_EXCHANGE_OPS:
        assert expected is not None
        wanted = expected[order].astype(np.uint32)
        old[order] = _rounds(
            data,
            a,
            v,
            head,
            lambda current, new, pick: np.where(current == wanted[pick], new, current),
        )
        return old
    combine = ATOMIC_COMBINE[kind][0]
    if kind == "fetch_nand":
        old[order] = _rounds(data, a, v, head, lambda current, new, pick: combine(current, new))
        return old
    seeded = v.copy()
    starts = head == np.arange(a.shape[0])
    seeded[starts] = combine(before[starts], v[starts])
    after = (
        _segmented_sum(seeded, head) if kind == "add" else _segmented_scan(seeded, head, combine)
    )
    old_sorted = np.where(starts, before, np.roll(after, 1))
    old[order] = old_sorted
    last = np.append(a[1:] != a[:-1], True)
    data[a[last]] = after[last]
    return old


def group_heads(sorted_addr: np.ndarray) -> np.ndarray:
    """For each element of a sorted address array, the index where its group starts."""
    n = sorted_addr.shape[0]
    starts = np.append(True, sorted_addr[1:] != sorted_addr[:-1])
    return np.maximum.accumulate(np.where(starts, np.arange(n), 0))


def _segmented_sum(x: np.ndarray, head: np.ndarray) -> np.ndarray:
    """Inclusive per-group running sum, wrapping mod 2**32."""
    total = np.cumsum(x.astype(np.uint64))
    before_group = np.where(head > 0, total[head - 1], np.uint64(0))
    return ((total - before_group) & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def _segmented_scan(
    x: np.ndarray, head: np.ndarray, combine: Callable[[np.ndarray, np.ndarray], np.ndarray]
) -> np.ndarray:
    """Inclusive per-group scan of an associative `combine` (earlier, later)."""
    n = x.shape[0]
    index = np.arange(n)
    longest = int((index - head).max()) + 1
    d = 1
    while d < longest:
        same_group = head[d:] <= index[:-d]
        x = np.concatenate([x[:d], np.where(same_group, combine(x[:-d], x[d:]), x[d:])])
        d *= 2
    return x.astype(np.uint32)


def _rounds(
    data: np.ndarray,
    a: np.ndarray,
    v: np.ndarray,
    head: np.ndarray,
    step: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
) -> np.ndarray:
    """Apply a non-associative atomic lane by lane: round r applies the r-th lane
    of every address; `step(current, value, positions)` gives the new contents."""
    rank = np.arange(a.shape[0]) - head
    by_rank = np.argsort(rank, kind="stable")
    ends = np.cumsum(np.bincount(rank))
    old = np.empty(a.shape[0], dtype=np.uint32)
    start = 0
    for end in ends:
        pick = by_rank[start:end]
        start = end
        current = data[a[pick]]
        old[pick] = current
        data[a[pick]] = step(current, v[pick], pick)
    return old
