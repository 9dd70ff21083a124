"""Buffer accesses: which op touches which buffer, at which index, reading or writing.

- `vyre.load` reads its buffer, `vyre.store` writes it, `vyre.atomic` reads and
  writes it.
- `vyre.buf_len` reads only the buffer's length, which is fixed for a run, so
  it is not an access of the contents.

```python
from vyre_xdsl.analysis import accesses, buffers_read, buffers_written

for access in accesses(program.statements()):
    print(access.buffer, access.index, access.reads, access.writes)
buffers_written(loop)          # {"out"}: stores and atomics anywhere inside the loop
buffers_read(program)          # loads, and atomics on buffers that are not write_only
```
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from vyre_xdsl.dialects.vyre import AtomicOp, LoadOp, ProgramOp, StoreOp, enclosing_program


@dataclass(frozen=True)
class Access:
    """One load, store or atomic: the op, its buffer's name and its `ui32` index."""

    op: Operation
    buffer: str
    index: SSAValue
    reads: bool
    writes: bool


def access_of(op: Operation) -> Access | None:
    """The buffer access `op` makes itself (nested ops not included), else None."""
    if isinstance(op, LoadOp):
        return Access(op, op.buffer_name, op.index, True, False)
    if isinstance(op, StoreOp):
        return Access(op, op.buffer_name, op.index, False, True)
    if isinstance(op, AtomicOp):
        return Access(op, op.buffer_name, op.index, True, True)
    return None


def accesses(ops: Iterable[Operation]) -> list[Access]:
    """Every access made by `ops` and the ops nested in them, in walk order."""
    found = []
    for top in ops:
        for op in top.walk():
            access = access_of(op)
            if access is not None:
                found.append(access)
    return found


def accesses_by_buffer(ops: Iterable[Operation]) -> dict[str, list[Access]]:
    """`accesses(ops)` grouped by buffer name (buffers in order of first access)."""
    grouped: dict[str, list[Access]] = {}
    for access in accesses(ops):
        grouped.setdefault(access.buffer, []).append(access)
    return grouped


def buffers_written(op: Operation) -> set[str]:
    """Names of the buffers that stores and atomics in `op` (or `op` itself) write."""
    return {a.buffer for a in accesses([op]) if a.writes}


def atomic_buffers(op: Operation) -> set[str]:
    """Names of the buffers that atomics in `op` (or `op` itself) touch."""
    return {inner.buffer_name for inner in op.walk() if isinstance(inner, AtomicOp)}


def buffers_read(op: Operation) -> set[str]:
    """Names of the buffers whose contents `op` (or an op nested in it) may read.

    Loads read. An atomic reads its buffer too, unless the buffer is declared
    `write_only`: such a buffer starts zero-filled, so the atomic sees only
    what the program itself wrote.
    """
    program = op if isinstance(op, ProgramOp) else enclosing_program(op)
    found: set[str] = set()
    for access in accesses([op]):
        if isinstance(access.op, AtomicOp) and _write_only(program, access.buffer):
            continue
        if access.reads:
            found.add(access.buffer)
    return found


def buffers_read_and_written(op: Operation) -> tuple[set[str], set[str]]:
    """`(buffers_read(op), buffers_written(op))`."""
    return buffers_read(op), buffers_written(op)


def _write_only(program: ProgramOp | None, name: str) -> bool:
    declared = None if program is None else program.buffer(name)
    return declared is not None and declared.access_mode == "write_only"
