"""`vyre-opt -t wgsl`: one WGSL module per descriptor, separated by `// -----`.

The input may be vyre IR (it is lowered first, on a copy) or kernel IR. Target
options mirror the lowering's (`-t 'wgsl{subgroup-size=8}'`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target

from vyre_xdsl.backends.wgsl.compile import compile_module
from vyre_xdsl.lowering.profile import TargetProfile

SEPARATOR = "// -----\n"


@dataclass(frozen=True)
class WGSLTarget(Target):
    name = "wgsl"

    subgroup_size: int = 0
    max_storage_buffers: int = 32

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        profile = TargetProfile(
            subgroup_size=self.subgroup_size, max_storage_buffers=self.max_storage_buffers
        )
        kernels = compile_module(module, profile)
        output.write(SEPARATOR.join(kernel.wgsl for kernel in kernels))


@dataclass(frozen=True)
class VyreWGSLTarget(WGSLTarget):
    """The same target under the name stock `xdsl-opt` sees (`-t vyre-wgsl`; xDSL
    ships a toy `wgsl` target of its own)."""

    name = "vyre-wgsl"
