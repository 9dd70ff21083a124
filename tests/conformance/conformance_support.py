"""The conformance corpus machinery: a case is a program, its inputs, and the
outputs (or trap) that numpy in the test module says it must produce.

Expected values are always computed by the test module itself (numpy or plain
Python), never by the code under test. `VYRE_CONFORMANCE_BACKENDS` (default
`reference`) lists the backends every case runs on, e.g. `reference,wgpu`. A case
that pins down a reference choice WGSL leaves open (the order of atomics, which of
racing stores wins, NaN propagation, IEEE special values of approximate ops,
no reassociation) lists `backends=("reference",)`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

import vyre_xdsl
from vyre_xdsl.abi import signature
from vyre_xdsl.interpreter import VyreTrap

BACKENDS = tuple(os.environ.get("VYRE_CONFORMANCE_BACKENDS", "reference").split(","))


@dataclass
class Case:
    name: str
    text: str
    inputs: dict[str, np.ndarray]
    expected: dict[str, np.ndarray] = field(default_factory=dict)
    ulp: float = 0.0  # f32 outputs may differ by this many units in the last place
    device_ulp: float | None = None  # the budget on other backends (None: the same as ulp)
    # on backends other than the reference, f32 outputs are held to the accuracy
    # the WGSL specification states for this op on the case's inputs (in order),
    # element by element (`vyre_xdsl.testing.wgsl_accuracy`), instead of a ULP budget
    accuracy: str | None = None
    trap: tuple[str, int, int] | None = None  # (tag, address, invocation)
    backends: tuple[str, ...] | None = None  # None: every backend of BACKENDS
    exact_outputs: bool = True  # the returned output names must equal expected's keys
    # the outputs of a device that flushes f32 subnormals (operands and results) to
    # zero, where they differ from `expected`; accepted element by element on every
    # backend but the reference (SPEC 3.4)
    flushed: dict[str, np.ndarray] | None = None
    fuse: bool = False  # run with `fuse=True` (a module of several programs)

    def __str__(self) -> str:
        return self.name


def params(cases: list[Case]) -> list[tuple[Case, str]]:
    """(case, backend) pairs for pytest.mark.parametrize."""
    return [
        (case, backend)
        for case in cases
        for backend in BACKENDS
        if case.backends is None or backend in case.backends
    ]


def ids(pairs: list[tuple[Case, str]]) -> list[str]:
    return [f"{case.name}-{backend}" for case, backend in pairs]


def check(case: Case, backend: str) -> None:
    inputs = {name: np.array(array, copy=True) for name, array in case.inputs.items()}
    if case.trap is not None:
        try:
            vyre_xdsl.run(case.text, inputs, backend=backend, fuse=case.fuse)
        except VyreTrap as trap:
            assert (trap.tag, trap.address, trap.invocation) == case.trap, str(trap)
        else:
            raise AssertionError(f"{case.name}: expected trap {case.trap}, none raised")
        return
    outputs = vyre_xdsl.run(case.text, inputs, backend=backend, fuse=case.fuse)
    ulp = case.ulp if backend == "reference" or case.device_ulp is None else case.device_ulp
    if case.exact_outputs:
        assert sorted(outputs) == sorted(case.expected), f"outputs {sorted(outputs)}"
    flushed = (case.flushed or {}) if backend != "reference" else {}
    for name, want in expected_outputs(case).items():
        if case.accuracy is not None and backend != "reference":
            assert_within_wgsl_accuracy(case, outputs[name], f"{case.name}: {name}")
            continue
        assert_matches(
            outputs[name],
            want,
            ulp,
            f"{case.name}: {name}",
            flushed.get(name),
            device=backend != "reference",
        )
    for name, array in case.inputs.items():  # inputs are never modified
        assert_same_bits(inputs[name], array, f"{case.name}: input {name}")


def assert_same_bits(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """`got` is bit for bit `want` (dtype, shape and bytes): NaNs compare by their
    bits, whatever numpy's and ml_dtypes' versions think of NaN == NaN."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    bytes_got = np.ascontiguousarray(got).reshape(-1).view(np.uint8).reshape(got.size, -1)
    bytes_want = np.ascontiguousarray(want).reshape(-1).view(np.uint8).reshape(want.size, -1)
    bad = np.flatnonzero(np.any(bytes_got != bytes_want, axis=1))
    assert not bad.size, (
        f"{what}: {bad.size} elements differ in their bits, first at {int(bad[0])}: "
        f"got {got.reshape(-1)[bad[:4]]}, expected {want.reshape(-1)[bad[:4]]}"
    )


def expected_outputs(case: Case) -> dict[str, np.ndarray]:
    """`case.expected`, with an i1 output's 0/1 words as the bools a run returns."""
    sig = signature(vyre_xdsl.parse(case.text))
    return {
        name: np.asarray(want) != 0 if sig[name].element == "i1" else want
        for name, want in case.expected.items()
    }


def assert_within_wgsl_accuracy(case: Case, got: np.ndarray, what: str) -> None:
    """`got` within the accuracy WGSL states for `case.accuracy` on the case's inputs."""
    from vyre_xdsl.testing.wgsl_accuracy import bounds, outside

    got = np.asarray(got).reshape(-1)  # vector outputs: lane by lane
    ty = ACCURACY_TYPES[got.dtype]
    operands = [np.asarray(o).reshape(-1) for o in case.inputs.values()]
    far = outside(case.accuracy, got, *operands, ty=ty)
    if case.flushed is not None:  # a device may flush subnormal operands and results (SPEC 3.4)
        far &= outside(case.accuracy, got, *[flush_array(o) for o in operands], ty=ty)
        lo, hi, _ = bounds(case.accuracy, *operands, ty=ty)
        tiny = FLOAT_VIEWS[got.dtype][1]
        far &= ~((got.astype(np.float64) == 0) & (lo < tiny) & (hi > -tiny))
    bad = np.flatnonzero(far)
    assert not bad.size, (
        f"{what}: {bad.size} elements beyond WGSL's accuracy for {case.accuracy}, first at {int(bad[0])}: "
        f"operands {[float(o[bad[0]]) for o in operands]}, got {got[bad[:4]]}"
    )


