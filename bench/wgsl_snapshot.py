"""Write the WGSL of every example and every `bench/workloads.py` workload, unfused
and fused, one file per module and mode, so that two revisions of the compiler can
be compared with `diff -r`:

    python bench/wgsl_snapshot.py /tmp/before      # on the old revision
    python bench/wgsl_snapshot.py /tmp/after       # on the new one
    diff -r /tmp/before /tmp/after

A module that does not compile in a mode records its error message instead.
Workloads are built at n = 2^16 (the WGSL does not depend on n beyond constants).
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from xdsl.context import Context

import vyre_xdsl
from vyre_xdsl.backends.wgsl.compile import compile_module
from vyre_xdsl.passes.pipeline import run_steps, vyre_to_kernel

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import workloads  # noqa: E402


def modules() -> dict[str, str]:
    texts = {p.stem: p.read_text() for p in sorted((ROOT / "examples").glob("*.mlir"))}
    for name in workloads.WORKLOADS:
        texts[f"workload_{name}"] = workloads.make(name, 1 << 16, 1 << 14).text
    return texts


def wgsl(text: str, fuse: bool) -> str:
    try:
        module = vyre_xdsl.parse(text)
        run_steps(Context(), module, vyre_to_kernel(fuse=fuse).steps())
        kernels = compile_module(module)
    except Exception as error:  # noqa: BLE001 - the snapshot records any failure
        return f"error: {type(error).__name__}: {error}\n"
    parts = []
    for kernel in kernels:
        parts.append(f"// kernel {kernel.id} grid {kernel.static_grid} wg {kernel.workgroup_size}")
        parts.append(kernel.wgsl)
    return "\n".join(parts)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", type=pathlib.Path)
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in modules().items():
        for fuse in (False, True):
            suffix = "fused" if fuse else "unfused"
            (args.out / f"{name}.{suffix}.wgsl").write_text(wgsl(text, fuse))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
