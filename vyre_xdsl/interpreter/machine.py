"""The lockstep machine: runs one `vyre.program` over all its invocations at once.

Every statement runs for all the lanes of the current :class:`Frame` with one
numpy operation per op; `if` branches and loop iterations run in sub-frames of
the lanes that take them; `return`, `trap` and trapping si32 division remove
lanes for the rest of the program. Op dispatch is a plain dict keyed by op class
(see docs/interpreter.md for why this is not xDSL's `Interpreter`).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np
from xdsl.ir import Operation, SSAValue

from vyre_xdsl import semantics
from vyre_xdsl.diagnostics import VyreError
from vyre_xdsl.dialects.vyre import (
    TABLE_OPS,
    AssignOp,
    AtomicOp,
    BarrierOp,
    BitcastOp,
    BlockOp,
    BufferOp,
    BufLenOp,
    CastOp,
    ConstOp,
    ExtractOp,
    FmaOp,
    FromElementsOp,
    IfOp,
    InvocationIdOp,
    LetOp,
    LoadOp,
    LocalIdOp,
    LoopOp,
    NumWorkgroupsOp,
    ProgramOp,
    RegionOp,
    RepetitionOp,
    ReturnOp,
    SelectOp,
    StoreOp,
    SubgroupBallotOp,
    SubgroupBroadcastOp,
    SubgroupLocalIdOp,
    SubgroupReduceOp,
    SubgroupShuffleOp,
    SubgroupSizeOp,
    TrapOp,
    VarOp,
    WorkgroupIdOp,
    type_name,
)
from vyre_xdsl.dispatch import check_derived_grid, checked_indirect_grid, logical_element_count
from vyre_xdsl.interpreter.atomics import atomic
from vyre_xdsl.interpreter.lanes import Frame, Launch, broadcast
from vyre_xdsl.interpreter.memory import Memory
from vyre_xdsl.interpreter.trap import VyreTrap
from vyre_xdsl.semantics import HOST_DTYPES, NUMPY_DTYPES, literal_array


class InterpreterError(VyreError):
    """The interpreter cannot run this program (an unsupported op, missing host buffer...)."""


class IterationLimitError(InterpreterError):
    """A run was about to go past its loop iterations: those of an enclosing
    `iteration_limit(n)`, or its own `max_iterations`."""


class IterationBudget:
    """The loop iterations one run may still take, summed over the invocations
    that take them (the `max_iterations` of `execute`): a loop entered by 4096
    invocations with 10 trips each costs 40960. It is passed down explicitly,
    so it holds in whatever thread the run happens to be in."""

    def __init__(self, limit: int):
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise InterpreterError(f"max_iterations is {limit!r}; it must be an int, 0 or more")
        self.limit = limit
        self.left = limit

    def charge(self, iterations: int, program: str) -> None:
        """Take `iterations` for a loop of `program` that is about to start, or
        raise `IterationLimitError` when fewer are left."""
        if iterations > self.left:
            raise IterationLimitError(
                f"a loop of @{program} would run {iterations} iterations with {self.left} left "
                f"of max_iterations={self.limit} (summed over the invocations that run them)"
            )
        self.left -= iterations


# the loop iterations left to the runs inside `iteration_limit`; None: no limit
_ITERATIONS_LEFT: ContextVar[list[int] | None] = ContextVar("iterations_left", default=None)


@contextlib.contextmanager
def iteration_limit(iterations: int) -> Iterator[None]:
    """Refuse, with `IterationLimitError`, the runs inside this block once they
    have run `iterations` loop iterations in all (before the loop that would go
    past the limit starts).

    The limit belongs to the current context (a `ContextVar`): a new thread or
    a thread pool's worker does not inherit it. To bound a run from any thread,
    and to count the work of every invocation, pass `max_iterations=` to
    `execute`, `vyre_xdsl.run` or `Executable.run` instead.

    An iteration counts once however many lanes take it (the interpreter runs
    them together): a `vyre.loop` entered with bounds `lo` and `hi` costs
    `max(hi - lo)` over its lanes. A hostile or mistaken module whose loops
    run billions of times is then refused instead of running for hours.

    ```python
    with iteration_limit(10_000):
        vyre_xdsl.run(module, inputs, backend="reference")
    ```
    """
    token = _ITERATIONS_LEFT.set([iterations])
    try:
        yield
    finally:
        _ITERATIONS_LEFT.reset(token)


def charge_iterations(trips: int, program: str) -> None:
    """Count `trips` iterations of a loop of `program` against the enclosing
    `iteration_limit`."""
    left = _ITERATIONS_LEFT.get()
    if left is None:
        return
    if trips > left[0]:
        raise IterationLimitError(
            f"a loop of @{program} would run {trips} iterations with {left[0]} left "
            "of the iteration limit"
        )
    left[0] -= trips


@dataclass
class Local:
    """A named local: one entry per lane of the frame that declared it.

    A loop variable with uniform bounds stays a shape-(1,) `uniform` array.
    """

    frame: Frame
    array: np.ndarray
    uniform: bool = False

    def read(self, frame: Frame) -> np.ndarray:
        if self.uniform:
            return self.array
        positions = frame.positions_in(self.frame)
        return self.array.copy() if positions is None else self.array[positions]

    def write(self, frame: Frame, value: np.ndarray) -> None:
        positions = frame.positions_in(self.frame)
        if positions is None:
            self.array[...] = value
        else:
            self.array[positions] = value


class Scope:
    """A lexical scope of named locals."""

    def __init__(self, parent: Scope | None = None):
        self.parent = parent
        self.locals: dict[str, Local] = {}

    def find(self, name: str) -> Local:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.locals:
                return scope.locals[name]
            scope = scope.parent
        raise InterpreterError(
            f"named local @{name} is not declared (the module was not verified?)"
        )


Handler = Callable[["Machine", Operation, Frame, Scope], None]
HANDLERS: dict[type[Operation], Handler] = {}


def handles(*classes: type[Operation]) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        for cls in classes:
            HANDLERS[cls] = handler
        return handler

    return register


#: Resource limits of the reference interpreter, checked before it allocates:
#: workgroup memory per workgroup (no GPU offers more), all workgroup memory of
#: one dispatch together, and invocations per dispatch.
MAX_WORKGROUP_BYTES = 1 << 20
MAX_SHARED_TOTAL_BYTES = 1 << 31
MAX_LANES = 1 << 27


def check_resources(program: ProgramOp, launch: Launch) -> None:
    """Raise a located `VyreDiagnostic` when running `program` over `launch`
    would pass the interpreter's limits (instead of a `MemoryError`)."""
    from vyre_xdsl.diagnostics import VyreDiagnostic

    shared = [b for b in program.buffers() if b.is_workgroup]
    per_group = 0
    for buffer in shared:
        per_group += 4 * (buffer.static_count or 0)
        if per_group > MAX_WORKGROUP_BYTES:
            raise VyreDiagnostic(
                [
                    (
                        buffer,
                        (
                            f"workgroup memory of @{program.sym_name.data} reaches {per_group} bytes at @{buffer.buffer_name}; "
                            f"the reference interpreter allows {MAX_WORKGROUP_BYTES} bytes per workgroup (GPUs allow less, "
                            "e.g. 16 KiB or 32 KiB)"
                        ),
                    )
                ]
            )
    if shared and per_group * launch.workgroups > MAX_SHARED_TOTAL_BYTES:
        raise VyreDiagnostic(
            [
                (
                    shared[-1],
                    (
                        f"@{program.sym_name.data} launches {launch.workgroups} workgroups of {per_group} bytes of workgroup "
                        f"memory; the reference interpreter allocates at most {MAX_SHARED_TOTAL_BYTES} bytes of it per dispatch"
                    ),
                )
            ]
        )
    if launch.lanes > MAX_LANES:
        raise VyreDiagnostic(
            [
                (
                    program,
                    (
                        f"@{program.sym_name.data} launches {launch.lanes} invocations; the reference interpreter runs at most "
                        f"{MAX_LANES} per dispatch; partition the data"
                    ),
                )
            ]
        )


