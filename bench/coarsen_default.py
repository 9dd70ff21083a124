"""Should the pipeline coarsen tree reductions by default? The trade-off of
`vyre-coarsen-reductions` against fusion, measured: GPU time of a tree
reduction as written and coarsened, alone and behind an elementwise producer.

    python bench/coarsen_default.py --log2n 22 --reps 9
    python bench/coarsen_default.py --kinds min_f32 add_ui32 --log2n 20 --reps 5

Each kind is a combine and an element type (`min_f32`, `max_f32`, `add_ui32`,
`min_ui32`); the tree is bench/workloads.py's `tree_levels` (256 wide, a program
per level), the producer squares each element (`y = x * x`, wrapping for ui32).
Variants, compiled with fusion on (`fuse=True`):

- `tree`: the tree as written (one element per invocation);
- `coarsened`: the tree after `vyre-coarsen-reductions` (k chosen per level);
- `prod_fused`: a producer program, then the tree over `y`, not coarsened: the
  producer fuses into the first level where the cost model says so;
- `prod_coarsened`: the same module coarsened before fusion (the order of the
  `vyre-to-kernel` pipeline's steps: the coarsened level has an explicit grid,
  so the producer stays a dispatch of its own);
- `fused_coarsened`: the same module fused first and then coarsened (the order
  `vyre_xdsl.compile(..., fuse=True)` runs them in: fusion is done before the
  pipeline's steps);
- `inline_coarsened`: the producer written inside the first level (its leaf
  is `x[i] * x[i]`), coarsened;
- `beside_fused`: an elementwise program the tree does not read (`w = x * x`)
  before the tree, fused first (the cost model puts it into the first level,
  which then is no tree level any more) and then coarsened (nothing to do);
- `beside_coarsened`: the same module coarsened before fusion (the two stay
  apart);
- `beside_pipeline`: the same module compiled by the real default pipeline
  (`fuse=True`, nothing coarsened by hand): the first level reads only the
  module input, so the pipeline coarsens it before fusion
  (`vyre-coarsen-reductions{inputs-only=true}`) and `beside` stays apart.

Every other compile here runs the pipeline with `coarsen-reductions=false`,
whatever its default (bench/uncoarsened.py patches it, in the backend and in
the front end): each variant is coarsened (or not) explicitly above, and the
persistent compile cache is off. Timing as in bench/workloads.py's
`time_vyre`: `--warmup` seconds of runs of every variant, then `--reps`
interleaved rounds of one profiled run each; GPU time is the sum of the
timestamp-query deltas of a run's kernels. Every run's result is checked
against numpy (f32 min/max and wrapping ui32 sums are exact).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("WGPU_BACKEND_TYPE", "Vulkan")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import uncoarsened  # noqa: E402
from workloads import F32_MAX, tree_levels  # noqa: E402
from xdsl.context import Context  # noqa: E402

import vyre_xdsl  # noqa: E402
from vyre_xdsl.frontend import fuse_module  # noqa: E402
from vyre_xdsl.passes.vyre_coarsen_reductions import VyreCoarsenReductionsPass  # noqa: E402

uncoarsened.install()

# combine, element type: identity (IR text), numpy reduction
KINDS = {
    "min_f32": ("min", "f32", F32_MAX, np.min),
    "max_f32": ("max", "f32", "-" + F32_MAX, np.max),
    "add_ui32": ("add", "ui32", "0", np.sum),
    "min_ui32": ("min", "ui32", "4294967295", np.min),
}


def retyped(text: str, element: str) -> str:
    """The f32 programs of bench/workloads.py with `element` elements instead."""
    return text.replace(": f32", f": {element}").replace("f32[", f"{element}[")


def producer(n: int, element: str) -> str:
    return f"""vyre.program @square workgroup_size [256, 1, 1] {{
  vyre.buffer @x binding 0 read_only : {element}[{n}]
  vyre.buffer @y binding 1 write_only : {element}[{n}]
  %i = vyre.invocation_id x
  %a = vyre.load @x[%i] : {element}
  %b = vyre.mul %a, %a : {element}
  vyre.store @y[%i] = %b : {element}
}}"""


def beside(n: int, element: str) -> str:
    """An elementwise program the tree does not read: `w = x * x`."""
    return producer(n, element).replace("@square", "@beside").replace("@y", "@w")


def texts(kind: str, n: int) -> dict[str, str]:
    op, element, identity, _ = KINDS[kind]
    tree = retyped("\n".join(tree_levels("x", n, op, identity, "r")), element)
    behind = retyped("\n".join(tree_levels("y", n, op, identity, "r")), element)
    load = f"%v = vyre.load @x[%i] : {element}"
    assert tree.count(load) == 1  # only the first level reads x
    inline = tree.replace(
        load, f"%x0 = vyre.load @x[%i] : {element}\n  %v = vyre.mul %x0, %x0 : {element}"
    )
    return {
        "tree": tree,
        "behind": producer(n, element) + "\n" + behind,
        "inline": inline,
        "beside": beside(n, element) + "\n" + tree,
    }


def coarsened(module_or_text):
    module = vyre_xdsl.parse(module_or_text) if isinstance(module_or_text, str) else module_or_text
    VyreCoarsenReductionsPass().apply(Context(), module)
    return module


def variants(kind: str, n: int) -> dict:
    t = texts(kind, n)
    compile_ = vyre_xdsl.compile
    return {
        "tree": compile_(t["tree"], backend="wgpu", fuse=True),
        "coarsened": compile_(coarsened(t["tree"]), backend="wgpu", fuse=True),
        "prod_fused": compile_(t["behind"], backend="wgpu", fuse=True),
        "prod_coarsened": compile_(coarsened(t["behind"]), backend="wgpu", fuse=True),
        "fused_coarsened": compile_(
            coarsened(fuse_module(vyre_xdsl.parse(t["behind"]))), backend="wgpu"
        ),
        "inline_coarsened": compile_(coarsened(t["inline"]), backend="wgpu", fuse=True),
        "beside_fused": compile_(
            coarsened(fuse_module(vyre_xdsl.parse(t["beside"]))), backend="wgpu"
        ),
        "beside_coarsened": compile_(coarsened(t["beside"]), backend="wgpu", fuse=True),
        "beside_pipeline": pipeline_compile(t["beside"]),
    }


def pipeline_compile(text: str):
    """`text` compiled by the default pipeline (fuse=True), checked to keep the
    tree's first level coarsened and apart from `beside`."""
    with uncoarsened.default_pipeline():
        exe = vyre_xdsl.compile(text, backend="wgpu", fuse=True)
    sources = [kernel.source for kernel in exe.compiled.kernels]
    grids = [p.explicit_grid for p in exe.module.ops if p.sym_name.data.endswith("level0")]
    if "beside" not in sources or not grids or grids[0] is None:
        raise SystemExit(f"beside_pipeline: the default pipeline made {sources}")
    return exe


