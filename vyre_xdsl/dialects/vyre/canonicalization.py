"""Canonicalization patterns of the `vyre` ops (what `-p canonicalize` applies).

The ops attach them through `HasCanonicalizationPatternsTrait`, the way xDSL's
own dialects do (`xdsl/transforms/canonicalization_patterns/`). A pattern is
here only when its identity holds for *every* operand value under SPEC 3.4:
wrap-around, traps, NaN, infinities and signed zeros included. For example
`x * 0` is not `0` for f32 (NaN, infinities and -0), `x - x` is not `0` for f32
(NaN, infinities), `x + 0.0` is not `x` for f32 (-0 + 0 = +0) but `x + -0.0`
is. docs/dialect.md lists each identity with its reason.

A pattern never erases an op that may trap: it replaces the *result* of a
rewritten op by another value, and a trapping operand's definition stays (its
trap effect keeps it alive).

```mlir
%r = vyre.add %x, %zero : ui32      // canonicalizes to %x
%s = vyre.mul %f, %one : f32        // canonicalizes to %f
%t = vyre.select %true, %a, %b : f32  // canonicalizes to %a
```
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from vyre_xdsl.dialects import vyre as v

# ------------------------------------------------------------------ constants


def literal(value: SSAValue) -> int | float | bool | None:
    """The value of `value` when a `vyre.const` defines it, else None."""
    owner = value.owner
    return owner.literal() if isinstance(owner, v.ConstOp) else None


def _bits_of(ty_name: str, value: int | float | bool) -> int:
    """The 32-bit pattern of a ui32/si32/f32 literal (an i1 is 0 or 1)."""
    if ty_name == "f32":
        import numpy as np

        return int(np.float32(value).view(np.uint32))
    if ty_name == "i1":
        return int(bool(value))
    return int(value) & 0xFFFFFFFF


def is_literal(value: SSAValue, bits: int) -> bool:
    """Whether `value` is a constant whose 32-bit pattern is `bits` (so that -0.0
    and +0.0 differ, and an f32 NaN matches no identity)."""
    lit = literal(value)
    name = v.type_name(value.type)
    if lit is None or name is None:
        return False
    if isinstance(lit, float) and math.isnan(lit):
        return False
    return _bits_of(name, lit) == bits


ZERO, ONE, ALL_ONES = 0, 1, 0xFFFFFFFF
F32_ONE, F32_NEG_ZERO, F32_POS_ZERO = 0x3F800000, 0x80000000, 0x00000000
INTS = ("ui32", "si32")


def _type(op: Operation) -> str | None:
    return v.type_name(op.operands[0].type)


# ------------------------------------------------------------------ identities
#
# Each table maps an op mnemonic to {operand type: constant bit pattern}.

#: `x OP c` is `x` (and `c OP x` is `x` when OP is commutative)
RIGHT_IDENTITY: dict[str, dict[str, int]] = {
    "add": {"ui32": ZERO, "si32": ZERO, "f32": F32_NEG_ZERO},
    "sub": {"ui32": ZERO, "si32": ZERO, "f32": F32_POS_ZERO},
    "mul": {"ui32": ONE, "si32": ONE, "f32": F32_ONE},
    "div": {"ui32": ONE, "si32": ONE, "f32": F32_ONE},
    "bit_and": {"ui32": ALL_ONES, "si32": ALL_ONES},
    "bit_or": {"ui32": ZERO, "si32": ZERO},
    "bit_xor": {"ui32": ZERO, "si32": ZERO},
    "saturating_add": {"ui32": ZERO},
    "saturating_sub": {"ui32": ZERO},
    "and": {"i1": 1},
    "or": {"i1": 0},
}

#: `x OP c` is `c` (integers and i1 only; for f32 NaN and infinities break these)
ABSORBING: dict[str, dict[str, int]] = {
    "mul": {"ui32": ZERO, "si32": ZERO},
    "bit_and": {"ui32": ZERO, "si32": ZERO},
    "bit_or": {"ui32": ALL_ONES, "si32": ALL_ONES},
    "and": {"i1": 0},
    "or": {"i1": 1},
}

#: shifts and rotates mask the amount to the width: `x OP c` is `x` when c & (width - 1) == 0
SHIFTS = ("shl", "shr", "rotate_left", "rotate_right")

#: `x OP x` is `x`
IDEMPOTENT: dict[str, tuple[str, ...]] = {
    "min": ("ui32", "si32", "f32"),
    "max": ("ui32", "si32", "f32"),
    "bit_and": INTS,
    "bit_or": INTS,
    "and": ("i1",),
    "or": ("i1",),
}

#: `x OP x` is the constant (integers and i1 only: NaN breaks every one for f32)
SELF_CONSTANT: dict[str, tuple[tuple[str, ...], int | bool]] = {
    "sub": (INTS, 0),
    "bit_xor": (INTS, 0),
    "abs_diff": (INTS, 0),
    "saturating_sub": (("ui32",), 0),
    "eq": (("ui32", "si32", "i1"), True),
    "le": (INTS, True),
    "ge": (INTS, True),
    "ne": (("ui32", "si32", "i1"), False),
    "lt": (INTS, False),
    "gt": (INTS, False),
}

#: `OP (OP x)` is `x`
INVOLUTIONS: dict[str, tuple[str, ...]] = {
    "not": ("i1",),
    "neg": ("ui32", "si32", "f32"),
    "bit_not": INTS,
}


def _commutative(op: Operation) -> bool:
    return op.semantics().commutative


class RightIdentity(RewritePattern):
    """`x + 0` → `x` (ints), `x + -0.0` → `x` (f32), `x * 1` → `x`, ..."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        table = RIGHT_IDENTITY.get(op.name.removeprefix("vyre."), {})
        bits = table.get(_type(op))
        if bits is None:
            return
        lhs, rhs = op.operands
        if is_literal(rhs, bits):
            rewriter.replace(op, [], [lhs])
        elif _commutative(op) and is_literal(lhs, bits):
            rewriter.replace(op, [], [rhs])


