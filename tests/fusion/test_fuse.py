"""Unit tests of vyre-fuse: the Python API, the pass, the analyses, and the
hazards a fused kernel must not get wrong. Expected values come from numpy."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from xdsl.passes import PassPipeline

from vyre_xdsl import run
from vyre_xdsl.analysis import (
    Hazard,
    in_workgroup_span,
    injective_in_invocation,
    structurally_equal,
)
from vyre_xdsl.api import fuse_module
from vyre_xdsl.builder import ProgramBuilder
from vyre_xdsl.context import parse_module, vyre_context
from vyre_xdsl.diagnostics import VyreDiagnostic, verify_module
from vyre_xdsl.dialects.vyre import BarrierOp, IfOp, LoadOp, ProgramOp, StoreOp, programs
from vyre_xdsl.fusion import fuse_programs, join_access
from vyre_xdsl.fusion.barriers import place_barriers
from vyre_xdsl.interpreter import VyreTrap
from vyre_xdsl.passes import get_all_passes
from vyre_xdsl.passes.vyre_fuse import VyreFusePass

CHAIN = """
vyre.program @scale workgroup_size [32, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[96]
  vyre.buffer @t binding 1 write_only : ui32[96]
  %i = vyre.invocation_id x
  %c = vyre.const 3 : ui32
  %v = vyre.load @x[%i] : ui32
  %r = vyre.mul %v, %c : ui32
  vyre.store @t[%i] = %r : ui32
}
vyre.program @offset workgroup_size [32, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[96]
  vyre.buffer @out binding 1 write_only : ui32[96]
  %i = vyre.invocation_id x
  %c = vyre.const 5 : ui32
  %v = vyre.load @t[%i] : ui32
  %r = vyre.add %v, %c : ui32
  vyre.store @out[%i] = %r : ui32
}
"""


def _ops(program: ProgramOp, cls) -> list:
    return [op for op in program.walk() if isinstance(op, cls)]


def _x(n=96, seed=0):
    return np.random.default_rng(seed).integers(0, 1000, n).astype(np.uint32)


# ---------------------------------------------------------------- Python API and pass


def test_fuse_programs_forwards_and_drops_intermediates():
    progs = programs(parse_module(CHAIN))
    fused = fuse_programs(progs, intermediates={"t"})
    assert fused.sym_name.data == "fused_scale_offset"
    assert [b.buffer_name for b in fused.buffers()] == ["x", "out"]
    assert [op.buffer_name for op in _ops(fused, LoadOp)] == ["x"]
    assert [op.buffer_name for op in _ops(fused, StoreOp)] == ["out"]
    assert not _ops(fused, BarrierOp)


def test_fuse_programs_keeps_stores_unless_told_the_buffer_is_intermediate():
    fused = fuse_programs(programs(parse_module(CHAIN)))
    assert sorted(op.buffer_name for op in _ops(fused, StoreOp)) == ["out", "t"]
    assert [op.buffer_name for op in _ops(fused, LoadOp)] == ["x"]  # still forwarded


def test_fuse_programs_leaves_its_inputs_alone():
    module = parse_module(CHAIN)
    before = str(module)
    fuse_programs(programs(module), intermediates={"t"}, name="f")
    assert str(module) == before


def test_fuse_programs_of_zero_and_one_program():
    empty = fuse_programs([])
    assert empty.workgroup == (1, 1, 1) and not list(empty.statements())
    single = programs(parse_module(CHAIN))[0]
    copy = fuse_programs([single])
    assert copy is not single and str(copy) == str(single)


def test_fused_chain_matches_numpy():
    x = _x()
    out = run(CHAIN, {"x": x}, backend="reference", fuse=True)
    np.testing.assert_array_equal(out["out"], x * np.uint32(3) + np.uint32(5))
    assert set(out) == {"out"}


def test_pass_is_registered_with_its_option():
    pipeline = PassPipeline.parse_spec(get_all_passes(), "vyre-fuse{split-grid-sync=false}")
    assert pipeline.passes == (VyreFusePass(split_grid_sync=False),)
    module = parse_module(CHAIN)
    pipeline.apply(vyre_context(), module)
    verify_module(module)
    assert [p.sym_name.data for p in programs(module)] == ["fused_scale_offset"]


def test_pass_leaves_a_single_program_unchanged():
    module = parse_module(programs(parse_module(CHAIN))[0].__str__())
    before = str(module)
    VyreFusePass().apply(vyre_context(), module)
    assert str(module) == before


def test_vyre_opt_reports_a_refusal_located_with_exit_status_1(tmp_path):
    source = tmp_path / "rev.mlir"
    source.write_text(
        CHAIN.replace(
            "%v = vyre.load @t[%i]", "%j = vyre.sub %c, %i : ui32\n  %v = vyre.load @t[%j]"
        )
    )
    result = subprocess.run(
        [
            os.path.join(os.path.dirname(sys.executable), "vyre-opt"),
            "-p",
            "vyre-fuse{split-grid-sync=false recompute=false}",
            str(source),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert (
        f"{source}:11:1: error: cannot fuse @scale and @offset without a dispatch split"
        in result.stderr
    )
    assert "Traceback" not in result.stderr


# ---------------------------------------------------------------- merge


LATTICE = {
    ("read_only", "read_only"): "read_only",
    ("read_only", "read_write"): "read_write",
    ("read_only", "write_only"): "read_write",
    ("read_only", "uniform"): "uniform",
    ("read_write", "read_write"): "read_write",
    ("read_write", "write_only"): "read_write",
    ("read_write", "uniform"): "read_write",
    ("write_only", "write_only"): "write_only",
    ("write_only", "uniform"): "read_write",
    ("uniform", "uniform"): "uniform",
}


@pytest.mark.parametrize("pair", sorted(LATTICE), ids="+".join)
def test_access_lattice(pair):
    a, b = pair
    assert join_access(a, b) == LATTICE[pair]
    assert join_access(b, a) == LATTICE[pair]


LINKED = """
vyre.program @first workgroup_size [16, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[16]
  vyre.buffer @a binding 1 write_only : ui32[16]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %two = vyre.const 2 : ui32
  %d = vyre.mul %v, %two : ui32
  vyre.let @doubled = %d : ui32
  vyre.store @a[%i] = %v : ui32
}
vyre.program @second workgroup_size [16, 1, 1] {
  vyre.buffer @a binding 0 read_only : ui32[16]
  vyre.buffer @b binding 1 write_only : ui32[16]
  %i = vyre.invocation_id x
  %j = vyre.const READ_INDEX : ui32
  %v = vyre.load @a[%j] : ui32
  %d = vyre.var @doubled : ui32
  %s = vyre.add %v, %d : ui32
  vyre.store @b[%i] = %s : ui32
}
"""


def test_a_name_declared_in_one_program_stays_linked():
    """@second reads @doubled, declared only in @first: fused, it reads @first's value."""
    module = parse_module(
        LINKED.replace("%j = vyre.const READ_INDEX : ui32", "%j = vyre.add %i, %i : ui32").replace(
            "vyre.load @a[%j]", "vyre.load @a[%i]"
        )
    )
    fused = fuse_programs(programs(module), name="linked")
    fused_module = parse_module(str(fused))
    verify_module(fused_module)
    x = _x(16)
    out = run(fused_module, {"x": x, "a": np.zeros(16, np.uint32)}, backend="reference")
    np.testing.assert_array_equal(out["b"], x + x * np.uint32(2))


