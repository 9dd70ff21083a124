"""The WGSL backend: kernel descriptors -> WGSL modules for the wgpu runtime.

```python
from vyre_xdsl.backends.wgsl import compile_module
kernels = compile_module(module)      # vyre or kernel IR -> list[WgslKernel], in dispatch order
for kernel in kernels:
    print(kernel.wgsl)
```

`compile_module` lowers a copy of the module when it still holds
`vyre.program`s (the steps of the `vyre-to-kernel` pipeline: `vyre-lower`,
`kernel-elide-clears`, `kernel-vectorize`, `kernel-coarsen`, `kernel-verify`),
prints every descriptor (`printer.print_descriptor`) and returns one
`WgslKernel` per descriptor. Kernel IR is printed as it is: the printer takes
every choice (vector form, coarsening, launch grid, unrolled loops, barrier
scope, workgroup clears) from the IR's records and decides none itself. A
`grid_sync` split gives several kernels for one program, in order. With
`VYRE_DUMP_KDESC=DIR` every descriptor is written to `DIR/<id>.kdesc.mlir` with
its WGSL next to it (`DIR/<id>.wgsl`).
"""

from __future__ import annotations

from vyre_xdsl.backends.wgsl.compile import (
    compile_descriptor,
    compile_module,
    lowered_module,
)
from vyre_xdsl.backends.wgsl.kernel_module import WgslBinding, WgslKernel
from vyre_xdsl.backends.wgsl.printer import MAX_WGSL_BYTES, WgslModuleTooLarge

__all__ = [
    "MAX_WGSL_BYTES",
    "WgslBinding",
    "WgslKernel",
    "WgslModuleTooLarge",
    "compile_descriptor",
    "compile_module",
    "lowered_module",
]
