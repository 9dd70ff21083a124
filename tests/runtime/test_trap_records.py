"""The trap record on the GPU: its two forms and the host's decoding.

Adapters with 64-bit atomic max ("shader-int64", "shader-int64-atomic-min-max";
lavapipe has both) record traps lock-free; others under a bounded lock that gives
up rather than hang. Expectations come from numpy scans of the inputs and from
the sidecar layout as documented (docs/runtime.md): words 4..7 hold address,
~invocation, tag code, ~invocation; word 0 the locked form's claim; word 3 flags.
"""

from __future__ import annotations

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.backends.wgsl.kernel_module import WgslKernel
from vyre_xdsl.backends.wgsl.printer import LOOP_LIMIT_HELPER, TRAP_HELPER
from vyre_xdsl.context import parse_module
from vyre_xdsl.interpreter import VyreTrap
from vyre_xdsl.runtime import compiled_kernels, gpu_device
from vyre_xdsl.runtime.device import wgsl_digest
from vyre_xdsl.runtime.execute import TrapNotRecordedError, _raise_trap

INT64 = {"shader-int64", "shader-int64-atomic-min-max"}
N = 2048

MANY_LANES = f"""
vyre.program @many workgroup_size [64, 1, 1] {{
  vyre.buffer @x binding 0 read_only : ui32[{N}]
  vyre.buffer @out binding 1 write_only : ui32[{N}]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %limit = vyre.const 1000 : ui32
  %bad = vyre.ge %v, %limit : ui32
  vyre.if %bad {{
    vyre.trap %v "bad_value"
  }}
  vyre.store @out[%i] = %v : ui32
}}
"""


