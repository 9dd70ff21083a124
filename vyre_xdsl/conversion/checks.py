"""What `convert-to-vyre` accepts, checked before anything is converted: every
refusal is a located error naming the op (or argument) and the reason."""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects.builtin import AffineMapAttr, IndexType, MemRefType, NoneAttr
from xdsl.ir import Attribute, Operation
from xdsl.ir.affine import AffineBinaryOpExpr, AffineConstantExpr, AffineMap

from vyre_xdsl.context import source_name
from vyre_xdsl.conversion.arith_math import RULES, constant_attribute, index_constant_problem
from vyre_xdsl.conversion.types import vyre_type
from vyre_xdsl.dialects.names import BARE_IDENTIFIER

STRUCTURE = {
    "func.func",
    "func.return",
    "scf.for",
    "scf.if",
    "scf.while",
    "scf.parallel",
    "scf.yield",
    "scf.condition",
    "scf.reduce",
    "scf.reduce.return",
    "memref.load",
    "memref.store",
    "memref.dim",
    "linalg.generic",
    "linalg.yield",
    "linalg.index",
    "gpu.launch_func",
}

#: the ops a `gpu.func` kernel may use beyond those of a function body
GPU_KERNEL = {
    "gpu.thread_id",
    "gpu.block_id",
    "gpu.block_dim",
    "gpu.grid_dim",
    "gpu.global_id",
    "gpu.return",
}

SUPPORTED = STRUCTURE | GPU_KERNEL | set(RULES)

MATH_OPS = ", ".join(sorted(n.removeprefix("math.") for n in RULES if n.startswith("math.")))

SUPPORTED_TEXT = (
    "convert-to-vyre supports func (func, return), arith (scalar integer and float ops, "
    "compare, select, casts), math (" + MATH_OPS + "), scf (for, if, while, parallel), "
    "memref (load, store, dim), linalg (generic and named ops, on memrefs) and gpu "
    "(launch_func of gpu.func kernels using thread_id, block_id, block_dim, grid_dim, global_id)"
)


def problems(module: Operation) -> list[tuple[Operation | None, str]]:
    """Every reason the module cannot be converted, each on its op."""
    errors: list[tuple[Operation | None, str]] = []
    funcs = [op for op in module.ops if op.name == "func.func"]
    for op in module.ops:
        if op.name == "gpu.module":
            errors.extend(gpu_module_problems(op))
        elif op.name != "func.func":
            errors.append((op, f"'{op.name}' cannot sit beside func.func; {SUPPORTED_TEXT}"))
    calls = any(op.name == "func.call" for func in funcs for op in func.walk())
    for extra in funcs[1:]:
        errors.append(
            (
                extra,
                f"a module converted to vyre holds one func.func; this one has {len(funcs)} "
                + (
                    "(func.call is not supported: inline the called function into the one that runs)"
                    if calls
                    else "(give independent functions one module each, e.g. separated by "
                    "'// -----' with vyre-opt --split-input-file)"
                ),
            )
        )
    for func in funcs[:1]:
        errors.extend(function_problems(func))
        errors.extend(launch_problems(module, func))
    return errors


def gpu_module_problems(gpu_module: Operation) -> list[tuple[Operation | None, str]]:
    errors: list[tuple[Operation | None, str]] = []
    for kernel in gpu_module.body.block.ops:
        if kernel.name != "gpu.func":
            errors.append(
                (kernel, f"'{kernel.name}' is not supported in a gpu.module; {SUPPORTED_TEXT}")
            )
            continue
        if len(kernel.body.blocks) != 1:
            errors.append((kernel, "a gpu.func kernel must have exactly one block"))
            continue
        for position, arg in enumerate(kernel.body.block.args):
            problem = argument_problem(arg.type)
            if problem is not None:
                errors.append(
                    (kernel, f"kernel argument #{position} cannot be converted: {problem}")
                )
        for op in kernel.body.walk():
            if op.name == "gpu.barrier":
                errors.append(
                    (
                        op,
                        "gpu.barrier is not supported: converted kernels do not keep GPU blocks as workgroups",
                    )
                )
                continue
            problem = op_problem(op)
            if problem is not None:
                errors.append((op, problem))
    return errors


def kernel_of(module: Operation, launch: Operation) -> Operation | None:
    """The `gpu.func` that `launch` (a `gpu.launch_func`) names, or None."""
    ref = launch.kernel
    if len(ref.nested_references.data) != 1:
        return None
    for gpu_module in module.ops:
        if gpu_module.name != "gpu.module" or gpu_module.sym_name.data != ref.root_reference.data:
            continue
        for kernel in gpu_module.body.block.ops:
            name = kernel.attributes.get("sym_name") or kernel.properties.get("sym_name")
            if kernel.name == "gpu.func" and name.data == ref.nested_references.data[0].data:
                return kernel
    return None


def launch_problems(module: Operation, func: Operation) -> list[tuple[Operation | None, str]]:
    errors: list[tuple[Operation | None, str]] = []
    for launch in func.body.walk():
        if launch.name != "gpu.launch_func":
            continue
        if launch.parent_op() is not func:
            errors.append(
                (
                    launch,
                    "gpu.launch_func must be at the top level of the function, not in a loop or branch",
                )
            )
            continue
        extras = (
            launch.asyncDependencies,
            launch.clusterSizeX,
            launch.dynamicSharedMemorySize,
            launch.asyncObject,
            launch.asyncToken,
        )
        if any(e for e in extras):
            errors.append(
                (launch, "async launches, clusters and dynamic shared memory are not supported")
            )
            continue
        kernel = kernel_of(module, launch)
        if kernel is None:
            errors.append(
                (launch, f"kernel {launch.kernel} is not a gpu.func of a gpu.module in this module")
            )
            continue
        types = [a.type for a in kernel.body.block.args]
        if [v.type for v in launch.kernelOperands] != types:
            errors.append(
                (
                    launch,
                    f"the launch's operands do not match the arguments of kernel {launch.kernel}",
                )
            )
    return errors


