"""`vyre-coarsen-reductions` keeps every result: textbook tree reductions (one
element per invocation, a barrier tree per workgroup, a program per level)
run on the reference interpreter and on the GPU (lavapipe) with the pass off
and on, against numpy; sum, min and max (and mul, bit_xor) on integers,
float sums with permission to reassociate, sizes that are not multiples of
k x 256. Where the pass must not apply (float add without permission, a
combine that is not associative, partials that are observable or read in
another way) it leaves the module as it was and says why. Expected values
come from numpy alone."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from xdsl.context import Context

import vyre_xdsl
from vyre_xdsl.analysis.reductions import tree_level
from vyre_xdsl.dialects.vyre import programs
from vyre_xdsl.passes import get_all_passes
from vyre_xdsl.passes.vyre_coarsen_reductions import VyreCoarsenReductionsPass
from vyre_xdsl.testing import fuzz

from ..support import EXAMPLES

F32_INF = "0x7F800000"
F32_NINF = "0xFF800000"
#: (combine, element) -> identity as IR text
IDENTITIES = {
    ("add", "ui32"): "0",
    ("add", "si32"): "0",
    ("add", "f32"): "0.0",
    ("mul", "ui32"): "1",
    ("bit_xor", "ui32"): "0",
    ("min", "ui32"): "4294967295",
    ("max", "ui32"): "0",
    ("min", "si32"): "2147483647",
    ("max", "si32"): "-2147483648",
    ("min", "f32"): F32_INF,
    ("max", "f32"): F32_NINF,
    ("sub", "ui32"): "0",
}
DTYPES = {"ui32": np.uint32, "si32": np.int32, "f32": np.float32}


def level(name, src, dst, n, width, element, op, pad=True, attrs="", dst_access="write_only"):
    """One textbook level: each workgroup of `width` reduces its elements of
    `src` (the identity past n) in workgroup memory and writes dst[workgroup]."""
    m = math.ceil(n / width)
    ident = IDENTITIES[(op, element)]
    leaf = "%v"
    guard = ""
    if pad and n % width:
        guard = f"""
  %n = vyre.const {n} : ui32
  %inside = vyre.lt %i, %n : ui32
  %ident = vyre.const {ident} : {element}
  %vp = vyre.select %inside, %v, %ident : {element}"""
        leaf = "%vp"
    return f"""vyre.program @{name} {attrs}workgroup_size [{width}, 1, 1] {{
  vyre.buffer @{src} binding 0 read_only : {element}[{n}]
  vyre.buffer @{dst} binding 1 {dst_access} : {element}[{m}]
  vyre.buffer @tile_{name} workgroup : {element}[{width}]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @{src}[%i] : {element}{guard}
  vyre.store @tile_{name}[%l] = {leaf} : {element}
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const {int(math.log2(width))} : ui32
  %half = vyre.const {width // 2} : ui32
  vyre.loop @level = %zero to %levels {{
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {{
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_{name}[%l] : {element}
      %b = vyre.load @tile_{name}[%j] : {element}
      %s = vyre.{op} %a, %b : {element}
      vyre.store @tile_{name}[%l] = %s : {element}
    }}
    vyre.barrier
  }}
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {{
    %total = vyre.load @tile_{name}[%zero] : {element}
    vyre.store @{dst}[%w] = %total : {element}
  }}
}}"""


def tree(n, op, element, width=256, attrs="", first_access="write_only"):
    """Levels from @x (n elements) down to one value in @out."""
    texts, src, size, k = [], "x", n, 0
    while True:
        m = math.ceil(size / width)
        dst = "out" if m == 1 else f"r{k}"
        access = first_access if k == 0 and m > 1 else "write_only"
        texts.append(level(f"level{k}", src, dst, size, width, element, op, True, attrs, access))
        if m == 1:
            return "\n".join(texts) + "\n"
        src, size, k = dst, m, k + 1


def data(element, n, op, seed=0):
    rng = np.random.default_rng(seed)
    if element == "f32":
        return rng.standard_normal(n).astype(np.float32)
    if op == "mul":
        return rng.choice(np.array([1, 1, 1, 3, 5, 7], np.uint32), n)
    if element == "si32":
        return rng.integers(-1000, 1000, n).astype(np.int32)
    return rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)


def numpy_reduce(op, x):
    if op == "add":
        if x.dtype == np.float32:
            return np.float64(x.astype(np.float64).sum())
        return np.add.reduce(x, dtype=x.dtype)
    if op == "mul":
        return np.multiply.reduce(x, dtype=x.dtype)
    if op == "bit_xor":
        return np.bitwise_xor.reduce(x)
    return {"min": np.min, "max": np.max}[op](x)


def coarsened(text, **options):
    module = vyre_xdsl.parse(text)
    VyreCoarsenReductionsPass(**options).apply(Context(), module)
    module.verify()
    return module


def grids(module):
    return [p.explicit_grid for p in programs(module)]


def check(out, expected, x):
    if x.dtype == np.float32:
        # float sums: a different grouping rounds differently
        bound = 1e-5 * float(np.abs(x.astype(np.float64)).sum()) + 1e-6
        assert abs(float(out[0]) - float(expected)) <= bound
    else:
        assert out.dtype == x.dtype and out[0] == expected


CASES = [
    # op, element, n, width, k
    ("add", "ui32", 100_003, 256, 16),
    ("min", "ui32", 70_001, 256, 4),
    ("min", "ui32", 256 * 1001, 256, 16),  # no padding, 1001 workgroups: 63 x 16 > 1001
    ("max", "ui32", 65_536, 256, 16),
    ("add", "si32", 50_000, 64, 8),
    ("min", "si32", 123_457, 64, 0),
    ("max", "si32", 4_097, 64, 16),
    ("mul", "ui32", 9_999, 64, 4),
    ("bit_xor", "ui32", 30_001, 128, 8),
    ("min", "f32", 100_001, 256, 16),
    ("max", "f32", 77_777, 64, 8),
    ("add", "f32", 100_003, 256, 16),
    ("add", "ui32", 100_003, 256, 17),  # k that is no power of two: 17 x 23 > 391 groups
    ("max", "f32", 9_999, 64, 17),
]


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
@pytest.mark.parametrize(("op", "element", "n", "width", "k"), CASES)
def test_pass_on_and_off_agree_with_numpy(backend, op, element, n, width, k):
    text = tree(n, op, element, width)
    x = data(element, n, op)
    expected = numpy_reduce(op, x)
    options = {"k": k, "reassociate_floats": True, "min_workgroups": 8}
    module = coarsened(text, **options)
    first = grids(module)[0]
    groups = math.ceil(n / width)
    chosen = k or first[0] and math.ceil(groups / first[0])
    assert first == (math.ceil(groups / chosen), 1, 1), "the first level was not coarsened"
    off = vyre_xdsl.run(text, {"x": x}, backend=backend)["out"]
    on = vyre_xdsl.run(module, {"x": x}, backend=backend)["out"]
    check(off, expected, x)
    check(on, expected, x)


def test_every_level_of_a_long_chain_is_coarsened_and_repeat_keeps_the_result():
    n = 300_001  # 1172 partials, then 5, then 1
    x = data("ui32", n, "min", 3)
    module = coarsened(tree(n, "min", "ui32"), k=4)
    assert grids(module) == [(293, 1, 1), (2, 1, 1), None]
    for backend in ("reference", "wgpu"):
        out = vyre_xdsl.run(module, {"x": x}, backend=backend, repeat=2)["out"]
        assert out[0] == x.min()


def test_automatic_k_is_raised_one_at_a_time_to_fit_one_axis():
    """2^20 workgroups: k = 16 would leave 65,536 (one more than an axis holds);
    k = 17 leaves ceil(2^20 / 17) = 61,681, and its leaf loop of 16 trips unrolls."""
    for groups, launched in ((1 << 20, 61_681), (65_535 * 16, 65_535), (65_535 * 40, 65_535)):
        module = coarsened(tree(groups * 256, "add", "ui32"))
        assert grids(module)[0] == (launched, 1, 1), groups


def test_automatic_k_leaves_min_workgroups():
    n = 1 << 20  # 4096 workgroups of 256
    module = coarsened(tree(n, "add", "ui32"))
    assert grids(module)[0] == (1024, 1, 1)  # k = 4 keeps the default 1024
    module = coarsened(tree(n, "add", "ui32"), min_workgroups=64)
    assert grids(module)[0] == (256, 1, 1)  # k stops at max-k = 16
    module = coarsened(tree(n, "add", "ui32"), min_workgroups=4096)
    assert grids(module)[0] is None  # coarsening would leave fewer than 4096


def test_program_attribute_allows_float_reassociation():
    n = 40_000
    text = tree(n, "add", "f32", attrs="{reassociate} ")
    x = data("f32", n, "add", 5)
    module = coarsened(text, k=8)
    assert grids(module)[0] == (20, 1, 1)
    check(vyre_xdsl.run(module, {"x": x}, backend="reference")["out"], numpy_reduce("add", x), x)


def unchanged(text, reason, capsys, **options):
    module = coarsened(text, remarks=True, **options)
    assert str(module) == str(vyre_xdsl.parse(text))
    assert reason in capsys.readouterr().err


def test_float_add_without_permission_is_left_alone(capsys):
    unchanged(tree(100_000, "add", "f32"), "reassociate-floats=true", capsys, k=4)


def test_non_associative_combine_is_left_alone(capsys):
    unchanged(tree(100_000, "sub", "ui32"), "'sub' is not associative", capsys, k=4)


def test_observable_partials_are_left_alone(capsys):
    # the first level's partials are marked output: the caller gets them back
    # (the second level's partials are still an intermediate: it is coarsened)
    text = tree(100_000, "add", "ui32", first_access="write_only output")
    module = coarsened(text, k=4, remarks=True)
    assert grids(module) == [None, (1, 1, 1), None]
    assert "@r0 is marked output" in capsys.readouterr().err
    x = data("ui32", 100_000, "add")
    out = vyre_xdsl.run(module, {"x": x}, backend="reference")
    assert out["out"][0] == numpy_reduce("add", x)
    np.testing.assert_array_equal(
        out["r0"], np.add.reduceat(x, np.arange(0, 100_000, 256), dtype=np.uint32)
    )


def test_partials_read_by_another_program_are_left_alone(capsys):
    text = tree(100_000, "add", "ui32")
    spy = """vyre.program @spy workgroup_size [64, 1, 1] {
  vyre.buffer @r0 binding 0 read_only : ui32[391]
  vyre.buffer @copy binding 1 write_only : ui32[391]
  %i = vyre.invocation_id x
  %v = vyre.load @r0[%i] : ui32
  vyre.store @copy[%i] = %v : ui32
}
"""
    text += spy
    module = coarsened(text, k=4, remarks=True)
    assert grids(module)[0] is None
    assert "@r0 is declared by 3 programs" in capsys.readouterr().err
    x = data("ui32", 100_000, "add")
    out = vyre_xdsl.run(module, {"x": x}, backend="reference")
    assert out["out"][0] == numpy_reduce("add", x)


def test_partials_reduced_after_a_transform_are_left_alone(capsys):
    # the second level reduces 2 * r0[i], not r0[i]: a different grouping of
    # r0 would still sum the same, but the rule only admits plain leaves
    text = tree(100_000, "add", "ui32").replace(
        "%v = vyre.load @r0[%i] : ui32",
        "%v0 = vyre.load @r0[%i] : ui32\n  %v = vyre.add %v0, %v0 : ui32",
    )
    module = coarsened(text, k=4, remarks=True)
    assert grids(module)[0] is None
    assert "does not read @r0" in capsys.readouterr().err


def test_applying_twice_changes_nothing_more():
    once = coarsened(tree(100_000, "max", "si32"), k=4)
    twice = vyre_xdsl.parse(str(once))
    VyreCoarsenReductionsPass(k=4).apply(Context(), twice)
    assert str(twice) == str(once)


def test_recognizer_reasons():
    text = tree(1000, "add", "ui32")
    assert tree_level(programs(vyre_xdsl.parse(text))[0]).__class__.__name__ == "TreeLevel"
    broken = text.replace("%half = vyre.const 128", "%half = vyre.const 64", 1)
    why = tree_level(programs(vyre_xdsl.parse(broken))[0])
    assert why == "the steps do not combine every lane of the workgroup into tile[0]"


def test_registered_and_in_the_pipeline():
    assert "vyre-coarsen-reductions" in get_all_passes()
    from vyre_xdsl.passes.pipeline import VyreToKernelPass

    text = tree(1 << 20, "add", "ui32")
    first_grid = {}
    for on in (False, True):
        module = vyre_xdsl.parse(text)
        VyreToKernelPass(coarsen_reductions=on).apply(Context(), module)
        dispatch = next(op for op in module.walk() if op.name == "kernel.dispatch")
        first_grid[on] = re.search(r"grid (?:explicit )?\[(\d+), 1, 1\]", str(dispatch)).group(1)
    assert first_grid == {False: "4096", True: "1024"}


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_partials_stored_past_the_buffer_stay_dropped(backend):
    # r0 holds 10 of the 16 partials: the last 6 workgroups' partials are
    # dropped (out-of-bounds stores), so only x[0:640] counts, coarsened or not
    text = tree(1024, "min", "ui32", 64)
    text = text.replace("ui32[16]", "ui32[10]").replace(
        "vyre.const 16 : ui32", "vyre.const 10 : ui32"
    )
    x = data("ui32", 1024, "min", 7)
    x[640:] = 0  # would win the min if they were mixed in
    module = coarsened(text, k=4)
    assert grids(module)[0] == (3, 1, 1)
    for source in (text, module):
        assert vyre_xdsl.run(source, {"x": x}, backend=backend)["out"][0] == x[:640].min()


@pytest.mark.parametrize("fuse", [True, "force"])
def test_coarsened_module_fuses_and_runs_on_the_gpu(fuse):
    n = 200_003
    x = data("si32", n, "max", 11)
    module = coarsened(tree(n, "max", "si32"), k=8)
    out = vyre_xdsl.run(module, {"x": x}, backend="wgpu", fuse=fuse)["out"]
    assert out[0] == x.max()


def test_random_sizes_and_k_on_the_reference_backend():
    rng = np.random.default_rng(12)
    for _ in range(12):
        width = int(rng.choice([32, 64, 128, 256]))
        n = int(rng.integers(width * 2 + 1, 40_000))
        k = int(rng.integers(2, 17))
        op = str(rng.choice(["add", "min", "max"]))
        x = data("ui32", n, op, int(rng.integers(1 << 30)))
        module = coarsened(tree(n, op, "ui32", width), k=k)
        assert grids(module)[0] == (math.ceil(math.ceil(n / width) / k), 1, 1), (n, width, k)
        out = vyre_xdsl.run(module, {"x": x}, backend="reference")["out"]
        assert out[0] == numpy_reduce(op, x), (op, n, width, k)


def test_partials_that_are_the_module_output_are_left_alone(capsys):
    # one level alone: its 391 partials are what the caller gets back
    text = level("level0", "x", "r0", 100_000, 256, "ui32", "add") + "\n"
    unchanged(text, "@r0 is read by no later program", capsys, k=4)


def test_a_loop_of_two_billion_steps_is_refused_at_once(capsys):
    """examples/reduction.mlir with its level count replaced by 0x7fffffff (found
    by the fuzzer: the pass evaluated every step, and the pipeline hung); a
    workgroup tree takes at most one step per bit of its invocation count."""
    text = (EXAMPLES / "reduction.mlir").read_text()
    assert "%levels = vyre.const 6 : ui32" in text
    text = text.replace("%levels = vyre.const 6 : ui32", "%levels = vyre.const 0x7fffffff : ui32")
    with fuzz.time_limit(5):  # a CaseTimeout, not a hung suite, if it evaluates the steps
        unchanged(text, "runs 2147483647 steps, more than the 32", capsys)


# ---------------------------------------------------------------- workgroup scans

F32_NINF_SCAN = F32_NINF
#: (combine, element) -> the identity a scan step falls back to, as IR text
SCAN_IDENTITIES = {
    ("add", "ui32"): "0",
    ("add", "si32"): "0",
    ("add", "f32"): "0.0",
    ("max", "ui32"): "0",
    ("max", "si32"): "-2147483648",
    ("max", "f32"): F32_NINF_SCAN,
    ("min", "ui32"): "4294967295",
    ("mul", "ui32"): "1",
    ("sub", "ui32"): "0",
}


def scan_step(tile, element, op, form, offset_ops, indent, suffix=""):
    """One Hillis-Steele step: read tile[l] and tile[l - off], barrier, write, barrier."""
    pad, t = " " * indent, suffix
    if form == "select":
        combine = f"""{pad}%both{t} = vyre.{op} %cur{t}, %prev{t} : {element}
{pad}%s{t} = vyre.select %has{t}, %both{t}, %cur{t} : {element}"""
    else:
        combine = f"""{pad}%e{t} = vyre.const {SCAN_IDENTITIES[(op, element)]} : {element}
{pad}%add{t} = vyre.select %has{t}, %prev{t}, %e{t} : {element}
{pad}%s{t} = vyre.{op} %cur{t}, %add{t} : {element}"""
    return f"""{offset_ops}
{pad}%has{t} = vyre.ge %l, %off{t} : ui32
{pad}%j{t} = vyre.sub %l, %off{t} : ui32
{pad}%cur{t} = vyre.load @{tile}[%l] : {element}
{pad}%prev{t} = vyre.load @{tile}[%j{t}] : {element}
{combine}
{pad}vyre.barrier
{pad}vyre.store @{tile}[%l] = %s{t} : {element}
{pad}vyre.barrier"""


def scan_block_text(
    name, src, dst, sums, n, element, op, width=256, form="identity", attrs="", access=""
):
    """The scan of bench/workloads.py's `scan_block`, for any combine and element
    type: an inclusive scan of each `width`-block of `src` into `dst` in
    workgroup memory, the block's total into `sums[workgroup]` (when given).
    `form`: `identity` (cur op select(has, prev, e)), `select` (select(has,
    cur op prev, cur)), `unrolled` (the steps without a loop)."""
    m = math.ceil(n / width)
    steps = math.ceil(math.log2(width))
    tile = f"tile_{name}"
    decl = total = ""
    if sums is not None:
        decl = f"\n  vyre.buffer @{sums} binding 2 write_only{access} : {element}[{m}]"
        total = f"""
  %lastlane = vyre.const {width - 1} : ui32
  %islast = vyre.eq %l, %lastlane : ui32
  vyre.if %islast {{
    vyre.store @{sums}[%w] = %r : {element}
  }}"""
    if form == "unrolled":
        loop = "\n".join(
            scan_step(
                tile,
                element,
                op,
                "identity",
                f"  %off_{s} = vyre.const {1 << s} : ui32",
                2,
                f"_{s}",
            )
            for s in range(steps)
        )
    else:
        loop = f"""  %steps = vyre.const {steps} : ui32
  %one = vyre.const 1 : ui32
  vyre.loop @step = %zero to %steps {{
{scan_step(tile, element, op, form, "    %k = vyre.var @step : ui32" + chr(10) + "    %off = vyre.shl %one, %k : ui32", 4)}
  }}"""
    return f"""vyre.program @{name} {attrs}workgroup_size [{width}, 1, 1] {{
  vyre.buffer @{src} binding 0 read_only : {element}[{n}]
  vyre.buffer @{dst} binding 1 write_only{access} : {element}[{n}]{decl}
  vyre.buffer @{tile} workgroup : {element}[{width}]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @{src}[%i] : {element}
  vyre.store @{tile}[%l] = %v : {element}
  vyre.barrier
  %zero = vyre.const 0 : ui32
{loop}
  %r = vyre.load @{tile}[%l] : {element}
  vyre.store @{dst}[%i] = %r : {element}{total}
}}
"""


NP_SCANS = {"add": np.add, "max": np.maximum, "min": np.minimum, "mul": np.multiply}


def block_scans(op, x, width, n_blocks=None):
    """numpy: the inclusive scan of each width-block of x, and each block's total
    (a partial last block scans its elements; past n the loads give 0)."""
    blocks = math.ceil(len(x) / width)
    padded = np.zeros(blocks * width, x.dtype)  # out-of-bounds loads give 0
    padded[: len(x)] = x
    ufunc = NP_SCANS[op]
    scanned = ufunc.accumulate(padded.reshape(blocks, width), axis=1, dtype=x.dtype)
    return scanned.reshape(-1)[: len(x)], scanned[:, -1].copy()


def scan_data(element, n, op, seed=0):
    rng = np.random.default_rng(seed)
    if element == "f32":
        if op == "add":  # integer-valued: every partial sum is exact, in any order
            return rng.integers(-4, 5, n).astype(np.float32)
        return rng.standard_normal(n).astype(np.float32)
    return data(element, n, op, seed)


SCAN_CASES = [
    # op, element, n, width, k, form
    ("add", "ui32", 100_003, 256, 4, "identity"),
    ("add", "si32", 65_536, 256, 8, "identity"),
    ("add", "si32", 70_001, 128, 16, "select"),
    ("max", "ui32", 70_001, 64, 16, "identity"),
    ("max", "si32", 9_999, 64, 4, "unrolled"),
    ("max", "f32", 50_001, 128, 8, "identity"),
    ("add", "f32", 100_003, 256, 4, "identity"),
    ("add", "f32", 33_333, 64, 32, "select"),
    ("min", "ui32", 30_000, 64, 2, "select"),
    ("add", "ui32", 5_000, 32, 32, "identity"),  # one invocation per block: no scan of totals
    ("add", "ui32", 10_001, 96, 4, "identity"),  # segments of 24 invocations
]


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
@pytest.mark.parametrize(("op", "element", "n", "width", "k", "form"), SCAN_CASES)
def test_scan_level_pass_on_and_off_agree_with_numpy(backend, op, element, n, width, k, form):
    text = scan_block_text("scan0", "x", "dst", "sums", n, element, op, width, form)
    x = scan_data(element, n, op)
    scanned, totals = block_scans(op, x, width)
    module = coarsened(text, k=k, reassociate_floats=True)
    blocks = math.ceil(n / width)
    assert grids(module) == [(math.ceil(blocks / k), 1, 1)], "the scan was not coarsened"
    for source in (text, module):
        out = vyre_xdsl.run(source, {"x": x}, backend=backend)
        np.testing.assert_array_equal(out["dst"], scanned)
        np.testing.assert_array_equal(out["sums"], totals)


def test_scan_level_without_totals_and_the_automatic_k():
    # 256 workgroups of 256: min-workgroups 16 would leave k = 16, but its
    # 18,940 bytes of workgroup memory are more than the 16,384 every device
    # has: k = 8
    n = 1 << 16
    text = scan_block_text("scan0", "x", "dst", None, n, "ui32", "add")
    x = scan_data("ui32", n, "add", 4)
    module = coarsened(text, min_workgroups=16)
    assert grids(module) == [(32, 1, 1)]
    assert grids(coarsened(text, min_workgroups=64)) == [(64, 1, 1)]  # k = 4
    assert grids(coarsened(text)) == [None]  # 256 workgroups: fewer than 2 x 1024
    out = vyre_xdsl.run(module, {"x": x}, backend="reference")["dst"]
    np.testing.assert_array_equal(out, block_scans("add", x, 256)[0])


def test_scan_grid_past_one_axis_folds_into_y():
    """More coarsened workgroups than one axis holds: the grid folds into y and
    the workgroup's position is x + y * grid x (shown here with a fold at 7, so
    that the module stays small)."""
    from vyre_xdsl.analysis.reductions import scan_level
    from vyre_xdsl.passes.vyre_coarsen_reductions import coarsen_scan

    n, width, k = 10_000, 64, 4  # 157 blocks, 40 workgroups as [7, 6, 1] (42)
    text = scan_block_text("scan0", "x", "dst", "sums", n, "si32", "add", width)
    # sums longer than the blocks: the two launched workgroups past block 156
    # must not write into it
    text = text.replace("si32[157]", "si32[200]")
    module = vyre_xdsl.parse(text)
    (program,) = programs(module)
    coarsen_scan(scan_level(program), 157, k, (7, 6, 1))
    module.verify()
    assert grids(module) == [(7, 6, 1)]
    x = scan_data("si32", n, "add", 9)
    scanned, totals = block_scans("add", x, width)
    for backend in ("reference", "wgpu"):
        out = vyre_xdsl.run(module, {"x": x}, backend=backend)
        np.testing.assert_array_equal(out["dst"], scanned)
        np.testing.assert_array_equal(out["sums"][:157], totals)
        np.testing.assert_array_equal(out["sums"][157:], 0)


def test_block_total_read_as_the_last_element_of_the_tile():
    """`if l == 255 { sums[w] = tile[255] }` is the same total as tile[l]."""
    n = 70_000
    text = scan_block_text("scan0", "x", "dst", "sums", n, "ui32", "add").replace(
        "    vyre.store @sums[%w] = %r : ui32",
        "    %t = vyre.load @tile_scan0[%lastlane] : ui32\n    vyre.store @sums[%w] = %t : ui32",
    )
    assert "%t = vyre.load" in text
    module = coarsened(text, k=4)
    assert grids(module) == [(69, 1, 1)]
    x = scan_data("ui32", n, "add", 8)
    out = vyre_xdsl.run(module, {"x": x}, backend="reference")
    scanned, totals = block_scans("add", x, 256)
    np.testing.assert_array_equal(out["dst"], scanned)
    np.testing.assert_array_equal(out["sums"], totals)


def test_program_attribute_allows_float_scan_reassociation():
    n = 40_000
    text = scan_block_text("scan0", "x", "dst", "sums", n, "f32", "add", attrs="{reassociate} ")
    x = scan_data("f32", n, "add", 5)
    module = coarsened(text, k=8)
    assert grids(module) == [(20, 1, 1)]
    out = vyre_xdsl.run(module, {"x": x}, backend="reference")
    np.testing.assert_array_equal(out["dst"], block_scans("add", x, 256)[0])


def test_float_add_scan_without_permission_is_left_alone(capsys):
    text = scan_block_text("scan0", "x", "dst", "sums", 100_000, "f32", "add")
    unchanged(text, "reassociate-floats=true", capsys, k=4)


def test_non_associative_scan_is_left_alone(capsys):
    text = scan_block_text("scan0", "x", "dst", "sums", 100_000, "ui32", "sub", form="select")
    unchanged(text, "'sub' is not associative", capsys, k=4)


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        # a fallback that is not the identity: lane l would add 1 per missing step
        (("%e = vyre.const 0 : ui32", "%e = vyre.const 1 : ui32"), "not the identity of 'add'"),
        # offsets 1, 2, 4, ... 64 only: lane 255 misses lanes 0 ... 127
        (("%steps = vyre.const 8", "%steps = vyre.const 7"), "an inclusive scan"),
        # the partner is tile[l - off] but the condition tests another offset
        (("%has = vyre.ge %l, %off", "%has = vyre.ge %l, %one"), "'local_id x >= offset'"),
        # the total of the block read from another lane
        (("vyre.const 255 : ui32", "vyre.const 254 : ui32"), "if local_id x == 255"),
    ],
)
def test_scan_shapes_that_are_not_coarsened(capsys, edit, reason):
    text = scan_block_text("scan0", "x", "dst", "sums", 100_000, "ui32", "add")
    old, new = edit
    assert old in text
    unchanged(text.replace(old, new), reason, capsys, k=4)


@pytest.mark.parametrize(
    ("k", "reason"),
    [
        (3, "k = 3 does not divide the 256 elements of a block"),
        (16, "k = 16 needs 18432 bytes of workgroup memory, more than the 16384"),
    ],
)
def test_scan_k_that_does_not_fit_is_refused(capsys, k, reason):
    text = scan_block_text("scan0", "x", "dst", "sums", 100_000, "ui32", "add")
    unchanged(text, reason, capsys, k=k)


def test_applying_twice_changes_a_scan_nothing_more():
    once = coarsened(scan_block_text("scan0", "x", "dst", "sums", 100_000, "si32", "max"), k=4)
    twice = vyre_xdsl.parse(str(once))
    VyreCoarsenReductionsPass(k=4).apply(Context(), twice)
    assert str(twice) == str(once)


def workloads_module():
    """bench/workloads.py, the scan as users write it."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "bench" / "workloads.py"
    import sys

    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location("bench_workloads", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_the_whole_scan_of_the_workloads_through_the_pipeline(backend):
    """bench/workloads.py's multi-level scan (block scans, then the scanned
    totals added back) with the pass on: numpy's cumsum. 300,001 elements:
    1172 blocks (the last one partial), then 5, then 1."""
    from vyre_xdsl.passes.pipeline import VyreToKernelPass

    n = 300_001
    text = workloads_module().scan_text(n)
    x = scan_data("f32", n, "add", 21)
    expected = np.cumsum(x, dtype=np.float64).astype(np.float32)
    for options, first in (
        ({"k": 4}, [(293, 1, 1), (2, 1, 1), None]),  # both block scans
        ({"min_workgroups": 64}, [(147, 1, 1), None, None]),  # k = 8; 5 blocks left alone
    ):
        module = coarsened(text, reassociate_floats=True, **options)
        assert grids(module)[:3] == first
        out = vyre_xdsl.run(module, {"x": x}, backend=backend)["out"]
        np.testing.assert_array_equal(out, expected)
    # the same through the pipeline's options (the default min-workgroups: 1172
    # blocks are fewer than 2 x 1024, so only a bigger scan is coarsened there)
    first_grid = {}
    for on in (False, True):
        lowered = vyre_xdsl.parse(workloads_module().scan_text(1 << 20))
        VyreToKernelPass(coarsen_reductions=on, reassociate_floats=True).apply(Context(), lowered)
        dispatch = next(op for op in lowered.walk() if op.name == "kernel.dispatch")
        first_grid[on] = re.search(r"grid (?:explicit )?\[(\d+), 1, 1\]", str(dispatch)).group(1)
    assert first_grid == {False: "4096", True: "1024"}


@pytest.mark.parametrize("fuse", [True, "force"])
def test_coarsened_scan_fuses_and_runs_on_the_gpu(fuse):
    n = 200_003
    x = scan_data("si32", n, "add", 13)
    text = scan_block_text("scan0", "x", "dst", "sums", n, "si32", "add")
    text += scan_block_text("scan1", "sums", "dst1", None, math.ceil(n / 256), "si32", "add")
    module = coarsened(text, k=8)
    assert grids(module)[0] == (98, 1, 1)
    out = vyre_xdsl.run(module, {"x": x}, backend="wgpu", fuse=fuse)
    scanned, totals = block_scans("add", x, 256)
    np.testing.assert_array_equal(out["dst"], scanned)
    np.testing.assert_array_equal(out["dst1"], block_scans("add", totals, 256)[0])


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
@pytest.mark.parametrize(
    ("stage_loads", "stage_stores"), [(False, False), (False, True), (True, False)]
)
@pytest.mark.parametrize(
    ("op", "element", "n", "width", "k"),
    [
        ("add", "ui32", 100_003, 256, 16),
        ("max", "f32", 50_001, 128, 8),
        ("add", "si32", 10_001, 96, 4),
        ("add", "ui32", 5_000, 32, 32),
    ],
)
def test_unstaged_scan_forms_agree_with_numpy(
    backend, stage_loads, stage_stores, op, element, n, width, k
):
    """`coarsen_scan(..., stage_loads=False, stage_stores=False)` (each invocation
    loads and stores its k consecutive elements itself; what
    bench/coarsen_reductions.py times as `direct`), and either half of it, keep
    the results too."""
    from vyre_xdsl.analysis.reductions import scan_level
    from vyre_xdsl.passes.vyre_coarsen_reductions import coarsen_scan

    text = scan_block_text("scan0", "x", "dst", "sums", n, element, op, width)
    module = vyre_xdsl.parse(text)
    (program,) = programs(module)
    blocks = math.ceil(n / width)
    coarsen_scan(scan_level(program), blocks, k, stage_loads=stage_loads, stage_stores=stage_stores)
    module.verify()
    assert grids(module) == [(math.ceil(blocks / k), 1, 1)]
    x = scan_data(element, n, op, 2)
    scanned, totals = block_scans(op, x, width)
    out = vyre_xdsl.run(module, {"x": x}, backend=backend)
    np.testing.assert_array_equal(out["dst"], scanned)
    np.testing.assert_array_equal(out["sums"], totals)


# ---------------------------------------------------------------- reduce-then-scan


def add_back_text(name, local, carried, dst, n, element, op, width=256, form="identity"):
    """bench/workloads.py's `scan_add` for any combine: dst[i] = local[i] op
    carried[block(i) - 1], block 0 unchanged. `form`: `identity` (shift,
    `block != 0`, select of the identity), `select` (select(block > 0, local op
    carried, local)), `div` (a division, `i >= width`)."""
    m = math.ceil(n / width)
    if form == "div":
        block = f"%wc = vyre.const {width} : ui32\n  %block = vyre.div %i, %wc : ui32"
        has = "%has = vyre.ge %i, %wc : ui32"
    else:
        shift = width.bit_length() - 1
        block = f"%sh = vyre.const {shift} : ui32\n  %block = vyre.shr %i, %sh : ui32"
        cmp = "gt" if form == "select" else "ne"
        has = f"%has = vyre.{cmp} %block, %zero : ui32"
    if form == "select":
        value = f"""%both = vyre.{op} %v, %c : {element}
  %s = vyre.select %has, %both, %v : {element}"""
    else:
        value = f"""%e = vyre.const {SCAN_IDENTITIES[(op, element)]} : {element}
  %add = vyre.select %has, %c, %e : {element}
  %s = vyre.{op} %v, %add : {element}"""
    return f"""vyre.program @{name} workgroup_size [{width}, 1, 1] {{
  vyre.buffer @{local} binding 0 read_only : {element}[{n}]
  vyre.buffer @{carried} binding 1 read_only : {element}[{m}]
  vyre.buffer @{dst} binding 2 write_only : {element}[{n}]
  %i = vyre.invocation_id x
  %zero = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  {block}
  {has}
  %b = vyre.sub %block, %one : ui32
  %c = vyre.load @{carried}[%b] : {element}
  %v = vyre.load @{local}[%i] : {element}
  {value}
  vyre.store @{dst}[%i] = %s : {element}
}}
"""


def multi_scan_text(n, element, op, width=256, form="identity"):
    """bench/workloads.py's `scan_text` for any combine: block scans level by
    level until one block is left, then the scanned totals combined back."""
    sizes = [n]
    while sizes[-1] > width:
        sizes.append(math.ceil(sizes[-1] / width))
    top = len(sizes) - 1
    text, src = "", "x"
    for j, size in enumerate(sizes):
        sums = f"sums{j}" if j < top else None
        dst = "out" if top == 0 else f"local{j}"
        text += scan_block_text(f"scan{j}", src, dst, sums, size, element, op, width)
        src = sums
    for j in range(top - 1, -1, -1):
        carried = f"local{top}" if j == top - 1 else f"scanned{j + 1}"
        dst = "out" if j == 0 else f"scanned{j}"
        text += add_back_text(
            f"add{j}", f"local{j}", carried, dst, sizes[j], element, op, width, form
        )
    return text


def numpy_scan(op, x):
    return NP_SCANS[op].accumulate(x, dtype=x.dtype)


def split_pairs(module):
    """(the names of the programs, those that store to a buffer named local*)."""
    names = [p.sym_name.data for p in programs(module)]
    stores = {op.buffer_name for op in module.walk() if op.name == "vyre.store"}
    return names, sorted(s for s in stores if s.startswith("local"))


RTS_CASES = [
    # op, element, n, width, k, form, levels
    ("add", "f32", 3_000, 256, 4, "workloads", 2),
    ("add", "f32", 300_001, 256, 4, "workloads", 3),
    ("add", "f32", 65_536, 256, 8, "workloads", 2),
    ("add", "ui32", 100_003, 256, 4, "identity", 3),
    ("add", "si32", 65_536, 256, 8, "select", 2),
    ("add", "si32", 70_001, 128, 2, "div", 3),
    ("max", "f32", 50_001, 256, 2, "select", 2),
    ("max", "si32", 70_001, 128, 8, "identity", 3),
    ("max", "ui32", 9_999, 64, 16, "div", 3),
]


def rts_text(op, element, n, width, form):
    if form == "workloads":
        return workloads_module().scan_text(n)
    return multi_scan_text(n, element, op, width, form)


@pytest.mark.parametrize("fuse", [False, True])
@pytest.mark.parametrize("backend", ["reference", "wgpu"])
@pytest.mark.parametrize(("op", "element", "n", "width", "k", "form", "levels"), RTS_CASES)
def test_reduce_then_scan_agrees_with_numpy(backend, fuse, op, element, n, width, k, form, levels):
    """Each scan level whose block scans only its add-back reads stores only its
    block totals; the add-back re-scans the level's input and adds the carried
    prefix: numpy's inclusive scan, unfused and fused."""
    text = rts_text(op, element, n, width, form)
    assert text.count("vyre.program") == 2 * levels - 1
    module = coarsened(text, k=k, reassociate_floats=True)
    names, written = split_pairs(module)
    assert names == [f"scan{j}" for j in range(levels)] + [
        f"add{j}" for j in range(levels - 2, -1, -1)
    ]
    # every local but the top one (read as the carried prefixes) is gone
    assert written == [f"local{levels - 1}"]
    assert "@local0" not in str(module)
    x = scan_data(element, n, op, 5)
    out = vyre_xdsl.run(module, {"x": x}, backend=backend, fuse=fuse)["out"]
    np.testing.assert_array_equal(out, numpy_scan(op, x))


def test_the_add_back_reads_the_input_and_the_level_stores_only_totals():
    n = 300_001
    module = coarsened(workloads_module().scan_text(n), k=4, reassociate_floats=True)
    by_name = {p.sym_name.data: p for p in programs(module)}

    def touched(program, kind):
        return {op.buffer_name for op in program.walk() if op.name == f"vyre.{kind}"}

    scan0, add0 = by_name["scan0"], by_name["add0"]
    assert touched(scan0, "load") == {"x", "tile_scan0"}
    assert touched(scan0, "store") == {"sums0", "tile_scan0"}
    assert scan0.buffer("local0") is None
    assert touched(add0, "load") == {"x", "tile_scan0", "tile_scan0_totals", "scanned1"}
    assert touched(add0, "store") == {"out", "tile_scan0", "tile_scan0_totals"}
    assert [b.buffer_name for b in add0.buffers() if not b.is_workgroup] == ["x", "scanned1", "out"]
    assert [b.binding_slot for b in add0.buffers() if not b.is_workgroup] == [0, 1, 2]
    # k = 4: 1172 blocks on 293 workgroups, both halves
    assert scan0.explicit_grid == (293, 1, 1) and add0.explicit_grid == (293, 1, 1)
    # the host loads of x: one per element, in each half (and nothing more)
    x = scan_data("f32", n, "add", 9)
    out = vyre_xdsl.run(module, {"x": x}, backend="reference")
    assert set(out) == {"out"}
    np.testing.assert_array_equal(out["out"], np.cumsum(x, dtype=np.float64).astype(np.float32))
    twice = vyre_xdsl.parse(str(module))
    VyreCoarsenReductionsPass(k=4, reassociate_floats=True).apply(Context(), twice)
    assert str(twice) == str(module)


def test_reduce_then_scan_through_the_pipeline_options():
    """With the pipeline's defaults (k chosen, min-workgroups 1024) on 2^20 + 3
    elements: the first level and the add-back are both split (4097 blocks, k = 4)."""
    from vyre_xdsl.passes.pipeline import VyreToKernelPass

    lowered = vyre_xdsl.parse(workloads_module().scan_text((1 << 20) + 3))
    VyreToKernelPass(coarsen_reductions=True, reassociate_floats=True).apply(Context(), lowered)
    text = str(lowered)
    assert "local0" not in text
    grids_seen = re.findall(r"grid (?:explicit )?\[(\d+), 1, 1\]", text)
    assert grids_seen.count("1025") == 2, grids_seen


def still_scans_into(module, local):
    return any(op.name == "vyre.store" and op.buffer_name == local for op in module.walk())


def test_local_read_by_a_second_program_is_not_split(capsys):
    n = 100_003
    text = multi_scan_text(n, "ui32", "add")
    text += f"""vyre.program @peek workgroup_size [256, 1, 1] {{
  vyre.buffer @local0 binding 0 read_only : ui32[{n}]
  vyre.buffer @seen binding 1 write_only : ui32[{n}]
  %i = vyre.invocation_id x
  %v = vyre.load @local0[%i] : ui32
  vyre.store @seen[%i] = %v : ui32
}}
"""
    module = coarsened(text, k=4, remarks=True)
    assert "@local0 is declared by 3 programs" in capsys.readouterr().err
    assert still_scans_into(module, "local0")
    assert grids(module)[0] == (98, 1, 1)  # the per-level coarsening still applies
    x = scan_data("ui32", n, "add", 3)
    out = vyre_xdsl.run(module, {"x": x}, backend="reference")
    np.testing.assert_array_equal(out["out"], numpy_scan("add", x))
    np.testing.assert_array_equal(out["seen"], block_scans("add", x, 256)[0])


def test_local_that_is_an_output_is_not_split(capsys):
    n = 100_003
    text = multi_scan_text(n, "ui32", "add").replace(
        f"vyre.buffer @local0 binding 1 write_only : ui32[{n}]",
        f"vyre.buffer @local0 binding 1 write_only output : ui32[{n}]",
    )
    assert "write_only output" in text
    module = coarsened(text, k=4, remarks=True)
    assert "@local0 is marked output" in capsys.readouterr().err
    assert still_scans_into(module, "local0")
    x = scan_data("ui32", n, "add", 4)
    out = vyre_xdsl.run(module, {"x": x}, backend="reference")
    np.testing.assert_array_equal(out["out"], numpy_scan("add", x))
    np.testing.assert_array_equal(out["local0"], block_scans("add", x, 256)[0])


def test_input_written_between_the_scan_and_the_add_back_is_not_split(capsys):
    """A program between the first level and its add-back doubles x in place: the
    add-back may not scan x again."""
    n = 100_003
    text = multi_scan_text(n, "ui32", "add")
    double = f"""vyre.program @double workgroup_size [256, 1, 1] {{
  vyre.buffer @x binding 0 read_write : ui32[{n}]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %d = vyre.add %v, %v : ui32
  vyre.store @x[%i] = %d : ui32
}}
"""
    at = text.index("vyre.program @add1")
    text = text[:at] + double + text[at:]
    module = coarsened(text, k=4, remarks=True)
    assert "@x, which the scan reads, is read_write in @double" in capsys.readouterr().err
    assert still_scans_into(module, "local0")
    x = scan_data("ui32", n, "add", 6)
    out = vyre_xdsl.run(module, {"x": x}, backend="reference")
    np.testing.assert_array_equal(out["out"], numpy_scan("add", x))


def test_float_add_without_permission_is_not_split(capsys):
    text = workloads_module().scan_text(100_003)
    unchanged(text, "reassociate-floats=true", capsys, k=4)


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        # the carried prefix of the block itself, not of the ones before
        (("%c = vyre.load @local2[%b]", "%c = vyre.load @local2[%block]"), "x / 256 - 1"),
        # a block of 128 while the scan's is 256
        (("%sh = vyre.const 8 : ui32", "%sh = vyre.const 7 : ui32"), "x / 256 - 1"),
        # another combine than the scan's
        (("%s = vyre.add %v, %add", "%s = vyre.max %v, %add"), "combines with 'max'"),
        # block 0 gets 1, not the identity
        (("%e = vyre.const 0 : ui32", "%e = vyre.const 1 : ui32"), "not the identity"),
    ],
)
def test_add_back_shapes_that_are_not_split(capsys, edit, reason):
    text = multi_scan_text(100_003, "ui32", "add")
    at = text.index("vyre.program @add1")
    old, new = edit
    assert old in text[at:]
    text = text[:at] + text[at:].replace(old, new, 1)
    module = coarsened(text, k=4, remarks=True)
    err = capsys.readouterr().err
    assert "scan not split into reduce-then-scan" in err and reason in err
    assert still_scans_into(module, "local1")


