"""The persistent compile cache: a cold process against a warm one.

For each repeat, with a fresh empty cache directory, two fresh processes in a
row run `vyre_xdsl.compile(text, backend, fuse=True)` on the same chain of P
programs (`bench/compile_time.py`'s chain: program k computes
t{k} = t{k-1} * 1.5 + 0.25). The first fills the cache, the second reads it.
Each process reports the time of the `compile` call alone (the device is
acquired before the clock starts; the imports are not counted), and this
script the wall time of each whole process. Prints min / median / max over
the repeats and the ratio warm / cold of the medians.

    python bench/compile_cache.py --programs 300 --repeats 5 --backend wgpu
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def child(path: str, backend: str) -> None:
    """One process: compile the module in `path` and print the seconds it took."""
    import vyre_xdsl
    from vyre_xdsl.runtime import disk_cache

    if backend == "wgpu":
        from vyre_xdsl.runtime.device import gpu_device

        gpu_device()
    with open(path) as file:
        text = file.read()
    start = time.perf_counter()
    vyre_xdsl.compile(text, backend=backend, fuse=True)
    seconds = time.perf_counter() - start
    print(json.dumps({"compile_s": seconds, "stats": disk_cache.STATS}))


def one_process(path: str, backend: str, cache: str) -> tuple[float, float, dict]:
    """(compile seconds, whole-process seconds, cache statistics) of a fresh process."""
    env = dict(os.environ, VYRE_CACHE_DIR=cache)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, __file__, "--child", path, "--backend", backend],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - start
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["compile_s"], wall, report["stats"]


def spread(values: list[float]) -> str:
    return (
        f"min {min(values):7.3f}  median {statistics.median(values):7.3f}  max {max(values):7.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--programs", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--backend", default=None, help="wgpu (default when an adapter exists)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.backend is None:
        from vyre_xdsl.api import default_backend

        args.backend = default_backend()
    if args.child is not None:
        child(args.child, args.backend)
        return
    sys.path.insert(0, HERE)
    from compile_time import chain_module

    rows = {"cold": [], "warm": [], "cold_wall": [], "warm_wall": []}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"chain{args.programs}.mlir")
        with open(path, "w") as file:
            file.write(chain_module(args.programs))
        for repeat in range(args.repeats):
            cache = os.path.join(tmp, f"cache{repeat}")
            cold, cold_wall, cold_stats = one_process(path, args.backend, cache)
            warm, warm_wall, warm_stats = one_process(path, args.backend, cache)
            assert cold_stats["writes"] == 1 and warm_stats["hits"] == 1, (cold_stats, warm_stats)
            for name, value in zip(rows, (cold, warm, cold_wall, warm_wall)):
                rows[name].append(value)
            print(
                f"repeat {repeat}: compile cold {cold:.3f} s, warm {warm:.3f} s; "
                f"process cold {cold_wall:.3f} s, warm {warm_wall:.3f} s",
                flush=True,
            )
    print(
        f"\nP={args.programs} programs, fuse=True, backend {args.backend}, {args.repeats} repeats"
    )
    print(f"compile() cold process (s):  {spread(rows['cold'])}")
    print(f"compile() warm process (s):  {spread(rows['warm'])}")
    print(f"whole cold process (s):      {spread(rows['cold_wall'])}")
    print(f"whole warm process (s):      {spread(rows['warm_wall'])}")
    ratio = statistics.median(rows["warm"]) / statistics.median(rows["cold"])
    wall_ratio = statistics.median(rows["warm_wall"]) / statistics.median(rows["cold_wall"])
    print(f"warm / cold, medians: compile() {ratio:.3f}, whole process {wall_ratio:.3f}")


if __name__ == "__main__":
    main()
