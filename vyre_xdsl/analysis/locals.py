"""Named locals: where each is declared, read and assigned.

A named local is declared by `vyre.let` (in the current scope) or by a
`vyre.loop` (its loop variable), read by `vyre.var` and mutated by
`vyre.assign`; scoping follows SPEC section 3.2 and shadowing is an error, so
a name resolves to one declaration at each point (`find_local_declaration`,
defined with the dialect because its verifiers need it).

```python
from vyre_xdsl.analysis import declaration_of, locals_assigned_in

declaration_of(var_op)          # the vyre.let or vyre.loop that `var_op` reads
locals_assigned_in(loop)        # the declarations some vyre.assign in `loop` mutates
```
"""

from __future__ import annotations

from xdsl.ir import Operation

from vyre_xdsl.dialects.vyre import AssignOp, LetOp, LoopOp, VarOp, find_local_declaration

__all__ = [
    "declaration_of",
    "declared_local_names",
    "find_local_declaration",
    "fresh_local_name",
    "local_assignments",
    "local_declarations",
    "local_reads",
    "locals_assigned_in",
    "reads_loop_variable",
]


def declaration_of(op: VarOp | AssignOp) -> Operation | None:
    """The `vyre.let` or `vyre.loop` that declares the named local `op` reads or assigns
    (None when it is undeclared, which the verifier rejects)."""
    return find_local_declaration(op, op.var_name.data)


def local_declarations(op: Operation) -> list[LetOp | LoopOp]:
    """The `vyre.let` and `vyre.loop` ops in `op` (itself included), in walk order."""
    return [inner for inner in op.walk() if isinstance(inner, LetOp | LoopOp)]


def declared_local_names(op: Operation) -> set[str]:
    """Names of the named locals (loop variables included) declared in `op`."""
    return {d.var_name.data for d in local_declarations(op)}


def fresh_local_name(op: Operation, base: str) -> str:
    """`base`, or `base_1`, `base_2`, ...: the first name no named local in `op` has."""
    taken = declared_local_names(op)
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    return name


def local_reads(op: Operation) -> list[VarOp]:
    """The `vyre.var` ops in `op`, in walk order."""
    return [inner for inner in op.walk() if isinstance(inner, VarOp)]


def local_assignments(op: Operation) -> list[AssignOp]:
    """The `vyre.assign` ops in `op`, in walk order."""
    return [inner for inner in op.walk() if isinstance(inner, AssignOp)]


def locals_assigned_in(op: Operation) -> set[Operation]:
    """The declarations (`vyre.let` ops) that some `vyre.assign` in `op` mutates."""
    found = set()
    for assign in local_assignments(op):
        declaration = declaration_of(assign)
        if declaration is not None:
            found.add(declaration)
    return found


def reads_loop_variable(var: VarOp) -> bool:
    """Whether `var` reads a loop variable (rather than a `vyre.let`)."""
    return isinstance(declaration_of(var), LoopOp)
