"""`vyre-lower` (`--lower`): every `vyre.program` becomes `kernel.descriptor`s, then
`kernel-verify` runs.

Each program is replaced in place by its descriptors (one per part between
`grid_sync` barriers), so the module's order stays the dispatch order. Options
describe the target (defaults: the WebGPU default workgroup limits, 32 storage
buffers, unknown subgroup size):

```
vyre-opt --lower in.mlir
vyre-opt -p 'vyre-lower{subgroup-size=8 max-storage-buffers=16}' in.mlir
vyre-opt -p 'vyre-lower{privatize-atomics=false}' in.mlir
vyre-opt -p 'vyre-lower{elide-clears=false}' in.mlir
```

A program that still has `grid_sync` barriers is split as by
`vyre-split-grid-sync`, and each part (each program, when there is no split)
first goes through atomic privatization (`vyre-privatize-atomics`, bounded by
the profile's workgroup storage) unless `privatize-atomics=false`: the same
functions as those passes, so `vyre-lower` on its own gives the descriptors of
the named pipeline, which runs the two passes as steps of their own before
`vyre-lower{privatize-atomics=false}`. A part (`@p_partK {source = "p", part =
K, count_buffers = [...]}`) becomes descriptor `@p_partK {source = "p", part =
K}`, launched on the whole program's grid cut to the part's active workgroups
(`active_workgroups`, when privatization recorded it). The descriptors then go
through `kernel-elide-clears` (bindings a run need not zero first) unless
`elide-clears=false`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from vyre_xdsl.diagnostics import VyreDiagnostic
from vyre_xdsl.dialects.vyre import ProgramOp
from vyre_xdsl.lowering.lower import lower_program
from vyre_xdsl.passes.kernel_elide_clears import elide_clears
from vyre_xdsl.passes.kernel_verify import verify_descriptors
from vyre_xdsl.passes.vyre_inline import inline_calls
from vyre_xdsl.target_profile import ProfilePass, TargetProfile


@dataclass(frozen=True)
class VyreLowerPass(ProfilePass):
    """Lowers every program of the module to kernel descriptors and verifies them."""

    name = "vyre-lower"

    #: privatize qualifying global atomics into workgroup copies (see vyre-privatize-atomics)
    privatize_atomics: bool = True
    #: mark the bindings a run need not zero first (see kernel-elide-clears)
    elide_clears: bool = True
    #: run kernel-verify at the end (the vyre-to-kernel pipeline runs it as its last step)
    verify: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_module(op, self.profile(), self.privatize_atomics, self.elide_clears, self.verify)


def lower_module(
    module: ModuleOp,
    profile: TargetProfile,
    privatize: bool = True,
    clears: bool = True,
    verify: bool = True,
) -> None:
    """Inline calls, then replace every program of `module` by its descriptors
    (`lower_program`: split, privatized with `privatize`, lowered);
    mark the bindings that need no clear (`clears`); verify them all (`verify`)."""
    inline_calls(module)
    errors: list[tuple[Operation | None, str]] = []
    for program in [o for o in module.ops if isinstance(o, ProgramOp)]:
        try:
            descriptors = lower_program(program, profile, privatize)
        except VyreDiagnostic as error:
            errors.extend(error.errors)
            continue
        module.body.block.insert_ops_before(descriptors, program)
        module.body.block.erase_op(program)
    if errors:
        raise VyreDiagnostic(errors)
    if clears:
        elide_clears(module)
    if verify:
        verify_descriptors(module, profile)
