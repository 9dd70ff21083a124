"""What keeps the fused 8-stage chain's kernel above the copy ceiling?

Takes the WGSL that vyre generates for the fused `chain8` workload (bench/workloads.py,
`vyre_xdsl.compile(text, fuse=True)`) and hand-edited variants of it, and times each
through raw wgpu with GPU timestamp queries (batches of `--batch` dispatches in one
compute pass, median over `--rounds` rounds, variants interleaved round by round after
`--warmup` seconds of back-to-back work). Where PyTorch with CUDA is present, the same
chain under `torch.compile` and a device copy are timed in the same process (CUDA
events). Every variant's output is checked against numpy.

    python bench/chain_kernel_variants.py --log2n 28            # on the H200
    python bench/chain_kernel_variants.py --log2n 20 --rounds 3 # on lavapipe

Variants:
  vyre       the generated kernel, as it is
  nosel      the load without its range select (the grid covers the buffer exactly)
  vecops     the eight stages as vec4 arithmetic (`v = v * c + d` on vec4<f32>)
  fma        the eight stages as `fma(v, c, d)` on vec4<f32>
  x2         vecops, two vec4 per invocation (half the grid)
  copy       `o = a` on vec4 (the ceiling of a kernel that reads and writes once)

`--wgsl NAME=PATH` adds the WGSL in PATH as variant NAME, launched on the generated
kernel's grid (e.g. a kernel an earlier version of the pipeline printed, kept under
bench/kernels/).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gpu_chains import COEFFS  # noqa: E402
from workloads import make  # noqa: E402

import vyre_xdsl  # noqa: E402
from vyre_xdsl.dispatch import launch_grid  # noqa: E402

WG = 256
HEAD = """@group(0) @binding(0) var<storage, read> b_x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> b_out: array<vec4<f32>>;
"""
SIG = (
    "@compute @workgroup_size(256, 1, 1)\n"
    "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,"
    " @builtin(num_workgroups) nwg: vec3<u32>) {\n"
    "  let i = (wid.x + wid.y * nwg.x) * 256u + lid.x;\n"
)


def stages(var: str, form: str) -> str:
    lines = []
    for c, d in COEFFS[:8]:
        c32, d32 = float(np.float32(c)), float(np.float32(d))
        if form == "fma":
            lines.append(f"  {var} = fma({var}, vec4<f32>({c32!r}f), vec4<f32>({d32!r}f));")
        else:
            lines.append(f"  {var} = {var} * {c32!r}f + {d32!r}f;")
    return "\n".join(lines)


def hand_kernel(n4: int, form: str, per: int) -> str:
    body = [HEAD, SIG]
    for k in range(per):
        index = f"i * {per}u + {k}u" if per > 1 else "i"
        body.append(f"  let j{k} = {index};\n  if (j{k} < {n4}u) {{\n")
        if form == "copy":
            body.append(f"    b_out[j{k}] = b_x[j{k}];\n  }}\n")
            continue
        body.append(f"  var v{k} = b_x[j{k}];\n{stages(f'v{k}', form)}\n")
        body.append(f"    b_out[j{k}] = v{k};\n  }}\n")
    body.append("}\n")
    return "".join(body)


def variants(kernel, n4: int) -> dict[str, tuple[str, tuple[int, int, int]]]:
    generated = kernel.wgsl
    grid = kernel.static_grid
    out = {"vyre": (generated, grid)}
    limit = n4 - 1
    selected = f"select(vec4<f32>(), b_x[min(vyre_invocation, {limit}u)], vyre_invocation < {n4}u)"
    if selected in generated:
        out["nosel"] = (generated.replace(selected, "b_x[vyre_invocation]"), grid)
    out["vecops"] = (hand_kernel(n4, "mul_add", 1), launch_grid(n4, (WG, 1, 1), (WG, 1, 1)))
    out["fma"] = (hand_kernel(n4, "fma", 1), launch_grid(n4, (WG, 1, 1), (WG, 1, 1)))
    half = (n4 + 1) // 2
    out["x2"] = (hand_kernel(n4, "mul_add", 2), launch_grid(half, (WG, 1, 1), (WG, 1, 1)))
    out["copy"] = (hand_kernel(n4, "copy", 1), launch_grid(n4, (WG, 1, 1), (WG, 1, 1)))
    return out


def pipeline_and_group(device, source: str, x, out, nbytes: int) -> tuple:
    """The compute pipeline of the WGSL `source` (entry `main`) and its bind group:
    `x` at binding 0 and `out` at binding 1, `nbytes` of each."""
    module = device.create_shader_module(code=source)
    pipeline = device.create_compute_pipeline(
        layout="auto", compute={"module": module, "entry_point": "main"}
    )
    group = device.create_bind_group(
        layout=pipeline.get_bind_group_layout(0),
        entries=[
            {"binding": 0, "resource": {"buffer": x, "offset": 0, "size": nbytes}},
            {"binding": 1, "resource": {"buffer": out, "offset": 0, "size": nbytes}},
        ],
    )
    return pipeline, group


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2n", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--json", default=None)
    parser.add_argument(
        "--wgsl", action="append", default=[], metavar="NAME=PATH", help="an extra variant"
    )
    args = parser.parse_args()
    import wgpu

    n = 1 << args.log2n
    n4 = n // 4
    work = make("chain8", n, n)
    exe = vyre_xdsl.compile(work.text, backend="wgpu", fuse=True)
    (kernel,) = exe.compiled.kernels
    gpu = exe.gpu
    device = gpu.device
    adapter = gpu.describe()
    print(f"adapter: {adapter}; n = 2^{args.log2n}; generated grid {kernel.static_grid}")
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    x = device.create_buffer_with_data(data=work.x, usage=usage)
    out = device.create_buffer(size=n * 4, usage=usage)
    query = device.create_query_set(type=wgpu.QueryType.timestamp, count=2)
    resolve = device.create_buffer(
        size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
    )
    period = gpu.timestamp_period_ns
    pipelines = {}
    chosen = variants(kernel, n4)
    for extra in args.wgsl:
        name, _, path = extra.partition("=")
        with open(path) as f:
            chosen[name] = (f.read(), kernel.static_grid)
    for name, (source, grid) in chosen.items():
        pipelines[name] = (*pipeline_and_group(device, source, x, out, n * 4), grid)

    def batch(name: str, count: int) -> float:
        pipeline, group, grid = pipelines[name]
        encoder = device.create_command_encoder()
        compute = encoder.begin_compute_pass(
            timestamp_writes={
                "query_set": query,
                "beginning_of_pass_write_index": 0,
                "end_of_pass_write_index": 1,
            }
        )
        compute.set_pipeline(pipeline)
        compute.set_bind_group(0, group)
        for _ in range(count):
            compute.dispatch_workgroups(*grid)
        compute.end()
        encoder.resolve_query_set(query, 0, 2, resolve, 0)
        device.queue.submit([encoder.finish()])
        stamps = np.frombuffer(device.queue.read_buffer(resolve), dtype=np.uint64)
        return float(stamps[1] - stamps[0]) * period * 1e-9 / count

    correct = {}
    for name in pipelines:
        batch(name, 1)
        got = np.frombuffer(device.queue.read_buffer(out), dtype=np.float32)
        correct[name] = (
            bool(work.check(got)) if name != "copy" else bool(np.array_equal(got, work.x))
        )
    end = time.perf_counter() + args.warmup
    while time.perf_counter() < end:
        for name in pipelines:
            batch(name, args.batch)
    times: dict[str, list[float]] = {name: [] for name in pipelines}
    for _ in range(args.rounds):
        for name in pipelines:
            times[name].append(batch(name, args.batch))
    torch_times = torch_rows(work, args)
    rows = {}
    print("\n| variant | ms median (min-max) | TB/s | correct |\n| --- | --- | --- | --- |")
    for name, values in {**times, **torch_times}.items():
        med = statistics.median(values)
        rows[name] = {"median": med, "min": min(values), "max": max(values), "all": values}
        tbs = 2 * n * 4 / med / 1e12
        ok = correct.get(name, "-")
        print(
            f"| {name} | {med * 1e3:.3f} ({min(values) * 1e3:.3f}-{max(values) * 1e3:.3f}) "
            f"| {tbs:.2f} | {ok} |"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"adapter": adapter, "log2n": args.log2n, "rows": rows, "correct": correct}, f
            )
    return 0 if all(correct.values()) else 1


def compiled_chain(work):
    """(the chain's input on the GPU, `torch.compile` of the 8-stage chain), or None
    without PyTorch on CUDA."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    from workloads import chain_eager

    return torch.from_numpy(work.x).cuda(), torch.compile(chain_eager(8))


def torch_rows(work, args) -> dict[str, list[float]]:
    chain = compiled_chain(work)
    if chain is None:
        return {}
    import torch

    t, compiled = chain
    dst = torch.empty_like(t)
    fns = {"torch.compile": lambda: compiled(t), "torch copy_": lambda: dst.copy_(t)}
    return cuda_times(fns, args)


def cuda_times(fns: dict, args) -> dict[str, list[float]]:
    """Seconds per call of each of `fns` (name -> a PyTorch call on the GPU), by
    CUDA events: `args.warmup` seconds of back-to-back calls, then `args.rounds`
    rounds of `args.batch` calls."""
    import torch

    out: dict[str, list[float]] = {}
    for name, fn in fns.items():
        fn()
        torch.cuda.synchronize()
        end = time.perf_counter() + args.warmup
        while time.perf_counter() < end:
            fn()
        torch.cuda.synchronize()
        values = []
        for _ in range(args.rounds):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(args.batch):
                fn()
            stop.record()
            torch.cuda.synchronize()
            values.append(start.elapsed_time(stop) * 1e-3 / args.batch)
        out[name] = values
    return out


if __name__ == "__main__":
    raise SystemExit(main())
