"""Run compiled kernels on the wgpu device, recorded into its pending batch.

```python
from vyre_xdsl.abi import signature
from vyre_xdsl.runtime import execute
sig = signature(module)
final = execute(module, sig.bind({"x": x, "y": y}), sig)   # outputs by buffer name
```

A run (`launch`: planned by `_plan_run`, recorded by `_encode_run`, read back by
`_read_back`; `run_kernels` is its older form):

1. every host buffer a kernel binds gets one GPU storage buffer (from the pool),
   shared by name across the kernels of the run, so what one kernel writes the
   next one reads without leaving the GPU; inputs are written with
   `queue.write_buffer`, the other buffers cleared on the GPU (unless the
   first kernel to bind one marks it `no_clear`: it writes all of it);
2. each binding is bound with exactly `count * 4` bytes (`count` is the
   binding's declared element count, or the host array's length for a
   runtime-sized buffer), so `arrayLength` is the element count the program
   declared; a declared count of 0 is bound as 4 bytes that the kernel never
   touches (its bound is the declared 0);
3. every kernel with a trap sidecar binding gets its own 4-word sidecar, a
   slot of one buffer shared by the run, cleared;
4. all dispatches are recorded in the device's pending command encoder
   (`GpuDevice.encoder`, shared by the runs not yet submitted) and one compute
   pass, left open so that the next run's dispatches join it when no other
   command comes between (`GpuDevice.compute_pass`; one pass per kernel when
   profiled with timestamps;
   `kernel.dispatch_grid`, folded into y past 65535 workgroups), followed by a
   copy of the sidecars into the batch's `TrapLog`;
5. a run that keeps its outputs on the device returns here (deferred: the
   batch is submitted later, docs/runtime.md "Submission"); any other run
   copies its outputs into staging buffers, submits the batch and waits; the
   first kernel in recording order whose sidecar records a trap raises
   `VyreTrap` (`vyre_xdsl.traps`); else every output is read back
   into a numpy array of its host dtype.

What does not depend on the data is cached per device (`GpuDevice.run_plans`):
a plan per tuple of kernel objects (names, pipelines, binding slots), a sized
plan per set of host sizes (byte sizes, grids, checked limits) and the bind
groups per set of pooled buffers (the pool hands a repeated run the same ones).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from vyre_xdsl import semantics
from vyre_xdsl.backends.wgsl.kernel_module import WgslBinding, WgslKernel
from vyre_xdsl.diagnostics import VyreError
from vyre_xdsl.dispatch import checked_indirect_grid
from vyre_xdsl.runtime.arrays import DeviceArray
from vyre_xdsl.runtime.buffer_map import READ, WRITE, BufferMap
from vyre_xdsl.runtime.device import (
    MAPPABLE_STORAGE_USAGE,
    STAGING_USAGE,
    STORAGE_USAGE,
    Check,
    DeviceLimitError,
    GpuDevice,
    Pipeline,
    gpu_device,
)
from vyre_xdsl.semantics import storage_bytes
from vyre_xdsl.target_profile import TargetProfile
from vyre_xdsl.traps import (
    LAVAPIPE_LOOP_LIMIT,  # noqa: F401 (re-exported)
    SIDECAR_WORDS,
    LoopLimitError,  # noqa: F401 (re-exported)
    TrapNotRecordedError,  # noqa: F401 (re-exported)
    decode_sidecar,
    name_repetition,
)

COMPILE_CACHE_SIZE = 64


class WgpuRuntimeError(VyreError):
    """wgpu rejected a shader, pipeline or binding (the message is naga's/wgpu's)."""


class EmptyRuntimeBufferError(VyreError):
    """wgpu cannot bind an empty buffer, so a runtime-sized buffer needs at least one element."""


# ============================================================================ compile


_COMPILED: OrderedDict[tuple, list[WgslKernel]] = OrderedDict()
_COMPILED_LOCK = threading.Lock()


def compiled_kernels(
    module: ModuleOp,
    profile: TargetProfile | None = None,
    text: str | None = None,
    *,
    digest: str | None = None,
) -> list[WgslKernel]:
    """`compile_module(module, profile)`, cached by the module's IR digest
    (`program_text.ir_digest`; `digest`, when the caller knows it already) and
    the profile (an LRU of 64). The profile defaults to the process's device's
    (`GpuDevice.target_profile`: the adapter's own workgroup limits). `text`
    is accepted for older callers and not used."""
    from vyre_xdsl.backends.wgsl import compile_module
    from vyre_xdsl.program_text import ir_digest

    if profile is None:
        profile = gpu_device().target_profile
    key = (digest or ir_digest(module), profile)
    with _COMPILED_LOCK:
        kernels = _COMPILED.get(key)
        if kernels is not None:
            _COMPILED.move_to_end(key)
            return kernels
    kernels = compile_module(module, profile)  # outside the lock: threads compile in parallel
    with _COMPILED_LOCK:
        _COMPILED[key] = kernels
        while len(_COMPILED) > COMPILE_CACHE_SIZE:
            _COMPILED.popitem(last=False)
    return kernels


def execute(module: ModuleOp, buffers: Mapping[str, np.ndarray], sig=None) -> dict[str, np.ndarray]:
    """The wgpu backend as one function (the form `BACKENDS` entries had):
    `wgpu_backend.WGPU.compile(module, sig)` run on the host `buffers`;
    returns them with the outputs read back, by name."""
    from vyre_xdsl.runtime.wgpu_backend import WGPU

    return {**buffers, **WGPU.compile(module, sig).run(buffers).buffers}


# ============================================================================ run


#: uploads on unified memory smaller than this go through `queue.write_buffer`
#: (about 10 us on lavapipe); larger ones map the buffer (one copy fewer, but
#: a map costs about 250 us)
MAP_UPLOAD_MIN_BYTES = 1 << 20
#: run plans kept per device (`GpuDevice.run_plans`), and sized plans per run plan
RUN_PLAN_CACHE_SIZE = 64
#: sets of bind groups kept per sized plan (one per set of pooled buffers seen)
BIND_GROUP_SETS = 4
#: arena layouts kept per sized plan (one per set of intermediates seen)
ARENA_LAYOUTS = 8
#: runs leave unzeroed the buffers whose first kernel marks them `no_clear`
#: (`kernel-elide-clears`); False zeroes them all (to measure what it saves)
ELIDE_CLEARS = True


@dataclass
class _Staged:
    name: str
    staging: object
    nbytes: int
    mapping: BufferMap | None = None  # a map started before the wait (`_start_reading`)


#: map readback buffers before the one wait for the batch, on devices that gain
#: from it (`GpuDevice.maps_before_wait`); False: map each after the wait
MAP_BEFORE_WAIT = True


def _start_reading(gpu: GpuDevice, run: _Run, stages: list[_Staged]) -> None:
    """Map every buffer read after the next wait (the run's staged outputs and
    the trap records of the submitted batches) before that wait, so that one
    device wait finishes the batch and resolves every map."""
    if not (MAP_BEFORE_WAIT and gpu.maps_before_wait):
        return
    gpu.flush_queued_writes()
    for stage in stages:
        if stage.nbytes and stage.mapping is None:
            stage.mapping = BufferMap(gpu.device, stage.staging, READ)
            run.mapped.append(stage)
    for batch in gpu.in_flight:
        if batch.trap_log is not None:
            batch.trap_log.start_reading()


@dataclass
class _Step:
    """One kernel of a run plan: its pipeline and where its bindings come from."""

    kernel: WgslKernel
    pipeline: Pipeline
    # bind group -> [(slot, index into _Plan.names, or None for the trap sidecar)]
    entries: dict[int, list[tuple[int, int | None]]]
    sidecar: int | None  # its slot in the run's sidecar buffer
    #: the pipeline's wgpu-native handle (`_record_dispatches` calls wgpu-native directly)
    raw_pipeline: object = None

    def __post_init__(self) -> None:
        self.raw_pipeline = self.pipeline.pipeline._internal


@dataclass
class _Sized:
    """What a run plan needs for one set of host array sizes."""

    buffer_bytes: list[int]  # per bound name
    binding_bytes: list[dict[int, list[int]]]  # per step: group -> bytes per entry
    grids: list[tuple[int, int, int]]  # per step
    # (storage buffers..., sidecar buffer) -> per step [(group, bind group)]
    bind_groups: OrderedDict[tuple, list[list[tuple[int, object]]]]
    # names a run need not zero (`_no_clear`)
    no_clear: frozenset[str] = frozenset()
    #: bytes bound by all the run's dispatches together: what the GPU may read
    #: or write in one run, the measure `GpuDevice.recorded` submits by
    bound_bytes: int = 0
    #: the `_Layout` of the last request (a repeated caller's is reused)
    layout: _Layout | None = None
    #: (arena slot names, their clears) -> where the slots go (`_Arena.allocate`)
    arenas: dict = None

    def __post_init__(self) -> None:
        self.bound_bytes = sum(sum(sizes) for step in self.binding_bytes for sizes in step.values())
        self.arenas = {}


@dataclass
class _Plan:
    """What a tuple of kernels needs, whatever the data: cached per device."""

    kernels: tuple[WgslKernel, ...]  # held, so the id()s of the cache key stay valid
    names: list[str]  # bound buffer names, in first-use order
    index: dict[str, int]  # name -> position in `names`
    size_names: list[str]  # names whose host sizes the plan depends on
    steps: list[_Step]
    written: frozenset[str]  # names some kernel binds writable
    # per kernel: name -> whether it binds it writable
    usages: list[dict[str, bool]]
    traps: int  # kernels with a trap sidecar
    stride: int  # bytes between two sidecars in the run's sidecar buffer
    sized: OrderedDict[tuple, _Sized]
    # arena names -> name -> arena number (see `_arena_numbers`)
    arenas: dict[frozenset, dict[str, int]] = None
    # the sized plan of a caller whose sizes never change (`static_sizes`)
    static_sized: _Sized | None = None
    # whether a kernel binds the repetition word (`kernel.repetition`)
    repetition: bool = False
    #: whether a kernel binds a `scratch` buffer (`_scratch_arrays`)
    scratch: bool = False
    #: per step: None (no kernel has an indirect grid), or None for every step
    #: (`_encode_run` makes the `_IndirectGrid`s of a plan that has some)
    direct: tuple | None = None
    #: `names` as a set (a run checks that it has an array for each)
    name_set: frozenset[str] = frozenset()


def _arena_numbers(plan: _Plan, names: frozenset) -> dict[str, int]:
    """An arena number per name such that no kernel binds two slots of one
    arena with different usages (read-only and writable in one dispatch is a
    usage conflict in wgpu); greedy, in binding order. A chain of
    intermediates needs two arenas."""
    if plan.arenas is None:
        plan.arenas = {}
    cached = plan.arenas.get(names)
    if cached is not None:
        return cached
    numbers: dict[str, int] = {}
    for name in plan.names:
        if name not in names:
            continue
        number = 0
        while any(
            name in usage
            and other != name
            and numbers.get(other) == number
            and usage[other] != usage[name]
            for usage in plan.usages
            for other in usage
        ):
            number += 1
        numbers[name] = number
    plan.arenas[names] = numbers
    return numbers


def _plan(gpu: GpuDevice, kernels: Sequence[WgslKernel]) -> _Plan:
    last = gpu.last_plan
    if last is not None and last[0] is kernels and type(kernels) is tuple:
        return last[1]  # the same (immutable) kernel tuple as the last run: Executable.run
    plan = _lookup_plan(gpu, kernels)
    gpu.last_plan = (kernels, plan)
    return plan


def _lookup_plan(gpu: GpuDevice, kernels: Sequence[WgslKernel]) -> _Plan:
    key = tuple(map(id, kernels))
    plan = gpu.run_plans.get(key)
    if plan is not None:
        gpu.run_plans.move_to_end(key)
        return plan
    names: list[str] = []
    for kernel in kernels:
        _check_binding_slots(gpu, kernel)
        for binding in kernel.bindings:
            if _bound_by_name(binding) and binding.name not in names:
                names.append(binding.name)
    index = {name: i for i, name in enumerate(names)}
    size_names = list(names)
    for kernel in kernels:
        size_names += [n for n in kernel.count_buffers if n not in index and n not in size_names]
    steps, traps = [], 0
    for kernel in kernels:
        entries: dict[int, list[tuple[int, int | None]]] = {}
        sidecar = None
        for binding in kernel.bindings:
            if binding.is_trap_sidecar:
                sidecar, traps = traps, traps + 1
                entries.setdefault(binding.group, []).append((binding.slot, None))
            elif binding.is_repetition:
                entries.setdefault(binding.group, []).append((binding.slot, REPETITION_ENTRY))
            else:
                entries.setdefault(binding.group, []).append((binding.slot, index[binding.name]))
        pipeline = gpu.pipeline(kernel.wgsl, kernel.entry_point, kernel.bindings)
        steps.append(_Step(kernel, pipeline, entries, sidecar))
    stride = max(SIDECAR_WORDS * 4, gpu.limits.get("min-storage-buffer-offset-alignment", 256))
    written = frozenset(
        b.name
        for k in kernels
        for b in k.bindings
        if _bound_by_name(b) and b.visibility != "read_only"
    )
    usages = [
        {b.name: b.visibility != "read_only" for b in k.bindings if _bound_by_name(b)}
        for k in kernels
    ]
    plan = _Plan(
        tuple(kernels),
        names,
        index,
        size_names,
        steps,
        written,
        usages,
        traps,
        stride,
        OrderedDict(),
    )
    plan.repetition = any(b.is_repetition for k in kernels for b in k.bindings)
    plan.scratch = any(b.is_scratch for k in kernels for b in k.bindings)
    if all(k.indirect is None for k in kernels):
        plan.direct = (None,) * len(steps)
    plan.name_set = frozenset(names)
    gpu.run_plans[key] = plan
    while len(gpu.run_plans) > RUN_PLAN_CACHE_SIZE:
        gpu.run_plans.popitem(last=False)
    return plan


def _sized(gpu: GpuDevice, plan: _Plan, host: Mapping[str, np.ndarray]) -> _Sized:
    """The sized plan of `host`'s array sizes; the device limits are checked
    when it is made (they are part of its key)."""
    limits = (
        gpu.limits.get("max-storage-buffer-binding-size"),
        gpu.limits.get("max-storage-buffers-per-shader-stage"),
    )
    key = (
        limits,
        tuple((host[n].size, host[n].nbytes) if n in host else None for n in plan.size_names),
    )
    sized = plan.sized.get(key)
    if sized is not None:
        plan.sized.move_to_end(key)
        return sized
    lengths = {name: a.size for name, a in host.items()}
    kernels = plan.kernels
    for kernel in kernels:
        _check_limits(gpu, kernel, lengths)
    buffer_bytes = [_buffer_bytes(name, host[name], kernels) for name in plan.names]
    binding_bytes = []
    for kernel in kernels:
        sizes: dict[int, list[int]] = {}
        for binding in kernel.bindings:
            size = (
                SIDECAR_WORDS * 4
                if binding.is_trap_sidecar
                else 4
                if binding.is_repetition
                else storage_bytes(binding.element, max(1, _binding_count(binding, lengths)))
            )
            sizes.setdefault(binding.group, []).append(size)
        binding_bytes.append(sizes)
    grids = [kernel.dispatch_grid(lengths) for kernel in kernels]
    no_clear = _no_clear(plan, lengths, buffer_bytes)
    sized = _Sized(buffer_bytes, binding_bytes, grids, OrderedDict(), no_clear)
    plan.sized[key] = sized
    while len(plan.sized) > RUN_PLAN_CACHE_SIZE:
        plan.sized.popitem(last=False)
    return sized


def _no_clear(plan: _Plan, lengths: Mapping[str, int], buffer_bytes: list[int]) -> frozenset[str]:
    """The buffers a run need not zero: the first kernel that binds the buffer
    marks it `no_clear` (it writes every element it binds before any read) and
    binds all of the buffer's bytes (a host array longer than a static count
    would leave a tail unwritten)."""
    first: dict[str, WgslBinding] = {}
    for kernel in plan.kernels:
        for binding in kernel.bindings:
            if not binding.is_trap_sidecar:
                first.setdefault(binding.name, binding)
    names = set()
    for name, nbytes in zip(plan.names, buffer_bytes):
        binding = first.get(name)
        if binding is None or not binding.no_clear:
            continue
        if storage_bytes(binding.element, _binding_count(binding, lengths)) >= nbytes:
            names.add(name)
    return frozenset(names)


class _BatchEncoder:
    """The pending batch's encoder, fetched at each command (`GpuDevice.encoder`
    ends the batch's open compute pass first): a run that records only
    dispatches leaves the pass open for the next run."""

    __slots__ = ("gpu",)

    def __init__(self, gpu: GpuDevice):
        self.gpu = gpu

    def __getattr__(self, name: str):
        return getattr(self.gpu.encoder(), name)


def _clear(encoder, buffer) -> None:
    """Zero `buffer` on the GPU (recorded in `encoder`): every clear of a run."""
    encoder.clear_buffer(buffer)


def _bind_groups(
    gpu: GpuDevice, plan: _Plan, sized: _Sized, storage: list, sidecar, repeated=None
) -> list:
    """Per step, its [(group, bind group)] over these buffers; cached per set of
    buffers (the pool hands a repeated run the same buffers). `repeated`:
    (repetition, repetition buffer) for the bind groups of one repetition of a
    run with `repeat` (no cache here: `_repeated_bind_groups` keeps them)."""
    key = (*map(tuple, storage), sidecar)
    cached = sized.bind_groups.get(key) if repeated is None else None
    if cached is not None:
        return cached
    repetition, words = (0, None) if repeated is None else repeated
    cached = []
    for step, sizes in zip(plan.steps, sized.binding_bytes):
        groups = []
        for g in sorted(step.pipeline.layouts):
            entries = []
            for (slot, i), size in zip(step.entries.get(g, ()), sizes.get(g, ())):
                if i is None:
                    resource = {
                        "buffer": sidecar,
                        "offset": (repetition * plan.traps + step.sidecar) * plan.stride,
                        "size": size,
                    }
                elif i == REPETITION_ENTRY:
                    resource = {"buffer": words, "offset": repetition * plan.stride, "size": 4}
                else:
                    buffer, offset = storage[i]
                    resource = {"buffer": buffer, "offset": offset, "size": size}
                entries.append({"binding": slot, "resource": resource})
            groups.append(
                (g, gpu.device.create_bind_group(layout=step.pipeline.layouts[g], entries=entries))
            )
        cached.append(groups)
    if repeated is not None:
        return cached
    sized.bind_groups[key] = cached
    while len(sized.bind_groups) > BIND_GROUP_SETS:
        sized.bind_groups.popitem(last=False)
    return cached


#: the `_Step.entries` index of the repetition word (`WgslBinding.is_repetition`)
REPETITION_ENTRY = -1


def _bound_by_name(binding: WgslBinding) -> bool:
    """Whether a binding is a run's buffer (by name), not one the runtime owns
    (the trap sidecar, the repetition word)."""
    return not binding.is_trap_sidecar and not binding.is_repetition


def _repetition_words(run: _Run, plan: _Plan, repeat: int):
    """The repetition buffer of a run: for repetition r, the word r at byte
    r * `plan.stride` (a valid storage-buffer offset), bound there for that
    repetition; written before the submission, so no host round trip."""
    words = np.zeros(repeat * plan.stride // 4, np.uint32)
    words[:: plan.stride // 4] = np.arange(repeat, dtype=np.uint32)
    buffer = run.storage(words.nbytes, clean=True)
    run.upload(buffer, words)
    return buffer


def _repeated_bind_groups(
    gpu: GpuDevice, plan: _Plan, sized: _Sized, storage: list, sidecar, repeat: int, words
) -> list:
    """Per repetition, per step, its [(group, bind group)]: a step with a trap
    sidecar (one per repetition, so a trap names its repetition) or the
    repetition word gets bind groups of its own per repetition; the others
    share repetition 0's. Cached per set of buffers and `repeat`."""
    key = ("repeat", repeat, *(tuple(entry) for entry in storage), sidecar, words)
    cached = sized.bind_groups.get(key)
    if cached is not None:
        sized.bind_groups.move_to_end(key)
        return cached
    first = _bind_groups(gpu, plan, sized, storage, sidecar, (0, words))
    varying = [
        step.sidecar is not None
        or any(i == REPETITION_ENTRY for e in step.entries.values() for _, i in e)
        for step in plan.steps
    ]
    cached = [first]
    for repetition in range(1, repeat):
        groups = (
            _bind_groups(gpu, plan, sized, storage, sidecar, (repetition, words))
            if any(varying)
            else first
        )
        cached.append([g if v else f for g, f, v in zip(groups, first, varying)])
    sized.bind_groups[key] = cached
    while len(sized.bind_groups) > BIND_GROUP_SETS:
        sized.bind_groups.popitem(last=False)
    return cached


