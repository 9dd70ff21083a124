"""Conformance: named locals and scopes, `if`, `loop`, `block`, `region`, `return`.

Every expected output is computed here with a plain per-invocation Python loop.
"""

from __future__ import annotations

import numpy as np
import pytest
from conformance_support import Case, check, ids, params, program, u32

N = 200  # not a multiple of the workgroup: lanes 200..255 run too (their stores are out of bounds)
INDEX = np.arange(N, dtype=np.uint32)


def io(reads_a: bool = True) -> str:
    out = f"  vyre.buffer @out binding 1 write_only : ui32[{N}]"
    return (f"  vyre.buffer @a binding 0 read_only : ui32[{N}]\n" if reads_a else "") + out


def loop_accumulate() -> Case:
    """acc = sum of k*k for k in [i % 7, a[i] % 13): per-lane trip counts, some zero or negative."""
    text = program(
        """  %i = vyre.invocation_id x
  %v = vyre.load @a[%i] : ui32
  %c7 = vyre.const 7 : ui32
  %c13 = vyre.const 13 : ui32
  %lo = vyre.mod %i, %c7 : ui32
  %hi = vyre.mod %v, %c13 : ui32
  %zero = vyre.const 0 : ui32
  vyre.let @acc = %zero : ui32
  vyre.loop @k = %lo to %hi {
    %k = vyre.var @k : ui32
    %sq = vyre.mul %k, %k : ui32
    %acc = vyre.var @acc : ui32
    %next = vyre.add %acc, %sq : ui32
    vyre.assign @acc = %next : ui32
  }
  %r = vyre.var @acc : ui32
  vyre.store @out[%i] = %r : ui32""",
        io(),
    )
    a = np.random.default_rng(1).integers(0, 1000, N).astype(np.uint32)
    want = [sum(k * k for k in range(i % 7, int(a[i]) % 13)) for i in range(N)]
    return Case("loop-per-lane-trip-counts", text, {"a": a}, {"out": u32(want)})


def nested_if_else() -> Case:
    """Classify a[i] into 4 classes with nested if/else and an assigned local."""
    text = program(
        """  %i = vyre.invocation_id x
  %v = vyre.load @a[%i] : ui32
  %c100 = vyre.const 100 : ui32
  %c500 = vyre.const 500 : ui32
  %c900 = vyre.const 900 : ui32
  %zero = vyre.const 0 : ui32
  vyre.let @class = %zero : ui32
  %small = vyre.lt %v, %c500 : ui32
  vyre.if %small {
    %tiny = vyre.lt %v, %c100 : ui32
    vyre.if %tiny {
      %one = vyre.const 1 : ui32
      vyre.assign @class = %one : ui32
    } else {
      %two = vyre.const 2 : ui32
      vyre.assign @class = %two : ui32
    }
  } else {
    %huge = vyre.ge %v, %c900 : ui32
    vyre.if %huge {
      %four = vyre.const 4 : ui32
      vyre.assign @class = %four : ui32
    } else {
      %three = vyre.const 3 : ui32
      vyre.assign @class = %three : ui32
    }
  }
  %r = vyre.var @class : ui32
  vyre.store @out[%i] = %r : ui32""",
        io(),
    )
    a = np.random.default_rng(2).integers(0, 1000, N).astype(np.uint32)
    want = [(1 if v < 100 else 2) if v < 500 else (4 if v >= 900 else 3) for v in a.tolist()]
    return Case("nested-if-else", text, {"a": a}, {"out": u32(want)})


def nested_loops() -> Case:
    """count = number of (j, k) with 0 <= j < i % 5 and j <= k < 2*j + a[i] % 3."""
    text = program(
        """  %i = vyre.invocation_id x
  %v = vyre.load @a[%i] : ui32
  %c3 = vyre.const 3 : ui32
  %c5 = vyre.const 5 : ui32
  %zero = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %outer = vyre.mod %i, %c5 : ui32
  %extra = vyre.mod %v, %c3 : ui32
  vyre.let @count = %zero : ui32
  vyre.loop @j = %zero to %outer {
    %j = vyre.var @j : ui32
    %jj = vyre.add %j, %j : ui32
    %hi = vyre.add %jj, %extra : ui32
    vyre.loop @k = %j to %hi {
      %c = vyre.var @count : ui32
      %c1 = vyre.add %c, %one : ui32
      vyre.assign @count = %c1 : ui32
    }
  }
  %r = vyre.var @count : ui32
  vyre.store @out[%i] = %r : ui32""",
        io(),
    )
    a = np.random.default_rng(3).integers(0, 1000, N).astype(np.uint32)
    want = [sum(max(2 * j + int(a[i]) % 3 - j, 0) for j in range(i % 5)) for i in range(N)]
    return Case("nested-loops", text, {"a": a}, {"out": u32(want)})


