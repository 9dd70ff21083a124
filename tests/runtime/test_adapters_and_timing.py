"""Adapter choice (argument, VYRE_ADAPTER, vyre-run --adapter/-v), the
reference fallback without an adapter, GPU time per kernel (profile=True,
vyre-run --time), and workgroup limits taken from the adapter."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.diagnostics import VyreDiagnostic, VyreError
from vyre_xdsl.runtime import (
    AdapterChoiceError,
    ProfilingUnsupportedError,
    RunProfile,
    adapters,
    gpu_device,
)
from vyre_xdsl.runtime.device import adapter_index

from ..support import ROOT, child_environment

CHAIN3 = open(os.path.join(ROOT, "examples", "chain3.mlir")).read()


def _python(script: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=child_environment(drop_adapter=True, **env),
        timeout=120,
    )


def _vyre_run(*args: str, **env: str) -> subprocess.CompletedProcess:
    vyre_run = os.path.join(os.path.dirname(sys.executable), "vyre-run")
    return subprocess.run(
        [vyre_run, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=child_environment(drop_adapter=True, **env),
        timeout=120,
    )


# ---------------------------------------------------------------------- adapters


def test_adapters_are_listed_best_first_with_their_index():
    found = adapters()
    assert found, "the tests need an adapter (lavapipe)"
    assert [a.index for a in found] == list(range(len(found)))
    assert gpu_device().describe() == found[0].description
    assert str(found[0]).startswith("[0] ") and " via " in found[0].description


def test_an_adapter_is_chosen_by_index_or_name(monkeypatch):
    first = adapters()[0]
    monkeypatch.delenv("VYRE_ADAPTER", raising=False)
    assert adapter_index() == 0
    assert adapter_index(0) == adapter_index("0") == 0
    assert adapter_index(first.name.upper()[:6]) == 0  # case-insensitive substring
    monkeypatch.setenv("VYRE_ADAPTER", first.backend)
    assert adapter_index() == 0
    assert gpu_device() is gpu_device(0)


@pytest.mark.parametrize("choice", ["99", "no such adapter"])
def test_an_unknown_adapter_names_the_adapters_there_are(monkeypatch, choice):
    monkeypatch.setenv("VYRE_ADAPTER", choice)
    with pytest.raises(AdapterChoiceError, match=r"VYRE_ADAPTER.*adapters: \[0\] "):
        adapter_index()
    monkeypatch.delenv("VYRE_ADAPTER")
    with pytest.raises(AdapterChoiceError, match=r"^adapter="):
        vyre_xdsl.compile(CHAIN3, backend="wgpu", adapter=choice)


def test_vyre_run_verbose_prints_the_adapter_and_adapter_flag_chooses():
    done = _vyre_run("examples/axpy.mlir", "--random-inputs", "0", "-v", "--backend", "wgpu")
    assert done.returncode == 0, done.stderr
    assert f"vyre-run: backend wgpu on adapter [0] {adapters()[0].description}" in done.stderr
    bad = _vyre_run("examples/axpy.mlir", "--random-inputs", "0", "--adapter", "no such adapter")
    assert bad.returncode == 1
    assert "vyre-run: error: adapter='no such adapter' matches no adapter" in bad.stderr
    env = _vyre_run("examples/axpy.mlir", "--random-inputs", "0", VYRE_ADAPTER="99")
    assert env.returncode == 1 and "VYRE_ADAPTER=99: no adapter with that index" in env.stderr


def test_without_an_adapter_an_unset_backend_falls_back_and_warns_once():
    """No Metal adapter exists on Linux: forcing it stands in for a machine
    without any driver."""
    script = (
        "import numpy as np, vyre_xdsl\n"
        "from vyre_xdsl.runtime import NoGpuAdapterError\n"
        "x = np.ones(1024, np.float32)\n"
        "for _ in range(3):\n"
        "    out = vyre_xdsl.run(open('examples/axpy.mlir').read(), {'x': x, 'y': x})\n"
        "    assert out['y'].tolist() == [3.0] * 1024\n"
        "try:\n"
        "    vyre_xdsl.run(open('examples/axpy.mlir').read(), {'x': x, 'y': x}, backend='wgpu')\n"
        "except NoGpuAdapterError as e:\n"
        "    print('refused:', e)\n"
    )
    done = _python(script, WGPU_BACKEND_TYPE="Metal")
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("RuntimeWarning: vyre_xdsl: running on the reference interpreter") == 1
    assert "no GPU adapter found for WGPU_BACKEND_TYPE=Metal" in done.stderr
    assert done.stdout.startswith("refused: no GPU adapter found")


# ---------------------------------------------------------------------- timing


def test_profile_gives_gpu_time_per_kernel():
    exe = vyre_xdsl.compile(CHAIN3, backend="wgpu")
    assert exe.last_profile is None
    x = np.linspace(-1, 1, 4096, dtype=np.float32)
    out = exe.run({"x": x}, profile=True)
    assert out["out"].tolist() == ((x * 2 + 1) * (x * 2 + 1)).tolist()
    profile = exe.last_profile
    assert isinstance(profile, RunProfile)
    assert [k.name for k in profile.kernels] == ["scale", "shift", "square"]
    assert all(0 < k.seconds < 10 for k in profile.kernels)
    assert profile.total_seconds == pytest.approx(sum(k.seconds for k in profile.kernels))
    text = str(profile)
    assert text.splitlines()[0].startswith("scale") and "total" in text.splitlines()[-1]
    fused = vyre_xdsl.compile(CHAIN3, backend="wgpu", fuse=True)
    fused.run({"x": x}, profile=True)
    assert len(fused.last_profile.kernels) == 1


def test_profile_without_timestamp_queries_is_a_clear_error(monkeypatch):
    exe = vyre_xdsl.compile(CHAIN3, backend="wgpu")
    monkeypatch.setattr(exe.gpu, "features", exe.gpu.features - {"timestamp-query"})
    with pytest.raises(
        ProfilingUnsupportedError, match="timestamp queries are not supported by this adapter"
    ):
        exe.run({"x": np.zeros(4096, np.float32)}, profile=True)
    reference = vyre_xdsl.compile(CHAIN3, backend="reference")
    with pytest.raises(ProfilingUnsupportedError, match="needs the wgpu backend"):
        reference.run({"x": np.zeros(4096, np.float32)}, profile=True)


def test_vyre_run_time_prints_each_kernel():
    done = _vyre_run("examples/chain3.mlir", "--random-inputs", "0", "--time", "--backend", "wgpu")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert [line.split()[0] for line in lines] == ["scale", "shift", "square", "total"]
    assert all(line.split()[2] == "ms" and float(line.split()[1]) > 0 for line in lines)
    assert done.stdout.startswith("out: float32[4096]")


# ---------------------------------------------------------------------- workgroup limits


WIDE = """
vyre.program @wide workgroup_size [1024, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[4096]
  vyre.buffer @tile workgroup : ui32[6000]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %k = vyre.const 4000 : ui32
  %slot = vyre.add %l, %k : ui32
  vyre.store @tile[%slot] = %l : ui32
  vyre.barrier
  %shift = vyre.const 16 : ui32
  %hi = vyre.shl %w, %shift : ui32
  %back = vyre.load @tile[%slot] : ui32
  %v = vyre.bit_or %hi, %back : ui32
  vyre.store @out[%i] = %v : ui32
}
"""


def test_a_1024_invocation_workgroup_runs_with_the_adapters_limits():
    """1024 invocations and 24000 bytes of workgroup memory: beyond the
    portable profile (256, 16 KiB), within lavapipe's and NVIDIA's limits."""
    gpu = gpu_device()
    if gpu.limits["max-compute-invocations-per-workgroup"] < 1024:
        pytest.fail("this adapter allows fewer than 1024 invocations per workgroup")
    assert gpu.target_profile.max_invocations == gpu.limits["max-compute-invocations-per-workgroup"]
    out = vyre_xdsl.run(WIDE, {}, backend="wgpu")["out"]
    i = np.arange(4096, dtype=np.uint32)
    assert out.tolist() == (((i // 1024) << 16) | (i % 1024)).tolist()
    assert out.tolist() == vyre_xdsl.run(WIDE, {}, backend="reference")["out"].tolist()


def test_the_portable_profile_is_an_option():
    with pytest.raises((VyreDiagnostic, VyreError), match="the target profile allows 256"):
        vyre_xdsl.compile(WIDE, backend="wgpu", portable=True)
