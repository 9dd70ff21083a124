"""Conformance of the 8/16/64-bit integer types: every op on every integer type it
accepts, at edge values, on the reference and on wgpu, unfused (a two-program
chain: compute, then copy) and fused. Expected values are computed here with
plain Python ints wrapped to the width, never with vyre_xdsl's own semantics.

One dispatch per type covers all its ops: invocation j computes every op on the
operand pair j % n and keeps the result of op j // n (a `select` chain), so each
program stays elementwise and the fused chain is exact.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.interpreter import VyreTrap
from vyre_xdsl.semantics import OPS, WGSL_TYPES

from ..support import saturate

#: (bits, signed, host dtype), written out here
TYPES = {
    "ui8": (8, False, np.uint8),
    "ui16": (16, False, np.uint16),
    "si8": (8, True, np.int8),
    "si16": (16, True, np.int16),
    "ui64": (64, False, np.uint64),
    "si64": (64, True, np.int64),
}
#: the types the wgpu backend lowers today (the others: see test_wgpu_refuses_...)
GPU_TYPES = [t for t in TYPES if t in WGSL_TYPES]


def wrap(value: int, ty: str) -> int:
    bits, signed, _ = TYPES[ty]
    value &= (1 << bits) - 1
    return value - (1 << bits) if signed and value >> (bits - 1) else value


def unsigned(value: int, ty: str) -> int:
    return value & ((1 << TYPES[ty][0]) - 1)


def limits(ty: str) -> tuple[int, int]:
    bits, signed, _ = TYPES[ty]
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def edges(ty: str) -> list[int]:
    bits, signed, _ = TYPES[ty]
    lo, hi = limits(ty)
    values = {0, 1, 2, 3, hi, lo, hi - 1, bits - 1, bits, 0x5A, lo + 1}
    values |= {-1, -2, -(bits - 1)} if signed else {1 << (bits - 1), (1 << (bits - 1)) - 1}
    return sorted(wrap(v, ty) for v in values)


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def rotate(a: int, b: int, ty: str, left: bool) -> int:
    bits = TYPES[ty][0]
    u, s = unsigned(a, ty), b & (bits - 1)
    if not left:
        s = (bits - s) % bits
    return wrap((u << s) | (u >> (bits - s)), ty)


def reverse(a: int, ty: str) -> int:
    bits = TYPES[ty][0]
    return wrap(int(format(unsigned(a, ty), f"0{bits}b")[::-1], 2), ty)


def clz(a: int, ty: str) -> int:
    return TYPES[ty][0] - unsigned(a, ty).bit_length()


def ctz(a: int, ty: str) -> int:
    u = unsigned(a, ty)
    return TYPES[ty][0] if u == 0 else (u & -u).bit_length() - 1


def divide(a: int, b: int, ty: str) -> int:
    if b == 0:  # unsigned only: a signed divisor of 0 was replaced by 1
        return limits(ty)[1]
    return wrap(trunc_div(a, b), ty)


def remainder(a: int, b: int, ty: str) -> int:
    if b == 0:
        return 0
    return wrap(a - b * trunc_div(a, b), ty)


def shift_right(a: int, b: int, ty: str) -> int:
    s = b & (TYPES[ty][0] - 1)
    return a >> s  # Python's >> is arithmetic on negatives, logical on naturals


#: op -> Python model on (a, b, type); the result is of the operand type
BINARY = {
    "add": lambda a, b, t: wrap(a + b, t),
    "sub": lambda a, b, t: wrap(a - b, t),
    "mul": lambda a, b, t: wrap(a * b, t),
    "div": divide,
    "mod": remainder,
    "min": lambda a, b, t: min(a, b),
    "max": lambda a, b, t: max(a, b),
    "bit_and": lambda a, b, t: wrap(a & b, t),
    "bit_or": lambda a, b, t: wrap(a | b, t),
    "bit_xor": lambda a, b, t: wrap(a ^ b, t),
    "shl": lambda a, b, t: wrap(a << (b & (TYPES[t][0] - 1)), t),
    "shr": shift_right,
    "saturating_add": lambda a, b, t: min(a + b, limits(t)[1]),
    "saturating_sub": lambda a, b, t: max(a - b, 0),
    "saturating_mul": lambda a, b, t: min(a * b, limits(t)[1]),
    "rotate_left": lambda a, b, t: rotate(a, b, t, True),
    "rotate_right": lambda a, b, t: rotate(a, b, t, False),
}
COMPARE = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}
#: binary ops whose result is a ui32 whatever the operand type
TO_U32 = {"abs_diff": lambda a, b: abs(a - b)}
UNARY = {
    "neg": lambda a, t: wrap(-a, t),
    "abs": lambda a, t: wrap(abs(a), t),
    "bit_not": lambda a, t: wrap(~a, t),
    "popcount": lambda a, t: bin(unsigned(a, t)).count("1"),
    "clz": clz,
    "ctz": ctz,
    "reverse_bits": reverse,
    "sign": lambda a, t: (a > 0) - (a < 0),
}


def ops_of(ty: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """The ops that accept `ty`, by shape; fails on an op this file has no model of."""
    accepted = [name for name, sem in OPS.items() if ty in sem.types]
    unknown = [n for n in accepted if n not in {**BINARY, **COMPARE, **TO_U32, **UNARY}]
    assert unknown == [], f"no Python model for {unknown} on {ty}: add one"
    return (
        [n for n in BINARY if n in accepted],
        [n for n in COMPARE if n in accepted],
        [n for n in TO_U32 if n in accepted],
        [n for n in UNARY if n in accepted],
    )


DIVISIONS = ("div", "mod")


def _chain(ty: str, n: int) -> tuple[str, dict[str, tuple[str, int]]]:
    """The compute-then-copy module for `ty` on n operand pairs, and its outputs
    (name -> (element type, count))."""
    binary, compare, to_u32, unary = ops_of(ty)
    _, signed, _ = TYPES[ty]
    groups = {
        "rt": (ty, [f"vyre.{o} %x, %y{'s' if signed and o in DIVISIONS else ''}" for o in binary]),
        "rb": ("i1", [f"vyre.{o} %x, %y" for o in compare]),
        "ru": ("ui32", [f"vyre.{o} %x, %y" for o in to_u32]),
    }
    groups["rt"][1].extend(f"vyre.{o} %x" for o in unary)
    groups = {g: v for g, v in groups.items() if v[1]}
    lo = limits(ty)[0]
    lines = [
        "    %j = vyre.invocation_id x",
        f"    %n = vyre.const {n} : ui32",
        "    %i = vyre.mod %j, %n : ui32",
        "    %k = vyre.div %j, %n : ui32",
        f"    %x = vyre.load @a[%i] : {ty}",
        f"    %y = vyre.load @b[%i] : {ty}",
    ]
    if signed:  # a divisor that would trap (0, or -1 under MIN) is replaced by 1
        lines += [
            f"    %zero = vyre.const 0 : {ty}",
            f"    %one = vyre.const 1 : {ty}",
            f"    %bz = vyre.eq %y, %zero : {ty}",
            f"    %m1 = vyre.const -1 : {ty}",
            f"    %lo = vyre.const {lo} : {ty}",
            f"    %am = vyre.eq %x, %lo : {ty}",
            f"    %bm = vyre.eq %y, %m1 : {ty}",
            "    %ov = vyre.and %am, %bm : i1",
            "    %bad = vyre.or %bz, %ov : i1",
            f"    %ys = vyre.select %bad, %one, %y : {ty}",
        ]
    decls, copies, outputs = [], [], {}
    for slot, (group, (element, exprs)) in enumerate(groups.items()):
        count = len(exprs) * n
        result_ty = "i1" if group == "rb" else element
        for index, expr in enumerate(exprs):
            lines.append(f"    %{group}{index} = {expr} : {ty}")
            lines.append(f"    %{group}c{index} = vyre.const {index} : ui32")
            lines.append(f"    %{group}s{index} = vyre.eq %k, %{group}c{index} : ui32")
        acc = f"%{group}{len(exprs) - 1}"
        for index in range(len(exprs) - 2, -1, -1):
            lines.append(
                f"    %{group}p{index} = vyre.select %{group}s{index}, %{group}{index}, {acc} : {result_ty}"
            )
            acc = f"%{group}p{index}"
        lines.append(f"    vyre.store @{group}[%j] = {acc} : {result_ty}")
        decls.append(
            f"    vyre.buffer @{group} binding {slot + 2} write_only : {result_ty}[{count}]"
        )
        copies.append(
            (
                f"    vyre.buffer @{group} binding {slot} read_only : {result_ty}[{count}]",
                f"    vyre.buffer @o{group} binding {slot + 8} write_only output : {result_ty}[{count}]",
                f"    %v{group} = vyre.load @{group}[%j] : {result_ty}\n"
                f"    vyre.store @o{group}[%j] = %v{group} : {result_ty}",
            )
        )
        outputs[f"o{group}"] = (result_ty, count)
    text = f"""builtin.module {{
  vyre.program @compute workgroup_size [64, 1, 1] {{
    vyre.buffer @a binding 0 read_only : {ty}[{n}]
    vyre.buffer @b binding 1 read_only : {ty}[{n}]
{chr(10).join(decls)}
{chr(10).join(lines)}
  }}
  vyre.program @copy workgroup_size [64, 1, 1] {{
{chr(10).join(c[0] for c in copies)}
{chr(10).join(c[1] for c in copies)}
    %j = vyre.invocation_id x
{chr(10).join(c[2] for c in copies)}
  }}
}}
"""
    return text, outputs


def expected(ty: str, pairs: list[tuple[int, int]]) -> dict[str, list[int]]:
    binary, compare, to_u32, unary = ops_of(ty)
    _, signed, _ = TYPES[ty]
    lo = limits(ty)[0]
    rt, rb, ru = [], [], []
    for name in binary:
        for a, b in pairs:
            if name in ("div", "mod") and signed and (b == 0 or (a == lo and b == -1)):
                b = 1
            rt.append(BINARY[name](a, b, ty))
    for name in unary:
        rt.extend(UNARY[name](a, ty) for a, _ in pairs)
    for name in compare:
        rb.extend(int(COMPARE[name](a, b)) for a, b in pairs)
    for name in to_u32:
        ru.extend(TO_U32[name](a, b) for a, b in pairs)
    return {k: v for k, v in {"ort": rt, "orb": rb, "oru": ru}.items() if v}


def _check(ty: str, backend: str, fuse: bool) -> None:
    pairs = list(itertools.product(edges(ty), repeat=2))
    text, outputs = _chain(ty, len(pairs))
    dtype = TYPES[ty][2]
    inputs = {
        "a": np.array([a for a, _ in pairs], dtype),
        "b": np.array([b for _, b in pairs], dtype),
    }
    got = vyre_xdsl.run(text, inputs, backend=backend, fuse=fuse)
    want = expected(ty, pairs)
    assert sorted(got) == sorted(want) == sorted(outputs)
    for name, values in want.items():
        actual = [int(x) for x in got[name].tolist()]
        wrong = [
            (index // len(pairs), pairs[index % len(pairs)], actual[index], values[index])
            for index in range(len(values))
            if actual[index] != values[index]
        ]
        assert wrong == [], f"{ty} {name}: (op#, operands, got, want) {wrong[:8]}"


@pytest.mark.parametrize("fuse", [False, True], ids=["chain", "fused"])
@pytest.mark.parametrize("ty", list(TYPES))
def test_every_op_at_edge_values_on_the_reference(ty, fuse):
    _check(ty, "reference", fuse)


@pytest.mark.parametrize("fuse", [False, True], ids=["chain", "fused"])
@pytest.mark.parametrize("ty", GPU_TYPES)
def test_every_op_at_edge_values_on_wgpu(ty, fuse):
    _check(ty, "wgpu", fuse)


# ------------------------------------------------------------------ casts

CAST_TYPES = ["ui8", "ui16", "si8", "si16", "ui32", "si32", "ui64", "si64", "f32", "i1"]
BITS = {"ui32": (32, False), "si32": (32, True), **{t: TYPES[t][:2] for t in TYPES}}
HOST = {"ui32": np.uint32, "si32": np.int32, "f32": np.float32, "i1": np.uint32}
HOST |= {t: TYPES[t][2] for t in TYPES}


def _wrap_any(value: int, ty: str) -> int:
    bits, signed = BITS[ty]
    value &= (1 << bits) - 1
    return value - (1 << bits) if signed and value >> (bits - 1) else value


def _cast_sources(source: str) -> list:
    if source == "f32":
        return [0.0, -0.0, 0.9, -0.9, 1.5, -1.5, 127.5, -128.5, 255.5, 256.0, -32768.9, 65535.5,
                65536.0, 3e9, -3e9, 1e20, -1e20, float("inf"), float("-inf"), float("nan")]  # fmt: skip
    if source == "i1":
        return [0, 1, 5]  # any non-zero word is true
    bits, signed = BITS[source]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return sorted({0, 1, 2, 0x7F & hi, 0x80 & hi, 0xFF & hi, 0x1234 & hi, hi, lo, lo + 1, hi - 1})


def _cast_expected(value, source: str, target: str):
    if target == "i1":
        return int(value != 0)
    if source == "i1":
        return float(value != 0) if target == "f32" else int(value != 0)
    if source == "f32":
        value = float(np.float32(value))
        return value if target == "f32" else saturate(value, *BITS[target])
    if target == "f32":
        return float(np.float32(float(value)))  # to nearest: the only float rounding here
    return _wrap_any(value, target)


def _cast_module(source: str, targets: list[str], n: int, op: str = "cast") -> str:
    decls = [f"    vyre.buffer @x binding 0 read_only : {source}[{n}]"]
    body = ["    %i = vyre.invocation_id x", f"    %v = vyre.load @x[%i] : {source}"]
    for slot, target in enumerate(targets, start=1):
        decls.append(f"    vyre.buffer @t{slot} binding {slot} write_only output : {target}[{n}]")
        body.append(f"    %c{slot} = vyre.{op} %v : {source} to {target}")
        body.append(f"    vyre.store @t{slot}[%i] = %c{slot} : {target}")
    return (
        "builtin.module {\n  vyre.program @casts workgroup_size [64, 1, 1] {\n"
        + "\n".join(decls + body)
        + "\n  }\n}\n"
    )


def _same(got, want) -> bool:
    if isinstance(want, float) and want != want:
        return got != got
    return got == want and (not isinstance(want, float) or np.signbit(got) == np.signbit(want))


def _check_casts(source: str, backend: str) -> None:
    targets = [t for t in CAST_TYPES if t != source]
    if backend == "wgpu":
        targets = [t for t in targets if t in WGSL_TYPES]
    values = _cast_sources(source)
    text = _cast_module(source, targets, len(values))
    got = vyre_xdsl.run(text, {"x": np.array(values, HOST[source])}, backend=backend)
    for slot, target in enumerate(targets, start=1):
        actual = got[f"t{slot}"].tolist()
        want = [_cast_expected(v, source, target) for v in values]
        wrong = [(v, a, w) for v, a, w in zip(values, actual, want) if not _same(a, w)]
        assert wrong == [], f"cast {source} to {target}: (value, got, want) {wrong[:6]}"


@pytest.mark.parametrize("source", CAST_TYPES)
def test_casts_between_integers_floats_and_bools_on_the_reference(source):
    _check_casts(source, "reference")


@pytest.mark.parametrize("source", [t for t in CAST_TYPES if t in WGSL_TYPES])
def test_casts_between_integers_floats_and_bools_on_wgpu(source):
    _check_casts(source, "wgpu")


def _on_backends(cases: list[tuple]) -> list[tuple]:
    """Each case on the reference, and on wgpu when it lowers the case's first type."""
    return [(*c, "reference") for c in cases] + [(*c, "wgpu") for c in cases if c[0] in WGSL_TYPES]


