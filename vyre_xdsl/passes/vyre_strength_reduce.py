"""`vyre-strength-reduce`: `ui32` multiply, divide and remainder by a power of two
become shifts and masks.

```
vyre-opt -p vyre-strength-reduce input.mlir
```

With `c = 2^k` a `vyre.const` of type `ui32` (SPEC section 3.4: `ui32`
arithmetic wraps, shift amounts are taken mod 32):

| before | after |
| --- | --- |
| `mul %x, c` or `mul c, %x` | `shl %x, k` (`%x` itself when `c` is 1) |
| `div %x, c` | `shr %x, k` (`%x` itself when `c` is 1) |
| `mod %x, c` | `bit_and %x, c - 1` |

Both sides agree bit for bit on every input: `x * 2^k mod 2^32` is the low 32
bits of `x << k`; unsigned `x / 2^k` drops the k low bits; `x mod 2^k` keeps
them. Other constants, `si32` (whose division rounds toward zero and may
trap) and `f32` are left alone, and so is division by zero (defined for
`ui32`, but not a power of two).

```mlir
%c8 = vyre.const 8 : ui32
%q = vyre.div %x, %c8 : ui32
// becomes
%c3 = vyre.const 3 : ui32
%q = vyre.shr %x, %c3 : ui32
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from vyre_xdsl.dialects.vyre import BitAndOp, ConstOp, DivOp, ModOp, MulOp, ShlOp, ShrOp, ui32


def power_of_two_exponent(value: SSAValue) -> int | None:
    """`k` when `value` is a `ui32` `vyre.const` equal to `2^k`, else None."""
    owner = value.owner
    if not isinstance(owner, ConstOp) or value.type != ui32:
        return None
    c = int(owner.literal())
    if c <= 0 or c & (c - 1):
        return None
    return c.bit_length() - 1


def _replace_by_op(
    rewriter: PatternRewriter, op: Operation, x: SSAValue, cls: type[Operation], amount: int
) -> None:
    """Replace `op` by `cls(x, const amount)`."""
    constant = ConstOp(amount, ui32)
    constant.result.name_hint = f"c{amount}"
    rewriter.replace(op, [constant, cls(x, constant.result)])


class MulByPowerOfTwo(RewritePattern):
    """`mul %x, 2^k` (either operand order) -> `shl %x, k`; `mul %x, 1` -> `%x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MulOp, rewriter: PatternRewriter) -> None:
        if op.result.type != ui32:
            return
        for x, c in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            k = power_of_two_exponent(c)
            if k == 0:
                rewriter.replace(op, [], [x])
                return
            if k is not None:
                _replace_by_op(rewriter, op, x, ShlOp, k)
                return


class DivByPowerOfTwo(RewritePattern):
    """`div %x, 2^k` -> `shr %x, k`; `div %x, 1` -> `%x` (ui32)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DivOp, rewriter: PatternRewriter) -> None:
        if op.result.type != ui32:
            return
        x, c = op.lhs, op.rhs
        k = power_of_two_exponent(c)
        if k == 0:
            rewriter.replace(op, [], [x])
        elif k is not None:
            _replace_by_op(rewriter, op, x, ShrOp, k)


class ModByPowerOfTwo(RewritePattern):
    """`mod %x, 2^k` -> `bit_and %x, 2^k - 1` (ui32)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ModOp, rewriter: PatternRewriter) -> None:
        if op.result.type != ui32:
            return
        x, c = op.lhs, op.rhs
        k = power_of_two_exponent(c)
        if k is not None:
            _replace_by_op(rewriter, op, x, BitAndOp, (1 << k) - 1)


@dataclass(frozen=True)
class VyreStrengthReducePass(ModulePass):
    """Rewrite ui32 mul/div/mod by a power of two into shl/shr/bit_and."""

    name = "vyre-strength-reduce"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = [MulByPowerOfTwo(), DivByPowerOfTwo(), ModByPowerOfTwo()]
        # no dead-code elimination on the side: this pass only strength-reduces
        applier = GreedyRewritePatternApplier(patterns, dce_enabled=False)
        PatternRewriteWalker(applier).rewrite_module(op)