def test_a_linked_name_cannot_cross_a_dispatch_split():
    module = parse_module(LINKED.replace("READ_INDEX", "0"))
    with pytest.raises(
        VyreDiagnostic, match="reads named local @doubled of @first, but a dispatch split"
    ):
        fuse_programs(programs(module), recompute=False)


# ---------------------------------------------------------------- analyses


def _index(expr: str, workgroup=(64, 1, 1)):
    """The index value `%e` of a one-statement program built from `expr` lines."""
    text = f"""
    vyre.program @p workgroup_size [{", ".join(map(str, workgroup))}] {{
      vyre.buffer @b binding 0 read_write : ui32[1024]
      %i = vyre.invocation_id x
      %w = vyre.workgroup_id x
      %l = vyre.local_id x
      %c0 = vyre.const 0 : ui32
      %c1 = vyre.const 1 : ui32
      %c2 = vyre.const 2 : ui32
      %c3 = vyre.const 3 : ui32
      %c63 = vyre.const 63 : ui32
      %c64 = vyre.const 64 : ui32
      %n = vyre.buf_len @b
      {expr}
      vyre.store @b[%e] = %c0 : ui32
    }}"""
    program = programs(parse_module(text))[0]
    return _ops(program, StoreOp)[0].index


@pytest.mark.parametrize(
    "expr, injective",
    [
        ("%e = vyre.add %i, %c0 : ui32", True),
        ("%e = vyre.sub %n, %i : ui32", True),
        ("%r = vyre.sub %c63, %i : ui32\n%e = vyre.bit_xor %r, %c3 : ui32", True),
        ("%e = vyre.mul %i, %c3 : ui32", True),
        ("%e = vyre.mul %i, %c2 : ui32", False),
        ("%e = vyre.bit_not %i : ui32", True),
        ("%e = vyre.shr %i, %c1 : ui32", False),
        ("%e = vyre.add %l, %c0 : ui32", False),
        ("%e = vyre.add %i, %i : ui32", False),
        ("%e = vyre.load @b[%i] : ui32", False),
    ],
)
def test_injective_in_invocation(expr, injective):
    assert injective_in_invocation(_index(expr)) is injective