SIGN_PAIRS = [("ui8", "si8"), ("si8", "ui8"), ("ui16", "si16"), ("si16", "ui16")]


@pytest.mark.parametrize(("source", "target", "backend"), _on_backends(SIGN_PAIRS))
def test_bitcasts_between_signed_and_unsigned_keep_the_bits(source, target, backend):
    values = _cast_sources(source)
    text = _cast_module(source, [target], len(values), op="bitcast")
    got = vyre_xdsl.run(text, {"x": np.array(values, HOST[source])}, backend=backend)
    assert got["t1"].tolist() == [_wrap_any(v, target) for v in values]


# ------------------------------------------------------------------ traps and memory


@pytest.mark.parametrize(
    ("ty", "op", "backend"),
    _on_backends([(t, o) for t in ("si8", "si16", "si64") for o in ("div", "mod")]),
)
def test_signed_division_by_zero_and_min_by_minus_one_trap(ty, op, backend):
    lo = limits(ty)[0]
    text = f"""builtin.module {{
  vyre.program @p workgroup_size [4, 1, 1] {{
    vyre.buffer @a binding 0 read_only : {ty}[4]
    vyre.buffer @b binding 1 read_only : {ty}[4]
    vyre.buffer @q binding 2 write_only output : {ty}[4]
    %i = vyre.invocation_id x
    %x = vyre.load @a[%i] : {ty}
    %y = vyre.load @b[%i] : {ty}
    %r = vyre.{op} %x, %y : {ty}
    vyre.store @q[%i] = %r : {ty}
  }}
}}
"""
    dtype = TYPES[ty][2]
    for a, b, lane in (([7, 7, 7, 7], [1, 2, 0, 3], 2), ([5, lo, 5, 5], [1, -1, 1, 1], 1)):
        with pytest.raises(VyreTrap) as info:
            vyre_xdsl.run(text, {"a": np.array(a, dtype), "b": np.array(b, dtype)}, backend=backend)
        assert (info.value.tag, info.value.invocation) == (f"{ty}.{op}", lane)
    ok = vyre_xdsl.run(
        text,
        {"a": np.array([7, -7, lo, 9], dtype), "b": np.array([2, 2, 1, -1], dtype)},
        backend=backend,
    )
    want = [trunc_div(7, 2), trunc_div(-7, 2), lo, -9] if op == "div" else [1, -1, 0, 0]
    assert ok["q"].tolist() == want


