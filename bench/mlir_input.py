"""Standard MLIR in: what `convert-to-vyre` costs, and how the converted programs
run against the same computation written in vyre by hand.

- conversion: parse + convert + verify of examples/matmul_scf.mlir and
  examples/stencil_scf.mlir against parse + verify of the converted text (which
  is what a vyre module of the same programs costs), median of --reps;
- runs: `Executable.run` of a 2-D scale `y[i, j] = 2 * x[i, j]` (N × 256 floats)
  written as an `scf.parallel` and as a hand-written `vyre.program`, on the
  reference interpreter and on wgpu, median and range of --reps runs of each,
  alternating, after one warm-up.

    python bench/mlir_input.py --rows 256 --reps 15
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import time

import numpy as np

os.environ.setdefault("WGPU_BACKEND_TYPE", "Vulkan")

import vyre_xdsl  # noqa: E402
from vyre_xdsl.context import parse_module  # noqa: E402
from vyre_xdsl.conversion import convert_if_standard  # noqa: E402
from vyre_xdsl.diagnostics import verify_module  # noqa: E402

EXAMPLES = pathlib.Path(__file__).parent.parent / "examples"


def scale_mlir(rows: int) -> str:
    return f"""
func.func @scale(%x: memref<{rows}x256xf32>, %y: memref<{rows}x256xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = arith.constant {rows} : index
  %c = arith.constant 256 : index
  %two = arith.constant 2.0 : f32
  "scf.parallel"(%c0, %c0, %r, %c, %c1, %c1) <{{operandSegmentSizes = array<i32: 2, 2, 2, 0>}}> ({{
  ^bb0(%i: index, %j: index):
    %v = memref.load %x[%i, %j] : memref<{rows}x256xf32>
    %d = arith.mulf %v, %two : f32
    memref.store %d, %y[%i, %j] : memref<{rows}x256xf32>
    scf.reduce
  }}) : (index, index, index, index, index, index) -> ()
  func.return
}}
"""


def scale_vyre(rows: int) -> str:
    n = rows * 256
    return f"""
vyre.program @scale workgroup_size [64, 1, 1] {{
  vyre.buffer @x binding 0 read_only : f32[{n}]
  vyre.buffer @y binding 1 read_write : f32[{n}]
  %i = vyre.invocation_id x
  %n = vyre.const {n} : ui32
  %in = vyre.lt %i, %n : ui32
  vyre.if %in {{
    %v = vyre.load @x[%i] : f32
    %two = vyre.const 2.0 : f32
    %d = vyre.mul %v, %two : f32
    vyre.store @y[%i] = %d : f32
  }}
}}
"""


def median_ms(action, reps: int) -> tuple[float, float, float]:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times), max(times)


def conversion(reps: int) -> None:
    for name in ("matmul_scf.mlir", "stencil_scf.mlir"):
        text = (EXAMPLES / name).read_text()
        converted = str(convert_if_standard(parse_module(text)))

        def convert(text=text):
            convert_if_standard(parse_module(text))

        def plain(converted=converted):
            verify_module(parse_module(converted))

        for label, action in (("parse+convert+verify", convert), ("parse+verify vyre", plain)):
            med, lo, hi = median_ms(action, reps)
            print(f"{name:18} {label:22} {med:8.2f} ms  (min {lo:.2f}, max {hi:.2f})")


def runs(rows: int, reps: int) -> None:
    """Both forms compiled once, then run alternately (so that load on a shared
    machine falls on both alike)."""
    x = np.random.default_rng(0).standard_normal((rows, 256)).astype(np.float32)
    inputs = {"x": x, "y": np.zeros_like(x)}
    forms = (("scf.parallel", scale_mlir(rows)), ("hand-written", scale_vyre(rows)))
    for backend in ("reference", "wgpu"):
        exes = [vyre_xdsl.compile(text, backend=backend) for _, text in forms]
        for exe in exes:  # warm-up, and the result checked against numpy
            assert np.array_equal(exe.run(inputs)["y"].reshape(rows, 256), 2 * x)
        times: list[list[float]] = [[], []]
        for _ in range(reps):
            for k, exe in enumerate(exes):
                start = time.perf_counter()
                exe.run(inputs)
                times[k].append((time.perf_counter() - start) * 1e3)
        for (label, _), spent in zip(forms, times, strict=True):
            med, lo, hi = statistics.median(spent), min(spent), max(spent)
            print(f"{backend:9} {label:13} {rows}x256  {med:8.2f} ms  (min {lo:.2f}, max {hi:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=256)
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    conversion(args.reps)
    runs(args.rows, args.reps)


if __name__ == "__main__":
    main()
