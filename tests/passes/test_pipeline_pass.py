"""The named pipeline `vyre-to-kernel` / `vyre-to-wgsl` (vyre_xdsl.passes.pipeline):
the same output as the `--fuse --lower` shortcuts on every example, verification after
each step (off with --disable-verify), and no module verified, cloned or printed twice
in one stage of a run."""

from __future__ import annotations

import contextlib
import importlib
import io
from collections import Counter

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.printer import Printer

import vyre_xdsl.diagnostics
from vyre_xdsl.passes import get_all_passes
from vyre_xdsl.passes.pipeline import VyreToKernelPass, VyreToWgslPass, expand
from vyre_xdsl.tools.pipeline import build_pipeline
from vyre_xdsl.tools.vyre_opt import VyreOptMain, run_tool

from .. import support

EXAMPLES = sorted(support.EXAMPLES.glob("*.mlir"))
CHAIN = """
vyre.program @a workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[256]
  vyre.buffer @t binding 1 read_write : f32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f32
  %w = vyre.add %v, %v : f32
  vyre.store @t[%i] = %w : f32
}
vyre.program @b workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : f32[256]
  vyre.buffer @y binding 1 read_write : f32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @t[%i] : f32
  %w = vyre.mul %v, %v : f32
  vyre.store @y[%i] = %w : f32
}
"""


