"""What does reading a batch's trap records cost runs queued back to back?

A run whose kernels record traps (a loop with a computed bound, `vyre.trap`)
copies its trap sidecars into its batch's trap log, which the runtime reads
once the batch has finished. This script queues the coarsened `scan` workload
(bench/workloads.py, whose loops record traps) `--runs` times back to back with
`run(device=True)` and one `synchronize()`, wall clock per run, with the
runtime's `MAX_UNCHECKED_BATCHES` set per batch to each of `--settings`
(interleaved, `--reps` batches each after `--warmup` seconds):

- `0`: every submit waits for everything submitted and reads its trap log
  (the GPU then idles while the host records the next run);
- `2` (the default): two batches stay unread; the oldest past them is waited
  for on its own submission while the GPU runs the newer ones.

The GPU time of one run (profiled, the sum of its kernels' timestamps; after
the warm-up and after the timed batches, with each kernel's time) and
`torch.cumsum` (CUDA events over 10 calls) are timed in the same process where
they can be. The last output of each setting is checked against numpy after
all the batches are timed (reading 1 GiB back after every batch idles the GPU,
and its clock drops before the next batch).

    python bench/trap_checks.py --log2n 28     # on a GPU
    python bench/trap_checks.py --log2n 20     # on lavapipe
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from workloads import coarsened_text, make, spread, torch_setup  # noqa: E402

import vyre_xdsl  # noqa: E402
from vyre_xdsl.runtime import device as device_module  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2n", type=int, default=20)
    parser.add_argument("--runs", type=int, default=20, help="runs per batch")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--settings", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    n = 1 << args.log2n
    work = make("scan", n, n)
    exe = vyre_xdsl.compile(coarsened_text(work.text), backend="wgpu", fuse=True)
    x = vyre_xdsl.to_device(work.x)
    print(f"adapter: {exe.gpu.describe()}; scan of 2^{args.log2n} f32, {args.runs} runs per batch")

    last = {}

    def batch(setting: int) -> float:
        device_module.MAX_UNCHECKED_BATCHES = setting
        start = time.perf_counter()
        for _ in range(args.runs):
            last[setting] = exe.run({"x": x}, device=True)["out"]
        vyre_xdsl.synchronize()
        return (time.perf_counter() - start) / args.runs

    def profiled() -> tuple[dict, str]:
        """The GPU time of one run, `--reps` runs each profiled and waited for,
        and the median time of each kernel."""
        totals, kernels = [], []
        for _ in range(args.reps):
            exe.run({"x": x}, device=True, profile=True)
            totals.append(exe.last_profile.total_seconds)
            kernels.append({k.name: k.seconds for k in exe.last_profile.kernels})
        names = ", ".join(
            f"{name} {statistics.median(k[name] for k in kernels) * 1e3:.3f}" for name in kernels[0]
        )
        return spread(totals), names

    default = device_module.MAX_UNCHECKED_BATCHES
    walls = {s: [] for s in args.settings}
    try:
        end = time.perf_counter() + args.warmup
        while time.perf_counter() < end:
            for setting in args.settings:
                batch(setting)
        before, kernels_before = profiled()
        for _ in range(args.reps):
            for setting in args.settings:
                walls[setting].append(batch(setting))
    finally:
        device_module.MAX_UNCHECKED_BATCHES = default
    after, kernels_after = profiled()
    correct = all(work.check(out.numpy()) for out in last.values())
    rows = {f"unchecked {s}": spread(v) for s, v in walls.items()}
    rows["GPU time of one run (profiled), before the batches"] = before
    rows["GPU time of one run (profiled), after the batches"] = after
    torch, _ = torch_setup()
    if torch is not None:
        t = torch.from_numpy(work.x).cuda()
        dst = torch.empty_like(t)
        for _ in range(50):
            torch.cumsum(t, 0, out=dst)
        times = []
        for _ in range(args.reps):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(10):
                torch.cumsum(t, 0, out=dst)
            e.record()
            torch.cuda.synchronize()
            times.append(s.elapsed_time(e) / 1e3 / 10)
        rows["torch.cumsum"] = spread(times)
    print("\n| measurement | ms per run, median (min-max) |\n| --- | --- |")
    for label, row in rows.items():
        print(
            f"| {label} | {row['median'] * 1e3:.3f} ({row['min'] * 1e3:.3f}-{row['max'] * 1e3:.3f}) |"
        )
    print(f"\nkernels before, ms: {kernels_before}\nkernels after, ms: {kernels_after}")
    print(f"\neach setting's last output numpy-checked: {'yes' if correct else 'NO'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"adapter": exe.gpu.describe(), "log2n": args.log2n, "rows": rows}, f)
    return 0 if correct else 1


if __name__ == "__main__":
    raise SystemExit(main())
