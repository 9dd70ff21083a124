"""Clear elision: `kernel-elide-clears` marks the bindings a kernel writes in
full, and the wgpu runtime leaves only those unzeroed. A program that may skip
an element keeps its clear, so a pooled buffer dirtied by an earlier run never
shows through. Expected values come from numpy and the reference interpreter."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

import vyre_xdsl
from vyre_xdsl.analysis import covered_bindings, writes_every_element
from vyre_xdsl.context import parse_module
from vyre_xdsl.diagnostics import VyreDiagnostic
from vyre_xdsl.dialects import kernel as k
from vyre_xdsl.passes.vyre_lower import lower_module
from vyre_xdsl.target_profile import TargetProfile

execute = importlib.import_module("vyre_xdsl.runtime.execute")  # the module, not the function

N = 1000  # not a multiple of the workgroup: the last workgroup has idle invocations


def program(body: str, n: int = N, name: str = "p") -> str:
    """out (f32[n], write only) from x (f32[n]); `body` sees %i, %x (x[i]) and %n."""
    return f"""
vyre.program @{name} workgroup_size [64, 1, 1] {{
  vyre.buffer @x binding 0 read_only : f32[{n}]
  vyre.buffer @out binding 1 write_only : f32[{n}]
  %i = vyre.invocation_id x
  %x = vyre.load @x[%i] : f32
  %n = vyre.const {n} : ui32
{body}
}}
"""


FULL = program("""  %two = vyre.const 2.0 : f32
  %y = vyre.mul %x, %two : f32
  vyre.store @out[%i] = %y : f32""")
GUARDED_FULL = program("""  %c = vyre.lt %i, %n : ui32
  vyre.if %c {
    vyre.store @out[%i] = %x : f32
  }""")
EVEN = program("""  %two = vyre.const 2 : ui32
  %j = vyre.mul %i, %two : ui32
  vyre.store @out[%j] = %x : f32""")
SHIFTED = program("""  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  vyre.store @out[%j] = %x : f32""")
HALF = program(f"""  %h = vyre.const {N // 2} : ui32
  %c = vyre.lt %i, %h : ui32
  vyre.if %c {{
    vyre.store @out[%i] = %x : f32
  }}""")
RETURN_FIRST = program("""  %three = vyre.const 3 : ui32
  %c = vyre.eq %i, %three : ui32
  vyre.if %c {
    vyre.return
  }
  vyre.store @out[%i] = %x : f32""")
LOOP = program("""  %lo = vyre.const 0 : ui32
  %hi = vyre.const 1 : ui32
  %odd = vyre.bit_and %i, %hi : ui32
  vyre.loop @k = %lo to %odd {
    vyre.store @out[%i] = %x : f32
  }""")
BRANCHES = program("""  %zero = vyre.const 0.0 : f32
  %p = vyre.gt %x, %zero : f32
  vyre.if %p {
    vyre.store @out[%i] = %x : f32
  } else {
    vyre.store @out[%i] = %zero : f32
  }""")
# each workgroup of 64 writes a tile of 128: out[g * 128 + l] and out[g * 128 + l + 64]
# (16 workgroups: 2048 >= N); the gapped form's tiles are 130 long, so the same
# stores miss elements 128 and 129 of every tile
TILE = """  %g = vyre.workgroup_id x
  %l = vyre.local_id x
  %t = vyre.const {tile} : ui32
  %start = vyre.mul %g, %t : ui32
  %a = vyre.add %start, %l : ui32
  %one = vyre.const 1.0 : f32
  vyre.store @out[%a] = %one : f32
  %c = vyre.const 64 : ui32
  %b = vyre.add %a, %c : ui32
  %two = vyre.const 2.0 : f32
  vyre.store @out[%b] = %two : f32"""
TILED = program(TILE.format(tile=128))
TILED_GAP = program(TILE.format(tile=130))
READS_OUT = f"""
vyre.program @p workgroup_size [64, 1, 1] {{
  vyre.buffer @x binding 0 read_only : f32[{N}]
  vyre.buffer @out binding 1 read_write : f32[{N}]
  %i = vyre.invocation_id x
  %x = vyre.load @x[%i] : f32
  %o = vyre.load @out[%i] : f32
  %s = vyre.add %x, %o : f32
  vyre.store @out[%i] = %s : f32
}}
"""

# a [1, 1, 1] program: lowering widens its workgroup (ids from the linear index)
WIDENED = program("""  vyre.store @out[%i] = %x : f32""").replace(
    "workgroup_size [64, 1, 1]", "workgroup_size [1, 1, 1]"
)
X = np.linspace(-3, 5, N, dtype=np.float32)


def numpy_out(text: str) -> np.ndarray:
    """What the program computes, by numpy."""
    out = np.zeros(N, np.float32)
    idx = np.arange(N)
    if text is FULL:
        out[:] = X * 2
    elif text is WIDENED:
        out[:] = X
    elif text is GUARDED_FULL:
        out[:] = X
    elif text is EVEN:
        out[:N:2] = X[: (N + 1) // 2]
    elif text is SHIFTED:
        out[1:] = X[:-1]
    elif text is HALF:
        out[: N // 2] = X[: N // 2]
    elif text is RETURN_FIRST:
        out[:] = X
        out[3] = 0
    elif text is LOOP:
        out[idx % 2 == 1] = X[idx % 2 == 1]
    elif text is BRANCHES:
        out[:] = np.where(X > 0, X, 0)
    elif text is TILED:
        out[:] = np.where(idx % 128 < 64, 1, 2)
    elif text is TILED_GAP:
        out[:] = np.select([idx % 130 < 64, idx % 130 < 128], [1, 2], 0)
    return out


def lowered(text: str, clears: bool = True):
    module = parse_module(text)
    lower_module(module, TargetProfile(), clears=clears)
    return module


def marked(text: str) -> set[str]:
    return {
        b.buffer_name for d in k.descriptors(lowered(text)) for b in d.bindings() if b.is_no_clear
    }


# ------------------------------------------------------------------ analysis and pass


@pytest.mark.parametrize(
    "text",
    [FULL, GUARDED_FULL, WIDENED, TILED],
    ids=["full", "guarded-full", "widened", "tiled"],
)
def test_a_full_writer_is_marked(text):
    assert marked(text) == {"out"}
    (descriptor,) = k.descriptors(lowered(text, clears=False))
    assert covered_bindings(descriptor) == {"out"}


@pytest.mark.parametrize(
    "text",
    [EVEN, SHIFTED, HALF, RETURN_FIRST, LOOP, BRANCHES, READS_OUT, TILED_GAP],
    ids=["even", "shifted", "half", "return-first", "loop", "branches", "reads-out", "tiled-gap"],
)
def test_a_partial_or_unproven_writer_is_not_marked(text):
    assert marked(text) == set()


def test_only_the_first_kernel_to_bind_a_buffer_is_marked():
    # @a reads out before @b writes all of it: zeroing is what @a sees
    reader = f"""
vyre.program @a workgroup_size [64, 1, 1] {{
  vyre.buffer @out binding 0 read_only : f32[{N}]
  vyre.buffer @y binding 1 write_only : f32[{N}]
  %i = vyre.invocation_id x
  %o = vyre.load @out[%i] : f32
  vyre.store @y[%i] = %o : f32
}}
"""
    module = lowered(reader + FULL)
    marks = [
        (d.sym_name.data, b.buffer_name)
        for d in k.descriptors(module)
        for b in d.bindings()
        if b.is_no_clear
    ]
    assert marks == [("a", "y")]


def test_verify_rejects_an_unproven_mark():
    module = lowered(HALF)
    (binding,) = [b for b in k.descriptors(module)[0].bindings() if b.buffer_name == "out"]
    from xdsl.dialects.builtin import UnitAttr

    binding.properties["no_clear"] = UnitAttr()
    from vyre_xdsl.passes.kernel_verify import verify_descriptors

    with pytest.raises(VyreDiagnostic, match="no_clear"):
        verify_descriptors(module, TargetProfile())


# ------------------------------------------------------------------ runtime


@pytest.fixture
def clears(monkeypatch):
    """Sizes of the buffers each run zeroes (`execute._clear`)."""
    seen: list[int] = []
    real = execute._clear

    def counting(encoder, buffer):
        seen.append(buffer.size)
        real(encoder, buffer)

    monkeypatch.setattr(execute, "_clear", counting)
    return seen


def run(text: str, backend: str = "wgpu") -> np.ndarray:
    return np.asarray(vyre_xdsl.run(text, {"x": X}, backend=backend)["out"])


def dirty_pool() -> None:
    """Leave an output-sized pooled buffer full of nonzero values."""
    assert np.all(run(FULL) == X * 2)


def test_a_covered_output_is_not_cleared(clears):
    dirty_pool()
    clears.clear()
    out = run(FULL)
    np.testing.assert_array_equal(out, X * 2)
    assert clears == []
    np.testing.assert_array_equal(run(GUARDED_FULL), X)
    kept = vyre_xdsl.run(GUARDED_FULL, {"x": X}, backend="wgpu", device=True)["out"]
    np.testing.assert_array_equal(kept.numpy(), X)  # a device output too
    assert clears == []


def test_the_elision_can_be_turned_off(clears, monkeypatch):
    monkeypatch.setattr(execute, "ELIDE_CLEARS", False)
    np.testing.assert_array_equal(run(FULL), X * 2)
    assert clears == [N * 4]


@pytest.mark.parametrize(
    "text",
    [EVEN, HALF, RETURN_FIRST, LOOP, TILED_GAP],
    ids=["even", "half", "return-first", "loop", "tiled-gap"],
)
def test_a_partial_writer_keeps_its_clear_over_a_dirty_pool(text, clears, monkeypatch):
    dirty_pool()
    clears.clear()
    out = run(text)
    np.testing.assert_array_equal(out, numpy_out(text))
    assert N * 4 in clears  # (a loop's trap sidecar is cleared too)
    # the test can fail: without that clear, the dirty pool shows through
    dirty_pool()
    monkeypatch.setattr(execute, "_clear", lambda encoder, buffer: None)
    assert not np.array_equal(run(text), numpy_out(text))


@pytest.mark.parametrize(
    "text",
    [
        FULL,
        GUARDED_FULL,
        WIDENED,
        EVEN,
        SHIFTED,
        HALF,
        RETURN_FIRST,
        LOOP,
        BRANCHES,
        TILED,
        TILED_GAP,
    ],
    ids=[
        "full",
        "guarded-full",
        "widened",
        "even",
        "shifted",
        "half",
        "return-first",
        "loop",
        "branches",
        "tiled",
        "tiled-gap",
    ],
)
def test_wgpu_matches_the_reference_over_a_dirty_pool(text):
    dirty_pool()
    reference = run(text, "reference")
    np.testing.assert_array_equal(reference, numpy_out(text))
    np.testing.assert_array_equal(run(text), reference)


def test_a_host_array_longer_than_the_static_count_keeps_its_clear(clears):
    # the kernel writes its 64 declared elements; the run binds a 128-element
    # output, whose tail only the clear makes zero
    full = program("""  vyre.store @out[%i] = %x : f32""", n=128)
    x = np.arange(128, dtype=np.float32) + 1
    assert np.all(vyre_xdsl.run(full, {"x": x}, backend="wgpu")["out"] == x)  # dirty the pool
    kernels = execute.compiled_kernels(
        parse_module(program("""  vyre.store @out[%i] = %x : f32""", n=64))
    )
    assert [b.no_clear for b in kernels[0].bindings] == [False, True]
    clears.clear()
    out = execute.run_kernels(
        kernels,
        {"x": x[:64], "out": execute.ZeroFilled(128, np.float32)},
        outputs=["out"],
        uploads={"x"},
    )["out"]
    np.testing.assert_array_equal(out, np.concatenate([x[:64], np.zeros(64, np.float32)]))
    assert clears == [128 * 4]


def test_the_coarsened_scans_output_is_not_cleared(clears):
    """The add-back of a scan coarsened to reduce-then-scan stores tiles of
    2048 elements (8 stores per invocation, a workgroup's 256 lanes apart): the
    analysis proves them, so the run leaves its 4 MiB output unzeroed, over a
    dirty pool, and the result is numpy's. (Below 2^20 elements the pass keeps
    the first level's block scan, whose stores the first rule proves.)"""
    n = 1 << 20
    x = np.random.default_rng(3).integers(-2, 3, n).astype(np.float32)
    text = _coarsened_scan(n)
    vyre_xdsl.run(text, {"x": x + 7}, backend="wgpu")  # dirty the pool
    clears.clear()
    out = vyre_xdsl.run(text, {"x": x}, backend="wgpu")["out"]
    np.testing.assert_array_equal(out, np.cumsum(x, dtype=np.float64).astype(np.float32))
    assert n * 4 not in clears


def _coarsened_scan(n: int) -> str:
    """bench/workloads.py's scan of `n` elements after vyre-coarsen-reductions
    (reduce-then-scan at the first level), as IR text."""
    import sys
    from pathlib import Path

    from xdsl.context import Context

    from vyre_xdsl.passes.vyre_coarsen_reductions import VyreCoarsenReductionsPass

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from workloads import scan_text

    module = parse_module(scan_text(n))
    VyreCoarsenReductionsPass(reassociate_floats=True).apply(Context(), module)
    return str(module)


def test_no_clear_is_only_for_a_writable_global_binding():
    text = """
kernel.descriptor @d id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [1, 1, 1] count [@x]
  kernel.binding @x slot 0 group 0 constant read_only no_clear : f32[64]
}
"""
    with pytest.raises(Exception, match="'no_clear' applies only to a writable global binding"):
        parse_module(text).verify()


# ------------------------------------------------------------------ tiles, drawn at random


def _tile_descriptor(width: int, tile: int, offsets: list[int], grid: tuple, count: int) -> str:
    """A kernel whose workgroups of `width` store at g * tile + local_id x + c for
    each c of `offsets`; `grid` (gx, gy) is explicit when gy > 1 (g = x + y * gx)."""
    gx, gy = grid
    lines = [
        "  %l = kernel.local_id x",
        "  %x = kernel.workgroup_id x",
        f"  %t = vyre.const {tile} : ui32",
        "  %v = vyre.const 1.0 : f32",
    ]
    group = "%x"
    if gy > 1:
        lines += [
            "  %y = kernel.workgroup_id y",
            f"  %gx = vyre.const {gx} : ui32",
            "  %yy = vyre.mul %y, %gx : ui32",
            "  %g = vyre.add %x, %yy : ui32",
        ]
        group = "%g"
    lines += [f"  %s = vyre.mul {group}, %t : ui32", "  %a = vyre.add %s, %l : ui32"]
    for j, offset in enumerate(offsets):
        lines += [
            f"  %c{j} = vyre.const {offset} : ui32",
            f"  %i{j} = vyre.add %a, %c{j} : ui32",
            f"  kernel.store_global slot 0 [%i{j}] = %v : f32",
        ]
    explicit = "explicit " if gy > 1 else ""
    return (
        'kernel.descriptor @d id "0" entry "main" {\n'
        f"  kernel.dispatch workgroup_size [{width}, 1, 1] program_workgroup_size [{width}, 1, 1]"
        f" grid {explicit}[{gx}, {gy}, 1] count [@out]\n"
        f"  kernel.binding @out slot 0 group 0 global write_only : f32[{count}]\n"
        + "\n".join(lines)
        + "\n}\n"
    )


def _numpy_covers(width, tile, offsets, grid, count) -> bool:
    """Whether the stores reach every element below `count`, by enumerating them."""
    groups = np.arange(grid[0] * grid[1])[:, None, None]
    lanes = np.arange(width)[None, :, None]
    written = (groups * tile + lanes + np.array(offsets)[None, None, :]).ravel()
    return bool(np.isin(np.arange(count), written).all())


@settings(max_examples=300, deadline=None)
@given(
    width=st.sampled_from([1, 4, 32, 64]),
    tile=st.integers(1, 200),
    offsets=st.lists(st.integers(0, 260), min_size=1, max_size=6),
    gx=st.integers(1, 12),
    gy=st.sampled_from([1, 1, 2, 3]),
    extra=st.integers(-300, 40),
)
def test_a_tile_marked_covered_is_covered(width, tile, offsets, gx, gy, extra):
    """Sound: whenever the analysis proves a tiled output written in full, the
    stores (enumerated with numpy) reach every element; and where the offsets
    stay inside the tile, cover it and the tiles cover the count, it proves it."""
    count = max(1, gx * gy * tile + extra)
    text = _tile_descriptor(width, tile, offsets, (gx, gy), count)
    (descriptor,) = k.descriptors(parse_module(text))
    (binding,) = descriptor.bindings()
    proven = writes_every_element(descriptor, binding)
    note(text)
    if proven:
        assert _numpy_covers(width, tile, offsets, (gx, gy), count)
    inside = all(c < tile for c in offsets)
    if inside and gx * gy * tile >= count and _numpy_covers(width, tile, offsets, (1, 1), tile):
        assert proven
