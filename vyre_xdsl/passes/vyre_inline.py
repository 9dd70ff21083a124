"""`vyre-inline`: inline every `vyre.call`, then drop the functions.

```
vyre-opt -p vyre-inline input.mlir
```

Each call is replaced by a copy of its callee's body: the function's arguments
become the call's operands, the `vyre.yield`ed value replaces the call's result.
The named locals the body declares (`vyre.let`, loop variables) are renamed at
every call site to a fresh `__vyre_inline<N>_<name>` that no name of the module
uses, so two inlined bodies, or a body and its caller, never collide (shadowing
is an error in vyre). Calls inside an inlined body are inlined in turn (the
verifier has ruled out recursion). Once no program calls a function any more,
the functions are removed.

Fusion (`vyre-fuse`), lowering (`vyre-lower`), the megakernel compiler and the
reference interpreter inline first, so a module with functions runs everywhere.

```mlir
// before
vyre.func @twice(%a: ui32) -> ui32 {
  vyre.let @t = %a : ui32
  %t = vyre.var @t : ui32
  %r = vyre.add %t, %t : ui32
  vyre.yield %r : ui32
}
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 read_write : ui32[64]
  %i = vyre.invocation_id x
  %r = vyre.call @twice(%i) : ui32
  vyre.store @out[%i] = %r : ui32
}
// after
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 read_write : ui32[64]
  %i = vyre.invocation_id x
  vyre.let @__vyre_inline0_t = %i : ui32
  %t = vyre.var @__vyre_inline0_t : ui32
  %r = vyre.add %t, %t : ui32
  vyre.store @out[%i] = %r : ui32
}
```
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from vyre_xdsl.dialects.vyre import CallOp, FuncOp, LetOp, LoopOp, YieldOp, find_func, funcs

#: the prefix of the names given to inlined named locals
INLINE_PREFIX = "__vyre_inline"


def names_in(module: Operation) -> set[str]:
    """Every symbol and named-local name used anywhere in `module`."""
    names: set[str] = set()
    for op in module.walk():
        for prop in ("sym_name", "var_name"):
            value = op.properties.get(prop)
            if isinstance(value, StringAttr):
                names.add(value.data)
    return names


def declared_locals(func: FuncOp) -> set[str]:
    """The named locals that `func`'s body declares (lets and loop variables)."""
    return {op.var_name.data for op in func.body.walk() if isinstance(op, LetOp | LoopOp)}


@dataclass
class FreshNames:
    """Hands out names no op of the module uses, `__vyre_inline<N>_<name>`."""

    taken: set[str]
    counter: int = 0

    def call_site(self, names: set[str]) -> dict[str, str]:
        """One fresh name per name in `names`, all with the same call-site number."""
        if not names:
            return {}
        while True:
            renamed = {name: f"{INLINE_PREFIX}{self.counter}_{name}" for name in names}
            self.counter += 1
            if not self.taken.intersection(renamed.values()):
                self.taken.update(renamed.values())
                return renamed


def _rename_locals(op: Operation, renamed: dict[str, str]) -> None:
    for inner in op.walk():
        value = inner.properties.get("var_name")
        if isinstance(value, StringAttr) and value.data in renamed:
            inner.properties["var_name"] = StringAttr(renamed[value.data])


@dataclass
class InlineCall(RewritePattern):
    """Replace a `vyre.call` in a program by a renamed copy of its callee's body
    (the calls that copy holds are rewritten in turn)."""

    names: FreshNames = field(default_factory=lambda: FreshNames(set()))

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CallOp, rewriter: PatternRewriter) -> None:
        if _in_func(op):  # inlined with its function's body, at each call site
            return
        callee = find_func(op, op.callee_name)
        if callee is None:  # the verifier reports it
            return
        mapping: dict[SSAValue, SSAValue] = dict(zip(callee.body.block.args, op.arguments))
        renamed = self.names.call_site(declared_locals(callee))
        body = [inner for inner in callee.body.block.ops if not isinstance(inner, YieldOp)]
        copies = [inner.clone(value_mapper=mapping) for inner in body]
        for copy in copies:
            _rename_locals(copy, renamed)
        rewriter.insert(copies, InsertPoint.before(op))
        result = callee.yield_op
        assert result is not None  # FuncOp.verify_ requires it
        rewriter.replace(op, [], [mapping.get(result.value, result.value)])


def remove_uncalled_functions(module: ModuleOp) -> None:
    """Erase the functions that no program calls, directly or through other functions."""
    called = {op.callee_name for op in module.walk() if isinstance(op, CallOp) and not _in_func(op)}
    reachable: set[str] = set()
    pending = list(called)
    while pending:
        name = pending.pop()
        if name in reachable:
            continue
        reachable.add(name)
        callee = find_func(module, name)
        if callee is not None:
            pending.extend(c.callee_name for c in callee.body.walk() if isinstance(c, CallOp))
    for func in funcs(module):
        if func.sym_name.data not in reachable:
            module.body.block.erase_op(func)


def _in_func(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, FuncOp):
        parent = parent.parent_op()
    return parent is not None


def inline_calls(module: ModuleOp) -> None:
    """Inline every call of `module` in place and remove the functions (see above)."""
    if not funcs(module):
        return
    pattern = InlineCall(FreshNames(names_in(module)))
    PatternRewriteWalker(pattern, apply_recursively=True).rewrite_module(module)
    remove_uncalled_functions(module)


def inlined(module: ModuleOp) -> ModuleOp:
    """`module` itself when it has no functions, else an inlined copy (`module` unchanged)."""
    if not funcs(module):
        return module
    copy = module.clone()
    inline_calls(copy)
    return copy


@dataclass(frozen=True)
class VyreInlinePass(ModulePass):
    """Inline every `vyre.call` and remove the functions (see the module docstring)."""

    name = "vyre-inline"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        inline_calls(op)

    def leaves_unchanged(self, op: ModuleOp) -> bool:
        """A module without functions has nothing to inline."""
        return not funcs(op)
