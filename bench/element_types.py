"""Bytes per second of one elementwise kernel per element type, against the copy ceiling.

Each program computes `y[i] = x[i] * 3 + 7` over buffers of the same size in bytes
(2^log2_bytes each), so an 8-bit kernel has four times as many elements as an f32
one. The copy ceiling is PyTorch's `copy_` of the same number of bytes, measured in
the same process (when PyTorch has a CUDA device), and vyre's own f32 copy
kernel timed like every vyre row (one dispatch between timestamps). GPU
time comes from timestamp queries (`profile=True`), after a warm-up of at least
`--warmup` seconds; every result is checked against numpy.

    python bench/element_types.py --log2-bytes 30 --reps 7 --json out.json

Effective bandwidth = 2 x bytes per buffer / GPU time (one read, one write).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np

import vyre_xdsl
from vyre_xdsl.runtime.device import gpu_device

TYPES = {"f32": np.float32, "f16": np.float16, "ui8": np.uint8, "si8": np.int8, "ui16": np.uint16}


COPY = "f32 copy"


def program(tname: str, n: int) -> str:
    if tname == COPY:
        return f"""vyre.program @copy workgroup_size [256, 1, 1] {{
  vyre.buffer @x binding 0 read_only : f32[{n}]
  vyre.buffer @y binding 1 write_only : f32[{n}]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f32
  vyre.store @y[%i] = %v : f32
}}
"""
    three, seven = ("3.0", "7.0") if tname.startswith("f") else ("3", "7")
    return f"""vyre.program @scale workgroup_size [256, 1, 1] {{
  vyre.buffer @x binding 0 read_only : {tname}[{n}]
  vyre.buffer @y binding 1 write_only : {tname}[{n}]
  %i = vyre.invocation_id x
  %a = vyre.const {three} : {tname}
  %b = vyre.const {seven} : {tname}
  %v = vyre.load @x[%i] : {tname}
  %m = vyre.mul %v, %a : {tname}
  %r = vyre.add %m, %b : {tname}
  vyre.store @y[%i] = %r : {tname}
}}
"""


def inputs(tname: str, n: int) -> np.ndarray:
    dtype = TYPES.get(tname, np.float32)
    rng = np.random.default_rng(0)
    if np.issubdtype(dtype, np.floating):
        return rng.standard_normal(n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, n, dtype=np.int64).astype(dtype)


def expected(x: np.ndarray) -> np.ndarray:
    """numpy's own arithmetic: integers wrap at their width, floats round per op."""
    if np.issubdtype(x.dtype, np.floating):
        return (x * x.dtype.type(3) + x.dtype.type(7)).astype(x.dtype)
    return (x.astype(np.int64) * 3 + 7).astype(x.dtype)


def same(got: np.ndarray, want: np.ndarray) -> bool:
    """Integers exactly; floats within 2 ULP of the largest term (the language lets a
    GPU compiler contract `x * 3 + 7` into one fused multiply-add, which differs
    from two roundings by up to an ULP of `x * 3`, however small the result)."""
    if not np.issubdtype(want.dtype, np.floating):
        return bool(np.array_equal(got, want))
    eps = float(np.finfo(want.dtype).eps)
    x = (want.astype(np.float64) - 7) / 3  # the input, up to rounding
    scale = np.abs(3 * x) + 7  # the largest term: a contracted x * 3 + 7 rounds once
    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
    return bool(np.all(err <= 2 * eps * scale))


def time_vyre(tname: str, n: int, args) -> dict:
    exe = vyre_xdsl.compile(program(tname, n), backend="wgpu")
    x = inputs(tname, n)
    want = x if tname == COPY else expected(x)
    dx = vyre_xdsl.to_device(x, adapter=args.adapter)
    totals = []
    correct = None
    end = time.perf_counter() + args.warmup
    while True:
        out = exe.run({"x": dx}, device=True, profile=True)["y"]
        if correct is None:
            correct = same(out.numpy(), want)
        out.free()
        if time.perf_counter() >= end:
            break
    pool = gpu_device(args.adapter).pool
    created = pool.created
    for _ in range(args.reps):
        out = exe.run({"x": dx}, device=True, profile=True)["y"]
        totals.append(exe.last_profile.total_seconds)
        out.free()
    dx.free()
    # buffers the runtime made during the timed runs: 0 when the pool hands each
    # run its output back (a freshly made output buffer costs time)
    return {"seconds": totals, "correct": correct, "buffers_created": pool.created - created}


def time_torch_copy(nbytes: int, args) -> list[float] | None:
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    end = time.perf_counter() + args.warmup
    while time.perf_counter() < end:
        dst.copy_(src)
    torch.cuda.synchronize()
    times = []
    for _ in range(args.reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(10):
            dst.copy_(src)
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / 1e3 / 10)
    return times


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--log2-bytes", type=int, default=24, help="bytes per buffer, log2")
    p.add_argument("--types", nargs="+", default=list(TYPES), choices=list(TYPES))
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--warmup", type=float, default=0.5)
    p.add_argument("--adapter", default=None)
    p.add_argument("--json", default=None)
    args = p.parse_args()
    nbytes = 1 << args.log2_bytes
    moved = 2 * nbytes
    rows = {}
    copy = time_torch_copy(nbytes, args)
    if copy is not None:
        rows["torch copy_"] = {"seconds": copy, "correct": True}
    for tname in [COPY, *args.types]:
        n = nbytes // np.dtype(TYPES.get(tname, np.float32)).itemsize
        try:
            rows[tname] = time_vyre(tname, n, args)
        except Exception as error:  # an adapter without the type: a result, not a crash
            rows[tname] = {"error": f"{type(error).__name__}: {str(error).splitlines()[0][:160]}"}
    ceiling = statistics.median(copy) if copy else None
    own = statistics.median(rows[COPY]["seconds"]) if "seconds" in rows[COPY] else None
    print(f"{nbytes} bytes per buffer; effective bandwidth = {moved} bytes / GPU time")
    print(
        "| kernel | ms median (min-max) | GB/s | of torch copy_ | of vyre's copy | numpy-checked "
        "| buffers made while timing |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    failed = False
    for name, row in rows.items():
        if "error" in row:
            print(f"| {name} | {row['error']} | - | - | - | - | - |")
            continue
        t = row["seconds"]
        med = statistics.median(t)
        share = f"{ceiling / med:.0%}" if ceiling else "-"
        own_share = f"{own / med:.0%}" if own else "-"
        ok = "yes" if row["correct"] else "NO"
        failed |= not row["correct"]
        print(
            f"| {name} | {med * 1e3:.3f} ({min(t) * 1e3:.3f}-{max(t) * 1e3:.3f}) | "
            f"{moved / med / 1e9:.4g} | {share} | {own_share} | {ok} | "
            f"{row.get('buffers_created', '-')} |"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"bytes_per_buffer": nbytes, "rows": rows}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
