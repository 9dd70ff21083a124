"""Upstream `vyre-driver-wgpu/tests/buf_len_array_length/`, the U8 cases.

- `basic_len_contracts.rs`: `buf_len` of a runtime-sized `U8` input is its
  byte capacity in whole 32-bit words (8 for 5 bytes); a byte load at index 11
  extracts lane 3 of its word; four adjacent byte loads packed with `or`/`shl`
  keep their lanes.
- `dynamic_pack_contracts.rs`: invocation `w` packs bytes `4w .. 4w+3` into
  word `w`: with `or`/`shl`, with `atomic or` per lane, with the bytes first
  assigned to named locals (under an `if` whose condition is always false),
  and with the byte address clamped by `buf_len` and the byte masked by 0xFF.
- `scatter_contracts.rs`: offset-driven byte scatter (4 words) and the
  mask/comment-driven one (256 words: a line comment compacted away).

Each runs on the reference interpreter and on wgpu. Upstream's input bytes are
the string `int x = 1; // trailing\\n` (23 bytes); upstream's expected values are
word 2 == b"1; /" and the lanes named above.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_upstream_buf_len import WRITER
from upstream_support import backends, run

TEXT = np.frombuffer(b"int x = 1; // trailing\n", dtype=np.uint8)

BYTE_LEN = WRITER.replace("ui32[?]", "ui8[?]")  # the u32 case's program on a U8 input


def byte_load(index: int) -> str:
    return f"""vyre.program @load workgroup_size [1, 1, 1] {{
  vyre.buffer @input binding 0 read_only : ui8[?]
  vyre.buffer @out binding 1 write_only : ui32[1]
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %first = vyre.eq %i, %z : ui32
  vyre.if %first {{
    %k = vyre.const {index} : ui32
    %b = vyre.load @input[%k] : ui8
    %v = vyre.cast %b : ui8 to ui32
    vyre.store @out[%z] = %v : ui32
  }}
}}
"""


def four_byte_pack(start: int) -> str:
    loads = "".join(
        f"""    %k{k} = vyre.const {start + k} : ui32
    %b{k} = vyre.load @input[%k{k}] : ui8
    %v{k} = vyre.cast %b{k} : ui8 to ui32
    %s{k} = vyre.const {8 * k} : ui32
    %p{k} = vyre.shl %v{k}, %s{k} : ui32
"""
        for k in range(4)
    )
    return f"""vyre.program @pack workgroup_size [1, 1, 1] {{
  vyre.buffer @input binding 0 read_only : ui8[?]
  vyre.buffer @out binding 1 write_only : ui32[1]
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %first = vyre.eq %i, %z : ui32
  vyre.if %first {{
{loads}    %hi = vyre.bit_or %p2, %p3 : ui32
    %mid = vyre.bit_or %p1, %hi : ui32
    %all = vyre.bit_or %p0, %mid : ui32
    vyre.store @out[%z] = %all : ui32
  }}
}}
"""


def _per_word_program(name: str, buffers: str, words: int, lanes: str) -> str:
    """Upstream's `Program::wrapped(..., [256, 1, 1], ...)` of these files: a
    runtime-sized U8 `@input`, then `buffers`; invocation `w < words` runs
    `lanes` with `%w4 = 4 w` (and `%one_c = 1`)."""
    return f"""vyre.program @{name} workgroup_size [256, 1, 1] {{
  vyre.buffer @input binding 0 read_only : ui8[?]
{buffers}  %w = vyre.invocation_id x
  %one_c = vyre.const 1 : ui32
  %words = vyre.const {words} : ui32
  %inside = vyre.lt %w, %words : ui32
  vyre.if %inside {{
      %four = vyre.const 4 : ui32
      %w4 = vyre.mul %w, %four : ui32
{lanes}  }}
}}
"""


def _byte(k: int, clamped: bool) -> str:
    """`%v{k}`: byte 4w + k of the input as a ui32 (clamped by buf_len and masked)."""
    address = f"""      %c{k} = vyre.const {k} : ui32
      %a{k} = vyre.add %w4, %c{k} : ui32
"""
    if clamped:
        address += f"""      %n{k} = vyre.buf_len @input
      %one{k} = vyre.const 1 : ui32
      %last{k} = vyre.saturating_sub %n{k}, %one{k} : ui32
      %in{k} = vyre.lt %a{k}, %n{k} : ui32
      %safe{k} = vyre.select %in{k}, %a{k}, %last{k} : ui32
      %b{k} = vyre.load @input[%safe{k}] : ui8
      %u{k} = vyre.cast %b{k} : ui8 to ui32
      %ff{k} = vyre.const 255 : ui32
      %v{k} = vyre.bit_and %u{k}, %ff{k} : ui32
