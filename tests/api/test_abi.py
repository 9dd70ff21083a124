"""The run interface from buffer declarations in program order (SPEC section 8).

Each expectation is read off the SPEC's rule by hand for the declarations shown;
none comes from `abi.signature` itself.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

import vyre_xdsl
from vyre_xdsl.abi import MissingInputError, UnexpectedInputError, signature
from vyre_xdsl.context import vyre_context


def _program(name: str, *declarations: str, body: str = "") -> str:
    lines = [f"vyre.program @{name} workgroup_size [4, 1, 1] {{"]
    lines += [f"  vyre.buffer {d}" for d in declarations]
    lines += [f"  {line}" for line in body.strip().splitlines()]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _interface(text: str) -> tuple[set[str], set[str], set[str]]:
    sig = signature(vyre_xdsl.parse(text))
    intermediates = {b.name for b in sig.buffers if b.is_intermediate}
    return set(sig.inputs), set(sig.outputs), intermediates


# (declarations of each program, in order) -> (inputs, outputs, intermediates)
CASES = {
    "one program, every access": (
        [
            [
                "@x binding 0 read_only : f32[4]",
                "@y binding 1 read_write : f32[4]",
                "@z binding 2 write_only : f32[4]",
                "@u binding 3 uniform : f32[4]",
                "@w workgroup : f32[4]",
            ]
        ],
        ({"x", "y", "u"}, {"y", "z"}, set()),
    ),
    "producer and consumer": (
        [
            ["@x binding 0 read_only : f32[4]", "@t binding 1 write_only : f32[4]"],
            ["@t binding 0 read_only : f32[4]", "@y binding 1 write_only : f32[4]"],
        ],
        ({"x"}, {"y"}, {"t"}),
    ),
    "written, then read_write later": (
        [["@t binding 0 write_only : ui32[4]"], ["@t binding 0 read_write : ui32[4]"]],
        (set(), {"t"}, set()),
    ),
    "read, then overwritten": (
        [["@t binding 0 read_only : ui32[4]"], ["@t binding 0 write_only : ui32[4]"]],
        ({"t"}, {"t"}, set()),
    ),
    "written twice": (
        [["@t binding 0 write_only : ui32[4]"], ["@t binding 0 write_only : ui32[4]"]],
        (set(), {"t"}, set()),
    ),
    "marked output, read later": (
        [["@t binding 0 write_only output : ui32[4]"], ["@t binding 0 read_only : ui32[4]"]],
        (set(), {"t"}, set()),
    ),
    "read_only output": (
        [["@r binding 0 read_only output : ui32[4]"]],
        ({"r"}, {"r"}, set()),
    ),
    "written, then uniform": (
        [["@t binding 0 write_only : ui32[4]"], ["@t binding 0 uniform : ui32[4]"]],
        (set(), set(), {"t"}),
    ),
    "runtime-sized, first written": (
        [["@t binding 0 write_only : ui32[?]"]],
        ({"t"}, {"t"}, set()),
    ),
    "runtime-sized in a later program only": (
        [["@t binding 0 write_only : ui32[4]"], ["@t binding 0 read_only : ui32[?]"]],
        ({"t"}, set(), {"t"}),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_interface_follows_the_declarations(case):
    decls, expected = CASES[case]
    text = "".join(_program(f"p{k}", *d) for k, d in enumerate(decls))
    assert _interface(text) == expected


@pytest.mark.parametrize("case", sorted(CASES))
def test_bodies_do_not_change_the_interface(case):
    # the same declarations with every buffer loaded and stored in each program
    decls, expected = CASES[case]
    programs = []
    for k, declared in enumerate(decls):
        body = ["%i = vyre.local_id x"]
        for d in declared:
            name, rest = d.split(" ", 1)
            ty = rest.split(": ")[1].split("[")[0]
            body.append(f"%v_{name[1:]} = vyre.load {name}[%i] : {ty}")
            if "write" in rest or "workgroup" in rest:
                body.append(f"vyre.store {name}[%i] = %v_{name[1:]} : {ty}")
        programs.append(_program(f"p{k}", *declared, body="\n".join(body)))
    assert _interface("".join(programs)) == expected


def test_dce_of_an_unused_load_keeps_a_read_only_output_an_input():
    text = _program(
        "p",
        "@r binding 0 read_only output : ui32[4]",
        "@o binding 1 write_only : ui32[4]",
        body="""