class Absorbing(RewritePattern):
    """`x * 0` → `0` (ints), `x & 0` → `0`, `x | ~0` → `~0`, `c and false` → `false`, ..."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        table = ABSORBING.get(op.name.removeprefix("vyre."), {})
        bits = table.get(_type(op))
        if bits is None:
            return
        for candidate in op.operands:
            if is_literal(candidate, bits):
                rewriter.replace(op, [], [candidate])
                return


class ModOne(RewritePattern):
    """`x mod 1` → `0` (ints; 1 never traps)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if _type(op) not in INTS or not is_literal(op.operands[1], ONE):
            return
        rewriter.replace(op, v.ConstOp(0, op.results[0].type))


class ShiftByZero(RewritePattern):
    """`x << c` → `x` when `c & 31 == 0` (likewise `>>` and rotates; the amount is
    masked to the operand's width: `c & 7` for 8-bit, `c & 63` for 64-bit)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        amount = literal(op.operands[1])
        info = v.element_info(op.operands[0].type)
        if amount is None or info is None or int(amount) & (info.bits - 1):
            return
        rewriter.replace(op, [], [op.operands[0]])


class SameOperands(RewritePattern):
    """`x OP x`: `min x, x` → `x`, `x ^ x` → `0` (ints), `x == x` → `true` (ints), ..."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        lhs, rhs = op.operands
        if lhs is not rhs:
            return
        mnemonic, ty = op.name.removeprefix("vyre."), _type(op)
        if ty in IDEMPOTENT.get(mnemonic, ()):
            rewriter.replace(op, [], [lhs])
            return
        types, value = SELF_CONSTANT.get(mnemonic, ((), 0))
        if ty in types:
            rewriter.replace(op, v.ConstOp(value, op.results[0].type))


class Involution(RewritePattern):
    """`not (not x)` → `x`, `neg (neg x)` → `x`, `bit_not (bit_not x)` → `x`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if _type(op) not in INVOLUTIONS.get(op.name.removeprefix("vyre."), ()):
            return
        inner = op.operands[0].owner
        # `not` also takes ui32 (truthiness, an i1 result): only a same-type pair cancels
        if isinstance(inner, type(op)) and inner.operands[0].type == op.results[0].type:
            rewriter.replace(op, [], [inner.operands[0]])


class SelectConstantCondition(RewritePattern):
    """`select true, a, b` → `a`; `select false, a, b` → `b`."""

    def match_and_rewrite(self, op: v.SelectOp, rewriter: PatternRewriter, /):
        cond = literal(op.cond)
        if cond is None:
            return
        rewriter.replace(op, [], [op.true_value if cond else op.false_value])


class SelectSameValues(RewritePattern):
    """`select c, a, a` → `a`."""

    def match_and_rewrite(self, op: v.SelectOp, rewriter: PatternRewriter, /):
        if op.true_value is op.false_value:
            rewriter.replace(op, [], [op.true_value])


class SelectOfBools(RewritePattern):
    """`select c, true, false` → `c`; `select c, false, true` → `not c`."""

    def match_and_rewrite(self, op: v.SelectOp, rewriter: PatternRewriter, /):
        t, f = literal(op.true_value), literal(op.false_value)
        if op.result.type != v.i1 or t is None or f is None or t == f:
            return
        if t:
            rewriter.replace(op, [], [op.cond])
        else:
            rewriter.replace(op, v.TABLE_OPS["not"](op.cond))


class ConversionToSameType(RewritePattern):
    """`cast x : T to T` → `x`; `bitcast x : T to T` → `x`."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if op.operands[0].type == op.results[0].type:
            rewriter.replace(op, [], [op.operands[0]])


class BitcastRoundTrip(RewritePattern):
    """`bitcast (bitcast x : A to B) : B to A` → `x` (the bits never change)."""

    def match_and_rewrite(self, op: v.BitcastOp, rewriter: PatternRewriter, /):
        inner = op.input.owner
        if isinstance(inner, v.BitcastOp) and inner.input.type == op.result.type:
            rewriter.replace(op, [], [inner.input])


# ------------------------------------------------------------------ per op


def _binary_patterns(mnemonic: str) -> tuple[RewritePattern, ...]:
    found: list[RewritePattern] = []
    if mnemonic in RIGHT_IDENTITY:
        found.append(RightIdentity())
    if mnemonic in ABSORBING:
        found.append(Absorbing())
    if mnemonic == "mod":
        found.append(ModOne())
    if mnemonic in SHIFTS:
        found.append(ShiftByZero())
    if mnemonic in IDEMPOTENT or mnemonic in SELF_CONSTANT:
        found.append(SameOperands())
    return tuple(found)


_BUILDERS: dict[str, Callable[[], tuple[RewritePattern, ...]]] = {
    "vyre.select": lambda: (SelectConstantCondition(), SelectSameValues(), SelectOfBools()),
    "vyre.cast": lambda: (ConversionToSameType(),),
    "vyre.bitcast": lambda: (ConversionToSameType(), BitcastRoundTrip()),
}


def patterns_for(op_name: str) -> tuple[RewritePattern, ...]:
    """The canonicalization patterns of the op named `op_name`."""
    if op_name in _BUILDERS:
        return _BUILDERS[op_name]()
    mnemonic = op_name.removeprefix("vyre.")
    if mnemonic in INVOLUTIONS:
        return (Involution(),)
    return _binary_patterns(mnemonic)
