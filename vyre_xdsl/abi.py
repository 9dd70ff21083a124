"""The host interface of a run (SPEC section 8): which buffers take inputs, which
are returned, which are intermediates, and how host arrays are checked.

The buffer declarations, in program order, decide everything; which loads and
stores are present does not, so no rewrite that keeps the declarations can change
a module's interface:

- an **input** is a buffer whose first declaration is `read_only`, `read_write` or
  `uniform`, or that is runtime-sized (`?`) anywhere;
- an **output** is a buffer marked `output`, declared `read_write` anywhere, or
  whose last declaration is writable (`write_only`/`read_write`);
- an **intermediate** is a buffer declared writable that is not an output: a later
  program declares it again, neither marked `output` nor `read_write`.

The signature is a property of the *unfused* module: `run(..., fuse=True)` and
every backend use the same one, so fusion never changes what a caller passes or
gets back.

```python
sig = signature(programs(module))
arrays = sig.bind({"x": np.arange(1024, dtype=np.float32), "y": ...})
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from vyre_xdsl.diagnostics import VyreDiagnostic, VyreError
from vyre_xdsl.dialects.vyre import BufferOp, ProgramOp, programs
from vyre_xdsl.semantics import HOST_DTYPES


class RunInputError(VyreError):
    """A host input that does not match the module's buffers."""


class MissingInputError(RunInputError):
    pass


class UnexpectedInputError(RunInputError):
    pass


class UnknownBufferError(RunInputError):
    pass


class InputDtypeError(RunInputError):
    pass


class InputShapeError(RunInputError):
    pass


class UnsizedBufferError(RunInputError):
    """Kept for callers that catch it: a runtime-sized buffer is now always an input."""


@dataclass(frozen=True)
class BufferSignature:
    """One host-visible buffer of a module, merged over all programs by name."""

    name: str
    element: str  # ui32, si32, f32, i1
    count: int | None  # largest static count; None when runtime-sized anywhere
    min_count: int  # largest static count among all declarations (0 if none)
    requires_input: bool
    is_output: bool
    is_intermediate: bool

    @property
    def host_dtype(self) -> np.dtype:
        return np.dtype(HOST_DTYPES[self.element])


@dataclass(frozen=True)
class RunSignature:
    """The host-visible buffers of a module, in order of first declaration."""

    buffers: tuple[BufferSignature, ...]

    def __getitem__(self, name: str) -> BufferSignature:
        for buffer in self.buffers:
            if buffer.name == name:
                return buffer
        raise KeyError(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.buffers)

    @property
    def inputs(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.buffers if b.requires_input)

    @property
    def outputs(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.buffers if b.is_output)

    def bind(self, inputs: Mapping[str, object]) -> dict[str, np.ndarray]:
        """Check `inputs` and return one host array per buffer (zero-filled where
        the buffer takes no input). Input arrays are not copied: a backend must not
        write into them (the interpreter copies what it mutates; the GPU runtime
        only uploads them)."""
        for name in inputs:
            if name not in self.names:
                raise UnknownBufferError(
                    f"unknown buffer '{name}'; the module's buffers are {', '.join(self.names)}"
                )
        arrays: dict[str, np.ndarray] = {}
        for buffer in self.buffers:
            if buffer.requires_input:
                arrays[buffer.name] = _checked_input(buffer, inputs)
            elif buffer.name in inputs:
                raise UnexpectedInputError(
                    f"buffer '{buffer.name}' takes no input: its first declaration is write_only, "
                    "so it starts zero-filled"
                )
            else:  # a runtime-sized buffer is always an input
                arrays[buffer.name] = np.zeros(buffer.count, dtype=buffer.host_dtype)
        return arrays


def _checked_input(buffer: BufferSignature, inputs: Mapping[str, object]) -> np.ndarray:
    if buffer.name not in inputs:
        raise MissingInputError(
            f"missing input for buffer '{buffer.name}': expected {_describe(buffer)}"
        )
    value = inputs[buffer.name]
    try:
        array = value if isinstance(value, np.ndarray) else np.asarray(value, dtype=buffer.host_dtype)
    except (OverflowError, TypeError, ValueError) as error:
        raise InputDtypeError(
            f"input for buffer '{buffer.name}' cannot be converted to {_describe(buffer)}: {error}"
        ) from None
    if buffer.element == "i1" and array.dtype == np.bool_:
        array = array.astype(np.uint32)
    if array.dtype != buffer.host_dtype:
        raise InputDtypeError(
            f"input for buffer '{buffer.name}' has dtype {array.dtype}; expected {_describe(buffer)}"
        )
    flat = np.ascontiguousarray(array).reshape(-1)
    if buffer.count is not None and flat.size != buffer.count:
        raise InputShapeError(
            f"input for buffer '{buffer.name}' has {flat.size} elements; expected {_describe(buffer)}"
        )
    if buffer.count is None and flat.size < buffer.min_count:
        raise InputShapeError(
            f"input for buffer '{buffer.name}' has {flat.size} elements; another program "
            f"declares it with {buffer.min_count}, so at least that many are needed"
        )
    return flat


def _describe(buffer: BufferSignature) -> str:
    count = "any number of" if buffer.count is None else str(buffer.count)
    kind = "bool or uint32" if buffer.element == "i1" else str(buffer.host_dtype)
    return f"{count} {kind} elements ({buffer.element})"


def signature(module_or_programs: ModuleOp | Sequence[ProgramOp]) -> RunSignature:
    """The run signature of a module (SPEC section 8)."""
    progs = (
        programs(module_or_programs)
        if isinstance(module_or_programs, ModuleOp)
        else list(module_or_programs)
    )
    declarations: dict[str, list[BufferOp]] = {}
    for program in progs:
        for buffer in program.buffers():
            if not buffer.is_workgroup:
                declarations.setdefault(buffer.buffer_name, []).append(buffer)
    _check_consistent(declarations)

    return RunSignature(tuple(_buffer_signature(name, decls) for name, decls in declarations.items()))


#: accesses whose first declaration makes a buffer an input
INPUT_ACCESS = ("read_only", "read_write", "uniform")
#: accesses that let a program write a buffer
WRITABLE_ACCESS = ("write_only", "read_write")


def _buffer_signature(name: str, decls: Sequence[BufferOp]) -> BufferSignature:
    """One host buffer from its declarations in program order (SPEC section 8).

    Only declarations decide: which loads and stores a rewrite leaves behind
    never changes what a caller passes or gets back.
    """
    static = [d.static_count for d in decls if d.static_count is not None]
    runtime_sized = len(static) < len(decls)
    is_output = (
        any(d.is_output for d in decls)
        or any(d.access_mode == "read_write" for d in decls)
        or decls[-1].access_mode in WRITABLE_ACCESS
    )
    writable = any(d.access_mode in WRITABLE_ACCESS for d in decls)
    return BufferSignature(
        name=name,
        element=decls[0].element,
        count=None if runtime_sized else max(static),
        min_count=max(static, default=0),
        requires_input=decls[0].access_mode in INPUT_ACCESS or runtime_sized,
        is_output=is_output,
        is_intermediate=writable and not is_output,
    )


def _check_consistent(declarations: dict[str, list[BufferOp]]) -> None:
    errors = []
    for name, decls in declarations.items():
        first = decls[0]
        for other in decls[1:]:
            if other.element_type != first.element_type:
                errors.append(
                    (other, f"buffer @{name} holds {other.element_type} here but "
                     f"{first.element_type} in an earlier program")
                )
    if errors:
        raise VyreDiagnostic(errors)
