"""The coarsening factor chosen from the device: GPU time of textbook tree
reductions compiled for the device's own profile against the portable one.

    python bench/coarsen_device.py --log2n 18 20 22 --reps 9

`vyre-coarsen-reductions` leaves at least `min-workgroups` workgroups per level,
and the pipeline takes that from the target profile's `resident_workgroups`: the
wgpu runtime gives a CPU adapter 4 per CPU thread and a GPU 1024 (WebGPU reports
no count of compute units), the portable profile 1024. Each kind
(bench/coarsen_default.py's: a combine and an element type) and size is compiled
with `vyre_xdsl.compile(text, backend="wgpu")` (the device's profile) and with
`portable=True`; after `--warmup` seconds of runs of both, `--reps` interleaved
rounds time one profiled run each (GPU time: the timestamp-query deltas of the
run's kernels). Every result is checked against numpy. On a GPU both profiles
give the same k, so the two variants time the same kernels.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("WGPU_BACKEND_TYPE", "Vulkan")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
from workloads import F32_MAX, tree_levels  # noqa: E402

import vyre_xdsl  # noqa: E402
from vyre_xdsl.runtime import gpu_device  # noqa: E402

# combine, element type, identity (IR text), numpy reduction
KINDS = {
    "min_f32": ("min", "f32", F32_MAX, np.min),
    "add_ui32": ("add", "ui32", "0", np.sum),
    "max_ui32": ("max", "ui32", "0", np.max),
}


def tree(kind: str, n: int) -> str:
    op, element, identity, _ = KINDS[kind]
    text = "\n".join(tree_levels("x", n, op, identity, "r"))
    return text.replace(": f32", f": {element}").replace("f32[", f"{element}[")


def data(kind: str, n: int) -> np.ndarray:
    rng = np.random.default_rng(3)
    if KINDS[kind][1] == "ui32":
        return rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    return rng.standard_normal(n).astype(np.float32)


def expected(kind: str, x: np.ndarray):
    reduce = KINDS[kind][3]
    return reduce(x).astype(x.dtype) if x.dtype == np.uint32 else reduce(x)


def measure(kind: str, n: int, reps: int, warmup: float) -> dict:
    text = tree(kind, n)
    exes = {
        "device": vyre_xdsl.compile(text, backend="wgpu"),
        "portable": vyre_xdsl.compile(text, backend="wgpu", portable=True),
    }
    grids = {label: [k.dispatch_grid({}) for k in e.compiled.kernels] for label, e in exes.items()}
    x = data(kind, n)
    dx = vyre_xdsl.to_device(x)
    want = expected(kind, x)

    def run(label: str, check: bool) -> float:
        exe = exes[label]
        out = exe.run({"x": dx}, device=True, profile=True)["out"]
        if check and out.numpy()[0] != want:
            raise SystemExit(f"{kind} 2^{n.bit_length() - 1} {label}: {out.numpy()[0]} != {want}")
        return exe.last_profile.total_seconds * 1e3

    for label in exes:
        run(label, True)
    end = time.perf_counter() + warmup
    while time.perf_counter() < end:
        for label in exes:
            run(label, False)
    times: dict[str, list[float]] = {label: [] for label in exes}
    for rep in range(reps):
        order = list(exes) if rep % 2 == 0 else list(reversed(exes))
        for label in order:
            times[label].append(run(label, rep == reps - 1))
    return {"grids": grids, "ms": times}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    parser.add_argument("--log2n", type=int, nargs="+", default=[18, 20, 22])
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--warmup", type=float, default=0.5)
    parser.add_argument("--json", help="write every time (ms) here")
    args = parser.parse_args()
    gpu = gpu_device()
    print(f"adapter: {gpu.describe()}; resident_workgroups: {gpu.resident_workgroups}")
    print("GPU time, ms: median (min-max); per-round ratio portable / device")
    results = {}
    for log2n in args.log2n:
        for kind in args.kinds:
            got = measure(kind, 1 << log2n, args.reps, args.warmup)
            results[f"{kind} 2^{log2n}"] = got
            dev, por = got["ms"]["device"], got["ms"]["portable"]
            ratio = [p / d for p, d in zip(por, dev)]
            print(
                f"2^{log2n} {kind:9} device {statistics.median(dev):8.3f} "
                f"({min(dev):.3f}-{max(dev):.3f}) grid {got['grids']['device'][0]}  "
                f"portable {statistics.median(por):8.3f} ({min(por):.3f}-{max(por):.3f}) "
                f"grid {got['grids']['portable'][0]}  ratio {statistics.median(ratio):.2f} "
                f"({min(ratio):.2f}-{max(ratio):.2f})"
            )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
