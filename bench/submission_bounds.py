"""When should the runtime submit its pending batch of deferred runs?

Two measurements, each with the bounds of `vyre_xdsl.runtime.device` set per
round and the settings interleaved round by round in one process:

1. **queued**: 300 small runs (N = 1024, `out = x * c + d`, device arrays in and
   out) recorded back to back, then one `synchronize()`; wall clock per run, for
   each `MAX_PENDING_DISPATCHES` of `--dispatch-bounds` (a smaller bound submits
   more often: the GPU starts while the host records, at the cost of one
   submission per batch).
2. **chain** (with `--chain-log2n`): the fused 8-stage chain through
   `vyre_xdsl.run(text, fuse=True, device=True)`, `--chain-runs` back to back then
   one synchronize, wall clock per run; with `MAX_PENDING_WORK_BYTES` at its
   default (large runs submitted at once) and effectively unbounded (submitted
   at the synchronize). PyTorch's `torch.compile` of the same chain is timed in
   the same process (CUDA events) where CUDA is present.

Every figure is the median of `--rounds` rounds (min-max in brackets); 0.5 s of
GPU warm-up first. Results are checked against numpy.

    python bench/submission_bounds.py                              # on lavapipe
    python bench/submission_bounds.py --chain-log2n 28 --rounds 9  # on the H200
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
from gpu_chains import chain_text, numpy_chain
from small_runs import warm
from workloads import chain_eager, make

import vyre_xdsl
from vyre_xdsl.runtime import device as device_module


def spread(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def queued(bounds: list[int], rounds: int) -> dict[str, dict]:
    n = 1024
    x = np.linspace(-1, 1, n, dtype=np.float32)
    exe = vyre_xdsl.compile(chain_text(1, n), backend="wgpu")
    dx = vyre_xdsl.to_device(x)
    expected = numpy_chain(x, 1)
    times: dict[int, list[float]] = {b: [] for b in bounds}
    for round_ in range(rounds + 1):
        for bound in bounds:
            device_module.MAX_PENDING_DISPATCHES = bound
            start = time.perf_counter()
            for _ in range(300):
                out = exe.run({"x": dx}, device=True)["out"]
            vyre_xdsl.synchronize()
            if round_:  # round 0 warms every setting
                times[bound].append((time.perf_counter() - start) / 300)
            assert np.array_equal(out.numpy(), expected)
    return {f"dispatch bound {b}": spread(v) for b, v in times.items()}


def chain(log2n: int, runs: int, rounds: int) -> dict[str, dict]:
    n = 1 << log2n
    work = make("chain8", n, n)
    x = vyre_xdsl.to_device(work.x)
    settings = {"large runs submitted at once": 256 << 20, "submitted at synchronize": 1 << 62}
    times: dict[str, list[float]] = {label: [] for label in settings}
    for round_ in range(rounds + 1):
        for label, bound in settings.items():
            device_module.MAX_PENDING_WORK_BYTES = bound
            start = time.perf_counter()
            for _ in range(runs):
                out = vyre_xdsl.run(work.text, {"x": x}, backend="wgpu", fuse=True, device=True)
            vyre_xdsl.synchronize()
            if round_:
                times[label].append((time.perf_counter() - start) / runs)
            assert work.check(out["out"].numpy())
    result = {label: spread(v) for label, v in times.items()}
    result.update(torch_chain(work, runs, rounds))
    return result


def torch_chain(work, runs: int, rounds: int) -> dict[str, dict]:
    try:
        import torch
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    t = torch.from_numpy(work.x).cuda()
    fn = torch.compile(chain_eager(8))
    fn(t)
    torch.cuda.synchronize()
    values = []
    for _ in range(rounds + 1):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(runs):
            fn(t)
        stop.record()
        torch.cuda.synchronize()
        values.append(start.elapsed_time(stop) * 1e-3 / runs)
    return {"torch.compile (CUDA events)": spread(values[1:])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dispatch-bounds", type=int, nargs="+", default=[256, 64, 32, 16])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--chain-log2n", type=int, default=None)
    parser.add_argument("--chain-runs", type=int, default=20)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    warm()
    dispatches, work = device_module.MAX_PENDING_DISPATCHES, device_module.MAX_PENDING_WORK_BYTES
    try:
        rows = {"queued": queued(args.dispatch_bounds, args.rounds)}
        if args.chain_log2n is not None:
            rows["chain"] = chain(args.chain_log2n, args.chain_runs, args.rounds)
    finally:
        device_module.MAX_PENDING_DISPATCHES = dispatches
        device_module.MAX_PENDING_WORK_BYTES = work
    adapter = vyre_xdsl.runtime.gpu_device().describe()
    print(f"adapter: {adapter}")
    for part, table in rows.items():
        print(f"\n{part}: seconds per run, median (min-max)")
        for label, row in table.items():
            print(
                f"  {label:32s} {row['median'] * 1e6:9.1f} us "
                f"({row['min'] * 1e6:.1f}-{row['max'] * 1e6:.1f})"
            )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"adapter": adapter, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
