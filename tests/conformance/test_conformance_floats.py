"""Conformance of the float types beyond f32: every op of the semantics table on
`f16`, `bf16` and `f64`, at their edge values (subnormals, infinities, NaN, the
largest finite value, ties of the rounding), plus fma, select, const, casts and
bitcasts.

Expected values come from exact rational arithmetic (`fractions.Fraction`)
rounded to the type by `round_to` below, or from `math` in double precision
rounded the same way, one element at a time: nothing here calls
`vyre_xdsl.semantics` or numpy's float16 / ml_dtypes' bfloat16 arithmetic.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from conformance_support import Case, check, ids, params, program, words

# ----------------------------------------------------------------- the formats

#: type -> (significand bits incl. the implicit one, lowest normal exponent, highest exponent)
FORMATS = {
    "f16": (11, -14, 15),
    "bf16": (8, -126, 127),
    "f32": (24, -126, 127),
    "f64": (53, -1022, 1023),
}
HOST = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}
FLOATS = ("f16", "bf16", "f64")
REFERENCE_ONLY = ("reference",)


def largest(ty: str) -> float:
    p, _, emax = FORMATS[ty]
    return float((2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax)


def smallest_subnormal(ty: str) -> float:
    p, emin, _ = FORMATS[ty]
    return float(Fraction(2) ** (emin - p + 1))


def smallest_normal(ty: str) -> float:
    return float(Fraction(2) ** FORMATS[ty][1])


def round_to(x, ty: str, negative_zero: bool = False) -> float:
    """The value of type `ty` nearest to the exact number `x` (a Fraction, int or
    float), ties to even; past the largest finite value (after rounding): inf. A
    zero result is -0.0 when `negative_zero`; inf and NaN floats pass through."""
    if isinstance(x, float) and not math.isfinite(x):
        return x
    q = Fraction(x)
    if q == 0:
        return -0.0 if negative_zero else 0.0
    p, emin, emax = FORMATS[ty]
    magnitude = abs(q)
    e = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** e > magnitude:
        e -= 1
    quantum = Fraction(2) ** (max(e, emin) - p + 1)
    steps, rest = divmod(magnitude, quantum)
    if rest > quantum / 2 or (rest == quantum / 2 and steps % 2 == 1):
        steps += 1
    value = steps * quantum
    if value > Fraction(largest(ty)):
        return math.inf if q > 0 else -math.inf
    return math.copysign(float(value), q) if value else (-0.0 if q < 0 else 0.0)


def host(values, ty: str) -> np.ndarray:
    """Host array of exactly representable Python floats (the conversion is exact)."""
    return np.array(values, dtype=np.float64).astype(HOST[ty])


def edges(ty: str) -> list[float]:
    """Edge values of `ty`, each exactly representable."""
    p, _, _ = FORMATS[ty]
    ulp_one = 2.0 ** (1 - p)
    tiny, normal, big = smallest_subnormal(ty), smallest_normal(ty), largest(ty)
    return [
        0.0,
        -0.0,
        1.0,
        -1.0,
        1.0 + ulp_one,
        1.5,
        -2.5,
        3.0,
        round_to(0.1, ty),
        round_to(-7.3, ty),
        tiny,
        -tiny,
        normal - tiny,  # the largest subnormal
        normal,
        big,
        -big,
        round_to(big / 3, ty),
        math.inf,
        -math.inf,
    ]


def flush(x: float, ty: str) -> float:
    """`x` with a subnormal of `ty` replaced by a zero of the same sign."""
    return math.copysign(0.0, x) if x != 0 and abs(x) < smallest_normal(ty) else x


# ----------------------------------------------------------------- references


def _exact(a: float, b: float, op: str):
    """a op b exactly (a Fraction), or the IEEE special result (a float)."""
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if math.isinf(a) or math.isinf(b) or (op == "div" and b == 0):
        with np.errstate(all="ignore"):
            ufunc = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op]
            return float(ufunc(np.float64(a), np.float64(b)))
    fa, fb = Fraction(a), Fraction(b)
    return {"add": fa + fb, "sub": fa - fb, "mul": fa * fb, "div": fa / fb if fb else None}[op]


def _zero_sign(a: float, b: float, op: str) -> bool:
    """Whether an exact zero result of `a op b` is -0.0 (round to nearest)."""
    if op == "add":
        return math.copysign(1, a) < 0 and math.copysign(1, b) < 0
    if op == "sub":
        return math.copysign(1, a) < 0 and math.copysign(1, b) > 0
    return (math.copysign(1, a) < 0) != (math.copysign(1, b) < 0)


def arithmetic(op: str, ty: str):
    def run(a: float, b: float) -> float:
        exact = _exact(a, b, op)
        if isinstance(exact, float):
            return exact
        # the sign of an underflow to zero is the sign of the exact result
        return round_to(exact, ty, negative_zero=_zero_sign(a, b, op) if exact == 0 else exact < 0)

    return run


def f_min(a: float, b: float) -> float:
    return b if math.isnan(a) else a if math.isnan(b) else min(a, b)


def f_max(a: float, b: float) -> float:
    return b if math.isnan(a) else a if math.isnan(b) else max(a, b)


COMPARE = {
    "eq": lambda x, y: x == y,
    "ne": lambda x, y: x != y,
    "lt": lambda x, y: x < y,
    "le": lambda x, y: x <= y,
    "gt": lambda x, y: x > y,
    "ge": lambda x, y: x >= y,
}


def _keep_special(fn):
    def run(x: float) -> float:
        if math.isinf(x) or math.isnan(x):
            return x
        r = float(fn(x))
        return math.copysign(r, x) if r == 0 else r

    return run


EXACT_UNARY = {
    "neg": lambda a: -a,
    "abs": abs,
    "sign": lambda a: a if math.isnan(a) or a == 0.0 else math.copysign(1.0, a),
    "floor": _keep_special(math.floor),
    "ceil": _keep_special(math.ceil),
    "round": _keep_special(lambda x: round(x)),  # Python rounds half to even
    "trunc": _keep_special(math.trunc),
}

PREDICATES = {"is_nan": math.isnan, "is_inf": math.isinf, "is_finite": math.isfinite}

#: op -> (double-precision reference, operand range) of the ops not exact in every type
APPROX_UNARY = {
    "sqrt": (math.sqrt, (0.0, 1e4)),
    "inverse_sqrt": (lambda x: 1.0 / math.sqrt(x), (1e-3, 1e4)),
    "reciprocal": (lambda x: 1.0 / x, (0.01, 1e4)),
    "exp": (math.exp, (-9.0, 9.0)),
    "exp2": (math.exp2, (-12.0, 12.0)),
    "log": (math.log, (1e-3, 1e4)),
    "log2": (math.log2, (1e-3, 1e4)),
    "sin": (math.sin, (-10.0, 10.0)),
    "cos": (math.cos, (-10.0, 10.0)),
    "tan": (math.tan, (-1.4, 1.4)),
    "tanh": (math.tanh, (-5.0, 5.0)),
    "acos": (math.acos, (-1.0, 1.0)),
    "asin": (math.asin, (-1.0, 1.0)),
    "atan": (math.atan, (-10.0, 10.0)),
    "sinh": (math.sinh, (-5.0, 5.0)),
    "cosh": (math.cosh, (-5.0, 5.0)),
}

#: ops defined on f16 and bf16 only (Vulkan's 64-bit floats have no sin, exp, log, ...)
NOT_F64 = ("exp", "exp2", "log", "log2", "sin", "cos", "tan", "tanh")
NOT_F64 += ("acos", "asin", "atan", "sinh", "cosh")

#: (type, op) -> ULP budget (in units of that type) on the reference / on a device.
#: sqrt, div and friends are correctly rounded on the reference (computed in a wider
#: type and rounded once); f16 and bf16 approximate ops compute in f32 and round once.
REFERENCE_ULP = {"f16": 1, "bf16": 1, "f64": 1}
DEVICE_ULP = {"f16": 2, "bf16": 1, "f64": 2}


# ----------------------------------------------------------------- programs


def binary_program(op: str, ty: str, result: str, n: int) -> str:
    return program(
        f"  %i = vyre.invocation_id x\n  %x = vyre.load @a[%i] : {ty}\n"
        f"  %y = vyre.load @b[%i] : {ty}\n  %r = vyre.{op} %x, %y : {ty}\n"
        f"  vyre.store @out[%i] = %r : {result}",
        f"  vyre.buffer @a binding 0 read_only : {ty}[{n}]\n"
        f"  vyre.buffer @b binding 1 read_only : {ty}[{n}]\n"
        f"  vyre.buffer @out binding 2 write_only : {result}[{n}]",
    )


def unary_program(op: str, ty: str, result: str, n: int) -> str:
    return program(
        f"  %i = vyre.invocation_id x\n  %x = vyre.load @a[%i] : {ty}\n"
        f"  %r = vyre.{op} %x : {ty}\n  vyre.store @out[%i] = %r : {result}",
        f"  vyre.buffer @a binding 0 read_only : {ty}[{n}]\n"
        f"  vyre.buffer @out binding 1 write_only : {result}[{n}]",
    )


def cast_program(op: str, source: str, target: str, n: int) -> str:
    return program(
        f"  %i = vyre.invocation_id x\n  %x = vyre.load @a[%i] : {source}\n"
        f"  %r = vyre.{op} %x : {source} to {target}\n  vyre.store @out[%i] = %r : {target}",
        f"  vyre.buffer @a binding 0 read_only : {source}[{n}]\n"
        f"  vyre.buffer @out binding 1 write_only : {target}[{n}]",
    )


# ----------------------------------------------------------------- cases

NAN_A = [math.nan, 1.0, math.nan, -math.inf, 0.0]
NAN_B = [1.0, math.nan, math.nan, math.nan, math.nan]


def _pairs(ty: str) -> tuple[list[float], list[float]]:
    values = edges(ty)
    return [x for x in values for _ in values], [y for _ in values for y in values]


def binary_cases(ty: str) -> list[Case]:
    a, b = _pairs(ty)
    fa, fb = [flush(x, ty) for x in a], [flush(y, ty) for y in b]
    table = {op: arithmetic(op, ty) for op in ("add", "sub", "mul", "div")}
    table |= {"min": f_min, "max": f_max}
    cases = []
    for op, ref in table.items():
        ulp = 0 if op != "div" else (0, DEVICE_ULP[ty])
        reference_ulp, device_ulp = (ulp, ulp) if isinstance(ulp, int) else ulp
        flushed = [flush(ref(x, y), ty) for x, y in zip(fa, fb)]
        cases.append(
            Case(
                f"{op}-{ty}",
                binary_program(op, ty, ty, len(a)),
                {"a": host(a, ty), "b": host(b, ty)},
                {"out": host([ref(x, y) for x, y in zip(a, b)], ty)},
                ulp=reference_ulp,
                device_ulp=device_ulp,
                flushed={"out": host(flushed, ty)},
                # a GPU's division: WGSL's 2.5 ULP for f16 divisors in [2^-14, 2^14],
                # f32's for bf16 (computed in f32) in [2^-126, 2^126], nothing stated
                # outside (NVIDIA: x / x is inf for the largest f16); exact on the reference
                accuracy="div" if op == "div" and ty in ("f16", "bf16") else None,
            )
        )
        nan_ref = table[op]
        cases.append(
            Case(
                f"{op}-{ty}-nan",
                binary_program(op, ty, ty, len(NAN_A)),
                {"a": host(NAN_A, ty), "b": host(NAN_B, ty)},
                {"out": host([nan_ref(x, y) for x, y in zip(NAN_A, NAN_B)], ty)},
                backends=REFERENCE_ONLY,
            )
        )
    for op, ref in COMPARE.items():
        cases.append(
            Case(
                f"{op}-{ty}",
                binary_program(op, ty, "i1", len(a)),
                {"a": host(a, ty), "b": host(b, ty)},
                {"out": words(ref(x, y) for x, y in zip(a, b))},
                flushed={"out": words(ref(x, y) for x, y in zip(fa, fb))},
            )
        )
    return cases


def unary_cases(ty: str) -> list[Case]:
    a = edges(ty)
    cases = []
    for op, ref in EXACT_UNARY.items():
        cases.append(
            Case(
                f"{op}-{ty}",
                unary_program(op, ty, ty, len(a)),
                {"a": host(a, ty)},
                {"out": host([ref(x) for x in a], ty)},
                flushed={"out": host([ref(flush(x, ty)) for x in a], ty)},
            )
        )
    with_nan = a + [math.nan, -math.nan]
    for op, ref in PREDICATES.items():
        cases.append(
            Case(
                f"{op}-{ty}",
                unary_program(op, ty, "i1", len(with_nan)),
                {"a": host(with_nan, ty)},
                {"out": words(ref(x) for x in with_nan)},
            )
        )
    rng = np.random.default_rng(20261203)
    for op, (ref, (lo, hi)) in APPROX_UNARY.items():
        if ty == "f64" and op in NOT_F64:
            continue
        values = sorted({round_to(float(x), ty) for x in rng.uniform(lo, hi, 48)})
        values = [v for v in values if lo <= v <= hi and v != 0]
        cases.append(
            Case(
                f"{op}-{ty}",
                unary_program(op, ty, ty, len(values)),
                {"a": host(values, ty)},
                {"out": host([round_to(ref(x), ty) for x in values], ty)},
                ulp=REFERENCE_ULP[ty],
                device_ulp=DEVICE_ULP[ty],
            )
        )
    return cases


def special_cases(ty: str) -> list[Case]:
    """IEEE special values of the non-exact ops, exact on the reference."""
    special = {
        "sqrt": ([0.0, -0.0, math.inf, -1.0, 4.0], [0.0, -0.0, math.inf, math.nan, 2.0]),
        "reciprocal": ([0.0, -0.0, math.inf, 2.0], [math.inf, -math.inf, 0.0, 0.5]),
        "exp": ([0.0, -math.inf, math.inf, 100.0], [1.0, 0.0, math.inf, math.inf]),
        "log": ([1.0, 0.0, -1.0, math.inf], [0.0, -math.inf, math.nan, math.inf]),
        "sin": ([0.0, math.inf], [0.0, math.nan]),
    }
    if ty == "f64":
        special = {k: v for k, v in special.items() if k not in NOT_F64}
    return [
        Case(
            f"{op}-{ty}-special",
            unary_program(op, ty, ty, len(a)),
            {"a": host(a, ty)},
            {"out": host(want, ty)},
            backends=REFERENCE_ONLY,
        )
        for op, (a, want) in special.items()
    ]


def fma_cases(ty: str) -> list[Case]:
    """fma rounds once (reference); a device may round twice (bf16: f32's fma,
    then bf16), within 1 ULP."""
    rng = np.random.default_rng(7)
    a, b, c = ([round_to(float(x), ty) for x in rng.uniform(0.1, 4.0, 64)] for _ in range(3))
    # a*b = 1.26953125 is halfway between two bf16s; + 2^-40 tips it up, which
    # f32 loses (f32's fma then bf16 gives the even neighbour 1.265625)
    if ty == "bf16":
        a[0], b[0], c[0] = 1.015625, 1.25, 2.0**-40
    want = [round_to(Fraction(x) * Fraction(y) + Fraction(z), ty) for x, y, z in zip(a, b, c)]
    text = program(
        f"  %i = vyre.invocation_id x\n  %x = vyre.load @a[%i] : {ty}\n"
        f"  %y = vyre.load @b[%i] : {ty}\n  %z = vyre.load @c[%i] : {ty}\n"
        f"  %r = vyre.fma %x, %y, %z : {ty}\n  vyre.store @out[%i] = %r : {ty}",
        f"  vyre.buffer @a binding 0 read_only : {ty}[64]\n  vyre.buffer @b binding 1 read_only : {ty}[64]\n"
        f"  vyre.buffer @c binding 2 read_only : {ty}[64]\n  vyre.buffer @out binding 3 write_only : {ty}[64]",
    )
    inputs = {"a": host(a, ty), "b": host(b, ty), "c": host(c, ty)}
    return [Case(f"fma-{ty}", text, inputs, {"out": host(want, ty)}, ulp=0, device_ulp=1)]


def select_const_case(ty: str) -> Case:
    """select between a loaded value and constants at the edges of the type."""
    specials = [largest(ty), -smallest_subnormal(ty), math.inf, -0.0, round_to(0.1, ty)]
    n = len(specials)
    consts = "".join(
        f"  %k{j} = vyre.const {_literal(value, ty)} : {ty}\n" for j, value in enumerate(specials)
    )
    body = "  %i = vyre.invocation_id x\n  %x = vyre.load @a[%i] : " + ty + "\n" + consts
    for j in range(n):
        body += f"  %c{j} = vyre.const {j} : ui32\n  %e{j} = vyre.eq %i, %c{j} : ui32\n"
    acc = "%x"
    for j in range(n):
        body += f"  %s{j} = vyre.select %e{j}, %k{j}, {acc} : {ty}\n"
        acc = f"%s{j}"
    body += f"  vyre.store @out[%i] = {acc} : {ty}"
    text = program(
        body,
        f"  vyre.buffer @a binding 0 read_only : {ty}[{n + 1}]\n"
        f"  vyre.buffer @out binding 1 write_only : {ty}[{n + 1}]",
    )
    want = specials + [2.5]
    return Case(
        f"select-const-{ty}",
        text,
        {"a": host([0.0] * n + [2.5], ty)},
        {"out": host(want, ty)},
        flushed={"out": host([flush(v, ty) for v in want], ty)},
    )


def _literal(value: float, ty: str) -> str:
    """An MLIR float literal (a point before any exponent) or, for an infinity, the
    hex bit pattern of the type's width."""
    if math.isinf(value):
        return "0x" + _bits_hex(value, ty)
    mantissa, e, exponent = repr(value).partition("e")
    return f"{mantissa}.0e{exponent}" if e and "." not in mantissa else repr(value)


