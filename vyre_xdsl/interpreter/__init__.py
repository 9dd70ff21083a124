"""The reference interpreter: the executable specification of the `vyre` dialect.

It runs a module's programs in order on numpy host arrays with exactly the
semantics of SPEC section 3.4, vectorized across invocations (see
docs/interpreter.md). It is the oracle that fusion, lowering, WGSL and the GPU
runtime are checked against, and the `reference` backend of `vyre_xdsl.run`.

```python
from vyre_xdsl.abi import signature
from vyre_xdsl.interpreter import execute, VyreTrap

sig = signature(module)
final = execute(module, sig.bind({"x": x, "y": y}), sig)   # every host buffer, by name
final["y"]
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from vyre_xdsl.dialects.vyre import ProgramOp, programs
from vyre_xdsl.interpreter.machine import (
    InterpreterError,
    IterationBudget,
    IterationLimitError,
    Machine,
    iteration_limit,
)
from vyre_xdsl.interpreter.trap import VyreTrap
from vyre_xdsl.passes.vyre_inline import inlined
from vyre_xdsl.semantics import DEFAULT_SUBGROUP_SIZE

__all__ = [
    "InterpreterError",
    "IterationBudget",
    "IterationLimitError",
    "VyreTrap",
    "execute",
    "execute_program",
    "execute_programs",
    "iteration_limit",
]


def execute(
    module: ModuleOp,
    buffers: Mapping[str, np.ndarray],
    sig: object = None,
    subgroup_size: int = DEFAULT_SUBGROUP_SIZE,
    max_iterations: int | None = None,
    repeat: int = 1,
) -> dict[str, np.ndarray]:
    """Run every program of `module` in order; return the final host arrays by name.

    `buffers` holds one host array per host buffer (as `RunSignature.bind` gives
    them); they are copied, never modified. The result holds every host buffer,
    outputs and intermediates alike. `sig` is accepted for the backend interface
    and not needed. Works the same on fused and unfused modules; calls to
    `vyre.func`s are inlined first (on a copy, `vyre-inline`).
    Raises `VyreTrap` after the first program in which an invocation trapped
    (its `buffers` hold the host arrays at that point; later programs do not run).
    Subgroup ops see subgroups of `subgroup_size` lanes, formed by local invocation
    index within each workgroup (upstream's simulator; 32 unless told otherwise).
    `max_iterations` bounds the run's loop iterations summed over the
    invocations that take them (`IterationLimitError` before the loop that
    would go past it starts); None: no bound, else shared by all repetitions.
    `repeat` runs the programs that many times in order on the same arrays
    (`vyre.repetition` is the repetition, 0 .. repeat - 1); a trap names its
    repetition (`VyreTrap.repetition`).
    """
    return execute_programs(
        programs(inlined(module)), buffers, subgroup_size, max_iterations, repeat
    )


def execute_programs(
    progs: Sequence[ProgramOp],
    buffers: Mapping[str, np.ndarray],
    subgroup_size: int = DEFAULT_SUBGROUP_SIZE,
    max_iterations: int | None = None,
    repeat: int = 1,
) -> dict[str, np.ndarray]:
    """Run `progs` in order on copies of `buffers`, `repeat` times; return the
    final host arrays. `max_iterations` is shared by all of them (see `execute`)."""
    budget = None if max_iterations is None else IterationBudget(max_iterations)
    host = {name: np.array(array, copy=True).reshape(-1) for name, array in buffers.items()}
    # parts of a program split at grid_sync pass values through scratch buffers:
    # the machine keeps them in `host` between programs; they are no host buffers
    scratch = {b.buffer_name for p in progs for b in p.buffers() if b.is_scratch}
    scratch -= set(buffers)
    for repetition in range(repeat):
        for program in progs:
            try:
                Machine(program, host, subgroup_size, budget, repetition).run()
            except VyreTrap as trap:
                trap.buffers = {n: a for n, a in host.items() if n not in scratch}
                if repeat > 1:
                    trap.in_repetition(repetition, repeat)
                raise
    return {name: array for name, array in host.items() if name not in scratch}


def execute_program(
    program: ProgramOp, host: dict[str, np.ndarray], subgroup_size: int = DEFAULT_SUBGROUP_SIZE
) -> None:
    """Run one program, updating the one-dimensional host arrays in `host` in place."""
    Machine(program, host, subgroup_size).run()