def _dispatch(
    compute,
    step: _Step,
    groups: list[tuple[int, object]],
    grid: tuple[int, int, int],
    indirect: _IndirectGrid | None = None,
) -> None:
    """Record one dispatch with wgpu-native's functions directly: wgpu-py's
    wrappers cost a few microseconds per call (error capture, argument
    checks); errors in a pass surface at `end()`/`finish()`, which still go
    through wgpu-py. An indirect kernel first runs its grid guard, then
    `dispatch_workgroups_indirect` on the guarded copy of its grid."""
    raw, lib = compute._internal, _LIB or _native()
    if indirect is not None:
        indirect.record_guard(compute)
    lib.wgpuComputePassEncoderSetPipeline(raw, step.raw_pipeline)
    for g, group in groups:
        lib.wgpuComputePassEncoderSetBindGroup(raw, g, group._internal, 0, _NULL)
    if indirect is not None:
        compute.dispatch_workgroups_indirect(indirect.guarded, 0)
    else:
        lib.wgpuComputePassEncoderDispatchWorkgroups(raw, *grid)


#: copies an indirect grid (words FIRST..FIRST+2 of the program's grid buffer) into a
#: private INDIRECT buffer: as is when every axis is within the device limit
#: LIMIT, else (0, 0, 0) (the program runs nothing) with word 6 set, which the
#: run turns into `IndirectGridError` after the submit. Words 3..5: the grid read.
_GUARD_WGSL = """
@group(0) @binding(0) var<storage, read> grid: array<u32>;
@group(0) @binding(1) var<storage, read_write> guarded: array<u32>;

@compute @workgroup_size(1, 1, 1)
fn main() {
  let g = vec3<u32>(grid[FIRSTu], grid[FIRSTu + 1u], grid[FIRSTu + 2u]);
  let bad = any(g > vec3<u32>(LIMITu));
  let launched = select(g, vec3<u32>(0u), bad);
  guarded[0] = launched.x;
  guarded[1] = launched.y;
  guarded[2] = launched.z;
  guarded[3] = g.x;
  guarded[4] = g.y;
  guarded[5] = g.z;
  guarded[6] = select(0u, 1u, bad);
}
"""


