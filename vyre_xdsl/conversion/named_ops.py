"""Named `linalg` ops (`linalg.fill`, `linalg.matmul`, `linalg.add`, ...) become
`linalg.generic` before `convert-to-vyre` converts them, by xDSL's
generalization, with two things added:

- their operand counts are checked first (xDSL's parser and verifiers accept a
  named op with any number of `ins` and `outs`: `linalg.add` with one input
  reads its output as the second, `linalg.fill` without `outs` made the
  generalization raise `IndexError`), a located error naming what the op takes;
- the generic op keeps the named op's location, so that its verifier's errors
  and everything converted from it point at the named op in the source.
"""

from __future__ import annotations

from xdsl.dialects.linalg.abstract_ops import NamedOperation
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

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
        generic.location = op.location
        rewriter.replace(op, generic)
