"""Random chains of vyre programs, and a barrier-respecting adversarial scheduler,
for differential tests of `vyre-fuse`.

`make_chain(choices)` builds a module of 2-6 programs that share buffers with
random index patterns (identity, reversed, shifted, strided, workgroup-local
mirror, data-dependent gather, a single element), element types, buffer sizes
(static and runtime-sized, some declared shorter by a reader), workgroup sizes
(one shared size, mixed 1-D sizes, or 2-D), and optional extras: conditional
stores, early returns, traps, atomics on a counter, workgroup memory with a
barrier, loops over named locals, Bool flag buffers, read-modify-write.
Every program on its own is race-free (its stores are injective in the
invocation, and it reads what it writes only at the same index), so its result
does not depend on the order in which invocations run.

`execute_scheduled(module, buffers, rng)` runs a module on the reference
interpreter's machine, one invocation at a time, in a random order that only
respects the module's barriers: workgroups run in a random order between
`grid_sync`s, and the invocations of a workgroup in a random order between
workgroup barriers. A fused program whose barriers are missing gives a
different result under such an order; the lockstep interpreter (which runs
each statement for all invocations at once) cannot see that.

`choices` is a `RandomChoices(seed)` or a `DataChoices(data)` for hypothesis.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from vyre_xdsl.builder import ProgramBuilder, module_of
from vyre_xdsl.dialects.vyre import BarrierOp, programs
from vyre_xdsl.interpreter.lanes import Frame
from vyre_xdsl.interpreter.machine import HANDLERS, Machine, Scope
from vyre_xdsl.interpreter.trap import VyreTrap
from vyre_xdsl.semantics import ELEMENTS

COUNTS = (16, 24, 32, 40, 64)
INPUT_DTYPES = {"ui32": np.uint32, "si32": np.int32, "f32": np.float32, "i1": np.uint32}


# ====================================================================== choices


class RandomChoices:
    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def choice(self, options: Sequence):
        return options[int(self.rng.integers(len(options)))]

    def integer(self, lo: int, hi: int) -> int:
        return int(self.rng.integers(lo, hi + 1))

    def chance(self, percent: int) -> bool:
        return int(self.rng.integers(100)) < percent


class DataChoices:
    """Choices drawn from hypothesis, so failing chains shrink."""

    def __init__(self, data):
        self.data = data

    def choice(self, options: Sequence):
        return self.data.draw(st.sampled_from(list(options)))

    def integer(self, lo: int, hi: int) -> int:
        return self.data.draw(st.integers(lo, hi))

    def chance(self, percent: int) -> bool:
        return self.data.draw(st.integers(0, 99)) < percent


# ====================================================================== chain model


@dataclass
class Buffer:
    name: str
    element: str
    count: int | None  # None: runtime-sized
    length: int  # the host array length
    is_input: bool = False


@dataclass
class Access:
    buffer: Buffer
    pattern: str
    declared: int | None  # the count this program declares


@dataclass
class ProgramPlan:
    name: str
    workgroup: tuple[int, int, int]
    sources: list[Access]
    dest: Access
    combine: str
    accumulate: bool = False
    tile: bool = False
    loop: str | None = (
        None  # None, "locals", "load" (a load inside the loop), "return" (a return inside)
    )
    early_return: bool = False
    accumulate_in_loop: bool = False
    trap: bool = False
    atomic: bool = False
    conditional: bool = False
    flag: Buffer | None = None
    output: bool = False
    counter: Buffer | None = None
    extra: list[Access] = field(default_factory=list)


@dataclass
class Chain:
    module: ModuleOp
    inputs: dict[str, np.ndarray]
    plans: list[ProgramPlan]

    def __str__(self) -> str:
        return str(self.module)


OPS_BY_TYPE = {
    "ui32": ("add", "sub", "mul", "bit_xor", "max", "min", "div"),
    "si32": ("add", "sub", "mul", "max", "safe_div", "div"),
    "f32": ("add", "sub", "mul", "max", "min"),
}
STORE_PATTERNS = ("id",) * 6 + ("rev", "shift", "stride3", "stride2")
LOAD_PATTERNS = ("id",) * 8 + (
    "rev",
    "shift",
    "shift_back",
    "stride3",
    "stride2",
    "gather",
    "first",
)


def make_chain(c) -> Chain:
    element = c.choice(("ui32", "ui32", "ui32", "si32", "f32"))
    mode = c.choice(("same", "same", "same", "mixed", "2d"))
    base = c.choice((4, 8, 16))
    uses_ids = mode != "mixed"
    size = c.choice(COUNTS)
    count = lambda: size if c.chance(75) else c.choice(COUNTS)  # noqa: E731
    pool: list[Buffer] = [
        Buffer("x0", element, count(), 0, is_input=True),
        Buffer("x1", element, count(), 0, is_input=True),
    ]
    if c.chance(20):
        pool[1].count = None  # runtime-sized input
    for buffer in pool:
        buffer.length = buffer.count or c.choice(COUNTS)
    index_buffer = Buffer("idx", "ui32", 32, 32, is_input=True)
    counter = Buffer("cnt", "ui32", 2, 2)
    written: list[Buffer] = []
    plans = []
    for k in range(c.integer(2, 6)):
        plans.append(
            _plan(c, k, element, mode, base, uses_ids, pool, written, index_buffer, counter, count)
        )
    return Chain(module_of([_build(plan, element) for plan in plans]), {}, plans)


def _workgroup(c, mode: str, base: int) -> tuple[int, int, int]:
    if mode == "mixed":
        return (c.choice((base // 2, base, base * 2)), 1, 1)
    if mode == "2d":
        return (base // 2, 2, 1)
    return (base, 1, 1)


def _plan(
    c, k, element, mode, base, uses_ids, pool, written, index_buffer, counter, count
) -> ProgramPlan:
    wg = _workgroup(c, mode, base)
    patterns = LOAD_PATTERNS + (("mirror",) if uses_ids else ())
    store_patterns = STORE_PATTERNS + (("mirror",) if uses_ids else ())
    readable = pool + written
    sources = []
    for _ in range(c.integer(1, 2)):
        buffer = c.choice(readable)
        pattern = c.choice(patterns)
        sources.append(Access(buffer, pattern, _declared(c, buffer)))
    accumulate = False
    rewritable = [w for w in written if w.element == element and w.name != "cnt"]
    if rewritable and c.chance(25):
        dest_buffer = c.choice(rewritable)  # write-after-write on an earlier program's buffer
        accumulate = c.chance(40) and mode != "2d"
    else:
        dest_buffer = Buffer(f"t{k}", element, count(), 0)
        dest_buffer.length = dest_buffer.count
        written.append(dest_buffer)
    # a program reads what it writes only at the store's own index
    sources = [s for s in sources if s.buffer is not dest_buffer] or [
        Access(c.choice(pool), "id", None)
    ]
    sources = [Access(s.buffer, s.pattern, s.declared) for s in sources]
    dest = Access(dest_buffer, c.choice(store_patterns), dest_buffer.count)
    plan = ProgramPlan(
        name=f"p{k}",
        workgroup=wg,
        sources=sources,
        dest=dest,
        combine=c.choice(OPS_BY_TYPE[element]),
        accumulate=accumulate,
        tile=uses_ids and c.chance(15),
        loop=c.choice((None,) * 7 + ("locals", "load", "return")),
        early_return=c.chance(15),
        trap=c.chance(5),
        atomic=c.chance(15),
        conditional=c.chance(20),
        output=c.chance(10),
    )
    if plan.atomic:
        plan.counter = counter
        plan.sources = [s for s in sources if s.buffer is not counter] or [
            Access(pool[0], "id", None)
        ]
    plan.accumulate_in_loop = accumulate and c.chance(50)
    if any(s.pattern == "gather" for s in sources):
        plan.extra.append(Access(index_buffer, "id", 32))
    if c.chance(15):
        flag = Buffer(f"f{k}", "i1", dest_buffer.count or 32, dest_buffer.count or 32)
        plan.flag = flag
        written.append(flag)
    if plan.counter is not None and counter not in written and c.chance(50):
        written.append(counter)
    return plan


def _declared(c, buffer: Buffer) -> int | None:
    """The count a reader declares: the buffer's own, or (sometimes) a shorter view."""
    if c.chance(15):
        return c.choice([n for n in COUNTS if n <= buffer.length] or [buffer.length])
    return buffer.count


