"""Memory of a long-lived process: resident set size while distinct programs go
through `vyre_xdsl.run` on the wgpu backend.

Program k computes out = x * (k + 1) + 0.5 over 1024 f32 (a distinct text, so a
distinct compile, WGSL module and pipeline each time); each result is checked
against numpy. The resident set size (VmRSS of /proc/self/status) is printed
after the first --warm programs and every --every programs after, and the
growth after the warm-up is the figure of merit (bounded caches: it levels off).
The runtime's cache sizes at the end are printed too.

    python bench/memory_growth.py --programs 600 --warm 100
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

import vyre_xdsl
from vyre_xdsl.runtime import gpu_device

N = 1024


def program(k: int) -> str:
    return f"""vyre.program @scale workgroup_size [64, 1, 1] {{
  vyre.buffer @x binding 0 read_only : f32[{N}]
  vyre.buffer @out binding 1 write_only : f32[{N}]
  %i = vyre.invocation_id x
  %c = vyre.const {float(k + 1)!r} : f32
  %d = vyre.const 0.5 : f32
  %v = vyre.load @x[%i] : f32
  %m = vyre.mul %v, %c : f32
  %r = vyre.add %m, %d : f32
  vyre.store @out[%i] = %r : f32
}}
"""


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def measure(programs: int, warm: int, every: int) -> dict:
    x = np.linspace(-1, 1, N, dtype=np.float32)
    samples = []
    for k in range(programs):
        out = vyre_xdsl.run(program(k), {"x": x}, backend="wgpu")["out"]
        assert np.array_equal(out, x * np.float32(k + 1) + np.float32(0.5)), k
        done = k + 1
        if done == warm or (done > warm and (done - warm) % every == 0):
            samples.append((done, rss_mb()))
            print(f"after {done} programs: RSS {samples[-1][1]:.1f} MB", flush=True)
    gpu = gpu_device()
    return {
        "samples": samples,
        "growth_after_warm_mb": samples[-1][1] - samples[0][1],
        "pipelines": len(gpu.pipelines),
        "run_plans": len(gpu.run_plans),
        "run_cache": vyre_xdsl.cache_info().size,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=600)
    parser.add_argument("--warm", type=int, default=100)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    print(f"adapter: {gpu_device().describe()}", flush=True)
    result = measure(args.programs, args.warm, args.every)
    print(
        f"RSS growth from program {args.warm} to {args.programs}: "
        f"{result['growth_after_warm_mb']:.1f} MB; kept: {result['pipelines']} pipelines, "
        f"{result['run_plans']} run plans, {result['run_cache']} run() executables"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
