"""What keeps the two large kernels of the coarsened scan below bandwidth?

`vyre-coarsen-reductions` turns the first level of the `scan` workload
(bench/workloads.py) into reduce-then-scan: `scan0` reduces each 256-element block
to its total, and `add0` scans each block again and adds the carried prefix of the
blocks before it. This script takes the two kernels the pipeline prints for them and
hand-written variants, and times each through raw wgpu with GPU timestamp queries
(batches of `--batch` dispatches in one compute pass, median over `--rounds` rounds,
variants interleaved round by round after `--warmup` seconds of back-to-back work).
Where PyTorch with CUDA is present, `torch.cumsum` and a device copy are timed in
the same process (CUDA events). Every variant's output is checked against numpy.

    python bench/scan_kernel_variants.py --log2n 28             # on the H200
    python bench/scan_kernel_variants.py --log2n 20 --rounds 3  # on lavapipe
    python bench/scan_kernel_variants.py --log2n 28 --only r_pass_sg a_pass_sg copy \
        --pads-mib 0 2 130 1030     # one set of buffers after each padding: does placement matter?

Variants (k = 8 elements per invocation, 256 invocations, 8 blocks per workgroup):
  r_gen / a_gen        the generated scan0 / add0
  r_pass_sg / a_pass_sg  the same with `vyre-coarsen-reductions{subgroups=true}`: the
                       segmented scan of lane totals on subgroup shuffles
  r_nozero / a_nozero  the same without zeroing the workgroup tile first
  r_smem               reduce: each lane sums 8 elements strided by 32 (coalesced),
                       one barrier, then one lane per block sums its 32 partials
  r_sg                 reduce: the same partials combined with subgroupAdd
  r_sg_v4              reduce: two vec4 loads per lane, subgroupAdd
  a_sg_rows            add-back: lane p of a block holds elements 32j + p (rows of
                       32, coalesced); each row scanned with subgroupInclusiveAdd,
                       carried with subgroupBroadcast; no workgroup memory
  a_sg_v4              add-back: rows of 32 vec4 (128 elements), each lane scans its
                       vec4 and subgroupExclusiveAdd scans the lane totals
  a_sg_staged          add-back: the generated form (loads and stores staged through
                       workgroup memory, 8 consecutive elements per lane) with the
                       segmented scan of lane totals done by subgroupExclusiveAdd
  *_t4                 four tiles per workgroup (a quarter of the workgroups)
The subgroup variants assume 32-lane subgroups (a block of 256 = one subgroup of 32
lanes x 8); the script prints the adapter's subgroup size, and a variant whose
assumption fails shows up as incorrect.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from chain_kernel_variants import cuda_times  # noqa: E402
from workloads import make  # noqa: E402
from xdsl.context import Context  # noqa: E402

import vyre_xdsl  # noqa: E402
from vyre_xdsl.passes.vyre_coarsen_reductions import VyreCoarsenReductionsPass  # noqa: E402

BLOCK = 256
TILE = 2048  # elements per workgroup tile: 8 blocks of 256

SIG = (
    "@compute @workgroup_size(256, 1, 1)\n"
    "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,"
    " @builtin(num_workgroups) nwg: vec3<u32>{extra}) {{\n"
    "  let g = wid.x + wid.y * nwg.x;\n"
    "  let lane = lid.x;\n"
    "  let p = lane & 31u;\n"
)
SG = ", @builtin(subgroup_size) sg_size: u32, @builtin(subgroup_invocation_id) sg_id: u32"
REDUCE_HEAD = (
    "@group(0) @binding(0) var<storage, read> b_x: array<{t}>;\n"
    "@group(0) @binding(2) var<storage, read_write> b_sums0: array<f32>;\n"
)
ADD_HEAD = (
    "@group(0) @binding(0) var<storage, read> b_x: array<{t}>;\n"
    "@group(0) @binding(1) var<storage, read> b_scanned1: array<f32>;\n"
    "@group(0) @binding(2) var<storage, read_write> b_out: array<{t}>;\n"
)


def tiles(body: str, per: int) -> str:
    """`body` (which uses `t`, the tile index) once for each of the workgroup's tiles."""
    if per == 1:
        return "  let t = g;\n" + body
    return f"  for (var r = 0u; r < {per}u; r = r + 1u) {{\n  let t = g * {per}u + r;\n{body}  }}\n"


