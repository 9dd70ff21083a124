"""Running upstream's test programs (santhreal/vyre) translated to vyre IR.

Each test in this directory translates one upstream test file: the same
program, the same inputs and upstream's own hard-coded expected values. Every
case runs on the reference interpreter and on wgpu (lavapipe in CI), and, for
modules of several programs, fused and unfused. See README.md for the map of
upstream files to test files and the cases not translated (with the reason).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import vyre_xdsl

os.environ.setdefault("WGPU_BACKEND_TYPE", "Vulkan")

BACKENDS = ("reference", "wgpu")
#: (backend, fuse) for a module of several programs: unfused, fused where the
#: cost model says it wins, and every program fused into one (as upstream does)
CONFIGURATIONS = [
    ("reference", False),
    ("reference", True),
    ("reference", "force"),
    ("wgpu", False),
    ("wgpu", True),
    ("wgpu", "force"),
]


def run(
    text: str,
    inputs: dict[str, np.ndarray] | None = None,
    backend: str = "reference",
    fuse: bool | str = False,
) -> dict[str, np.ndarray]:
    """`vyre_xdsl.run` on copies of `inputs`, checking that the inputs stay unchanged."""
    given = {name: np.array(a, copy=True) for name, a in (inputs or {}).items()}
    outputs = vyre_xdsl.run(text, given, backend=backend, fuse=fuse)
    for name, array in (inputs or {}).items():
        np.testing.assert_array_equal(given[name], array)
    return outputs


def is_lavapipe() -> bool:
    """Whether the wgpu backend runs on Mesa's lavapipe (llvmpipe)."""
    from vyre_xdsl.runtime.device import gpu_device

    return "llvmpipe" in gpu_device().describe().lower()


def u32(values) -> np.ndarray:
    return np.array([int(v) % 2**32 for v in values], dtype=np.uint32)


def i32(values) -> np.ndarray:
    return np.array([(int(v) + 2**31) % 2**32 - 2**31 for v in values], dtype=np.int32)


def f32(values) -> np.ndarray:
    return np.array(values, dtype=np.float32)


def f32_bits(values) -> np.ndarray:
    return f32(values).view(np.uint32)


backends = pytest.mark.parametrize("backend", BACKENDS)
configurations = pytest.mark.parametrize("backend,fuse", CONFIGURATIONS)


def unrolled(op: str, operand: str, result: str, n: int, arity: int = 2, cast: bool = False) -> str:
    """Upstream's parity kernels: one `[1, 1, 1]` invocation that, for each i < n,
    stores `op(a[i], b[i])` (or `op(a[i])`) into `out[i]`, with constant indices.
    `cast` makes `op` a `vyre.cast` to `result`."""
    names = "ab"[:arity]
    lines = [
        "vyre.program @parity workgroup_size [1, 1, 1] {",
        f"  vyre.buffer @out binding 0 read_write : {result}[{n}]",
    ]
    lines += [
        f"  vyre.buffer @{x} binding {k + 1} read_only : {operand}[{n}]"
        for k, x in enumerate(names)
    ]
    for i in range(n):
        lines.append(f"  %i{i} = vyre.const {i} : ui32")
        for x in names:
            lines.append(f"  %{x}{i} = vyre.load @{x}[%i{i}] : {operand}")
        args = ", ".join(f"%{x}{i}" for x in names)
        if cast:
            lines.append(f"  %r{i} = vyre.cast {args} : {operand} to {result}")
        else:
            lines.append(f"  %r{i} = vyre.{op} {args} : {operand}")
        lines.append(f"  vyre.store @out[%i{i}] = %r{i} : {result}")
    lines.append("}")
    return "\n".join(lines) + "\n"
