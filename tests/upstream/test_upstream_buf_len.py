"""Upstream `vyre-driver-wgpu/tests/buf_len_array_length/`, the u32 cases.

- `basic_len_contracts.rs`: `buf_len` of a runtime-sized read-only buffer that
  the program never loads is its element count (1, 3 and 8 for 4, 12 and 32
  bytes).
- `region_loop_contracts.rs`: the same through three nested `vyre.region`s,
  and a loop bounded by `buf_len` that counts its iterations; each also
  "through the optimizer" (upstream's `optimizer::optimize`), here xDSL's
  `canonicalize`, `cse`, `dce` and vyre_xdsl's own optimizing passes.
- `fnv_loop_contracts.rs`: fnv1a64's shape (three regions, a guard on
  invocation 0, a loop bounded by `buf_len` whose body loads the input and
  assigns an outer local, a store after the loop), through the optimizer.

The U8 cases are in test_upstream_buf_len_u8.py.
"""

from __future__ import annotations

import pytest
from upstream_support import backends, run, u32
from xdsl.passes import PassPipeline
from xdsl.transforms import get_all_passes as xdsl_passes

from vyre_xdsl.api import parse
from vyre_xdsl.context import vyre_context
from vyre_xdsl.diagnostics import verify_module
from vyre_xdsl.passes import get_all_passes

#: upstream's registered optimizer, as xDSL's and vyre_xdsl's passes
OPTIMIZER = "canonicalize,cse,dce,vyre-licm,vyre-unroll,vyre-strength-reduce,canonicalize,dce"

WRITER = """vyre.program @len workgroup_size [1, 1, 1] {
  vyre.buffer @input binding 0 read_only : ui32[?]
  vyre.buffer @out binding 1 write_only : ui32[1]
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %first = vyre.eq %i, %z : ui32
  vyre.if %first {
    %n = vyre.buf_len @input
    vyre.store @out[%z] = %n : ui32
  }
}
"""


@backends
@pytest.mark.parametrize(
    "words,expected",
    [([0xAB], 1), ([1, 2, 3], 3), (list(range(0, 32, 4)), 8)],
    ids=["four-bytes", "twelve-bytes", "thirty-two-bytes"],
)
def test_buf_len_of_a_never_loaded_runtime_sized_input(backend, words, expected):
    assert run(WRITER, {"input": u32(words)}, backend=backend)["out"].tolist() == [expected]


def optimized(text: str) -> str:
    """`text` after the OPTIMIZER pipeline, verified, as text."""
    module = parse(text)
    passes = {**xdsl_passes(), **get_all_passes()}
    PassPipeline.parse_spec(passes, OPTIMIZER).apply(vyre_context(), module)
    verify_module(module)
    return str(module)


ONE_ELEMENT, THREE_ELEMENTS = [0x99], [1, 2, 3]

DEEP_REGIONS = """vyre.program @len workgroup_size [1, 1, 1] {
  vyre.buffer @input binding 0 read_only : ui32[?]
  vyre.buffer @out binding 1 write_only : ui32[1]
  vyre.region "vyre-libs::test::buf_len_outer" {
    vyre.region "vyre-primitives::test::buf_len_mid" {
      vyre.region "vyre-primitives::test::buf_len_inner" {
        %i = vyre.invocation_id x
        %z = vyre.const 0 : ui32
        %first = vyre.eq %i, %z : ui32
        vyre.if %first {
          %n = vyre.buf_len @input
          vyre.store @out[%z] = %n : ui32
        }
      }
    }
  }
}
"""

LOOP_COUNTING = """vyre.program @count workgroup_size [1, 1, 1] {
  vyre.buffer @input binding 0 read_only : ui32[?]
  vyre.buffer @out binding 1 write_only : ui32[1]
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %first = vyre.eq %i, %z : ui32
  vyre.if %first {
    vyre.let @seen = %z : ui32
    %n = vyre.buf_len @input
    vyre.loop @k = %z to %n {
      %s = vyre.var @seen : ui32
      %one = vyre.const 1 : ui32
      %t = vyre.add %s, %one : ui32
      vyre.assign @seen = %t : ui32
    }
    %r = vyre.var @seen : ui32
    vyre.store @out[%z] = %r : ui32
  }
}
"""

FNV_SHAPED = """vyre.program @fnv workgroup_size [1, 1, 1] {
  vyre.buffer @input binding 0 read_only : ui32[?]
  vyre.buffer @out binding 1 write_only : ui32[1]
  vyre.region "vyre-libs::test::fnv_shape_outer" {
    vyre.region "vyre-primitives::test::fnv_shape_mid" {
      vyre.region "vyre-primitives::test::fnv_shape_inner" {
        %g = vyre.invocation_id x
        %z = vyre.const 0 : ui32
        %first = vyre.eq %g, %z : ui32
        vyre.if %first {
          vyre.let @n = %z : ui32
          %len = vyre.buf_len @input
          vyre.loop @i = %z to %len {
            %i = vyre.var @i : ui32
            %v = vyre.load @input[%i] : ui32
            %mask = vyre.const 255 : ui32
            %byte = vyre.bit_and %v, %mask : ui32
            %n = vyre.var @n : ui32
            %one = vyre.const 1 : ui32
            %next = vyre.add %n, %one : ui32
            vyre.assign @n = %next : ui32
            vyre.let @_swallow = %byte : ui32
          }
          %r = vyre.var @n : ui32
          vyre.store @out[%z] = %r : ui32
        }
      }
    }
  }
}
"""


@backends
@pytest.mark.parametrize("through_optimizer", [False, True], ids=["direct", "optimized"])
@pytest.mark.parametrize(
    "words,expected", [(ONE_ELEMENT, 1), (THREE_ELEMENTS, 3)], ids=["one", "three"]
)
def test_buf_len_through_three_region_wraps(backend, through_optimizer, words, expected):
    text = optimized(DEEP_REGIONS) if through_optimizer else DEEP_REGIONS
    assert run(text, {"input": u32(words)}, backend=backend)["out"].tolist() == [expected]


@backends
def test_buf_len_loop_bound_survives_optimizer(backend):
    out = run(optimized(LOOP_COUNTING), {"input": u32(THREE_ELEMENTS)}, backend=backend)
    assert out["out"].tolist() == [3]


@backends
@pytest.mark.parametrize(
    "words,expected", [([0xAB], 1), ([1, 2, 3], 3)], ids=["one-word", "three-words"]
)
def test_fnv1a64_shaped_loop_runs_once_per_element(backend, words, expected):
    out = run(optimized(FNV_SHAPED), {"input": u32(words)}, backend=backend)
    assert out["out"].tolist() == [expected]


def test_the_optimizer_keeps_buf_len_and_the_loop():
    """Upstream's worry: an optimizer pass folding `buf_len` to a constant."""
    for text in (DEEP_REGIONS, LOOP_COUNTING, FNV_SHAPED):
        assert "vyre.buf_len @input" in optimized(text)
    assert "vyre.loop" in optimized(FNV_SHAPED)
