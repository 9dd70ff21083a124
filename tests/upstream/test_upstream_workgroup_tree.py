"""Upstream `vyre-primitives/src/reduce/workgroup_tree.rs`: workgroup sum, max and
min over `f32` and `u32`, with upstream's registered fixtures and unit tests.

`tree_program` is upstream's `reduction_program`, op for op: the first
workgroup's lanes each accumulate a strided slice of `values` into workgroup
memory, then a tree of `stride = next_power_of_two(tile) / 2, ..., 1` halvings,
a workgroup barrier after each, and lane 0 stores the result.

Upstream's lowering replaces such a reduction by subgroup reductions on a
backend that has them ("subgroup-first"). `subgroup_program` is that shape:
each lane's partial goes through `vyre.subgroup_reduce`, each subgroup's lane 0
stores its subgroup's result into workgroup memory, and lane 0 combines them.
It must give the same value for any subgroup size: the reference runs it at
1, 2, 8 and 32 lanes, wgpu at the adapter's size (lavapipe: 8).

Each case also runs as a module of both programs, fused and unfused. The
expected values are upstream's hard-coded ones (`fixture_*` registrations, and
the unit tests' values; where upstream computes `values.iter().sum()`, the sum
is written out here). Every value is a short binary fraction, so f32 sums are
exact in any order.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from upstream_support import CONFIGURATIONS, run

F32_MAX = "3.4028234663852886e+38"
#: kind -> (combining op, initial value per element type)
KINDS = {
    "sum": ("add", {"f32": "0.0", "ui32": "0"}),
    "max": ("max", {"f32": f"-{F32_MAX}", "ui32": "0"}),
    "min": ("min", {"f32": F32_MAX, "ui32": "4294967295"}),
}
SUBGROUP_KIND = {"add": "add", "max": "max", "min": "min"}

#: (kind, element type, values, tile, upstream's expected value)
CASES = {
    # the registered fixtures (count 4, tile 4)
    "fixture-sum-f32": ("sum", "f32", [1.25, -2.0, 5.5, 3.25], 4, 8.0),
    "fixture-sum-u32": ("sum", "ui32", [1, 2, 3, 4], 4, 10),
    "fixture-max-f32": ("max", "f32", [-3.0, 9.5, 4.0, 1.25], 4, 9.5),
    # the unit tests (more values than lanes: each lane loops over chunks)
    "sum-f32": ("sum", "f32", [1.25, -2.0, 5.5, 3.25, 8.0], 4, 16.0),
    "sum-u32": ("sum", "ui32", [1, 2, 3, 4, 5, 6, 7], 4, 28),
    "max-f32": ("max", "f32", [-3.0, 9.5, 4.0, 1.25, 8.75], 4, 9.5),
    "max-u32": ("max", "ui32", [3, 17, 5, 42, 8, 1], 4, 42),
    "min-f32": ("min", "f32", [3.0, 9.5, -2.5, 1.25, 8.0], 4, -2.5),
    "min-u32": ("min", "ui32", [17, 3, 42, 8, 25], 4, 3),
    # non_power_of_two_tile_reductions_match_reference_arithmetic (tile 3)
    "tile3-sum-f32": ("sum", "f32", [4.0, -7.0, 2.5, 9.0, 1.0, 3.25, -2.0], 3, 10.75),
    "tile3-max-f32": ("max", "f32", [4.0, -7.0, 2.5, 9.0, 1.0, 3.25, -2.0], 3, 9.0),
}


def _staging(name: str, kind: str, ty: str, count: int, tile: int, out: str) -> list[str]:
    """Declarations, then the first workgroup's lanes accumulating into `@acc`."""
    op, init = KINDS[kind][0], KINDS[kind][1][ty]
    chunks = math.ceil(count / tile)
    return [
        f"vyre.program @{name} workgroup_size [{tile}, 1, 1] {{",
        f"  vyre.buffer @values binding 0 read_only : {ty}[{count}]",
        f"  vyre.buffer @scratch_{name} workgroup : {ty}[{tile}]",
        f"  vyre.buffer @{out} write_only output : {ty}[1]",
        f'  vyre.region "vyre-primitives::reduce::workgroup_{kind}_{ty}" {{',
        "    %local = vyre.local_id x",
        "    %wg = vyre.workgroup_id x",
        "    %z = vyre.const 0 : ui32",
        "    %first = vyre.eq %wg, %z : ui32",
        f"    %init = vyre.const {init} : {ty}",
        f"    vyre.let @acc = %init : {ty}",
        "    vyre.if %first {",
        f"      %chunks = vyre.const {chunks} : ui32",
        "      vyre.loop @chunk = %z to %chunks {",
        "        %c = vyre.var @chunk : ui32",
        f"        %tile = vyre.const {tile} : ui32",
        "        %base = vyre.mul %c, %tile : ui32",
        "        %idx = vyre.add %base, %local : ui32",
        f"        %count = vyre.const {count} : ui32",
        "        %inside = vyre.lt %idx, %count : ui32",
        "        vyre.if %inside {",
        f"          %a = vyre.var @acc : {ty}",
        f"          %v = vyre.load @values[%idx] : {ty}",
        f"          %n = vyre.{op} %a, %v : {ty}",
        f"          vyre.assign @acc = %n : {ty}",
        "        }",
        "      }",
        f"      %final = vyre.var @acc : {ty}",
        f"      vyre.store @scratch_{name}[%local] = %final : {ty}",
        "    }",
        "    vyre.barrier",
    ]


