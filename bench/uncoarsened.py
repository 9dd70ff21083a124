"""For benchmarks that compare a program as written with its coarsened forms:
make `vyre_xdsl.compile` run the pipeline with `coarsen-reductions=false`, so
that each variant is coarsened (or not) explicitly by the script, not again by
the pipeline's default.

    import uncoarsened
    uncoarsened.install()     # before any vyre_xdsl.compile

The persistent compile cache is turned off too (`VYRE_CACHE_DIR=off`): its
entries are keyed by the pipeline's options, which this patch does not change.
"""

from __future__ import annotations

import dataclasses
import os


def install() -> None:
    """Patch the pipeline the WGSL backend runs (idempotent)."""
    os.environ["VYRE_CACHE_DIR"] = "off"
    import vyre_xdsl.backends.wgsl.compile as wgsl_compile

    pipeline = wgsl_compile.vyre_to_kernel
    if getattr(pipeline, "uncoarsened", False):
        return

    def uncoarsened(*args, **kwargs):
        return dataclasses.replace(pipeline(*args, **kwargs), coarsen_reductions=False)

    uncoarsened.uncoarsened = True
    wgsl_compile.vyre_to_kernel = uncoarsened