class _IndirectGrid:
    """The guarded grid of one indirect kernel of a run."""

    BYTES = 8 * 4

    def __init__(self, gpu: GpuDevice, step: _Step, source: list):
        import wgpu

        self.kernel = step.kernel
        self.limit = int(gpu.limits.get("max-compute-workgroups-per-dimension", 65535))
        first = self.kernel.indirect_offset // 4
        bindings = (
            WgslBinding("grid", 0, 0, "ui32", first + 3, "constant", "read_only"),
            WgslBinding("guarded", 0, 1, "ui32", 8, "global", "read_write"),
        )
        wgsl = _GUARD_WGSL.replace("LIMIT", str(self.limit)).replace("FIRST", str(first))
        self.pipeline = gpu.pipeline(wgsl, "main", bindings)
        self.guarded = gpu.device.create_buffer(
            size=self.BYTES,
            usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.INDIRECT | wgpu.BufferUsage.COPY_SRC,
        )
        buffer, offset = source
        self.group = gpu.device.create_bind_group(
            layout=self.pipeline.layouts[0],
            entries=[
                {
                    "binding": 0,
                    "resource": {"buffer": buffer, "offset": offset, "size": 4 * (first + 3)},
                },
                {
                    "binding": 1,
                    "resource": {"buffer": self.guarded, "offset": 0, "size": self.BYTES},
                },
            ],
        )

    def record_guard(self, compute) -> None:
        compute.set_pipeline(self.pipeline.pipeline)
        compute.set_bind_group(0, self.group)
        compute.dispatch_workgroups(1, 1, 1)

    def check(self, words: np.ndarray) -> None:
        """Raise `IndirectGridError` when the guard refused the grid."""
        if words[6]:
            checked_indirect_grid(
                self.kernel.source or self.kernel.id, self.kernel.indirect, words[3:6], self.limit
            )


