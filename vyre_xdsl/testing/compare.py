"""Run one module on several backends and compare the outcomes.

An *outcome* is either the output buffers of a run or the trap it raised.
Integer and Bool buffers must be byte-for-byte equal; f32 buffers must be
within the buffer's ULP tolerance (`semantics.ulp_distance`, which counts +0
and -0, and any two NaNs, as equal); traps must agree on tag, address and
invocation, or, where several invocations may trap (SPEC 3.4), each reported
trap must be one the module can raise (`may_trap`, from the generator).
Buffers of atomic tickets compare as multisets; buffers fed by IEEE special
values through arithmetic only by dtype and shape on a GPU
(`generated_differences` applies a generated module's rules).

```python
from vyre_xdsl.testing.compare import outcome, differences
ref = outcome(case.module, case.inputs, "reference")
gpu = outcome(case.module, case.inputs, "wgpu", fuse=True)
assert not differences(ref, gpu, case.tolerances)
```
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from vyre_xdsl.semantics import is_float_dtype, ulp_distance


@dataclass(frozen=True)
class Outcome:
    """Outputs by name, or the trap (tag, address, invocation)."""

    outputs: dict[str, np.ndarray] | None = None
    trap: tuple[str, int, int] | None = None

    def describe(self) -> str:
        if self.trap is not None:
            return "trap {!r} at address {} in invocation {}".format(*self.trap)
        return f"outputs {sorted(self.outputs or {})}"


def outcome(
    module: ModuleOp, inputs: Mapping[str, np.ndarray], backend: str, fuse: bool = False
) -> Outcome:
    """Run `module` and capture its outputs or trap (other errors propagate)."""
    import vyre_xdsl
    from vyre_xdsl.interpreter import VyreTrap

    try:
        outputs = vyre_xdsl.run(module, dict(inputs), backend=backend, fuse=fuse)
    except VyreTrap as trap:
        return Outcome(trap=(trap.tag, trap.address, trap.invocation))
    return Outcome(outputs={k: np.array(v, copy=True) for k, v in outputs.items()})


def differences(
    expected: Outcome,
    actual: Outcome,
    tolerances: Mapping[str, float],
    *,
    may_trap: Callable[[tuple[str, int, int]], bool] | None = None,
    multisets: Collection[str] = (),
    unchecked: Collection[str] = (),
) -> list[str]:
    """Human-readable differences between two outcomes (empty when they agree).

    `may_trap`: when given, two traps agree when each is one the module can
    raise (several invocations may trap; which is reported is open), else they
    must be equal. `multisets`: buffers compared after sorting. `unchecked`:
    buffers compared by dtype and shape only."""
    if expected.trap is not None or actual.trap is not None:
        if expected.trap is not None and actual.trap is not None and may_trap is not None:
            wrong = [t for t in (expected.trap, actual.trap) if not may_trap(t)]
            return [f"trap {t} is not one the module can raise" for t in wrong]
        if expected.trap == actual.trap:
            return []
        return [f"expected {expected.describe()}, got {actual.describe()}"]
    assert expected.outputs is not None and actual.outputs is not None
    problems = []
    if sorted(expected.outputs) != sorted(actual.outputs):
        problems.append(
            f"output names differ: {sorted(expected.outputs)} vs {sorted(actual.outputs)}"
        )
    for name in sorted(set(expected.outputs) & set(actual.outputs)):
        want, got = expected.outputs[name], actual.outputs[name]
        if name in unchecked:
            want, got = np.zeros_like(want), np.zeros_like(got)
        tolerance = tolerances.get(name, 0.0)
        problem = buffer_difference(name, want, got, tolerance, multiset=name in multisets)
        if problem:
            problems.append(problem)
    return problems


def generated_differences(case, expected: Outcome, actual: Outcome, gpu: bool) -> list[str]:
    """`differences` under the rules of a `GeneratedModule`: its tolerances, the
    traps it can raise, its ticket multisets, and (when `actual` ran on a GPU)
    its IEEE-special buffers unchecked."""
    return differences(
        expected,
        actual,
        case.tolerances,
        may_trap=case.may_trap if case.trap_patterns else None,
        multisets=case.multisets,
        unchecked=case.ieee_buffers if gpu else (),
    )


def is_subnormal(values: np.ndarray) -> np.ndarray:
    """Which f32 values are subnormal (non-zero, below the smallest normal)."""
    values = np.asarray(values, np.float32)
    return (values != 0) & (np.abs(values) < np.finfo(np.float32).tiny)


def flushed_zero(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Where a GPU's zero stands for the reference's subnormal (SPEC 3.4: accepted)."""
    return is_subnormal(expected) & (np.asarray(actual, np.float32) == 0)


def buffer_difference(
    name: str,
    expected: np.ndarray,
    actual: np.ndarray,
    tolerance: float = 0.0,
    *,
    multiset: bool = False,
) -> str | None:
    """Why buffer `name` differs, or None when it matches. An f32 zero where the
    expected value is subnormal matches (a GPU may flush subnormals). A
    `multiset` buffer (atomic tickets) matches in any order."""
    expected, actual = np.asarray(expected).reshape(-1), np.asarray(actual).reshape(-1)
    if multiset:
        expected, actual = np.sort(expected), np.sort(actual)
    if expected.dtype != actual.dtype or expected.shape != actual.shape:
        return (
            f"{name}: {expected.dtype}{list(expected.shape)} vs {actual.dtype}{list(actual.shape)}"
        )
    if is_float_dtype(expected.dtype):  # f16, bf16, f32, f64: +0 matches -0, NaN matches NaN
        distance = ulp_distance(expected, actual)
        if expected.dtype == np.float32:
            distance = np.where(flushed_zero(expected, actual), 0, distance)
        bad = np.flatnonzero(distance > tolerance)
        if bad.size == 0:
            return None
        i = int(bad[0])
        return (
            f"{name}: {bad.size} {expected.dtype} elements beyond {tolerance:g} ULP, first [{i}] "
            f"expected {expected[i]!r} got {actual[i]!r} ({int(distance[i])} ULP)"
        )
    if expected.tobytes() == actual.tobytes():
        return None
    bad = np.flatnonzero(expected != actual)
    i = int(bad[0])
    return f"{name}: {bad.size} elements differ, first [{i}] expected {expected[i]!r} got {actual[i]!r}"
