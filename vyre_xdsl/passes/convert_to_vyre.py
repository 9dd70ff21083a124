"""`convert-to-vyre`: standard MLIR (`func`, `arith`, `math`, `scf`, `memref`,
`linalg`) to `vyre.program`s.

```
vyre-opt -p convert-to-vyre matmul.mlir
vyre-opt --fuse --lower stencil.mlir     # converts first, by itself
```

Each outermost parallel loop nest becomes one program whose invocations are
its iterations; sequential code between them runs in one-invocation programs;
function arguments become buffers named after them. docs/mlir-input.md has
the whole mapping. A module without `func.func` is left unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from vyre_xdsl.conversion import convert_module, is_standard


@dataclass(frozen=True)
class ConvertToVyrePass(ModulePass):
    """Converts the module's `func.func` to `vyre.program`s."""

    name = "convert-to-vyre"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        convert_module(op)

    def leaves_unchanged(self, op: ModuleOp) -> bool:
        """Only standard MLIR is converted; anything else is left as it is."""
        return not is_standard(op)