@pytest.mark.parametrize(
    "expr, span",
    [
        (
            "%e = vyre.add %i, %c0 : ui32",
            False,
        ),  # not i itself: add of a constant 0 is not recognised
        (
            "%b = vyre.mul %w, %c64 : ui32\n%r = vyre.sub %c63, %l : ui32\n%e = vyre.add %b, %r : ui32",
            True,
        ),
        (
            "%b = vyre.mul %c64, %w : ui32\n%r = vyre.bit_xor %l, %c1 : ui32\n%e = vyre.add %r, %b : ui32",
            True,
        ),
        (
            "%b = vyre.mul %w, %c64 : ui32\n%r = vyre.mod %i, %c64 : ui32\n%e = vyre.add %b, %r : ui32",
            True,
        ),
        (
            "%b = vyre.mul %w, %c64 : ui32\n%r = vyre.add %l, %c1 : ui32\n%e = vyre.add %b, %r : ui32",
            False,
        ),
        ("%b = vyre.mul %w, %c63 : ui32\n%e = vyre.add %b, %l : ui32", False),
        ("%e = vyre.sub %c63, %i : ui32", False),
    ],
)
def test_in_workgroup_span(expr, span):
    assert in_workgroup_span(_index(expr), (64, 1, 1)) is span


def test_invocation_itself_is_in_its_workgroup_span():
    program = programs(parse_module(CHAIN))[0]
    assert in_workgroup_span(_ops(program, StoreOp)[0].index, (32, 1, 1))


def test_structural_equality_across_programs():
    a, b = (_ops(p, StoreOp)[0].index for p in programs(parse_module(CHAIN)))
    assert structurally_equal(a, b)
    assert not structurally_equal(
        _index("%e = vyre.add %i, %c1 : ui32"), _index("%e = vyre.add %i, %c2 : ui32")
    )
    assert structurally_equal(
        _index("%e = vyre.add %i, %c1 : ui32"), _index("%e = vyre.add %i, %c1 : ui32")
    )
    assert not structurally_equal(
        _index("%e = vyre.load @b[%i] : ui32"), _index("%e = vyre.load @b[%i] : ui32")
    )


def test_barriers_are_placed_where_they_serve_the_most_dependences():
    found = [
        Hazard(0, 2, "a", "read-after-write", "grid"),
        Hazard(1, 2, "b", "read-after-write", "grid"),
        Hazard(0, 3, "c", "read-after-write", "workgroup"),
        Hazard(3, 4, "d", "write-after-read", "workgroup"),
        Hazard(0, 1, "e", "write-after-write", "invocation"),
    ]
    assert place_barriers(found) == {1: "grid_sync", 3: "seq_cst"}
    assert place_barriers(found, allowed_grid={0, 1}) == {1: "grid_sync", 3: "seq_cst"}


# ---------------------------------------------------------------- hazards