_LIB = None
_NULL = None


def _native():
    global _LIB, _NULL
    if _LIB is None:
        from wgpu.backends.wgpu_native._api import ffi, lib

        _LIB, _NULL = lib, ffi.NULL
    return _LIB


class ZeroFilled:
    """Stands for a zero-filled host array of `size` elements that is never
    uploaded (the GPU clears the buffer): no host memory is allocated."""

    __slots__ = ("size", "dtype", "nbytes")

    def __init__(self, size: int, dtype):
        self.size = int(size)
        self.dtype = np.dtype(dtype)
        self.nbytes = self.size * self.dtype.itemsize

    def numpy(self) -> np.ndarray:
        return np.zeros(self.size, self.dtype)


#: the types `_flat` returns as they are (a run binds them as given)
_BOUND_AS_GIVEN = frozenset({DeviceArray, ZeroFilled})


@dataclass
class KernelRun:
    """What `launch` gives: every buffer (`buffers`: outputs read back, or
    kept on the GPU as `DeviceArray`s, the others as given) and, for a timed
    run on a device with timestamp queries, the GPU time per kernel (summed
    over the repetitions) in timestamp ticks and nanoseconds."""

    buffers: dict[str, np.ndarray | DeviceArray]
    kernel_ticks: list[int] | None = None
    kernel_ns: list[float] | None = None

    def profile(self, kernels: Sequence[WgslKernel], adapter: str):
        """The `timing.RunProfile` of a timed run (None for an untimed one)."""
        if self.kernel_ns is None:
            return None
        from vyre_xdsl.runtime.timing import run_profile

        return run_profile([k.source or k.id for k in kernels], self.kernel_ns, adapter)


def launch(
    kernels: Sequence[WgslKernel],
    buffers: Mapping[str, np.ndarray | DeviceArray],
    *,
    outputs: Sequence[str] | None = None,
    uploads: set[str] | None = None,
    device: GpuDevice | None = None,
    timed: bool = False,
    keep: bool = False,
    static_sizes: bool = False,
    repeat: int = 1,
) -> KernelRun:
    """Run `kernels` in order over the arrays `buffers` (by name), `repeat`
    times (all repetitions recorded in one compute pass: one submission; the
    buffers are uploaded or cleared once, before the first repetition).

    A buffer is a host array or a `DeviceArray` of this device. Returns every
    buffer: the `outputs` (default: every buffer a kernel binds) read back from
    the GPU, or, with `keep`, left there as new `DeviceArray`s; the others as
    given. Only `uploads` (default: all) of the host arrays are copied to the
    GPU; the other host buffers start zeroed. A device array is bound as it is
    (no copy) unless some kernel writes that buffer: then the run works on a
    GPU copy of it, so a run never changes an array it was given.

    The run is planned (`_plan_run`), recorded into the device's pending batch
    (`_encode_run`, under the device's lock) and read back (`_read_back`).
    With `keep` and neither `timed` nor an indirect kernel, it returns at
    once: the batch is submitted later (`GpuDevice.recorded`, `synchronize`,
    a read), and a trap is raised then, naming this run. Otherwise the batch
    is submitted and waited for, and the traps of every run in it are raised
    here. `timed` on a device with timestamp queries gives each kernel its
    own compute pass, timed on the GPU (`KernelRun.kernel_ns`); without, all
    dispatches share one pass. `static_sizes` promises that every run of
    these kernels has the same array sizes (an `Executable` without
    runtime-sized buffers): the sized plan is then made once.
    """
    gpu = device or gpu_device()
    with gpu.lock:
        gpu.runs += 1
        arrays, plan, sized = _plan_run(gpu, kernels, buffers, static_sizes)
        run = _Run(gpu)
        try:
            request = _Request(outputs, uploads, timed, keep, repeat)
            encoded = _encode_run(gpu, run, plan, sized, arrays, request)
            if encoded.deferred:
                # the arrays first: they give their buffers back if `recorded` raises
                # (a trap of an earlier batch, checked when this one is submitted)
                result = dict(buffers)
                index, storage = plan.index, encoded.storage
                for n in encoded.kept:
                    array, buffer = arrays[n], storage[index[n]][0]
                    result[n] = (
                        _kept(run, array, buffer)
                        if isinstance(array, DeviceArray)
                        else DeviceArray._over(gpu, buffer, run.usage, array.dtype, array.size)
                    )
                gpu.recorded(len(kernels) * repeat, run.uploaded, sized.bound_bytes * repeat)
                return KernelRun(result)
            return _read_back(gpu, run, encoded, buffers, arrays, repeat)
        except VyreError:
            raise
        except Exception as error:
            import wgpu

            if isinstance(error, wgpu.GPUError):
                dropped = _drop_pending(gpu)
                raise WgpuRuntimeError(f"wgpu rejected the kernel: {error}{dropped}") from None
            raise
        finally:
            run.release()


