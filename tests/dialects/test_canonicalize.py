"""Differential tests of the vyre canonicalization patterns (`-p canonicalize`).

Each case is one identity: a program computes the expression on inputs that
include the awkward values (NaN of both signs, infinities, both zeros,
subnormals, INT_MIN, -1, all-ones), the reference backend runs it before and
after `canonicalize`, and the outputs must agree bit for bit. The case also
names the op that the rewrite removes, so a pattern that stops firing fails.
The identities that do *not* hold are checked the other way: the op stays, and
plain numpy shows an input on which the naive rewrite would be wrong.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.transforms.canonicalize import CanonicalizePass

import vyre_xdsl
from vyre_xdsl.context import vyre_context

N = 64
RNG = np.random.default_rng(20261202)


def _values(ty: str) -> np.ndarray:
    if ty == "f32":
        special = np.array(
            [
                np.nan,
                -np.nan,
                np.inf,
                -np.inf,
                0.0,
                -0.0,
                1.0,
                -1.0,
                1e-45,
                -1e-45,
                3.4028235e38,
                -3.4028235e38,
                0.5,
                2.0,
                1e-38,
                16777217.0,
            ],
            dtype=np.float32,
        )
        rest = RNG.standard_normal(N - special.size).astype(np.float32) * 1e3
    elif ty == "si32":
        special = np.array([-(2**31), -1, 0, 1, 2**31 - 1, 31, 32, -32], dtype=np.int32)
        rest = RNG.integers(-(2**31), 2**31, N - special.size, dtype=np.int64).astype(np.int32)
    elif ty == "ui32":
        special = np.array([0, 1, 2, 31, 32, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF], dtype=np.uint32)
        rest = RNG.integers(0, 2**32, N - special.size, dtype=np.int64).astype(np.uint32)
    else:  # i1, as host words
        special = np.array([0, 1, 1, 0], dtype=np.uint32)
        rest = RNG.integers(0, 2, N - special.size).astype(np.uint32)
    return np.concatenate([special, rest])


def _program(ty: str, result: str, const: str, lines: str) -> str:
    return f"""
