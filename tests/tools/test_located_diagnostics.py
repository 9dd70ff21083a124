"""Every diagnostic about the source is located: duplicate symbols in the three
CLIs and in `vyre_xdsl.parse`, errors of `vyre-compile`'s fusion groups, errors
in fused modules (at the program header when the op was made by the pass), the
`str()` of a `VyreDiagnostic`, a loop variable used as an SSA value and a
`workgroup_size` with the wrong number of values. Expected lines and columns
are counted by hand in the sources below."""

from __future__ import annotations

import pytest

import vyre_xdsl
from vyre_xdsl.api import fuse_module
from vyre_xdsl.backends.wgsl import lowered_module
from vyre_xdsl.diagnostics import VyreDiagnostic
from vyre_xdsl.dialects.vyre import programs
from vyre_xdsl.target_profile import TargetProfile
from vyre_xdsl.tools import vyre_compile, vyre_run
from vyre_xdsl.tools.vyre_opt import VyreOptMain, run_tool

from ..support import EXAMPLES

PROGRAM = """vyre.program @p workgroup_size [4, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[4]
  %i = vyre.invocation_id x
  vyre.store @x[%i] = %i : ui32
}
"""

DUPLICATE = PROGRAM + PROGRAM  # the second header is at 6:1


@pytest.fixture
def duplicate(tmp_path) -> str:
    path = tmp_path / "dup.mlir"
    path.write_text(DUPLICATE)
    return str(path)


def first_line(capsys) -> str:
    return capsys.readouterr().err.splitlines()[0]


# ---------------------------------------------------------------- duplicate symbols


@pytest.mark.parametrize(
    "tool",
    [
        lambda path: run_tool(VyreOptMain, [path]),
        lambda path: vyre_run.main([path, "--backend", "reference", "--random-inputs", "0"]),
        lambda path, tmp="": vyre_compile.main([path, "--plan-dot", "-"]),
    ],
    ids=["vyre-opt", "vyre-run", "vyre-compile"],
)
def test_a_duplicate_program_name_is_located_at_its_second_definition(tool, duplicate, capsys):
    assert tool(duplicate) == 1
    assert first_line(capsys) == (
        f'{duplicate}:6:1: error: Redefinition of symbol "p" (first defined at {duplicate}:1:1)'
    )


def test_parse_locates_a_duplicate_program_name():
    with pytest.raises(VyreDiagnostic) as caught:
        vyre_xdsl.parse(DUPLICATE, "dup.mlir")
    assert (
        str(caught.value)
        == 'dup.mlir:6:1: Redefinition of symbol "p" (first defined at dup.mlir:1:1)'
    )


# ---------------------------------------------------------------- str(VyreDiagnostic)


def test_str_of_a_verifier_diagnostic_starts_with_its_location():
    text = PROGRAM.replace("read_write", "read_only")  # the store at 4:3 is refused
    with pytest.raises(VyreDiagnostic) as caught:
        vyre_xdsl.parse(text, "ro.mlir")
    assert str(caught.value).startswith("ro.mlir:4:3: ")


# ---------------------------------------------------------------- vyre-compile and fused modules


def test_vyre_compile_locates_an_emission_error_at_the_group_s_program(capsys):
    source = str(EXAMPLES / "chain3.mlir")
    status = vyre_compile.main([source, "--max-storage-buffers", "1", "-o", "-"])
    assert status == 1
    line = first_line(capsys)
    # chain3's first program, @scale, starts at line 3
    assert line.startswith(f"{source}:3:1: error: compiling @scale: ")
    assert "the target allows 1 per shader stage" in line


def test_an_error_at_a_buffer_the_fusion_merged_is_located_at_its_source_declaration():
    module = vyre_xdsl.parse((EXAMPLES / "chain3.mlir").read_text(), "chain3.mlir")
    fused = fuse_module(module)
    with pytest.raises(VyreDiagnostic) as caught:
        lowered_module(programs(fused), TargetProfile(max_storage_buffers=1))
    # the fused program's second storage buffer is @out, declared by @square at line 23
    assert str(caught.value).startswith("chain3.mlir:23:3: binding @out ")


# ---------------------------------------------------------------- %k for a loop variable

