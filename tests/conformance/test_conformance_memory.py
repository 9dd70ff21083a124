"""Conformance: loads and stores (out of bounds on both sides), Bool buffers,
runtime-sized buffers, per-program views, programs sharing buffers, ids and the
dispatch geometry (logical element count, invocations past the end, folding).

The geometry expectations are recomputed here from SPEC section 5 in a few lines
of Python, not taken from `vyre_xdsl.dispatch`.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conformance_support import Case, check, i32, ids, params, program, u32, words

RNG = np.random.default_rng(7)


def launched(n: int, workgroup: tuple[int, int, int]) -> tuple[int, int]:
    """(launched workgroups, lanes) for n logical elements, per SPEC section 5."""
    threads = workgroup[0] * workgroup[1] * workgroup[2]
    groups = max(1, math.ceil(n / threads))
    if groups > 65535:
        gy = math.ceil(groups / 65535)
        groups = math.ceil(groups / gy) * gy
    return groups, groups * threads


def oob_loads() -> list[Case]:
    """out[i] = src[i + 5] and src[0xFFFFFFFF]: typed zero past the end, for every type."""
    n = 20
    values = {
        "ui32": u32(RNG.integers(1, 2**32, n)),
        "si32": i32(RNG.integers(-(2**31), 0, n)),
        "f32": RNG.uniform(1, 2, n).astype(np.float32),
        "i1": np.full(n, 7, np.uint32),
    }
    cases = []
    for ty, src in values.items():
        text = program(
            f"""  %i = vyre.invocation_id x
  %five = vyre.const 5 : ui32
  %j = vyre.add %i, %five : ui32
  %v = vyre.load @src[%j] : {ty}
  vyre.store @out[%i] = %v : {ty}
  %max = vyre.const 4294967295 : ui32
  %w = vyre.load @src[%max] : {ty}
  vyre.store @far[%i] = %w : {ty}""",
            f"  vyre.buffer @src binding 0 read_only : {ty}[{n}]\n"
            f"  vyre.buffer @out binding 1 write_only : {ty}[{n}]\n"
            f"  vyre.buffer @far binding 2 write_only : {ty}[{n}]",
        )
        want = np.zeros(n, src.dtype)
        want[: n - 5] = src[5:]
        if ty == "i1":
            want = (want != 0).astype(np.uint32)  # a Bool load is word != 0; a store writes 0/1
        cases.append(
            Case(f"oob-load-{ty}", text, {"src": src}, {"out": want, "far": np.zeros(n, src.dtype)})
        )
    return cases


def oob_stores() -> Case:
    """Stores at i + 3 and at 0xFFFFFFFF: the ones past the end change nothing."""
    n = 16
    text = program(
        """  %i = vyre.invocation_id x
  %three = vyre.const 3 : ui32
  %j = vyre.add %i, %three : ui32
  %v = vyre.load @buf[%i] : ui32
  %hundred = vyre.const 100 : ui32
  %w = vyre.add %i, %hundred : ui32
  vyre.store @buf[%j] = %w : ui32
  %max = vyre.const 4294967295 : ui32
  vyre.store @buf[%max] = %w : ui32""",
        f"  vyre.buffer @buf binding 0 read_write : ui32[{n}]",
    )
    start = u32(range(1000, 1000 + n))
    want = start.copy()
    for lane in range(64):  # every launched lane stores; only j < n lands
        if lane + 3 < n:
            want[lane + 3] = lane + 100
    return Case("oob-store", text, {"buf": start}, {"buf": want})


def past_the_end_lanes() -> Case:
    """n = 100, workgroup 64: lanes 100..127 run too. out[i % 100] = i, highest lane wins."""
    text = program(
        """  %i = vyre.invocation_id x
  %n = vyre.const 100 : ui32
  %j = vyre.mod %i, %n : ui32
  vyre.store @out[%j] = %i : ui32""",
        "  vyre.buffer @out binding 0 write_only : ui32[100]",
    )
    _, lanes = launched(100, (64, 1, 1))
    want = np.zeros(100, np.uint32)
    for lane in range(lanes):  # in increasing lane order: the last writer wins
        want[lane % 100] = lane
    # lanes k and k + 100 race on out[k] from different workgroups: the highest lane
    # winning is the reference's choice; a GPU may order them either way (seen on lavapipe)
    return Case("past-the-end-lanes", text, {}, {"out": want}, backends=("reference",))


def same_element_highest_lane_wins() -> Case:
    text = program(
        """  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %c4 = vyre.const 4 : ui32
  %j = vyre.mod %i, %c4 : ui32
  %v = vyre.load @src[%i] : ui32
  vyre.store @out[%j] = %v : ui32""",
        "  vyre.buffer @src binding 0 read_only : ui32[64]\n  vyre.buffer @out binding 1 write_only : ui32[4]",
    )
    src = u32(RNG.integers(0, 2**32, 64))
    return Case(
        "same-element-highest-lane-wins",
        text,
        {"src": src},
        {"out": src[60:64].copy()},
        backends=("reference",),
    )  # which racing store wins is a reference choice


def bool_buffers() -> Case:
    """Any non-zero word loads as true; stores write exactly 0 or 1."""
    words_in = u32([0, 1, 2, 0x80000000, 0xFFFFFFFF, 0, 7, 1])
    text = program(
        """  %i = vyre.invocation_id x
  %b = vyre.load @flags[%i] : i1
  %nb = vyre.not %b : i1
  vyre.store @neg[%i] = %nb : i1
  vyre.store @same[%i] = %b : i1
  %one = vyre.const 1 : ui32
  %zero = vyre.const 0 : ui32
  %u = vyre.select %b, %one, %zero : ui32
  vyre.store @asint[%i] = %u : ui32""",
        "  vyre.buffer @flags binding 0 read_only : i1[8]\n  vyre.buffer @neg binding 1 write_only : i1[8]\n"
        "  vyre.buffer @same binding 2 write_only : i1[8]\n  vyre.buffer @asint binding 3 write_only : ui32[8]",
    )
    truth = [w != 0 for w in words_in.tolist()]
    return Case(
        "bool-buffers",
        text,
        {"flags": words_in},
        {"neg": words(not t for t in truth), "same": words(truth), "asint": words(truth)},
    )


def bool_input_from_numpy_bool() -> Case:
    text = program(
        """  %i = vyre.invocation_id x
  %b = vyre.load @flags[%i] : i1
  %nb = vyre.not %b : i1
  vyre.store @neg[%i] = %nb : i1""",
        "  vyre.buffer @flags binding 0 read_only : i1[4]\n  vyre.buffer @neg binding 1 write_only : i1[4]",
    )
    return Case(
        "bool-input-bool-array",
        text,
        {"flags": np.array([True, False, False, True])},
        {"neg": words([False, True, True, False])},
    )


def runtime_sized(n: int) -> Case:
    """`?` buffers take their length from the host arrays; buf_len reports it; the
    dispatch covers the written buffer's length."""
    text = program(
        """  %i = vyre.invocation_id x
  %len = vyre.buf_len @x
  %v = vyre.load @x[%i] : f32
  %two = vyre.const 2.0 : f32
  %d = vyre.mul %v, %two : f32
  vyre.store @y[%i] = %d : f32
  %z = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %last = vyre.sub %len, %one : ui32
  %is_last = vyre.eq %i, %last : ui32
  vyre.if %is_last {
    vyre.store @meta[%z] = %len : ui32
    %past = vyre.load @x[%len] : f32
    %bits = vyre.bitcast %past : f32 to ui32
    %m1 = vyre.add %z, %one : ui32
    vyre.store @meta[%m1] = %bits : ui32
  }""",
        "  vyre.buffer @x binding 0 read_only : f32[?]\n  vyre.buffer @y binding 1 read_write : f32[?]\n"
        "  vyre.buffer @meta binding 2 write_only : ui32[2]",
    )
    x = RNG.uniform(-5, 5, n).astype(np.float32)
    y = np.full(n, -1.0, np.float32)
    return Case(
        f"runtime-sized-{n}", text, {"x": x, "y": y}, {"y": x * np.float32(2), "meta": u32([n, 0])}
    )


