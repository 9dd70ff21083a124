"""Tree reductions in target-module bundles (`vyre-compile`), as written and
coarsened before planning: wall-clock time of `run_bundle` on wgpu.

    python bench/megakernel_trees.py --log2n 22 --reps 9
    python bench/megakernel_trees.py --kinds add_ui32 --log2n 26 --reps 9   # a large GPU

Each kind is a combine and an element type (bench/coarsen_default.py's kinds);
the module is bench/workloads.py's textbook tree (256 wide, a program per
level), alone (`tree`) or behind an elementwise producer `y = x * x` (`prod`).
Each is compiled to a bundle twice, with `compile_module(module)` (the default:
every level coarsened before planning) and with `coarsen_reductions=False`.
After `--warmup` seconds of runs of every bundle, `--reps` interleaved rounds
time one `run_bundle` call each (upload, one submit, readback). Every result is
checked against numpy (f32 min/max and wrapping ui32 sums are exact).
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
from coarsen_default import KINDS, producer, retyped  # noqa: E402
from workloads import tree_levels  # noqa: E402

import vyre_xdsl  # noqa: E402
from vyre_xdsl.megakernel.bundle import TargetModuleBundle  # noqa: E402
from vyre_xdsl.megakernel.compile import compile_module  # noqa: E402
from vyre_xdsl.megakernel.run import run_bundle  # noqa: E402


def modules(kind: str, n: int) -> dict[str, str]:
    op, element, identity, _ = KINDS[kind]
    tree = retyped("\n".join(tree_levels("x", n, op, identity, "r")), element)
    behind = retyped("\n".join(tree_levels("y", n, op, identity, "r")), element)
    return {"tree": tree, "prod": producer(n, element) + "\n" + behind}


def expected(kind: str, name: str, x: np.ndarray):
    reduce = KINDS[kind][3]
    data = x * x if name == "prod" else x
    return reduce(data).astype(x.dtype) if x.dtype == np.uint32 else reduce(data)


def inputs(kind: str, n: int) -> np.ndarray:
    rng = np.random.default_rng(1)
    if KINDS[kind][1] == "ui32":
        return rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    return rng.standard_normal(n).astype(np.float32)


def bundles(kind: str, n: int) -> dict[str, TargetModuleBundle]:
    out = {}
    for name, text in modules(kind, n).items():
        for label, coarsen in (("as_written", False), ("coarsened", True)):
            data = compile_module(vyre_xdsl.parse(text), coarsen_reductions=coarsen)
            out[f"{name}_{label}"] = TargetModuleBundle.from_bytes(data.bundle_bytes())
    return out


def timed(bundle: TargetModuleBundle, x: np.ndarray) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    out = run_bundle(bundle, {"x": x})["out"]
    return time.perf_counter() - start, out


def measure(kind: str, n: int, reps: int, warmup: float) -> dict[str, list[float]]:
    x = inputs(kind, n)
    variants = bundles(kind, n)
    end = time.perf_counter() + warmup
    while time.perf_counter() < end:
        for bundle in variants.values():
            timed(bundle, x)
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(reps):
        for name, bundle in variants.items():
            seconds, out = timed(bundle, x)
            want = expected(kind, name.split("_")[0], x)
            if out.reshape(-1)[0] != want:
                raise SystemExit(f"{kind} {name}: {out.reshape(-1)[0]} != numpy {want}")
            times[name].append(seconds * 1e3)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", nargs="+", default=["add_ui32", "min_f32"], choices=KINDS)
    parser.add_argument("--log2n", type=int, default=22)
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--json", help="write every time (ms) here")
    args = parser.parse_args()
    n = 1 << args.log2n
    results = {}
    print(f"n = 2^{args.log2n}; run_bundle wall time, ms: median (min-max) of {args.reps} rounds")
    for kind in args.kinds:
        times = measure(kind, n, args.reps, args.warmup)
        results[kind] = times
        for name, values in times.items():
            print(
                f"{kind:9} {name:17} {statistics.median(values):9.3f} "
                f"({min(values):.3f}-{max(values):.3f})"
            )
        for name in ("tree", "prod"):
            ratio = [a / b for a, b in zip(times[f"{name}_as_written"], times[f"{name}_coarsened"])]
            print(
                f"{kind:9} {name} as written / coarsened, per round: median "
                f"{statistics.median(ratio):.2f} ({min(ratio):.2f}-{max(ratio):.2f})"
            )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"log2n": args.log2n, "reps": args.reps, "ms": results}, f, indent=1)


if __name__ == "__main__":
    main()
