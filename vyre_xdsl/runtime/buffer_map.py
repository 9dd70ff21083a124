"""Buffer mappings resolved on the calling thread, through wgpu-native itself.

wgpu-py 0.32's `GPUBuffer.map_async` and `map_sync` do two things that a run's
readback does not need:

- before every map for reading, it submits an empty command buffer (one more
  command encoder, `finish` and `submit`), for data that `queue.write_buffer`
  queued and that no submit has flushed yet;
- the map resolves on wgpu-py's poll thread, and the caller waits on a
  `threading.Event`: a hand-off between threads per map, while the caller's own
  device wait polls the same device.

A `BufferMap` starts the map with `wgpuBufferMapAsync` and resolves it with
`wgpuDevicePoll` on the thread that waits for it: the poll that waits for the
device fires the map's callback. Data queued by `write_buffer` is the caller's
to flush before a map for reading (`GpuDevice.flush_queued_writes`: an empty
submit only when something was queued since the last submit).
wgpu-py's own view of the buffer stays "unmapped": a `BufferMap` is unmapped
before it is dropped (`unmap`, or `settle` on a path that does not read).

```python
buffer_map = BufferMap(device, staging, READ)  # after the submit that fills `staging`
buffer_map.wait()  # or: the device wait that finishes the batch resolves it
data = buffer_map.read(nbytes)  # a fresh uint8 array; the buffer is unmapped
```
"""

from __future__ import annotations

import numpy as np

READ = "read"
WRITE = "write"

#: blocking device polls after which a map that has not resolved is an error
#: (one resolves every map of a finished submission)
BLOCKING_POLLS = 2


class MapError(RuntimeError):
    """A buffer could not be mapped (wgpu refused it, or the map never resolved)."""


class BufferMap:
    """A map of the whole of `buffer` (a wgpu-py `GPUBuffer` with MAP_READ or
    MAP_WRITE usage) for `mode`, started at construction."""

    __slots__ = ("device", "buffer", "status", "open", "_callback", "_info")

    def __init__(self, device, buffer, mode: str):
        from wgpu.backends.wgpu_native._api import ffi, lib, libf

        self.device = device
        self.buffer = buffer
        self.status: list[int] = []  # the callback's status, once it fired
        self.open = True  # until `unmap` (or a failed map)

        @ffi.callback("void(WGPUMapAsyncStatus, WGPUStringView, void *, void *)")
        def resolved(status, _message, _userdata1, _userdata2):
            self.status.append(int(status))

        self._callback = resolved  # kept alive until the map resolves
        info = ffi.new("WGPUBufferMapCallbackInfo *")
        info.mode = lib.WGPUCallbackMode_AllowProcessEvents
        info.callback = resolved
        self._info = info
        flag = lib.WGPUMapMode_Read if mode == READ else lib.WGPUMapMode_Write
        libf.wgpuBufferMapAsync(buffer._internal, flag, 0, buffer.size, info[0])

    @property
    def resolved(self) -> bool:
        return bool(self.status)

    def wait(self) -> None:
        """Poll the device on this thread until the map resolves; raise
        `MapError` if it failed or never resolves."""
        from wgpu.backends.wgpu_native._api import lib

        if not self.status:
            self.device._poll(False)  # a buffer the GPU does not use maps now
        for _ in range(BLOCKING_POLLS):
            if self.status:
                break
            self.device._poll_wait()
        if not self.status:
            raise MapError(f"mapping a {self.buffer.size}-byte buffer never resolved")
        if self.status[0] != lib.WGPUMapAsyncStatus_Success:
            self.open = False
            raise MapError(
                f"wgpu could not map a {self.buffer.size}-byte buffer ({self.status[0]})"
            )

    def _view(self, nbytes: int):
        from wgpu.backends.wgpu_native._api import ffi, lib

        size = (nbytes + 3) & ~3
        pointer = lib.wgpuBufferGetMappedRange(self.buffer._internal, 0, size)
        return ffi.buffer(pointer, size)

    def read(self, nbytes: int) -> np.ndarray:
        """The first `nbytes` bytes as a fresh uint8 array, then unmap."""
        self.wait()
        try:
            return np.frombuffer(self._view(nbytes), np.uint8)[:nbytes].copy()
        finally:
            self.unmap()

    def write(self, data: np.ndarray) -> None:
        """Copy the uint8 array `data` (a whole number of 4-byte words) to the
        start of the buffer, then unmap."""
        self.wait()
        try:
            np.frombuffer(self._view(data.nbytes), np.uint8)[:] = data
        finally:
            self.unmap()

    def unmap(self) -> None:
        """Unmap the buffer (a map still pending is cancelled)."""
        from wgpu.backends.wgpu_native._api import libf

        if self.open:
            self.open = False
            libf.wgpuBufferUnmap(self.buffer._internal)

    def settle(self) -> None:
        """Leave the buffer unmapped, whether the map resolved, failed or was
        read already (a path that started a map and does not read it: a trap
        was raised)."""
        if not self.open:
            return
        try:
            self.wait()
        except MapError:
            pass
        self.unmap()