def reduce_sg(per: int, vec4: bool) -> str:
    head = REDUCE_HEAD.format(t="vec4<f32>" if vec4 else "f32")
    if vec4:
        body = (
            "  let seg = t * 8u + lane / 32u;\n"
            "  let base = seg * 64u + p;\n"
            "  let a = b_x[base] + b_x[base + 32u];\n"
            "  let acc = (a.x + a.y) + (a.z + a.w);\n"
        )
    else:
        body = "  let seg = t * 8u + lane / 32u;\n  let base = seg * 256u + p;\n"
        body += "  var acc = b_x[base];\n"
        body += "".join(f"  acc = acc + b_x[base + {32 * j}u];\n" for j in range(1, 8))
    body += "  let total = subgroupAdd(acc);\n  if (p == 0u) { b_sums0[seg] = total; }\n"
    return head + SIG.format(extra=SG) + tiles(body, per) + "}\n"


def reduce_smem() -> str:
    body = "  let seg = g * 8u + lane / 32u;\n  let base = seg * 256u + p;\n"
    body += "  var acc = b_x[base];\n"
    body += "".join(f"  acc = acc + b_x[base + {32 * j}u];\n" for j in range(1, 8))
    body += (
        "  w[lane] = acc;\n  workgroupBarrier();\n"
        "  if (p == 0u) {\n    var s = 0.0f;\n"
        "    for (var q = 0u; q < 32u; q = q + 1u) { s = s + w[lane + q]; }\n"
        "    b_sums0[seg] = s;\n  }\n"
    )
    head = REDUCE_HEAD.format(t="f32") + "var<workgroup> w: array<f32, 256>;\n"
    return head + SIG.format(extra="") + body + "}\n"


def add_rows(per: int) -> str:
    body = (
        "  let seg = t * 8u + lane / 32u;\n"
        "  var carry = select(0.0f, b_scanned1[max(seg, 1u) - 1u], seg > 0u);\n"
        "  let base = seg * 256u + p;\n"
    )
    body += "".join(f"  let v{j} = b_x[base + {32 * j}u];\n" for j in range(8))
    for j in range(8):
        body += (
            f"  let s{j} = subgroupInclusiveAdd(v{j});\n"
            f"  b_out[base + {32 * j}u] = carry + s{j};\n"
            f"  carry = carry + subgroupBroadcast(s{j}, 31u);\n"
        )
    return ADD_HEAD.format(t="f32") + SIG.format(extra=SG) + tiles(body, per) + "}\n"


def add_v4(per: int) -> str:
    body = (
        "  let seg = t * 8u + lane / 32u;\n"
        "  var carry = select(0.0f, b_scanned1[max(seg, 1u) - 1u], seg > 0u);\n"
        "  let base = seg * 64u + p;\n"
        "  let u0 = b_x[base];\n  let u1 = b_x[base + 32u];\n"
    )
    for j in range(2):
        body += (
            f"  let a{j} = vec4<f32>(u{j}.x, u{j}.x + u{j}.y, u{j}.x + u{j}.y + u{j}.z,"
            f" u{j}.x + u{j}.y + u{j}.z + u{j}.w);\n"
            f"  let e{j} = subgroupExclusiveAdd(a{j}.w);\n"
            f"  b_out[base + {32 * j}u] = a{j} + vec4<f32>(carry + e{j});\n"
            f"  carry = carry + subgroupBroadcast(e{j} + a{j}.w, 31u);\n"
        )
    return ADD_HEAD.format(t="vec4<f32>") + SIG.format(extra=SG) + tiles(body, per) + "}\n"


