"""Conformance: multi-program modules, one per dependence kind that `vyre-fuse`
distinguishes between two arms (SPEC section 4).

| case | dependence | what a correct fusion must do |
| --- | --- | --- |
| `fuse-raw-same-index` | a later arm reads what an earlier one wrote, at the own index | nothing (invocation-local) |
| `fuse-war-same-index` | a later arm writes what an earlier one read, at the own index | nothing (invocation-local) |
| `fuse-waw-same-index` | both arms write one buffer at the own index | keep the arms' order |
| `fuse-raw-other-index` | a later arm reads an element another workgroup wrote, of a pure producer | recompute it at that index (no split) |
| `fuse-war-other-index` | a later arm overwrites an element another workgroup read | split (`grid_sync`) |
| `fuse-independent` | none (disjoint buffers, different element counts) | guard each arm to its own count |
| `fuse-workgroup-memory` | an arm with workgroup memory and barriers, then RAW at the own index | keep the arm's barriers |
| `fuse-atomics` | contended atomics in two arms, then a read of the counter by every invocation | split before the read |
| `fuse-three-arms` | RAW same index, then RAW at another index, pure producers | forward, then recompute (no split) |

Expected values are computed with numpy from the programs' meaning. Every case
runs unfused here (on `VYRE_CONFORMANCE_BACKENDS`) and fused on the reference
interpreter; `tests/test_conformance_wgpu.py` also runs them fused and unfused on
wgpu. `test_every_case_really_fuses` checks that `vyre-fuse{force=true}` turns
each into one program (so that the forced runs count as fusions), with a
`grid_sync` exactly where an element crosses workgroups and the producer
cannot be recomputed; the fused runs use both
the pass's cost model (`fuse=True`, which keeps such programs apart) and `force`.
"""

from __future__ import annotations

import numpy as np
import pytest
from conformance_support import Case, assert_matches, check, ids, params, u32

import vyre_xdsl
from vyre_xdsl.api import fuse_module
from vyre_xdsl.dialects.vyre import BarrierOp, programs

RNG = np.random.default_rng(2024)
N = 256


def program(name: str, buffers: list[str], body: str, workgroup: int = 64) -> str:
    decls = "\n".join(f"  vyre.buffer {b}" for b in buffers)
    return f"vyre.program @{name} workgroup_size [{workgroup}, 1, 1] {{\n{decls}\n{body}\n}}\n"


def raw_same_index() -> Case:
    """t[i] = x[i] * 3; out[i] = t[i] + 1 (t is an intermediate)."""
    text = program(
        "p",
        [f"@x binding 0 read_only : ui32[{N}]", f"@t binding 1 write_only : ui32[{N}]"],
        """  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %three = vyre.const 3 : ui32
  %r = vyre.mul %v, %three : ui32
  vyre.store @t[%i] = %r : ui32""",
    ) + program(
        "q",
        [f"@t binding 0 read_only : ui32[{N}]", f"@out binding 1 write_only : ui32[{N}]"],
        """  %i = vyre.invocation_id x
  %v = vyre.load @t[%i] : ui32
  %one = vyre.const 1 : ui32
  %r = vyre.add %v, %one : ui32
  vyre.store @out[%i] = %r : ui32""",
    )
    x = RNG.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    return Case("fuse-raw-same-index", text, {"x": x}, {"out": x * np.uint32(3) + np.uint32(1)})


def war_same_index() -> Case:
    """b[i] = a[i] + 1; then a[i] = a[i] * 2."""
    text = program(
        "p",
        [f"@a binding 0 read_only : ui32[{N}]", f"@b binding 1 write_only : ui32[{N}]"],
        """  %i = vyre.invocation_id x
  %v = vyre.load @a[%i] : ui32
  %one = vyre.const 1 : ui32
  %r = vyre.add %v, %one : ui32
  vyre.store @b[%i] = %r : ui32""",
    ) + program(
        "q",
        [f"@a binding 0 read_write : ui32[{N}]"],
        """  %i = vyre.invocation_id x
  %v = vyre.load @a[%i] : ui32
  %two = vyre.const 2 : ui32
  %r = vyre.mul %v, %two : ui32
  vyre.store @a[%i] = %r : ui32""",
    )
    a = RNG.integers(0, 1000, N).astype(np.uint32)
    return Case(
        "fuse-war-same-index", text, {"a": a}, {"b": a + np.uint32(1), "a": a * np.uint32(2)}
    )


def waw_same_index() -> Case:
    """out[i] = x[i]; then out[i] = x[i] + 7 on even i only: the later arm wins where it writes."""
    text = program(
        "p",
        [f"@x binding 0 read_only : si32[{N}]", f"@out binding 1 write_only : si32[{N}]"],
        """  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : si32
  vyre.store @out[%i] = %v : si32""",
    ) + program(
        "q",
        [f"@x binding 0 read_only : si32[{N}]", f"@out binding 1 write_only : si32[{N}]"],
        """  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %zero = vyre.const 0 : ui32
  %odd = vyre.bit_and %i, %one : ui32
  %even = vyre.eq %odd, %zero : ui32
  vyre.if %even {
    %v = vyre.load @x[%i] : si32
    %seven = vyre.const 7 : si32
    %r = vyre.add %v, %seven : si32
    vyre.store @out[%i] = %r : si32
  }""",
    )
    x = RNG.integers(-1000, 1000, N).astype(np.int32)
    out = x.copy()
    out[::2] += 7
    return Case("fuse-waw-same-index", text, {"x": x}, {"out": out})


