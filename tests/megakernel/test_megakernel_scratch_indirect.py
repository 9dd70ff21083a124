"""Megakernel bundles of programs whose lowering needs per-invocation scratch
(values live across a `grid_sync`) or an indirect grid (`{indirect = @grid}`,
also at a byte offset): the artifact records the scratch each fusion group
needs, the payload ties every scratch and indirect binding to it, the bundle
checks them and re-derives them, and the bundle runs on both backends to plain
numpy's values. `tests/megakernel/test_bundle_mutants.py` forges such bundles too."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import blake3
import numpy as np
import pytest

from vyre_xdsl.context import parse_module
from vyre_xdsl.megakernel import bundle as B
from vyre_xdsl.megakernel.artifact import Artifact, ArtifactPlanError, ScratchRecord
from vyre_xdsl.megakernel.compile import compile_module
from vyre_xdsl.megakernel.run import run_bundle

BACKENDS = ("reference", "wgpu")
BIN = pathlib.Path(sys.executable).parent

# @first keeps a loaded value (its buffer is overwritten, so it cannot be
# reloaded), a named local and an f32 across a grid_sync: both spill; @second
# consumes @mid in the next stage.
SPILLS = """
vyre.program @first workgroup_size [4, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[12]
  vyre.buffer @f binding 4 read_write : f32[12]
  vyre.buffer @y binding 3 read_write : ui32[12]
  vyre.buffer @mid binding 1 read_write : ui32[12]
  vyre.buffer @g binding 5 write_only output : f32[12]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %h = vyre.load @f[%i] : f32
  vyre.let @keep = %v : ui32
  %eleven = vyre.const 11 : ui32
  %r = vyre.sub %eleven, %i : ui32
  vyre.store @y[%r] = %i : ui32
  vyre.store @x[%i] = %r : ui32
  %fz = vyre.const 0.0 : f32
  vyre.store @f[%i] = %fz : f32
  vyre.barrier grid_sync
  %k = vyre.var @keep : ui32
  %w = vyre.load @y[%i] : ui32
  %s = vyre.add %k, %w : ui32
  %t = vyre.add %s, %v : ui32
  vyre.store @mid[%i] = %t : ui32
  %hh = vyre.add %h, %h : f32
  vyre.store @g[%i] = %hh : f32
}
vyre.program @second workgroup_size [4, 1, 1] {
  vyre.buffer @mid binding 1 read_write : ui32[12]
  vyre.buffer @out binding 2 write_only output : ui32[12]
  %i = vyre.invocation_id x
  %m = vyre.load @mid[%i] : ui32
  %two = vyre.const 2 : ui32
  %d = vyre.mul %m, %two : ui32
  vyre.store @out[%i] = %d : ui32
}
"""


def _spill_inputs():
    x = np.array([5, 1, 9, 30, 2, 8, 7, 4, 6, 3, 10, 11], np.uint32)
    f = np.linspace(-3.5, 8.25, 12).astype(np.float32)
    zeros = np.zeros(12, np.uint32)
    return {"x": x, "f": f, "y": zeros, "mid": zeros}


def _spill_expected(inputs):
    x = inputs["x"].astype(np.int64)
    i = np.arange(12)
    mid = 2 * x + (11 - i)  # keep + y[i] (= 11 - i, written by the mirror) + v
    return {"out": (2 * mid).astype(np.uint32), "g": 2 * inputs["f"]}


# @plan writes a decoy grid (1, 1, 1) at words 0..2 and the real one,
# (n & 3) + 1 per axis, at words 3..5; @scale is independent of it; @consume
# reads its grid from byte 12 and @tail reads the whole grid from byte 0.
INDIRECT = """
vyre.program @plan workgroup_size [1, 1, 1] {
  vyre.buffer @n binding 0 read_only : ui32[3]
  vyre.buffer @grids binding 1 read_write : ui32[6]
  %i = vyre.invocation_id x
  %three = vyre.const 3 : ui32
  %axis = vyre.lt %i, %three : ui32
  vyre.if %axis {
    %v = vyre.load @n[%i] : ui32
    %mask = vyre.bit_and %v, %three : ui32
    %one = vyre.const 1 : ui32
    %g = vyre.add %mask, %one : ui32
    %j = vyre.add %i, %three : ui32
    vyre.store @grids[%i] = %one : ui32
    vyre.store @grids[%j] = %g : ui32
  }
}
vyre.program @scale workgroup_size [1, 1, 1] {
  vyre.buffer @n binding 0 read_only : ui32[3]
  vyre.buffer @twice binding 3 write_only output : ui32[3]
  %i = vyre.invocation_id x
  %v = vyre.load @n[%i] : ui32
  %d = vyre.add %v, %v : ui32
  vyre.store @twice[%i] = %d : ui32
}
vyre.program @consume {indirect = @grids, indirect_offset = 12} workgroup_size [4, 1, 1] {
  vyre.buffer @grids binding 1 read_write : ui32[6]
  vyre.buffer @out binding 2 write_only output : ui32[256]
  %i = vyre.invocation_id x
  %w = vyre.workgroup_id x
  %c = vyre.const 100 : ui32
  %m = vyre.mul %w, %c : ui32
  %s = vyre.add %m, %i : ui32
  vyre.store @out[%i] = %s : ui32
}
vyre.program @tail {indirect = @grids} workgroup_size [2, 1, 1] {
  vyre.buffer @grids binding 1 read_write : ui32[6]
  vyre.buffer @ones binding 4 write_only output : ui32[8]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  vyre.store @ones[%i] = %one : ui32
}
"""


def _indirect_expected(n: np.ndarray):
    grid = [(int(v) & 3) + 1 for v in n]
    out = np.zeros(256, np.int64)
    for w in range(grid[0] * grid[1] * grid[2]):
        for lane in range(4):
            out[4 * w + lane] = 100 * w + 4 * w + lane
    ones = np.zeros(8, np.uint32)
    ones[:2] = 1  # the decoy grid (1, 1, 1): one workgroup of 2
    return {
        "out": out.astype(np.uint32),
        "ones": ones,
        "twice": 2 * n,
        "grids": np.array([1, 1, 1, *grid], np.uint32),
    }


def _bundle(text: str) -> tuple[bytes, B.TargetModuleBundle]:
    data = compile_module(parse_module(text)).bundle_bytes()
    return data, B.TargetModuleBundle.from_bytes(data)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bundle_with_grid_sync_spills_runs(backend):
    _, bundle = _bundle(SPILLS)
    inputs = _spill_inputs()
    got = run_bundle(bundle, inputs, backend=backend)
    for name, want in _spill_expected(inputs).items():
        np.testing.assert_array_equal(got[name], want, err_msg=name)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [(1, 0, 0), (3, 1, 0), (7, 2, 1)])
def test_a_bundle_with_indirect_grids_runs(backend, n):
    _, bundle = _bundle(INDIRECT)
    n = np.array(n, np.uint32)
    got = run_bundle(bundle, {"n": n, "grids": np.zeros(6, np.uint32)}, backend=backend)
    for name, want in _indirect_expected(n).items():
        np.testing.assert_array_equal(got[name], want, err_msg=name)


def test_the_artifact_records_the_scratch_and_the_payload_binds_it():
    envelope = compile_module(parse_module(SPILLS))
    artifact = envelope.artifact
    spills = {(r.name, r.element) for r in artifact.scratch}
    assert spills == {("__vyre_spill_ui32", "ui32"), ("__vyre_spill_f32", "f32")}
    assert all(r.group == 0 and r.per_invocation >= 1 for r in artifact.scratch)
    assert Artifact.from_bytes(artifact.to_bytes()) == artifact
    entries = envelope.payloads[0].entries
    first = [e for e in entries if e.group == 0]
    assert len(first) == 2  # two dispatches, both bind both scratch records
    assert all(sorted(b.scratch for b in e.scratch_bindings) == [0, 1] for e in first)
    assert all(not e.scratch_bindings for e in entries if e.group != 0)


def test_the_payload_names_the_indirect_grid_and_its_offset():
    envelope = compile_module(parse_module(INDIRECT))
    grids = next(r.value for r in envelope.artifact.resources if r.name == "grids")
    indirect = {
        e.name.split(".")[0]: (e.indirect, e.indirect_offset, e.grid_size)
        for e in envelope.payloads[0].entries
        if e.indirect is not None
    }
    assert sorted(indirect.values()) == [(grids, 0, None), (grids, 12, None)]
    # the grid buffer orders the stages: both indirect programs run after @plan
    plan = {g.members: g.stage for g in envelope.artifact.plan.fusion}
    assert plan[(2,)] > plan[(0,)] and plan[(3,)] > plan[(0,)]


def _resigned(document: dict) -> bytes:
    body = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    return blake3.blake3(body).digest() + body


def _kernels(document: dict):
    return [k for m in document["modules"] for k in m["kernels"]]


def _scratch_binding(document: dict) -> dict:
    return next(
        b for k in _kernels(document) for b in k["bindings"] if b["memory_class"] == "scratch"
    )


def _indirect_kernel(document: dict) -> dict:
    return next(k for k in _kernels(document) if k["indirect_offset"])


FORGERIES = {
    "fewer spill slots": (SPILLS, lambda d: _scratch_binding(d).update(per_invocation=1)),
    "scratch given a count": (SPILLS, lambda d: _scratch_binding(d).update(count=12)),
    "scratch renamed as a host buffer": (SPILLS, lambda d: _scratch_binding(d).update(name="x")),
    "scratch made read_only": (
        SPILLS,
        lambda d: _scratch_binding(d).update(visibility="read_only"),
    ),
    "scratch made global": (SPILLS, lambda d: _scratch_binding(d).update(memory_class="global")),
    "another offset": (INDIRECT, lambda d: _indirect_kernel(d).update(indirect_offset=0)),
    "an offset past the buffer": (
        INDIRECT,
        lambda d: _indirect_kernel(d).update(indirect_offset=16),
    ),
    "an unaligned offset": (INDIRECT, lambda d: _indirect_kernel(d).update(indirect_offset=13)),
    "another grid buffer": (INDIRECT, lambda d: _indirect_kernel(d).update(indirect="out")),
    "a static grid": (INDIRECT, lambda d: _indirect_kernel(d).update(static_grid=[4, 1, 1])),
    "no indirect grid": (INDIRECT, lambda d: _indirect_kernel(d).update(indirect=None)),
}


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_forged_scratch_and_indirect_fields_are_refused(name):
    text, forge = FORGERIES[name]
    data, _ = _bundle(text)
    document = json.loads(data[32:])
    forge(document)
    with pytest.raises(B.BundleError):
        B.TargetModuleBundle.from_bytes(_resigned(document))


def test_a_forged_artifact_scratch_record_is_refused():
    artifact = compile_module(parse_module(SPILLS)).artifact
    record = artifact.scratch[0]
    import attrs

    for forged in (
        attrs.evolve(artifact, scratch=()),
        attrs.evolve(
            artifact, scratch=(attrs.evolve(record, per_invocation=99),) + artifact.scratch[1:]
        ),
        attrs.evolve(artifact, scratch=artifact.scratch + (ScratchRecord(1, "extra", "ui32", 1),)),
    ):
        with pytest.raises(ArtifactPlanError, match="scratch"):
            Artifact.from_bytes(forged.to_bytes())


def test_vyre_compile_then_vyre_run_on_the_indirect_module(tmp_path):
    source = tmp_path / "indirect.mlir"
    source.write_text(INDIRECT)
    bundle = tmp_path / "indirect.vkb"
    subprocess.run(
        [BIN / "vyre-compile", source, "-o", bundle], check=True, capture_output=True, text=True
    )
    n = np.array([2, 1, 3], np.uint32)
    np.save(tmp_path / "n.npy", n)
    np.save(tmp_path / "grids.npy", np.zeros(6, np.uint32))
    out = tmp_path / "out"
    subprocess.run(
        [
            BIN / "vyre-run",
            bundle,
            "--input",
            f"n={tmp_path / 'n.npy'}",
            "--input",
            f"grids={tmp_path / 'grids.npy'}",
            "--output-dir",
            out,
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    for name, want in _indirect_expected(n).items():
        np.testing.assert_array_equal(np.load(out / f"{name}.npy"), want, err_msg=name)