def _launch(
    program: ProgramOp, counts: dict[str, int], host: MutableMapping[str, np.ndarray]
) -> Launch:
    """The dispatch of `program`: from its buffer lengths, or from its indirect grid
    buffer as it is now (after the programs before it ran)."""
    n = logical_element_count(program, counts)
    name = program.indirect_buffer
    explicit = program.explicit_grid
    if explicit is not None:
        threads = math.prod(program.workgroup)
        return Launch(math.prod(explicit) * threads, program.workgroup, explicit, explicit=True)
    if name is None:
        check_derived_grid(program, n)
        return Launch(n, program.workgroup)
    grid = checked_indirect_grid(
        program.sym_name.data, name, host[name], offset=program.indirect_offset
    )
    threads = program.workgroup[0] * program.workgroup[1] * program.workgroup[2]
    return Launch(grid[0] * grid[1] * grid[2] * threads, program.workgroup, grid)


class Machine:
    """The state of one running program: its buffers, lanes and the first trap."""

    def __init__(
        self,
        program: ProgramOp,
        host: MutableMapping[str, np.ndarray],
        subgroup_size: int = semantics.DEFAULT_SUBGROUP_SIZE,
        budget: IterationBudget | None = None,
        repetition: int = 0,
    ):
        #: the value of `vyre.repetition` (the run's current repetition)
        self.repetition = repetition
        if not 1 <= subgroup_size <= 128:
            raise InterpreterError(
                f"subgroup_size is {subgroup_size}; it must be between 1 and 128"
            )
        self.subgroup_size = subgroup_size
        self.budget = budget
        self.program = program
        self.name = program.sym_name.data
        counts = host_counts(program, host)
        self.launch = _launch(program, counts, host)
        check_resources(program, self.launch)
        self.memory: dict[str, Memory] = {}
        for buffer in program.buffers():
            if buffer.is_scratch:
                self.memory[buffer.buffer_name] = _scratch(buffer, self.launch.lanes, host)
            elif buffer.is_workgroup:
                self.memory[buffer.buffer_name] = Memory.shared(
                    buffer.buffer_name,
                    buffer.element,
                    buffer.static_count or 0,
                    self.launch.workgroups,
                )
            else:
                self.memory[buffer.buffer_name] = Memory.host(
                    buffer.buffer_name,
                    buffer.element,
                    counts[buffer.buffer_name],
                    host[buffer.buffer_name],
                )
        self.alive = np.ones(self.launch.lanes, dtype=bool)
        self.deaths = 0
        self.trap: tuple[str, int, int] | None = None

    # ------------------------------------------------------------------ driver

    def run(self) -> None:
        """Run the program; raise `VyreTrap` afterwards if any invocation trapped."""
        with np.errstate(all="ignore"):
            self.run_ops(self.program.statements(), Frame.root(self.launch.lanes), Scope())
        if self.trap is not None:
            tag, address, invocation = self.trap
            raise VyreTrap(tag, address, invocation, self.name)

    def run_ops(self, ops: Iterable[Operation], frame: Frame, scope: Scope) -> None:
        """Run statements in order; lanes that end on the way drop out of `frame`."""
        for op in ops:
            if frame.size == 0:
                return
            handler = HANDLERS.get(type(op))
            if handler is None:
                raise InterpreterError(f"the reference interpreter does not support '{op.name}'")
            handler(self, op, frame, scope)
            if self.deaths != frame.death_mark:
                frame = frame.subset(self.alive[frame.lanes], self.deaths)

    def run_region(self, region, frame: Frame, scope: Scope) -> None:
        if frame.size and region.blocks:
            self.run_ops(region.block.ops, frame, Scope(scope))

    # ------------------------------------------------------------------ helpers

    def end_lanes(self, lanes: np.ndarray) -> None:
        self.alive[lanes] = False
        self.deaths += 1

    def record_trap(self, tag: str, address: int, lane: int) -> None:
        """Keep the trap of the lowest trapping invocation (SPEC 3.4, as on the GPU)."""
        if self.trap is None or lane < self.trap[2]:
            self.trap = (tag, int(address), int(lane))

    def workgroups_of(self, frame: Frame, memory: Memory) -> np.ndarray | None:
        return self.launch.workgroup_of(frame.lanes) if memory.workgroup else None