@pytest.mark.parametrize(("ty", "backend"), _on_backends([("ui8",), ("si16",)]))
def test_neighbouring_invocations_store_into_one_word_and_out_of_bounds_is_a_no_op(ty, backend):
    """Invocation i stores element (i * 5) % n, so the elements of a word come from
    invocations far apart; invocations past n load zeros, and store past the end of
    @y (nothing) and of @z (nothing past n + 3)."""
    n = 37  # not a multiple of the word's element count
    text = f"""builtin.module {{
  vyre.program @p workgroup_size [16, 1, 1] {{
    vyre.buffer @x binding 0 read_only : {ty}[{n}]
    vyre.buffer @y binding 1 write_only output : {ty}[{n}]
    vyre.buffer @z binding 2 write_only output : {ty}[{n + 3}]
    %i = vyre.invocation_id x
    %five = vyre.const 5 : ui32
    %n = vyre.const {n} : ui32
    %p = vyre.mul %i, %five : ui32
    %m = vyre.mod %p, %n : ui32
    %inside = vyre.lt %i, %n : ui32
    %j = vyre.select %inside, %m, %i : ui32
    %v = vyre.load @x[%i] : {ty}
    %one = vyre.const 1 : {ty}
    %w = vyre.add %v, %one : {ty}
    vyre.store @y[%j] = %w : {ty}
    vyre.store @z[%i] = %v : {ty}
  }}
}}
"""
    dtype = TYPES[ty][2]
    x = np.array([wrap(3 * k - 50, ty) for k in range(n)], dtype)
    got = vyre_xdsl.run(text, {"x": x}, backend=backend)
    want_y = [0] * n
    for i in range(n):
        want_y[(i * 5) % n] = wrap(int(x[i]) + 1, ty)
    assert got["y"].tolist() == want_y
    assert got["z"].tolist() == [int(v) for v in x] + [0, 0, 0]


