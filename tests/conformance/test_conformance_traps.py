"""Conformance: traps. si32 `div`/`mod` by zero or INT_MIN / -1, and `vyre.trap`.

A trap raises `VyreTrap(tag, address, invocation)` after the program finishes: the
lowest trapping linear invocation is reported, on every backend (SPEC 3.4),
trapped invocations end, the others run on, and later programs do not run. The expected invocation is found here by scanning the inputs in numpy.
"""

from __future__ import annotations

import numpy as np
import pytest
from conformance_support import Case, check, i32, ids, params, program, u32

from vyre_xdsl.abi import signature
from vyre_xdsl.api import parse
from vyre_xdsl.dialects.vyre import programs
from vyre_xdsl.interpreter import VyreTrap, execute_program

INT_MIN = -(2**31)


def division(op: str, a: np.ndarray, b: np.ndarray) -> str:
    n = a.size
    return program(
        f"""  %i = vyre.invocation_id x
  %x = vyre.load @a[%i] : si32
  %y = vyre.load @b[%i] : si32
  %q = vyre.{op} %x, %y : si32
  vyre.store @out[%i] = %q : si32""",
        f"  vyre.buffer @a binding 0 read_only : si32[{n}]\n  vyre.buffer @b binding 1 read_only : si32[{n}]\n"
        f"  vyre.buffer @out binding 2 write_only : si32[{n}]",
    )


def division_traps() -> list[Case]:
    rng = np.random.default_rng(5)
    cases = []
    for op, tag in (("div", "si32.div"), ("mod", "si32.mod")):
        a = i32(rng.integers(-1000, 1000, 128))
        b = i32(rng.integers(1, 50, 128))
        b[77] = 0
        b[90] = 0
        cases.append(
            Case(
                f"{op}-by-zero",
                division(op, a, b),
                {"a": a, "b": b},
                trap=(tag, 0, int(np.flatnonzero(b == 0)[0])),
            )
        )
        a2, b2 = a.copy(), b.copy()
        b2[:] = 3
        a2[41], b2[41] = INT_MIN, -1
        cases.append(
            Case(
                f"{op}-int-min-by-minus-one",
                division(op, a2, b2),
                {"a": a2, "b": b2},
                trap=(tag, 0, 41),
            )
        )
    return cases


def past_the_end_lane_traps() -> Case:
    """n = 100 in workgroups of 64: lane 100 loads b = 0 (out of bounds) and divides by it."""
    a = i32(range(100))
    b = i32([7] * 100)
    return Case(
        "past-the-end-divides-by-zero",
        division("div", a, b),
        {"a": a, "b": b},
        trap=("si32.div", 0, 100),
    )


def explicit_trap() -> Case:
    """vyre.trap %addr "bad_value" for lanes whose value exceeds a limit; the address is the value."""
    n = 300
    x = u32(np.random.default_rng(6).integers(0, 1000, n))
    x[[150, 151, 260]] = [5000, 6000, 7000]
    text = program(
        """  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %limit = vyre.const 1000 : ui32
  %bad = vyre.ge %v, %limit : ui32
  vyre.if %bad {
    vyre.trap %v "bad_value"
  }
  vyre.store @out[%i] = %v : ui32""",
        f"  vyre.buffer @x binding 0 read_only : ui32[{n}]\n  vyre.buffer @out binding 1 write_only : ui32[{n}]",
    )
    return Case("explicit-trap", text, {"x": x}, trap=("bad_value", 5000, 150))


def lowest_invocation_wins() -> Case:
    """Lane 50 traps at the first trap statement, lane 3 at the second: lane 3 is reported."""
    text = program(
        """  %i = vyre.invocation_id x
  %c50 = vyre.const 50 : ui32
  %c3 = vyre.const 3 : ui32
  %first = vyre.eq %i, %c50 : ui32
  vyre.if %first {
    vyre.trap %i "first"
  }
  %second = vyre.eq %i, %c3 : ui32
  vyre.if %second {
    vyre.trap %i "second"
  }""",
        "  vyre.buffer @out binding 0 write_only : ui32[64]",
    )
    return Case("lowest-invocation-wins", text, {}, trap=("second", 3, 3))


