"""Hostile input to the front end: each reproducer gives a located error (never a
Python exception from inside, a hang, or output that a later stage refuses), or
runs correctly through every stage.

Expected values are computed here in plain Python.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Input
from xdsl.utils.mlir_lexer import MLIRLexer

import vyre_xdsl
from vyre_xdsl.backends.wgsl.printer import _comment
from vyre_xdsl.builder import ProgramBuilder, module_of
from vyre_xdsl.context import LinearLexer, parse_module
from vyre_xdsl.diagnostics import VyreDiagnostic, verify_module
from vyre_xdsl.dialects import vyre
from vyre_xdsl.dialects.verify import MAX_NESTING_DEPTH
from vyre_xdsl.megakernel.bundle import TargetModuleBundle
from vyre_xdsl.megakernel.compile import compile_module
from vyre_xdsl.megakernel.run import run_bundle

from ..support import EXAMPLES

BIN = Path(sys.executable).parent


def _tool(name: str, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, XDG_RUNTIME_DIR=os.environ.get("XDG_RUNTIME_DIR") or "/tmp")
    return subprocess.run(
        [str(BIN / name), *args], input=stdin, capture_output=True, env=env, timeout=120
    )


def _line_of(error: VyreDiagnostic) -> int:
    """The source line of the first error: its op's location (verifier errors),
    or the `file:line:col` its text starts with (parse errors)."""
    op, message = error.errors[0]
    if op is not None:
        return op.location.line.data
    return int(message.split("\n", 1)[0].split(":")[-2])


# ---------------------------------------------------------------- dominance

USE_BEFORE_DEF = """vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
  vyre.trap %i "t"
  %i = vyre.invocation_id x
}
"""


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_use_before_definition_is_a_located_error_on_every_backend(backend):
    with pytest.raises(VyreDiagnostic) as caught:
        vyre_xdsl.run(USE_BEFORE_DEF, inputs={"x": np.zeros(64, np.uint32)}, backend=backend)
    assert _line_of(caught.value) == 3
    assert "uses %i before its definition" in caught.value.errors[0][1]


def test_use_before_definition_in_vyre_compile_writes_no_bundle(tmp_path):
    source = tmp_path / "dom.mlir"
    source.write_text(USE_BEFORE_DEF)
    out = tmp_path / "dom.vkb"
    result = _tool("vyre-compile", str(source), "-o", str(out))
    assert result.returncode == 1
    assert (
        f"{source}:3:3: error: operand #0 of 'vyre.trap' uses %i before its definition"
        in result.stderr.decode()
    )
    assert not out.exists()


def test_use_before_definition_in_built_ir():
    b = ProgramBuilder("p")
    b.buffer("x", "read_write", "ui32", 64, binding=0)
    late = vyre.InvocationIdOp("x")
    b.store("x", late.result, late.result)
    b.insert(late)
    with pytest.raises(VyreDiagnostic) as caught:
        verify_module(module_of([b.build()]))
    assert isinstance(caught.value.errors[0][0], vyre.StoreOp)


def test_definition_cycle_under_a_barrier_is_rejected_not_recursed():
    # `%c` and `%d` define each other; the barrier verifier would follow them forever
    text = """vyre.program @p workgroup_size [64, 1, 1] {
  vyre.if %c {
    vyre.barrier
  }
  %c = vyre.not %d : i1
  %d = vyre.not %c : i1
}
"""
    with pytest.raises(VyreDiagnostic) as caught:
        vyre_xdsl.parse(text)
    assert _line_of(caught.value) == 2


def test_condition_defined_inside_its_own_region_is_a_located_error():
    # found by the fuzzer: xDSL's parser leaves a placeholder operand here
    text = """vyre.program @p workgroup_size [64, 1, 1] {
  vyre.if %c {
    %c = vyre.const true : i1
  }
}
"""
    with pytest.raises(VyreDiagnostic) as caught:
        vyre_xdsl.run(text, backend="reference")
    assert _line_of(caught.value) == 2
    assert "defined only later, inside this op's own region" in caught.value.errors[0][1]


# ---------------------------------------------------------------- lexer


def test_unterminated_string_literal_of_2000_characters_fails_fast():
    text = '"' + "a" * 2000 + "\n"
    start = time.perf_counter()
    with pytest.raises(ParseError) as caught:
        parse_module(text, "s.mlir")
    elapsed = time.perf_counter() - start
    assert elapsed < 0.5, f"{elapsed:.2f} s"
    assert "unterminated string literal" in caught.value.msg
    assert caught.value.span.get_location().line == 1


@pytest.mark.parametrize(
    "literal",
    [
        '""',
        '"abc"',
        r'"a\"b"',
        r'"\n\t\\"',
        r'"\41\7e"',
        '"caf\u00e9"',
        r'"x\"',
        '"a\\',
        '"\\q"',
        '"open',
    ],
)
def test_linear_lexer_accepts_exactly_what_xdsl_accepts(literal):
    # xDSL's own lexer is the oracle on these short inputs (it is only slow on long ones)
    def lex(lexer_type):
        try:
            token = lexer_type(Input(literal + "\n", "t")).lex()
        except ParseError:
            return None
        return token.kind, token.text

    assert lex(LinearLexer) == lex(MLIRLexer)


# ---------------------------------------------------------------- nesting


def _nested_program(depth: int, name: str = "deep", out: str = "x") -> str:
    """`depth` nested scopes (cycling if/loop/block/region), each run once; the
    innermost adds 1 to a named local, then @out[i] = that local."""
    lines = [
        f"vyre.program @{name} workgroup_size [64, 1, 1] {{",
        f"  vyre.buffer @{out} binding 0 read_write : ui32[256]",
        "  %i = vyre.invocation_id x",
        "  %zero = vyre.const 0 : ui32",
        "  %one = vyre.const 1 : ui32",
        "  %yes = vyre.const true : i1",
        "  vyre.let @acc = %zero : ui32",
    ]
    for level in range(depth):
        kind = level % 4
        opener = [
            "vyre.if %yes {",
            f"vyre.loop @k{level} = %zero to %one {{",
            "vyre.block {",
            f'vyre.region "g{level}" {{',
        ][kind]
        lines.append("  " * (level + 1) + opener)
    pad = "  " * (depth + 1)
    lines += [
        f"{pad}%a = vyre.var @acc : ui32",
        f"{pad}%b = vyre.add %a, %one : ui32",
        f"{pad}vyre.assign @acc = %b : ui32",
    ]
    for level in reversed(range(depth)):
        lines.append("  " * (level + 1) + "}")
    lines += ["  %r = vyre.var @acc : ui32", f"  vyre.store @{out}[%i] = %r : ui32", "}", ""]
    return "\n".join(lines)


def _consumer() -> str:
    return """vyre.program @after workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[256]
  vyre.buffer @y binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %t = vyre.add %v, %v : ui32
  vyre.store @y[%i] = %t : ui32
}
"""


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
@pytest.mark.parametrize("fuse", [False, True])
def test_deepest_allowed_nesting_runs_through_every_stage(backend, fuse):
    text = _nested_program(MAX_NESTING_DEPTH) + _consumer()
    out = vyre_xdsl.run(text, inputs={"x": np.zeros(256, np.uint32)}, backend=backend, fuse=fuse)
    assert out["y"].tolist() == [2] * 256  # each level runs once: acc = 1, y = 1 + 1


def test_deepest_allowed_nesting_survives_a_bundle_round_trip():
    module = parse_module(_nested_program(MAX_NESTING_DEPTH) + _consumer())
    data = compile_module(module).bundle_bytes()
    bundle = TargetModuleBundle.from_bytes(data)
    out = run_bundle(bundle, {"x": np.zeros(256, np.uint32)}, backend="wgpu")
    assert out["y"].tolist() == [2] * 256


@pytest.mark.parametrize("depth", [MAX_NESTING_DEPTH, MAX_NESTING_DEPTH + 1])
def test_generic_form_at_the_limit_parses_and_just_past_it_is_rejected(depth):
    # the generic form nests two brackets per scope (`({...})`); parse it below a
    # deep caller stack as well
    import io

    from xdsl.printer import Printer

    module = parse_module(_nested_program(depth))
    text = io.StringIO()
    Printer(stream=text, print_generic_format=True).print_op(module)

    def below(frames: int):
        return below(frames - 1) if frames else vyre_xdsl.parse(text.getvalue())

    if depth <= MAX_NESTING_DEPTH:
        assert str(below(150)) == str(vyre_xdsl.parse(_nested_program(depth)))
    else:
        with pytest.raises(VyreDiagnostic, match=f"at most {MAX_NESTING_DEPTH} nested"):
            below(150)


def test_one_scope_too_deep_is_a_located_verifier_error():
    text = _nested_program(MAX_NESTING_DEPTH + 1)
    with pytest.raises(VyreDiagnostic) as caught:
        vyre_xdsl.parse(text)
    # the 65th opener is on line 7 + 65
    assert _line_of(caught.value) == 7 + MAX_NESTING_DEPTH + 1
    assert f"at most {MAX_NESTING_DEPTH} nested" in caught.value.errors[0][1]


@pytest.mark.parametrize("depth", [122, 2000])
def test_very_deep_text_is_a_located_parse_error(depth):
    with pytest.raises(VyreDiagnostic) as caught:
        vyre_xdsl.parse(_nested_program(depth))
    assert "nested" in str(caught.value)


def test_very_deep_built_ir_is_a_verifier_error_not_a_recursion_error():
    b = ProgramBuilder("deep")
    b.buffer("x", "read_write", "ui32", 64, binding=0)
    # 400 levels: xDSL's recursive verifier alone would need over 1000 frames
    contexts = [b.block() for _ in range(400)]
    for context in contexts:
        context.__enter__()
    for context in reversed(contexts):
        context.__exit__(None, None, None)
    with pytest.raises(VyreDiagnostic) as caught:
        verify_module(module_of([b.build()]))
    assert f"at most {MAX_NESTING_DEPTH} nested" in caught.value.errors[0][1]


def test_deeply_nested_attribute_is_a_located_parse_error():
    text = "vyre.program @p {a = " + "[" * 3000 + "]" * 3000 + "} workgroup_size [1, 1, 1] {\n}\n"
    with pytest.raises(ParseError) as caught:
        parse_module(text)
    assert "nested too deeply" in caught.value.msg


def test_long_chain_of_ops_under_a_barrier_condition():
    n = 3000
    lines = [
        "vyre.program @chain workgroup_size [64, 1, 1] {",
        "  vyre.buffer @x binding 0 read_write : ui32[64]",
        "  %i = vyre.invocation_id x",
        "  %v0 = vyre.const 0 : ui32",
        "  %one = vyre.const 1 : ui32",
    ]
    lines += [f"  %v{k + 1} = vyre.add %v{k}, %one : ui32" for k in range(n)]
    lines += [
        f"  %c = vyre.eq %v{n}, %one : ui32",
        "  vyre.if %c {",
        "    vyre.barrier",
        "  }",
        f"  vyre.store @x[%i] = %v{n} : ui32",
        "}",
    ]
    out = vyre_xdsl.run(
        "\n".join(lines), inputs={"x": np.zeros(64, np.uint32)}, backend="reference"
    )
    assert out["x"].tolist() == [n] * 64


# ---------------------------------------------------------------- values out of range


@pytest.mark.parametrize(
    "text, line, message",
    [
        (
            "vyre.program @p workgroup_size [64, 1, 1] {\n  vyre.buffer @x binding 0 read_write : ui32[4294967296]\n}\n",
            2,
            "element count 4294967296 of buffer @x is too large",
        ),
        (
            "vyre.program @p workgroup_size [4294967296, 1, 1] {\n}\n",
            1,
            "workgroup_size 4294967296 is out of range",
        ),
        (
            "vyre.program @p workgroup_size [2147483648, 1, 1] {\n}\n",
            1,
            "workgroup_size 2147483648 is out of range",
        ),
        (
            "vyre.program @p workgroup_size [64, 1, 1] {\n  vyre.buffer @x binding 4294967296 read_write : ui32[4]\n}\n",
            2,
            "binding 4294967296 is out of range",
        ),
    ],
)
def test_values_out_of_range_are_located(text, line, message):
    with pytest.raises(VyreDiagnostic) as caught:
        vyre_xdsl.parse(text)
    assert message in str(caught.value)
    assert _line_of(caught.value) == line


def test_largest_count_is_accepted():
    text = "vyre.program @p workgroup_size [64, 1, 1] {\n  vyre.buffer @x binding 0 read_write : ui32[4294967295]\n}\n"
    vyre_xdsl.parse(text)


def _kernel(
    dispatch: str = "workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [1, 1, 1]",
    binding: str = "slot 0 group 0 global read_write : ui32[64]",
    entry: str = "main",
) -> str:
    return f"""kernel.descriptor @k id "0" entry "{entry}" {{
  kernel.dispatch {dispatch} count [@x]
  kernel.binding @x {binding}
  %i = kernel.invocation_id x
  kernel.store_global slot 0 [%i] = %i : ui32
}}
"""


@pytest.mark.parametrize(
    "text, message",
    [
        (
            _kernel(binding="slot 0 group 0 global read_write : ui32[4294967296]"),
            "element count 4294967296",
        ),
        (
            _kernel(binding="slot 4294967296 group 0 global read_write : ui32[64]"),
            "slot 4294967296 is out of range",
        ),
        (
            _kernel(
                dispatch="workgroup_size [4294967296, 1, 1] program_workgroup_size [64, 1, 1] grid [1, 1, 1]"
            ),
            "workgroup_size 4294967296 is out of range",
        ),
        (
            _kernel(
                dispatch="workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [2147483648, 1, 1]"
            ),
            "grid 2147483648 is out of range",
        ),
        (
            _kernel(
                dispatch="workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [-1, 1, 1]"
            ),
            "grid is -1 on axis x",
        ),
        (_kernel(entry="main\uffff"), "is not a WGSL identifier"),
        (_kernel(entry="fn"), "is a WGSL keyword"),
        (_kernel(entry="vyre_record_trap"), "starts with 'vyre_'"),
    ],
)
def test_kernel_values_and_entry_points_are_located(text, message):
    with pytest.raises(VyreDiagnostic) as caught:
        vyre_xdsl.parse(text)
    assert message in str(caught.value)


def test_grid_beyond_webgpu_limit_fails_kernel_verify():
    text = _kernel(
        dispatch="workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [65536, 1, 1]"
    )
    result = _tool("vyre-opt", "-", "-p", "kernel-verify", stdin=text.encode())
    assert result.returncode == 1
    assert "<stdin>:2:3: error: dispatch grid is 65536 on axis x" in result.stderr.decode()


# ---------------------------------------------------------------- names

LOOP_NAMED = """vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
  %i = vyre.invocation_id x
  %lo = vyre.const 0 : ui32
  %hi = vyre.const 4 : ui32
  vyre.loop @"a b" = %lo to %hi {
    %k = vyre.var @"a b" : ui32
    vyre.store @x[%k] = %i : ui32
  }
}
"""


def test_loop_variable_that_is_not_an_identifier_is_located():
    with pytest.raises(VyreDiagnostic) as caught:
        vyre_xdsl.parse(LOOP_NAMED)
    assert _line_of(caught.value) == 6
    assert "local name 'a b' is not an identifier" in caught.value.errors[0][1]


@pytest.mark.parametrize("brk", ["\u0085", "\u2028", "\u2029", "\r", "\v", "\f"])
def test_names_with_line_breaks_are_located(brk):
    text = LOOP_NAMED.replace('"a b"', "k").replace("@x", f'@"x{brk}y"')
    with pytest.raises(VyreDiagnostic) as caught:
        vyre_xdsl.parse(text)
    assert _line_of(caught.value) == 2
    # \v and \f cannot even appear in a string literal (a parse error)
    assert "buffer name" in caught.value.errors[0][1] or "unterminated string" in str(caught.value)


@pytest.mark.parametrize(
    "brk", ["\n", "\r", "\v", "\f", "\u0085", "\u2028", "\u2029", "\x00", "\x7f"]
)
def test_comment_text_never_contains_a_wgsl_line_break(brk):
    # WGSL line breaks: U+000A..U+000D, U+0085, U+2028, U+2029 (WGSL spec, "Blankspace and line breaks")
    text = _comment(f"region a{brk}b */ c")
    assert all(" " <= ch <= "~" for ch in text)
    assert f"\\u{{{ord(brk):04x}}}" in text


def test_region_generator_with_a_line_break_prints_valid_wgsl():
    text = """vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
  %i = vyre.invocation_id x
  vyre.region "gen\u2028vyre.store" {
    vyre.store @x[%i] = %i : ui32
  }
}
"""
    out = vyre_xdsl.run(text, inputs={"x": np.zeros(64, np.uint32)}, backend="wgpu")
    assert out["x"].tolist() == list(range(64))


# ---------------------------------------------------------------- foreign ops

FOREIGN = """vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : f32[64]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f32
  %s = arith.addf %v, %v : f32
  vyre.store @x[%i] = %s : f32
}
"""
FOREIGN_MESSAGE = "5:3: error: 'arith.addf' is not allowed inside a 'vyre.program'"


def test_foreign_op_is_rejected_by_the_python_api():
    with pytest.raises(VyreDiagnostic) as caught:
        vyre_xdsl.run(FOREIGN, inputs={"x": np.zeros(64, np.float32)}, backend="reference")
    assert _line_of(caught.value) == 5


@pytest.mark.parametrize(
    "tool, args",
    [
        ("vyre-opt", ["--lower", "-t", "wgsl"]),
        ("vyre-run", ["--backend", "reference"]),
        ("vyre-compile", ["-o", "-"]),
    ],
)
def test_foreign_op_gives_the_same_error_in_every_tool(tmp_path, tool, args):
    source = tmp_path / "foreign.mlir"
    source.write_text(FOREIGN)
    result = _tool(tool, str(source), *args)
    assert result.returncode == 1
    assert f"{source}:{FOREIGN_MESSAGE}" in result.stderr.decode()
    assert result.stdout == b""


# ---------------------------------------------------------------- foreign op parsers

LINALG_HEAD = "func.func @f(%C: memref<4x2xf32>, %D: memref<4x2xf32>, %E: memref<4x2xf32>) {\n"
ROWSUM = """\
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @rowsum(%A: memref<6x5xf32>, %s: memref<6xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "rerallel"]}
      ins(%A : memref<6x5xf32>) outs(%s : memref<6xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  }
  func.return
}
"""


@pytest.mark.parametrize(
    "text, where, name, error",
    [
        # found by the fuzzer (the linalg seeds): xDSL's linalg parsers raise on
        # these instead of a ParseError
        (ROWSUM, "4:3", "linalg.generic", "ValueError: 'rerallel' is not a valid IteratorType"),
        (
            LINALG_HEAD + "  linalg.add inalg.add ins(%C, %D : memref<4x2xf32>, memref<4x2xf32>)"
            " outs(%E : memref<4x2xf32>)\n  func.return\n}\n",
            "2:3",
            "linalg.add",
            "IndexError",
        ),
        (
            LINALG_HEAD + "  linalg.add (%C, %D : memref<4x2xf32>, memref<4x2xf32>)"
            " outs(%E : memref<4x2xf32>)\n  func.return\n}\n",
            "2:3",
            "linalg.add",
            "IndexError",
        ),
    ],
)
def test_a_foreign_op_whose_parser_fails_is_a_located_error(text, where, name, error):
    with pytest.raises(VyreDiagnostic) as caught:
        vyre_xdsl.parse(text, "in.mlir")
    message = str(caught.value)
    assert f"in.mlir:{where}" in message, message
    assert f"malformed '{name}': its parser failed ({error}" in message, message


def test_a_failing_parser_of_a_vyre_op_is_not_hidden(monkeypatch):
    """An exception from one of the project's own op parsers is a bug of the
    project's: it reaches the caller as it is, also from inside a foreign op."""

    class Bug(Exception):
        pass

    def broken(parser):
        raise Bug("vyre.const's parser")

    monkeypatch.setattr(vyre.ConstOp, "parse", classmethod(lambda cls, parser: broken(parser)))
    program = "vyre.program @p workgroup_size [1, 1, 1] {\n  %c = vyre.const 1 : ui32\n}\n"
    with pytest.raises(Bug):
        vyre_xdsl.parse(program, "in.mlir")
    nested = "builtin.module {\n" + program + "}\n"  # inside a foreign op
    with pytest.raises(Bug):
        parse_module(nested, "in.mlir")


