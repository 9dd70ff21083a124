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
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import NamedTuple

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from vyre_xdsl.abi import RunSignature, require_mapping, signature
from vyre_xdsl.context import parse_module, vyre_context
from vyre_xdsl.diagnostics import VyreError, check_runnable, verify_after_pass, verify_module

#: backend name -> "module:function" with signature
#:   execute(module: ModuleOp, buffers: dict[str, np.ndarray], sig: RunSignature) -> dict[str, np.ndarray]
#: `buffers` holds one host array per host buffer (inputs bound, others zero-filled);
#: the function returns the final contents of (at least) every output buffer.
BACKENDS: dict[str, str] = {
    "reference": "vyre_xdsl.interpreter:execute",
    "wgpu": "vyre_xdsl.runtime:execute",
}


class UnknownBackendError(VyreError):
    pass


class ModuleTypeError(VyreError, TypeError):
    """`run`/`compile` got something that is neither IR text nor a `ModuleOp`."""


class SubgroupSizeError(VyreError, ValueError):
    """`subgroup_size=` was given for a backend whose hardware decides it."""


def _check_module_type(module_or_text: object) -> None:
    if not isinstance(module_or_text, str | bytes | ModuleOp):
        raise ModuleTypeError(
            f"expected vyre IR text or a ModuleOp, not {type(module_or_text).__name__}"
        )


def parse(text: str | bytes, name: str = "<input>") -> ModuleOp:
    """Parse and verify vyre IR text (bytes must be UTF-8); errors are located
    `VyreDiagnostic`s."""
    from xdsl.utils.exceptions import ParseError

    from vyre_xdsl.diagnostics import VyreDiagnostic

    try:
        module = parse_module(text, name)
    except ParseError as error:
        raise VyreDiagnostic([(None, str(error))]) from None
    verify_module(module)
    return module


def _backend(name: str) -> Callable[..., dict[str, np.ndarray]]:
    if name not in BACKENDS:
        raise UnknownBackendError(f"unknown backend '{name}'; choose from {', '.join(BACKENDS)}")
    module, function = BACKENDS[name].split(":")
    return getattr(import_module(module), function)


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


def fuse_module(module: ModuleOp, *, force: bool = False) -> ModuleOp:
    """A fused copy of `module` (the `vyre-fuse` pass); `module` is unchanged.
    `force`: fuse every program into one, even where the cost model says it loses."""
    from vyre_xdsl.passes.vyre_fuse import VyreFusePass

    fused = module.clone()
    VyreFusePass(force=force).apply(vyre_context(), fused)
    verify_after_pass(fused, VyreFusePass.name)
    return fused


def run(
    module_or_text: ModuleOp | str,
    inputs: Mapping[str, object] | None = None,
    backend: str | None = None,
    fuse: bool | str = False,
    *,
    adapter: int | str | None = None,
    device: bool = False,
    subgroup_size: int | None = None,
) -> dict[str, np.ndarray]:
    """Run a module and return its output buffers by name (SPEC section 8).

    `fuse=True` applies `vyre-fuse` first (fusing where its cost model says
    fusion wins); `fuse="force"` fuses every program into one (`force=true`).

    The compiled module is cached (see `cached_executable`): a repeated run of
    the same module costs about what `Executable.run` costs. `adapter`,
    `device` and `subgroup_size` are as for `compile` and `Executable.run`.
    """
    exe = cached_executable(module_or_text, backend, fuse, adapter)
    return exe.run(inputs, device=device, subgroup_size=subgroup_size)


