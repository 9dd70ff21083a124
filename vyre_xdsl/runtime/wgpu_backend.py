"""The wgpu backend: modules lowered to WGSL kernels, run on a GPU device.

```python
from vyre_xdsl.runtime.wgpu_backend import WGPU
compiled = WGPU.compile(module)                  # kernels for the device's profile
result = compiled.run(compiled.bind({"x": x}), profile=True)
result.buffers["y"], result.profile              # outputs; GPU time per kernel
```

It implements `backend.Backend`: `compile` lowers for the device's own limits
(`GpuDevice.target_profile`) or, with `portable=True`, for the WebGPU
defaults; `load` takes kernels an earlier compile made (the compile cache, a
bundle). A run binds inputs without host copies where it can (`Binder`),
records the kernels into the device's pending batch (`execute.launch`) and
returns host arrays, or `DeviceArray`s with `keep=True`.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping

from vyre_xdsl.abi import RunSignature, signature
from vyre_xdsl.runtime.backend import (
    Backend,
    Compiled,
    MaxIterationsError,
    RunResult,
    SubgroupSizeError,
    bind_host,
    check_device_input,
)


class Binder:
    """`bind` for the wgpu backend: the checks of `backend.bind_host`, but
    buffers that take no input are `ZeroFilled` placeholders (the GPU clears
    them; no host memory), and what does not depend on the inputs is computed
    once."""

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
        # the names given as device arrays -> the signature of the other inputs
        self.rest: dict[tuple, RunSignature] = {}

    def bind(self, inputs: Mapping[str, object]) -> dict[str, object]:
        if not self.fast or not self.input_names.issuperset(inputs):
            host, resident = bind_host(self.sig, inputs, self.gpu)  # the general path, its errors
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
                check_device_input(self.sig, name, array, self.gpu, self.by_name)
        key = tuple(resident)
        rest = self.rest.get(key)
        if rest is None:
            rest = RunSignature(
                tuple(
                    self.by_name[n]
                    for n in self.sig.names
                    if n in self.input_names and n not in key
                )
            )
            if len(self.rest) < 64:  # one per order of names a caller gives
                self.rest[key] = rest
        if rest.buffers:
            bound.update(rest.bind({n: a for n, a in inputs.items() if n not in key}))
        return bound


def on_host(array):
    """A host array for what a run returned (an output no kernel binds comes
    back as the `ZeroFilled` placeholder it was given)."""
    from vyre_xdsl.runtime.execute import ZeroFilled

    return array.numpy() if isinstance(array, ZeroFilled) else array


def on_device(array, gpu):
    """`array` as a `DeviceArray` of `gpu` (uploaded unless it is one)."""
    import numpy as np

    from vyre_xdsl.runtime.arrays import DeviceArray, upload

    if isinstance(array, DeviceArray):
        return array
    flat = on_host(array)
    return upload(gpu, np.ascontiguousarray(flat).reshape(-1), (flat.size,))


class WgpuCompiled(Compiled):
    """WGSL kernels compiled for one device, with the run signature they implement."""

    backend = "wgpu"
    device_outputs = True

    def __init__(self, sig: RunSignature, kernels: tuple, gpu, module=None, static_sizes=None):
        self.signature = sig
        self.kernels = kernels
        self.gpu = gpu
        self._module = module  # a ModuleSource, for the covering-grid check (None: a bundle)
        from vyre_xdsl.runtime.execute import launch

        self._launch = launch
        self._binder = Binder(sig, gpu)
        self.bind = self._binder.bind  # `bind`, one call fewer per run
        self._outputs = list(sig.outputs)
        self._uploads = set(sig.inputs)
        if static_sizes is None:
            static_sizes = all(b.count is not None for b in sig.buffers)
        self._static_sizes = static_sizes
        self._covering = module is not None and any(
            k.static_grid is None
            and k.indirect is None
            and math.prod((k.program_workgroup_size or k.workgroup_size)[1:]) > 1
            for k in kernels
        )

    def check_options(self, *, keep=False, profile=False, subgroup_size=None, max_iterations=None):
        if max_iterations is not None:
            raise MaxIterationsError(
                f"max_iterations={max_iterations} applies to the reference backend; "
                f"this executable runs on '{self.backend}'"
            )
        if subgroup_size is not None:
            raise SubgroupSizeError(
                f"subgroup_size={subgroup_size} applies to the reference backend; on a GPU the "
                "adapter decides the subgroup size (a program reads it with vyre.subgroup_size)"
            )
        if profile and "timestamp-query" not in self.gpu.features:
            from vyre_xdsl.runtime.timing import ProfilingUnsupportedError

            raise ProfilingUnsupportedError(
                f"timestamp queries are not supported by this adapter ({self.gpu.describe()}), "
                "so kernels cannot be timed on it"
            )

    def bind(self, inputs: Mapping[str, object]) -> dict[str, object]:
        return self._binder.bind(inputs)

    def run(
        self,
        buffers,
        *,
        keep=False,
        profile=False,
        subgroup_size=None,
        max_iterations=None,
        repeat=1,
    ) -> RunResult:
        if profile or subgroup_size is not None or max_iterations is not None:
            self.check_options(
                profile=profile, subgroup_size=subgroup_size, max_iterations=max_iterations
            )
        if self._covering:
            self._check_covering_grids(buffers)
        done = self._launch(
            self.kernels,
            buffers,
            outputs=self._outputs,
            uploads=self._uploads,
            device=self.gpu,
            timed=profile,
            keep=keep,
            static_sizes=self._static_sizes,
            repeat=repeat,
        )
        final = done.buffers
        if keep:
            kept = self._binder.device_array
            outputs = {}
            for n in self._outputs:
                array = final[n]
                outputs[n] = array if type(array) is kept else on_device(array, self.gpu)
        else:
            outputs = {n: on_host(final[n]) for n in self._outputs}
        if not profile:
            return RunResult(outputs)
        return RunResult(outputs, done.profile(self.kernels, self.gpu.describe()))

    def _check_covering_grids(self, bound: Mapping[str, object]) -> None:
        """Refuse a 2-D/3-D program without an explicit grid whose runtime-sized
        count its derived grid cannot cover (the reference backend refuses it
        in the interpreter; static counts were refused when lowering)."""
        from xdsl.dialects.builtin import ModuleOp

        from vyre_xdsl.dialects.vyre import programs
        from vyre_xdsl.dispatch import check_covering_grids

        module = self._module if isinstance(self._module, ModuleOp) else self._module()
        lengths = {name: int(getattr(a, "size", 0)) for name, a in bound.items()}
        check_covering_grids(programs(module), lengths)


class WgpuBackend(Backend):
    """Modules lowered to WGSL and run on a GPU adapter (`runtime.adapters()`)."""

    name = "wgpu"

    def adapter(self, adapter=None):
        from vyre_xdsl.runtime.device import gpu_device

        gpu = gpu_device(adapter)
        return f"[{gpu.index}] {gpu.describe()}"

    def device_key(self, adapter):
        from vyre_xdsl.runtime.device import adapter_index

        return adapter_index(adapter)

    def target_profile(self, adapter, portable):
        from dataclasses import asdict

        return asdict(self._profile(adapter, portable))

    def _profile(self, adapter, portable):
        from vyre_xdsl.runtime.device import gpu_device
        from vyre_xdsl.target_profile import PORTABLE_PROFILE

        return PORTABLE_PROFILE if portable else gpu_device(adapter).target_profile

    def compile(
        self, module, sig=None, *, adapter=None, portable=False, verified=False, digest=None
    ):
        from vyre_xdsl.diagnostics import verified as verified_module
        from vyre_xdsl.runtime.device import gpu_device
        from vyre_xdsl.runtime.execute import compiled_kernels

        if sig is None:
            sig = signature(module)
        gpu = gpu_device(adapter)
        profile = self._profile(adapter, portable)
        with verified_module(module) if verified else contextlib.nullcontext():
            digest = digest() if callable(digest) else digest
            kernels = tuple(compiled_kernels(module, profile, digest=digest))
        return WgpuCompiled(sig, kernels, gpu, module)

    def load(self, sig, *, module=None, programs=None, kernels=None, adapter=None):
        from vyre_xdsl.runtime.device import gpu_device

        if kernels is None:
            if module is None:
                raise ValueError("the wgpu backend loads compiled kernels; none were given")
            return self.compile(module if not callable(module) else module(), sig, adapter=adapter)
        static = None if module is not None else False
        return WgpuCompiled(sig, tuple(kernels), gpu_device(adapter), module, static)


#: the wgpu backend (`BACKENDS["wgpu"]`)
WGPU = WgpuBackend()

__all__ = ["WGPU", "Binder", "WgpuBackend", "WgpuCompiled", "on_device", "on_host"]
