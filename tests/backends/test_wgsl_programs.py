"""Random well-typed vyre modules that exercise every construct the WGSL printer
handles (every table op on every type it takes, select/fma/cast/bitcast, all
memory classes, runtime-sized and Bool buffers, atomics, workgroup memory and
barriers, named locals, nested control flow, return, trap, grid_sync).

They are for *validation* of the printed WGSL (naga), not for comparing
results: values are arbitrary, traps and out-of-bounds indices are frequent.

```python
module = random_module(seed=7)
```
"""

from __future__ import annotations

import random
from contextlib import contextmanager

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from vyre_xdsl import semantics
from vyre_xdsl.builder import ProgramBuilder, module_of
from vyre_xdsl.dialects import vyre
from vyre_xdsl.dialects.vyre import type_name

TYPES = ("ui32", "si32", "f32", "i1", "f16", "bf16", "f64")
VECTORS = ("vector<2xui32>", "vector<4xui32>", "vector<4xf32>")
WORKGROUPS = [(64, 1, 1), (1, 1, 1), (8, 8, 1), (4, 2, 2), (256, 1, 1), (16, 1, 1), (2, 1, 1)]
CONSTANTS = {
    "ui32": [0, 1, 7, 31, 32, 255, 4294967295],
    "si32": [0, 1, -1, 7, -2147483648, 2147483647],
    "f32": [0.0, -0.0, 1.5, -2.25, 1e-40, 3.0e38, float("inf"), float("nan")],
    "i1": [True, False],
    "f16": [0.0, -0.0, 1.5, 65504.0, 6e-08, float("inf"), float("nan")],
    "bf16": [0.0, -0.0, 1.5, 3.0e38, 1e-40, float("-inf"), float("nan")],
    "f64": [0.0, -0.0, 1.5, 1e300, 5e-324, float("inf"), float("nan")],
}


def _ident(ty: str) -> str:
    """A type name usable in a buffer name (`vector<2xui32>` -> `vector_2xui32_`)."""
    return ty.replace("<", "_").replace(">", "_")