def raw_other_index() -> Case:
    """t[i] = x[i] ^ 0x55; out[i] = t[255 - i]: each element crosses workgroups."""
    text = program(
        "p",
        [f"@x binding 0 read_only : ui32[{N}]", f"@t binding 1 write_only : ui32[{N}]"],
        """  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %k = vyre.const 85 : ui32
  %r = vyre.bit_xor %v, %k : ui32
  vyre.store @t[%i] = %r : ui32""",
    ) + program(
        "q",
        [f"@t binding 0 read_only : ui32[{N}]", f"@out binding 1 write_only : ui32[{N}]"],
        f"""  %i = vyre.invocation_id x
  %last = vyre.const {N - 1} : ui32
  %j = vyre.sub %last, %i : ui32
  %v = vyre.load @t[%j] : ui32
  vyre.store @out[%i] = %v : ui32""",
    )
    x = RNG.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    return Case("fuse-raw-other-index", text, {"x": x}, {"out": (x ^ np.uint32(85))[::-1].copy()})


def war_other_index() -> Case:
    """b[i] = a[(i + 100) % n]; then a[i] = i: the overwrite must wait for every read."""
    text = program(
        "p",
        [f"@a binding 0 read_only : ui32[{N}]", f"@b binding 1 write_only : ui32[{N}]"],
        f"""  %i = vyre.invocation_id x
  %k = vyre.const 100 : ui32
  %n = vyre.const {N} : ui32
  %s = vyre.add %i, %k : ui32
  %j = vyre.mod %s, %n : ui32
  %v = vyre.load @a[%j] : ui32
  vyre.store @b[%i] = %v : ui32""",
    ) + program(
        "q",
        [f"@a binding 0 read_write : ui32[{N}]"],
        """  %i = vyre.invocation_id x
  vyre.store @a[%i] = %i : ui32""",
    )
    a = RNG.integers(1000, 2000, N).astype(np.uint32)
    return Case(
        "fuse-war-other-index",
        text,
        {"a": a},
        {"b": np.roll(a, -100), "a": np.arange(N, dtype=np.uint32)},
    )


def independent() -> Case:
    """Two arms on disjoint buffers of different lengths (256 and 100 elements)."""
    m = 100
    text = program(
        "p",
        [f"@x binding 0 read_only : f32[{N}]", f"@y binding 1 write_only : f32[{N}]"],
        """  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f32
  %h = vyre.const 0.5 : f32
  %r = vyre.mul %v, %h : f32
  vyre.store @y[%i] = %r : f32""",
    ) + program(
        "q",
        [f"@u binding 0 read_only : ui32[{m}]", f"@w binding 1 write_only : ui32[{m}]"],
        """  %i = vyre.invocation_id x
  %v = vyre.load @u[%i] : ui32
  %r = vyre.add %v, %i : ui32
  vyre.store @w[%i] = %r : ui32""",
    )
    x = (RNG.integers(-400, 400, N) / 4.0).astype(np.float32)
    u = RNG.integers(0, 2**32, m, dtype=np.uint64).astype(np.uint32)
    return Case(
        "fuse-independent",
        text,
        {"x": x, "u": u},
        {"y": x * np.float32(0.5), "w": u + np.arange(m, dtype=np.uint32)},
    )


def workgroup_memory() -> Case:
    """Arm 1 reverses each workgroup's slice through workgroup memory (a barrier);
    arm 2 doubles it at the own index."""
    text = program(
        "p",
        [
            f"@x binding 0 read_only : ui32[{N}]",
            f"@t binding 1 write_only : ui32[{N}]",
            "@tile workgroup : ui32[64]",
        ],
        """  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @tile[%l] = %v : ui32
  vyre.barrier
  %c63 = vyre.const 63 : ui32
  %r = vyre.sub %c63, %l : ui32
  %w = vyre.load @tile[%r] : ui32
  vyre.store @t[%i] = %w : ui32""",
    ) + program(
        "q",
        [f"@t binding 0 read_only : ui32[{N}]", f"@out binding 1 write_only : ui32[{N}]"],
        """  %i = vyre.invocation_id x
  %v = vyre.load @t[%i] : ui32
  %two = vyre.const 2 : ui32
  %r = vyre.mul %v, %two : ui32
  vyre.store @out[%i] = %r : ui32""",
    )
    x = RNG.integers(0, 10**6, N).astype(np.uint32)
    reversed_ = x.reshape(-1, 64)[:, ::-1].reshape(-1)
    return Case("fuse-workgroup-memory", text, {"x": x}, {"out": reversed_ * np.uint32(2)})


