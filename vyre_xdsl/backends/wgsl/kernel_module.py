"""What the WGSL backend hands the runtime: one compiled kernel per descriptor.

This is the contract between `vyre-lower` + the WGSL printer (producers) and the
wgpu runtime and bundles (consumers). Everything the runtime needs is here; it
never re-analyses IR.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from vyre_xdsl.dispatch import launch_grid


@attrs.frozen
class WgslBinding:
    """One `@group(g) @binding(slot)` of a kernel."""

    name: str  # buffer name (the runtime binds host arrays by name)
    group: int
    slot: int
    element: str  # ui32, si32, f32, i1 (i1 is one u32 word per element)
    count: int | None  # declared element count; None when runtime-sized
    memory_class: str  # global, constant, uniform, scratch
    visibility: str  # read_only, write_only, read_write
    is_trap_sidecar: bool = False
    # `scratch` only: elements per invocation; the runtime allocates (zeroed)
    # this many times the invocations of the dispatch (the count is then None)
    per_invocation: int = 0
    # the repetition binding (`kernel.repetition`): one u32, the run's current
    # repetition, bound by the runtime per repetition (never a host buffer)
    is_repetition: bool = False
    # `kernel.binding ... no_clear`: this kernel writes every element before any
    # read, so a run whose first kernel to bind the buffer is this one need not
    # zero it first (`kernel-elide-clears`)
    no_clear: bool = False

    @property
    def is_scratch(self) -> bool:
        return self.memory_class == "scratch"


@attrs.frozen
class WgslKernel:
    """One WGSL module with its dispatch and binding information."""

    id: str  # descriptor id: BLAKE3 hex of the canonical program
    wgsl: str
    entry_point: str
    workgroup_size: tuple[int, int, int]
    bindings: tuple[WgslBinding, ...]
    # Buffers whose element counts decide the logical element count n; the
    # runtime takes max(len) over them (at least 1) and launches
    # `self.dispatch_grid(lengths)` workgroups (`vyre_xdsl.dispatch.launch_grid`).
    count_buffers: tuple[str, ...]
    # Set when every count is static: the grid lowering computed.
    static_grid: tuple[int, int, int] | None
    # Trap tag codes: a recorded tag code i + 1 means trap_tags[i].
    trap_tags: tuple[str, ...] = ()
    # The source program's declared workgroup size; differs from
    # `workgroup_size` only when lowering widened a [1, 1, 1] program (the
    # kernel then skips invocations past the program's declared launch).
    program_workgroup_size: tuple[int, int, int] | None = None
    # Source program name and, for a program split at grid_sync, the part index.
    source: str = ""
    part: int = 0
    # The declared element count of each of `count_buffers` (None: runtime-sized).
    count_declared: tuple[int | None, ...] = ()
    # The binding whose words 0..2 (counted from `indirect_offset` bytes) are the
    # grid (`dispatch_workgroups_indirect`); then `dispatch_grid` is not used.
    indirect: str | None = None
    # W > 1 for a kernel printed in a vector form (`elements_per_invocation` of
    # its dispatch: each invocation runs W consecutive logical invocations;
    # `static_grid` already covers n / W invocations).
    elements_per_invocation: int = 1
    # Byte offset of the indirect grid in `indirect` (a multiple of 4).
    indirect_offset: int = 0

    def element_count(self, lengths: Mapping[str, int]) -> int:
        """The logical element count n: the largest count among `count_buffers`
        (a binding's declared count, else `lengths[name]`, the bound host
        array's element count), at least 1."""
        declared = {b.name: b.count for b in self.bindings}
        declared.update(zip(self.count_buffers, self.count_declared))
        counts = []
        for name in self.count_buffers:
            count = declared.get(name)
            counts.append(lengths[name] if count is None else count)
        return max(counts + [1])

    def dispatch_grid(self, lengths: Mapping[str, int]) -> tuple[int, int, int]:
        """Workgroups per axis to launch, given the element counts of the bound
        runtime-sized buffers (`static_grid` when every count is static)."""
        if self.static_grid is not None:
            return self.static_grid
        return launch_grid(
            self.element_count(lengths),
            self.workgroup_size,
            self.program_workgroup_size,
            self.elements_per_invocation,
        )
