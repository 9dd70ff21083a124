"""Multi-program workloads written as plain vyre programs, with numpy references:
the shapes on which fusion can lose (reductions over shrinking grids, shifted
neighbours, atomics). Used by `bench/fusion_ratios.py` (fused versus unfused
times) and by the differential tests.

```python
from vyre_xdsl.testing.fusion_workloads import WORKLOADS

work = WORKLOADS["tree_sum"](1 << 12)
outputs = vyre_xdsl.run(work.text, work.inputs(seed=0), fuse=True)
work.check(outputs)  # raises AssertionError on a wrong result
```

- `tree_sum`: the textbook workgroup tree (256 wide: each workgroup loads 256
  elements into workgroup memory, halves them 8 times in a `vyre.loop` with a
  barrier per level and writes one partial sum), repeated until one value is left.
- `presum_tree`: each invocation first adds 16 elements strided by n/16, then the tree.
- `neighbour`: `t[i] = 2 x[i]`, then `y[i] = t[i] + t[i + 1]` (the last reads 0).
- `histogram`: `key[i] = x[i] & 255`, then one global `atomic add` per element
  into 256 bins.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

WIDTH = 256
LEVELS = 8  # log2(WIDTH)
PRESUM = 16
BINS = 256


@dataclass(frozen=True)
class Workload:
    name: str
    text: str
    #: input name -> (dtype, count); dtype f32 (uniform in [0, 1)), ui32 (any), zeros (ui32)
    input_shapes: dict[str, tuple[str, int]]
    output: str
    reference: Callable[[dict[str, np.ndarray]], np.ndarray]
    #: relative tolerance of the f32 result (0: exact)
    rtol: float = 0.0

    def inputs(self, seed: int = 0) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(seed)
        arrays = {}
        for name, (dtype, count) in self.input_shapes.items():
            if dtype == "f32":
                arrays[name] = rng.random(count, dtype=np.float32)
            elif dtype == "zeros":
                arrays[name] = np.zeros(count, dtype=np.uint32)
            else:
                arrays[name] = rng.integers(0, 1 << 32, count, dtype=np.uint32)
        return arrays

    def check(self, outputs: dict[str, np.ndarray], inputs: dict[str, np.ndarray]) -> None:
        got = np.asarray(outputs[self.output]).reshape(-1)
        want = np.asarray(self.reference(inputs)).reshape(-1)
        assert got.shape == want.shape, (self.name, got.shape, want.shape)
        if self.rtol:
            np.testing.assert_allclose(got, want, rtol=self.rtol, err_msg=self.name)
        else:
            np.testing.assert_array_equal(got, want, err_msg=self.name)


def _tree_pass(name: str, source: str, target: str, n: int) -> tuple[str, int]:
    """One tree pass: `target[w]` = the sum of `source[w*256 .. w*256+255]`."""
    groups = -(-n // WIDTH)
    text = f"""vyre.program @{name} workgroup_size [{WIDTH}, 1, 1] {{
  vyre.buffer @{source} binding 0 read_only : f32[{n}]
  vyre.buffer @{target} binding 1 write_only : f32[{groups}]
  vyre.buffer @tile workgroup : f32[{WIDTH}]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @{source}[%i] : f32
  vyre.store @tile[%l] = %v : f32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const {LEVELS} : ui32
  %half = vyre.const {WIDTH // 2} : ui32
  vyre.loop @level = %zero to %levels {{
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {{
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile[%l] : f32
      %b = vyre.load @tile[%j] : f32
      %s = vyre.add %a, %b : f32
      vyre.store @tile[%l] = %s : f32
    }}
    vyre.barrier
  }}
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {{
    %total = vyre.load @tile[%zero] : f32
    vyre.store @{target}[%w] = %total : f32
  }}
}}
"""
    return text, groups


def _tree(source: str, n: int, prefix: str = "sum") -> tuple[list[str], str]:
    """Tree passes until one value is left; the last writes `out`."""
    texts = []
    level = 0
    while True:
        groups = -(-n // WIDTH)
        target = "out" if groups == 1 else f"partial{level}"
        text, _ = _tree_pass(f"{prefix}{level}", source, target, n)
        texts.append(text)
        if groups == 1:
            return texts, target
        source, n, level = target, groups, level + 1


def _f32_sum(inputs: dict[str, np.ndarray]) -> np.ndarray:
    return np.array([np.sum(inputs["x"], dtype=np.float64)], dtype=np.float32)


def tree_sum(n: int) -> Workload:
    texts, out = _tree("x", n)
    return Workload("tree_sum", "".join(texts), {"x": ("f32", n)}, out, _f32_sum, rtol=1e-5)


def presum_tree(n: int, presum: int = PRESUM) -> Workload:
    """Each invocation first adds `presum` elements strided by n / presum, then
    the tree sums those partial sums."""
    if n % presum:
        raise ValueError(f"presum_tree needs a multiple of {presum} elements, not {n}")
    m = n // presum
    presum = f"""vyre.program @presum workgroup_size [{WIDTH}, 1, 1] {{
  vyre.buffer @x binding 0 read_only : f32[{n}]
  vyre.buffer @s binding 1 write_only : f32[{m}]
  %i = vyre.invocation_id x
  %zero = vyre.const 0.0 : f32
  %lo = vyre.const 0 : ui32
  %count = vyre.const {presum} : ui32
  %stride = vyre.const {m} : ui32
  vyre.let @acc = %zero : f32
  vyre.loop @k = %lo to %count {{
    %k = vyre.var @k : ui32
    %offset = vyre.mul %k, %stride : ui32
    %j = vyre.add %i, %offset : ui32
    %v = vyre.load @x[%j] : f32
    %a = vyre.var @acc : f32
    %t = vyre.add %a, %v : f32
    vyre.assign @acc = %t : f32
  }}
  %total = vyre.var @acc : f32
  vyre.store @s[%i] = %total : f32
}}
"""
    texts, out = _tree("s", m)
    return Workload(
        "presum_tree", presum + "".join(texts), {"x": ("f32", n)}, out, _f32_sum, rtol=1e-5
    )


def neighbour(n: int) -> Workload:
    text = f"""vyre.program @double workgroup_size [{WIDTH}, 1, 1] {{
  vyre.buffer @x binding 0 read_only : f32[{n}]
  vyre.buffer @t binding 1 write_only : f32[{n}]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f32
  %two = vyre.const 2.0 : f32
  %d = vyre.mul %v, %two : f32
  vyre.store @t[%i] = %d : f32
}}
vyre.program @pairs workgroup_size [{WIDTH}, 1, 1] {{
  vyre.buffer @t binding 0 read_only : f32[{n}]
  vyre.buffer @y binding 1 write_only : f32[{n}]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %next = vyre.add %i, %one : ui32
  %a = vyre.load @t[%i] : f32
  %b = vyre.load @t[%next] : f32
  %s = vyre.add %a, %b : f32
  vyre.store @y[%i] = %s : f32
}}
"""

    def reference(inputs: dict[str, np.ndarray]) -> np.ndarray:
        t = inputs["x"] * np.float32(2.0)
        shifted = np.append(t[1:], np.float32(0.0))
        return t + shifted

    return Workload("neighbour", text, {"x": ("f32", n)}, "y", reference)


def histogram(n: int) -> Workload:
    text = f"""vyre.program @keys workgroup_size [{WIDTH}, 1, 1] {{
  vyre.buffer @x binding 0 read_only : ui32[{n}]
  vyre.buffer @key binding 1 write_only : ui32[{n}]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %mask = vyre.const {BINS - 1} : ui32
  %k = vyre.bit_and %v, %mask : ui32
  vyre.store @key[%i] = %k : ui32
}}
vyre.program @count workgroup_size [{WIDTH}, 1, 1] {{
  vyre.buffer @key binding 0 read_only : ui32[{n}]
  vyre.buffer @bins binding 1 read_write output : ui32[{BINS}]
  %i = vyre.invocation_id x
  %n = vyre.const {n} : ui32
  %inside = vyre.lt %i, %n : ui32
  vyre.if %inside {{
    %k = vyre.load @key[%i] : ui32
    %one = vyre.const 1 : ui32
    %old = vyre.atomic add @bins[%k], %one : ui32
  }}
}}
"""

    def reference(inputs: dict[str, np.ndarray]) -> np.ndarray:
        counts = np.bincount(inputs["x"] & (BINS - 1), minlength=BINS).astype(np.uint32)
        return inputs.get("bins", np.zeros(BINS, np.uint32)) + counts

    return Workload(
        "histogram", text, {"x": ("ui32", n), "bins": ("zeros", BINS)}, "bins", reference
    )


WORKLOADS: dict[str, Callable[[int], Workload]] = {
    "tree_sum": tree_sum,
    "presum_tree": presum_tree,
    "neighbour": neighbour,
    "histogram": histogram,
}
