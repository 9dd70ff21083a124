"""The Python API: parse, run, and the backend registry.

```python
import numpy as np, vyre_xdsl
out = vyre_xdsl.run(open("examples/axpy.mlir").read(),
                    inputs={"x": np.ones(1024, np.float32), "y": np.zeros(1024, np.float32)},
                    backend="reference")
out["y"]
```
"""

from __future__ import annotations

import math
import os
import threading
import warnings
from collections import OrderedDict
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from vyre_xdsl.abi import RunSignature, require_mapping
from vyre_xdsl.conversion import (
    SHAPES_ATTRIBUTE,
    check_memref_inputs,
    in_memref_shapes,
    memref_shapes,
)
from vyre_xdsl.diagnostics import VyreError  # noqa: F401 (the API's base error)
from vyre_xdsl.frontend import (  # noqa: F401 (fuse_module, module_digest, ModuleTypeError: the API's)
    ModuleTypeError,
    Source,
    accept,
    fuse_module,
    module_digest,
    parse,
    prepare,
)
from vyre_xdsl.runtime.backend import (
    Backend,
    MaxIterationsError,  # noqa: F401 (the API's error, defined with the backends)
    SubgroupSizeError,  # noqa: F401 (the API's error, defined with the backends)
    UnknownBackendError,
    resolve_backend,
)
from vyre_xdsl.target_profile import TargetProfile

#: backend name -> "module:attribute": a `vyre_xdsl.runtime.backend.Backend`
#: (`compile(module) -> Compiled`, `Compiled.run(buffers)`), or a function
#:   execute(module: ModuleOp, buffers: dict[str, np.ndarray], sig: RunSignature) -> dict[str, np.ndarray]
#: (`buffers` holds one host array per host buffer, inputs bound, others
#: zero-filled; the function returns the final contents of (at least) every
#: output buffer), which runs as a `FunctionBackend`.
BACKENDS: dict[str, str] = {
    "reference": "vyre_xdsl.runtime.backend:REFERENCE",
    "wgpu": "vyre_xdsl.runtime.wgpu_backend:WGPU",
}


_RESOLVED: dict[tuple[str, str], Backend] = {}


def backend_named(name: str) -> Backend:
    """The `Backend` that `BACKENDS[name]` names (an unknown name is an
    `UnknownBackendError`)."""
    if name not in BACKENDS:
        raise UnknownBackendError(f"unknown backend '{name}'; choose from {', '.join(BACKENDS)}")
    key = (name, BACKENDS[name])
    found = _RESOLVED.get(key)
    if found is None:
        found = _RESOLVED[key] = resolve_backend(name, BACKENDS[name])
    return found


_FALLBACK_WARNED = False


def default_backend() -> str:
    """`wgpu` when a GPU adapter exists, else `reference` (warning once per
    process that the run falls back to the interpreter)."""
    global _FALLBACK_WARNED
    try:
        from vyre_xdsl.runtime import adapter_available
    except ImportError:
        return "reference"
    if adapter_available():
        return "wgpu"
    if not _FALLBACK_WARNED:
        _FALLBACK_WARNED = True
        from vyre_xdsl.runtime.device import no_adapter_message

        warnings.warn(
            f"vyre_xdsl: running on the reference interpreter: {no_adapter_message()}",
            RuntimeWarning,
            stacklevel=3,
        )
    return "reference"


def run(
    module_or_text: ModuleOp | str,
    inputs: Mapping[str, object] | None = None,
    backend: str | None = None,
    fuse: bool | str = False,
    *,
    adapter: int | str | None = None,
    device: bool = False,
    subgroup_size: int | None = None,
    max_iterations: int | None = None,
    repeat: int = 1,
    grid=None,
) -> dict[str, np.ndarray]:
    """Run a module and return its output buffers by name (SPEC section 8).

    `fuse=True` applies `vyre-fuse` first (fusing where its cost model says
    fusion wins); `fuse="force"` fuses every program into one (`force=true`).

    The compiled module is cached (see `cached_executable`): a repeated run of
    the same module costs about what `Executable.run` costs. `adapter`,
    `device`, `subgroup_size`, `max_iterations`, `repeat` and `grid` are as for
    `compile` and `Executable.run` (here the grid applies before compiling, so
    a module whose own derived grid would be refused runs on the one given).
    """
    check_repeat(repeat)
    # the grid applies to the module before it is compiled (`frontend.accept`)
    source = accept(module_or_text, grid=grid, check=False, copy=True)
    exe = _cached(source, backend, fuse, adapter)
    return exe.run(
        inputs,
        device=device,
        subgroup_size=subgroup_size,
        max_iterations=max_iterations,
        repeat=repeat,
    )