#: float dtype -> (signed integer view of the same width, smallest normal value)
FLOAT_VIEWS = {
    np.dtype(np.float16): (np.int16, float(np.finfo(np.float16).tiny)),
    np.dtype(ml_dtypes.bfloat16): (np.int16, float(ml_dtypes.finfo(ml_dtypes.bfloat16).tiny)),
    np.dtype(np.float32): (np.int32, float(np.finfo(np.float32).tiny)),
    np.dtype(np.float64): (np.int64, float(np.finfo(np.float64).tiny)),
}

#: output dtype -> the type `vyre_xdsl.testing.wgsl_accuracy` holds it to
ACCURACY_TYPES = {
    np.dtype(np.float32): "f32",
    np.dtype(np.float16): "f16",
    np.dtype(ml_dtypes.bfloat16): "bf16",
}


def float_ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ULP distance between two float arrays of one dtype (f16, bf16, f32, f64);
    NaN matches NaN only, +0 matches -0."""
    a, b = np.asarray(a), np.asarray(b)
    view, _ = FLOAT_VIEWS[a.dtype]
    bits = np.iinfo(view).bits

    def ordered(x: np.ndarray) -> np.ndarray:
        i = x.view(view).astype(object if bits == 64 else np.int64)
        return np.where(i < 0, -(i & (2 ** (bits - 1) - 1)), i)

    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)
    distance = np.abs(ordered(a) - ordered(b))
    distance = np.where((wide_a == wide_b) | (np.isnan(wide_a) & np.isnan(wide_b)), 0, distance)
    return np.where(np.isnan(wide_a) != np.isnan(wide_b), 2**40, distance)


def f32_ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ULP distance between float32 arrays; NaN matches NaN only, +0 matches -0."""
    return float_ulps(np.asarray(a, np.float32), np.asarray(b, np.float32))


def subnormal(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype not in FLOAT_VIEWS:
        x = x.astype(np.float32)
    wide = x.astype(np.float64)
    return (wide != 0) & (np.abs(wide) < FLOAT_VIEWS[x.dtype][1])


def flush(values) -> list:
    """Python floats with f32 subnormals replaced by a zero of the same sign."""
    return [math.copysign(0.0, x) if x != 0 and abs(x) < 2.0**-126 else x for x in values]


def flush_array(x: np.ndarray) -> np.ndarray:
    """A float array (f16, bf16, f32, f64; anything else as f32) with the subnormals
    of its own type replaced by a zero of the same sign (f16 below 2^-14, bf16 and
    f32 below 2^-126), in its dtype; done on the bits, not by float arithmetic."""
    x = np.asarray(x)
    if x.dtype not in FLOAT_VIEWS:
        x = x.astype(np.float32)
    view, _ = FLOAT_VIEWS[x.dtype]
    bits = x.view(view)
    sign = bits & np.array(np.iinfo(view).min, view)  # the sign bit alone: a signed zero
    return np.where(subnormal(x), sign, bits).astype(view).view(x.dtype)


def assert_matches(
    got: np.ndarray, want: np.ndarray, ulp: float, what: str, flushed=None, device: bool = False
) -> None:
    """`got` equals `want` (f32: within `ulp`), or, element by element, the `flushed`
    alternative. On a `device`, a zero where `want` is subnormal is accepted (SPEC 3.4)."""
    want = np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    alternative = np.asarray(want if flushed is None else flushed)
    if got.dtype in FLOAT_VIEWS:

        def close(expected):
            flushed_zero = device & subnormal(expected) & (got.astype(np.float64) == 0)
            return (float_ulps(got, expected) <= ulp) | flushed_zero

        far = ~(close(want) | close(alternative))
        assert not far.any(), (
            f"{what}: {int(far.sum())} elements more than {ulp} ULP off, first at "
            f"{int(np.flatnonzero(far)[0])}: got {got[far][:4]}, expected {want[far][:4]}"
        )
    else:
        bad = (got != want) & (got != alternative)
        assert not bad.any(), (
            f"{what}: {int(bad.sum())} elements differ, first at {int(np.flatnonzero(bad)[0])}: "
            f"got {got[bad][:4]}, expected {want[bad][:4]}"
        )


def program(
    body: str, buffers: str, workgroup: tuple[int, int, int] = (64, 1, 1), name: str = "p"
) -> str:
    """A one-program module; `buffers` and `body` are lines of vyre IR."""
    wx, wy, wz = workgroup
    return f"vyre.program @{name} workgroup_size [{wx}, {wy}, {wz}] {{\n{buffers}\n{body}\n}}\n"


def u32(values) -> np.ndarray:
    return np.array([v % 2**32 for v in values], dtype=np.uint32)


def i32(values) -> np.ndarray:
    return np.array([(v + 2**31) % 2**32 - 2**31 for v in values], dtype=np.int32)


def words(values) -> np.ndarray:
    """Bool host words (0/1) of Python truth values."""
    return np.array([1 if v else 0 for v in values], dtype=np.uint32)
