"""Random well-typed vyre modules with matching inputs.

Reusable by every test that needs programs it did not write by hand: the
GPU-versus-reference conformance suite, naga validation of the WGSL printer,
fusion fuzzing.

```python
from hypothesis import given
from vyre_xdsl.testing.generators import modules, random_module

@given(modules())
def test_something(case):
    case.module      # a verified builtin.module of 1-3 vyre.program ops
    case.inputs      # {buffer name: numpy array} matching abi.signature(case.module)
    case.tolerances  # {f32 buffer name: ULP tolerance}; 0 means equal
    ...

case = random_module(1234)          # the same thing without hypothesis
```

What a generated module contains (each with some probability): every op of
`vyre_xdsl.semantics.OPS` on every type it accepts, `select`, `fma`, `cast`,
`bitcast`, constants, loads and stores at in-bounds and out-of-bounds indices,
`buf_len`, the three id ops on every axis, `if`/`else`, counted loops with
named-local accumulators, `let`/`assign`/`var`, `block`/`region`, atomics,
workgroup buffers with barriers, runtime-sized buffers, `return` and `trap`,
calls of module-level `vyre.func`s (integer helpers with a named local and a loop).
Not generated: the subgroup ops, whose results depend on the subgroup size, which
differs between the reference and each GPU (tests/interpreter/test_subgroups.py covers them).

Every module is deterministic: whatever order invocations run in, and whether
its programs run one by one or fused into one kernel (when fusion accepts
them), the outputs are the same. The rules that guarantee it:

* a program writes a buffer only at its own invocation's index ("own") or at
  an index that is out of bounds; it reads a buffer it writes only at those
  indices too. Buffers it does not write it may read anywhere;
* contended atomics (many invocations, one element) use a single commutative
  kind per buffer and program (`add`, `or`, `and`, `xor`, `min`, `max`, or
  `exchange`/`compare_exchange` with constant operands) and discard the old
  value; atomics at the own index may use it;
* workgroup memory is used in phases separated by top-level barriers: in a
  write phase each lane writes (and reads) only its own slot; in a read phase
  lanes read any slot and nobody writes;
* signed divisors are made non-zero and not -1 with a `select`, except at one
  chosen invocation where the divisor is 0 (a division trap); `trap`
  statements fire for one invocation (`own == k`) or several (`own & m == k`),
  with an address computed from the invocation. Which of several trapping
  invocations a run reports is open (SPEC 3.4): `GeneratedModule.may_trap`
  says whether a reported (tag, address, invocation) is one that can trap,
  computed from the generator's own construction;
* a user `grid_sync` ends some programs: after it, the program reads a buffer
  it wrote before at another invocation's index (every write is complete) and
  writes another buffer at its own index; nothing computed before it is used
  after it;
* barriers also sit below the top level, in `block`, `region`, a one-trip
  `loop` or an `if` on a workgroup-uniform condition that always holds;
* tickets: every invocation below a buffer's count does `atomic add 1` on a
  counter and stores the old value; which invocation gets which ticket is
  open, so those buffers (`GeneratedModule.multisets`) are compared as
  multisets;
* NaN, infinities and subnormals reach arithmetic and comparisons in a
  dedicated pair of output buffers (`GeneratedModule.ieee_buffers`): WGSL lets
  a GPU assume finite math and flush subnormals, so only the reference
  configurations (unfused, fused) must agree on them exactly;
* a few modules launch a grid past 65535 workgroups (folded over y);
* f32 values are tracked in the abstract domain of
  `vyre_xdsl.testing.f32_domain`: only values that every implementation
  computes bit for bit reach integers, Bools, comparisons and bitcasts;
  approximate values reach only f32 outputs, with a tolerance computed from
  the ULP budgets of the ops they went through. No NaN, infinity or denormal
  reaches an arithmetic op; the operands of `exp`, `log`, `sin`, ... are
  clamped into ranges where the budgets of the semantics table hold.

Buffers, named locals and workgroup buffers of type f32 each carry a
*contract* (exact quarter-grid values in [-64, 64], approximate values with a
relative-error limit, or arbitrary bits) that every stored value is coerced
into, so loads are sound no matter which store they see.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from vyre_xdsl import semantics
from vyre_xdsl.abi import signature
from vyre_xdsl.diagnostics import verify_module
from vyre_xdsl.dialects import vyre as v
from vyre_xdsl.semantics import OPS
from vyre_xdsl.testing import f32_domain as fd
from vyre_xdsl.testing.f32_domain import F32, NEED_ANY, NEED_EXACT, NEED_FINITE

T = TypeVar("T")

U32_MAX = 0xFFFFFFFF
#: the integer types the generator uses (with f32 and i1, all of `TYPES`)
INT_TYPES = ("ui32", "si32", "ui8", "ui16", "si8", "si16", "ui64", "si64")
INT_RANGE = {t: semantics.ELEMENTS[t].int_range for t in (*INT_TYPES, "i1")}
TYPES = ("ui32", "si32", "f32", "i1", *INT_TYPES[2:])
#: how often each type is picked for a buffer, a local or a comparison
TYPE_WEIGHTS = [(t, 3 if t in ("ui32", "si32", "f32", "i1") else 2) for t in TYPES]
TRAP_TAGS = ("bad_index", "assert", "overflow")

# ============================================================================ choices


class Dice:
    """All random choices of the generator, drawn from one integer source.

    The source is `random.Random.randint` or a hypothesis `draw`; every choice
    shrinks toward its first option / False, so hypothesis shrinks toward
    small, simple modules.
    """

    def __init__(self, integer: Callable[[int, int], int]):
        self.integer = integer

    def int(self, lo: int, hi: int) -> int:
        return lo if hi <= lo else self.integer(lo, hi)

    def pick(self, options: Sequence[T]) -> T:
        return options[self.int(0, len(options) - 1)]

    def chance(self, percent: int) -> bool:
        return percent > 0 and self.int(0, 99) >= 100 - percent

    def weighted(self, options: Sequence[tuple[T, int]]) -> T:
        live = [(o, w) for o, w in options if w > 0]
        total = sum(w for _, w in live)
        roll = self.int(0, total - 1)
        for option, weight in live:
            if roll < weight:
                return option
            roll -= weight
        raise AssertionError("unreachable")


# ============================================================================ plans


@dataclass(frozen=True)
class Contract:
    """What every value stored into an f32 buffer, local or workgroup slot satisfies."""

    kind: str  # fd.EXACT, fd.APPROX, fd.SPECIAL
    k: float = 0.0

    @property
    def info(self) -> F32:
        if self.kind == fd.EXACT:
            return F32(fd.EXACT, -64.0, 64.0, 2, 0.0, 0.25)
        if self.kind == fd.APPROX:
            return F32(fd.APPROX, -(2.0**20), 2.0**20, 0, self.k, 2.0**-30)
        return fd.SPECIAL_VALUE

    @property
    def need(self) -> int:
        return {fd.EXACT: NEED_EXACT, fd.APPROX: NEED_FINITE}.get(self.kind, NEED_ANY)


@dataclass
class BufferPlan:
    """A host buffer of the module (shared by name between programs)."""

    name: str
    element: str
    count: int | None  # None: runtime-sized
    host_len: int
    contract: Contract | None

    @property
    def length(self) -> int:
        return self.host_len if self.count is None else self.count


READ, OWN, ATOMIC = "read", "own", "atomic"
TICKET_COUNTER, TICKET, IEEE = "ticket_counter", "ticket", "ieee"
#: a pair of dedicated buffers of one of `WIDE_TYPES`: read anywhere / written at own
WIDE = "wide"
#: the element types beyond ui32/si32/f32/i1 the generator uses, in their own buffers
WIDE_TYPES = ("f16", "bf16", "f64", "vector<2xui32>", "vector<4xui32>", "vector<4xf32>")
#: ops computed bit for bit on every backend for the values of a wide buffer (small
#: quarter-grid floats; any words for ui32 lanes): no mul, so no contraction into fma
WIDE_FLOAT_OPS = ("add", "sub", "min", "max", "neg", "abs", "floor", "ceil", "trunc", "round")
WIDE_UINT_OPS = ("add", "sub", "mul", "min", "max", "bit_xor", "bit_and", "shl", "rotate_left")
#: f32 bit patterns of IEEE special values (NaN, infinities, subnormals, extremes)
SPECIAL_BITS = (
    0x7FC00000,
    0xFFC00001,
    0x7F800000,
    0xFF800000,
    0x00000001,
    0x80000003,
    0x007FFFFF,
    0x00800000,
    0x7F7FFFFF,
    0xFF7FFFFF,
    0x80000000,
    0x00000000,
)


@dataclass
class Use:
    """How one program uses one buffer."""

    buffer: BufferPlan
    mode: str  # READ, OWN, ATOMIC
    access: str
    loadable: bool = True
    strict: bool = False  # only the own index, never out of bounds (fusion-friendly)
    atomic_kind: str = "add"
    atomic_operands: tuple[int, int] = (0, 0)  # expected, value for exchange kinds
    indices: set[str] = field(default_factory=set)  # "own", "oob", "any"
    written: bool = False
    accessed: bool = False


@dataclass
class Tile:
    name: str
    element: str
    count: int
    contract: Contract | None


@dataclass(frozen=True)
class Value:
    ssa: SSAValue
    ty: str
    f: F32 | None = None
    lo: int = 0
    hi: int = 0


@dataclass
class Local:
    ty: str
    contract: Contract | None
    loop: bool = False
    lo: int = 0
    hi: int = U32_MAX


@dataclass
class Frame:
    ops: list[Operation] = field(default_factory=list)
    values: list[Value] = field(default_factory=list)
    locals: dict[str, Local] = field(default_factory=dict)


@dataclass(frozen=True)
class GeneratorOptions:
    """Knobs of the generator; the defaults exercise everything."""

    max_programs: int = 3
    max_buffers: int = 5
    max_count: int = 150
    statements: int = 4  # top-level statements per barrier-separated segment (upper bound)
    depth: int = 3  # expression depth
    nesting: int = 2  # statement nesting (if / loop / block)
    atomics: bool = True
    workgroup_memory: bool = True
    runtime_sized: bool = True
    returns: bool = True
    traps: bool = True
    # cross-program sharing where a later program reads (or an earlier one
    # read) a shared written buffer at another invocation's index; fusion must
    # split or refuse such modules
    nonlocal_sharing: bool = True
    # percent of modules made purely elementwise (straight-line programs that
    # access every buffer at `invocation_id x`, counts multiples of 4): the
    # shape the WGSL printer's vec4 form applies to
    elementwise: int = 15
    # percent of programs that end with a user `grid_sync` phase
    grid_sync: int = 20
    # barriers inside block / region / one-trip loop / workgroup-uniform if
    nested_barriers: bool = True
    # percent of modules with an atomic ticket counter (old values compared as a multiset)
    tickets: int = 15
    # percent of modules where NaN / infinity / subnormal reach arithmetic and comparisons
    ieee_specials: int = 20
    # per cent of modules with a pair of buffers of one of WIDE_TYPES
    wide_types: int = 30
    # percent of modules whose grid exceeds 65535 workgroups (workgroup size 2)
    big_grid: int = 3
    # trap statements and trapping divisions per module (when `traps`)
    max_traps: int = 3


@dataclass
class GeneratedModule:
    module: ModuleOp
    inputs: dict[str, np.ndarray]
    tolerances: dict[str, float]  # f32 host buffer -> ULP tolerance (0: equal)
    features: frozenset[str]
    has_trap: bool
    # why `vyre-fuse` may legitimately refuse (or split) this module:
    # "nonlocal_sharing" (a shared written buffer accessed at another
    # invocation's index), "workgroup_mismatch" (programs of different sizes),
    # "grid_sync" (a program with a user grid_sync)
    fusion_hazards: frozenset[str]
    # every way the module can trap: (tag, mask, match, address multiplier,
    # address addend): invocation i may trap when i & mask == match, with
    # address i * multiplier + addend (mod 2**32)
    trap_patterns: tuple[tuple[str, int, int, int, int], ...] = ()
    # ui32 buffers whose values are compared as multisets (atomic tickets)
    multisets: frozenset[str] = frozenset()
    # buffers fed by IEEE special values through arithmetic: compared exactly
    # between reference configurations, only by shape and dtype on a GPU
    ieee_buffers: frozenset[str] = frozenset()

    @property
    def nonlocal_sharing(self) -> bool:
        return "nonlocal_sharing" in self.fusion_hazards

    def may_trap(self, trap: tuple[str, int, int]) -> bool:
        """Whether (tag, address, invocation) is a trap this module can raise."""
        tag, address, invocation = trap
        return any(
            tag == t
            and invocation & mask == match
            and address == (invocation * mul + add) & U32_MAX
            for t, mask, match, mul, add in self.trap_patterns
        )

    @property
    def text(self) -> str:
        return str(self.module)

    def __repr__(self) -> str:
        # short: hypothesis prints a failing example's arguments, and walking the
        # module's IR objects field by field takes unbounded time (the text is
        # reported through `note`)
        names = ", ".join(sorted(self.inputs))
        return f"GeneratedModule(<{len(self.text)} chars of IR>, inputs: {names})"

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        printer.text(repr(self))


# ============================================================================ module


def generate(dice: Dice, options: GeneratorOptions = GeneratorOptions()) -> GeneratedModule:
    """One random module with inputs, from the choices of `dice`."""
    return _ModuleGen(dice, options).build()


def random_module(seed: int, options: GeneratorOptions = GeneratorOptions()) -> GeneratedModule:
    """The module of `seed` (deterministic; no hypothesis needed)."""
    return generate(Dice(random.Random(seed).randint), options)


def modules(options: GeneratorOptions = GeneratorOptions()):
    """A hypothesis strategy of `GeneratedModule`s."""
    from hypothesis import strategies as st

    @st.composite
    def strategy(draw):
        return generate(Dice(lambda lo, hi: draw(st.integers(lo, hi))), options)

    return strategy()


WORKGROUP_SIZES_1D = (64, 1, 2, 4, 8, 16, 32, 3, 5, 7, 12, 100, 128, 256)
WORKGROUP_SIZES_ND = ((4, 2, 1), (2, 2, 2), (8, 4, 1), (3, 3, 1), (2, 1, 4))


class _ModuleGen:
    def __init__(self, dice: Dice, options: GeneratorOptions):
        self.dice = dice
        self.options = options
        self.features: set[str] = set()
        self.stored_k: dict[str, float] = {}
        self.has_trap = False
        self.hazards: set[str] = set()
        self.trap_patterns: list[tuple[str, int, int, int, int]] = []
        self.multisets: set[str] = set()
        self.ieee_buffers: set[str] = set()
        self.big_grid = False

    # ------------------------------------------------------------------ plan

    def build(self) -> GeneratedModule:
        d = self.dice
        self.elementwise = d.chance(self.options.elementwise)
        if self.elementwise:
            self.options = replace(
                self.options,
                atomics=False,
                workgroup_memory=False,
                runtime_sized=False,
                returns=False,
                traps=False,
                nesting=0,
                nonlocal_sharing=False,
            )
            self.features.add("elementwise")
        n_programs = d.int(1, self.options.max_programs)
        self.big_grid = not self.elementwise and d.chance(self.options.big_grid)
        # workgroup size 2 (size 1 lets the lowering pick a wider kernel workgroup)
        self.workgroup = (2, 1, 1) if self.big_grid else self._workgroup()
        self.buffers = [self._buffer(i) for i in range(d.int(1, self.options.max_buffers))]
        plans = [self._uses(p) for p in range(n_programs)]
        if self.big_grid:
            self._plan_big_grid(plans[0])
        self._share_strictly(plans)
        self._plan_extras(plans)
        shapes = [self._shape() for _ in plans]
        grid_syncs = [not self.elementwise and d.chance(self.options.grid_sync) for _ in plans]
        # a divergent return or trap before a barrier is illegal (or deadlocks
        # on a GPU) once fusion puts the programs into one kernel; and an arm
        # with barriers must keep the fused workgroup size
        self.barrier_free = not any(barriers for _, barriers in shapes) and not any(grid_syncs)
        self.called: set[str] = set()
        programs = [
            _ProgramGen(self, f"p{p}", uses, *shape, grid_sync=sync).build()
            for p, (uses, shape, sync) in enumerate(zip(plans, shapes, grid_syncs))
        ]
        module = ModuleOp([*(helper_func(ty) for ty in sorted(self.called)), *programs])
        verify_module(module)
        return GeneratedModule(
            module=module,
            inputs=self._inputs(module),
            tolerances=self._tolerances(),
            features=frozenset(self.features),
            has_trap=self.has_trap,
            fusion_hazards=frozenset(
                self.hazards | ({"nonlocal_sharing"} if self._nonlocal(plans) else set())
            ),
            trap_patterns=tuple(self.trap_patterns),
            multisets=frozenset(self.multisets),
            ieee_buffers=frozenset(self.ieee_buffers),
        )

    def _plan_big_grid(self, uses: list[Use]) -> None:
        """A buffer of more than 2 * 65535 elements, written at the own index by
        the first program (workgroup size 2): a grid past 65535 workgroups."""
        big = self.buffers[0]
        big.host_len = 2 * 65535 + self.dice.int(1, 3000)
        big.count = big.host_len  # static: the grid is known when lowering
        uses[:] = [u for u in uses if u.buffer is not big]
        uses.append(Use(big, OWN, "write_only", loadable=False))
        self.features.add("big_grid")

    def _plan_extras(self, plans: list[list[Use]]) -> None:
        """Ticket counters and IEEE-special sinks: dedicated buffers, each used by
        one program only."""
        d = self.dice
        if self.elementwise:
            return
        if self.options.atomics and d.chance(self.options.tickets):
            index = len(self.buffers)
            counter = BufferPlan(f"ctr{index}", "ui32", d.pick((1, 2, 4)), 0, None)
            counter.host_len = counter.count
            tickets = BufferPlan(f"tix{index}", "ui32", d.int(1, self.options.max_count), 0, None)
            tickets.host_len = tickets.count
            self.buffers += [counter, tickets]
            program = d.pick(plans)
            program += [
                # never loaded: other invocations add to it meanwhile, in any order
                Use(counter, TICKET_COUNTER, "read_write", loadable=False),
                Use(tickets, TICKET, "write_only", loadable=False),
            ]
            self.multisets.add(tickets.name)
        if d.chance(self.options.wide_types):
            index = len(self.buffers)
            element = d.pick(WIDE_TYPES)
            count = d.int(1, self.options.max_count)
            source = BufferPlan(f"wide{index}", element, count, count, None)
            sink = BufferPlan(f"wideo{index}", element, count, count, None)
            self.buffers += [source, sink]
            d.pick(plans).extend(
                [Use(source, WIDE, "read_only"), Use(sink, WIDE, "write_only", loadable=False)]
            )
            self.features.add(f"type:{element}")
        if d.chance(self.options.ieee_specials):
            index = len(self.buffers)
            count = d.int(1, self.options.max_count)
            values = BufferPlan(f"ieee{index}", "f32", count, count, None)
            flags = BufferPlan(f"ieeeb{index}", "i1", count, count, None)
            self.buffers += [values, flags]
            d.pick(plans).extend(
                [
                    Use(values, IEEE, "write_only", loadable=False),
                    Use(flags, IEEE, "write_only", loadable=False),
                ]
            )
            self.ieee_buffers |= {values.name, flags.name}

    def _shape(self) -> tuple[bool, int]:
        """(uses workgroup memory, number of barriers) of one program."""
        if self.elementwise:
            return False, 0
        tile = self.options.workgroup_memory and self.dice.chance(25)
        return tile, self.dice.int(1, 3) if tile else (1 if self.dice.chance(8) else 0)

    def _workgroup(self) -> tuple[int, int, int]:
        if self.elementwise:
            return (self.dice.pick(WORKGROUP_SIZES_1D[2:]), 1, 1)
        if self.dice.chance(15):
            return self.dice.pick(WORKGROUP_SIZES_ND)
        return (self.dice.pick(WORKGROUP_SIZES_1D), 1, 1)

    def _buffer(self, index: int) -> BufferPlan:
        d = self.dice
        element = d.weighted(TYPE_WEIGHTS)
        count = d.weighted([("small", 6), ("zero", 1), ("large", 2)])
        length = {"small": d.int(1, self.options.max_count), "zero": 0}.get(
            count, d.int(self.options.max_count, 4 * self.options.max_count)
        )
        if self.elementwise:
            length = 4 * max(1, length // 4)
        # the wgpu backend needs the count of a buffer of 8/16-bit values (it packs them)
        runtime = (
            self.options.runtime_sized
            and length > 0
            and element not in semantics.PACKED_TYPES
            and d.chance(15)
        )
        contract = None
        if element == "f32":
            kind = d.weighted([(fd.EXACT, 6), (fd.APPROX, 3), (fd.SPECIAL, 1)])
            contract = Contract(kind, d.pick((64.0, 512.0, fd.MAX_K)) if kind == fd.APPROX else 0.0)
        if runtime:
            self.features.add("runtime_sized")
        if length == 0:
            self.features.add("zero_count")
        return BufferPlan(f"b{index}", element, None if runtime else length, length, contract)

    def _uses(self, program: int) -> list[Use]:
        d = self.dice
        chosen = [b for b in self.buffers if d.chance(70)] or [d.pick(self.buffers)]
        uses = [self._use(b) for b in chosen]
        if not any(u.mode != READ for u in uses):
            uses[0] = self._use(uses[0].buffer, writable=True)
        order = list(range(len(uses)))
        # a random binding order (the permutation shrinks to the identity)
        for i in range(len(order) - 1, 0, -1):
            j = d.int(0, i)
            order[i], order[j] = order[j], order[i]
        return [uses[i] for i in order]

    def _use(self, buffer: BufferPlan, writable: bool = False) -> Use:
        d = self.dice
        atomic_ok = self.options.atomics and buffer.element == "ui32"
        mode = d.weighted([(OWN, 5), (READ, 0 if writable else 4), (ATOMIC, 2 if atomic_ok else 0)])
        runtime = buffer.count is None
        if mode == READ:
            access = d.weighted([("read_only", 7), ("uniform", 1), ("read_write", 2)])
            return Use(buffer, READ, access)
        access = "read_write" if runtime else d.weighted([("read_write", 4), ("write_only", 1)])
        use = Use(buffer, mode, access, loadable=access != "write_only")
        if mode == ATOMIC:
            use.atomic_kind = d.pick(
                ("add", "or", "and", "xor", "min", "max", "exchange", "compare_exchange")
            )
            use.atomic_operands = (d.int(0, 3), d.int(0, 9))
        return use

    def _share_strictly(self, plans: list[list[Use]]) -> None:
        """Without nonlocal sharing, buffers written somewhere and used by several
        programs are only accessed at the own index."""
        if self.elementwise:
            for use in (u for uses in plans for u in uses):
                use.strict = True  # every access at invocation_id x
        if self.options.nonlocal_sharing:
            return
        for buffer in self.buffers:
            users = [u for uses in plans for u in uses if u.buffer is buffer]
            if len(users) < 2 or all(u.mode == READ for u in users):
                continue
            for use in users:
                use.mode, use.strict = OWN, True
                if use.access in ("read_only", "uniform"):
                    use.access = "read_write"
                use.loadable = use.access != "write_only"

    def _nonlocal(self, plans: list[list[Use]]) -> bool:
        for buffer in self.buffers:
            users = [u for uses in plans for u in uses if u.buffer is buffer and u.accessed]
            if len(users) < 2 or not any(u.written for u in users):
                continue
            if any(u.indices - {"own"} for u in users):
                return True
        return False

    # ------------------------------------------------------------------ results

    def _inputs(self, module: ModuleOp) -> dict[str, np.ndarray]:
        sig = signature(module)
        by_name = {b.name: b for b in self.buffers}
        return {name: self._data(by_name[name]) for name in sig.inputs}

    def _data(self, buffer: BufferPlan) -> np.ndarray:
        d = self.dice
        n = buffer.length
        seed = d.int(0, 2**31 - 1)
        rng = np.random.default_rng(seed)
        if buffer.element == "f32":
            if buffer.contract is not None and buffer.contract.kind == fd.SPECIAL:
                specials = np.array(
                    [
                        np.nan,
                        np.inf,
                        -np.inf,
                        -0.0,
                        0.0,
                        3.0e38,
                        -2.0e-38,
                        1.0,
                        -2.5,
                        65504.0,
                        1e-40,
                        -3e-43,
                    ],
                    dtype=np.float32,
                )
                return specials[rng.integers(0, len(specials), n)]
            return (rng.integers(-256, 257, n) / 4.0).astype(np.float32)
        if buffer.element == "i1":
            words = np.array([0, 1, 0, 1, 2, U32_MAX], dtype=np.uint32)
            return words[rng.integers(0, len(words), n)]
        info = semantics.ELEMENTS[buffer.element]
        if info.family == "vector":
            lanes = info.lanes * n
            if info.lane == "f32":
                values = (rng.integers(-256, 257, lanes) / 4.0).astype(np.float32)
            else:
                values = rng.integers(0, 2**32, lanes, dtype=np.uint64).astype(np.uint32)
            return semantics.vector_records(values.reshape(n, info.lanes), info.host)
        if info.is_float:  # quarters in [-64, 64]: exact in f16, bf16 and f64
            return (rng.integers(-256, 257, n) / 4.0).astype(info.host)
        if buffer.element not in ("ui32", "si32"):
            return _narrow_data(rng, buffer.element, n)
        small = rng.integers(0, 11, n)
        wide = rng.integers(0, 2**32, n, dtype=np.uint64)
        edges = np.array([0, 1, 2**31 - 1, 2**31, U32_MAX, 31, 32], dtype=np.uint64)[
            rng.integers(0, 7, n)
        ]
        pick = rng.integers(0, 3, n)
        words = np.where(pick == 0, small, np.where(pick == 1, wide, edges)).astype(np.uint32)
        return words if buffer.element == "ui32" else words.view(np.int32)

    def _tolerances(self) -> dict[str, float]:
        return {b.name: self.stored_k.get(b.name, 0.0) for b in self.buffers if b.element == "f32"}


# ============================================================================ program


class _ProgramGen:
    """Generates the body of one program into nested frames of ops."""

    def __init__(
        self,
        mod: _ModuleGen,
        name: str,
        uses: list[Use],
        uses_tile: bool,
        barriers: int,
        grid_sync: bool = False,
    ):
        self.mod = mod
        self.d = mod.dice
        self.opt = mod.options
        self.name = name
        self.uses = uses
        self.frames: list[Frame] = [Frame()]
        self.phase = "write"
        self.local_counter = 0
        self.statement_budget = 30
        self.loop_depth = 0
        self.uses_tile = uses_tile
        self.barriers = barriers
        self.grid_sync = grid_sync
        self.after_grid_sync = False
        self.tile: Tile | None = None

    # ------------------------------------------------------------------ plumbing

    def emit(self, op: Operation) -> Operation:
        self.frames[-1].ops.append(op)
        return op

    def value(
        self,
        op: Operation,
        ty: str,
        f: F32 | None = None,
        lo: int | None = None,
        hi: int | None = None,
        keep: bool = True,
    ) -> Value:
        self.emit(op)
        full_lo, full_hi = INT_RANGE.get(ty, (0, 0))
        val = Value(
            op.results[0], ty, f, full_lo if lo is None else lo, full_hi if hi is None else hi
        )
        if keep:
            self.frames[-1].values.append(val)
        return val

    def feature(self, name: str) -> None:
        self.mod.features.add(name)

    def nested(
        self, body: Callable[[], None], locals_: dict[str, Local] | None = None
    ) -> list[Operation]:
        self.frames.append(Frame(locals=dict(locals_ or {})))
        body()
        self.sink()
        return self.frames.pop().ops

    def visible_locals(self) -> dict[str, Local]:
        merged: dict[str, Local] = {}
        for frame in self.frames:
            merged.update(frame.locals)
        return merged

    def pool(self, ty: str) -> list[Value]:
        return [val for frame in self.frames for val in frame.values if val.ty == ty]

    # ------------------------------------------------------------------ program

    def build(self) -> v.ProgramOp:
        d = self.d
        uses_tile, barriers = self.uses_tile, self.barriers
        wg = self.mod.workgroup
        if (
            self.mod.barrier_free
            and not self.mod.elementwise
            and wg[1] == wg[2] == 1
            and d.chance(15)
        ):
            wg = (max(1, wg[0] * d.pick((2, 1))) if wg[0] <= 128 else wg[0] // 2, 1, 1)
        if wg != self.mod.workgroup:
            self.mod.hazards.add("workgroup_mismatch")
        self.wg = wg
        self.threads = wg[0] * wg[1] * wg[2]
        if uses_tile:
            element = d.weighted(TYPE_WEIGHTS)
            contract = Contract(d.pick((fd.EXACT, fd.APPROX)), 512.0) if element == "f32" else None
            self.tile = Tile(
                f"tile_{self.name}", element, self.threads + d.pick((0, 0, 3)), contract
            )
            self.feature("workgroup_memory")
        self.own = self._own_index()
        self.lane = self._lane_index() if self.tile else None
        for segment in range(barriers + 1):
            if segment:
                self.emit_barrier()
                self.phase = "read" if self.phase == "write" else "write"
            for _ in range(d.int(1, self.opt.statements)):
                self.statement(self.opt.nesting)
        self._finish()
        self._tickets()
        self._ieee_specials()
        self._wide_types()
        if self.grid_sync:
            self._grid_sync_phase()
        declarations = [self._declaration(slot, use) for slot, use in enumerate(self.uses)]
        if self.tile is not None:
            declarations.append(
                v.BufferOp(self.tile.name, "workgroup", self.tile.element, self.tile.count)
            )
        return v.ProgramOp(self.name, self.wg, declarations + self.frames[0].ops)

    def emit_barrier(self) -> None:
        """A workgroup barrier at the top level, or nested under control flow that
        every invocation of the workgroup takes (block, region, a one-trip loop,
        an `if` on a workgroup-uniform condition that always holds)."""
        d = self.d
        barrier = v.BarrierOp(d.pick(("seq_cst", "seq_cst", "acquire", "release", "acq_rel")))
        self.feature("barrier")
        where = (
            d.pick(("top", "top", "block", "region", "loop", "if"))
            if self.opt.nested_barriers
            else "top"
        )
        if where == "top":
            self.emit(barrier)
            return
        self.feature(f"barrier_in_{where}")
        if where == "block":
            self.emit(v.BlockOp([barrier]))
        elif where == "region":
            self.emit(v.RegionOp("generator.barrier", [barrier]))
        elif where == "loop":
            lo = self.const_int("ui32", 0)
            hi = self.const_int("ui32", 1)
            self.emit(v.LoopOp(self.fresh_local().replace("acc", "k"), lo.ssa, hi.ssa, [barrier]))
        else:
            wid = self.value(v.WorkgroupIdOp("x"), "ui32", keep=False)
            top = self.const_int("ui32", U32_MAX)
            always = self.value(TABLE("le")(wid.ssa, top.ssa), "i1", keep=False)
            self.emit(v.IfOp(always.ssa, [barrier]))

    # ------------------------------------------------------------------ extras

    def _tickets(self) -> None:
        """`if own < n { old = atomic add ctr[own & (slots-1)], 1; tix[own] = old }`:
        which invocation gets which ticket is open; the multiset is not."""
        counter = next((u for u in self.uses if u.mode == TICKET_COUNTER), None)
        tickets = next((u for u in self.uses if u.mode == TICKET), None)
        if counter is None or tickets is None:
            return
        n = self.const_int("ui32", tickets.buffer.count)
        below = self.value(TABLE("lt")(self.own.ssa, n.ssa), "i1", keep=False)
        mask = self.const_int("ui32", counter.buffer.count - 1)
        slot = v.TABLE_OPS["bit_and"](self.own.ssa, mask.ssa)
        one = v.ConstOp(1, "ui32")
        old = v.AtomicOp("add", counter.buffer.name, slot.results[0], one.results[0], None)
        store = v.StoreOp(tickets.buffer.name, self.own.ssa, old.results[0])
        self.emit(v.IfOp(below.ssa, [slot, one, old, store]))
        self.feature("tickets")

    def _ieee_specials(self) -> None:
        """NaN, infinities and subnormals through arithmetic and comparisons, into
        buffers only the reference configurations compare exactly."""
        values = next((u for u in self.uses if u.mode == IEEE and u.buffer.element == "f32"), None)
        flags = next((u for u in self.uses if u.mode == IEEE and u.buffer.element == "i1"), None)
        if values is None or flags is None:
            return
        d = self.d
        special = self._special_value()
        other = self._special_value() if d.chance(40) else self.f32(NEED_FINITE, 1)
        a, b = (special, other) if d.chance(50) else (other, special)
        name = d.pick(("add", "sub", "mul", "div", "min", "max"))
        result = self.value(TABLE(name)(a.ssa, b.ssa), "f32", fd.SPECIAL_VALUE, keep=False)
        if d.chance(50):
            result = self.value(
                TABLE(d.pick(("sqrt", "exp", "floor", "abs", "neg")))(result.ssa),
                "f32",
                fd.SPECIAL_VALUE,
                keep=False,
            )
        self.emit(v.StoreOp(values.buffer.name, self.own.ssa, result.ssa))
        compare = d.pick(("lt", "le", "gt", "ge", "eq", "ne"))
        flag = self.value(TABLE(compare)(a.ssa, b.ssa), "i1", keep=False)
        self.emit(v.StoreOp(flags.buffer.name, self.own.ssa, flag.ssa))
        self.feature(f"ieee:{name}")
        self.feature(f"ieee:{compare}")

    def _wide_types(self) -> None:
        """A chain of ops on a type beyond ui32/si32/f32/i1 (f16, bf16, f64, a vector):
        loaded from its own read-only buffer at the own index and at a fixed one,
        stored at the own index of its own output buffer. The ops give the same
        bits on every backend (`WIDE_FLOAT_OPS`, `WIDE_UINT_OPS`)."""
        source = next((u for u in self.uses if u.mode == WIDE and u.access == "read_only"), None)
        sink = next((u for u in self.uses if u.mode == WIDE and u.access == "write_only"), None)
        if source is None or sink is None:
            return
        d = self.d
        ty = source.buffer.element
        info = semantics.ELEMENTS[ty]
        fixed = self.value(v.ConstOp(d.int(0, source.buffer.count - 1), "ui32"), "ui32", keep=False)
        a = self.value(v.LoadOp(source.buffer.name, self.own.ssa, ty), ty, keep=False)
        b = self.value(v.LoadOp(source.buffer.name, fixed.ssa, ty), ty, keep=False)
        lane = info.lane or ty
        ops = WIDE_FLOAT_OPS if semantics.ELEMENTS[lane].is_float else WIDE_UINT_OPS
        result = a
        names = [n for n in ops if ty in OPS[n].types]
        for k in range(len(names) - 1, 0, -1):  # every op once, in a random order
            j = d.int(0, k)
            names[k], names[j] = names[j], names[k]
        for name in names:
            operands = [result] if OPS[name].kind == "unary" else [result, d.pick((a, b, result))]
            result = self.value(TABLE(name)(*(x.ssa for x in operands)), ty, keep=False)
            self.feature(f"{name}:{ty}")
        if info.family == "vector" and d.chance(50):  # lanes out and back, rotated
            parts = [
                self.value(v.ExtractOp(result.ssa, k), lane, keep=False) for k in range(info.lanes)
            ]
            parts = parts[1:] + parts[:1]
            result = self.value(v.FromElementsOp([p.ssa for p in parts], ty), ty, keep=False)
            self.feature(f"from_elements:{ty}")
        elif info.is_float and d.chance(50):  # through f32 and back (exact both ways)
            wide = self.value(v.CastOp(result.ssa, "f32"), "f32", keep=False)
            result = self.value(v.CastOp(wide.ssa, ty), ty, keep=False)
            self.feature(f"cast:{ty}:f32")
        same = self.value(TABLE(d.pick(("eq", "ne")))(result.ssa, a.ssa), "i1", keep=False)
        result = self.value(v.SelectOp(same.ssa, b.ssa, result.ssa), ty, keep=False)
        self.emit(v.StoreOp(sink.buffer.name, self.own.ssa, result.ssa))

    def _special_value(self) -> Value:
        """An f32 that is NaN, an infinity, a subnormal or an extreme for some
        invocations (bits chosen per invocation from a loaded or constant word)."""
        d = self.d
        bits = self.const_int("ui32", d.pick(SPECIAL_BITS))
        if d.chance(60):
            choice = self.mask(self.own, 1)
            zero = self.const_int("ui32", 0)
            odd = self.value(TABLE("eq")(choice.ssa, zero.ssa), "i1", keep=False)
            other = self.const_int("ui32", d.pick(SPECIAL_BITS))
            bits = self.value(v.SelectOp(odd.ssa, bits.ssa, other.ssa), "ui32", keep=False)
        return self.value(v.BitcastOp(bits.ssa, "f32"), "f32", fd.SPECIAL_VALUE, keep=False)

    def _grid_sync_phase(self) -> None:
        """`grid_sync`, then read a buffer written before it at another
        invocation's index and store that at the own index of another buffer.
        Nothing computed before the grid_sync is used after it."""
        d = self.d
        sources = [
            u for u in self.uses if u.mode == OWN and u.written and u.loadable and not u.strict
        ]
        if not sources:
            return
        source = d.pick(sources)
        integers = ("ui32", "si32", "i1")
        targets = [
            u
            for u in self.uses
            if u.mode == OWN
            and u is not source
            and not u.strict
            and (
                u.buffer.element == source.buffer.element
                or {u.buffer.element, source.buffer.element} <= set(integers)
            )
        ]
        if not targets:
            return
        target = d.pick(targets)
        self.emit(v.BarrierOp("grid_sync"))
        self.feature("grid_sync")
        self.mod.hazards.add("grid_sync")
        self.after_grid_sync = True
        for frame in self.frames:
            frame.values.clear()
            frame.locals.clear()
        self.own = self._own_index()
        if source.buffer.count is None:
            length = self.value(v.BufLenOp(source.buffer.name), "ui32", keep=False)
        else:
            length = self.const_int("ui32", max(1, source.buffer.count))
        shift = self.const_int("ui32", d.int(1, 70))
        total = self.value(TABLE("add")(self.own.ssa, shift.ssa), "ui32", keep=False)
        index = self.value(TABLE("mod")(total.ssa, length.ssa), "ui32", keep=False)
        source.indices.add("any")
        info = source.buffer.contract.info if source.buffer.contract else None
        loaded = self.value(
            v.LoadOp(source.buffer.name, index.ssa, source.buffer.element),
            source.buffer.element,
            info,
            keep=False,
        )
        if loaded.ty != target.buffer.element:
            loaded = self.cast(loaded, target.buffer.element)
        value = self.fit(loaded, target.buffer.element, target.buffer.contract)
        self.emit(v.StoreOp(target.buffer.name, self.own.ssa, value.ssa))
        target.indices.add("own")

    def _declaration(self, slot: int, use: Use) -> v.BufferOp:
        output = use.access in ("read_only", "write_only") and self.d.chance(15)
        return v.BufferOp(
            use.buffer.name, use.access, use.buffer.element, use.buffer.count, slot, output
        )

    def _own_index(self) -> Value:
        """A unique linear id per invocation (invocation_id x for 1-D workgroups)."""
        x, y, z = self.wg
        if y == z == 1:
            return self.value(v.InvocationIdOp("x"), "ui32", lo=0, hi=2**20)
        lane = self._lane_index()
        wid = self.value(v.WorkgroupIdOp("x"), "ui32", keep=False)
        threads = self.value(v.ConstOp(self.threads, "ui32"), "ui32", keep=False)
        base = self.value(v.TABLE_OPS["mul"](wid.ssa, threads.ssa), "ui32", keep=False)
        return self.value(v.TABLE_OPS["add"](base.ssa, lane.ssa), "ui32", lo=0, hi=2**20)

    def _lane_index(self) -> Value:
        x, y, z = self.wg
        if y == z == 1:
            return self.value(v.LocalIdOp("x"), "ui32", lo=0, hi=x - 1)
        lx = self.value(v.LocalIdOp("x"), "ui32", keep=False)
        ly = self.value(v.LocalIdOp("y"), "ui32", keep=False)
        lz = self.value(v.LocalIdOp("z"), "ui32", keep=False)
        cy = self.value(v.ConstOp(y, "ui32"), "ui32", keep=False)
        cx = self.value(v.ConstOp(x, "ui32"), "ui32", keep=False)
        zy = self.value(v.TABLE_OPS["mul"](lz.ssa, cy.ssa), "ui32", keep=False)
        zy = self.value(v.TABLE_OPS["add"](zy.ssa, ly.ssa), "ui32", keep=False)
        zyx = self.value(v.TABLE_OPS["mul"](zy.ssa, cx.ssa), "ui32", keep=False)
        return self.value(v.TABLE_OPS["add"](zyx.ssa, lx.ssa), "ui32", lo=0, hi=self.threads - 1)

    def _finish(self) -> None:
        """Touch every planned buffer once, sink unused values, write every
        buffer planned as written."""
        for use in self.uses:
            if use.mode == READ and not use.accessed:
                self.load(use)
        self.sink()
        for use in self.uses:
            if use.mode == OWN and not use.written:
                self.store(use, index=self.own)
            elif use.mode == ATOMIC and not use.written:
                self.atomic_contended(use)

    # ------------------------------------------------------------------ sinks

    def sink(self) -> None:
        """Fold the values of the current frame that nothing uses into a
        read-modify-write store at the own index (or an assignment), so that
        most generated code affects an output."""
        unused: dict[str, list[Value]] = {}
        for val in self.frames[-1].values:
            if not val.ssa.uses:
                unused.setdefault(val.ty, []).append(val)
        for ty, values in unused.items():
            if ty == "f32":
                for kind in (fd.EXACT, fd.APPROX, fd.SPECIAL):
                    group = [val for val in values if val.f.kind == kind]
                    if group:
                        self.sink_value(ty, self.fold(group))
            else:
                self.sink_value(ty, self.fold(values))

    def sink_value(self, ty: str, value: Value) -> None:
        targets = [u for u in self.uses if u.mode == OWN and u.buffer.element == ty]
        locals_ = [
            (n, loc) for n, loc in self.visible_locals().items() if loc.ty == ty and not loc.loop
        ]
        if targets and (not locals_ or self.d.chance(75)):
            use = self.d.pick(targets)
            if use.loadable and self.d.chance(70):
                old = self.load_at(use, self.own)
                value = self.fold([old, value])
            self.store_into(use, value, self.own)
            self.feature("sink")
        elif locals_:
            name, local = self.d.pick(locals_)
            self.assign(name, local, value)

    def fold(self, values: list[Value]) -> Value:
        """One value that depends on every value of `values` (all of one type)."""
        result = values[0]
        for other in values[1:]:
            result = self.combine(result, other)
        return result

    def combine(self, a: Value, b: Value) -> Value:
        ty = a.ty
        if ty == "i1":
            name = self.d.pick(("ne", "and", "or"))
            return self.value(TABLE(name)(a.ssa, b.ssa), "i1", keep=False)
        if ty != "f32":
            name = self.d.pick(("bit_xor", "add", "sub", "max", "min", "mul"))
            return self.value(TABLE(name)(a.ssa, b.ssa), ty, keep=False)
        if a.f.kind == fd.SPECIAL or b.f.kind == fd.SPECIAL:
            info = fd.join(a.f, b.f)
            if info is None:
                return a
            cond = self.boolean(1)
            return self.value(v.SelectOp(cond.ssa, a.ssa, b.ssa), "f32", info, keep=False)
        for name in (self.d.pick(("add", "sub", "mul")), "max"):
            info = {
                "add": lambda: fd.add(a.f, b.f),
                "sub": lambda: fd.add(a.f, b.f, subtract=True),
                "mul": lambda: fd.mul(a.f, b.f),
                "max": lambda: fd.minmax(a.f, b.f, True),
            }[name]()
            if info is not None and (a.f.kind != fd.EXACT or info.kind == fd.EXACT):
                return self.value(TABLE(name)(a.ssa, b.ssa), "f32", info, keep=False)
        return a

    # ------------------------------------------------------------------ statements

    def statement(self, nesting: int) -> None:
        if self.statement_budget <= 0:
            return
        self.statement_budget -= 1
        d = self.d
        own = [u for u in self.uses if u.mode == OWN]
        contended = [u for u in self.uses if u.mode == ATOMIC]
        own_atomic = [u for u in own if u.buffer.element == "ui32" and self.opt.atomics]
        nest = 2 if nesting > 0 else 0
        tile_store = self.tile is not None and self.phase == "write"
        exits = self.mod.barrier_free
        kind = d.weighted(
            [
                ("store", 6 if own else 0),
                ("let", 3),
                ("assign", 2),
                ("if", nest),
                ("loop", nest),
                ("block", 1 if nesting > 0 else 0),
                ("atomic", 2 if own_atomic or contended else 0),
                ("tile", 3 if tile_store else 0),
                ("return", 1 if exits and self.opt.returns else 0),
                ("trap", 1 if exits and self.can_trap() and d.chance(50) else 0),
            ]
        )
        getattr(self, f"stmt_{kind}")(nesting)

    def stmt_store(self, nesting: int) -> None:
        use = self.d.pick([u for u in self.uses if u.mode == OWN])
        self.store(use)

    def store(self, use: Use, index: Value | None = None) -> None:
        value = self.typed(use.buffer.element, use.buffer.contract)
        self.store_into(use, value, index)

    def store_into(self, use: Use, value: Value, index: Value | None = None) -> None:
        if use.mode == ATOMIC or value.ty != use.buffer.element:
            self.atomic_contended(use) if use.mode == ATOMIC else self.store(use, index)
            return
        value = self.fit(value, use.buffer.element, use.buffer.contract)
        if index is None:
            index = self.write_index(use)
        elif index is self.own:
            use.indices.add("own")
        self.emit(v.StoreOp(use.buffer.name, index.ssa, value.ssa))
        use.written = use.accessed = True
        self.feature("store")
        if value.f is not None:
            name = use.buffer.name
            self.mod.stored_k[name] = max(self.mod.stored_k.get(name, 0.0), value.f.k)

    def stmt_let(self, nesting: int) -> None:
        ty = self.d.weighted(TYPE_WEIGHTS)
        contract = self._contract() if ty == "f32" else None
        self.let(ty, contract)

    def let(self, ty: str, contract: Contract | None) -> str:
        name = self.fresh_local()
        value = self.fit(None, ty, contract)
        self.emit(v.LetOp(name, value.ssa))
        self.frames[-1].locals[name] = Local(ty, contract)
        self.feature("let")
        return name

    def _contract(self) -> Contract:
        kind = self.d.weighted([(fd.EXACT, 3), (fd.APPROX, 2), (fd.SPECIAL, 1)])
        return Contract(kind, fd.MAX_K if kind == fd.APPROX else 0.0)

    def fresh_local(self) -> str:
        visible = self.visible_locals()
        while True:
            name = self.d.pick(("acc", "t", "s", "x", "acc2", "tmp"))
            if name not in visible:
                return name
            self.local_counter += 1
            name = f"{name}{self.local_counter}"
            if name not in visible:
                return name

    def stmt_assign(self, nesting: int) -> None:
        targets = [(n, loc) for n, loc in self.visible_locals().items() if not loc.loop]
        if not targets:
            self.stmt_let(nesting)
            return
        name, local = self.d.pick(targets)
        self.assign(name, local)

    def assign(self, name: str, local: Local, value: Value | None = None) -> None:
        value = self.fit(value, local.ty, local.contract)
        self.emit(v.AssignOp(name, value.ssa))
        self.feature("assign")

    def divergent_condition(self) -> Value:
        """A condition that holds for some invocations and not others."""
        d = self.d
        if d.chance(50):
            return self.boolean(self.opt.depth)
        subject = self.own if d.chance(60) else self.integer("ui32", 2)
        if d.chance(50):
            subject = self.mask(subject, d.pick((1, 3, 7)))
            bound = self.const_int("ui32", d.int(0, 7))
        else:
            bound = self.const_int("ui32", d.int(0, self.opt.max_count))
        name = d.pick(("lt", "gt", "eq", "ne", "le", "ge"))
        return self.value(TABLE(name)(subject.ssa, bound.ssa), "i1")

    def stmt_if(self, nesting: int) -> None:
        cond = self.divergent_condition()
        then_ops = self.nested(lambda: self.statements(nesting - 1))
        else_ops = None
        if self.d.chance(50):
            else_ops = self.nested(lambda: self.statements(nesting - 1))
            self.feature("else")
        self.emit(v.IfOp(cond.ssa, then_ops, else_ops))
        self.feature("if")

    def statements(self, nesting: int) -> None:
        for _ in range(self.d.int(1, 3)):
            self.statement(nesting)

    def stmt_loop(self, nesting: int) -> None:
        d = self.d
        acc = None
        if d.chance(70):
            ty = d.weighted(TYPE_WEIGHTS)
            acc_contract = self._contract() if ty == "f32" else None
            acc = (self.let(ty, acc_contract), Local(ty, acc_contract))
            self.feature("accumulator")
        lo, hi = self.loop_bounds()
        name = self.fresh_local().replace("acc", "i")
        while name in self.visible_locals():
            name = self.fresh_local()
        loop_var = Local("ui32", None, loop=True, lo=lo.lo, hi=max(lo.lo, hi.hi - 1))

        def body() -> None:
            self.loop_depth += 1
            self.statements(nesting - 1)
            if acc is not None:
                self.accumulate(*acc, loop_name=name)
            self.loop_depth -= 1

        ops = self.nested(body, {name: loop_var})
        self.emit(v.LoopOp(name, lo.ssa, hi.ssa, ops))
        self.feature("loop")
        if acc is not None and d.chance(60):
            own = [u for u in self.uses if u.mode == OWN and u.buffer.element == acc[1].ty]
            if own:
                read = self.value(
                    v.VarOp(acc[0], acc[1].ty),
                    acc[1].ty,
                    acc[1].contract.info if acc[1].contract else None,
                )
                self.store_into(d.pick(own), read, self.own)

    def accumulate(self, name: str, local: Local, loop_name: str) -> None:
        current = self.value(
            v.VarOp(name, local.ty), local.ty, local.contract.info if local.contract else None
        )
        counter = self.value(v.VarOp(loop_name, "ui32"), "ui32", lo=0, hi=16)
        self.feature("var")
        if local.ty == "i1":
            step = self.value(TABLE("ne")(current.ssa, self.boolean(1).ssa), "i1")
        elif local.ty == "f32":
            step = self.f32_binary(
                local.contract.need if local.contract else NEED_FINITE, 1, first=current
            )
        else:
            other = self.cast(counter, local.ty) if self.d.chance(50) else self.integer(local.ty, 1)
            op = self.d.pick(
                [n for n in ("add", "bit_xor", "mul", "max", "sub") if local.ty in OPS[n].types]
            )
            step = self.value(TABLE(op)(current.ssa, other.ssa), local.ty)
        self.assign(name, local, step)

    def loop_bounds(self) -> tuple[Value, Value]:
        d = self.d
        if d.chance(50):
            start = d.int(0, 3)
            lo = self.const_int("ui32", start)
        else:
            lo = self.mask(self.integer("ui32", 1), 3)
        if d.chance(50):
            hi = self.const_int("ui32", lo.hi + d.int(0, 5))
        else:
            span = self.mask(self.integer("ui32", 1), 7)
            hi = self.value(TABLE("add")(lo.ssa, span.ssa), "ui32", lo=lo.lo, hi=lo.hi + 7)
        if self.loop_depth:
            hi = self.value(
                TABLE("min")(hi.ssa, self.const_int("ui32", lo.hi + 3).ssa),
                "ui32",
                lo=0,
                hi=lo.hi + 3,
            )
        return lo, hi

    def stmt_block(self, nesting: int) -> None:
        ops = self.nested(lambda: self.statements(nesting - 1))
        if self.d.chance(50):
            self.emit(v.BlockOp(ops))
            self.feature("block")
        else:
            self.emit(v.RegionOp(self.d.pick(("generator", "vyre.test.region")), ops))
            self.feature("region")

    def stmt_atomic(self, nesting: int) -> None:
        own = [u for u in self.uses if u.mode == OWN and u.buffer.element == "ui32"]
        contended = [u for u in self.uses if u.mode == ATOMIC]
        if contended and (not own or self.d.chance(50)):
            self.atomic_contended(self.d.pick(contended))
        else:
            self.atomic_own(self.d.pick(own))

    def atomic_own(self, use: Use) -> None:
        kind = self.d.pick(semantics.ATOMIC_OPS)
        index = self.write_index(use)
        val = self.integer("ui32", 2)
        expected = self.integer("ui32", 1) if kind in semantics.COMPARE_EXCHANGE_OPS else None
        self.value(
            v.AtomicOp(
                kind,
                use.buffer.name,
                index.ssa,
                val.ssa,
                None if expected is None else expected.ssa,
            ),
            "ui32",
        )
        use.written = use.accessed = True
        self.feature(f"atomic:{kind}")

    def atomic_contended(self, use: Use) -> None:
        kind = use.atomic_kind
        index = self.any_index(use)
        expected = None
        if kind in ("exchange", "compare_exchange"):
            val = self.const_int("ui32", use.atomic_operands[1])
            if kind == "compare_exchange":
                expected = self.const_int("ui32", use.atomic_operands[0])
        else:
            val = self.integer("ui32", 2)
        self.emit(
            v.AtomicOp(
                kind,
                use.buffer.name,
                index.ssa,
                val.ssa,
                None if expected is None else expected.ssa,
            )
        )
        use.written = use.accessed = True
        self.feature(f"atomic:{kind}")
        self.feature("atomic_contended")

    def stmt_tile(self, nesting: int) -> None:
        tile = self.tile
        assert tile is not None
        value = self.fit(None, tile.element, tile.contract)
        self.emit(v.StoreOp(tile.name, self.lane.ssa, value.ssa))
        self.feature("tile_store")

    def stmt_return(self, nesting: int) -> None:
        """`if c { return }`: some invocations end here."""
        cond = self.divergent_condition()
        self.emit(v.IfOp(cond.ssa, [v.ReturnOp()]))
        self.feature("return")

    def can_trap(self) -> bool:
        return (
            self.opt.traps
            and self.mod.barrier_free
            and len(self.mod.trap_patterns) < self.opt.max_traps
        )

    def stmt_trap(self, nesting: int) -> None:
        """`if own & m == k { trap own * a + c }`: one invocation (m all ones) or
        several trap, if they get here."""
        d = self.d
        if d.chance(50):
            mask, match = U32_MAX, d.int(0, 40)
            subject = self.own
        else:
            mask = d.pick((1, 3, 7, 15))
            match = d.int(0, mask)
            subject = self.mask(self.own, mask)
            self.feature("trap_several")
        k = self.const_int("ui32", match)
        cond = self.value(TABLE("eq")(subject.ssa, k.ssa), "i1")
        mul, add = d.pick((0, 1, 3)), d.int(0, 1000)
        scaled = self.value(
            TABLE("mul")(self.own.ssa, self.const_int("ui32", mul).ssa), "ui32", keep=False
        )
        address = self.value(
            TABLE("add")(scaled.ssa, self.const_int("ui32", add).ssa), "ui32", keep=False
        )
        tag = d.pick(TRAP_TAGS)
        self.emit(v.IfOp(cond.ssa, [v.TrapOp(address.ssa, tag)]))
        self.mod.trap_patterns.append((tag, mask, match, mul, add))
        if len(self.mod.trap_patterns) > 1:
            self.feature("traps_several_sites")
        self.mod.has_trap = True
        self.feature("trap")

    # ------------------------------------------------------------------ indices

    def write_index(self, use: Use) -> Value:
        if use.strict or self.d.chance(85):
            use.indices.add("own")
            return self.own
        use.indices.add("oob")
        self.feature("oob_store")
        return self.oob_index(use.buffer)

    def oob_index(self, buffer: BufferPlan) -> Value:
        d = self.d
        if buffer.count is None:
            length = self.value(v.BufLenOp(buffer.name), "ui32", keep=False)
            return self.value(TABLE("add")(self.own.ssa, length.ssa), "ui32", keep=False)
        choice = d.pick(("own+count", "const", "max"))
        if choice == "max":
            return self.const_int("ui32", U32_MAX)
        if choice == "const":
            return self.const_int("ui32", buffer.count + d.int(0, 100))
        count = self.const_int("ui32", buffer.count + d.int(0, 3))
        return self.value(TABLE("add")(self.own.ssa, count.ssa), "ui32", keep=False)

    def any_index(self, use: Use) -> Value:
        d = self.d
        n = use.buffer.length
        if use.strict:
            use.indices.add("own")
            return self.own
        use.indices.add("any")
        choice = d.weighted(
            [("own", 3), ("const", 2), ("mask", 2), ("mod", 2), ("shifted", 2), ("wild", 1)]
        )
        if choice == "own":
            return self.own
        if choice == "const":
            return self.const_int("ui32", d.int(0, n + 2))
        if choice == "mask":
            return self.mask(self.integer("ui32", 1), d.pick((1, 3, 7, 15, 63, 255)))
        if choice == "mod":
            return self.value(
                TABLE("mod")(self.integer("ui32", 1).ssa, self.const_int("ui32", n + 1).ssa),
                "ui32",
                lo=0,
                hi=n,
            )
        if choice == "shifted":
            return self.value(
                TABLE("add")(self.own.ssa, self.const_int("ui32", d.int(1, 5)).ssa), "ui32"
            )
        return self.integer("ui32", 1)

    def read_index(self, use: Use) -> Value:
        if use.mode == READ:
            return self.any_index(use)
        return self.write_index(use)

    def tile_index(self) -> Value:
        tile = self.tile
        if self.phase == "write":
            return self.lane
        d = self.d
        choice = d.weighted([("rotate", 4), ("lane", 1), ("wild", 1)])
        if choice == "lane":
            return self.lane
        if choice == "wild":
            self.feature("tile_oob")
            return self.integer("ui32", 1)
        shift = self.const_int("ui32", d.int(1, max(1, tile.count)))
        total = self.value(TABLE("add")(self.lane.ssa, shift.ssa), "ui32", keep=False)
        return self.value(
            TABLE("mod")(total.ssa, self.const_int("ui32", tile.count).ssa),
            "ui32",
            lo=0,
            hi=tile.count - 1,
        )

    # ------------------------------------------------------------------ values

    def typed(self, ty: str, contract: Contract | None = None) -> Value:
        """A value of type `ty`, fit for `contract` after coercion (f32)."""
        if ty == "f32":
            need = contract.need if contract is not None else NEED_FINITE
            return self.f32(need, self.opt.depth)
        if ty == "i1":
            return self.boolean(self.opt.depth)
        return self.integer(ty, self.opt.depth)

    def fit(self, value: Value | None, ty: str, contract: Contract | None) -> Value:
        """`value` (or a fresh value of type `ty`) coerced into `contract`."""
        if value is not None and value.ty == ty and (fitted := self.coerce(value, contract)):
            return fitted
        if (fitted := self.coerce(self.typed(ty, contract), contract)) is not None:
            return fitted
        return self.f32_const(1.5)  # exact, non-zero: fits every f32 contract

    def coerce(self, value: Value, contract: Contract | None) -> Value | None:
        """`value` clamped/quantized into `contract`, or None when it cannot fit."""
        if contract is None:
            return value
        info = value.f
        if contract.kind == fd.SPECIAL:
            return value if fd.bit_exact(info) else None
        if contract.kind == fd.EXACT:
            if info.kind != fd.EXACT:
                return None
            return self.quantize(self.clamp(value, -64.0, 64.0))
        if (
            info.kind == fd.SPECIAL
            or info.k > contract.k
            or (info.kind == fd.APPROX and info.nz < 2.0**-30)
        ):
            return None
        return self.clamp(value, -(2.0**20), 2.0**20)

    def clamp(self, value: Value, lo: float, hi: float) -> Value:
        if value.f.lo < lo:
            value = self.minmax("max", value, self.f32_const(lo))
        if value.f.hi > hi:
            value = self.minmax("min", value, self.f32_const(hi))
        return value

    def minmax(self, name: str, a: Value, b: Value) -> Value:
        info = fd.minmax(a.f, b.f, name == "max")
        return self.value(TABLE(name)(a.ssa, b.ssa), "f32", info)

    def quantize(self, value: Value) -> Value:
        """round(x * 4) / 4: an exact value on the quarter grid."""
        info = value.f
        if info.frac <= 2:
            return value
        four = self.f32_const(4.0)
        scaled = self.value(TABLE("mul")(value.ssa, four.ssa), "f32", keep=False)
        rounded = self.value(TABLE("round")(scaled.ssa), "f32", keep=False)
        quarter = self.f32_const(0.25)
        lo, hi = round(info.lo * 4) / 4, round(info.hi * 4) / 4
        self.feature("quantize")
        return self.value(
            TABLE("mul")(rounded.ssa, quarter.ssa), "f32", F32(fd.EXACT, lo, hi, 2, 0.0, 0.25)
        )

    def mask(self, value: Value, mask: int) -> Value:
        ty = value.ty
        lo, hi = INT_RANGE[ty]
        if mask > hi:  # wider than an 8/16-bit type: all its bits
            m = self.const_int(ty, -1 if lo < 0 else hi)
            return self.value(TABLE("bit_and")(value.ssa, m.ssa), ty)
        m = self.const_int(ty, mask)
        return self.value(TABLE("bit_and")(value.ssa, m.ssa), ty, lo=0, hi=mask)

    def const_int(self, ty: str, number: int) -> Value:
        return self.value(v.ConstOp(number, ty), ty, lo=number, hi=number, keep=False)

    def f32_const(self, number: float) -> Value:
        return self.value(v.ConstOp(float(number), "f32"), "f32", fd.constant(number), keep=False)

    def reuse(self, ty: str, accept: Callable[[Value], bool] = lambda _: True) -> Value | None:
        """A value computed earlier, preferably one nothing uses yet."""
        candidates = [val for val in self.pool(ty) if accept(val)]
        unused = [val for val in candidates if not val.ssa.uses]
        if unused and self.d.chance(70):
            return self.d.pick(unused)
        return self.d.pick(candidates) if candidates else None

    def load(self, use: Use) -> Value:
        return self.load_at(use, self.read_index(use))

    def load_at(self, use: Use, index: Value) -> Value:
        buffer = use.buffer
        use.accessed = True
        self.feature("load")
        info = buffer.contract.info if buffer.contract else None
        return self.value(v.LoadOp(buffer.name, index.ssa, buffer.element), buffer.element, info)

    def loadable(self, ty: str) -> list[Use]:
        return [u for u in self.uses if u.buffer.element == ty and u.loadable and u.mode != ATOMIC]

    def leaf(self, ty: str, accept: Callable[[Value], bool] = lambda _: True) -> Value | None:
        """A const, reused value, load, named-local read or id of type `ty`."""
        d = self.d
        loads = [
            u
            for u in self.loadable(ty)
            if accept(Value(None, ty, u.buffer.contract.info if u.buffer.contract else None))
        ]
        local_reads = [
            (n, loc)
            for n, loc in self.visible_locals().items()
            if loc.ty == ty and accept(Value(None, ty, loc.contract.info if loc.contract else None))
        ]
        tile = (
            self.tile
            if self.tile
            and self.tile.element == ty
            and accept(Value(None, ty, self.tile.contract.info if self.tile.contract else None))
            else None
        )
        kind = d.weighted(
            [
                ("const", 1),
                ("reuse", 3),
                ("load", 6 if loads else 0),
                ("var", 3 if local_reads else 0),
                ("tile", 4 if tile else 0),
                ("id", 3 if ty == "ui32" else 0),
                ("buf_len", 1 if ty == "ui32" else 0),
            ]
        )
        if kind == "reuse":
            return self.reuse(ty, accept)
        if kind == "load":
            return self.load(d.pick(loads))
        if kind == "var":
            name, local = d.pick(local_reads)
            self.feature("var")
            return self.value(
                v.VarOp(name, ty),
                ty,
                local.contract.info if local.contract else None,
                lo=local.lo if local.loop else None,
                hi=local.hi if local.loop else None,
            )
        if kind == "tile":
            self.feature("tile_load")
            index = self.tile_index()
            return self.value(
                v.LoadOp(tile.name, index.ssa, ty),
                ty,
                tile.contract.info if tile.contract else None,
            )
        if kind == "id":
            op = d.pick((v.InvocationIdOp, v.WorkgroupIdOp, v.LocalIdOp))
            axis = d.weighted([("x", 6), ("y", 1), ("z", 1)])
            if self.mod.elementwise:
                op, axis = v.InvocationIdOp, "x"
            elif op is v.InvocationIdOp and self.wg[1] * self.wg[2] > 1:
                # without an explicit grid, invocation ids of a 2-D/3-D workgroup
                # need a derived grid that covers the count (else it is refused)
                op = v.LocalIdOp
            self.feature(f"{op.name}:{axis}")
            return self.value(op(axis), "ui32")
        if kind == "buf_len":
            names = [u.buffer.name for u in self.uses] + ([self.tile.name] if self.tile else [])
            self.feature("buf_len")
            return self.value(
                v.BufLenOp(d.pick(names)), "ui32", lo=0, hi=4 * self.opt.max_count + 4
            )
        return None

    # ------------------------------------------------------------------ integers

    def integer(self, ty: str, depth: int) -> Value:
        d = self.d
        compound = depth > 0
        kind = d.weighted(
            [
                ("leaf", 4),
                ("binary", 5 if compound else 0),
                ("unary", 2 if compound else 0),
                ("cast", 1 if compound else 0),
                ("bitcast", 1 if compound else 0),
                ("select", 1 if compound else 0),
                ("atomic", 1 if compound and ty == "ui32" and self._own_atomics() else 0),
                ("call", 1 if compound else 0),
            ]
        )
        result = getattr(self, f"int_{kind}")(ty, depth)
        return result if result is not None else self.int_const(ty)

    def int_const(self, ty: str) -> Value:
        d = self.d
        lo, hi = INT_RANGE[ty]
        number = d.weighted(
            [
                (d.int(0, 10), 5),
                (d.int(lo, hi), 2),
                (d.pick(_edge_constants(ty)), 1),
            ]
        )
        self.feature("const")
        return self.value(v.ConstOp(number, ty), ty, lo=number, hi=number)

    def int_leaf(self, ty: str, depth: int) -> Value | None:
        return self.leaf(ty) if self.d.chance(85) else self.int_const(ty)

    def int_binary(self, ty: str, depth: int) -> Value:
        # (op, operand type) pairs giving a `ty`; abs_diff and mul_high on si32 give a ui32
        pairs = [
            (n, t)
            for n in semantics.BINARY_OPS
            for t in OPS[n].types
            if t in INT_TYPES and OPS[n].result_type(t) == ty
        ]
        if self.mod.elementwise:
            pairs = [(n, t) for n, t in pairs if not _may_trap(n, t)]
        name, operand = self.d.pick(pairs)
        a = self.integer(operand, depth - 1)
        b = self.integer(operand, depth - 1)
        if _may_trap(name, operand):
            b = self.safe_divisor(b)
            if self.can_trap() and self.d.chance(35):
                b = self.trapping_divisor(b, name)
        lo, hi = _int_range(name, ty, a, b) if operand == ty else INT_RANGE[ty]
        self.feature(f"{name}:{operand}")
        return self.value(TABLE(name)(a.ssa, b.ssa), ty, lo=lo, hi=hi)

    def int_call(self, ty: str, depth: int) -> Value:
        """A call of the module's integer helper of `ty` (see `helper_func`)."""
        a = self.integer(ty, depth - 1)
        b = self.integer(ty, depth - 1)
        self.mod.called.add(ty)
        self.feature(f"call:{ty}")
        return self.value(v.CallOp(helper_name(ty), [a.ssa, b.ssa], v.ELEMENT_TYPES[ty]), ty)

    def safe_divisor(self, b: Value) -> Value:
        """`b`, or 3 where `b` is 0 or -1 (no signed division trap)."""
        ty = b.ty
        zero = self.const_int(ty, 0)
        minus_one = self.const_int(ty, -1)
        is_zero = self.value(TABLE("eq")(b.ssa, zero.ssa), "i1", keep=False)
        is_minus_one = self.value(TABLE("eq")(b.ssa, minus_one.ssa), "i1", keep=False)
        bad = self.value(TABLE("or")(is_zero.ssa, is_minus_one.ssa), "i1", keep=False)
        three = self.const_int(ty, 3)
        return self.value(v.SelectOp(bad.ssa, three.ssa, b.ssa), ty, keep=False)

    def trapping_divisor(self, b: Value, name: str) -> Value:
        """`b`, or 0 at one invocation k: signed division traps there (address 0)."""
        k = self.d.int(0, 40)
        at = self.value(TABLE("eq")(self.own.ssa, self.const_int("ui32", k).ssa), "i1", keep=False)
        zero = self.const_int(b.ty, 0)
        self.mod.trap_patterns.append((OPS[name].trap_tag_for(b.ty), U32_MAX, k, 0, 0))
        self.mod.has_trap = True
        self.feature(f"trap_{name}")
        return self.value(v.SelectOp(at.ssa, zero.ssa, b.ssa), b.ty, keep=False)

    def int_unary(self, ty: str, depth: int) -> Value:
        # (op, operand type) pairs giving a `ty`; unpack* on si32 give a ui32
        pairs = [
            (n, t)
            for n in semantics.UNARY_OPS
            for t in OPS[n].types
            if t in INT_TYPES and OPS[n].kind == "unary" and OPS[n].result_type(t) == ty
        ]
        name, operand = self.d.pick(pairs)
        a = self.integer(operand, depth - 1)
        self.feature(f"{name}:{operand}")
        bits = semantics.ELEMENTS[operand].bits
        lo, hi = {
            "popcount": (0, bits),
            "clz": (0, bits),
            "ctz": (0, bits),
            "sign": (-1, 1),
            "unpack4_low": (0, 15),
            "unpack4_high": (0, 15),
            "unpack8_low": (0, 255),
            "unpack8_high": (0, 255),
        }.get(name, INT_RANGE[ty])
        return self.value(TABLE(name)(a.ssa), ty, lo=lo, hi=hi)

    def int_cast(self, ty: str, depth: int) -> Value:
        source = self.d.pick([t for t in TYPES if t != ty])
        if source == "f32":
            x = self.f32(NEED_EXACT, depth - 1)
            lo, hi = INT_RANGE[ty]
            r_lo = int(min(max(np.trunc(x.f.lo), lo), hi))
            r_hi = int(min(max(np.trunc(x.f.hi), lo), hi))
            self.feature(f"cast:f32:{ty}")
            return self.value(v.CastOp(x.ssa, ty), ty, lo=r_lo, hi=r_hi)
        x = self.boolean(depth - 1) if source == "i1" else self.integer(source, depth - 1)
        return self.cast(x, ty)

    def cast(self, x: Value, ty: str) -> Value:
        self.feature(f"cast:{x.ty}:{ty}")
        lo, hi = INT_RANGE[ty]
        if x.ty == "i1":
            lo, hi = 0, 1
        elif lo <= x.lo and x.hi <= hi:
            lo, hi = x.lo, x.hi
        return self.value(v.CastOp(x.ssa, ty), ty, lo=lo, hi=hi)

    def int_bitcast(self, ty: str, depth: int) -> Value:
        partners = [t for t in TYPES if t != ty and (t, ty) in semantics.BITCAST_PAIRS]
        source = self.d.pick(partners)
        if source == "f32":
            x = self.f32(NEED_ANY, depth - 1)
            if not fd.bit_exact(x.f):
                return None
        else:
            x = self.integer(source, depth - 1)
        self.feature(f"bitcast:{source}:{ty}")
        return self.value(v.BitcastOp(x.ssa, ty), ty)

    def int_select(self, ty: str, depth: int) -> Value:
        c = self.boolean(depth - 1)
        a = self.integer(ty, depth - 1)
        b = self.integer(ty, depth - 1)
        self.feature("select")
        return self.value(
            v.SelectOp(c.ssa, a.ssa, b.ssa), ty, lo=min(a.lo, b.lo), hi=max(a.hi, b.hi)
        )

    def _own_atomics(self) -> list[Use]:
        if not self.opt.atomics or self.after_grid_sync:
            return []
        return [u for u in self.uses if u.mode == OWN and u.buffer.element == "ui32"]

    def int_atomic(self, ty: str, depth: int) -> Value:
        use = self.d.pick(self._own_atomics())
        kind = self.d.pick(semantics.ATOMIC_OPS)
        index = self.write_index(use)
        val = self.integer("ui32", depth - 1)
        expected = (
            self.integer("ui32", depth - 1) if kind in semantics.COMPARE_EXCHANGE_OPS else None
        )
        use.written = use.accessed = True
        self.feature(f"atomic:{kind}")
        self.feature("atomic_result")
        return self.value(
            v.AtomicOp(
                kind,
                use.buffer.name,
                index.ssa,
                val.ssa,
                None if expected is None else expected.ssa,
            ),
            "ui32",
        )

    # ------------------------------------------------------------------ Bools

    def boolean(self, depth: int) -> Value:
        d = self.d
        compound = depth > 0
        kind = d.weighted(
            [
                ("leaf", 3),
                ("compare", 5 if compound else 0),
                ("logic", 2 if compound else 0),
                ("predicate", 2 if compound else 0),
                ("cast", 1 if compound else 0),
                ("select", 1 if compound else 0),
            ]
        )
        if kind == "leaf":
            result = self.leaf("i1") if d.chance(90) else None
            if result is None:
                self.feature("const")
                result = self.value(v.ConstOp(d.chance(50), "i1"), "i1")
            return result
        return getattr(self, f"bool_{kind}")(depth)

    def bool_compare(self, depth: int) -> Value:
        ty = self.d.weighted(TYPE_WEIGHTS)
        names = [n for n in semantics.COMPARE_OPS if ty in OPS[n].types]
        name = self.d.pick(names)
        if ty == "f32":
            a, b = self.f32(NEED_EXACT, depth - 1), self.f32(NEED_EXACT, depth - 1)
        elif ty == "i1":
            a, b = self.boolean(depth - 1), self.boolean(depth - 1)
        else:
            a, b = self.integer(ty, depth - 1), self.integer(ty, depth - 1)
        self.feature(f"{name}:{ty}")
        return self.value(TABLE(name)(a.ssa, b.ssa), "i1")

    def bool_logic(self, depth: int) -> Value:
        name = self.d.pick(("and", "or", "not"))
        ty = self.d.pick(("i1", "ui32"))  # on ui32: upstream's truthiness
        operand = self.boolean if ty == "i1" else (lambda d: self.integer("ui32", d))
        a = operand(depth - 1)
        self.feature(f"{name}:{ty}")
        if name == "not":
            return self.value(TABLE("not")(a.ssa), "i1")
        return self.value(TABLE(name)(a.ssa, operand(depth - 1).ssa), "i1")

    def bool_predicate(self, depth: int) -> Value:
        name = self.d.pick(("is_nan", "is_inf", "is_finite"))
        x = self.f32(NEED_ANY, depth - 1)
        self.feature(f"{name}:f32")
        return self.value(TABLE(name)(x.ssa), "i1")

    def bool_cast(self, depth: int) -> Value:
        source = self.d.pick(("ui32", "si32", "f32", *INT_TYPES[2:]))
        x = self.f32(NEED_EXACT, depth - 1) if source == "f32" else self.integer(source, depth - 1)
        self.feature(f"cast:{source}:i1")
        return self.value(v.CastOp(x.ssa, "i1"), "i1")

    def bool_select(self, depth: int) -> Value:
        c, a, b = self.boolean(depth - 1), self.boolean(depth - 1), self.boolean(depth - 1)
        self.feature("select")
        return self.value(v.SelectOp(c.ssa, a.ssa, b.ssa), "i1")

    # ------------------------------------------------------------------ f32

    def f32(self, need: int, depth: int) -> Value:
        """An f32 value whose abstract info satisfies `need`."""
        d = self.d
        compound = depth > 0
        kind = d.weighted(
            [
                ("leaf", 4),
                ("binary", 5 if compound else 0),
                ("unary", 2 if compound else 0),
                ("approx", 3 if compound and need != NEED_EXACT else 0),
                ("fma", 1 if compound else 0),
                ("cast", 1 if compound else 0),
                ("bitcast", 1 if compound else 0),
                ("select", 1 if compound else 0),
            ]
        )
        if kind == "leaf":
            result = self.leaf("f32", lambda val: val.f.satisfies(need)) if d.chance(85) else None
        elif kind == "binary":
            result = self.f32_binary(need, depth)
        else:
            result = getattr(self, f"f32_{kind}")(need, depth)
        if result is None or not result.f.satisfies(need):
            return self.f32_literal()
        return result

    def f32_literal(self) -> Value:
        d = self.d
        number = d.weighted(
            [(d.int(-256, 256) / 4.0, 6), (d.pick((0.5, 1.0, 2.0, -0.0, 0.125, 48.0)), 1)]
        )
        self.feature("const")
        return self.value(v.ConstOp(number, "f32"), "f32", fd.constant(number))

    def f32_binary(self, need: int, depth: int, first: Value | None = None) -> Value | None:
        d = self.d
        names = ["add", "sub", "mul", "min", "max"] + ([] if need == NEED_EXACT else ["div"])
        name = d.pick(names)
        operand_need = NEED_EXACT if need == NEED_EXACT else NEED_FINITE
        a = (
            first
            if first is not None and first.f.satisfies(operand_need)
            else self.f32(operand_need, depth - 1)
        )
        b = self.f32(operand_need, depth - 1)
        if name == "div":
            b = self.nonzero(b)
        info = {
            "add": lambda: fd.add(a.f, b.f),
            "sub": lambda: fd.add(a.f, b.f, subtract=True),
            "mul": lambda: fd.mul(a.f, b.f),
            "div": lambda: fd.div(a.f, b.f),
            "min": lambda: fd.minmax(a.f, b.f, False),
            "max": lambda: fd.minmax(a.f, b.f, True),
        }[name]()
        if info is None or not info.satisfies(need):
            return a if a.f.satisfies(need) else None
        self.feature(f"{name}:f32")
        return self.value(TABLE(name)(a.ssa, b.ssa), "f32", info)

    def nonzero(self, b: Value) -> Value:
        """A denominator: |b| + 0.5 (sign kept half of the time) unless b is safely away from 0."""
        if b.f.min_mag >= 2.0**-20:
            return b
        b = self.exactify(b)
        magnitude = self.value(TABLE("abs")(b.ssa), "f32", fd.absolute(b.f), keep=False)
        half = self.f32_const(0.5)
        shifted = self.value(
            TABLE("add")(magnitude.ssa, half.ssa), "f32", fd.add(magnitude.f, half.f), keep=False
        )
        if self.d.chance(50):
            return self.value(TABLE("neg")(shifted.ssa), "f32", fd.neg(shifted.f), keep=False)
        return shifted

    def exactify(self, x: Value) -> Value:
        """An exact quarter-grid value in [-64, 64] derived from `x` (or a literal)."""
        if x.f.kind != fd.EXACT:
            return self.f32_literal()
        return self.quantize(self.clamp(x, -64.0, 64.0))

    def f32_unary(self, need: int, depth: int) -> Value | None:
        name = self.d.pick(("neg", "abs", "sign", "floor", "ceil", "round", "trunc"))
        if name in ("neg", "abs"):
            x = self.f32(NEED_EXACT if need == NEED_EXACT else NEED_FINITE, depth - 1)
            info = fd.neg(x.f) if name == "neg" else fd.absolute(x.f)
        else:
            x = self.f32(NEED_EXACT, depth - 1)
            info = fd.rounding(x.f, name)
        if info is None:
            return None
        self.feature(f"{name}:f32")
        return self.value(TABLE(name)(x.ssa), "f32", info)

    def f32_approx(self, need: int, depth: int) -> Value | None:
        """sqrt, exp, sin, ... on an exact operand clamped into the op's domain."""
        name = self.d.pick(tuple(fd.TRANSCENDENTAL_DOMAIN))
        lo, hi = fd.TRANSCENDENTAL_DOMAIN[name]
        x = self.exactify(self.f32(NEED_EXACT, depth - 1))
        if lo >= 0.5:  # log, log2, inverse_sqrt, reciprocal: |x| + lo
            x = self.value(TABLE("abs")(x.ssa), "f32", fd.absolute(x.f), keep=False)
            shift = self.f32_const(lo)
            x = self.value(TABLE("add")(x.ssa, shift.ssa), "f32", fd.add(x.f, shift.f), keep=False)
        elif lo == 0.0:  # sqrt
            x = self.value(TABLE("abs")(x.ssa), "f32", fd.absolute(x.f), keep=False)
        x = self.clamp(x, lo, hi)
        info = fd.transcendental(name, x.f)
        if info is None:
            return None
        self.feature(f"{name}:f32")
        return self.value(TABLE(name)(x.ssa), "f32", info)

    def f32_fma(self, need: int, depth: int) -> Value | None:
        operand_need = NEED_EXACT if need == NEED_EXACT else NEED_FINITE
        a, b, c = (self.f32(operand_need, depth - 1) for _ in range(3))
        info = fd.fma(a.f, b.f, c.f)
        if info is None or not info.satisfies(need):
            return None
        self.feature("fma")
        return self.value(v.FmaOp(a.ssa, b.ssa, c.ssa), "f32", info)

    def f32_cast(self, need: int, depth: int) -> Value | None:
        source = self.d.pick(("ui32", "si32", "i1", *INT_TYPES[2:]))
        if source == "i1":
            x = self.boolean(depth - 1)
            info = F32(fd.EXACT, 0.0, 1.0, 0, 0.0, 1.0)
        else:
            x = self.integer(source, depth - 1)
            # a 64-bit value may lie beyond the magnitudes f32_domain tracks (fd.BIG):
            # then only its low 16 bits go through the cast
            if self.d.chance(50) or max(abs(x.lo), abs(x.hi)) > fd.BIG:
                x = self.mask(x, 0xFFFF)
            info = fd.from_int(x.lo, x.hi)
        if info is None or not info.satisfies(need):
            return None
        self.feature(f"cast:{source}:f32")
        return self.value(v.CastOp(x.ssa, "f32"), "f32", info)

    def f32_bitcast(self, need: int, depth: int) -> Value | None:
        """A normal number in [1, 2) from random mantissa bits, or raw bits (special)."""
        source = self.d.pick(("ui32", "si32"))
        x = self.integer(source, depth - 1)
        self.feature(f"bitcast:{source}:f32")
        if need == NEED_ANY and self.d.chance(50):
            return self.value(v.BitcastOp(x.ssa, "f32"), "f32", fd.SPECIAL_VALUE)
        mantissa = self.mask(x, 0x007FFFFF)
        one = self.const_int(source, 0x3F800000)
        bits = self.value(TABLE("bit_or")(mantissa.ssa, one.ssa), source, keep=False)
        return self.value(
            v.BitcastOp(bits.ssa, "f32"), "f32", F32(fd.EXACT, 1.0, 2.0, 23, 0.0, 1.0)
        )

    def f32_select(self, need: int, depth: int) -> Value | None:
        c = self.boolean(depth - 1)
        a, b = self.f32(need, depth - 1), self.f32(need, depth - 1)
        info = fd.join(a.f, b.f)
        if info is None:
            return None
        self.feature("select")
        return self.value(v.SelectOp(c.ssa, a.ssa, b.ssa), "f32", info)


