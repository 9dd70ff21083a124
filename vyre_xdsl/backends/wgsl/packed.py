"""8- and 16-bit integers (`ui8`, `ui16`, `si8`, `si16`) in WGSL, which has none.

In registers an 8/16-bit value is a `u32` (unsigned, zero-extended) or an `i32`
(signed, sign-extended), kept *normalized*: every op result is wrapped back to
the type's width, so that the 32-bit comparisons, min/max and divisions on the
register give the narrow type's answer.

In a buffer the values are packed, little-endian, four 8-bit or two 16-bit values
to a `u32` word (the host array's bytes, as they are). A load extracts its value
from the containing word. A store changes only its own bits of the word, with a
compare-exchange loop on the word (the buffer is `array<atomic<u32>>`), so that
neighbouring invocations storing into the same word never lose an update.

```python
from vyre_xdsl.backends.wgsl import packed
packed.normalize("si8", "x")   # "(bitcast<i32>(bitcast<u32>(x) << 24u) >> 24u)"
```
"""

from __future__ import annotations

from vyre_xdsl import semantics

WORD_BITS = 32


def is_packed(tname: str | None) -> bool:
    return tname in semantics.PACKED_TYPES


def _bits(tname: str) -> int:
    return semantics.ELEMENTS[tname].bits


def _mask(tname: str) -> str:
    return f"{(1 << _bits(tname)) - 1:#x}u"


def _signed(tname: str) -> bool:
    return semantics.ELEMENTS[tname].is_signed


def register_type(tname: str) -> str:
    return "i32" if _signed(tname) else "u32"