def tree_program(name: str, kind: str, ty: str, count: int, tile: int, out: str) -> str:
    op = KINDS[kind][0]
    lines = _staging(name, kind, ty, count, tile, out)
    stride = (1 << (tile - 1).bit_length()) // 2  # next_power_of_two(tile) / 2
    while stride > 0:
        s = f"s{stride}"
        lines += [
            f"    %{s} = vyre.const {stride} : ui32",
            f"    %{s}_lane = vyre.lt %local, %{s} : ui32",
            f"    %{s}_guard = vyre.and %first, %{s}_lane : i1",
            f"    vyre.if %{s}_guard {{",
            f"      %{s}_rhs = vyre.add %local, %{s} : ui32",
            f"      %{s}_tile = vyre.const {tile} : ui32",
            f"      %{s}_in = vyre.lt %{s}_rhs, %{s}_tile : ui32",
            f"      vyre.if %{s}_in {{",
            f"        %{s}_l = vyre.load @scratch_{name}[%local] : {ty}",
            f"        %{s}_r = vyre.load @scratch_{name}[%{s}_rhs] : {ty}",
            f"        %{s}_c = vyre.{op} %{s}_l, %{s}_r : {ty}",
            f"        vyre.store @scratch_{name}[%local] = %{s}_c : {ty}",
            "      }",
            "    }",
            "    vyre.barrier",
        ]
        stride //= 2
    lines += [
        "    %lane0 = vyre.eq %local, %z : ui32",
        "    %leader = vyre.and %first, %lane0 : i1",
        "    vyre.if %leader {",
        f"      %r = vyre.load @scratch_{name}[%z] : {ty}",
        f"      vyre.store @{out}[%z] = %r : {ty}",
        "    }",
        "  }",
        "}",
    ]
    return "\n".join(lines) + "\n"


def subgroup_program(name: str, kind: str, ty: str, count: int, tile: int, out: str) -> str:
    op, init = KINDS[kind][0], KINDS[kind][1][ty]
    lines = _staging(name, kind, ty, count, tile, out)
    lines += [
        f"    %mine = vyre.var @acc : {ty}",
        f"    %part = vyre.subgroup_reduce {SUBGROUP_KIND[op]} %mine : {ty}",
        "    %size = vyre.subgroup_size",
        "    %lane = vyre.subgroup_local_id",
        "    %which = vyre.div %local, %size : ui32",
        "    %head = vyre.eq %lane, %z : ui32",
        "    vyre.if %head {",
        f"      vyre.store @scratch_{name}[%which] = %part : {ty}",
        "    }",
        "    vyre.barrier",
        "    %lane0 = vyre.eq %local, %z : ui32",
        "    %leader = vyre.and %first, %lane0 : i1",
        "    vyre.if %leader {",
        f"      %start = vyre.const {init} : {ty}",
        f"      vyre.let @total = %start : {ty}",
        f"      %tile = vyre.const {tile} : ui32",
        "      %one = vyre.const 1 : ui32",
        "      %less = vyre.sub %size, %one : ui32",
        "      %up = vyre.add %tile, %less : ui32",
        "      %groups = vyre.div %up, %size : ui32",
        "      vyre.loop @g = %z to %groups {",
        "        %g = vyre.var @g : ui32",
        f"        %t = vyre.var @total : {ty}",
        f"        %p = vyre.load @scratch_{name}[%g] : {ty}",
        f"        %u = vyre.{op} %t, %p : {ty}",
        f"        vyre.assign @total = %u : {ty}",
        "      }",
        f"      %r = vyre.var @total : {ty}",
        f"      vyre.store @{out}[%z] = %r : {ty}",
        "    }",
        "  }",
        "}",
    ]
    return "\n".join(lines) + "\n"


DTYPES = {"f32": np.float32, "ui32": np.uint32}


def _inputs(ty: str, values: list) -> dict[str, np.ndarray]:
    return {"values": np.array(values, DTYPES[ty])}


def _expected(ty: str, value) -> list:
    return np.array([value], DTYPES[ty]).tolist()


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_workgroup_tree(backend, case):
    kind, ty, values, tile, expected = CASES[case]
    text = tree_program("reduce", kind, ty, len(values), tile, "out")
    assert run(text, _inputs(ty, values), backend=backend)["out"].tolist() == _expected(
        ty, expected
    )


@pytest.mark.parametrize("subgroup_size", [1, 2, 8, 32])
@pytest.mark.parametrize("case", sorted(CASES))
def test_subgroup_first_on_the_reference(case, subgroup_size):
    kind, ty, values, tile, expected = CASES[case]
    text = subgroup_program("reduce", kind, ty, len(values), tile, "out")
    import vyre_xdsl

    out = vyre_xdsl.run(text, _inputs(ty, values), backend="reference", subgroup_size=subgroup_size)
    assert out["out"].tolist() == _expected(ty, expected)


@pytest.mark.parametrize("case", sorted(CASES))
def test_subgroup_first_on_wgpu(case):
    kind, ty, values, tile, expected = CASES[case]
    text = subgroup_program("reduce", kind, ty, len(values), tile, "out")
    assert run(text, _inputs(ty, values), backend="wgpu")["out"].tolist() == _expected(ty, expected)


@pytest.mark.parametrize("backend,fuse", CONFIGURATIONS)
@pytest.mark.parametrize("case", ["sum-f32", "max-u32", "tile3-sum-f32"])
def test_tree_and_subgroup_programs_fused_and_unfused(backend, fuse, case):
    kind, ty, values, tile, expected = CASES[case]
    count = len(values)
    text = tree_program("tree", kind, ty, count, tile, "by_tree") + subgroup_program(
        "sub", kind, ty, count, tile, "by_subgroups"
    )
    out = run(text, _inputs(ty, values), backend=backend, fuse=fuse)
    assert out["by_tree"].tolist() == _expected(ty, expected)
    assert out["by_subgroups"].tolist() == _expected(ty, expected)
