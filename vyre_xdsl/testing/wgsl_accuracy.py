"""The f32 accuracy WGSL guarantees, stated from the WGSL specification
(section "Accuracy of Concrete Floating Point Expressions"), independent of the
ULP budgets in `vyre_xdsl.semantics`.

Tests compare a GPU result with the exact value (computed in float64) and accept
the error the specification allows for the f32 operation:

| operation | f32 accuracy (WGSL) |
| --- | --- |
| `x + y`, `x - y`, `x * y`, `-x`, `abs`, `floor`, `ceil`, `round`, `trunc`, `sign`, `min`, `max` | correctly rounded |
| `x / y` | 2.5 ULP for `|y|` in [2^-126, 2^126] |
| `inverseSqrt(x)` | 2 ULP |
| `sqrt(x)` | inherited from `1.0 / inverseSqrt(x)` |
| `exp(x)`, `exp2(x)` | `3 + 2 * |x|` ULP |
| `log(x)`, `log2(x)` | absolute error 2^-21 for x in [0.5, 2.0]; 3 ULP outside |
| `sin(x)`, `cos(x)` | absolute error 2^-11 for x in [-pi, pi] |
| `tan(x)` | inherited from `sin(x) / cos(x)` |
| `sinh(x)`, `cosh(x)` | inherited from `(exp(x) -/+ exp(-x)) * 0.5` |
| `tanh(x)` | inherited from `sinh(x) / cosh(x)` |
| `atan(x)` | 4096 ULP |
| `asin(x)`, `acos(x)` | the worse of absolute error 6.81e-5 / 6.77e-5 and inherited from `atan2(...)` |
| `fma(x, y, z)` | inherited from `x * y + z` |

"Inherited from" means the expression's own evaluation with each step's
accuracy; `bounds` evaluates it in interval arithmetic per element. Where the
specification leaves the accuracy undefined (outside a stated input range), the
element is not checked (`defined` is False). A GPU may also flush subnormal
results to zero, which the allowance covers.

```python
lo, hi, defined = bounds("sin", x)          # float64 arrays
ok = ~defined | ((lo <= got) & (got <= hi))
```

`ty="f16"` holds f16 operations (`x / y`, `x + y`, `x - y`, `x * y`, `fma`) to
WGSL's f16 accuracy: the same ULP counts in f16 ULPs, division's 2.5 ULP for
`|y|` in [2^-14, 2^14], subnormals (below 2^-14) possibly flushed. `ty="bf16"` is
the WGSL backend's bf16 (WGSL has none): the f32 operation on the (exact) f32
values of the operands, rounded to the nearest bf16, so its bounds are f32's
widened by half a bf16 ULP.
"""

from __future__ import annotations

import numpy as np

SMALLEST_NORMAL = 2.0**-126

#: type -> (significand bits with the implicit one, smallest normal value, largest
#: finite value, the |divisor| range where WGSL states the accuracy of `x / y`)
FORMATS = {
    "f32": (24, 2.0**-126, 3.4028234663852886e38, (2.0**-126, 2.0**126)),
    "f16": (11, 2.0**-14, 65504.0, (2.0**-14, 2.0**14)),
    "bf16": (8, 2.0**-126, 3.3895313892515355e38, (2.0**-126, 2.0**126)),
}

#: the f16 operations whose WGSL accuracy `bounds` states (see the module docstring)
F16_OPS = ("div", "reciprocal", "add", "sub", "mul", "fma")


def ulp(value, ty: str = "f32") -> np.ndarray:
    """The ULP of type `ty` at |value| (the gap to the next value away from zero;
    at least the smallest subnormal)."""
    magnitude = np.abs(np.asarray(value, np.float64))
    finite = np.isfinite(magnitude)
    if ty == "f32":
        clamped = np.minimum(magnitude, 3.4028234663852886e38)
        as_f32 = np.where(finite, clamped, 0.0).astype(np.float32)
        return np.where(finite, np.spacing(as_f32).astype(np.float64), np.inf)
    bits, normal, largest, _ = FORMATS[ty]
    clamped = np.where(finite, np.minimum(magnitude, largest), 0.0)
    exponent = np.frexp(clamped)[1] - 1  # |value| in [2^exponent, 2^(exponent + 1))
    exponent = np.where(clamped < normal, np.log2(normal), exponent)
    return np.where(finite, np.ldexp(1.0, (exponent - (bits - 1)).astype(np.int64)), np.inf)


