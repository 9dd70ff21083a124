"""The front end (`vyre_xdsl.frontend`): what a compile does to its input before
a backend sees it, once per compile. The expected values come from numpy, from
BLAKE3 of the text as given and from the text's own line numbers."""

from __future__ import annotations

import ast
import collections
import inspect

import blake3
import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

import vyre_xdsl
from vyre_xdsl import api, frontend
from vyre_xdsl.diagnostics import VyreDiagnostic
from vyre_xdsl.dialects.vyre import programs
from vyre_xdsl.passes.vyre_fuse import VyreFusePass
from vyre_xdsl.runtime import disk_cache

from ..support import EXAMPLES

BAD_STORE = """\
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[4]
  %i = vyre.invocation_id x
  %v = vyre.const 1.0 : f32
  vyre.store @x[%i] = %v : f32
}
"""


@pytest.fixture
def counted(monkeypatch):
    """How often each module object is verified, and how often `vyre-fuse` runs."""
    seen = {"verify": collections.Counter(), "fuse": 0}
    verify, apply = ModuleOp.verify, VyreFusePass.apply

    def counted_verify(self, *args, **kwargs):
        seen["verify"][id(self)] += 1
        return verify(self, *args, **kwargs)

    def counted_apply(self, ctx, op):
        seen["fuse"] += 1
        return apply(self, ctx, op)

    monkeypatch.setattr(ModuleOp, "verify", counted_verify)
    monkeypatch.setattr(VyreFusePass, "apply", counted_apply)
    return seen


def test_text_is_keyed_as_given_and_not_parsed_until_prepared():
    bad = "this is not IR"
    source = frontend.accept(bad)  # no parse: a cache hit would need none
    assert source.module is None
    key = disk_cache.source_key(source.text, source.digest)
    assert key == "text:" + blake3.blake3(bad.encode()).hexdigest()
    with pytest.raises(VyreDiagnostic):
        frontend.prepare(source)


def test_prepare_verifies_each_module_once_and_fuses_once(counted):
    text = (EXAMPLES / "chain3.mlir").read_text()
    prepared = frontend.prepare(frontend.accept(text), fuse="force")
    assert counted["fuse"] == 1
    assert set(counted["verify"]) == {id(prepared.source), id(prepared.module)}
    assert max(counted["verify"].values()) == 1
    assert len(programs(prepared.source)) == 3 and len(programs(prepared.module)) == 1
    assert prepared.signature == vyre_xdsl.abi.signature(prepared.source)


def tree_texts(n: int) -> dict[str, str]:
    """A min tree over @x (256 wide, a program per level), and the same tree beside
    an elementwise program it does not read (`w = x * x`) and behind one (`y = x * x`,
    the tree over @y)."""
    from ..passes.test_coarsen_reductions import tree
    from ..passes.test_pipeline_pass import SQUARE

    square = SQUARE.format(e="ui32", n=n)
    return {
        "beside": square.replace("@square", "@beside").replace("@y", "@w") + tree(n, "min", "ui32"),
        "behind": square + tree(n, "min", "ui32").replace("@x", "@y"),
    }


def test_prepare_coarsens_the_levels_fed_by_inputs_before_it_fuses():
    n = 1 << 20  # 4096 workgroups of 256; coarsened: k = 4, 1024 workgroups
    texts = tree_texts(n)
    prepared = frontend.prepare(frontend.accept(texts["beside"]), fuse=True)
    grids = {p.sym_name.data: p.explicit_grid for p in programs(prepared.module)}
    # the first level reads only @x: coarsened before vyre-fuse, which keeps it apart
    assert list(grids) == ["beside", "level0", "level1", "level2"]
    assert list(grids["level0"]) == [1024, 1, 1]
    assert all(p.explicit_grid is None for p in programs(prepared.source))  # a copy
    # fed by @square: fused into it first (the backend coarsens the fused level)
    behind = frontend.prepare(frontend.accept(texts["behind"]), fuse=True).module
    assert [p.sym_name.data for p in programs(behind)][0] == "fused_square_level0"
    assert all(p.explicit_grid is None for p in programs(behind))
    # forced fusion: every program into one, nothing coarsened first
    forced = frontend.prepare(frontend.accept(texts["beside"]), fuse="force").module
    assert all(p.explicit_grid is None for p in programs(forced))
    assert len(programs(forced)) < len(programs(prepared.source))
    # the same x: both outputs as numpy computes them
    x = np.random.default_rng(1).integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    out = vyre_xdsl.run(texts["beside"], {"x": x}, backend="reference", fuse=True)
    assert out["out"][0] == x.min()
    np.testing.assert_array_equal(out["w"], x * x)