vyre.program @p workgroup_size [{N}, 1, 1] {{
  vyre.buffer @x binding 0 read_only : {ty}[{N}]
  vyre.buffer @y binding 1 read_only : {ty}[{N}]
  vyre.buffer @o binding 2 write_only : {result}[{N}]
  %i = vyre.invocation_id x
  %x = vyre.load @x[%i] : {ty}
  %y = vyre.load @y[%i] : {ty}
  %c = vyre.const {const} : {ty}
  {lines}
  vyre.store @o[%i] = %r : {result}
}}
"""


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype == np.float32:
        return bool(np.all((a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))))
    return bool(np.array_equal(a, b))


def _canonicalized(text: str) -> str:
    module = vyre_xdsl.parse(text)
    CanonicalizePass().apply(vyre_context(), module)
    module.verify()
    return str(module)


# (type, result type, constant, expression computing %r, op the rewrite removes)
HOLDS = [
    ("ui32", "ui32", "0", "%r = vyre.add %x, %c : ui32", "vyre.add"),
    ("si32", "si32", "0", "%r = vyre.add %c, %x : si32", "vyre.add"),
    ("f32", "f32", "-0.0", "%r = vyre.add %x, %c : f32", "vyre.add"),
    ("f32", "f32", "-0.0", "%r = vyre.add %c, %x : f32", "vyre.add"),
    ("ui32", "ui32", "0", "%r = vyre.sub %x, %c : ui32", "vyre.sub"),
    ("f32", "f32", "0.0", "%r = vyre.sub %x, %c : f32", "vyre.sub"),
    ("si32", "si32", "1", "%r = vyre.mul %x, %c : si32", "vyre.mul"),
    ("ui32", "ui32", "1", "%r = vyre.mul %c, %x : ui32", "vyre.mul"),
    ("f32", "f32", "1.0", "%r = vyre.mul %x, %c : f32", "vyre.mul"),
    ("ui32", "ui32", "1", "%r = vyre.div %x, %c : ui32", "vyre.div"),
    ("si32", "si32", "1", "%r = vyre.div %x, %c : si32", "vyre.div"),
    ("f32", "f32", "1.0", "%r = vyre.div %x, %c : f32", "vyre.div"),
    ("ui32", "ui32", "1", "%r = vyre.mod %x, %c : ui32", "vyre.mod"),
    ("si32", "si32", "1", "%r = vyre.mod %x, %c : si32", "vyre.mod"),
    ("ui32", "ui32", "0", "%r = vyre.mul %x, %c : ui32", "vyre.mul"),
    ("si32", "si32", "0", "%r = vyre.mul %c, %x : si32", "vyre.mul"),
    ("ui32", "ui32", "4294967295", "%r = vyre.bit_and %x, %c : ui32", "vyre.bit_and"),
    ("si32", "si32", "-1", "%r = vyre.bit_and %c, %x : si32", "vyre.bit_and"),
    ("si32", "si32", "0", "%r = vyre.bit_and %x, %c : si32", "vyre.bit_and"),
    ("ui32", "ui32", "0", "%r = vyre.bit_or %x, %c : ui32", "vyre.bit_or"),
    ("si32", "si32", "-1", "%r = vyre.bit_or %x, %c : si32", "vyre.bit_or"),
    ("si32", "si32", "0", "%r = vyre.bit_xor %c, %x : si32", "vyre.bit_xor"),
    ("ui32", "ui32", "0", "%r = vyre.saturating_add %x, %c : ui32", "vyre.saturating_add"),
    ("ui32", "ui32", "0", "%r = vyre.saturating_sub %x, %c : ui32", "vyre.saturating_sub"),
    ("ui32", "ui32", "0", "%r = vyre.shl %x, %c : ui32", "vyre.shl"),
    ("si32", "si32", "32", "%r = vyre.shr %x, %c : si32", "vyre.shr"),
    ("ui32", "ui32", "64", "%r = vyre.shr %x, %c : ui32", "vyre.shr"),
    ("ui32", "ui32", "0", "%r = vyre.rotate_left %x, %c : ui32", "vyre.rotate_left"),
    ("ui32", "ui32", "32", "%r = vyre.rotate_right %x, %c : ui32", "vyre.rotate_right"),
    ("ui32", "ui32", "0", "%r = vyre.min %x, %x : ui32", "vyre.min"),
    ("f32", "f32", "0.0", "%r = vyre.min %x, %x : f32", "vyre.min"),
    ("f32", "f32", "0.0", "%r = vyre.max %x, %x : f32", "vyre.max"),
    ("si32", "si32", "0", "%r = vyre.bit_and %x, %x : si32", "vyre.bit_and"),
    ("ui32", "ui32", "0", "%r = vyre.bit_or %x, %x : ui32", "vyre.bit_or"),
    ("si32", "si32", "0", "%r = vyre.sub %x, %x : si32", "vyre.sub"),
    ("ui32", "ui32", "0", "%r = vyre.bit_xor %x, %x : ui32", "vyre.bit_xor"),
    ("ui32", "ui32", "0", "%r = vyre.abs_diff %x, %x : ui32", "vyre.abs_diff"),
    ("ui32", "ui32", "0", "%r = vyre.saturating_sub %x, %x : ui32", "vyre.saturating_sub"),
    ("si32", "i1", "0", "%r = vyre.eq %x, %x : si32", "vyre.eq"),
    ("ui32", "i1", "0", "%r = vyre.le %x, %x : ui32", "vyre.le"),
    ("si32", "i1", "0", "%r = vyre.ge %x, %x : si32", "vyre.ge"),
    ("i1", "i1", "false", "%r = vyre.ne %x, %x : i1", "vyre.ne"),
    ("ui32", "i1", "0", "%r = vyre.lt %x, %x : ui32", "vyre.lt"),
    ("si32", "i1", "0", "%r = vyre.gt %x, %x : si32", "vyre.gt"),
    ("i1", "i1", "true", "%r = vyre.and %x, %c : i1", "vyre.and"),
    ("i1", "i1", "false", "%r = vyre.and %c, %x : i1", "vyre.and"),
    ("i1", "i1", "false", "%r = vyre.or %x, %c : i1", "vyre.or"),
    ("i1", "i1", "true", "%r = vyre.or %x, %c : i1", "vyre.or"),
    ("i1", "i1", "true", "%r = vyre.and %x, %x : i1", "vyre.and"),
    ("i1", "i1", "true", "%r = vyre.or %x, %x : i1", "vyre.or"),
    ("i1", "i1", "true", "%n = vyre.not %x : i1\n  %r = vyre.not %n : i1", "vyre.not"),
    ("si32", "si32", "0", "%n = vyre.neg %x : si32\n  %r = vyre.neg %n : si32", "vyre.neg"),
    ("f32", "f32", "0.0", "%n = vyre.neg %x : f32\n  %r = vyre.neg %n : f32", "vyre.neg"),
    (
        "ui32",
        "ui32",
        "0",
        "%n = vyre.bit_not %x : ui32\n  %r = vyre.bit_not %n : ui32",
        "vyre.bit_not",
    ),
    (
        "f32",
        "f32",
        "0.0",
        "%t = vyre.const true : i1\n  %r = vyre.select %t, %x, %y : f32",
        "vyre.select",
    ),
    (
        "si32",
        "si32",
        "0",
        "%t = vyre.const false : i1\n  %r = vyre.select %t, %x, %y : si32",
        "vyre.select",
    ),
    (
        "f32",
        "f32",
        "0.0",
        "%b = vyre.lt %x, %y : f32\n  %r = vyre.select %b, %x, %x : f32",
        "vyre.select",
    ),
    (
        "ui32",
        "i1",
        "0",
        "%b = vyre.lt %x, %y : ui32\n  %t = vyre.const true : i1\n"
        "  %f = vyre.const false : i1\n  %r = vyre.select %b, %t, %f : i1",
        "vyre.select",
    ),
    (
        "ui32",
        "i1",
        "0",
        "%b = vyre.lt %x, %y : ui32\n  %t = vyre.const true : i1\n"
        "  %f = vyre.const false : i1\n  %r = vyre.select %b, %f, %t : i1",
        "vyre.select",
    ),
    ("si32", "si32", "0", "%r = vyre.cast %x : si32 to si32", "vyre.cast"),
    (
        "f32",
        "f32",
        "0.0",
        "%b = vyre.bitcast %x : f32 to si32\n  %r = vyre.bitcast %b : si32 to f32",
        "vyre.bitcast",
    ),
    ("ui32", "ui32", "0", "%r = vyre.bitcast %x : ui32 to ui32", "vyre.bitcast"),
]


@pytest.mark.parametrize("case", HOLDS, ids=lambda c: c[3].split("\n")[-1].split("= ")[1])
def test_identity_holds_on_every_input(case):
    ty, result, const, lines, removed = case
    text = _program(ty, result, const, lines)
    after = _canonicalized(text)
    assert removed not in after, after
    inputs = {"x": _values(ty), "y": np.roll(_values(ty), 3)}
    before_out = vyre_xdsl.run(text, inputs, backend="reference")["o"]
    after_out = vyre_xdsl.run(after, inputs, backend="reference")["o"]
    assert _same(before_out, after_out)


# (type, constant, expression, why the rewrite would be wrong: numpy over the inputs)
F32 = _values("f32")
DOES_NOT_HOLD = [
    (
        "f32",
        "0.0",
        "%r = vyre.add %x, %c : f32",
        "vyre.add",
        lambda x: x + np.float32(0.0),
        lambda x: x,
    ),  # -0 + 0 = +0
    (
        "f32",
        "-0.0",
        "%r = vyre.sub %x, %c : f32",
        "vyre.sub",
        lambda x: x - np.float32(-0.0),
        lambda x: x,
    ),  # -0 - -0 = +0
    (
        "f32",
        "0.0",
        "%r = vyre.mul %x, %c : f32",
        "vyre.mul",
        lambda x: x * np.float32(0.0),
        lambda x: np.zeros_like(x),
    ),  # NaN, inf, -0
    (
        "f32",
        "0.0",
        "%r = vyre.sub %x, %x : f32",
        "vyre.sub",
        lambda x: x - x,
        lambda x: np.zeros_like(x),
    ),  # NaN, inf
    (
        "f32",
        "0.0",
        "%b = vyre.eq %x, %x : f32\n  %r = vyre.select %b, %c, %x : f32",
        "vyre.eq",
        lambda x: np.where(x == x, np.float32(0), x),
        lambda x: np.zeros_like(x),
    ),  # NaN != NaN
]


@pytest.mark.parametrize("case", DOES_NOT_HOLD, ids=lambda c: c[2].split("\n")[-1])
def test_false_identities_are_left_alone(case):
    ty, const, lines, kept, exact, naive = case
    with np.errstate(all="ignore"):
        assert not _same(exact(F32).astype(np.float32), naive(F32).astype(np.float32))
    text = _program(ty, "f32", const, lines)
    after = _canonicalized(text)
    assert kept in after
    inputs = {"x": F32, "y": F32}
    before_out = vyre_xdsl.run(text, inputs, backend="reference")["o"]
    after_out = vyre_xdsl.run(after, inputs, backend="reference")["o"]
    assert _same(before_out, after_out)


def test_integer_self_comparisons_do_not_touch_f32():
    text = _program("f32", "i1", "0.0", "%r = vyre.le %x, %x : f32")
    assert "vyre.le" in _canonicalized(text)  # NaN <= NaN is false
