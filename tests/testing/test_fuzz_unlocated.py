"""The fuzzer fails a case whose diagnostic has no `file:line:col`, in process
(`check_text`), through the tools in process (`check_tools_in_process`) and
through `vyre-opt`'s output (`_classify_cli`); a located one stays a refusal."""

from __future__ import annotations

import numpy as np

from vyre_xdsl.diagnostics import VyreDiagnostic
from vyre_xdsl.testing import fuzz

PROGRAM = """vyre.program @p workgroup_size [4, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[4]
  %i = vyre.invocation_id x
  vyre.store @x[%i] = %i : ui32
}
"""


def test_an_unlocated_diagnostic_in_process_fails_the_case(monkeypatch):
    import vyre_xdsl

    def unlocated(text, name="<input>"):
        raise VyreDiagnostic([(None, "something is wrong somewhere")])

    monkeypatch.setattr(vyre_xdsl, "parse", unlocated)
    outcome, detail, site = fuzz.check_text(PROGRAM, np.random.default_rng(0), [])
    assert outcome == "unlocated" and "something is wrong somewhere" in detail
    assert outcome in fuzz.FAIL_CLASSES and site == "parse: unlocated"


def test_an_unlocated_diagnostic_from_a_tool_fails_the_case(monkeypatch, tmp_path):
    from vyre_xdsl.tools import vyre_compile

    def unlocated(args):
        raise VyreDiagnostic([(None, "something is wrong somewhere")])

    monkeypatch.setattr(vyre_compile, "compile_command", unlocated)
    outcome, detail, _ = fuzz.check_tools_in_process(PROGRAM.encode(), str(tmp_path), run=False)
    assert outcome == "unlocated" and detail == "vyre-compile: error: something is wrong somewhere"


def test_vyre_opt_printing_an_unlocated_error_fails_the_case(tmp_path):
    target = str(tmp_path / "none")
    assert fuzz._classify_cli(1, "error: binding @x is storage buffer 33", target)[0] == "unlocated"
    assert fuzz._classify_cli(1, "in.mlir:6:1: error: x\nvyre.program @p\n^", target)[0] == (
        "refused"
    )
    assert fuzz._classify_cli(1, "vyre-opt: error: cannot open in.mlir", target)[0] == "refused"


def test_a_duplicate_program_is_a_located_refusal_everywhere(tmp_path):
    text = PROGRAM + PROGRAM
    assert fuzz.check_text(text, np.random.default_rng(0), [])[0] == "refused"
    assert fuzz.check_tools_in_process(text.encode(), str(tmp_path), run=True)[0] == "refused"
    assert fuzz.check_cli_in_process(text.encode(), str(tmp_path))[0] == "refused"