def _bits_hex(value: float, ty: str) -> str:
    width = {"f16": 4, "bf16": 4, "f64": 16}[ty]
    bits = int(np.array([value], np.float64).astype(HOST[ty]).view(f"u{width // 2}")[0])
    return f"{bits:0{width}X}"


# ----------------------------------------------------------------- casts

INT_RANGE = {"ui32": (0, 2**32 - 1), "si32": (-(2**31), 2**31 - 1)}
INT_HOST = {"ui32": np.uint32, "si32": np.int32}
INT_SOURCES = {
    "ui32": [0, 1, 255, 2049, 65519, 65520, 2**24 + 2**16 + 1, 2**31 + 2**23 + 1, 2**32 - 1],
    "si32": [0, -1, 2049, -65520, 2**24 + 2**16 + 1, -(2**24 + 2**16 + 1), -(2**31), 2**31 - 1],
}


def float_to_int(x: float, target: str) -> int:
    """Rust's saturating `as`: NaN -> 0, beyond the range -> the bound, else truncation."""
    lo, hi = INT_RANGE[target]
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return hi if x > 0 else lo
    return min(max(math.trunc(x), lo), hi)


def cast_sources(ty: str) -> list[float]:
    extra = [2.5, -2.5, 65504.0, 4294967296.0, -2147483649.0, 2147483648.0, 1e10, -1e10]
    return edges(ty) + [round_to(x, ty) for x in extra] + [math.nan]


