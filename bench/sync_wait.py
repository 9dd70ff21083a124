"""How should `synchronize` wait for the GPU: poll without blocking for a while
first (`GpuDevice.spin_wait_s`, as CUDA spins by default), or block in
wgpu-native's wait at once? Both, interleaved round by round in one process.

    python bench/sync_wait.py --rounds 9
    python bench/sync_wait.py --rounds 9 --spins 0 50e-6 200e-6 1e-3

Each round sets every `--spins` value in turn (rotating the order) and times:

- `small`: one 1024-element run with device arrays, then `synchronize()`;
- `numpy`: the same run with numpy in and out;
- `chain`: the fused 8-stage chain at 2^`--chain-log2n` with device arrays, then
  `synchronize()` (GPU work longer than a short spin).

Figures are the mean of `--reps` calls (`chain`: reps / 20); the table gives the
median and the spread over the rounds. A spin of 0 blocks at once (the default
on CPU adapters; GPUs default to `device.SPIN_WAIT_S`). With PyTorch and CUDA
present, PyTorch's op + synchronize and numpy round trip are timed in the same
process. Every result is checked against numpy first.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from gpu_chains import chain_text, numpy_chain
from readback_maps import fmt, mean_seconds
from small_runs import torch_small, warm

import vyre_xdsl
from vyre_xdsl.runtime import gpu_device


def cases(chain_log2n: int) -> dict:
    x = np.linspace(-1, 1, 1024, dtype=np.float32)
    small = vyre_xdsl.compile(chain_text(1, 1024), backend="wgpu")
    dx = vyre_xdsl.to_device(x)
    assert small.run({"x": x})["out"].tolist() == numpy_chain(x, 1).tolist()
    n = 1 << chain_log2n
    big = np.linspace(-1, 1, n, dtype=np.float32)
    chain = vyre_xdsl.compile(chain_text(8, n), backend="wgpu", fuse=True)
    dbig = vyre_xdsl.to_device(big)
    got = chain.run({"x": dbig}, device=True)["out"].numpy()
    assert np.allclose(got, numpy_chain(big, 8), rtol=1e-5)

    def small_sync():
        small.run({"x": dx}, device=True)
        vyre_xdsl.synchronize()

    def chain_sync():
        chain.run({"x": dbig}, device=True)
        vyre_xdsl.synchronize()

    return {
        "small": (small_sync, 1),
        "numpy": (lambda: small.run({"x": x}), 1),
        "chain": (chain_sync, 20),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--spins", type=float, nargs="+", default=[0.0, 200e-6])
    parser.add_argument("--chain-log2n", type=int, default=24)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    gpu = gpu_device()
    default = gpu.spin_wait_s
    print(f"adapter: {gpu.describe()}; spin_wait_s by default: {default}")
    warm()
    runs = cases(args.chain_log2n)
    times = {(name, s): [] for name in runs for s in args.spins}
    try:
        for round_ in range(args.rounds):
            shift = round_ % len(args.spins)
            for spin in args.spins[shift:] + args.spins[:shift]:
                gpu.spin_wait_s = spin
                for name, (fn, divisor) in runs.items():
                    fn()
                    times[(name, spin)].append(mean_seconds(fn, max(1, args.reps // divisor)))
    finally:
        gpu.spin_wait_s = default
    head = " | ".join(f"spin {s * 1e6:g} us" for s in args.spins)
    print(f"\n| case | {head} |")
    print("|" + " --- |" * (len(args.spins) + 1))
    for name in runs:
        cells = " | ".join(fmt(times[(name, s)]) for s in args.spins)
        print(f"| {name} | {cells} |")
    torch = torch_small(args.reps, args.rounds)
    for label, figures in torch.items():
        print(f"{label}: {figures['median_s'] * 1e6:.1f} us")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "adapter": gpu.describe(),
                    "seconds": {f"{n} spin={s}": t for (n, s), t in times.items()},
                    "torch": torch,
                },
                f,
                indent=1,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