def add_staged() -> str:
    """The generated add0's staging (padded: index + index / 32) with the segmented
    scan of lane totals done by one subgroupExclusiveAdd."""
    body = "  let start = g * 2048u;\n  let own = lane * 8u;\n"
    body += "  let seg = g * 8u + lane / 32u;\n"
    body += "  let pre = select(0.0f, b_scanned1[max(seg, 1u) - 1u], seg > 0u);\n"
    for j in range(8):
        e = f"lane + {256 * j}u"
        body += f"  w[{e} + (({e}) >> 5u)] = b_x[start + {e}];\n"
    body += "  workgroupBarrier();\n  let o = own + (own >> 5u);\n"
    body += "".join(f"  let v{j} = w[o + {j}u];\n" for j in range(8))
    body += "  let c1 = v0 + v1;\n"
    body += "".join(f"  let c{j} = c{j - 1} + v{j};\n" for j in range(2, 8))
    body += "  let ex = pre + subgroupExclusiveAdd(c7);\n  workgroupBarrier();\n"
    body += "  w[o] = ex + v0;\n"
    body += "".join(f"  w[o + {j}u] = ex + c{j};\n" for j in range(1, 8))
    body += "  workgroupBarrier();\n"
    body += "".join(
        f"  b_out[start + lane + {256 * j}u] = w[lane + {256 * j}u + ((lane + {256 * j}u) >> 5u)];\n"
        for j in range(8)
    )
    head = ADD_HEAD.format(t="f32") + "var<workgroup> w: array<f32, 2112>;\n"
    return head + SIG.format(extra=SG) + body + "}\n"


def copy_v4() -> str:
    head = (
        "@group(0) @binding(0) var<storage, read> b_x: array<vec4<f32>>;\n"
        "@group(0) @binding(2) var<storage, read_write> b_out: array<vec4<f32>>;\n"
    )
    body = "  let i = g * 256u + lane;\n  b_out[i] = b_x[i];\n"
    return head + SIG.format(extra="") + body + "}\n"


def without_zeroing(wgsl: str) -> str:
    """The generated kernel without its loop that zeroes the workgroup tile."""
    return re.sub(
        r"  for \(var vyre_z: u32[^\n]*\n[^\n]*\n  \}\n  workgroupBarrier\(\);\n", "", wgsl, count=1
    )


def grid(groups: int) -> tuple[int, int, int]:
    x = groups
    y = 1
    while x > 65535:
        x //= 2
        y *= 2
    assert x * y == groups
    return (x, y, 1)


