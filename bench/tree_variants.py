"""Why does the textbook workgroup tree read slowly? Hand-written WGSL variants of
a sum's first pass next to the WGSL vyre generates for it, timed in one process
with GPU timestamps (and `torch.sum` with CUDA events, when PyTorch has CUDA).

Every variant reduces n = 2^log2n f32 (integer-valued, so sums are exact) to
partial sums, checked exactly against numpy; the time is per dispatch (median
of --reps batches of --batch back-to-back dispatches in one compute pass, after
--warmup seconds of the same). Bandwidth counts the bytes read plus written.

- `gen_tree`: vyre's WGSL for the textbook level (256 per workgroup, a barrier
  per halving step in a `vyre.loop`), from the current printer; `old_gen_tree`:
  the same as printed before (`--old-tree FILE`; at 2^28 by default
  bench/results/tree_level0_before.wgsl);
- `gen_tree_nostorage`, `gen_tree_nostorage_nozero`: when the printer still
  emits them, the same text without `storageBarrier();` and also without the
  prologue that zeroes workgroup memory;
- `hand_tree`: the textbook kernel written by hand (constant-bound loop,
  `workgroupBarrier()` only); `hand_tree_storage`: the same with
  `storageBarrier()` before each `workgroupBarrier()`;
- `hand_tree_vec4`: each invocation first adds one `vec4<f32>`, then the tree
  (1024 elements per workgroup);
- `gen_presum`: vyre's WGSL for the pre-sum program (`p[i]` = 16 elements
  strided by n/16, in a `vyre.loop`), and `hand_presum` the same unrolled;
- `hand_presum_tree`: pre-sum and tree in one kernel: each invocation adds 16
  elements strided by 256 inside its workgroup's block of 4096, then the tree;
  `hand_presum_tree_vec4`: the same with four `vec4<f32>` loads;
- `gen_presum_tree`: vyre's WGSL for that fused program written in vyre IR;
- `gen_subgroup_tree`: one element per invocation like the textbook level, but
  combined with `vyre.subgroup_reduce add`, one partial per subgroup in
  workgroup memory, one barrier, and invocation 0 adding the partials (vyre IR;
  only where the adapter has subgroups). It tells how fast a first pass that
  reads one element per invocation can be once the barrier steps are gone.

    python bench/tree_variants.py --log2n 28 --json tree_variants.json
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

os.environ.setdefault("WGPU_BACKEND_TYPE", "Vulkan")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import wgpu  # noqa: E402
from workloads import presum_program, tree_level  # noqa: E402

from vyre_xdsl.backends.wgsl import compile_module  # noqa: E402
from vyre_xdsl.context import parse_module  # noqa: E402
from vyre_xdsl.runtime.device import gpu_device  # noqa: E402

#: the first level at 2^28 as the printer wrote it before barriers stopped
#: fencing storage and the tile stopped being zeroed (`old_gen_tree`)
BEFORE = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "results", "tree_level0_before.wgsl"
)

HEAD = """@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
var<workgroup> tile: array<f32, 256>;
"""
HEAD4 = HEAD.replace(
    "array<f32>;\n@group(0) @binding(1)", "array<vec4<f32>>;\n@group(0) @binding(1)"
)

TREE = """
  workgroupBarrier();
  for (var s = 128u; s > 0u; s = s >> 1u) {
    if (l < s) {
      tile[l] = tile[l] + tile[l + s];
    }
    BARRIER
  }
  if (l == 0u) {
    out[g] = tile[0];
  }
}
"""

ENTRY = """
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let g = wid.x + wid.y * nwg.x;
  let l = lid.x;
