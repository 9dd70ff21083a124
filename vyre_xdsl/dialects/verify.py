"""Whole-body checks of a `vyre.program` or `kernel.descriptor`.

They run before the ops inside are verified (an op verifier may follow operand
definitions, which is only safe once every use is known to be dominated by its
definition), in one iterative walk, so a deeply nested body cannot exhaust the
Python stack:

- every op belongs to the body's dialect (no foreign ops such as `arith.addf`);
- every name is an identifier (see `vyre_xdsl.dialects.names`);
- every operand is defined before its use: earlier in the same block, or
  earlier in an enclosing block of the same body (MLIR dominance for
  single-block regions; a value defined in a nested region is not visible
  after it);
- scopes nest at most `MAX_NESTING_DEPTH` deep.

```python
errors = body_errors(program, allowed=is_vyre_op, scope_ops=VYRE_SCOPES)
```
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator

from xdsl.dialects.builtin import ArrayAttr, FileLineColLoc, StringAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.parser.core import ForwardDeclaredValue
from xdsl.utils.exceptions import VerifyException

from vyre_xdsl.dialects.names import name_problem

#: scopes (`if`, `loop`/`for`, `block`, `region`) may nest this deep inside a
#: program or descriptor; deeper nesting is rejected (upstream's limit)
MAX_NESTING_DEPTH = 64


class LocatedVerifyException(VerifyException):
    """A verification failure that names the op(s) at fault, which may be nested
    inside the op whose verifier raised it."""

    def __init__(self, errors: list[tuple[Operation, str]]):
        self.errors = errors
        super().__init__(errors[0][1])


def where(op: Operation) -> str:
    """`line:col` of `op` when it has a source location, else its name."""
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.line.data}:{loc.column.data}"
    return f"'{op.name}'"


def _value_name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else "a value"


def _blocks_in_order(root: Operation) -> Iterator[tuple[Block, int]]:
    """Every block under `root` (pre-order) with its scope depth, without recursion."""
    stack: list[tuple[Block, int]] = [
        (block, 0) for region in reversed(root.regions) for block in reversed(region.blocks)
    ]
    while stack:
        block, depth = stack.pop()
        yield block, depth
        for op in reversed(list(block.ops)):
            for region in reversed(op.regions):
                for inner in reversed(region.blocks):
                    stack.append((inner, depth + 1))


def _enclosing_ops(op: Operation, root: Operation) -> Iterator[Operation]:
    """`op` and each op around it, up to (not including) `root`."""
    current: Operation | None = op
    while current is not None and current is not root:
        yield current
        current = current.parent_op()


def _forward_reference_message(value: ForwardDeclaredValue) -> str:
    # xDSL's parser leaves this placeholder when a value is used by an op and
    # defined only later inside that op's own region
    return (
        f"uses {_value_name(value)}, which is defined only later, inside this op's own region; "
        "define it before the op"
    )


def forward_reference_errors(root: Operation) -> list[tuple[Operation, str]]:
    """Each use under `root` of a value the parser left unresolved (a placeholder
    that has no defining op), as (user, message). Anywhere in a module, not only
    in program and function bodies: xDSL's own verifiers cannot handle one."""
    errors: list[tuple[Operation, str]] = []
    for block, _ in _blocks_in_order(root):
        for op in block.ops:
            for number, operand in enumerate(op.operands):
                if isinstance(operand, ForwardDeclaredValue):
                    message = _forward_reference_message(operand)
                    errors.append((op, f"operand #{number} of '{op.name}' {message}"))
    return errors


def dominance_errors(root: Operation) -> list[tuple[Operation, str]]:
    """Each use under `root` whose value is not defined before it (MLIR dominance
    for nested single-block regions), as (user, message)."""
    position: dict[Operation, int] = {}
    for block, _ in _blocks_in_order(root):
        for index, op in enumerate(block.ops):
            position[op] = index
    errors: list[tuple[Operation, str]] = []
    for block, _ in _blocks_in_order(root):
        for op in block.ops:
            for number, operand in enumerate(op.operands):
                message = _dominance_problem(operand, op, root, position)
                if message is not None:
                    errors.append((op, f"operand #{number} of '{op.name}' {message}"))
    return errors