def _scratch(buffer: BufferOp, lanes: int, host: MutableMapping[str, np.ndarray]) -> Memory:
    """The memory of a scratch buffer (grid_sync spills, `{vyre.scratch}`): its
    count per invocation for each of `lanes` invocations, zeroed when first
    seen, then kept in `host` under its name for the parts after it."""
    name, count = buffer.buffer_name, (buffer.static_count or 0) * lanes
    array = host.get(name)
    if array is None or array.shape[0] < count:
        grown = np.zeros(count, dtype=HOST_DTYPES[buffer.element])
        if array is not None:
            grown[: array.shape[0]] = array
        host[name] = array = grown
    return Memory.host(name, buffer.element, count, array)


def host_counts(program: ProgramOp, host: MutableMapping[str, np.ndarray]) -> dict[str, int]:
    """Element count of each host buffer as `program` sees it; checks the host arrays."""
    counts: dict[str, int] = {}
    for buffer in program.buffers():
        if buffer.is_workgroup or buffer.is_scratch:
            continue
        name = buffer.buffer_name
        if name not in host:
            raise InterpreterError(
                f"no host array for buffer '{name}' of program @{program.sym_name.data}"
            )
        array = host[name]
        expected = np.dtype(HOST_DTYPES[buffer.element])
        if array.dtype != expected or array.ndim != 1:
            raise InterpreterError(
                f"host array for buffer '{name}' is {array.dtype}{list(array.shape)}; "
                f"expected a one-dimensional {expected} array"
            )
        declared = buffer.static_count
        if declared is not None and array.shape[0] < declared:
            raise InterpreterError(
                f"host array for buffer '{name}' has {array.shape[0]} elements; "
                f"program @{program.sym_name.data} declares {declared}"
            )
        counts[name] = array.shape[0] if declared is None else declared
    return counts


