"""Device arrays: data that stays on the GPU between runs.

```python
import numpy as np, vyre_xdsl
x = vyre_xdsl.to_device(np.arange(1024, dtype=np.float32))   # one upload
exe = vyre_xdsl.compile(text, backend="wgpu")
out = exe.run({"x": x, "y": y_dev}, device=True)             # outputs stay on the GPU
again = exe.run({"x": x, "y": out["y"]}, device=True)        # chained: no copy to the host
again["y"].numpy()                                            # one readback
```

A `DeviceArray` owns one GPU buffer of its device. The buffer goes back to
the device's buffer pool when the array is garbage-collected (or at once with
`free()`); a freed array raises `FreedArrayError` wherever it is used. Arrays
are immutable from Python: a run never writes into an array it was given
(see `execute.run_kernels` and docs/runtime.md, "Device arrays").
"""

from __future__ import annotations

import functools
import math
import weakref

import numpy as np

from vyre_xdsl.diagnostics import VyreError
from vyre_xdsl.runtime.device import MAPPABLE_STORAGE_USAGE, STORAGE_USAGE, GpuDevice, gpu_device
from vyre_xdsl.semantics import HOST_DTYPES, WGSL_TYPES


@functools.cache
def device_dtypes() -> tuple[np.dtype, ...]:
    """The host dtypes a device array can hold: those of the element types the wgpu
    backend lowers (Bool buffers are uint32 words). Resolved on first use: bf16's
    dtype imports ml_dtypes, which takes most of a second."""
    return tuple(dict.fromkeys(HOST_DTYPES[name] for name in WGSL_TYPES))


class DeviceArrayError(VyreError):
    """Misuse of a device array."""


class FreedArrayError(DeviceArrayError, ValueError):
    """A device array used after `free()`."""


class WrongDeviceError(DeviceArrayError, ValueError):
    """A device array given to a run on another device."""


class DeviceDtypeError(DeviceArrayError, TypeError):
    """A host array whose dtype no vyre buffer holds."""


class DeviceArray:
    """A one-dimensional or shaped array in a GPU buffer (see the module doc).

    `dtype`, `shape`, `size`, `nbytes` and `ndim` describe it like a numpy
    array; `numpy()` (or `np.asarray(array)`) copies it to the host;
    `device` is the `GpuDevice` that owns the buffer.
    """

    __slots__ = (
        "_gpu",
        "_buffer",
        "_usage",
        "_give_back",
        "dtype",
        "shape",
        "size",
        "nbytes",
        "__weakref__",
    )

    def __init__(self, gpu: GpuDevice, buffer, usage: str, dtype: np.dtype, shape: tuple[int, ...]):
        self._gpu = gpu
        self._buffer = buffer
        self._usage = usage
        self._give_back = _watch(self, gpu.pool, buffer, usage)
        self.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        self.shape = tuple(shape)
        self.size = math.prod(self.shape)
        self.nbytes = self.size * self.dtype.itemsize

    @classmethod
    def _over(cls, gpu: GpuDevice, buffer, usage: str, dtype: np.dtype, size: int) -> DeviceArray:
        """A 1-D array of `size` elements of `dtype` (a `np.dtype`) over
        `buffer`: `DeviceArray(...)` without its conversions (a run's outputs)."""
        array = object.__new__(cls)
        array._gpu = gpu
        array._buffer = buffer
        array._usage = usage
        array._give_back = ref = weakref.ref(array, _collected)  # `_watch`, inlined
        _WATCHED[ref] = (gpu.pool, buffer, usage)
        array.dtype = dtype
        array.shape = (size,)
        array.size = size
        array.nbytes = size * dtype.itemsize
        return array

    # ------------------------------------------------------------ properties

    @property
    def device(self) -> GpuDevice:
        return self._gpu

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def freed(self) -> bool:
        return self._buffer is None

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d device array")
        return self.shape[0]

    def __repr__(self) -> str:
        state = "freed" if self._buffer is None else self._gpu.describe()
        return f"DeviceArray(shape={self.shape}, dtype={self.dtype}, device='{state}')"

    # ------------------------------------------------------------ data

    def buffer(self, gpu: GpuDevice | None = None):
        """The wgpu buffer, checked to be alive and (given `gpu`) on that device."""
        if self._buffer is None:
            raise FreedArrayError(f"this {self.dtype}{list(self.shape)} device array was freed")
        if gpu is not None and gpu is not self._gpu:
            raise WrongDeviceError(
                f"this device array lives on device [{self._gpu.index}] {self._gpu.describe()}, "
                f"but the run is on [{gpu.index}] {gpu.describe()}; copy it with "
                "to_device(array.numpy(), adapter=...)"
            )
        return self._buffer

    def numpy(self) -> np.ndarray:
        """A host copy. Submits the device's pending runs and waits for them,
        so a trap recorded by any of them is raised here."""
        from vyre_xdsl.runtime.execute import read_buffer

        buffer = self.buffer()
        return read_buffer(self._gpu, buffer, self.nbytes, self.dtype).reshape(self.shape)

    def __array__(self, dtype=None, copy=None):
        array = self.numpy()
        return array if dtype is None else array.astype(dtype)

    # ------------------------------------------------------------ lifetime

    def free(self) -> None:
        """Give the buffer back now (it goes back to the device's pool); later
        use of this array raises `FreedArrayError`. Idempotent."""
        buffer, self._buffer = self._buffer, None
        if buffer is not None and _WATCHED.pop(self._give_back, None) is not None:
            self._gpu.pool.release(buffer, self._usage)