def fresh_scope_per_iteration() -> Case:
    """A `let` inside the loop body is a new local every iteration; the last one is stored."""
    text = program(
        """  %i = vyre.invocation_id x
  %zero = vyre.const 0 : ui32
  %four = vyre.const 4 : ui32
  %ten = vyre.const 10 : ui32
  vyre.loop @k = %zero to %four {
    %k = vyre.var @k : ui32
    vyre.let @t = %k : ui32
    %t = vyre.var @t : ui32
    %t10 = vyre.mul %t, %ten : ui32
    vyre.assign @t = %t10 : ui32
    %t2 = vyre.var @t : ui32
    %s = vyre.add %t2, %i : ui32
    vyre.store @out[%i] = %s : ui32
  }""",
        io(reads_a=False),
    )
    return Case("fresh-scope-per-iteration", text, {}, {"out": u32([30 + i for i in range(N)])})


def block_and_region_scopes() -> Case:
    """Sibling scopes may reuse a name; a scope sees the SSA values and locals around it."""
    text = program(
        """  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %two = vyre.const 2 : ui32
  vyre.let @sum = %i : ui32
  vyre.block {
    vyre.let @t = %one : ui32
    %t = vyre.var @t : ui32
    %s = vyre.var @sum : ui32
    %n = vyre.add %s, %t : ui32
    vyre.assign @sum = %n : ui32
  }
  vyre.region "generator.name" {
    vyre.let @t = %two : ui32
    %t = vyre.var @t : ui32
    %s = vyre.var @sum : ui32
    %n = vyre.mul %s, %t : ui32
    vyre.assign @sum = %n : ui32
  }
  %r = vyre.var @sum : ui32
  vyre.store @out[%i] = %r : ui32""",
        io(reads_a=False),
    )
    return Case("block-region-scopes", text, {}, {"out": u32([(i + 1) * 2 for i in range(N)])})


def early_return() -> Case:
    """Odd invocations return before storing; even ones store twice (the second wins)."""
    text = program(
        """  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %bit = vyre.bit_and %i, %one : ui32
  %c1 = vyre.const 1 : ui32
  vyre.store @out[%i] = %c1 : ui32
  %odd = vyre.ne %bit, %c1 : ui32
  %is_odd = vyre.not %odd : i1
  vyre.if %is_odd {
    vyre.return
  }
  %c2 = vyre.const 2 : ui32
  vyre.store @out[%i] = %c2 : ui32""",
        io(reads_a=False),
    )
    return Case("early-return", text, {}, {"out": u32([1 if i % 2 else 2 for i in range(N)])})


def return_inside_loop() -> Case:
    """for k in 0..10: if k == a[i] % 12 { out[i] = 100 + k; return }; after the loop out[i] = 999."""
    text = program(
        """  %i = vyre.invocation_id x
  %v = vyre.load @a[%i] : ui32
  %c12 = vyre.const 12 : ui32
  %target = vyre.mod %v, %c12 : ui32
  %zero = vyre.const 0 : ui32
  %ten = vyre.const 10 : ui32
  %hundred = vyre.const 100 : ui32
  vyre.loop @k = %zero to %ten {
    %k = vyre.var @k : ui32
    %hit = vyre.eq %k, %target : ui32
    vyre.if %hit {
      %r = vyre.add %hundred, %k : ui32
      vyre.store @out[%i] = %r : ui32
      vyre.return
    }
    %after = vyre.const 7 : ui32
    vyre.store @out[%i] = %after : ui32
  }
  %c999 = vyre.const 999 : ui32
  vyre.store @out[%i] = %c999 : ui32""",
        io(),
    )
    a = np.random.default_rng(4).integers(0, 1000, N).astype(np.uint32)
    want = [100 + int(v) % 12 if int(v) % 12 < 10 else 999 for v in a]
    return Case("return-inside-loop", text, {"a": a}, {"out": u32(want)})


