"""An abstract domain for f32 values in generated programs.

The random program generator (`vyre_xdsl.testing.generators`) tracks, for every
f32 value it creates, what any conforming implementation may compute for it.
That lets the conformance tests compare integers and Bools byte for byte and
f32 results against a *sound* tolerance, even though GPU compilers contract
`a*b+c` into an fma, reassociate constants, and implement `sin`/`exp`/... with
the accuracy the WGSL specification allows (`vyre_xdsl.testing.wgsl_accuracy`,
turned into a ULP budget over each op's operand domain below; not the budgets
of the semantics table, which is under test).

Three kinds of f32 value:

``exact``
    every value is a multiple of ``2**-frac`` in ``[lo, hi]`` and the
    computation that produced it never rounded, so every implementation
    produces the same bits (up to the sign of zero). Only exact values may flow
    into comparisons, casts to integers, `floor`/`sign`/..., and bitcasts.
``approx``
    finite, in ``[lo, hi]``, within a relative error of ``k * 2**-24`` of the
    true value *combined over the reference and the GPU*: their results differ
    by at most about ``k`` ULP. Each rounding counts 2 (one rounding on each
    side, which contraction or reassociation may place differently); each op
    with a budget ``B`` counts ``2*B + 2`` (the GPU's budget plus one ULP for
    numpy's own result). Additions of inexact values are allowed only when the
    result interval excludes zero, with the error scaled by the condition
    number ``(|a| k_a + |b| k_b) / min |a+b|``.
``special``
    any bits at all (NaN, infinities, -0, huge values), loaded from input data
    or made by a bitcast, never by arithmetic, so their bits are the same
    everywhere: only the predicates `is_nan`/`is_inf`/`is_finite`, bitcasts,
    `select` and stores may consume them (`bit_exact` values: specials and
    exact values whose interval excludes 0, as -0 and +0 differ in bits).

Every function here returns the abstract result of one op, or ``None`` when
the generator must not emit the op on these operands.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

#: unit roundoff of f32
U = 2.0**-24
#: the largest relative error (units of U, about ULPs) the generator accepts
#: (WGSL's sin/cos/tan allow an absolute 2**-11: tens of thousands of ULP)
MAX_K = 2.0**17
#: magnitudes above this are refused (far from overflow, so no inf appears)
BIG = 2.0**40
#: nonzero magnitudes below this are refused (far from subnormals at 2**-126)
TINY = 2.0**-100

EXACT, APPROX, SPECIAL = "exact", "approx", "special"

#: what a consumer needs: NEED_EXACT < NEED_FINITE < NEED_ANY
NEED_EXACT, NEED_FINITE, NEED_ANY = 0, 1, 2


@dataclass(frozen=True)
class F32:
    kind: str
    lo: float = 0.0
    hi: float = 0.0
    frac: int = 0
    k: float = 0.0
    nz: float = 1.0  # smallest nonzero magnitude a value can have

    @property
    def mag(self) -> float:
        return max(abs(self.lo), abs(self.hi))

    @property
    def excludes_zero(self) -> bool:
        return self.lo > 0 or self.hi < 0

    @property
    def min_mag(self) -> float:
        if not self.excludes_zero:
            return 0.0
        return min(abs(self.lo), abs(self.hi))

    def satisfies(self, need: int) -> bool:
        if need == NEED_EXACT:
            return self.kind == EXACT
        if need == NEED_FINITE:
            return self.kind != SPECIAL
        return True


SPECIAL_VALUE = F32(SPECIAL, k=0.0)


def op_error(name: str) -> float:
    """The error (units of U) one approximate op adds: WGSL's budget for it over
    its operand domain (`wgsl_budget`) plus numpy's ULP."""
    return 2.0 * wgsl_budget(name) + 2.0


_BUDGETS: dict[str, float] = {}


def wgsl_budget(name: str) -> float:
    """The largest error, in ULP of the result, the WGSL specification allows for
    `name` on the operands the generator feeds it: quarter-grid values of
    `TRANSCENDENTAL_DOMAIN` for the transcendental ops; `x / y` with `|y|` at
    least 2**-20 (2.5 ULP); `fma`, inherited from `x * y + z` (two roundings)."""
    if name not in _BUDGETS:
        import numpy as np

        from vyre_xdsl.testing.wgsl_accuracy import ulp_budget

        if name == "fma":
            _BUDGETS[name] = 1.0
        elif name == "div":
            _BUDGETS[name] = 2.5
        else:
            lo, hi = TRANSCENDENTAL_DOMAIN[name]
            grid = np.arange(round(lo * 4), round(hi * 4) + 1) / 4.0
            grid = (
                grid[grid != 0] if name in ("sin", "tan", "tanh", "asin", "atan", "sinh") else grid
            )
            _BUDGETS[name] = ulp_budget(name, grid.astype(np.float32))
    return _BUDGETS[name]


