"""Running a target-module bundle.

`run_bundle(bundle, inputs)` applies the bundle's run signature (SPEC section 8:
the same inputs, checks and outputs as running its source module), then runs
every dispatch of every module, stage by stage and group by group, in one
command encoder and one submit. Both backends run it through the backend
protocol (`Backend.load(...).run(buffers)`, `vyre_xdsl.runtime.backend`):
the wgpu backend runs the bundle's kernels; with `backend="reference"` the
reference interpreter runs the bundle's original programs instead, which is
the oracle the GPU run must match.

```python
bundle = TargetModuleBundle.from_bytes(open("out.vkb", "rb").read())
outputs = run_bundle(bundle, {"x": x})
```
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from vyre_xdsl.conversion import check_memref_inputs, in_memref_shapes
from vyre_xdsl.diagnostics import VyreError
from vyre_xdsl.megakernel.bundle import TargetModuleBundle
from vyre_xdsl.program_text import parse_program_text
from vyre_xdsl.semantics import storage_bytes

BUNDLE_BACKENDS = ("wgpu", "reference")


class UnknownBundleBackendError(VyreError):
    pass


def run_bundle(
    bundle: TargetModuleBundle | bytes,
    inputs: Mapping[str, object] | None = None,
    backend: str = "wgpu",
    max_iterations: int | None = None,
    repeat: int = 1,
) -> dict[str, np.ndarray]:
    """The output buffers (by name) of running `bundle` on `inputs` (a buffer
    that was a memref of standard MLIR in the memref's shape);
    `max_iterations` bounds the reference backend's loop iterations (see
    `vyre_xdsl.interpreter.execute`). `repeat=N` runs the bundle's modules N
    times in order on the same buffers (one submission on a GPU), as
    `Executable.run(repeat=N)` does: `vyre.repetition` is 0 .. N - 1 (the wgpu
    backend binds each repetition's word to the kernels' repetition binding,
    the reference backend gives the programs the repetition)."""
    from vyre_xdsl.api import check_repeat

    repeat = check_repeat(repeat)
    if isinstance(bundle, bytes | bytearray):
        bundle = TargetModuleBundle.from_bytes(bytes(bundle))
    sig = bundle.run_signature()
    compiled = bundle_backend(backend).load(
        sig,
        programs=lambda: [parse_program_text(node.program, node.name) for node in bundle.nodes],
        kernels=bundle.kernels(),
    )
    if compiled.gpu is not None:
        check_device_fits(bundle, compiled.gpu.limits)
    options = {"max_iterations": max_iterations}
    compiled.check_options(**options)
    check_memref_inputs(inputs, bundle.shapes, sig)
    final = compiled.run(compiled.bind({} if inputs is None else inputs), repeat=repeat, **options)
    return in_memref_shapes(sig.outputs_of(final.buffers, inputs), bundle.shapes)


def bundle_backend(name: str):
    """The backend (`runtime.backend.Backend`) that runs a bundle on `name`."""
    if name not in BUNDLE_BACKENDS:
        raise UnknownBundleBackendError(
            f"unknown backend '{name}' for a bundle; choose from {', '.join(BUNDLE_BACKENDS)}"
        )
    from vyre_xdsl.api import backend_named

    return backend_named(name)


def check_device_fits(bundle: TargetModuleBundle, limits: Mapping[str, int]) -> None:
    """Refuse a bundle whose kernels need more than this device allows (wgpu
    would reject their pipelines), naming the limit."""
    from vyre_xdsl.runtime import DeviceLimitError

    for module in bundle.modules:
        program = parse_program_text(module.program, f"fusion group {module.group}")
        shared = sum(
            storage_bytes(b.element, b.static_count or 0)
            for b in program.buffers()
            if b.is_workgroup
        )
        for kernel in module.kernels:
            x, y, z = kernel.workgroup_size
            wanted = {
                "max-compute-workgroup-size-x": x,
                "max-compute-workgroup-size-y": y,
                "max-compute-workgroup-size-z": z,
                "max-compute-invocations-per-workgroup": x * y * z,
                "max-compute-workgroup-storage-size": shared,
            }
            for limit, value in wanted.items():
                if limit in limits and value > limits[limit]:
                    raise DeviceLimitError(
                        f"fusion group {module.group} of the bundle needs {limit} = {value}, but this "
                        f"device allows {limits[limit]}; recompile it for this device's profile"
                    )


# ---------------------------------------------------------------------- vyre-run


def is_bundle_file(path: str) -> bool:
    """A `.vkb` path, or a file whose first 32 bytes are the BLAKE3 of the rest."""
    if path.endswith(".vkb"):
        return True
    if path == "-":
        return False
    import blake3

    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return False
    return len(data) > 32 and data[32:33] == b"{" and blake3.blake3(data[32:]).digest() == data[:32]


def load_bundle(path: str) -> TargetModuleBundle:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as error:
        raise BundleFileError(f"cannot read {path}: {error.strerror or error}") from None
    return TargetModuleBundle.from_bytes(data)


class BundleFileError(VyreError):
    pass