def TABLE(name: str):  # noqa: N802 - reads like an op constructor
    return v.TABLE_OPS[name]


def _narrow_data(rng: np.random.Generator, ty: str, n: int) -> np.ndarray:
    """Host data of an integer type other than ui32/si32: small values, any value,
    or an edge of the type, a third each."""
    info = semantics.ELEMENTS[ty]
    unsigned = np.dtype(f"uint{info.bits}")
    small = rng.integers(0, 11, n).astype(unsigned)
    anything = rng.integers(0, 2**info.bits - 1, n, dtype=np.uint64, endpoint=True)
    anything = anything.astype(unsigned)
    edges = np.array([x & (2**info.bits - 1) for x in _edge_constants(ty)], dtype=unsigned)
    edge = edges[rng.integers(0, len(edges), n)]
    pick = rng.integers(0, 3, n)
    words = np.where(pick == 0, small, np.where(pick == 1, anything, edge)).astype(unsigned)
    return words.view(info.host)


def _may_trap(name: str, ty: str) -> bool:
    """Whether op `name` on `ty` may trap (signed division)."""
    return OPS[name].trap_tag is not None and semantics.ELEMENTS[ty].is_signed


def _edge_constants(ty: str) -> tuple[int, ...]:
    """The type's extremes and the values around its shift width and sign bit."""
    lo, hi = INT_RANGE[ty]
    bits = semantics.ELEMENTS[ty].bits
    near = (bits - 1, bits, -1) if lo < 0 else (bits - 1, bits, 1 << (bits - 1))
    return (lo, hi, *(x for x in near if lo <= x <= hi))


