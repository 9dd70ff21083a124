"""vyre_xdsl: a GPU compute compiler on xDSL.

```python
import vyre_xdsl
module = vyre_xdsl.parse(text)
outputs = vyre_xdsl.run(module, inputs={...}, backend="reference", fuse=True)
exe = vyre_xdsl.compile(module, backend="wgpu", fuse=True)   # compile once
outputs = exe.run({...})                                       # run many times
x = vyre_xdsl.to_device(array)                                 # data that stays on the GPU
out = exe.run({"x": x}, device=True)                           # DeviceArray outputs
```
"""

_API = (
    "Executable",
    "cache_info",
    "clear_cache",
    "compile",
    "disk_cache_info",
    "parse",
    "run",
)


def __getattr__(name: str):
    # the API is imported on first use, so that the command-line tools start fast
    if name in _API:
        from vyre_xdsl import api

        return getattr(api, name)
    raise AttributeError(f"module 'vyre_xdsl' has no attribute '{name}'")


def to_device(array, adapter=None):
    """Copy a host array into a `DeviceArray` (see `vyre_xdsl.runtime.arrays`)."""
    from vyre_xdsl.runtime.arrays import to_device as _to_device

    return _to_device(array, adapter)


def synchronize(adapter=None) -> None:
    """Submit the runs recorded on the device and wait until they have finished
    (like `torch.cuda.synchronize`); raises the first trap they recorded."""
    from vyre_xdsl.runtime.device import gpu_device

    gpu_device(adapter).synchronize()


__all__ = [
    "Executable",
    "cache_info",
    "clear_cache",
    "compile",
    "disk_cache_info",
    "parse",
    "run",
    "synchronize",
    "to_device",
]
