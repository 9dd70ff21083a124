"""Upstream `vyre-reference/tests/oracle_program_edges.rs` and
`vyre-reference/tests/assign_semantics.rs`, on the reference and on wgpu.

Where SPEC 3.4 departs from upstream's reference, the test says so and checks
the SPEC: upstream's reference flushes f32 subnormals to zero (in stores and
before comparisons) and canonicalizes NaN payloads; vyre_xdsl's reference keeps
IEEE subnormals and NaN bits, and a GPU may flush subnormals (accepted). The
upstream values are kept next to ours as `UPSTREAM`.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from upstream_support import backends, is_lavapipe, run, u32

from vyre_xdsl.interpreter import VyreTrap
from vyre_xdsl.runtime.execute import LoopLimitError

U32_MAX = 2**32 - 1


def consts_program(element: str, values: list[tuple[str, str]], extra: str = "") -> str:
    """`out[k] = expr_k` in one `[1, 1, 1]` invocation; `values` is (setup, result name)."""
    lines = [
        "vyre.program @edges workgroup_size [1, 1, 1] {",
        f"  vyre.buffer @out binding 0 read_write output : {element}[{len(values)}]",
        extra,
    ]
    for k, (setup, name) in enumerate(values):
        lines += [
            setup,
            f"  %k{k} = vyre.const {k} : ui32",
            f"  vyre.store @out[%k{k}] = {name} : {element}",
        ]
    return "\n".join(line for line in lines if line) + "\n}\n"


def f32_const(name: str, bits: int) -> str:
    return f"  %{name} = vyre.const {bits:#010x} : f32"


@backends
def test_f32_edge_values_after_program_store_and_readback(backend):
    cases = [
        (f32_const("ps", 0x0000_0001), "%ps"),
        (f32_const("ns", 0x8000_0001), "%ns"),
        (f32_const("pn", 0x7FA1_2345), "%pn"),
        (f32_const("nn", 0xFFA1_2345), "%nn"),
        (f32_const("ninf", 0xFF80_0000), "%ninf"),
        (f32_const("ns2", 0x8000_0001) + "\n  %sum = vyre.add %ns2, %ns2 : f32", "%sum"),
        ("  %m1 = vyre.const -1.0 : f32\n  %sq = vyre.sqrt %m1 : f32", "%sq"),
    ]
    text = consts_program("f32", cases)
    bits = (
        run(text, {"out": np.zeros(7, np.float32)}, backend=backend)["out"].view(np.uint32).tolist()
    )
    UPSTREAM = [
        0x0000_0000,
        0x8000_0000,
        0x7FC0_0000,
        0x7FC0_0000,
        0xFF80_0000,
        0x8000_0000,
        0x7FC0_0000,
    ]
    # SPEC 3.4: the reference keeps subnormals (0x1, 0x80000001, -2 * 2^-149), a GPU may flush them
    ieee = [0x0000_0001, 0x8000_0001, None, None, 0xFF80_0000, 0x8000_0002, None]
    for k, (got, want, theirs) in enumerate(zip(bits, ieee, UPSTREAM)):
        if want is None:  # a NaN: any payload (upstream canonicalizes to 0x7FC00000)
            assert (got & 0x7F80_0000) == 0x7F80_0000 and (got & 0x007F_FFFF), f"[{k}] {got:#x}"
        elif backend == "reference":
            assert got == want, f"[{k}] {got:#x}"
        else:
            assert got in (want, theirs), f"[{k}] {got:#x}"


@backends
def test_f32_classification_ops_survive_bool_output_readback(backend):
    cases = [
        (f32_const("pn", 0x7FA1_2345) + "\n  %a = vyre.is_nan %pn : f32", "%a"),
        (f32_const("ninf", 0xFF80_0000) + "\n  %b = vyre.is_inf %ninf : f32", "%b"),
        (f32_const("ns", 0x8000_0001) + "\n  %c = vyre.is_finite %ns : f32", "%c"),
        (f32_const("pinf", 0x7F80_0000) + "\n  %d = vyre.is_finite %pinf : f32", "%d"),
        (
            "  %zero = vyre.const 0.0 : f32\n"
            + f32_const("ns3", 0x8000_0001)
            + "\n  %e = vyre.eq %zero, %ns3 : f32",
            "%e",
        ),
        (
            f32_const("pn2", 0x7FA1_2345)
            + "\n  %one = vyre.const 1.0 : f32\n  %f = vyre.lt %pn2, %one : f32",
            "%f",
        ),
    ]
    got = run(consts_program("i1", cases), {"out": np.zeros(6, np.uint32)}, backend=backend)[
        "out"
    ].tolist()
    UPSTREAM = [1, 1, 1, 0, 1, 0]
    # [4] is 0.0 == -subnormal: false under IEEE (the reference, SPEC 3.4), true where
    # subnormals are flushed (upstream's reference, a flushing GPU)
    assert got[:4] + got[5:] == UPSTREAM[:4] + UPSTREAM[5:]
    assert got[4] == 0 if backend == "reference" else got[4] in (0, 1)


def _canonical(value: float, flush: bool) -> float:
    return math.copysign(0.0, value) if flush and value != 0 and abs(value) < 2.0**-126 else value


@backends
def test_f32_comparisons_keep_unordered_nan_and_signed_zero(backend):
    ops = {
        "eq": lambda a, b: a == b,
        "ne": lambda a, b: a != b,
        "lt": lambda a, b: a < b,
        "le": lambda a, b: a <= b,
        "gt": lambda a, b: a > b,
        "ge": lambda a, b: a >= b,
    }
    nan, nnan, ps, ns = 0x7FA1_2345, 0xFFA1_2345, 0x0000_0001, 0x8000_0001
    one, mone, two, zero, mzero = 0x3F80_0000, 0xBF80_0000, 0x4000_0000, 0x0, 0x8000_0000
    pairs = [
        (nan, one),
        (one, nan),
        (nan, nnan),
        (mzero, zero),
        (ps, zero),
        (ns, mzero),
        (mone, one),
        (two, two),
    ]
    cases, ieee, flushed = [], [], []
    for p, (x, y) in enumerate(pairs):
        fx, fy = (float(np.array([b], np.uint32).view(np.float32)[0]) for b in (x, y))
        for name, fn in ops.items():
            k = len(cases)
            cases.append(
                (
                    f32_const(f"x{k}", x)
                    + "\n"
                    + f32_const(f"y{k}", y)
                    + f"\n  %r{k} = vyre.{name} %x{k}, %y{k} : f32",
                    f"%r{k}",
                )
            )
            ieee.append(int(fn(fx, fy)))
            flushed.append(int(fn(_canonical(fx, True), _canonical(fy, True))))  # upstream's values
    got = run(
        consts_program("i1", cases), {"out": np.zeros(len(cases), np.uint32)}, backend=backend
    )["out"].tolist()
    if backend == "reference":
        assert got == ieee
    else:
        assert all(g in (i, f) for g, i, f in zip(got, ieee, flushed)), (got, ieee, flushed)


LOOP = """vyre.program @loop workgroup_size [1, 1, 1] {
  vyre.buffer @out binding 0 read_write output : ui32[1]
  %z = vyre.const 0 : ui32
  %n = vyre.const 131072 : ui32
  vyre.let @acc = %z : ui32
  vyre.loop @i = %z to %n {
    %a = vyre.var @acc : ui32
    %i = vyre.var @i : ui32
    %s = vyre.add %a, %i : ui32
    vyre.assign @acc = %s : ui32
  }
  %r = vyre.var @acc : ui32
  vyre.store @out[%z] = %r : ui32
}
"""


@backends
def test_large_loop_accumulation_wraps_u32(backend):
    expected = (131072 * 131071 // 2) % 2**32
    if backend == "wgpu" and is_lavapipe():
        with pytest.raises(LoopLimitError):  # lavapipe cannot run it: refused, never wrong
            run(LOOP, {"out": u32([0])}, backend=backend)
        return
    try:
        got = run(LOOP, {"out": u32([0])}, backend=backend)["out"].tolist()
    except LoopLimitError:
        assert backend != "reference"
        return
    assert got == [expected]


@backends
def test_u32_arithmetic_edge_cases_survive_program_store_and_readback(backend):
    def binary(k, op, a, b):
        a_line = (
            "  %zero{k} = vyre.const 0 : ui32\n  %a{k} = vyre.load @in[%zero{k}] : ui32"
            if a == "in"
            else f"  %a{k} = vyre.const {a} : ui32"
        )
        b_line = (
            f"  %zero{k}b = vyre.const 0 : ui32\n  %b{k} = vyre.load @in[%zero{k}b] : ui32"
            if b == "in"
            else f"  %b{k} = vyre.const {b} : ui32"
        )
        return (
            a_line.format(k=k) + "\n" + b_line + f"\n  %r{k} = vyre.{op} %a{k}, %b{k} : ui32",
            f"%r{k}",
        )

    specs = [
        ("div", 42, "in"),
        ("mod", 42, "in"),
        ("shl", 1, 32),
        ("shl", 1, 33),
        ("shr", 0x8000_0000, 32),
        ("abs_diff", 0, U32_MAX),
        ("add", U32_MAX, 1),
        ("mul", U32_MAX, 2),
    ]
    cases = [binary(k, *spec) for k, spec in enumerate(specs)]
    text = consts_program("ui32", cases, "  vyre.buffer @in binding 1 read_only : ui32[1]")
    got = run(text, {"out": np.zeros(8, np.uint32), "in": u32([0])}, backend=backend)[
        "out"
    ].tolist()
    assert got == [U32_MAX, 0, 1, 2, 0x8000_0000, U32_MAX, 0, (U32_MAX * 2) % 2**32]


@backends
def test_signed_division_overflow_is_a_structured_error(backend):
    text = consts_program(
        "si32",
        [
            (
                "  %m = vyre.const -2147483648 : si32\n  %d = vyre.const -1 : si32\n"
                "  %q = vyre.div %m, %d : si32",
                "%q",
            )
        ],
    )
    with pytest.raises(VyreTrap, match="si32.div") as raised:
        run(text, {"out": np.zeros(1, np.int32)}, backend=backend)
    assert (raised.value.tag, raised.value.invocation) == ("si32.div", 0)


@backends
def test_signed_remainder_reads_back_signed_and_quotient_bits_as_u32(backend):
    rem = consts_program(
        "si32",
        [
            (
                "  %a = vyre.const -7 : si32\n  %b = vyre.const 3 : si32\n"
                "  %r = vyre.mod %a, %b : si32",
                "%r",
            )
        ],
    )
    assert run(rem, {"out": np.zeros(1, np.int32)}, backend=backend)["out"].tolist() == [-1]
    # vyre stores are typed: the quotient goes to a u32 buffer through a bitcast
    quo = consts_program(
        "ui32",
        [
            (
                "  %a = vyre.const -7 : si32\n  %b = vyre.const 3 : si32\n"
                "  %q = vyre.div %a, %b : si32\n  %u = vyre.bitcast %q : si32 to ui32",
                "%u",
            )
        ],
    )
    got = run(quo, {"out": np.zeros(1, np.uint32)}, backend=backend)["out"].tolist()
    assert got == [0xFFFF_FFFE]


# ------------------------------------------------- assign_semantics.rs

ASSIGN = {
    "assign_mutates_prior_let_in_same_scope": (
        """
  %c10 = vyre.const 10 : ui32
  vyre.let @acc = %c10 : ui32
  %a = vyre.var @acc : ui32
  %c5 = vyre.const 5 : ui32
  %s = vyre.add %a, %c5 : ui32
  vyre.assign @acc = %s : ui32""",
        15,
    ),
    "assign_accumulates_across_loop_iterations": (
        """
  %c0 = vyre.const 0 : ui32
  %c4 = vyre.const 4 : ui32
  vyre.let @acc = %c0 : ui32
  vyre.loop @i = %c0 to %c4 {
    %a = vyre.var @acc : ui32
    %i = vyre.var @i : ui32
    %s = vyre.add %a, %i : ui32
    vyre.assign @acc = %s : ui32
  }""",
        6,
    ),
    "assign_from_inside_region_mutates_outer_let": (
        """
  %c100 = vyre.const 100 : ui32
  vyre.let @acc = %c100 : ui32
  vyre.region "test" {
    %a = vyre.var @acc : ui32
    %c42 = vyre.const 42 : ui32
    %s = vyre.add %a, %c42 : ui32
    vyre.assign @acc = %s : ui32
  }""",
        142,
    ),
    "assign_survives_nested_block_scope": (
        """
  %c100 = vyre.const 100 : ui32
  vyre.let @acc = %c100 : ui32
  vyre.block {
    %a = vyre.var @acc : ui32
    %c7 = vyre.const 7 : ui32
    %s = vyre.add %a, %c7 : ui32
    vyre.assign @acc = %s : ui32
  }""",
        107,
    ),
}


@backends
@pytest.mark.parametrize("name", sorted(ASSIGN))
def test_assign_semantics(backend, name):
    body, expected = ASSIGN[name]
    text = (
        "vyre.program @p workgroup_size [1, 1, 1] {\n"
        "  vyre.buffer @out binding 0 read_write : ui32[1]"
        + body
        + "\n  %z = vyre.const 0 : ui32\n  %r = vyre.var @acc : ui32\n  vyre.store @out[%z] = %r : ui32\n}\n"
    )
    assert run(text, {"out": u32([0])}, backend=backend)["out"].tolist() == [expected]


def test_shadowing_is_rejected_by_the_verifier():
    from vyre_xdsl.api import parse

    text = """vyre.program @p workgroup_size [1, 1, 1] {
  vyre.buffer @out binding 0 read_write : ui32[1]
  %c1 = vyre.const 1 : ui32
  vyre.let @acc = %c1 : ui32
  vyre.block {
    %c99 = vyre.const 99 : ui32
    vyre.let @acc = %c99 : ui32
  }
}
"""
    from vyre_xdsl.diagnostics import VyreDiagnostic

    with pytest.raises(
        VyreDiagnostic, match="named local @acc is already declared.*shadowing is not allowed"
    ):
        parse(text)