"""
    else:
        address += f"""      %b{k} = vyre.load @input[%a{k}] : ui8
      %v{k} = vyre.cast %b{k} : ui8 to ui32
"""
    return address


def dynamic_pack(kind: str) -> str:
    """Upstream's `dynamic_four_byte_*_pack_writer_program(4)`: kind is `or`
    (store), `atomic`, `assigned` (atomic, through named locals) or `clamped`."""
    lanes = ""
    for k in range(4):
        lanes += _byte(k, clamped=kind == "clamped")
        value = f"%v{k}"
        if kind in ("assigned", "clamped"):
            lanes += f"""      %zero{k} = vyre.const 0 : ui32
      vyre.let @in_byte_{k} = %zero{k} : ui32
      %never{k} = vyre.eq %zero{k}, %one_c : ui32
      vyre.if %never{k} {{
        %space{k} = vyre.const 32 : ui32
        vyre.assign @in_byte_{k} = %space{k} : ui32
      }} else {{
        vyre.assign @in_byte_{k} = %v{k} : ui32
      }}
      %x{k} = vyre.var @in_byte_{k} : ui32
"""
            value = f"%x{k}"
        lanes += f"""      %s{k} = vyre.const {8 * k} : ui32
      %p{k} = vyre.shl {value}, %s{k} : ui32
"""
        if kind != "or":
            lanes += f"      %prev{k} = vyre.atomic or @out[%w], %p{k} : ui32\n"
    if kind == "or":
        lanes += """      %hi = vyre.bit_or %p2, %p3 : ui32
      %mid = vyre.bit_or %p1, %hi : ui32
      %all = vyre.bit_or %p0, %mid : ui32
      vyre.store @out[%w] = %all : ui32
