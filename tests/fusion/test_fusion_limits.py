"""Fusion never makes a kernel over a target limit (`fusion.cost.over_limit`):
the cost model cuts a run whose fused kernel would need more storage buffers
per shader stage, workgroup memory or invocations than the target allows, says
why (`vyre-fuse{remarks=true}`), and the programs still compute what numpy
computes. A limit error that remains points at the buffer that breaks it."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from vyre_xdsl import run
from vyre_xdsl.api import fuse_module
from vyre_xdsl.context import parse_module
from vyre_xdsl.dialects.vyre import ProgramOp, programs
from vyre_xdsl.fusion.cost import over_limit
from vyre_xdsl.target_profile import DEFAULT_PROFILE

N = 256


def wide_pair(inputs: int) -> str:
    """@p0 sums `inputs` buffers into @mid; @p1 sums @mid and `inputs - 1` others into @out:
    each program binds `inputs + 1` storage buffers, the two fused `2 * inputs` (@mid
    is forwarded and its store dropped)."""
    text = []
    for p in range(2):
        names = [f"in{p}_{j}" for j in range(inputs)]
        if p == 1:
            names[0] = "mid"
        dst = "mid" if p == 0 else "out"
        lines = [f"vyre.program @p{p} workgroup_size [64, 1, 1] {{"]
        lines += [
            f"  vyre.buffer @{name} binding {j} read_only : f32[{N}]"
            for j, name in enumerate(names)
        ]
        lines.append(f"  vyre.buffer @{dst} binding {inputs} write_only : f32[{N}]")
        lines.append("  %i = vyre.invocation_id x")
        lines += [f"  %v{j} = vyre.load @{name}[%i] : f32" for j, name in enumerate(names)]
        total = "%v0"
        for j in range(1, inputs):
            lines.append(f"  %s{j} = vyre.add {total}, %v{j} : f32")
            total = f"%s{j}"
        lines += [f"  vyre.store @{dst}[%i] = {total} : f32", "}"]
        text.append("\n".join(lines))
    return "\n".join(text) + "\n"


def wide_inputs(inputs: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    rng = np.random.default_rng(inputs)
    data = {
        f"in{p}_{j}": rng.integers(0, 8, N).astype(np.float32)
        for p in range(2)
        for j in range(inputs)
        if (p, j) != (1, 0)
    }
    mid = sum(data[f"in0_{j}"] for j in range(inputs))
    out = mid + sum(data[f"in1_{j}"] for j in range(1, inputs))
    return data, out.astype(np.float32)


def test_two_programs_of_21_storage_buffers_are_not_fused_into_one_of_40():
    module = fuse_module(parse_module(wide_pair(20)))
    assert [p.sym_name.data for p in programs(module)] == ["p0", "p1"]


def test_two_programs_that_fit_together_are_still_fused():
    module = fuse_module(parse_module(wide_pair(10)))
    assert len(programs(module)) == 1


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_the_unfused_wide_pair_computes_what_numpy_does(backend):
    data, want = wide_inputs(20)
    got = run(wide_pair(20), data, backend=backend, fuse=True)["out"]
    np.testing.assert_array_equal(got, want)


def tiled(name: str, src: str, dst: str, words: int) -> str:
    """A program that stages its element through `words` words of workgroup memory."""
    return f"""vyre.program @{name} workgroup_size [64, 1, 1] {{
  vyre.buffer @{src} binding 0 read_only : ui32[{N}]
  vyre.buffer @{dst} binding 1 write_only : ui32[{N}]
  vyre.buffer @tile workgroup : ui32[{words}]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %v = vyre.load @{src}[%i] : ui32
  vyre.store @tile[%l] = %v : ui32
  vyre.barrier
  %w = vyre.load @tile[%l] : ui32
  %one = vyre.const 1 : ui32
  %s = vyre.add %w, %one : ui32
  vyre.store @{dst}[%i] = %s : ui32
}}
"""


@pytest.mark.parametrize("words, fused", [(2560, False), (1024, True)])
def test_workgroup_memory_over_the_limit_is_not_fused(words, fused):
    """Two programs of `words` words of workgroup memory each: 2 x 10,240 bytes
    is over the 16,384 the target allows, 2 x 4,096 is not."""
    text = tiled("a", "x", "t", words) + tiled("b", "t", "out", words)
    module = fuse_module(parse_module(text))
    assert (len(programs(module)) == 1) == fused
    x = np.arange(N, dtype=np.uint32)
    for backend in ("reference", "wgpu"):
        np.testing.assert_array_equal(run(text, {"x": x}, backend=backend, fuse=True)["out"], x + 2)


def test_over_limit_names_each_limit():
    assert over_limit(parse_program(wide_pair(20), 0)) is None
    storage = over_limit(parse_program(wide_pair(40), 0))
    assert "would need 41 storage buffers; the target allows 32 per shader stage" in str(storage)
    shared = over_limit(parse_program(tiled("a", "x", "t", 5000), 0))
    assert "would need 20000 bytes of workgroup memory; the target allows 16384" in str(shared)
    wide = over_limit(ProgramOp("w", (16, 16, 2), []))
    assert "its workgroup would be [16, 16, 2]" in str(wide)
    assert f"{DEFAULT_PROFILE.max_invocations} invocations" in str(wide)
    assert over_limit(ProgramOp("w", (16, 16, 1), [])) is None


def parse_program(text: str, index: int) -> ProgramOp:
    return programs(parse_module(text))[index]


def test_the_cut_is_a_located_remark(tmp_path):
    path = tmp_path / "wide.mlir"
    path.write_text(wide_pair(20))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "vyre_xdsl.tools.vyre_opt",
            str(path),
            "-p",
            "vyre-fuse{remarks=true}",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    line = wide_pair(20).split("\n").index("vyre.program @p1 workgroup_size [64, 1, 1] {") + 1
    assert done.stderr.startswith(f"{path}:{line}:1: remark: not fused with @p0 before it:")
    assert "would need 40 storage buffers; the target allows 32" in done.stderr


def test_a_forced_fusion_over_the_limit_is_a_located_error(tmp_path):
    path = tmp_path / "wide.mlir"
    text = wide_pair(20)
    path.write_text(text)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "vyre_xdsl.tools.vyre_opt",
            str(path),
            "-p",
            "vyre-fuse{force=true},vyre-lower",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert f"{path}:" in done.stderr.splitlines()[0]
    assert "the target allows 32 per shader stage" in done.stderr