def _chain(producer_body: str, consumer_index: str = "%i", producer_wg=32, n=64, m=64) -> str:
    return f"""
vyre.program @producer workgroup_size [{producer_wg}, 1, 1] {{
  vyre.buffer @x binding 0 read_only : ui32[{n}]
  vyre.buffer @t binding 1 write_only : ui32[{n}]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %ten = vyre.const 10 : ui32
  {producer_body}
}}
vyre.program @consumer workgroup_size [32, 1, 1] {{
  vyre.buffer @t binding 0 read_only : ui32[{n}]
  vyre.buffer @out binding 1 write_only : ui32[{m}]
  %i = vyre.invocation_id x
  %c = vyre.const {n - 1} : ui32
  %r = vyre.sub %c, %i : ui32
  %v = vyre.load @t[{consumer_index}] : ui32
  vyre.store @out[%i] = %v : ui32
}}
"""


def test_a_conditional_store_is_not_forwarded_but_needs_no_barrier():
    text = _chain(
        "%big = vyre.gt %v, %ten : ui32\n  vyre.if %big {\n    vyre.store @t[%i] = %v : ui32\n  }"
    )
    fused = programs(fuse_module(parse_module(text)))[0]
    assert [op.buffer_name for op in _ops(fused, LoadOp)] == ["x", "t"]
    assert not _ops(fused, BarrierOp)
    x = _x(64)
    out = run(text, {"x": x}, backend="reference", fuse=True)
    np.testing.assert_array_equal(out["out"], np.where(x > 10, x, 0))


def test_a_return_ends_only_its_program():
    text = _chain(
        "%small = vyre.lt %v, %ten : ui32\n  vyre.if %small {\n    vyre.return\n  }\n  vyre.store @t[%i] = %v : ui32"
    )
    x = _x(64) % 20
    out = run(text, {"x": x}, backend="reference", fuse=True)
    np.testing.assert_array_equal(out["out"], np.where(x < 10, 0, x))


def test_a_smaller_program_runs_only_on_its_own_invocations():
    """@producer covers 64 elements, @consumer 256: the producer must not store
    t[64..] (out of bounds anyway) nor run on invocations 64..255."""
    text = _chain("vyre.store @t[%i] = %v : ui32", m=256)
    x = _x(64)
    out = run(text, {"x": x}, backend="reference", fuse=True)
    np.testing.assert_array_equal(out["out"], np.concatenate([x, np.zeros(192, np.uint32)]))


def test_a_narrower_workgroup_is_guarded_by_its_invocation_range():
    text = _chain("vyre.store @t[%i] = %v : ui32", producer_wg=16, n=40, m=40)
    fused = programs(fuse_module(parse_module(text)))[0]
    assert fused.workgroup == (32, 1, 1)
    x = _x(40)
    np.testing.assert_array_equal(run(text, {"x": x}, backend="reference", fuse=True)["out"], x)


def test_a_reversed_read_gets_a_grid_sync():
    # through a named local, the producer's value is not recomputed
    text = _chain(
        "vyre.let @kept = %v : ui32\n  %k = vyre.var @kept : ui32\n  vyre.store @t[%i] = %k : ui32",
        consumer_index="%r",
    )
    fused = programs(fuse_module(parse_module(text), force=True))[0]
    assert [op.ordering.data for op in _ops(fused, BarrierOp)] == ["grid_sync"]
    # without force, the cost model keeps the two programs apart: the split saves nothing
    assert [p.sym_name.data for p in programs(fuse_module(parse_module(text)))] == [
        "producer",
        "consumer",
    ]
    x = _x(64)
    np.testing.assert_array_equal(
        run(text, {"x": x}, backend="reference", fuse=True)["out"], x[::-1]
    )