LOOP_USE = """vyre.program @p workgroup_size [4, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[4]
  %lo = vyre.const 0 : ui32
  %hi = vyre.const 4 : ui32
  vyre.loop @k = %lo to %hi {
    vyre.store @x[%k] = %lo : ui32
  }
}
"""

LET_USE = """vyre.program @p workgroup_size [4, 1, 1] {
  vyre.buffer @x binding 0 read_write : f32[4]
  %i = vyre.invocation_id x
  %one = vyre.const 1.0 : f32
  vyre.let @k = %one : f32
  vyre.store @x[%i] = %k : f32
}
"""

AFTER_LOOP = LOOP_USE.replace("  }\n}", "  }\n  vyre.store @x[%k] = %lo : ui32\n}").replace(
    "vyre.store @x[%k] = %lo : ui32\n  }", "vyre.store @x[%lo] = %lo : ui32\n  }"
)


def parse_error(text: str) -> tuple[str, str]:
    """(the location `str()` of `parse`'s diagnostic starts with, its message)."""
    with pytest.raises(VyreDiagnostic) as caught:
        vyre_xdsl.parse(text, "k.mlir")
    lines = str(caught.value).splitlines()
    return lines[0], lines[-1].strip()


def test_a_loop_variable_used_as_a_value_gets_a_vyre_var_hint():
    where, message = parse_error(LOOP_USE)
    assert where == "k.mlir:6:19" and message.startswith("use of undefined value %k: ")
    assert "'%k = vyre.var @k : ui32'" in message


def test_a_let_used_as_a_value_gets_a_vyre_var_hint_with_its_type():
    where, message = parse_error(LET_USE)
    assert where == "k.mlir:6:23" and message.startswith("use of undefined value %k: ")
    assert "'%k = vyre.var @k : f32'" in message


def test_no_hint_after_the_loop_has_closed():
    where, message = parse_error(AFTER_LOOP)
    assert where == "k.mlir:8:17" and message.startswith("use of undefined value %k: ")
    assert "vyre.var" not in message


# ---------------------------------------------------------------- workgroup_size counts

SUBGROUP_PROGRAM = """vyre.program @q workgroup_size [8, 1, 1] {
  vyre.buffer @y binding 0 read_write : ui32[8]
  %i = vyre.invocation_id x
  vyre.store @y[%i] = %i : ui32
}
vyre.program @p workgroup_size SIZES {
  vyre.buffer @x binding 0 read_write : ui32[4]
  %i = vyre.invocation_id x
  %s = vyre.subgroup_reduce max %i : ui32
  vyre.store @x[%i] = %s : ui32
}
"""


@pytest.mark.parametrize("sizes", ["[]", "[4]", "[4, 1]", "[1, 1, 1, 1]", "[1, 1, 1, 1, 1]"])
def test_a_workgroup_size_without_three_values_is_a_located_error(sizes, tmp_path, capsys):
    text = SUBGROUP_PROGRAM.replace("SIZES", sizes)
    count = sizes.count(",") + 1 if sizes != "[]" else 0
    message = f"workgroup_size needs exactly 3 values [X, Y, Z], got {count}"
    assert parse_error(text) == ("k.mlir:6:32", message)
    path = tmp_path / "wg.mlir"
    path.write_text(text)
    assert run_tool(VyreOptMain, [str(path)]) == 1
    assert first_line(capsys) == f"{path}:6:32: error: {message}"


def test_the_plan_does_not_depend_on_where_the_source_file_is(tmp_path):
    """Locations go to the user, not into the artifact: a plan's refusal reasons
    (here a workgroup mismatch, which the planner learns from a diagnostic) are
    the same whatever the file is called."""
    text = (EXAMPLES.parent / "filecheck_tests" / "tools" / "vyre-compile-plan.mlir").read_text()
    artifacts = []
    for name in ("a.mlir", "other/b.mlir"):
        source = tmp_path / name
        source.parent.mkdir(exist_ok=True)
        source.write_text(text)
        artifact = tmp_path / f"{source.stem}.vmk"
        assert vyre_compile.main([str(source), "--artifact", str(artifact)]) == 0
        artifacts.append(artifact.read_bytes())
    assert b"MKL005_WORKGROUP_MISMATCH" in artifacts[0]
    assert artifacts[0] == artifacts[1]