# ====================================================================== building


def _build(plan: ProgramPlan, element: str):
    b = ProgramBuilder(plan.name, plan.workgroup)
    declared = _declarations(plan)
    slot = 0
    for name, (buffer, access, count, output) in declared.items():
        b.buffer(name, access, buffer.element, count, binding=slot, output=output)
        slot += 1
    if plan.tile:
        b.buffer("tile", "workgroup", element, plan.workgroup[0] * plan.workgroup[1])
    ctx = _Context(b, plan, element, declared)
    values = [ctx.load_source(s) for s in plan.sources]
    v = values[0]
    for other in values[1:]:
        v = ctx.combine(v, other)
    if plan.tile:
        v = ctx.tile_shuffle(v)
    if plan.loop:
        v = ctx.loop_accumulate(v, plan.loop)
    if plan.early_return:
        with b.if_(b.lt(v, ctx.threshold(1))):
            b.ret()
    if plan.trap:
        magic = ctx.threshold(7)
        with b.if_(b.eq(v, magic)):
            b.trap(ctx.i, "magic")
    if plan.atomic:
        zero = b.const(0, "ui32")
        one = b.const(1, "ui32")
        b.atomic("add", "cnt", zero, one)
    index = ctx.index(plan.dest)
    dest = plan.dest.buffer.name
    if (
        plan.accumulate_in_loop
    ):  # dest[e] = f(dest[e], v) twice: the second load reads this program's store
        with b.loop("again", ctx.u(0), ctx.u(2)):
            b.store(dest, index, ctx.combine(v, b.load(dest, index)))
    else:
        if plan.accumulate:
            v = ctx.combine(v, b.load(dest, index))
        if plan.conditional:
            with b.if_(b.gt(v, ctx.threshold(3))):
                b.store(dest, index, v)
        else:
            b.store(dest, index, v)
    if plan.flag is not None:
        b.store(plan.flag.name, ctx.i, b.gt(v, ctx.threshold(2)))
    return b.build()