@pytest.mark.parametrize("backend", ["reference", "wgpu"])
@pytest.mark.parametrize("ty", ["ui8", "si16"])
def test_a_runtime_sized_packed_buffer_holds_whole_words(backend, ty):
    """A `ui8[?]` / `si16[?]` input is padded with zeros to whole 32-bit words on every
    backend (upstream's rule): 5 bytes hold 8, and `buf_len` is that capacity. The
    program doubles every element in place (wrapping) and stores the length.
    Expectations: numpy on the zero-padded input."""
    text = f"""vyre.program @p workgroup_size [64, 1, 1] {{
  vyre.buffer @x binding 0 read_write : {ty}[?]
  vyre.buffer @n binding 1 write_only : ui32[1]
  %i = vyre.invocation_id x
  %len = vyre.buf_len @x
  %z = vyre.const 0 : ui32
  %first = vyre.eq %i, %z : ui32
  vyre.if %first {{
    vyre.store @n[%z] = %len : ui32
  }}
  %inside = vyre.lt %i, %len : ui32
  vyre.if %inside {{
    %v = vyre.load @x[%i] : {ty}
    %w = vyre.add %v, %v : {ty}
    vyre.store @x[%i] = %w : {ty}
  }}
}}
"""
    dtype = np.uint8 if ty == "ui8" else np.int16
    x = np.array([200, 7, 100, 1, 255][: 5 if ty == "ui8" else 3], dtype=dtype)
    per_word = 4 // dtype().itemsize
    padded = np.concatenate([x, np.zeros(-x.size % per_word, dtype=dtype)])
    got = vyre_xdsl.run(text, {"x": x}, backend=backend)
    assert got["n"].tolist() == [padded.size]
    assert got["x"].tolist() == (padded.astype(np.int64) * 2).astype(dtype).tolist()


