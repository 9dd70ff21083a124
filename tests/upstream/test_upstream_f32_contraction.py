"""Upstream `vyre-driver-wgpu/tests/f32_no_contraction_contract.rs`: `a * b + c`
on f32 gives either the separately rounded result or the fused one (a GPU
compiler may contract, SPEC 3.4), never anything else; the reference rounds
separately. The witness 1 + 2^-12 makes the two differ by 1024 ULP of the result.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from upstream_support import backends, f32, run

WITNESS = float(np.array([0x3F80_0800], np.uint32).view(np.float32)[0])  # 1 + 2^-12
SEPARATELY_ROUNDED = 0.00048828125  # 2^-11

PROGRAM = """vyre.program @madd workgroup_size [64, 1, 1] {{
  vyre.buffer @a binding 0 read_only : f32[{n}]
  vyre.buffer @b binding 1 read_only : f32[{n}]
  vyre.buffer @c binding 2 read_only : f32[{n}]
  vyre.buffer @out binding 3 read_write : f32[{n}]
  %i = vyre.invocation_id x
  %n = vyre.const {n} : ui32
  %in = vyre.lt %i, %n : ui32
  vyre.if %in {{
    %x = vyre.load @a[%i] : f32
    %y = vyre.load @b[%i] : f32
    %z = vyre.load @c[%i] : f32
    %p = vyre.mul %x, %y : f32
    %s = vyre.add %p, %z : f32
    vyre.store @out[%i] = %s : f32
  }}
}}
"""


def separate(a: float, b: float, c: float) -> float:
    return float(np.float32(np.float32(np.float32(a) * np.float32(b)) + np.float32(c)))


def fused(a: float, b: float, c: float) -> float:
    return float(
        np.float32(
            Fraction(float(np.float32(a))) * Fraction(float(np.float32(b)))
            + Fraction(float(np.float32(c)))
        )
    )


def bits(x: float) -> int:
    return int(np.array([x], np.float32).view(np.uint32)[0])


def test_the_witness_distinguishes_fused_from_separate_rounding_on_the_host():
    assert bits(separate(WITNESS, WITNESS, -1.0)) == bits(SEPARATELY_ROUNDED)
    assert bits(separate(WITNESS, WITNESS, -1.0)) != bits(fused(WITNESS, WITNESS, -1.0))


def test_contraction_is_bounded_by_an_ulp_of_the_product_not_of_the_result():
    f = fused(WITNESS, WITNESS, -1.0)
    assert bits(abs(f - SEPARATELY_ROUNDED)) == 0x3380_0000  # 2^-24
    assert abs(bits(f) - bits(SEPARATELY_ROUNDED)) == 1024


def _run(backend, a, b, c):
    n = len(a)
    return run(
        PROGRAM.format(n=n),
        {"a": f32(a), "b": f32(b), "c": f32(c), "out": f32([0.0] * n)},
        backend=backend,
    )["out"].tolist()


@backends
def test_multiply_add_lands_on_one_of_the_two_well_defined_roundings(backend):
    got = _run(backend, [WITNESS], [WITNESS], [-1.0])[0]
    if backend == "reference":
        assert bits(got) == bits(SEPARATELY_ROUNDED)  # the reference never contracts
    else:
        assert bits(got) in (bits(SEPARATELY_ROUNDED), bits(fused(WITNESS, WITNESS, -1.0)))


@backends
def test_the_reference_and_the_gpu_agree_on_multiply_add(backend):
    a = [WITNESS, 3.0002441, 1e-3, 7.5, -2.0004883, 1e6]
    c = [-1.0, -9.0, -1e-6, -56.25, -4.0, -1e12]
    got = _run(backend, a, a, c)
    for k, (x, z, seen) in enumerate(zip(a, c, got)):
        allowed = {bits(separate(x, x, z))} | (
            {bits(fused(x, x, z))} if backend != "reference" else set()
        )
        assert bits(seen) in allowed, (k, hex(bits(seen)))
