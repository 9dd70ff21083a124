"""Named `linalg` ops (`linalg.fill`, `linalg.matmul`, `linalg.transpose`, ...)
become `linalg.generic` before `convert-to-vyre` converts them.

Their operand counts are checked first (`named_op_problems`): xDSL's parser and
verifiers accept a named op with any number of `ins` and `outs` (`linalg.add`
with one input read its output as the second, `linalg.fill` without `outs` made
the generalization raise `IndexError`); a count that is not the op's own is a
located error naming what the op takes. Every generic op keeps the named op's
location, so that its verifier's errors and everything converted from it point
at the named op in the source.

Most named ops are generalized as xDSL does it (`GeneralizeNamedOp`). These are
rewritten by upstream's rules here:

- `linalg.transpose`, `linalg.broadcast` and `linalg.reduce`, which xDSL 0.74 does
  not generalize (upstream MLIR's `--linalg-generalize-named-ops` does);
- `linalg.pooling_nchw_max`, whose body xDSL 0.74 builds as `max(input, window)`
  where upstream's is `max(output, input)` (the window memref only gives the
  window's shape), so the generic form xDSL produces keeps the last element of
  each window maxed with a window element instead of the window's maximum.

Each becomes the `linalg.generic` upstream's generalization gives: the same
operands, indexing maps, iterator types and body.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import AffineMapAttr, ArrayAttr, IntegerType, MemRefType, TensorType
from xdsl.dialects.linalg.abstract_ops import NamedOperation
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import (
    BroadcastOp,
    GenericOp,
    PoolingNchwMaxOp,
    ReduceOp,
    TransposeOp,
    YieldOp,
)
from xdsl.ir import Block, Operation, Region
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.hints import isa

#: the inputs (`ins`) each named op takes, as upstream MLIR defines it; every
#: named op has one output (`outs`)
NAMED_INPUTS = {
    "linalg.fill": 1,
    "linalg.copy": 1,
    "linalg.exp": 1,
    "linalg.log": 1,
    "linalg.sqrt": 1,
    "linalg.add": 2,
    "linalg.sub": 2,
    "linalg.mul": 2,
    "linalg.max": 2,
    "linalg.min": 2,
    "linalg.select": 3,
    "linalg.matmul": 2,
    "linalg.quantized_matmul": 4,
    "linalg.pooling_nchw_max": 2,
}
#: the convolutions take the input and the filter
CONV_INPUTS = 2


def named_op_problems(module: Operation) -> list[tuple[Operation | None, str]]:
    """Each named linalg op of `module` whose operand counts are not its own."""
    errors: list[tuple[Operation | None, str]] = []
    for op in module.walk():
        if not isinstance(op, NamedOperation):
            continue
        inputs = NAMED_INPUTS.get(op.name, CONV_INPUTS if "conv" in op.name else None)
        if len(op.outputs) != 1 or (inputs is not None and len(op.inputs) != inputs):
            takes = f"{inputs} input{'s' if inputs != 1 else ''}" if inputs else "its inputs"
            errors.append(
                (
                    op,
                    f"'{op.name}' takes {takes} (ins) and 1 output (outs), "
                    f"got {len(op.inputs)} and {len(op.outputs)}",
                )
            )
    return errors


class GeneralizeNamedOp(RewritePattern):
    """A named linalg op (its operand counts checked: `named_op_problems`) as
    the `linalg.generic` it stands for, at the named op's location."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: NamedOperation, rewriter: PatternRewriter) -> None:
        generic = GenericOp(
            op.inputs,
            op.outputs,
            op.body.clone(),
            op.get_indexing_maps(),
            op.get_iterator_types(),
            op.results.types,
        )
        _replace(rewriter, op, generic)


def _replace(rewriter: PatternRewriter, op: Operation, generic: GenericOp) -> None:
    """Replace the named `op` by `generic`, which takes its location."""
    generic.location = op.location
    rewriter.replace(op, generic)