def frac_bits(value: float) -> int:
    """The number of fractional bits of a dyadic `value` (which must be finite)."""
    f = 0
    while value != math.floor(value) and f < 60:
        value *= 2.0
        f += 1
    return f


def constant(value: float) -> F32:
    v = float(value)
    f = frac_bits(v)
    return F32(EXACT, v, v, f, 0.0, 2.0**-f if v == 0 else abs(v))


def exact(lo: float, hi: float, frac: int) -> F32 | None:
    """An exact value in [lo, hi] on a 2**-frac grid, or an approx one when the
    grid needs more than the 24 bits of an f32 significand."""
    mag = max(abs(lo), abs(hi))
    if mag > BIG:
        return None
    if mag * 2.0**frac <= 2.0**24:
        return F32(EXACT, lo, hi, frac, 0.0, 2.0**-frac)
    return _checked(F32(APPROX, lo, hi, 0, 2.0, 2.0**-frac))


def _checked(info: F32) -> F32 | None:
    if info.kind == SPECIAL:
        return info
    if not (math.isfinite(info.lo) and math.isfinite(info.hi)):
        return None
    if info.mag > BIG or info.k > MAX_K:
        return None
    if info.kind == APPROX and info.nz < TINY:
        return None
    return info


def _interval(values: list[float]) -> tuple[float, float]:
    return min(values), max(values)


def add(a: F32, b: F32, subtract: bool = False) -> F32 | None:
    if a.kind == SPECIAL or b.kind == SPECIAL:
        return None
    blo, bhi = (-b.hi, -b.lo) if subtract else (b.lo, b.hi)
    lo, hi = a.lo + blo, a.hi + bhi
    if a.kind == EXACT and b.kind == EXACT:
        return exact(lo, hi, max(a.frac, b.frac))
    result = F32(APPROX, lo, hi)
    if not result.excludes_zero:
        return None
    k = (a.k * a.mag + b.k * b.mag) / result.min_mag + 2.0
    return _checked(F32(APPROX, lo, hi, 0, k, result.min_mag))


def mul(a: F32, b: F32) -> F32 | None:
    if a.kind == SPECIAL or b.kind == SPECIAL:
        return None
    lo, hi = _interval([a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi])
    if a.kind == EXACT and b.kind == EXACT:
        return exact(lo, hi, a.frac + b.frac)
    return _checked(F32(APPROX, lo, hi, 0, a.k + b.k + 2.0, a.nz * b.nz))


def div(a: F32, b: F32) -> F32 | None:
    if a.kind == SPECIAL or b.kind == SPECIAL or b.min_mag < 2.0**-20:
        return None
    lo, hi = _interval([a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi])
    k = a.k + b.k + op_error("div")
    return _checked(F32(APPROX, lo, hi, 0, k, a.nz / b.mag))


def fma(a: F32, b: F32, c: F32) -> F32 | None:
    product = mul(a, b)
    if product is None:
        return None
    total = add(product, c)
    if total is None or total.kind == EXACT:
        return total
    return _checked(replace(total, k=total.k + op_error("fma")))


def minmax(a: F32, b: F32, is_max: bool) -> F32 | None:
    if a.kind == SPECIAL or b.kind == SPECIAL:
        return None
    pick = max if is_max else min
    lo, hi = pick(a.lo, b.lo), pick(a.hi, b.hi)
    if a.kind == EXACT and b.kind == EXACT:
        return F32(EXACT, lo, hi, max(a.frac, b.frac), 0.0, min(a.nz, b.nz))
    return _checked(F32(APPROX, lo, hi, 0, max(a.k, b.k), min(a.nz, b.nz)))


def bit_exact(a: F32) -> bool:
    """Whether every implementation produces the same *bits* (sign of zero included)."""
    return a.kind == SPECIAL or (a.kind == EXACT and a.excludes_zero)


def join(a: F32, b: F32) -> F32 | None:
    """A value that is either `a` or `b` (select, merged stores)."""
    if a.kind == SPECIAL or b.kind == SPECIAL:
        return SPECIAL_VALUE if bit_exact(a) and bit_exact(b) else None
    lo, hi = min(a.lo, b.lo), max(a.hi, b.hi)
    if a.kind == EXACT and b.kind == EXACT:
        return F32(EXACT, lo, hi, max(a.frac, b.frac), 0.0, min(a.nz, b.nz))
    return F32(APPROX, lo, hi, 0, max(a.k, b.k), min(a.nz, b.nz))