def _typed(value: np.ndarray, ty: str, op: Operation) -> np.ndarray:
    """`value` as a 1-d array, checked to have the register dtype of `ty`."""
    result = np.asarray(value)
    if result.ndim == 0:
        result = result.reshape(1)
    if result.dtype != NUMPY_DTYPES[ty]:
        raise InterpreterError(
            f"internal: '{op.name}' produced {result.dtype} for a {ty} result "
            "(the semantics table must compute in the operand type)"
        )
    return result


def _set(frame: Frame, op: Operation, value: np.ndarray) -> None:
    result: SSAValue = op.results[0]
    frame.values[result] = _typed(value, type_name(result.type), op)


# ====================================================================== expressions


@handles(ConstOp)
def _const(m: Machine, op: ConstOp, frame: Frame, scope: Scope) -> None:
    ty = type_name(op.result.type)
    _set(frame, op, literal_array(op.literal(), ty))


@handles(NumWorkgroupsOp)
def _num_workgroups(m: Machine, op: NumWorkgroupsOp, frame: Frame, scope: Scope) -> None:
    _set(frame, op, np.array([m.launch.grid[op.axis_index]], dtype=np.uint32))


@handles(InvocationIdOp, WorkgroupIdOp, LocalIdOp)
def _ids(m: Machine, op, frame: Frame, scope: Scope) -> None:
    axis = op.axis_index
    local = m.launch.local_ids(frame.lanes)[axis]
    group = m.launch.workgroup_ids(frame.lanes)[axis]
    if isinstance(op, LocalIdOp):
        value = local
    elif isinstance(op, WorkgroupIdOp):
        value = group
    else:
        value = group * m.launch.workgroup[axis] + local
    _set(frame, op, value.astype(np.uint32))


