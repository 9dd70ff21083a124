"""What the WGSL backend hands the runtime: one compiled kernel per descriptor.

This is the contract between `vyre-lower` + the WGSL printer (producers) and the
wgpu runtime and bundles (consumers). Everything the runtime needs is here; it
never re-analyses IR.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class WgslBinding:
    """One `@group(g) @binding(slot)` of a kernel."""

    name: str  # buffer name (the runtime binds host arrays by name)
    group: int
    slot: int
    element: str  # ui32, si32, f32, i1 (i1 is one u32 word per element)
    count: int | None  # declared element count; None when runtime-sized
    memory_class: str  # global, constant, uniform
    visibility: str  # read_only, write_only, read_write
    is_trap_sidecar: bool = False


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
    # vyre_xdsl.dispatch.dispatch_grid(n, workgroup_size).
    count_buffers: tuple[str, ...]
    # Set when every count is static: the grid lowering computed.
    static_grid: tuple[int, int, int] | None
    # Trap tag codes: sidecar word 2 == i + 1 means trap_tags[i].
    trap_tags: tuple[str, ...] = ()
