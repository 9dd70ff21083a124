"""Repetition: jacobi-1d (examples/jacobi_1d.mlir) for 100 time steps on the
wgpu backend, as one `exe.run(inputs, repeat=100)` (one submission) against 100
separate `exe.run` calls that hand A and B back in (each a submission, a
wait and a read-back). Wall time of the whole 100 steps, min/median/max of a
few repeats; both give the same arrays (checked).

    python bench/repetition.py [--steps 100] [--repeats 5]

Record the outcome in docs/performance.md ("Repetition").
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import time

os.environ.setdefault("WGPU_BACKEND_TYPE", "Vulkan")

import numpy as np  # noqa: E402

import vyre_xdsl  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    exe = vyre_xdsl.compile((ROOT / "examples" / "jacobi_1d.mlir").read_text(), backend="wgpu")
    rng = np.random.default_rng(0)
    inputs = {"A": rng.random(120, dtype=np.float32), "B": rng.random(120, dtype=np.float32)}

    def repeated():
        return exe.run(inputs, repeat=args.steps)

    def separate():
        state = dict(inputs)
        for _ in range(args.steps):
            state = exe.run(state)
        return state

    one, many = repeated(), separate()  # warm up; the same arrays either way
    for name in ("A", "B"):
        np.testing.assert_array_equal(one[name], many[name])
    print(f"adapter: {exe.adapter}")
    for label, fn in (
        (f"repeat={args.steps} (one run)", repeated),
        (f"{args.steps} runs", separate),
    ):
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            fn()
            times.append((time.perf_counter() - start) * 1e3)
        print(
            f"{label:<24} min {min(times):8.2f} ms  median {statistics.median(times):8.2f} ms  "
            f"max {max(times):8.2f} ms"
        )


if __name__ == "__main__":
    main()