@handles(LoadOp)
def _load(m: Machine, op: LoadOp, frame: Frame, scope: Scope) -> None:
    memory = m.memory[op.buffer_name]
    index = frame.lookup(op.index)
    workgroup = m.workgroups_of(frame, memory)
    if workgroup is not None:
        index = broadcast(index, frame.size)
    _set(frame, op, memory.load(index, workgroup))


@handles(BufLenOp)
def _buf_len(m: Machine, op: BufLenOp, frame: Frame, scope: Scope) -> None:
    _set(frame, op, np.array([m.memory[op.buffer_name].count], dtype=np.uint32))


def _table_op(m: Machine, op: Operation, frame: Frame, scope: Scope) -> None:
    sem = type(op).semantics()
    args = [frame.lookup(v) for v in op.operands]
    if sem.traps is not None:
        trapping = sem.traps(*args)
        if trapping is not None and trapping.any():
            trapping = broadcast(np.asarray(trapping), frame.size)
            lanes = frame.lanes[trapping]
            tag = sem.trap_tag_for(type_name(op.operands[0].type))
            m.record_trap(tag, 0, int(lanes.min()))
            m.end_lanes(lanes)
    _set(frame, op, sem.evaluate(*args))


for _cls in TABLE_OPS.values():
    HANDLERS[_cls] = _table_op


@handles(SelectOp)
def _select(m: Machine, op: SelectOp, frame: Frame, scope: Scope) -> None:
    c, t, f = (frame.lookup(v) for v in op.operands)
    _set(frame, op, semantics.evaluate_select(c, t, f))


@handles(FmaOp)
def _fma(m: Machine, op: FmaOp, frame: Frame, scope: Scope) -> None:
    _set(frame, op, semantics.evaluate_fma(*(frame.lookup(v) for v in op.operands)))


@handles(FromElementsOp)
def _from_elements(m: Machine, op: FromElementsOp, frame: Frame, scope: Scope) -> None:
    lanes = [broadcast(frame.lookup(v), frame.size) for v in op.elements]
    record = NUMPY_DTYPES[type_name(op.result.type)]
    _set(frame, op, semantics.vector_records(np.stack(lanes, axis=1), record))


@handles(ExtractOp)
def _extract(m: Machine, op: ExtractOp, frame: Frame, scope: Scope) -> None:
    _set(frame, op, semantics.vector_lanes(frame.lookup(op.vector))[:, op.lane_index].copy())


@handles(CastOp)
def _cast(m: Machine, op: CastOp, frame: Frame, scope: Scope) -> None:
    _set(frame, op, semantics.evaluate_cast(frame.lookup(op.input), op.source_name, op.target_name))


@handles(BitcastOp)
def _bitcast(m: Machine, op: BitcastOp, frame: Frame, scope: Scope) -> None:
    _set(
        frame,
        op,
        semantics.evaluate_bitcast(frame.lookup(op.input), op.source_name, op.target_name),
    )


@handles(AtomicOp)
def _atomic(m: Machine, op: AtomicOp, frame: Frame, scope: Scope) -> None:
    memory = m.memory[op.buffer_name]
    index = broadcast(frame.lookup(op.index), frame.size)
    addr, in_bounds = memory.addresses(index, m.workgroups_of(frame, memory))
    value = broadcast(frame.lookup(op.value), frame.size)
    expected = None if op.expected is None else broadcast(frame.lookup(op.expected), frame.size)
    _set(frame, op, atomic(op.kind.data, memory.data, addr, in_bounds, value, expected))


