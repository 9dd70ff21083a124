"""Buffers as one program sees them: bounds-checked, vectorized loads and stores.

A host buffer is a view of the host array cut to the program's declared element
count (`f32[16]` sees 16 elements even when the host array is longer; `?` sees
the whole array). A workgroup buffer is one zero-filled array per launched
workgroup, stored as a flat `(workgroups * count)` array. Bool (`i1`) buffers hold
one u32 word per element: a load is `word != 0`, a store writes 0 or 1.

Out-of-bounds loads give the typed zero; out-of-bounds stores are dropped. When
several lanes of one store statement write the same element, the lane with the
highest linear invocation index wins.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vyre_xdsl.semantics import HOST_DTYPES


@dataclass
class Memory:
    """One buffer of a running program."""

    name: str
    element: str  # ui32, si32, f32, i1
    count: int  # element count the program sees (per workgroup for workgroup memory)
    data: np.ndarray  # flat, host dtype; a view of the host array for host buffers
    workgroup: bool = False

    @classmethod
    def host(cls, name: str, element: str, count: int, array: np.ndarray) -> Memory:
        return cls(name, element, count, array[:count])

    @classmethod
    def shared(cls, name: str, element: str, count: int, workgroups: int) -> Memory:
        data = np.zeros(workgroups * count, dtype=HOST_DTYPES[element])
        return cls(name, element, count, data, workgroup=True)

    def addresses(
        self, index: np.ndarray, workgroup: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(flat addresses, in-bounds mask) of `index` (ui32 values) for each lane."""
        idx = index.astype(np.int64)
        in_bounds = idx < self.count
        if self.workgroup:
            assert workgroup is not None
            idx = workgroup * self.count + idx
        return idx, in_bounds

    def load(self, index: np.ndarray, workgroup: np.ndarray | None = None) -> np.ndarray:
        addr, in_bounds = self.addresses(index, workgroup)
        if self.count == 0:
            raw = np.zeros(addr.shape, dtype=self.data.dtype)
        else:
            raw = np.where(
                in_bounds, self.data[np.where(in_bounds, addr, 0)], np.zeros((), self.data.dtype)
            )
        return raw != 0 if self.element == "i1" else raw

    def store(
        self, index: np.ndarray, value: np.ndarray, workgroup: np.ndarray | None = None
    ) -> None:
        """Store `value[k]` at `index[k]` for every lane k (both one entry per lane)."""
        addr, in_bounds = self.addresses(index, workgroup)
        if not in_bounds.all():
            addr, value = addr[in_bounds], value[in_bounds]
        if addr.size == 0:
            return
        if self.element == "i1":
            value = value.astype(np.uint32)
        addr, value = last_writer_wins(addr, value)
        self.data[addr] = value


def last_writer_wins(addr: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Drop all but the last (highest-lane) write to each address.

    numpy does not promise which of several assignments to one element survives,
    so duplicates are removed first; strictly increasing addresses (the usual
    `buf[invocation_id]` pattern) are detected in O(n) and passed through.
    """
    if addr.size < 2 or bool(np.all(addr[1:] > addr[:-1])):
        return addr, value
    reversed_addr = addr[::-1]
    _, first_in_reversed = np.unique(reversed_addr, return_index=True)
    keep = addr.size - 1 - first_in_reversed
    return addr[keep], value[keep]
