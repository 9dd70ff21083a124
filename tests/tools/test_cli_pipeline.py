"""Pass pipelines from the command line (vyre_xdsl.tools.pipeline) and pass-named
verifier errors in vyre-opt."""

import dataclasses

import pytest
from xdsl.dialects.builtin import StringAttr
from xdsl.passes import ModulePass

from vyre_xdsl.dialects.vyre import BufferOp
from vyre_xdsl.passes import get_all_passes
from vyre_xdsl.tools.pipeline import PipelineError, build_pipeline, describe_passes, nearest_names
from vyre_xdsl.tools.vyre_opt import VyreOptMain, run_tool

AVAILABLE = get_all_passes()


def test_pipeline_with_options():
    fuse, lower = build_pipeline(
        "vyre-fuse{split-grid-sync=false},vyre-lower{subgroup-size=32}", AVAILABLE
    )
    assert fuse.name == "vyre-fuse" and fuse.split_grid_sync is False
    assert lower.name == "vyre-lower" and lower.subgroup_size == 32


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("vyre-fuze", "unknown pass 'vyre-fuze'; did you mean 'vyre-fuse'?"),
        (
            "vyre-fuse{split-grid-sync=maybe}",
            "option 'split-grid-sync' of pass 'vyre-fuse' takes a bool (true or false), got 'maybe'",
        ),
        (
            "vyre-lower{max-invocations=1.5}",
            "option 'max-invocations' of pass 'vyre-lower' takes an integer, got '1.5'",
        ),
        (
            "vyre-fuse{split_grid=true}",
            "pass 'vyre-fuse' has no option 'split_grid'; its options are split-grid-sync=bool (default true)",
        ),
        ("vyre-fuse,,", "bad pass pipeline: Expected pass name here (column 11)"),
    ],
)
def test_pipeline_errors_name_what_was_typed(spec, message):
    with pytest.raises(PipelineError) as error:
        build_pipeline(spec, AVAILABLE)
    assert str(error.value).startswith(message)
    assert isinstance(error.value, ValueError)


def test_nearest_names():
    assert nearest_names("canonicalise", ["canonicalize", "cse", "dce"]) == ["canonicalize"]
    assert nearest_names("zzz", ["canonicalize", "cse"]) == []


def test_help_lists_vyre_passes_first_with_descriptions_and_options():
    text = describe_passes({**AVAILABLE, "cse": lambda: None}, first=AVAILABLE)
    lines = text.splitlines()
    assert lines[0].startswith("vyre passes")
    assert lines[1].split()[0] == next(iter(AVAILABLE))
    assert "split-grid-sync=bool (default true)" in text
    assert text.index("vyre-fuse") < text.index("other passes (1,") < text.index("  cse")


@dataclasses.dataclass(frozen=True)
class BreakBuffersPass(ModulePass):
    """A deliberately broken pass: every buffer becomes read_only."""

    name = "test-break-buffers"

    def apply(self, ctx, op):
        for buffer in op.walk():
            if isinstance(buffer, BufferOp):
                buffer.properties["access"] = StringAttr("read_only")


class BrokenOpt(VyreOptMain):
    def register_all_passes(self):
        super().register_all_passes()
        self.register_pass(BreakBuffersPass.name, lambda: BreakBuffersPass)


AXPY = """\
vyre.program @axpy workgroup_size [64, 1, 1] {
  vyre.buffer @y binding 0 read_write : f32[64]
  %i = vyre.invocation_id x
  %v = vyre.load @y[%i] : f32
  vyre.store @y[%i] = %v : f32
}
"""


def test_verifier_error_after_a_pass_names_the_pass(tmp_path, capsys):
    source = tmp_path / "axpy.mlir"
    source.write_text(AXPY)
    assert run_tool(BrokenOpt, ["-p", "cse,test-break-buffers,dce", str(source)]) == 1
    err = capsys.readouterr().err
    assert (
        f"{source}:5:3: error: IR fails to verify after pass 'test-break-buffers': store to read_only buffer @y"
        in err
    )
    # the same pass without the break verifies
    assert run_tool(BrokenOpt, ["-p", "cse,dce", str(source)]) == 0


def test_disable_verify_lets_a_pass_leave_bad_ir(tmp_path, capsys):
    source = tmp_path / "axpy.mlir"
    source.write_text(AXPY)
    argv = ["--disable-verify", "-p", "test-break-buffers", str(source)]
    assert run_tool(BrokenOpt, argv) == 0
    captured = capsys.readouterr()
    assert "vyre.buffer @y binding 0 read_only" in captured.out
    assert captured.err == ""


def test_verify_after_pass_names_the_pass():
    from vyre_xdsl.context import parse_module
    from vyre_xdsl.diagnostics import VyreDiagnostic, verify_after_pass

    module = parse_module(AXPY, "axpy.mlir")
    verify_after_pass(module, "cse")  # fine IR: no error
    BreakBuffersPass().apply(None, module)
    with pytest.raises(VyreDiagnostic) as error:
        verify_after_pass(module, "test-break-buffers")
    ((op, message),) = error.value.errors
    assert op.name == "vyre.store"
    assert (
        message
        == "IR fails to verify after pass 'test-break-buffers': store to read_only buffer @y"
    )
