"""`vyre_xdsl.run()` caches compiled executables by (the module's canonical
digest, backend, fuse, adapter): hits, misses, eviction and clearing.
Expected outputs come from numpy."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import IntegerAttr

import vyre_xdsl
from vyre_xdsl import api
from vyre_xdsl.context import parse_module
from vyre_xdsl.dialects.vyre import ConstOp


def scale(k: int, names: str = "v") -> str:
    """out = x * k + 1 over 256 ui32, with SSA names built from `names`."""
    return f"""
vyre.program @scale workgroup_size [64, 1, 1] {{
  vyre.buffer @x binding 0 read_only : ui32[256]
  vyre.buffer @out binding 1 write_only : ui32[256]
  %{names}i = vyre.invocation_id x
  %{names}x = vyre.load @x[%{names}i] : ui32
  %{names}k = vyre.const {k} : ui32
  %{names}one = vyre.const 1 : ui32
  %{names}p = vyre.mul %{names}x, %{names}k : ui32
  %{names}r = vyre.add %{names}p, %{names}one : ui32
  vyre.store @out[%{names}i] = %{names}r : ui32
}}
"""


X = np.arange(256, dtype=np.uint32) * 1001


def expected(k: int) -> list[int]:
    return ((X.astype(np.uint64) * k + 1) & 0xFFFFFFFF).astype(np.uint32).tolist()


@pytest.fixture(autouse=True)
def empty_cache():
    vyre_xdsl.clear_cache()
    yield
    vyre_xdsl.clear_cache()


@pytest.mark.parametrize("backend", ["wgpu", "reference"])
def test_a_repeated_run_is_a_hit(backend):
    for _ in range(3):
        assert vyre_xdsl.run(scale(3), {"x": X}, backend=backend)["out"].tolist() == expected(3)
    info = vyre_xdsl.cache_info()
    assert (info.hits, info.misses, info.size) == (2, 1, 1)


def test_text_differing_only_in_names_and_spacing_shares_one_executable():
    vyre_xdsl.run(scale(5), {"x": X}, backend="wgpu")
    renamed = "// a comment\n" + scale(5, names="other_").replace("  ", "    ")
    assert vyre_xdsl.run(renamed, {"x": X}, backend="wgpu")["out"].tolist() == expected(5)
    assert vyre_xdsl.cache_info()[:3] == (1, 1, 1)


def test_backend_fuse_and_module_are_part_of_the_key():
    vyre_xdsl.run(scale(3), {"x": X}, backend="wgpu")
    vyre_xdsl.run(scale(3), {"x": X}, backend="reference")
    vyre_xdsl.run(scale(3), {"x": X}, backend="wgpu", fuse=True)
    assert vyre_xdsl.run(scale(4), {"x": X}, backend="wgpu")["out"].tolist() == expected(4)
    assert vyre_xdsl.cache_info()[:3] == (0, 4, 4)


def test_the_adapter_is_part_of_the_key_by_index():
    vyre_xdsl.run(scale(3), {"x": X}, backend="wgpu")
    vyre_xdsl.run(scale(3), {"x": X}, backend="wgpu", adapter=0)  # the default adapter is index 0
    assert vyre_xdsl.cache_info()[:2] == (1, 1)


def test_a_module_changed_after_its_run_is_a_miss_with_the_new_result():
    module = parse_module(scale(3))
    assert vyre_xdsl.run(module, {"x": X}, backend="wgpu")["out"].tolist() == expected(3)
    assert vyre_xdsl.run(module, {"x": X}, backend="wgpu")["out"].tolist() == expected(3)
    constant = next(
        op for op in module.walk() if isinstance(op, ConstOp) and op.value.value.data == 3
    )
    constant.value = IntegerAttr(7, constant.value.type)
    assert vyre_xdsl.run(module, {"x": X}, backend="wgpu")["out"].tolist() == expected(7)
    assert vyre_xdsl.cache_info()[:2] == (1, 2)
    # the first executable kept its own copy: the old module still gives the old result
    assert vyre_xdsl.run(scale(3), {"x": X}, backend="wgpu")["out"].tolist() == expected(3)
    assert vyre_xdsl.cache_info()[:2] == (2, 2)


def test_the_cache_is_bounded_and_drops_the_least_recently_used(monkeypatch):
    monkeypatch.setattr(api, "RUN_CACHE_SIZE", 2)
    for k in (2, 3, 4):
        vyre_xdsl.run(scale(k), {"x": X}, backend="reference")
    assert vyre_xdsl.cache_info()[1:] == (3, 2, 2)
    vyre_xdsl.run(scale(4), {"x": X}, backend="reference")  # still cached
    assert vyre_xdsl.cache_info().hits == 1
    assert vyre_xdsl.run(scale(2), {"x": X}, backend="reference")["out"].tolist() == expected(2)
    assert vyre_xdsl.cache_info()[:2] == (1, 4)  # 2 had been dropped


def test_clear_cache_empties_it():
    vyre_xdsl.run(scale(3), {"x": X}, backend="wgpu")
    vyre_xdsl.clear_cache()
    assert vyre_xdsl.cache_info()[:3] == (0, 0, 0)
    assert vyre_xdsl.run(scale(3), {"x": X}, backend="wgpu")["out"].tolist() == expected(3)
    assert vyre_xdsl.cache_info()[:3] == (0, 1, 1)


def test_bad_text_is_never_cached():
    bad = scale(3).replace("vyre.add", "vyre.nonsense")
    for _ in range(2):
        with pytest.raises(vyre_xdsl.api.VyreError):
            vyre_xdsl.run(bad, {"x": X}, backend="reference")
    assert vyre_xdsl.cache_info().size == 0