def test_a_module_accepted_unchecked_is_checked_and_copied_once_when_prepared(counted):
    module = vyre_xdsl.parse((EXAMPLES / "axpy.mlir").read_text())
    counted["verify"].clear()
    source = frontend.accept(module, check=False, copy=True)
    assert not counted["verify"]  # a run-cache hit costs only the digest
    prepared = frontend.prepare(source)
    assert prepared.source is not module  # the caller may change its module after the run
    assert counted["verify"] == {id(module): 1}
    assert prepared.printed == source.printed  # the digest's print is reused


def test_bad_text_is_a_located_diagnostic():
    store_line = 1 + BAD_STORE.splitlines().index("  vyre.store @x[%i] = %v : f32")
    source = frontend.accept(BAD_STORE)
    with pytest.raises(VyreDiagnostic) as error:
        frontend.prepare(source)
    assert str(error.value).startswith(f"<input>:{store_line}:3: ")
    with pytest.raises(VyreDiagnostic) as error:
        frontend.prepare(frontend.accept("vyre.program @p {"))
    assert str(error.value).startswith("<input>:1:")


def test_not_ir_is_a_module_type_error():
    with pytest.raises(frontend.ModuleTypeError, match="not int"):
        frontend.accept(3)
    assert api.ModuleTypeError is frontend.ModuleTypeError


def stencil_expected(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """examples/stencil_scf.mlir in numpy (f32, in its order of operations)."""
    third = np.float32(0.333333343)
    y = np.zeros_like(x)
    y[1:-1] = ((x[:-2] + x[1:-1]) + x[2:]) * third
    return y, y * y


@pytest.mark.parametrize("size", [(32, 1, 1), (128, 1, 1)])
def test_workgroup_override_of_standard_mlir_text(size):
    text = (EXAMPLES / "stencil_scf.mlir").read_text()
    source = frontend.accept(text, workgroup_size=size)
    assert source.text is None and source.digest is not None
    assert [p.workgroup for p in programs(source.module)] == [size, size]
    prepared = frontend.prepare(source)
    assert set(prepared.shapes) == {"x", "y", "z"}  # converted: memref shapes recorded
    x = np.linspace(-2, 2, 1000, dtype=np.float32)
    zeros = np.zeros_like(x)
    exe = vyre_xdsl.compile(text, backend="reference", workgroup_size=size)
    out = exe.run({"x": x, "y": zeros, "z": zeros})
    y, z = stencil_expected(x)
    np.testing.assert_allclose(out["y"], y, rtol=1e-6)
    np.testing.assert_allclose(out["z"], z, rtol=1e-6)


def test_an_invalid_workgroup_override_is_a_value_error():
    with pytest.raises(ValueError, match="workgroup_size axis x is 512"):
        frontend.accept((EXAMPLES / "axpy.mlir").read_text(), workgroup_size=(512, 1, 1))


def _definition(tree: ast.Module, qualname: str) -> ast.FunctionDef:
    """The function `qualname` (`f` or `Class.f`) defined at the top of `tree`."""
    *outer, name = qualname.split(".")
    body = tree.body
    if outer:
        body = next(c for c in body if isinstance(c, ast.ClassDef) and c.name == outer[0]).body
    return next(f for f in body if isinstance(f, ast.FunctionDef) and f.name == name)


@pytest.mark.parametrize(
    "qualname", ["compile", "cached_executable", "_cached", "run", "Executable.__init__"]
)
def test_the_api_leaves_checking_converting_and_fusing_to_the_front_end(qualname):
    tree = ast.parse(inspect.getsource(api))
    called = {
        call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", "")
        for call in ast.walk(_definition(tree, qualname))
        if isinstance(call, ast.Call)
    }
    forbidden = {
        "verify_module",
        "verify_after_pass",
        "check_runnable",
        "check_module",
        "convert_if_standard",
        "convert_module",
        "fuse_module",
        "fused_copy",
        "parse",
        "parse_module",
        "signature",
    }
    assert "accept" in called or "prepare" in called or "Executable" in called, called
    assert not called & forbidden, called & forbidden


def test_the_front_end_imports_only_what_stands_below_the_runtime():
    tree = ast.parse(inspect.getsource(frontend))
    imported = {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    } | {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    ours = {name for name in imported if name.startswith("vyre_xdsl")}
    assert "vyre_xdsl.passes.vyre_fuse" in ours  # the walk sees the lazy imports too
    above = ("vyre_xdsl.runtime", "vyre_xdsl.api", "vyre_xdsl.tools", "vyre_xdsl.megakernel")
    assert not {name for name in ours if name.startswith(above)}, ours
