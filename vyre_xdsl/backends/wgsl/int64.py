"""64-bit integers (`ui64`, `si64`) in WGSL, emulated on `vec2<u32>` (x: the low
word, y: the high word), so that they need no adapter feature.

A buffer of 64-bit values is an `array<vec2<u32>>`: the host array's bytes as they
are (little-endian). Every op is core WGSL on the two words, through helper
functions printed once per module and only when used: add/sub with carries, the
full 64 x 64 -> 128-bit product, division and remainder by restoring long division
(unrolled: 64 steps without a loop, so no driver loop limit can cut it short),
shifts and rotates by `b & 63`, unsigned and signed comparisons, bit counts, and
the conversions to and from the other types (f32 with round-to-nearest-even and
saturation, as the reference).

```python
from vyre_xdsl.backends.wgsl import int64
int64.literal(-1, "si64")   # "vec2<u32>(4294967295u, 4294967295u)"
```
"""

from __future__ import annotations

from collections.abc import Callable

from vyre_xdsl import semantics

ZERO = "vec2<u32>(0u, 0u)"
ONES = "vec2<u32>(4294967295u, 4294967295u)"
SIGNED_MIN = "vec2<u32>(0u, 2147483648u)"
SIGNED_MAX = "vec2<u32>(4294967295u, 2147483647u)"
#: 2^32 as an f32 (exact)
TWO_32 = "4294967296.0"


def is_wide(tname: str | None) -> bool:
    return tname in semantics.WIDE_INT_TYPES


def _signed(tname: str) -> bool:
    return tname == "si64"


def literal(value: int, tname: str) -> str:
    bits = int(value) & (2**64 - 1)
    return f"vec2<u32>({bits & 0xFFFFFFFF}u, {bits >> 32}u)"


# ------------------------------------------------------------------ helper library

HELPERS: dict[str, str] = {
    "vyre_u64_add": """fn vyre_u64_add(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}""",
    "vyre_u64_sub": """fn vyre_u64_sub(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}""",
    "vyre_u64_lt": """fn vyre_u64_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
  return a.y < b.y || (a.y == b.y && a.x < b.x);
}""",
    "vyre_i64_lt": """fn vyre_i64_lt(a: vec2<u32>, b: vec2<u32>) -> bool {
  return bitcast<i32>(a.y) < bitcast<i32>(b.y) || (a.y == b.y && a.x < b.x);
}""",
    # the four 32-bit limbs (lowest first) of the full 128-bit product
    "vyre_u64_mul_full": """fn vyre_u64_mul_full(a: vec2<u32>, b: vec2<u32>) -> vec4<u32> {
  let p00 = vec2<u32>(a.x * b.x, vyre_mul_high_u32(a.x, b.x));
  let p01 = vec2<u32>(a.x * b.y, vyre_mul_high_u32(a.x, b.y));
  let p10 = vec2<u32>(a.y * b.x, vyre_mul_high_u32(a.y, b.x));
  let p11 = vec2<u32>(a.y * b.y, vyre_mul_high_u32(a.y, b.y));
  let mid = vyre_u64_add(vec2<u32>(p00.y, 0u), vec2<u32>(p01.x, 0u));
  let mid2 = vyre_u64_add(mid, vec2<u32>(p10.x, 0u));
  let high = vyre_u64_add(vyre_u64_add(p11, vec2<u32>(p01.y, 0u)), vec2<u32>(p10.y, 0u));
  let top = vyre_u64_add(high, vec2<u32>(mid2.y, 0u));
  return vec4<u32>(p00.x, mid2.x, top.x, top.y);
}""",
    "vyre_u64_shl": """fn vyre_u64_shl(a: vec2<u32>, s: u32) -> vec2<u32> {
  if (s == 0u) {
    return a;
  }
  if (s < 32u) {
    return vec2<u32>(a.x << s, (a.y << s) | (a.x >> (32u - s)));
  }
  return vec2<u32>(0u, a.x << (s - 32u));
}""",
    "vyre_u64_shr": """fn vyre_u64_shr(a: vec2<u32>, s: u32) -> vec2<u32> {
  if (s == 0u) {
    return a;
  }
  if (s < 32u) {
    return vec2<u32>((a.x >> s) | (a.y << (32u - s)), a.y >> s);
  }
  return vec2<u32>(a.y >> (s - 32u), 0u);
}""",
    "vyre_i64_shr": """fn vyre_i64_shr(a: vec2<u32>, s: u32) -> vec2<u32> {
  let fill = select(0u, 4294967295u, (a.y >> 31u) != 0u);
  if (s == 0u) {
    return a;
  }
  if (s < 32u) {
    return vec2<u32>((a.x >> s) | (a.y << (32u - s)), bitcast<u32>(bitcast<i32>(a.y) >> s));
  }
  return vec2<u32>(bitcast<u32>(bitcast<i32>(a.y) >> (s - 32u)), fill);
}""",
    "vyre_i64_neg": """fn vyre_i64_neg(a: vec2<u32>) -> vec2<u32> {
  return vyre_u64_sub(vec2<u32>(0u, 0u), a);
}""",
    # u64 (u32 words) to f32, rounded to nearest even: the top 32 significant bits
    # with a sticky bit for the rest, converted once, then scaled by a power of two
    "vyre_u64_to_f32": """fn vyre_u64_to_f32(a: vec2<u32>) -> f32 {
  if (a.y == 0u) {
    return f32(a.x);
  }
  let n = countLeadingZeros(a.y);
  let top = select((a.y << n) | (a.x >> (32u - n)), a.y, n == 0u);
  let rest = select(a.x << n, a.x, n == 0u);
  let sticky = select(0u, 1u, rest != 0u);
  return ldexp(f32(top | sticky), i32(32u - n));
}""",
    # f32 to u64 for 0 <= t < 2^64 already truncated: both words are exact
    "vyre_f32_to_u64": """fn vyre_f32_to_u64(t: f32) -> vec2<u32> {
  let hi = floor(t / 4294967296.0);
  return vec2<u32>(u32(t - hi * 4294967296.0), u32(hi));
}""",
}