def trap_in_loop() -> Case:
    """Lane i traps in iteration k = i when i is 20 or 30; iteration 20 comes first."""
    text = program(
        """  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %c64 = vyre.const 64 : ui32
  %c20 = vyre.const 20 : ui32
  %c30 = vyre.const 30 : ui32
  %is20 = vyre.eq %i, %c20 : ui32
  %is30 = vyre.eq %i, %c30 : ui32
  %cand = vyre.or %is20, %is30 : i1
  vyre.loop @k = %z to %c64 {
    %k = vyre.var @k : ui32
    %here = vyre.eq %k, %i : ui32
    %hit = vyre.and %here, %cand : i1
    vyre.if %hit {
      %addr = vyre.add %k, %c64 : ui32
      vyre.trap %addr "loop"
    }
  }""",
        "  vyre.buffer @out binding 0 write_only : ui32[64]",
    )
    return Case("trap-in-loop", text, {}, trap=("loop", 84, 20))


def ui32_division_never_traps() -> Case:
    a = u32([7, 0, 0xFFFFFFFF, 5])
    b = u32([0, 0, 0, 2])
    text = program(
        """  %i = vyre.invocation_id x
  %x = vyre.load @a[%i] : ui32
  %y = vyre.load @b[%i] : ui32
  %q = vyre.div %x, %y : ui32
  %r = vyre.mod %x, %y : ui32
  vyre.store @q[%i] = %q : ui32
  vyre.store @r[%i] = %r : ui32""",
        "  vyre.buffer @a binding 0 read_only : ui32[4]\n  vyre.buffer @b binding 1 read_only : ui32[4]\n"
        "  vyre.buffer @q binding 2 write_only : ui32[4]\n  vyre.buffer @r binding 3 write_only : ui32[4]",
    )
    return Case(
        "ui32-div-by-zero-no-trap",
        text,
        {"a": a, "b": b},
        {"q": u32([0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 2]), "r": u32([0, 0, 0, 1])},
    )


CASES = division_traps() + [
    past_the_end_lane_traps(),
    explicit_trap(),
    lowest_invocation_wins(),
    trap_in_loop(),
    ui32_division_never_traps(),
]
PAIRS = params(CASES)


@pytest.mark.parametrize(("case", "backend"), PAIRS, ids=ids(PAIRS))
def test_trap(case: Case, backend: str):
    check(case, backend)


TWO_PROGRAMS = program(
    """  %i = vyre.invocation_id x
  %x = vyre.load @a[%i] : si32
  %y = vyre.load @b[%i] : si32
  %before = vyre.const 1 : si32
  vyre.store @out[%i] = %before : si32
  %q = vyre.div %x, %y : si32
  vyre.store @out[%i] = %q : si32""",
    "  vyre.buffer @a binding 0 read_only : si32[64]\n  vyre.buffer @b binding 1 read_only : si32[64]\n"
    "  vyre.buffer @out binding 2 read_write : si32[64]",
    name="first",
) + program(
    """  %i = vyre.invocation_id x
  %m = vyre.const -5 : si32
  vyre.store @out[%i] = %m : si32""",
    "  vyre.buffer @out binding 0 read_write : si32[64]",
    name="second",
)


def test_trapped_invocations_end_and_the_others_finish():
    module = parse(TWO_PROGRAMS)
    a = i32(range(100, 164))
    b = i32([3] * 64)
    b[[9, 40]] = 0
    host = signature(module).bind({"a": a, "b": b, "out": i32([-1] * 64)})
    first, second = programs(module)
    with pytest.raises(VyreTrap) as raised:
        execute_program(first, host)
    assert (raised.value.tag, raised.value.address, raised.value.invocation) == ("si32.div", 0, 9)
    assert raised.value.program == "first"
    want = a // 3  # all positive: floor division is truncation
    want[[9, 40]] = 1  # trapped lanes ended after their first store
    np.testing.assert_array_equal(host["out"], want)


def test_later_programs_do_not_run_after_a_trap():
    import vyre_xdsl.interpreter as interpreter

    module = parse(TWO_PROGRAMS)
    b = i32([3] * 64)
    b[12] = 0
    sig = signature(module)
    host = sig.bind({"a": i32(range(64)), "b": b, "out": i32([-1] * 64)})
    with pytest.raises(VyreTrap, match="si32.div.*invocation 12.*@first") as raised:
        interpreter.execute(module, host, sig)
    want = i32([i // 3 for i in range(64)])
    want[12] = 1
    np.testing.assert_array_equal(raised.value.buffers["out"], want)  # not -5: @second never ran
    # execute works on copies: the caller's arrays are unchanged
    np.testing.assert_array_equal(host["out"], i32([-1] * 64))