def declared_view() -> Case:
    """A program sees the declared count, not the host array: p1 declares buf[8] while
    p2 declares buf[16]; p1's load at 10 gives 0 and its buf_len is 8."""
    p1 = program(
        """  %i = vyre.invocation_id x
  %ten = vyre.const 10 : ui32
  %v = vyre.load @buf[%ten] : ui32
  %len = vyre.buf_len @buf
  %z = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  vyre.store @probe[%z] = %v : ui32
  vyre.store @probe[%one] = %len : ui32
  %c12 = vyre.const 12 : ui32
  %big = vyre.const 77 : ui32
  vyre.store @buf[%c12] = %big : ui32""",
        "  vyre.buffer @buf binding 0 read_write : ui32[8]\n  vyre.buffer @probe binding 1 write_only : ui32[2]",
        (1, 1, 1),
        name="narrow",
    )
    p2 = program(
        """  %z = vyre.const 0 : ui32
  %c12 = vyre.const 12 : ui32
  %v = vyre.load @buf[%c12] : ui32
  %two = vyre.const 2 : ui32
  vyre.store @probe2[%z] = %v : ui32""",
        "  vyre.buffer @buf binding 0 read_only : ui32[16]\n  vyre.buffer @probe2 binding 1 write_only : ui32[1]",
        (1, 1, 1),
        name="wide",
    )
    buf = u32(range(100, 116))
    return Case(
        "declared-view",
        p1 + p2,
        {"buf": buf},
        {"buf": buf, "probe": u32([0, 8]), "probe2": u32([112])},
    )