def _declarations(plan: ProgramPlan) -> dict[str, tuple[Buffer, str, int | None, bool]]:
    """name -> (buffer, access, declared count, output), in first-use order."""
    declared: dict[str, tuple[Buffer, str, int | None, bool]] = {}
    for source in plan.sources + plan.extra:
        if source.buffer.name not in declared:
            declared[source.buffer.name] = (source.buffer, "read_only", source.declared, False)
    dest = plan.dest.buffer
    access = "read_write" if plan.accumulate else "write_only"
    declared[dest.name] = (dest, access, dest.count, plan.output)
    if plan.counter is not None:
        declared["cnt"] = (plan.counter, "write_only", 2, False)
    if plan.flag is not None:
        declared[plan.flag.name] = (plan.flag, "write_only", plan.flag.count, False)
    return declared


class _Context:
    def __init__(self, b: ProgramBuilder, plan: ProgramPlan, element: str, declared):
        self.b = b
        self.plan = plan
        self.element = element
        self.declared = declared
        self.i = self.element_index(b, plan.workgroup)

    @staticmethod
    def element_index(b: ProgramBuilder, workgroup: tuple[int, int, int]) -> SSAValue:
        """`invocation_id x` for a 1-D workgroup; for a 2-D one, which the derived
        grid launches along x only, the linear id `workgroup_id x * X*Y + local_id y
        * X + local_id x` (one invocation per element, as a covering grid needs)."""
        x, y, _ = workgroup
        if y == 1:
            return b.invocation_id("x", name="i")
        base = b.op("mul", b.workgroup_id("x"), b.const(x * y, "ui32"))
        row = b.op("mul", b.local_id("y"), b.const(x, "ui32"))
        return b.op("add", b.op("add", base, row), b.local_id("x"), name="i")

    def threshold(self, value: int) -> SSAValue:
        return self.b.const(float(value) if self.element == "f32" else value, self.element)

    def u(self, value: int) -> SSAValue:
        return self.b.const(value, "ui32")

    def count_of(self, access: Access) -> int:
        count = self.declared[access.buffer.name][2]
        return count if count is not None else access.buffer.length

    def index(self, access: Access) -> SSAValue:
        b, i, pattern = self.b, self.i, access.pattern
        if pattern == "id":
            return i
        if pattern == "rev":
            if self.declared[access.buffer.name][2] is None:
                return b.sub(b.sub(b.buf_len(access.buffer.name), self.u(1)), i)
            return b.sub(self.u(self.count_of(access) - 1), i)
        if pattern == "shift":
            return b.add(i, self.u(3))
        if pattern == "shift_back":
            return b.sub(i, self.u(2))
        if pattern == "stride3":
            return b.mul(i, self.u(3))
        if pattern == "stride2":
            return b.mul(i, self.u(2))
        if pattern == "mirror":  # the element index reversed within its workgroup
            wx, wy, _ = self.plan.workgroup
            base = b.mul(b.workgroup_id("x"), self.u(wx * wy))
            local = b.sub(i, base)
            return b.add(base, b.sub(self.u(wx * wy - 1), local))
        if pattern == "gather":
            return b.load("idx", i)
        if pattern == "first":
            return self.u(0)
        raise ValueError(pattern)

    def load_source(self, access: Access) -> SSAValue:
        value = self.b.load(access.buffer.name, self.index(access))
        if access.buffer.element == "i1":
            return self.b.select(value, self.threshold(5), self.threshold(0))
        if access.buffer.element != self.element:  # the ui32 counter
            return self.b.cast(value, self.element)
        return value

    def combine(self, a: SSAValue, b_: SSAValue) -> SSAValue:
        b, op = self.b, self.plan.combine
        if op == "safe_div":
            return b.div(a, b.bit_or(b_, self.threshold(1)))
        if op == "shr":
            return b.shr(a, self.u(1))
        return b.op(op, a, b_)

    def tile_shuffle(self, v: SSAValue) -> SSAValue:
        b = self.b
        wx, wy, _ = self.plan.workgroup
        local = b.add(b.local_id("x"), b.mul(b.local_id("y"), self.u(wx)))
        b.store("tile", local, v)
        b.barrier()
        mirrored = b.sub(self.u(wx * wy - 1), local)
        return b.load("tile", mirrored)

    def loop_accumulate(self, v: SSAValue, kind: str) -> SSAValue:
        """acc = v; for k in 0..3: acc += k (+ a source load, or a return at k == 1 when small)."""
        b = self.b
        b.let("acc", v)
        with b.loop("k", self.u(0), self.u(3)):
            k = b.var("k", "ui32")
            step = b.cast(k, self.element) if self.element != "ui32" else k
            if kind == "load":
                source = self.plan.sources[0]
                step = b.add(step, self.load_source(source))
            if kind == "return":
                with b.if_(b.eq(k, self.u(1))):
                    with b.if_(b.lt(b.var("acc", self.element), self.threshold(5))):
                        b.ret()
            b.assign("acc", b.add(b.var("acc", self.element), step))
        return b.var("acc", self.element)