def words(tname: str, count: int) -> int:
    """How many `u32` words hold `count` values."""
    per_word = WORD_BITS // _bits(tname)
    return max(1, -(-count // per_word))


def normalize(tname: str, expression: str) -> str:
    """A 32-bit register value wrapped to the type's width (zero- or sign-extended)."""
    if not _signed(tname):
        return f"(({expression}) & {_mask(tname)})"
    spare = WORD_BITS - _bits(tname)
    return f"(bitcast<i32>(bitcast<u32>({expression}) << {spare}u) >> {spare}u)"


def _as_type(tname: str, bits: str) -> str:
    """A `u32` holding the type's bits (in its low bits) as a normalized register."""
    return normalize(tname, f"bitcast<i32>({bits})") if _signed(tname) else normalize(tname, bits)


def _unsigned_bits(tname: str, a: str) -> str:
    """The type's bits of a register as a `u32` with the high bits clear."""
    return f"(bitcast<u32>({a}) & {_mask(tname)})" if _signed(tname) else a


def literal(value: int, tname: str) -> str:
    return f"{int(value)}i" if _signed(tname) else f"{int(value)}u"


# ------------------------------------------------------------------ ops


def _amount(tname: str, b: str) -> str:
    """The shift amount masked to the width."""
    return f"(bitcast<u32>({b}) & {_bits(tname) - 1}u)"


def _div(tname: str, a: str, b: str) -> str:
    if _signed(tname):  # a trapping lane never gets here (or its result is unused)
        return normalize(tname, f"({a} / {b})")
    top = f"{(1 << _bits(tname)) - 1}u"
    return f"select({a} / select({b}, 1u, {b} == 0u), {top}, {b} == 0u)"


def _mod(tname: str, a: str, b: str) -> str:
    if _signed(tname):  # truncated remainder, as for si32
        return normalize(tname, f"({a} - ({a} / {b}) * {b})")
    return f"select({a} % select({b}, 1u, {b} == 0u), 0u, {b} == 0u)"


def _rotate(left: bool):
    def emit(tname: str, a: str, b: str) -> str:
        bits = _bits(tname)
        s = _amount(tname, b)
        back = f"(({bits}u - {s}) & {bits - 1}u)"
        first, second = ("<<", ">>") if left else (">>", "<<")
        return normalize(tname, f"(({a} {first} {s}) | ({a} {second} {back}))")

    return emit


def _saturating(name: str):
    def emit(tname: str, a: str, b: str) -> str:
        top = f"{(1 << _bits(tname)) - 1}u"
        if name == "saturating_add":
            return f"min({a} + {b}, {top})"
        if name == "saturating_mul":  # a 16 x 16-bit product fits in a u32
            return f"min({a} * {b}, {top})"
        return f"select({a} - {b}, 0u, {b} > {a})"

    return emit


def _bit_count(builtin: str):
    def emit(tname: str, a: str) -> str:
        bits = _unsigned_bits(tname, a)
        if builtin == "countLeadingZeros":
            count = f"(countLeadingZeros({bits}) - {WORD_BITS - _bits(tname)}u)"
        elif builtin == "countTrailingZeros":  # a zero value has `width` trailing zeros
            count = f"countTrailingZeros({bits} | {1 << _bits(tname):#x}u)"
        elif builtin == "reverseBits":
            count = f"(reverseBits({bits}) >> {WORD_BITS - _bits(tname)}u)"
        else:
            count = f"countOneBits({bits})"
        return _as_type(tname, count)

    return emit


#: ops whose WGSL is the table's 32-bit one on the registers, with the result
#: wrapped back to the width (or a 32-bit or Bool result that needs no wrapping)
_WRAPPED = ("add", "sub", "mul", "neg", "abs", "bit_and", "bit_or", "bit_xor", "bit_not")
_AS_IS = ("min", "max", "sign", "abs_diff", "eq", "ne", "lt", "le", "gt", "ge")

_SPECIAL = {
    "div": _div,
    "mod": _mod,
    "shl": lambda t, a, b: normalize(t, f"({a} << {_amount(t, b)})"),
    "shr": lambda t, a, b: f"({a} >> {_amount(t, b)})",
    "rotate_left": _rotate(True),
    "rotate_right": _rotate(False),
    "saturating_add": _saturating("saturating_add"),
    "saturating_sub": _saturating("saturating_sub"),
    "saturating_mul": _saturating("saturating_mul"),
    "popcount": _bit_count("countOneBits"),
    "clz": _bit_count("countLeadingZeros"),
    "ctz": _bit_count("countTrailingZeros"),
    "reverse_bits": _bit_count("reverseBits"),
}


def expression(sem: semantics.OpSemantics, tname: str, args: list[str]) -> str:
    """The WGSL of table op `sem` on normalized registers of packed type `tname`."""
    special = _SPECIAL.get(sem.name)
    if special is not None:
        return special(tname, *args)
    wide = sem.wgsl(register_type(tname), *args)
    if sem.name in _WRAPPED:
        return normalize(tname, wide)
    if sem.name in _AS_IS:
        return wide
    raise ValueError(f"no WGSL for '{sem.name}' on {tname}")  # pragma: no cover - table checked


def trap_condition(sem: semantics.OpSemantics, tname: str, args: list[str]) -> str | None:
    """The WGSL condition under which signed `div`/`mod` traps (by 0, or MIN by -1)."""
    if sem.trap_tag is None or not _signed(tname):
        return None
    a, b = args
    lowest = -(1 << (_bits(tname) - 1))
    return f"(({b} == 0i) || (({a} == {lowest}i) && ({b} == -1i)))"


# ------------------------------------------------------------------ casts


def cast(x: str, source: str, target: str) -> str:
    """`vyre.cast` (and `vyre.bitcast` between `ui8`/`si8`, `ui16`/`si16`) when the
    source or the target is a packed type: Rust's `as` on normalized registers."""
    if source == target:
        return x
    if target == "i1":
        return f"(!({x} == {literal(0, source)}))"
    if source == "i1":
        return f"select({literal(0, target)}, {literal(1, target)}, {x})"
    if source == "f32":  # saturating: the bounds are exact f32 values
        lo, hi = semantics.ELEMENTS[target].int_range
        inside = f"{register_type(target)}(clamp({x}, {float(lo)!r}, {float(hi)!r}))"
        is_nan = f"((bitcast<u32>({x}) & 0x7fffffffu) > 0x7f800000u)"
        return f"select({inside}, {literal(0, target)}, {is_nan})"
    if target == "f32":
        return f"f32({x})"
    # integer to integer: the value as the target's 32-bit register, then wrapped
    wide = semantics.WGSL_TYPES[target] if not is_packed(target) else register_type(target)
    source_wide = semantics.WGSL_TYPES[source] if not is_packed(source) else register_type(source)
    value = x if wide == source_wide else f"bitcast<{wide}>({x})"
    return normalize(target, value) if is_packed(target) else value


# ------------------------------------------------------------------ memory


def _position(tname: str, index: str) -> tuple[str, str]:
    """(word index, bit shift) of element `index`."""
    per_word = WORD_BITS // _bits(tname)
    log = per_word.bit_length() - 1
    return f"({index} >> {log}u)", f"(({index} & {per_word - 1}u) * {_bits(tname)}u)"


def load(tname: str, word: str, index: str) -> str:
    """Element `index` from the value `word` of its containing word."""
    _, shift = _position(tname, index)
    return _as_type(tname, f"(({word} >> {shift}) & {_mask(tname)})")


def _placed(tname: str, value: str, shift: str) -> str:
    """A register value's bits of `tname` moved to bit `shift` of a `u32` word."""
    return f"((bitcast<u32>({value}) & {_mask(tname)}) << {shift})"


def pack_words(tname: str, values: list[str]) -> list[str]:
    """The `u32` words holding `values` (consecutive elements from the start of a
    word, a whole number of words' worth), each value's low bits in its place."""
    count = per_word(tname)
    assert len(values) % count == 0, "whole words only"
    words = []
    for first in range(0, len(values), count):
        parts = [
            _placed(tname, value, f"{k * _bits(tname)}u")
            for k, value in enumerate(values[first : first + count])
        ]
        words.append("(" + " | ".join(parts) + ")")
    return words


def per_word(tname: str) -> int:
    """How many values of `tname` one `u32` word holds."""
    return WORD_BITS // _bits(tname)


def word_index(tname: str, index: str) -> str:
    return _position(tname, index)[0]


def store(tname: str, ref: str, index: str, value: str, done: str) -> list[str]:
    """Statements that replace element `index`'s bits of the word `ref` (an
    `atomic<u32>` lvalue) with `value`, by compare-exchange until no other
    invocation changed the word in between; `done` is set when it succeeded."""
    _, shift = _position(tname, index)
    bits = _placed(tname, value, shift)
    keep = f"(~({_mask(tname)} << {shift}))"
    return [
        f"var {done} = false;",
        f"var {done}_seen = atomicLoad(&{ref});",
        "loop {",
        f"  let r = atomicCompareExchangeWeak(&{ref}, {done}_seen, ({done}_seen & {keep}) | {bits});",
        "  if (r.exchanged) {",
        f"    {done} = true;",
        "    break;",
        "  }",
        f"  {done}_seen = r.old_value;",
        "}",
    ]
