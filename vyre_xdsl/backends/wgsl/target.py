"""`vyre-opt -t wgsl`: one WGSL module per descriptor, separated by `// -----`.

The input may be vyre IR (it is lowered first, on a copy) or kernel IR. Target
options mirror the lowering's (`-t 'wgsl{subgroup-size=8}'`). In `vyre-opt`,
`-t wgsl` hands a module of xDSL `gpu.module` ops to xDSL's own WGSL printer;
`-t vyre-wgsl` (the name stock `xdsl-opt` sees) prints vyre IR only. A module
with nothing to print is an error that says what to give instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.target import Target

from vyre_xdsl.backends.wgsl.compile import compile_module
from vyre_xdsl.diagnostics import VyreError
from vyre_xdsl.target_profile import TargetProfile

SEPARATOR = "// -----\n"
PRINTABLE = ("vyre.program", "kernel.descriptor")


class NothingToPrint(VyreError, ValueError):
    """The module holds no op the WGSL target prints."""


def _top_level_names(module: ModuleOp) -> set[str]:
    return {op.name for op in module.ops}


@dataclass(frozen=True)
class WGSLTarget(Target):
    name = "wgsl"

    subgroup_size: int = 0
    max_storage_buffers: int = 32

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        names = _top_level_names(module)
        if not names.intersection(PRINTABLE):
            if "gpu.module" in names and self.name == "wgsl":
                from xdsl.backend.wgsl.wgsl_printer import WGSLTarget as XdslWGSLTarget

                XdslWGSLTarget().emit(ctx, module, output)
                return
            raise NothingToPrint(self.nothing_to_print(names))
        profile = TargetProfile(
            subgroup_size=self.subgroup_size, max_storage_buffers=self.max_storage_buffers
        )
        kernels = compile_module(module, profile)
        output.write(SEPARATOR.join(kernel.wgsl for kernel in kernels))

    def nothing_to_print(self, names: set[str]) -> str:
        found = ", ".join(sorted(names)) or "no ops"
        xdsl = "" if self.name != "wgsl" else ", or xDSL gpu.module ops"
        return (
            f"-t {self.name} has nothing to print: the module holds {found}; give it "
            f"vyre.program ops (lowered on the way) or kernel.descriptor ops (from vyre-lower){xdsl}"
        )


@dataclass(frozen=True)
class VyreWGSLTarget(WGSLTarget):
    """The same target under the name stock `xdsl-opt` sees (`-t vyre-wgsl`; xDSL
    ships a toy `wgsl` target of its own)."""

    name = "vyre-wgsl"
