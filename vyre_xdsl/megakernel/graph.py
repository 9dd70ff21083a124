"""The program graph of a module: the input of the megakernel planner (SPEC section 7).

Nodes are the module's programs in program order. Values are the host buffers,
by name, in order of first declaration (workgroup buffers are private to a
program and are not values). Dependences run between programs that touch the
same value:

- `data` (read after write): from each program that writes a value to every
  later program that reads it. These are the fusion candidates.
- `anti` (write after read) and `output` (write after write): ordering only.
  They are never fusion candidates, but they constrain stages and cycles and
  count as hazards when two groups are merged.

Values whose final contents leave the run (SPEC section 8: outputs and
read_write "retained" state) also get a materialization edge from their last
writer.

```python
graph = ProgramGraph.from_module(module)
[(d.producer, d.consumer, graph.values[d.value].name, d.kind) for d in graph.dependences]
```
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from xdsl.dialects.builtin import ModuleOp

from vyre_xdsl.abi import RunSignature, signature
from vyre_xdsl.analysis import buffers_read_and_written
from vyre_xdsl.dialects.vyre import ProgramOp, programs
from vyre_xdsl.program_text import canonical_program_text

#: dependence kinds, in the order they sort
DATA, ANTI, OUTPUT = "data", "anti", "output"
DEPENDENCE_KINDS = (DATA, ANTI, OUTPUT)

#: value lifetimes (upstream `ValueLifetime`), see `value_lifetime`
CONSTANT, INVOCATION, RETAINED, OUTPUT_LIFETIME = "constant", "invocation", "retained", "output"
LIFETIMES = (CONSTANT, INVOCATION, RETAINED, OUTPUT_LIFETIME)


@attrs.frozen
class GraphNode:
    """One program of the module."""

    id: int
    name: str
    program: ProgramOp = attrs.field(eq=False, repr=False)
    text: str = attrs.field(repr=False)  # canonical program text
    reads: frozenset[str]
    writes: frozenset[str]
    workgroup: tuple[int, int, int]
    work: int  # number of ops: the node's semantic work in the cost model


@attrs.frozen
class GraphValue:
    """One host buffer, shared by name by every program that declares it."""

    id: int
    name: str
    element: str
    count: int | None  # None: runtime-sized
    access: str  # declarations joined on the fusion access lattice
    lifetime: str
    writers: tuple[int, ...]
    readers: tuple[int, ...]
    requires_input: bool
    is_output: bool
    is_intermediate: bool


@attrs.frozen(order=True)
class Dependence:
    """`consumer` must run after `producer` because both touch `value`."""

    producer: int
    consumer: int
    value: int
    kind: str


@attrs.frozen(order=True)
class Materialization:
    """The final contents of `value` (written last by `producer`) leave the run."""

    producer: int
    value: int


@attrs.frozen
class ProgramGraph:
    nodes: tuple[GraphNode, ...]
    values: tuple[GraphValue, ...]
    dependences: tuple[Dependence, ...]
    materializations: tuple[Materialization, ...]
    signature: RunSignature = attrs.field(eq=False, repr=False)
    #: memo of expensive analyses over this graph (dependence classes, fusion trials)
    memo: dict = attrs.field(factory=dict, eq=False, repr=False)

    @classmethod
    def from_module(cls, module: ModuleOp) -> ProgramGraph:
        return cls.from_programs(programs(module))

    @classmethod
    def from_programs(cls, progs: Sequence[ProgramOp]) -> ProgramGraph:
        sig = signature(progs)
        nodes = tuple(_node(k, program) for k, program in enumerate(progs))
        values = tuple(_value(k, name, progs, nodes, sig) for k, name in enumerate(sig.names))
        return cls(
            nodes=nodes,
            values=values,
            dependences=tuple(sorted(d for v in values for d in _dependences(v))),
            materializations=tuple(
                Materialization(v.writers[-1], v.id)
                for v in values
                if v.writers and v.lifetime in (OUTPUT_LIFETIME, RETAINED)
            ),
            signature=sig,
        )

    def value_named(self, name: str) -> GraphValue:
        for value in self.values:
            if value.name == name:
                return value
        raise KeyError(name)

    def data_edges(self) -> tuple[Dependence, ...]:
        return tuple(d for d in self.dependences if d.kind == DATA)


def join_access(a: str, b: str) -> str:
    """Two declarations of one buffer joined (vyre-semantics section 2, step 3)."""
    if a == b:
        return a
    if "read_write" in (a, b):
        return "read_write"
    if "write_only" in (a, b):
        return "read_write"  # a write mixed with a read or uniform access
    if "uniform" in (a, b):
        return "uniform"
    if "workgroup" in (a, b):
        return "workgroup"
    return "read_only"


def value_lifetime(access: str, requires_input: bool, is_output: bool) -> str:
    """`constant` for uniform buffers; `retained` for state that is both an input
    and an output (read_write); `output` for other outputs; `invocation` for the
    rest (read-only inputs and intermediates: they live for one run)."""
    if access == "uniform":
        return CONSTANT
    if requires_input and is_output:
        return RETAINED
    if is_output:
        return OUTPUT_LIFETIME
    return INVOCATION


def count_ops(program: ProgramOp) -> int:
    return sum(1 for _ in program.walk()) - 1


def _node(index: int, program: ProgramOp) -> GraphNode:
    reads, writes = buffers_read_and_written(program)
    if program.indirect_buffer is not None:
        reads.add(program.indirect_buffer)  # its launch reads the grid
    return GraphNode(
        id=index,
        name=program.sym_name.data,
        program=program,
        text=canonical_program_text(program),
        reads=frozenset(reads),
        writes=frozenset(writes),
        workgroup=program.workgroup,
        work=count_ops(program),
    )


def _value(
    index: int, name: str, progs: Sequence[ProgramOp], nodes: Sequence[GraphNode], sig: RunSignature
) -> GraphValue:
    declared = [b for p in progs for b in p.buffers() if b.buffer_name == name]
    access = declared[0].access_mode
    for other in declared[1:]:
        access = join_access(access, other.access_mode)
    buffer = sig[name]
    return GraphValue(
        id=index,
        name=name,
        element=buffer.element,
        count=buffer.count,
        access=access,
        lifetime=value_lifetime(access, buffer.requires_input, buffer.is_output),
        writers=tuple(n.id for n in nodes if name in n.writes),
        readers=tuple(n.id for n in nodes if name in n.reads),
        requires_input=buffer.requires_input,
        is_output=buffer.is_output,
        is_intermediate=buffer.is_intermediate,
    )


def _dependences(value: GraphValue) -> list[Dependence]:
    found: list[Dependence] = []
    for w in value.writers:
        found += [Dependence(w, r, value.id, DATA) for r in value.readers if r > w]
        found += [Dependence(r, w, value.id, ANTI) for r in value.readers if r < w]
        found += [Dependence(w, w2, value.id, OUTPUT) for w2 in value.writers if w2 > w]
    return found