def programs_share_buffers() -> Case:
    """p1 writes tmp, p2 reads it and writes out: tmp is an intermediate, not returned."""
    n = 300
    p1 = program(
        """  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : si32
  %s = vyre.mul %v, %v : si32
  vyre.store @tmp[%i] = %s : si32""",
        f"  vyre.buffer @x binding 0 read_only : si32[{n}]\n  vyre.buffer @tmp binding 1 write_only : si32[{n}]",
        name="square",
    )
    p2 = program(
        """  %i = vyre.invocation_id x
  %n = vyre.const 1 : ui32
  %j = vyre.add %i, %n : ui32
  %a = vyre.load @tmp[%i] : si32
  %b = vyre.load @tmp[%j] : si32
  %s = vyre.sub %b, %a : si32
  vyre.store @out[%i] = %s : si32""",
        f"  vyre.buffer @tmp binding 0 read_only : si32[{n}]\n  vyre.buffer @out binding 1 write_only : si32[{n}]",
        (32, 1, 1),
        name="diff",
    )
    x = i32(RNG.integers(-1000, 1000, n))
    sq = x.astype(np.int64) ** 2
    nxt = np.append(sq[1:], 0)
    return Case("programs-share-buffers", p1 + p2, {"x": x}, {"out": i32((nxt - sq).tolist())})