def test_a_trap_in_a_later_program_still_traps():
    text = """
vyre.program @copy workgroup_size [8, 1, 1] {
  vyre.buffer @x binding 0 read_only : si32[16]
  vyre.buffer @t binding 1 write_only : si32[16]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : si32
  vyre.store @t[%i] = %v : si32
}
vyre.program @divide workgroup_size [8, 1, 1] {
  vyre.buffer @t binding 0 read_only : si32[16]
  vyre.buffer @out binding 1 write_only : si32[16]
  %i = vyre.invocation_id x
  %v = vyre.load @t[%i] : si32
  %hundred = vyre.const 100 : si32
  %q = vyre.div %hundred, %v : si32
  vyre.store @out[%i] = %q : si32
}
"""
    x = np.arange(1, 17, dtype=np.int32)
    np.testing.assert_array_equal(
        run(text, {"x": x}, backend="reference", fuse=True)["out"], 100 // x
    )
    x[5] = 0
    with pytest.raises(VyreTrap) as unfused:
        run(text, {"x": x}, backend="reference")
    with pytest.raises(VyreTrap) as fused:
        run(text, {"x": x}, backend="reference", fuse=True)
    assert fused.value.tag == unfused.value.tag == "si32.div"


@pytest.mark.parametrize("n_t, n_out", [(80, 80), (50, 80), (80, 50)])
def test_runtime_sized_buffers_get_guards_computed_at_run_time(n_t, n_out):
    """len(@t) and len(@out) are only known at run time: each arm is guarded by
    its own dispatch's workgroup count, computed from buf_len in the kernel."""
    text = CHAIN.replace("ui32[96]", "ui32[?]").replace("write_only", "read_write")
    fused = programs(fuse_module(parse_module(text)))[0]
    assert sum(isinstance(op, IfOp) for op in fused.statements()) == 2
    x, t, o = _x(80), np.zeros(n_t, np.uint32), np.full(n_out, 7, np.uint32)
    out = run(text, {"x": x, "t": t, "out": o}, backend="reference", fuse=True)
    expected_t = x[:n_t] * np.uint32(3)
    expected_out = np.concatenate(
        [expected_t + np.uint32(5), np.full(max(0, n_out - n_t), 5, np.uint32)]
    )[:n_out]
    np.testing.assert_array_equal(out["t"], expected_t)
    np.testing.assert_array_equal(out["out"], expected_out)


def test_one_runtime_sized_buffer_needs_no_guard_and_forwards():
    text = """
vyre.program @double workgroup_size [32, 1, 1] {
  vyre.buffer @y binding 0 read_write : ui32[?]
  %i = vyre.invocation_id x
  %v = vyre.load @y[%i] : ui32
  %d = vyre.add %v, %v : ui32
  vyre.store @y[%i] = %d : ui32
}
vyre.program @increment workgroup_size [32, 1, 1] {
  vyre.buffer @y binding 0 read_write : ui32[?]
  %i = vyre.invocation_id x
  %v = vyre.load @y[%i] : ui32
  %one = vyre.const 1 : ui32
  %s = vyre.add %v, %one : ui32
  vyre.store @y[%i] = %s : ui32
}
"""
    fused = programs(fuse_module(parse_module(text)))[0]
    assert not any(isinstance(op, IfOp) for op in fused.statements())
    assert len(_ops(fused, LoadOp)) == 1
    y = _x(77)
    np.testing.assert_array_equal(
        run(text, {"y": y}, backend="reference", fuse=True)["y"], y * np.uint32(2) + np.uint32(1)
    )


def test_a_shorter_view_keeps_its_bounds():
    """@short declares x with 8 elements: its loads past 8 read 0, as unfused."""
    b1 = ProgramBuilder("short", (8, 1, 1))
    b1.buffer("x", "read_only", "ui32", 8, binding=0)
    b1.buffer("a", "write_only", "ui32", 16, binding=1)
    i = b1.invocation_id()
    b1.store("a", i, b1.add(b1.load("x", i), b1.buf_len("x")))
    b2 = ProgramBuilder("long", (8, 1, 1))
    b2.buffer("x", "read_only", "ui32", 16, binding=0)
    b2.buffer("b", "write_only", "ui32", 16, binding=1)
    j = b2.invocation_id()
    b2.store("b", j, b2.load("x", j))
    from vyre_xdsl.builder import module_of

    module = module_of([b1.build(), b2.build()])
    x = _x(16)
    out = run(module, {"x": x}, backend="reference", fuse=True)
    np.testing.assert_array_equal(out["a"], np.concatenate([x[:8] + 8, np.full(8, 8, np.uint32)]))
    np.testing.assert_array_equal(out["b"], x)


