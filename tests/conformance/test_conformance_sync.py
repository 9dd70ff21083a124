"""Conformance: workgroup memory, barriers, grid_sync and atomics.

Atomic expectations come from a sequential Python loop over the lanes in increasing
linear invocation order (the reference interpreter's documented order). On a GPU
only order-independent results are defined, so cases whose result depends on the
order run on the reference backend only.
"""

from __future__ import annotations

import numpy as np
import pytest
from conformance_support import Case, check, ids, params, program, u32

RNG = np.random.default_rng(11)
M = 2**32 - 1


def reverse_in_workgroup() -> Case:
    """tile[lid] = x[gid]; barrier; out[gid] = tile[63 - lid]."""
    n = 256
    text = program(
        """  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %v = vyre.load @x[%i] : f32
  vyre.store @tile[%l] = %v : f32
  vyre.barrier
  %c63 = vyre.const 63 : ui32
  %r = vyre.sub %c63, %l : ui32
  %w = vyre.load @tile[%r] : f32
  vyre.store @out[%i] = %w : f32""",
        f"  vyre.buffer @x binding 0 read_only : f32[{n}]\n  vyre.buffer @out binding 1 write_only : f32[{n}]\n"
        "  vyre.buffer @tile workgroup : f32[64]",
    )
    x = RNG.standard_normal(n).astype(np.float32)
    return Case(
        "barrier-reverse", text, {"x": x}, {"out": x.reshape(-1, 64)[:, ::-1].reshape(-1).copy()}
    )