def cast_cases(ty: str) -> list[Case]:
    cases = []
    values = cast_sources(ty)
    for target in ("ui32", "si32"):
        cases.append(
            Case(
                f"cast-{ty}-to-{target}",
                cast_program("cast", ty, target, len(values)),
                {"a": host(values, ty)},
                {"out": np.array([float_to_int(x, target) for x in values], INT_HOST[target])},
            )
        )
    finite = [x for x in values if not math.isnan(x)]
    for target in ("f16", "bf16", "f32", "f64"):
        if target == ty:
            continue
        cases.append(
            Case(
                f"cast-{ty}-to-{target}",
                cast_program("cast", ty, target, len(finite)),
                {"a": host(finite, ty)},
                {"out": host([round_to(x, target) for x in finite], target)},
                flushed={
                    "out": host(
                        [flush(round_to(flush(x, ty), target), target) for x in finite], target
                    )
                },
            )
        )
    cases.append(
        Case(
            f"cast-{ty}-to-i1",
            cast_program("cast", ty, "i1", len(values)),
            {"a": host(values, ty)},
            {"out": words(x != 0 for x in values)},  # NaN is true
            flushed={"out": words(flush(x, ty) != 0 for x in values)},
        )
    )
    for source, ints in INT_SOURCES.items():
        cases.append(
            Case(
                f"cast-{source}-to-{ty}",
                cast_program("cast", source, ty, len(ints)),
                {"a": np.array(ints, INT_HOST[source])},
                {"out": host([round_to(v, ty) for v in ints], ty)},
            )
        )
    cases.append(
        Case(
            f"cast-i1-to-{ty}",
            cast_program("cast", "i1", ty, 2),
            {"a": words([False, True])},
            {"out": host([0.0, 1.0], ty)},
        )
    )
    if ty != "f64":  # an f64 source rounds once, not through f32
        return cases
    doubles = [1 + 2.0**-8 + 2.0**-30, 1 + 2.0**-11 + 2.0**-40, -(1 + 2.0**-8 + 2.0**-60), 1e-300]
    for target in ("bf16", "f16"):
        cases.append(
            Case(
                f"cast-f64-to-{target}-once",
                cast_program("cast", "f64", target, len(doubles)),
                {"a": host(doubles, "f64")},
                {"out": host([round_to(x, target) for x in doubles], target)},
            )
        )
    return cases