def test_workgroup_memory_is_never_shared_between_programs():
    """@a's workgroup buffer @x and @b's host buffer @x are different buffers."""
    text = """
vyre.program @a workgroup_size [8, 1, 1] {
  vyre.buffer @x workgroup : ui32[8]
  vyre.buffer @out binding 0 write_only : ui32[8]
  %l = vyre.local_id x
  %i = vyre.invocation_id x
  %seven = vyre.const 7 : ui32
  vyre.store @x[%l] = %seven : ui32
  %v = vyre.load @x[%l] : ui32
  vyre.store @out[%i] = %v : ui32
}
vyre.program @b workgroup_size [8, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[8]
  vyre.buffer @y binding 1 write_only : ui32[8]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @y[%i] = %v : ui32
}
"""
    fused = programs(fuse_module(parse_module(text)))[0]
    assert [(b.buffer_name, b.access_mode) for b in fused.buffers()] == [
        ("__vyre_fuse_a0_x", "workgroup"),
        ("out", "write_only"),
        ("x", "read_only"),
        ("y", "write_only"),
    ]
    x = _x(8)
    out = run(text, {"x": x}, backend="reference", fuse=True)
    np.testing.assert_array_equal(out["out"], np.full(8, 7, np.uint32))
    np.testing.assert_array_equal(out["y"], x)


def test_a_load_after_its_own_program_wrote_the_buffer_is_not_forwarded():
    """@twice adds 1 to t[i] in a loop: its second load must see its own store,
    not @copy's value."""
    text = """
vyre.program @copy workgroup_size [16, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[32]
  vyre.buffer @t binding 1 write_only : ui32[32]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @t[%i] = %v : ui32
}
vyre.program @twice workgroup_size [16, 1, 1] {
  vyre.buffer @t binding 0 read_write : ui32[32]
  %i = vyre.invocation_id x
  %zero = vyre.const 0 : ui32
  %two = vyre.const 2 : ui32
  %one = vyre.const 1 : ui32
  vyre.loop @k = %zero to %two {
    %v = vyre.load @t[%i] : ui32
    %s = vyre.add %v, %one : ui32
    vyre.store @t[%i] = %s : ui32
  }
}
vyre.program @after_store workgroup_size [16, 1, 1] {
  vyre.buffer @t binding 0 read_write : ui32[32]
  vyre.buffer @out binding 1 write_only : ui32[32]
  %i = vyre.invocation_id x
  %seven = vyre.const 7 : ui32
  vyre.store @t[%i] = %seven : ui32
  %v = vyre.load @t[%i] : ui32
  vyre.store @out[%i] = %v : ui32
}
"""
    x = _x(32)
    # @t is first declared write_only: it takes no input (SPEC section 8)
    out = run(text, {"x": x}, backend="reference", fuse=True)
    np.testing.assert_array_equal(out["t"], np.full(32, 7, np.uint32))
    np.testing.assert_array_equal(out["out"], np.full(32, 7, np.uint32))
    fused = programs(fuse_module(parse_module(text)))[0]
    assert len(_ops(fused, LoadOp)) == 3  # x, and t in both later programs
    # without the last program, t = x + 2
    two = text[: text.index("vyre.program @after_store")]
    np.testing.assert_array_equal(
        run(two, {"x": x}, backend="reference", fuse=True)["t"], x + np.uint32(2)
    )


def test_a_forwarded_load_past_the_end_reads_zero():
    """t[i + 1] for the last invocation is out of bounds: 0, not the value the
    store (which was dropped) would have written."""
    text = """
vyre.program @put workgroup_size [16, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[32]
  vyre.buffer @t binding 1 write_only : ui32[32]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %v = vyre.load @x[%i] : ui32
  vyre.store @t[%j] = %v : ui32
}
vyre.program @get workgroup_size [16, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[32]
  vyre.buffer @out binding 1 write_only : ui32[32]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %v = vyre.load @t[%j] : ui32
  vyre.store @out[%i] = %v : ui32
}
"""
    fused = programs(fuse_module(parse_module(text)))[0]
    assert [op.buffer_name for op in _ops(fused, LoadOp)] == ["x"]
    x = _x(32) + np.uint32(1)
    out = run(text, {"x": x}, backend="reference", fuse=True)
    np.testing.assert_array_equal(out["out"], np.concatenate([x[:31], [0]]).astype(np.uint32))