class Interval:
    """Elementwise [lo, hi] of float64 values; ULPs are those of type `ty`."""

    def __init__(self, lo, hi=None, ty: str = "f32"):
        self.lo = np.asarray(lo, np.float64)
        self.hi = np.asarray(self.lo if hi is None else hi, np.float64)
        self.ty = ty

    def widen(self, absolute) -> Interval:
        return Interval(self.lo - absolute, self.hi + absolute, self.ty)

    def ulps(self, n) -> Interval:
        """Widened by `n` ULP of the larger end (n may be an array)."""
        gap = np.asarray(n, np.float64) * np.maximum(ulp(self.lo, self.ty), ulp(self.hi, self.ty))
        return self.widen(gap)

    def rounded(self) -> Interval:
        return self.ulps(0.5)

    def __add__(self, other: Interval) -> Interval:
        return Interval(self.lo + other.lo, self.hi + other.hi, self.ty)

    def __sub__(self, other: Interval) -> Interval:
        return Interval(self.lo - other.hi, self.hi - other.lo, self.ty)

    def scaled(self, k: float) -> Interval:
        a, b = self.lo * k, self.hi * k
        return Interval(np.minimum(a, b), np.maximum(a, b), self.ty)

    def divided(self, other: Interval) -> Interval:
        """self / other (infinite where `other` contains 0), then 2.5 ULP (WGSL `x / y`)."""
        with np.errstate(all="ignore"):
            corners = np.stack(
                [self.lo / other.lo, self.lo / other.hi, self.hi / other.lo, self.hi / other.hi]
            )
        crosses = (other.lo <= 0) & (other.hi >= 0)
        lo = np.where(crosses, -np.inf, corners.min(axis=0))
        hi = np.where(crosses, np.inf, corners.max(axis=0))
        return Interval(lo, hi, self.ty).ulps(2.5)


def _exp(x: np.ndarray) -> Interval:
    exact = np.exp(x)
    return Interval(exact).ulps(3.0 + 2.0 * np.abs(x))


def _sin_cos(x: np.ndarray) -> tuple[Interval, Interval]:
    return Interval(np.sin(x)).widen(2.0**-11), Interval(np.cos(x)).widen(2.0**-11)


def _log(exact: np.ndarray, x: np.ndarray) -> Interval:
    near_one = (x >= 0.5) & (x <= 2.0)
    absolute = np.where(near_one, 2.0**-21, 3.0 * ulp(exact))
    return Interval(exact).widen(absolute)


def _atan2_like(exact: np.ndarray, absolute: float) -> Interval:
    """The worse of an absolute error and atan2's 4096 ULP (its operands' own
    error is within that for the arguments the tests use)."""
    return Interval(exact).widen(np.maximum(absolute, 4096.0 * ulp(exact)))