def run_kernels(
    kernels: Sequence[WgslKernel],
    buffers: Mapping[str, np.ndarray | DeviceArray],
    outputs: Sequence[str] | None = None,
    uploads: set[str] | None = None,
    device: GpuDevice | None = None,
    profile: dict | None = None,
    keep: bool = False,
    static_sizes: bool = False,
    repeat: int = 1,
) -> dict[str, np.ndarray | DeviceArray]:
    """`launch(...).buffers`, the form of earlier releases: a `profile` dict
    is timed and filled in (`kernel_ns`, `gpu_ns`, and the raw timestamp
    ticks `kernel_ticks`, `gpu_ticks`). New code calls `launch`, whose
    result carries the times."""
    result = launch(
        kernels,
        buffers,
        outputs=outputs,
        uploads=uploads,
        device=device,
        timed=profile is not None,
        keep=keep,
        static_sizes=static_sizes,
        repeat=repeat,
    )
    if profile is not None and result.kernel_ticks is not None:
        profile["kernel_ticks"] = result.kernel_ticks
        profile["gpu_ticks"] = sum(result.kernel_ticks)
        profile["kernel_ns"] = result.kernel_ns
        profile["gpu_ns"] = sum(result.kernel_ns)
    return result.buffers


def _plan_run(
    gpu: GpuDevice,
    kernels: Sequence[WgslKernel],
    buffers: Mapping[str, np.ndarray | DeviceArray],
    static_sizes: bool,
) -> tuple[dict[str, object], _Plan, _Sized]:
    """(the flat arrays by name, scratch buffers included; the run plan of
    `kernels`; its sized plan for these arrays): everything a run needs that
    does not touch the GPU's queue."""
    arrays = {name: a if type(a) in _BOUND_AS_GIVEN else _flat(a) for name, a in buffers.items()}
    plan = _plan(gpu, kernels)
    if plan.scratch:
        arrays.update(_scratch_arrays(kernels, arrays))
    if not arrays.keys() >= plan.name_set:
        _bound_names(kernels, arrays)  # raises, naming the kernel
    sized = plan.static_sized if static_sizes else None
    if sized is None:
        sized = _sized(gpu, plan, arrays)
        if static_sizes:
            plan.static_sized = sized
    return arrays, plan, sized


class _Request(NamedTuple):
    """What the caller of `launch` asks of a run (see `launch`)."""

    outputs: Sequence[str] | None
    uploads: set[str] | None
    timed: bool
    keep: bool
    repeat: int


@dataclass
class _Encoded:
    """A run recorded into the pending batch (`_encode_run`)."""

    plan: _Plan
    storage: list  # per bound name: [buffer, offset]
    wanted: list[str]  # the outputs, in plan order
    kept: set[str] | tuple  # the outputs left on the GPU
    indirect: list  # per step: its `_IndirectGrid` or None
    ticks: _Staged | None  # the timestamps of a timed run
    deferred: bool  # submitted later (a `keep` run without timing or indirect grids)


class _Layout(NamedTuple):
    """What a request (outputs, uploads, keep) makes of a sized plan's
    buffers, whatever the arrays: kept as `_Sized.layout`, and reused while a
    caller (an `Executable`) passes the same `outputs` and `uploads` objects
    (held here, so that the identity check stays sound)."""

    outputs: object
    uploads: object
    keep: bool
    elide: bool  # `ELIDE_CLEARS` when it was made
    wanted: list[str]  # the outputs, in plan order
    kept: frozenset[str] | tuple  # the outputs left on the GPU
    # per bound name: (name, bytes, written, kept, upload, output, clear)
    buffers: tuple[tuple[str, int, bool, bool, bool, bool, bool], ...]


def _layout(plan: _Plan, sized: _Sized, outputs, uploads, keep: bool) -> _Layout:
    """The `_Layout` of a request, the last one's when the request is the same."""
    last = sized.layout
    if (
        last is not None
        and last.outputs is outputs
        and last.uploads is uploads
        and last.keep == keep
        and last.elide == ELIDE_CLEARS
    ):
        return last
    wanted = [n for n in (outputs if outputs is not None else plan.names) if n in plan.index]
    kept = frozenset(wanted) if keep else ()
    uncleared = sized.no_clear if ELIDE_CLEARS else ()
    buffers = tuple(
        (
            name,
            nbytes,
            name in plan.written,
            name in kept,
            uploads is None or name in uploads,
            name in wanted,
            name not in uncleared,
        )
        for name, nbytes in zip(plan.names, sized.buffer_bytes)
    )
    layout = _Layout(outputs, uploads, keep, ELIDE_CLEARS, wanted, kept, buffers)
    sized.layout = layout
    return layout


def _encode_run(
    gpu: GpuDevice,
    run: _Run,
    plan: _Plan,
    sized: _Sized,
    arrays: Mapping[str, object],
    request: _Request,
) -> _Encoded:
    """Record the run: its buffers (uploaded, cleared or bound as they are),
    its trap sidecars, its dispatches (one shared compute pass, or one timed
    pass per kernel) and the copy of its sidecars into the batch's trap log."""
    keep, repeat = request.keep, request.repeat
    layout = _layout(plan, sized, request.outputs, request.uploads, keep)
    encoder = _BatchEncoder(gpu)
    arena = None
    storage = []
    for name, nbytes, written, kept, upload, output, clear in layout.buffers:
        array = arrays[name]
        kind = type(array)
        if kind is DeviceArray:
            if not written:  # bound as it is (checked)
                source = array.buffer(gpu)
                if source.size < nbytes:
                    _storage(
                        run, encoder, arena, name, array, nbytes, written, kept, upload, output
                    )
                storage.append([source, 0])
                continue
        elif not output and not kept:  # only such a buffer may take an arena slot
            if arena is None:
                arena = _Arena(gpu)
            if kind is ZeroFilled or (not upload and kind is np.ndarray):  # an intermediate
                storage.append(arena.slot(name, nbytes, clear))
                continue
        storage.append(
            _storage(run, encoder, arena, name, array, nbytes, written, kept, upload, output, clear)
        )
    if arena is not None and arena.slots:
        arena.allocate(run, encoder, plan, sized)
    sidecar = run.storage(repeat * plan.traps * plan.stride) if plan.traps else None
    if sidecar is not None:
        _clear(encoder, sidecar)
    if repeat == 1 and not plan.repetition:
        repetitions = [_bind_groups(gpu, plan, sized, storage, sidecar)]
    else:
        words = _repetition_words(run, plan, repeat) if plan.repetition else None
        repetitions = _repeated_bind_groups(gpu, plan, sized, storage, sidecar, repeat, words)
    indirect = plan.direct or [
        _IndirectGrid(gpu, step, storage[plan.index[step.kernel.indirect]])
        if step.kernel.indirect is not None
        else None
        for step in plan.steps
    ]
    timer = (
        _Timer(run, len(plan.steps) * repeat)
        if request.timed and "timestamp-query" in gpu.features
        else None
    )
    _record_dispatches(gpu, encoder, plan, sized.grids, repetitions, indirect, timer)
    ticks = timer.resolve(encoder) if timer else None
    deferred = keep and timer is None and plan.direct is not None
    if sidecar is not None:
        label = _run_label(gpu, plan.kernels, deferred)
        _trap_log(gpu).record(encoder, plan, sidecar, label, repeat)
    return _Encoded(plan, storage, layout.wanted, layout.kept, indirect, ticks, deferred)