class Executable:
    """A module compiled once for one backend: `run(inputs)` only binds, executes
    and reads back (no parsing, verification, fusion or compilation per call).

    ```python
    exe = vyre_xdsl.compile(text, backend="wgpu", fuse=True)
    for batch in batches:
        out = exe.run({"x": batch})
    ```

    On the wgpu backend the kernels are compiled for the device's own limits
    (`GpuDevice.target_profile`), or with `portable=True` for the WebGPU
    defaults every device meets (`lowering.profile.PORTABLE_PROFILE`).
    """

    def __init__(
        self,
        module: ModuleOp,
        backend: str,
        fuse: bool | str,
        adapter: int | str | None = None,
        portable: bool = False,
    ):
        check_runnable(module)
        self.signature: RunSignature = signature(module)
        self.backend = backend
        self.module = fuse_module(module, force=fuse == "force") if fuse else module
        #: GPU time per kernel of the last `run(..., profile=True)` (a `RunProfile`)
        self.last_profile = None
        self.gpu = None  # the GpuDevice the kernels run on (wgpu backend)
        self._kernels = None
        self._outputs = list(self.signature.outputs)
        self._uploads = set(self.signature.inputs)
        self._binder = None
        if backend == "wgpu":
            from vyre_xdsl.lowering.profile import PORTABLE_PROFILE
            from vyre_xdsl.runtime.device import gpu_device
            from vyre_xdsl.runtime.execute import compiled_kernels

            self.gpu = gpu_device(adapter)
            profile = PORTABLE_PROFILE if portable else self.gpu.target_profile
            from vyre_xdsl.runtime.execute import run_kernels

            self._kernels = tuple(compiled_kernels(self.module, profile))
            self._binder = _Binder(self.signature, self.gpu)
            self._run_kernels = run_kernels
            self._static_sizes = all(b.count is not None for b in self.signature.buffers)

    @property
    def adapter(self) -> str | None:
        """The adapter the kernels run on (`[index] description`), or None."""
        return None if self.gpu is None else f"[{self.gpu.index}] {self.gpu.describe()}"

    def run(
        self,
        inputs: Mapping[str, object] | None = None,
        *,
        device: bool = False,
        profile: bool = False,
        subgroup_size: int | None = None,
    ) -> dict[str, object]:
        """Run on `inputs` (host arrays or `DeviceArray`s, by buffer name).

        Returns the outputs as numpy arrays, or with `device=True` as
        `DeviceArray`s that stay on the GPU: such a run is only recorded, and
        submitted at the next read, `vyre_xdsl.synchronize()` or host-output
        run, which also raises its trap (docs/runtime.md, "Submission"). With `profile=True` the GPU time
        of every kernel is in `self.last_profile` afterwards. `subgroup_size`
        is the size of the subgroups the reference backend simulates (default
        32); on a GPU the adapter decides it.
        """
        sig = self.signature
        inputs = require_mapping({} if inputs is None else inputs)
        if self._kernels is None:
            host, resident = _bind(sig, inputs, self.gpu)
            return self._run_elsewhere(host, resident, device, profile, inputs, subgroup_size)
        if subgroup_size is not None:
            raise SubgroupSizeError(
                f"subgroup_size={subgroup_size} applies to the reference backend; on a GPU the adapter "
                "decides the subgroup size (a program reads it with vyre.subgroup_size)"
            )
        record = None
        if profile:
            record = {}
            if "timestamp-query" not in self.gpu.features:
                from vyre_xdsl.runtime.timing import ProfilingUnsupportedError

                raise ProfilingUnsupportedError(
                    f"timestamp queries are not supported by this adapter ({self.gpu.describe()}), "
                    "so kernels cannot be timed on it"
                )
        bound = self._binder.bind(inputs)
        final = self._run_kernels(
            self._kernels,
            bound,
            outputs=self._outputs,
            uploads=self._uploads,
            device=self.gpu,
            profile=record,
            keep=device,
            static_sizes=self._static_sizes,
        )
        if record is not None:
            from vyre_xdsl.runtime.timing import run_profile

            names = [k.source or k.id for k in self._kernels]
            self.last_profile = run_profile(names, record["kernel_ns"], self.gpu.describe())
        if device:
            return self._device_outputs(final, inputs)
        return sig.outputs_of({name: _on_host(final[name]) for name in self._outputs}, inputs)

    def _device_outputs(
        self, final: Mapping[str, object], inputs: Mapping[str, object]
    ) -> dict[str, object]:
        """The outputs as `DeviceArray`s, with the shape rule of host outputs: an
        output whose buffer was given as an input has that input's shape."""
        kept = self._binder.device_array
        outputs = {}
        for name in self._outputs:
            value = final[name]
            if type(value) is not kept:
                value = _on_device(value, self.gpu)
            shape = getattr(inputs.get(name), "shape", None)
            if shape is not None and value is not inputs[name] and math.prod(shape) == value.size:
                value.shape = tuple(shape)
            outputs[name] = value
        return outputs

    def _run_elsewhere(
        self, host, resident, device: bool, profile: bool, inputs, subgroup_size: int | None = None
    ) -> dict[str, np.ndarray]:
        """A run on a backend other than wgpu (device arrays are copied to the host)."""
        from vyre_xdsl.runtime.arrays import DeviceArrayError
        from vyre_xdsl.runtime.timing import ProfilingUnsupportedError

        if device:
            raise DeviceArrayError(
                f"device=True needs the wgpu backend; this executable runs on '{self.backend}'"
            )
        if profile:
            raise ProfilingUnsupportedError(
                f"GPU time per kernel (profile=True, vyre-run --time) needs the wgpu backend; this executable runs on '{self.backend}'"
            )
        host.update({name: array.numpy().reshape(-1) for name, array in resident.items()})
        sig = self.signature
        options = {} if subgroup_size is None else {"subgroup_size": subgroup_size}
        final = _backend(self.backend)(self.module, host, sig, **options)
        return sig.outputs_of(final, inputs)