def function_problems(func: Operation) -> list[tuple[Operation | None, str]]:
    errors: list[tuple[Operation | None, str]] = []
    if func.function_type.outputs.data:
        errors.append(
            (func, "a converted function returns nothing: write results to memref arguments")
        )
    if not func.body.blocks:
        return [(func, "an external function (no body) cannot be converted")]
    if len(func.body.blocks) != 1:
        return [(func, "a converted function has one block (no cf branches)")]
    names: dict[str, int] = {}
    for position, arg in enumerate(func.body.block.args):
        name = source_name(arg) or f"arg{position}"
        problem = argument_problem(arg.type)
        if problem is None and not BARE_IDENTIFIER.fullmatch(name):
            problem = f"its name '{name}' is not a plain identifier"
        if problem is None and name in names:
            problem = f"its name '{name}' is also argument {names[name]}'s"
        names.setdefault(name, position)
        if problem is not None:
            errors.append((func, f"argument %{name} (#{position}) cannot be converted: {problem}"))
    for op in func.body.walk():
        if op is func:
            continue
        if op.name in GPU_KERNEL:
            errors.append((op, f"'{op.name}' is only meaningful inside a gpu.func kernel"))
            continue
        problem = op_problem(op)
        if problem is not None:
            errors.append((op, problem))
    return errors


def argument_problem(ty: Attribute) -> str | None:
    if not isinstance(ty, MemRefType):
        return None if vyre_type(ty) is not None else f"type {ty} has no vyre element type"
    if vyre_type(ty.element_type) is None:
        return f"element type {ty.element_type} has no vyre element type"
    if not isinstance(ty.layout, NoneAttr) and not (
        isinstance(ty.layout, AffineMapAttr) and ty.layout.data.is_identity()
    ):
        return (
            f"memref layout {ty.layout} is not the identity (only row-major memrefs are supported)"
        )
    if not isinstance(ty.memory_space, NoneAttr):
        return f"memory space {ty.memory_space} is not supported"
    if sum(1 for d in ty.get_shape() if d < 0) > 1:
        return "more than one dynamic dimension (the buffer length gives one)"
    return None


def op_problem(op: Operation) -> str | None:
    """Why `op` cannot be converted, or None."""
    if op.name not in SUPPORTED:
        return f"'{op.name}' is not supported; {SUPPORTED_TEXT}"
    for value in (*op.results, *op.operands):
        if isinstance(value.type, MemRefType):
            continue
        if vyre_type(value.type) is None:
            return f"'{op.name}' uses type {value.type}, which has no vyre element type"
    if op.name == "arith.constant" and op.results:
        attr = constant_attribute(op)
        if not hasattr(attr, "value") or not hasattr(attr.value, "data"):
            return "only scalar constants are supported (not dense or vector ones)"
        if isinstance(op.results[0].type, IndexType):
            return index_constant_problem(op)
    return structure_problem(op)


def structure_problem(op: Operation) -> str | None:
    if op.name == "func.return" and op.operands:
        return "a converted function returns nothing: write results to memref arguments"
    if op.name == "scf.for" and not isinstance(op.lb.type, IndexType):
        return "scf.for over a non-index type is not supported; loop over index"
    if op.name == "linalg.yield" and (parent := op.parent_op()) is not None:
        if parent.name == "linalg.generic" and all(
            isinstance(v.type, MemRefType) for v in parent.outputs
        ):
            expected = [v.type.element_type for v in parent.outputs]
            given = [v.type for v in op.operands]
            if len(given) != len(expected):
                return (
                    f"linalg.yield gives {len(given)} value(s) for the {len(expected)} "
                    "output(s) of its linalg.generic (one per output, in order)"
                )
            for position, (have, want) in enumerate(zip(given, expected, strict=True)):
                if have != want:
                    return (
                        f"linalg.yield value #{position} is {have}, but output #{position} of "
                        f"its linalg.generic holds {want}"
                    )
    if op.name == "linalg.generic" and len(op.body.blocks) != 1:
        return "a linalg.generic body must be one block"
    if op.name == "linalg.generic":
        if op.results or any(not isinstance(v.type, MemRefType) for v in op.outputs):
            return "linalg on tensors is not supported: bufferize to memrefs first"
        if any(m.data.num_symbols for m in op.indexing_maps):
            return "indexing maps with symbols are not supported"
        for m in op.indexing_maps:
            for constant in map_constants(m.data):
                if not 0 <= constant < 2**32:
                    return (
                        f"indexing map {m.data} has the constant {constant}, which is not an "
                        "index of 32 bits (0 to 2^32 - 1; vyre's index is ui32)"
                    )
    if op.name == "linalg.index" and (generic := op.parent_op()) is not None:
        loops, dim = len(generic.iterator_types), op.dim.value.data
        if not 0 <= dim < loops:
            return (
                f"linalg.index {dim} names no loop of its linalg.generic "
                f"(it has {loops}, numbered from 0)"
            )
    return None


def map_constants(affine_map: AffineMap) -> Iterator[int]:
    """The constants of `affine_map`'s results."""
    pending = list(affine_map.results)
    while pending:
        expr = pending.pop()
        if isinstance(expr, AffineConstantExpr):
            yield expr.value
        elif isinstance(expr, AffineBinaryOpExpr):
            pending += [expr.lhs, expr.rhs]
