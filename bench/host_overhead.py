"""Host cost per dispatch in a multi-dispatch run (issue 8, item 2).

Runs an unfused 100-program elementwise chain (100 kernels, N = 256 elements,
so GPU time is negligible) and a 1-program module through the wgpu runtime
(`run_kernels`: bind, record every dispatch in one encoder, one submit, read
back), warm (pipelines cached), and reports the marginal host cost of one more
dispatch: (t(100) - t(1)) / 99, median of --reps runs. The same for runs that
keep their outputs on the device (`keep=True`), timed up to the return only:
such a run is recorded into the device's pending batch and not submitted, so
that figure is host time alone, on any adapter (the batches are submitted and
waited for between the timed runs).

    python bench/host_overhead.py
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np
from gpu_chains import chain_text

from vyre_xdsl.abi import signature
from vyre_xdsl.backends.wgsl import compile_module
from vyre_xdsl.context import parse_module
from vyre_xdsl.runtime.execute import run_kernels


def wall(kernels, inputs, reps: int) -> tuple[float, float]:
    """(median wall seconds of a run, median GPU seconds of its compute passes)."""
    run_kernels(kernels, inputs, outputs=["out"])  # warm: pipelines, pools
    times, gpu = [], []
    for _ in range(reps):
        start = time.perf_counter()
        run_kernels(kernels, inputs, outputs=["out"])  # the production path: one pass
        times.append(time.perf_counter() - start)
        profile: dict = {}  # GPU time from a separate, profiled run (one pass per kernel)
        run_kernels(kernels, inputs, outputs=["out"], profile=profile)
        gpu.append(profile.get("gpu_ticks", 0) * 1e-9)
    return statistics.median(times), statistics.median(gpu)


def recording(kernels, inputs, reps: int) -> float:
    """Median seconds to record one run that keeps its outputs on the device."""
    from vyre_xdsl.runtime.device import gpu_device

    gpu = gpu_device()
    # as an Executable runs it: only x is uploaded; the last output lives until
    # the next run has returned (`y = exe.run(...)`)
    last = run_kernels(kernels, inputs, outputs=["out"], keep=True, uploads={"x"})
    gpu.synchronize()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        last = run_kernels(kernels, inputs, outputs=["out"], keep=True, uploads={"x"})
        times.append(time.perf_counter() - start)
        gpu.synchronize()
    del last
    return statistics.median(times)


def measure(dispatches: int = 100, n: int = 256, reps: int = 20) -> dict:
    x = np.arange(n, dtype=np.float32)
    timings, recorded = [], []
    for count in (dispatches, 1):
        module = parse_module(chain_text(count, n))
        kernels = compile_module(module)
        bound = signature(module).bind({"x": x})
        timings.append(wall(kernels, bound, reps))
        recorded.append(recording(kernels, bound, reps))
    (t_many, g_many), (t_one, g_one) = timings
    result = {
        "dispatches": dispatches,
        "run_s": t_many,
        "run_gpu_s": g_many,
        "single_run_s": t_one,
        "per_dispatch_us": (t_many - t_one) / (dispatches - 1) * 1e6,
        "per_dispatch_host_us": ((t_many - g_many) - (t_one - g_one)) / (dispatches - 1) * 1e6,
        "record_run_s": recorded[0],
        "record_single_run_s": recorded[1],
        "per_dispatch_record_us": (recorded[0] - recorded[1]) / (dispatches - 1) * 1e6,
    }
    if result_is_meaningless(result):
        # a CPU adapter (lavapipe): its "GPU" time is CPU time measured on the slower,
        # profiled path, so subtracting it says nothing
        result["per_dispatch_host_us"] = None
    return result


def result_is_meaningless(result: dict) -> bool:
    return result["per_dispatch_host_us"] < 0


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--dispatches", type=int, default=100)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--json", default=None)
    args = p.parse_args()
    result = measure(args.dispatches, reps=args.reps)
    print(
        f"{result['dispatches']}-dispatch run: {result['run_s'] * 1e3:.2f} ms; 1-dispatch run: "
        f"{result['single_run_s'] * 1e3:.2f} ms; per extra dispatch {result['per_dispatch_us']:.1f} us wall, "
        + (
            "n/a without GPU time (a CPU adapter's GPU time is CPU time)"
            if result["per_dispatch_host_us"] is None
            else f"{result['per_dispatch_host_us']:.1f} us without GPU time (timestamps)"
        )
    )
    print(
        f"recording a device run (keep=True, not submitted): {result['record_run_s'] * 1e3:.2f} ms "
        f"for {result['dispatches']} dispatches, {result['record_single_run_s'] * 1e6:.1f} us for 1; "
        f"per extra dispatch {result['per_dispatch_record_us']:.1f} us of host time"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
