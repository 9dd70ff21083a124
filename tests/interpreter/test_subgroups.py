"""Subgroup ops: the reference interpreter's simulated subgroups of a stated size,
the GPU (lavapipe offers the "subgroup" feature) fused and unfused, the clear
error of an adapter without the feature, the dispatch rule and effects. The
expected values are computed in plain numpy from the definition: lanes form
subgroups of S by local invocation index within each workgroup."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from xdsl.traits import get_effects

import vyre_xdsl
from vyre_xdsl.api import SubgroupSizeError
from vyre_xdsl.dialects.vyre import SubgroupReduceOp, programs
from vyre_xdsl.dispatch import logical_element_count

N = 256
WG = 64

KINDS = {
    "add": (np.add, ("ui32", "si32", "f32")),
    "mul": (np.multiply, ("ui32", "si32")),
    "min": (np.minimum, ("ui32", "si32", "f32")),
    "max": (np.maximum, ("ui32", "si32", "f32")),
    "and": (np.bitwise_and, ("ui32", "si32")),
    "or": (np.bitwise_or, ("ui32", "si32")),
    "xor": (np.bitwise_xor, ("ui32", "si32")),
}
DTYPES = {"ui32": np.uint32, "si32": np.int32, "f32": np.float32}


def reduce_module(workgroup: int = WG) -> str:
    """One program storing, per lane, every reduction of its kind/type table, the
    subgroup size and local id, a shuffle from lane l+1, a broadcast of lane 1
    and a ballot of odd values."""
    lines = [f"vyre.program @sg workgroup_size [{workgroup}, 1, 1] {{"]
    for ty in DTYPES:
        lines.append(f"  vyre.buffer @in_{ty} read_only : {ty}[{N}]")
    outs = [(kind, ty) for kind, (_, types) in KINDS.items() for ty in types]
    for kind, ty in outs:
        lines.append(f"  vyre.buffer @{kind}_{ty} write_only : {ty}[{N}]")
    for name in ("size", "lane", "shuffle", "broadcast", "ballot"):
        lines.append(f"  vyre.buffer @{name} write_only : ui32[{N}]")
    lines.append("  %i = vyre.invocation_id x")
    for ty in DTYPES:
        lines.append(f"  %v_{ty} = vyre.load @in_{ty}[%i] : {ty}")
    for kind, ty in outs:
        lines.append(f"  %{kind}_{ty} = vyre.subgroup_reduce {kind} %v_{ty} : {ty}")
        lines.append(f"  vyre.store @{kind}_{ty}[%i] = %{kind}_{ty} : {ty}")
    lines += [
        "  %n = vyre.subgroup_size",
        "  vyre.store @size[%i] = %n : ui32",
        "  %l = vyre.subgroup_local_id",
        "  vyre.store @lane[%i] = %l : ui32",
        "  %one = vyre.const 1 : ui32",
        "  %next = vyre.add %l, %one : ui32",
        "  %sh = vyre.subgroup_shuffle %v_ui32, %next : ui32",
        "  vyre.store @shuffle[%i] = %sh : ui32",
        "  %bc = vyre.subgroup_broadcast %v_ui32, %one : ui32",
        "  vyre.store @broadcast[%i] = %bc : ui32",
        "  %low = vyre.bit_and %v_ui32, %one : ui32",
        "  %odd = vyre.eq %low, %one : ui32",
        "  %b = vyre.subgroup_ballot %odd",
        "  vyre.store @ballot[%i] = %b : ui32",
        "}",
    ]
    return "\n".join(lines)


def make_inputs(seed: int = 3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        # small values, so that products stay exact in f32 and sums need no rounding
        "in_ui32": rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32),
        "in_si32": rng.integers(-(2**31), 2**31, N, dtype=np.int64).astype(np.int32),
        "in_f32": rng.integers(-64, 64, N).astype(np.float32) / np.float32(4),
    }


def expected(
    inputs: dict[str, np.ndarray], size: int, workgroup: int = WG
) -> dict[str, np.ndarray]:
    """Every output in numpy, lane by lane, from the subgroup definition. The
    launch has whole workgroups: lanes past N load zeros (out of bounds) and
    take part in their subgroup."""
    lanes = -(-N // workgroup) * workgroup
    inputs = {name: np.concatenate([a, np.zeros(lanes - N, a.dtype)]) for name, a in inputs.items()}
    lane = np.arange(N)
    base = lane - lane % workgroup
    sub = (lane % workgroup) % size
    first = lane - sub
    last = np.minimum(first + size, base + workgroup)  # a workgroup's last subgroup may be partial
    out: dict[str, np.ndarray] = {}
    for kind, (combine, types) in KINDS.items():
        for ty in types:
            values = inputs[f"in_{ty}"]
            with np.errstate(all="ignore"):
                out[f"{kind}_{ty}"] = np.array(
                    [combine.reduce(values[f:e], dtype=DTYPES[ty]) for f, e in zip(first, last)],
                    dtype=DTYPES[ty],
                )
    source = first + sub + 1
    u = inputs["in_ui32"]
    out["size"] = np.full(N, size, np.uint32)
    out["lane"] = sub.astype(np.uint32)
    out["shuffle"] = np.where(source < last, u[np.minimum(source, lanes - 1)], 0).astype(np.uint32)
    out["broadcast"] = np.where(first + 1 < last, u[np.minimum(first + 1, lanes - 1)], 0).astype(
        np.uint32
    )
    ballot = []
    for f, e in zip(first, last):
        bits = 0
        for k, v in enumerate(u[f:e][:32]):
            bits |= (int(v) & 1) << k
        ballot.append(bits)
    out["ballot"] = np.array(ballot, np.uint32)
    return out


def assert_outputs(got, want):
    for name, value in want.items():
        if value.dtype == np.float32:
            np.testing.assert_allclose(got[name], value, rtol=1e-6, err_msg=name)
        else:
            np.testing.assert_array_equal(got[name], value, err_msg=name)


@pytest.mark.parametrize("size", [4, 8, 32, 64])
def test_reference_simulates_subgroups_of_the_stated_size(size):
    inputs = make_inputs()
    got = vyre_xdsl.run(reduce_module(), inputs, backend="reference", subgroup_size=size)
    assert_outputs(got, expected(inputs, size))


def test_reference_default_subgroup_size_is_32():
    inputs = make_inputs()
    got = vyre_xdsl.run(reduce_module(), inputs, backend="reference")
    assert (got["size"] == 32).all()
    assert_outputs(got, expected(inputs, 32))


def test_partial_subgroups_at_the_end_of_a_workgroup():
    inputs = make_inputs(5)
    got = vyre_xdsl.run(reduce_module(12), inputs, backend="reference", subgroup_size=8)
    assert_outputs(got, expected(inputs, 8, 12))


def gpu_subgroup_size() -> int:
    inputs = make_inputs()
    return int(vyre_xdsl.run(reduce_module(), inputs, backend="wgpu")["size"][0])


@pytest.mark.parametrize("fuse", [False, True], ids=["unfused", "fused"])
@pytest.mark.parametrize("backend", ["wgpu", "reference"])
def test_subgroups_match_numpy(backend, fuse):
    """Every subgroup op, alone and fused with a later program; the reference at 8 lanes."""
    from vyre_xdsl.runtime.device import gpu_device

    if backend == "wgpu" and "subgroup" not in gpu_device().features:
        pytest.fail("this test expects an adapter with subgroups (lavapipe has them)")
    options = {"subgroup_size": 8} if backend == "reference" else {}
    inputs = make_inputs()
    text = reduce_module()
    if fuse:  # a second program that reads what the first wrote
        text += f"""