def many_trapping_lanes() -> tuple[np.ndarray, tuple[str, int, int]]:
    """Half of the lanes past 300 trap; the expected trap is numpy's first."""
    rng = np.random.default_rng(11)
    x = rng.integers(0, 1000, N).astype(np.uint32)
    lanes = 300 + rng.choice(N - 300, N // 2, replace=False)
    x[lanes] = 1000 + rng.integers(0, 10**6, lanes.size).astype(np.uint32)
    first = int(np.flatnonzero(x >= 1000)[0])
    return x, ("bad_value", int(x[first]), first)


def trap_of(x: np.ndarray) -> tuple[str, int, int]:
    with pytest.raises(VyreTrap) as raised:
        vyre_xdsl.run(MANY_LANES, {"x": x}, backend="wgpu")
    return raised.value.tag, raised.value.address, raised.value.invocation


@pytest.fixture
def without_int64_atomics(monkeypatch):
    """The device as one without 64-bit atomics: the locked form is compiled."""
    gpu = gpu_device()
    gpu.clear_caches()
    monkeypatch.setattr(gpu, "features", gpu.features - INT64)
    yield gpu
    monkeypatch.undo()
    gpu.clear_caches()


def test_lavapipe_compiles_the_lock_free_form():
    gpu = gpu_device()
    assert INT64 <= gpu.features
    wgsl = compiled_kernels(parse_module(MANY_LANES))[0].wgsl
    compiled = gpu.device_wgsl(wgsl)
    assert "vyre_trap_sidecar: vyre_trap_sidecar_t;" in compiled
    assert "atomicMax(&vyre_trap_sidecar.records[0], key | u64(address));" in compiled
    assert "atomicMax(&vyre_trap_sidecar.records[1], key | u64(code));" in compiled
    assert "atomicOr(&vyre_trap_sidecar.words[3], 2u);" in compiled
    assert "atomicOr(&vyre_trap_sidecar[3], 1u)" not in compiled  # no lock left
    x, expected = many_trapping_lanes()
    assert trap_of(x) == expected
    entry = compiled_kernels(parse_module(MANY_LANES))[0].entry_point
    assert wgsl_digest(compiled, entry) in gpu.pipelines


def test_the_locked_form_reports_the_lowest_of_many_trapping_lanes(without_int64_atomics):
    gpu = without_int64_atomics
    kernel = compiled_kernels(parse_module(MANY_LANES))[0]
    assert gpu.device_wgsl(kernel.wgsl) == kernel.wgsl
    assert "atomicOr(&vyre_trap_sidecar[3], 1u)" in kernel.wgsl
    x, expected = many_trapping_lanes()
    assert trap_of(x) == expected
    assert list(gpu.pipelines) == [wgsl_digest(kernel.wgsl, kernel.entry_point)]


def test_a_lock_held_forever_gives_up_instead_of_hanging():
    """Invocations trap while the lock bit is held (never released): each gives up
    after its bounded attempts; the claim still names the lowest trapping one."""
    import wgpu

    gpu = gpu_device()
    source = "\n\n".join(
        [
            "@group(0) @binding(0) var<storage, read_write> vyre_trap_sidecar: array<atomic<u32>>;",
            LOOP_LIMIT_HELPER,
            TRAP_HELPER,
            "@compute @workgroup_size(64)\n"
            "fn main(@builtin(global_invocation_id) g: vec3<u32>) {\n"
            "  atomicOr(&vyre_trap_sidecar[3], 1u);\n"
            "  if (g.x >= 37u) {\n"
            "    vyre_record_trap(g.x, 1u, g.x);\n"
            "  }\n"
            "}\n",
        ]
    )
    device = gpu.device
    module = device.create_shader_module(code=source)
    pipeline = device.create_compute_pipeline(
        layout="auto", compute={"module": module, "entry_point": "main"}
    )
    buffer = device.create_buffer(
        size=32, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
    )
    group = device.create_bind_group(
        layout=pipeline.get_bind_group_layout(0),
        entries=[{"binding": 0, "resource": {"buffer": buffer, "offset": 0, "size": 32}}],
    )
    encoder = device.create_command_encoder()
    compute = encoder.begin_compute_pass()
    compute.set_pipeline(pipeline)
    compute.set_bind_group(0, group)
    compute.dispatch_workgroups(2)
    compute.end()
    device.queue.submit([encoder.finish()])
    words = np.frombuffer(device.queue.read_buffer(buffer), np.uint32)
    assert int(words[0]) == ~37 & 0xFFFFFFFF
    assert int(words[3]) == 1 | 4  # lock still held, "gave up" set, no loop flag
    assert words[4:].tolist() == [0, 0, 0, 0]
    with pytest.raises(TrapNotRecordedError, match="invocation 37 trapped, but the trap could not"):
        _raise_trap(_kernel(), words)


def _kernel() -> WgslKernel:
    return WgslKernel("0", "", "main", (1, 1, 1), (), (), None, trap_tags=("first", "second"))


def _lock_free_words(invocation: int, address: int, code: int) -> np.ndarray:
    key = (~invocation & 0xFFFFFFFF) << 32
    records = np.array([key | address, key | code], np.uint64).view(np.uint32)
    return np.concatenate([np.zeros(4, np.uint32), records])


def test_the_host_decodes_both_forms():
    with pytest.raises(VyreTrap) as raised:
        _raise_trap(_kernel(), _lock_free_words(9, 123456, 2))
    assert (raised.value.tag, raised.value.address, raised.value.invocation) == (
        "second",
        123456,
        9,
    )
    locked = _lock_free_words(9, 77, 1)
    locked[0] = ~9 & 0xFFFFFFFF
    with pytest.raises(VyreTrap) as raised:
        _raise_trap(_kernel(), locked)
    assert (raised.value.tag, raised.value.address, raised.value.invocation) == ("first", 77, 9)
    # a lower invocation (4) claimed but gave up: invocation 9's record is not reported
    locked[0] = ~4 & 0xFFFFFFFF
    locked[3] = 4
    with pytest.raises(TrapNotRecordedError, match="invocation 4 trapped"):
        _raise_trap(_kernel(), locked)
    assert _raise_trap(_kernel(), np.zeros(8, np.uint32)) is None
