"""`vyre-compile`: plan, fuse, lower and emit a module into a target-module bundle.

```
vyre-compile examples/chain3.mlir -o chain3.vkb       # the bundle (SPEC section 7)
vyre-run chain3.vkb --input x=x.npy                   # runs it, stage by stage, one submit
vyre-compile prog.mlir --plan-dot plan.dot            # the plan as Graphviz DOT only
vyre-compile prog.mlir --plan-dot - | dot -Tsvg > plan.svg
vyre-compile prog.mlir -o prog.vkb --artifact prog.vmk   # also the neutral artifact
```

Without `-o` (and without `--plan-dot`/`--artifact`), the bundle is written to
`<stem>.vkb` in the current directory. Every file is written atomically
(temporary file + rename), and only after everything succeeded: a failed run
leaves no file, partial or otherwise. `-` writes to stdout. Errors go to stderr
(`file:line:col: error: ...` for IR errors, `vyre-compile: error: ...` for the
rest) with exit status 1; an internal error prints one line and exits with 2
(`VYRE_DEBUG=1` shows the traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from vyre_xdsl.diagnostics import VyreDiagnostic
from vyre_xdsl.tools.common import (
    UsageError,
    load_module_text,
    read_source,
    run_reporting_errors,
    write_files_atomically,
)

if TYPE_CHECKING:
    from vyre_xdsl.dialects.vyre import ProgramOp
    from vyre_xdsl.megakernel.compile import TargetCompileError

PROG = "vyre-compile"


def argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Compile a vyre module into a target-module bundle (.vkb)."
    )
    parser.add_argument("file", metavar="FILE", help="module to compile ('-' reads stdin)")
    parser.add_argument("-o", "--output", metavar="OUT.vkb", help="bundle file ('-': stdout)")
    parser.add_argument(
        "--plan-dot", metavar="FILE.dot", help="write the plan as Graphviz DOT ('-': stdout)"
    )
    parser.add_argument(
        "--artifact", metavar="FILE.vmk", help="also write the neutral artifact bytes"
    )
    parser.add_argument(
        "--subgroup-size", type=int, default=0, help="target subgroup size (0: unknown)"
    )
    parser.add_argument(
        "--max-storage-buffers", type=int, default=32, help="storage buffers per shader stage"
    )
    return parser


def load_module(path: str):
    return load_module_text(*read_source(path))


def default_output(path: str) -> str:
    if path == "-":
        raise UsageError("reading stdin: give the bundle file with -o OUT.vkb")
    stem = os.path.splitext(os.path.basename(path))[0]
    return f"{stem}.vkb"


def compile_command(args: argparse.Namespace) -> dict[str, bytes]:
    """The files to write, by path (nothing is written here)."""
    from vyre_xdsl.conversion import memref_shapes
    from vyre_xdsl.dialects.vyre import programs
    from vyre_xdsl.megakernel.artifact import build_artifact
    from vyre_xdsl.megakernel.compile import TargetCompileError, compile_selected_modules
    from vyre_xdsl.megakernel.dot import plan_dot
    from vyre_xdsl.megakernel.envelope import ArtifactEnvelope
    from vyre_xdsl.megakernel.graph import ProgramGraph
    from vyre_xdsl.megakernel.planner import plan
    from vyre_xdsl.target_profile import TargetProfile

    output = args.output
    if output is None and args.plan_dot is None and args.artifact is None:
        output = default_output(args.file)
    if args.subgroup_size < 0 or args.max_storage_buffers < 1:
        raise UsageError("--subgroup-size must be >= 0 and --max-storage-buffers >= 1")
    profile = TargetProfile(
        subgroup_size=args.subgroup_size, max_storage_buffers=args.max_storage_buffers
    )
    module = load_module(args.file)
    graph = ProgramGraph.from_module(module)
    artifact = build_artifact(graph, plan(graph, profile=profile))
    files: dict[str, bytes] = {}
    if args.plan_dot is not None:
        files[args.plan_dot] = plan_dot(artifact).encode()
    if args.artifact is not None:
        files[args.artifact] = artifact.to_bytes()
    if output is not None:
        try:
            payload = compile_selected_modules(artifact, profile, shapes=memref_shapes(module))
        except TargetCompileError as error:
            raise located_compile_error(error, programs(module)) from None
        files[output] = ArtifactEnvelope(artifact).attach_target_payload(payload).bundle_bytes()
    return files


def located_compile_error(error: TargetCompileError, progs: Sequence[ProgramOp]) -> VyreDiagnostic:
    """`error` at the header of the source program it is about: the first member
    of the fusion group it failed on (the module's first program when it names
    no group), naming every member."""
    members = [progs[k] for k in error.nodes if k < len(progs)] or list(progs[:1])
    names = ", ".join(f"@{p.sym_name.data}" for p in members)
    message = f"compiling {names}: {error}" if error.nodes else str(error)
    return VyreDiagnostic([(members[0] if members else None, message)])


def write_files(files: dict[str, bytes]) -> None:

    targets = [p for p in files if p != "-"]
    if len(set(targets)) != len(targets):
        raise UsageError("two outputs name the same file")
    for path in targets:
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise UsageError(f"cannot write {path}: no such directory {directory}")
    try:
        write_files_atomically({p: data for p, data in files.items() if p != "-"})
    except OSError as error:
        raise UsageError(
            f"cannot write {error.filename or 'output'}: {error.strerror or error}"
        ) from None
    if "-" in files:
        sys.stdout.buffer.write(files["-"])
        sys.stdout.flush()


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = argument_parser().parse_args(argv)
    except SystemExit as exit_:  # argparse: usage errors exit 1 like every other bad input
        return 1 if exit_.code == 2 else (exit_.code or 0)
    return run_reporting_errors(PROG, lambda: write_files(compile_command(args)))


if __name__ == "__main__":
    sys.exit(main())
