"""Forwarding through a CUDA-style index guard (`if invocation_id x < N`).

A correlation-like chain (a column mean, then a centred sum of squares that
reads the mean, then a ratio of both), every program guarded by `j < M`
written in the forms the language has. Fused, the intermediate `@mean` is
forwarded (no declaration, no load) whether the guard always holds (the grid
is exactly M invocations) or holds for every in-bounds element (M is not a
multiple of the workgroup). Guards that do not cover every element, or whose
bound is not known, keep the buffer. Every result is compared with numpy
(computed here, independently), and fused with unfused, on the reference
backend and on wgpu.
"""

from __future__ import annotations

import numpy as np
import pytest

from vyre_xdsl import run
from vyre_xdsl.api import fuse_module
from vyre_xdsl.context import parse_module
from vyre_xdsl.dialects.vyre import LoadOp, programs

ROWS = 24
BACKENDS = ("reference", "wgpu")


def _guard(form: str, m: int, length_of: str) -> str:
    """Ops that end in `%ok`: a guard `j < m` written in the given form."""
    return {
        "lt": f"%bound = vyre.const {m} : ui32\n  %ok = vyre.lt %j, %bound : ui32",
        "gt": f"%bound = vyre.const {m} : ui32\n  %ok = vyre.gt %bound, %j : ui32",
        "le": f"%last = vyre.const {m - 1} : ui32\n  %ok = vyre.le %j, %last : ui32",
        "ge": f"%last = vyre.const {m - 1} : ui32\n  %ok = vyre.ge %last, %j : ui32",
        "signed": (
            f"%js = vyre.cast %j : ui32 to si32\n  %bound = vyre.const {m} : si32\n"
            "  %ok = vyre.lt %js, %bound : si32"
        ),
        "len": f"%len = vyre.buf_len @{length_of}\n  %ok = vyre.lt %j, %len : ui32",
        "and": (
            f"%bound = vyre.const {m} : ui32\n  %below = vyre.lt %j, %bound : ui32\n"
            "  %above = vyre.gt %bound, %j : ui32\n  %ok = vyre.and %below, %above : i1"
        ),
    }[form]


def _correlation(m: int, forms: tuple[str, str, str], wg: int = 64, mean_bound: int | None = None):
    """mean[j] = sum_i data[i, j] / ROWS; std[j] = sqrt(sum_i (data[i, j] - mean[j])^2 / ROWS)
    (an output); ratio[j] = mean[j] / std[j]. `mean_bound`: the bound of the mean's guard
    (default m)."""
    mean_guard = _guard(forms[0], mean_bound or m, "mean")
    cells = ROWS * m
    return f"""
vyre.program @mean workgroup_size [{wg}, 1, 1] {{
  vyre.buffer @data binding 0 read_only : f32[{cells}]
  vyre.buffer @mean binding 1 write_only : f32[{m}]
  %j = vyre.invocation_id x
  {mean_guard}
  vyre.if %ok {{
    %cols = vyre.const {m} : ui32
    %zero = vyre.const 0.0 : f32
    vyre.let @acc = %zero : f32
    %lo = vyre.const 0 : ui32
    %rows = vyre.const {ROWS} : ui32
    vyre.loop @i = %lo to %rows {{
      %i = vyre.var @i : ui32
      %row = vyre.mul %i, %cols : ui32
      %g = vyre.add %row, %j : ui32
      %d = vyre.load @data[%g] : f32
      %a = vyre.var @acc : f32
      %s = vyre.add %a, %d : f32
      vyre.assign @acc = %s : f32
    }}
    %t = vyre.var @acc : f32
    %n = vyre.const {float(ROWS)} : f32
    %mu = vyre.div %t, %n : f32
    vyre.store @mean[%j] = %mu : f32
  }}
}}
vyre.program @std workgroup_size [{wg}, 1, 1] {{
  vyre.buffer @data binding 0 read_only : f32[{cells}]
  vyre.buffer @mean binding 1 read_only : f32[{m}]
  vyre.buffer @std binding 2 write_only output : f32[{m}]
  %j = vyre.invocation_id x
  {_guard(forms[1], m, "std")}
  vyre.if %ok {{
    %mu = vyre.load @mean[%j] : f32
    %cols = vyre.const {m} : ui32
    %zero = vyre.const 0.0 : f32
    vyre.let @acc = %zero : f32
    %lo = vyre.const 0 : ui32
    %rows = vyre.const {ROWS} : ui32
    vyre.loop @i = %lo to %rows {{
      %i = vyre.var @i : ui32
      %row = vyre.mul %i, %cols : ui32
      %g = vyre.add %row, %j : ui32
      %d = vyre.load @data[%g] : f32
      %c = vyre.sub %d, %mu : f32
      %q = vyre.mul %c, %c : f32
      %a = vyre.var @acc : f32
      %s = vyre.add %a, %q : f32
      vyre.assign @acc = %s : f32
    }}
    %t = vyre.var @acc : f32
    %n = vyre.const {float(ROWS)} : f32
    %v = vyre.div %t, %n : f32
    %r = vyre.sqrt %v : f32
    vyre.store @std[%j] = %r : f32
  }}
}}
vyre.program @ratio workgroup_size [{wg}, 1, 1] {{
  vyre.buffer @mean binding 0 read_only : f32[{m}]
  vyre.buffer @std binding 1 read_only : f32[{m}]
  vyre.buffer @ratio binding 2 write_only : f32[{m}]
  %j = vyre.invocation_id x
  {_guard(forms[2], m, "ratio")}
  vyre.if %ok {{
    %mu = vyre.load @mean[%j] : f32
    %sd = vyre.load @std[%j] : f32
    %r = vyre.div %mu, %sd : f32
    vyre.store @ratio[%j] = %r : f32
  }}
}}
"""


