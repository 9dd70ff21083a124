"""The passes of vyre_xdsl, registered lazily by kebab-case name (the xDSL way)."""

from collections.abc import Callable
from importlib import import_module
from importlib.util import find_spec

from xdsl.passes import ModulePass

#: pass name -> (module, class name). One pass per file, except the named pipeline
#: (`vyre-to-kernel`, also `vyre-to-wgsl`), which composes the others.
PASSES: dict[str, tuple[str, str]] = {
    "vyre-to-kernel": ("vyre_xdsl.passes.pipeline", "VyreToKernelPass"),
    "vyre-to-wgsl": ("vyre_xdsl.passes.pipeline", "VyreToWgslPass"),
    "vyre-fuse": ("vyre_xdsl.passes.vyre_fuse", "VyreFusePass"),
    "vyre-lower": ("vyre_xdsl.passes.vyre_lower", "VyreLowerPass"),
    "kernel-verify": ("vyre_xdsl.passes.kernel_verify", "KernelVerifyPass"),
    "kernel-elide-clears": ("vyre_xdsl.passes.kernel_elide_clears", "KernelElideClearsPass"),
    "kernel-vectorize": ("vyre_xdsl.passes.kernel_vectorize", "KernelVectorizePass"),
    "kernel-coarsen": ("vyre_xdsl.passes.kernel_coarsen", "KernelCoarsenPass"),
    "vyre-licm": ("vyre_xdsl.passes.vyre_licm", "VyreLicmPass"),
    "vyre-unroll": ("vyre_xdsl.passes.vyre_unroll", "VyreUnrollPass"),
    "vyre-strength-reduce": ("vyre_xdsl.passes.vyre_strength_reduce", "VyreStrengthReducePass"),
    "vyre-inline": ("vyre_xdsl.passes.vyre_inline", "VyreInlinePass"),
    "vyre-elide-bounds-selects": (
        "vyre_xdsl.passes.vyre_elide_bounds_selects",
        "VyreElideBoundsSelectsPass",
    ),
    "vyre-tile": ("vyre_xdsl.passes.vyre_tile", "VyreTilePass"),
    "vyre-scalar-replace": ("vyre_xdsl.passes.vyre_scalar_replace", "VyreScalarReplacePass"),
    "vyre-split-grid-sync": ("vyre_xdsl.passes.vyre_split_grid_sync", "VyreSplitGridSyncPass"),
    "vyre-privatize-atomics": (
        "vyre_xdsl.passes.vyre_privatize_atomics",
        "VyrePrivatizeAtomicsPass",
    ),
    "vyre-coarsen-reductions": (
        "vyre_xdsl.passes.vyre_coarsen_reductions",
        "VyreCoarsenReductionsPass",
    ),
    "convert-to-vyre": ("vyre_xdsl.passes.convert_to_vyre", "ConvertToVyrePass"),
}


def _factory(module: str, cls: str) -> Callable[[], type[ModulePass]]:
    return lambda: getattr(import_module(module), cls)


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return {
        name: _factory(module, cls)
        for name, (module, cls) in PASSES.items()
        if find_spec(module) is not None
    }