class _Gen:
    def __init__(self, rng: random.Random, name: str):
        self.rng = rng
        workgroup = rng.choice(WORKGROUPS)
        self.one_dimensional = workgroup[1:] == (1, 1)  # subgroup ops need it
        # a 2-D/3-D workgroup needs an explicit grid (its derived grid covers x only)
        grid = None if self.one_dimensional else (rng.randint(1, 4), rng.randint(1, 3), 1)
        self.b = ProgramBuilder(name, workgroup, grid=grid)
        self.pools: list[dict[str, list[SSAValue]]] = [{t: [] for t in TYPES + VECTORS}]
        self.locals: list[list[tuple[str, str]]] = [[]]
        self.counter = 0
        self.has_barrier = False
        self.may_return = False
        self.buffers: dict[str, list[str]] = {t: [] for t in TYPES + VECTORS}
        self.writable: dict[str, list[str]] = {t: [] for t in TYPES + VECTORS}

    # -------------------------------------------------------------- scopes

    @contextmanager
    def scope(self):
        self.pools.append({t: [] for t in TYPES + VECTORS})
        self.locals.append([])
        try:
            yield
        finally:
            self.pools.pop()
            self.locals.pop()

    def values(self, ty: str) -> list[SSAValue]:
        return [v for pool in self.pools for v in pool[ty]]

    def add(self, value: SSAValue) -> SSAValue:
        self.pools[-1][type_name(value.type)].append(value)
        return value

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def value(self, ty: str) -> SSAValue:
        info = semantics.ELEMENTS[ty]
        if info.family == "vector":  # no vector constants: a vector of lane values
            choices = self.values(ty)
            if choices and self.rng.random() < 0.7:
                return self.rng.choice(choices)
            lanes = [self.value(info.lane) for _ in range(info.lanes)]
            return self.add(self.b.from_elements(lanes, ty))
        choices = self.values(ty)
        if not choices or self.rng.random() < 0.15:
            return self.add(self.b.const(self.rng.choice(CONSTANTS[ty]), ty))
        return self.rng.choice(choices)

    def index(self) -> SSAValue:
        if self.rng.random() < 0.5:
            return self.add(self.b.invocation_id("x"))
        return self.value("ui32")

    # -------------------------------------------------------------- buffers

    def declare_buffers(self) -> None:
        binding = 0
        for ty in TYPES + VECTORS:
            count = self.rng.choice([None, 1, 64, 1000])
            name = f"in_{_ident(ty)}"
            self.b.buffer(
                name, self.rng.choice(["read_only", "uniform"]), ty, count, binding=binding
            )
            self.buffers[ty].append(name)
            binding += 1
            name = f"out_{_ident(ty)}"
            access = self.rng.choice(["write_only", "read_write"])
            self.b.buffer(
                name,
                access,
                ty,
                self.rng.choice([None, 0, 64, 4096]),
                binding=binding,
                output=self.rng.random() < 0.3,
            )
            self.buffers[ty].append(name)
            self.writable[ty].append(name)
            binding += 1
        self.b.buffer(
            "counters",
            "read_write",
            "ui32",
            self.rng.choice([None, 8]),
            binding=self.rng.choice([binding, 0]),
        )
        self.buffers["ui32"].append("counters")
        self.writable["ui32"].append("counters")
        if self.rng.random() < 0.5:
            ty = self.rng.choice(("ui32", "f32", "i1", "f16", "bf16", "f64"))
            self.b.buffer("tile", "workgroup", ty, 64)
            self.buffers[ty].append("tile")
            self.writable[ty].append("tile")

    # -------------------------------------------------------------- statements

    def statement(self, depth: int, top: bool) -> None:
        kinds = ["expr"] * 8 + ["store"] * 3 + ["load"] * 3 + ["atomic", "id", "local"]
        if depth < 2:
            kinds += ["if", "loop", "block"]
        if top and not self.may_return:
            kinds += ["barrier"]
            kinds += ["subgroup"] if self.one_dimensional else []
            kinds += ["grid_sync"] if self.rng.random() < 0.2 else []
        if depth > 0 and not self.has_barrier:
            kinds += ["return"] if self.rng.random() < 0.1 else []
        kinds += ["trap"] if depth > 0 and self.rng.random() < 0.2 else []
        getattr(self, "_" + self.rng.choice(kinds))(depth)

    def _expr(self, depth: int) -> None:
        roll = self.rng.random()
        if roll < 0.7:
            name = self.rng.choice(list(semantics.OPS))
            sem = semantics.OPS[name]
            ty = self.rng.choice([t for t in sem.types if t in TYPES])  # this file's types
            arity = 2 if sem.kind in ("binary", "compare", "logic") else 1
            self.add(self.b.op(name, *[self.value(ty) for _ in range(arity)]))
        elif roll < 0.75:
            ty = self.rng.choice(TYPES + VECTORS)
            self.add(self.b.select(self.value("i1"), self.value(ty), self.value(ty)))
        elif roll < 0.8:
            ty = self.rng.choice(VECTORS)
            lane = self.rng.randrange(semantics.ELEMENTS[ty].lanes)
            self.add(self.b.extract(self.value(ty), lane))
        elif roll < 0.85:
            ty = self.rng.choice(semantics.FLOATS)
            self.add(self.b.fma(self.value(ty), self.value(ty), self.value(ty)))
        elif roll < 0.95:
            source, target = self.rng.choice(TYPES), self.rng.choice(TYPES)
            self.add(self.b.cast(self.value(source), target))
        else:
            source, target = self.rng.choice(
                [(s, t) for s in semantics.SCALAR_32_TYPES for t in semantics.SCALAR_32_TYPES]
                + [("f16", "bf16"), ("bf16", "f16"), ("f64", "vector<2xui32>")]
                + [("vector<2xui32>", "f64"), ("vector<4xf32>", "vector<4xui32>")]
            )
            self.add(self.b.bitcast(self.value(source), target))

    def _load(self, depth: int) -> None:
        ty = self.rng.choice(TYPES + VECTORS)
        self.add(self.b.load(self.rng.choice(self.buffers[ty]), self.index()))
        if self.rng.random() < 0.3:
            self.add(self.b.buf_len(self.rng.choice(self.buffers[ty])))

    def _store(self, depth: int) -> None:
        ty = self.rng.choice(TYPES + VECTORS)
        self.b.store(self.rng.choice(self.writable[ty]), self.index(), self.value(ty))

    def _atomic(self, depth: int) -> None:
        kind = self.rng.choice(semantics.ATOMIC_OPS)
        expected = self.value("ui32") if kind.startswith("compare_exchange") else None
        self.add(self.b.atomic(kind, "counters", self.index(), self.value("ui32"), expected))

    def _id(self, depth: int) -> None:
        if self.rng.random() < 0.1:
            self.add(self.b.repetition())
            return
        ids = [self.b.invocation_id, self.b.workgroup_id, self.b.local_id, self.b.num_workgroups]
        self.add(self.rng.choice(ids)(self.rng.choice("xyz")))

    def _local(self, depth: int) -> None:
        visible = [entry for scope in self.locals for entry in scope]
        if visible and self.rng.random() < 0.6:
            name, ty = self.rng.choice(visible)
            if self.rng.random() < 0.5:
                self.b.assign(name, self.value(ty))
            else:
                self.add(self.b.var(name, ty))
            return
        ty = self.rng.choice(TYPES)
        name = self.fresh("n")
        self.b.let(name, self.value(ty))
        self.locals[-1].append((name, ty))

    def body(self, depth: int) -> None:
        with self.scope():
            for _ in range(self.rng.randint(1, 4)):
                self.statement(depth, top=False)

    def _if(self, depth: int) -> None:
        cond = self.value("i1")
        with self.b.if_(cond):
            self.body(depth + 1)
        if self.rng.random() < 0.5:
            with self.b.else_():
                self.body(depth + 1)

    def _loop(self, depth: int) -> None:
        name = self.fresh("k")
        lo = self.add(self.b.const(self.rng.randint(0, 3), "ui32"))
        hi = self.add(self.b.const(self.rng.randint(0, 6), "ui32"))
        with self.b.loop(name, lo, hi):
            with self.scope():
                self.add(self.b.var(name, "ui32"))
                for _ in range(self.rng.randint(1, 4)):
                    self.statement(depth + 1, top=False)

    def _block(self, depth: int) -> None:
        context = self.b.block() if self.rng.random() < 0.5 else self.b.region("gen")
        with context:
            self.body(depth + 1)

    def _barrier(self, depth: int) -> None:
        self.b.barrier(self.rng.choice(["seq_cst", "acquire", "release", "acq_rel"]))
        self.has_barrier = True

    def _grid_sync(self, depth: int) -> None:
        self.b.barrier("grid_sync")
        # nothing computed before the split may be used after it
        self.pools = [{t: [] for t in TYPES + VECTORS}]
        self.locals = [[]]

    def _subgroup(self, depth: int) -> None:
        """A subgroup op (top level only: collectives need uniform control flow)."""
        roll = self.rng.randrange(6)
        if roll == 0:
            op = vyre.SubgroupSizeOp()
        elif roll == 1:
            op = vyre.SubgroupLocalIdOp()
        elif roll == 2:
            kind = self.rng.choice(list(semantics.SUBGROUP_REDUCE))
            ty = self.rng.choice(semantics.SUBGROUP_REDUCE[kind][0])
            op = vyre.SubgroupReduceOp(kind, self.value(ty))
        elif roll == 3:
            ty = self.rng.choice(semantics.SUBGROUP_VALUE_TYPES)
            op = vyre.SubgroupShuffleOp(self.value(ty), self.value("ui32"))
        elif roll == 4:
            ty = self.rng.choice(semantics.SUBGROUP_VALUE_TYPES)
            lane = self.add(self.b.const(self.rng.choice([0, 1, 7, 200]), "ui32"))
            op = vyre.SubgroupBroadcastOp(self.value(ty), lane)
        else:
            op = vyre.SubgroupBallotOp(self.value("i1"))
        self.b.insert(op)
        self.add(op.results[0])

    def _return(self, depth: int) -> None:
        self.b.ret()
        self.may_return = True

    def _trap(self, depth: int) -> None:
        self.b.trap(self.value("ui32"), self.rng.choice(["bad", "oops"]))


