"""The trap record: `VyreTrap`, the GPU sidecar's layout and tag codes, and its decoding.

Every backend raises the same `VyreTrap` when a program traps (SPEC section
3.2, `vyre.trap`, and si32 `div`/`mod`), so callers handle a trap the same way
whatever the backend:

```python
try:
    vyre_xdsl.run(module, inputs, backend="reference")
except VyreTrap as trap:
    trap.tag, trap.address, trap.invocation   # e.g. "si32.div", 0, 17
```

On the GPU each kernel that may trap binds a sidecar of `SIDECAR_WORDS` u32
words (the kernel dialect's trap sidecar binding). The WGSL printer writes it
(its two forms, locked and lock-free, use the names below) and the runtime
reads it back and decodes it with `decode_sidecar`:

- word 3 holds flags: bit 0 is the lock of the locked form, bit 1 says the
  driver left a loop early (Mesa's lavapipe stops loops after 65535 iterations
  per invocation), bit 2 says an invocation gave up waiting for the lock;
- words 4..7 hold the record: address, `~invocation`, tag code, `~invocation`
  (read as two u64: `(~invocation << 32) | address` and `(~invocation << 32) | code`);
- word 0 (locked form only) is the claim: the largest `~invocation` that trapped.

All zero: no trap, no flag. A tag code `i + 1` names the kernel's `i`-th trap
tag (`tag_code`, `tag_of_code`); 0 is no trap.
"""

from __future__ import annotations

from collections.abc import Sequence

from vyre_xdsl.diagnostics import VyreError

# the sidecar's size is the one the kernel dialect's trap sidecar binding declares
from vyre_xdsl.dialects.kernel import TRAP_SIDECAR_WORDS as SIDECAR_WORDS

# ============================================================================ layout

#: word index of the locked form's claim (the largest `~invocation` that trapped)
SIDECAR_CLAIM = 0
#: word index of the flags
SIDECAR_FLAGS = 3
#: word index of the record's first word (address, ~invocation, code, ~invocation)
SIDECAR_RECORD = 4
#: flag bits of word `SIDECAR_FLAGS`
SIDECAR_LOCK = 1
SIDECAR_LOOP_LEFT_EARLY = 2
SIDECAR_GAVE_UP = 4
#: attempts at the lock before the locked form gives up (sets SIDECAR_GAVE_UP)
TRAP_LOCK_ATTEMPTS = 4096
#: adapter features that let the runtime use the lock-free form
INT64_ATOMIC_FEATURES = ("shader-int64", "shader-int64-atomic-min-max")
#: The loop iterations per invocation after which Mesa's lavapipe leaves a loop
#: (counted over all the loops an invocation runs, nested or one after another).
LAVAPIPE_LOOP_LIMIT = 65535


def tag_code(tags: list[str], tag: str) -> int:
    """The code of `tag` among a kernel's trap `tags` (appended when new): its index + 1."""
    if tag not in tags:
        tags.append(tag)
    return tags.index(tag) + 1


def tag_of_code(tags: Sequence[str], code: int) -> str:
    """The tag a recorded `code` names (a placeholder for a code no tag has)."""
    return tags[code - 1] if 1 <= code <= len(tags) else f"<unknown trap code {code}>"


# ============================================================================ errors


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


class LoopLimitError(VyreError):
    """The driver left a shader loop before its end (Mesa's lavapipe does after
    65535 iterations per invocation, and in a nested loop holding a return that
    only wrap-around reaches: docs/known-issues.md), so the run's results would
    be wrong."""


class TrapNotRecordedError(VyreError):
    """An invocation trapped, but the device could not record which trap it was
    (the locked form of the trap record gave up waiting for its lock)."""


# ============================================================================ decoding


def decode_sidecar(
    words: Sequence[int], tags: Sequence[str], where: str, program: str | None = None
) -> VyreError | None:
    """The error one kernel's sidecar `words` record, or None: the loop flag
    first, since a loop cut short makes everything after it meaningless; then
    the trap of the lowest trapping invocation. The record (address, key,
    code, key) names it when it agrees with the claim (the locked form's word
    0; 0 in the lock-free form); else the trap is reported without a record.
    `tags`: the kernel's trap tags; `where`: how messages name the kernel;
    `program`: the program name a `VyreTrap` carries."""
    if int(words[SIDECAR_FLAGS]) & SIDECAR_LOOP_LEFT_EARLY:
        return LoopLimitError(
            f"kernel '{where}' was stopped inside a loop by the driver, so its results "
            f"would be wrong: Mesa's lavapipe leaves shader loops after {LAVAPIPE_LOOP_LIMIT} "
            "iterations per invocation, counted across all its loops (nested or not), and "
            "it can leave a loop nested in another early when the inner loop holds a "
            "return or trap that only integer wrap-around can reach (docs/known-issues.md). "
            "Fix: run on another Vulkan driver, use backend='reference', or split the work "
            "so that each invocation runs fewer loop iterations"
        )
    claim = int(words[SIDECAR_CLAIM])
    address, key, code, key_again = (int(w) for w in words[SIDECAR_RECORD : SIDECAR_RECORD + 4])
    if claim == 0 and key == 0:
        return None
    if claim not in (0, key) or key_again != key:
        return TrapNotRecordedError(
            f"kernel '{where}': invocation {~claim & 0xFFFFFFFF} trapped, but the trap could "
            "not be recorded on this device: its trap record waits for a lock, and an "
            f"invocation gave up after {TRAP_LOCK_ATTEMPTS} attempts (GPUs promise no "
            "progress between the invocations of one subgroup). Adapters with the features "
            f"{' and '.join(repr(f) for f in INT64_ATOMIC_FEATURES)} record traps without a "
            "lock. Rerun with backend='reference' to see the trap"
        )
    return VyreTrap(tag_of_code(tags, code), address, ~key & 0xFFFFFFFF, program)


def name_repetition(error: VyreError, repetition: int, repeat: int) -> None:
    """Say which repetition of a run with `repeat` raised `error`."""
    if isinstance(error, VyreTrap):
        error.in_repetition(repetition, repeat)
    else:
        error.args = (f"{error} (repetition {repetition} of {repeat})", *error.args[1:])
        error.repetition = repetition


__all__ = [
    "INT64_ATOMIC_FEATURES",
    "LAVAPIPE_LOOP_LIMIT",
    "SIDECAR_CLAIM",
    "SIDECAR_FLAGS",
    "SIDECAR_GAVE_UP",
    "SIDECAR_LOCK",
    "SIDECAR_LOOP_LEFT_EARLY",
    "SIDECAR_RECORD",
    "SIDECAR_WORDS",
    "TRAP_LOCK_ATTEMPTS",
    "LoopLimitError",
    "TrapNotRecordedError",
    "VyreTrap",
    "decode_sidecar",
    "name_repetition",
    "tag_code",
    "tag_of_code",
]
