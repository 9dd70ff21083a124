"""For benchmarks that compare a program as written with its coarsened forms:
make `vyre_xdsl.compile` run the pipeline with `coarsen-reductions=false`, so
that each variant is coarsened (or not) explicitly by the script, not again by
the pipeline's default.

    import uncoarsened
    uncoarsened.install()     # before any vyre_xdsl.compile
    with uncoarsened.default_pipeline():
        exe = vyre_xdsl.compile(text, backend="wgpu", fuse=True)   # the real default

Both places that build the pipeline are patched: the WGSL backend's (the steps
after fusion) and the front end's (`fuse=True`: the pipeline's fusion steps,
which coarsen the levels fed only by module inputs before `vyre-fuse`).

The persistent compile cache is turned off too (`VYRE_CACHE_DIR=off`): its
entries are keyed by the pipeline's options, which this patch does not change.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os

#: (module, the pipeline function it had before `install`)
_ORIGINALS: list[tuple[object, object]] = []


def _modules() -> list:
    import vyre_xdsl.backends.wgsl.compile as wgsl_compile
    import vyre_xdsl.passes.pipeline as pipeline

    return [wgsl_compile, pipeline]


def install() -> None:
    """Patch the pipeline the WGSL backend and the front end run (idempotent)."""
    os.environ["VYRE_CACHE_DIR"] = "off"
    for module in _modules():
        pipeline = module.vyre_to_kernel
        if getattr(pipeline, "uncoarsened", False):
            continue

        def uncoarsened(*args, _pipeline=pipeline, **kwargs):
            return dataclasses.replace(_pipeline(*args, **kwargs), coarsen_reductions=False)

        uncoarsened.uncoarsened = True
        _ORIGINALS.append((module, pipeline))
        module.vyre_to_kernel = uncoarsened


@contextlib.contextmanager
def default_pipeline():
    """Within it, compiles run the pipeline as it is by default (what `install`
    patched restored); patched again after."""
    patched = [(module, module.vyre_to_kernel) for module, _ in _ORIGINALS]
    for module, original in _ORIGINALS:
        module.vyre_to_kernel = original
    try:
        yield
    finally:
        for module, function in patched:
            module.vyre_to_kernel = function