def _int_range(name: str, ty: str, a: Value, b: Value) -> tuple[int, int]:
    full = INT_RANGE[ty]
    if ty != "ui32":
        return full
    if name == "bit_and":
        return 0, min(a.hi, b.hi)
    if name == "mod" and b.lo > 0:
        return 0, b.hi - 1
    if name == "add" and a.hi + b.hi <= U32_MAX:
        return a.lo + b.lo, a.hi + b.hi
    if name == "min":
        return min(a.lo, b.lo), min(a.hi, b.hi)
    if name == "max":
        return max(a.lo, b.lo), max(a.hi, b.hi)
    if name == "shr" and b.lo == b.hi:
        return 0, a.hi >> (b.lo & 31)
    return full


def helper_name(ty: str) -> str:
    return f"gen_mix_{ty}"


def helper_func(ty: str) -> v.FuncOp:
    """`@gen_mix_<ty>(a, b)`: acc = a ^ b, then acc = acc * 3 + k for k in 0 .. (b & 3);
    yield acc + a. A named local and a loop, so inlining must rename both."""
    from xdsl.ir import Block, Region

    t = v.ELEMENT_TYPES[ty]
    block = Block(arg_types=[t, t])
    a, b = block.args
    ops: list[Operation] = []

    def add(op: Operation) -> SSAValue:
        ops.append(op)
        return op.results[0] if op.results else None

    x = add(TABLE("bit_xor")(a, b))
    add(v.LetOp("acc", x))
    three = add(v.ConstOp(3, ty))
    mask = add(TABLE("bit_and")(b, three))
    zero = add(v.ConstOp(0, "ui32"))
    # (a bitcast for si32, the first helper type; a cast, which keeps 0 .. 3, for the others)
    convert = v.BitcastOp if ty == "si32" else v.CastOp
    upper = add(convert(mask, "ui32")) if ty != "ui32" else mask
    body: list[Operation] = []
    acc = v.VarOp("acc", t)
    times = TABLE("mul")(acc.result, three)
    k = v.VarOp("k", "ui32")
    step = convert(k.result, ty) if ty != "ui32" else None
    plus = TABLE("add")(times.results[0], (step or k).results[0])
    body += [acc, times, k, *([step] if step else []), plus, v.AssignOp("acc", plus.results[0])]
    add(v.LoopOp("k", zero, upper, body))
    final = add(v.VarOp("acc", t))
    result = add(TABLE("add")(final, a))
    ops.append(v.YieldOp(result))
    for op in ops:
        block.add_op(op)
    return v.FuncOp(helper_name(ty), [t, t], t, Region(block))


