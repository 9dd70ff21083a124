"""The backend protocol: `Backend.compile(module) -> Compiled`, `Compiled.run(buffers)`.

Every way of running goes through it: `vyre_xdsl.run`, `Executable`,
`vyre-run` and bundles (`run_bundle`). A backend decides what compiling means
(the reference interpreter keeps the module; the wgpu backend lowers it to
WGSL kernels for a device), which run options it takes, and how inputs bind.

```python
from vyre_xdsl.runtime.backend import backend_named
compiled = backend_named("reference").compile(module)
result = compiled.run(compiled.bind({"x": x, "y": y}))
result.buffers["y"], result.profile   # outputs by name; GPU time (wgpu, profile=True)
```

`BACKENDS` (in `vyre_xdsl.api`) maps a backend name to "module:attribute":
a `Backend` object, or a function `execute(module, buffers, sig, **options)
-> dict[str, np.ndarray]` (wrapped in a `FunctionBackend`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import import_module

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from vyre_xdsl.abi import RunSignature, signature
from vyre_xdsl.diagnostics import VyreError

#: a module, or a function that gives it on first use (a module from the disk
#: cache is parsed only when a backend needs it)
ModuleSource = ModuleOp | Callable[[], ModuleOp]


class UnknownBackendError(VyreError):
    pass


class SubgroupSizeError(VyreError, ValueError):
    """`subgroup_size=` was given for a backend whose hardware decides it."""


class MaxIterationsError(VyreError, ValueError):
    """`max_iterations=` was given for a backend that does not count loop iterations."""


@dataclass
class RunResult:
    """What one `Compiled.run` gives: the output buffers by name (host arrays,
    or `DeviceArray`s with `keep=True`) and, with `profile=True`, the GPU time
    of every kernel (a `timing.RunProfile`)."""

    buffers: dict[str, object]
    profile: object = None


class Compiled(ABC):
    """A module (or bundle) compiled for one backend."""

    #: the backend's name
    backend: str
    signature: RunSignature
    #: whether `run(..., keep=True)` is taken (`check_options` then has nothing
    #: to refuse in a run without other options: a caller may skip the call)
    device_outputs: bool = False
    #: the compiled kernels the persistent compile cache stores (None: the
    #: backend compiles nothing it could store)
    kernels: tuple | None = None
    #: the `GpuDevice` the kernels run on, or None
    gpu = None

    @property
    def adapter(self) -> str | None:
        """The adapter the kernels run on (`[index] description`), or None."""
        return None if self.gpu is None else f"[{self.gpu.index}] {self.gpu.describe()}"

    def check_options(
        self,
        *,
        keep: bool = False,
        profile: bool = False,
        subgroup_size: int | None = None,
        max_iterations: int | None = None,
    ) -> None:
        """Refuse the run options this backend does not take (before binding)."""

    @abstractmethod
    def bind(self, inputs: Mapping[str, object]) -> dict[str, object]:
        """`inputs` checked against the signature: one array per buffer by name."""

    @abstractmethod
    def run(
        self,
        buffers: Mapping[str, object],
        *,
        keep: bool = False,
        profile: bool = False,
        subgroup_size: int | None = None,
        max_iterations: int | None = None,
        repeat: int = 1,
    ) -> RunResult:
        """Run on bound `buffers` (`bind`), `repeat` times; return (at least)
        every output buffer, as `DeviceArray`s with `keep`."""


class Backend(ABC):
    """A way to run modules: `compile` once, then `Compiled.run`."""

    name: str
    #: whether runs take `max_iterations=` (a bound on the loop iterations)
    counts_iterations: bool = False

    def adapter(self, adapter: int | str | None = None) -> str | None:
        """The adapter `adapter` picks (`[index] description`), or None for a host backend."""
        return None

    def device_key(self, adapter: int | str | None) -> object:
        """What tells two devices apart in `run()`'s executable cache."""
        return None

    def target_profile(self, adapter: int | str | None, portable: bool) -> dict | None:
        """The target a compile lowers for, as a dict (part of the compile cache key)."""
        return None

    @abstractmethod
    def compile(
        self,
        module: ModuleSource,
        sig: RunSignature | None = None,
        *,
        adapter: int | str | None = None,
        portable: bool = False,
        verified: bool = False,
        digest: str | Callable[[], str] | None = None,
    ) -> Compiled:
        """Compile `module` (`verified`: the caller verified it; `digest`: its
        IR digest, or a function that gives it, when known)."""

    @abstractmethod
    def load(
        self,
        sig: RunSignature,
        *,
        module: ModuleSource | None = None,
        programs: Callable[[], Sequence] | None = None,
        kernels: Sequence | None = None,
        adapter: int | str | None = None,
    ) -> Compiled:
        """The compiled form of what an earlier compile made: the module (from
        the compile cache), or a bundle's programs and kernels."""


# ============================================================================ registry


def resolve_backend(name: str, target: str) -> Backend:
    """The `Backend` that a `BACKENDS` entry "module:attribute" names."""
    module, attribute = target.split(":")
    found = getattr(import_module(module), attribute)
    if isinstance(found, Backend):
        return found
    if isinstance(found, type) and issubclass(found, Backend):
        return found()
    return FunctionBackend(name, found)


# ============================================================================ binding