def tree_reduction() -> Case:
    """Per-workgroup sum with a barrier per step of a uniform loop; lane 0 stores it."""
    n = 64 * 6
    text = program(
        """  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @tile[%l] = %v : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %six = vyre.const 6 : ui32
  %c32 = vyre.const 32 : ui32
  vyre.loop @s = %zero to %six {
    %s = vyre.var @s : ui32
    %stride = vyre.shr %c32, %s : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %o = vyre.add %l, %stride : ui32
      %a = vyre.load @tile[%l] : ui32
      %b = vyre.load @tile[%o] : ui32
      %sum = vyre.add %a, %b : ui32
      vyre.store @tile[%l] = %sum : ui32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile[%zero] : ui32
    vyre.store @sums[%w] = %total : ui32
  }""",
        f"  vyre.buffer @x binding 0 read_only : ui32[{n}]\n  vyre.buffer @sums binding 1 read_write : ui32[{n}]\n"
        "  vyre.buffer @tile workgroup : ui32[64]",
    )
    x = u32(RNG.integers(0, 2**32, n))
    sums = np.zeros(n, np.uint32)
    for g in range(n // 64):
        sums[g] = sum(int(v) for v in x[g * 64 : (g + 1) * 64]) & M
    return Case(
        "barrier-tree-reduction", text, {"x": x, "sums": np.zeros(n, np.uint32)}, {"sums": sums}
    )


def workgroup_memory_is_per_workgroup() -> Case:
    """Workgroup memory starts zero and each workgroup has its own; out-of-bounds
    workgroup loads give 0 and stores are dropped."""
    n = 4 * 32
    text = program(
        """  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %before = vyre.load @tile[%l] : ui32
  vyre.store @zeros[%i] = %before : ui32
  %k1000 = vyre.const 1000 : ui32
  %tag = vyre.mul %w, %k1000 : ui32
  %mine = vyre.add %tag, %l : ui32
  vyre.store @tile[%l] = %mine : ui32
  %c32 = vyre.const 32 : ui32
  %past = vyre.add %l, %c32 : ui32
  vyre.store @tile[%past] = %i : ui32
  vyre.barrier
  %one = vyre.const 1 : ui32
  %c31 = vyre.const 31 : ui32
  %n1 = vyre.add %l, %one : ui32
  %nb = vyre.bit_and %n1, %c31 : ui32
  %v = vyre.load @tile[%nb] : ui32
  vyre.store @out[%i] = %v : ui32
  %oob = vyre.load @tile[%past] : ui32
  vyre.store @oob[%i] = %oob : ui32""",
        f"  vyre.buffer @zeros binding 0 write_only : ui32[{n}]\n  vyre.buffer @out binding 1 write_only : ui32[{n}]\n"
        f"  vyre.buffer @oob binding 2 write_only : ui32[{n}]\n  vyre.buffer @tile workgroup : ui32[32]",
        (32, 1, 1),
    )
    want = [1000 * (i // 32) + (i % 32 + 1) % 32 for i in range(n)]
    return Case(
        "workgroup-memory-private",
        text,
        {},
        {"zeros": np.zeros(n, np.uint32), "out": u32(want), "oob": np.zeros(n, np.uint32)},
    )


def barrier_in_workgroup_uniform_if() -> Case:
    """A barrier under an `if` on the workgroup id (uniform within the workgroup)."""
    n = 3 * 16
    text = program(
        """  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %one = vyre.const 1 : ui32
  %odd = vyre.bit_and %w, %one : ui32
  %go = vyre.eq %odd, %one : ui32
  vyre.store @out[%i] = %w : ui32
  vyre.if %go {
    vyre.store @tile[%l] = %i : ui32
    vyre.barrier
    %c15 = vyre.const 15 : ui32
    %r = vyre.sub %c15, %l : ui32
    %v = vyre.load @tile[%r] : ui32
    vyre.store @out[%i] = %v : ui32
  }""",
        f"  vyre.buffer @out binding 0 write_only : ui32[{n}]\n  vyre.buffer @tile workgroup : ui32[16]",
        (16, 1, 1),
    )
    want = [(16 * (i // 16) + 15 - i % 16) if (i // 16) % 2 else i // 16 for i in range(n)]
    return Case("barrier-in-uniform-if", text, {}, {"out": u32(want)})


def grid_sync_rotation() -> Case:
    """a[i] = 3i; grid_sync; out[i] = a[(i + 100) % n]: reads across workgroups."""
    n = 500
    text = program(
        """  %i = vyre.invocation_id x
  %three = vyre.const 3 : ui32
  %t = vyre.mul %i, %three : ui32
  vyre.store @a[%i] = %t : ui32
  vyre.barrier grid_sync
  %hundred = vyre.const 100 : ui32
  %n = vyre.buf_len @a
  %j0 = vyre.add %i, %hundred : ui32
  %j = vyre.mod %j0, %n : ui32
  %v = vyre.load @a[%j] : ui32
  vyre.store @out[%i] = %v : ui32""",
        f"  vyre.buffer @a binding 0 read_write : ui32[{n}]\n  vyre.buffer @out binding 1 write_only : ui32[{n}]",
    )
    a = 3 * np.arange(n, dtype=np.uint32)
    return Case("grid-sync", text, {"a": np.zeros(n, np.uint32)}, {"a": a, "out": np.roll(a, -100)})


# ------------------------------------------------------------------------- atomics


def sequential_atomics(kind, memory, addr, value, expected=None):
    """The sequential meaning, one lane after another: returns (old values, memory)."""
    memory = [int(v) for v in memory]
    old = []
    for lane, (a, v) in enumerate(zip(addr, value)):
        if a >= len(memory):
            old.append(0)
            continue
        before = memory[a]
        old.append(before)
        after = {
            "add": lambda m: (m + v) & M,
            "or": lambda m: m | v,
            "and": lambda m: m & v,
            "xor": lambda m: m ^ v,
            "min": lambda m: min(m, v),
            "max": lambda m: max(m, v),
            "exchange": lambda m: v,
            "compare_exchange": lambda m: v if m == expected[lane] else m,
        }[kind](before)
        memory[a] = after
    return u32(old), u32(memory)


def atomic_program(kind: str, lanes: int, slots: int, workgroup=(64, 1, 1)) -> str:
    expected = "%e, " if kind == "compare_exchange" else ""
    load_e = "  %e = vyre.load @exp[%i] : ui32\n" if kind == "compare_exchange" else ""
    buffers = (
        f"  vyre.buffer @addr binding 0 read_only : ui32[{lanes}]\n"
        f"  vyre.buffer @val binding 1 read_only : ui32[{lanes}]\n"
        f"  vyre.buffer @mem binding 2 read_write : ui32[{slots}]\n"
        f"  vyre.buffer @old binding 3 write_only : ui32[{lanes}]"
    )
    if kind == "compare_exchange":
        buffers += f"\n  vyre.buffer @exp binding 4 read_only : ui32[{lanes}]"
    return program(
        f"""  %i = vyre.invocation_id x
  %a = vyre.load @addr[%i] : ui32
  %v = vyre.load @val[%i] : ui32
{load_e}  %o = vyre.atomic {kind} @mem[%a], {expected}%v : ui32
  vyre.store @old[%i] = %o : ui32""",
        buffers,
        workgroup,
    )


ATOMICS = ("add", "or", "and", "xor", "min", "max", "exchange", "compare_exchange")


def random_atomic_case(kind: str, lanes: int, slots: int, seed: int) -> Case:
    """Random addresses (some out of bounds) and values; exact old values."""
    rng = np.random.default_rng(seed)
    addr = u32(rng.integers(0, slots + 3, lanes))  # a few out of bounds
    small = kind in ("min", "max", "compare_exchange")
    value = u32(rng.integers(0, 8 if small else 2**32, lanes))
    mem = u32(rng.integers(0, 8 if small else 2**32, slots))
    inputs = {"addr": addr, "val": value, "mem": mem}
    expected_in = None
    if kind == "compare_exchange":
        expected_in = u32(rng.integers(0, 8, lanes))
        inputs["exp"] = expected_in
    # the dispatch covers the largest buffer rounded up to whole workgroups; the lanes past
    # the end load address 0, value 0 and expected 0, and take part too
    extra = [0] * (-(-max(lanes, slots) // 64) * 64 - lanes)
    old, final = sequential_atomics(
        kind,
        mem.tolist(),
        addr.tolist() + extra,
        value.tolist() + extra,
        None if expected_in is None else expected_in.tolist() + extra,
    )
    old = old[:lanes]
    return Case(
        f"atomic-{kind}-{lanes}x{slots}",
        atomic_program(kind, lanes, slots),
        inputs,
        {"old": old, "mem": final},
        backends=("reference",),
    )


def order_independent_atomic_case(kind: str) -> Case:
    """Final memory only: the same whatever order the lanes run in (commutative ops)."""
    lanes, slots = 512, 16
    rng = np.random.default_rng(99)
    addr = u32(rng.integers(0, slots, lanes))
    value = u32(rng.integers(0, 2**32, lanes))
    mem = u32(rng.integers(0, 2**32, slots))
    _, final = sequential_atomics(kind, mem.tolist(), addr.tolist(), value.tolist())
    text = program(
        f"""  %i = vyre.invocation_id x
  %a = vyre.load @addr[%i] : ui32
  %v = vyre.load @val[%i] : ui32
  %o = vyre.atomic {kind} @mem[%a], %v : ui32""",
        f"  vyre.buffer @addr binding 0 read_only : ui32[{lanes}]\n"
        f"  vyre.buffer @val binding 1 read_only : ui32[{lanes}]\n"
        f"  vyre.buffer @mem binding 2 read_write : ui32[{slots}]",
    )
    return Case(
        f"atomic-{kind}-final", text, {"addr": addr, "val": value, "mem": mem}, {"mem": final}
    )


def counter_contention() -> Case:
    """Every lane adds 1 to one counter: old values are 0..n-1 in lane order."""
    n = 4096
    text = program(
        """  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %o = vyre.atomic add @counter[%z], %one : ui32
  vyre.store @old[%i] = %o : ui32""",
        f"  vyre.buffer @counter binding 0 read_write : ui32[1]\n  vyre.buffer @old binding 1 write_only : ui32[{n}]",
    )
    return Case(
        "atomic-counter-contention",
        text,
        {"counter": u32([10])},
        {"counter": u32([10 + n]), "old": np.arange(10, 10 + n, dtype=np.uint32)},
        backends=("reference",),
    )


def histogram() -> Case:
    n = 3000
    text = program(
        """  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %c16 = vyre.const 16 : ui32
  %b = vyre.mod %v, %c16 : ui32
  %one = vyre.const 1 : ui32
  %o = vyre.atomic add @hist[%b], %one : ui32""",
        f"  vyre.buffer @x binding 0 read_only : ui32[{n}]\n  vyre.buffer @hist binding 1 read_write : ui32[16]",
    )
    x = u32(RNG.integers(0, 2**32, n))
    # the dispatch covers all n (largest buffer) rounded to 3008 lanes; the 8 lanes past the end load 0
    lanes = -(-n // 64) * 64
    hist = np.bincount(np.append(x % 16, np.zeros(lanes - n, np.uint32)), minlength=16).astype(
        np.uint32
    )
    return Case("atomic-histogram", text, {"x": x, "hist": np.zeros(16, np.uint32)}, {"hist": hist})


def atomic_under_if() -> Case:
    """Only lanes with an even value take part; the others do not touch memory."""
    n = 200
    text = program(
        """  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %one = vyre.const 1 : ui32
  %z = vyre.const 0 : ui32
  %bit = vyre.bit_and %v, %one : ui32
  %even = vyre.eq %bit, %z : ui32
  %len = vyre.buf_len @x
  %inside = vyre.lt %i, %len : ui32
  %go = vyre.and %even, %inside : i1
  vyre.if %go {
    %o = vyre.atomic max @top[%z], %v : ui32
    %p = vyre.atomic or @bits[%z], %v : ui32
  }""",
        f"  vyre.buffer @x binding 0 read_only : ui32[{n}]\n  vyre.buffer @top binding 1 read_write : ui32[1]\n"
        "  vyre.buffer @bits binding 2 read_write : ui32[1]",
    )
    x = u32(RNG.integers(0, 2**32, n))
    even = [int(v) for v in x if v % 2 == 0]
    bits = 0
    for v in even:
        bits |= v
    return Case(
        "atomic-under-if",
        text,
        {"x": x, "top": u32([0]), "bits": u32([0])},
        {"top": u32([max(even)]), "bits": u32([bits])},
    )


def compare_exchange_lock() -> Case:
    """Every lane tries cmpxchg(slot[i % 4], 0 -> i + 1): the first lane per slot wins."""
    n = 64
    text = program(
        """  %i = vyre.invocation_id x
  %c4 = vyre.const 4 : ui32
  %s = vyre.mod %i, %c4 : ui32
  %z = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %mine = vyre.add %i, %one : ui32
  %o = vyre.atomic compare_exchange @slot[%s], %z, %mine : ui32
  vyre.store @old[%i] = %o : ui32""",
        f"  vyre.buffer @slot binding 0 read_write : ui32[4]\n  vyre.buffer @old binding 1 write_only : ui32[{n}]",
    )
    old = [0 if i < 4 else i % 4 + 1 for i in range(n)]
    return Case(
        "atomic-cmpxchg-lock",
        text,
        {"slot": np.zeros(4, np.uint32)},
        {"slot": u32([1, 2, 3, 4]), "old": u32(old)},
        backends=("reference",),
    )


CASES = (
    [
        reverse_in_workgroup(),
        tree_reduction(),
        workgroup_memory_is_per_workgroup(),
        barrier_in_workgroup_uniform_if(),
        grid_sync_rotation(),
        counter_contention(),
        histogram(),
        atomic_under_if(),
        compare_exchange_lock(),
    ]
    + [random_atomic_case(kind, 1000, 37, seed) for seed, kind in enumerate(ATOMICS)]
    + [random_atomic_case(kind, 300, 1, 100 + seed) for seed, kind in enumerate(ATOMICS)]
    + [order_independent_atomic_case(kind) for kind in ("add", "or", "and", "xor", "min", "max")]
)
PAIRS = params(CASES)


@pytest.mark.parametrize(("case", "backend"), PAIRS, ids=ids(PAIRS))
def test_sync(case: Case, backend: str):
    check(case, backend)