def _data(m: int) -> np.ndarray:
    rng = np.random.default_rng(m)
    return (rng.standard_normal((ROWS, m)) * 2 + np.arange(m)).astype(np.float32)


def _expected(data: np.ndarray, mean: np.ndarray) -> dict[str, np.ndarray]:
    """std and ratio for the column means `mean` (numpy, in float64)."""
    d = data.astype(np.float64)
    std = np.sqrt(((d - mean) ** 2).sum(axis=0) / ROWS)
    return {"std": std, "ratio": mean / std}


def _fused(text: str):
    fused = programs(fuse_module(parse_module(text), force=True))
    assert len(fused) == 1
    return fused[0]


def _declared(program) -> set[str]:
    return {b.buffer_name for b in program.buffers()}


def _loaded(program) -> set[str]:
    return {op.buffer_name for op in program.walk() if isinstance(op, LoadOp)}


def _check_runs(text: str, inputs: dict, want: dict[str, np.ndarray]) -> None:
    """Every backend, unfused, fused by the cost model and fused by force, against
    numpy; the fused runs against the unfused one on the same backend."""
    for backend in BACKENDS:
        unfused = run(text, inputs, backend=backend)
        for fuse in (False, True, "force"):
            got = run(text, inputs, backend=backend, fuse=fuse)
            assert set(got) == set(want), (backend, fuse)
            for name, expected in want.items():
                key = f"{backend} fuse={fuse} @{name}"
                np.testing.assert_allclose(got[name], expected, rtol=2e-5, atol=1e-5, err_msg=key)
                np.testing.assert_allclose(
                    got[name], unfused[name], rtol=1e-6, atol=1e-6, err_msg=key
                )


# ---------------------------------------------------------------- forwarded


@pytest.mark.parametrize(
    ("m", "forms"),
    [
        (64, ("lt", "gt", "lt")),  # the grid is exactly M invocations: the guards always hold
        (128, ("len", "signed", "and")),
        (64, ("le", "ge", "len")),
        (28, ("lt", "gt", "lt")),  # M = 28 of 64 invocations: the guard holds where in bounds
        (100, ("signed", "len", "le")),
        (28, ("len", "and", "ge")),
    ],
)
def test_correlation_mean_is_forwarded_through_its_guard(m, forms):
    text = _correlation(m, forms)
    fused = _fused(text)
    assert "mean" not in _declared(fused)
    assert _loaded(fused) == {"data"}  # neither @mean nor @std is read back
    assert "std" in _declared(fused)  # an output keeps its store
    data = _data(m)
    mean = data.astype(np.float64).mean(axis=0)
    _check_runs(text, {"data": data}, _expected(data, mean))


