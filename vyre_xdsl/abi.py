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

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from vyre_xdsl.diagnostics import VyreDiagnostic, VyreError
from vyre_xdsl.dialects.vyre import BufferOp, ProgramOp, programs
from vyre_xdsl.semantics import (
    ELEMENTS,
    HOST_DTYPES,
    PACKED_TYPES,
    to_float,
    vector_lanes,
    vector_records,
)


class RunInputError(VyreError, ValueError):
    """A host input that does not match the module's buffers (also a `ValueError`,
    or a `TypeError` for a value of the wrong kind, as numpy users expect)."""


class InputTypeError(RunInputError, TypeError):
    """`inputs` is not a mapping, or a value is not array-like numbers."""


class MissingInputError(RunInputError):
    pass


class UnexpectedInputError(RunInputError):
    pass


class UnknownBufferError(RunInputError):
    pass


class InputDtypeError(RunInputError, TypeError):
    pass


class LossyInputError(RunInputError):
    """Converting the given values to the buffer's element type would change one."""


class InputShapeError(RunInputError):
    pass


class HostMemoryError(RunInputError):
    """A buffer larger than the host memory cap (`MAX_HOST_BUFFER_BYTES`)."""


#: The largest host buffer a run allocates or accepts (bytes); a zero-filled
#: buffer or input past it is refused before any memory is allocated.
MAX_HOST_BUFFER_BYTES = 1 << 31


