"""Compile time of `vyre-opt --fuse --lower -t wgsl` against parse + print.

For P = 10 .. 1000 programs (an elementwise chain: program k reads t{k-1} and
writes t{k}), times in one process, best of --reps:

  parse+print   vyre-opt FILE            (parse, verify, print)
  pipeline      vyre-opt --fuse --lower -t wgsl FILE

and reports the ratio pipeline / (parse+print) and the growth factor when P doubles.

    python bench/compile_time.py --programs 10 20 50 100 200 500 1000

`--fdtd STEPS ...` times PolyBench fdtd-2d unrolled over STEPS time steps (3
programs per step, `t` a constant in each) through `vyre-opt --fuse` and
`vyre-opt --fuse --lower -t wgsl`, each --reps times, and prints min/median/max:

    python bench/compile_time.py --fdtd 25 50 100 500 --reps 3

`--compile P ...` times the megakernel planner and target compilation
(`vyre-compile`, in a subprocess: CPU time of the child) on the elementwise
chain of P programs, each --reps times, and prints min/median/max; the
targets are 200 programs in 15 s and 1,500 in 60 s:

    python bench/compile_time.py --compile 200 1500 --reps 3
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import statistics
import subprocess
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


def fdtd2d_module(steps: int, nx: int = 32, ny: int = 32) -> str:
    """PolyBench fdtd-2d unrolled over `steps` time steps: 3 programs per step on
    `nx` x `ny` arrays flattened to 1-D (element i * ny + j), `t` a constant:

      ey[0][j] = fict[t];   ey[i][j] -= 0.5 * (hz[i][j] - hz[i-1][j])    (i > 0)
      ex[i][j] -= 0.5 * (hz[i][j] - hz[i][j-1])                           (j > 0)
      hz[i][j] -= 0.7 * (ex[i][j+1] - ex[i][j] + ey[i+1][j] - ey[i][j])   (i < nx-1, j < ny-1)
    """
    n = nx * ny
    decl = {
        "ex": f"vyre.buffer @ex binding 0 read_write : f32[{n}]",
        "ey": f"vyre.buffer @ey binding 1 read_write : f32[{n}]",
        "hz": f"vyre.buffer @hz binding 2 read_write : f32[{n}]",
        "fict": f"vyre.buffer @fict binding 3 read_only : f32[{max(steps, 1)}]",
    }
    head = f"""  %i = vyre.invocation_id x
  %ny = vyre.const {ny} : ui32
  %one = vyre.const 1 : ui32
  %zero = vyre.const 0 : ui32
  %row = vyre.div %i, %ny : ui32
  %col = vyre.mod %i, %ny : ui32"""
    out = []
    for t in range(steps):
        out.append(
            f"""vyre.program @ey{t} workgroup_size [64, 1, 1] {{
  {decl["ey"]}
  {decl["hz"]}
  {decl["fict"]}
{head}
  %first = vyre.eq %row, %zero : ui32
  vyre.if %first {{
    %t = vyre.const {t} : ui32
    %f = vyre.load @fict[%t] : f32
    vyre.store @ey[%i] = %f : f32
  }} else {{
    %up = vyre.sub %i, %ny : ui32
    %e = vyre.load @ey[%i] : f32
    %h = vyre.load @hz[%i] : f32
    %hu = vyre.load @hz[%up] : f32
    %d = vyre.sub %h, %hu : f32
    %half = vyre.const 0.5 : f32
    %s = vyre.mul %half, %d : f32
    %r = vyre.sub %e, %s : f32
    vyre.store @ey[%i] = %r : f32
  }}
}}
vyre.program @ex{t} workgroup_size [64, 1, 1] {{
  {decl["ex"]}
  {decl["hz"]}
{head}
  %inside = vyre.gt %col, %zero : ui32
  vyre.if %inside {{
    %left = vyre.sub %i, %one : ui32
    %e = vyre.load @ex[%i] : f32
    %h = vyre.load @hz[%i] : f32
    %hl = vyre.load @hz[%left] : f32
    %d = vyre.sub %h, %hl : f32
    %half = vyre.const 0.5 : f32
    %s = vyre.mul %half, %d : f32
    %r = vyre.sub %e, %s : f32
    vyre.store @ex[%i] = %r : f32
  }}
}}
vyre.program @hz{t} workgroup_size [64, 1, 1] {{
  {decl["ex"]}
  {decl["ey"]}
  {decl["hz"]}
{head}
  %last_row = vyre.const {nx - 1} : ui32
  %last_col = vyre.const {ny - 1} : ui32
  %in_rows = vyre.lt %row, %last_row : ui32
  %in_cols = vyre.lt %col, %last_col : ui32
  %inside = vyre.and %in_rows, %in_cols : i1
  vyre.if %inside {{
    %right = vyre.add %i, %one : ui32
    %down = vyre.add %i, %ny : ui32
    %h = vyre.load @hz[%i] : f32
    %exr = vyre.load @ex[%right] : f32
    %ex0 = vyre.load @ex[%i] : f32
    %eyd = vyre.load @ey[%down] : f32
    %ey0 = vyre.load @ey[%i] : f32
    %dx = vyre.sub %exr, %ex0 : f32
    %dy = vyre.sub %eyd, %ey0 : f32
    %sum = vyre.add %dx, %dy : f32
    %c = vyre.const 0.7 : f32
    %s = vyre.mul %c, %sum : f32
    %r = vyre.sub %h, %s : f32
    vyre.store @hz[%i] = %r : f32
  }}
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


def times_opt(argv: list[str], reps: int) -> tuple[list[float], list[float]]:
    """Wall and CPU times of `reps` runs of vyre-opt in this process (CPU time
    does not grow when other work on a shared machine starves the process)."""
    wall, cpu = [], []
    for _ in range(reps):
        start, start_cpu = time.perf_counter(), time.process_time()
        with contextlib.redirect_stdout(io.StringIO()):
            VyreOptMain(args=argv).run()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return wall, cpu


def spread(times: list[float]) -> str:
    return f"min {min(times):6.2f} median {statistics.median(times):6.2f} max {max(times):6.2f} s"


def fdtd_rows(steps: list[int], reps: int, tmp: str) -> None:
    for count in steps:
        path = os.path.join(tmp, f"fdtd{count}.mlir")
        with open(path, "w") as f:
            f.write(fdtd2d_module(count))
        for argv in (["--fuse"], ["--fuse", "--lower", "-t", "wgsl"]):
            wall, cpu = times_opt([path, *argv], reps)
            print(
                f"fdtd-2d {count} steps ({3 * count} programs) {' '.join(argv):24s} "
                f"CPU {spread(cpu)}  wall {spread(wall)}",
                flush=True,
            )


def compile_rows(counts: list[int], reps: int, tmp: str) -> None:
    for count in counts:
        path = os.path.join(tmp, f"chain{count}.mlir")
        with open(path, "w") as f:
            f.write(chain_module(count))
        wall, cpu = [], []
        for _ in range(reps):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "vyre_xdsl.tools.vyre_compile", path, "-o", path + ".vkb"],
                check=True,
                capture_output=True,
            )
            wall.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        print(
            f"vyre-compile chain of {count} programs  CPU {spread(cpu)}  wall {spread(wall)}",
            flush=True,
        )


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--programs", type=int, nargs="+", default=[10, 20, 50, 100, 200, 500, 1000])
    p.add_argument("--fdtd", type=int, nargs="+", default=None, help="fdtd-2d time steps")
    p.add_argument("--compile", type=int, nargs="+", default=None, help="vyre-compile chains")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--json", default=None)
    args = p.parse_args()
    if args.fdtd or args.compile:
        with tempfile.TemporaryDirectory() as tmp:
            if args.fdtd:
                fdtd_rows(args.fdtd, args.reps, tmp)
            if args.compile:
                compile_rows(args.compile, args.reps, tmp)
        return
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
