"""The wgpu device of this process, its pipeline cache and its buffer pool.

```python
from vyre_xdsl.runtime.device import adapter_available, gpu_device
if adapter_available():
    gpu = gpu_device()                 # acquired once per process
    gpu.describe()                     # "llvmpipe (LLVM 15.0.6, 256 bits) (CPU) via Vulkan"
    pipeline = gpu.pipeline(kernel)    # cached by the BLAKE3 digest of its WGSL
```

Adapter choice: `WGPU_BACKEND_TYPE` (Vulkan, Metal, D3D12, OpenGL), when set,
restricts the adapters to that backend; otherwise Vulkan is preferred, then
Metal, D3D12 and OpenGL last. Among adapters of one backend a discrete GPU
beats an integrated one, which beats a CPU implementation (lavapipe). The
device is requested with the adapter's own limits for storage-buffer binding
size, buffer size, storage buffers per stage and the compute workgroup limits,
instead of WebGPU's conservative defaults.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from vyre_xdsl.diagnostics import VyreError

#: limits requested at the adapter's own value rather than WebGPU's default
REQUESTED_LIMITS = (
    "max-storage-buffer-binding-size",
    "max-buffer-size",
    "max-storage-buffers-per-shader-stage",
    "max-compute-invocations-per-workgroup",
    "max-compute-workgroup-size-x",
    "max-compute-workgroup-size-y",
    "max-compute-workgroup-size-z",
    "max-compute-workgroup-storage-size",
    "max-compute-workgroups-per-dimension",
    "max-bind-groups",
)

#: device features requested when the adapter has them
OPTIONAL_FEATURES = (
    "timestamp-query",
    "shader-f16",
    "shader-f64",
    "subgroup",
    # 64-bit integers for f64 bit patterns, and lock-free trap records
    # (`backends.wgsl.printer.for_device`)
    "shader-int64",
    "shader-int64-atomic-min-max",
)

#: device feature -> what in a kernel needs it (for the error when it is missing)
FEATURE_USES = {
    "shader-f16": "the element type f16",
    "shader-f64": "the element type f64",
    "shader-int64": "the bits of an f64 (a bitcast to or from f64)",
}

#: adapters whose memory is the host's: there storage buffers are mapped
#: directly (no staging copies) when "mappable-primary-buffers" is available
UNIFIED_MEMORY_TYPES = ("CPU", "IntegratedGPU")
UNIFIED_MEMORY_FEATURE = "mappable-primary-buffers"

BACKEND_PREFERENCE = ("Vulkan", "Metal", "D3D12", "OpenGL")
ADAPTER_TYPE_PREFERENCE = ("DiscreteGPU", "IntegratedGPU", "VirtualGPU", "CPU", "Unknown")

#: compiled pipelines a device keeps (`GpuDevice.pipelines`, least recently used
#: dropped first; about 170 KB each on lavapipe)
PIPELINE_CACHE_SIZE = 128
#: a pending batch of deferred runs is submitted once it holds this many dispatches
#: (bench/submission_bounds.py compares bounds)
MAX_PENDING_DISPATCHES = 256
#: ... or once its runs have uploaded (or hold for trap records) this many bytes
MAX_PENDING_BYTES = 128 << 20
#: ... or once its dispatches bind this many bytes: work long enough (tens of
#: microseconds even on a GPU with terabytes per second) that the GPU should
#: start on it while the host records the next run
MAX_PENDING_WORK_BYTES = 256 << 20
#: a batch past the work bound alone is held, not submitted, while this many
#: batches submitted for their work are still unfinished on the GPU (the GPU
#: has work queued behind what it runs): the runs held meanwhile share one
#: compute pass and one submission. 0 submits at once.
MAX_QUEUED_BATCHES = 2
#: ... but not once its dispatches bind this many bytes
MAX_HELD_WORK_BYTES = 16 << 30
#: batches submitted for their bounds whose checks (trap records) may wait
#: unread: past this many, the oldest are waited for (each on its own
#: submission, so the GPU goes on with the newer ones) and checked
MAX_UNCHECKED_BATCHES = 2
#: seconds `synchronize` polls a GPU without blocking before it blocks in
#: wgpu-native's wait (as CUDA's synchronize spins by default): a blocked thread
#: is woken some time after the GPU finished. 0 on a CPU adapter, whose own
#: threads need the cores (`GpuDevice.spin_wait_s`; bench/sync_wait.py compares)
SPIN_WAIT_S = 200e-6

INSTALL_HINT = (
    "install a Vulkan driver: on Debian/Ubuntu `apt-get install mesa-vulkan-drivers libvulkan1` "
    "(Mesa's lavapipe runs Vulkan on the CPU); or use backend='reference'"
)


class NoGpuAdapterError(VyreError):
    """No wgpu adapter (no Vulkan/Metal/D3D12/OpenGL driver) on this machine."""


class MissingFeatureError(VyreError):
    """The kernel needs a device feature the adapter does not offer."""


def needs_subgroups(wgsl: str) -> bool:
    """Whether the WGSL module uses subgroup ops (the "subgroup" feature)."""
    from vyre_xdsl.backends.wgsl.printer import SUBGROUP_SIZE_BUILTIN

    return SUBGROUP_SIZE_BUILTIN in wgsl


class DeviceLimitError(VyreError):
    """A run needs more than the device allows (binding size, buffers per stage)."""


# ============================================================================ adapter


_LOCK = threading.Lock()
_ADAPTERS: list | None = None
_ADAPTER_ERROR: str | None = None
_INFOS: tuple | None = None  # adapters() (the enumeration is cached too)
#: devices acquired so far, by adapter index (`adapters()` order)
_DEVICES: dict[int, GpuDevice] = {}

#: environment variable choosing the adapter: an index into `adapters()` or a
#: case-insensitive substring of the adapter's description
ADAPTER_ENV = "VYRE_ADAPTER"


class AdapterChoiceError(VyreError, ValueError):
    """An adapter choice (argument or `VYRE_ADAPTER`) that matches no adapter."""


@dataclass(frozen=True)
class AdapterInfo:
    """One adapter as `adapters()` lists it."""

    index: int  # position in `adapters()`: what `adapter=` and VYRE_ADAPTER take
    name: str  # the device name, e.g. "NVIDIA H200" or "llvmpipe (LLVM 15.0.6, 256 bits)"
    backend: str  # Vulkan, Metal, D3D12, OpenGL
    adapter_type: str  # DiscreteGPU, IntegratedGPU, VirtualGPU, CPU, Unknown
    description: str  # wgpu's one-line summary: "NAME (TYPE) via BACKEND"

    def __str__(self) -> str:
        return f"[{self.index}] {self.description}"


def _forced_backend() -> str | None:
    forced = os.environ.get("WGPU_BACKEND_TYPE", "").strip()
    return forced or None


def ensure_runtime_dir() -> None:
    """Give the process a private `XDG_RUNTIME_DIR` when it has none that is usable.

    Without one, the Vulkan loader's Wayland code prints `error: XDG_RUNTIME_DIR is
    invalid or not set` for every adapter it probes; a compute-only run needs no display,
    so an empty private folder (mode 0700, removed at exit) silences it."""
    current = os.environ.get("XDG_RUNTIME_DIR", "")
    if current and os.path.isdir(current) and os.access(current, os.W_OK | os.X_OK):
        return
    import atexit
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="vyre-xdg-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.environ["XDG_RUNTIME_DIR"] = folder


def _enumerate() -> list:
    """Every adapter wgpu sees, best first (cached; never raises)."""
    global _ADAPTERS, _ADAPTER_ERROR
    if _ADAPTERS is not None:
        return _ADAPTERS
    ensure_runtime_dir()
    try:
        import wgpu

        adapters = list(wgpu.gpu.enumerate_adapters_sync())
    except Exception as error:  # wgpu-native missing, no loader, driver crash
        _ADAPTER_ERROR = f"{type(error).__name__}: {error}"
        adapters = []
    forced = _forced_backend()
    if forced is not None:
        adapters = [
            a for a in adapters if str(a.info.get("backend_type", "")).lower() == forced.lower()
        ]
    adapters.sort(key=_rank)
    _ADAPTERS = adapters
    return adapters


def _rank(adapter) -> tuple[int, int]:
    info = adapter.info
    backend = info.get("backend_type", "")
    kind = info.get("adapter_type", "Unknown")
    b = (
        BACKEND_PREFERENCE.index(backend)
        if backend in BACKEND_PREFERENCE
        else len(BACKEND_PREFERENCE)
    )
    t = (
        ADAPTER_TYPE_PREFERENCE.index(kind)
        if kind in ADAPTER_TYPE_PREFERENCE
        else len(ADAPTER_TYPE_PREFERENCE)
    )
    return b, t


def adapters() -> list[AdapterInfo]:
    """The adapters this process can use, best first (honouring
    `WGPU_BACKEND_TYPE`); index 0 is the default. Never raises."""
    global _INFOS
    if _INFOS is None:
        with _LOCK:
            found = _enumerate()
        _INFOS = tuple(
            AdapterInfo(
                index=i,
                name=str(a.info.get("device", "")),
                backend=str(a.info.get("backend_type", "")),
                adapter_type=str(a.info.get("adapter_type", "Unknown")),
                description=a.summary,
            )
            for i, a in enumerate(found)
        )
    return list(_INFOS)


def adapter_available() -> bool:
    """Whether a wgpu adapter exists (honouring `WGPU_BACKEND_TYPE`). Cached; never raises."""
    if _DEVICES:
        return True
    with _LOCK:
        return bool(_enumerate())


def no_adapter_message() -> str:
    forced = _forced_backend()
    where = f" for WGPU_BACKEND_TYPE={forced} (unset it to allow any backend)" if forced else ""
    detail = f" ({_ADAPTER_ERROR})" if _ADAPTER_ERROR else ""
    return f"no GPU adapter found{where}{detail}; {INSTALL_HINT}"


def adapter_index(choice: int | str | None = None) -> int:
    """The index in `adapters()` that `choice` names: an int or a string of
    digits is an index, another string a case-insensitive substring of the
    adapter's description; None takes `VYRE_ADAPTER`, else 0 (the best).
    Raises `NoGpuAdapterError` when there is no adapter at all and
    `AdapterChoiceError` when the choice matches none."""
    found = adapters()
    if not found:
        raise NoGpuAdapterError(no_adapter_message())
    origin = "adapter"
    if choice is None:
        choice = os.environ.get(ADAPTER_ENV, "").strip() or 0
        origin = ADAPTER_ENV
    if isinstance(choice, int) or (isinstance(choice, str) and choice.isdigit()):
        index = int(choice)
        if not 0 <= index < len(found):
            raise AdapterChoiceError(
                f"{origin}={choice}: no adapter with that index; adapters: {_listing(found)}"
            )
        return index
    if not isinstance(choice, str):
        raise AdapterChoiceError(
            f"{origin} must be an index or a name, got {type(choice).__name__}"
        )
    matches = [a.index for a in found if choice.lower() in a.description.lower()]
    if not matches:
        raise AdapterChoiceError(
            f"{origin}='{choice}' matches no adapter; adapters: {_listing(found)}"
        )
    return matches[0]


def _listing(found: list[AdapterInfo]) -> str:
    return "; ".join(str(a) for a in found)


def gpu_device(adapter: int | str | None = None) -> GpuDevice:
    """The process's device on the chosen adapter (see `adapter_index`),
    acquired on first use and kept for the process."""
    if adapter is None and 0 in _DEVICES and not os.environ.get(ADAPTER_ENV):
        return _DEVICES[0]
    index = adapter_index(adapter)
    device = _DEVICES.get(index)
    if device is not None:
        return device
    with _LOCK:
        if index not in _DEVICES:
            _DEVICES[index] = GpuDevice(_enumerate()[index], index)
    return _DEVICES[index]


# ============================================================================ device


@dataclass
class Pipeline:
    pipeline: object
    layouts: dict[int, object]  # bind group -> GPUBindGroupLayout


class Check:
    """Work to do once a batch has finished on the GPU (`Batch.checks`): `check`
    may raise (a trap), `release` gives its buffers back and always runs."""

    def check(self) -> None:
        pass

    def release(self) -> None:
        pass


@dataclass
class Batch:
    """Commands recorded but not yet submitted (see `GpuDevice.encoder`)."""

    encoder: object
    dispatches: int = 0
    nbytes: int = 0  # bytes uploaded for it, or held for its trap records
    work: int = 0  # bytes its dispatches bind
    checks: list[Check] = field(default_factory=list)
    #: the runtime's trap records of this batch (`execute.TrapLog`)
    trap_log: object = None
    #: the compute pass left open for the next run's dispatches (`GpuDevice.compute_pass`)
    compute: object = None
    #: the queue's index of its submission (`submit_for_index`), once submitted
    index: int | None = None

    def end_pass(self) -> None:
        """End the open compute pass, if any."""
        if self.compute is not None:
            compute, self.compute = self.compute, None
            compute.end()


@dataclass
class GpuDevice:
    """One wgpu device with a pipeline cache, a buffer pool and the batch of
    commands recorded but not yet submitted.

    Threads share it under `lock` (reentrant): whoever records into the
    pending batch, submits it or reads a buffer holds it.
    """

    adapter: object
    #: the adapter's index in `adapters()` (what `adapter=` and VYRE_ADAPTER take)
    index: int = 0
    device: object = field(init=False)
    limits: dict[str, int] = field(init=False)
    features: frozenset[str] = field(init=False)
    maps_before_wait: bool = field(init=False)
    #: seconds `synchronize` polls without blocking first (`SPIN_WAIT_S`; 0: block at once)
    spin_wait_s: float = field(init=False)
    #: work-done callbacks of `wait_idle` that wgpu has not called yet (kept alive)
    work_done_callbacks: list = field(default_factory=list, init=False)
    #: compiled pipelines by `wgsl_digest`, an LRU of `PIPELINE_CACHE_SIZE`
    pipelines: dict[str, Pipeline] = field(default_factory=OrderedDict, init=False)
    pool: BufferPool = field(init=False)
    #: execute.py's run plans (pipelines, bindings, sizes, bind groups) by kernels
    run_plans: OrderedDict = field(default_factory=OrderedDict, init=False)
    #: (kernel tuple, plan) of the last run, checked first (execute._plan)
    last_plan: tuple | None = field(default=None, init=False)
    lock: threading.RLock = field(default_factory=threading.RLock, init=False)
    #: commands recorded but not submitted (None when there are none)
    pending: Batch | None = field(default=None, init=False)
    #: batches submitted whose checks have not run yet, oldest first
    in_flight: list[Batch] = field(default_factory=list, init=False)
    #: data queued by `write_buffer` that no submit has flushed yet
    queued_writes: bool = field(default=False, init=False)
    #: runs recorded so far (numbers the runs in trap messages)
    runs: int = field(default=0, init=False)
    #: work-done callbacks of the batches submitted for their work bound that
    #: have not been seen finished (`unfinished_batches`)
    finishing: list = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        adapter = self.adapter
        limits = {name: adapter.limits[name] for name in REQUESTED_LIMITS if name in adapter.limits}
        features = [f for f in OPTIONAL_FEATURES if f in adapter.features]
        unified = adapter.info.get("adapter_type") in UNIFIED_MEMORY_TYPES
        #: whether reads map their buffers before the device wait (one wait instead
        #: of one per buffer): measured faster on lavapipe, but on an NVIDIA H200 a
        #: map started before the work finishes made a 100-dispatch run take
        #: 7-9 ms instead of 1.9 ms, so only CPU adapters do it (measured with
        #: wgpu-py's maps, which resolve on its poll thread; `bench/readback_maps.py`
        #: compares the two orders with the runtime's own maps, `buffer_map`)
        self.maps_before_wait = adapter.info.get("adapter_type") == "CPU"
        self.spin_wait_s = 0.0 if adapter.info.get("adapter_type") == "CPU" else SPIN_WAIT_S
        if (
            unified
            and UNIFIED_MEMORY_FEATURE in adapter.features
            and not os.environ.get("VYRE_NO_UMA")
        ):
            features.append(UNIFIED_MEMORY_FEATURE)
        self.device = adapter.request_device_sync(
            required_features=features, required_limits=limits
        )
        self.limits = dict(self.device.limits)
        self.features = frozenset(self.device.features)
        self.pool = BufferPool(self.device)

    @property
    def unified_memory(self) -> bool:
        """Storage buffers are host-mappable: uploads and readbacks map them directly."""
        return UNIFIED_MEMORY_FEATURE in self.features

    @property
    def backend(self) -> str:
        return self.adapter.info.get("backend_type", "")

    def describe(self) -> str:
        return self.adapter.summary

    @property
    def timestamp_period_ns(self) -> float:
        """Nanoseconds per timestamp-query tick (wgpuQueueGetTimestampPeriod)."""
        from wgpu.backends.wgpu_native._api import libf

        return float(libf.wgpuQueueGetTimestampPeriod(self.device.queue._internal))

    @property
    def target_profile(self):
        """The lowering target profile of this device: its own workgroup limits
        (invocations, size per axis, workgroup storage), storage buffers, about
        how many workgroups it runs at once and whether it runs subgroup ops."""
        from vyre_xdsl.target_profile import TargetProfile

        return TargetProfile.from_limits(
            self.limits,
            resident_workgroups=self.resident_workgroups,
            subgroups="subgroup" in self.features,
        )

    @property
    def resident_workgroups(self) -> int:
        """About how many workgroups the device runs at once (the profile's
        `resident_workgroups`): on a CPU adapter 4 per CPU thread (lavapipe runs
        one workgroup per thread at a time), else the profile's default (WebGPU
        reports no count of compute units)."""
        from vyre_xdsl.target_profile import DEFAULT_PROFILE

        if self.adapter.info.get("adapter_type") == "CPU":
            return 4 * (os.cpu_count() or 1)
        return DEFAULT_PROFILE.resident_workgroups

    def synchronize(self) -> None:
        """Submit the pending batch, wait until every submitted command of this
        device has finished (`wait_idle`), then run the checks of every
        submitted batch: the first trap recorded since the last synchronize
        is raised here."""
        with self.lock:
            self.submit()
            self.wait_idle()
            self.run_checks(len(self.in_flight))

    def wait_idle(self) -> None:
        """Wait until every submitted command has finished: for up to
        `spin_wait_s` by polling without blocking until the queue reports the
        work done, then (or at once) in wgpu-native's blocking wait
        (wgpuDevicePoll with wait). wgpu-py 0.32's `on_submitted_work_done` is
        broken, so the work-done callback is registered here directly."""
        if self.spin_wait_s <= 0:
            self.device._poll_wait()
            return
        from wgpu.backends.wgpu_native._api import ffi, lib

        done, callback = work_done(self.device)
        device = self.device._internal
        deadline = time.perf_counter() + self.spin_wait_s
        while not done:
            if time.perf_counter() > deadline:
                self.device._poll_wait()  # finishes the work and calls the callback
                break
            lib.wgpuDevicePoll(device, False, ffi.NULL)
        # a callback wgpu has not called yet must outlive this call
        self.work_done_callbacks = [(d, c) for d, c in self.work_done_callbacks if not d]
        if not done:
            self.work_done_callbacks.append((done, callback))

    # ------------------------------------------------------------------ submission

    def encoder(self):
        """The command encoder of the pending batch (made on first use). Commands
        recorded in it run in recording order, after everything submitted before.
        Hold `lock` from recording until `recorded` or `submit`. Ends the
        batch's open compute pass (`compute_pass`): a command recorded here
        comes after every dispatch recorded before."""
        if self.pending is None:
            self.pending = Batch(self.device.create_command_encoder())
            self.pool.pending = True
        else:
            self.pending.end_pass()
        return self.pending.encoder

    def compute_pass(self):
        """The pending batch's open compute pass (begun on first use), for
        dispatches: runs recorded back to back with nothing else between them
        share one pass (wgpu orders the dispatches of a pass as it orders
        passes; on lavapipe a pass per run costs about 4x the GPU time of a
        small dispatch). `encoder` and `submit` end it."""
        if self.pending is None:
            self.encoder()
        batch = self.pending
        if batch.compute is None:
            batch.compute = batch.encoder.begin_compute_pass()
        return batch.compute

    def recorded(self, dispatches: int, nbytes: int, work: int = 0) -> None:
        """Count a deferred run into the pending batch (`work`: the bytes its
        dispatches bind); past `MAX_PENDING_DISPATCHES`, `MAX_PENDING_BYTES` or
        `MAX_PENDING_WORK_BYTES` the batch is submitted (unless `holds` it),
        and the checks of the batches before the newest `MAX_UNCHECKED_BATCHES`
        run (`run_oldest_checks`)."""
        batch = self.pending
        batch.dispatches += dispatches
        batch.nbytes += nbytes
        batch.work += work
        if (
            batch.dispatches < MAX_PENDING_DISPATCHES
            and batch.nbytes < MAX_PENDING_BYTES
            and batch.work < MAX_PENDING_WORK_BYTES
        ) or self.holds(batch):
            return
        self.submit()
        if MAX_QUEUED_BATCHES:
            self.finishing.append(work_done(self.device))
        self.run_oldest_checks()

    def holds(self, batch: Batch) -> bool:
        """Whether `batch`, past its work bound alone and below
        `MAX_HELD_WORK_BYTES`, waits for the next run: `MAX_QUEUED_BATCHES`
        batches submitted for their work are still unfinished, so the GPU has
        work queued and the runs held meanwhile share one pass (a large run in
        a submission of its own costs the GPU more than one in a batch)."""
        if batch.dispatches >= MAX_PENDING_DISPATCHES or batch.nbytes >= MAX_PENDING_BYTES:
            return False
        if batch.work >= MAX_HELD_WORK_BYTES:
            return False
        return self.unfinished_batches() >= MAX_QUEUED_BATCHES > 0

    def unfinished_batches(self) -> int:
        """How many batches submitted for their work bound are still running or
        queued on the GPU (after one device poll that does not block)."""
        if not self.finishing:
            return 0
        from wgpu.backends.wgpu_native._api import ffi, lib

        lib.wgpuDevicePoll(self.device._internal, False, ffi.NULL)
        self.finishing = [(done, keep) for done, keep in self.finishing if not done]
        return len(self.finishing)

    def submit(self) -> None:
        """Submit the pending batch (if any); its checks run at the next
        `synchronize` (or once `MAX_UNCHECKED_BATCHES` later batches are
        submitted for their bounds)."""
        with self.lock:
            batch, self.pending = self.pending, None
            if batch is None:
                return
            try:
                batch.end_pass()
                batch.index = submit_for_index(self.device, batch.encoder.finish())
                self.queued_writes = False
            except Exception:  # an invalid encoder: nothing of the batch ran
                _run_all(batch.checks, check=False)
                raise
            finally:
                self.pool.submitted()
            self.in_flight.append(batch)

    def write_buffer(self, buffer, data) -> None:
        """Queue `data` (bytes) for the start of `buffer`: written before the
        commands of the next submit (`flush_queued_writes` before a read)."""
        with self.lock:
            self.device.queue.write_buffer(buffer, 0, data)
            self.queued_writes = True

    def flush_queued_writes(self) -> None:
        """Submit an empty command buffer if data queued by `write_buffer` waits
        for a submit. Call it before mapping a buffer for reading: wgpu-native
        maps a buffer that no submitted command uses at once, and one of them
        written by `write_buffer` would show its old contents."""
        with self.lock:
            if not self.queued_writes:
                return
            self.device.queue.submit([self.device.create_command_encoder().finish()])
            self.queued_writes = False

    def discard_pending(self) -> None:
        """Drop the pending batch unsubmitted (its encoder failed validation)."""
        with self.lock:
            batch, self.pending = self.pending, None
            if batch is not None:
                self.pool.submitted()
                _run_all(batch.checks, check=False)

    def run_oldest_checks(self) -> None:
        """Run the checks of the oldest submitted batches past the newest
        `MAX_UNCHECKED_BATCHES`, after waiting for the newest of those batches
        alone (not for everything submitted): the GPU keeps the newer batches
        queued while the host records the next run. A batch without checks
        (no trap records) is never waited for."""
        with self.lock:
            count = len(self.in_flight) - MAX_UNCHECKED_BATCHES
            if count <= 0:
                return
            waited = [b for b in self.in_flight[:count] if b.checks]
            if waited:
                wait_for_submission(self.device, waited[-1].index)
            self.run_checks(count)

    def run_checks(self, count: int) -> None:
        """Run the checks of the oldest `count` submitted batches, in order;
        every buffer is released, the first error is raised."""
        with self.lock:
            done, self.in_flight = self.in_flight[:count], self.in_flight[count:]
            _run_all([c for batch in done for c in batch.checks])

    # ------------------------------------------------------------------ pipelines

    def pipeline(self, wgsl: str, entry_point: str, bindings: Sequence) -> Pipeline:
        """The compute pipeline of `wgsl`, cached by the BLAKE3 digest of the
        source and entry point. Its bind group layouts come from `bindings`
        (`WgslBinding`s): storage `read` for read_only, `read_write` otherwise.
        Traps are recorded in the form this device supports (`device_wgsl`)."""
        wgsl = self.device_wgsl(wgsl)
        key = wgsl_digest(wgsl, entry_point)
        cached = self.pipelines.pop(key, None)
        if cached is not None:
            self.pipelines[key] = cached  # most recently used: last
            return cached
        self.check_features(wgsl)
        if needs_subgroups(wgsl) and "subgroup" not in self.features:
            name = self.adapter.info.get("device", "?")
            raise MissingFeatureError(
                f"this kernel uses subgroup ops, which need the adapter feature 'subgroup'; "
                f"adapter '{name}' does not offer it. Run on an adapter with subgroups, or "
                "on the reference backend (it simulates subgroups of a stated size)"
            )
        module = self.device.create_shader_module(code=wgsl)
        layouts = self._bind_group_layouts(bindings)
        count = max(layouts, default=-1) + 1
        ordered = [
            layouts.get(g) or self.device.create_bind_group_layout(entries=[]) for g in range(count)
        ]
        layout = self.device.create_pipeline_layout(bind_group_layouts=ordered)
        pipeline = self.device.create_compute_pipeline(
            layout=layout, compute={"module": module, "entry_point": entry_point}
        )
        cached = Pipeline(pipeline, dict(enumerate(ordered)))
        self.pipelines[key] = cached
        while len(self.pipelines) > PIPELINE_CACHE_SIZE:
            del self.pipelines[next(iter(self.pipelines))]
        return cached

    def device_wgsl(self, wgsl: str) -> str:
        """`wgsl` as compiled on this device: lock-free trap records where the device
        has 64-bit atomic max (`backends.wgsl.printer.for_device`)."""
        from vyre_xdsl.backends.wgsl.printer import for_device

        return for_device(wgsl, self.features)

    def check_features(self, wgsl: str) -> None:
        """Raise `MissingFeatureError` when the module needs a feature (f16, f64,
        64-bit integers) that this device lacks."""
        from vyre_xdsl.backends.wgsl.floats import required_features

        for feature in required_features(wgsl):
            if feature in self.features:
                continue
            name = self.adapter.info.get("device", "?")
            raise MissingFeatureError(
                f"this kernel uses {FEATURE_USES[feature]}, which needs the adapter feature "
                f"'{feature}'; adapter '{name}' does not offer it. Run on an adapter that has "
                "it, on the reference backend, or cast to a type the adapter supports"
            )

    def _bind_group_layouts(self, bindings: Sequence) -> dict[int, object]:
        import wgpu

        entries: dict[int, list[dict]] = {}
        for binding in bindings:
            kind = (
                wgpu.BufferBindingType.read_only_storage
                if binding.visibility == "read_only"
                else wgpu.BufferBindingType.storage
            )
            entries.setdefault(binding.group, []).append(
                {
                    "binding": binding.slot,
                    "visibility": wgpu.ShaderStage.COMPUTE,
                    "buffer": {"type": kind},
                }
            )
        return {g: self.device.create_bind_group_layout(entries=e) for g, e in entries.items()}

    def clear_caches(self) -> None:
        """Free the compiled pipelines, run plans and free pooled buffers; pending
        commands keep what they use alive (wgpu holds it until they have run)."""
        with self.lock:
            self.pipelines.clear()
            self.run_plans.clear()
            self.last_plan = None
            self.pool.clear()


def _run_all(checks: list[Check], check: bool = True) -> None:
    """Every `check()` until the first error (raised at the end), every `release()`."""
    error = None
    for item in checks:
        try:
            if check and error is None:
                item.check()
        except Exception as raised:
            error = raised
        finally:
            item.release()
    if error is not None:
        raise error


def clear_device_caches() -> None:
    """`GpuDevice.clear_caches` on every device acquired so far."""
    for device in list(_DEVICES.values()):
        device.clear_caches()


def wgsl_digest(wgsl: str, entry_point: str = "main") -> str:
    import blake3

    return blake3.blake3(f"{entry_point}\0{wgsl}".encode()).hexdigest()


# ============================================================================ buffers


STORAGE_USAGE = "storage"
MAPPABLE_STORAGE_USAGE = "mappable-storage"  # unified memory: storage that maps for read and write
STAGING_USAGE = "staging"


def submit_for_index(device, command_buffer) -> int:
    """Submit `command_buffer` to `device`'s queue (wgpu-native's
    `wgpuQueueSubmitForIndex`, which wgpu-py 0.32 does not wrap) and return the
    submission's index, for `wait_for_submission`."""
    from wgpu.backends.wgpu_native._api import ffi, libf

    buffers = ffi.new("WGPUCommandBuffer[]", [command_buffer._internal])
    return int(libf.wgpuQueueSubmitForIndex(device.queue._internal, 1, buffers))


def wait_for_submission(device, index: int) -> None:
    """Block until the submission `index` (and those before it) has finished on
    `device`'s queue; later submissions go on running."""
    from wgpu.backends.wgpu_native._api import ffi, libf

    libf.wgpuDevicePoll(device._internal, True, ffi.new("WGPUSubmissionIndex *", index))


def work_done(device) -> tuple[list[int], tuple]:
    """Register a callback for when everything submitted to `device`'s queue so
    far has finished (wgpu-native's `wgpuQueueOnSubmittedWorkDone`; wgpu-py
    0.32's own wrapper declares the callback with the wrong type). Returns the
    list the callback appends its status to (non-empty once it was called, by
    a device poll) and what must stay alive until then."""
    from wgpu.backends.wgpu_native._api import ffi, lib

    done: list[int] = []

    @ffi.callback("void(WGPUQueueWorkDoneStatus, WGPUStringView, void *, void *)")
    def finished(status, _message, _userdata1, _userdata2):
        done.append(status)

    info = ffi.new("WGPUQueueWorkDoneCallbackInfo *")
    info.mode = lib.WGPUCallbackMode_AllowProcessEvents
    info.callback = finished
    lib.wgpuQueueOnSubmittedWorkDone(device.queue._internal, info[0])
    return done, (finished, info)


class BufferPool:
    """GPU buffers reused across runs, keyed by (size in bytes, usage).

    `acquire` hands out a free buffer of exactly that size and usage (or makes
    one); `release` returns it. The pool keeps free buffers up to `limit_bytes`
    or up to twice the most bytes it has had handed out at once (`peak_bytes`),
    whichever is more: a run's buffers were all live together, and so were the
    staging buffers that read its results back, so a repeated run-and-read
    gets every buffer back and allocates nothing, however large. Past that,
    the free buffers returned longest ago are destroyed first. `clear` destroys
    the free buffers and forgets the peak. Contents are not cleared: the
    runtime writes or clears every buffer it uses.

    Commands recorded but not yet submitted (`pending`, set by the device)
    run after anything written with `queue.write_buffer` or a mapping before
    their submit. So a buffer returned while commands are pending may be used
    by them: it is handed out again only for commands recorded after them
    (which run in recording order), never to `acquire(..., clean=True)`, the
    buffers that are written from the host, until `submitted()`; nor is it
    destroyed before then. The books are kept under a lock; a buffer returned
    by the garbage collector while the lock is held (`release_later`) is
    taken in by the next `acquire` or `release`.
    """

    def __init__(self, device, limit_bytes: int = 1 << 30):
        self.device = device
        self.limit_bytes = limit_bytes
        self.free: dict[tuple[int, str], list] = {}
        # every free buffer, oldest release first: id(buffer) -> (key, buffer)
        self.returned: dict[int, tuple[tuple[int, str], object]] = {}
        self.free_bytes = 0
        self.in_use_bytes = 0
        self.peak_bytes = 0
        self.created = 0
        #: whether commands are recorded but not submitted (set by `GpuDevice.encoder`)
        self.pending = False
        #: id()s of the free buffers returned while commands were pending
        self.unsubmitted: set[int] = set()
        self.lock = threading.Lock()
        self.later: deque = deque()  # (buffer, usage) returned by `release_later`

    def kept_bytes(self) -> int:
        """The most free bytes the pool keeps."""
        return max(self.limit_bytes, 2 * self.peak_bytes)

    def acquire(self, size: int, usage: str = STORAGE_USAGE, clean: bool = False):
        """A buffer of `size` bytes (rounded up to whole words); with `clean`, one
        that no pending command uses (the caller writes it from the host)."""
        size = (size + 3) // 4 * 4 if size > 4 else 4
        with self.lock:
            if self.later:
                self._take_later()
            in_use = self.in_use_bytes = self.in_use_bytes + size
            if in_use > self.peak_bytes:
                self.peak_bytes = in_use
            buffer = self._reuse((size, usage), clean)
            if buffer is not None:
                return buffer
            self.created += 1
        return self.device.create_buffer(size=size, usage=self._flags(usage))

    def _reuse(self, key: tuple[int, str], clean: bool):
        free = self.free.get(key)
        if not free:
            return None
        index = len(free) - 1
        if clean:
            while index >= 0 and id(free[index]) in self.unsubmitted:
                index -= 1
            if index < 0:
                return None
        buffer = free.pop(index)
        number = id(buffer)
        del self.returned[number]
        if self.unsubmitted:
            self.unsubmitted.discard(number)
        self.free_bytes -= key[0]
        return buffer

    def release(self, buffer, usage: str = STORAGE_USAGE) -> None:
        with self.lock:
            self._take_later()
            self._release(buffer, usage)
            self._evict()

    def release_later(self, buffer, usage: str = STORAGE_USAGE) -> None:
        """`release`, or when another caller holds the books (the garbage
        collector may run inside `acquire`), at the next `acquire`/`release`."""
        if not self.lock.acquire(blocking=False):
            self.later.append((buffer, usage))
            return
        try:
            if self.later:
                self._take_later()
            self._release(buffer, usage)
            self._evict()
        finally:
            self.lock.release()

    def _take_later(self) -> None:
        while self.later:
            self._release(*self.later.popleft())

    def _release(self, buffer, usage: str) -> None:
        # the entry is complete before the buffer is on a free list
        size = buffer.size
        key = (size, usage)
        self.returned[id(buffer)] = (key, buffer)
        if self.pending:
            self.unsubmitted.add(id(buffer))
        self.free_bytes += size
        in_use = self.in_use_bytes - size
        self.in_use_bytes = in_use if in_use > 0 else 0
        free = self.free.get(key)
        if free is None:
            self.free[key] = [buffer]
        else:
            free.append(buffer)

    def submitted(self) -> None:
        """The pending commands were submitted (or dropped): every free buffer
        may be written from the host again."""
        with self.lock:
            self.pending = False
            self.unsubmitted.clear()

    def _evict(self) -> None:
        """Destroy the free buffers returned longest ago until at most
        `kept_bytes()` are kept, skipping those that pending commands may use.
        The one just returned is never among them: it was live, so it is no
        larger than the peak."""
        if self.free_bytes <= self.limit_bytes:  # within `kept_bytes()`
            return
        kept = self.kept_bytes()
        if self.free_bytes <= kept:
            return
        for key, buffer in list(self.returned.values()):
            if self.free_bytes <= kept:
                return
            if id(buffer) in self.unsubmitted:
                continue
            self.free[key].remove(buffer)
            del self.returned[id(buffer)]
            self.free_bytes -= buffer.size
            buffer.destroy()

    def clear(self) -> None:
        """Destroy the free buffers, except those that pending commands may use
        (they stay free), and forget the peak."""
        with self.lock:
            self._take_later()
            for key, buffer in list(self.returned.values()):
                if id(buffer) in self.unsubmitted:
                    continue
                self.free[key].remove(buffer)
                del self.returned[id(buffer)]
                self.free_bytes -= buffer.size
                buffer.destroy()
            self.peak_bytes = self.in_use_bytes

    @staticmethod
    def _flags(usage: str) -> int:
        import wgpu

        if usage == STAGING_USAGE:
            return wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
        storage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.COPY_SRC
        if usage == MAPPABLE_STORAGE_USAGE:
            return storage | wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.MAP_WRITE
        return storage