# ============================================================================ scale


def deep_nest_text(trips: Sequence[int], elements: int = 64) -> str:
    """One program with `len(trips)` nested loops (outermost first, loop k running
    `trips[k]` iterations) around an increment: `out[i] = x[i] + prod(trips)`
    (modulo 2^32). At the nesting limit (64) it probes that no stage is
    exponential in the depth, and that the unroll budget multiplies through a nest."""
    lines = [
        "vyre.program @deep workgroup_size [64, 1, 1] {",
        f"  vyre.buffer @x binding 0 read_only : ui32[{elements}]",
        f"  vyre.buffer @out binding 1 write_only : ui32[{elements}]",
        "  %i = vyre.invocation_id x",
        "  %zero = vyre.const 0 : ui32",
        "  %one = vyre.const 1 : ui32",
        "  %v = vyre.load @x[%i] : ui32",
        "  vyre.let @acc = %v : ui32",
    ]
    for level, count in enumerate(trips):
        pad = "  " * (level + 1)
        lines.append(f"{pad}%t{level} = vyre.const {count} : ui32")
        lines.append(f"{pad}vyre.loop @k{level} = %zero to %t{level} {{")
    pad = "  " * (len(trips) + 1)
    lines += [
        f"{pad}%a = vyre.var @acc : ui32",
        f"{pad}%s = vyre.add %a, %one : ui32",
        f"{pad}vyre.assign @acc = %s : ui32",
    ]
    for level in reversed(range(len(trips))):
        lines.append("  " * (level + 1) + "}")
    lines += ["  %r = vyre.var @acc : ui32", "  vyre.store @out[%i] = %r : ui32", "}"]
    return "\n".join(lines) + "\n"