# ====================================================================== statements


@handles(LetOp)
def _let(m: Machine, op: LetOp, frame: Frame, scope: Scope) -> None:
    value = frame.lookup(op.value)
    array = np.empty(frame.size, dtype=value.dtype)
    array[...] = value
    scope.locals[op.var_name.data] = Local(frame, array)


@handles(AssignOp)
def _assign(m: Machine, op: AssignOp, frame: Frame, scope: Scope) -> None:
    scope.find(op.var_name.data).write(frame, frame.lookup(op.value))


@handles(VarOp)
def _var(m: Machine, op: VarOp, frame: Frame, scope: Scope) -> None:
    _set(frame, op, scope.find(op.var_name.data).read(frame))


@handles(StoreOp)
def _store(m: Machine, op: StoreOp, frame: Frame, scope: Scope) -> None:
    memory = m.memory[op.buffer_name]
    index = broadcast(frame.lookup(op.index), frame.size)
    value = broadcast(frame.lookup(op.value), frame.size)
    memory.store(index, value, m.workgroups_of(frame, memory))


@handles(IfOp)
def _if(m: Machine, op: IfOp, frame: Frame, scope: Scope) -> None:
    cond = frame.lookup(op.cond)
    m.run_region(op.then_region, frame.subset(cond, m.deaths), scope)
    if op.has_else:
        m.run_region(op.else_region, frame.subset(~cond, m.deaths), scope)


@handles(LoopOp)
def _loop(m: Machine, op: LoopOp, frame: Frame, scope: Scope) -> None:
    lower = frame.lookup(op.lower).astype(np.int64)
    trips = np.maximum(frame.lookup(op.upper).astype(np.int64) - lower, 0)
    start_mark = m.deaths
    longest = int(trips.max())
    charge_iterations(longest, m.name)
    if m.budget is not None:
        m.budget.charge(lane_iterations(trips, frame.size), m.name)
    for k in range(longest):
        active = trips > k
        if m.deaths != start_mark:
            active = active & m.alive[frame.lanes]
        iteration = frame.subset(active, m.deaths)
        if iteration.size == 0:
            return
        value = lower if lower.shape[0] == 1 or iteration.sel is None else lower[iteration.sel]
        body_scope = Scope(scope)
        body_scope.locals[op.var_name.data] = Local(
            iteration, (value + k).astype(np.uint32), uniform=value.shape[0] == 1
        )
        m.run_ops(op.body.block.ops, iteration, body_scope)


def lane_iterations(trips: np.ndarray, lanes: int) -> int:
    """The iterations of a loop summed over the `lanes` invocations that enter
    it (`trips` has one entry per lane, or one for all when the bounds are uniform)."""
    if trips.shape[0] == lanes:
        return int(trips.sum())
    return int(trips[0]) * lanes


@handles(BlockOp, RegionOp)
def _block(m: Machine, op, frame: Frame, scope: Scope) -> None:
    m.run_region(op.body, frame, scope)


@handles(BarrierOp)
def _barrier(m: Machine, op: BarrierOp, frame: Frame, scope: Scope) -> None:
    """Nothing to do: every statement before it has already run for every lane.

    The verifier keeps barriers out of invocation-dependent control flow, so all
    lanes of a workgroup (all lanes, for `grid_sync`) reach this statement in the
    same frame, after the previous statement finished for all of them.
    """


@handles(ReturnOp)
def _return(m: Machine, op: ReturnOp, frame: Frame, scope: Scope) -> None:
    m.end_lanes(frame.lanes)


@handles(TrapOp)
def _trap(m: Machine, op: TrapOp, frame: Frame, scope: Scope) -> None:
    address = broadcast(frame.lookup(op.address), frame.size)
    first = int(np.argmin(frame.lanes))
    m.record_trap(op.tag.data, int(address[first]), int(frame.lanes[first]))
    m.end_lanes(frame.lanes)


