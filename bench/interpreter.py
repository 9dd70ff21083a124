"""Benchmark of the reference interpreter (a benchmark, not a timed test).

    .venv/bin/python bench/interpreter.py            # 2^20 elements, best of 5
    .venv/bin/python bench/interpreter.py --log2n 16 --repeat 3

Times `vyre_xdsl.interpreter.execute` (parse and input binding excluded) on a few
workloads and checks each result against numpy. The target from issue 3: axpy at
2^20 elements in under 2 s on a 2-core machine. Results: docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from vyre_xdsl.abi import signature  # noqa: E402
from vyre_xdsl.api import parse  # noqa: E402
from vyre_xdsl.interpreter import execute  # noqa: E402

AXPY = """
vyre.program @axpy workgroup_size [64, 1, 1] {{
  vyre.buffer @x binding 0 read_only : f32[{n}]
  vyre.buffer @y binding 1 read_write : f32[{n}]
  %i = vyre.invocation_id x
  %a = vyre.const 2.0 : f32
  %xv = vyre.load @x[%i] : f32
  %yv = vyre.load @y[%i] : f32
  %p = vyre.mul %a, %xv : f32
  %s = vyre.add %p, %yv : f32
  vyre.store @y[%i] = %s : f32
}}
"""

DIVERGENT_LOOP = """
vyre.program @triangle workgroup_size [256, 1, 1] {{
  vyre.buffer @trip binding 0 read_only : ui32[{n}]
  vyre.buffer @out binding 1 write_only : ui32[{n}]
  %i = vyre.invocation_id x
  %t = vyre.load @trip[%i] : ui32
  %z = vyre.const 0 : ui32
  vyre.let @acc = %z : ui32
  vyre.loop @k = %z to %t {{
    %k = vyre.var @k : ui32
    %a = vyre.var @acc : ui32
    %s = vyre.add %a, %k : ui32
    vyre.assign @acc = %s : ui32
  }}
  %r = vyre.var @acc : ui32
  vyre.store @out[%i] = %r : ui32
}}
"""

HISTOGRAM = """
vyre.program @histogram workgroup_size [256, 1, 1] {{
  vyre.buffer @x binding 0 read_only : ui32[{n}]
  vyre.buffer @hist binding 1 read_write : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %m = vyre.const 255 : ui32
  %b = vyre.bit_and %v, %m : ui32
  %one = vyre.const 1 : ui32
  %old = vyre.atomic add @hist[%b], %one : ui32
}}
"""

REDUCE = """
vyre.program @reduce workgroup_size [256, 1, 1] {{
  vyre.buffer @x binding 0 read_only : f32[{n}]
  vyre.buffer @sums binding 1 write_only : f32[{groups}]
  vyre.buffer @tile workgroup : f32[256]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : f32
  vyre.store @tile[%l] = %v : f32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %eight = vyre.const 8 : ui32
  %c128 = vyre.const 128 : ui32
  vyre.loop @s = %zero to %eight {{
    %s = vyre.var @s : ui32
    %stride = vyre.shr %c128, %s : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {{
      %o = vyre.add %l, %stride : ui32
      %a = vyre.load @tile[%l] : f32
      %b = vyre.load @tile[%o] : f32
      %sum = vyre.add %a, %b : f32
      vyre.store @tile[%l] = %sum : f32
    }}
    vyre.barrier
  }}
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {{
    %total = vyre.load @tile[%zero] : f32
    vyre.store @sums[%w] = %total : f32
  }}
}}
"""


def workloads(n: int, rng: np.random.Generator):
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    yield (
        "axpy (f32)",
        AXPY.format(n=n),
        {"x": x, "y": y},
        lambda out: np.array_equal(out["y"], np.float32(2) * x + y),
    )

    trip = rng.integers(0, 8, n).astype(np.uint32)
    trip[n // 2] = 200  # one long lane
    t64 = trip.astype(np.int64)
    yield (
        "divergent loop (ui32)",
        DIVERGENT_LOOP.format(n=n),
        {"trip": trip},
        lambda out: np.array_equal(out["out"], (t64 * (t64 - 1) // 2).astype(np.uint32)),
    )

    v = rng.integers(0, 2**32, n).astype(np.uint32)
    yield (
        "histogram (atomic add)",
        HISTOGRAM.format(n=n),
        {"x": v, "hist": np.zeros(256, np.uint32)},
        lambda out: np.array_equal(
            out["hist"], np.bincount(v & 255, minlength=256).astype(np.uint32)
        ),
    )

    groups = n // 256
    yield (
        "workgroup tree reduction (barriers)",
        REDUCE.format(n=n, groups=groups),
        {"x": x},
        lambda out: np.allclose(
            out["sums"], x.reshape(groups, 256).sum(axis=1, dtype=np.float64), atol=1e-3
        ),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2n", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    n = 2**args.log2n
    rng = np.random.default_rng(0)
    print(
        f"reference interpreter, n = 2^{args.log2n} = {n}, best of {args.repeat} (numpy {np.__version__}, "
        f"{os.cpu_count()} cores)"
    )
    print(f"{'workload':38} {'best s':>8} {'median s':>9} {'Melem/s':>8}  ok")
    for name, text, inputs, verify in workloads(n, rng):
        module = parse(text)
        sig = signature(module)
        buffers = sig.bind(inputs)
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            final = execute(module, buffers, sig)
            times.append(time.perf_counter() - start)
        ok = verify(final)
        best, median = min(times), float(np.median(times))
        print(f"{name:38} {best:8.3f} {median:9.3f} {n / best / 1e6:8.1f}  {'yes' if ok else 'NO'}")
        if not ok:
            raise SystemExit(f"{name}: wrong result")


if __name__ == "__main__":
    main()
