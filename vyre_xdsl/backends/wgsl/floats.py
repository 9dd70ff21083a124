"""WGSL for the floating-point element types beyond f32: `f16`, `bf16` and `f64`.

How each type lives in a kernel (measured with wgpu 0.32's WGSL compiler, Naga,
on lavapipe):

- `f16`: WGSL's own `f16` in registers and `array<f16>` in storage, behind
  `enable f16;` (the device's `shader-f16` feature). Exact ops (add, sub, mul,
  div, fma, min, max, rounding, comparisons) are native; the approximate ones
  (`sin`, `exp`, ...) are computed in f32 and rounded to f16 once, which keeps
  them within a stated f16 ULP budget on any driver. Naga miscompiles a
  `bitcast` that involves `f16`, so the bits of an f16 go through
  `pack2x16float`/`unpack2x16float`, which keep every pattern (NaN payloads
  included) on lavapipe.
- `bf16`: no WGSL type. Registers hold an f32 whose value is a bf16 (every op
  computes in f32 and rounds to nearest even, as `ml_dtypes.bfloat16` does);
  storage holds two 16-bit halves per `u32` word, the low half first (the
  little-endian layout of a numpy bf16 array). A store replaces its half with
  `atomicAnd` then `atomicOr` on the word, so neighbouring invocations that
  store the two halves of one word never lose each other's half.
- `f64`: WGSL's `f64` (the device's `shader-f64` feature; no enable directive:
  Naga rejects `enable f64;`) in registers and `array<f64>` in storage. Only the
  ops Vulkan defines on 64-bit floats exist: SPIR-V's GLSL.std.450 `sin`, `exp`,
  `log`, ... are 32-bit only (lavapipe returns garbage for f64 ones), so the
  semantics table does not accept f64 for them. `bitcast` of an f64 needs
  64-bit integers (`shader-int64`): Naga's own `bitcast<vec2<u32>>(f64)` is
  rejected.
"""

from __future__ import annotations

import re

import numpy as np

from vyre_xdsl.semantics import to_bf16

#: the directive every module that mentions f16 starts with
F16_ENABLE = "enable f16;"

#: IR type -> the device feature it needs
FEATURES = {"f16": "shader-f16", "f64": "shader-f64"}

#: the device feature the bits of an f64 need (bitcast to or from 64-bit integers)
INT64_FEATURE = "shader-int64"

#: IR float type -> WGSL type of a register
REGISTER_TYPES = {"f16": "f16", "bf16": "f32", "f64": "f64"}

#: IR float type -> WGSL element type of a storage buffer (bf16: two per u32 word)
STORAGE_TYPES = {"f16": "f16", "bf16": "u32", "f64": "f64"}

#: 2^-1000: scales every finite f64 into the f32 range (see `f64_predicate`)
_F64_TO_F32_RANGE = "9.332636185032189e-302lf"

_F64_NAME = re.compile(r"\bf64\b|[0-9]lf\b")
_INT64_NAME = re.compile(r"\b[ui]64\b")


# --------------------------------------------------------------------------- features


def needs_f16(wgsl: str) -> bool:
    """Whether a WGSL module needs the `shader-f16` feature."""
    return wgsl.startswith(F16_ENABLE)


_F16_NAME = re.compile(r"\bf16\b|[0-9]h\b")


def mentions_f16(wgsl: str) -> bool:
    """Whether a module's code uses f16 (and so needs `enable f16;`)."""
    return bool(_F16_NAME.search(_code(wgsl)))


def needs_f64(wgsl: str) -> bool:
    """Whether a WGSL module needs the `shader-f64` feature."""
    return bool(_F64_NAME.search(_code(wgsl)))


def needs_int64(wgsl: str) -> bool:
    """Whether a WGSL module needs the `shader-int64` feature."""
    return bool(_INT64_NAME.search(_code(wgsl)))


def required_features(wgsl: str) -> tuple[str, ...]:
    """The device features a printed module needs, in a fixed order."""
    needs = (
        (needs_f16, FEATURES["f16"]),
        (needs_f64, FEATURES["f64"]),
        (needs_int64, INT64_FEATURE),
    )
    return tuple(feature for test, feature in needs if test(wgsl))