def bind_host(
    sig: RunSignature, inputs: Mapping[str, object], gpu=None
) -> tuple[dict[str, np.ndarray], dict]:
    """(host arrays by name, device arrays by name): `sig.bind` for the host
    arrays, the same checks for the device arrays (which stay where they are)."""
    from vyre_xdsl.runtime.arrays import DeviceArray

    resident = {name: a for name, a in inputs.items() if isinstance(a, DeviceArray)}
    if not resident:
        return sig.bind(inputs), {}
    for name, array in resident.items():
        check_device_input(sig, name, array, gpu)
    rest = RunSignature(tuple(b for b in sig.buffers if b.name not in resident))
    return rest.bind({n: a for n, a in inputs.items() if n not in resident}), resident


def check_device_input(sig: RunSignature, name: str, array, gpu, by_name=None) -> None:
    """Check a `DeviceArray` given for buffer `name` as `sig.bind` checks a host array."""
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


# ============================================================================ host backends


def _module_of(source: ModuleSource) -> ModuleOp:
    return source if isinstance(source, ModuleOp) else source()


class HostCompiled(Compiled):
    """A module (or a bundle's programs) that a host function runs: nothing is
    compiled; device arrays given as inputs are copied to the host."""

    def __init__(
        self,
        backend: FunctionBackend,
        sig: RunSignature,
        runner: Callable[..., dict[str, np.ndarray]],
    ):
        self.backend = backend.name
        self.signature = sig
        self._owner = backend
        self._runner = runner

    def check_options(self, *, keep=False, profile=False, subgroup_size=None, max_iterations=None):
        from vyre_xdsl.runtime.arrays import DeviceArrayError
        from vyre_xdsl.runtime.timing import ProfilingUnsupportedError

        if max_iterations is not None and not self._owner.counts_iterations:
            raise MaxIterationsError(
                f"max_iterations={max_iterations} applies to the reference backend; "
                f"this executable runs on '{self.backend}'"
            )
        if keep:
            raise DeviceArrayError(
                f"device=True needs the wgpu backend; this executable runs on '{self.backend}'"
            )
        if profile:
            raise ProfilingUnsupportedError(
                "GPU time per kernel (profile=True, vyre-run --time) needs the wgpu backend; "
                f"this executable runs on '{self.backend}'"
            )

    def bind(self, inputs: Mapping[str, object]) -> dict[str, object]:
        host, resident = bind_host(self.signature, inputs)
        host.update({name: array.numpy().reshape(-1) for name, array in resident.items()})
        return host

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
        self.check_options(
            keep=keep, profile=profile, subgroup_size=subgroup_size, max_iterations=max_iterations
        )
        options: dict[str, object] = {}
        if subgroup_size is not None:
            options["subgroup_size"] = subgroup_size
        if max_iterations is not None:
            options["max_iterations"] = max_iterations
        if repeat != 1:
            options["repeat"] = repeat
        return RunResult(self._runner(buffers, **options))


class FunctionBackend(Backend):
    """A backend that is one host function, `execute(module, buffers, sig,
    **options) -> dict[str, np.ndarray]` (the final host arrays by name)."""

    def __init__(self, name: str, execute: Callable, counts_iterations: bool = False):
        self.name = name
        self.execute = execute
        #: whether it takes `max_iterations=` (the reference interpreter does)
        self.counts_iterations = counts_iterations

    def compile(
        self, module, sig=None, *, adapter=None, portable=False, verified=False, digest=None
    ):
        if sig is None:
            sig = signature(_module_of(module))
        return self.load(sig, module=module)

    def load(self, sig, *, module=None, programs=None, kernels=None, adapter=None):
        if module is not None:

            def runner(buffers, **options):
                return self.execute(_module_of(module), buffers, sig, **options)

        elif programs is not None:
            runner = self._programs_runner(programs)
        else:
            raise UnknownBackendError(f"backend '{self.name}' needs a module to run")
        return HostCompiled(self, sig, runner)

    def _programs_runner(self, programs: Callable[[], Sequence]) -> Callable:
        raise UnknownBackendError(f"backend '{self.name}' cannot run a bundle's programs")


class ReferenceBackend(FunctionBackend):
    """The reference interpreter (`vyre_xdsl.interpreter`): runs the module's
    programs on numpy arrays; counts loop iterations (`max_iterations`) and
    simulates subgroups (`subgroup_size`)."""

    def __init__(self):
        super().__init__("reference", _interpret, counts_iterations=True)

    def _programs_runner(self, programs: Callable[[], Sequence]) -> Callable:
        from vyre_xdsl.interpreter import execute_programs

        def runner(buffers, **options):
            return execute_programs(programs(), buffers, **options)

        return runner


def _interpret(module: ModuleOp, buffers, sig, **options) -> dict[str, np.ndarray]:
    from vyre_xdsl.interpreter import execute

    return execute(module, buffers, sig, **options)


#: the reference backend (`BACKENDS["reference"]`)
REFERENCE = ReferenceBackend()


__all__ = [
    "Backend",
    "Compiled",
    "FunctionBackend",
    "HostCompiled",
    "MaxIterationsError",
    "ReferenceBackend",
    "RunResult",
    "SubgroupSizeError",
    "UnknownBackendError",
    "bind_host",
    "check_device_input",
    "REFERENCE",
    "resolve_backend",
]
