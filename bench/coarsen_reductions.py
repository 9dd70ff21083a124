"""GPU time of the textbook tree reduction with and without the compiler's
coarsening (`vyre-coarsen-reductions`), against the hand-coarsened presum +
tree of bench/workloads.py, on the same input.

    python bench/coarsen_reductions.py --log2n 22 --reps 15
    python bench/coarsen_reductions.py --kinds sum min max --log2n 22 --k 16
    python bench/coarsen_reductions.py --kinds scan --log2n 22 --reps 9

Variants, timed interleaved (one profiled run of each per round, after
`--warmup` seconds of runs of all of them, so a drift of the machine's speed
hits them alike):

- `tree`: the textbook tree (`<kind>_tree`), one element per invocation;
- `coarsened`: the same module after `vyre-coarsen-reductions` (`--k`, 0 =
  chosen per level; float add regrouped: `reassociate-floats=true`);
- `presum`: `<kind>_presum`, each invocation combining 16 elements by hand.

`--kinds scan` times the multi-level scan of bench/workloads.py as written
(`written`: a Hillis-Steele scan of each 256-block, one element per
invocation) against the same module after the pass (`coarsened`: reduce-then-
scan, each level that only its add-back reads storing only its block totals and
the add-back scanning the level's input again, both k consecutive elements per
invocation; `--k`, 0 = chosen per level), checked against numpy's cumsum
(integer-valued data: exact), against `levels`: every block scan coarsened in
place (the same k and grid) but still writing its block scans for the add-back
to read (the pass's form before reduce-then-scan), and against `direct`: the same k and grid, each invocation loading and storing its
k consecutive elements itself instead of through workgroup memory (the form
`coarsen_scan(..., stage_loads=False, stage_stores=False)` writes; neighbouring
invocations access elements k apart), `stores`: loads direct, stores staged
(`stage_loads=False`), and `subgroups`: the pass with `subgroups=true` (the
invocation totals scanned on subgroup shuffles, one barrier instead of one per
step; what the pipeline does on a device with subgroups).

GPU time is the sum of the timestamp-query deltas of a run's kernels. Each
variant's result is checked against numpy (exactly: the sums take integer-valued
data) before the warm-up and in the last timed round; checking every run would
read the output back between timed runs and let the GPU idle. Prints min / median / max per variant and the ratios of the medians.

With PyTorch and CUDA in the same process (the H200), the native op
(`torch.sum`, `torch.amin`, `torch.amax`) is timed after the same warm-up with
CUDA events over 10 back-to-back calls per rep, and the script prints each
variant's median over torch's median.
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

import uncoarsened  # noqa: E402
from workloads import make, time_torch, torch_setup  # noqa: E402
from xdsl.context import Context  # noqa: E402

import vyre_xdsl  # noqa: E402
from vyre_xdsl.analysis.reductions import scan_level  # noqa: E402
from vyre_xdsl.dialects.vyre import programs  # noqa: E402
from vyre_xdsl.passes.vyre_coarsen_reductions import (  # noqa: E402
    VyreCoarsenReductionsPass,
    coarsen_scan,
)
from vyre_xdsl.runtime.device import gpu_device  # noqa: E402

uncoarsened.install()  # every variant below is coarsened (or not) explicitly

results: dict[str, dict] = {}


def variants(kind: str, n: int, k: int):
    if kind == "scan":
        scan = make("scan", n, n)
        coarsened = vyre_xdsl.parse(scan.text)
        coarsening = VyreCoarsenReductionsPass(k=k, reassociate_floats=True)
        coarsening.apply(Context(), coarsened)
        on_subgroups = vyre_xdsl.parse(scan.text)
        VyreCoarsenReductionsPass(k=k, reassociate_floats=True, subgroups=True).apply(
            Context(), on_subgroups
        )
        return scan, {
            "written": vyre_xdsl.compile(scan.text, backend="wgpu"),
            "coarsened": vyre_xdsl.compile(coarsened, backend="wgpu"),
            "subgroups": vyre_xdsl.compile(on_subgroups, backend="wgpu"),
            "levels": vyre_xdsl.compile(
                unstaged(scan.text, coarsening, stage_loads=True, stage_stores=True),
                backend="wgpu",
            ),
            "direct": vyre_xdsl.compile(unstaged(scan.text, coarsening), backend="wgpu"),
            "stores": vyre_xdsl.compile(
                unstaged(scan.text, coarsening, stage_stores=True), backend="wgpu"
            ),
        }
    tree = make(f"{kind}_tree", n, n)
    presum = make(f"{kind}_presum", n, n)
    coarsened = vyre_xdsl.parse(tree.text)
    VyreCoarsenReductionsPass(k=k, reassociate_floats=True).apply(Context(), coarsened)
    return tree, {
        "tree": vyre_xdsl.compile(tree.text, backend="wgpu"),
        "coarsened": vyre_xdsl.compile(coarsened, backend="wgpu"),
        "presum": vyre_xdsl.compile(presum.text, backend="wgpu"),
    }


def unstaged(
    text: str,
    coarsening: VyreCoarsenReductionsPass,
    stage_stores: bool = False,
    stage_loads: bool = False,
):
    """`text` with each scan level the pass coarsens (same k and grid) coarsened
    in place, its add-back left as written, in the unstaged form: each
    invocation loads its k consecutive elements itself unless `stage_loads`, and
    stores them itself too unless `stage_stores`."""
    module = vyre_xdsl.parse(text)
    for program in programs(module):
        scan = scan_level(program)
        plan = None if isinstance(scan, str) else coarsening.scan_plan(scan)
        if isinstance(plan, tuple):
            coarsen_scan(scan, *plan, stage_loads=stage_loads, stage_stores=stage_stores)
    return module


def measure(kind: str, n: int, args) -> dict[str, list[float]]:
    work, exes = variants(kind, n, args.k)
    x = vyre_xdsl.to_device(work.x)
    times: dict[str, list[float]] = {label: [] for label in exes}
    per_kernel: dict[str, list[list[float]]] = {label: [] for label in exes}
    wrong = []

    def run(label: str, record: bool, check: bool) -> None:
        exe = exes[label]
        out = exe.run({"x": x}, device=True, profile=True)["out"]
        if check and not work.check(out.numpy()):
            wrong.append(label)
        out.free()
        if record:
            times[label].append(exe.last_profile.total_seconds)
            per_kernel[label].append([k.seconds for k in exe.last_profile.kernels])

    # results are checked once before and once after the timed rounds: reading a
    # large output back between timed runs leaves the GPU idle, and on the H200 the
    # 2^28 scan then ran about 5x slower (most likely at lowered clocks)
    for label in exes:
        run(label, False, True)
    end = time.perf_counter() + args.warmup
    while time.perf_counter() < end:
        for label in exes:
            run(label, False, False)
    for rep in range(args.reps):
        for label in exes:
            run(label, True, rep == args.reps - 1)
    x.free()
    if wrong:
        raise SystemExit(f"{kind}: wrong results from {sorted(set(wrong))}")
    kernels = {label: len(exe.last_profile.kernels) for label, exe in exes.items()}
    print(f"{kind} (2^{args.log2n}), kernels per run: {kernels}")
    for label, values in times.items():
        ms = [v * 1e3 for v in values]
        print(
            f"  {label:10s} min {min(ms):8.3f}  median {statistics.median(ms):8.3f}  "
            f"max {max(ms):8.3f} ms"
        )
    for label, runs in per_kernel.items():
        medians = [statistics.median(r[i] for r in runs) * 1e3 for i in range(len(runs[0]))]
        print(f"  {label:10s} per kernel, median ms: " + ", ".join(f"{m:.3f}" for m in medians))
    med = {label: statistics.median(v) for label, v in times.items()}
    if kind == "scan":
        pairs = tuple((label, "coarsened") for label in med if label != "coarsened")
        print(
            "  ratio of medians: "
            + ", ".join(f"{a} / {b} {med[a] / med[b]:.2f}x" for a, b in pairs)
        )
    else:
        pairs = (("tree", "presum"), ("coarsened", "presum"))
        print(
            f"  ratio of medians: tree / presum {med['tree'] / med['presum']:.2f}x, "
            f"coarsened / presum {med['coarsened'] / med['presum']:.2f}x, "
            f"tree / coarsened {med['tree'] / med['coarsened']:.2f}x"
        )
    for a, b in pairs:
        ratios = [x / y for x, y in zip(times[a], times[b])]
        print(
            f"  {a} / {b} per round: min {min(ratios):.2f}x  "
            f"median {statistics.median(ratios):.2f}x  max {max(ratios):.2f}x"
        )
    torch_seconds = torch_median(kind, work.x, args)
    if torch_seconds is not None:
        print(
            f"  torch.{NATIVE[kind]} median {torch_seconds * 1e3:.3f} ms; "
            + ", ".join(f"{label} / torch {med[label] / torch_seconds:.2f}x" for label in med)
        )
    if args.json:
        results[kind] = {
            "seconds": times,
            "kernels": kernels,
            "kernel_seconds": per_kernel,
            "torch_median_seconds": torch_seconds,
        }
    return times


NATIVE = {"sum": "sum", "min": "amin", "max": "amax", "scan": "cumsum"}


def torch_median(kind: str, x, args) -> float | None:
    """The median seconds of the native torch reduction on `x`, or None
    without PyTorch on CUDA."""
    torch, why = torch_setup()
    if torch is None:
        print(f"  (no torch column: {why})")
        return None
    tx = torch.from_numpy(x).cuda()
    fn = getattr(torch, NATIVE[kind])
    if kind == "scan":
        return time_torch(torch, lambda t: torch.cumsum(t, 0), tx, args)["median"]
    return time_torch(torch, fn, tx, args)["median"]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--log2n", type=int, default=22)
    p.add_argument("--kinds", nargs="+", default=["sum"], choices=["sum", "min", "max", "scan"])
    p.add_argument("--k", type=int, default=0, help="elements per invocation (0: chosen)")
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--warmup", type=float, default=1.0)
    p.add_argument("--json", default=None, help="write every timed run here")
    args = p.parse_args()
    print(f"adapter: {gpu_device(None).describe()}")
    for kind in args.kinds:
        measure(kind, 1 << args.log2n, args)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump({"command": " ".join(sys.argv), "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
