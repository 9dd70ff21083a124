"""Does a kernel run slower when its output buffer was just allocated?

vyre's f32 copy kernel (`bench/element_types.py`) over buffers of 2^LOG2_BYTES
bytes, timed with GPU timestamps in two ways, interleaved run by run:

- *pooled*: the output is freed after each run, so the runtime's buffer pool hands
  the next run the same buffer;
- *fresh*: every output of the timed runs is kept alive until the end, so every
  run writes into a buffer allocated for it (what the pool used to do for a
  1 GiB output, whatever the caller freed).

```
python bench/fresh_output.py --log2-bytes 30 --reps 9
```

Prints the median (min-max) GPU time of each and their ratio; every output is
checked against the input, and the buffers the pool made are counted, so that
the fresh runs are known to have allocated.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
from element_types import COPY, program

import vyre_xdsl
from vyre_xdsl.runtime.device import gpu_device


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--log2-bytes", type=int, default=24)
    p.add_argument("--reps", type=int, default=9)
    p.add_argument("--warmup", type=float, default=2.0, help="seconds of runs before timing")
    p.add_argument("--adapter", default=None)
    args = p.parse_args()
    n = (1 << args.log2_bytes) // 4
    gpu = gpu_device(args.adapter)
    exe = vyre_xdsl.compile(program(COPY, n), backend="wgpu")
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    dx = vyre_xdsl.to_device(x, adapter=args.adapter)

    def run():
        out = exe.run({"x": dx}, device=True, profile=True)["y"]
        return out, exe.last_profile.total_seconds

    first, _ = run()
    correct = bool(np.array_equal(first.numpy(), x))
    first.free()
    end = time.perf_counter() + args.warmup
    while time.perf_counter() < end:
        run()[0].free()
    times: dict[str, list[float]] = {"pooled": [], "fresh": []}
    made = {"pooled": 0, "fresh": 0}
    kept = []  # every fresh output, alive until the end: no run can have its buffer
    held = None  # the pooled output, alive during the fresh run, freed just before its own
    for _ in range(args.reps):
        for mode in ("pooled", "fresh"):
            if mode == "pooled" and held is not None:
                held.free()
            before = gpu.pool.created
            out, seconds = run()
            made[mode] += gpu.pool.created - before
            times[mode].append(seconds)
            if mode == "fresh":
                kept.append(out)
            else:
                held = out
    correct = correct and all(np.array_equal(out.numpy(), x) for out in (held, kept[-1]))
    for out in [held, *kept]:
        out.free()
    dx.free()
    print(f"{gpu.describe()}; f32 copy of 2^{args.log2_bytes} bytes per buffer")
    for mode, values in times.items():
        print(
            f"{mode:6s}: GPU ms median {statistics.median(values) * 1e3:.3f} "
            f"({min(values) * 1e3:.3f}-{max(values) * 1e3:.3f}) of {len(values)}, "
            f"buffers made while timing {made[mode]}"
        )
    ratio = statistics.median(times["fresh"]) / statistics.median(times["pooled"])
    print(f"fresh / pooled {ratio:.3f}; numpy-checked: {'yes' if correct else 'NO'}")
    return 0 if correct else 1


if __name__ == "__main__":
    sys.exit(main())
