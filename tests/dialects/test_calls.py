"""Functions and calls (`vyre.func`, `vyre.call`, `vyre.yield`, the `vyre-inline`
pass): runs on both backends, fused and unfused, against plain numpy; exact
effects of a call; the megakernel compile path."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.traits import get_effects
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

import vyre_xdsl
from vyre_xdsl.context import vyre_context
from vyre_xdsl.dialects.vyre import TRAP_EFFECT, CallOp, FuncOp
from vyre_xdsl.interpreter import VyreTrap
from vyre_xdsl.megakernel.compile import compile_module
from vyre_xdsl.megakernel.run import run_bundle
from vyre_xdsl.passes.vyre_inline import VyreInlinePass

N = 200

# Two programs sharing @tmp. Both the first program and @sum_below declare a
# named local @acc (inlining must rename it); @poly calls @sq (nested calls);
# @clamp01 uses an if and assign on a local; @sum_below a loop.
MODULE = f"""
vyre.func @lerp(%a: f32, %b: f32, %t: f32) -> f32 {{
  %d = vyre.sub %b, %a : f32
  %m = vyre.mul %d, %t : f32
  %r = vyre.add %a, %m : f32
  vyre.yield %r : f32
}}
vyre.func @sq(%x: ui32) -> ui32 {{
  %r = vyre.mul %x, %x : ui32
  vyre.yield %r : ui32
}}
vyre.func @poly(%x: ui32) -> ui32 {{
  %s = vyre.call @sq(%x) : ui32
  %three = vyre.const 3 : ui32
  %t = vyre.mul %three, %x : ui32
  %r = vyre.add %s, %t : ui32
  vyre.yield %r : ui32
}}
vyre.func @sum_below(%n: ui32) -> ui32 {{
  %zero = vyre.const 0 : ui32
  vyre.let @acc = %zero : ui32
  vyre.loop @k = %zero to %n {{
    %a = vyre.var @acc : ui32
    %k = vyre.var @k : ui32
    %s = vyre.add %a, %k : ui32
    vyre.assign @acc = %s : ui32
  }}
  %r = vyre.var @acc : ui32
  vyre.yield %r : ui32
}}
vyre.func @clamp01(%x: f32) -> f32 {{
  vyre.let @v = %x : f32
  %zero = vyre.const 0.0 : f32
  %one = vyre.const 1.0 : f32
  %lo = vyre.lt %x, %zero : f32
  vyre.if %lo {{
    vyre.assign @v = %zero : f32
  }}
  %hi = vyre.gt %x, %one : f32
  vyre.if %hi {{
    vyre.assign @v = %one : f32
  }}
  %r = vyre.var @v : f32
  vyre.yield %r : f32
}}
vyre.program @stage1 workgroup_size [64, 1, 1] {{
  vyre.buffer @x binding 0 read_only : f32[{N}]
  vyre.buffer @y binding 1 read_only : ui32[{N}]
  vyre.buffer @tmp binding 2 write_only : f32[{N}]
  vyre.buffer @u binding 3 write_only : ui32[{N}]
  %i = vyre.invocation_id x
  %xv = vyre.load @x[%i] : f32
  %yv = vyre.load @y[%i] : ui32
  %three = vyre.const 3.0 : f32
  %quarter = vyre.const 0.25 : f32
  %l = vyre.call @lerp(%xv, %three, %quarter) : f32
  vyre.store @tmp[%i] = %l : f32
  %seven = vyre.const 7 : ui32
  %n = vyre.bit_and %yv, %seven : ui32
  vyre.let @acc = %n : ui32
  %s1 = vyre.call @sum_below(%n) : ui32
  %s2 = vyre.call @sum_below(%s1) : ui32
  %p = vyre.call @poly(%yv) : ui32
  %acc = vyre.var @acc : ui32
  %t = vyre.add %s2, %p : ui32
  %t2 = vyre.add %t, %acc : ui32
  vyre.store @u[%i] = %t2 : ui32
}}
vyre.program @stage2 workgroup_size [64, 1, 1] {{
  vyre.buffer @tmp binding 0 read_only : f32[{N}]
  vyre.buffer @out binding 1 write_only : f32[{N}]
  %i = vyre.invocation_id x
  %v = vyre.load @tmp[%i] : f32
  %c = vyre.call @clamp01(%v) : f32
  vyre.store @out[%i] = %c : f32
}}
"""


def expected(x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """The module's outputs in plain numpy."""
    tmp = (x + (np.float32(3.0) - x) * np.float32(0.25)).astype(np.float32)
    n = (y & 7).astype(np.uint64)
    s1 = n * (n - 1) // 2 * (n > 0)
    s2 = s1 * (s1 - 1) // 2 * (s1 > 0)
    yy = y.astype(np.uint64)
    poly = (yy * yy + 3 * yy) % 2**32
    u = ((s2 + poly + n) % 2**32).astype(np.uint32)
    return {"u": u, "out": np.clip(tmp, 0.0, 1.0).astype(np.float32)}