def _f16_bits(x: float) -> int:
    return struct.unpack("<H", struct.pack("<e", x))[0]


def bf16_rounding_case() -> Case:
    """Ties of bf16 round to even, on a computed result and on a stored one:
    1 + 2^-8 is halfway between 1 and 1 + 2^-7 (even: 1); 1 + 3 * 2^-8 is halfway
    between 1 + 2^-7 and 1 + 2^-6 (even: 1 + 2^-6)."""
    a = [1.0, 1.0 + 2.0**-7, 1.0, -1.0, 256.0, 3.3895313892515355e38]
    b = [2.0**-8, 2.0**-8, 2.0**-8 + 2.0**-15, -(2.0**-8), 1.0, 2.0**120]
    want = [round_to(Fraction(x) + Fraction(y), "bf16") for x, y in zip(a, b)]
    assert want[:5] == [1.0, 1.0 + 2.0**-6, 1.0 + 2.0**-7, -1.0, 256.0]
    return Case(
        "add-bf16-ties",
        binary_program("add", "bf16", "bf16", len(a)),
        {"a": host(a, "bf16"), "b": host(b, "bf16")},
        {"out": host(want, "bf16")},
    )


CASES: list[Case] = []
for _ty in FLOATS:
    CASES += binary_cases(_ty) + unary_cases(_ty) + special_cases(_ty) + fma_cases(_ty)
    CASES += [select_const_case(_ty)] + cast_cases(_ty)