def ids_3d() -> Case:
    """Every id on every axis, workgroup [4, 2, 2] on 27 workgroups (432 lanes, one per
    element; an explicit grid, as a 3-D workgroup needs): lane L (of the first 48) stores
    its nine ids at out[9L .. 9L+8]; the other launched lanes store out of bounds."""
    wg = (4, 2, 2)
    kinds = [(op, axis) for op in ("invocation_id", "workgroup_id", "local_id") for axis in "xyz"]
    stores = [
        f"  %v{k} = vyre.{op} {axis}\n  %o{k} = vyre.add %base, %c{k} : ui32\n"
        f"  vyre.store @out[%o{k}] = %v{k} : ui32\n  %c{k + 1} = vyre.add %c{k}, %one : ui32"
        for k, (op, axis) in enumerate(kinds)
    ]
    text = program(
        """  %wx = vyre.workgroup_id x
  %lx = vyre.local_id x
  %ly = vyre.local_id y
  %lz = vyre.local_id z
  %k4 = vyre.const 4 : ui32
  %k8 = vyre.const 8 : ui32
  %k16 = vyre.const 16 : ui32
  %t1 = vyre.mul %ly, %k4 : ui32
  %t2 = vyre.mul %lz, %k8 : ui32
  %local = vyre.add %lx, %t1 : ui32
  %local2 = vyre.add %local, %t2 : ui32
  %wbase = vyre.mul %wx, %k16 : ui32
  %linear = vyre.add %wbase, %local2 : ui32
  %nine = vyre.const 9 : ui32
  %base = vyre.mul %linear, %nine : ui32
  %one = vyre.const 1 : ui32
  %c0 = vyre.const 0 : ui32
"""
        + "\n".join(stores),
        f"  vyre.buffer @out binding 0 write_only : ui32[{9 * 48}]",
        wg,
    )
    want = []
    for lane in range(48):
        g, t = divmod(lane, 16)
        lx, ly, lz = t % 4, (t // 4) % 2, t // 8
        want += [g * 4 + lx, ly, lz, g, 0, 0, lx, ly, lz]
    text = text.replace("workgroup_size [4, 2, 2]", "workgroup_size [4, 2, 2] grid [27, 1, 1]")
    return Case("ids-3d", text, {}, {"out": u32(want)})


def logical_count_is_largest_written() -> Case:
    """Reads a 1000-element buffer but writes a 10-element one: 64 lanes, not 1024."""
    text = program(
        """  %i = vyre.invocation_id x
  %ten = vyre.const 10 : ui32
  %j = vyre.mod %i, %ten : ui32
  %v = vyre.load @big[%i] : ui32
  vyre.store @out[%j] = %i : ui32""",
        "  vyre.buffer @big binding 0 read_only : ui32[1000]\n  vyre.buffer @out binding 1 write_only : ui32[10]",
    )
    _, lanes = launched(10, (64, 1, 1))
    want = np.zeros(10, np.uint32)
    for lane in range(lanes):
        want[lane % 10] = lane
    return Case(
        "logical-count-largest-written",
        text,
        {"big": np.zeros(1000, np.uint32)},
        {"out": want},
        backends=("reference",),
    )


def logical_count_with_atomics(n_big: int, workgroup: tuple[int, int, int]) -> Case:
    """With an atomic the dispatch covers the largest of all buffers: count the lanes."""
    text = program(
        """  %z = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %old = vyre.atomic add @counter[%z], %one : ui32""",
        f"  vyre.buffer @big binding 0 read_only : ui32[{n_big}]\n"
        "  vyre.buffer @counter binding 1 read_write : ui32[1]",
        workgroup,
    )
    _, lanes = launched(n_big, workgroup)
    # @big is never loaded, but its declaration makes it an input (SPEC section 8)
    return Case(
        f"logical-count-atomics-{n_big}",
        text,
        {"counter": u32([5]), "big": np.zeros(n_big, np.uint32)},
        {"counter": u32([5 + lanes])},
    )


def folded_grid_ids() -> Case:
    """65537 workgroups of 1 fold to 32769 x 2: one extra workgroup runs, with logical
    workgroup id 65537, and its stores are out of bounds."""
    n = 65537
    text = program(
        """  %i = vyre.invocation_id x
  %w = vyre.workgroup_id x
  %wy = vyre.workgroup_id y
  %s = vyre.add %w, %wy : ui32
  vyre.store @out[%i] = %s : ui32
  %z = vyre.const 0 : ui32
  %old = vyre.atomic max @top[%z], %w : ui32""",
        f"  vyre.buffer @out binding 0 write_only : ui32[{n}]\n  vyre.buffer @top binding 1 read_write : ui32[1]",
        (1, 1, 1),
    )
    groups, _ = launched(n, (1, 1, 1))
    assert groups == 65538
    return Case(
        "folded-grid",
        text,
        {"top": u32([0])},
        {"out": np.arange(n, dtype=np.uint32), "top": u32([groups - 1])},
    )


CASES = oob_loads() + [
    oob_stores(),
    past_the_end_lanes(),
    same_element_highest_lane_wins(),
    bool_buffers(),
    bool_input_from_numpy_bool(),
    runtime_sized(37),
    runtime_sized(1000),
    declared_view(),
    programs_share_buffers(),
    ids_3d(),
    logical_count_is_largest_written(),
    logical_count_with_atomics(1000, (64, 1, 1)),
    logical_count_with_atomics(100, (8, 4, 2)),
    folded_grid_ids(),
]
PAIRS = params(CASES)


@pytest.mark.parametrize(("case", "backend"), PAIRS, ids=ids(PAIRS))
def test_memory(case: Case, backend: str):
    check(case, backend)
