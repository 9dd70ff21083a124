"""The workload suite: reductions, a scan, stencils, histograms and elementwise
chains written as plain vyre programs, against PyTorch in the same process.

Every workload is a module of vyre programs (IR text, one program per pass of
the algorithm), compiled once with `vyre_xdsl.compile` unfused and fused
(`fuse=True`), and run through the wgpu runtime with the inputs already on the
GPU (`vyre_xdsl.to_device`, `run(..., device=True, profile=True)`). GPU time is
the sum of the timestamp-query deltas of the run's kernels (each kernel is
timed in its own compute pass); every workload is first run for at least
`--warmup` seconds (the H200 only reaches full clocks under sustained load:
docs/performance.md), and its unfused and fused modules are timed interleaved
(one run of each per round), so that a drift of the machine's speed, which on
lavapipe moves identical kernels by up to 1.3x between two measurements, hits
both alike. Every vyre result is checked against numpy: the first
run and every timed run of a workload with a small output, the first and the
last timed run otherwise (read back after all the timed rounds: reading 1 GiB
back leaves the GPU idle long enough for its clock to drop). A wrong result is reported and fails the script.

PyTorch (when it is installed with CUDA) runs the same workload three ways in
the same process, timed with CUDA events over 10 back-to-back calls after the
same warm-up: the native op (`torch.sum`, `torch.amin`, `torch.amax`,
`torch.cumsum`, `torch.bincount`, `conv1d`), eager PyTorch written the
obvious way, and `torch.compile` of that. Without PyTorch (lavapipe) those
columns are left out and the table reports fused against unfused vyre.

Workloads (n = 2^log2n f32 values; the histograms take 2^hist-log2n ui32):

- `sum_tree`, `min_tree`, `max_tree`: the textbook workgroup tree, 256 wide,
  one barrier per level in a `vyre.loop`, one partial per workgroup, repeated
  until one value is left (a program per level);
- `sum_presum`, `min_presum`, `max_presum`: each invocation first combines 16
  elements strided by n/16 (one program), then the tree;
- `scan`: inclusive prefix sum: a Hillis-Steele scan of each 256-element block
  in workgroup memory writing its block total, the same over the block totals
  until one block is left, then the scanned totals added back level by level;
- `neighbour`: `t[i] = 2 x[i]`, then `y[i] = t[i] + t[i+1]`;
- `stencil3`: `t[i] = 2 x[i]`, then `y[i] = t[i-1]/4 + t[i]/2 + t[i+1]/4`
  (zero outside);
- `hist_naive`: 256 bins, one global `atomic add` per element;
- `hist_private`: the same into 64 copies of the bins (copy = workgroup % 64),
  then one program adds the copies up;
- `chain4`, `chain8`: the K-stage elementwise chains of bench/gpu_chains.py.
- `gemm` (only when named: `--workloads gemm --gemm-sizes 2048 4096`): the naive
  matrix product (one invocation per output) and its `vyre-tile` variants
  (`--gemm-variants`), checked bit for bit against the naive one and against
  float64 numpy, timed against `torch.matmul` in float32 with TF32 off, in TFLOPS.

`--chain-public` adds `chain_public`: the 8-stage chain fused, through the
public path `vyre_xdsl.run(text, {"x": x}, fuse=True, device=True)` (cached
executable, device input), `--chain-runs` runs back to back and one
`synchronize()`, wall clock per run; with the runtime's clear elision
(`execute.ELIDE_CLEARS`) on and off, interleaved batch by batch.

`--back-to-back` also times every workload's modules the same way (`--chain-runs`
runs of `run(device=True)` without profiling, then one `synchronize()`, wall
clock per run), as PyTorch is timed. The profiled rounds wait for every run, and
in the gaps a GPU may lower its clocks: on an H100 the profiled scan ran at an
SM clock of 1365-1530 MHz in some processes and 1980 MHz in others.

The sums and the scan take integer-valued data in [-2, 2], so every partial
sum is exact and results compare exactly, whatever the order of additions.

    python bench/workloads.py                                  # lavapipe: 2^20
    python bench/workloads.py --log2n 28 --hist-log2n 26 --reps 7 \\
        --json bench/results/h200/workloads.json --markdown bench/results/h200/workloads.md \\
        --plot bench/results/h200/workloads.png
    python bench/workloads.py --workloads sum_tree scan --log2n 22
    python bench/workloads.py --workloads sum_tree scan --log2n 22 --coarsen-reductions

`--coarsen-reductions` runs every workload after `vyre-coarsen-reductions`
(k chosen per level, `reassociate-floats=true`): the tree levels combine k
leaves per invocation, and the scan's block scans (`scan0`, `scan1`, ...)
scan k elements per invocation; where a level is large enough, it and its
add-back become reduce-then-scan (the level stores only its block totals, the
add-back scans the level's input again and adds the carried prefix); the
other programs are unchanged.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time

import numpy as np

os.environ.setdefault("WGPU_BACKEND_TYPE", "Vulkan")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gpu_chains import chain_text, numpy_chain  # noqa: E402

import vyre_xdsl  # noqa: E402
from vyre_xdsl.runtime.device import gpu_device  # noqa: E402

WG = 256  # workgroup width of every program here
PRESUM = 16  # elements each invocation combines before the tree
COPIES = 64  # copies of the bins in the privatized histogram
BINS = 256
F32_MAX = "3.4028234663852886e+38"

REDUCE_OPS = {  # vyre op, identity (as IR text), numpy reduction
    "sum": ("add", "0.0", np.sum),
    "min": ("min", F32_MAX, np.min),
    "max": ("max", "-" + F32_MAX, np.max),
}


# ---------------------------------------------------------------- vyre programs


def tree_level(name: str, src: str, dst: str, n: int, op: str, identity: str) -> str:
    """One level of the textbook tree: each workgroup of 256 reduces its 256
    elements of `src` in workgroup memory (8 halving steps, a barrier after
    each) and writes one value of `dst`. Elements past n count as the
    identity (only the last level, when n is not a multiple of 256)."""
    m = math.ceil(n / WG)
    pad = ""
    value = "%v"
    if n % WG:
        pad = f"""
  %n = vyre.const {n} : ui32
  %inside = vyre.lt %i, %n : ui32
  %ident = vyre.const {identity} : f32
  %vp = vyre.select %inside, %v, %ident : f32"""
        value = "%vp"
    return f"""vyre.program @{name} workgroup_size [{WG}, 1, 1] {{
  vyre.buffer @{src} binding 0 read_only : f32[{n}]
  vyre.buffer @{dst} binding 1 write_only : f32[{m}]
  vyre.buffer @tile_{name} workgroup : f32[{WG}]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @{src}[%i] : f32{pad}
  vyre.store @tile_{name}[%l] = {value} : f32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 8 : ui32
  %half = vyre.const {WG // 2} : ui32
  vyre.loop @level = %zero to %levels {{
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {{
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_{name}[%l] : f32
      %b = vyre.load @tile_{name}[%j] : f32
      %s = vyre.{op} %a, %b : f32
      vyre.store @tile_{name}[%l] = %s : f32
    }}
    vyre.barrier
  }}
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {{
    %total = vyre.load @tile_{name}[%zero] : f32
    vyre.store @{dst}[%w] = %total : f32
  }}
}}"""


def tree_levels(src: str, n: int, op: str, identity: str, prefix: str) -> list[str]:
    """Tree levels from `src` (n elements) down to one value in `out`."""
    programs, level = [], 0
    while True:
        m = math.ceil(n / WG)
        dst = "out" if m == 1 else f"{prefix}{level}"
        programs.append(tree_level(f"{prefix}level{level}", src, dst, n, op, identity))
        if m == 1:
            return programs
        src, n, level = dst, m, level + 1


def presum_program(n: int, op: str, presum: int = PRESUM) -> str:
    """p[i] = x[i] op x[i + m] op ... op x[i + (presum - 1) m], m = n / presum."""
    m = n // presum
    return f"""vyre.program @presum workgroup_size [{WG}, 1, 1] {{
  vyre.buffer @x binding 0 read_only : f32[{n}]
  vyre.buffer @p binding 1 write_only : f32[{m}]
  %i = vyre.invocation_id x
  %m = vyre.const {m} : ui32
  %first = vyre.load @x[%i] : f32
  vyre.let @acc = %first : f32
  %one = vyre.const 1 : ui32
  %count = vyre.const {presum} : ui32
  vyre.loop @k = %one to %count {{
    %k = vyre.var @k : ui32
    %off = vyre.mul %k, %m : ui32
    %j = vyre.add %i, %off : ui32
    %v = vyre.load @x[%j] : f32
    %a = vyre.var @acc : f32
    %s = vyre.{op} %a, %v : f32
    vyre.assign @acc = %s : f32
  }}
  %total = vyre.var @acc : f32
  vyre.store @p[%i] = %total : f32
}}"""


def scan_block(name: str, src: str, dst: str, sums: str | None, n: int) -> str:
    """Inclusive scan of each 256-block of `src` into `dst` (Hillis-Steele in
    workgroup memory: 8 steps, each a read, a barrier, a write, a barrier);
    the block's total goes to `sums[workgroup]` when `sums` is given."""
    m = math.ceil(n / WG)
    total = ""
    decl = ""
    if sums is not None:
        decl = f"\n  vyre.buffer @{sums} binding 2 write_only : f32[{m}]"
        total = f"""
  %lastlane = vyre.const {WG - 1} : ui32
  %islast = vyre.eq %l, %lastlane : ui32
  vyre.if %islast {{
    vyre.store @{sums}[%w] = %r : f32
  }}"""
    tile = f"tile_{name}"
    return f"""vyre.program @{name} workgroup_size [{WG}, 1, 1] {{
  vyre.buffer @{src} binding 0 read_only : f32[{n}]
  vyre.buffer @{dst} binding 1 write_only : f32[{n}]{decl}
  vyre.buffer @{tile} workgroup : f32[{WG}]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @{src}[%i] : f32
  vyre.store @{tile}[%l] = %v : f32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %fzero = vyre.const 0.0 : f32
  %steps = vyre.const 8 : ui32
  %one = vyre.const 1 : ui32
  vyre.loop @step = %zero to %steps {{
    %k = vyre.var @step : ui32
    %off = vyre.shl %one, %k : ui32
    %has = vyre.ge %l, %off : ui32
    %j = vyre.sub %l, %off : ui32
    %cur = vyre.load @{tile}[%l] : f32
    %prev = vyre.load @{tile}[%j] : f32
    %add = vyre.select %has, %prev, %fzero : f32
    %s = vyre.add %cur, %add : f32
    vyre.barrier
    vyre.store @{tile}[%l] = %s : f32
    vyre.barrier
  }}
  %r = vyre.load @{tile}[%l] : f32
  vyre.store @{dst}[%i] = %r : f32{total}
}}"""


def scan_add(name: str, local: str, carried: str, dst: str, n: int) -> str:
    """dst[i] = local[i] + carried[block(i) - 1] (nothing for block 0)."""
    m = math.ceil(n / WG)
    return f"""vyre.program @{name} workgroup_size [{WG}, 1, 1] {{
  vyre.buffer @{local} binding 0 read_only : f32[{n}]
  vyre.buffer @{carried} binding 1 read_only : f32[{m}]
  vyre.buffer @{dst} binding 2 write_only : f32[{n}]
  %i = vyre.invocation_id x
  %eight = vyre.const 8 : ui32
  %block = vyre.shr %i, %eight : ui32
  %zero = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %fzero = vyre.const 0.0 : f32
  %has = vyre.ne %block, %zero : ui32
  %b = vyre.sub %block, %one : ui32
  %c = vyre.load @{carried}[%b] : f32
  %add = vyre.select %has, %c, %fzero : f32
  %v = vyre.load @{local}[%i] : f32
  %s = vyre.add %v, %add : f32
  vyre.store @{dst}[%i] = %s : f32
}}"""


def scan_text(n: int) -> str:
    sizes = [n]
    while sizes[-1] > WG:
        sizes.append(math.ceil(sizes[-1] / WG))
    top = len(sizes) - 1
    programs = []
    src = "x"
    for j, size in enumerate(sizes):
        dst = "out" if top == 0 else f"local{j}"
        sums = f"sums{j}" if j < top else None
        programs.append(scan_block(f"scan{j}", src, dst, sums, size))
        src = sums
    # scanned[j]: the full scan at level j (the top level's block scan is one)
    for j in range(top - 1, -1, -1):
        carried = f"local{top}" if j == top - 1 else f"scanned{j + 1}"
        dst = "out" if j == 0 else f"scanned{j}"
        programs.append(scan_add(f"add{j}", f"local{j}", carried, dst, sizes[j]))
    return "\n".join(programs) + "\n"


def elementwise(name: str, src: str, dst: str, n: int, body: str, result: str) -> str:
    return f"""vyre.program @{name} workgroup_size [{WG}, 1, 1] {{
  vyre.buffer @{src} binding 0 read_only : f32[{n}]
  vyre.buffer @{dst} binding 1 write_only : f32[{n}]
  %i = vyre.invocation_id x
{body}
  vyre.store @{dst}[%i] = {result} : f32
}}"""


DOUBLE = """  %two = vyre.const 2.0 : f32
  %v = vyre.load @x[%i] : f32
  %d = vyre.mul %v, %two : f32"""

PAIRS = """  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %a = vyre.load @t[%i] : f32
  %b = vyre.load @t[%j] : f32
  %s = vyre.add %a, %b : f32"""

BLUR = """  %one = vyre.const 1 : ui32
  %quarter = vyre.const 0.25 : f32
  %halfw = vyre.const 0.5 : f32
  %left = vyre.sub %i, %one : ui32
  %right = vyre.add %i, %one : ui32
  %a = vyre.load @t[%left] : f32
  %b = vyre.load @t[%i] : f32
  %c = vyre.load @t[%right] : f32
  %wa = vyre.mul %a, %quarter : f32
  %wb = vyre.mul %b, %halfw : f32
  %wc = vyre.mul %c, %quarter : f32
  %ab = vyre.add %wa, %wb : f32
  %s = vyre.add %ab, %wc : f32"""


def neighbour_text(n: int) -> str:
    return "\n".join(
        [
            elementwise("double", "x", "t", n, DOUBLE, "%d"),
            elementwise("pairs", "t", "out", n, PAIRS, "%s"),
        ]
    )


def stencil_text(n: int) -> str:
    return "\n".join(
        [
            elementwise("double", "x", "t", n, DOUBLE, "%d"),
            elementwise("blur", "t", "out", n, BLUR, "%s"),
        ]
    )


def hist_naive_text(n: int) -> str:
    return f"""vyre.program @hist workgroup_size [{WG}, 1, 1] {{
  vyre.buffer @x binding 0 read_only : ui32[{n}]
  vyre.buffer @out binding 1 write_only : ui32[{BINS}]
  %i = vyre.invocation_id x
  %n = vyre.const {n} : ui32
  %inside = vyre.lt %i, %n : ui32
  vyre.if %inside {{
    %v = vyre.load @x[%i] : ui32
    %one = vyre.const 1 : ui32
    %old = vyre.atomic add @out[%v], %one : ui32
  }}
}}
"""


def hist_private_text(n: int) -> str:
    return f"""vyre.program @hist_copies workgroup_size [{WG}, 1, 1] {{
  vyre.buffer @x binding 0 read_only : ui32[{n}]
  vyre.buffer @copies binding 1 write_only : ui32[{COPIES * BINS}]
  %i = vyre.invocation_id x
  %w = vyre.workgroup_id x
  %n = vyre.const {n} : ui32
  %inside = vyre.lt %i, %n : ui32
  vyre.if %inside {{
    %v = vyre.load @x[%i] : ui32
    %mask = vyre.const {COPIES - 1} : ui32
    %copy = vyre.bit_and %w, %mask : ui32
    %bins = vyre.const {BINS} : ui32
    %base = vyre.mul %copy, %bins : ui32
    %slot = vyre.add %base, %v : ui32
    %one = vyre.const 1 : ui32
    %old = vyre.atomic add @copies[%slot], %one : ui32
  }}
}}
vyre.program @hist_merge workgroup_size [{WG}, 1, 1] {{
  vyre.buffer @copies binding 0 read_only : ui32[{COPIES * BINS}]
  vyre.buffer @out binding 1 write_only : ui32[{BINS}]
  %b = vyre.invocation_id x
  %zero = vyre.const 0 : ui32
  %bins = vyre.const {BINS} : ui32
  %count = vyre.const {COPIES} : ui32
  vyre.let @acc = %zero : ui32
  vyre.loop @c = %zero to %count {{
    %c = vyre.var @c : ui32
    %base = vyre.mul %c, %bins : ui32
    %slot = vyre.add %base, %b : ui32
    %v = vyre.load @copies[%slot] : ui32
    %a = vyre.var @acc : ui32
    %s = vyre.add %a, %v : ui32
    vyre.assign @acc = %s : ui32
  }}
  %total = vyre.var @acc : ui32
  vyre.store @out[%b] = %total : ui32
}}
"""


# ---------------------------------------------------------------- workloads


class Workload:
    """A vyre module, its input, numpy's answer and PyTorch's versions."""

    def __init__(self, name, text, x, expected, moved, exact, torch_fns, small_output):
        self.name = name
        self.text = text
        self.x = x
        self.expected = expected
        self.moved = moved  # bytes an ideal single pass moves (read input, write output)
        self.exact = exact
        self.torch_fns = torch_fns  # (native, eager) -> callable(torch tensor) or None
        self.small_output = small_output

    def check(self, out: np.ndarray) -> bool:
        out = np.asarray(out).reshape(-1)
        if out.shape != self.expected.shape:
            return False
        if self.exact:
            return bool(np.array_equal(out, self.expected))
        return bool(np.allclose(out, self.expected, rtol=1e-5, atol=1e-6))


def integer_f32(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-2, 3, n).astype(np.float32)


def normal_f32(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def coarsened_text(text: str) -> str:
    """`text` after `vyre-coarsen-reductions` (k chosen per level; float add and
    mul regrouped: `reassociate-floats=true`; scans on subgroup shuffles where the
    device has subgroups, as the pipeline does), as IR text."""
    from xdsl.context import Context

    from vyre_xdsl.passes.vyre_coarsen_reductions import VyreCoarsenReductionsPass
    from vyre_xdsl.runtime.device import gpu_device

    subgroups = gpu_device().target_profile.subgroups
    module = vyre_xdsl.parse(text)
    VyreCoarsenReductionsPass(reassociate_floats=True, subgroups=subgroups).apply(Context(), module)
    return str(module) + "\n"


def shifted(t: np.ndarray, by: int) -> np.ndarray:
    """t[i + by] with zeros outside (by = +1 or -1)."""
    out = np.zeros_like(t)
    if by > 0:
        out[:-by] = t[by:]
    else:
        out[-by:] = t[:by]
    return out


def make(name: str, n: int, hist_n: int, presum: int = PRESUM) -> Workload:
    if name.endswith("_tree") or name.endswith("_presum"):
        kind, form = name.split("_")
        op, identity, reduce = REDUCE_OPS[kind]
        x = integer_f32(n, 1) if kind == "sum" else normal_f32(n, 2)
        programs = []
        src, size = "x", n
        if form == "presum":
            programs.append(presum_program(n, op, presum))
            src, size = "p", n // presum
        programs += tree_levels(src, size, op, identity, "r")
        native = {"sum": "sum", "min": "amin", "max": "amax"}[kind]
        return Workload(
            name,
            "\n".join(programs) + "\n",
            x,
            np.array([reduce(x.astype(np.float64))], dtype=np.float32),
            4 * n + 4,
            True,
            {
                "native": lambda t, f=native: getattr(t, f)(),
                "eager": lambda t, f=native: getattr(t, f)(),
            },
            True,
        )
    if name == "scan":
        x = integer_f32(n, 3)
        return Workload(
            name,
            scan_text(n),
            x,
            np.cumsum(x, dtype=np.float64).astype(np.float32),
            8 * n,
            True,
            {"native": lambda t: t.cumsum(0), "eager": lambda t: t.cumsum(0)},
            False,
        )
    if name in ("neighbour", "stencil3"):
        x = integer_f32(n, 4)
        t = 2 * x
        if name == "neighbour":
            expected = t + shifted(t, 1)
            text = neighbour_text(n)
            weights = (2.0, 2.0, 0.0)
        else:
            expected = 0.25 * shifted(t, -1) + 0.5 * t + 0.25 * shifted(t, 1)
            text = stencil_text(n)
            weights = (0.5, 1.0, 0.5)
        return Workload(
            name,
            text,
            x,
            expected.astype(np.float32),
            8 * n,
            True,
            {"native": conv3(weights), "eager": neighbour_eager(name)},
            False,
        )
    if name in ("hist_naive", "hist_private"):
        x = np.random.default_rng(5).integers(0, BINS, hist_n).astype(np.uint32)
        text = hist_naive_text(hist_n) if name == "hist_naive" else hist_private_text(hist_n)
        return Workload(
            name,
            text,
            x,
            np.bincount(x, minlength=BINS).astype(np.uint32),
            4 * hist_n + 4 * BINS,
            True,
            {"native": lambda t: t.bincount(minlength=BINS), "eager": hist_eager},
            True,
        )
    if name.startswith("chain"):
        stages = int(name[len("chain") :])
        x = normal_f32(n, 6)
        return Workload(
            name,
            chain_text(stages, n),
            x,
            numpy_chain(x, stages),
            8 * n,
            False,
            {"native": None, "eager": chain_eager(stages)},
            False,
        )
    raise SystemExit(f"unknown workload '{name}'; choose from {', '.join(WORKLOADS)}")


WORKLOADS = [
    "sum_tree",
    "min_tree",
    "max_tree",
    "sum_presum",
    "min_presum",
    "max_presum",
    "scan",
    "neighbour",
    "stencil3",
    "hist_naive",
    "hist_private",
    "chain4",
    "chain8",
]


def conv3(weights):
    """y[i] = w0 x[i-1] + w1 x[i] + w2 x[i+1] with zero padding, as one conv1d."""

    def native(t):
        import torch

        kernel = torch.tensor(weights, dtype=t.dtype, device=t.device).view(1, 1, 3)
        return torch.nn.functional.conv1d(t.view(1, 1, -1), kernel, padding=1).view(-1)

    return native


def neighbour_eager(name):
    def eager(x):
        import torch

        t = 2 * x
        right = torch.nn.functional.pad(t[1:], (0, 1))
        if name == "neighbour":
            return t + right
        left = torch.nn.functional.pad(t[:-1], (1, 0))
        return 0.25 * left + 0.5 * t + 0.25 * right

    return eager


def hist_eager(x):
    import torch

    bins = torch.zeros(BINS, dtype=torch.int64, device=x.device)
    return bins.index_add_(0, x.long(), torch.ones_like(x, dtype=torch.int64))


def chain_eager(stages):
    from gpu_chains import COEFFS

    def eager(t):
        for k in range(stages):
            c, d = COEFFS[k]
            t = t * c + d
        return t

    return eager


# ---------------------------------------------------------------- timing


def spread(values: list[float]) -> dict:
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "all": values,
    }


def time_vyre(work: Workload, modes: dict[str, bool | str], args) -> dict[str, dict]:
    """Each variant (label -> `fuse` mode) compiled once, checked, then timed with
    the variants interleaved: warm-up rounds for `--warmup` seconds, then `--reps`
    rounds of one profiled run of each, so a drift of the machine's speed hits
    every variant alike."""
    results: dict[str, dict] = {}
    exes = {}
    for label, fuse in modes.items():
        started = time.perf_counter()
        try:
            exes[label] = vyre_xdsl.compile(work.text, backend="wgpu", fuse=fuse)
        except Exception as error:  # a fusion or compile failure is a result, not a crash
            results[label] = {
                "error": f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
            }
            continue
        results[label] = {"compile_s": time.perf_counter() - started}
    x = vyre_xdsl.to_device(work.x, adapter=args.adapter)
    inputs = {"x": x}
    checks: dict[str, list[bool]] = {label: [] for label in exes}
    totals: dict[str, list[float]] = {label: [] for label in exes}
    kernels: dict[str, list[list[float]]] = {label: [] for label in exes}

    def check(label: str, out) -> None:
        checks[label].append(work.check(out.numpy()))
        out.free()

    for label in exes:
        check(label, exes[label].run(inputs, device=True)["out"])
    warm_up(exes, inputs, args)
    pool = gpu_device(args.adapter).pool
    created = pool.created
    timed_from = time.time()  # wall clock, to set beside a log of the GPU's clocks
    last = {}  # a large output is read back after the timed rounds: reading 1 GiB idles the GPU
    for rep in range(args.reps):
        for label, exe in exes.items():
            out = exe.run(inputs, device=True, profile=True)["out"]
            totals[label].append(exe.last_profile.total_seconds)
            kernels[label].append([k.seconds for k in exe.last_profile.kernels])
            if work.small_output:
                check(label, out)
            elif rep == args.reps - 1:
                last[label] = out
            else:
                out.free()
    for label, out in last.items():
        check(label, out)
    # GPU buffers the runtime had to make during the timed rounds of all the
    # variants together (0 when the pool hands every run its buffers back; a
    # fresh 1 GiB buffer costs time)
    created = pool.created - created
    timed_unix = [timed_from, time.time()]
    walls = back_to_back(exes, inputs, work, args) if args.back_to_back else {}
    x.free()
    for label, exe in exes.items():
        names = [k.name for k in exe.last_profile.kernels]
        results[label].update(
            {
                "seconds": spread(totals[label]),
                "kernels": [
                    {"name": name, "median_s": statistics.median(k[i] for k in kernels[label])}
                    for i, name in enumerate(names)
                ],
                "kernel_count": len(names),
                "buffers_created_while_timing": created,
                "correct": all(checks[label]),
                "checks": len(checks[label]),
                "timed_unix": timed_unix,
            }
        )
        if label in walls:
            results[label]["back_to_back"] = walls[label]
    return results


def warm_up(exes: dict, inputs: dict, args) -> None:
    """`--warmup` seconds of the variants' runs queued back to back (no profiling,
    one synchronize per batch), so the GPU is busy and at its full clock when the
    timing starts. Profiled runs each wait for the GPU; a warm-up made of them
    left an H100's SM clock still rising (630 to 1530 MHz) when the timed rounds
    began, and where it settled varied from process to process."""
    end = time.perf_counter() + args.warmup
    while time.perf_counter() < end:
        for exe in exes.values():
            for _ in range(args.chain_runs):
                exe.run(inputs, device=True)
        vyre_xdsl.synchronize()


def back_to_back(exes: dict, inputs: dict, work: Workload, args) -> dict[str, dict]:
    """Each variant as a user queues it: `--chain-runs` runs of `run(device=True)`
    without profiling, then one synchronize; wall clock per run, `--reps` batches
    per variant, interleaved, after `--warmup` seconds of the same. This keeps the
    GPU as busy as PyTorch's timing loop does (the profiled rounds wait for every
    run, and between them a GPU may lower its clocks: docs/performance.md). Each
    variant's last output is checked against numpy once all the batches are
    timed: reading 1 GiB back after every batch left an H100 idle long enough to
    drop its SM clock to about 500 MHz before the next batch."""
    last: dict[str, object] = {}

    def batch(label: str) -> float:
        start = time.perf_counter()
        for _ in range(args.chain_runs):
            last[label] = exes[label].run(inputs, device=True)["out"]
        vyre_xdsl.synchronize()
        return (time.perf_counter() - start) / args.chain_runs

    end = time.perf_counter() + args.warmup
    while time.perf_counter() < end:
        for label in exes:
            batch(label)
    walls: dict[str, list[float]] = {label: [] for label in exes}
    for _ in range(args.reps):
        for label in exes:
            walls[label].append(batch(label))
    correct = {label: work.check(last[label].numpy()) for label in exes}
    return {label: spread(walls[label]) | {"correct": correct[label]} for label in exes}


def chain_public(n: int, args) -> dict:
    """`chain_public`: the fused 8-stage chain through `vyre_xdsl.run(...,
    device=True)`, `--chain-runs` back to back then one synchronize, wall clock
    per run; `--reps` batches with clear elision on and `--reps` with it off,
    interleaved. The last output of each setting is checked against numpy once
    all the batches are timed (a check after every batch idles the GPU, and its
    clock drops: see `back_to_back`)."""
    import importlib

    execute = importlib.import_module("vyre_xdsl.runtime.execute")
    work = make("chain8", n, n)
    text = work.text
    x = vyre_xdsl.to_device(work.x, adapter=args.adapter)
    per_run: dict[str, list[float]] = {"elided": [], "cleared": []}
    correct = False
    last: dict[bool, object] = {}

    def batch(elide: bool) -> float:
        execute.ELIDE_CLEARS = elide
        start = time.perf_counter()
        for _ in range(args.chain_runs):
            out = vyre_xdsl.run(text, {"x": x}, backend="wgpu", fuse=True, device=True)["out"]
        vyre_xdsl.synchronize()
        last[elide] = out
        return (time.perf_counter() - start) / args.chain_runs

    try:
        end = time.perf_counter() + args.warmup
        while time.perf_counter() < end:
            batch(True)
            batch(False)
        for _ in range(args.reps):
            per_run["elided"].append(batch(True))
            per_run["cleared"].append(batch(False))
        correct = all(work.check(out.numpy()) for out in last.values())
    finally:
        execute.ELIDE_CLEARS = True
        x.free()
    rows = {label: spread(values) for label, values in per_run.items()}
    lines = [
        f"chain_public (fused chain8, 2^{int(math.log2(n))} f32, {args.chain_runs} runs per "
        "batch): wall clock per run, ms, median (min-max)",
        "",
        "| clears | median | min | max |",
        "| --- | ---: | ---: | ---: |",
    ]
    for label, row in rows.items():
        lines.append(
            f"| {label} | {row['median'] * 1e3:.3f} | {row['min'] * 1e3:.3f} | "
            f"{row['max'] * 1e3:.3f} |"
        )
    return {"seconds": rows, "correct": correct, "markdown": "\n".join(lines)}


def torch_setup():
    try:
        import torch
    except ImportError:
        return None, "PyTorch is not installed"
    if not torch.cuda.is_available():
        return None, "PyTorch has no CUDA device"
    return torch, None


def time_torch(torch, fn, tx, args) -> dict:
    end = time.perf_counter() + args.warmup
    while time.perf_counter() < end:
        fn(tx)
    torch.cuda.synchronize()
    times = []
    timed_from = time.time()
    for _ in range(args.reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(10):
            fn(tx)
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / 1e3 / 10)
    return spread(times) | {"timed_unix": [timed_from, time.time()]}


def torch_columns(torch, work: Workload, args) -> dict:
    if work.x.dtype == np.uint32:
        tx = torch.from_numpy(work.x.astype(np.int32)).cuda()
    else:
        tx = torch.from_numpy(work.x).cuda()
    result = {}
    fns = dict(work.torch_fns)
    fns["compile"] = None
    try:
        fns["compile"] = torch.compile(fns["eager"])
        fns["compile"](tx)
    except Exception as error:  # no compiler toolchain: say so, keep the rest
        result["compile_error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:160]}"
        fns["compile"] = None
    for label, fn in fns.items():
        if fn is None:
            continue
        got = fn(tx).reshape(-1).cpu().numpy()
        ok = work.check(got.astype(work.expected.dtype)) or (
            not work.exact and bool(np.allclose(got, work.expected, rtol=1e-4, atol=1e-4))
        )
        # sums in another order differ in the last bits: report, do not fail
        result[label] = time_torch(torch, fn, tx, args) | {"matches_numpy": ok}
    del tx
    torch.cuda.empty_cache()
    return result


# ---------------------------------------------------------------- output


def ms(entry) -> str:
    return f"{entry['seconds']['median'] * 1e3:.3f}" if entry and "seconds" in entry else "-"


def row_cells(row: dict) -> list[str]:
    n = row["bytes"]
    cells = [row["workload"], f"2^{row['log2n']}"]
    for label in ("unfused", "fused"):
        entry = row.get(label, {})
        if not entry:
            cells.append("-")
            continue
        if "error" in entry:
            cells.append("error")
            continue
        t = entry["seconds"]
        cells.append(
            f"{t['median'] * 1e3:.3f} ({t['min'] * 1e3:.3f}-{t['max'] * 1e3:.3f}), "
            f"{n / t['median'] / 1e9:.4g} GB/s, {entry['kernel_count']} k"
        )
    u, f = row.get("unfused", {}), row.get("fused", {})
    if "seconds" in u and "seconds" in f:
        cells.append(f"{f['seconds']['median'] / u['seconds']['median']:.2f}")
    else:
        cells.append("-")
    torch_cols = row.get("torch", {})
    for label in ("native", "eager", "compile"):
        entry = torch_cols.get(label)
        cells.append(f"{entry['median'] * 1e3:.3f}" if entry else "-")
    best_torch = min(
        (torch_cols[k]["median"] for k in ("native", "eager", "compile") if k in torch_cols),
        default=None,
    )
    best_vyre = min((e["seconds"]["median"] for e in (u, f) if "seconds" in e), default=None)
    cells.append(f"{best_vyre / best_torch:.2f}" if best_torch and best_vyre else "-")
    cells.append(
        "yes"
        if all(row[k].get("correct", False) for k in ("unfused", "fused") if k in row)
        else "NO"
    )
    return cells


def back_to_back_line(row: dict) -> str:
    """The back-to-back wall clock per run of each variant, and the best of them
    against the best PyTorch path."""
    parts, best = [], None
    for label in ("unfused", "fused"):
        t = row.get(label, {}).get("back_to_back")
        if not t:
            continue
        parts.append(f"{label} {t['median'] * 1e3:.3f} ({t['min'] * 1e3:.3f}-{t['max'] * 1e3:.3f})")
        best = t["median"] if best is None else min(best, t["median"])
    torch_cols = row.get("torch", {})
    best_torch = min(
        (torch_cols[k]["median"] for k in ("native", "eager", "compile") if k in torch_cols),
        default=None,
    )
    ratio = f"; best / best torch {best / best_torch:.2f}" if best and best_torch else ""
    return "back to back, wall clock per run, ms: " + ", ".join(parts) + ratio


HEADER = [
    "workload",
    "n",
    "vyre unfused: ms (min-max), GB/s, kernels",
    "vyre fused",
    "fused / unfused",
    "torch native ms",
    "torch eager ms",
    "torch.compile ms",
    "best vyre / best torch",
    "numpy-checked",
]


def markdown(rows: list[dict]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + " --- |" * len(HEADER)]
    lines += ["| " + " | ".join(row_cells(r)) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def plot(rows: list[dict], path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot")
        return
    labels = [r["workload"] for r in rows]
    series = {
        "vyre unfused": [r.get("unfused", {}).get("seconds", {}).get("median") for r in rows],
        "vyre fused": [r.get("fused", {}).get("seconds", {}).get("median") for r in rows],
    }
    for label in ("native", "eager", "compile"):
        values = [r.get("torch", {}).get(label, {}).get("median") for r in rows]
        if any(v is not None for v in values):
            series["torch " + label] = values
    fig, ax = plt.subplots(figsize=(max(8, len(rows) * 0.9), 4.5))
    width = 0.8 / len(series)
    for k, (label, values) in enumerate(series.items()):
        xs = [i + k * width for i, v in enumerate(values) if v]
        ax.bar(xs, [v * 1e3 for v in values if v], width, label=label)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(rows))], labels, rotation=30, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel("GPU time per run (ms, log)")
    ax.set_title(f"workloads on {rows[0]['adapter']}" if rows else "workloads")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print("wrote", path)


# ---------------------------------------------------------------- gemm


def gemm_text(m: int, n: int, k: int, wg: int = 16) -> str:
    """The naive matrix product C = A B (A m x k, B k x n, row-major f32), as a
    user writes it: one invocation per output on a 2-D grid (column on x, row
    on y), a guard, a loop over k accumulating in a named local, one store."""
    return f"""vyre.program @gemm workgroup_size [{wg}, {wg}, 1] grid [{-(-n // wg)}, {-(-m // wg)}, 1] {{
  vyre.buffer @A binding 0 read_only : f32[{m * k}]
  vyre.buffer @B binding 1 read_only : f32[{k * n}]
  vyre.buffer @C binding 2 write_only : f32[{m * n}]
  %col = vyre.invocation_id x
  %row = vyre.invocation_id y
  %m = vyre.const {m} : ui32
  %n = vyre.const {n} : ui32
  %k = vyre.const {k} : ui32
  %zero = vyre.const 0.0 : f32
  %lo = vyre.const 0 : ui32
  %in_col = vyre.lt %col, %n : ui32
  %in_row = vyre.lt %row, %m : ui32
  %inside = vyre.and %in_col, %in_row : i1
  vyre.if %inside {{
    vyre.let @acc = %zero : f32
    vyre.loop @kk = %lo to %k {{
      %kv = vyre.var @kk : ui32
      %ra = vyre.mul %row, %k : ui32
      %ia = vyre.add %ra, %kv : ui32
      %a = vyre.load @A[%ia] : f32
      %rb = vyre.mul %kv, %n : ui32
      %ib = vyre.add %rb, %col : ui32
      %b = vyre.load @B[%ib] : f32
      %p = vyre.mul %a, %b : f32
      %acc = vyre.var @acc : f32
      %s = vyre.add %acc, %p : f32
      vyre.assign @acc = %s : f32
    }}
    %r = vyre.var @acc : f32
    %rc = vyre.mul %row, %n : ui32
    %ic = vyre.add %rc, %col : ui32
    vyre.store @C[%ic] = %r : f32
  }}
}}
"""


#: the `vyre-tile` options of each tiled variant timed (label -> pass options)
GEMM_VARIANTS = {
    "tiled": "vyre-tile",
    "tiled_k8": "vyre-tile{tile-k=8}",
    "tiled_k16_pad": "vyre-tile{max-workgroup-storage=65536}",
    "tiled_scalar": "vyre-tile{vector-width=1}",
    "tiled_4x4": "vyre-tile{reg-m=4 reg-n=4}",
    "tiled_8x4": "vyre-tile{reg-m=8 reg-n=4}",
}


def tiled_module(text: str, spec: str):
    """`text` parsed and run through the pass pipeline `spec` (e.g. vyre-tile)."""
    from xdsl.passes import PassPipeline

    from vyre_xdsl.context import vyre_context
    from vyre_xdsl.diagnostics import verify_module
    from vyre_xdsl.passes import get_all_passes

    module = vyre_xdsl.parse(text)
    PassPipeline.parse_spec(get_all_passes(), spec).apply(vyre_context(), module)
    verify_module(module)
    return module


def gemm_rows(sizes: list[int], variants: list[str], torch, args) -> tuple[list[dict], list[str]]:
    """`gemm` at each size n (n x n x n): the naive program and its `vyre-tile`
    variants, timed interleaved (GPU timestamps) after `--warmup` seconds; every
    variant's first output is compared with the naive one bit for bit and with
    float64 numpy (relative Frobenius error); torch.matmul in float32 with TF32
    off, timed with CUDA events, in the same process."""
    rows, failed = [], []
    for n in sizes:
        rng = np.random.default_rng(n)
        a = rng.standard_normal((n, n)).astype(np.float32)
        b = rng.standard_normal((n, n)).astype(np.float32)
        text = gemm_text(n, n, n)
        exes = {"naive": vyre_xdsl.compile(text, backend="wgpu", adapter=args.adapter)}
        for label in variants:
            try:
                module = tiled_module(text, GEMM_VARIANTS[label])
                exes[label] = vyre_xdsl.compile(module, backend="wgpu", adapter=args.adapter)
            except Exception as error:  # a variant the device refuses is a result
                print(f"gemm {n} {label}: {type(error).__name__}: {str(error)[:300]}")
                failed.append(f"gemm {n} {label}: does not compile")
        inputs = {
            "A": vyre_xdsl.to_device(a.ravel(), adapter=args.adapter),
            "B": vyre_xdsl.to_device(b.ravel(), adapter=args.adapter),
        }
        reference = a.astype(np.float64) @ b.astype(np.float64)
        flops = 2.0 * n * n * n
        row: dict = {"workload": "gemm", "n": n, "flops": flops}
        outputs = {}
        for label, exe in exes.items():
            out = exe.run(inputs, device=True)["C"]
            outputs[label] = out.numpy().reshape(n, n)
            out.free()
        for label in exes:
            got = outputs[label]
            error = float(np.linalg.norm(got - reference) / np.linalg.norm(reference))
            same = bool(np.array_equal(got.view(np.uint32), outputs["naive"].view(np.uint32)))
            row[label] = {"rel_error": error, "bit_identical_to_naive": same}
            if not (error < 1e-5 and (label == "naive" or same)):
                failed.append(f"gemm {n} {label}: error {error:.3g}, bit-identical {same}")
        times = profiled_rounds(exes, inputs, "C", args)
        for label in exes:
            row[label]["seconds"] = spread(times[label])
            row[label]["tflops"] = flops / statistics.median(times[label]) / 1e12
        for array in inputs.values():
            array.free()
        if torch is not None:
            torch.backends.cuda.matmul.allow_tf32 = False
            ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
            got = torch.matmul(ta, tb).cpu().numpy()
            row["torch"] = time_torch(torch, lambda t: torch.matmul(t, tb), ta, args)
            row["torch"]["tflops"] = flops / row["torch"]["median"] / 1e12
            row["torch"]["rel_error"] = float(
                np.linalg.norm(got - reference) / np.linalg.norm(reference)
            )
            del ta, tb
            torch.cuda.empty_cache()
        rows.append(row)
        print(gemm_line(row), flush=True)
    return rows, failed


def profiled_rounds(exes: dict, inputs: dict, output: str, args) -> dict[str, list[float]]:
    """Each executable's GPU time (`last_profile.total_seconds`) over `args.reps`
    rounds, interleaved (one run of each per round), after `args.warmup` seconds
    of the same; `output` is freed after each run."""

    def once(label: str, times: dict[str, list[float]]) -> None:
        exes[label].run(inputs, device=True, profile=True)[output].free()
        times[label].append(exes[label].last_profile.total_seconds)

    warm: dict[str, list[float]] = {label: [] for label in exes}
    end = time.perf_counter() + args.warmup
    while time.perf_counter() < end:
        for label in exes:
            once(label, warm)
    times: dict[str, list[float]] = {label: [] for label in exes}
    for _ in range(args.reps):
        for label in exes:
            once(label, times)
    return times


def gemm_line(row: dict) -> str:
    cells = [f"gemm {row['n']}^3"]
    for label, entry in row.items():
        if not isinstance(entry, dict) or "seconds" not in entry and "median" not in entry:
            continue
        t = entry.get("seconds", entry)
        cells.append(
            f"{label} {t['median'] * 1e3:.3f} ms ({t['min'] * 1e3:.3f}-{t['max'] * 1e3:.3f}) "
            f"{entry['tflops']:.2f} TFLOPS"
        )
    if "torch" in row:
        best = min(
            row[k]["seconds"]["median"]
            for k in row
            if k not in ("torch",) and isinstance(row[k], dict) and "seconds" in row[k]
        )
        cells.append(f"best vyre / torch {best / row['torch']['median']:.2f}")
    return " | ".join(cells)


# ---------------------------------------------------------------- main


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--log2n", type=int, default=None, help="f32 elements: 2^LOG2N (default 20; 28 on CUDA)"
    )
    p.add_argument(
        "--hist-log2n", type=int, default=None, help="histogram ui32 elements (default log2n - 2)"
    )
    p.add_argument(
        "--workloads", nargs="+", default=WORKLOADS, choices=[*WORKLOADS, "gemm"], metavar="NAME"
    )
    p.add_argument(
        "--gemm-sizes",
        type=int,
        nargs="+",
        default=None,
        help="gemm: n for n x n x n (2048 4096 on CUDA)",
    )
    p.add_argument(
        "--gemm-variants", nargs="+", default=["tiled"], choices=list(GEMM_VARIANTS), metavar="NAME"
    )
    p.add_argument("--reps", type=int, default=5, help="timed runs per variant")
    p.add_argument(
        "--presum",
        type=int,
        default=PRESUM,
        help=f"elements each invocation combines in the *_presum workloads (default {PRESUM}; "
        "above 16 the loop stays a loop in the WGSL)",
    )
    p.add_argument("--warmup", type=float, default=0.5, help="seconds of runs before timing")
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--no-fused", action="store_true", help="time only the unfused modules")
    p.add_argument(
        "--force-fused",
        action="store_true",
        help="the fused column fuses every program into one (fuse='force'), cost model or not",
    )
    p.add_argument(
        "--coarsen-reductions",
        action="store_true",
        help="run every workload after vyre-coarsen-reductions (k chosen per level, float "
        "add regrouped: reassociate-floats=true): the tree levels and the scan's block "
        "scans each invocation coarsens; the other programs stay as written",
    )
    p.add_argument("--adapter", default=None, help="adapter index or description substring")
    p.add_argument(
        "--chain-public",
        action="store_true",
        help="also time chain_public (wall clock of run(device=True), clears elided and not)",
    )
    p.add_argument(
        "--chain-runs",
        type=int,
        default=20,
        help="runs per batch of chain_public and --back-to-back",
    )
    p.add_argument(
        "--back-to-back",
        action="store_true",
        help="also time every workload's modules as --chain-runs runs of run(device=True) "
        "back to back and one synchronize (wall clock per run), as PyTorch is timed",
    )
    p.add_argument("--json", default=None)
    p.add_argument("--markdown", default=None)
    p.add_argument("--plot", default=None)
    args = p.parse_args()

    torch, why = (None, "--no-torch") if args.no_torch else torch_setup()
    if args.log2n is None:
        args.log2n = 28 if torch is not None else 20
    if args.hist_log2n is None:
        args.hist_log2n = args.log2n - 2
    n, hist_n = 1 << args.log2n, 1 << args.hist_log2n
    gpu = gpu_device(args.adapter)
    adapter = gpu.describe()
    print(f"adapter: {adapter}; n = 2^{args.log2n}, histogram 2^{args.hist_log2n}", flush=True)
    if torch is None:
        print(f"PyTorch columns skipped: {why}", flush=True)
    rows, failed = [], []
    gemm = []
    if "gemm" in args.workloads:
        sizes = args.gemm_sizes or ([2048, 4096] if torch is not None else [256])
        gemm, failed = gemm_rows(sizes, args.gemm_variants, torch, args)
    for name in args.workloads:
        if name == "gemm":
            continue
        work = make(name, n, hist_n, args.presum)
        if args.coarsen_reductions:
            work.text = coarsened_text(work.text)
        row = {
            "workload": name,
            "log2n": args.hist_log2n if name.startswith("hist") else args.log2n,
            "bytes": work.moved,
            "adapter": adapter,
        }
        modes: dict[str, bool | str] = {"unfused": False}
        if not args.no_fused:
            modes["fused"] = "force" if args.force_fused else True
        row.update(time_vyre(work, modes, args))
        for label in modes:
            if not row[label].get("correct", False):
                failed.append(f"{name} {label}: {row[label].get('error', 'wrong result')}")
        if torch is not None:
            row["torch"] = torch_columns(torch, work, args)
        rows.append(row)
        print(" | ".join(row_cells(row)), flush=True)
        if args.back_to_back:
            print(f"    {back_to_back_line(row)}", flush=True)
            for label in modes:
                if not row[label].get("back_to_back", {}).get("correct", True):
                    failed.append(f"{name} {label} back to back: wrong result")
        for label in ("unfused", "fused"):
            kernels = row.get(label, {}).get("kernels", [])
            if kernels:
                print(
                    f"    {label} kernels: "
                    + ", ".join(f"{k['name']} {k['median_s'] * 1e3:.3f}" for k in kernels),
                    flush=True,
                )
    table = markdown(rows)
    print()
    print(table)
    if args.chain_public:
        public = chain_public(n, args)
        print()
        print(public["markdown"])
        if not public["correct"]:
            failed.append("chain_public: wrong result")
    meta = {
        "adapter": adapter,
        "log2n": args.log2n,
        "hist_log2n": args.hist_log2n,
        "reps": args.reps,
        "warmup_s": args.warmup,
        "python": platform.python_version(),
        "torch": None if torch is None else torch.__version__,
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "command": " ".join(sys.argv),
        "coarsen_reductions": args.coarsen_reductions,
    }
    if args.chain_public:
        meta["chain_public"] = {k: v for k, v in public.items() if k != "markdown"}
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows, "gemm": gemm}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)
    if args.plot and rows:
        plot(rows, args.plot)
    if failed:
        print("WRONG RESULTS:\n  " + "\n  ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