def _rank(value) -> int:
    ty = value.type
    return len(ty.get_shape()) if isa(ty, MemRefType | TensorType) else 0


def _map(num_dims: int, dims: list[int]) -> AffineMapAttr:
    return AffineMapAttr(AffineMap(num_dims, 0, tuple(AffineDimExpr(d) for d in dims)))


def _iterators(kinds: list[bool]) -> ArrayAttr:
    """Iterator types: True is a reduction, False a parallel dimension."""
    return ArrayAttr(
        [IteratorTypeAttr.reduction() if r else IteratorTypeAttr.parallel() for r in kinds]
    )


class GeneralizeTranspose(RewritePattern):
    """`linalg.transpose`: one parallel dimension per output dimension; the output
    is indexed by them in order, the input through the inverse permutation."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        _replace(
            rewriter,
            op,
            GenericOp(
                op.inputs,
                op.outputs,
                op.body.clone(),
                op.get_indexing_maps(),
                op.get_iterator_types(),
                op.result_types,
            ),
        )


class GeneralizeBroadcast(RewritePattern):
    """`linalg.broadcast`: one parallel dimension per output dimension; the input
    is indexed by the dimensions that `dimensions` does not add."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BroadcastOp, rewriter: PatternRewriter) -> None:
        rank = _rank(op.init)
        added = set(op.dimensions.get_values())
        kept = [d for d in range(rank) if d not in added]
        _replace(
            rewriter,
            op,
            GenericOp(
                (op.input,),
                (op.init,),
                op.hidden_region.clone(),
                [_map(rank, kept), _map(rank, list(range(rank)))],
                _iterators([False] * rank),
                op.result_types,
            ),
        )


class GeneralizeReduce(RewritePattern):
    """`linalg.reduce`: one dimension per input dimension, a reduction where
    `dimensions` names it; the output is indexed by the others."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReduceOp, rewriter: PatternRewriter) -> None:
        rank = _rank(op.input)
        reduced = set(op.dimensions.get_values())
        kept = [d for d in range(rank) if d not in reduced]
        _replace(
            rewriter,
            op,
            GenericOp(
                (op.input,),
                (op.init,),
                op.region.clone(),
                [_map(rank, list(range(rank))), _map(rank, kept)],
                _iterators([d in reduced for d in range(rank)]),
                op.result_types,
            ),
        )


class GeneralizePoolingMax(RewritePattern):
    """`linalg.pooling_nchw_max` with upstream's body, `max(output, input)`
    (`arith.maximumf` for floats, `arith.maxsi` for integers)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PoolingNchwMaxOp, rewriter: PatternRewriter) -> None:
        types = [arg.type for arg in op.body.block.args]
        block = Block(arg_types=types)
        value, _window, out = block.args
        combine = (arith.MaxSIOp if isa(types[-1], IntegerType) else arith.MaximumfOp)(out, value)
        block.add_ops([combine, YieldOp(combine.result)])
        _replace(
            rewriter,
            op,
            GenericOp(
                op.inputs,
                op.outputs,
                Region(block),
                op.get_indexing_maps(),
                op.get_iterator_types(),
                op.result_types,
            ),
        )


def generalize_named_ops(module) -> None:
    """Every `linalg` named op of `module` (operand counts checked:
    `named_op_problems`) as a `linalg.generic` at its location, in place: the
    ones above by upstream's rules, the others as xDSL generalizes them."""
    PatternRewriteWalker(
        GreedyRewritePatternApplier(
            [
                GeneralizeTranspose(),
                GeneralizeBroadcast(),
                GeneralizeReduce(),
                GeneralizePoolingMax(),
                GeneralizeNamedOp(),
            ],
            dce_enabled=False,  # an unused op the user wrote is still checked (and refused)
        ),
        apply_recursively=False,
    ).rewrite_module(module)