def atomics() -> Case:
    """Every invocation adds 1, then (arm 2) 2 to counter[0]; arm 3 stores the
    final counter for every invocation: 10 + 3n everywhere. (The first two arms
    declare `out` only for their invocation count: with atomics it is the largest
    count among all buffers.)"""
    add = """  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %k = vyre.const {k} : ui32
  %o = vyre.atomic add @counter[%z], %k : ui32"""
    text = (
        program(
            "p",
            ["@counter binding 0 read_write : ui32[1]", f"@out binding 1 write_only : ui32[{N}]"],
            add.format(k=1),
        )
        + program(
            "q",
            ["@counter binding 0 read_write : ui32[1]", f"@out binding 1 write_only : ui32[{N}]"],
            add.format(k=2),
        )
        + program(
            "r",
            ["@counter binding 0 read_only : ui32[1]", f"@out binding 1 write_only : ui32[{N}]"],
            """  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %c = vyre.load @counter[%z] : ui32
  vyre.store @out[%i] = %c : ui32""",
        )
    )
    final = 10 + 3 * N
    return Case(
        "fuse-atomics",
        text,
        {"counter": u32([10])},
        {"counter": u32([final]), "out": np.full(N, final, np.uint32)},
    )


def three_arms() -> Case:
    """a = x + 1 (own index), b = a * a (own index), out[i] = b[(i + 64) % n] (another workgroup)."""
    text = (
        program(
            "p",
            [f"@x binding 0 read_only : ui32[{N}]", f"@a binding 1 write_only : ui32[{N}]"],
            """  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %one = vyre.const 1 : ui32
  %r = vyre.add %v, %one : ui32
  vyre.store @a[%i] = %r : ui32""",
        )
        + program(
            "q",
            [f"@a binding 0 read_only : ui32[{N}]", f"@b binding 1 write_only : ui32[{N}]"],
            """  %i = vyre.invocation_id x
  %v = vyre.load @a[%i] : ui32
  %r = vyre.mul %v, %v : ui32
  vyre.store @b[%i] = %r : ui32""",
        )
        + program(
            "r",
            [f"@b binding 0 read_only : ui32[{N}]", f"@out binding 1 write_only : ui32[{N}]"],
            f"""  %i = vyre.invocation_id x
  %k = vyre.const 64 : ui32
  %n = vyre.const {N} : ui32
  %s = vyre.add %i, %k : ui32
  %j = vyre.mod %s, %n : ui32
  %v = vyre.load @b[%j] : ui32
  vyre.store @out[%i] = %v : ui32""",
        )
    )
    x = RNG.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    a = x + np.uint32(1)
    return Case("fuse-three-arms", text, {"x": x}, {"out": np.roll(a * a, -64)})


CASES = [
    raw_same_index(),
    war_same_index(),
    waw_same_index(),
    raw_other_index(),
    war_other_index(),
    independent(),
    workgroup_memory(),
    atomics(),
    three_arms(),
]

#: case -> (least, most) `grid_sync`s of the fused program: at least one where
#: an element crosses workgroups, none where every dependence is invocation-local;
#: between two arms of contended atomics a split is allowed, not needed
SPLITS = {
    "fuse-raw-same-index": (0, 0),
    "fuse-war-same-index": (0, 0),
    "fuse-waw-same-index": (0, 0),
    "fuse-raw-other-index": (0, 0),  # the pure producer is recomputed
    "fuse-war-other-index": (1, 1),
    "fuse-independent": (0, 0),
    "fuse-workgroup-memory": (0, 0),
    "fuse-atomics": (1, 2),
    "fuse-three-arms": (0, 0),  # forwarded, then recomputed
}
PAIRS = params(CASES)


@pytest.mark.parametrize(("case", "backend"), PAIRS, ids=ids(PAIRS))
def test_fusion_case(case: Case, backend: str):
    check(case, backend)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_every_case_really_fuses(case: Case):
    module = vyre_xdsl.parse(case.text)
    assert len(programs(module)) >= 2
    fused = programs(fuse_module(module, force=True))
    assert len(fused) == 1, f"{case.name}: fusion left {len(fused)} programs"
    splits = [op for op in fused[0].walk() if isinstance(op, BarrierOp) and op.is_grid_sync]
    least, most = SPLITS[case.name]
    assert least <= len(splits) <= most, f"{case.name}: {len(splits)} grid_syncs\n{fused[0]}"


@pytest.mark.parametrize("fuse", [True, "force"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_fused_on_the_reference(case: Case, fuse):
    outputs = vyre_xdsl.run(
        case.text, {k: v.copy() for k, v in case.inputs.items()}, backend="reference", fuse=fuse
    )
    assert sorted(outputs) == sorted(case.expected)
    for name, want in case.expected.items():
        assert_matches(outputs[name], want, case.ulp, f"{case.name} fused ({fuse}): {name}")


def test_the_dependence_kinds_are_all_here():
    assert set(SPLITS) == {case.name for case in CASES}