def top_level_return() -> Case:
    text = program(
        """  %i = vyre.invocation_id x
  %c5 = vyre.const 5 : ui32
  vyre.store @out[%i] = %c5 : ui32
  vyre.return
  %c6 = vyre.const 6 : ui32
  vyre.store @out[%i] = %c6 : ui32""",
        io(reads_a=False),
    )
    return Case("top-level-return", text, {}, {"out": u32([5] * N)})


def uniform_conditions() -> Case:
    """`if` on a constant: all lanes take one side; a loop with uniform bounds."""
    text = program(
        """  %i = vyre.invocation_id x
  %t = vyre.const true : i1
  %f = vyre.const false : i1
  %zero = vyre.const 0 : ui32
  %three = vyre.const 3 : ui32
  vyre.let @x = %i : ui32
  vyre.if %t {
    %n = vyre.add %i, %three : ui32
    vyre.assign @x = %n : ui32
  } else {
    vyre.assign @x = %zero : ui32
  }
  vyre.if %f {
    vyre.assign @x = %zero : ui32
  }
  vyre.loop @k = %zero to %three {
    %k = vyre.var @k : ui32
    %x = vyre.var @x : ui32
    %n = vyre.add %x, %k : ui32
    vyre.assign @x = %n : ui32
  }
  %r = vyre.var @x : ui32
  vyre.store @out[%i] = %r : ui32""",
        io(reads_a=False),
    )
    return Case("uniform-conditions", text, {}, {"out": u32([i + 3 + 0 + 1 + 2 for i in range(N)])})


def loop_bounds_evaluated_once() -> Case:
    """Assigning the local the upper bound came from does not change the trip count."""
    text = program(
        """  %i = vyre.invocation_id x
  %zero = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %c3 = vyre.const 3 : ui32
  %m = vyre.mod %i, %c3 : ui32
  %start = vyre.add %m, %c3 : ui32
  vyre.let @n = %start : ui32
  vyre.let @count = %zero : ui32
  %hi = vyre.var @n : ui32
  vyre.loop @k = %zero to %hi {
    %n = vyre.var @n : ui32
    %n2 = vyre.add %n, %one : ui32
    vyre.assign @n = %n2 : ui32
    %c = vyre.var @count : ui32
    %c2 = vyre.add %c, %one : ui32
    vyre.assign @count = %c2 : ui32
  }
  %r = vyre.var @count : ui32
  vyre.store @out[%i] = %r : ui32""",
        io(reads_a=False),
    )
    return Case("loop-bounds-once", text, {}, {"out": u32([i % 3 + 3 for i in range(N)])})


def loop_near_u32_max() -> Case:
    """Half-open bounds at the top of the ui32 range: k runs 4294967293, 4294967294."""
    text = program(
        """  %i = vyre.invocation_id x
  %lo = vyre.const 4294967293 : ui32
  %hi = vyre.const 4294967295 : ui32
  %zero = vyre.const 0 : ui32
  vyre.let @acc = %zero : ui32
  vyre.loop @k = %lo to %hi {
    %k = vyre.var @k : ui32
    %a = vyre.var @acc : ui32
    %x = vyre.bit_xor %a, %k : ui32
    vyre.assign @acc = %x : ui32
  }
  %r = vyre.var @acc : ui32
  vyre.store @out[%i] = %r : ui32""",
        io(reads_a=False),
    )
    return Case("loop-near-u32-max", text, {}, {"out": u32([4294967293 ^ 4294967294] * N)})


CASES = [
    loop_accumulate(),
    nested_if_else(),
    nested_loops(),
    fresh_scope_per_iteration(),
    block_and_region_scopes(),
    early_return(),
    return_inside_loop(),
    top_level_return(),
    uniform_conditions(),
    loop_bounds_evaluated_once(),
    loop_near_u32_max(),
]
PAIRS = params(CASES)


@pytest.mark.parametrize(("case", "backend"), PAIRS, ids=ids(PAIRS))
def test_control(case: Case, backend: str):
    check(case, backend)
