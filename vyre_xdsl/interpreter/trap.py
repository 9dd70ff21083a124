"""`VyreTrap`: a program trapped (SPEC section 3.2, `vyre.trap`, and si32 `div`/`mod`).

The reference interpreter and the wgpu runtime raise the same class, so callers
handle a trap the same way whatever the backend:

```python
try:
    vyre_xdsl.run(module, inputs, backend="reference")
except VyreTrap as trap:
    trap.tag, trap.address, trap.invocation   # e.g. "si32.div", 0, 17
```
"""

from __future__ import annotations

from vyre_xdsl.diagnostics import VyreError


class VyreTrap(VyreError):
    """A trap raised by a running program.

    `tag` is the trap's tag (`vyre.trap %addr "tag"`, or `semantics.TRAP_SI32_DIV`
    / `TRAP_SI32_MOD`), `address` its ui32 address operand (0 for division traps),
    `invocation` the linear invocation index of the trapping invocation
    (`logical_workgroup * threads_per_workgroup + local_linear_index`, local ids x
    fastest), and `program` the name of the program, when known. The reference
    interpreter also sets `buffers`: every host array as it was when the trapping
    program finished (later programs do not run); other backends may leave it None.
    """

    def __init__(self, tag: str, address: int, invocation: int, program: str | None = None):
        self.tag = tag
        self.address = int(address)
        self.invocation = int(invocation)
        self.program = program
        self.buffers: dict | None = None
        #: the repetition the trap happened in, in a run with `repeat` > 1
        self.repetition: int | None = None
        where = f" in program @{program}" if program else ""
        super().__init__(
            f"trap '{tag}' at address {self.address} in invocation {self.invocation}{where}"
        )

    def in_repetition(self, repetition: int, repeat: int) -> None:
        """Name the repetition (of `repeat`) that trapped, in the message too."""
        self.repetition = repetition
        self.args = (f"{self.args[0]} (repetition {repetition} of {repeat})", *self.args[1:])

    def __reduce__(self):
        return (type(self), (self.tag, self.address, self.invocation, self.program))