@pytest.fixture(scope="module")
def inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    return {
        "x": rng.uniform(-4.0, 4.0, N).astype(np.float32),
        "y": rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32),
    }


@pytest.mark.parametrize("fuse", [False, True], ids=["unfused", "fused"])
@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_calls_run_on_both_backends(backend, fuse, inputs):
    got = vyre_xdsl.run(MODULE, inputs, backend=backend, fuse=fuse)
    want = expected(inputs["x"], inputs["y"])
    np.testing.assert_array_equal(got["u"], want["u"])
    # f32: a GPU compiler may contract the lerp's mul+add (SPEC 3.4)
    np.testing.assert_allclose(got["out"], want["out"], rtol=0, atol=4e-7)


def test_calls_through_the_megakernel_compiler(inputs):
    module = vyre_xdsl.parse(MODULE)
    bundle = compile_module(module).bundle_bytes()
    got = run_bundle(bundle, inputs)
    want = expected(inputs["x"], inputs["y"])
    np.testing.assert_array_equal(got["u"], want["u"])
    np.testing.assert_allclose(got["out"], want["out"], rtol=0, atol=4e-7)
    assert any(isinstance(op, FuncOp) for op in module.ops), "the input module must not change"


def test_inline_leaves_no_calls_or_functions_and_keeps_names_distinct():
    module = vyre_xdsl.parse(MODULE)
    VyreInlinePass().apply(vyre_context(), module)
    module.verify()
    ops = list(module.walk())
    assert not any(isinstance(op, CallOp | FuncOp) for op in ops)
    lets = [op.var_name.data for op in ops if op.name == "vyre.let"]
    assert "acc" in lets and len(lets) == len(set(lets)), lets


TRAPPING = """
vyre.func @quot(%a: si32, %b: si32) -> si32 {
  %q = vyre.div %a, %b : si32
  vyre.yield %q : si32
}
vyre.func @pure(%a: si32) -> si32 {
  %r = vyre.add %a, %a : si32
  vyre.yield %r : si32
}
vyre.program @p workgroup_size [4, 1, 1] {
  vyre.buffer @a binding 0 read_only : si32[4]
  vyre.buffer @b binding 1 read_only : si32[4]
  vyre.buffer @o binding 2 write_only : si32[4]
  %i = vyre.invocation_id x
  %av = vyre.load @a[%i] : si32
  %bv = vyre.load @b[%i] : si32
  %unused_pure = vyre.call @pure(%av) : si32
  %unused_trap = vyre.call @quot(%av, %bv) : si32
  vyre.store @o[%i] = %av : si32
}
"""


def test_call_effects_are_the_callees():
    module = vyre_xdsl.parse(TRAPPING)
    calls = {op.callee_name: op for op in module.walk() if isinstance(op, CallOp)}
    assert get_effects(calls["pure"]) == frozenset()
    assert get_effects(calls["quot"]) == frozenset({TRAP_EFFECT})
    DeadCodeElimination().apply(vyre_context(), module)
    left = {op.callee_name for op in module.walk() if isinstance(op, CallOp)}
    assert left == {"quot"}  # an unused pure call is dead; a call that may trap is not


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_a_trap_inside_a_function_is_raised(backend):
    a = np.array([8, 9, 10, 11], dtype=np.int32)
    ok = vyre_xdsl.run(
        TRAPPING, {"a": a, "b": np.array([1, 2, 3, 4], dtype=np.int32)}, backend=backend
    )
    np.testing.assert_array_equal(ok["o"], a)
    with pytest.raises(VyreTrap):
        vyre_xdsl.run(
            TRAPPING, {"a": a, "b": np.array([1, 0, 3, 4], dtype=np.int32)}, backend=backend
        )
