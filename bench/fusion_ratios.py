"""Fused versus unfused time of multi-program workloads on the wgpu backend
(meant for lavapipe; runs on any adapter).

The workloads are plain vyre programs (`vyre_xdsl.testing.fusion_workloads`):
the textbook workgroup tree sum repeated until one value is left, a 16-element
strided pre-sum followed by the tree, the neighbour chain
`t[i] = 2 x[i]; y[i] = t[i] + t[i + 1]`, and a 256-bin histogram with one
global atomic add per element (its keys computed by a first program).

Each configuration is compiled once (`vyre_xdsl.compile`, with and without
`fuse=True`), checked against numpy, run back to back for `--warmup` seconds,
then `exe.run(inputs)` is timed `--reps` times, fused and unfused runs
interleaved (so a change of machine load hits both). The table gives the
median, the spread (min-max over the repeats) and fused / unfused of the
medians, and of the fastest runs (on a loaded machine the fastest run is the
least disturbed one); at most 1.1 is the target. Then, where the device has
timestamp queries, as many runs with `profile=True` give the GPU time (each
kernel in its own compute pass; on lavapipe the kernels' CPU time), without the
uploads and readbacks that `run` also times. The vyre-fuse default (`fuse=True`: the
cost model) and `fuse="force"` (every program fused into one, split at
`grid_sync` where needed) are both measured.

    python bench/fusion_ratios.py                       # 2^20 elements
    python bench/fusion_ratios.py --log2n 18 --reps 9 --markdown
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time

os.environ.setdefault("WGPU_BACKEND_TYPE", "Vulkan")

import vyre_xdsl  # noqa: E402
from vyre_xdsl.runtime import gpu_device  # noqa: E402
from vyre_xdsl.testing.fusion_workloads import WORKLOADS as TESTED  # noqa: E402
from vyre_xdsl.testing.fusion_workloads import presum_tree  # noqa: E402

#: the tested workloads, and the pre-sum at 32 elements per invocation, a loop
#: the WGSL printer leaves rolled (it unrolls at most 16 iterations)
WORKLOADS = {**TESTED, "presum32_tree": lambda n: presum_tree(n, presum=32)}

WARMUP_SECONDS = 0.5
VARIANTS = ("unfused", "fused", "forced")


def executables(text: str) -> dict[str, vyre_xdsl.Executable]:
    """One executable per variant, each compiled once (`fuse=True`: the cost model)."""
    modes = {"unfused": False, "fused": True, "forced": "force"}
    return {v: vyre_xdsl.compile(text, backend="wgpu", fuse=mode) for v, mode in modes.items()}


def measure(name: str, n: int, reps: int, warmup: float) -> dict:
    work = WORKLOADS[name](n)
    inputs = work.inputs(seed=1)
    exes = executables(work.text)
    for exe in exes.values():
        work.check(exe.run(inputs), inputs)  # also builds the pipelines
    until = time.perf_counter() + warmup
    while time.perf_counter() < until:
        for exe in exes.values():
            exe.run(inputs)
    times: dict[str, list[float]] = {v: [] for v in VARIANTS}
    gpu: dict[str, list[float]] = {v: [] for v in VARIANTS}
    for _ in range(reps):
        for variant in VARIANTS:
            start = time.perf_counter()
            exes[variant].run(inputs)
            times[variant].append(time.perf_counter() - start)
    for _ in range(reps):
        for variant in VARIANTS:
            seconds = gpu_seconds(exes[variant], inputs)
            if seconds is not None:
                gpu[variant].append(seconds)
    row = {"name": name, "n": n, "times": times, "dispatches": dispatches(exes)}
    if all(gpu.values()):
        row["gpu"] = gpu
    return row


def gpu_seconds(exe, inputs) -> float | None:
    """The run's GPU time (timestamp queries around each kernel), when the device has them."""
    exe.run(inputs, profile=True)
    return None if exe.last_profile is None else exe.last_profile.total_seconds


def dispatches(exes: dict) -> dict[str, int]:
    from vyre_xdsl.runtime import compiled_kernels

    return {v: len(compiled_kernels(exe.module)) for v, exe in exes.items()}


def summary(times: list[float]) -> str:
    ms = sorted(t * 1e3 for t in times)
    return f"{statistics.median(ms):.2f} ({ms[0]:.2f}-{ms[-1]:.2f})"


def ratio(row: dict, variant: str) -> float:
    """variant / unfused, of the medians."""
    times = row["times"]
    return statistics.median(times[variant]) / statistics.median(times["unfused"])


def best_ratio(row: dict, variant: str) -> float:
    """variant / unfused, of the fastest runs (what a loaded machine disturbs least)."""
    times = row["times"]
    return min(times[variant]) / min(times["unfused"])


def gpu_ratio(row: dict, variant: str) -> str:
    """variant / unfused, of the median GPU times ("n/a" without timestamps)."""
    if "gpu" not in row:
        return "n/a"
    gpu = row["gpu"]
    return f"{statistics.median(gpu[variant]) / statistics.median(gpu['unfused']):.2f}"


def gpu_summary(row: dict, variant: str) -> str:
    return summary(row["gpu"][variant]) if "gpu" in row else "n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2n", type=int, default=20)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--warmup", type=float, default=WARMUP_SECONDS)
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = parser.parse_args(argv)
    gpu = gpu_device()
    command = " ".join(sys.argv[1:] if argv is None else argv)
    print(f"# command: python bench/fusion_ratios.py {command}".rstrip(), flush=True)
    print(
        f"# adapter: {gpu.describe()}; {os.cpu_count()} CPUs; {platform.platform()}; "
        f"python {platform.python_version()}; {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
        flush=True,
    )
    n = 1 << args.log2n
    rows = []
    for name in args.workloads:
        row = measure(name, n, args.reps, args.warmup)
        rows.append(row)
        if not args.markdown:
            print(
                f"{name:12} n=2^{args.log2n}: "
                + "  ".join(f"{v} {summary(row['times'][v])} ms" for v in VARIANTS)
                + f"  fused/unfused {ratio(row, 'fused'):.2f} (fastest {best_ratio(row, 'fused'):.2f})"
                + f"  forced/unfused {ratio(row, 'forced'):.2f} (fastest {best_ratio(row, 'forced'):.2f})"
                + f"  GPU time {' / '.join(gpu_summary(row, v) for v in VARIANTS)} ms"
                + f" (fused/unfused {gpu_ratio(row, 'fused')}, forced/unfused {gpu_ratio(row, 'forced')})"
                + f"  dispatches {row['dispatches']}",
                flush=True,
            )
    if args.markdown:
        print(
            "| workload | unfused ms (min-max) | fused ms (min-max) | fused / unfused (fastest) "
            "| force=true ms (min-max) | force=true / unfused (fastest) "
            "| GPU time unfused / fused / forced ms | GPU fused / unfused | GPU forced / unfused "
            "| dispatches unfused / fused / forced |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for row in rows:
            d = row["dispatches"]
            print(
                f"| {row['name']} 2^{args.log2n} | {summary(row['times']['unfused'])} "
                f"| {summary(row['times']['fused'])} "
                f"| {ratio(row, 'fused'):.2f} ({best_ratio(row, 'fused'):.2f}) "
                f"| {summary(row['times']['forced'])} "
                f"| {ratio(row, 'forced'):.2f} ({best_ratio(row, 'forced'):.2f}) "
                f"| {' / '.join(gpu_summary(row, v) for v in VARIANTS)} "
                f"| {gpu_ratio(row, 'fused')} | {gpu_ratio(row, 'forced')} "
                f"| {d['unfused']} / {d['fused']} / {d['forced']} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