def check_repeat(repeat: object) -> int:
    """`repeat` checked: an int of at least 1 (else a `ValueError`)."""
    if isinstance(repeat, bool) or not isinstance(repeat, int | np.integer):
        raise ValueError(f"repeat must be an int of at least 1, not {repeat!r}")
    if repeat < 1:
        raise ValueError(
            f"repeat is {repeat}; it must be at least 1 (the programs run that many times)"
        )
    return int(repeat)


def _source_file(source: Source) -> str:
    """The file name the ops of `source` are located in: its module's (a module
    parsed by a tool from a file), else the name its text is parsed under."""
    from xdsl.dialects.builtin import FileLineColLoc

    location = source.module.location if source.module is not None else None
    return location.filename.data if isinstance(location, FileLineColLoc) else source.name


class Executable:
    """A module compiled once for one backend: `run(inputs)` only binds, executes
    and reads back (no parsing, verification, fusion or compilation per call).

    ```python
    exe = vyre_xdsl.compile(text, backend="wgpu", fuse=True)
    for batch in batches:
        out = exe.run({"x": batch})
    ```

    The backend (`backend_named(backend)`, a `runtime.backend.Backend`)
    compiles the module into `self.compiled` (a `runtime.backend.Compiled`),
    which binds and runs. On the wgpu backend the kernels are compiled for the
    device's own limits (`GpuDevice.target_profile`), or with `portable=True`
    for the WebGPU defaults every device meets (`target_profile.PORTABLE_PROFILE`).
    """

    def __init__(
        self,
        source: Source | ModuleOp | str | bytes,
        backend: str,
        fuse: bool | str = False,
        adapter: int | str | None = None,
        portable: bool = False,
        *,
        cache: bool = True,
        digest: bool = False,
        workgroup_size=None,
    ):
        # `source`: what `frontend.accept` made of the input (IR text or a module
        # is accepted here, with `workgroup_size`). The persistent
        # compile cache keys it by its text as given, else by its digest: a hit
        # loads what was stored (it was prepared and lowered then); a miss is
        # prepared by the front end (`frontend.prepare`), compiled and stored.
        # `cache=False`: not through the compile cache. `digest`: learn the IR
        # digest of the module as given (`source_digest`) even when nothing is
        # stored.
        self._grid_variants: dict[tuple, Executable] = {}
        self._locations = None  # (stored op locations, source name) on a cache hit
        self.backend = backend
        #: GPU time per kernel of the last `run(..., profile=True)` (a `RunProfile`)
        self.last_profile = None
        chosen = backend_named(backend)
        if not isinstance(source, Source):
            source = accept(source, workgroup_size=workgroup_size)
        store = _disk_store() if cache else None
        # the backend's target (a dict, None for the reference backend): the
        # cache key and the pipeline's fusion steps depend on it
        target = chosen.target_profile(adapter, portable) if store is not None or fuse else None
        artifact = None
        if store is not None:
            from vyre_xdsl.runtime import disk_cache

            options = {"fuse": fuse, "profile": target}
            key = disk_cache.artifact_key(
                disk_cache.source_key(source.text, source.digest), backend, options
            )
            artifact = disk_cache.load_artifact(store, key)
        if artifact is not None:
            #: the IR digest of the module as given (None: not known)
            self.source_digest = artifact.digest
            self._launch_options = (None, fuse, adapter, portable)  # for grid overrides
            self.signature: RunSignature = artifact.signature
            self._module = None
            self._module_text, self._digest = artifact.module_text, None
            # errors raised from the stored module name the input's locations
            self._locations = (artifact.locations, _source_file(source))
            self._shapes = (
                memref_shapes(self.module) if SHAPES_ATTRIBUTE in self._module_text else {}
            )
            self.compiled = chosen.load(
                self.signature,
                module=lambda: self.module,
                kernels=artifact.kernels,
                adapter=adapter,
            )
        else:
            profile = TargetProfile(**target) if target else None
            prepared = prepare(source, fuse, digest=digest or store is not None, profile=profile)
            self.source_digest = prepared.digest
            self._launch_options = (prepared.source, fuse, adapter, portable)
            self.signature = prepared.signature
            self._module = prepared.module
            self._module_text, self._digest = prepared.printed or (None, None)
            # converted standard MLIR: outputs come back in the memref's shape
            self._shapes = prepared.shapes
            self.compiled = chosen.compile(
                self._module,
                self.signature,
                adapter=adapter,
                portable=portable,
                verified=True,
                digest=self._module_digest,
            )
        self.gpu = self.compiled.gpu  # the GpuDevice the kernels run on, or None
        self._outputs = self.signature.outputs
        self._kernels = self.compiled.kernels
        if store is not None and artifact is None:
            # the canonical text `prepare(digest=True)` printed is what is stored
            stored = disk_cache.Artifact(
                self.signature,
                self._module_text,
                self._kernels,
                self.source_digest,
                disk_cache.op_locations(self._module, _source_file(source)),
            )
            disk_cache.store_artifact(store, key, stored)

    @property
    def adapter(self) -> str | None:
        """The adapter the kernels run on (`[index] description`), or None."""
        return self.compiled.adapter

    @property
    def module(self) -> ModuleOp:
        """The module this executable runs (fused where asked). One that came
        from the disk cache is parsed on first use."""
        if self._module is None:
            module = parse(self._module_text, "<compile cache>")
            if self._locations is not None:
                from vyre_xdsl.runtime import disk_cache

                disk_cache.restore_locations(module, *self._locations)
            self._module = module
        return self._module

    def _module_digest(self) -> str:
        """The IR digest of the module this executable runs (`program_text.ir_digest`),
        from its canonical text (printed once: the front end may have printed it)."""
        if self._digest is None:
            from vyre_xdsl.program_text import canonical_text, text_digest

            canonical = canonical_text(self.module)
            self._digest = text_digest(canonical)
            if self._module_text is None:
                self._module_text = canonical
        return self._digest

    def run(
        self,
        inputs: Mapping[str, object] | None = None,
        *,
        device: bool = False,
        profile: bool = False,
        subgroup_size: int | None = None,
        max_iterations: int | None = None,
        repeat: int = 1,
        grid=None,
    ) -> dict[str, object]:
        """Run on `inputs` (host arrays or `DeviceArray`s, by buffer name).

        Returns the outputs as numpy arrays, or with `device=True` as
        `DeviceArray`s that stay on the GPU: such a run is only recorded, and
        submitted at the next read, `vyre_xdsl.synchronize()` or host-output
        run, which also raises its trap (docs/runtime.md, "Submission"). With `profile=True` the GPU time
        of every kernel is in `self.last_profile` afterwards (`run_result`
        returns it with the outputs). `subgroup_size`
        is the size of the subgroups the reference backend simulates (default
        32); on a GPU the adapter decides it. `max_iterations` bounds the
        reference backend's work: the run raises `IterationLimitError` before
        a loop that would take its loop iterations, summed over the
        invocations that run them, past this number (from any thread),
        summed over all repetitions.

        `repeat=N` runs the module's programs N times, in program order, on
        the same buffers (what one repetition writes, the next one reads; a
        buffer that is both input and output carries over), and reads the
        outputs after the last; `vyre.repetition` is the current repetition,
        0 .. N - 1. On the GPU all N repetitions are one submission. A trap
        names its repetition (`VyreTrap.repetition`). `repeat` < 1 or not an
        int is a `ValueError`.

        `grid=(GX, GY, GZ)` launches the module's one program on that explicit
        grid (a mapping {program name: (GX, GY, GZ)} when it has several), on
        every backend alike; an invalid grid is a `ValueError`.
        """
        result = self.run_result(
            inputs,
            device=device,
            profile=profile,
            subgroup_size=subgroup_size,
            max_iterations=max_iterations,
            repeat=repeat,
            grid=grid,
        )
        if profile:
            self.last_profile = result.profile
        return result.buffers

    def run_result(
        self,
        inputs: Mapping[str, object] | None = None,
        *,
        device: bool = False,
        profile: bool = False,
        subgroup_size: int | None = None,
        max_iterations: int | None = None,
        repeat: int = 1,
        grid=None,
    ):
        """`run`, returning a `runtime.backend.RunResult`: the outputs
        (`buffers`) and, with `profile=True`, the GPU time of every kernel
        (`profile`, a `RunProfile`), without touching `last_profile`."""
        if repeat.__class__ is not int or repeat < 1:
            repeat = check_repeat(repeat)
        if grid is not None:
            return self._with_grid(grid).run_result(
                inputs,
                device=device,
                profile=profile,
                subgroup_size=subgroup_size,
                max_iterations=max_iterations,
                repeat=repeat,
            )
        if inputs.__class__ is not dict:
            inputs = require_mapping({} if inputs is None else inputs)
        if self._shapes:
            check_memref_inputs(inputs, self._shapes, self.signature)
        compiled = self.compiled
        if (
            profile
            or subgroup_size is not None
            or max_iterations is not None
            or (device and not compiled.device_outputs)
        ):
            compiled.check_options(
                keep=device,
                profile=profile,
                subgroup_size=subgroup_size,
                max_iterations=max_iterations,
            )
        result = compiled.run(
            compiled.bind(inputs),
            keep=device,
            profile=profile,
            subgroup_size=subgroup_size,
            max_iterations=max_iterations,
            repeat=repeat,
        )
        if device:
            result.buffers = self._device_outputs(result.buffers, inputs)
        else:
            outputs = self.signature.outputs_of(result.buffers, inputs)
            result.buffers = in_memref_shapes(outputs, self._shapes)
        return result

    def _with_grid(self, grid) -> Executable:
        """This executable with the programs `grid` names on explicit grids
        (compiled once per distinct override)."""
        from vyre_xdsl.launch import grid_overrides

        source, fuse, adapter, portable = self._launch_options
        if source is None:
            source = self.module
        grids = grid_overrides(source, grid)
        key = tuple(sorted(grids.items()))
        exe = self._grid_variants.get(key)
        if exe is None:
            overridden = accept(source, grid=grids)
            exe = Executable(overridden, self.backend, fuse, adapter, portable, cache=False)
            self._grid_variants[key] = exe
        return exe

    def _device_outputs(
        self, final: Mapping[str, object], inputs: Mapping[str, object]
    ) -> dict[str, object]:
        """The outputs (`DeviceArray`s) with the shape rule of host outputs: an
        output whose buffer was given as an input has that input's shape."""
        outputs = {}
        for name in self._outputs:
            value = outputs[name] = final[name]
            given = inputs.get(name)
            if given is None or given is value:
                continue
            shape = getattr(given, "shape", None)
            if shape is not None and math.prod(shape) == value.size:
                value.shape = tuple(shape)
        return outputs