def _record_dispatches(
    gpu: GpuDevice,
    encoder,
    plan: _Plan,
    grids: list[tuple[int, int, int]],
    repetitions: list,
    indirect: list,
    timer: _Timer | None,
) -> None:
    """Every dispatch of every repetition: in the batch's shared compute pass,
    or, timed, each in its own pass between two timestamps."""
    if timer is None:
        compute = gpu.compute_pass()  # shared with the runs recorded just before
        for bind_groups in repetitions:
            for step, groups, grid, source in zip(plan.steps, bind_groups, grids, indirect):
                _dispatch(compute, step, groups, grid, source)
        return
    index = 0
    for bind_groups in repetitions:
        for step, groups, grid, source in zip(plan.steps, bind_groups, grids, indirect):
            compute = encoder.begin_compute_pass(timestamp_writes=timer.writes(index))
            _dispatch(compute, step, groups, grid, source)
            compute.end()
            index += 1


def _kept_arrays(run: _Run, encoded: _Encoded, arrays: Mapping[str, object]) -> dict:
    """The outputs a `keep` run leaves on the GPU, as `DeviceArray`s by name."""
    index, storage = encoded.plan.index, encoded.storage
    return {n: _kept(run, arrays[n], storage[index[n]][0]) for n in encoded.kept}


def _read_back(
    gpu: GpuDevice,
    run: _Run,
    encoded: _Encoded,
    buffers: Mapping[str, object],
    arrays: Mapping[str, object],
    repeat: int,
) -> KernelRun:
    """Stage the outputs, submit the batch, wait once (raising the first trap
    of the batch and any refused indirect grid) and read the outputs and the
    timestamps back."""
    plan, storage = encoded.plan, encoded.storage
    encoder = _BatchEncoder(gpu)
    staged = (
        []
        if encoded.kept
        else [
            run.stage(encoder, storage[plan.index[name]][0], name, arrays[name].nbytes)
            for name in encoded.wanted
        ]
    )
    checks = [
        (source, run.stage(encoder, source.guarded, "grid", source.BYTES, mappable=False))
        for source in encoded.indirect
        if source is not None
    ]
    gpu.submit()
    for source, stage in checks:
        source.check(run.read(stage, np.uint32))
    ticks = encoded.ticks
    _start_reading(gpu, run, staged + ([ticks] if ticks is not None else []))
    gpu.synchronize()  # the one wait; raises the first trap of the batch
    result = KernelRun({**buffers, **_kept_arrays(run, encoded, arrays)})
    if ticks is not None:
        stamps = run.read(ticks, np.uint64).astype(np.int64).reshape(repeat, -1, 2)
        # per kernel, summed over the repetitions
        result.kernel_ticks = [int(t) for t in (stamps[..., 1] - stamps[..., 0]).sum(0)]
        result.kernel_ns = [t * gpu.timestamp_period_ns for t in result.kernel_ticks]
    for stage in staged:
        result.buffers[stage.name] = run.read(stage, arrays[stage.name].dtype)
    return result


#: bytes of one staging chunk that collects the trap sidecars of a batch's runs
TRAP_CHUNK_BYTES = 64 << 10