def long_chain_text(shifted: Sequence[bool], elements: int = 256) -> str:
    """`len(shifted)` programs in a chain: program k reads t{k} and writes
    t{k+1} = t{k} * 3 + k (t0 is the input x). Where `shifted[k]`, it reads its
    left neighbour t{k}[i - 1] instead (element 0 reads t{k}[0]), a dependence
    across workgroups that fusion must split. It probes that fusion, planning
    and lowering take time near-linear in the number of programs."""
    out = []
    for k, shift in enumerate(shifted):
        src, dst = ("x" if k == 0 else f"t{k}"), f"t{k + 1}"
        index = "%i"
        extra = ""
        if shift:
            extra = (
                "  %zero = vyre.const 0 : ui32\n"
                "  %one = vyre.const 1 : ui32\n"
                "  %inside = vyre.gt %i, %zero : ui32\n"
                "  %left = vyre.sub %i, %one : ui32\n"
                "  %j = vyre.select %inside, %left, %zero : ui32\n"
            )
            index = "%j"
        out.append(
            f"""vyre.program @s{k} workgroup_size [64, 1, 1] {{
  vyre.buffer @{src} binding 0 read_only : ui32[{elements}]
  vyre.buffer @{dst} binding 1 write_only : ui32[{elements}]
  %i = vyre.invocation_id x
{extra}  %v = vyre.load @{src}[{index}] : ui32
  %three = vyre.const 3 : ui32
  %k = vyre.const {k} : ui32
  %m = vyre.mul %v, %three : ui32
  %r = vyre.add %m, %k : ui32
  vyre.store @{dst}[%i] = %r : ui32
}}"""
        )
    return "\n".join(out) + "\n"


def long_chain_expected(shifted: Sequence[bool], x: np.ndarray) -> np.ndarray:
    """The last buffer of `long_chain_text(shifted)` for input `x`, in numpy."""
    t = x.astype(np.uint64)
    for k, shift in enumerate(shifted):
        if shift:
            t = np.concatenate([t[:1], t[:-1]])
        t = (t * 3 + k) % (1 << 32)
    return t.astype(np.uint32)
