"""The Python builder produces the same ops (and so the same text) as the parser."""

import pytest

from vyre_xdsl.builder import ProgramBuilder, module_of
from vyre_xdsl.context import parse_module
from vyre_xdsl.diagnostics import VyreDiagnostic, verify_module

from ..support import EXAMPLES


def test_axpy_builds_as_the_example_text():
    b = ProgramBuilder("axpy", workgroup_size=(64, 1, 1))
    b.buffer("x", "read_only", "f32", 1024, binding=0)
    b.buffer("y", "read_write", "f32", 1024, binding=1)
    i = b.invocation_id("x", name="i")
    a = b.const(2.0, "f32", name="a")
    xv = b.load("x", i, name="xv")
    yv = b.load("y", i, name="yv")
    p = b.mul(a, xv, name="p")
    s = b.add(p, yv, name="s")
    b.store("y", i, s)
    built = module_of([b.build()])
    verify_module(built)
    parsed = parse_module((EXAMPLES / "axpy.mlir").read_text())
    assert str(built) == str(parsed)


def test_structured_ops_print_as_expected():
    b = ProgramBuilder("shapes", workgroup_size=(32, 1, 1))
    b.buffer("out", "write_only", "ui32", 64, binding=0)
    i = b.invocation_id("x", name="i")
    zero = b.const(0, "ui32", name="zero")
    b.let("acc", zero)
    with b.loop("k", zero, b.const(4, "ui32", name="four")):
        k = b.var("k", "ui32", name="k")
        b.assign("acc", b.add(b.var("acc", "ui32", name="acc"), k, name="next"))
    odd = b.bit_and(i, b.const(1, "ui32", name="one"), name="odd")
    with b.if_(b.ne(odd, zero, name="is_odd")):
        b.store("out", i, b.var("acc", "ui32", name="total"))
    with b.else_():
        with b.region("gen"):
            b.ret()
    module = module_of([b.build()])
    verify_module(module)
    expected = """builtin.module {
  vyre.program @shapes workgroup_size [32, 1, 1] {
    vyre.buffer @out binding 0 write_only : ui32[64]
    %i = vyre.invocation_id x
    %zero = vyre.const 0 : ui32
    vyre.let @acc = %zero : ui32
    %four = vyre.const 4 : ui32
    vyre.loop @k = %zero to %four {
      %k = vyre.var @k : ui32
      %acc = vyre.var @acc : ui32
      %next = vyre.add %acc, %k : ui32
      vyre.assign @acc = %next : ui32
    }
    %one = vyre.const 1 : ui32
    %odd = vyre.bit_and %i, %one : ui32
    %is_odd = vyre.ne %odd, %zero : ui32
    vyre.if %is_odd {
      %total = vyre.var @acc : ui32
      vyre.store @out[%i] = %total : ui32
    } else {
      vyre.region "gen" {
        vyre.return
      }
    }
  }
}"""
    assert str(module) == expected


def test_built_invalid_program_is_a_located_diagnostic():
    b = ProgramBuilder("bad", workgroup_size=(64, 1, 1))
    b.buffer("x", "read_only", "f32", 4, binding=0)
    i = b.invocation_id("x")
    b.store("x", i, b.const(1.0, "f32"))
    with pytest.raises(VyreDiagnostic, match="store to read_only buffer @x"):
        verify_module(module_of([b.build()]))


def test_else_without_if_is_an_error():
    b = ProgramBuilder("p")
    with pytest.raises(ValueError, match="else_"):
        with b.else_():
            pass


def test_keyword_ops_are_reached_with_a_trailing_underscore():
    """`and`, `or` and `not` cannot be attribute names in Python: `b.and_`,
    `b.or_` and `b.not_` build them (as `b.op("and", ...)` does)."""
    b = ProgramBuilder("logic", workgroup_size=(64, 1, 1))
    b.buffer("out", "write_only", "ui32", 64, binding=0)
    i = b.invocation_id("x", name="i")
    p = b.lt(i, b.const(8, "ui32", name="eight"), name="p")
    q = b.gt(i, b.const(2, "ui32", name="two"), name="q")
    both = b.and_(p, q, name="both")
    either = b.or_(both, b.not_(p, name="np"), name="either")
    with b.if_(either):
        b.store("out", i, i)
    text = str(module_of([b.build()]))
    assert "%both = vyre.and %p, %q : i1" in text
    assert "%np = vyre.not %p : i1" in text
    assert "%either = vyre.or %both, %np : i1" in text
    with pytest.raises(AttributeError):
        b.if__  # noqa: B018 (only the keyword ops take the underscore)
