"""Fused versus unfused K-stage elementwise chains on the wgpu backend (issue 6).

Stage k of a chain is its own program: `t_k[i] = t_{k-1}[i] * a_k + b_k` over N
f32 elements (t_0 = x is the input, t_K = y the output; t_1 .. t_{K-1} are
intermediates). Unfused, the runtime dispatches K kernels (all in one submit),
each reading and writing N floats; fused (`vyre-fuse`), one kernel reads x
once and writes y once.

The fused module is made once (`vyre_xdsl.api.fuse_module`, the `vyre-fuse`
pass) and each configuration is compiled once (`vyre_xdsl.compile`, like
torch.compile: verify, lower, WGSL, pipelines); then `exe.run(inputs)` is timed
end to end (bind, upload, dispatch, readback) `--reps` times.
The table shows the median times and the fused speed-up; the one-time costs
(fusion pass, lowering, WGSL, pipeline creation) are shown separately. GPU
time is the sum over compute passes of timestamp-query deltas (median of
`--reps` runs), when the device has timestamp queries. Fused and unfused
outputs are checked against each other (within K * 2^-20 of the output's
magnitude: contraction and constant reassociation may differ per stage; the
table reports the worst ULP distance, which near a zero crossing can be large).

    python bench/fusion.py                        # K = 2, 4, 8, 16; N = 2^20, 2^22
    python bench/fusion.py --stages 8 --log2n 22  # the headline case
    python bench/fusion.py --log2n 24 --markdown   # a table for docs/performance.md
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

import numpy as np

os.environ.setdefault("WGPU_BACKEND_TYPE", "Vulkan")

import vyre_xdsl  # noqa: E402
from vyre_xdsl.abi import signature  # noqa: E402
from vyre_xdsl.api import fuse_module  # noqa: E402
from vyre_xdsl.context import parse_module  # noqa: E402
from vyre_xdsl.runtime import compiled_kernels, gpu_device, run_kernels  # noqa: E402
from vyre_xdsl.semantics import ulp_distance  # noqa: E402

WORKGROUP = 256


def chain_text(stages: int, n: int) -> str:
    names = ["x"] + [f"t{k}" for k in range(1, stages)] + ["y"]
    programs = []
    for k in range(1, stages + 1):
        a, b = 1.0 + k / 64.0, k / 8.0
        programs.append(
            f"""vyre.program @stage{k} workgroup_size [{WORKGROUP}, 1, 1] {{
  vyre.buffer @{names[k - 1]} binding 0 read_only : f32[{n}]
  vyre.buffer @{names[k]} binding 1 write_only : f32[{n}]
  %i = vyre.invocation_id x
  %v = vyre.load @{names[k - 1]}[%i] : f32
  %a = vyre.const {a!r} : f32
  %b = vyre.const {b!r} : f32
  %m = vyre.mul %v, %a : f32
  %r = vyre.add %m, %b : f32
  vyre.store @{names[k]}[%i] = %r : f32
}}"""
        )
    return "\n".join(programs) + "\n"


WARMUP_SECONDS = 0.5


def timed(module, inputs, reps: int, warmup: float) -> tuple[float, float, np.ndarray]:
    """(first run, median of `reps` warm runs, output y). Between them the module
    runs back to back for `warmup` seconds (GPUs raise clocks under load)."""
    start = time.perf_counter()
    exe = vyre_xdsl.compile(module, backend="wgpu")  # verify, lower, WGSL
    out = exe.run(inputs)["y"]  # pipelines
    first = time.perf_counter() - start
    warm_until = time.perf_counter() + warmup
    while time.perf_counter() < warm_until:
        exe.run(inputs)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        out = exe.run(inputs)["y"]
        times.append(time.perf_counter() - start)
    return first, statistics.median(times), out


def gpu_time(module, inputs, reps: int) -> float | None:
    """Median GPU time (timestamp queries around each compute pass), seconds."""
    if "timestamp-query" not in gpu_device().features:
        return None
    sig = signature(module)
    kernels = compiled_kernels(module)
    ticks = []
    for _ in range(reps):
        profile: dict = {}
        run_kernels(
            kernels,
            sig.bind(inputs),
            outputs=list(sig.outputs),
            uploads=set(sig.inputs),
            profile=profile,
        )
        ticks.append(profile["gpu_ticks"])
    return statistics.median(ticks) * 1e-9  # lavapipe's ticks are nanoseconds


def measure(stages: int, log2n: int, reps: int, warmup: float = WARMUP_SECONDS) -> dict:
    n = 1 << log2n
    module = parse_module(chain_text(stages, n))
    start = time.perf_counter()
    fused_module = fuse_module(module)
    fusing = time.perf_counter() - start
    x = np.random.default_rng(stages).uniform(-1.0, 1.0, n).astype(np.float32)
    first_unfused, unfused, y_unfused = timed(module, {"x": x}, reps, warmup)
    first_fused, fused, y_fused = timed(fused_module, {"x": x}, reps, warmup)
    gpu_unfused, gpu_fused = (
        gpu_time(module, {"x": x}, reps),
        gpu_time(fused_module, {"x": x}, reps),
    )
    worst = int(ulp_distance(y_unfused, y_fused).max())
    # A GPU compiler may contract t*a+b into an fma and, in the fused kernel,
    # reassociate constants across stages (SPEC 3.4): near a zero crossing that is
    # many ULP of a tiny result, so the check is absolute, scaled by the values' size.
    scale = max(1.0, float(np.abs(y_unfused).max()))
    error = float(np.abs(y_unfused.astype(np.float64) - y_fused).max())
    if error > stages * 2.0**-20 * scale:
        raise SystemExit(
            f"K={stages} N=2^{log2n}: fused and unfused differ by {error:g} ({worst} ULP)"
        )
    return {
        "stages": stages,
        "log2n": log2n,
        "unfused": unfused,
        "fused": fused,
        "ratio": unfused / fused,
        "ulp": worst,
        "fusing": fusing,
        "first_unfused": first_unfused,
        "first_fused": first_fused,
        "gpu_unfused": gpu_unfused,
        "gpu_fused": gpu_fused,
    }


def gpu_columns(row: dict) -> tuple[str, str]:
    if row["gpu_unfused"] is None:
        return "n/a", "n/a"
    return (
        f"{row['gpu_unfused'] * 1e3:.1f} / {row['gpu_fused'] * 1e3:.1f}",
        f"{row['gpu_unfused'] / row['gpu_fused']:.2f}x",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stages", type=int, nargs="+", default=[2, 4, 8, 16])
    parser.add_argument("--log2n", type=int, nargs="+", default=[20, 22])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument(
        "--warmup",
        type=float,
        default=WARMUP_SECONDS,
        help="seconds of back-to-back runs before timing each configuration",
    )
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    args = parser.parse_args(argv)

    gpu = gpu_device()
    print(
        f"# adapter: {gpu.describe()}; {os.cpu_count()} CPUs; {platform.platform()}; "
        f"python {platform.python_version()}",
        flush=True,
    )
    print(
        f"# command: python bench/fusion.py {' '.join(sys.argv[1:] if argv is None else argv)}",
        flush=True,
    )
    rows = []
    for log2n in args.log2n:
        for stages in args.stages:
            row = measure(stages, log2n, args.reps, args.warmup)
            rows.append(row)
            if not args.markdown:
                gpu, gpu_ratio = gpu_columns(row)
                print(
                    f"K={stages:>2} N=2^{log2n}: unfused {row['unfused'] * 1e3:8.1f} ms  "
                    f"fused {row['fused'] * 1e3:8.1f} ms  speed-up {row['ratio']:5.2f}x  "
                    f"GPU time {gpu} ms = {gpu_ratio}  "
                    f"(max {row['ulp']} ULP apart; once: fuse {row['fusing'] * 1e3:.0f} ms, "
                    f"first run {row['first_unfused'] * 1e3:.0f} / {row['first_fused'] * 1e3:.0f} ms)",
                    flush=True,
                )
    if args.markdown:
        print(
            "| K stages | N | unfused (ms) | fused (ms) | speed-up | GPU time unfused / fused (ms) "
            "| GPU speed-up | max ULP apart | fuse pass (ms) | first run unfused / fused (ms) |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for row in rows:
            gpu, gpu_ratio = gpu_columns(row)
            print(
                f"| {row['stages']} | 2^{row['log2n']} | {row['unfused'] * 1e3:.1f} | "
                f"{row['fused'] * 1e3:.1f} | {row['ratio']:.2f}x | {gpu} | {gpu_ratio} | {row['ulp']} | "
                f"{row['fusing'] * 1e3:.0f} | {row['first_unfused'] * 1e3:.0f} / {row['first_fused'] * 1e3:.0f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