#: every live array's weak reference -> (pool, buffer, usage): what goes back
#: to the pool when it is collected. The entry holds the buffer, so the buffer
#: is never garbage together with the array: were both in a collected cycle,
#: the buffer's own finalizer (which releases its native handle) could run
#: first, and the pool would then hand out a released buffer. (And the weak
#: reference, held here, is not garbage either, so its callback runs.) What
#: `weakref.finalize` does, for a fraction of its cost per array.
_WATCHED: dict = {}


def _watch(array: DeviceArray, pool, buffer, usage: str):
    ref = weakref.ref(array, _collected)
    _WATCHED[ref] = (pool, buffer, usage)
    return ref


def _collected(ref) -> None:
    """A collected array's buffer back to its pool. The collector may run in
    any thread, even one inside the pool: never wait here."""
    try:
        entry = _WATCHED.pop(ref, None)
        if entry is not None:
            pool, buffer, usage = entry
            pool.release_later(buffer, usage)
    except Exception:  # interpreter shutdown: the device may be gone
        pass


def to_device(
    array, adapter: int | str | None = None, device: GpuDevice | None = None
) -> DeviceArray:
    """Copy a host array (float32, int32 or uint32, any shape) into a new
    `DeviceArray` on the device of `adapter` (default: the process's device)."""
    host = np.asarray(array)
    if host.dtype not in device_dtypes():
        hint = (
            "; give bool data as uint32 words (x.astype(np.uint32))"
            if host.dtype == np.bool_
            else ""
        )
        held = ", ".join(str(dtype) for dtype in device_dtypes())
        raise DeviceDtypeError(f"a device array holds {held} elements, not {host.dtype}{hint}")
    gpu = device or gpu_device(adapter)
    return upload(gpu, np.ascontiguousarray(host).reshape(-1), host.shape)


def upload(gpu: GpuDevice, flat: np.ndarray, shape: tuple[int, ...]) -> DeviceArray:
    """A new device array holding the contiguous 1-D `flat`."""
    from vyre_xdsl.runtime.execute import write_buffer

    usage = MAPPABLE_STORAGE_USAGE if gpu.unified_memory else STORAGE_USAGE
    with gpu.lock:
        buffer = gpu.pool.acquire(flat.nbytes, usage, clean=True)
        write_buffer(gpu, buffer, flat)
    return DeviceArray(gpu, buffer, usage, flat.dtype, shape)
