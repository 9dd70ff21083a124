"""The `linalg` named ops that `convert-to-vyre` rewrites to `linalg.generic` itself,
before xDSL's `GeneralizeNamedOpPattern` takes the others:

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
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import (
    BroadcastOp,
    GenericOp,
    PoolingNchwMaxOp,
    ReduceOp,
    TransposeOp,
    YieldOp,
)
from xdsl.ir import Block, Region
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.linalg_generalize_named_ops import GeneralizeNamedOpPattern
from xdsl.utils.hints import isa


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
        rewriter.replace(
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
        rewriter.replace(
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
        rewriter.replace(
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
        rewriter.replace(
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
    """Every `linalg` named op of `module` as a `linalg.generic`, in place: the
    ones above by upstream's rules, the others by xDSL's pattern."""
    PatternRewriteWalker(
        GreedyRewritePatternApplier(
            [
                GeneralizeTranspose(),
                GeneralizeBroadcast(),
                GeneralizeReduce(),
                GeneralizePoolingMax(),
                GeneralizeNamedOpPattern(),
            ],
            dce_enabled=False,  # an unused op the user wrote is still checked (and refused)
        ),
        apply_recursively=False,
    ).rewrite_module(module)
