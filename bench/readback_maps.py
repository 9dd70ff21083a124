"""When should a run with numpy outputs map its readback buffers: before the one
device wait, or after it? Both orders, interleaved round by round in one process.

    python bench/readback_maps.py --rounds 9
    python bench/readback_maps.py --rounds 9 --reps 200

`GpuDevice.maps_before_wait` decides it (True on CPU adapters only, from a
measurement taken with wgpu-py's own maps, which submitted an empty command
buffer and resolved on wgpu-py's poll thread; the runtime now maps through
wgpu-native on the reading thread, `vyre_xdsl.runtime.buffer_map`). Each round
sets it to True and to False, in alternating order, and times, for each:

- `small`: one 1024-element run, `out = x * c + d`, numpy in and out;
- `chain100`: a 100-kernel unfused chain at N = 256, numpy in and out (the case
  where mapping before the wait lost 4-5x on the H200 with wgpu-py's maps).

Figures are the mean of `--reps` runs (`chain100`: reps / 10); the table gives
the median and the spread over the rounds. With PyTorch and CUDA present, the
numpy -> cuda -> op -> numpy round trip of the same op is timed in the same
process. Every result is checked against numpy first.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
from gpu_chains import chain_text, numpy_chain
from small_runs import torch_small, warm

import vyre_xdsl
from vyre_xdsl.runtime import gpu_device


def mean_seconds(fn, reps: int) -> float:
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - start) / reps


def cases() -> dict:
    x = np.linspace(-1, 1, 1024, dtype=np.float32)
    small = vyre_xdsl.compile(chain_text(1, 1024), backend="wgpu")
    assert small.run({"x": x})["out"].tolist() == numpy_chain(x, 1).tolist()
    xs = np.linspace(-1, 1, 256, dtype=np.float32)
    chain = vyre_xdsl.compile(chain_text(100, 256), backend="wgpu")
    assert np.allclose(chain.run({"x": xs})["out"], numpy_chain(xs, 100), rtol=1e-5)
    return {
        "small": (lambda: small.run({"x": x}), 1),
        "chain100": (lambda: chain.run({"x": xs}), 10),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    gpu = gpu_device()
    default = gpu.maps_before_wait
    print(f"adapter: {gpu.describe()}; maps_before_wait by default: {default}")
    warm()
    runs = cases()
    times = {(name, order): [] for name in runs for order in (True, False)}
    try:
        for round_ in range(args.rounds):
            orders = (True, False) if round_ % 2 == 0 else (False, True)
            for order in orders:
                gpu.maps_before_wait = order
                for name, (fn, divisor) in runs.items():
                    fn()
                    times[(name, order)].append(mean_seconds(fn, max(1, args.reps // divisor)))
    finally:
        gpu.maps_before_wait = default
    print("\n| case | maps before the wait | maps after the wait | before / after |")
    print("| --- | --- | --- | --- |")
    for name in runs:
        before, after = times[(name, True)], times[(name, False)]
        ratio = [b / a for b, a in zip(before, after)]
        print(
            f"| {name} | {fmt(before)} | {fmt(after)} | {statistics.median(ratio):.2f} "
            f"({min(ratio):.2f}-{max(ratio):.2f}) |"
        )
    torch = torch_small(args.reps, args.rounds)
    for label, figures in torch.items():
        print(f"{label}: {figures['median_s'] * 1e6:.1f} us")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "adapter": gpu.describe(),
                    "seconds": {
                        f"{n} {'before' if o else 'after'}": t for (n, o), t in times.items()
                    },
                    "torch": torch,
                },
                f,
                indent=1,
            )
    return 0


def fmt(values: list[float]) -> str:
    us = [v * 1e6 for v in values]
    return f"{statistics.median(us):.1f} us ({min(us):.1f}-{max(us):.1f})"


if __name__ == "__main__":
    raise SystemExit(main())