def _center(m: int, wg: int = 64) -> str:
    """out[i, j] = (data[i, j] - mean[j]) / std[j], one invocation per column j
    (a guard `j < M`) over a grid of ROWS * M invocations (the count of @out)."""
    cells = ROWS * m
    return f"""
vyre.program @center workgroup_size [{wg}, 1, 1] {{
  vyre.buffer @data binding 0 read_only : f32[{cells}]
  vyre.buffer @mean binding 1 read_only : f32[{m}]
  vyre.buffer @std binding 2 read_only : f32[{m}]
  vyre.buffer @out binding 3 write_only : f32[{cells}]
  %j = vyre.invocation_id x
  %bound = vyre.const {m} : ui32
  %ok = vyre.lt %j, %bound : ui32
  vyre.if %ok {{
    %mu = vyre.load @mean[%j] : f32
    %sd = vyre.load @std[%j] : f32
    %cols = vyre.const {m} : ui32
    %lo = vyre.const 0 : ui32
    %rows = vyre.const {ROWS} : ui32
    vyre.loop @i = %lo to %rows {{
      %i = vyre.var @i : ui32
      %row = vyre.mul %i, %cols : ui32
      %g = vyre.add %row, %j : ui32
      %d = vyre.load @data[%g] : f32
      %c = vyre.sub %d, %mu : f32
      %r = vyre.div %c, %sd : f32
      vyre.store @out[%g] = %r : f32
    }}
  }}
}}
"""


@pytest.mark.parametrize("m", [64, 28])
def test_a_smaller_guarded_producer_forwards_to_a_larger_grid(m):
    """mean and std run over M invocations, the centring over ROWS * M: fused,
    the first two run under fusion's own guard, and their values still reach
    the centring without @mean or @std being read back."""
    text = _correlation(m, ("lt", "gt", "lt")).split("vyre.program @ratio")[0] + _center(m)
    fused = _fused(text)
    assert "mean" not in _declared(fused)
    assert _loaded(fused) == {"data"}
    data = _data(m)
    d = data.astype(np.float64)
    mean = d.mean(axis=0)
    std = _expected(data, mean)["std"]
    want = {"std": std, "out": ((d - mean) / std).reshape(-1)}
    _check_runs(text, {"data": data}, want)


def test_a_bound_between_the_count_and_the_grid_forwards_zero_past_the_end():
    """mean[28] stored under `j < 40` of 64 invocations; the next program reads
    mean[j] for every j: past 28 the load is out of bounds and gives 0."""
    text = """
vyre.program @half workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[28]
  vyre.buffer @t binding 1 write_only : f32[28]
  %j = vyre.invocation_id x
  %bound = vyre.const 40 : ui32
  %ok = vyre.lt %j, %bound : ui32
  vyre.if %ok {
    %v = vyre.load @x[%j] : f32
    %h = vyre.const 0.5 : f32
    %r = vyre.mul %v, %h : f32
    vyre.store @t[%j] = %r : f32
  }
}
vyre.program @plus workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : f32[28]
  vyre.buffer @y binding 1 write_only : f32[64]
  %j = vyre.invocation_id x
  %a = vyre.load @t[%j] : f32
  %one = vyre.const 1.0 : f32
  %s = vyre.add %a, %one : f32
  vyre.store @y[%j] = %s : f32
}
"""
    fused = _fused(text)
    assert "t" not in _declared(fused) and _loaded(fused) == {"x"}
    x = np.random.default_rng(1).standard_normal(28).astype(np.float32)
    want = np.ones(64, np.float32)
    want[:28] += x * np.float32(0.5)
    _check_runs(text, {"x": x}, {"y": want})