@dataclass(frozen=True)
class BufferSignature:
    """One host-visible buffer of a module, merged over all programs by name."""

    name: str
    element: str  # an IR element type name (`semantics.ELEMENTS`)
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
        """Check `inputs` and return one flat host array per buffer (zero-filled
        where the buffer takes no input). Input arrays are not copied: a backend
        must not write into them (the interpreter copies what it mutates; the GPU
        runtime only uploads them)."""
        require_mapping(inputs)
        for name in inputs:
            if name not in self.names:
                raise UnknownBufferError(
                    f"unknown buffer {short_repr(name)}; the module's buffers are {', '.join(self.names)}"
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
                _check_host_bytes(buffer, buffer.count)
                arrays[buffer.name] = np.zeros(buffer.count, dtype=buffer.host_dtype)
        return arrays

    def outputs_of(
        self, final: Mapping[str, np.ndarray], inputs: Mapping[str, object] | None
    ) -> dict[str, np.ndarray]:
        """The host view of every output (the shape rule): an output whose buffer
        was given as an input comes back in that input's shape, every other one
        1-D; an `i1` output comes back as `bool`."""
        given = inputs or {}
        result = {}
        for name in self.outputs:
            array = np.asarray(final[name]).reshape(-1)
            if self[name].element == "i1":
                array = array != 0
            if array.dtype.names is not None:  # vectors: (n, lanes) of the lane type
                array = vector_lanes(array)
                shape = _shape_of(given[name]) if name in given else None
                if shape is not None and int(np.prod(shape)) == array.size:
                    array = array.reshape(shape)
                result[name] = array
                continue
            shape = _shape_of(given[name]) if name in given else None
            if shape is not None and int(np.prod(shape)) == array.size:
                array = array.reshape(shape)
            result[name] = array
        return result


def require_mapping(inputs: object) -> Mapping[str, object]:
    """`inputs` itself when it is a mapping; else an `InputTypeError`."""
    if not isinstance(inputs, Mapping):
        raise InputTypeError(
            f"inputs must be a mapping from buffer name to array, not {type(inputs).__name__}"
        )
    return inputs


def _shape_of(value: object) -> tuple[int, ...] | None:
    shape = getattr(value, "shape", None)
    if shape is not None:
        return tuple(shape)
    try:
        return np.shape(value)
    except ValueError:
        return None


#: The longest repr of a user value quoted in an error message.
MAX_REPR = 60


def short_repr(value: object) -> str:
    """`repr(value)`, cut to `MAX_REPR` characters (a 4 KB bytes object must not
    fill an error message)."""
    text = repr(value)
    return text if len(text) <= MAX_REPR else text[: MAX_REPR - 1] + "…"


def _check_host_bytes(buffer: BufferSignature, count: int) -> None:
    nbytes = count * buffer.host_dtype.itemsize
    if nbytes > MAX_HOST_BUFFER_BYTES:
        raise HostMemoryError(
            f"buffer '{buffer.name}' needs {nbytes} bytes ({count} elements); a run allocates at most "
            f"{MAX_HOST_BUFFER_BYTES} bytes per host buffer; partition the data"
        )


def _checked_input(buffer: BufferSignature, inputs: Mapping[str, object]) -> np.ndarray:
    if buffer.name not in inputs:
        raise MissingInputError(
            f"missing input for buffer '{buffer.name}': expected {_describe(buffer)}"
        )
    array = _host_array(buffer, inputs[buffer.name])
    flat = np.ascontiguousarray(array).reshape(-1)
    if buffer.count is not None and flat.size != buffer.count:
        raise InputShapeError(
            f"input for buffer '{buffer.name}' has {flat.size} elements; "
            f"expected {_describe(buffer)} (any shape of that size)"
        )
    if buffer.count is None and flat.size < buffer.min_count:
        raise InputShapeError(
            f"input for buffer '{buffer.name}' has {flat.size} elements; another program "
            f"declares it with {buffer.min_count}, so at least that many are needed"
        )
    if buffer.count is None and flat.size == 0:
        raise InputShapeError(
            f"input for runtime-sized buffer '{buffer.name}' is empty; every backend needs at least "
            "one element (a GPU cannot bind an empty buffer)"
        )
    _check_host_bytes(buffer, flat.size)
    return _padded_to_words(buffer, flat)


def _padded_to_words(buffer: BufferSignature, flat: np.ndarray) -> np.ndarray:
    """A runtime-sized buffer of 8/16-bit integers holds whole 32-bit words (upstream
    vyre's rule): its input is padded with zeros to a whole number of words, so
    every backend sees the same elements and `vyre.buf_len` is that capacity."""
    if buffer.count is not None or buffer.element not in PACKED_TYPES:
        return flat
    per_word = 4 // ELEMENTS[buffer.element].storage_bytes
    spare = -flat.size % per_word
    if not spare:
        return flat
    return np.concatenate([flat, np.zeros(spare, dtype=flat.dtype)])


def _host_array(buffer: BufferSignature, value: object) -> np.ndarray:
    """`value` as an array of the buffer's host dtype; refuses a conversion that
    would change a value (see `_converted`)."""
    where = f"input for buffer '{buffer.name}'"
    if ELEMENTS[buffer.element].family == "vector":
        return _vector_records(buffer, value, where)
    if isinstance(value, np.ndarray):
        if buffer.element == "i1" and value.dtype == np.bool_:
            return value.astype(np.uint32)
        if value.dtype == np.dtype("V2") and buffer.element == "bf16":
            return value.view(buffer.host_dtype)  # a bfloat16 array saved by numpy as .npy
        if value.dtype != buffer.host_dtype:
            raise InputDtypeError(f"{where} has dtype {value.dtype}; expected {_describe(buffer)}")
        return value
    if isinstance(value, str | bytes | bytearray | memoryview):
        raise InputTypeError(
            f"{where} is {type(value).__name__} {short_repr(value)}; expected an array or a list of numbers"
        )
    try:
        source = np.asarray(value)
    except (OverflowError, TypeError, ValueError) as error:
        raise InputTypeError(f"{where} is not array-like ({short_repr(str(error))})") from None
    if source.dtype.kind not in "biuf":
        raise InputTypeError(
            f"{where} holds {type(value).__name__} {short_repr(value)}, which is not all numbers "
            f"(numpy reads it as {source.dtype}); expected {_describe(buffer)}"
        )
    return _converted(buffer, source, where)


def _vector_records(buffer: BufferSignature, value: object, where: str) -> np.ndarray:
    """A vector buffer's input: an array of the lane type whose last axis (or whole
    length) holds whole vectors, e.g. `(n, 4)` float32 for `vector<4xf32>[n]`, as
    one record per vector."""
    info = ELEMENTS[buffer.element]
    record = buffer.host_dtype
    if isinstance(value, np.ndarray) and value.dtype == record:
        return value
    lane = ELEMENTS[info.lane]
    lanes = _host_array(BufferSignature(buffer.name, info.lane, None, 0, True, False, False), value)
    if lanes.dtype != lane.host:
        raise InputDtypeError(f"{where} has dtype {lanes.dtype}; expected {_describe(buffer)}")
    flat = np.ascontiguousarray(lanes).reshape(-1)
    if flat.size % info.lanes:
        raise InputShapeError(
            f"{where} has {flat.size} {info.lane} values, not a whole number of "
            f"{info.name} vectors ({info.lanes} lanes each); expected {_describe(buffer)}"
        )
    return vector_records(flat.reshape(-1, info.lanes), record)


def _converted(buffer: BufferSignature, source: np.ndarray, where: str) -> np.ndarray:
    """Python numbers to the buffer's dtype, only when no value changes: integers
    and bools in range, floats that are whole and in range for ui32/si32 and i1
    (an i1 word: non-zero is true); for a float type, a float rounds to the nearest value
    of the type (as `np.float32` does) but must not overflow to infinity."""
    dtype = buffer.host_dtype
    info = ELEMENTS[buffer.element]
    lane = ELEMENTS[info.lane] if info.lane is not None else info
    with np.errstate(all="ignore"):
        if lane.is_float:
            converted = to_float(source, dtype)
            if source.dtype.kind == "f":
                changed = np.isfinite(source) & ~np.isfinite(converted)
            else:
                changed = converted.astype(np.float64) != source.astype(np.float64)
                converted = np.where(changed, 0, converted).astype(dtype)
        else:
            low, high = np.iinfo(dtype).min, np.iinfo(dtype).max
            wide = source.astype(np.float64) if source.dtype.kind == "f" else source
            changed = ~((wide >= low) & (wide <= high))
            if source.dtype.kind == "f":
                changed |= ~np.isfinite(wide)
                changed |= np.isfinite(wide) & (np.floor(wide) != wide)
            converted = np.where(changed, 0, source).astype(dtype)
    if np.any(changed):
        index = int(np.flatnonzero(np.asarray(changed).reshape(-1))[0])
        bad = source.reshape(-1)[index].item()
        raise LossyInputError(
            f"{where}: element {index} ({bad!r}) is not exactly representable as {buffer.element}; "
            f"pass a numpy array of dtype {dtype} to convert explicitly"
        )
    return converted


def _describe(buffer: BufferSignature) -> str:
    count = "any number of" if buffer.count is None else str(buffer.count)
    kind = "bool or uint32" if buffer.element == "i1" else str(buffer.host_dtype)
    info = ELEMENTS[buffer.element]
    if info.family == "vector":
        lane = ELEMENTS[info.lane].host
        return f"{count} vectors of {info.lanes} {lane} lanes (an (n, {info.lanes}) {lane} array; {buffer.element})"
    return f"{count} {kind} elements ({buffer.element})"


def buffer_accesses(program: ProgramOp) -> tuple[set[str], set[str]]:
    """(read, written) buffer names of one program's body. Deprecated (it
    warns; to be removed in the next release): use
    `vyre_xdsl.analysis.buffers_read_and_written`, which this calls."""
    from vyre_xdsl.analysis import buffers_read_and_written

    warnings.warn(
        "vyre_xdsl.abi.buffer_accesses is deprecated and will be removed in the next "
        "release; use vyre_xdsl.analysis.buffers_read_and_written",
        DeprecationWarning,
        stacklevel=2,
    )
    return buffers_read_and_written(program)


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
            # scratch (grid_sync spills) is per-invocation device memory, never the host's
            if not (buffer.is_workgroup or buffer.is_scratch):
                declarations.setdefault(buffer.buffer_name, []).append(buffer)
    _check_consistent(declarations)

    return RunSignature(
        tuple(_buffer_signature(name, decls) for name, decls in declarations.items())
    )


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
                    (
                        other,
                        f"buffer @{name} holds {other.element_type} here but "
                        f"{first.element_type} in an earlier program",
                    )
                )
    if errors:
        raise VyreDiagnostic(errors)