INTEGER_PIPELINE = """
vyre.program @widen workgroup_size [8, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui8[16]
  vyre.buffer @t binding 1 read_write : si64[16]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui8
  %w = vyre.cast %v : ui8 to si64
  %k = vyre.const -1000000000000 : si64
  %s = vyre.mul %w, %k : si64
  vyre.store @t[%i] = %s : si64
}
vyre.program @narrow workgroup_size [8, 1, 1] {
  vyre.buffer @t binding 0 read_only : si64[16]
  vyre.buffer @y binding 1 write_only : si16[16]
  vyre.buffer @z binding 2 write_only : si64[16]
  %i = vyre.invocation_id x
  %v = vyre.load @t[%i] : si64
  %n = vyre.cast %v : si64 to si16
  vyre.store @y[%i] = %n : si16
  vyre.store @z[%i] = %v : si64
}
"""


def test_a_bundle_carries_the_integer_types():
    """A megakernel bundle of ui8, si64 and si16 buffers runs like the source on both
    backends. Expectations: numpy's wrapping int64 arithmetic and int16 truncation."""
    from vyre_xdsl.megakernel.bundle import TargetModuleBundle
    from vyre_xdsl.megakernel.compile import compile_module
    from vyre_xdsl.megakernel.run import run_bundle

    x = np.array([0, 1, 2, 255, 128, 7, 9, 200, 3, 4, 5, 6, 77, 88, 99, 254], dtype=np.uint8)
    data = compile_module(vyre_xdsl.parse(INTEGER_PIPELINE)).bundle_bytes()
    assert TargetModuleBundle.from_bytes(data).modules
    wide = x.astype(np.int64) * np.int64(-1000000000000)
    for backend in ("wgpu", "reference"):
        got = run_bundle(data, {"x": x, "t": np.zeros(16, np.int64)}, backend=backend)
        np.testing.assert_array_equal(got["z"], wide)
        np.testing.assert_array_equal(got["y"], wide.astype(np.int16))