#: helper -> the helpers it calls
_NEEDS: dict[str, tuple[str, ...]] = {
    "vyre_u64_mul_full": ("vyre_u64_add",),
    "vyre_i64_neg": ("vyre_u64_sub",),
}


def _divmod_helper() -> str:
    """Restoring long division, unrolled over the 64 bits of the dividend (d != 0):
    returns (quotient.x, quotient.y, remainder.x, remainder.y)."""
    lines = [
        "fn vyre_u64_divmod(n: vec2<u32>, d: vec2<u32>) -> vec4<u32> {",
        "  var q = vec2<u32>(0u, 0u);",
        "  var r = vec2<u32>(0u, 0u);",
        "  var top = 0u;",
    ]
    for i in range(63, -1, -1):
        word, bit = ("y", i - 32) if i >= 32 else ("x", i)
        q_word = "q.y" if i >= 32 else "q.x"
        lines += [
            "  top = r.y >> 31u;",
            f"  r = vec2<u32>((r.x << 1u) | ((n.{word} >> {bit}u) & 1u), (r.y << 1u) | (r.x >> 31u));",
            "  if (top != 0u || !vyre_u64_lt(r, d)) {",
            "    r = vyre_u64_sub(r, d);",
            f"    {q_word} = {q_word} | {1 << bit}u;",
            "  }",
        ]
    lines += ["  return vec4<u32>(q.x, q.y, r.x, r.y);", "}"]
    return "\n".join(lines)


HELPERS["vyre_u64_divmod"] = _divmod_helper()
_NEEDS["vyre_u64_divmod"] = ("vyre_u64_lt", "vyre_u64_sub")


def helper_texts(names: list[str]) -> list[str]:
    """The WGSL of `names` and of the helpers they call, callees first."""
    ordered: list[str] = []

    def visit(name: str) -> None:
        if name in ordered:
            return
        for callee in _NEEDS.get(name, ()):
            visit(callee)
        ordered.append(name)

    for name in names:
        visit(name)
    texts = [semantics.MUL_HIGH_HELPER] if "vyre_u64_mul_full" in ordered else []
    return texts + [HELPERS[name] for name in ordered]


# ------------------------------------------------------------------ ops


