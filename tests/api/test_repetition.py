"""Repetition: `run(..., repeat=N)`, `vyre-run --repeat N` and `vyre.repetition`.

The programs of a module run N times in program order on the same buffers
(one submission on the GPU); the expectations are numpy loops.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.context import parse_module
from vyre_xdsl.dialects import kernel as k
from vyre_xdsl.dialects.vyre import programs
from vyre_xdsl.interpreter import IterationLimitError, VyreTrap
from vyre_xdsl.lowering.lower import lower_program

from ..support import ROOT

BIN = pathlib.Path(sys.executable).parent
BACKENDS = ("reference", "wgpu")
JACOBI = (ROOT / "examples" / "jacobi_1d.mlir").read_text()
FDTD = (ROOT / "examples" / "fdtd_2d.mlir").read_text()


def _jacobi(a: np.ndarray, b: np.ndarray, steps: int) -> tuple[np.ndarray, np.ndarray]:
    a, b, third = a.copy(), b.copy(), np.float32(0.33333)
    for _ in range(steps):
        b[1:-1] = third * ((a[:-2] + a[1:-1]) + a[2:])
        a[1:-1] = third * ((b[:-2] + b[1:-1]) + b[2:])
    return a, b


def _fdtd(ex, ey, hz, fict, steps, nx=20, ny=30):
    ex, ey, hz = (v.reshape(nx, ny).copy() for v in (ex, ey, hz))
    half, k7 = np.float32(0.5), np.float32(0.7)
    for t in range(steps):
        ey[0, :] = fict[t]
        ey[1:, :] = ey[1:, :] - half * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] = ex[:, 1:] - half * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] = hz[:-1, :-1] - k7 * (
            ((ex[:-1, 1:] - ex[:-1, :-1]) + ey[1:, :-1]) - ey[:-1, :-1]
        )
    return ex.reshape(-1), ey.reshape(-1), hz.reshape(-1)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fuse", [False, "force"])
def test_jacobi_1d_ten_steps_matches_numpy(backend, fuse):
    rng = np.random.default_rng(1)
    a, b = rng.random(120, dtype=np.float32), rng.random(120, dtype=np.float32)
    out = vyre_xdsl.run(JACOBI, {"A": a, "B": b}, backend=backend, fuse=fuse, repeat=10)
    want_a, want_b = _jacobi(a, b, 10)
    np.testing.assert_allclose(out["A"], want_a, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(out["B"], want_b, rtol=1e-6, atol=1e-7)
    assert not np.allclose(want_a, _jacobi(a, b, 9)[0])  # ten steps, not nine


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fuse", [False, "force"])
def test_fdtd_2d_reads_fict_through_the_repetition(backend, fuse):
    rng = np.random.default_rng(2)
    ex, ey, hz = (rng.random(600, dtype=np.float32) for _ in range(3))
    fict = rng.random(20, dtype=np.float32)
    inputs = {"ex": ex, "ey": ey, "hz": hz, "fict": fict}
    out = vyre_xdsl.run(FDTD, inputs, backend=backend, fuse=fuse, repeat=6)
    for name, want in zip(("ex", "ey", "hz"), _fdtd(ex, ey, hz, fict, 6)):
        np.testing.assert_allclose(out[name], want, rtol=1e-5, atol=1e-6, err_msg=name)
    np.testing.assert_array_equal(out["ey"][:30], np.full(30, fict[5]))


# every repetition adds its number to @acc and writes it at @seen[r]; @seen is
# write_only, so it is cleared once before the first repetition, not per repetition
COUNTER = """
vyre.program @count workgroup_size [4, 1, 1] {
  vyre.buffer @acc binding 0 read_write : ui32[8]
  vyre.buffer @seen binding 1 write_only : ui32[8]
  %i = vyre.invocation_id x
  %r = vyre.repetition
  %a = vyre.load @acc[%i] : ui32
  %s = vyre.add %a, %r : ui32
  vyre.store @acc[%i] = %s : ui32
  %one = vyre.const 1 : ui32
  %r1 = vyre.add %r, %one : ui32
  vyre.store @seen[%r] = %r1 : ui32
}
vyre.program @again workgroup_size [4, 1, 1] {
  vyre.buffer @acc binding 0 read_write : ui32[8]
  %i = vyre.invocation_id x
  %r = vyre.repetition
  %a = vyre.load @acc[%i] : ui32
  %ten = vyre.const 10 : ui32
  %m = vyre.mul %r, %ten : ui32
  %s = vyre.add %a, %m : ui32
  vyre.store @acc[%i] = %s : ui32
}
"""


def _counter_expected(acc: np.ndarray, repeat: int):
    acc, seen = acc.astype(np.uint32).copy(), np.zeros(8, np.uint32)
    for r in range(repeat):
        acc += r
        seen[r] = r + 1
        acc += 10 * r
    return acc, seen


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("repeat", [1, 5])
def test_repetition_counts_from_zero_in_every_program(backend, repeat):
    acc = np.arange(8, dtype=np.uint32)
    out = vyre_xdsl.run(COUNTER, {"acc": acc}, backend=backend, repeat=repeat)
    want_acc, want_seen = _counter_expected(acc, repeat)
    np.testing.assert_array_equal(out["acc"], want_acc)
    np.testing.assert_array_equal(out["seen"], want_seen)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_fused_module_sees_one_repetition_in_every_arm(backend):
    acc = np.arange(8, dtype=np.uint32)
    out = vyre_xdsl.run(COUNTER, {"acc": acc}, backend=backend, fuse="force", repeat=4)
    want_acc, want_seen = _counter_expected(acc, 4)
    np.testing.assert_array_equal(out["acc"], want_acc)
    np.testing.assert_array_equal(out["seen"], want_seen)


def test_all_repetitions_are_one_submission(monkeypatch):
    import importlib

    from vyre_xdsl.runtime.device import GpuDevice

    execute = importlib.import_module("vyre_xdsl.runtime.execute")
    exe = vyre_xdsl.compile(COUNTER, backend="wgpu")
    exe.run({"acc": np.zeros(8, np.uint32)})  # pipelines made, nothing pending
    dispatches, submits = [], []
    original_submit, original_dispatch = GpuDevice.submit, execute._dispatch

    def counting_submit(self):
        if self.pending is not None:  # a batch goes to the queue
            submits.append(len(dispatches))
        return original_submit(self)

    def counting_dispatch(*args, **kwargs):
        dispatches.append(args[1].kernel.source)
        return original_dispatch(*args, **kwargs)

    monkeypatch.setattr(GpuDevice, "submit", counting_submit)
    monkeypatch.setattr(execute, "_dispatch", counting_dispatch)
    out = exe.run({"acc": np.zeros(8, np.uint32)}, repeat=6)
    np.testing.assert_array_equal(out["acc"], _counter_expected(np.zeros(8), 6)[0])
    assert dispatches == ["count", "again"] * 6
    assert submits == [12]  # one submission, after all 6 x 2 dispatches were recorded


@pytest.mark.parametrize("bad", [0, -1, "3", 2.0, True])
@pytest.mark.parametrize("backend", BACKENDS)
def test_repeat_below_one_or_not_an_int_is_a_value_error(backend, bad):
    with pytest.raises(ValueError, match="repeat"):
        vyre_xdsl.run(COUNTER, {"acc": np.zeros(8, np.uint32)}, backend=backend, repeat=bad)
    exe = vyre_xdsl.compile(COUNTER, backend=backend)
    with pytest.raises(ValueError, match="repeat"):
        exe.run({"acc": np.zeros(8, np.uint32)}, repeat=bad)


TRAP = """
vyre.program @t workgroup_size [4, 1, 1] {
  vyre.buffer @out binding 0 read_write : ui32[4]
  %i = vyre.invocation_id x
  %r = vyre.repetition
  %two = vyre.const 2 : ui32
  %hit = vyre.eq %r, %two : ui32
  vyre.if %hit {
    vyre.trap %i "rep.two"
  }
  vyre.store @out[%i] = %r : ui32
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_trap_names_its_repetition(backend):
    with pytest.raises(VyreTrap, match=r"repetition 2 of 5") as trapped:
        vyre_xdsl.run(TRAP, {"out": np.zeros(4, np.uint32)}, backend=backend, repeat=5)
    assert trapped.value.tag == "rep.two"
    assert trapped.value.repetition == 2
    out = vyre_xdsl.run(TRAP, {"out": np.zeros(4, np.uint32)}, backend=backend, repeat=2)
    np.testing.assert_array_equal(out["out"], np.ones(4, np.uint32))


LOOP = """
vyre.program @loop4 workgroup_size [8, 1, 1] {
  vyre.buffer @out binding 0 read_write : ui32[8]
  %i = vyre.invocation_id x
  %lo = vyre.const 0 : ui32
  %four = vyre.const 4 : ui32
  vyre.loop @k = %lo to %four {
    %k = vyre.var @k : ui32
    %o = vyre.load @out[%i] : ui32
    %s = vyre.add %o, %k : ui32
    vyre.store @out[%i] = %s : ui32
  }
}
"""


def test_max_iterations_is_summed_over_the_repetitions():
    zeros = {"out": np.zeros(8, np.uint32)}
    out = vyre_xdsl.run(LOOP, zeros, backend="reference", repeat=3, max_iterations=96)
    np.testing.assert_array_equal(out["out"], np.full(8, 18, np.uint32))  # 3 x (0+1+2+3)
    with pytest.raises(IterationLimitError):
        vyre_xdsl.run(LOOP, zeros, backend="reference", repeat=3, max_iterations=95)


# %v is loaded from @x, which the program then overwrites: it is spilled to
# scratch across the grid_sync, as is nothing else; %r is recomputed after it
SPILL = """
vyre.program @spill workgroup_size [4, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[16]
  vyre.buffer @y binding 1 read_write : ui32[16]
  vyre.buffer @out binding 2 read_write : ui32[16]
  %i = vyre.invocation_id x
  %r = vyre.repetition
  %v = vyre.load @x[%i] : ui32
  %one = vyre.const 1 : ui32
  %n = vyre.const 16 : ui32
  %j0 = vyre.add %i, %one : ui32
  %j = vyre.mod %j0, %n : ui32
  %m = vyre.add %v, %r : ui32
  vyre.store @y[%j] = %m : ui32
  vyre.store @x[%i] = %m : ui32
  vyre.barrier grid_sync
  %yv = vyre.load @y[%i] : ui32
  %o = vyre.load @out[%i] : ui32
  %s0 = vyre.add %o, %yv : ui32
  %s1 = vyre.add %s0, %v : ui32
  %s = vyre.add %s1, %r : ui32
  vyre.store @out[%i] = %s : ui32
}
"""


def _spill_expected(x: np.ndarray, repeat: int):
    x, y, out = x.astype(np.uint32).copy(), np.zeros(16, np.uint32), np.zeros(16, np.uint32)
    for r in range(repeat):
        v = x.copy()
        m = v + np.uint32(r)
        y = np.roll(m, 1)
        x = m
        out += y + v + np.uint32(r)
    return x, y, out


def test_the_repetition_binding_takes_a_slot_no_spill_or_sidecar_holds():
    program = programs(parse_module(SPILL))[0]
    descriptors = lower_program(program)
    assert len(descriptors) == 2
    scratch_seen = False
    for descriptor in descriptors:
        slots = [b.slot_number for b in descriptor.bindings()]
        assert len(slots) == len(set(slots)), slots
        scratch_seen |= any(b.is_scratch for b in descriptor.bindings())
        rep = [b for b in descriptor.bindings() if b.is_repetition]
        assert [b.buffer_name for b in rep] == [k.REPETITION_NAME]
        reads = [op for op in descriptor.walk() if isinstance(op, k.RepetitionOp)]
        assert reads and all(op.slot_number == rep[0].slot_number for op in reads)
    assert scratch_seen


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_module_that_spills_at_grid_sync_repeats(backend):
    x = np.arange(16, dtype=np.uint32) * 3
    zeros = np.zeros(16, np.uint32)
    out = vyre_xdsl.run(SPILL, {"x": x, "y": zeros, "out": zeros}, backend=backend, repeat=4)
    for name, want in zip(("x", "y", "out"), _spill_expected(x, 4)):
        np.testing.assert_array_equal(out[name], want, err_msg=name)


def test_vyre_run_repeat(tmp_path):
    acc = np.arange(8, dtype=np.uint32)
    np.save(tmp_path / "acc.npy", acc)
    source = tmp_path / "count.mlir"
    source.write_text(COUNTER)
    for backend in BACKENDS:
        outdir = tmp_path / backend
        done = subprocess.run(
            [BIN / "vyre-run", source, "--repeat", "3", "--backend", backend]
            + ["--input", f"acc={tmp_path / 'acc.npy'}", "--output-dir", outdir],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        want_acc, want_seen = _counter_expected(acc, 3)
        np.testing.assert_array_equal(np.load(outdir / "acc.npy"), want_acc)
        np.testing.assert_array_equal(np.load(outdir / "seen.npy"), want_seen)
    refused = subprocess.run(
        [BIN / "vyre-run", source, "--repeat", "0", "--backend", "reference"],
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0
    assert "--repeat is 0" in refused.stderr and "Traceback" not in refused.stderr


AXPY_ACC = """
vyre.program @scale workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[256]
  vyre.buffer @y binding 1 read_write : f32[256]
  %i = vyre.invocation_id x
  %xv = vyre.load @x[%i] : f32
  %yv = vyre.load @y[%i] : f32
  %s = vyre.add %xv, %yv : f32
  vyre.store @y[%i] = %s : f32
}
vyre.program @half workgroup_size [64, 1, 1] {
  vyre.buffer @y binding 1 read_write : f32[256]
  %i = vyre.invocation_id x
  %yv = vyre.load @y[%i] : f32
  %h = vyre.const 0.5 : f32
  %s = vyre.mul %yv, %h : f32
  vyre.store @y[%i] = %s : f32
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bundle_repeats(backend):
    from vyre_xdsl.megakernel.compile import compile_module
    from vyre_xdsl.megakernel.run import run_bundle

    rng = np.random.default_rng(3)
    x, y = rng.random(256, dtype=np.float32), rng.random(256, dtype=np.float32)
    bundle = compile_module(vyre_xdsl.parse(AXPY_ACC)).bundle_bytes()
    out = run_bundle(bundle, {"x": x, "y": y}, backend=backend, repeat=5)
    want = y.copy()
    for _ in range(5):
        want = (x + want) * np.float32(0.5)
    np.testing.assert_allclose(out["y"], want, rtol=1e-6)
    with pytest.raises(ValueError, match="repeat"):
        run_bundle(bundle, {"x": x, "y": y}, backend=backend, repeat=0)


def _bundle(text: str):
    from vyre_xdsl.megakernel.bundle import TargetModuleBundle
    from vyre_xdsl.megakernel.compile import compile_module

    return TargetModuleBundle.from_bytes(compile_module(vyre_xdsl.parse(text)).bundle_bytes())


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_fdtd_2d_bundle_reads_fict_through_the_repetition(backend):
    from vyre_xdsl.megakernel.run import run_bundle

    bundle = _bundle(FDTD)
    readers = [k for k in bundle.kernels() if any(b.is_repetition for b in k.bindings)]
    assert [k.source for k in readers] == ["fdtd_ey"]
    rng = np.random.default_rng(2)
    ex, ey, hz = (rng.random(600, dtype=np.float32) for _ in range(3))
    fict = rng.random(20, dtype=np.float32)
    inputs = {"ex": ex, "ey": ey, "hz": hz, "fict": fict}
    out = run_bundle(bundle, inputs, backend=backend, repeat=6)
    for name, want in zip(("ex", "ey", "hz"), _fdtd(ex, ey, hz, fict, 6)):
        np.testing.assert_allclose(out[name], want, rtol=1e-5, atol=1e-6, err_msg=name)
    np.testing.assert_array_equal(out["ey"][:30], np.full(30, fict[5]))  # the 6th step's


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("repeat", [1, 5])
def test_a_fused_bundle_group_sees_one_repetition_in_every_member(backend, repeat):
    from vyre_xdsl.megakernel.run import run_bundle

    bundle = _bundle(COUNTER)
    (module,) = bundle.modules  # @count and @again, fused into one kernel
    assert module.nodes == (0, 1) and len(module.kernels) == 1
    acc = np.arange(8, dtype=np.uint32)
    out = run_bundle(bundle, {"acc": acc}, backend=backend, repeat=repeat)
    want_acc, want_seen = _counter_expected(acc, repeat)
    np.testing.assert_array_equal(out["acc"], want_acc)
    np.testing.assert_array_equal(out["seen"], want_seen)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bundle_that_spills_at_grid_sync_repeats(backend):
    from vyre_xdsl.megakernel.run import run_bundle

    bundle = _bundle(SPILL)
    (module,) = bundle.modules
    assert [sum(b.is_repetition for b in k.bindings) for k in module.kernels] == [1, 1]
    assert all(any(b.is_scratch for b in k.bindings) for k in module.kernels)
    x = np.arange(16, dtype=np.uint32) * 3
    zeros = np.zeros(16, np.uint32)
    out = run_bundle(bundle, {"x": x, "y": zeros, "out": zeros}, backend=backend, repeat=4)
    for name, want in zip(("x", "y", "out"), _spill_expected(x, 4)):
        np.testing.assert_array_equal(out[name], want, err_msg=name)


def test_vyre_compile_then_vyre_run_repeat(tmp_path):
    acc = np.arange(8, dtype=np.uint32)
    np.save(tmp_path / "acc.npy", acc)
    source = tmp_path / "count.mlir"
    source.write_text(COUNTER)
    vkb = tmp_path / "count.vkb"
    done = subprocess.run([BIN / "vyre-compile", source, "-o", vkb], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for backend in BACKENDS:
        outdir = tmp_path / backend
        done = subprocess.run(
            [BIN / "vyre-run", vkb, "--repeat", "3", "--backend", backend]
            + ["--input", f"acc={tmp_path / 'acc.npy'}", "--output-dir", outdir],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        want_acc, want_seen = _counter_expected(acc, 3)
        np.testing.assert_array_equal(np.load(outdir / "acc.npy"), want_acc)
        np.testing.assert_array_equal(np.load(outdir / "seen.npy"), want_seen)