# ---------------------------------------------------------------- encoding


def test_bytes_that_are_not_utf8_are_located_by_the_python_api():
    data = b"vyre.program @p workgroup_size [1, 1, 1] {\n  // \xff\n}\n"
    with pytest.raises(VyreDiagnostic) as caught:
        vyre_xdsl.parse(data, "bad.mlir")
    message = str(caught.value)
    assert "bad.mlir:2:6" in message
    assert "invalid UTF-8 (byte 0xff at byte offset 48)" in message


def test_utf8_bytes_parse_like_text():
    text = (EXAMPLES / "axpy.mlir").read_text()
    assert str(vyre_xdsl.parse(text.encode())) == str(vyre_xdsl.parse(text))


# ---------------------------------------------------------------- what run and compile take

TOP_LEVEL_FUNC = """func.func @f() {
  func.return
}
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
  %i = vyre.invocation_id x
  vyre.store @x[%i] = %i : ui32
}
"""


@pytest.mark.parametrize(
    "text, message",
    [
        (TOP_LEVEL_FUNC, "'func.func' is not a 'vyre.program'"),
        ("builtin.module {\n}\n", "the module holds no 'vyre.program'"),
        (_kernel(), "'kernel.descriptor' is lowered IR"),
    ],
)
def test_run_takes_only_vyre_programs(text, message):
    with pytest.raises(VyreDiagnostic) as caught:
        vyre_xdsl.run(text, backend="reference")
    assert message in str(caught.value)
    assert _line_of(caught.value) == 1