# ====================================================================== inputs


def chain_inputs(sig, plans: Sequence[ProgramPlan], seed: int) -> dict[str, np.ndarray]:
    """Deterministic inputs for every buffer the run signature asks for."""
    lengths = {}
    for plan in plans:
        for access in plan.sources + plan.extra + [plan.dest]:
            lengths[access.buffer.name] = access.buffer.length
    return random_inputs(sig, seed, lengths)


def random_inputs(sig, seed: int, lengths: dict[str, int] | None = None) -> dict[str, np.ndarray]:
    """Small random values (si32 never INT_MIN) for every input of `sig`; a
    runtime-sized buffer gets `lengths[name]`, else its largest static count, else 64."""
    rng = np.random.default_rng(seed)
    inputs = {}
    for name in sig.inputs:
        buffer = sig[name]
        length = (
            buffer.count
            if buffer.count is not None
            else (lengths or {}).get(name) or buffer.min_count or 64
        )
        if name == "idx":
            inputs[name] = rng.integers(0, 80, length).astype(np.uint32)
        elif buffer.element == "ui32":
            inputs[name] = rng.integers(0, 40, length).astype(np.uint32)
        elif buffer.element == "si32":
            inputs[name] = rng.integers(-40, 40, length).astype(np.int32)
        elif buffer.element == "f32":
            inputs[name] = (rng.integers(-64, 64, length) / 8).astype(np.float32)
        elif ELEMENTS[buffer.element].family == "vector":  # (n, lanes) of small values
            info = ELEMENTS[buffer.element]
            lanes = rng.integers(0, 40, (length, info.lanes))
            inputs[name] = lanes.astype(ELEMENTS[info.lane].host)
        elif ELEMENTS[buffer.element].is_float:  # f16, bf16, f64: eighths, exact in each
            inputs[name] = (rng.integers(-64, 64, length) / 8).astype(buffer.host_dtype)
        else:
            inputs[name] = rng.integers(0, 2, length).astype(np.uint32)
    return inputs