"""
    out = "write_only" if kind == "or" else "read_write"
    return _per_word_program("pack", f"  vyre.buffer @out binding 1 {out} : ui32[4]\n", 4, lanes)


@backends
def test_byte_buf_len_reports_padded_byte_capacity(backend):
    got = run(BYTE_LEN, {"input": np.frombuffer(b"abcde", dtype=np.uint8)}, backend=backend)
    assert got["out"].tolist() == [8]


@backends
def test_byte_load_extracts_lane_from_dynamic_u8_input(backend):
    assert run(byte_load(11), {"input": TEXT}, backend=backend)["out"].tolist() == [ord("/")]


@backends
def test_byte_loads_pack_adjacent_lanes(backend):
    (word,) = run(four_byte_pack(8), {"input": TEXT}, backend=backend)["out"].tolist()
    assert word.to_bytes(4, "little") == b"1; /"


@backends
@pytest.mark.parametrize("kind", ["or", "atomic", "assigned", "clamped"])
def test_dynamic_byte_loads_pack_invocation_indexed_lanes(backend, kind):
    inputs = {"input": TEXT}
    if kind != "or":
        inputs["out"] = np.zeros(4, dtype=np.uint32)  # upstream binds 16 zero bytes
    words = run(dynamic_pack(kind), inputs, backend=backend)["out"].tolist()
    assert words[2].to_bytes(4, "little") == b"1; /"


def _clamped_byte(k: int, address: str) -> str:
    """`%in_byte_{k}`'s value `%v{k}`: the input byte at `address`, clamped by
    buf_len and masked with 0xFF (upstream's `source_byte`)."""
    return f"""%n{k} = vyre.buf_len @input
%one{k} = vyre.const 1 : ui32
%last{k} = vyre.saturating_sub %n{k}, %one{k} : ui32
%inb{k} = vyre.lt {address}, %n{k} : ui32
%safe{k} = vyre.select %inb{k}, {address}, %last{k} : ui32
%b{k} = vyre.load @input[%safe{k}] : ui8
%u{k} = vyre.cast %b{k} : ui8 to ui32
%ff{k} = vyre.const 255 : ui32
%v{k} = vyre.bit_and %u{k}, %ff{k} : ui32
"""


def _scatter_tail(k: int, byte: str) -> str:
    """Upstream's out_pos/out_word_idx/out_shift and the atomic or of `byte`."""
    return f"""%one_s{k} = vyre.const 1 : ui32
%pos{k} = vyre.saturating_sub %off{k}, %one_s{k} : ui32
%four_s{k} = vyre.const 4 : ui32
%word{k} = vyre.div %pos{k}, %four_s{k} : ui32
%lane{k} = vyre.mod %pos{k}, %four_s{k} : ui32
%eight{k} = vyre.const 8 : ui32
%shift{k} = vyre.mul %lane{k}, %eight{k} : ui32
%p{k} = vyre.shl {byte}, %shift{k} : ui32
%prev{k} = vyre.atomic or @out[%word{k}], %p{k} : ui32
"""


def _indented(text: str, depth: int) -> str:
    return "".join("  " * depth + line + "\n" for line in text.splitlines())


def offset_scatter(words: int) -> str:
    lanes = ""
    for k in range(4):
        lanes += _indented(
            f"%c{k} = vyre.const {k} : ui32\n%i{k} = vyre.add %w4, %c{k} : ui32\n"
            f"%off{k} = vyre.load @offsets[%i{k}] : ui32\n"
            + _clamped_byte(k, f"%i{k}")
            + _scatter_tail(k, f"%v{k}"),
            3,
        )
    buffers = (
        f"  vyre.buffer @offsets binding 1 read_only : ui32[{4 * words}]\n"
        f"  vyre.buffer @out binding 2 read_write : ui32[{words}]\n"
    )
    return _per_word_program("scatter", buffers, words, lanes)


def masked_comment_scatter(words: int) -> str:
    total = 4 * words
    lanes = ""
    for k in range(4):
        kept = (
            f"%cm{k} = vyre.load @comment_mask[%i{k}] : ui32\n"
            f"%zero{k} = vyre.const 0 : ui32\n"
            f"vyre.let @in_byte_{k} = %zero{k} : ui32\n"
            f"%two{k} = vyre.const 2 : ui32\n"
            f"%is_comment{k} = vyre.eq %cm{k}, %two{k} : ui32\n"
            f"vyre.if %is_comment{k} {{\n"
            f"  %space{k} = vyre.const 32 : ui32\n"
            f"  vyre.assign @in_byte_{k} = %space{k} : ui32\n"
            "} else {\n"
            + _indented(_clamped_byte(k, f"%i{k}"), 1)
            + f"  vyre.assign @in_byte_{k} = %v{k} : ui32\n"
            "}\n"
            f"%x{k} = vyre.var @in_byte_{k} : ui32\n" + _scatter_tail(k, f"%x{k}")
        )
        lane = (
            f"%c{k} = vyre.const {k} : ui32\n%i{k} = vyre.add %w4, %c{k} : ui32\n"
            f"%total{k} = vyre.const {total} : ui32\n"
            f"%in_total{k} = vyre.lt %i{k}, %total{k} : ui32\n"
            f"vyre.if %in_total{k} {{\n"
            f"  %m{k} = vyre.load @mask[%i{k}] : ui32\n"
            f"  %off{k} = vyre.load @offsets[%i{k}] : ui32\n"
            f"  %one_m{k} = vyre.const 1 : ui32\n"
            f"  %keep{k} = vyre.eq %m{k}, %one_m{k} : ui32\n"
            f"  vyre.if %keep{k} {{\n" + _indented(kept, 2) + "  }\n}\n"
        )
        lanes += _indented(lane, 3)
    buffers = (
        f"  vyre.buffer @mask binding 1 read_only : ui32[{total}]\n"
        f"  vyre.buffer @comment_mask binding 2 read_only : ui32[{total}]\n"
        f"  vyre.buffer @offsets binding 3 read_only : ui32[{total}]\n"
        f"  vyre.buffer @out binding 4 read_write : ui32[{words}]\n"
    )
    return _per_word_program("scatter", buffers, words, lanes)


@backends
def test_dynamic_offset_scatter_packs_invocation_indexed_lanes(backend):
    inputs = {
        "input": TEXT,
        "offsets": np.arange(1, 17, dtype=np.uint32),
        "out": np.zeros(4, dtype=np.uint32),
    }
    words = run(offset_scatter(4), inputs, backend=backend)["out"].tolist()
    assert words[2].to_bytes(4, "little") == b"1; /"


# upstream's prefixes (the rest: keep 0, comment 0, offset 24)
KEEP = [1] * 12 + [0] * 10 + [1] * 12 + [0] * 6
COMMENT = [0] * 11 + [2] + [1] * 10 + [0] * 18
OFFSETS = list(range(1, 13)) + [12] * 10 + list(range(13, 25)) + [24] * 6


@backends
def test_dynamic_masked_comment_scatter_packs_expected_lanes(backend):
    def filled(prefix, rest):
        values = np.full(1024, rest, dtype=np.uint32)
        values[: len(prefix)] = prefix
        return values

    inputs = {
        "input": np.frombuffer(b"int x = 1; // trailing\nint y = 2;\n", dtype=np.uint8),
        "mask": filled(KEEP, 0),
        "comment_mask": filled(COMMENT, 0),
        "offsets": filled(OFFSETS, 24),
        "out": np.zeros(256, dtype=np.uint32),
    }
    words = run(masked_comment_scatter(256), inputs, backend=backend)["out"]
    assert words.astype("<u4").tobytes()[:24] == b"int x = 1;  \nint y = 2;\n"
