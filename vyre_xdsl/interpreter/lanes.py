"""Lanes: the launched invocations of one dispatch, and the frames that run them.

A *lane* is one launched invocation, numbered by its linear invocation index
`logical_workgroup * threads + local_linear` (local ids x fastest), exactly as
`vyre_xdsl.dispatch` launches them on a GPU.

A :class:`Frame` is a sorted set of live lanes that run a stretch of statements
together. Every SSA value computed in a frame is a numpy array with one entry per
frame lane, or a shape-`(1,)` array when it is the same for every lane (constants,
`buf_len`, arithmetic on those). A nested frame (the lanes that take an `if`
branch, run loop iteration k, or survive a `return`) holds positions into its
parent's lanes; a value defined in an outer frame is gathered into the inner one
the first time it is used there.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.ir import SSAValue

from vyre_xdsl.dispatch import dispatch_grid


@dataclass(frozen=True)
class Launch:
    """The invocations of one dispatch of a program over `n` logical elements."""

    n: int
    workgroup: tuple[int, int, int]
    #: the grid read from an indirect grid buffer (it replaces the one `n` gives)
    indirect: tuple[int, int, int] | None = None
    #: `indirect` is the program's explicit grid: workgroup ids span every axis
    explicit: bool = False

    @property
    def threads(self) -> int:
        wx, wy, wz = self.workgroup
        return wx * wy * wz

    @property
    def grid(self) -> tuple[int, int, int]:
        if self.indirect is not None:
            return self.indirect
        return dispatch_grid(self.n, self.workgroup)

    @property
    def workgroups(self) -> int:
        """Workgroups actually launched (folding over y may add a few)."""
        gx, gy, gz = self.grid
        return gx * gy * gz

    @property
    def lanes(self) -> int:
        return self.workgroups * self.threads

    def workgroup_of(self, lanes: np.ndarray) -> np.ndarray:
        return lanes // self.threads

    def workgroup_ids(self, lanes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Workgroup ids per axis: an explicit grid's span every axis (x fastest);
        otherwise the logical workgroup is the x id and y and z are 0."""
        group = self.workgroup_of(lanes)
        if not self.explicit:
            return group, np.zeros_like(group), np.zeros_like(group)
        gx, gy, _ = self.grid
        return group % gx, (group // gx) % gy, group // (gx * gy)

    def local_ids(self, lanes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        wx, wy, _ = self.workgroup
        local = lanes % self.threads
        return local % wx, (local // wx) % wy, local // (wx * wy)


class Frame:
    """A sorted set of lanes running together, with the SSA values computed for them."""

    def __init__(
        self,
        lanes: np.ndarray,
        parent: Frame | None = None,
        sel: np.ndarray | None = None,
        death_mark: int = 0,
    ):
        self.lanes = lanes
        self.parent = parent
        # positions of this frame's lanes within parent.lanes; None: the same lanes
        self.sel = sel
        self.death_mark = death_mark
        self.values: dict[SSAValue, np.ndarray] = {}
        self._positions: dict[int, np.ndarray | None] = {}

    @classmethod
    def root(cls, lanes: int) -> Frame:
        return cls(np.arange(lanes, dtype=np.int64))

    @property
    def size(self) -> int:
        return int(self.lanes.shape[0])

    def child(self, sel: np.ndarray | None, death_mark: int) -> Frame:
        """A frame of the lanes at positions `sel` of this one (None: all of them)."""
        if sel is not None and sel.shape[0] == self.size:
            sel = None
        lanes = self.lanes if sel is None else self.lanes[sel]
        return Frame(lanes, self, sel, death_mark)

    def subset(self, mask: np.ndarray, death_mark: int) -> Frame:
        """A frame of the lanes where `mask` (one bool per lane, or shape (1,)) holds."""
        if mask.shape[0] == 1 and self.size != 1:
            return self.child(None if mask[0] else np.zeros(0, np.int64), death_mark)
        return self.child(np.flatnonzero(mask), death_mark)

    def lookup(self, value: SSAValue) -> np.ndarray:
        """The value for this frame's lanes (gathered from an outer frame if needed)."""
        found = self.values.get(value)
        if found is not None:
            return found
        if self.parent is None:
            raise KeyError(value)
        outer = self.parent.lookup(value)
        inner = outer if self.sel is None or outer.shape[0] == 1 else outer[self.sel]
        self.values[value] = inner
        return inner

    def positions_in(self, ancestor: Frame) -> np.ndarray | None:
        """Positions of this frame's lanes within `ancestor.lanes` (None: all, in order)."""
        key = id(ancestor)
        if key in self._positions:
            return self._positions[key]
        positions: np.ndarray | None = None
        frame: Frame | None = self
        while frame is not ancestor:
            assert frame is not None, "ancestor is not an ancestor of this frame"
            if frame.sel is not None:
                positions = frame.sel if positions is None else frame.sel[positions]
            frame = frame.parent
        self._positions[key] = positions
        return positions


def broadcast(value: np.ndarray, size: int) -> np.ndarray:
    """`value` as one entry per lane (a read-only view for a uniform value)."""
    return value if value.shape[0] == size else np.broadcast_to(value, (size,))