CASES += [bf16_rounding_case()]
PARAMS = params(CASES)


@pytest.mark.parametrize(("case", "backend"), PARAMS, ids=ids(PARAMS))
def test_case(case: Case, backend: str):
    check(case, backend)


def test_the_references_round_correctly():
    """The rounding every expectation here rests on, against values from the IEEE
    tables: f16 max 65504, its smallest subnormal 2^-24, bf16's 1 + 2^-7, ties."""
    assert largest("f16") == 65504.0 and smallest_subnormal("f16") == 2.0**-24
    assert round_to(65519.99, "f16") == 65504.0 and round_to(65520, "f16") == math.inf
    assert round_to(1 + 2.0**-8, "bf16") == 1.0 and round_to(1 + 3 * 2.0**-8, "bf16") == 1 + 2.0**-6
    assert round_to(2.0**-25, "f16") == 0.0 and round_to(3 * 2.0**-26, "f16") == 2.0**-24
    assert _f16_bits(round_to(0.1, "f16")) == 0x2E66
    assert round_to(Fraction(1, 3), "f64") == 1 / 3


# ----------------------------------------------------------------- the helpers


def _bits(array: np.ndarray) -> list[int]:
    return array.view(f"u{array.dtype.itemsize}").tolist()


def test_unchanged_inputs_compare_by_their_bits():
    """A bf16 array with NaNs is the same as its copy whatever numpy and ml_dtypes
    think of NaN == NaN; a different NaN payload or the other zero is a change."""
    from conformance_support import assert_same_bits

    a = host([math.nan, 1.0, -math.nan, 0.0], "bf16")
    assert_same_bits(np.array(a, copy=True), a, "copy")
    for index, bits in ((0, 0x7FC1), (3, 0x8000)):
        changed = a.copy()
        changed.view(np.uint16)[index] = bits
        with pytest.raises(AssertionError, match="differ in their bits"):
            assert_same_bits(changed, a, "changed")


