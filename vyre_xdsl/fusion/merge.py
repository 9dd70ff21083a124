"""The merge half of fusion: arms, buffers merged by name, alpha-renaming of
named locals and workgroup buffers, and `vyre.return` kept inside its arm.

Upstream names (`merge_programs_shared`, vyre-semantics section 2):
- buffers merge by name; count = max (`?` when any declaration is `?`),
  `output` is or-ed, access is joined on the lattice of `join_access`, host
  buffers get fresh bindings 0, 1, ... in order of first appearance;
- a named local declared (by `vyre.let` or as a loop variable) in two or more
  arms is renamed `__vyre_fuse_a{arm}_{name}` in each of them; a name declared
  in one arm keeps its name, so a later arm can read it. A new name never
  collides with a name any arm uses (a user may write `@__vyre_fuse_a1_acc`
  too): a taken name gets a numeric suffix (`__vyre_fuse_a1_acc_1`);
- a synthetic root region (`vyre.region "vyre.program.root"`) is unwrapped.

Beyond upstream, because a fused arm must mean what its own dispatch meant:
- a workgroup buffer whose name another arm also declares is renamed per arm
  (`__vyre_fuse_a{arm}_{name}`): each dispatch starts with fresh, zero-filled
  workgroup memory, so two arms never share it;
- `vyre.return` ends only its arm: a top-level return drops the rest of the
  arm; a nested one sets the arm's flag `__vyre_fuse_a{arm}_live` to false and
  the statements that follow it run under `vyre.if` on that flag.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import LocationAttr, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Block, Operation

from vyre_xdsl.analysis import declared_local_names
from vyre_xdsl.diagnostics import VyreDiagnostic
from vyre_xdsl.dialects.vyre import (
    AssignOp,
    AtomicOp,
    BarrierOp,
    BufferOp,
    BufLenOp,
    ConstOp,
    IfOp,
    LetOp,
    LoadOp,
    LoopOp,
    ProgramOp,
    RegionOp,
    ReturnOp,
    StoreOp,
    VarOp,
    i1,
)

PREFIX = "__vyre_fuse_a"
ROOT_GENERATOR = "vyre.program.root"


def arm_name(arm: int, name: str, taken: set[str]) -> str:
    """A fresh alpha-renamed form of `name` in arm `arm`: `__vyre_fuse_a{arm}_{name}`,
    with a numeric suffix when that is in `taken`; the result is added to `taken`."""
    candidate = f"{PREFIX}{arm}_{name}"
    suffix = 0
    while candidate in taken:
        suffix += 1
        candidate = f"{PREFIX}{arm}_{name}_{suffix}"
    taken.add(candidate)
    return candidate


def used_names(arms: Sequence[Arm]) -> set[str]:
    """Every named local and buffer name of every arm: what a new name must avoid."""
    names: set[str] = set()
    for arm in arms:
        names |= {b.buffer_name for b in arm.program.buffers()}
        for op in arm.walk():
            if isinstance(op, LetOp | AssignOp | VarOp | LoopOp):
                names.add(op.var_name.data)
    return names


@dataclass
class Arm:
    """One program being fused: its original op (for diagnostics) and a working clone."""

    index: int
    source: ProgramOp
    program: ProgramOp
    #: host buffer name -> the element count this arm's dispatch sees (None: runtime-sized)
    views: dict[str, int | None] = field(default_factory=dict)
    #: the named local that says the arm has not returned (`contain_returns`), once chosen
    live: str | None = None

    @property
    def name(self) -> str:
        return self.source.sym_name.data

    @property
    def workgroup(self) -> tuple[int, int, int]:
        return self.program.workgroup

    def statements(self) -> list[Operation]:
        return list(self.program.statements())

    def walk(self) -> Iterator[Operation]:
        for op in self.statements():
            yield from op.walk()


def clone_arms(programs: Sequence[ProgramOp]) -> list[Arm]:
    arms = []
    for index, program in enumerate(programs):
        arm = Arm(index, program, program.clone())
        arm.views = {
            b.buffer_name: b.static_count for b in arm.program.buffers() if not b.is_workgroup
        }
        _unwrap_root_regions(arm.program)
        arms.append(arm)
    return arms


def _unwrap_root_regions(program: ProgramOp) -> None:
    for op in list(program.statements()):
        if isinstance(op, RegionOp) and op.generator.data == ROOT_GENERATOR:
            for inner in list(op.body.block.ops):
                inner.detach()
                program.body.block.insert_op_before(inner, op)
            op.detach()
            op.erase()


# ---------------------------------------------------------------- renaming


def declared_locals(arm: Arm) -> set[str]:
    return set().union(*(declared_local_names(op) for op in arm.statements()))


def rename_shared_locals(arms: Sequence[Arm], taken: set[str]) -> None:
    """Alpha-rename every named local declared in two or more arms, to names
    outside `taken` (which grows by the new names)."""
    declared = [declared_locals(arm) for arm in arms]
    arms_declaring = Counter(name for names in declared for name in names)
    shared = {name for name, n in arms_declaring.items() if n >= 2}
    for arm, names in zip(arms, declared):
        renamed = {name: arm_name(arm.index, name, taken) for name in sorted(shared & names)}
        for op in arm.walk():
            if isinstance(op, LetOp | AssignOp | VarOp | LoopOp) and op.var_name.data in renamed:
                op.properties["var_name"] = StringAttr(renamed[op.var_name.data])


def rename_shared_workgroup_buffers(arms: Sequence[Arm], taken: set[str]) -> None:
    """Give every workgroup buffer whose name another arm declares a per-arm name
    outside `taken`."""
    declared = [{b.buffer_name for b in arm.program.buffers()} for arm in arms]
    # a name this arm declares is declared by another arm too when two or more arms declare it
    arms_declaring = Counter(name for names in declared for name in names)
    for arm in arms:
        for buffer in arm.program.buffers():
            if buffer.is_workgroup and arms_declaring[buffer.buffer_name] >= 2:
                _rename_buffer(arm, buffer, arm_name(arm.index, buffer.buffer_name, taken))


def _rename_buffer(arm: Arm, buffer: BufferOp, new: str) -> None:
    old = buffer.buffer_name
    buffer.properties["sym_name"] = StringAttr(new)
    for op in arm.walk():
        if isinstance(op, LoadOp | StoreOp | AtomicOp | BufLenOp) and op.buffer_name == old:
            op.properties["buffer"] = SymbolRefAttr(new)


# ---------------------------------------------------------------- returns


def live_flag(arm: Arm) -> str:
    """The arm's live flag (chosen by `contain_returns`)."""
    assert arm.live is not None, "contain_returns chooses the live flag"
    return arm.live


