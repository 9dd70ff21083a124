"""Standard MLIR in: modules of `func.func` in xDSL's `func`, `arith`, `math`,
`scf`, `memref` and `linalg` dialects become `vyre.program`s (the
`convert-to-vyre` pass; docs/mlir-input.md).

```python
from vyre_xdsl.conversion import convert_if_standard
module = convert_if_standard(module)   # a vyre module stays as it is
```
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, ModuleOp, i64

from vyre_xdsl.diagnostics import VyreDiagnostic, verify_after_pass, verify_module

if TYPE_CHECKING:
    import numpy as np

# The converter (and xDSL's linalg, arith and math dialects it imports) is imported
# by `convert_module`, when a module is standard MLIR: a tool given vyre IR, which
# only asks `is_standard`, does not pay for it.


def is_standard(module: ModuleOp) -> bool:
    """Whether `module` is standard MLIR to convert: it holds a `func.func` and
    no vyre or kernel op (a mixed module is refused where it is run)."""
    names = [op.name for op in module.ops]
    return "func.func" in names and not any(n.startswith(("vyre.", "kernel.")) for n in names)


def convert_module(module: ModuleOp) -> None:
    """Replace the `func.func` of `module` by its `vyre.program`s, in place.
    Anything that cannot be converted is a located `VyreDiagnostic`."""
    if not is_standard(module):
        return
    from xdsl.transforms.dead_code_elimination import region_dce

    from vyre_xdsl.conversion.checks import problems
    from vyre_xdsl.conversion.function import FunctionConverter
    from vyre_xdsl.conversion.linalg_named import generalize_named_ops, named_op_problems

    errors = named_op_problems(module)
    if errors:
        raise VyreDiagnostic(errors)
    # the input's own verifiers first: located errors on the ops as written (a
    # named linalg op's own message, not its generic form's)
    verify_module(module)
    generalize_named_ops(module)
    verify_module(module)  # the generic forms, at the named ops' locations
    errors = problems(module)
    if errors:
        raise VyreDiagnostic(errors)
    func = next(op for op in module.ops if op.name == "func.func")
    converter = FunctionConverter(func)
    programs = converter.programs()
    if not programs:
        raise VyreDiagnostic(
            [(func, f"function @{func.sym_name.data} writes no memref: nothing to run")]
        )
    for program in programs:  # xDSL's own DCE drops what the mapping made and nothing used
        region_dce(program.body)
    module.body.block.insert_ops_before(programs, func)
    for op in [op for op in module.ops if op.name in ("func.func", "gpu.module")]:
        module.body.block.erase_op(op)
    shapes = {
        arg.name: DenseArrayBase.from_list(i64, [-1 if d is None else d for d in arg.shape])
        for arg in converter.arguments.values()
        if arg.shape is not None
    }
    module.attributes[SHAPES_ATTRIBUTE] = DictionaryAttr(shapes)


#: the module attribute that records each memref argument's shape (-1: dynamic)
SHAPES_ATTRIBUTE = "vyre.memref_shapes"


def memref_shapes(module: ModuleOp) -> dict[str, tuple[int, ...]]:
    """The shapes of a converted module's memref arguments by buffer name
    (-1 for the dynamic dimension); empty for a module without the attribute.

    The attribute is text like the rest of the module, so it is checked here,
    where the shapes are read (a located `VyreDiagnostic` at the module):
    `array<i64: ...>` shapes of the run signature's buffers, dimensions of at
    least 1 with at most one -1 (none for a rank-0 memref, one element), and a static shape holds its buffer's static
    count (what a bundle's decoder checks again)."""
    from vyre_xdsl.abi import signature

    attr = module.attributes.get(SHAPES_ATTRIBUTE)
    if attr is None:
        return {}

    def bad(message: str) -> VyreDiagnostic:
        return VyreDiagnostic([(module, f"{SHAPES_ATTRIBUTE}: {message}")])

    if not isinstance(attr, DictionaryAttr):
        raise bad("expected a dictionary of shapes, e.g. {x = array<i64: 4, 8>}")
    counts = {buffer.name: buffer.count for buffer in signature(module).buffers}
    shapes: dict[str, tuple[int, ...]] = {}
    for name, dims in attr.data.items():
        if not isinstance(dims, DenseArrayBase) or dims.elt_type != i64:
            raise bad(f"the shape of '{name}' is not an array<i64: ...>")
        shape = tuple(int(d) for d in dims.get_values())
        if name not in counts:
            raise bad(f"'{name}' is not a buffer of the module's programs")
        if any(d < 1 and d != -1 for d in shape) or shape.count(-1) > 1:
            raise bad(
                f"the shape {list(shape)} of '{name}' is not a shape "
                "(dimensions of at least 1, at most one -1: the dynamic one; [] for rank 0)"
            )
        size = math.prod(shape)
        if -1 not in shape and counts[name] is not None and size != counts[name]:
            raise bad(
                f"the shape {list(shape)} of '{name}' holds {size} elements, "
                f"the buffer {counts[name]}"
            )
        shapes[name] = shape
    return shapes


def in_memref_shapes(
    outputs: dict[str, np.ndarray], shapes: dict[str, tuple[int, ...]]
) -> dict[str, np.ndarray]:
    """`outputs` with each memref's array in the memref's shape (the dynamic
    dimension from the array's size), where the sizes agree."""
    import numpy as np

    shaped = dict(outputs)
    for name, shape in shapes.items():
        array = shaped.get(name)
        if not isinstance(array, np.ndarray) or array.shape == shape:
            continue
        known = int(np.prod([d for d in shape if d >= 0]))
        if known and array.size % known == 0 and (-1 in shape or array.size == known):
            shaped[name] = array.reshape(shape)
    return shaped


def check_memref_inputs(
    inputs: object, shapes: dict[str, tuple[int, ...]], signature: object = None
) -> None:
    """Refuse an input for a memref with a dynamic dimension that the memref cannot
    hold exactly, with an `InputShapeError` naming the buffer:

    - a size that is not a multiple of the static dimensions' product
      (`memref<?x16xf32>` given 33 elements): the dynamic dimension would not be a
      whole number;
    - for 8- and 16-bit elements (`memref<?xi8>`), a size that is not a whole number
      of 32-bit words (a multiple of 4 or 2 elements): a runtime-sized buffer of
      them is padded to whole words (docs/language.md, `vyre.buf_len`), so
      `memref.dim` would count the padding and the output would come back longer.

    `signature` (a `RunSignature`) gives the element types; without it only the
    first rule is checked."""
    import math

    import numpy as np

    from vyre_xdsl.abi import InputShapeError
    from vyre_xdsl.semantics import ELEMENTS, PACKED_TYPES

    if not shapes or not hasattr(inputs, "get"):
        return
    for name, shape in shapes.items():
        if -1 not in shape:
            continue
        value = inputs.get(name)
        if value is None:
            continue
        size = getattr(value, "size", None)  # an array (host or device)
        if size is None and isinstance(value, list | tuple):
            try:
                size = np.size(value)
            except (TypeError, ValueError):
                size = None
        if not isinstance(size, int | np.integer):
            continue  # not array-like: binding the input reports it
        size = int(size)
        if not size:
            continue  # binding the input reports an empty one
        dims = "x".join("?" if d < 0 else str(d) for d in shape)
        static = int(np.prod([d for d in shape if d >= 0]))
        if size % static:
            raise InputShapeError(
                f"input for buffer '{name}' (a memref of shape {dims}) has {size} elements, not a "
                f"multiple of {static} (the product of its static dimensions), so its dynamic "
                "dimension would not be a whole number"
            )
        try:
            element = signature[name].element if signature is not None else None
        except KeyError:
            element = None
        if element in PACKED_TYPES:
            per_word = 4 // ELEMENTS[element].storage_bytes
            whole = math.lcm(static, per_word)
            if size % whole:
                bits = 8 * ELEMENTS[element].storage_bytes
                raise InputShapeError(
                    f"input for buffer '{name}' (a memref of shape {dims} of {bits}-bit elements) "
                    f"has {size} elements; a runtime-sized memref of {bits}-bit elements holds "
                    f"whole 32-bit words ({per_word} elements each), so it needs a multiple of "
                    f"{whole} elements (else memref.dim would count the padding): pad the array"
                )


def convert_if_standard(module: ModuleOp) -> ModuleOp:
    """`module` converted to vyre in place when it is standard MLIR (then
    verified: a failure is located at the MLIR op it came from); returned."""
    if is_standard(module):
        convert_module(module)
        verify_after_pass(module, "convert-to-vyre")
    return module
