"""Run compiled kernels on the wgpu device: one command encoder, one submit.

```python
from vyre_xdsl.abi import signature
from vyre_xdsl.runtime import execute
sig = signature(module)
final = execute(module, sig.bind({"x": x, "y": y}), sig)   # outputs by buffer name
```

A run (`run_kernels`):

1. every host buffer a kernel binds gets one GPU storage buffer (from the pool),
   shared by name across the kernels of the run, so what one kernel writes the
   next one reads without leaving the GPU; inputs are written with
   `queue.write_buffer`, the other buffers cleared on the GPU;
2. each binding is bound with exactly `count * 4` bytes (`count` is the
   binding's declared element count, or the host array's length for a
   runtime-sized buffer), so `arrayLength` is the element count the program
   declared; a declared count of 0 is bound as 4 bytes that the kernel never
   touches (its bound is the declared 0);
3. every kernel gets its own 4-word trap sidecar, cleared;
4. all dispatches are recorded in one command encoder, one compute pass per
   kernel (`kernel.dispatch_grid`, folded into y past 65535 workgroups), followed
   by copies of every output and sidecar into staging buffers; one submit;
5. the sidecars are read first: the first kernel in dispatch order whose
   sidecar records a trap raises `VyreTrap` (the interpreter's exception); else
   every output is read back into a numpy array of its host dtype.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from vyre_xdsl.backends.wgsl.kernel_module import WgslBinding, WgslKernel
from vyre_xdsl.diagnostics import VyreError
from vyre_xdsl.runtime.device import (
    STAGING_USAGE,
    STORAGE_USAGE,
    DeviceLimitError,
    GpuDevice,
    gpu_device,
)

SIDECAR_WORDS = 4
COMPILE_CACHE_SIZE = 64


class WgpuRuntimeError(VyreError):
    """wgpu rejected a shader, pipeline or binding (the message is naga's/wgpu's)."""


class EmptyRuntimeBufferError(VyreError):
    """wgpu cannot bind an empty buffer, so a runtime-sized buffer needs at least one element."""


# ============================================================================ compile


_COMPILED: OrderedDict[str, list[WgslKernel]] = OrderedDict()


def compiled_kernels(module: ModuleOp) -> list[WgslKernel]:
    """`compile_module(module)`, cached by the module's text (an LRU of 64)."""
    from vyre_xdsl.backends.wgsl import compile_module

    key = str(module)
    kernels = _COMPILED.get(key)
    if kernels is None:
        kernels = compile_module(module)
        _COMPILED[key] = kernels
        while len(_COMPILED) > COMPILE_CACHE_SIZE:
            _COMPILED.popitem(last=False)
    else:
        _COMPILED.move_to_end(key)
    return kernels


def execute(module: ModuleOp, buffers: Mapping[str, np.ndarray], sig=None) -> dict[str, np.ndarray]:
    """The `wgpu` backend of `vyre_xdsl.run`: compile, run, return outputs by name."""
    outputs = None if sig is None else list(sig.outputs)
    uploads = None if sig is None else set(sig.inputs)
    return run_kernels(compiled_kernels(module), buffers, outputs=outputs, uploads=uploads)


# ============================================================================ run


@dataclass
class _Staged:
    name: str
    staging: object
    nbytes: int


def run_kernels(
    kernels: Sequence[WgslKernel],
    buffers: Mapping[str, np.ndarray],
    outputs: Sequence[str] | None = None,
    uploads: set[str] | None = None,
    device: GpuDevice | None = None,
) -> dict[str, np.ndarray]:
    """Run `kernels` in order over the host arrays `buffers` (by name).

    Returns every host array: the `outputs` (default: every buffer a kernel
    binds) read back from the GPU, the others as given. Only `uploads`
    (default: all) are copied to the GPU; the other buffers start zeroed.
    """
    gpu = device or gpu_device()
    host = {name: np.ascontiguousarray(a).reshape(-1) for name, a in buffers.items()}
    lengths = {name: a.size for name, a in host.items()}
    bound = _bound_names(kernels, host)
    for kernel in kernels:
        _check_limits(gpu, kernel, lengths)
    wanted = [n for n in (outputs if outputs is not None else bound) if n in bound]
    run = _Run(gpu)
    try:
        storage = {name: run.storage(_buffer_bytes(name, host[name], kernels)) for name in bound}
        encoder = gpu.device.create_command_encoder()
        for name in bound:
            if uploads is None or name in uploads:
                if host[name].nbytes:
                    gpu.device.queue.write_buffer(storage[name], 0, host[name])
            else:
                encoder.clear_buffer(storage[name])
        sidecars = []
        for kernel in kernels:
            sidecars.append(_record(run, encoder, kernel, storage, lengths))
        staged = [run.stage(encoder, storage[name], name, host[name].nbytes) for name in wanted]
        traps = [
            (kernel, run.stage(encoder, sidecar, kernel.id, SIDECAR_WORDS * 4))
            for kernel, sidecar in zip(kernels, sidecars)
            if sidecar is not None
        ]
        gpu.device.queue.submit([encoder.finish()])
        for kernel, stage in traps:
            _raise_trap(kernel, np.frombuffer(run.read(stage), np.uint32))
        result = dict(host)
        for stage in staged:
            result[stage.name] = np.frombuffer(run.read(stage), host[stage.name].dtype).copy()
        return result
    except VyreError:
        raise
    except Exception as error:
        import wgpu

        if isinstance(error, wgpu.GPUError):
            raise WgpuRuntimeError(f"wgpu rejected the kernel: {error}") from None
        raise
    finally:
        run.release()