def contain_returns(arm: Arm, taken: set[str]) -> bool:
    """Make every `vyre.return` of the arm end only the arm.

    Returns whether the arm now needs its live flag (a fresh name outside
    `taken`, `__vyre_fuse_a{arm}_live`) declared (true, i1) before its statements.
    """
    _drop_after_top_level_return(arm.program.body.block)
    if not any(isinstance(op, ReturnOp) for op in arm.walk()):
        return False
    _refuse_barrier_after_return(arm)
    arm.live = arm_name(arm.index, "live", taken)
    _contain_block(arm.program.body.block, arm.live)
    return True


def _drop_after_top_level_return(block: Block) -> None:
    ops = list(block.ops)
    for position, op in enumerate(ops):
        if isinstance(op, ReturnOp):
            for dead in reversed(ops[position:]):
                dead.detach()
                dead.erase(safe_erase=False)
            return


def _refuse_barrier_after_return(arm: Arm) -> None:
    seen_return = False
    for op in arm.walk():
        if isinstance(op, ReturnOp):
            seen_return = True
        elif isinstance(op, BarrierOp) and seen_return:
            raise VyreDiagnostic(
                [
                    (
                        arm.source,
                        f"cannot fuse @{arm.name}: it returns from inside a 'vyre.if' or 'vyre.loop' "
                        "before a barrier; fused, that return may only end @{0} (not the invocation), "
                        "and the barrier would then depend on a per-invocation flag; fix: move the "
                        "barrier before the return, or keep @{0} in its own fusion group".format(
                            arm.name
                        ),
                    )
                ]
            )


def _contains_return(op: Operation) -> bool:
    return any(isinstance(inner, ReturnOp) for inner in op.walk())


def _guarded(flag: str, ops: list[Operation]) -> list[Operation]:
    """`%live = vyre.var @flag; vyre.if %live { ops }`."""
    live = VarOp(flag, i1)
    for op in ops:
        op.detach()
    return [live, IfOp(live.result, ops)]


