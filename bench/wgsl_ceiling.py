"""What caps hand-written WGSL below the memory-bandwidth ceiling? (issue 8, step 1)

Runs a set of hand-written WGSL variants of `o = a * 2 + b` over N f32 elements
through wgpu on whatever adapter is present, times each with GPU timestamp
queries (median of several dispatches), and prints effective bandwidth
(bytes read + written per second). Where PyTorch with CUDA is present it also
measures the device-to-device copy ceiling and the same expression in PyTorch.

    python bench/wgsl_ceiling.py --log2n 28            # on the H200
    python bench/wgsl_ceiling.py --log2n 22 --reps 3   # on lavapipe

Variants (each answers one question):
  scalar        one f32 per invocation, 256 per workgroup           (baseline)
  vec4          one vec4<f32> per invocation                        (access width)
  vec4_gs       vec4, grid-stride loop over a fixed grid            (dispatch shape)
  vec4_x4       vec4, four independent vec4 per invocation          (memory-level parallelism)
  vec4_fixed    vec4 over fixed-size arrays, index masked in range  (naga bounds checks)
  copy_wgsl     o = a, vec4                                         (kernel copy)
  copy_buffer   copy_buffer_to_buffer                               (DMA copy, no shader)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

import numpy as np
import wgpu

WG = 256


def shaders(n4: int, grid_stride_groups: int) -> dict[str, tuple[str, int, int]]:
    """name -> (wgsl, invocations, elements per binding as vec4 count)."""
    head_s = """@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> o: array<f32>;
"""
    head_v = """@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> o: array<vec4<f32>>;
"""
    head_fixed = f"""@group(0) @binding(0) var<storage, read> a: array<vec4<f32>, {n4}>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>, {n4}>;