def compile(
    module_or_text: ModuleOp | str,
    backend: str | None = None,
    fuse: bool | str = False,
    *,
    adapter: int | str | None = None,
    portable: bool = False,
) -> Executable:
    """Parse, verify, (fuse,) and compile once; see `Executable`. `adapter`
    picks the device (an index into `vyre_xdsl.runtime.adapters()` or a
    substring of its description; default: `VYRE_ADAPTER`, else the best)."""
    _check_module_type(module_or_text)
    module = parse(module_or_text) if isinstance(module_or_text, str | bytes) else module_or_text
    if not isinstance(module_or_text, str | bytes):
        verify_module(module)
    name = backend or default_backend()
    _backend(name)  # an unknown backend is an error now, not at the first run
    return Executable(module, name, _fuse_mode(fuse), adapter, portable)


def _fuse_mode(fuse: object) -> bool | str:
    """`fuse` checked: False, True (the cost model) or "force"."""
    if fuse == "force":
        return "force"
    if isinstance(fuse, str | bytes):
        raise ValueError(f"fuse must be True, False or 'force', not {fuse!r}")
    return bool(fuse)


def _on_device(array, gpu):
    from vyre_xdsl.runtime.arrays import DeviceArray, upload

    if isinstance(array, DeviceArray):
        return array
    flat = _on_host(array)
    return upload(gpu, np.ascontiguousarray(flat).reshape(-1), (flat.size,))


def _on_host(array) -> np.ndarray:
    """A host array for what a run returned (an output no kernel binds comes
    back as the `ZeroFilled` placeholder it was given)."""
    from vyre_xdsl.runtime.execute import ZeroFilled

    return array.numpy() if isinstance(array, ZeroFilled) else array


# ============================================================================ device inputs


def _bind(
    sig: RunSignature, inputs: Mapping[str, object], gpu
) -> tuple[dict[str, np.ndarray], dict]:
    """(host arrays by name, device arrays by name): `sig.bind` for the host
    arrays, the same checks for the device arrays (which stay where they are)."""
    from vyre_xdsl.runtime.arrays import DeviceArray

    resident = {name: a for name, a in inputs.items() if isinstance(a, DeviceArray)}
    if not resident:
        return sig.bind(inputs), {}
    for name, array in resident.items():
        _check_device_input(sig, name, array, gpu)
    rest = RunSignature(tuple(b for b in sig.buffers if b.name not in resident))
    return rest.bind({n: a for n, a in inputs.items() if n not in resident}), resident


class _Binder:
    """`bind` for the wgpu backend: the same checks as `_bind`, but buffers
    that take no input are `ZeroFilled` placeholders (the GPU clears them; no
    host memory), and what does not depend on the inputs is computed once."""

    def __init__(self, sig: RunSignature, gpu):
        from vyre_xdsl.runtime.arrays import DeviceArray
        from vyre_xdsl.runtime.execute import ZeroFilled

        self.device_array = DeviceArray
        self.sig, self.gpu = sig, gpu
        # name -> (dtype, count) of the inputs a device array passes at a glance
        self.expected = {
            b.name: (b.host_dtype, b.count)
            for b in sig.buffers
            if b.requires_input and b.count is not None
        }
        self.by_name = {b.name: b for b in sig.buffers}
        self.input_names = frozenset(b.name for b in sig.buffers if b.requires_input)
        others = [b for b in sig.buffers if not b.requires_input]
        # a runtime-sized buffer that takes no input is an error `sig.bind` reports
        self.fast = all(b.count is not None for b in others)
        self.zeros = (
            {b.name: ZeroFilled(b.count, b.host_dtype) for b in others} if self.fast else {}
        )
        self.rest: dict[frozenset, RunSignature] = {}

    def bind(self, inputs: Mapping[str, object]) -> dict[str, object]:
        if not self.fast or not self.input_names.issuperset(inputs):
            host, resident = _bind(self.sig, inputs, self.gpu)  # the general path and its errors
            host.update(resident)
            return host
        bound = dict(self.zeros)
        resident = []
        for name, array in inputs.items():
            if type(array) is not self.device_array and not isinstance(array, self.device_array):
                continue
            resident.append(name)
            bound[name] = array
            expected = self.expected.get(name)
            if (
                expected is None
                or array._buffer is None
                or array._gpu is not self.gpu
                or array.size != expected[1]
                or array.dtype != expected[0]
            ):
                _check_device_input(self.sig, name, array, self.gpu, self.by_name)
        key = frozenset(resident)
        rest = self.rest.get(key)
        if rest is None:
            rest = RunSignature(
                tuple(
                    self.by_name[n]
                    for n in self.sig.names
                    if n in self.input_names and n not in key
                )
            )
            self.rest[key] = rest
        if rest.buffers:
            bound.update(rest.bind({n: a for n, a in inputs.items() if n not in key}))
        return bound


