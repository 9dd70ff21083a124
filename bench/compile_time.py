"""Compile time of `vyre-opt --fuse --lower -t wgsl` against parse + print (issue 8, item 3).

For P = 10 .. 1000 programs (an elementwise chain: program k reads t{k-1} and
writes t{k}), times in one process, best of --reps:

  parse+print   vyre-opt FILE            (parse, verify, print)
  pipeline      vyre-opt --fuse --lower -t wgsl FILE

and reports the ratio pipeline / (parse+print) and the growth factor when P doubles.

    python bench/compile_time.py --programs 10 20 50 100 200 500 1000
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time

from vyre_xdsl.tools.vyre_opt import VyreOptMain


def chain_module(programs: int, n: int = 4096) -> str:
    """P programs; program k computes t{k} = t{k-1} * 1.5 + 0.25 (t0 is the input x)."""
    out = []
    for k in range(programs):
        src = "x" if k == 0 else f"t{k}"
        dst = f"t{k + 1}"
        out.append(
            f"""vyre.program @stage{k} workgroup_size [64, 1, 1] {{
  vyre.buffer @{src} binding 0 read_only : f32[{n}]
  vyre.buffer @{dst} binding 1 write_only : f32[{n}]
  %i = vyre.invocation_id x
  %m = vyre.const 1.5 : f32
  %c = vyre.const 0.25 : f32
  %v = vyre.load @{src}[%i] : f32
  %p = vyre.mul %v, %m : f32
  %r = vyre.add %p, %c : f32
  vyre.store @{dst}[%i] = %r : f32
}}"""
        )
    return "\n".join(out) + "\n"


def time_opt(argv: list[str], reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        sink = io.StringIO()
        start = time.perf_counter()
        with contextlib.redirect_stdout(sink):
            VyreOptMain(args=argv).run()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--programs", type=int, nargs="+", default=[10, 20, 50, 100, 200, 500, 1000])
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--json", default=None)
    args = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for count in args.programs:
            path = os.path.join(tmp, f"chain{count}.mlir")
            with open(path, "w") as f:
                f.write(chain_module(count))
            base = time_opt([path], args.reps)
            full = time_opt([path, "--fuse", "--lower", "-t", "wgsl"], args.reps)
            rows.append(
                {"programs": count, "parse_print_s": base, "pipeline_s": full, "ratio": full / base}
            )
            print(
                f"P={count:5d}  parse+print {base:8.3f} s  pipeline {full:8.3f} s  ratio {full / base:5.2f}",
                flush=True,
            )
    for prev, cur in zip(rows, rows[1:]):
        if cur["programs"] == 2 * prev["programs"]:
            print(
                f"P {prev['programs']} -> {cur['programs']}: pipeline grows {cur['pipeline_s'] / prev['pipeline_s']:.2f}x"
            )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