vyre.program @after workgroup_size [{WG}, 1, 1] {{
  vyre.buffer @add_ui32 read_only : ui32[{N}]
  vyre.buffer @total write_only : ui32[{N}]
  %i = vyre.invocation_id x
  %v = vyre.load @add_ui32[%i] : ui32
  %r = vyre.subgroup_reduce max %v : ui32
  vyre.store @total[%i] = %r : ui32
}}"""
    got = vyre_xdsl.run(text, inputs, backend=backend, fuse=fuse, **options)
    size = int(got["size"][0])
    assert size in (1, 2, 4, 8, 16, 32, 64, 128)
    want = expected(inputs, size)
    assert_outputs(got, {k: v for k, v in want.items() if k in got})
    if fuse:  # @add_ui32 is an intermediate now: check it through @total
        again = {"add_ui32": want["add_ui32"]}
        lane = np.arange(N)
        first = lane - (lane % WG) % size
        total = np.array([again["add_ui32"][f : f + size].max() for f in first], np.uint32)
        np.testing.assert_array_equal(got["total"], total)


def test_gpu_and_reference_agree_at_the_gpu_subgroup_size():
    inputs = make_inputs(11)
    size = gpu_subgroup_size()
    gpu = vyre_xdsl.run(reduce_module(), inputs, backend="wgpu")
    reference = vyre_xdsl.run(reduce_module(), inputs, backend="reference", subgroup_size=size)
    assert_outputs(gpu, reference)


def test_an_adapter_without_subgroups_gives_a_clear_error():
    from vyre_xdsl.backends.wgsl.compile import compile_module
    from vyre_xdsl.runtime.device import MissingFeatureError, gpu_device

    kernel = compile_module(vyre_xdsl.parse(reduce_module()))[0]
    without = copy.copy(gpu_device())
    without.features = frozenset(without.features - {"subgroup"})
    without.pipelines = {}
    with pytest.raises(MissingFeatureError, match="adapter feature 'subgroup'"):
        without.pipeline(kernel.wgsl, kernel.entry_point, kernel.bindings)


def test_subgroup_size_is_refused_on_the_gpu():
    with pytest.raises(SubgroupSizeError, match="reference backend"):
        vyre_xdsl.run(reduce_module(), make_inputs(), backend="wgpu", subgroup_size=8)


def test_subgroup_ops_dispatch_over_the_largest_buffer():
    text = """
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[1000]
  vyre.buffer @o binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %r = vyre.subgroup_reduce add %v : ui32
  vyre.store @o[%i] = %r : ui32
}"""
    program = programs(vyre_xdsl.parse(text))[0]
    assert logical_element_count(program, {"x": 1000, "o": 64}) == 1000


def test_collectives_are_never_pure():
    program = programs(vyre_xdsl.parse(reduce_module()))[0]
    reduce = next(op for op in program.walk() if isinstance(op, SubgroupReduceOp))
    assert get_effects(reduce)  # not removable, mergeable or movable by xDSL passes