@group(0) @binding(2) var<storage, read_write> o: array<vec4<f32>, {n4}>;
"""
    idx = "let i = gid.x + gid.y * nwg.x * {wg}u;"
    sig = f"@compute @workgroup_size({WG}) fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>)"
    n = n4 * 4
    out = {
        "scalar": (
            head_s
            + sig
            + " {\n  "
            + idx.format(wg=WG)
            + f"\n  if (i < {n}u) {{ o[i] = a[i] * 2.0 + b[i]; }}\n}}\n",
            n,
            n4,
        ),
        "vec4": (
            head_v
            + sig
            + " {\n  "
            + idx.format(wg=WG)
            + f"\n  if (i < {n4}u) {{ o[i] = a[i] * 2.0 + b[i]; }}\n}}\n",
            n4,
            n4,
        ),
        "vec4_gs": (
            head_v
            + sig
            + " {\n  var i = gid.x;\n  let stride = nwg.x * "
            + str(WG)
            + f"u;\n  loop {{\n    if (i >= {n4}u) {{ break; }}\n    o[i] = a[i] * 2.0 + b[i];\n    i = i + stride;\n  }}\n}}\n",
            grid_stride_groups * WG,
            n4,
        ),
        "vec4_x4": (
            head_v
            + sig
            + " {\n  "
            + idx.format(wg=WG)
            + f"\n  let q = {n4 // 4}u;\n  if (i < q) {{\n"
            "    let a0 = a[i]; let a1 = a[i + q]; let a2 = a[i + 2u * q]; let a3 = a[i + 3u * q];\n"
            "    let b0 = b[i]; let b1 = b[i + q]; let b2 = b[i + 2u * q]; let b3 = b[i + 3u * q];\n"
            "    o[i] = a0 * 2.0 + b0; o[i + q] = a1 * 2.0 + b1; o[i + 2u * q] = a2 * 2.0 + b2; o[i + 3u * q] = a3 * 2.0 + b3;\n  }\n}\n",
            n4 // 4,
            n4,
        ),
        "vec4_fixed": (
            head_fixed
            + sig
            + " {\n  "
            + idx.format(wg=WG)
            + f"\n  if (i < {n4}u) {{ o[i] = a[i] * 2.0 + b[i]; }}\n}}\n",
            n4,
            n4,
        ),
        "copy_wgsl": (
            head_v
            + sig
            + " {\n  "
            + idx.format(wg=WG)
            + f"\n  if (i < {n4}u) {{ o[i] = a[i]; }}\n}}\n",
            n4,
            n4,
        ),
    }
    return out


def grid_for(invocations: int) -> tuple[int, int]:
    groups = -(-invocations // WG)
    if groups <= 65535:
        return groups, 1
    gy = -(-groups // 65535)
    return -(-groups // gy), gy


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--log2n", type=int, default=22)
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--json", default=None)
    p.add_argument("--batch", type=int, default=20, help="dispatches per timed compute pass")
    p.add_argument("--rounds", type=int, default=2, help="repeat the whole variant list")
    p.add_argument(
        "--warmup", type=float, default=0.5, help="seconds of GPU work before timing each variant"
    )
    args = p.parse_args()
    n = 1 << args.log2n
    n4 = n // 4
    nbytes = n * 4

    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    lim = adapter.limits
    want = {
        k: lim[k]
        for k in (
            "max-storage-buffer-binding-size",
            "max-buffer-size",
            "max-storage-buffers-per-shader-stage",
        )
    }
    device = adapter.request_device_sync(
        required_features=["timestamp-query"], required_limits=want
    )
    info = adapter.info
    print(
        f"adapter: {info['device']} ({info['backend_type']}), driver {info.get('description', '')}"
    )
    print("features:", ", ".join(sorted(str(f) for f in adapter.features)))
    print("limits:", want)
    print(f"N = 2^{args.log2n} f32, {nbytes / 2**20:.0f} MiB per array")

    rng = np.random.default_rng(0)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    ba = device.create_buffer(size=nbytes, usage=usage)
    bb = device.create_buffer(size=nbytes, usage=usage)
    bo = device.create_buffer(size=nbytes, usage=usage)
    device.queue.write_buffer(ba, 0, a)
    device.queue.write_buffer(bb, 0, b)
    qs = device.create_query_set(type="timestamp", count=2)
    qbuf = device.create_buffer(
        size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
    )

    def timed(record) -> float:
        enc = device.create_command_encoder()
        record(enc)
        enc.resolve_query_set(qs, 0, 2, qbuf, 0)
        device.queue.submit([enc.finish()])
        t = np.frombuffer(device.queue.read_buffer(qbuf), dtype=np.uint64)
        return float(t[1] - t[0]) * 1e-9  # Vulkan timestamps on NVIDIA/lavapipe: 1 tick = 1 ns

    results = {}
    sm_groups = 132 * 16

    def measure_variants(variants):
        for name, (code, invocations, _) in variants:
            try:
                module = device.create_shader_module(code=code)
                pipe = device.create_compute_pipeline(
                    layout="auto", compute={"module": module, "entry_point": "main"}
                )
            except (
                Exception
            ) as e:  # report and go on: a variant that does not validate is an answer too
                print(f"{name:12s} failed to compile: {str(e).splitlines()[-1]}")
                continue
            bg = device.create_bind_group(
                layout=pipe.get_bind_group_layout(0),
                entries=[
                    {"binding": k, "resource": {"buffer": buf}}
                    for k, buf in enumerate((ba, bb, bo))
                    if not (name.startswith("copy") and k == 1)
                ],
            )
            gx, gy = grid_for(invocations)

            def record(enc, pipe=pipe, bg=bg, gx=gx, gy=gy, count=1):
                pas = enc.begin_compute_pass(
                    timestamp_writes={
                        "query_set": qs,
                        "beginning_of_pass_write_index": 0,
                        "end_of_pass_write_index": 1,
                    }
                )
                pas.set_pipeline(pipe)
                pas.set_bind_group(0, bg)
                for _ in range(count):
                    pas.dispatch_workgroups(gx, gy, 1)
                pas.end()

            warm = 0.0  # the GPU only reaches full clocks after ~0.2 s of sustained work
            while warm < args.warmup:
                warm += timed(lambda enc: record(enc, count=args.batch))
            single = statistics.median(timed(record) for _ in range(args.reps))
            batched = [
                timed(lambda enc: record(enc, count=args.batch)) / args.batch
                for _ in range(args.reps)
            ]
            t = statistics.median(batched)
            moved = nbytes * (2 if name.startswith("copy") else 3)
            out = np.frombuffer(device.queue.read_buffer(bo), dtype=np.float32)
            expect = a if name.startswith("copy") else a * np.float32(2) + b
            ok = np.allclose(out, expect, rtol=1e-6, atol=1e-6)
            results.setdefault(name, []).append(
                {
                    "ms": t * 1e3,
                    "tbps": moved / t / 1e12,
                    "single_ms": single * 1e3,
                    "correct": bool(ok),
                    "grid": [gx, gy],
                }
            )
            print(
                f"{name:12s} {t * 1e3:8.3f} ms  {moved / t / 1e12:6.3f} TB/s  (one dispatch per submit: "
                f"{single * 1e3:7.3f} ms, {moved / single / 1e12:5.3f} TB/s)  grid {gx}x{gy}  correct={ok}"
            )

    variants = list(shaders(n4, sm_groups).items())
    for round_ in range(args.rounds):
        print(f"-- round {round_ + 1}")
        measure_variants(variants)

    # copy_buffer_to_buffer between passes' timestamps: bracket with two empty passes
    def record_copy(enc):
        p0 = enc.begin_compute_pass(
            timestamp_writes={"query_set": qs, "beginning_of_pass_write_index": 0}
        )
        p0.end()
        enc.copy_buffer_to_buffer(ba, 0, bo, 0, nbytes)
        p1 = enc.begin_compute_pass(
            timestamp_writes={"query_set": qs, "end_of_pass_write_index": 1}
        )
        p1.end()

    for _ in range(20):
        timed(record_copy)
    times = [timed(record_copy) for _ in range(args.reps)]
    t = statistics.median(times)
    results["copy_buffer"] = {"ms": t * 1e3, "tbps": 2 * nbytes / t / 1e12}
    print(f"{'copy_buffer':12s} {t * 1e3:8.3f} ms  {2 * nbytes / t / 1e12:6.3f} TB/s")

    # wall-clock cross-check of the timestamp unit on the vec4 variant
    try:
        import torch  # noqa: F401

        have_torch = torch.cuda.is_available()
    except Exception:
        have_torch = False
    if have_torch:
        import torch

        ta = torch.from_numpy(a).cuda()
        tb = torch.from_numpy(b).cuda()
        to = torch.empty_like(ta)

        def cuda_time(fn, reps=args.reps):
            ts = []
            for _ in range(reps):
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                fn()
                e.record()
                torch.cuda.synchronize()
                ts.append(s.elapsed_time(e) / 1e3)
            return statistics.median(ts)

        for _ in range(200):
            to.copy_(ta)
        t = cuda_time(lambda: to.copy_(ta))
        results["torch_copy"] = {"ms": t * 1e3, "tbps": 2 * nbytes / t / 1e12}
        print(f"{'torch_copy':12s} {t * 1e3:8.3f} ms  {2 * nbytes / t / 1e12:6.3f} TB/s")
        t = cuda_time(lambda: torch.add(ta * 2, tb, out=to))
        results["torch_axpb"] = {"ms": t * 1e3, "tbps": 3 * nbytes / t / 1e12}
        print(
            f"{'torch_eager':12s} {t * 1e3:8.3f} ms  {3 * nbytes / t / 1e12:6.3f} TB/s  (a*2+b, 2 kernels)"
        )

    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"adapter": info["device"], "log2n": args.log2n, "results": results}, f, indent=1
            )


if __name__ == "__main__":
    sys.exit(main())