def _dominance_problem(
    value: SSAValue, user: Operation, root: Operation, position: dict[Operation, int]
) -> str | None:
    if isinstance(value, ForwardDeclaredValue):
        return _forward_reference_message(value)
    definer = value.owner
    if not isinstance(definer, Operation):  # a block argument: vyre bodies have none
        return None
    name = _value_name(value)
    if definer not in position:
        return f"uses {name}, which is defined outside this body"
    home = definer.parent
    for ancestor in _enclosing_ops(user, root):
        if ancestor.parent is home:
            if ancestor is definer or position[definer] >= position[ancestor]:
                return (
                    f"uses {name} before its definition (at {where(definer)}); "
                    "move the definition above its first use"
                )
            return None
    return (
        f"uses {name}, which is defined inside a nested region (at {where(definer)}) "
        "and is not visible here; define it before that region, or pass it through a named local"
    )


def foreign_op_errors(
    root: Operation, allowed: Callable[[Operation], bool], what: str
) -> list[tuple[Operation, str]]:
    """Each op under `root` that `allowed` refuses, as (op, message)."""
    errors: list[tuple[Operation, str]] = []
    for block, _ in _blocks_in_order(root):
        for op in block.ops:
            if not allowed(op):
                errors.append((op, f"'{op.name}' is not allowed inside {what}; {_expected(root)}"))
    return errors


def _expected(root: Operation) -> str:
    if root.name == "vyre.program":
        return "a program holds only vyre ops (see docs/dialect.md for the list)"
    if root.name == "vyre.func":
        return (
            "a function computes from its arguments alone: pure expressions, named locals, "
            "'if'/'loop'/'block', calls and 'vyre.yield' (no buffers, ids, barriers, return or trap)"
        )
    return "a descriptor holds only kernel ops and the pure vyre arithmetic ops"


def name_errors(root: Operation) -> list[tuple[Operation, str]]:
    """Each name under `root` (and `root`'s own) that is not an identifier."""
    errors: list[tuple[Operation, str]] = []
    ops = [root] + [op for block, _ in _blocks_in_order(root) for op in block.ops]
    for op in ops:
        for name, what in _names_of(op):
            if (problem := name_problem(name, what)) is not None:
                errors.append((op, problem))
    return errors


def _names_of(op: Operation) -> Iterator[tuple[str, str]]:
    """(name, what it names) for each name an op declares or lists."""
    kind = op.name.split(".", 1)[-1]
    for prop, what in (("sym_name", kind), ("var_name", "local")):
        value = op.properties.get(prop)
        if isinstance(value, StringAttr):
            yield value.data, what
    counted = op.properties.get("count_buffers")
    if isinstance(counted, ArrayAttr):
        for item in counted.data:
            if isinstance(item, StringAttr):
                yield item.data, "count buffer"


def depth_errors(root: Operation, scope_ops: Collection[str]) -> list[tuple[Operation, str]]:
    """The first scope op under `root` nested deeper than `MAX_NESTING_DEPTH`."""
    for block, depth in _blocks_in_order(root):
        if depth < MAX_NESTING_DEPTH:
            continue
        for op in block.ops:
            if op.name in scope_ops and op.regions:
                return [(op, nesting_message(depth + 1))]
    return []


def nesting_message(depth: int | None = None) -> str:
    amount = f"{depth} deep" if depth is not None else "too deep"
    return (
        f"scopes nested {amount}; vyre allows at most {MAX_NESTING_DEPTH} nested "
        "'if'/'loop'/'block'/'region' scopes: flatten the nesting or split the program"
    )


def body_errors(
    root: Operation,
    allowed: Callable[[Operation], bool],
    scope_ops: Collection[str],
    what: str,
) -> list[tuple[Operation, str]]:
    """Nesting, foreign-op, name and dominance errors under `root`, stopping at the first
    kind found (later checks assume the earlier ones hold)."""
    return (
        depth_errors(root, scope_ops)
        or foreign_op_errors(root, allowed, what)
        or name_errors(root)
        or dominance_errors(root)
    )


def raise_body_errors(errors: list[tuple[Operation, str]]) -> None:
    if errors:
        raise LocatedVerifyException(errors)
