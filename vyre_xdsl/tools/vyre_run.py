"""`vyre-run`: run a vyre module on host arrays and show or save its outputs.

```
vyre-run examples/axpy.mlir --input x=x.npy --input y=y.npy
vyre-run examples/axpy.mlir --random-inputs 0 --backend reference
vyre-run prog.mlir --input x=x.npy --output-dir out/      # writes out/NAME.npy per output
cat prog.mlir | vyre-run - --random-inputs 1
vyre-run prog.mlir --random-inputs 0 -v --time         # adapter, GPU time per kernel (stderr)
vyre-run prog.mlir --random-inputs 0 --adapter llvmpipe
```

Without `--output-dir` each output buffer is printed as one line,
`NAME: DTYPE[COUNT] = [v0, v1, ...]`, with the values when there are at most 16.
With it, `DIR/NAME.npy` is written for every output, all or none. Bad input
(unreadable or ill-typed IR, a missing, unknown or mis-shaped input, a trap)
gives `vyre-run: error: ...` (or `file:line:col: error: ...`) on stderr and exit
status 1, with no traceback and no output file.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import os
import sys
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from vyre_xdsl.abi import RunSignature, signature
from vyre_xdsl.api import BACKENDS, backend_named, cached_executable, default_backend
from vyre_xdsl.conversion import memref_shapes
from vyre_xdsl.runtime.backend import Backend
from vyre_xdsl.semantics import ELEMENTS, PACKED_TYPES
from vyre_xdsl.tools.common import (
    UsageError,
    load_module_text,
    read_source,
    run_reporting_errors,
    write_files_atomically,
)

PROG = "vyre-run"
MAX_PRINTED = 16
DEFAULT_RUNTIME_COUNT = 1024


# ---------------------------------------------------------------------- loading


def load_runnable(path: str) -> ModuleOp:
    """The verified module that FILE holds ('-' reads stdin).

    This is the one place that knows file formats: bundle (`.vkb`) support
    belongs here.
    """
    return load_module_text(*read_source(path))


def parse_input_spec(spec: str) -> tuple[str, str]:
    name, sep, path = spec.partition("=")
    if not sep or not name or not path:
        raise UsageError(f"--input expects NAME=FILE.npy, got '{spec}'")
    return name, path


def load_inputs(specs: Sequence[str]) -> dict[str, np.ndarray]:
    inputs: dict[str, np.ndarray] = {}
    for spec in specs:
        name, path = parse_input_spec(spec)
        if name in inputs:
            raise UsageError(f"--input gives buffer '{name}' twice")
        inputs[name] = load_npy(name, path)
    return inputs


def load_npy(name: str, path: str) -> np.ndarray:
    """The array in FILE.npy, after checking that its header agrees with the
    file's size (an empty file, a truncated one, or a header that claims more
    elements than the file holds is an error, never an allocation)."""
    where = f"input for buffer '{name}'"
    try:
        with open(path, "rb") as f:
            _check_npy_header(f, where, path)
            f.seek(0)
            array = np.load(f, allow_pickle=False)
    except OSError as error:
        raise UsageError(f"cannot read {where} from {path}: {error.strerror or error}") from None
    except (ValueError, EOFError) as error:
        raise UsageError(
            f"{where}: {path} is not a valid .npy array ({error or 'empty file'})"
        ) from None
    if not isinstance(array, np.ndarray):
        raise UsageError(f"{where}: {path} holds several arrays (.npz); give one .npy array")
    return array


def _check_npy_header(f, where: str, path: str) -> None:
    from numpy.lib import format as npy

    try:
        version = npy.read_magic(f)
        read = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        shape, _, dtype = read(f)
    except (ValueError, EOFError) as error:
        raise UsageError(
            f"{where}: {path} is not a valid .npy array ({error or 'empty file'})"
        ) from None
    if dtype.hasobject:
        raise UsageError(f"{where}: {path} holds Python objects; give an array of numbers")
    count = int(np.prod(shape, dtype=object))
    needed = count * dtype.itemsize
    held = os.fstat(f.fileno()).st_size - f.tell()
    if needed != held:
        raise UsageError(
            f"{where}: {path} is truncated or corrupt: its header claims shape {tuple(shape)} of {dtype} "
            f"({needed} bytes) but the file holds {held} bytes of data"
        )


def random_inputs(
    sig: RunSignature,
    seed: int,
    given: dict[str, np.ndarray],
    shapes: dict[str, tuple[int, ...]] | None = None,
) -> dict[str, np.ndarray]:
    """Deterministic random data for every required input not given explicitly.

    Unsigned integers in [0, 1024), signed ones in [1, 1024) (never a zero divisor
    nor the minimum; both capped at the type's maximum), floats in [-1, 1), i1 as
    0/1 words. A runtime-sized buffer gets the largest
    static count other programs declare for it, else 1024 elements; for a memref
    of standard MLIR (`shapes`, by buffer name) that count rounded down to whole
    rows of its static dimensions (and whole 32-bit words of 8/16-bit elements),
    at least one.
    """
    rng = np.random.default_rng(seed)
    filled = dict(given)
    for name in sig.inputs:
        if name in filled:
            continue
        buffer = sig[name]
        count = (
            buffer.count
            if buffer.count is not None
            else (buffer.min_count or DEFAULT_RUNTIME_COUNT)
        )
        shape = (shapes or {}).get(name)
        if buffer.count is None and shape is not None and -1 in shape:
            unit = math.prod(d for d in shape if d >= 0)
            if buffer.element in PACKED_TYPES:
                unit = math.lcm(unit, 4 // ELEMENTS[buffer.element].storage_bytes)
            count = max(unit, count // unit * unit)
        filled[name] = _random_array(rng, buffer.element, count, buffer.host_dtype)
    return filled


def _random_array(rng, element: str, count: int, dtype: np.dtype) -> np.ndarray:
    info = ELEMENTS[element]
    lanes = count * info.lanes
    lane = ELEMENTS[info.lane] if info.lane is not None else info
    if info.family == "vector":  # an (n, lanes) array of the lane type
        return _random_array(rng, lane.name, lanes, lane.host).reshape(count, info.lanes)
    if lane.is_float:
        return rng.uniform(-1.0, 1.0, lanes).astype(dtype)
    if lane.family == "bool":
        return rng.integers(0, 2, lanes, dtype=np.uint32)
    low = 1 if lane.is_signed else 0
    return rng.integers(low, min(1024, lane.int_range[1] + 1), lanes, dtype=dtype)


def check_backend(name: str) -> Backend:
    """The backend `name` names (`api.backend_named`), or a usage error."""
    if name not in BACKENDS:
        raise UsageError(f"unknown backend '{name}'; choose from {', '.join(BACKENDS)}")
    try:
        return backend_named(name)
    except (ImportError, AttributeError) as error:
        raise UsageError(f"backend '{name}' is not available here ({error})") from None


# ---------------------------------------------------------------------- output


def format_output(name: str, array: np.ndarray) -> str:
    head = f"{name}: {array.dtype}[{array.size}]"
    if array.size > MAX_PRINTED:
        first = ", ".join(str(v) for v in array.reshape(-1)[:4])
        return f"{head} = [{first}, ...] ({array.size} values; --output-dir DIR saves them)"
    return f"{head} = [{', '.join(str(v) for v in array.reshape(-1))}]"


def write_outputs(directory: str, outputs: dict[str, np.ndarray]) -> None:
    """Write DIR/NAME.npy for every output: all files appear, or none (and a
    directory created for them is removed again)."""
    created = not os.path.isdir(directory)
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as error:
        raise UsageError(
            f"cannot create output directory {directory}: {error.strerror or error}"
        ) from None
    files = {}
    for name, array in outputs.items():
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        files[os.path.join(directory, f"{name}.npy")] = buffer.getvalue()
    try:
        write_files_atomically(files)
    except UsageError:
        if created:
            with contextlib.suppress(OSError):
                os.rmdir(directory)
        raise


# ---------------------------------------------------------------------- main


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Run a vyre module and show or save its outputs."
    )
    parser.add_argument("file", metavar="FILE", help="module to run ('-' reads stdin)")
    parser.add_argument(
        "--input",
        metavar="NAME=FILE.npy",
        action="append",
        default=[],
        help="host array for buffer NAME (repeatable)",
    )
    parser.add_argument(
        "--backend", help="reference or wgpu (default: wgpu when an adapter exists)"
    )
    parser.add_argument("--fuse", action="store_true", help="fuse the programs first (vyre-fuse)")
    parser.add_argument(
        "--output-dir", metavar="DIR", help="write DIR/NAME.npy per output instead of printing"
    )
    parser.add_argument(
        "--random-inputs",
        metavar="SEED",
        type=int,
        help="fill every input not given with --input with deterministic random data",
    )
    parser.add_argument(
        "--adapter",
        metavar="INDEX|NAME",
        help="wgpu adapter: an index or a substring of its description "
        "(default: VYRE_ADAPTER, else the best adapter)",
    )
    parser.add_argument(
        "--time",
        action="store_true",
        help="print the GPU time of every kernel (timestamp queries) on stderr",
    )
    parser.add_argument(
        "--max-iterations",
        metavar="N",
        type=int,
        help="reference backend: refuse the run once its loops would run more than N "
        "iterations in all, summed over the invocations that run them (for modules "
        "that may not end)",
    )
    parser.add_argument(
        "--repeat",
        metavar="N",
        type=int,
        default=1,
        help="run the module's programs N times in order on the same buffers (one "
        "submission on a GPU; vyre.repetition is the repetition, 0 .. N-1) and show "
        "the outputs after the last",
    )
    parser.add_argument(
        "--grid",
        metavar="[NAME=]GX,GY,GZ",
        action="append",
        help="launch the program on this explicit grid (workgroups per axis); with several "
        "programs, name each one: --grid NAME=GX,GY,GZ (repeatable)",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="print the backend and the adapter in use on stderr",
    )
    return parser


def run_module(
    module: ModuleOp, inputs: dict[str, np.ndarray], backend: str, args
) -> dict[str, np.ndarray]:
    """Run through `run()`'s executable cache, reporting the adapter (-v) and
    the GPU time per kernel (--time) on stderr."""
    grid = grid_option(getattr(args, "grid", None))
    if grid is not None:
        # applied before compiling, as `vyre_xdsl.run(..., grid=)` does: the
        # derived grid that --grid replaces may be one a GPU compile refuses
        from vyre_xdsl.launch import grid_overrides, with_grids

        try:
            module = with_grids(module, grid_overrides(module, grid))
        except ValueError as error:
            raise UsageError(f"--grid: {error}") from None
    exe = cached_executable(module, backend, args.fuse, args.adapter)
    report_backend(backend, exe.adapter, args.verbose)
    outputs = exe.run(
        inputs,
        profile=args.time,
        max_iterations=args.max_iterations,
        repeat=args.repeat,
    )
    if args.time:
        print(exe.last_profile, file=sys.stderr)
    return outputs


def grid_option(values: list[str] | None):
    """`--grid GX,GY,GZ` as a tuple, or `--grid NAME=GX,GY,GZ ...` as a mapping."""
    if not values:
        return None
    named: dict[str, tuple[int, ...]] = {}
    plain = None
    for value in values:
        name, _, axes = value.rpartition("=")
        try:
            grid = tuple(int(a) for a in axes.split(","))
        except ValueError:
            raise UsageError(
                f"--grid {value!r}: expected GX,GY,GZ or NAME=GX,GY,GZ (integers)"
            ) from None
        if name:
            named[name] = grid
        else:
            plain = grid
    if plain is not None and (named or len(values) > 1):
        raise UsageError("--grid: name every program (NAME=GX,GY,GZ) when giving several grids")
    return plain if plain is not None else named


def report_backend(backend: str, adapter: str | None, verbose: bool) -> None:
    if not verbose:
        return
    where = f"adapter {adapter}" if adapter else "the reference interpreter"
    print(f"{PROG}: backend {backend} on {where}", file=sys.stderr)


def run_bundle_file(
    path: str,
    inputs: dict[str, np.ndarray],
    backend: str | None,
    random_seed: int | None,
    fuse: bool = False,
    max_iterations: int | None = None,
    repeat: int = 1,
) -> dict[str, np.ndarray]:
    """`vyre-run OUT.vkb ...`: load and check the bundle, fill random inputs, run it
    (on `backend`, else on the default one)."""
    from vyre_xdsl.megakernel.run import BundleFileError, load_bundle, run_bundle

    if fuse:
        raise BundleFileError(
            "--fuse does not apply to a bundle: vyre-compile already planned and fused it"
        )
    bundle = load_bundle(path)
    if random_seed is not None:
        inputs = random_inputs(bundle.run_signature(), random_seed, inputs, bundle.shapes)
    backend = backend or default_backend()
    return run_bundle(bundle, inputs, backend=backend, max_iterations=max_iterations, repeat=repeat)


def execute_command(args: argparse.Namespace) -> None:
    # the default backend looks for a GPU adapter (starting wgpu and Vulkan: about
    # 0.3 s), so unless --max-iterations depends on it, it is chosen once the input
    # has been read and checked: bad input is reported without that wait
    backend = args.backend
    if backend is None and args.max_iterations is not None:
        backend = default_backend()
    if backend is not None:
        chosen = check_backend(backend)
        if args.max_iterations is not None and not chosen.counts_iterations:
            raise UsageError("--max-iterations applies to the reference backend")
    if args.max_iterations is not None and args.max_iterations < 0:
        raise UsageError(f"--max-iterations is {args.max_iterations}; it must be 0 or more")
    if args.repeat < 1:
        raise UsageError(f"--repeat is {args.repeat}; it must be 1 or more")
    run_command(args, backend)


def run_command(args: argparse.Namespace, backend: str | None) -> None:
    """Run the module or bundle of `args` on `backend` (None: the default backend,
    chosen once the input has been read)."""
    from vyre_xdsl.megakernel.run import is_bundle_file

    if is_bundle_file(args.file):  # a target-module bundle from vyre-compile
        if args.time or args.adapter is not None:
            raise UsageError("--time and --adapter apply to modules, not to bundles")
        if args.grid:
            raise UsageError(
                "--grid applies to modules, not to bundles: write 'grid [GX, GY, GZ]' in the "
                "program and compile it again (the bundle carries it)"
            )
        if args.verbose:
            backend = backend or default_backend()
            report_backend(backend, check_backend(backend).adapter(), True)
        outputs = run_bundle_file(
            args.file,
            load_inputs(args.input),
            backend,
            args.random_inputs,
            args.fuse,
            args.max_iterations,
            args.repeat,
        )
    else:
        module = load_runnable(args.file)
        inputs = load_inputs(args.input)
        sig = signature(module)
        if args.random_inputs is not None:
            inputs = random_inputs(sig, args.random_inputs, inputs, memref_shapes(module))
        outputs = run_module(module, inputs, backend or default_backend(), args)
    if args.output_dir is not None:
        write_outputs(args.output_dir, outputs)
        return
    for name, array in outputs.items():
        print(format_output(name, array))


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = argument_parser().parse_args(argv)
    except SystemExit as exit_:  # argparse: usage errors exit 1 like every other bad input
        return 1 if exit_.code == 2 else (exit_.code or 0)
    return run_reporting_errors(PROG, lambda: execute_command(args))


if __name__ == "__main__":
    sys.exit(main())
