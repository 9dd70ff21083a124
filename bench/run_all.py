"""The issue 8 benchmark suite, one command, on whatever GPU (or lavapipe) is here.

    python bench/run_all.py                       # sizes picked for the adapter
    python bench/run_all.py --out bench/results/h200

Runs, in order, and writes one JSON file per part plus `plot.png` into --out:
  1. GPU chains (K = 1, 4, 8): vyre fused and unfused, PyTorch eager,
     torch.compile and the copy ceiling where PyTorch+CUDA are present
     (bench/gpu_chains.py; 2^26 and 2^28 f32 on a discrete GPU, 2^20 on a CPU adapter);
  2. host cost per dispatch in a 100-dispatch run (bench/host_overhead.py);
  3. compile time of `vyre-opt --fuse --lower -t wgsl` against parse + print
     (bench/compile_time.py);
  4. reference interpreter throughput (bench/interpreter.py).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(script: str, *args: str) -> None:
    cmd = [sys.executable, os.path.join(HERE, script), *args]
    print("$", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=HERE)


def plot(out: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install -e .[bench])")
        return
    with open(os.path.join(out, "chains.json")) as f:
        chains = json.load(f)
    rows = [r for r in chains["rows"] if r["log2n"] == max(r["log2n"] for r in chains["rows"])]
    n = 1 << rows[0]["log2n"]
    keys = [
        k for k in ("vyre_fused", "vyre_unfused", "torch_compile", "torch_eager") if k in rows[0]
    ]
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / len(keys)
    for j, key in enumerate(keys):
        xs = [i + j * width for i in range(len(rows))]
        ax.bar(xs, [8 * n / r[key] / 1e12 for r in rows], width, label=key.replace("_", " "))
    if "torch_copy" in rows[0]:
        ceiling = max(8 * n / r["torch_copy"] / 1e12 for r in rows)
        ax.axhline(ceiling, color="k", linestyle="--", label=f"copy ceiling {ceiling:.2f} TB/s")
    ax.set_xticks(
        [i + 0.4 - width / 2 for i in range(len(rows))], [f"K={r['stages']}" for r in rows]
    )
    ax.set_ylabel("effective TB/s (8N bytes / GPU time)")
    ax.set_title(f"{chains['adapter']}: K-stage f32 chains, N = 2^{rows[0]['log2n']}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "plot.png"), dpi=110)
    print("wrote", os.path.join(out, "plot.png"))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", default=os.path.join(HERE, "results", "latest"))
    p.add_argument("--log2n", type=int, nargs="+", default=None)
    p.add_argument("--programs", type=int, nargs="+", default=[10, 20, 50, 100, 200])
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    out = os.path.abspath(args.out)
    if args.log2n is None:
        from vyre_xdsl.runtime.device import gpu_device

        cpu = gpu_device().adapter.info.get("adapter_type") == "CPU"
        args.log2n = [20] if cpu else [26, 28]
    run(
        "gpu_chains.py",
        "--log2n",
        *map(str, args.log2n),
        "--stages",
        "1",
        "4",
        "8",
        "--json",
        f"{out}/chains.json",
    )
    run("host_overhead.py", "--json", f"{out}/host_overhead.json")
    run(
        "compile_time.py",
        "--programs",
        *map(str, args.programs),
        "--json",
        f"{out}/compile_time.json",
    )
    run("interpreter.py")
    plot(out)


if __name__ == "__main__":
    main()