def _check_device_input(sig: RunSignature, name: str, array, gpu, by_name=None) -> None:
    from vyre_xdsl.abi import (
        InputDtypeError,
        InputShapeError,
        UnexpectedInputError,
        UnknownBufferError,
    )

    buffer = (by_name or {b.name: b for b in sig.buffers}).get(name)
    if buffer is None:
        raise UnknownBufferError(
            f"unknown buffer '{name}'; the module's buffers are {', '.join(sig.names)}"
        )
    if not buffer.requires_input:
        raise UnexpectedInputError(
            f"buffer '{name}' takes no input: its first declaration is write_only, "
            "so it starts zero-filled"
        )
    array.buffer(gpu)  # freed, or on another device: raises

    def expected() -> str:
        count = "any number of" if buffer.count is None else str(buffer.count)
        return f"{count} {buffer.host_dtype} elements ({buffer.element})"

    if array.dtype != buffer.host_dtype:
        raise InputDtypeError(
            f"device array for buffer '{name}' has dtype {array.dtype}; expected {expected()}"
        )
    if buffer.count is not None and array.size != buffer.count:
        raise InputShapeError(
            f"device array for buffer '{name}' has {array.size} elements; expected {expected()}"
        )
    if buffer.count is None and array.size < buffer.min_count:
        raise InputShapeError(
            f"device array for buffer '{name}' has {array.size} elements; another program declares "
            f"it with {buffer.min_count}, so at least that many are needed"
        )


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


def clear_cache() -> None:
    """Empty `run()`'s executable cache (and the runtime's compiled-kernel
    cache) and reset its statistics; free every device's compiled pipelines,
    run plans and free pooled buffers."""
    _EXECUTABLES.clear()
    _TEXT_DIGESTS.clear()
    _CACHE_STATS.update(hits=0, misses=0)
    try:
        from vyre_xdsl.runtime.execute import _COMPILED
    except ImportError:
        return
    _COMPILED.clear()
    from vyre_xdsl.runtime.device import clear_device_caches

    clear_device_caches()


def module_digest(module: ModuleOp) -> str:
    """BLAKE3 of the module's canonical text (printed with SSA names dropped):
    equal for modules that differ only in value names, spacing or comments."""
    import io

    import blake3
    from xdsl.printer import Printer

    clone = module.clone(clone_name_hints=False)
    for op in clone.walk():
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    arg.name_hint = None
    stream = io.StringIO()
    Printer(stream=stream).print_op(clone)
    return blake3.blake3(stream.getvalue().encode()).hexdigest()


def cached_executable(
    module_or_text: ModuleOp | str,
    backend: str | None = None,
    fuse: bool | str = False,
    adapter: int | str | None = None,
) -> Executable:
    """The `Executable` `run()` uses: cached by (the module's canonical digest,
    backend, fuse, adapter index), an LRU of `RUN_CACHE_SIZE`. Text is parsed
    and verified once per distinct text."""
    _check_module_type(module_or_text)
    name = backend or default_backend()
    _backend(name)
    where = None
    if name == "wgpu":
        from vyre_xdsl.runtime.device import adapter_index

        where = adapter_index(adapter)
    module = None
    if isinstance(module_or_text, str | bytes):
        digest = _TEXT_DIGESTS.get(module_or_text)
        if digest is None:
            module = parse(module_or_text)
            digest = _remember(
                _TEXT_DIGESTS, module_or_text, module_digest(module), 4 * RUN_CACHE_SIZE
            )
    else:
        digest = module_digest(module_or_text)
    fuse = _fuse_mode(fuse)
    key = (digest, name, fuse, where)
    with _CACHE_LOCK:  # another thread may drop the key between a get and a move
        exe = _EXECUTABLES.get(key)
        if exe is not None:
            _EXECUTABLES.move_to_end(key)
    if exe is not None:
        _CACHE_STATS["hits"] += 1
        return exe
    _CACHE_STATS["misses"] += 1
    if module is None and isinstance(module_or_text, str | bytes):
        module = parse(module_or_text)
    elif module is None:  # a copy: the caller may change its module after the run
        verify_module(module_or_text)
        module = module_or_text.clone()
    exe = Executable(module, name, fuse, where)
    return _remember(_EXECUTABLES, key, exe, RUN_CACHE_SIZE)


def _remember(cache: OrderedDict, key, value, limit: int):
    with _CACHE_LOCK:
        cache[key] = value
        while len(cache) > limit:
            cache.popitem(last=False)
    return value