def bounds(op: str, *args, ty: str = "f32") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lo, hi, defined): the results WGSL allows for `op` of type `ty` (f32, f16,
    or the backend's bf16) on `args` (arrays of that type), and where the
    specification defines the accuracy at all."""
    if ty == "bf16":
        return _bf16_bounds(op, *args)
    if ty == "f16" and op not in F16_OPS:
        raise KeyError(f"no WGSL accuracy stated here for f16 '{op}' (only {F16_OPS})")
    _, normal, largest, (low, high) = FORMATS[ty]
    xs = [np.asarray(a, np.float32).astype(np.float64) for a in args]
    x = xs[0]
    defined = np.all([np.isfinite(a) for a in xs], axis=0)
    with np.errstate(all="ignore"):
        if op == "div" or op == "reciprocal":
            num, den = (
                (Interval(xs[0], ty=ty), Interval(xs[1], ty=ty))
                if op == "div"
                else (Interval(1.0, ty=ty), Interval(x, ty=ty))
            )
            result = num.divided(den)
            magnitude = np.abs(xs[1] if op == "div" else x)
            defined &= (magnitude >= low) & (magnitude <= high)
        elif op == "inverse_sqrt":
            result = Interval(1.0 / np.sqrt(x)).ulps(2.0)
            defined &= x > 0
        elif op == "sqrt":
            inverse = Interval(1.0 / np.sqrt(x)).ulps(2.0)
            result = Interval(1.0).divided(inverse)
            defined &= x > 0
        elif op == "exp":
            result = _exp(x)
        elif op == "exp2":
            result = Interval(np.exp2(x)).ulps(3.0 + 2.0 * np.abs(x))
        elif op in ("log", "log2"):
            result = _log(np.log(x) if op == "log" else np.log2(x), x)
            defined &= x > 0
        elif op in ("sin", "cos"):
            result = _sin_cos(x)[0 if op == "sin" else 1]
            defined &= np.abs(x) <= np.pi
        elif op == "tan":
            s, c = _sin_cos(x)
            result = s.divided(c)
            defined &= np.abs(x) <= np.pi
        elif op in ("sinh", "cosh", "tanh"):
            up, down = _exp(x), _exp(-x)
            sinh = (up - down).rounded().scaled(0.5)
            cosh = (up + down).rounded().scaled(0.5)
            result = {"sinh": sinh, "cosh": cosh}.get(op) or sinh.divided(cosh)
        elif op == "atan":
            exact = np.arctan(x)
            result = Interval(exact).ulps(4096.0)
        elif op == "asin":
            result = _atan2_like(np.arcsin(x), 6.81e-5)
            defined &= np.abs(x) <= 1
        elif op == "acos":
            result = _atan2_like(np.arccos(x), 6.77e-5)
            defined &= np.abs(x) <= 1
        elif op == "fma":
            product = Interval(xs[0] * xs[1], ty=ty)
            result = (product.rounded() + Interval(xs[2], ty=ty)).rounded()
        elif op in ("add", "sub", "mul"):
            exact = (
                {"add": xs[0] + xs[1], "sub": xs[0] - xs[1], "mul": xs[0] * xs[1]}[op]
                if len(xs) > 1
                else x
            )
            result = Interval(exact, ty=ty).rounded()
        else:
            raise KeyError(
                f"no WGSL accuracy stated for f32 '{op}' in vyre_xdsl.testing.wgsl_accuracy"
            )
    lo, hi = _flushed_or_overflowed(result.lo, result.hi, normal, largest)
    defined &= ~np.isnan(lo) & ~np.isnan(hi)
    return lo, hi, defined


def _flushed_or_overflowed(lo, hi, normal: float, largest: float):
    # a GPU may flush subnormal results to zero
    lo = np.where(np.abs(lo) < normal, np.minimum(lo, 0.0), lo)
    hi = np.where(np.abs(hi) < normal, np.maximum(hi, 0.0), hi)
    # a result beyond the type's range may overflow to infinity
    lo = np.where(lo < -largest, -np.inf, lo)
    hi = np.where(hi > largest, np.inf, hi)
    return lo, hi


def _bf16_bounds(op: str, *args) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The WGSL backend's bf16 `op`: f32's `op` on the operands (bf16 values are
    exact in f32) rounded to the nearest bf16, which moves a result by at most half
    a bf16 ULP (rounding is monotonic)."""
    lo, hi, defined = bounds(op, *[np.asarray(a, np.float32) for a in args])
    _, normal, largest, _ = FORMATS["bf16"]
    with np.errstate(all="ignore"):
        lo = np.where(np.isfinite(lo), lo - 0.5 * ulp(lo, "bf16"), lo)
        hi = np.where(np.isfinite(hi), hi + 0.5 * ulp(hi, "bf16"), hi)
    lo, hi = _flushed_or_overflowed(lo, hi, normal, largest)
    return lo, hi, defined


def outside(op: str, got: np.ndarray, *args, ty: str = "f32") -> np.ndarray:
    """Where the results `got` (of type `ty`) of `op` on `args` break WGSL's accuracy."""
    lo, hi, defined = bounds(op, *args, ty=ty)
    value = np.asarray(got, np.float32).astype(np.float64)
    return defined & ~((lo <= value) & (value <= hi))


def ulp_budget(op: str, *args) -> float:
    """The largest error WGSL allows for `op` over `args`, in f32 ULP of the exact
    result (for tests that compare with a single ULP tolerance)."""
    lo, hi, defined = bounds(op, *args)
    mid = (lo + hi) / 2.0
    with np.errstate(all="ignore"):
        spread = np.where(defined, (hi - lo) / 2.0 / np.maximum(ulp(mid), 2.0**-149), 0.0)
    spread = spread[np.isfinite(spread)]
    return float(np.ceil(spread.max())) + 1.0 if spread.size else 0.0