@handles(BufferOp)
def _buffer(m: Machine, op: BufferOp, frame: Frame, scope: Scope) -> None:
    """Declarations are read when the machine starts."""


# ====================================================================== subgroups
#
# Lanes form subgroups of `m.subgroup_size` by local invocation index within their
# workgroup (the last subgroup of a workgroup may be partial). The verifier keeps
# collectives out of invocation-dependent control flow, so every lane of a
# subgroup is in the frame when one runs.


def _subgroup_start(m: Machine, lanes: np.ndarray) -> np.ndarray:
    """The first lane of each lane's subgroup."""
    local = lanes % m.launch.threads
    return lanes - local % m.subgroup_size


def _subgroup_runs(m: Machine, frame: Frame) -> tuple[np.ndarray, np.ndarray]:
    """(start position in the frame of each subgroup, each lane's subgroup number)."""
    start = _subgroup_start(m, frame.lanes)
    new = np.r_[True, start[1:] != start[:-1]]
    return np.flatnonzero(new), np.cumsum(new) - 1


@handles(SubgroupSizeOp)
def _subgroup_size(m: Machine, op: SubgroupSizeOp, frame: Frame, scope: Scope) -> None:
    _set(frame, op, np.array([m.subgroup_size], dtype=np.uint32))


@handles(RepetitionOp)
def _repetition(m: Machine, op: RepetitionOp, frame: Frame, scope: Scope) -> None:
    _set(frame, op, np.array([m.repetition], dtype=np.uint32))


@handles(SubgroupLocalIdOp)
def _subgroup_local_id(m: Machine, op: SubgroupLocalIdOp, frame: Frame, scope: Scope) -> None:
    _set(frame, op, ((frame.lanes % m.launch.threads) % m.subgroup_size).astype(np.uint32))


@handles(SubgroupReduceOp)
def _subgroup_reduce(m: Machine, op: SubgroupReduceOp, frame: Frame, scope: Scope) -> None:
    combine = semantics.SUBGROUP_REDUCE[op.kind.data][1]
    values = broadcast(frame.lookup(op.value), frame.size)
    starts, group = _subgroup_runs(m, frame)
    reduced = combine.reduceat(values, starts, dtype=values.dtype)
    _set(frame, op, reduced[group])


@handles(SubgroupShuffleOp, SubgroupBroadcastOp)
def _subgroup_shuffle(m: Machine, op, frame: Frame, scope: Scope) -> None:
    values = broadcast(frame.lookup(op.value), frame.size)
    lane = broadcast(frame.lookup(op.lane), frame.size).astype(np.int64)
    workgroup_start = frame.lanes - frame.lanes % m.launch.threads
    source = _subgroup_start(m, frame.lanes) + lane
    valid = (lane < m.subgroup_size) & (source - workgroup_start < m.launch.threads)
    position = np.clip(np.searchsorted(frame.lanes, source), 0, frame.size - 1)
    valid &= frame.lanes[position] == source
    _set(
        frame, op, np.where(valid, values[position], np.zeros(1, values.dtype)).astype(values.dtype)
    )


@handles(SubgroupBallotOp)
def _subgroup_ballot(m: Machine, op: SubgroupBallotOp, frame: Frame, scope: Scope) -> None:
    cond = broadcast(frame.lookup(op.cond), frame.size).astype(bool)
    sub_lane = (frame.lanes % m.launch.threads) % m.subgroup_size
    bits = np.where(
        cond & (sub_lane < 32),
        np.left_shift(np.uint64(1), sub_lane.astype(np.uint64)),
        np.uint64(0),
    )
    starts, group = _subgroup_runs(m, frame)
    _set(frame, op, np.add.reduceat(bits, starts).astype(np.uint32)[group])
