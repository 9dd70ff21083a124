"""The wgpu runtime: the `wgpu` backend of `vyre_xdsl.run` (SPEC section 6).

```python
import vyre_xdsl
from vyre_xdsl.runtime import adapter_available
backend = "wgpu" if adapter_available() else "reference"
outputs = vyre_xdsl.run(text, inputs={"x": x, "y": y}, backend=backend)
```

Data can stay on the GPU between runs: `to_device(array)` makes a
`DeviceArray`, `Executable.run(inputs, device=True)` returns them (see
`arrays`). `adapters()` lists the adapters (choose one with `adapter=` or
`VYRE_ADAPTER`); `Executable.run(..., profile=True)` times every kernel on the
GPU (`timing.RunProfile`). Backends implement one protocol
(`backend.Backend.compile(module) -> Compiled`, `Compiled.run(buffers)`):
`backend.REFERENCE` (the interpreter) and `wgpu_backend.WGPU`.

`execute(module, buffers, sig)` compiles the module (`vyre-lower` + the WGSL
printer, cached by the IR digest), records every kernel into the device's
pending batch (`device.gpu_device()`), submits it, and returns the output
buffers by name; a trap raises `vyre_xdsl.traps.VyreTrap`. Runs with
`device=True` are deferred until a read or `synchronize()`. See
docs/runtime.md.
"""

from vyre_xdsl.runtime.arrays import (
    DeviceArray,
    DeviceArrayError,
    DeviceDtypeError,
    FreedArrayError,
    WrongDeviceError,
    to_device,
)
from vyre_xdsl.runtime.device import (
    AdapterChoiceError,
    AdapterInfo,
    DeviceLimitError,
    NoGpuAdapterError,
    adapter_available,
    adapters,
    gpu_device,
)
from vyre_xdsl.runtime.execute import (
    EmptyRuntimeBufferError,
    KernelRun,
    WgpuRuntimeError,
    compiled_kernels,
    execute,
    launch,
    run_kernels,
)
from vyre_xdsl.runtime.timing import KernelTime, ProfilingUnsupportedError, RunProfile

__all__ = [
    "AdapterChoiceError",
    "AdapterInfo",
    "DeviceArray",
    "DeviceArrayError",
    "DeviceDtypeError",
    "FreedArrayError",
    "KernelRun",
    "KernelTime",
    "ProfilingUnsupportedError",
    "RunProfile",
    "WrongDeviceError",
    "adapters",
    "to_device",
    "DeviceLimitError",
    "EmptyRuntimeBufferError",
    "NoGpuAdapterError",
    "WgpuRuntimeError",
    "adapter_available",
    "compiled_kernels",
    "execute",
    "gpu_device",
    "launch",
    "run_kernels",
]
