"""Analyses of `vyre` IR that passes build on.

The layer between the dialects (and the semantics table) and the passes: every
in-tree pass (fusion, lowering, `vyre-licm`, `vyre-unroll`,
`vyre-strength-reduce`) and any out-of-tree one takes these facts from here.
Everything is a plain function of the IR; nothing is cached, so results are
always those of the IR as it is now.

| module | answers |
| --- | --- |
| `accesses` | each load/store/atomic with its buffer and index (`accesses`, `access_of`); the buffers an op reads and writes (`buffers_read`, `buffers_written`, `atomic_buffers`) |
| `expressions` | which ops are expressions (`is_expression`), which may trap (`may_trap`, `contains_trap`), which may be moved or dropped freely (`is_speculatable`) |
| `uniformity` | the same value in every invocation of a workgroup (`is_workgroup_uniform`, and `is_kernel_workgroup_uniform` on kernel-dialect IR) or of the whole dispatch (`is_dispatch_uniform`) |
| `locals` | named-local declarations, reads and assignments (`declaration_of`, `locals_assigned_in`, ...) |
| `guards` | what a CUDA-style `if invocation_id x < N` guarantees (`index_bounds` of a condition, `index_guards` around an op), so a pass can compare `N` with the dispatch |
| `indices` | what an index says about invocations (`structurally_equal`, `injective_in_invocation`, `in_workgroup_span`, `value_range`) |
| `dependences` | the dependences between consecutive programs and their strength (`hazards`, `classify`; `barrier_hazards`: the few that place barriers, linear in the programs) as fusion uses them |
| `coverage` | which buffers a kernel descriptor provably writes in full without reading them (`writes_every_element`, `covered_bindings`), so a runtime may leave them uncleared |
| `reductions` | workgroup tree reductions and scans: the shape of a textbook tree level (`tree_level`) and of a Hillis-Steele block scan (`scan_level`), whether its combine may be regrouped (`combine_refusal`) and whether a tree's partials are observable (`partials_refusal`), as `vyre-coarsen-reductions` uses them (import from `vyre_xdsl.analysis.reductions`) |
| `tiling` | the naive matrix product `vyre-tile` tiles (`recognize`: a `TileNest`, or `NotTileable` with the reason), affine index forms (`affine_form`) and whether one is injective over a grid (`injective_over`) |
| `private_elements` | the buffers whose every access is a load or store at one index no two invocations share, accessed in a loop (`private_elements`), as `vyre-scalar-replace` uses them |
| `vector_form` | whether a kernel descriptor may run several logical invocations per invocation, and at which width (`vector_width`, `elementwise`, `width_fits`): what `kernel-vectorize` records |
| `workgroup_memory` | which workgroup bindings a kernel stores in full before any read (`written_before_read`): what `vyre-lower` marks `written_first`; the storage buffers no two invocations touch one element of (`owned_elements`, reading the guards of tiles that overhang their outputs) and whether a kernel's barriers must order storage (`storage_shared_across_barriers`): what `vyre-lower` marks `workgroup_only` |
| `loops` | constant trip ranges (`constant_trip_range`) and which loops a backend prints unrolled (`unrolled_trips`, `rolled_loops`, `unrolled_sizes` for a whole nest in one pass) |

```python
from vyre_xdsl.analysis import buffers_written, is_speculatable, may_trap

written = buffers_written(loop)
movable = [op for op in loop.body.block.ops if is_speculatable(op)]
```
"""

from vyre_xdsl.analysis.accesses import (
    Access,
    access_of,
    accesses,
    accesses_by_buffer,
    atomic_buffers,
    buffers_read,
    buffers_read_and_written,
    buffers_written,
)
from vyre_xdsl.analysis.coverage import covered_bindings, writes_every_element
from vyre_xdsl.analysis.dependences import (
    STRENGTHS,
    Hazard,
    barrier_hazards,
    classify,
    dependence_kind,
    hazards,
)
from vyre_xdsl.analysis.expressions import (
    contains_trap,
    is_expression,
    is_speculatable,
    may_trap,
)
from vyre_xdsl.analysis.guards import IndexBound, index_bounds, index_guards
from vyre_xdsl.analysis.indices import (
    in_workgroup_span,
    injective_in_invocation,
    is_id_expression,
    is_invocation_x,
    structurally_equal,
    value_range,
)
from vyre_xdsl.analysis.locals import (
    declaration_of,
    declared_local_names,
    find_local_declaration,
    local_assignments,
    local_declarations,
    local_reads,
    locals_assigned_in,
    reads_loop_variable,
)
from vyre_xdsl.analysis.tiling import NotTileable, TileNest, affine_form, recognize
from vyre_xdsl.analysis.uniformity import (
    is_dispatch_uniform,
    is_kernel_workgroup_uniform,
    is_workgroup_uniform,
)

__all__ = [
    "STRENGTHS",
    "Access",
    "Hazard",
    "IndexBound",
    "NotTileable",
    "TileNest",
    "access_of",
    "affine_form",
    "accesses",
    "barrier_hazards",
    "accesses_by_buffer",
    "atomic_buffers",
    "buffers_read",
    "buffers_read_and_written",
    "buffers_written",
    "classify",
    "covered_bindings",
    "contains_trap",
    "declaration_of",
    "declared_local_names",
    "dependence_kind",
    "find_local_declaration",
    "hazards",
    "in_workgroup_span",
    "index_bounds",
    "index_guards",
    "injective_in_invocation",
    "is_dispatch_uniform",
    "is_expression",
    "is_id_expression",
    "is_invocation_x",
    "is_speculatable",
    "is_kernel_workgroup_uniform",
    "is_workgroup_uniform",
    "local_assignments",
    "local_declarations",
    "local_reads",
    "locals_assigned_in",
    "may_trap",
    "reads_loop_variable",
    "recognize",
    "structurally_equal",
    "value_range",
    "writes_every_element",
]