@pytest.mark.parametrize("ty", ["f16", "bf16"])
def test_flush_acceptance_at_the_types_own_subnormals(ty):
    """A device may flush the subnormals of f16 (below 2^-14) and bf16 (below
    2^-126) to zero: `flush_array` flushes them (keeping the sign and the type), and
    a zero where a subnormal is expected passes on a device, not on the reference;
    a wrong normal value fails either way."""
    from conformance_support import assert_matches, flush_array

    tiny, normal = smallest_subnormal(ty), smallest_normal(ty)
    values = host([tiny, -(normal - tiny), normal, 1.5], ty)
    flushed = flush_array(values)
    assert flushed.dtype == values.dtype
    assert _bits(flushed) == _bits(host([0.0, -0.0, normal, 1.5], ty))
    assert_matches(flushed, values, 0, "flushed", device=True)
    with pytest.raises(AssertionError):
        assert_matches(flushed, values, 0, "flushed on the reference")
    wrong = host([0.0, -0.0, normal, 1.75], ty)
    with pytest.raises(AssertionError, match="more than 0 ULP"):
        assert_matches(wrong, values, 0, "wrong", device=True)
    if ty == "f16":  # an f32 subnormal is a normal f16 value: not flushed
        assert _bits(flush_array(host([2.0**-14], ty))) == _bits(host([2.0**-14], ty))


