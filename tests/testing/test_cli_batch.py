"""`python -m vyre_xdsl.testing.cli_batch --run ...`: several tool command lines in one
process, each writing to its own files, the first failure stopping the rest."""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

from vyre_xdsl.testing.cli_batch import main, redirected

PROGRAM = """vyre.program @p workgroup_size [1, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[1]
  %z = vyre.const 0 : ui32
  %a = vyre.const 2 : ui32
  %b = vyre.const 3 : ui32
  %s = vyre.add %a, %b : ui32
  vyre.store @out[%z] = %s : ui32
}
"""


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "p.mlir"
    path.write_text(PROGRAM)
    return path


def test_redirections_are_split_off_the_command():
    assert redirected("vyre-opt a.mlir -p 'x{y=1}' > o.mlir 2> e.txt") == (
        shlex.join(["vyre-opt", "a.mlir", "-p", "x{y=1}"]),
        "o.mlir",
        "e.txt",
    )
    assert redirected("vyre-opt a.mlir 2> e.txt") == ("vyre-opt a.mlir", None, "e.txt")
    assert redirected("vyre-opt a.mlir") == ("vyre-opt a.mlir", None, None)


def test_each_command_writes_its_own_files(program, tmp_path, capsys):
    folded, remarks = tmp_path / "folded.mlir", tmp_path / "remarks.txt"
    status = main(
        [
            "--run",
            f"vyre-opt {program} -p canonicalize > {folded}",
            "--run",
            f"vyre-opt {folded} -p 'vyre-tile{{remarks=true}}' 2> {remarks}",
        ]
    )
    assert status == 0
    assert "vyre.const 5 : ui32" in folded.read_text()  # 2 + 3, folded by canonicalize
    assert "vyre.add" not in folded.read_text()
    out = capsys.readouterr().out
    assert "vyre.const 5 : ui32" in out  # the second command's output, not redirected
    assert "remark: not tiled" in remarks.read_text()


def test_the_first_failure_stops_the_rest(program, tmp_path, capsys):
    later = tmp_path / "later.mlir"
    status = main(
        [
            "--run",
            f"vyre-opt {program} -p no-such-pass",
            "--run",
            f"vyre-opt {program} > {later}",
        ]
    )
    assert status == 1
    assert "unknown pass 'no-such-pass'" in capsys.readouterr().err
    assert not later.exists()


def test_a_failing_commands_diagnostics_go_to_its_file(tmp_path):
    broken, errors = tmp_path / "broken.mlir", tmp_path / "errors.txt"
    broken.write_text("vyre.program @p workgroup_size [1, 1, 1] {\n  %x = vyre.nope\n}\n")
    assert main(["--run", f"vyre-opt {broken} 2> {errors}"]) == 1
    assert "broken.mlir:2:" in errors.read_text()


def test_a_run_without_its_command_is_a_usage_error(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "vyre_xdsl.testing.cli_batch", "--run", "vyre-opt x", "--run"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert "usage:" in result.stderr


def test_xdsl_opt_finds_vyre_passes_through_the_universe(program, tmp_path):
    """xDSL's driver, run in the batch process, loads vyre's dialects and passes from
    the `xdsl.universe` entry point and prints what vyre-opt prints."""
    ours, theirs = tmp_path / "vyre.mlir", tmp_path / "xdsl.mlir"
    status = main(
        [
            "--run",
            f"xdsl-opt {program} -p canonicalize,vyre-licm > {theirs}",
            "--run",
            f"vyre-opt {program} -p canonicalize,vyre-licm > {ours}",
        ]
    )
    assert status == 0
    assert "vyre.const 5 : ui32" in theirs.read_text()
    assert theirs.read_text() == ours.read_text()


def test_xdsl_opt_reports_an_unknown_pass(program, capsys):
    assert main(["--run", f"xdsl-opt {program} -p no-such-pass"]) != 0
    assert "no-such-pass" in capsys.readouterr().err