@pytest.mark.parametrize("m", [64, 28])
def test_an_else_branch_and_other_statements_in_the_guard_stay(m):
    """The guarded branch also stores @twice; the else branch stores @rest, which
    the consumer reads. With M = 64 the guard always holds (the else branch never
    runs); with M = 28 the else branch runs for j in [28, 64)."""
    text = f"""
vyre.program @prod workgroup_size [64, 1, 1] {{
  vyre.buffer @x binding 0 read_only : ui32[{m}]
  vyre.buffer @t binding 1 write_only : ui32[{m}]
  vyre.buffer @twice binding 2 write_only output : ui32[{m}]
  vyre.buffer @rest binding 3 write_only output : ui32[64]
  %j = vyre.invocation_id x
  %bound = vyre.const {m} : ui32
  %ok = vyre.lt %j, %bound : ui32
  vyre.if %ok {{
    %v = vyre.load @x[%j] : ui32
    %three = vyre.const 3 : ui32
    %r = vyre.mul %v, %three : ui32
    vyre.store @t[%j] = %r : ui32
    %two = vyre.const 2 : ui32
    %w = vyre.mul %r, %two : ui32
    vyre.store @twice[%j] = %w : ui32
  }} else {{
    %seven = vyre.const 7 : ui32
    %k = vyre.add %j, %seven : ui32
    vyre.store @rest[%j] = %k : ui32
  }}
}}
vyre.program @cons workgroup_size [64, 1, 1] {{
  vyre.buffer @t binding 0 read_only : ui32[{m}]
  vyre.buffer @rest binding 1 read_only : ui32[64]
  vyre.buffer @y binding 2 write_only : ui32[{m}]
  %j = vyre.invocation_id x
  %a = vyre.load @t[%j] : ui32
  %b = vyre.load @rest[%j] : ui32
  %one = vyre.const 1 : ui32
  %s = vyre.add %a, %one : ui32
  %sb = vyre.add %s, %b : ui32
  vyre.store @y[%j] = %sb : ui32
}}
"""
    fused = _fused(text)
    assert "t" not in _declared(fused) and _loaded(fused) == {"x", "rest"}
    x = np.random.default_rng(m).integers(0, 2**32, m, dtype=np.uint32)
    rest = np.zeros(64, np.uint32)
    rest[m:] = np.arange(m, 64, dtype=np.uint32) + np.uint32(7)
    t = x * np.uint32(3)
    want = {"twice": t * np.uint32(2), "rest": rest, "y": t + np.uint32(1) + rest[:m]}
    _check_runs(text, {"x": x}, want)


# ---------------------------------------------------------------- kept in memory


def test_a_guard_below_the_count_keeps_the_buffer():
    """mean[28] stored only for j < 20: std and ratio read mean[20..27] from
    memory (an intermediate starts zero-filled), so @mean must stay."""
    m = 28
    text = _correlation(m, ("lt", "lt", "lt"), mean_bound=20)
    fused = _fused(text)
    assert "mean" in _declared(fused) and "mean" in _loaded(fused)
    data = _data(m)
    mean = data.astype(np.float64).mean(axis=0)
    mean[20:] = 0
    _check_runs(text, {"data": data}, _expected(data, mean))


def test_a_guard_with_an_unknown_bound_keeps_the_buffer():
    """The bound is read from a buffer: nothing says it covers the elements."""
    text = """
vyre.program @prod workgroup_size [64, 1, 1] {
  vyre.buffer @n binding 0 uniform : ui32[1]
  vyre.buffer @x binding 1 read_only : ui32[64]
  vyre.buffer @t binding 2 write_only : ui32[64]
  %j = vyre.invocation_id x
  %zero = vyre.const 0 : ui32
  %bound = vyre.load @n[%zero] : ui32
  %ok = vyre.lt %j, %bound : ui32
  vyre.if %ok {
    %v = vyre.load @x[%j] : ui32
    %three = vyre.const 3 : ui32
    %r = vyre.mul %v, %three : ui32
    vyre.store @t[%j] = %r : ui32
  }
}
vyre.program @cons workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[64]
  vyre.buffer @y binding 1 write_only : ui32[64]
  %j = vyre.invocation_id x
  %a = vyre.load @t[%j] : ui32
  %one = vyre.const 1 : ui32
  %s = vyre.add %a, %one : ui32
  vyre.store @y[%j] = %s : ui32
}
"""
    fused = _fused(text)
    assert "t" in _declared(fused) and "t" in _loaded(fused)
    x = np.arange(64, dtype=np.uint32) * np.uint32(5)
    for bound in (64, 40):
        y = np.ones(64, np.uint32)
        y[:bound] += x[:bound] * np.uint32(3)
        _check_runs(text, {"n": np.array([bound], np.uint32), "x": x}, {"y": y})