class TrapLog(Check):
    """The trap sidecars of the runs of one batch (`Batch.trap_log`): each run
    copies its sidecars into a slot of a staging chunk, read when the batch
    has finished. The first trap, in recording order, is raised."""

    def __init__(self, gpu: GpuDevice):
        self.gpu = gpu
        self.chunks: list[list] = []  # [staging buffer, bytes used]
        # (run label or None for a run that waits for itself, plan, chunk, offset, repeat)
        self.records: list[tuple[str | None, _Plan, list, int, int]] = []
        self.mappings: list[BufferMap] | None = None  # maps started before the wait

    def start_reading(self) -> None:
        """Map the chunks now (after the submit), to be resolved by the next wait."""
        if self.mappings is None:
            self.mappings = [BufferMap(self.gpu.device, b, READ) for b, _ in self.chunks]

    def record(self, encoder, plan: _Plan, sidecar, label: str | None, repeat: int = 1) -> None:
        nbytes = repeat * plan.traps * plan.stride
        if not self.chunks or self.chunks[-1][1] + nbytes > self.chunks[-1][0].size:
            size = max(TRAP_CHUNK_BYTES, nbytes)
            self.chunks.append([self.gpu.pool.acquire(size, STAGING_USAGE), 0])
            self.gpu.pending.nbytes += size
        chunk = self.chunks[-1]
        encoder.copy_buffer_to_buffer(sidecar, 0, chunk[0], chunk[1], nbytes)
        self.records.append((label, plan, chunk, chunk[1], repeat))
        chunk[1] += nbytes

    def check(self) -> None:
        words = {}
        for index, (buffer, used) in enumerate(self.chunks):
            if self.mappings is not None:
                buffer_map = self.mappings[index]
            else:
                buffer_map = BufferMap(self.gpu.device, buffer, READ)
            words[id(buffer)] = buffer_map.read(used).view(np.uint32)
        for label, plan, chunk, offset, repeat in self.records:
            start = offset // 4
            every = words[id(chunk[0])][start : start + repeat * plan.traps * plan.stride // 4]
            every = every.reshape(repeat, plan.traps, -1)
            for repetition, run in enumerate(every):
                for step in plan.steps:
                    if step.sidecar is None:
                        continue
                    try:
                        _raise_trap(step.kernel, run[step.sidecar])
                    except VyreError as error:
                        if repeat > 1:
                            name_repetition(error, repetition, repeat)
                        if label is not None:
                            error.args = (f"{error}; {label}", *error.args[1:])
                            error.run = label
                        raise

    def release(self) -> None:
        for index, (buffer, _) in enumerate(self.chunks):
            if self.mappings is not None:
                self.mappings[index].settle()
            self.gpu.pool.release(buffer, STAGING_USAGE)
        self.chunks.clear()
        self.mappings = None


def _trap_log(gpu: GpuDevice) -> TrapLog:
    """The trap log of the pending batch (made on first use)."""
    batch = gpu.pending
    if batch.trap_log is None:
        batch.trap_log = TrapLog(gpu)
        batch.checks.append(batch.trap_log)
    return batch.trap_log


def _run_label(gpu: GpuDevice, kernels: Sequence[WgslKernel], deferred: bool) -> str | None:
    """How a trap names a deferred run: its number on the device and its programs."""
    if not deferred:
        return None
    names = list(dict.fromkeys(f"@{k.source}" if k.source else k.id for k in kernels))
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return (
        f"recorded by device run #{gpu.runs} ({shown}), which returned device arrays "
        "before it ran; raised at the next read or synchronize"
    )


def _drop_pending(gpu: GpuDevice) -> str:
    """Drop the pending batch, whose encoder is now invalid; say so when it
    held earlier runs."""
    earlier = gpu.pending is not None and gpu.pending.dispatches > 0
    gpu.discard_pending()
    if not earlier:
        return ""
    return "; the device runs recorded since the last synchronize were dropped with it"


def _flat(array):
    kind = type(array)
    if kind is DeviceArray or kind is ZeroFilled or isinstance(array, (DeviceArray, ZeroFilled)):
        return array
    if isinstance(array, np.ndarray) and array.ndim == 1 and array.flags.c_contiguous:
        return array
    return np.ascontiguousarray(array).reshape(-1)


def _storage(
    run: _Run,
    encoder,
    arena: _Arena,
    name: str,
    array,
    nbytes: int,
    written: bool,
    kept: bool,
    upload: bool,
    output: bool,
    clear: bool = True,
) -> list:
    """[buffer, offset] bound for `name` in this run.

    A device array is bound itself when no kernel writes it, else a copy (so
    the caller's array never changes). A host array is uploaded (or, when it
    takes no input, the buffer cleared). A buffer whose output is `kept` is
    not returned to the pool at the end of the run. Zero-filled buffers that
    are not outputs (intermediates) share one arena buffer, cleared at once.
    Without `clear` (the run's first kernel to bind it writes all of it) a
    zero-filled buffer is not cleared.
    """
    if isinstance(array, DeviceArray):
        source = array.buffer(run.gpu)
        if source.size < nbytes:
            raise DeviceLimitError(
                f"device array for buffer '{name}' holds {source.size} bytes; the run binds {nbytes}"
            )
        if not written:
            return [source, 0]
        buffer = run.storage(nbytes, kept)
        if array.nbytes:
            encoder.copy_buffer_to_buffer(source, 0, buffer, 0, _whole_words(array.nbytes))
        return [buffer, 0]
    zero = isinstance(array, ZeroFilled) or not upload
    if zero and not output and not kept:
        return arena.slot(name, nbytes, clear)
    buffer = run.storage(nbytes, kept, clean=not zero)
    if not zero:
        run.upload(buffer, array)
    elif clear:
        _clear(encoder, buffer)
    return [buffer, 0]


class _Arena:
    """Pooled buffers for a run's zero-filled intermediates: a few buffers and
    `clear_buffer` calls however many intermediates there are (each slot
    aligned to `min-storage-buffer-offset-alignment`). Slots go to arenas by
    `_arena_numbers`, so that no dispatch uses one buffer both read-only and
    writable; an arena that would pass the device's `max-buffer-size` goes on
    in another buffer. An arena buffer is cleared unless none of its slots
    needs it."""

    def __init__(self, gpu: GpuDevice):
        self.align = max(4, gpu.limits.get("min-storage-buffer-offset-alignment", 256))
        self.max_bytes = gpu.limits.get("max-buffer-size", 1 << 62)
        self.names: list[str] = []
        self.slots: list[tuple[list, int]] = []  # ([buffer, offset], bytes)
        self.clears: list[bool] = []  # per slot: whether it needs zeroing

    def slot(self, name: str, nbytes: int, clear: bool = True) -> list:
        entry = [None, 0]
        self.names.append(name)
        self.clears.append(clear)
        self.slots.append((entry, (nbytes + self.align - 1) // self.align * self.align))
        return entry

    def allocate(self, run: _Run, encoder, plan: _Plan, sized: _Sized) -> None:
        """Give every slot its buffer and offset. Where the slots go depends
        on the slots alone (their names, sizes and clears, which the sized plan
        and the names decide): worked out once per set of slots
        (`_Sized.arenas`), then each run only takes and clears its buffers."""
        if not self.slots:
            return
        key = (tuple(self.names), tuple(self.clears))
        layout = sized.arenas.get(key)
        if layout is None:
            layout = self._layout(_arena_numbers(plan, frozenset(self.names)))
            if len(sized.arenas) < ARENA_LAYOUTS:
                sized.arenas[key] = layout
        keys, offsets, parts = layout
        buffers = {}
        for part, size, clear in parts:
            buffer = buffers[part] = run.storage(size)
            if clear:
                _clear(encoder, buffer)
        for part, offset, (entry, _) in zip(keys, offsets, self.slots):
            entry[0] = buffers[part]
            entry[1] = offset

    def _layout(self, numbers: dict[str, int]) -> tuple:
        """(per slot its buffer key, per slot its offset, per buffer key in
        order (key, bytes, whether it is cleared))."""
        keys = self._buffer_keys(numbers)
        sizes: dict[tuple[int, int], int] = {}
        offsets = []
        for key, (_, nbytes) in zip(keys, self.slots):
            offsets.append(sizes.get(key, 0))
            sizes[key] = offsets[-1] + nbytes
        cleared = {key for key, clear in zip(keys, self.clears) if clear}
        parts = tuple((key, size, key in cleared) for key, size in sorted(sizes.items()))
        return tuple(keys), tuple(offsets), parts

    def _buffer_keys(self, numbers: dict[str, int]) -> list[tuple[int, int]]:
        """Per slot, (arena number, part): a part holds slots while they fit in
        `max_bytes`, then the arena goes on in the next part."""
        if sum(nbytes for _, nbytes in self.slots) <= self.max_bytes:
            return [(numbers[name], 0) for name in self.names]
        used: dict[int, int] = {}
        parts: dict[int, int] = {}
        keys = []
        for name, (_, nbytes) in zip(self.names, self.slots):
            number = numbers[name]
            if used.get(number, 0) and used[number] + nbytes > self.max_bytes:
                parts[number] = parts.get(number, 0) + 1
                used[number] = 0
            used[number] = used.get(number, 0) + nbytes
            keys.append((number, parts.get(number, 0)))
        return keys


def _kept(run: _Run, array, buffer) -> DeviceArray:
    """The output `DeviceArray` over `buffer` (the input itself when the run
    bound a device array unchanged)."""
    if isinstance(array, DeviceArray) and buffer is array.buffer():
        return array
    return DeviceArray._over(run.gpu, buffer, run.usage, array.dtype, array.size)


def _whole_words(nbytes: int) -> int:
    """`nbytes` rounded up to whole 4-byte words (wgpu copies whole words; a buffer
    of 2-byte elements may end in the middle of one)."""
    return (nbytes + 3) // 4 * 4


def write_buffer(gpu: GpuDevice, buffer, flat: np.ndarray) -> None:
    """Copy the contiguous `flat` into the start of `buffer` (queued before the next submit)."""
    _Run(gpu).upload(buffer, flat)


def read_buffer(gpu: GpuDevice, buffer, nbytes: int, dtype) -> np.ndarray:
    """The first `nbytes` of `buffer` as a fresh 1-D array: submits the pending
    batch with the copy, waits for it and raises its first trap."""
    with gpu.lock:
        run = _Run(gpu)
        try:
            staged = run.stage(None if run.mappable else gpu.encoder(), buffer, "", nbytes)
            gpu.submit()
            _start_reading(gpu, run, [staged])
            gpu.synchronize()  # the one wait
            return run.read(staged, dtype)
        finally:
            run.release()


def _scratch_arrays(
    kernels: Sequence[WgslKernel], arrays: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """A zeroed host array for every `scratch` binding (grid_sync spills):
    `per_invocation` elements of its type for every invocation the largest
    dispatch that binds it launches, rounded up to whole 32-bit words. Never
    uploaded: the GPU buffer is cleared."""
    sizes: dict[str, int] = {}
    elements: dict[str, str] = {}
    lengths = None
    for kernel in kernels:
        for binding in kernel.bindings:
            if not binding.is_scratch:
                continue
            if lengths is None:
                lengths = {name: a.size for name, a in arrays.items()}
            invocations = int(np.prod(kernel.dispatch_grid(lengths))) * int(
                np.prod(kernel.workgroup_size)
            )
            need = binding.per_invocation * invocations
            sizes[binding.name] = max(sizes.get(binding.name, 0), need)
            elements[binding.name] = binding.element
    return {name: _zeroed(elements[name], size) for name, size in sizes.items()}


def _zeroed(element: str, count: int) -> np.ndarray:
    """`count` zero elements of `element` (its host dtype), padded to whole words."""
    per_word = max(4 // semantics.ELEMENTS[element].storage_bytes, 1)
    return np.zeros(-(-count // per_word) * per_word, dtype=semantics.HOST_DTYPES[element])


def _bound_names(kernels: Sequence[WgslKernel], host: Mapping[str, np.ndarray]) -> list[str]:
    names: list[str] = []
    for kernel in kernels:
        for binding in kernel.bindings:
            if not _bound_by_name(binding) or binding.name in names:
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
    sizes = [  # a binding is never empty: a count of 0 binds one element
        storage_bytes(b.element, max(1, b.count))
        for k in kernels
        for b in k.bindings
        if b.name == name and b.count is not None
    ]
    return max([(array.nbytes + 3) // 4 * 4, 4] + sizes)


#: WebGPU's default `maxBindingsPerBindGroup` (the device is created with it)
WEBGPU_MAX_BINDINGS_PER_GROUP = 1000


def _check_binding_slots(gpu: GpuDevice, kernel: WgslKernel) -> None:
    """A binding number past the device's limit is a clear error, before wgpu
    rejects the bind group layout."""
    slots = gpu.limits.get("max-bindings-per-bind-group", WEBGPU_MAX_BINDINGS_PER_GROUP)
    for binding in kernel.bindings:
        if binding.slot >= slots:
            raise DeviceLimitError(
                f"buffer '{binding.name}' of kernel '{kernel.source or kernel.id}' is at binding "
                f"{binding.slot}; this device allows binding numbers below {slots}; declare a smaller binding"
            )


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
        if not _bound_by_name(binding):
            continue
        count = _binding_count(binding, lengths)
        if binding.count is None and count == 0:
            raise EmptyRuntimeBufferError(
                f"runtime-sized buffer '{binding.name}' has no elements; wgpu cannot bind an "
                "empty buffer (pass at least one element, or declare a static count of 0)"
            )
        if binding.count is None and count * semantics.ELEMENTS[binding.element].storage_bytes % 4:
            raise DeviceLimitError(
                f"runtime-sized buffer '{binding.name}' of {where} has {count} {binding.element} "
                "elements, which end inside a 32-bit word; the wgpu backend binds whole words, so "
                "its length would be wrong: pad the array to a whole number of words "
                f"({4 // semantics.ELEMENTS[binding.element].storage_bytes} elements per word) "
                "or declare a static count"
            )
        needed = storage_bytes(binding.element, count)
        if needed > limit:
            raise DeviceLimitError(
                f"buffer '{binding.name}' of {where} needs {needed} bytes; this device binds "
                f"at most {limit} bytes per storage buffer; partition the data"
            )


def _raise_trap(kernel: WgslKernel, words: np.ndarray) -> None:
    """Raise what one kernel's sidecar records (`traps.decode_sidecar`), if anything."""
    error = decode_sidecar(
        words, kernel.trap_tags, kernel.source or kernel.id, kernel.source or None
    )
    if error is not None:
        raise error


class _Timer:
    """Timestamp queries around each compute pass."""

    def __init__(self, run: _Run, passes: int):
        import wgpu

        self.run = run
        self.count = 2 * max(1, passes)
        self.queries = run.gpu.device.create_query_set(
            type=wgpu.QueryType.timestamp, count=self.count
        )

    def writes(self, index: int) -> dict:
        return {
            "query_set": self.queries,
            "beginning_of_pass_write_index": 2 * index,
            "end_of_pass_write_index": 2 * index + 1,
        }

    def resolve(self, encoder) -> _Staged:
        import wgpu

        nbytes = 8 * self.count
        resolved = self.run.gpu.device.create_buffer(
            size=nbytes, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
        )
        encoder.resolve_query_set(self.queries, 0, self.count, resolved, 0)
        return self.run.stage(encoder, resolved, "timestamps", nbytes, mappable=False)


class _Run:
    """The pooled buffers of one run, released when it ends."""

    __slots__ = ("gpu", "held", "uploaded", "mapped", "mappable", "usage")

    def __init__(self, gpu: GpuDevice):
        self.gpu = gpu
        self.held: list[tuple[object, str]] = []
        self.uploaded = 0  # bytes written from the host
        self.mapped: list[_Staged] = []  # stages whose map started before the wait
        self.mappable = mappable = gpu.unified_memory
        self.usage = MAPPABLE_STORAGE_USAGE if mappable else STORAGE_USAGE

    def storage(self, nbytes: int, kept: bool = False, clean: bool = False):
        """A pooled storage buffer, returned to the pool when the run ends
        unless `kept` (then a `DeviceArray` will own it); `clean` for one
        that is written from the host (`BufferPool.acquire`)."""
        buffer = self.gpu.pool.acquire(nbytes, self.usage, clean)
        if not kept:
            self.held.append((buffer, self.usage))
        return buffer

    def upload(self, buffer, array: np.ndarray) -> None:
        """Copy `array` into the start of `buffer` before the submit."""
        if not array.nbytes:
            return
        # as bytes: wgpu takes buffer-protocol data, which ml_dtypes' bfloat16 is not
        array = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        if array.nbytes % 4:  # copies are whole 4-byte words (2-byte elements: a half)
            array = np.concatenate([array, np.zeros(4 - array.nbytes % 4, np.uint8)])
        self.uploaded += array.nbytes
        if not self.mappable or array.nbytes < MAP_UPLOAD_MIN_BYTES:
            self.gpu.write_buffer(buffer, array)
            return
        BufferMap(self.gpu.device, buffer, WRITE).write(array)

    def stage(self, encoder, source, name: str, nbytes: int, mappable: bool = True) -> _Staged:
        """Make `nbytes` of `source` readable after the submit: the buffer itself
        on unified memory, else a staging copy recorded in `encoder`."""
        if mappable and self.mappable:
            return _Staged(name, source, nbytes)
        words = _whole_words(nbytes)
        staging = self.gpu.pool.acquire(max(4, words), STAGING_USAGE)
        self.held.append((staging, STAGING_USAGE))
        if nbytes:
            encoder.copy_buffer_to_buffer(source, 0, staging, 0, words)
        return _Staged(name, staging, nbytes)

    def read(self, stage: _Staged, dtype) -> np.ndarray:
        """The staged bytes as a fresh array (one copy out of the mapping)."""
        if not stage.nbytes:
            return np.zeros(0, dtype)
        buffer_map, stage.mapping = stage.mapping, None  # resolved by the batch's wait
        if buffer_map is None:
            self.gpu.flush_queued_writes()
            buffer_map = BufferMap(self.gpu.device, stage.staging, READ)
        return buffer_map.read(stage.nbytes).view(dtype)

    def release(self) -> None:
        if not self.held and not self.mapped:
            return
        for stage in self.mapped:  # maps started but not read (a trap was raised)
            if stage.mapping is not None:
                stage.mapping.settle()
                stage.mapping = None
        self.mapped.clear()
        # in reverse, so that the pool hands a repeated run the same buffers
        # in the same roles (and its cached bind groups apply)
        for buffer, usage in reversed(self.held):
            self.gpu.pool.release(buffer, usage)
        self.held.clear()