@pytest.mark.parametrize("ty", ["f16", "bf16"])
def test_device_division_of_the_type_is_held_to_wgsl_accuracy(ty):
    """`div-f16`/`div-bf16` on a GPU: anything where WGSL states no accuracy (the
    divisor outside [2^-14, 2^14] for f16, [2^-126, 2^126] for bf16 computed in f32,
    e.g. x / x = inf for the largest f16 or a flushed 1.5 / 1.1e38), flushed
    subnormal operands, and inside: f16 within 2.5 ULP (2 ULP off passes, 3 fail);
    bf16 is the nearest bf16 of an f32 quotient within 2.5 f32 ULP, so a whole bf16
    ULP off fails (1 / 1 must be 1)."""
    from conformance_support import assert_within_wgsl_accuracy

    case = next(c for c in CASES if c.name == f"div-{ty}")
    a, b = (case.inputs[k].astype(np.float64) for k in ("a", "b"))
    want = case.expected["out"]
    p, emin, _ = FORMATS[ty]
    low, high = 2.0**emin, 2.0**-emin
    inside = np.isfinite(a) & (np.abs(b) >= low) & (np.abs(b) <= high)
    inside &= np.isfinite(want.astype(np.float64)) & (np.abs(want.astype(np.float64)) >= 1.0)

    def moved(ulps: int) -> np.ndarray:
        """`want` `ulps` ULPs away from zero where `inside` (|want| >= 1: normal)."""
        values = [
            math.copysign(abs(w) + ulps * 2.0 ** (math.frexp(w)[1] - p), w) if keep else w
            for w, keep in zip(want.astype(np.float64).tolist(), inside.tolist())
        ]
        return host([round_to(v, ty) for v in values], ty)

    outside_range = (np.abs(b) > high) | ((np.abs(b) < low) & (b != 0))
    anything = np.where(outside_range, np.float64(math.inf), want.astype(np.float64))
    near = 2 if ty == "f16" else 0
    for allowed in (want, case.flushed["out"], host(anything.tolist(), ty), moved(near)):
        assert_within_wgsl_accuracy(case, allowed, "allowed")
    with pytest.raises(AssertionError, match="beyond WGSL's accuracy"):
        assert_within_wgsl_accuracy(case, moved(near + 1), "wrong")


def test_the_reference_rounds_to_bf16_once():
    """`semantics.to_bf16` (the reference's rounding to bf16, also of fma and casts)
    against the exact rounding here, on values that round twice through f32: a
    double just past a bf16 tie that f32 rounds onto the tie, and 64-bit integers
    past ties that float64 rounds onto them."""
    from vyre_xdsl.semantics import to_bf16

    doubles = [1 + 2.0**-8 + 2.0**-40, -(1 + 2.0**-8 + 2.0**-40), 1.26953125 + 2.0**-40]
    doubles += [largest("bf16") * (1 + 2.0**-9), 2.0**-134 * (1 + 2.0**-30), 3e38, 1e300]
    got = to_bf16(np.array(doubles)).astype(np.float64).tolist()
    assert got == [round_to(x, "bf16", negative_zero=x < 0) for x in doubles]
    ints = [2**60 + 2**52 + 1, -(2**60 + 2**52 + 1), 2**63 - 1, -(2**63), 2**24 + 2**16 + 1]
    assert to_bf16(np.array(ints, np.int64)).astype(np.float64).tolist() == [
        round_to(v, "bf16") for v in ints
    ]
    unsigned = [2**64 - 1, 2**63 + 2**55 + 1, 2**32 - 1]
    assert to_bf16(np.array(unsigned, np.uint64)).astype(np.float64).tolist() == [
        round_to(v, "bf16") for v in unsigned
    ]
    nans = to_bf16(np.array([math.nan, -math.nan]))
    assert _bits(nans) == [0x7FC0, 0xFFC0]  # the quiet NaN of its sign
