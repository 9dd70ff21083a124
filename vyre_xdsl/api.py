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

from collections.abc import Callable, Mapping
from importlib import import_module

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from vyre_xdsl.abi import RunSignature, signature
from vyre_xdsl.context import parse_module, vyre_context
from vyre_xdsl.diagnostics import VyreError, verify_module

#: backend name -> "module:function" with signature
#:   execute(module: ModuleOp, buffers: dict[str, np.ndarray], sig: RunSignature) -> dict[str, np.ndarray]
#: `buffers` holds one host array per host buffer (inputs bound, others zero-filled);
#: the function returns the final contents of (at least) every output buffer.
BACKENDS: dict[str, str] = {
    "reference": "vyre_xdsl.interpreter:execute",
    "wgpu": "vyre_xdsl.runtime:execute",
}


class UnknownBackendError(VyreError, ValueError):
    pass


class ModuleTypeError(VyreError, TypeError):
    """`run`/`compile` got something that is neither IR text nor a `ModuleOp`."""


def _verified(module_or_text: ModuleOp | str) -> ModuleOp:
    if isinstance(module_or_text, str):
        return parse(module_or_text)
    if not isinstance(module_or_text, ModuleOp):
        raise ModuleTypeError(
            f"expected vyre IR text or a ModuleOp, not {type(module_or_text).__name__}"
        )
    verify_module(module_or_text)
    return module_or_text


def parse(text: str, name: str = "<input>") -> ModuleOp:
    """Parse and verify vyre IR text; errors are located `VyreDiagnostic`s."""
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


def default_backend() -> str:
    """`wgpu` when a GPU adapter exists, else `reference`."""
    try:
        from vyre_xdsl.runtime import adapter_available
    except ImportError:
        return "reference"
    return "wgpu" if adapter_available() else "reference"


def fuse_module(module: ModuleOp) -> ModuleOp:
    """A fused copy of `module` (the `vyre-fuse` pass); `module` is unchanged."""
    from vyre_xdsl.passes.vyre_fuse import VyreFusePass

    fused = module.clone()
    VyreFusePass().apply(vyre_context(), fused)
    verify_module(fused)
    return fused


def run(
    module_or_text: ModuleOp | str,
    inputs: Mapping[str, object] | None = None,
    backend: str | None = None,
    fuse: bool = False,
) -> dict[str, np.ndarray]:
    """Run a module and return its output buffers by name (SPEC section 8)."""
    module = _verified(module_or_text)
    sig: RunSignature = signature(module)
    buffers = sig.bind({} if inputs is None else inputs)
    execute = _backend(backend or default_backend())
    target = fuse_module(module) if fuse else module
    final = execute(target, buffers, sig)
    return sig.outputs_of(final, inputs)


class Executable:
    """A module compiled once for one backend: `run(inputs)` only binds, executes
    and reads back (no parsing, verification, fusion or compilation per call).

    ```python
    exe = vyre_xdsl.compile(text, backend="wgpu", fuse=True)
    for batch in batches:
        out = exe.run({"x": batch})
    ```
    """

    def __init__(self, module: ModuleOp, backend: str, fuse: bool):
        self.signature: RunSignature = signature(module)
        self.backend = backend
        self.module = fuse_module(module) if fuse else module
        self._kernels = None
        if backend == "wgpu":
            from vyre_xdsl.runtime.execute import compiled_kernels

            self._kernels = compiled_kernels(self.module)

    def run(self, inputs: Mapping[str, object] | None = None) -> dict[str, np.ndarray]:
        sig = self.signature
        buffers = sig.bind({} if inputs is None else inputs)
        if self._kernels is not None:
            from vyre_xdsl.runtime.execute import run_kernels

            final = run_kernels(self._kernels, buffers, outputs=list(sig.outputs), uploads=set(sig.inputs))
        else:
            final = _backend(self.backend)(self.module, buffers, sig)
        return sig.outputs_of(final, inputs)


def compile(
    module_or_text: ModuleOp | str, backend: str | None = None, fuse: bool = False
) -> Executable:
    """Parse, verify, (fuse,) and compile once; see `Executable`."""
    module = _verified(module_or_text)
    name = backend or default_backend()
    _backend(name)  # an unknown backend is an error now, not at the first run
    return Executable(module, name, fuse)

