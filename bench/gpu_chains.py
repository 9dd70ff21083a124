"""GPU time of K-stage elementwise chains: vyre fused, vyre unfused, PyTorch eager,
torch.compile, and the copy ceiling, all in one run (issue 8, item 1).

Stage k computes t{k} = t{k-1} * c_k + d_k over N f32 (t0 = x, the last stage
writes `out`). vyre compiles the chain with its own pipeline (`vyre-fuse`,
`vyre-lower`, the WGSL printer) and the kernels run through wgpu; every kernel
of a variant is dispatched back to back in one compute pass and timed with GPU
timestamp queries, after a warm-up of at least 0.5 s of GPU work (the H200 only
reaches full clocks under sustained load: docs/performance.md). PyTorch is
timed with CUDA events after the same kind of warm-up. Effective bandwidth is
8N bytes (read x, write out) over the time, for every variant, so the numbers
compare directly with the copy ceiling.

    python bench/gpu_chains.py --log2n 26 28 --stages 1 4 8 --json out.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np
import wgpu

from vyre_xdsl.api import fuse_module
from vyre_xdsl.backends.wgsl import compile_module
from vyre_xdsl.context import parse_module
from vyre_xdsl.runtime.device import gpu_device

COEFFS = [(1.0 + 0.001 * (k % 64), 0.5 - 0.01 * (k % 64)) for k in range(1024)]


def chain_text(stages: int, n: int) -> str:
    out = []
    for k in range(stages):
        src = "x" if k == 0 else f"t{k}"
        dst = "out" if k == stages - 1 else f"t{k + 1}"
        c, d = COEFFS[k]
        out.append(
            f"""vyre.program @stage{k} workgroup_size [256, 1, 1] {{
  vyre.buffer @{src} binding 0 read_only : f32[{n}]
  vyre.buffer @{dst} binding 1 write_only : f32[{n}]
  %i = vyre.invocation_id x
  %c = vyre.const {c!r} : f32
  %d = vyre.const {d!r} : f32
  %v = vyre.load @{src}[%i] : f32
  %m = vyre.mul %v, %c : f32
  %r = vyre.add %m, %d : f32
  vyre.store @{dst}[%i] = %r : f32
}}"""
        )
    return "\n".join(out) + "\n"


def numpy_chain(x: np.ndarray, stages: int) -> np.ndarray:
    t = x
    for k in range(stages):
        c, d = COEFFS[k]
        t = (t * np.float32(c) + np.float32(d)).astype(np.float32)
    return t


class Timer:
    def __init__(self, device):
        self.device = device
        self.qs = device.create_query_set(type="timestamp", count=2)
        self.buf = device.create_buffer(
            size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
        )

    def run(self, record, repeats: int) -> float:
        """GPU seconds of `repeats` back-to-back executions of `record(pass)` in one pass."""
        enc = self.device.create_command_encoder()
        p = enc.begin_compute_pass(
            timestamp_writes={
                "query_set": self.qs,
                "beginning_of_pass_write_index": 0,
                "end_of_pass_write_index": 1,
            }
        )
        for _ in range(repeats):
            record(p)
        p.end()
        enc.resolve_query_set(self.qs, 0, 2, self.buf, 0)
        self.device.queue.submit([enc.finish()])
        t = np.frombuffer(self.device.queue.read_buffer(self.buf), dtype=np.uint64)
        return float(t[1] - t[0]) * 1e-9

    def measure(self, record, warmup: float, reps: int, repeats: int = 10) -> float:
        warm = 0.0
        while warm < warmup:
            warm += self.run(record, repeats)
        return statistics.median(self.run(record, repeats) / repeats for _ in range(reps))


def vyre_variant(device, timer, text: str, fuse: bool, x: np.ndarray, n: int, args):
    module = parse_module(text)
    if fuse:
        module = fuse_module(module)
    kernels = compile_module(module)
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    buffers = {}

    def buffer(name):
        if name not in buffers:
            buffers[name] = device.create_buffer(size=4 * n, usage=usage)
        return buffers[name]

    device.queue.write_buffer(buffer("x"), 0, x)
    steps = []
    for kernel in kernels:
        pipe = device.create_compute_pipeline(
            layout="auto",
            compute={
                "module": device.create_shader_module(code=kernel.wgsl),
                "entry_point": kernel.entry_point,
            },
        )
        groups = {}
        for b in kernel.bindings:
            groups.setdefault(b.group, []).append(
                {
                    "binding": b.slot,
                    "resource": {"buffer": buffer(b.name), "offset": 0, "size": 4 * n},
                }
            )
        bgs = [
            (g, device.create_bind_group(layout=pipe.get_bind_group_layout(g), entries=e))
            for g, e in sorted(groups.items())
        ]
        steps.append((pipe, bgs, kernel.dispatch_grid({})))

    def record(p):
        for pipe, bgs, grid in steps:
            p.set_pipeline(pipe)
            for g, bg in bgs:
                p.set_bind_group(g, bg)
            p.dispatch_workgroups(*grid)

    t = timer.measure(record, args.warmup, args.reps)
    out = np.frombuffer(device.queue.read_buffer(buffer("out")), dtype=np.float32)
    ok = bool(np.allclose(out, numpy_chain(x, args.current_stages), rtol=1e-5, atol=1e-6))
    forms = sorted({k.elements_per_invocation for k in kernels})
    for b in buffers.values():
        b.destroy()
    return t, ok, len(kernels), forms


def torch_variants(x: np.ndarray, stages: int, args) -> dict[str, float]:
    try:
        import torch
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    tx = torch.from_numpy(x).cuda()
    out = torch.empty_like(tx)

    def eager(t):
        for k in range(stages):
            c, d = COEFFS[k]
            t = t * c + d
        return t

    def timed(fn):
        end = time.perf_counter() + args.warmup
        while time.perf_counter() < end:
            fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(args.reps):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(10):
                fn()
            e.record()
            torch.cuda.synchronize()
            ts.append(s.elapsed_time(e) / 1e3 / 10)
        return statistics.median(ts)

    result = {"torch_copy": timed(lambda: out.copy_(tx)), "torch_eager": timed(lambda: eager(tx))}
    try:
        compiled = torch.compile(eager)
        compiled(tx)
        ref = eager(tx)
        assert torch.allclose(compiled(tx), ref, rtol=1e-5, atol=1e-6)
        result["torch_compile"] = timed(lambda: compiled(tx))
    except Exception as error:  # no compiler toolchain: say so
        print(
            f"  torch.compile unavailable: {type(error).__name__}: {str(error).splitlines()[0][:120]}"
        )
    return result


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--log2n", type=int, nargs="+", default=[22])
    p.add_argument("--stages", type=int, nargs="+", default=[1, 4, 8])
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--warmup", type=float, default=0.5)
    p.add_argument("--json", default=None)
    p.add_argument("--no-torch", action="store_true")
    args = p.parse_args()
    gpu = gpu_device()
    device = gpu.device
    timer = Timer(device)
    print(f"adapter: {gpu.adapter.info['device']} ({gpu.adapter.info['backend_type']})")
    rows = []
    for log2n in args.log2n:
        n = 1 << log2n
        x = np.random.default_rng(log2n).standard_normal(n).astype(np.float32)
        for stages in args.stages:
            args.current_stages = stages
            text = chain_text(stages, n)
            row = {"log2n": log2n, "stages": stages}
            for label, fuse in (("vyre_fused", True), ("vyre_unfused", False)):
                t, ok, count, forms = vyre_variant(device, timer, text, fuse, x, n, args)
                row[label] = t
                row[label + "_kernels"] = count
                row[label + "_correct"] = ok
                row[label + "_forms"] = forms
            if not args.no_torch:
                row.update(torch_variants(x, stages, args))
            rows.append(row)
            line = f"2^{log2n} K={stages}:"
            for key in ("vyre_fused", "vyre_unfused", "torch_eager", "torch_compile", "torch_copy"):
                if key in row:
                    line += (
                        f"  {key} {row[key] * 1e3:7.3f} ms ({8 * n / row[key] / 1e12:5.2f} TB/s)"
                    )
            print(
                line
                + f"  [fused kernels={row['vyre_fused_kernels']} vec{max(row['vyre_fused_forms'])} correct={row['vyre_fused_correct'] and row['vyre_unfused_correct']}]",
                flush=True,
            )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"adapter": gpu.adapter.info["device"], "rows": rows}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