"""

HAND_TREE = HEAD + ENTRY + "  tile[l] = x[g * 256u + l];" + TREE
HAND_TREE_VEC4 = (
    HEAD4 + ENTRY + "  let v = x[g * 256u + l];\n  tile[l] = (v.x + v.y) + (v.z + v.w);" + TREE
)
HAND_PRESUM = (
    HEAD.replace("var<workgroup> tile: array<f32, 256>;\n", "")
    + """
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = (wid.x + wid.y * nwg.x) * 256u + lid.x;
  let m = MU;
  var acc = x[i];
  acc = acc + x[i + m];
  acc = acc + x[i + 2u * m];
  acc = acc + x[i + 3u * m];
  acc = acc + x[i + 4u * m];
  acc = acc + x[i + 5u * m];
  acc = acc + x[i + 6u * m];
  acc = acc + x[i + 7u * m];
  acc = acc + x[i + 8u * m];
  acc = acc + x[i + 9u * m];
  acc = acc + x[i + 10u * m];
  acc = acc + x[i + 11u * m];
  acc = acc + x[i + 12u * m];
  acc = acc + x[i + 13u * m];
  acc = acc + x[i + 14u * m];
  acc = acc + x[i + 15u * m];
  out[i] = acc;
}
"""
)
HAND_PRESUM_TREE = (
    HEAD
    + ENTRY
    + """  let base = g * 4096u + l;
  var acc = 0.0f;
  for (var k = 0u; k < 16u; k = k + 1u) {
    acc = acc + x[base + k * 256u];
  }
  tile[l] = acc;"""
    + TREE
)
HAND_PRESUM_TREE_VEC4 = (
    HEAD4
    + ENTRY
    + """  let base = g * 1024u + l;
  let a = x[base];
  let b = x[base + 256u];
  let c = x[base + 512u];
  let d = x[base + 768u];
  let v = (a + b) + (c + d);
  tile[l] = (v.x + v.y) + (v.z + v.w);"""
    + TREE
)


def presum_tree_ir(n: int) -> str:
    """Pre-sum and tree in one vyre program (what the hand kernel does)."""
    blocks = n // 4096
    return f"""vyre.program @presum_tree workgroup_size [256, 1, 1] {{
  vyre.buffer @x binding 0 read_only : f32[{n}]
  vyre.buffer @p binding 1 write_only : f32[{blocks}]
  vyre.buffer @tile workgroup : f32[256]
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %block = vyre.const 4096 : ui32
  %wb = vyre.mul %w, %block : ui32
  %base = vyre.add %wb, %l : ui32
  %zero = vyre.const 0 : ui32
  %fzero = vyre.const 0.0 : f32
  %sixteen = vyre.const 16 : ui32
  %width = vyre.const 256 : ui32
  vyre.let @acc = %fzero : f32
  vyre.loop @k = %zero to %sixteen {{
    %k = vyre.var @k : ui32
    %off = vyre.mul %k, %width : ui32
    %j = vyre.add %base, %off : ui32
    %v = vyre.load @x[%j] : f32
    %a = vyre.var @acc : f32
    %s = vyre.add %a, %v : f32
    vyre.assign @acc = %s : f32
  }}
  %sum = vyre.var @acc : f32
  vyre.store @tile[%l] = %sum : f32
  vyre.barrier
  %levels = vyre.const 8 : ui32
  %half = vyre.const 128 : ui32
  vyre.loop @level = %zero to %levels {{
    %q = vyre.var @level : ui32
    %stride = vyre.shr %half, %q : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {{
      %jj = vyre.add %l, %stride : ui32
      %ta = vyre.load @tile[%l] : f32
      %tb = vyre.load @tile[%jj] : f32
      %ts = vyre.add %ta, %tb : f32
      vyre.store @tile[%l] = %ts : f32
    }}
    vyre.barrier
  }}
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {{
    %total = vyre.load @tile[%zero] : f32
    vyre.store @p[%w] = %total : f32
  }}
}}
"""


def subgroup_tree_ir(n: int) -> str:
    """One element per invocation, a subgroup sum, then the subgroups' partials."""
    return f"""vyre.program @subgroup_tree workgroup_size [256, 1, 1] {{
  vyre.buffer @x binding 0 read_only : f32[{n}]
  vyre.buffer @p binding 1 write_only : f32[{n // 256}]
  vyre.buffer @partials workgroup : f32[256]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %zero = vyre.const 0 : ui32
  %v = vyre.load @x[%i] : f32
  %s = vyre.subgroup_reduce add %v : f32
  %size = vyre.subgroup_size
  %lane = vyre.subgroup_local_id
  %lead = vyre.eq %lane, %zero : ui32
  vyre.if %lead {{
    %g = vyre.div %l, %size : ui32
    vyre.store @partials[%g] = %s : f32
  }}
  vyre.barrier
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {{
    %width = vyre.const 256 : ui32
    %count = vyre.div %width, %size : ui32
    %fzero = vyre.const 0.0 : f32
    vyre.let @acc = %fzero : f32
    vyre.loop @k = %zero to %count {{
      %k = vyre.var @k : ui32
      %q = vyre.load @partials[%k] : f32
      %a = vyre.var @acc : f32
      %t = vyre.add %a, %q : f32
      vyre.assign @acc = %t : f32
    }}
    %total = vyre.var @acc : f32
    vyre.store @p[%w] = %total : f32
  }}
}}
"""