def _code(wgsl: str) -> str:
    """The module without its `//` comments (they may name any type)."""
    return "\n".join(line.split("//", 1)[0] for line in wgsl.splitlines())


# --------------------------------------------------------------------------- literals


def literal(value: float, tname: str) -> str:
    """A WGSL expression of IR float type `tname` with exactly `value`'s value
    (NaN: a quiet NaN of the same sign)."""
    if tname == "bf16":
        return _f32_literal(float(to_bf16(np.array(value, np.float64)).astype(np.float32)))
    if tname == "f16":
        half = np.float16(value)
        if np.isfinite(half):
            return f"{float(half)!r}h"
        return f"f16(unpack2x16float({int(half.view(np.uint16))}u).x)"
    double = float(value)
    if np.isfinite(double):
        return f"{double!r}lf"
    return f"f64({_f32_literal(double)})"


def _f32_literal(value: float) -> str:
    single = np.float32(value)
    bits = int(single.view(np.uint32))
    tiny = np.finfo(np.float32).tiny
    if not np.isfinite(single) or (single == 0 and bits) or (single != 0 and abs(single) < tiny):
        return f"bitcast<f32>({bits:#010x}u)"
    return f"{float(single)!r}f"


# --------------------------------------------------------------------------- bf16

BF16_ROUND = "vyre_bf16_round"

#: f32 -> the nearest bf16 (ties to even), as an f32; NaN -> the quiet NaN of its
#: sign (what ml_dtypes gives); inf stays inf; overflow rounds to inf.
BF16_ROUND_HELPER = f"""fn {BF16_ROUND}(x: f32) -> f32 {{
  let b = bitcast<u32>(x);
  if ((b & 0x7fffffffu) > 0x7f800000u) {{
    return bitcast<f32>((b & 0x80000000u) | 0x7fc00000u);
  }}
  return bitcast<f32>((b + 0x7fffu + ((b >> 16u) & 1u)) & 0xffff0000u);
}}"""

F32_ROUND_TO_ODD = "vyre_f64_to_f32_odd"

#: f64 -> f32 rounded to odd: inexact results get an odd last bit, so rounding
#: that f32 once more to a narrower type (bf16) rounds the f64 correctly.
F64_TO_F32_ODD_HELPER = f"""fn {F32_ROUND_TO_ODD}(x: f64) -> f32 {{
  let r = f32(x);
  let bits = bitcast<u32>(r);
  if (f64(r) == x || (bits & 1u) == 1u || (bits & 0x7f800000u) == 0x7f800000u) {{
    return r;
  }}
  return bitcast<f32>(select(bits - 1u, bits + 1u, abs(f64(r)) < abs(x)));
}}"""

U32_TO_F32_ODD = "vyre_u32_to_f32_odd"

#: u32 -> f32 rounded to odd (exact below 2^24; above, the bits shifted out
#: leave a sticky last bit), for a correct second rounding to bf16.
U32_TO_F32_ODD_HELPER = f"""fn {U32_TO_F32_ODD}(x: u32) -> f32 {{
  let lost = 8u - min(countLeadingZeros(x), 8u);
  let kept = (x >> lost) << lost;
  return f32(kept | select(0u, 1u << lost, kept != x));
}}"""


def bf16_round(expression: str) -> str:
    return f"{BF16_ROUND}({expression})"


def bf16_word_index(index: str) -> str:
    return f"({index} >> 1u)"


def bf16_from_word(word: str, index: str) -> str:
    """The bf16 (as an f32) at element `index` of a packed buffer whose word
    holding it is `word`."""
    return f"bitcast<f32>(select({word} << 16u, {word} & 0xffff0000u, ({index} & 1u) == 1u))"


def bf16_store(word_ref: str, index: str, value: str) -> list[str]:
    """Statements that store the bf16 `value` (an f32 already rounded) into
    element `index` of a packed atomic buffer; `word_ref` is the word's reference."""
    shift = f"(16u * ({index} & 1u))"
    return [
        f"atomicAnd(&{word_ref}, ~(0xffffu << {shift}));",
        f"atomicOr(&{word_ref}, (bitcast<u32>({value}) >> 16u) << {shift});",
    ]


# --------------------------------------------------------------------------- ops