def compile(
    module_or_text: ModuleOp | str,
    backend: str | None = None,
    fuse: bool | str = False,
    *,
    adapter: int | str | None = None,
    portable: bool = False,
    workgroup_size=None,
) -> Executable:
    """Parse, verify, (fuse,) and compile once; see `Executable`. `adapter`
    picks the device (an index into `vyre_xdsl.runtime.adapters()` or a
    substring of its description; default: `VYRE_ADAPTER`, else the best).
    `workgroup_size=(X, Y, Z)` replaces every program's workgroup size (each
    axis within [256, 256, 64], at most 256 invocations; else a `ValueError`).

    The result comes from the persistent compile cache when an earlier
    process compiled the same text (or module) with the same options for the
    same target (docs/runtime.md, "Caches"); then nothing is parsed or lowered."""
    name = backend or default_backend()
    fuse = _fuse_mode(fuse)
    return Executable(module_or_text, name, fuse, adapter, portable, workgroup_size=workgroup_size)


def _disk_store():
    """The persistent compile cache, or None when it is off (or while
    `VYRE_DUMP_KDESC` asks for the dump that compiling writes)."""
    from vyre_xdsl.backends.wgsl.compile import DUMP_ENV

    if os.environ.get(DUMP_ENV):
        return None
    from vyre_xdsl.runtime.disk_cache import default_cache

    return default_cache()


