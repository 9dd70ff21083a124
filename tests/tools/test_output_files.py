"""Every command writes all of its output files or none: a target that is a
directory, a missing directory, or a failure while the files are renamed into
place leaves no new file and no changed file; the error is one clear line with
exit status 1. Also the `.npy` inputs of `vyre-run` that are empty or whose
header claims more data than the file holds."""

from __future__ import annotations

import os
import pathlib

import numpy as np
import pytest

from vyre_xdsl.tools import common, vyre_compile, vyre_run
from vyre_xdsl.tools.vyre_opt import VyreOptMain, run_tool

TWO_OUTPUTS = """
vyre.program @two workgroup_size [4, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[4]
  vyre.buffer @a binding 1 write_only : ui32[4]
  vyre.buffer @b binding 2 write_only : ui32[4]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @a[%i] = %v : ui32
  vyre.store @b[%i] = %v : ui32
}
"""


@pytest.fixture
def program(tmp_path) -> str:
    path = tmp_path / "two.mlir"
    path.write_text(TWO_OUTPUTS)
    return str(path)


def listing(directory: pathlib.Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


# ---------------------------------------------------------------------- vyre-run --output-dir


def test_vyre_run_leaves_no_file_when_one_output_cannot_be_written(program, tmp_path, capsys):
    out = tmp_path / "out"
    (out / "b.npy").mkdir(parents=True)  # the second output's target is a directory
    status = vyre_run.main(
        [program, "--random-inputs", "0", "--backend", "reference", "--output-dir", str(out)]
    )
    assert status == 1
    assert "b.npy: it is a directory" in capsys.readouterr().err
    assert listing(out) == ["b.npy"]


def test_vyre_run_removes_the_output_directory_it_created_when_writing_fails(
    program, tmp_path, monkeypatch
):
    def fail(files):
        raise common.OutputFileError("cannot write: disk full")

    monkeypatch.setattr(vyre_run, "write_files_atomically", fail)
    out = tmp_path / "new"
    status = vyre_run.main(
        [program, "--random-inputs", "0", "--backend", "reference", "--output-dir", str(out)]
    )
    assert status == 1 and not out.exists()


def test_a_failed_rename_puts_back_every_file_already_replaced(tmp_path, monkeypatch):
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    a.write_bytes(b"old a")
    real_replace = os.replace
    calls = []

    def replace(src, dst):
        calls.append(dst)
        if str(dst) == str(b):
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(common.os, "replace", replace)
    with pytest.raises(
        common.OutputFileError, match="cannot write .*b.npy: No space left on device"
    ):
        common.write_files_atomically({str(a): b"new a", str(b): b"new b"})
    assert a.read_bytes() == b"old a"
    assert listing(tmp_path) == ["a.npy"]  # no temporary or backup file left
    assert str(a) in calls  # a was really replaced, then put back


def test_writes_replace_existing_files(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("old")
    common.write_files_atomically({str(a): "new a", str(b): b"new b"})
    assert a.read_text() == "new a" and b.read_bytes() == b"new b"
    assert listing(tmp_path) == ["a", "b"]


# ---------------------------------------------------------------------- vyre-compile


def test_vyre_compile_leaves_no_plan_or_artifact_when_the_bundle_fails(program, tmp_path, capsys):
    bundle = tmp_path / "X.vkb"
    bundle.mkdir()
    plan, artifact = tmp_path / "P.dot", tmp_path / "A.vmk"
    status = vyre_compile.main(
        [program, "-o", str(bundle), "--plan-dot", str(plan), "--artifact", str(artifact)]
    )
    assert status == 1
    assert "X.vkb: it is a directory" in capsys.readouterr().err
    assert not plan.exists() and not artifact.exists()


def test_vyre_compile_into_a_missing_directory(program, tmp_path, capsys):
    plan = tmp_path / "P.dot"
    status = vyre_compile.main(
        [program, "-o", str(tmp_path / "no" / "X.vkb"), "--plan-dot", str(plan)]
    )
    assert status == 1
    assert "no such directory" in capsys.readouterr().err
    assert not plan.exists()


# ---------------------------------------------------------------------- vyre-opt -o


@pytest.mark.parametrize(
    "target, message", [("missing/out.mlir", "no such directory"), (".", "it is a directory")]
)
def test_vyre_opt_output_that_cannot_be_written_is_a_clear_error(
    program, tmp_path, capsys, target, message
):
    status = run_tool(VyreOptMain, [program, "-o", str(tmp_path / target)])
    err = capsys.readouterr().err
    assert status == 1
    assert message in err and "internal error" not in err and "Traceback" not in err
    assert listing(tmp_path) == ["two.mlir"]


# ---------------------------------------------------------------------- vyre-run .npy inputs


def npy_header(path: pathlib.Path, shape: tuple[int, ...], extra: bytes = b"") -> None:
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(
            f, {"descr": "<u4", "fortran_order": False, "shape": shape}
        )
        f.write(extra)


def run_with_input(program: str, npy: pathlib.Path) -> int:
    return vyre_run.main([program, "--input", f"x={npy}", "--backend", "reference"])


def test_an_empty_npy_file_is_a_clear_error(program, tmp_path, capsys):
    npy = tmp_path / "x.npy"
    npy.write_bytes(b"")
    assert run_with_input(program, npy) == 1
    err = capsys.readouterr().err
    assert (
        "input for buffer 'x'" in err
        and "is not a valid .npy array" in err
        and "internal" not in err
    )


def test_an_npy_header_claiming_10_to_the_12_elements_is_refused_before_allocating(
    program, tmp_path, capsys
):
    npy = tmp_path / "x.npy"
    npy_header(npy, (10**12,), b"\0" * 16)
    assert run_with_input(program, npy) == 1
    err = capsys.readouterr().err
    assert (
        "truncated or corrupt" in err and "4000000000000 bytes" in err and "holds 16 bytes" in err
    )


def test_a_truncated_npy_file_is_refused(program, tmp_path, capsys):
    npy = tmp_path / "x.npy"
    np.save(npy, np.arange(4, dtype=np.uint32))
    npy.write_bytes(npy.read_bytes()[:-3])
    assert run_with_input(program, npy) == 1
    assert "truncated or corrupt" in capsys.readouterr().err


def test_a_good_npy_input_runs(program, tmp_path, capsys):
    npy = tmp_path / "x.npy"
    np.save(npy, np.arange(4, dtype=np.uint32))
    assert run_with_input(program, npy) == 0
    assert "a: uint32[4] = [0, 1, 2, 3]" in capsys.readouterr().out