#: f16 ops computed natively: exactly rounded in IEEE arithmetic, or bit tricks
F16_NATIVE = frozenset(
    {"add", "sub", "mul", "div", "min", "max", "neg", "abs", "floor", "ceil", "round", "trunc"}
)


def op_expression(wgsl_of, name: str, kind: str, tname: str, args: list[str]) -> str:
    """The WGSL of the table op `name` (whose f32 WGSL is `wgsl_of(ty, *args)`)
    on operands of IR float type `tname`."""
    if tname == "bf16":
        expression = wgsl_of("f32", *args)
        return expression if kind in ("compare", "predicate") else bf16_round(expression)
    if tname == "f16":
        if kind == "compare" or name in F16_NATIVE:
            return wgsl_of("f16", *args)
        widened = wgsl_of("f32", *[f"f32({a})" for a in args])
        return widened if kind == "predicate" else f"f16({widened})"
    if kind == "predicate":
        return f64_predicate(name, args[0])
    if name == "sign":
        return f"select(sign({args[0]}), {args[0]}, {f64_predicate('is_nan', args[0])})"
    return wgsl_of("f64", *args)


def f64_predicate(name: str, x: str) -> str:
    """`is_nan`/`is_inf`/`is_finite` of an f64 without 64-bit integers: through
    the bits of an f32. NaN survives the conversion to f32; scaled by 2^-1000,
    every finite f64 is a finite f32 and infinities stay infinite."""
    if name == "is_nan":
        return f"((bitcast<u32>(f32({x})) & 0x7fffffffu) > 0x7f800000u)"
    scaled = f"bitcast<u32>(f32({x} * {_F64_TO_F32_RANGE}))"
    if name == "is_inf":
        return f"(({scaled} & 0x7fffffffu) == 0x7f800000u)"
    return f"(({scaled} & 0x7f800000u) != 0x7f800000u)"


def fma(tname: str, a: str, b: str, c: str) -> str:
    """bf16: f32's fma rounded once more (within 1 bf16 ULP of the exact result)."""
    if tname == "bf16":
        return bf16_round(f"fma({a}, {b}, {c})")
    return f"fma({a}, {b}, {c})"


# --------------------------------------------------------------------------- casts

FLOAT_TYPES = ("f16", "bf16", "f32", "f64")

#: integer target -> (lowest, highest) f64 literals of its range: f64 holds both exactly
_F64_RANGE = {"ui32": ("0.0lf", "4294967295.0lf"), "si32": ("-2147483648.0lf", "2147483647.0lf")}
_INT_ZERO = {"ui32": "0u", "si32": "0i"}
_INT_WGSL = {"ui32": "u32", "si32": "i32"}
_ONE_ZERO = {
    "f16": ("1.0h", "0.0h"),
    "bf16": ("1.0f", "0.0f"),
    "f32": ("1.0f", "0.0f"),
    "f64": ("1.0lf", "0.0lf"),
}


def cast(x: str, source: str, target: str, saturating_f32) -> str:
    """`vyre.cast` between two types of which one is f16, bf16 or f64 (the other
    ui32, si32, i1 or another float). Float -> float rounds to nearest even once;
    float -> integer is the saturating rule of f32 (`saturating_f32(x, target)`
    gives it for an f32 operand); integer -> float rounds to nearest even once."""
    if source == target:
        return x
    if target == "i1":
        return f"(!({x} == {_ONE_ZERO[source][1]}))"  # NaN is true
    if source == "i1":
        one, zero = _ONE_ZERO[target]
        return f"select({zero}, {one}, {x})"
    if source in FLOAT_TYPES and target in FLOAT_TYPES:
        return _float_to_float(x, source, target)
    if source in FLOAT_TYPES:
        if source == "f64":
            return _f64_to_int(x, target)
        return saturating_f32(x if source == "bf16" else f"f32({x})", target)
    return _int_to_float(x, source, target)


def _float_to_float(x: str, source: str, target: str) -> str:
    if target == "bf16":
        if source == "f64":
            return bf16_round(f"{F32_ROUND_TO_ODD}({x})")
        return bf16_round(x if source == "f32" else f"f32({x})")
    if source == "bf16":  # an f32 register
        return x if target == "f32" else f"{REGISTER_TYPES[target]}({x})"
    if source == "f64" and target == "f16":  # lavapipe converts through f32: round to odd first
        return f"f16({F32_ROUND_TO_ODD}({x}))"
    return f"{REGISTER_TYPES.get(target, target)}({x})"