def test_reduce_then_scan_random_sizes_on_the_reference_backend():
    rng = np.random.default_rng(17)
    for _ in range(8):
        op = str(rng.choice(["add", "max"]))
        element = str(rng.choice(["ui32", "si32", "f32"]))
        width = int(rng.choice([32, 64, 128, 256]))
        k = int(rng.choice([k for k in (2, 4, 8, 16) if width % k == 0 and width // k >= 1]))
        n = int(rng.integers(2 * width + 1, 40 * width * width))
        form = str(rng.choice(["identity", "select", "div"]))
        module = coarsened(
            multi_scan_text(n, element, op, width, form), k=k, reassociate_floats=True
        )
        assert not still_scans_into(module, "local0"), (op, element, n, width, k)
        x = scan_data(element, n, op, int(rng.integers(1 << 30)))
        out = vyre_xdsl.run(module, {"x": x}, backend="reference")["out"]
        np.testing.assert_array_equal(
            out, numpy_scan(op, x), err_msg=f"{op} {element} {n} {width} {k}"
        )


@pytest.mark.parametrize("fuse", ["force"])
def test_reduce_then_scan_forced_fusion_on_the_gpu(fuse):
    n = 200_003
    x = scan_data("si32", n, "add", 13)
    module = coarsened(multi_scan_text(n, "si32", "add"), k=8)
    assert not still_scans_into(module, "local0")
    out = vyre_xdsl.run(module, {"x": x}, backend="wgpu", fuse=fuse)["out"]
    np.testing.assert_array_equal(out, numpy_scan("add", x))


def test_add_back_with_another_declaration_is_not_split(capsys):
    """The rewritten add-back declares only what it reads and writes: an add-back
    that declares another buffer (here an output nobody writes, zero-filled) keeps
    its form, so that the module's outputs stay the same."""
    n = 100_003
    text = multi_scan_text(n, "ui32", "add").replace(
        f"vyre.buffer @out binding 2 write_only : ui32[{n}]",
        f"vyre.buffer @out binding 2 write_only : ui32[{n}]\n"
        "  vyre.buffer @unused binding 3 write_only : ui32[8]",
    )
    assert "@unused" in text
    module = coarsened(text, k=4, remarks=True)
    assert "@add0 also declares @unused" in capsys.readouterr().err
    assert still_scans_into(module, "local0")
    x = scan_data("ui32", n, "add", 8)
    out = vyre_xdsl.run(module, {"x": x}, backend="reference")
    np.testing.assert_array_equal(out["out"], numpy_scan("add", x))
    np.testing.assert_array_equal(out["unused"], np.zeros(8, np.uint32))


def test_the_add_back_declares_only_what_it_uses():
    """The scan level declares a buffer its leaf does not read: the add-back does
    not inherit it."""
    n = 100_003
    text = multi_scan_text(n, "ui32", "add").replace(
        f"vyre.buffer @local0 binding 1 write_only : ui32[{n}]",
        f"vyre.buffer @local0 binding 1 write_only : ui32[{n}]\n"
        "  vyre.buffer @spare binding 3 read_only : ui32[4]",
        1,
    )
    module = coarsened(text, k=4)
    add0 = next(p for p in programs(module) if p.sym_name.data == "add0")
    assert [b.buffer_name for b in add0.buffers()] == [
        "x",
        "scanned1",
        "out",
        "tile_scan0",
        "tile_scan0_totals",
    ]
    x = scan_data("ui32", n, "add", 10)
    spare = np.arange(4, dtype=np.uint32)
    out = vyre_xdsl.run(module, {"x": x, "spare": spare}, backend="reference")
    np.testing.assert_array_equal(out["out"], numpy_scan("add", x))


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_reduce_then_scan_of_a_computed_leaf(backend):
    """The first level scans 2 i (no buffer read): the add-back computes the same
    leaves again and declares no input of its own."""
    n = 70_001
    text = multi_scan_text(n, "ui32", "add")
    old = "%v = vyre.load @x[%i] : ui32"
    assert text.count(old) == 1
    module = coarsened(text.replace(old, "%v = vyre.add %i, %i : ui32"), k=8)
    add0 = next(p for p in programs(module) if p.sym_name.data == "add0")
    assert [b.buffer_name for b in add0.buffers()] == [
        "scanned1",
        "out",
        "tile_scan0",
        "tile_scan0_totals",
    ]
    x = np.zeros(n, np.uint32)
    out = vyre_xdsl.run(module, {"x": x}, backend=backend)["out"]
    leaves = 2 * np.arange(n, dtype=np.uint32)
    np.testing.assert_array_equal(out, numpy_scan("add", leaves))


# ------------------------------------------------------------- inputs-only


def producer_and_tree(n, op, element):
    """`y = x * x` in a program of its own, a tree over @y (levels @ylevel*,
    result @yout), and a tree over the module input @x (result @out)."""
    square = f"""vyre.program @square workgroup_size [256, 1, 1] {{
  vyre.buffer @x binding 0 read_only : {element}[{n}]
  vyre.buffer @y binding 1 write_only : {element}[{n}]
  %i = vyre.invocation_id x
  %a = vyre.load @x[%i] : {element}
  %b = vyre.mul %a, %a : {element}
  vyre.store @y[%i] = %b : {element}
}}
"""
    fed = tree(n, op, element).replace("level", "ylevel").replace("@x[", "@y[")
    fed = fed.replace("@x ", "@y ").replace("@r", "@yr").replace("@out", "@yout")
    return square + fed + tree(n, op, element)


def test_inputs_only_coarsens_the_levels_that_read_module_inputs(capsys):
    n = 100_000  # 391 workgroups of 256; k = 4: 98
    text = producer_and_tree(n, "min", "ui32")
    module = coarsened(text, k=4, inputs_only=True, remarks=True)
    grids_by_name = {p.sym_name.data: p.explicit_grid for p in programs(module)}
    # only the first level of the tree over @x: its leaf reads nothing a program writes
    assert {name for name, grid in grids_by_name.items() if grid is not None} == {"level0"}
    assert list(grids_by_name["level0"]) == [98, 1, 1]
    err = capsys.readouterr().err
    assert "left for after fusion (inputs-only): its leaf reads @y, which @square writes" in err
    assert "its leaf reads @r0, which @level0 writes before it" in err
    assert "its leaf reads @yr0, which @ylevel0 writes before it" in err
    # the plain pass after it coarsens the rest: the same module as the plain pass alone
    VyreCoarsenReductionsPass(k=4).apply(Context(), module)
    module.verify()
    assert str(module) == str(coarsened(text, k=4))
    x = data("ui32", n, "min", seed=4)
    out = vyre_xdsl.run(module, {"x": x}, backend="reference")
    assert out["out"][0] == x.min()
    assert out["yout"][0] == (x * x).min()


def test_inputs_only_keeps_the_float_rule(capsys):
    text = tree(100_000, "add", "f32")
    unchanged(text, "reassociate-floats=true", capsys, k=4, inputs_only=True)
    allowed = coarsened(text, k=4, inputs_only=True, reassociate_floats=True)
    assert grids(allowed)[0] is not None and grids(allowed)[1] is None


def test_inputs_only_scans_and_reduce_then_scan():
    n = 1 << 17  # 512 blocks of 256: the first scan level and its add-back split, k = 4
    text = multi_scan_text(n, "ui32", "add")
    early = coarsened(text, k=4, inputs_only=True)
    # the scan of @x is split into reduce-then-scan with its add-back; the scan of
    # its block totals (which the first level writes) is left for the run after fusion
    early_grids = {p.sym_name.data: p.explicit_grid for p in programs(early)}
    assert list(early_grids["scan0"]) == list(early_grids["add0"]) == [128, 1, 1]
    assert early_grids["scan1"] is None and early_grids["add1"] is None
    assert split_pairs(early)[1] == ["local1", "local2"]  # local0 is gone
    VyreCoarsenReductionsPass(k=4).apply(Context(), early)
    early.verify()
    assert str(early) == str(coarsened(text, k=4))
    x = scan_data("ui32", n, "add", seed=2)
    out = vyre_xdsl.run(early, {"x": x}, backend="reference")["out"]
    np.testing.assert_array_equal(out, numpy_scan("add", x))


# ---------------------------------------------------------------- scans on subgroup shuffles

#: subgroup sizes the reference backend simulates: the powers of two a GPU may
#: have (4 to 128), one that holds no whole segment, and sizes that are no power
#: of two (the scan then passes every total through workgroup memory)
SUBGROUP_SIZES = [1, 4, 8, 12, 32, 64, 128]


def on_subgroups(module):
    return any(op.name == "vyre.subgroup_shuffle" for op in module.walk())


@pytest.mark.parametrize(("op", "element", "n", "width", "k", "form"), SCAN_CASES)
def test_subgroup_scan_level_agrees_with_numpy_at_every_subgroup_size(
    op, element, n, width, k, form
):
    """`subgroups=true`: the invocation totals are scanned on subgroup shuffles
    within pieces of min(subgroup size, segment) invocations, the pieces joined
    through workgroup memory. Whatever the subgroup size, every block scan and
    total is numpy's; segments that are no power of two (96 / 4 = 24), one
    invocation per block and idempotent combines (no identity) keep the barrier
    form."""
    text = scan_block_text("scan0", "x", "dst", "sums", n, element, op, width, form)
    x = scan_data(element, n, op)
    scanned, totals = block_scans(op, x, width)
    module = coarsened(text, k=k, reassociate_floats=True, subgroups=True)
    segment = width // k
    shuffles = segment > 1 and segment & (segment - 1) == 0 and op not in ("min", "max")
    assert on_subgroups(module) == shuffles
    assert grids(module) == [(math.ceil(math.ceil(n / width) / k), 1, 1)]
    for size in SUBGROUP_SIZES if shuffles else [32]:
        out = vyre_xdsl.run(module, {"x": x}, backend="reference", subgroup_size=size)
        np.testing.assert_array_equal(out["dst"], scanned, err_msg=f"subgroup size {size}")
        np.testing.assert_array_equal(out["sums"], totals, err_msg=f"subgroup size {size}")


@pytest.mark.parametrize(("op", "element", "n", "width", "k", "form", "levels"), RTS_CASES)
def test_subgroup_reduce_then_scan_agrees_with_numpy(op, element, n, width, k, form, levels):
    """Reduce-then-scan with `subgroups=true`, on the reference backend at every
    subgroup size and on wgpu (lavapipe: subgroups of 8, so a segment of 32 or 64
    invocations spans several and the pieces meet in workgroup memory)."""
    module = coarsened(
        rts_text(op, element, n, width, form), k=k, reassociate_floats=True, subgroups=True
    )
    assert on_subgroups(module) == (op == "add")
    assert split_pairs(module)[1] == [f"local{levels - 1}"]
    x = scan_data(element, n, op, 5)
    expected = numpy_scan(op, x)
    for size in SUBGROUP_SIZES:
        out = vyre_xdsl.run(module, {"x": x}, backend="reference", subgroup_size=size)["out"]
        np.testing.assert_array_equal(out, expected, err_msg=f"subgroup size {size}")
    out = vyre_xdsl.run(module, {"x": x}, backend="wgpu")["out"]
    np.testing.assert_array_equal(out, expected)


def test_subgroup_scan_uses_one_barrier_for_its_totals():
    """The reduce half stores only its block totals: with subgroups its workgroup
    memory is one slot per invocation, stored first at `local_id x` (so lowering
    need not zero it), and it has one barrier where the barrier form has one per
    Hillis-Steele step plus one."""
    text = workloads_module().scan_text(1 << 16)
    plain = coarsened(text, k=8, reassociate_floats=True)
    shuffled = coarsened(text, k=8, reassociate_floats=True, subgroups=True)

    def level0(module):
        program = programs(module)[0]
        barriers = sum(op.name == "vyre.barrier" for op in program.walk())
        (tile,) = [b for b in program.buffers() if b.is_workgroup]
        return barriers, tile.static_count

    assert level0(plain) == (6, 512)  # 5 steps for segments of 32, and the store
    assert level0(shuffled) == (1, 256)
    lowered = vyre_xdsl.parse(str(shuffled))
    from vyre_xdsl.passes.pipeline import VyreToKernelPass

    VyreToKernelPass(reassociate_floats=True).apply(Context(), lowered)
    first = next(
        op for op in lowered.walk() if op.name == "kernel.binding" and " shared " in str(op)
    )
    assert "@tile_scan0" in str(first) and "{written_first}" in str(first)


def test_subgroups_come_from_the_pipeline_and_the_device_profile():
    """`vyre-to-kernel{subgroups=true}` hands the option to vyre-coarsen-reductions,
    `vyre_to_kernel(profile=...)` takes it from the profile, and a wgpu device
    with the "subgroup" feature (lavapipe has it) says so in its profile, so
    that an integer scan compiled for it runs on subgroup shuffles: numpy's."""
    from vyre_xdsl.passes.pipeline import VyreToKernelPass, vyre_to_kernel
    from vyre_xdsl.runtime.device import gpu_device
    from vyre_xdsl.target_profile import TargetProfile

    assert VyreToKernelPass(subgroups=True).coarsen_pass().subgroups
    assert not VyreToKernelPass().coarsen_pass().subgroups
    assert vyre_to_kernel(profile=TargetProfile(subgroups=True)).subgroups
    assert not vyre_to_kernel().subgroups
    gpu = gpu_device()
    assert gpu.target_profile.subgroups == ("subgroup" in gpu.features)
    n = 300_001
    x = scan_data("si32", n, "add", 3)
    exe = vyre_xdsl.compile(multi_scan_text(n, "si32", "add"), backend="wgpu")
    wgsl = "\n".join(kernel.wgsl for kernel in exe.compiled.kernels)
    assert ("subgroupShuffle" in wgsl) == gpu.target_profile.subgroups
    np.testing.assert_array_equal(exe.run({"x": x})["out"], numpy_scan("add", x))


@pytest.mark.parametrize("subgroups", [False, True])
def test_a_swizzled_staging_area_is_not_zeroed_first(subgroups):
    """Blocks of 256 with k = 8: the add-back stages its 2048 elements at
    swizzled slots, all stored before the first barrier, so lowering marks its
    tile `written_first` (no zeroing). The totals' own buffer is too with
    subgroups (one slot per invocation, stored at `local_id x`); the barrier
    form's two halves are zeroed."""
    from vyre_xdsl.passes.pipeline import VyreToKernelPass

    module = coarsened(
        workloads_module().scan_text(1 << 16), k=8, reassociate_floats=True, subgroups=subgroups
    )
    VyreToKernelPass(reassociate_floats=True).apply(Context(), module)
    add0 = next(op for op in module.walk() if op.name == "kernel.descriptor" and "@add0" in str(op))
    marked = {
        b.buffer_name: "written_first" in b.attributes for b in add0.bindings() if not b.is_host
    }
    assert marked == {"tile_scan0": True, "tile_scan0_totals": subgroups}