# ====================================================================== outcomes


def outcome(run_it, outputs: Sequence[str]):
    """("trap", (tag, address, invocation)) or ("ok", {name: bytes}) of a run."""
    try:
        result = run_it()
    except VyreTrap as trap:
        return ("trap", (trap.tag, trap.address, trap.invocation))
    return ("ok", {name: _words(result[name]).tobytes() for name in outputs})


def _words(array) -> np.ndarray:
    """One 32-bit word per element (a run returns an i1 output as bool, the
    interpreter's host arrays hold it as 0/1 words)."""
    flat = np.asarray(array).reshape(-1)
    return flat.astype(np.uint32) if flat.dtype == np.bool_ else flat


def same(expected, got, *, tags: bool = True, allowed: set | None = None) -> bool:
    """Equal outputs byte for byte, or both trapped. With `tags`, the traps agree
    under SPEC 3.4: when `allowed` (every trapping (tag, address, invocation) of
    the run) holds one trap, or is not given, both report exactly it; when it
    holds several, each reports one of them."""
    if expected[0] == "trap" and got[0] == "trap":
        if not tags:
            return True
        if allowed is None or len(allowed) <= 1:
            return expected[1] == got[1] and (not allowed or expected[1] in allowed)
        return expected[1] in allowed and got[1] in allowed
    return expected == got


def trap_set(module: ModuleOp, buffers: dict[str, np.ndarray]) -> set[tuple[str, int, int]]:
    """Every (tag, address, invocation) that traps when the programs of `module`
    run one invocation at a time (each invocation alone, so every trapping one is
    seen), continuing with the later programs as a fused kernel's other
    invocations do."""
    host = {name: np.array(array, copy=True).reshape(-1) for name, array in buffers.items()}
    found: set[tuple[str, int, int]] = set()
    original = HANDLERS[BarrierOp]
    HANDLERS[BarrierOp] = _barrier_handler
    try:
        for program in programs(module):
            machine = _CollectingMachine(program, host)
            _run_scheduled_on(machine, program, np.random.default_rng(0))
            found |= machine.traps
    finally:
        HANDLERS[BarrierOp] = original
    return found


# ====================================================================== the scheduler


def _grid_segments(statements) -> list[list]:
    """Top-level statements split at grid_sync barriers."""
    segments: list[list] = [[]]
    for op in statements:
        if isinstance(op, BarrierOp) and op.is_grid_sync:
            segments.append([])
        else:
            segments[-1].append(op)
    return segments