def subgroup_variant(n: int, x: np.ndarray) -> Variant:
    per256 = x.astype(np.float64).reshape(-1, 256).sum(1).astype(np.float32)
    kernel = generated(subgroup_tree_ir(n))
    roles = declared_roles(kernel.wgsl)
    grid = tuple(kernel.static_grid)
    return Variant("gen_subgroup_tree", kernel.wgsl, 0, n // 256, per256, 4 * n, roles, grid)


def generated(text: str):
    kernels = compile_module(parse_module(text))
    assert len(kernels) == 1, [k.source for k in kernels]
    return kernels[0]


def declared_roles(wgsl: str) -> dict[int, str]:
    """Binding slot -> buffer role of the storage buffers `wgsl` declares (a
    mutated or older text may declare other bindings than the current printer)."""
    roles = {}
    for slot, name in re.findall(r"@binding\((\d+)\) var<storage[^>]*> (\w+):", wgsl):
        role = {"b_x": "x", "b_grid": "grid", "vyre_trap_sidecar": "sidecar"}.get(name, "out")
        roles[int(slot)] = role
    return roles


def grid_of(groups: int) -> tuple[int, int, int]:
    x = min(groups, 32768)
    return (x, groups // x, 1)


class Variant:
    def __init__(self, name, wgsl, groups, out_count, expected, reads, bindings=None, grid=None):
        self.name = name
        self.wgsl = wgsl
        self.grid = grid or grid_of(groups)
        self.out_count = out_count
        self.expected = expected
        self.bytes = reads + 4 * out_count
        # binding slot -> buffer role ("x", "out", "sidecar", "grid")
        self.bindings = bindings or {0: "x", 1: "out"}


def variants(n: int, x: np.ndarray, old_tree: str | None = None) -> list[Variant]:
    x64 = x.astype(np.float64)
    per256 = x64.reshape(-1, 256).sum(1).astype(np.float32)
    per1024 = x64.reshape(-1, 1024).sum(1).astype(np.float32)
    per4096 = x64.reshape(-1, 4096).sum(1).astype(np.float32)
    m = n // 16
    strided = x64.reshape(16, m).sum(0).astype(np.float32)
    reads = 4 * n
    out = []

    def gen(name, text, expected, mutate=None):
        kernel = generated(text)
        wgsl = kernel.wgsl if mutate is None else mutate(kernel.wgsl)
        roles = declared_roles(wgsl)
        groups = int(np.prod(kernel.static_grid))
        out.append(
            Variant(
                name,
                wgsl,
                groups,
                expected.size,
                expected,
                reads,
                roles,
                grid=tuple(kernel.static_grid),
            )
        )
        return wgsl

    tree_text = tree_level("level0", "x", "p0", n, "add", "0.0")
    current = gen("gen_tree", tree_text, per256)
    if old_tree is not None:
        gen("old_gen_tree", tree_text, per256, lambda w: old_tree)
    if "storageBarrier" not in current and "vyre_z" not in current:
        return out + hand_variants(n, m, per256, per1024, per4096, strided, reads, x)
    gen(
        "gen_tree_nostorage",
        tree_text,
        per256,
        lambda w: w.replace("storageBarrier();\n", "").replace("  storageBarrier();", ""),
    )

    def no_zero(w: str) -> str:
        w = w.replace("storageBarrier();\n", "")
        lines = w.split("\n")
        start = next(i for i, s in enumerate(lines) if "vyre_z" in s)
        # the zeroing loop (3 lines) and its barrier
        del lines[start : start + 4]
        return "\n".join(line for line in lines if line.strip() != "storageBarrier();")

    gen("gen_tree_nostorage_nozero", tree_text, per256, no_zero)
    return out + hand_variants(n, m, per256, per1024, per4096, strided, reads, x)


def hand_variants(n, m, per256, per1024, per4096, strided, reads, x) -> list[Variant]:
    out = []
    wg = HAND_TREE.replace("BARRIER", "workgroupBarrier();")
    out.append(Variant("hand_tree", wg, n // 256, n // 256, per256, reads))
    sb = HAND_TREE.replace("BARRIER", "storageBarrier();\n    workgroupBarrier();")
    out.append(Variant("hand_tree_storage", sb, n // 256, n // 256, per256, reads))
    v4 = HAND_TREE_VEC4.replace("BARRIER", "workgroupBarrier();")
    out.append(Variant("hand_tree_vec4", v4, n // 1024, n // 1024, per1024, reads))
    kernel = generated(presum_program(n, "add"))
    roles = declared_roles(kernel.wgsl)
    out.append(
        Variant(
            "gen_presum", kernel.wgsl, 0, m, strided, reads, roles, grid=tuple(kernel.static_grid)
        )
    )
    out.append(
        Variant("hand_presum", HAND_PRESUM.replace("MU", f"{m}u"), m // 256, m, strided, reads)
    )
    pt = HAND_PRESUM_TREE.replace("BARRIER", "workgroupBarrier();")
    out.append(Variant("hand_presum_tree", pt, n // 4096, n // 4096, per4096, reads))
    pt4 = HAND_PRESUM_TREE_VEC4.replace("BARRIER", "workgroupBarrier();")
    out.append(Variant("hand_presum_tree_vec4", pt4, n // 4096, n // 4096, per4096, reads))
    return out


def indirect_variant(n: int, x: np.ndarray) -> Variant:
    """gen_presum_tree: the grid must be n / 4096 workgroups, which a program
    with workgroup memory only gets from an indirect grid buffer (its static
    grid covers the largest buffer); the benchmark dispatches it directly."""
    per4096 = x.astype(np.float64).reshape(-1, 4096).sum(1).astype(np.float32)
    kernel = generated(presum_tree_ir(n))
    roles = declared_roles(kernel.wgsl)
    return Variant("gen_presum_tree", kernel.wgsl, n // 4096, n // 4096, per4096, 4 * n, roles)


def time_variant(device, v: Variant, xbuf, args) -> dict:
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    outbuf = device.create_buffer(size=max(16, 4 * v.out_count), usage=usage)
    sidecar = device.create_buffer(size=256, usage=usage)
    grid = device.create_buffer(size=16, usage=usage)
    device.queue.write_buffer(grid, 0, np.array([*v.grid, 0], dtype=np.uint32))
    pipe = device.create_compute_pipeline(
        layout="auto",
        compute={"module": device.create_shader_module(code=v.wgsl), "entry_point": "main"},
    )
    buffers = {"x": xbuf, "out": outbuf, "sidecar": sidecar, "grid": grid}
    entries = [
        {
            "binding": slot,
            "resource": {"buffer": buffers[role], "offset": 0, "size": buffers[role].size},
        }
        for slot, role in sorted(v.bindings.items())
    ]
    bg = device.create_bind_group(layout=pipe.get_bind_group_layout(0), entries=entries)
    qs = device.create_query_set(type="timestamp", count=2)
    resolved = device.create_buffer(
        size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
    )

    def batch(count: int) -> float:
        enc = device.create_command_encoder()
        p = enc.begin_compute_pass(
            timestamp_writes={
                "query_set": qs,
                "beginning_of_pass_write_index": 0,
                "end_of_pass_write_index": 1,
            }
        )
        p.set_pipeline(pipe)
        p.set_bind_group(0, bg)
        for _ in range(count):
            p.dispatch_workgroups(*v.grid)
        p.end()
        enc.resolve_query_set(qs, 0, 2, resolved, 0)
        device.queue.submit([enc.finish()])
        t = np.frombuffer(device.queue.read_buffer(resolved), dtype=np.uint64)
        return float(t[1] - t[0]) * 1e-9 / count

    end = time.perf_counter() + args.warmup
    while time.perf_counter() < end:
        batch(args.batch)
    times = [batch(args.batch) for _ in range(args.reps)]
    got = np.frombuffer(device.queue.read_buffer(outbuf), dtype=np.float32)[: v.out_count]
    traps = np.frombuffer(device.queue.read_buffer(sidecar), dtype=np.uint32)[:4]
    ok = bool(np.array_equal(got, v.expected)) and not traps.any()
    for b in (outbuf, sidecar, grid):
        b.destroy()
    med = statistics.median(times)
    return {
        "variant": v.name,
        "ms": med * 1e3,
        "ms_min": min(times) * 1e3,
        "ms_max": max(times) * 1e3,
        "tb_s": v.bytes / med / 1e12,
        "correct": ok,
        "grid": list(v.grid),
    }


def torch_sum(x: np.ndarray, args) -> list[dict]:
    try:
        import torch
    except ImportError:
        return []
    if not torch.cuda.is_available():
        return []
    tx = torch.from_numpy(x).cuda()
    dst = torch.empty_like(tx)
    rows = []
    for name, fn in (("torch.sum", lambda: tx.sum()), ("torch copy_", lambda: dst.copy_(tx))):
        end = time.perf_counter() + args.warmup
        while time.perf_counter() < end:
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(args.reps):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(args.batch):
                fn()
            e.record()
            torch.cuda.synchronize()
            times.append(s.elapsed_time(e) / 1e3 / args.batch)
        med = statistics.median(times)
        moved = 4 * x.size * (2 if "copy" in name else 1)
        rows.append(
            {
                "variant": name,
                "ms": med * 1e3,
                "ms_min": min(times) * 1e3,
                "ms_max": max(times) * 1e3,
                "tb_s": moved / med / 1e12,
                "correct": bool(
                    name != "torch.sum" or float(tx.sum()) == float(x.astype(np.float64).sum())
                ),
            }
        )
    return rows


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--log2n", type=int, default=20)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--batch", type=int, default=20)
    p.add_argument("--warmup", type=float, default=0.5)
    p.add_argument("--only", nargs="*", default=None)
    p.add_argument("--json", default=None)
    p.add_argument("--old-tree", default=None, help="WGSL of an earlier printer's tree level")
    p.add_argument("--dump", default=None, help="write every variant's WGSL into this folder")
    args = p.parse_args()
    n = 1 << args.log2n
    gpu = gpu_device()
    device = gpu.device
    print(f"adapter: {gpu.describe()}; n = 2^{args.log2n}", flush=True)
    x = np.random.default_rng(7).integers(-2, 3, n).astype(np.float32)
    xbuf = device.create_buffer(
        size=4 * n, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST
    )
    device.queue.write_buffer(xbuf, 0, x)
    old_tree = None
    if args.old_tree is None and args.log2n == 28 and os.path.exists(BEFORE):
        args.old_tree = BEFORE
    if args.old_tree:
        with open(args.old_tree) as f:
            old_tree = f.read()
    todo = variants(n, x, old_tree) + [indirect_variant(n, x)]
    if "subgroup" in gpu.features:
        todo.append(subgroup_variant(n, x))
    if args.only:
        todo = [v for v in todo if v.name in args.only]
    rows = []
    for v in todo:
        if args.dump:
            os.makedirs(args.dump, exist_ok=True)
            with open(os.path.join(args.dump, v.name + ".wgsl"), "w") as f:
                f.write(v.wgsl)
        row = time_variant(device, v, xbuf, args)
        rows.append(row)
        print(
            f"{row['variant']:28s} {row['ms']:8.3f} ms ({row['ms_min']:.3f}-{row['ms_max']:.3f})"
            f"  {row['tb_s']:5.2f} TB/s  correct={row['correct']}",
            flush=True,
        )
    for row in torch_sum(x, args):
        rows.append(row)
        print(
            f"{row['variant']:28s} {row['ms']:8.3f} ms ({row['ms_min']:.3f}-{row['ms_max']:.3f})"
            f"  {row['tb_s']:5.2f} TB/s  correct={row['correct']}",
            flush=True,
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"adapter": gpu.describe(), "log2n": args.log2n, "rows": rows}, f, indent=1)
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