def neg(a: F32) -> F32 | None:
    if a.kind == SPECIAL:
        return None
    return replace(a, lo=-a.hi, hi=-a.lo)


def absolute(a: F32) -> F32 | None:
    if a.kind == SPECIAL:
        return None
    if a.lo >= 0:
        return a
    if a.hi <= 0:
        return replace(a, lo=-a.hi, hi=-a.lo)
    return replace(a, lo=0.0, hi=a.mag)


def rounding(a: F32, name: str) -> F32 | None:
    """floor, ceil, round, trunc, sign: exact operands only (they amplify errors)."""
    if a.kind != EXACT:
        return None
    if name == "sign":
        return F32(EXACT, -1.0 if a.lo < 0 else 0.0, 1.0 if a.hi > 0 else 0.0, 0, 0.0, 1.0)
    return F32(EXACT, math.floor(a.lo), math.ceil(a.hi), 0, 0.0, 1.0)


#: approximate unary op -> (domain lo, domain hi) of the exact, quarter-grid
#: operand the generator feeds it (it clamps and quantizes first)
#: (sin, cos and tan keep away from results near 0, where WGSL's absolute error
#: bound is a large relative one)
TRANSCENDENTAL_DOMAIN: dict[str, tuple[float, float]] = {
    "exp": (-6.0, 6.0),
    "exp2": (-6.0, 6.0),
    "log": (2.0, 64.0),
    "log2": (2.0, 64.0),
    "sin": (0.5, 2.75),
    "cos": (-1.25, 1.25),
    "tan": (0.5, 1.25),
    "tanh": (-4.0, 4.0),
    "sqrt": (0.0, 64.0),
    "inverse_sqrt": (0.5, 64.0),
    "reciprocal": (0.5, 64.0),
    # away from +-1, where acos/asin have a vertical tangent (and acos(1) = 0)
    "acos": (-0.75, 0.75),
    "asin": (-0.75, 0.75),
    "atan": (-4.0, 4.0),
    "sinh": (-4.0, 4.0),
    "cosh": (-4.0, 4.0),
}

#: smallest nonzero |f(x)| over nonzero quarters x of the domain
_NONZERO_FLOOR = {
    "sin": 0.38,
    "cos": 0.31,
    "tan": 0.54,
    "tanh": 0.24,
    "sqrt": 0.5,
    "acos": 0.72,
    "asin": 0.25,
    "atan": 0.24,
    "sinh": 0.25,
    "cosh": 1.0,
}


def transcendental(name: str, a: F32) -> F32 | None:
    """`name` applied to an exact quarter-grid operand inside its domain."""
    dlo, dhi = TRANSCENDENTAL_DOMAIN[name]
    if a.kind != EXACT or a.frac > 2 or a.lo < dlo or a.hi > dhi:
        return None
    fn = {
        "exp": math.exp,
        "exp2": lambda x: 2.0**x,
        "log": math.log,
        "log2": math.log2,
        "tan": math.tan,
        "tanh": math.tanh,
        "sqrt": math.sqrt,
        "inverse_sqrt": lambda x: 1.0 / math.sqrt(x),
        "reciprocal": lambda x: 1.0 / x,
        "acos": math.acos,
        "asin": math.asin,
        "atan": math.atan,
        "sinh": math.sinh,
    }
    if name == "sin":
        lo, hi = 0.38, 1.0
    elif name == "cos":
        lo, hi = 0.31, 1.0
    elif name == "cosh":  # not monotonic: its minimum 1 is at 0
        lo = 1.0 if a.lo <= 0.0 <= a.hi else min(math.cosh(a.lo), math.cosh(a.hi))
        hi = max(math.cosh(a.lo), math.cosh(a.hi))
    else:
        lo, hi = sorted((fn[name](a.lo), fn[name](a.hi)))
    nz = _NONZERO_FLOOR.get(name, min(abs(lo), abs(hi)) if lo * hi > 0 else 0.07)
    return _checked(F32(APPROX, lo, hi, 0, op_error(name), nz))


def from_int(lo: int, hi: int) -> F32 | None:
    """cast of an integer in [lo, hi] to f32 (exact below 2**24, else one rounding),
    or None beyond `BIG` (a 64-bit integer's range)."""
    if max(abs(lo), abs(hi)) <= 2**24:
        return F32(EXACT, float(lo), float(hi), 0, 0.0, 1.0)
    return _checked(F32(APPROX, float(lo), float(hi), 0, 2.0, 1.0))