def test_compile_refuses_a_foreign_top_level_op(tmp_path):
    source = tmp_path / "top.mlir"
    source.write_text(TOP_LEVEL_FUNC)
    result = _tool("vyre-compile", str(source), "-o", str(tmp_path / "top.vkb"))
    assert result.returncode == 1
    assert f"{source}:1:1: error: 'func.func' is not a 'vyre.program'" in result.stderr.decode()
    assert not (tmp_path / "top.vkb").exists()


@pytest.mark.parametrize("element", ["f16", "f32", "f64"])
def test_hex_float_literal_wider_than_its_type_is_a_located_error(element):
    """`arith.constant 0x... : f32` with more hex digits than the type's bits
    (found by the fuzzer on examples/matmul_scf.mlir): xDSL raised OverflowError."""
    text = (
        "func.func @f() {\n"
        f"  %c = arith.constant 0x123456789ABCDEF0123 : {element}\n"
        "  return\n"
        "}\n"
    )
    with pytest.raises(VyreDiagnostic) as caught:
        vyre_xdsl.parse(text, name="hex.mlir")
    assert "hex.mlir:2:23" in str(caught.value)
    assert "more bits than its float type holds" in str(caught.value)


def test_a_stock_verifier_raising_a_bare_exception_is_a_located_error(tmp_path):
    """`memref.store` with fewer indices than its memref has dimensions: xDSL's
    own verifier raises a bare `Exception` (found by the fuzzer on a mutant of
    examples/stencil_scf.mlir). It is the input's error, at the op, from the
    API and from vyre-opt."""
    text = (
        "func.func @f(%m: memref<4x4xf32>, %v: f32) {\n"
        "  %i = arith.constant 0 : index\n"
        "  memref.store %v, %m[%i] : memref<4x4xf32>\n"
        "  return\n"
        "}\n"
    )
    with pytest.raises(VyreDiagnostic) as caught:
        vyre_xdsl.parse(text, name="store.mlir")
    assert "store.mlir:3:3" in str(caught.value)
    assert "Expected an index for each dimension" in str(caught.value)
    source = tmp_path / "store.mlir"
    source.write_text(text)
    result = _tool("vyre-opt", str(source))
    assert result.returncode == 1
    assert f"{source}:3:3: error: Expected an index for each dimension" in result.stderr.decode()
    assert "Traceback" not in result.stderr.decode()


def test_a_bare_exception_from_a_verifier_of_ours_is_not_hidden(monkeypatch):
    """Only stock xDSL ops get the benefit of the doubt: a vyre verifier that
    raises anything but VerifyException is a bug and must surface as one."""

    def broken(self):
        raise RuntimeError("a bug in a vyre verifier")

    monkeypatch.setattr(vyre.StoreOp, "verify_", broken)
    module = parse_module((EXAMPLES / "axpy.mlir").read_text(), "axpy.mlir")
    with pytest.raises(RuntimeError, match="a bug in a vyre verifier"):
        verify_module(module)
