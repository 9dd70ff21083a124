"""Workgroup tree reductions and scans: recognize a textbook tree level, say
whether its partial results are unobservable, so that a pass may change them,
and recognize a Hillis-Steele block scan (`scan_level`, below).

A *tree level* is a program in which every invocation computes one *leaf*
value from its `invocation_id x` alone, stores it into a workgroup buffer
(the *tile*) at its `local_id x`, and then the workgroup combines the tile
with one associative and commutative op in barrier-separated halving steps,
and invocation 0 stores the tile's element 0 into a host buffer (the
*partials*) at its `workgroup_id x`:

```mlir
vyre.program @level0 workgroup_size [256, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[1048576]
  vyre.buffer @r0 binding 1 write_only : f32[4096]
  vyre.buffer @tile workgroup : f32[256]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : f32
  vyre.store @tile[%l] = %v : f32
  vyre.barrier
  // vyre.loop @level = 0 to 8 { if l < (128 >> level) {
  //   tile[l] = tile[l] op tile[l + (128 >> level)] }; barrier }
  // if l == 0 { r0[w] = tile[0] }
}
```

`tree_level(program)` proves this shape or says why not (a `NotATree`
reason): the leaf is a slice of expressions over `invocation_id x`,
constants and loads of buffers the program never writes; every halving step
`if l < s { tile[l] = tile[l] op tile[l + s] }` is followed by a barrier, its
stride `s` is a constant (possibly of the loop variable of a loop with
constant bounds), and a symbolic run of the steps over the workgroup's lanes
shows that tile element 0 ends up combining every lane exactly once.

`combine_refusal(op, type, reassociate_floats)` says whether the combine may
be regrouped: integer `add mul min max bit_and bit_or bit_xor` always (they
wrap, so they are associative and commutative exactly); `f32`-family `min`
and `max` always (the language defines them order-independently: NaN is
ignored, -0 is below +0); float `add` and `mul` only with permission to
reassociate (the order changes the rounding).

`partials_refusal(level, ...)` says whether the partials a level writes are
unobservable (the run interface, docs/cli.md: outputs and intermediates): the buffer is declared by exactly two
programs, this level (`write_only`) and a later tree level with the same
combine (`read_only`), neither marks it `output`; that consumer reads it only
as its leaf (`load @r[i]`, or `select(i < c, load @r[i], e)` with `c` at least
the buffer's length and `e` not reading it), with enough invocations to read
every element; and the consumer's own partials are unobservable in the same
way, or the consumer runs a single workgroup (its one result is the whole
reduction, the same value whichever way the partials were grouped).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.ir import Attribute, Operation, SSAValue

from vyre_xdsl.analysis.expressions import is_speculatable
from vyre_xdsl.dialects.vyre import (
    SUBGROUP_OPS,
    BarrierOp,
    BinaryOp,
    ConstOp,
    DivOp,
    EqOp,
    GeOp,
    GtOp,
    IfOp,
    InvocationIdOp,
    LeOp,
    LoadOp,
    LocalIdOp,
    LoopOp,
    LtOp,
    NeOp,
    NumWorkgroupsOp,
    ProgramOp,
    SelectOp,
    ShrOp,
    StoreOp,
    SubOp,
    VarOp,
    WorkgroupIdOp,
    element_info,
    type_name,
    ui32,
)
from vyre_xdsl.semantics import OPS

__all__ = [
    "ASSOCIATIVE_COMBINES",
    "AddBack",
    "IDEMPOTENT_COMBINES",
    "NotAScan",
    "NotATree",
    "add_back",
    "ScanLevel",
    "TreeLevel",
    "combine_identity",
    "combine_refusal",
    "partials_refusal",
    "scan_level",
    "tree_level",
]

#: binary ops that are associative and commutative (on integers, wrapping): the
#: semantics table's facts
ASSOCIATIVE_COMBINES = tuple(
    name for name, op in OPS.items() if op.kind == "binary" and op.associative and op.commutative
)
#: combines with x op x == x: a partial may be repeated instead of an identity; on
#: floats their result does not depend on the grouping either (no rounding)
IDEMPOTENT_COMBINES = tuple(name for name in ASSOCIATIVE_COMBINES if OPS[name].idempotent)
#: stride ops the step evaluator knows (on ui32 constants)
_STRIDE_OPS = ("add", "sub", "mul", "div", "shl", "shr", "min", "max")


class NotATree(str):
    """Why a program is not a recognized tree level (a plain message)."""


@dataclass(frozen=True)
class TreeLevel:
    """A recognized tree level (see the module docstring)."""

    program: ProgramOp
    #: the combine's mnemonic (`add`, `min`, ...) and its element type
    combine: str
    element: Attribute
    #: the workgroup buffer the tree runs in, and the host buffer of partials
    tile: str
    partials: str
    #: invocations per workgroup (x; y and z are 1)
    width: int
    #: `store @tile[l] = leaf` (at the top level of the body)
    leaf_store: StoreOp
    #: the ops that compute the leaf, in program order (all at the top level)
    leaf_ops: tuple[Operation, ...]
    #: `if l == 0 { store @partials[w] = load @tile[0] }`
    final: IfOp


# ---------------------------------------------------------------- the combine


def combine_refusal(combine: str, element: Attribute, reassociate_floats: bool) -> str | None:
    """Why `combine` on `element` may not be regrouped, or None when it may."""
    info = element_info(element)
    if info is None or info.family == "vector":
        return f"the tree combines {element}; only scalar integers and floats are coarsened"
    if combine not in ASSOCIATIVE_COMBINES:
        return f"'{combine}' is not associative and commutative"
    if info.is_float:
        if combine not in IDEMPOTENT_COMBINES and not reassociate_floats:
            return (
                f"float '{combine}' rounds differently when regrouped; allow it with "
                "reassociate-floats=true or the program attribute {reassociate}"
            )
        if combine.startswith("bit_"):
            return f"'{combine}' does not apply to {element}"
    return None


def combine_identity(combine: str, element: Attribute) -> int | float | None:
    """The identity of `combine` on `element` (x op e == x for every x, floats
    included: -0.0 for add), or None for an idempotent combine, whose partials
    are repeated instead."""
    if combine in IDEMPOTENT_COMBINES:
        return None
    info = element_info(element)
    identity = OPS[combine].identity
    assert info is not None and identity is not None, combine
    return identity[1] if info.is_float else identity[0]


# ---------------------------------------------------------------- recognizing a level


def tree_level(program: ProgramOp) -> TreeLevel | NotATree:
    """The tree level `program` is, or why it is not one."""
    try:
        return _Matcher(program).match()
    except _Refused as refusal:
        return NotATree(str(refusal))


class _Refused(Exception):
    pass


#: the most steps a workgroup tree or scan takes: one per bit of a workgroup's
#: invocation count (at most 1024 here), with room to spare; a loop of more
#: trips is refused before its steps are evaluated one by one
MAX_STEPS = 32


def _require_few_steps(lower: int, upper: int, what: str) -> None:
    _require(
        upper - lower <= MAX_STEPS,
        f"a loop of the {what} runs {max(upper - lower, 0)} steps, more than the "
        f"{MAX_STEPS} a workgroup {what} can take",
    )


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise _Refused(message)


def _is_id(value: SSAValue, cls: type[Operation], axis: int = 0) -> bool:
    return isinstance(value.owner, cls) and value.owner.axis_index == axis


def _const(value: SSAValue) -> int | float | bool | None:
    return value.owner.literal() if isinstance(value.owner, ConstOp) else None


def evaluate_ui32(value: SSAValue, env: Mapping[str, int]) -> int | None:
    """The value of a ui32 expression of constants, the loop variables in `env`
    (read with `vyre.var`) and the ops of `_STRIDE_OPS`, else None."""
    if value.type != ui32:
        return None
    owner = value.owner
    if isinstance(owner, ConstOp):
        return int(owner.literal())
    if isinstance(owner, VarOp):
        return env.get(owner.var_name.data)
    if isinstance(owner, BinaryOp):
        name = owner.name.removeprefix("vyre.")
        if name not in _STRIDE_OPS:
            return None
        a, b = evaluate_ui32(owner.lhs, env), evaluate_ui32(owner.rhs, env)
        if a is None or b is None:
            return None
        result = OPS[name].evaluate(np.array([a], np.uint32), np.array([b], np.uint32))
        return int(np.asarray(result).reshape(-1)[0])
    return None


class _Matcher:
    def __init__(self, program: ProgramOp):
        self.program = program
        self.buffers = {b.buffer_name: b for b in program.buffers()}

    def _leaf(self) -> tuple[StoreOp, tuple[Operation, ...], list[Operation]]:
        """The level's leaf, common to trees and scans: (the store of the leaf
        into workgroup memory at `local_id x`, the ops that compute it, the
        statements after it, a workgroup barrier first). Sets `width`, `tile`
        and `element`."""
        program = self.program
        x, y, z = program.workgroup
        _require(y == 1 and z == 1, f"workgroup_size {[x, y, z]} is not one-dimensional")
        _require(
            program.explicit_grid is None and program.indirect_buffer is None,
            "the program has an explicit or indirect grid",
        )
        self.width = x
        statements = [op for op in program.body.block.ops if op not in self.buffers.values()]
        store_at = next(
            (n for n, op in enumerate(statements) if not self._is_value(op)),
            None,
        )
        _require(store_at is not None, "the program stores nothing")
        leaf_store = statements[store_at]
        _require(
            isinstance(leaf_store, StoreOp),
            f"its first statement is '{leaf_store.name}', not the store of a leaf "
            "into workgroup memory",
        )
        tile = self.buffers.get(leaf_store.buffer_name)
        _require(
            tile is not None and tile.is_workgroup,
            f"its first store writes @{leaf_store.buffer_name}, not a workgroup buffer",
        )
        _require(
            tile.static_count is not None and tile.static_count >= self.width,
            f"workgroup buffer @{tile.buffer_name} is shorter than the workgroup",
        )
        _require(_is_id(leaf_store.index, LocalIdOp), "the leaf is not stored at 'local_id x'")
        self.tile = tile.buffer_name
        self.element = tile.element_type
        leaf_ops = self._leaf_slice(leaf_store.value)
        rest = [op for op in statements[store_at + 1 :] if not _is_pure_value(op)]
        _require(
            bool(rest) and _is_workgroup_barrier(rest[0]),
            "no workgroup barrier follows the store of the leaf",
        )
        return leaf_store, leaf_ops, rest

    def match(self) -> TreeLevel:
        program = self.program
        leaf_store, leaf_ops, rest = self._leaf()
        self.combine: str | None = None
        strides = self._steps(rest[1:-1])
        final = rest[-1] if len(rest) > 1 else None
        partials = self._final(final)
        self._simulate(strides)
        assert self.combine is not None
        self._only_the_tile()
        return TreeLevel(
            program=program,
            combine=self.combine,
            element=self.element,
            tile=self.tile,
            partials=partials,
            width=self.width,
            leaf_store=leaf_store,
            leaf_ops=leaf_ops,
            final=final,
        )

    def _only_the_tile(self) -> None:
        """Refuse a level that declares workgroup buffers besides its tile."""
        others = [
            b.buffer_name
            for b in self.buffers.values()
            if b.is_workgroup and b.buffer_name != self.tile
        ]
        _require(not others, f"it declares other workgroup buffers ({', '.join(others)})")

    # the leaf

    def _is_value(self, op: Operation) -> bool:
        """A top-level op before the leaf store that only computes a value."""
        if isinstance(op, LoadOp):
            buffer = self.buffers.get(op.buffer_name)
            return buffer is not None and not buffer.is_workgroup
        return _is_pure_value(op)

    def _leaf_slice(self, leaf: SSAValue) -> tuple[Operation, ...]:
        body = self.program.body.block
        written = {op.buffer_name for op in self.program.walk() if isinstance(op, StoreOp)} | {
            self.tile
        }
        seen: set[Operation] = set()
        stack = [leaf]
        while stack:
            owner = stack.pop().owner
            if not isinstance(owner, Operation) or owner in seen:
                _require(isinstance(owner, Operation), "the leaf reads a block argument")
                continue
            seen.add(owner)
            _require(owner.parent_block() is body, "the leaf is computed inside a region")
            if isinstance(owner, LoadOp):
                _require(
                    owner.buffer_name not in written,
                    f"the leaf loads @{owner.buffer_name}, which the program writes",
                )
            elif isinstance(owner, InvocationIdOp):
                _require(owner.axis_index == 0, "the leaf reads an invocation id on y or z")
            else:
                _require(
                    not isinstance(
                        owner, (LocalIdOp, WorkgroupIdOp, NumWorkgroupsOp, VarOp, *SUBGROUP_OPS)
                    ),
                    f"the leaf depends on '{owner.name}', not only on 'invocation_id x'",
                )
                _require(
                    is_speculatable(owner),
                    f"the leaf computes '{owner.name}', which may trap or has effects",
                )
            stack.extend(owner.operands)
        return tuple(op for op in body.ops if op in seen)

    # the halving steps

    def _steps(self, statements: Sequence[Operation]) -> list[int]:
        strides: list[int] = []
        n = 0
        while n < len(statements):
            op = statements[n]
            if isinstance(op, LoopOp):
                strides += self._loop_steps(op)
                n += 1
                continue
            _require(
                n + 1 < len(statements) and _is_workgroup_barrier(statements[n + 1]),
                f"'{op.name}' is not a halving step followed by a barrier",
            )
            strides.append(self._step(op, {}))
            n += 2
        return strides

    def _loop_steps(self, loop: LoopOp) -> list[int]:
        lower, upper = _const(loop.lower), _const(loop.upper)
        _require(
            isinstance(lower, int) and isinstance(upper, int),
            "a loop of the tree has bounds that are not constants",
        )
        name = loop.var_name.data
        inner = [
            op
            for op in loop.body.block.ops
            if not _is_pure_value(op) and not (isinstance(op, VarOp) and op.var_name.data == name)
        ]
        _require(
            len(inner) == 2 and _is_workgroup_barrier(inner[1]),
            "a loop of the tree is not one halving step and a barrier",
        )
        _require_few_steps(lower, upper, "tree")
        return [self._step(inner[0], {name: k}) for k in range(lower, upper)]

    def _step(self, op: Operation, env: Mapping[str, int]) -> int:
        """The stride of `if l < s { tile[l] = tile[l] op tile[l + s] }`."""
        _require(isinstance(op, IfOp), f"'{op.name}' is not a halving step")
        assert isinstance(op, IfOp)
        _require(not op.has_else, "a step has an else branch")
        cond = op.cond.owner
        _require(
            isinstance(cond, LtOp) and _is_id(cond.lhs, LocalIdOp),
            "a step's condition is not 'local_id x < stride'",
        )
        stride = evaluate_ui32(cond.rhs, env)
        _require(stride is not None, "a step's stride is not a constant")
        ops = [inner for inner in op.then_region.block.ops if not _is_pure_value(inner)]
        stores = [inner for inner in ops if isinstance(inner, StoreOp)]
        loads = [inner for inner in ops if isinstance(inner, LoadOp)]
        _require(
            len(stores) == 1 and len(loads) == 2 and len(ops) == 3,
            "a step is not two loads of the tile and one store",
        )
        store = stores[0]
        _require(
            store.buffer_name == self.tile and _is_id(store.index, LocalIdOp),
            "a step does not store to tile[local_id x]",
        )
        combine = store.value.owner
        _require(
            isinstance(combine, BinaryOp) and combine.parent is store.parent,
            "a step does not store one binary op of its two loads",
        )
        assert isinstance(combine, BinaryOp)
        name = combine.name.removeprefix("vyre.")
        _require(
            self.combine in (None, name), f"the steps combine with '{self.combine}' and '{name}'"
        )
        self.combine = name
        operands = {combine.lhs.owner, combine.rhs.owner}
        _require(operands == set(loads), "a step does not combine its two loads")
        own = [ld for ld in loads if _is_id(ld.index, LocalIdOp)]
        _require(len(own) == 1, "a step does not read tile[local_id x]")
        other = loads[0] if own[0] is loads[1] else loads[1]
        _require(
            own[0].buffer_name == self.tile and other.buffer_name == self.tile,
            "a step reads a buffer other than the tile",
        )
        index = other.index.owner
        _require(
            isinstance(index, BinaryOp) and index.name == "vyre.add",
            "a step's partner is not tile[local_id x + stride]",
        )
        terms = [index.lhs, index.rhs]
        lanes = [t for t in terms if _is_id(t, LocalIdOp)]
        _require(len(lanes) == 1, "a step's partner is not tile[local_id x + stride]")
        offset = terms[1] if lanes[0] is terms[0] else terms[0]
        _require(
            evaluate_ui32(offset, env) == stride,
            "a step's partner offset differs from its stride",
        )
        return stride

    def _simulate(self, strides: Sequence[int]) -> None:
        """Run the steps over sets of lanes: tile[0] must hold every lane once."""
        lanes = [1 << lane for lane in range(self.width)]
        for stride in strides:
            for lane in range(min(stride, self.width)):
                partner = lane + stride
                _require(
                    partner < self.width,
                    f"a step of stride {stride} reads tile[{partner}], past the workgroup",
                )
                _require(
                    not lanes[lane] & lanes[partner],
                    f"a step of stride {stride} combines a lane twice",
                )
                lanes[lane] |= lanes[partner]
        _require(
            lanes[0] == (1 << self.width) - 1,
            "the steps do not combine every lane of the workgroup into tile[0]",
        )

    # the final store

    def _final(self, op: Operation | None) -> str:
        _require(isinstance(op, IfOp), "the program does not end with 'if local_id x == 0'")
        assert isinstance(op, IfOp)
        cond = op.cond.owner
        _require(
            isinstance(cond, EqOp)
            and {_is_id(cond.lhs, LocalIdOp), _is_id(cond.rhs, LocalIdOp)} == {True, False}
            and 0 in (_const(cond.lhs), _const(cond.rhs)),
            "the program does not end with 'if local_id x == 0'",
        )
        _require(not op.has_else, "the final if has an else branch")
        ops = [inner for inner in op.then_region.block.ops if not _is_pure_value(inner)]
        _require(
            len(ops) == 2 and isinstance(ops[0], LoadOp) and isinstance(ops[1], StoreOp),
            "the final if is not 'store @partials[workgroup_id x] = load @tile[0]'",
        )
        load, store = ops
        _require(
            load.buffer_name == self.tile and _const(load.index) == 0,
            "the final if does not read tile[0]",
        )
        _require(
            store.value is load.result and _is_id(store.index, WorkgroupIdOp),
            "the final if does not store tile[0] at 'workgroup_id x'",
        )
        partials = self.buffers[store.buffer_name]
        _require(not partials.is_workgroup, "the final store writes workgroup memory")
        return partials.buffer_name


def _is_pure_value(op: Operation) -> bool:
    return is_speculatable(op) and not isinstance(op, (NumWorkgroupsOp, *SUBGROUP_OPS))


def _is_workgroup_barrier(op: Operation) -> bool:
    return isinstance(op, BarrierOp) and op.ordering.data in ("seq_cst", "acq_rel")


# ---------------------------------------------------------------- observability


def sole_reader(
    programs: Sequence[ProgramOp], producer: ProgramOp, name: str, what: str, pair: str
) -> ProgramOp | str:
    """The one later program that reads `@name`, an intermediate `producer`
    writes (declared `write_only` there, `read_only` there, by these two
    programs only, output of neither), or why it is not one. `what` names the
    buffer and `pair` the two programs in the refusals."""
    declaring = [p for p in programs if p.buffer(name) is not None]
    at = programs.index(producer)
    later = [p for p in declaring if programs.index(p) > at]
    if not later:
        return f"@{name} is read by no later program: the caller gets it back"
    if len(declaring) != 2 or len(later) != 1:
        return (
            f"@{name} is declared by {len(declaring)} programs; {what} must be "
            f"declared by {pair} only"
        )
    consumer = later[0]
    mine, theirs = producer.buffer(name), consumer.buffer(name)
    assert mine is not None and theirs is not None
    if mine.is_output or theirs.is_output:
        return f"@{name} is marked output"
    if mine.access_mode != "write_only" or theirs.access_mode != "read_only":
        return (
            f"@{name} is {mine.access_mode} in @{producer.sym_name.data} and "
            f"{theirs.access_mode} in @{consumer.sym_name.data}; {what} must be "
            "write_only, then read_only"
        )
    return consumer


def partials_refusal(
    level: TreeLevel,
    levels: Mapping[ProgramOp, TreeLevel],
    programs: Sequence[ProgramOp],
    launched: Callable[[ProgramOp], int],
) -> str | None:
    """Why the partials `level` writes are observable (see the module docstring),
    or None when nothing outside the chain of levels can see them.
    `launched(program)` gives the logical workgroups a program launches."""
    seen: set[str] = set()
    while True:
        name = level.partials
        if name in seen:
            return f"@{name} is read back into its own chain"
        seen.add(name)
        consumer = sole_reader(
            programs, level.program, name, "partials", "their level and the next level"
        )
        if isinstance(consumer, str):
            return consumer
        mine, theirs = level.program.buffer(name), consumer.buffer(name)
        assert mine is not None and theirs is not None
        size = [c for c in (mine.static_count, theirs.static_count)]
        if None in size:
            return f"@{name} is runtime-sized"
        size = max(size)
        nxt = levels.get(consumer)
        if nxt is None:
            return f"@{name} is read by @{consumer.sym_name.data}, which is not a tree level"
        if (nxt.combine, nxt.element) != (level.combine, level.element):
            return (
                f"@{name} is reduced by @{consumer.sym_name.data} with '{nxt.combine}', "
                f"not '{level.combine}'"
            )
        why = _reads_each_once(nxt, name, size, launched(consumer) * nxt.width)
        if why is not None:
            return f"@{consumer.sym_name.data} {why}"
        if launched(consumer) == 1:
            return None
        level = nxt


def _reads_each_once(level: TreeLevel, name: str, size: int, invocations: int) -> str | None:
    """Whether `level`'s leaf is `name[i]` for every i < size, and independent of
    `name` past it; and only the leaf reads `name`."""
    loads = [op for op in level.program.walk() if isinstance(op, LoadOp) and op.buffer_name == name]
    leaf = level.leaf_store.value.owner
    read = leaf
    if isinstance(leaf, SelectOp):
        cond = leaf.cond.owner
        bound = _const(cond.rhs) if isinstance(cond, LtOp) else None
        if not (
            isinstance(cond, LtOp)
            and _is_id(cond.lhs, InvocationIdOp)
            and isinstance(bound, int)
            and bound >= size
        ):
            return f"does not read @{name} as 'select(invocation_id x < {size}, ...)'"
        read = leaf.true_value.owner
    if not (
        isinstance(read, LoadOp)
        and read.buffer_name == name
        and _is_id(read.index, InvocationIdOp)
        and loads == [read]
    ):
        return f"does not read @{name} once, at 'invocation_id x', as its leaf"
    if invocations < size:
        return f"launches {invocations} invocations, fewer than the {size} elements of @{name}"
    return None


def element_name(element: Attribute) -> str:
    return type_name(element) or str(element)


# ---------------------------------------------------------------- workgroup scans


class NotAScan(str):
    """Why a program is not a recognized workgroup scan level (a plain message)."""


@dataclass(frozen=True)
class ScanLevel:
    """A recognized workgroup scan level (see `scan_level`)."""

    program: ProgramOp
    #: the combine's mnemonic and its element type
    combine: str
    element: Attribute
    #: the workgroup buffer the scan runs in
    tile: str
    #: the host buffer of the inclusive scans (`dst[invocation_id x]`)
    scanned: str
    #: the host buffer of block totals (`sums[workgroup_id x]`), if any
    totals: str | None
    #: invocations per workgroup, and so the elements of a block
    width: int
    #: `store @tile[l] = leaf` (at the top level of the body)
    leaf_store: StoreOp
    #: the ops that compute the leaf, in program order (all at the top level)
    leaf_ops: tuple[Operation, ...]


def scan_level(program: ProgramOp) -> ScanLevel | NotAScan:
    """The workgroup scan level `program` is, or why it is not one.

    A *scan level* computes an inclusive scan of each block of `width`
    consecutive leaves (a leaf as in a tree level: a value of `invocation_id
    x` alone) in workgroup memory, the Hillis-Steele way, and writes it back:

    ```mlir
    %v = vyre.load @x[%i] : f32
    vyre.store @tile[%l] = %v : f32
    vyre.barrier
    vyre.loop @step = %c0 to %c8 {              // or the steps unrolled
      %off = vyre.shl %c1, %k : ui32            // any constant of the loop variable
      %has = vyre.ge %l, %off : ui32
      %j = vyre.sub %l, %off : ui32
      %cur = vyre.load @tile[%l] : f32
      %prev = vyre.load @tile[%j] : f32
      %add = vyre.select %has, %prev, %zero : f32   // the combine's identity
      %s = vyre.add %cur, %add : f32                // or select(has, cur op prev, cur)
      vyre.barrier
      vyre.store @tile[%l] = %s : f32
      vyre.barrier
    }
    %r = vyre.load @tile[%l] : f32
    vyre.store @dst[%i] = %r : f32
    vyre.if %l == width - 1 {                    // optional: the block's total
      vyre.store @sums[%w] = %r : f32
    }
    ```

    A symbolic run of the steps over the lanes shows that lane l ends up
    combining lanes 0 ... l, each once. Nothing else is stored.
    """
    try:
        return _ScanMatcher(program).match()
    except _Refused as refusal:
        return NotAScan(str(refusal))


class _ScanMatcher(_Matcher):
    def match(self) -> ScanLevel:  # type: ignore[override]
        program = self.program
        leaf_store, leaf_ops, rest = self._leaf()
        self._only_the_tile()
        self.combine: str | None = None
        offsets, at = self._scan_steps(rest, 1)
        _require(bool(offsets), "it has no scan step (read, barrier, write, barrier)")
        self._simulate_scan(offsets)
        scanned, totals = self._tail(rest[at:])
        assert self.combine is not None
        return ScanLevel(
            program=program,
            combine=self.combine,
            element=self.element,
            tile=self.tile,
            scanned=scanned,
            totals=totals,
            width=self.width,
            leaf_store=leaf_store,
            leaf_ops=leaf_ops,
        )

    # the steps

    def _scan_steps(self, ops: Sequence[Operation], at: int) -> tuple[list[int], int]:
        """The offsets of the steps from ops[at], and where the steps end."""
        offsets: list[int] = []
        while at < len(ops):
            op = ops[at]
            if isinstance(op, LoopOp):
                offsets += self._scan_loop(op)
                at += 1
            elif _looks_like_step(ops[at : at + 5]):
                offsets.append(self._scan_step(ops[at : at + 5], {}))
                at += 5
            else:
                break
        return offsets, at

    def _scan_loop(self, loop: LoopOp) -> list[int]:
        lower, upper = _const(loop.lower), _const(loop.upper)
        _require(
            isinstance(lower, int) and isinstance(upper, int),
            "a loop of the scan has bounds that are not constants",
        )
        name = loop.var_name.data
        inner = [
            op
            for op in loop.body.block.ops
            if not _is_pure_value(op) and not (isinstance(op, VarOp) and op.var_name.data == name)
        ]
        _require(
            _looks_like_step(inner) and len(inner) == 5,
            "a loop of the scan is not one step (two loads, barrier, store, barrier)",
        )
        _require_few_steps(lower, upper, "scan")
        return [self._scan_step(inner, {name: k}) for k in range(lower, upper)]

    def _scan_step(self, ops: Sequence[Operation], env: Mapping[str, int]) -> int:
        """The offset of `a = tile[l], b = tile[l - off], barrier, tile[l] = a op
        (l >= off ? b : e), barrier` (e the identity), or of `tile[l] = l >= off ?
        a op b : a`."""
        first, second, _, store, _ = ops
        assert isinstance(first, LoadOp) and isinstance(second, LoadOp)
        assert isinstance(store, StoreOp)
        _require(
            first.buffer_name == self.tile and second.buffer_name == self.tile,
            "a step reads a buffer other than the tile",
        )
        _require(
            store.buffer_name == self.tile and _is_id(store.index, LocalIdOp),
            "a step does not store to tile[local_id x]",
        )
        own = [ld for ld in (first, second) if _is_id(ld.index, LocalIdOp)]
        _require(len(own) == 1, "a step does not read tile[local_id x] once")
        mine = own[0]
        other = second if mine is first else first
        index = other.index.owner
        _require(
            isinstance(index, BinaryOp)
            and index.name == "vyre.sub"
            and _is_id(index.lhs, LocalIdOp),
            "a step's partner is not tile[local_id x - offset]",
        )
        assert isinstance(index, BinaryOp)
        offset = evaluate_ui32(index.rhs, env)
        _require(offset is not None and offset > 0, "a step's offset is not a positive constant")
        assert offset is not None
        value = store.value.owner
        if isinstance(value, SelectOp) and value.false_value is mine.result:
            # tile[l] = l >= off ? a op b : a
            self._has(value.cond, offset, env)
            combine = value.true_value.owner
            _require(
                isinstance(combine, BinaryOp)
                and {combine.lhs, combine.rhs} == {mine.result, other.result},
                "a step's select does not combine tile[l] and its partner",
            )
            self._record(combine)
            return offset
        _require(
            isinstance(value, BinaryOp), "a step does not store a combine of tile[l] and a select"
        )
        assert isinstance(value, BinaryOp)
        self._record(value)
        _require(mine.result in (value.lhs, value.rhs), "a step's combine does not read tile[l]")
        chosen = (value.rhs if value.lhs is mine.result else value.lhs).owner
        _require(
            isinstance(chosen, SelectOp) and chosen.true_value is other.result,
            "a step does not combine tile[l] with 'select(l >= offset, partner, identity)'",
        )
        assert isinstance(chosen, SelectOp)
        self._has(chosen.cond, offset, env)
        _require(
            self._is_identity(chosen.false_value, mine.result),
            f"a step's fallback is not the identity of '{self.combine}'",
        )
        return offset

    def _record(self, combine: BinaryOp) -> None:
        name = combine.name.removeprefix("vyre.")
        _require(
            self.combine in (None, name), f"the steps combine with '{self.combine}' and '{name}'"
        )
        self.combine = name

    def _has(self, cond: SSAValue, offset: int, env: Mapping[str, int]) -> None:
        owner = cond.owner
        ok = (
            isinstance(owner, GeOp)
            and _is_id(owner.lhs, LocalIdOp)
            and evaluate_ui32(owner.rhs, env) == offset
        ) or (
            isinstance(owner, LeOp)
            and _is_id(owner.rhs, LocalIdOp)
            and evaluate_ui32(owner.lhs, env) == offset
        )
        _require(ok, "a step's condition is not 'local_id x >= offset'")

    def _is_identity(self, value: SSAValue, own: SSAValue) -> bool:
        assert self.combine is not None
        return _is_identity(self.combine, self.element, value, own)

    def _simulate_scan(self, offsets: Sequence[int]) -> None:
        """Run the steps over ranges of lanes: lane l must end with lanes 0 ... l."""
        ranges = [(lane, lane) for lane in range(self.width)]
        for offset in offsets:
            new = list(ranges)
            for lane in range(offset, self.width):
                lo, hi = ranges[lane - offset]
                own_lo, own_hi = ranges[lane]
                _require(
                    hi + 1 == own_lo,
                    f"a step of offset {offset} combines lanes that are not adjacent",
                )
                new[lane] = (lo, own_hi)
            ranges = new
        _require(
            all(r == (0, lane) for lane, r in enumerate(ranges)),
            "the steps do not leave lanes 0 ... l in lane l (an inclusive scan)",
        )

    # the stores of the result

    def _tail(self, ops: Sequence[Operation]) -> tuple[str, str | None]:
        """`dst[invocation_id x] = tile[l]`, and optionally `if l == width - 1 {
        sums[workgroup_id x] = tile[l] }`: the host buffers written."""
        scanned: str | None = None
        totals: str | None = None
        for op in ops:
            if isinstance(op, LoadOp):
                _require(self._reads_own(op), "after the steps it loads other than tile[l]")
            elif isinstance(op, StoreOp):
                _require(scanned is None, "it stores the scan twice")
                _require(
                    _is_id(op.index, InvocationIdOp) and self._is_own(op.value),
                    "it does not store tile[l] at 'invocation_id x' after the steps",
                )
                scanned = op.buffer_name
            elif isinstance(op, IfOp):
                _require(totals is None, "it stores the block total twice")
                totals = self._total(op)
            else:
                _require(False, f"'{op.name}' after the steps is not a store of the scan")
        _require(scanned is not None, "it does not store the scan")
        assert scanned is not None
        for name in (scanned, totals):
            if name is not None:
                buffer = self.buffers[name]
                _require(not buffer.is_workgroup, f"it stores the scan into workgroup @{name}")
                _require(
                    not any(
                        isinstance(op, LoadOp) and op.buffer_name == name
                        for op in self.program.walk()
                    ),
                    f"it reads @{name}, which it writes",
                )
        _require(scanned != totals, "it stores the scan and the totals into one buffer")
        return scanned, totals

    def _reads_own(self, op: LoadOp) -> bool:
        return op.buffer_name == self.tile and _is_id(op.index, LocalIdOp)

    def _is_own(self, value: SSAValue) -> bool:
        return isinstance(value.owner, LoadOp) and self._reads_own(value.owner)

    def _total(self, op: IfOp) -> str:
        cond = op.cond.owner
        last = self.width - 1
        _require(
            isinstance(cond, EqOp)
            and {_is_id(cond.lhs, LocalIdOp), _is_id(cond.rhs, LocalIdOp)} == {True, False}
            and last in (_const(cond.lhs), _const(cond.rhs)),
            f"an if after the steps is not 'if local_id x == {last}'",
        )
        _require(not op.has_else, "the if of the block total has an else branch")
        ops = [inner for inner in op.then_region.block.ops if not _is_pure_value(inner)]
        stores = [inner for inner in ops if isinstance(inner, StoreOp)]

        def reads_last(load: Operation) -> bool:
            # tile[l], or tile[width - 1]: the same element in the last lane
            return isinstance(load, LoadOp) and (
                self._reads_own(load)
                or (load.buffer_name == self.tile and _const(load.index) == last)
            )

        _require(
            len(stores) == 1
            and all(isinstance(inner, (LoadOp, StoreOp)) for inner in ops)
            and all(reads_last(inner) for inner in ops if isinstance(inner, LoadOp)),
            "the if of the block total is not 'store @sums[workgroup_id x] = tile[l]'",
        )
        store = stores[0]
        _require(
            _is_id(store.index, WorkgroupIdOp) and reads_last(store.value.owner),
            "the if of the block total does not store tile[l] at 'workgroup_id x'",
        )
        return store.buffer_name


def _is_identity(combine: str, element: Attribute, value: SSAValue, own: SSAValue) -> bool:
    """`value` is the identity of `combine` on `element` (`own` itself for an
    idempotent combine: x op x == x)."""
    if value is own:
        return combine in IDEMPOTENT_COMBINES
    literal = _const(value)
    info = element_info(element)
    if literal is None or info is None or info.family == "vector":
        return False
    identity = OPS[combine].identity
    if identity is not None:
        return literal == (identity[1] if info.is_float else identity[0])
    if combine not in ("min", "max"):
        return False
    if info.is_float:
        return literal == (np.inf if combine == "min" else -np.inf)
    limits = np.iinfo(info.dtype)
    return literal == (limits.max if combine == "min" else limits.min)


def _looks_like_step(ops: Sequence[Operation]) -> bool:
    return (
        len(ops) >= 5
        and isinstance(ops[0], LoadOp)
        and isinstance(ops[1], LoadOp)
        and _is_workgroup_barrier(ops[2])
        and isinstance(ops[3], StoreOp)
        and _is_workgroup_barrier(ops[4])
    )


# ---------------------------------------------------------------- the add-back of a scan


@dataclass(frozen=True)
class AddBack:
    """A recognized add-back program (see `add_back`)."""

    program: ProgramOp
    #: the host buffer of block scans it reads at `invocation_id x`
    local: str
    #: the host buffer of carried prefixes it reads at `block(i) - 1`
    carried: str
    #: the host buffer it writes at `invocation_id x`
    dst: str


def add_back(program: ProgramOp, local: str, combine: str, element: Attribute, width: int):
    """The add-back `program` is, or why it is not one (a `NotAScan`).

    An *add-back* of the block scans in `local` (blocks of `width`) combines
    each element with the scanned total of the blocks before its own:

    ```mlir
    %i = vyre.invocation_id x
    %block = vyre.shr %i, %c8 : ui32             // or vyre.div %i, %c256
    %has = vyre.ne %block, %c0 : ui32            // or block > 0, block >= 1, i >= 256
    %b = vyre.sub %block, %c1 : ui32
    %c = vyre.load @carried[%b] : f32
    %add = vyre.select %has, %c, %identity : f32
    %v = vyre.load @local[%i] : f32
    %s = vyre.add %v, %add : f32                 // or select(has, v op c, v)
    vyre.store @dst[%i] = %s : f32
    ```

    with the scan's combine and element type; it has no other statement.
    """
    try:
        return _add_back(program, local, combine, element, width)
    except _Refused as refusal:
        return NotAScan(str(refusal))


def _add_back(
    program: ProgramOp, local: str, combine: str, element: Attribute, width: int
) -> AddBack:
    x, y, z = program.workgroup
    _require(y == 1 and z == 1, f"workgroup_size {[x, y, z]} is not one-dimensional")
    _require(
        program.explicit_grid is None and program.indirect_buffer is None,
        "it has an explicit or indirect grid",
    )
    buffers = {b.buffer_name: b for b in program.buffers()}
    statements = [op for op in program.body.block.ops if op not in buffers.values()]
    loads = [op for op in statements if isinstance(op, LoadOp)]
    stores = [op for op in statements if isinstance(op, StoreOp)]
    others = [op for op in statements if not isinstance(op, (LoadOp, StoreOp))]
    _require(
        all(_is_pure_value(op) and not op.regions for op in others),
        "it has statements besides two loads, pure values and one store",
    )
    _require(len(loads) == 2 and len(stores) == 1, "it is not two loads and one store")
    store = stores[0]
    _require(_is_id(store.index, InvocationIdOp), "it does not store at 'invocation_id x'")
    own = next((ld for ld in loads if ld.buffer_name == local), None)
    _require(
        own is not None and _is_id(own.index, InvocationIdOp),
        f"it does not read @{local} at 'invocation_id x'",
    )
    assert own is not None
    other = loads[0] if own is loads[1] else loads[1]
    _require(other.buffer_name != local, f"it reads @{local} twice")
    block = _previous_block(other.index, width)
    value = store.value.owner
    if isinstance(value, SelectOp) and value.false_value is own.result:
        # select(has, local[i] op carried[b - 1], local[i])
        has, both = value.cond, value.true_value.owner
        _require(
            isinstance(both, BinaryOp) and {both.lhs, both.rhs} == {own.result, other.result},
            "its select does not combine the two loads",
        )
    else:
        # local[i] op select(has, carried[b - 1], identity)
        both = value
        _require(
            isinstance(both, BinaryOp) and own.result in (both.lhs, both.rhs),
            f"it does not store a combine of @{local}[i]",
        )
        assert isinstance(both, BinaryOp)
        chosen = (both.rhs if both.lhs is own.result else both.lhs).owner
        _require(
            isinstance(chosen, SelectOp) and chosen.true_value is other.result,
            "it does not combine with 'select(block > 0, carried[block - 1], identity)'",
        )
        assert isinstance(chosen, SelectOp)
        _require(
            _is_identity(combine, element, chosen.false_value, own.result),
            f"its fallback is not the identity of '{combine}'",
        )
        has = chosen.cond
    assert isinstance(both, BinaryOp)
    name = both.name.removeprefix("vyre.")
    _require(name == combine, f"it combines with '{name}', the scan with '{combine}'")
    _require(both.result.type == element, f"it combines {both.result.type}, not {element}")
    _require(_is_first_block_test(has, block, width), "its condition is not 'block(i) > 0'")
    names = (local, other.buffer_name, store.buffer_name)
    _require(len(set(names)) == 3, "it reads or writes one buffer twice")
    for name in names:
        buffer = buffers[name]
        _require(not buffer.is_workgroup, f"@{name} is a workgroup buffer")
        _require(buffer.element_type == element, f"@{name} holds {buffer.element_type}")
    return AddBack(program, local, other.buffer_name, store.buffer_name)


def _block_of_invocation(value: SSAValue, width: int) -> bool:
    """`value` is `invocation_id x / width` (a shift for a power of two)."""
    owner = value.owner
    if isinstance(owner, ShrOp) and width & (width - 1) == 0:
        return _is_id(owner.lhs, InvocationIdOp) and _const(owner.rhs) == width.bit_length() - 1
    if isinstance(owner, DivOp):
        return _is_id(owner.lhs, InvocationIdOp) and _const(owner.rhs) == width
    return False


def _previous_block(index: SSAValue, width: int) -> SSAValue:
    """The block of `index = block(i) - 1`."""
    owner = index.owner
    _require(
        isinstance(owner, SubOp)
        and _const(owner.rhs) == 1
        and _block_of_invocation(owner.lhs, width),
        f"it does not read the carried prefix at 'invocation_id x / {width} - 1'",
    )
    assert isinstance(owner, SubOp)
    return owner.lhs


def _is_first_block_test(cond: SSAValue, block: SSAValue, width: int) -> bool:
    """`cond` is `block(i) != 0`, `block(i) > 0`, `block(i) >= 1` or `i >= width`."""
    owner = cond.owner

    def is_block(value: SSAValue) -> bool:
        return value is block or _block_of_invocation(value, width)

    if isinstance(owner, (NeOp, GtOp)):
        return is_block(owner.lhs) and _const(owner.rhs) == 0
    if isinstance(owner, GeOp):
        return (is_block(owner.lhs) and _const(owner.rhs) == 1) or (
            _is_id(owner.lhs, InvocationIdOp) and _const(owner.rhs) == width
        )
    return False