def kernels(n: int) -> dict[str, tuple[str, str, tuple[int, int, int]]]:
    """name -> (kind, WGSL, grid); kind is "reduce", "add" or "copy"."""
    scan = make("scan", n, n)
    generated = {}
    for subgroups in (False, True):
        module = vyre_xdsl.parse(scan.text)
        VyreCoarsenReductionsPass(reassociate_floats=True, subgroups=subgroups).apply(
            Context(), module
        )
        exe = vyre_xdsl.compile(module, backend="wgpu")
        generated[subgroups] = {k.source: k for k in exe.compiled.kernels}
    r, a = generated[False]["scan0"], generated[False]["add0"]
    if "b_local0" in r.wgsl:
        raise SystemExit(
            f"at {n} elements the pass leaves the first level as written (too few blocks "
            "for reduce-then-scan): use --log2n 20 or more"
        )
    r_sg, a_sg = generated[True]["scan0"], generated[True]["add0"]
    groups = n // TILE
    out = {
        "r_gen": ("reduce", r.wgsl, r.static_grid),
        "r_pass_sg": ("reduce", r_sg.wgsl, r_sg.static_grid),
        "a_pass_sg": ("add", a_sg.wgsl, a_sg.static_grid),
        "a_pass_sg_nozero": ("add", without_zeroing(a_sg.wgsl), a_sg.static_grid),
        "r_nozero": ("reduce", without_zeroing(r.wgsl), r.static_grid),
        "r_smem": ("reduce", reduce_smem(), grid(groups)),
        "r_sg": ("reduce", reduce_sg(1, False), grid(groups)),
        "r_sg_v4": ("reduce", reduce_sg(1, True), grid(groups)),
        "r_sg_v4_t4": ("reduce", reduce_sg(4, True), grid(groups // 4)),
        "a_gen": ("add", a.wgsl, a.static_grid),
        "a_nozero": ("add", without_zeroing(a.wgsl), a.static_grid),
        "a_sg_rows": ("add", add_rows(1), grid(groups)),
        "a_sg_rows_t4": ("add", add_rows(4), grid(groups // 4)),
        "a_sg_v4": ("add", add_v4(1), grid(groups)),
        "a_sg_v4_t4": ("add", add_v4(4), grid(groups // 4)),
        "a_sg_staged": ("add", add_staged(), grid(groups)),
        "copy": ("copy", copy_v4(), grid(n // 1024)),
    }
    return out, exe


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2n", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--only", nargs="*", default=None, help="variant names to time")
    parser.add_argument(
        "--pads-mib",
        type=int,
        nargs="*",
        default=[0],
        help="one set of buffers per value, each allocated after a padding buffer of that "
        "many MiB (0: none); every variant is timed against every set, to see whether "
        "where the buffers land changes the time",
    )
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    import wgpu

    n = 1 << args.log2n
    chosen, exe = kernels(n)
    if args.only:
        chosen = {k: v for k, v in chosen.items() if k in args.only}
    gpu = exe.gpu
    device = gpu.device
    adapter = gpu.describe()
    rng = np.random.default_rng(7)
    x = rng.integers(0, 4, n).astype(np.float32)
    blocks = x.reshape(-1, BLOCK).astype(np.float64).sum(axis=1)
    scanned1 = np.cumsum(blocks).astype(np.float32)
    ref = np.cumsum(x.astype(np.float64))
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    pads = []  # kept alive so that each set lands after its padding
    sets = []
    for pad in args.pads_mib:
        if pad:
            pads.append(device.create_buffer(size=pad << 20, usage=usage))
        sets.append(
            {
                0: device.create_buffer_with_data(data=x, usage=usage),
                1: device.create_buffer_with_data(data=scanned1, usage=usage),
                "sums": device.create_buffer(size=n // BLOCK * 4, usage=usage),
                "out": device.create_buffer(size=n * 4, usage=usage),
                "sidecar": device.create_buffer(size=256, usage=usage),
            }
        )
    query = device.create_query_set(type=wgpu.QueryType.timestamp, count=2)
    resolve = device.create_buffer(
        size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
    )
    period = gpu.timestamp_period_ns
    print(f"adapter: {adapter}; n = 2^{args.log2n}; subgroup size {subgroup_size(device)}")
    pipelines = {}
    for name, (kind, source, g) in chosen.items():
        try:
            module = device.create_shader_module(code=source)
            pipeline = device.create_compute_pipeline(
                layout="auto", compute={"module": module, "entry_point": "main"}
            )
        except Exception as error:  # a variant the driver refuses is reported, not fatal
            print(f"{name}: not compiled: {str(error).splitlines()[0]}")
            continue
        for index, bufs in enumerate(sets):
            label = name if len(sets) == 1 else f"{name}@{args.pads_mib[index]}"
            group = bind_group(device, pipeline, source, kind, bufs)
            pipelines[label] = (pipeline, group, g, kind, bufs)

    def batch(name: str, count: int) -> float:
        pipeline, group, g, _, _ = pipelines[name]
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
            compute.dispatch_workgroups(*g)
        compute.end()
        encoder.resolve_query_set(query, 0, 2, resolve, 0)
        device.queue.submit([encoder.finish()])
        stamps = np.frombuffer(device.queue.read_buffer(resolve), dtype=np.uint64)
        return float(stamps[1] - stamps[0]) * period * 1e-9 / count

    correct = {}
    for name, (_, _, _, kind, bufs) in pipelines.items():
        device.queue.write_buffer(bufs["out"], 0, np.zeros(n, np.float32))
        device.queue.write_buffer(bufs["sums"], 0, np.zeros(n // BLOCK, np.float32))
        batch(name, 1)
        if kind == "reduce":
            got = np.frombuffer(device.queue.read_buffer(bufs["sums"]), dtype=np.float32)
            correct[name] = bool(np.array_equal(got, blocks.astype(np.float32)))
        else:
            got = np.frombuffer(device.queue.read_buffer(bufs["out"]), dtype=np.float32)
            want = x if kind == "copy" else ref
            correct[name] = bool(np.all(np.abs(got - want) <= 1e-6 * np.abs(want) + 1))
    end = time.perf_counter() + args.warmup
    while time.perf_counter() < end:
        for name in pipelines:
            batch(name, args.batch)
    times: dict[str, list[float]] = {name: [] for name in pipelines}
    for _ in range(args.rounds):
        for name in pipelines:
            times[name].append(batch(name, args.batch))
    torch_times = torch_rows(x, args)
    traffic = {"reduce": n * 4, "add": 2 * n * 4, "copy": 2 * n * 4, "torch": 2 * n * 4}
    rows = {}
    print("\n| variant | ms median (min-max) | TB/s | correct |\n| --- | --- | --- | --- |")
    for name, values in {**times, **torch_times}.items():
        med = statistics.median(values)
        rows[name] = {"median": med, "min": min(values), "max": max(values), "all": values}
        kind = pipelines[name][3] if name in pipelines else "torch"
        tbs = traffic[kind] / med / 1e12
        print(
            f"| {name} | {med * 1e3:.3f} ({min(values) * 1e3:.3f}-{max(values) * 1e3:.3f}) "
            f"| {tbs:.2f} | {correct.get(name, '-')} |"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"adapter": adapter, "log2n": args.log2n, "rows": rows, "correct": correct}, f
            )
    return 0


def bind_group(device, pipeline, source: str, kind: str, bufs: dict):
    """The bind group of one variant over one set of buffers."""
    entries = [(0, bufs[0])]
    sidecar = re.search(r"@binding\((\d+)\) var<storage, read_write> vyre_trap_sidecar", source)
    if sidecar:  # the trap record of a loop with a computed bound
        entries.append((int(sidecar.group(1)), bufs["sidecar"]))
    if kind == "add":
        entries += [(1, bufs[1]), (2, bufs["out"])]
    elif kind == "reduce":
        entries += [(2, bufs["sums"])]
    else:
        entries += [(2, bufs["out"])]
    return device.create_bind_group(
        layout=pipeline.get_bind_group_layout(0),
        entries=[
            {"binding": b, "resource": {"buffer": buf, "offset": 0, "size": buf.size}}
            for b, buf in entries
        ],
    )


def subgroup_size(device) -> int | str:
    """The subgroup size a 256-wide compute kernel sees on `device`."""
    import wgpu

    source = (
        "@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n"
        "@compute @workgroup_size(256, 1, 1)\n"
        "fn main(@builtin(local_invocation_id) lid: vec3<u32>,"
        " @builtin(subgroup_size) s: u32) {\n  if (lid.x == 0u) { o[0] = s; }\n}\n"
    )
    try:
        pipeline = device.create_compute_pipeline(
            layout="auto",
            compute={"module": device.create_shader_module(code=source), "entry_point": "main"},
        )
    except Exception as error:
        return f"unknown ({str(error).splitlines()[0]})"
    buf = device.create_buffer(size=4, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
    group = device.create_bind_group(
        layout=pipeline.get_bind_group_layout(0),
        entries=[{"binding": 0, "resource": {"buffer": buf, "offset": 0, "size": 4}}],
    )
    encoder = device.create_command_encoder()
    compute = encoder.begin_compute_pass()
    compute.set_pipeline(pipeline)
    compute.set_bind_group(0, group)
    compute.dispatch_workgroups(1, 1, 1)
    compute.end()
    device.queue.submit([encoder.finish()])
    return int(np.frombuffer(device.queue.read_buffer(buf), dtype=np.uint32)[0])


def torch_rows(x: np.ndarray, args) -> dict[str, list[float]]:
    try:
        import torch
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    t = torch.from_numpy(x).cuda()
    dst = torch.empty_like(t)
    fns = {"torch.cumsum": lambda: torch.cumsum(t, 0, out=dst), "torch copy_": lambda: dst.copy_(t)}
    return cuda_times(fns, args)


if __name__ == "__main__":
    raise SystemExit(main())