def _contain_block(block: Block, flag: str) -> None:
    """Replace the returns under `block`; statements after a possible return go under the flag."""
    ops = list(block.ops)
    for position, op in enumerate(ops):
        if isinstance(op, ReturnOp):
            for dead in reversed(ops[position + 1 :]):
                dead.detach()
                dead.erase(safe_erase=False)
            false = ConstOp(False, i1)
            block.insert_op_before(false, op)
            block.insert_op_before(AssignOp(flag, false.result), op)
            op.detach()
            op.erase()
            return
        if not _contains_return(op):
            continue
        if isinstance(op, LoopOp):
            body = op.body.block
            for new in _guarded(flag, list(body.ops)):
                body.add_op(new)
        for region in op.regions:
            for inner in region.blocks:
                _contain_block(inner, flag)
        rest = ops[position + 1 :]
        if rest:
            guard_ops = _guarded(flag, rest)
            for new in guard_ops:
                block.add_op(new)
            _contain_block(guard_ops[1].then_region.block, flag)
        return


def live_flag_declaration(arm: Arm) -> list[Operation]:
    true = ConstOp(True, i1)
    return [true, LetOp(live_flag(arm), true.result)]


# ---------------------------------------------------------------- buffers


def join_access(a: str, b: str) -> str:
    """The access lattice of upstream `merge_programs_shared` (vyre-semantics section 2)."""
    if a == b:
        return a
    pair = {a, b}
    writes = {"read_write", "write_only"}
    reads = {"read_only", "uniform"}
    if "read_write" in pair or (pair & writes and pair & reads):
        return "read_write"
    if "uniform" in pair:
        return "uniform"
    if "workgroup" in pair:
        return "workgroup"
    return "read_only"


@dataclass
class MergedBuffer:
    name: str
    element_type: Attribute
    access: str
    count: int | None  # None: runtime-sized
    output: bool
    min_count: int  # largest static count among the declarations
    #: where the first declaration was written (diagnostics about the merged buffer point there)
    location: LocationAttr | None = None

    @property
    def is_workgroup(self) -> bool:
        return self.access == "workgroup"


def check_buffer_types(programs: Sequence[ProgramOp]) -> None:
    """Refuse a host buffer name that holds two element types. (Workgroup buffers
    are renamed apart, see `rename_shared_workgroup_buffers`.)"""
    first: dict[str, tuple[ProgramOp, BufferOp]] = {}
    for program in programs:
        for buffer in program.buffers():
            name = buffer.buffer_name
            if buffer.is_workgroup:
                continue
            if name not in first:
                first[name] = (program, buffer)
                continue
            earlier, known = first[name]
            if buffer.element_type != known.element_type:
                raise VyreDiagnostic(
                    [
                        (
                            buffer,
                            f"cannot fuse @{earlier.sym_name.data} and @{program.sym_name.data}: buffer "
                            f"@{name} holds {buffer.element_type} in @{program.sym_name.data} but "
                            f"{known.element_type} in @{earlier.sym_name.data}; fix: rename the buffer in "
                            "one of the programs",
                        )
                    ]
                )


def merge_buffers(arms: Sequence[Arm]) -> dict[str, MergedBuffer]:
    """Buffers by name, in order of first appearance (types already checked)."""
    merged: dict[str, MergedBuffer] = {}
    for arm in arms:
        for buffer in arm.program.buffers():
            name = buffer.buffer_name
            if name not in merged:
                merged[name] = MergedBuffer(
                    name,
                    buffer.element_type,
                    buffer.access_mode,
                    buffer.static_count,
                    buffer.is_output,
                    buffer.static_count or 0,
                    buffer.location,
                )
                continue
            known = merged[name]
            known.access = join_access(known.access, buffer.access_mode)
            known.output = known.output or buffer.is_output
            if buffer.static_count is None or known.count is None:
                known.count = None
            else:
                known.count = max(known.count, buffer.static_count)
            known.min_count = max(known.min_count, buffer.static_count or 0)
    return merged


def buffer_declarations(merged: dict[str, MergedBuffer], keep: set[str]) -> list[BufferOp]:
    """Declarations for the fused program; host buffers numbered in order of first appearance."""
    ops = []
    binding = 0
    for buffer in merged.values():
        if buffer.name not in keep:
            continue
        slot = None
        if not buffer.is_workgroup:
            slot, binding = binding, binding + 1
        op = BufferOp(
            buffer.name, buffer.access, buffer.element_type, buffer.count, slot, buffer.output
        )
        if buffer.location is not None:
            op.location = buffer.location
        ops.append(op)
    return ops
