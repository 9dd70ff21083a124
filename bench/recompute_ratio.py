"""Recompute fusion on the wgpu backend: the neighbour chain and a 3-point stencil,
unfused, fused with the dispatch split (recompute off) and fused with recompute.

    neighbour: t[i] = 2 x[i];      y[i] = t[i] + t[i+1]
    stencil:   t[i] = 2 x[i] + 1;  y[i] = t[i-1] + t[i] + t[i+1]

(f32, n elements, workgroup 256; a read past either end gives 0.)

Each configuration is compiled once (`vyre_xdsl.compile`); `x` stays on the
device (`vyre_xdsl.to_device`) and each timed run is `exe.run(..., device=True)`
followed by `vyre_xdsl.synchronize()`, so a run is the GPU work plus the submit,
without uploads or readbacks. After a warm-up, `--reps` runs are timed one by
one; the table gives the median and the spread (min .. max) in ms, and the
speed-up of each fused form over the unfused run (ratio of medians). Where the
device has timestamp queries, the same for GPU time (the kernels' summed
timestamp deltas of `--reps` profiled runs). Every output is checked against
numpy first.

    python bench/recompute_ratio.py                  # n = 2^20, 30 runs each
    python bench/recompute_ratio.py --log2n 22 --reps 50
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import numpy as np

os.environ.setdefault("WGPU_BACKEND_TYPE", "Vulkan")

import vyre_xdsl  # noqa: E402
from vyre_xdsl.context import parse_module  # noqa: E402
from vyre_xdsl.dialects.vyre import programs  # noqa: E402
from vyre_xdsl.fusion import fuse_programs  # noqa: E402
from vyre_xdsl.runtime import gpu_device  # noqa: E402

WORKGROUP = 256


def producer(n: int, plus_one: bool) -> str:
    """t[i] = 2 x[i] (+ 1 when `plus_one`)."""
    last = (
        "  %one = vyre.const 1.0 : f32\n  %r = vyre.add %m, %one : f32\n"
        "  vyre.store @t[%i] = %r : f32\n"
        if plus_one
        else "  vyre.store @t[%i] = %m : f32\n"
    )
    return f"""vyre.program @produce workgroup_size [{WORKGROUP}, 1, 1] {{
  vyre.buffer @x binding 0 read_only : f32[{n}]
  vyre.buffer @t binding 1 write_only : f32[{n}]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f32
  %two = vyre.const 2.0 : f32
  %m = vyre.mul %v, %two : f32
{last}}}
"""


def neighbour_text(n: int) -> str:
    return producer(n, plus_one=False) + (
        f"""vyre.program @pair workgroup_size [{WORKGROUP}, 1, 1] {{
  vyre.buffer @t binding 0 read_only : f32[{n}]
  vyre.buffer @y binding 1 write_only : f32[{n}]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %a = vyre.load @t[%i] : f32
  %b = vyre.load @t[%j] : f32
  %s = vyre.add %a, %b : f32
  vyre.store @y[%i] = %s : f32
}}
"""
    )


def stencil_text(n: int) -> str:
    return producer(n, plus_one=True) + (
        f"""vyre.program @stencil workgroup_size [{WORKGROUP}, 1, 1] {{
  vyre.buffer @t binding 0 read_only : f32[{n}]
  vyre.buffer @y binding 1 write_only : f32[{n}]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %l = vyre.sub %i, %one : ui32
  %h = vyre.add %i, %one : ui32
  %a = vyre.load @t[%l] : f32
  %b = vyre.load @t[%i] : f32
  %c = vyre.load @t[%h] : f32
  %s1 = vyre.add %a, %b : f32
  %s = vyre.add %s1, %c : f32
  vyre.store @y[%i] = %s : f32
}}
"""
    )


def shifted(t: np.ndarray, by: int) -> np.ndarray:
    out = np.zeros_like(t)
    if by >= 0:
        out[: len(t) - by] = t[by:]
    else:
        out[-by:] = t[: len(t) + by]
    return out


def expected(name: str, x: np.ndarray) -> np.ndarray:
    if name == "neighbour":
        t = x * np.float32(2)
        return t + shifted(t, 1)
    t = x * np.float32(2) + np.float32(1)
    return shifted(t, -1) + t + shifted(t, 1)


def split_module(text: str):
    """The module fused with recompute off: one program with a grid_sync split."""
    module = parse_module(text)
    progs = programs(module)
    fused = fuse_programs(progs, intermediates={"t"}, recompute=False)
    module.body.block.insert_op_before(fused, progs[0])
    for program in progs:
        program.detach()
        program.erase()
    return module


def configurations(text: str) -> dict:
    return {
        "unfused": vyre_xdsl.compile(text, backend="wgpu"),
        "fused, split": vyre_xdsl.compile(split_module(text), backend="wgpu"),
        "fused, recompute": vyre_xdsl.compile(text, backend="wgpu", fuse=True),
    }


def inputs_for(exe, x, n: int) -> dict:
    """`x`, and a zero `t` where the fused program declares `t` read_write (the
    split form keeps `t`, which the unfused module's signature would not ask for;
    the fused program writes it before reading it)."""
    inputs = {"x": x}
    if "t" in exe.signature.inputs:
        inputs["t"] = vyre_xdsl.to_device(np.zeros(n, np.float32))
    return inputs


def timed_runs(exe, inputs, reps: int, warmup: float) -> list[float]:
    end = time.perf_counter() + warmup
    while time.perf_counter() < end:
        exe.run(inputs, device=True)
        vyre_xdsl.synchronize()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        exe.run(inputs, device=True)
        vyre_xdsl.synchronize()
        times.append(time.perf_counter() - start)
    return times


def gpu_times(exe, inputs, reps: int) -> list[float] | None:
    """The summed kernel times of `reps` profiled runs (None without timestamp queries)."""
    if "timestamp-query" not in gpu_device().features:
        return None
    times = []
    for _ in range(reps):
        exe.run(inputs, device=True, profile=True)
        times.append(exe.last_profile.total_seconds)
    return times


def cell(times: list[float] | None) -> str:
    if times is None:
        return "n/a | n/a"
    return (
        f"{statistics.median(times) * 1e3:.3f} | {min(times) * 1e3:.3f} .. {max(times) * 1e3:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2n", type=int, default=20)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--warmup", type=float, default=0.5, help="seconds per configuration")
    args = parser.parse_args()
    n = 1 << args.log2n
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    dx = vyre_xdsl.to_device(x)
    print(f"# n = 2^{args.log2n} f32, {args.reps} timed runs each; {platform.node()}")
    print(f"# device: {gpu_device().describe()}")
    print()
    print(
        "| workload | configuration | kernels | run median ms | run min .. max ms | "
        "GPU median ms | GPU min .. max ms | speed-up (run) | speed-up (GPU) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, text in (("neighbour", neighbour_text(n)), ("stencil", stencil_text(n))):
        want = expected(name, x)
        medians: dict[str, float] = {}
        gpu_medians: dict[str, float] = {}
        for label, exe in configurations(text).items():
            inputs = inputs_for(exe, dx, n)
            got = exe.run(inputs, device=True)["y"].numpy()
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"{name} {label}")
            times = timed_runs(exe, inputs, args.reps, args.warmup)
            gpu = gpu_times(exe, inputs, args.reps)
            medians[label] = statistics.median(times)
            speedup = f"{medians['unfused'] / medians[label]:.2f}x"
            gpu_speedup = "n/a"
            if gpu is not None:
                gpu_medians[label] = statistics.median(gpu)
                gpu_speedup = f"{gpu_medians['unfused'] / gpu_medians[label]:.2f}x"
            kernels = len(exe._kernels or ())  # noqa: SLF001
            print(
                f"| {name} | {label} | {kernels} | {cell(times)} | {cell(gpu)} | "
                f"{speedup} | {gpu_speedup} |"
            )


if __name__ == "__main__":
    main()