def data(kind: str, n: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    _, element, _, reduce = KINDS[kind]
    rng = np.random.default_rng(7)
    if element == "f32":
        x = rng.standard_normal(n).astype(np.float32)
    else:
        x = rng.integers(0, 1 << 20, n).astype(np.uint32)  # squares wrap
    dtype = x.dtype
    square = (x * x).astype(dtype)
    plain = np.array([reduce(x, dtype=dtype) if reduce is np.sum else reduce(x)], dtype=dtype)
    sq = np.array(
        [reduce(square, dtype=dtype) if reduce is np.sum else reduce(square)], dtype=dtype
    )
    expected = {"tree": plain, "coarsened": plain, "beside_fused": plain}
    expected["beside_coarsened"] = expected["beside_pipeline"] = plain
    for label in ("prod_fused", "prod_coarsened", "fused_coarsened", "inline_coarsened"):
        expected[label] = sq
    return x, expected, square


def measure(kind: str, args) -> dict:
    n = 1 << args.log2n
    exes = variants(kind, n)
    x_host, expected, square = data(kind, n)
    x = vyre_xdsl.to_device(x_host)
    times: dict[str, list[float]] = {label: [] for label in exes}
    per_kernel: dict[str, list[list[float]]] = {label: [] for label in exes}
    wrong: list[str] = []

    def run(label: str, record: bool) -> None:
        exe = exes[label]
        outs = exe.run({"x": x}, device=True, profile=True)
        if not np.array_equal(outs["out"].numpy().reshape(-1), expected[label]):
            wrong.append(label)
        if "w" in outs and not np.array_equal(outs["w"].numpy(), square):
            wrong.append(label)
        for out in outs.values():
            out.free()
        if record:
            times[label].append(exe.last_profile.total_seconds)
            per_kernel[label].append([k.seconds for k in exe.last_profile.kernels])

    for label in exes:
        run(label, False)
    end = time.perf_counter() + args.warmup
    while time.perf_counter() < end:
        for label in exes:
            run(label, False)
    for _ in range(args.reps):
        for label in exes:
            run(label, True)
    x.free()
    if wrong:
        raise SystemExit(f"{kind}: wrong results from {sorted(set(wrong))}")
    print(f"{kind} (2^{args.log2n}), every run checked against numpy")
    result = {}
    for label, values in times.items():
        ms = [v * 1e3 for v in values]
        runs = per_kernel[label]
        kernels = [statistics.median(r[i] for r in runs) * 1e3 for i in range(len(runs[0]))]
        names = [k.name for k in exes[label].last_profile.kernels]
        print(
            f"  {label:17s} min {min(ms):8.3f}  median {statistics.median(ms):8.3f}  "
            f"max {max(ms):8.3f} ms; {len(kernels)} kernels, median ms: "
            + ", ".join(f"{name} {m:.3f}" for name, m in zip(names, kernels, strict=True))
        )
        result[label] = {"ms": ms, "kernels": dict(zip(names, kernels, strict=True))}
    ratios = []
    for a, b in (
        ("tree", "coarsened"),
        ("prod_fused", "prod_coarsened"),
        ("prod_fused", "fused_coarsened"),
        ("prod_fused", "inline_coarsened"),
        ("beside_fused", "beside_coarsened"),
        ("beside_fused", "beside_pipeline"),
        ("beside_coarsened", "beside_pipeline"),
    ):
        per_round = sorted(x / y for x, y in zip(times[a], times[b], strict=True))
        ratios.append(
            f"{a} / {b} {statistics.median(per_round):.2f}x "
            f"({per_round[0]:.2f}-{per_round[-1]:.2f})"
        )
    print("  per-round ratios, median (range): " + "; ".join(ratios))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", nargs="+", default=["min_f32", "max_f32", "add_ui32"])
    parser.add_argument("--log2n", type=int, default=22)
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--json", help="write every timed run here")
    args = parser.parse_args()
    for kind in args.kinds:
        if kind not in KINDS:
            raise SystemExit(f"unknown kind '{kind}'; choose from {', '.join(KINDS)}")
    results = {kind: measure(kind, args) for kind in args.kinds}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