def _fuse_mode(fuse: object) -> bool | str:
    """`fuse` checked: False, True (the cost model) or "force"."""
    if fuse == "force":
        return "force"
    if isinstance(fuse, str | bytes):
        raise ValueError(f"fuse must be True, False or 'force', not {fuse!r}")
    return bool(fuse)


# ============================================================================ run() cache


#: compiled executables `run()` keeps (least recently used dropped first)
RUN_CACHE_SIZE = 32
_EXECUTABLES: OrderedDict[tuple, Executable] = OrderedDict()
_TEXT_DIGESTS: OrderedDict[str, str] = OrderedDict()
_CACHE_STATS = {"hits": 0, "misses": 0}
#: held while `run()`'s caches change (threads share them)
_CACHE_LOCK = threading.Lock()


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    size: int
    maxsize: int


def cache_info() -> CacheInfo:
    """Hits and misses of `run()`'s executable cache, and its size."""
    return CacheInfo(
        _CACHE_STATS["hits"], _CACHE_STATS["misses"], len(_EXECUTABLES), RUN_CACHE_SIZE
    )


def clear_cache(disk: bool = False) -> None:
    """Empty `run()`'s executable cache (and the runtime's compiled-kernel
    cache) and reset its statistics; free every device's compiled pipelines,
    run plans and free pooled buffers. With `disk=True` also remove every
    entry of the persistent compile cache (`disk_cache_info()`)."""
    _EXECUTABLES.clear()
    _TEXT_DIGESTS.clear()
    _CACHE_STATS.update(hits=0, misses=0)
    if disk:
        from vyre_xdsl.runtime.disk_cache import default_cache

        store = default_cache()
        if store is not None:
            store.clear()
    try:
        from vyre_xdsl.runtime.execute import _COMPILED
    except ImportError:
        return
    _COMPILED.clear()
    from vyre_xdsl.runtime.device import clear_device_caches

    clear_device_caches()