def _int_to_float(x: str, source: str, target: str) -> str:
    if target == "bf16":
        if source == "ui32":
            return bf16_round(f"{U32_TO_F32_ODD}({x})")
        magnitude = f"{U32_TO_F32_ODD}(select(bitcast<u32>({x}), 0u - bitcast<u32>({x}), {x} < 0i))"
        return bf16_round(f"select({magnitude}, -{magnitude}, {x} < 0i)")
    if target == "f16":  # exact in f32 below 2^24; at or above, f16 overflows anyway
        return f"f16(f32({x}))"
    return f"{REGISTER_TYPES.get(target, target)}({x})"


def _f64_to_int(x: str, target: str) -> str:
    """Rust's saturating `as`: f64 holds both ends of the range exactly, so a
    clamp then WGSL's truncating conversion is exact; NaN gives 0."""
    lo, hi = _F64_RANGE[target]
    inside = f"{_INT_WGSL[target]}(clamp({x}, {lo}, {hi}))"
    return f"select({inside}, {_INT_ZERO[target]}, {f64_predicate('is_nan', x)})"


# --------------------------------------------------------------------------- bits


def f16_bits(x: str) -> str:
    """The 16 bits of an f16, in the low half of a u32."""
    return f"(pack2x16float(vec2<f32>(f32({x}), 0.0f)) & 0xffffu)"


def f16_from_bits(bits: str) -> str:
    """The f16 whose bits are the low half of the u32 `bits`."""
    return f"f16(unpack2x16float({bits} & 0xffffu).x)"


def bf16_bits(x: str) -> str:
    return f"(bitcast<u32>({x}) >> 16u)"


def bf16_from_bits(bits: str) -> str:
    return f"bitcast<f32>({bits} << 16u)"


def f64_bits(x: str) -> str:
    """The bits of an f64 as a `vec2<u32>` (low word first); needs `shader-int64`."""
    return f"vec2<u32>(u32(bitcast<u64>({x}) & 0xfffffffflu), u32(bitcast<u64>({x}) >> 32u))"


def f64_from_bits(words: str) -> str:
    """The f64 whose bits are the `vec2<u32>` `words` (low word first)."""
    return f"bitcast<f64>(u64({words}.x) | (u64({words}.y) << 32u))"


def bitcast(x: str, source: str, target: str) -> str:
    """`vyre.bitcast` between a float of this module and another type of the same
    width: f16 and bf16 with each other and the 16-bit integers (whose registers
    are 32-bit), f64 with the 64-bit types (`vec2<u32>` registers, low word first)."""
    if source == target:
        return x
    if source in ("f16", "bf16"):
        bits = f16_bits(x) if source == "f16" else bf16_bits(x)
        if target in ("f16", "bf16"):
            return f16_from_bits(bits) if target == "f16" else bf16_from_bits(bits)
        return _narrow_int(bits, target)
    if target in ("f16", "bf16"):
        bits = _widen_bits(x, source)
        return f16_from_bits(bits) if target == "f16" else bf16_from_bits(f"({bits} & 0xffffu)")
    if source == "f64":
        return f64_bits(x)
    return f64_from_bits(x)


def _narrow_int(bits: str, target: str) -> str:
    """16 bits (low half of a u32) as a register of the 16-bit integer `target`."""
    if target == "si16":  # sign-extended into an i32 register
        return f"((bitcast<i32>({bits}) << 16u) >> 16u)"
    return bits


def _widen_bits(x: str, source: str) -> str:
    """The low 16 bits of a 16-bit integer register, as a u32."""
    return f"(bitcast<u32>({x}) & 0xffffu)" if source == "si16" else x


#: helper name -> the helper function (the printer adds those an expression calls)
HELPERS = {
    BF16_ROUND: BF16_ROUND_HELPER,
    F32_ROUND_TO_ODD: F64_TO_F32_ODD_HELPER,
    U32_TO_F32_ODD: U32_TO_F32_ODD_HELPER,
}