def test_a_guard_on_a_negative_signed_bound_keeps_the_buffer():
    """`si32(j) < -1` never holds: @t stays zero and is read from memory."""
    text = """
vyre.program @prod workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[64]
  vyre.buffer @t binding 1 write_only : ui32[64]
  %j = vyre.invocation_id x
  %js = vyre.cast %j : ui32 to si32
  %bound = vyre.const -1 : si32
  %ok = vyre.lt %js, %bound : si32
  vyre.if %ok {
    %v = vyre.load @x[%j] : ui32
    vyre.store @t[%j] = %v : ui32
  }
}
vyre.program @cons workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[64]
  vyre.buffer @y binding 1 write_only : ui32[64]
  %j = vyre.invocation_id x
  %a = vyre.load @t[%j] : ui32
  %one = vyre.const 1 : ui32
  %s = vyre.add %a, %one : ui32
  vyre.store @y[%j] = %s : ui32
}
"""
    fused = _fused(text)
    assert "t" in _declared(fused) and "t" in _loaded(fused)
    x = np.arange(64, dtype=np.uint32) + np.uint32(9)
    _check_runs(text, {"x": x}, {"y": np.ones(64, np.uint32)})


@pytest.mark.parametrize("bound", [20, 60])
def test_a_guard_below_the_count_keeps_what_an_earlier_program_stored(bound):
    """@t is first filled with 100 + j, then overwritten only for j < bound (of
    64 elements): the consumer must see both, so @t stays in memory."""
    text = f"""
vyre.program @fill workgroup_size [64, 1, 1] {{
  vyre.buffer @t binding 0 write_only : ui32[64]
  %j = vyre.invocation_id x
  %hundred = vyre.const 100 : ui32
  %v = vyre.add %j, %hundred : ui32
  vyre.store @t[%j] = %v : ui32
}}
vyre.program @prod workgroup_size [64, 1, 1] {{
  vyre.buffer @x binding 0 read_only : ui32[64]
  vyre.buffer @t binding 1 write_only : ui32[64]
  %j = vyre.invocation_id x
  %bound = vyre.const {bound} : ui32
  %ok = vyre.lt %j, %bound : ui32
  vyre.if %ok {{
    %v = vyre.load @x[%j] : ui32
    %three = vyre.const 3 : ui32
    %r = vyre.mul %v, %three : ui32
    vyre.store @t[%j] = %r : ui32
  }}
}}
vyre.program @cons workgroup_size [64, 1, 1] {{
  vyre.buffer @t binding 0 read_only : ui32[64]
  vyre.buffer @y binding 1 write_only : ui32[64]
  %j = vyre.invocation_id x
  %a = vyre.load @t[%j] : ui32
  %one = vyre.const 1 : ui32
  %s = vyre.add %a, %one : ui32
  vyre.store @y[%j] = %s : ui32
}}
"""
    fused = _fused(text)
    assert "t" in _declared(fused) and "t" in _loaded(fused)
    x = np.arange(64, dtype=np.uint32) * np.uint32(11)
    t = np.arange(64, dtype=np.uint32) + np.uint32(100)
    t[:bound] = x[:bound] * np.uint32(3)
    _check_runs(text, {"x": x}, {"y": t + np.uint32(1)})


# ---------------------------------------------------------------- the analysis


