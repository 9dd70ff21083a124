"""Bundles run on wgpu (lavapipe) with the reference interpreter's outputs, from
Python and from the command line (`vyre-compile` then `vyre-run OUT.vkb`; more
command-line behaviour in filecheck_tests/tools/vyre-compile-cli.test)."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.abi import signature
from vyre_xdsl.interpreter import VyreTrap
from vyre_xdsl.megakernel.bundle import TargetModuleBundle
from vyre_xdsl.megakernel.compile import compile_module
from vyre_xdsl.megakernel.run import run_bundle
from vyre_xdsl.semantics import OPS, ulp_distance
from vyre_xdsl.tools.vyre_run import random_inputs

from .. import support
from .test_megakernel_cases import CASES, PIPELINE, module_of

EXAMPLES = sorted(support.EXAMPLES.glob("*.mlir"))
BIN = pathlib.Path(sys.executable).parent
F32_ULP = 4  # SPEC 3.4: contraction/reassociation in fused kernels (measured: 2)
#: ops whose GPU result WGSL only bounds (sin, exp, ...: the conformance corpus
#: checks them against the WGSL specification's accuracy); f32 outputs of a
#: module using one are compared with the unfused GPU run (the same op
#: implementation), not with the reference
APPROXIMATE = {name for name, sem in OPS.items() if sem.ulp} | {"fma"}

SOURCES = {p.name: p.read_text() for p in EXAMPLES} | {f"case:{k}": v for k, v in CASES.items()}


def outcome(run):
    """The outputs of `run()`, or ("trap", (tag, address, invocation))."""
    try:
        return run()
    except VyreTrap as trap:
        return ("trap", (trap.tag, trap.address, trap.invocation))


def approximate(module) -> bool:
    return any(
        op.name.removeprefix("vyre.") in APPROXIMATE and "f32" in str(op) for op in module.walk()
    )


def close_f32(want: np.ndarray, have: np.ndarray, ulp: float) -> bool:
    """Within `ulp` ULPs, or (an accumulation whose terms cancel, such as a
    matmul's sum, contracted into fmas on a GPU that has them) within 2^-20 of
    the largest magnitude: the reassociation and contraction SPEC 3.4 allows."""
    if ulp == 0.0:
        return int(ulp_distance(want, have).max(initial=0)) == 0
    if int(ulp_distance(want, have).max(initial=0)) <= ulp:
        return True
    scale = float(np.abs(want).max(initial=0.0))
    return bool(np.all(np.abs(want.astype(np.float64) - have) <= scale * 2.0**-20))


def assert_same(expected, got, ulp: float | None = 0.0, allowed: set | None = None):
    """Outputs equal (f32 within `ulp`; None: f32 not compared), or traps that
    agree under SPEC 3.4: exactly, unless `allowed` lists several trapping
    (tag, address, invocation), of which each must report one."""
    if isinstance(expected, tuple) or isinstance(got, tuple):
        assert isinstance(expected, tuple) and isinstance(got, tuple), (expected, got)
        if allowed is not None and len(allowed) > 1:
            assert expected[1] in allowed and got[1] in allowed, (expected, got, allowed)
        else:
            assert expected == got
            assert allowed is None or expected[1] in allowed, (expected, allowed)
        return
    assert sorted(expected) == sorted(got)
    for name, want in expected.items():
        have = got[name]
        assert have.dtype == want.dtype and have.shape == want.shape, name
        if want.dtype == np.float32:
            if ulp is not None:
                assert close_f32(want, have, ulp), name
        else:
            np.testing.assert_array_equal(have, want, err_msg=name)


#: planner cases whose module does not run: @c's [1, 8, 1] workgroup without a grid
#: covers 32 of its 256 elements along x, which every path refuses (docs/language.md)
REFUSED = {"case:mkl005_over_dispatch"}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_module_that_does_not_run_is_refused_by_the_bundle_too(name):
    module = module_of(SOURCES[name])
    inputs = random_inputs(signature(module), 7, {})
    with pytest.raises(vyre_xdsl.api.VyreError, match="add an explicit grid"):
        vyre_xdsl.run(SOURCES[name], inputs, backend="reference")
    with pytest.raises(vyre_xdsl.api.VyreError, match="add an explicit grid"):
        compile_module(module).bundle_bytes()


@pytest.mark.parametrize("name", sorted(set(SOURCES) - REFUSED))
def test_bundle_runs_like_the_reference(name):
    text = SOURCES[name]
    module = module_of(text)
    inputs = random_inputs(signature(module), 7, {})
    # a module that reads vyre.repetition, or an example meant to be repeated
    # (`--repeat T`), runs 3 times: the bundle carries the repetition binding
    repeat = 3 if "vyre.repetition" in text or "--repeat" in text else 1
    data = compile_module(module).bundle_bytes()
    bundle = TargetModuleBundle.from_bytes(data)
    expected = outcome(lambda: vyre_xdsl.run(text, inputs, backend="reference", repeat=repeat))
    got = outcome(lambda: run_bundle(bundle, inputs, repeat=repeat))
    assert_same(expected, got, None if approximate(module) else F32_ULP)
    # the same as running the programs one by one on the GPU: bit for bit when
    # no program was fused with another (the very same kernels)
    unfused = outcome(lambda: vyre_xdsl.run(text, inputs, backend="wgpu", repeat=repeat))
    singletons = all(len(m.nodes) == 1 for m in bundle.modules)
    assert_same(unfused, got, 0.0 if singletons else F32_ULP)
    # the bundle's own copy of the source programs, on the interpreter: exact
    assert_same(
        expected, outcome(lambda: run_bundle(data, inputs, backend="reference", repeat=repeat))
    )
    # the seed's logical element count agrees with what each dispatch covers
    # (None when a count buffer is runtime-sized: then it is the input's size)
    counts = {b.name: b.count for b in bundle.signature}
    sized = {n: np.asarray(inputs[n]).size if c is None else c for n, c in counts.items()}
    for module in bundle.modules:
        covered = {k.element_count(sized) for k in module.kernels}
        if module.logical_element_count is None:
            assert any(counts[n] is None for k in module.kernels for n in k.count_buffers)
        else:
            assert covered == {module.logical_element_count}


def test_the_pipeline_runs_in_two_stages_in_one_submit():
    bundle = TargetModuleBundle.from_bytes(compile_module(module_of(PIPELINE)).bundle_bytes())
    assert [(m.stage, m.nodes) for m in bundle.modules] == [(0, (0, 1)), (1, (2, 3, 4))]
    assert len(bundle.kernels()) == 2


def test_bundle_applies_the_run_signature():
    data = compile_module(module_of(PIPELINE)).bundle_bytes()
    with pytest.raises(vyre_xdsl.api.VyreError, match="missing input for buffer 'x'"):
        run_bundle(data, {"hist": np.zeros(16, np.uint32)})
    given = {"x": np.zeros(256, np.uint32), "hist": np.zeros(16, np.uint32)}
    with pytest.raises(vyre_xdsl.api.VyreError, match="buffer 't1' takes no input"):
        run_bundle(data, given | {"t1": np.zeros(256, np.uint32)})
    with pytest.raises(vyre_xdsl.api.VyreError, match="unknown buffer 'nope'"):
        run_bundle(data, given | {"nope": np.zeros(256, np.uint32)})
    with pytest.raises(vyre_xdsl.api.VyreError, match="has 255 elements"):
        run_bundle(data, given | {"x": np.zeros(255, np.uint32)})
    outputs = run_bundle(
        data, {"x": np.arange(256, dtype=np.uint32), "hist": np.zeros(16, np.uint32)}
    )
    assert sorted(outputs) == ["hist", "out"]  # intermediates are not returned


# ---------------------------------------------------------------------- command line


def cli(*args: str, cwd: pathlib.Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / args[0]), *args[1:]], cwd=cwd, capture_output=True, text=True)


def test_cli_compile_then_run_gives_the_reference_outputs(tmp_path):
    (tmp_path / "pipeline.mlir").write_text(PIPELINE)
    compiled = cli("vyre-compile", "pipeline.mlir", "-o", "pipeline.vkb", cwd=tmp_path)
    assert compiled.returncode == 0, compiled.stderr
    x = np.random.default_rng(3).integers(0, 1000, 256, dtype=np.uint32)
    hist = np.arange(16, dtype=np.uint32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "hist.npy", hist)
    ran = cli(
        "vyre-run",
        "pipeline.vkb",
        "--input",
        "x=x.npy",
        "--input",
        "hist=hist.npy",
        "--backend",
        "wgpu",
        "--output-dir",
        "out",
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr
    expected = vyre_xdsl.run(PIPELINE, {"x": x, "hist": hist}, backend="reference")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["hist.npy", "out.npy"]
    for name, want in expected.items():
        np.testing.assert_array_equal(np.load(tmp_path / "out" / f"{name}.npy"), want)
    # and independently of the compiler: numpy
    t3 = np.roll(x + 2, -1) + 1
    t3[-1] = 1  # the last element reads t2 past its end: 0
    out = t3.reshape(4, 64)[:, ::-1].reshape(-1)
    np.testing.assert_array_equal(expected["out"], out)
    np.testing.assert_array_equal(
        expected["hist"], hist + np.bincount(out & 15, minlength=16).astype(np.uint32)
    )


SEVERAL_TRAPS = """
vyre.program @check workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[1024]
  vyre.buffer @t binding 1 write_only : ui32[1024]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %seven = vyre.const 7 : ui32
  %hit = vyre.eq %v, %seven : ui32
  vyre.if %hit {
    %a = vyre.mul %i, %seven : ui32
    vyre.trap %a "bad_value"
  }
  vyre.store @t[%i] = %v : ui32
}
vyre.program @use workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[1024]
  vyre.buffer @out binding 1 write_only : ui32[1024]
  %i = vyre.invocation_id x
  %v = vyre.load @t[%i] : ui32
  %one = vyre.const 1 : ui32
  %w = vyre.add %v, %one : ui32
  vyre.store @out[%i] = %w : ui32
}
"""


@pytest.mark.parametrize("hits", [[700], [3, 130, 650, 1000]])
def test_bundle_traps_name_a_trapping_invocation(hits):
    """One trapping invocation: the bundle reports exactly its (tag, address,
    invocation); several: one of them (SPEC 3.4). The set comes from numpy."""
    x = np.zeros(1024, np.uint32)
    x[hits] = 7
    allowed = {("bad_value", 7 * i, i) for i in hits}
    data = compile_module(module_of(SEVERAL_TRAPS)).bundle_bytes()
    expected = outcome(lambda: vyre_xdsl.run(SEVERAL_TRAPS, {"x": x}, backend="reference"))
    got = outcome(lambda: run_bundle(data, {"x": x}))
    assert_same(expected, got, allowed=allowed)
    assert_same(
        expected, outcome(lambda: run_bundle(data, {"x": x}, backend="reference")), allowed=allowed
    )