%i = vyre.local_id x
%unused = vyre.load @r[%i] : ui32
vyre.store @o[%i] = %i : ui32
""",
    )
    module = vyre_xdsl.parse(text)
    before = signature(module)
    DeadCodeElimination().apply(vyre_context(), module)
    assert "vyre.load" not in str(module)
    assert signature(module) == before
    r = np.array([5, 6, 7, 8], np.uint32)
    out = vyre_xdsl.run(module, {"r": r}, backend="reference")
    np.testing.assert_array_equal(out["r"], r)  # the caller's contents, not zeros
    np.testing.assert_array_equal(out["o"], np.arange(4, dtype=np.uint32))


def test_intermediate_stays_an_intermediate_when_its_reader_goes():
    text = _program(
        "a",
        "@x binding 0 read_only : ui32[4]",
        "@t binding 1 write_only : ui32[4]",
        body="""
%i = vyre.local_id x
%v = vyre.load @x[%i] : ui32
vyre.store @t[%i] = %v : ui32
""",
    ) + _program(
        "b",
        "@t binding 0 read_only : ui32[4]",
        "@y binding 1 write_only : ui32[4]",
        body="""
%i = vyre.local_id x
%unused = vyre.load @t[%i] : ui32
vyre.store @y[%i] = %i : ui32
""",
    )
    module = vyre_xdsl.parse(text)
    before = signature(module)
    DeadCodeElimination().apply(vyre_context(), module)
    assert "vyre.load @t" not in str(module)
    assert signature(module) == before
    out = vyre_xdsl.run(module, {"x": np.arange(4, dtype=np.uint32)}, backend="reference")
    assert set(out) == {"y"}


def test_write_only_first_takes_no_input_and_runtime_sized_needs_one():
    text = _program("p", "@t binding 0 write_only : ui32[4]", "@s binding 1 write_only : ui32[?]")
    with pytest.raises(UnexpectedInputError, match="buffer 't' takes no input"):
        vyre_xdsl.run(
            text, {"t": np.zeros(4, np.uint32), "s": np.zeros(2, np.uint32)}, backend="reference"
        )
    with pytest.raises(MissingInputError, match="missing input for buffer 's'"):
        vyre_xdsl.run(text, {}, backend="reference")


BUF_LEN = """
vyre.program @len workgroup_size [1, 1, 1] {
  vyre.buffer @input binding 0 read_only : ui32[?]
  vyre.buffer @out binding 1 write_only : ui32[1]
  %g = vyre.invocation_id x
  %zero = vyre.const 0 : ui32
  %first = vyre.eq %g, %zero : ui32
  vyre.if %first {
    %n = vyre.buf_len @input
    vyre.store @out[%zero] = %n : ui32
  }
}
"""

# a second program, so that `fuse=True` really fuses: it doubles the length
DOUBLE = """
vyre.program @double workgroup_size [1, 1, 1] {
  vyre.buffer @out binding 0 read_write : ui32[1]
  %zero = vyre.const 0 : ui32
  %n = vyre.load @out[%zero] : ui32
  %d = vyre.add %n, %n : ui32
  vyre.store @out[%zero] = %d : ui32
}
"""


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
@pytest.mark.parametrize("fuse", [False, True])
@pytest.mark.parametrize("length", [1, 3, 8])
def test_buf_len_only_buffer_is_an_input(backend, fuse, length):
    # upstream's buf_len_array_length contracts: lengths 1, 3 and 8 come back
    array = np.arange(100, 100 + length, dtype=np.uint32)
    out = vyre_xdsl.run(BUF_LEN, {"input": array}, backend=backend, fuse=fuse)
    assert out["out"].tolist() == [length]
    out = vyre_xdsl.run(BUF_LEN + DOUBLE, {"input": array}, backend=backend, fuse=fuse)
    assert out["out"].tolist() == [2 * length]
