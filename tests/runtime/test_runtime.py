"""The wgpu runtime (issue 6): device, caches, one submit, dispatch folding,
runtime-sized buffers, traps, limits, the CLI and the no-adapter error.

Every expected value is computed here with numpy or plain Python.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.abi import InputShapeError
from vyre_xdsl.api import default_backend
from vyre_xdsl.context import parse_module
from vyre_xdsl.interpreter import VyreTrap
from vyre_xdsl.runtime import (
    DeviceLimitError,
    adapter_available,
    compiled_kernels,
    gpu_device,
)
from vyre_xdsl.runtime import device as device_module
from vyre_xdsl.runtime.device import REQUESTED_LIMITS, wgsl_digest

from ..support import ROOT, child_environment

CHAIN = """
vyre.program @scale workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[N]
  vyre.buffer @t binding 1 write_only : ui32[N]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %three = vyre.const 3 : ui32
  %r = vyre.mul %v, %three : ui32
  vyre.store @t[%i] = %r : ui32
}
vyre.program @shift workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[N]
  vyre.buffer @u binding 1 write_only : ui32[N]
  %i = vyre.invocation_id x
  %v = vyre.load @t[%i] : ui32
  %one = vyre.const 1 : ui32
  %r = vyre.add %v, %one : ui32
  vyre.store @u[%i] = %r : ui32
}
vyre.program @xor workgroup_size [64, 1, 1] {
  vyre.buffer @u binding 0 read_only : ui32[N]
  vyre.buffer @out binding 1 write_only : ui32[N]
  %i = vyre.invocation_id x
  %v = vyre.load @u[%i] : ui32
  %k = vyre.const 21845 : ui32
  %r = vyre.bit_xor %v, %k : ui32
  vyre.store @out[%i] = %r : ui32
}
"""


def chain(n: int) -> str:
    return CHAIN.replace("[N]", f"[{n}]")


def chain_expected(x: np.ndarray) -> np.ndarray:
    x64 = x.astype(np.uint64)
    return (((x64 * 3 + 1) & 0xFFFFFFFF) ^ 21845).astype(np.uint32)


def test_an_adapter_exists_and_wgpu_is_the_default_backend():
    assert adapter_available() is True
    assert adapter_available() is True  # cached
    assert default_backend() == "wgpu"


def test_one_device_per_process_with_the_adapters_limits():
    gpu = gpu_device()
    assert gpu_device() is gpu
    for name in (
        "max-storage-buffer-binding-size",
        "max-buffer-size",
        "max-storage-buffers-per-shader-stage",
    ):
        assert name in REQUESTED_LIMITS
        assert gpu.limits[name] == gpu.adapter.limits[name]
    # lavapipe exceeds the WebGPU defaults (8 storage buffers per stage, 128 MiB bindings)
    assert gpu.limits["max-storage-buffers-per-shader-stage"] >= 8
    if gpu.backend == "Vulkan":
        assert "via Vulkan" in gpu.describe()


class _PassSpy:
    """Delegates to a compute pass, counting its dispatches."""

    def __init__(self, real, encoder):
        self.real, self.encoder = real, encoder

    def dispatch_workgroups(self, *args, **kwargs):
        self.encoder.dispatches += 1
        return self.real.dispatch_workgroups(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.real, name)


class _EncoderSpy:
    """Delegates to a command encoder, counting its compute passes and dispatches."""

    def __init__(self, real, finished: dict):
        self.real, self.finished, self.passes, self.dispatches = real, finished, 0, 0

    def begin_compute_pass(self, *args, **kwargs):
        self.passes += 1
        return _PassSpy(self.real.begin_compute_pass(*args, **kwargs), self)

    def finish(self, *args, **kwargs):
        buffer = self.real.finish(*args, **kwargs)
        self.finished[id(buffer)] = self
        return buffer

    def __getattr__(self, name):
        return getattr(self.real, name)


def test_a_three_program_chain_runs_in_one_encoder_and_one_submit(monkeypatch):
    gpu = gpu_device()
    x = np.random.default_rng(0).integers(0, 2**32, 1000, dtype=np.uint64).astype(np.uint32)
    vyre_xdsl.run(chain(1000), {"x": x}, backend="wgpu")  # compile + pipelines
    encoders, finished, submits = [], {}, []
    queue = gpu.device.queue
    real_submit, real_encoder = queue.submit, gpu.device.create_command_encoder

    def encoder(*args, **kwargs):
        encoders.append(_EncoderSpy(real_encoder(*args, **kwargs), finished))
        return encoders[-1]

    def submit(buffers):
        submits.append([finished.get(id(b)) for b in buffers])
        return real_submit(buffers)

    real_submit_for_index = device_module.submit_for_index

    def submit_for_index(device, buffer):
        submits.append([finished.get(id(buffer))])
        return real_submit_for_index(device, buffer)

    # dispatches are recorded with wgpu-native's functions on the pass's handle
    execute_module = sys.modules["vyre_xdsl.runtime.execute"]

    real_dispatch = execute_module._dispatch

    def dispatch(compute, *args):
        compute.encoder.dispatches += 1
        return real_dispatch(compute.real, *args)

    monkeypatch.setattr(gpu.device, "create_command_encoder", encoder)
    monkeypatch.setattr(queue, "submit", submit)
    monkeypatch.setattr(device_module, "submit_for_index", submit_for_index)
    monkeypatch.setattr(execute_module, "_dispatch", dispatch)
    out = vyre_xdsl.run(chain(1000), {"x": x}, backend="wgpu")
    working = [e for e in encoders if e.passes]
    assert [e.dispatches for e in working] == [3]  # three dispatches, one encoder
    assert [e.passes for e in working] == [1]  # ... in one compute pass (no profiling)
    # that encoder is submitted exactly once (wgpu-py adds empty submits when mapping)
    assert sum(batch.count(working[0]) for batch in submits) == 1
    assert out["out"].tolist() == chain_expected(x).tolist()
    assert sorted(out) == ["out"]  # t and u are intermediates


def test_pipelines_are_cached_by_wgsl_digest_and_buffers_are_reused():
    gpu = gpu_device()
    module = parse_module(chain(777))
    x = np.arange(777, dtype=np.uint32)
    vyre_xdsl.run(module, {"x": x}, backend="wgpu")
    kernels = compiled_kernels(module)
    assert len(kernels) == 3
    for kernel in kernels:
        assert wgsl_digest(kernel.wgsl, kernel.entry_point) in gpu.pipelines
    pipelines, created = len(gpu.pipelines), gpu.pool.created
    out = vyre_xdsl.run(module, {"x": x + 1}, backend="wgpu")
    assert len(gpu.pipelines) == pipelines
    assert gpu.pool.created == created  # same sizes: every buffer came from the pool
    assert out["out"].tolist() == chain_expected(x + 1).tolist()


def test_pooled_buffers_do_not_leak_values_between_runs():
    """A write_only output that the program writes only partly starts at zero,
    even when the pooled buffer last held other data."""
    text = """
    vyre.program @half workgroup_size [32, 1, 1] {
      vyre.buffer @x binding 0 read_only : ui32[64]
      vyre.buffer @o binding 1 write_only : ui32[64]
      %i = vyre.invocation_id x
      %c = vyre.const 32 : ui32
      %low = vyre.lt %i, %c : ui32
      vyre.if %low {
        %v = vyre.load @x[%i] : ui32
        vyre.store @o[%i] = %v : ui32
      }
    }"""
    x = np.full(64, 0xDEADBEEF, np.uint32)
    for _ in range(2):
        out = vyre_xdsl.run(text, {"x": x}, backend="wgpu")["o"]
        assert out.tolist() == [0xDEADBEEF] * 32 + [0] * 32


FOLD = """
vyre.program @fold workgroup_size [4, 1, 1] {
  vyre.buffer @o binding 0 write_only : ui32[N]
  %i = vyre.invocation_id x
  %w = vyre.workgroup_id x
  %k = vyre.const 7 : ui32
  %a = vyre.mul %i, %k : ui32
  %r = vyre.bit_xor %a, %w : ui32
  vyre.store @o[%i] = %r : ui32
}
"""


def test_grids_past_65535_workgroups_fold_into_y():
    n = 4 * 65535 + 4 * 9000 + 3  # 74001 workgroups of 4
    kernel = compiled_kernels(parse_module(FOLD.replace("N", str(n))))[0]
    gx, gy, gz = kernel.dispatch_grid({"o": n})
    assert gy > 1 and gx <= 65535 and gx * gy >= 74001 and gz == 1
    out = vyre_xdsl.run(FOLD.replace("N", str(n)), {}, backend="wgpu")["o"]
    i = np.arange(n, dtype=np.uint64)
    assert out.tolist() == (((i * 7) & 0xFFFFFFFF) ^ (i // 4)).astype(np.uint32).tolist()


RUNTIME_SIZED = """
vyre.program @len workgroup_size [8, 1, 1] {
  vyre.buffer @x binding 0 read_write : si32[?]
  vyre.buffer @n binding 1 write_only : ui32[1]
  vyre.buffer @e binding 2 write_only : f32[0]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : si32
  %d = vyre.neg %v : si32
  vyre.store @x[%i] = %d : si32
  %len = vyre.buf_len @x
  %zero = vyre.const 0 : ui32
  vyre.store @n[%zero] = %len : ui32
  %f = vyre.const 1.5 : f32
  vyre.store @e[%zero] = %f : f32
}
"""


@pytest.mark.parametrize("n", [1, 37, 300])
def test_runtime_sized_buffers_take_the_host_length_and_count_zero_works(n):
    x = np.arange(n, dtype=np.int32) - 5
    out = vyre_xdsl.run(RUNTIME_SIZED, {"x": x}, backend="wgpu")
    assert out["x"].tolist() == (-x).tolist()
    assert out["n"].tolist() == [n]
    assert out["e"].dtype == np.float32 and out["e"].size == 0


def test_an_empty_runtime_sized_buffer_is_a_clear_error():
    # refused before any backend runs, so the reference says the same (tests/api/test_run_inputs.py)
    with pytest.raises(InputShapeError, match="runtime-sized buffer 'x' is empty"):
        vyre_xdsl.run(RUNTIME_SIZED, {"x": np.zeros(0, np.int32)}, backend="wgpu")


def test_bool_outputs_are_bool():
    text = """
    vyre.program @b workgroup_size [16, 1, 1] {
      vyre.buffer @x binding 0 read_only : ui32[20]
      vyre.buffer @o binding 1 write_only : i1[20]
      %i = vyre.invocation_id x
      %v = vyre.load @x[%i] : ui32
      %c = vyre.const 9 : ui32
      %gt = vyre.gt %v, %c : ui32
      vyre.store @o[%i] = %gt : i1
    }"""
    x = np.arange(20, dtype=np.uint32)
    out = vyre_xdsl.run(text, {"x": x}, backend="wgpu")["o"]
    assert out.dtype == np.bool_
    assert out.tolist() == [v > 9 for v in range(20)]


TRAP = """
vyre.program @ok workgroup_size [32, 1, 1] {
  vyre.buffer @o binding 0 write_only : ui32[100]
  %i = vyre.invocation_id x
  vyre.store @o[%i] = %i : ui32
}
vyre.program @check workgroup_size [32, 1, 1] {
  vyre.buffer @o binding 0 read_only : ui32[100]
  vyre.buffer @p binding 1 write_only : ui32[100]
  %i = vyre.invocation_id x
  %v = vyre.load @o[%i] : ui32
  %k = vyre.const 77 : ui32
  %hit = vyre.eq %v, %k : ui32
  vyre.if %hit {
    %a = vyre.const 4242 : ui32
    vyre.trap %a "found_77"
  }
  vyre.store @p[%i] = %v : ui32
}
"""


@pytest.mark.parametrize("fuse", [False, True])
def test_the_trap_sidecar_becomes_the_interpreters_exception(fuse):
    with pytest.raises(VyreTrap) as raised:
        vyre_xdsl.run(TRAP, {}, backend="wgpu", fuse=fuse)
    assert (raised.value.tag, raised.value.address, raised.value.invocation) == (
        "found_77",
        4242,
        77,
    )


def test_si32_division_traps_are_decoded():
    text = """
    vyre.program @d workgroup_size [16, 1, 1] {
      vyre.buffer @a binding 0 read_only : si32[16]
      vyre.buffer @b binding 1 read_only : si32[16]
      vyre.buffer @q binding 2 write_only : si32[16]
      %i = vyre.invocation_id x
      %x = vyre.load @a[%i] : si32
      %y = vyre.load @b[%i] : si32
      %r = vyre.div %x, %y : si32
      vyre.store @q[%i] = %r : si32
    }"""
    a = np.arange(16, dtype=np.int32)
    b = np.ones(16, np.int32)
    b[11] = 0
    with pytest.raises(VyreTrap) as raised:
        vyre_xdsl.run(text, {"a": a, "b": b}, backend="wgpu")
    assert (raised.value.tag, raised.value.invocation) == ("si32.div", 11)


def test_a_binding_beyond_the_device_limit_is_a_clear_error(monkeypatch):
    gpu = gpu_device()
    monkeypatch.setitem(gpu.limits, "max-storage-buffer-binding-size", 1024)
    with pytest.raises(
        DeviceLimitError, match=r"buffer 'x' .* needs 4000 bytes; this device binds at most 1024"
    ):
        vyre_xdsl.run(RUNTIME_SIZED, {"x": np.zeros(1000, np.int32)}, backend="wgpu")


def test_without_an_adapter_the_error_names_the_driver_to_install():
    """No Metal adapter exists on Linux: forcing it stands in for a machine
    without any driver."""
    script = (
        "import numpy as np, vyre_xdsl\n"
        "from vyre_xdsl.api import default_backend\n"
        "from vyre_xdsl.runtime import NoGpuAdapterError, adapter_available\n"
        "assert adapter_available() is False and default_backend() == 'reference'\n"
        "try:\n"
        "    vyre_xdsl.run(open('examples/axpy.mlir').read(), {'x': np.ones(1024, np.float32),"
        " 'y': np.ones(1024, np.float32)}, backend='wgpu')\n"
        "except NoGpuAdapterError as e:\n"
        "    print(e)\n"
    )
    if sys.platform == "darwin":
        pytest.fail("this test forces a backend that Linux lacks")
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=child_environment(WGPU_BACKEND_TYPE="Metal"),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "no GPU adapter found for WGPU_BACKEND_TYPE=Metal" in done.stdout
    assert "mesa-vulkan-drivers" in done.stdout and "libvulkan1" in done.stdout


def test_vyre_run_backend_wgpu_matches_the_reference(tmp_path):
    module = tmp_path / "chain.mlir"
    module.write_text(chain(50))
    x = np.arange(50, dtype=np.uint32) * 1234567
    np.save(tmp_path / "x.npy", x)
    vyre_run = os.path.join(os.path.dirname(sys.executable), "vyre-run")
    for backend in ("wgpu", "reference"):
        out_dir = tmp_path / backend
        done = subprocess.run(
            [
                vyre_run,
                str(module),
                "--input",
                f"x={tmp_path / 'x.npy'}",
                "--backend",
                backend,
                "--output-dir",
                str(out_dir),
            ],
            capture_output=True,
            text=True,
            env=child_environment(),
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert np.load(out_dir / "out.npy").tolist() == chain_expected(x).tolist()


def test_the_staging_path_without_unified_memory():
    """VYRE_NO_UMA=1 makes the runtime copy through staging buffers, the path
    discrete GPUs take; lavapipe otherwise maps storage buffers directly."""
    script = (
        "import sys, numpy as np, vyre_xdsl\n"
        "from tests.runtime.test_runtime import TRAP, chain, chain_expected\n"
        "from vyre_xdsl.interpreter import VyreTrap\n"
        "from vyre_xdsl.runtime import gpu_device\n"
        "assert not gpu_device().unified_memory\n"
        "x = np.arange(300, dtype=np.uint32) * 977\n"
        "out = vyre_xdsl.run(chain(300), {'x': x}, backend='wgpu')['out']\n"
        "assert out.tolist() == chain_expected(x).tolist()\n"
        "try:\n"
        "    vyre_xdsl.run(TRAP, {}, backend='wgpu')\n"
        "except VyreTrap as t:\n"
        "    print(t.tag, t.address, t.invocation)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=child_environment(VYRE_NO_UMA="1"),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["found_77", "4242", "77"]


def test_lavapipe_maps_storage_buffers_directly():
    gpu = gpu_device()
    cpu = gpu.adapter.info.get("adapter_type") == "CPU"
    if (
        cpu
        and "mappable-primary-buffers" in gpu.adapter.features
        and not os.environ.get("VYRE_NO_UMA")
    ):
        assert gpu.unified_memory
    elif gpu.adapter.info.get("adapter_type") == "DiscreteGPU":
        assert not gpu.unified_memory


DIAMOND = """
vyre.program @a workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[300]
  vyre.buffer @t1 binding 1 write_only : ui32[300]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %k = vyre.const 3 : ui32
  %r = vyre.mul %v, %k : ui32
  vyre.store @t1[%i] = %r : ui32
}
vyre.program @b workgroup_size [64, 1, 1] {
  vyre.buffer @t1 binding 0 read_only : ui32[300]
  vyre.buffer @t2 binding 1 write_only : ui32[77]
  %i = vyre.invocation_id x
  %v = vyre.load @t1[%i] : ui32
  %k = vyre.const 1 : ui32
  %r = vyre.add %v, %k : ui32
  vyre.store @t2[%i] = %r : ui32
}
vyre.program @c workgroup_size [64, 1, 1] {
  vyre.buffer @t1 binding 0 read_only : ui32[300]
  vyre.buffer @t2 binding 1 read_only : ui32[77]
  vyre.buffer @t3 binding 2 write_only : ui32[300]
  %i = vyre.invocation_id x
  %a = vyre.load @t1[%i] : ui32
  %b = vyre.load @t2[%i] : ui32
  %r = vyre.bit_xor %a, %b : ui32
  vyre.store @t3[%i] = %r : ui32
}
vyre.program @d workgroup_size [64, 1, 1] {
  vyre.buffer @t3 binding 0 read_only : ui32[300]
  vyre.buffer @t2 binding 1 read_only : ui32[77]
  vyre.buffer @out binding 2 write_only : ui32[300]
  %i = vyre.invocation_id x
  %a = vyre.load @t3[%i] : ui32
  %b = vyre.load @t2[%i] : ui32
  %r = vyre.add %a, %b : ui32
  vyre.store @out[%i] = %r : ui32
}
"""


def test_intermediates_share_arena_buffers_without_usage_conflicts():
    """Zero-filled intermediates are slots of a few arena buffers; a kernel that
    reads two of them and writes a third must see them in different buffers.
    Out-of-bounds loads of the 77-element t2 give 0 (the WGSL bound)."""
    x = (np.arange(300, dtype=np.uint64) * 2654435761 % 2**32).astype(np.uint32)
    t1 = (x.astype(np.uint64) * 3 % 2**32).astype(np.uint32)
    t2 = np.zeros(300, np.uint32)
    t2[:77] = t1[:77] + 1
    expected = ((t1 ^ t2).astype(np.uint64) + t2) % 2**32
    for _ in range(2):  # the second run reuses the pooled arenas
        out = vyre_xdsl.run(DIAMOND, {"x": x}, backend="wgpu")["out"]
        assert out.tolist() == expected.astype(np.uint32).tolist()
    assert vyre_xdsl.run(DIAMOND, {"x": x}, backend="reference")["out"].tolist() == out.tolist()