@pytest.mark.parametrize(
    ("ops", "want"),
    [
        ("%n = vyre.const 28 : ui32\n  %ok = vyre.lt %j, %n : ui32", ["28"]),
        ("%n = vyre.const 28 : ui32\n  %ok = vyre.gt %n, %j : ui32", ["28"]),
        ("%n = vyre.const 27 : ui32\n  %ok = vyre.le %j, %n : ui32", ["28"]),
        ("%n = vyre.const 27 : ui32\n  %ok = vyre.ge %n, %j : ui32", ["28"]),
        ("%n = vyre.buf_len @t\n  %ok = vyre.lt %j, %n : ui32", ["len(@t)"]),
        (
            "%s = vyre.cast %j : ui32 to si32\n  %n = vyre.const 28 : si32\n"
            "  %ok = vyre.lt %s, %n : si32",
            ["28"],
        ),
        (
            "%s = vyre.cast %j : ui32 to ui64\n  %n = vyre.const 5000000000 : ui64\n"
            "  %ok = vyre.lt %s, %n : ui64",
            ["5000000000"],
        ),
        (
            "%n = vyre.const 28 : ui32\n  %a = vyre.lt %j, %n : ui32\n"
            "  %m = vyre.buf_len @t\n  %b = vyre.gt %m, %j : ui32\n  %ok = vyre.and %a, %b : i1",
            ["28", "len(@t)"],
        ),
        (
            "%s = vyre.cast %j : ui32 to si8\n  %n = vyre.const 127 : si8\n"
            "  %ok = vyre.le %s, %n : si8",
            ["128"],  # si8(j) = j for every j < 128
        ),
        # not index guards: the wrong direction, a loaded bound, a negative
        # signed bound, `<=` a length, another index, `or`, a float compare
        ("%n = vyre.const 28 : ui32\n  %ok = vyre.gt %j, %n : ui32", None),
        (
            "%z = vyre.const 0 : ui32\n  %n = vyre.load @t[%z] : ui32\n  %ok = vyre.lt %j, %n : ui32",
            None,
        ),
        (
            "%s = vyre.cast %j : ui32 to si32\n  %n = vyre.const -1 : si32\n"
            "  %ok = vyre.lt %s, %n : si32",
            None,
        ),
        (
            "%s = vyre.cast %j : ui32 to f32\n  %n = vyre.const 28.0 : f32\n"
            "  %ok = vyre.lt %s, %n : f32",
            None,
        ),
        ("%n = vyre.buf_len @t\n  %ok = vyre.le %j, %n : ui32", None),
        ("%l = vyre.local_id x\n  %n = vyre.const 28 : ui32\n  %ok = vyre.lt %l, %n : ui32", None),
        (
            "%n = vyre.const 28 : ui32\n  %a = vyre.lt %j, %n : ui32\n"
            "  %b = vyre.gt %n, %j : ui32\n  %ok = vyre.or %a, %b : i1",
            None,
        ),
    ],
)
def test_index_bounds_recognizes_the_guard_forms(ops, want):
    from vyre_xdsl.analysis import index_bounds, index_guards
    from vyre_xdsl.dialects.vyre import IfOp, StoreOp

    text = f"""
vyre.program @p workgroup_size [64, 1, 1] {{
  vyre.buffer @t binding 0 read_write : ui32[64]
  %j = vyre.invocation_id x
  {ops}
  vyre.if %ok {{
    vyre.store @t[%j] = %j : ui32
  }} else {{
    vyre.store @t[%j] = %j : ui32
  }}
}}
"""
    (program,) = programs(parse_module(text))
    if_op = next(op for op in program.walk() if isinstance(op, IfOp))
    found = index_bounds(if_op.cond)
    assert (None if found is None else [str(b) for b in found]) == want
    then_store, else_store = [op for op in program.walk() if isinstance(op, StoreOp)]
    assert index_guards(then_store, program) == found
    assert index_guards(else_store, program) is None  # the else branch runs where it fails


@pytest.mark.parametrize(("n_t", "n_y"), [(100, 100), (100, 150), (150, 100)])
def test_a_runtime_sized_buffer_guarded_by_its_own_length_is_forwarded(n_t, n_y):
    """`if j < buf_len(@t)` around `t[j] = 3 x[j]`, read back as t[j] by a program
    whose count is @y's: forwarded (no load of @t) whatever the lengths; past
    the end of @t the load gave 0."""
    text = """
vyre.program @prod workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[?]
  vyre.buffer @t binding 1 read_write : ui32[?]
  %j = vyre.invocation_id x
  %n = vyre.buf_len @t
  %ok = vyre.lt %j, %n : ui32
  vyre.if %ok {
    %v = vyre.load @x[%j] : ui32
    %three = vyre.const 3 : ui32
    %r = vyre.mul %v, %three : ui32
    vyre.store @t[%j] = %r : ui32
  }
}
vyre.program @cons workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[?]
  vyre.buffer @y binding 1 read_write : ui32[?]
  %j = vyre.invocation_id x
  %a = vyre.load @t[%j] : ui32
  %one = vyre.const 1 : ui32
  %s = vyre.add %a, %one : ui32
  vyre.store @y[%j] = %s : ui32
}
"""
    fused = _fused(text)
    assert _loaded(fused) == {"x"}
    x = np.arange(n_t, dtype=np.uint32) * np.uint32(7)
    t = x * np.uint32(3)
    y = np.ones(n_y, np.uint32)
    k = min(n_t, n_y)
    y[:k] += t[:k]
    inputs = {"x": x, "t": np.zeros(n_t, np.uint32), "y": np.zeros(n_y, np.uint32)}
    _check_runs(text, inputs, {"t": t, "y": y})
