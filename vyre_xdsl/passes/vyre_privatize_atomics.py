"""`vyre-privatize-atomics`: atomic updates of a small global buffer go to a
workgroup-memory copy, and each workgroup flushes its copy once.

```
vyre-opt -p vyre-privatize-atomics in.mlir
vyre-opt -p 'vyre-privatize-atomics{max-workgroup-storage=49152 max-bins-per-invocation=8}' in.mlir
```

The named pipeline (`vyre-to-kernel`, and so `--lower`, `vyre_xdsl.compile`,
`vyre_xdsl.run` and `vyre-compile`) runs this pass on every dispatch, after
fusion and after `vyre-split-grid-sync`, with the target's own workgroup
storage; `vyre-to-kernel{privatize-atomics=false}` leaves it out.
`vyre-lower` on its own applies the same rewrite to each part it splits
(`vyre-lower{privatize-atomics=false}` turns it off).

A global buffer `@B` is privatized in a program when

- it is `ui32`, `read_write` or `write_only`, with a static count `N`;
- every access to it in the program is a `vyre.atomic` of one kind among
  `add`, `min`, `max`, `and`, `or`, `xor` whose old value is unused (no load,
  no store, no other kind): then no invocation can observe `@B` while the
  program runs, and since these operations are associative and commutative,
  applying a workgroup's updates to `@B` in one go at its end gives the same
  final contents;
- the workgroup has at least 32 invocations, `N` is at most
  `max-bins-per-invocation` (4) times the workgroup's invocations, and the
  copies fit, next to the program's own workgroup buffers, in the target's
  workgroup storage (`max-workgroup-storage` bytes);
- every invocation reaches the end of the program: it has no `vyre.return`,
  except in `vyre.if %c { vyre.return }` guards at the top level of its body
  (the statements after such a guard move into `vyre.if (not %c)`), and no
  `grid_sync` (split the program first: `vyre-split-grid-sync`).

A widened `[1, 1, 1]` program (one `vyre-lower` gives a larger workgroup) is
never privatized: it has fewer than 32 invocations per workgroup.

A program whose effects all sit under guards that only its first G workgroups
pass (`vyre.if (workgroup_id x < G)`, what fusion writes around an arm)
launches only those G workgroups. The flush runs in every workgroup, so before
rewriting the pass records `active_workgroups = G` on the program: the
workgroups past G only flush identities, and `vyre-lower` keeps the grid of
those G.

The rewrite, for a copy `@__vyre_private_B` (one per privatized buffer):

```mlir
// before
vyre.program @hist workgroup_size [256, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[4096]
  vyre.buffer @out binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %one = vyre.const 1 : ui32
  %old = vyre.atomic add @out[%v], %one : ui32
}
// after
vyre.program @hist workgroup_size [256, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[4096]
  vyre.buffer @out binding 1 write_only : ui32[256]
  vyre.buffer @__vyre_private_out workgroup : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %one = vyre.const 1 : ui32
  %old = vyre.atomic add @__vyre_private_out[%v], %one : ui32
  vyre.barrier
  %lane = vyre.local_id x
  %count = vyre.load @__vyre_private_out[%lane] : ui32
  %identity = vyre.const 0 : ui32
  %changed = vyre.ne %count, %identity : ui32
  vyre.if %changed {
    %flushed = vyre.atomic add @out[%lane], %count : ui32
  }
}
```

Workgroup memory starts zeroed, which is the identity of `add`, `or`, `xor`
and `max`; for `min` and `and` (identity 0xFFFFFFFF) each invocation first
stores the identity into its share of the copy, then a barrier. Each
invocation flushes the bins `lane, lane + T, ...` (T: the workgroup's
invocations), skipping those that still hold the identity, so the flush never
issues more global atomics than the updates it replaces.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from vyre_xdsl.dialects.vyre import programs
from vyre_xdsl.lowering.privatize import (
    DEFAULT_BINS_PER_INVOCATION,
    candidates,
    privatize_program,
)
from vyre_xdsl.target_profile import DEFAULT_PROFILE


@dataclass(frozen=True)
class VyrePrivatizeAtomicsPass(ModulePass):
    """Move qualifying global atomics of each program to workgroup copies (see the
    module docstring)."""

    name = "vyre-privatize-atomics"

    #: bytes of workgroup storage of the target (the WebGPU default: 16 KiB)
    max_workgroup_storage: int = DEFAULT_PROFILE.max_workgroup_storage_bytes
    #: the largest buffer privatized, in elements per workgroup invocation
    max_bins_per_invocation: int = DEFAULT_BINS_PER_INVOCATION

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        privatize_atomics(op, self.max_workgroup_storage, self.max_bins_per_invocation)

    def leaves_unchanged(self, op: ModuleOp) -> bool:
        """No program has a buffer to privatize."""
        return not any(
            candidates(program, self.max_workgroup_storage, self.max_bins_per_invocation)
            for program in programs(op)
        )


def privatize_atomics(
    module: ModuleOp,
    workgroup_storage: int = DEFAULT_PROFILE.max_workgroup_storage_bytes,
    bins_per_invocation: int = DEFAULT_BINS_PER_INVOCATION,
) -> None:
    """Privatize the qualifying atomics of every program of `module`, in place."""
    for program in programs(module):
        privatize_program(program, workgroup_storage, bins_per_invocation)
