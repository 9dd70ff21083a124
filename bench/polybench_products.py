"""PolyBench's gemm and syrk as their CUDA kernels write them, through the pipeline.

The CUDA kernels of PolyBench/GPU accumulate in the output itself:

    C[i][j] *= beta;  for k: C[i][j] += alpha * A[i][k] * B[k][j]      (gemm)
    C[i][j] *= beta;  for k: C[i][j] += alpha * A[i][k] * A[j][k]      (syrk)

The pipeline's `vyre-scalar-replace` keeps `C[i][j]` in a named local across
the loop, and `vyre-tile` then tiles the product. This script times, at n x n x
n (f32, one process, GPU timestamps, interleaved after `--warmup` seconds):

- `as_written`: the program through the default pipeline (scalar replacement,
  no tiling);
- `tiled`: `vyre-scalar-replace,vyre-tile` first, then the pipeline;
- `torch.addmm(C, A, B or A^T, beta=, alpha=)` in float32 with TF32 off, CUDA
  events over 10 calls.

`--kinds gemm_zero` is gemm with `C[i][j] = 0` in place of `C[i][j] *= beta`:
the program then never loads C.

Each variant's first output is checked against float64 numpy (relative
Frobenius error below 1e-5).

    python bench/polybench_products.py --sizes 2048 4096     # on a GPU
    python bench/polybench_products.py --sizes 256 --reps 3  # on lavapipe
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from workloads import profiled_rounds, spread, tiled_module, time_torch, torch_setup  # noqa: E402

import vyre_xdsl  # noqa: E402

ALPHA, BETA = 1.5, 0.5


def product_text(kind: str, n: int, wg: int = 16) -> str:
    """The CUDA kernel's form: one invocation per output, a guard, C scaled,
    then accumulated in memory over k. `gemm_zero`: C set to zero instead of
    scaled (beta = 0 without reading C), so the program never loads C."""
    a_index = "%ra = vyre.mul %row, %n : ui32\n      %ia = vyre.add %ra, %kv : ui32"
    if kind in ("gemm", "gemm_zero"):
        b_buffer, b_decl = "B", f"  vyre.buffer @B binding 1 read_only : f32[{n * n}]\n"
        b_index = "%rb = vyre.mul %kv, %n : ui32\n      %ib = vyre.add %rb, %col : ui32"
    else:
        b_buffer, b_decl = "A", ""
        b_index = "%rb = vyre.mul %col, %n : ui32\n      %ib = vyre.add %rb, %kv : ui32"
    groups = -(-n // wg)
    start = (
        "%cb = vyre.const 0.0 : f32"
        if kind == "gemm_zero"
        else "%c = vyre.load @C[%ic] : f32\n    %cb = vyre.mul %c, %beta : f32"
    )
    return f"""vyre.program @{kind} workgroup_size [{wg}, {wg}, 1] grid [{groups}, {groups}, 1] {{
  vyre.buffer @A binding 0 read_only : f32[{n * n}]
{b_decl}  vyre.buffer @C binding 2 read_write : f32[{n * n}]
  %col = vyre.invocation_id x
  %row = vyre.invocation_id y
  %n = vyre.const {n} : ui32
  %lo = vyre.const 0 : ui32
  %alpha = vyre.const {ALPHA} : f32
  %beta = vyre.const {BETA} : f32
  %in_col = vyre.lt %col, %n : ui32
  %in_row = vyre.lt %row, %n : ui32
  %inside = vyre.and %in_col, %in_row : i1
  vyre.if %inside {{
    %rc = vyre.mul %row, %n : ui32
    %ic = vyre.add %rc, %col : ui32
    {start}
    vyre.store @C[%ic] = %cb : f32
    vyre.loop @k = %lo to %n {{
      %kv = vyre.var @k : ui32
      {a_index}
      %a = vyre.load @A[%ia] : f32
      {b_index}
      %b = vyre.load @{b_buffer}[%ib] : f32
      %p = vyre.mul %alpha, %a : f32
      %t = vyre.mul %p, %b : f32
      %cur = vyre.load @C[%ic] : f32
      %next = vyre.add %cur, %t : f32
      vyre.store @C[%ic] = %next : f32
    }}
  }}
}}
"""


def rows_for(kind: str, n: int, torch, args) -> dict:
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32) if kind != "syrk" else a.T
    c = rng.standard_normal((n, n)).astype(np.float32)
    text = product_text(kind, n)
    exes = {
        "as_written": vyre_xdsl.compile(text, backend="wgpu", adapter=args.adapter),
        "tiled": vyre_xdsl.compile(
            tiled_module(text, "vyre-scalar-replace,vyre-tile"),
            backend="wgpu",
            adapter=args.adapter,
        ),
    }
    host = {"A": a.ravel(), "C": c.ravel()} | ({"B": b.ravel()} if kind != "syrk" else {})
    beta = 0.0 if kind == "gemm_zero" else BETA
    expected = beta * c.astype(np.float64) + ALPHA * (a.astype(np.float64) @ b.astype(np.float64))
    flops = 2.0 * n * n * n
    row: dict = {"workload": kind, "n": n, "flops": flops}
    for label, exe in exes.items():
        got = exe.run(host)["C"].reshape(n, n)
        error = float(np.linalg.norm(got - expected) / np.linalg.norm(expected))
        row[label] = {"rel_error": error, "checked": error < 1e-5}
    device = {
        name: vyre_xdsl.to_device(array, adapter=args.adapter) for name, array in host.items()
    }
    times = profiled_rounds(exes, device, "C", args)
    for label in exes:
        row[label]["seconds"] = spread(times[label])
        row[label]["tflops"] = flops / statistics.median(times[label]) / 1e12
    for array in device.values():
        array.free()
    if torch is not None:
        torch.backends.cuda.matmul.allow_tf32 = False
        ta, tc = torch.from_numpy(a).cuda(), torch.from_numpy(c).cuda()
        tb = torch.from_numpy(np.ascontiguousarray(b)).cuda() if kind != "syrk" else ta.T
        row["torch"] = time_torch(
            torch, lambda t: torch.addmm(t, ta, tb, beta=beta, alpha=ALPHA), tc, args
        )
        row["torch"]["tflops"] = flops / row["torch"]["median"] / 1e12
        del ta, tb, tc
        torch.cuda.empty_cache()
    return row


def line(row: dict) -> str:
    cells = [f"{row['workload']} {row['n']}^3"]
    for label in ("as_written", "tiled", "torch"):
        entry = row.get(label)
        if entry is None:
            continue
        t = entry.get("seconds", entry)
        check = "" if label == "torch" else f", checked {entry['checked']}"
        cells.append(
            f"{label} {t['median'] * 1e3:.3f} ms ({t['min'] * 1e3:.3f}-{t['max'] * 1e3:.3f}) "
            f"{entry['tflops']:.2f} TFLOPS{check}"
        )
    if "torch" in row:
        cells.append(
            f"tiled / torch {row['tiled']['seconds']['median'] / row['torch']['median']:.2f}"
        )
    return " | ".join(cells)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[256])
    parser.add_argument(
        "--kinds", nargs="+", default=["gemm", "syrk"], choices=["gemm", "gemm_zero", "syrk"]
    )
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--warmup", type=float, default=0.5)
    parser.add_argument("--adapter", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    torch, why = torch_setup()
    if torch is None:
        print(f"no PyTorch column: {why}")
    exe = vyre_xdsl.compile(product_text("gemm", 16), backend="wgpu", adapter=args.adapter)
    print(f"adapter: {exe.gpu.describe()}")
    rows = []
    for n in args.sizes:
        for kind in args.kinds:
            row = rows_for(kind, n, torch, args)
            rows.append(row)
            print(line(row), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"adapter": exe.gpu.describe(), "rows": rows}, f, indent=1)
    failed = [r for r in rows for k in ("as_written", "tiled") if not r[k]["checked"]]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