def opt(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run_tool(VyreOptMain, [str(a) for a in argv])
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_pipeline_prints_what_the_shortcuts_print(example):
    # --lower is plain vyre-lower: the pipeline adds kernel-vectorize and kernel-coarsen
    record = ["-p", "kernel-vectorize,kernel-coarsen"]
    for shortcuts, pipeline in (
        (
            ["--fuse", "--lower", *record, "-t", "wgsl"],
            ["-p", "vyre-to-wgsl{fuse=true}", "-t", "wgsl"],
        ),
        (["--lower", *record, "-t", "wgsl"], ["-p", "vyre-to-wgsl", "-t", "wgsl"]),
        (["--fuse", "--lower", *record], ["-p", "vyre-to-kernel{fuse=true}"]),
        (["--lower", *record], ["-p", "vyre-to-kernel"]),
    ):
        before = opt(example, *shortcuts)
        assert before[0] == 0, before[2]
        assert opt(example, *pipeline) == before, (shortcuts, pipeline)


def test_pipeline_options_and_steps():
    (pass_,) = build_pipeline(
        "vyre-to-kernel{fuse=true subgroup-size=8 max-storage-buffers=16 elide-clears=false}",
        get_all_passes(),
    )
    names = [step.name for step in pass_.steps()]
    assert names == [
        "convert-to-vyre",
        "vyre-inline",
        "vyre-scalar-replace",
        "vyre-coarsen-reductions",
        "vyre-fuse",
        "vyre-coarsen-reductions",
        "vyre-elide-bounds-selects",
        "vyre-split-grid-sync",
        "vyre-privatize-atomics",
        "vyre-lower",
        "kernel-vectorize",
        "kernel-coarsen",
        "kernel-verify",
    ]
    # coarsened before fusion: only the levels fed by module inputs; after it, the rest
    before, after = pass_.steps()[3], pass_.steps()[5]
    assert before.inputs_only is True and after.inputs_only is False
    privatize, lower, verify = pass_.steps()[8], pass_.steps()[9], pass_.steps()[-1]
    assert lower.subgroup_size == 8 and lower.max_storage_buffers == 16
    assert verify.subgroup_size == 8 and verify.max_storage_buffers == 16
    # the pipeline privatizes as a step of its own, with the profile's workgroup storage
    assert lower.privatize_atomics is False
    assert privatize.max_workgroup_storage == 16384
    assert [s.name for s in VyreToWgslPass().steps()] == [
        "convert-to-vyre",
        "vyre-inline",
        "vyre-scalar-replace",
        "vyre-coarsen-reductions",
        "vyre-elide-bounds-selects",
        "vyre-split-grid-sync",
        "vyre-privatize-atomics",
        "vyre-lower",
        "kernel-elide-clears",
        "kernel-vectorize",
        "kernel-coarsen",
        "kernel-verify",
    ]
    # without coarsening, fusion alone; forced fusion coarsens nothing before it
    plain = VyreToKernelPass(fuse=True, coarsen_reductions=False)
    assert [s.name for s in plain.steps()][3:5] == ["vyre-fuse", "vyre-elide-bounds-selects"]
    assert [(s.name, s.force) for s in VyreToKernelPass().fusion_steps(force=True)] == [
        ("vyre-fuse", True)
    ]
    # float permission reaches both runs
    both = VyreToKernelPass(fuse=True, reassociate_floats=True).steps()
    assert [s.reassociate_floats for s in (both[3], both[5])] == [True, True]
    assert [p.name for p in expand([VyreToKernelPass(), lower])][-2:] == [
        "kernel-verify",
        "vyre-lower",
    ]


def test_help_lists_the_pipeline():
    status, out, _ = opt("--help")
    assert status == 0
    assert "vyre-to-kernel" in out and "vyre-to-wgsl" in out
    assert "fuse=bool (default false)" in " ".join(out.split())


def test_profile_option_reaches_kernel_verify(tmp_path):
    path = tmp_path / "chain.mlir"
    path.write_text(CHAIN)
    status, _, err = opt(path, "-p", "vyre-to-kernel{max-invocations=32}")
    assert status == 1
    assert "chain.mlir:" in err and "the target profile allows 32" in err


def test_each_step_is_seen_by_the_driver(tmp_path):
    path = tmp_path / "chain.mlir"
    path.write_text(CHAIN)
    status, out, err = opt(
        path, "-p", "vyre-to-kernel{fuse=true}", "--mlir-print-ir-after=vyre-fuse", "--time-passes"
    )
    assert status == 0
    assert "IR Dump After vyre-fuse" in err and "vyre.program @fused_a_b" in err
    assert "Pass vyre-fuse took" in err and "Pass vyre-lower took" in err
    assert "kernel.descriptor" in out


def containers(tally: Counter[str]) -> Counter[str]:
    """The counts of modules, programs and descriptors (lowering builds the kernel
    body from copies of the arithmetic ops, one each)."""
    kinds = ("builtin.module", "vyre.program", "kernel.descriptor")
    return Counter({name: n for name, n in tally.items() if name in kinds})


def test_print_ir_around_the_pipeline_by_its_name(tmp_path):
    path = tmp_path / "chain.mlir"
    path.write_text(CHAIN)
    status, _, err = opt(
        path,
        "-p",
        "vyre-to-wgsl{fuse=true}",
        "--mlir-print-ir-before=vyre-to-wgsl",
        "--mlir-print-ir-after=vyre-to-wgsl",
    )
    assert status == 0, err
    headers = [line for line in err.splitlines() if "IR Dump" in line]
    assert headers == [
        "// -----// IR Dump Before convert-to-vyre //----- //",
        "// -----// IR Dump After kernel-verify //----- //",
    ]


class Counting:
    """Counts the outermost verify/clone calls per op kind, and the modules printed."""

    def __init__(self, monkeypatch):
        self.verified: Counter[str] = Counter()
        self.cloned: Counter[str] = Counter()
        self.printed = 0
        self.after_pass: list[str] = []
        depth = {"verify": 0, "clone": 0}
        verify, clone, print_op = Operation.verify, Operation.clone, Printer.print_op
        after = vyre_xdsl.diagnostics.verify_after_pass

        def counted(kind, original, tally):
            def wrapper(op, *args, **kwargs):
                if depth[kind] == 0:
                    tally[op.name] += 1
                depth[kind] += 1
                try:
                    return original(op, *args, **kwargs)
                finally:
                    depth[kind] -= 1

            return wrapper

        def printing(printer, op, *args, **kwargs):
            if isinstance(op, ModuleOp):
                self.printed += 1
            return print_op(printer, op, *args, **kwargs)

        def verify_after(module, name):
            self.after_pass.append(name)
            return after(module, name)

        monkeypatch.setattr(Operation, "verify", counted("verify", verify, self.verified))
        monkeypatch.setattr(Operation, "clone", counted("clone", clone, self.cloned))
        monkeypatch.setattr(Printer, "print_op", printing)
        import vyre_xdsl.conversion as conversion
        import vyre_xdsl.diagnostics as diagnostics
        import vyre_xdsl.passes.pipeline as pipeline
        import vyre_xdsl.tools.vyre_opt as vyre_opt

        # where it is called by the name it was imported as (vyre-fuse's
        # `fused_copy` imports it from diagnostics when it runs)
        for module in (diagnostics, conversion, pipeline, vyre_opt):
            monkeypatch.setattr(module, "verify_after_pass", verify_after)


def test_verified_after_each_step_once(tmp_path, monkeypatch):
    path = tmp_path / "chain.mlir"
    path.write_text(CHAIN)
    count = Counting(monkeypatch)
    status, out, err = opt(path, "-p", "vyre-to-wgsl{fuse=true}", "-t", "wgsl")
    assert status == 0, err
    assert "@compute" in out
    # after parsing, after vyre-fuse, vyre-lower, kernel-elide-clears, kernel-vectorize
    # (the chain is elementwise) and kernel-verify; kernel-coarsen has nothing to do
    after = ["vyre-fuse", "vyre-lower", "kernel-elide-clears", "kernel-vectorize", "kernel-verify"]
    assert count.after_pass == after
    assert count.verified == Counter({"builtin.module": 6})
    # each program is copied once, into its arm of the fused program; the target prints
    # the verified module as it is (no copy, no verification, no printed module)
    assert containers(count.cloned) == Counter({"vyre.program": 2})
    assert count.printed == 0


def test_disable_verify_verifies_nothing(tmp_path, monkeypatch):
    path = tmp_path / "chain.mlir"
    path.write_text(CHAIN)
    count = Counting(monkeypatch)
    status, out, err = opt(path, "--disable-verify", "--fuse", "--lower", "-t", "wgsl")
    assert status == 0, err
    assert count.after_pass == []
    # the WGSL target checks the module it was given, once, since nothing else did
    assert count.verified == Counter({"builtin.module": 1})


def test_shortcuts_verify_each_stage_once(tmp_path, monkeypatch):
    path = tmp_path / "chain.mlir"
    path.write_text(CHAIN)
    count = Counting(monkeypatch)
    status, _, err = opt(path, "--fuse", "--lower", "-t", "wgsl")
    assert status == 0, err
    assert count.after_pass == ["vyre-fuse", "vyre-lower"]
    assert count.verified == Counter({"builtin.module": 3})
    assert containers(count.cloned) == Counter({"vyre.program": 2})


def test_pipeline_as_one_pass_verifies_after_each_step(monkeypatch):
    from vyre_xdsl.context import parse_module, vyre_context

    module = parse_module(CHAIN, "chain.mlir")
    count = Counting(monkeypatch)
    VyreToKernelPass(fuse=True).apply(vyre_context(), module)
    after = ["vyre-fuse", "vyre-lower", "kernel-elide-clears", "kernel-vectorize", "kernel-verify"]
    assert count.after_pass == after
    assert [op.name for op in module.ops] == ["kernel.descriptor"]


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_compile_verifies_copies_and_prints_each_stage_once(monkeypatch, backend):
    import importlib

    import numpy as np

    import vyre_xdsl

    execute = importlib.import_module("vyre_xdsl.runtime.execute")

    monkeypatch.setattr(execute, "_COMPILED", type(execute._COMPILED)())  # compile afresh
    count = Counting(monkeypatch)
    exe = vyre_xdsl.compile(CHAIN, backend=backend, fuse=True)
    # parsed, then fused (on a copy, verified after the pass); on wgpu the fused
    # module is printed once (the kernel cache's key) and lowered on a copy
    assert count.verified == Counter({"builtin.module": 2})
    assert count.after_pass == ["vyre-fuse"]
    lowered = 1 if backend == "wgpu" else 0
    assert containers(count.cloned) == Counter({"builtin.module": 1 + lowered, "vyre.program": 2})
    assert count.printed == lowered
    zeros = np.zeros(256, dtype=np.float32)
    x = np.arange(256, dtype=np.float32)
    out = exe.run({"x": x, "t": zeros, "y": zeros})
    np.testing.assert_allclose(out["y"], (2 * x) ** 2)
    assert count.verified == Counter({"builtin.module": 2})  # running checks nothing again


SQUARE = """vyre.program @square workgroup_size [256, 1, 1] {{
  vyre.buffer @x binding 0 read_only : {e}[{n}]
  vyre.buffer @y binding 1 write_only : {e}[{n}]
  %i = vyre.invocation_id x
  %a = vyre.load @x[%i] : {e}
  %b = vyre.mul %a, %a : {e}
  vyre.store @y[%i] = %b : {e}
}}
"""


def first_dispatch(text: str, **options) -> tuple[str, str]:
    """(name, grid x) of the first kernel the pipeline makes of `text`."""
    import re

    from vyre_xdsl.context import parse_module, vyre_context

    module = parse_module(text, "tree.mlir")
    VyreToKernelPass(**options).apply(vyre_context(), module)
    descriptor = next(op for op in module.ops if op.name == "kernel.descriptor")
    dispatch = next(op for op in descriptor.walk() if op.name == "kernel.dispatch")
    grid = re.search(r" grid (?:explicit )?\[(\d+), 1, 1\]", str(dispatch))
    assert grid is not None
    return descriptor.sym_name.data, grid.group(1)


def test_tree_reductions_are_coarsened_by_default_after_fusion():
    from .test_coarsen_reductions import tree

    n = 1 << 20  # 4096 workgroups of 256; coarsened: k = 4, 1024 workgroups
    assert first_dispatch(tree(n, "min", "ui32")) == ("level0", "1024")
    assert first_dispatch(tree(n, "min", "ui32"), coarsen_reductions=False) == ("level0", "4096")
    # float add only with permission (regrouping changes the rounding)
    assert first_dispatch(tree(n, "add", "f32")) == ("level0", "4096")
    assert first_dispatch(tree(n, "add", "f32"), reassociate_floats=True) == ("level0", "1024")
    # an elementwise producer fuses into the first level, which is coarsened after
    behind = SQUARE.format(e="ui32", n=n) + tree(n, "add", "ui32").replace("@x", "@y")
    assert first_dispatch(behind, fuse=True) == ("fused_square_level0", "1024")
    assert first_dispatch(behind, fuse=True, coarsen_reductions=False) == (
        "fused_square_level0",
        "4096",
    )


def dispatches(text: str, **options) -> list[tuple[str, str]]:
    """(name, grid x) of every kernel the pipeline makes of `text`."""
    import re

    from vyre_xdsl.context import parse_module, vyre_context

    module = parse_module(text, "tree.mlir")
    VyreToKernelPass(**options).apply(vyre_context(), module)
    found = []
    for descriptor in (op for op in module.ops if op.name == "kernel.descriptor"):
        dispatch = next(op for op in descriptor.walk() if op.name == "kernel.dispatch")
        grid = re.search(r" grid (?:explicit )?\[(\d+), 1, 1\]", str(dispatch))
        assert grid is not None
        found.append((descriptor.sym_name.data, grid.group(1)))
    return found


def beside(n: int, element: str = "ui32") -> str:
    """An elementwise program the tree does not read (`w = x * x`), before it."""
    return SQUARE.format(e=element, n=n).replace("@square", "@beside").replace("@y", "@w")


def test_a_program_beside_the_first_level_does_not_stop_its_coarsening():
    from .test_coarsen_reductions import tree

    n = 1 << 20  # 4096 workgroups of 256; coarsened: k = 4, 1024 workgroups
    module = beside(n) + tree(n, "min", "ui32")
    # the level reads only the module input @x: coarsened before vyre-fuse, whose
    # explicit grid keeps @beside apart (vectorized: 4 elements per invocation)
    assert dispatches(module, fuse=True) == [
        ("beside", "1024"),
        ("level0", "1024"),
        ("level1", "16"),
        ("level2", "1"),
    ]
    # not coarsened first, @beside fuses into the level, which is no tree level then
    assert dispatches(module, fuse=True, coarsen_reductions=False)[0] == (
        "fused_beside_level0",
        "4096",
    )
    # float add: the rule is unchanged (only with permission), before fusion too
    floats = beside(n, "f32") + tree(n, "add", "f32")
    assert dispatches(floats, fuse=True)[0] == ("fused_beside_level0", "4096")
    assert dispatches(floats, fuse=True, reassociate_floats=True)[:2] == [
        ("beside", "1024"),
        ("level0", "1024"),
    ]


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_fused_and_coarsened_producer_and_tree_agree_with_numpy(backend):
    import numpy as np

    import vyre_xdsl

    from .test_coarsen_reductions import tree

    n = (1 << 19) + 77  # 2049 workgroups: k = 2 and a padded last workgroup
    x = np.random.default_rng(3).integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    behind = SQUARE.format(e="ui32", n=n) + tree(n, "add", "ui32").replace("@x", "@y")
    assert first_dispatch(behind, fuse=True) == ("fused_square_level0", "1025")
    out = vyre_xdsl.run(behind, {"x": x}, backend=backend, fuse=True)["out"]
    assert out[0] == np.add.reduce(x * x, dtype=np.uint32)


def lowered_run(kernel_ir: str, x) -> dict:
    """Run the kernel IR `vyre-opt -p vyre-to-kernel` printed on wgpu (every buffer
    but @x starts zeroed); every buffer it binds comes back."""
    import numpy as np

    from vyre_xdsl.backends.wgsl.compile import compile_module
    from vyre_xdsl.context import parse_module

    # the module, not the `execute` function the package exports under its name
    execute = importlib.import_module("vyre_xdsl.runtime.execute")
    kernels = compile_module(parse_module(kernel_ir, "lowered.mlir"))
    counts = {b.name: b.count for k in kernels for b in k.bindings}
    buffers = {name: np.zeros(count, np.uint32) for name, count in counts.items()}
    buffers["x"] = x
    return execute.run_kernels(kernels, buffers, uploads={"x"})


@pytest.mark.parametrize("case", ["tree", "producer", "beside"])
@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_two_phase_coarsening_agrees_with_numpy(backend, case, tmp_path):
    """A tree alone, behind a producer (fused into its first level, then
    coarsened) and beside an independent program (coarsened first, kept apart):
    every output equals numpy's, through `vyre_xdsl.compile(..., fuse=True)` and
    through `vyre-opt -p 'vyre-to-kernel{fuse=true}'`, and the tree is coarsened."""
    import numpy as np

    import vyre_xdsl

    from .test_coarsen_reductions import tree

    n = (1 << 19) + 77  # 2049 workgroups: k = 2 and a padded last workgroup
    x = np.random.default_rng(5).integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    text = {
        "tree": tree(n, "add", "ui32"),
        "producer": SQUARE.format(e="ui32", n=n) + tree(n, "add", "ui32").replace("@x", "@y"),
        "beside": beside(n) + tree(n, "add", "ui32"),
    }[case]
    square = x * x  # wrapping, as ui32 mul
    expected = {"out": np.add.reduce(square if case == "producer" else x, dtype=np.uint32)}
    if case == "beside":
        expected["w"] = square
    level = "fused_square_level0" if case == "producer" else "level0"

    # the API: the front end runs the pipeline's fusion steps, the backend the rest
    # (for the portable profile, as vyre-opt below: its 1024 resident workgroups
    # give k = 2; the device's own profile may choose another k,
    # tests/runtime/test_device_profile.py)
    exe = vyre_xdsl.compile(text, backend=backend, fuse=True, portable=True)
    out = exe.run({"x": x})
    assert sorted(out) == sorted(expected)
    for name, want in expected.items():
        np.testing.assert_array_equal(np.asarray(out[name]).reshape(-1), want, err_msg=name)
    if backend == "wgpu":
        grids = {kernel.source: kernel.static_grid[0] for kernel in exe.compiled.kernels}
        assert grids[level] == 1025  # coarsened by 2
        assert (case == "beside") == ("beside" in grids)  # a kernel of its own
    elif case != "producer":  # input-fed: coarsened by the front end, before fusion
        (first,) = [p for p in exe.module.ops if p.sym_name.data == level]
        assert first.explicit_grid is not None and list(first.explicit_grid) == [1025, 1, 1]

    # vyre-opt: the whole pipeline; the reference runs its vyre IR after the last
    # coarsening (what vyre-lower then lowers), wgpu its kernel IR
    source = tmp_path / "in.mlir"
    source.write_text(text)
    pipeline = "vyre-to-kernel{fuse=true}"
    status, kernel_ir, err = opt(
        source, "-p", pipeline, "--mlir-print-ir-after=vyre-coarsen-reductions"
    )
    assert status == 0, err
    dumps = err.split("// -----// IR Dump After vyre-coarsen-reductions //----- //")
    assert len(dumps) == 3  # before and after fusion
    if backend == "reference":
        out = vyre_xdsl.run(dumps[-1], {"x": x}, backend="reference")
    else:
        out = lowered_run(kernel_ir, x)
    for name, want in expected.items():
        np.testing.assert_array_equal(np.asarray(out[name]).reshape(-1), want, err_msg=name)
    assert f"vyre.program @{level} workgroup_size [256, 1, 1] grid [1025, 1, 1]" in dumps[-1]
    first_run_coarsened = "@level0 workgroup_size [256, 1, 1] grid [1025, 1, 1]" in dumps[1]
    assert first_run_coarsened == (case != "producer")