class Emitter:
    """WGSL expressions on 64-bit registers; records the helpers they call."""

    def __init__(self, use: Callable[[str], None]):
        self.use = use

    def call(self, helper: str, *args: str) -> str:
        self.use(helper)
        return f"{helper}({', '.join(args)})"

    def lt(self, tname: str, a: str, b: str) -> str:
        return self.call("vyre_i64_lt" if _signed(tname) else "vyre_u64_lt", a, b)

    def negative(self, a: str) -> str:
        return f"(({a}.y >> 31u) != 0u)"

    def magnitude(self, a: str) -> str:
        return f"select({a}, {self.call('vyre_i64_neg', a)}, {self.negative(a)})"

    def divmod(self, tname: str, a: str, b: str, remainder: bool) -> str:
        if not _signed(tname):
            result = self.call(
                "vyre_u64_divmod", a, f"select({b}, vec2<u32>(1u, 0u), all({b} == {ZERO}))"
            )
            part = f"{result}.zw" if remainder else f"{result}.xy"
            by_zero = ZERO if remainder else ONES
            return f"select({part}, {by_zero}, all({b} == {ZERO}))"
        # signed: on magnitudes, then the sign (of the dividend for the remainder);
        # a trapping lane never gets here, or its result is unused
        safe = f"select({b}, vec2<u32>(1u, 0u), all({b} == {ZERO}))"
        result = self.call("vyre_u64_divmod", self.magnitude(a), self.magnitude(safe))
        if remainder:
            part = f"{result}.zw"
            flip = self.negative(a)
        else:
            part = f"{result}.xy"
            flip = f"({self.negative(a)} != {self.negative(b)})"
        return f"select({part}, {self.call('vyre_i64_neg', part)}, {flip})"

    def expression(self, sem: semantics.OpSemantics, tname: str, args: list[str]) -> str:
        name = sem.name
        a = args[0]
        b = args[1] if len(args) > 1 else ""
        amount = f"({b}.x & 63u)" if b else ""
        top = ONES if not _signed(tname) else SIGNED_MAX
        simple = {
            "add": lambda: self.call("vyre_u64_add", a, b),
            "sub": lambda: self.call("vyre_u64_sub", a, b),
            "mul": lambda: f"{self.call('vyre_u64_mul_full', a, b)}.xy",
            "div": lambda: self.divmod(tname, a, b, False),
            "mod": lambda: self.divmod(tname, a, b, True),
            "min": lambda: f"select({b}, {a}, {self.lt(tname, a, b)})",
            "max": lambda: f"select({a}, {b}, {self.lt(tname, a, b)})",
            "bit_and": lambda: f"({a} & {b})",
            "bit_or": lambda: f"({a} | {b})",
            "bit_xor": lambda: f"({a} ^ {b})",
            "bit_not": lambda: f"(~{a})",
            "shl": lambda: self.call("vyre_u64_shl", a, amount),
            "shr": lambda: self.call(
                "vyre_i64_shr" if _signed(tname) else "vyre_u64_shr", a, amount
            ),
            "rotate_left": lambda: (
                f"({self.call('vyre_u64_shl', a, amount)} | "
                f"{self.call('vyre_u64_shr', a, f'((64u - {amount}) & 63u)')})"
            ),
            "rotate_right": lambda: (
                f"({self.call('vyre_u64_shr', a, amount)} | "
                f"{self.call('vyre_u64_shl', a, f'((64u - {amount}) & 63u)')})"
            ),
            "saturating_add": lambda: (
                f"select({self.call('vyre_u64_add', a, b)}, {top}, "
                f"{self.call('vyre_u64_lt', self.call('vyre_u64_add', a, b), a)})"
            ),
            "saturating_sub": lambda: (
                f"select({self.call('vyre_u64_sub', a, b)}, {ZERO}, {self.call('vyre_u64_lt', a, b)})"
            ),
            "saturating_mul": lambda: (
                f"select({self.call('vyre_u64_mul_full', a, b)}.xy, {top}, "
                f"any({self.call('vyre_u64_mul_full', a, b)}.zw != vec2<u32>(0u, 0u)))"
            ),
            "eq": lambda: f"all({a} == {b})",
            "ne": lambda: f"any({a} != {b})",
            "lt": lambda: self.lt(tname, a, b),
            "le": lambda: f"(!{self.lt(tname, b, a)})",
            "gt": lambda: self.lt(tname, b, a),
            "ge": lambda: f"(!{self.lt(tname, a, b)})",
            "neg": lambda: self.call("vyre_i64_neg", a),
            "abs": lambda: self.magnitude(a) if _signed(tname) else a,
            "sign": lambda: (
                f"select(select(vec2<u32>(1u, 0u), {ZERO}, all({a} == {ZERO})), {ONES}, "
                f"{self.negative(a)})"
            ),
            "popcount": lambda: f"vec2<u32>(countOneBits({a}.x) + countOneBits({a}.y), 0u)",
            "clz": lambda: (
                f"vec2<u32>(select(countLeadingZeros({a}.y), 32u + countLeadingZeros({a}.x), "
                f"{a}.y == 0u), 0u)"
            ),
            "ctz": lambda: (
                f"vec2<u32>(select(countTrailingZeros({a}.x), 32u + countTrailingZeros({a}.y), "
                f"{a}.x == 0u), 0u)"
            ),
            "reverse_bits": lambda: f"vec2<u32>(reverseBits({a}.y), reverseBits({a}.x))",
        }
        if name not in simple:  # pragma: no cover - the table's types say which ops
            raise ValueError(f"no WGSL for '{name}' on {tname}")
        return simple[name]()

    def trap_condition(self, sem: semantics.OpSemantics, tname: str, args: list[str]) -> str | None:
        if sem.trap_tag is None or not _signed(tname):
            return None
        a, b = args
        return f"(all({b} == {ZERO}) || (all({a} == {SIGNED_MIN}) && all({b} == {ONES})))"

    # -------------------------------------------------------------- conversions

    def cast(self, x: str, source: str, target: str, narrow: Callable[[str, str], str]) -> str:
        """`vyre.cast` where the source or the target is 64-bit. `narrow(tname, expr)`
        wraps a 32-bit register value to an 8/16-bit type (identity for 32-bit)."""
        if source == target or (is_wide(source) and is_wide(target)):
            return x
        if target == "i1":
            return f"any({x} != {ZERO})"
        if source == "i1":
            return f"vec2<u32>(select(0u, 1u, {x}), 0u)"
        if source == "f32":
            return self._from_f32(x, target)
        if target == "f32":
            if not _signed(source):
                return self.call("vyre_u64_to_f32", x)
            magnitude = self.call("vyre_u64_to_f32", self.magnitude(x))
            return f"select({magnitude}, -{magnitude}, {self.negative(x)})"
        if is_wide(target):  # from a 32-bit register (8/16-bit ones are normalized)
            info = semantics.ELEMENTS[source]
            if info.is_signed:
                return f"vec2<u32>(bitcast<u32>({x}), select(0u, 4294967295u, {x} < 0i))"
            return f"vec2<u32>({x}, 0u)"
        # to an integer of at most 32 bits: the low word, wrapped
        signed = semantics.ELEMENTS[target].is_signed
        return narrow(target, f"bitcast<i32>({x}.x)" if signed else f"{x}.x")

    def _from_f32(self, x: str, target: str) -> str:
        """Saturating f32 -> 64-bit: truncate, NaN -> 0, out of range -> MIN/MAX."""
        is_nan = f"((bitcast<u32>({x}) & 0x7fffffffu) > 0x7f800000u)"
        t = f"trunc({x})"
        if not _signed(target):
            inside = self.call("vyre_f32_to_u64", f"clamp({t}, 0.0, 18446742974197923840.0)")
            value = f"select({inside}, {ONES}, {x} >= 18446744073709551616.0)"
            return f"select({value}, {ZERO}, {is_nan})"
        magnitude = self.call("vyre_f32_to_u64", f"min(abs({t}), 9223371487098961920.0)")
        signed = f"select({magnitude}, {self.call('vyre_i64_neg', magnitude)}, {t} < 0.0)"
        value = f"select(select({signed}, {SIGNED_MAX}, {x} >= 9223372036854775808.0), {SIGNED_MIN}, {x} <= -9223372036854775808.0)"
        return f"select({value}, {ZERO}, {is_nan})"