def random_program(rng: random.Random, name: str):
    gen = _Gen(rng, name)
    gen.declare_buffers()
    for _ in range(rng.randint(3, 25)):
        gen.statement(0, top=True)
    return gen.b.build()


def random_module(seed: int) -> ModuleOp:
    rng = random.Random(seed)
    return module_of([random_program(rng, f"p{k}") for k in range(rng.randint(1, 2))])


def test_generated_modules_verify_and_cover_every_op():
    from vyre_xdsl.diagnostics import verify_module
    from vyre_xdsl.dialects.vyre import Vyre

    seen: set[str] = set()
    kinds: set[tuple[str, str]] = set()
    for seed in range(60):
        module = random_module(seed)
        verify_module(module)
        for op in module.walk():
            seen.add(op.name)
            if op.name == "vyre.barrier":
                kinds.add(("barrier", op.ordering.data))
            if op.name == "vyre.atomic":
                kinds.add(("atomic", op.kind.data))
    # calls are inlined before lowering, so the printer never sees them
    # (tests/dialects/test_calls.py and vyre_xdsl.testing.generators cover them)
    inlined = {"vyre.func", "vyre.call", "vyre.yield"}
    missing = {op.name for op in Vyre.operations} - seen - inlined
    assert not missing, f"never generated: {sorted(missing)}"
    assert ("barrier", "grid_sync") in kinds
    assert {k for t, k in kinds if t == "atomic"} == set(semantics.ATOMIC_OPS)