def disk_cache_info():
    """The persistent compile cache: a `DiskCacheInfo(directory, entries, bytes,
    max_bytes)`, or None when `VYRE_CACHE_DIR=off`."""
    from vyre_xdsl.runtime.disk_cache import default_cache

    store = default_cache()
    return None if store is None else store.info()


def cached_executable(
    module_or_text: ModuleOp | str,
    backend: str | None = None,
    fuse: bool | str = False,
    adapter: int | str | None = None,
) -> Executable:
    """The `Executable` `run()` uses: cached by (the module's canonical digest,
    backend, fuse, adapter index), an LRU of `RUN_CACHE_SIZE`. Text is parsed
    and verified once per distinct text, and not at all when the persistent
    compile cache has it; a module is verified and copied (its caller may change
    it after the run) only when it is compiled."""
    source = accept(module_or_text, check=False, copy=True)
    return _cached(source, backend, fuse, adapter)


def _cached(
    source: Source, backend: str | None, fuse: bool | str, adapter: int | str | None
) -> Executable:
    """`cached_executable` of an accepted `source`: a text not seen yet is
    compiled (or loaded from the persistent compile cache, unparsed) to learn
    its digest; a module's digest is known."""
    name = backend or default_backend()
    where = backend_named(name).device_key(adapter)
    fuse = _fuse_mode(fuse)
    text = source.text
    digest = source.digest if text is None else _TEXT_DIGESTS.get(text)
    held = None if digest is None else _held((digest, name, fuse, where))
    if held is not None:
        return held
    exe = Executable(source, name, fuse, where, digest=True)
    key = (exe.source_digest, name, fuse, where)
    with _CACHE_LOCK:
        if text is not None:
            _TEXT_DIGESTS[text] = exe.source_digest
            _trim(_TEXT_DIGESTS, 4 * RUN_CACHE_SIZE)
        held = _EXECUTABLES.get(key)  # a text that differs only in names, or another thread
        if held is None:
            _EXECUTABLES[key] = exe
            _trim(_EXECUTABLES, RUN_CACHE_SIZE)
        else:
            _EXECUTABLES.move_to_end(key)
        _CACHE_STATS["misses" if held is None else "hits"] += 1
    return exe if held is None else held


def _held(key: tuple) -> Executable | None:
    """The executable `run()`'s cache holds for `key` (a hit), else None."""
    with _CACHE_LOCK:  # another thread may drop the key between a get and a move
        exe = _EXECUTABLES.get(key)
        if exe is not None:
            _EXECUTABLES.move_to_end(key)
            _CACHE_STATS["hits"] += 1
    return exe


def _trim(cache: OrderedDict, limit: int) -> None:
    """Drop the least recently used entries of `cache` past `limit` (under the lock)."""
    while len(cache) > limit:
        cache.popitem(last=False)