class _Lane(threading.Thread):
    """One invocation running a stretch of statements, pausing at each workgroup barrier."""

    def __init__(self, machine: Machine, lane: int, frame: Frame, scope: Scope, ops: list):
        super().__init__(daemon=True)
        self.machine, self.lane, self.frame, self.scope, self.ops = machine, lane, frame, scope, ops
        self.resume = threading.Event()
        self.paused = threading.Event()
        self.done = False
        self.error: BaseException | None = None

    def run(self) -> None:
        self.resume.wait()
        self.resume.clear()
        try:
            self.frame.death_mark = self.machine.deaths
            self.machine.run_ops(self.ops, self.frame, self.scope)
        except BaseException as error:  # handed to the scheduler
            self.error = error
        self.done = True
        self.paused.set()

    def wait_at_barrier(self) -> None:
        self.paused.set()
        self.resume.wait()
        self.resume.clear()

    def step(self) -> None:
        """Let this lane run until its next barrier (or its end)."""
        self.paused.clear()
        self.resume.set()
        if not self.paused.wait(timeout=60):
            raise RuntimeError(f"lane {self.lane} did not reach a barrier")


class _ScheduledMachine(Machine):
    """The reference machine; a workgroup barrier pauses the running lane's thread."""

    def on_barrier(self) -> None:
        lane = threading.current_thread()
        assert isinstance(lane, _Lane), "a barrier outside a scheduled lane"
        lane.wait_at_barrier()


class _CollectingMachine(_ScheduledMachine):
    """Records every trap (each invocation runs alone, so each is its own record)."""

    def __init__(self, program, host):
        super().__init__(program, host)
        self.traps: set[tuple[str, int, int]] = set()

    def record_trap(self, tag: str, address: int, lane: int) -> None:
        self.traps.add((tag, int(address), int(lane)))
        super().record_trap(tag, address, lane)


def _barrier_handler(machine, op, frame, scope) -> None:
    if isinstance(machine, _ScheduledMachine):
        machine.on_barrier()


def execute_scheduled(
    module: ModuleOp, buffers: dict[str, np.ndarray], rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Run `module` one invocation at a time in a random barrier-respecting order."""
    host = {name: np.array(array, copy=True).reshape(-1) for name, array in buffers.items()}
    original = HANDLERS[BarrierOp]
    HANDLERS[BarrierOp] = _barrier_handler
    try:
        for program in programs(module):
            _run_scheduled(program, host, rng)
    finally:
        HANDLERS[BarrierOp] = original
    return host


def _run_scheduled(program, host, rng) -> None:
    machine = _ScheduledMachine(program, host)
    _run_scheduled_on(machine, program, rng)
    if machine.trap is not None:
        tag, address, invocation = machine.trap
        raise VyreTrap(tag, address, invocation, machine.name)


def _run_scheduled_on(machine, program, rng) -> None:
    threads = machine.launch.threads
    frames = [Frame(np.array([lane], dtype=np.int64)) for lane in range(machine.launch.lanes)]
    scopes = [Scope() for _ in frames]
    with np.errstate(all="ignore"):
        for segment in _grid_segments(list(program.statements())):
            for group in rng.permutation(machine.launch.workgroups):
                lanes = [int(group) * threads + local for local in range(threads)]
                _run_workgroup(
                    machine, [l for l in lanes if machine.alive[l]], frames, scopes, segment, rng
                )


def _has_barrier(ops) -> bool:
    return any(isinstance(inner, BarrierOp) for op in ops for inner in op.walk())


def _run_workgroup(machine, lanes, frames, scopes, ops, rng) -> None:
    """Run one workgroup's lanes through `ops`: each round, every lane in a random
    order runs to its next workgroup barrier (one thread per lane; without
    barriers, simply one lane after another)."""
    if not _has_barrier(ops):
        for position in rng.permutation(len(lanes)):
            lane = lanes[position]
            if machine.alive[lane]:
                frames[lane].death_mark = machine.deaths
                machine.run_ops(ops, frames[lane], scopes[lane])
        return
    running = [_Lane(machine, lane, frames[lane], scopes[lane], ops) for lane in lanes]
    for lane in running:
        lane.start()
    while running:
        for position in rng.permutation(len(running)):
            running[position].step()
        for lane in running:
            if lane.error is not None:
                raise lane.error
        running = [lane for lane in running if not lane.done]