def _bound_names(kernels: Sequence[WgslKernel], host: Mapping[str, np.ndarray]) -> list[str]:
    names: list[str] = []
    for kernel in kernels:
        for binding in kernel.bindings:
            if binding.is_trap_sidecar or binding.name in names:
                continue
            if binding.name not in host:
                raise VyreError(
                    f"kernel '{kernel.source or kernel.id}' binds buffer '{binding.name}' "
                    "but the run has no host array of that name"
                )
            names.append(binding.name)
    return names


def _binding_count(binding: WgslBinding, lengths: Mapping[str, int]) -> int:
    return lengths[binding.name] if binding.count is None else binding.count


def _buffer_bytes(name: str, array: np.ndarray, kernels: Sequence[WgslKernel]) -> int:
    counts = [
        b.count for k in kernels for b in k.bindings if b.name == name and b.count is not None
    ]
    return max([array.nbytes, 4] + [4 * c for c in counts])


def _check_limits(gpu: GpuDevice, kernel: WgslKernel, lengths: Mapping[str, int]) -> None:
    limit = gpu.limits.get("max-storage-buffer-binding-size", 1 << 27)
    per_stage = gpu.limits.get("max-storage-buffers-per-shader-stage", 8)
    where = f"kernel '{kernel.source or kernel.id}'"
    if len(kernel.bindings) > per_stage:
        raise DeviceLimitError(
            f"{where} binds {len(kernel.bindings)} storage buffers; this device allows "
            f"{per_stage} per shader stage; split the program"
        )
    for binding in kernel.bindings:
        if binding.is_trap_sidecar:
            continue
        count = _binding_count(binding, lengths)
        if binding.count is None and count == 0:
            raise EmptyRuntimeBufferError(
                f"runtime-sized buffer '{binding.name}' has no elements; wgpu cannot bind an "
                "empty buffer (pass at least one element, or declare a static count of 0)"
            )
        if 4 * count > limit:
            raise DeviceLimitError(
                f"buffer '{binding.name}' of {where} needs {4 * count} bytes; this device binds "
                f"at most {limit} bytes per storage buffer; partition the data"
            )


def _record(run: _Run, encoder, kernel: WgslKernel, storage: Mapping[str, object],
            lengths: Mapping[str, int]):
    """Record one kernel's compute pass; return its trap sidecar buffer (or None)."""
    gpu = run.gpu
    pipeline = gpu.pipeline(kernel.wgsl, kernel.entry_point, kernel.bindings)
    sidecar = None
    entries: dict[int, list[dict]] = {}
    for binding in kernel.bindings:
        if binding.is_trap_sidecar:
            sidecar = run.storage(SIDECAR_WORDS * 4)
            encoder.clear_buffer(sidecar)
            resource = {"buffer": sidecar, "offset": 0, "size": SIDECAR_WORDS * 4}
        else:
            size = 4 * max(1, _binding_count(binding, lengths))
            resource = {"buffer": storage[binding.name], "offset": 0, "size": size}
        entries.setdefault(binding.group, []).append({"binding": binding.slot, "resource": resource})
    groups = {
        g: gpu.device.create_bind_group(layout=pipeline.layouts[g], entries=e)
        for g, e in entries.items()
    }
    compute = encoder.begin_compute_pass()
    compute.set_pipeline(pipeline.pipeline)
    for g in sorted(pipeline.layouts):
        if g in groups:
            compute.set_bind_group(g, groups[g])
        else:
            compute.set_bind_group(g, gpu.device.create_bind_group(layout=pipeline.layouts[g], entries=[]))
    x, y, z = kernel.dispatch_grid(lengths)
    compute.dispatch_workgroups(x, y, z)
    compute.end()
    return sidecar


def _raise_trap(kernel: WgslKernel, words: np.ndarray) -> None:
    if words[0] == 0:
        return
    from vyre_xdsl.interpreter import VyreTrap

    code = int(words[2])
    tags = kernel.trap_tags
    tag = tags[code - 1] if 1 <= code <= len(tags) else f"<unknown trap code {code}>"
    raise VyreTrap(tag, int(words[1]), int(words[3]), kernel.source or None)


class _Run:
    """The pooled buffers of one run, released when it ends."""

    def __init__(self, gpu: GpuDevice):
        self.gpu = gpu
        self.held: list[tuple[object, str]] = []

    def storage(self, nbytes: int):
        buffer = self.gpu.pool.acquire(nbytes, STORAGE_USAGE)
        self.held.append((buffer, STORAGE_USAGE))
        return buffer

    def stage(self, encoder, source, name: str, nbytes: int) -> _Staged:
        size = max(4, nbytes)
        staging = self.gpu.pool.acquire(size, STAGING_USAGE)
        self.held.append((staging, STAGING_USAGE))
        if nbytes:
            encoder.copy_buffer_to_buffer(source, 0, staging, 0, nbytes)
        return _Staged(name, staging, nbytes)

    def read(self, stage: _Staged) -> bytes:
        import wgpu

        if not stage.nbytes:
            return b""
        stage.staging.map_sync(wgpu.MapMode.READ, 0, stage.staging.size)
        try:
            return bytes(stage.staging.read_mapped(0, stage.nbytes))
        finally:
            stage.staging.unmap()

    def release(self) -> None:
        for buffer, usage in self.held:
            self.gpu.pool.release(buffer, usage)
        self.held.clear()
