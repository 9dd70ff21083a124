"""What the three CLIs share: reading a source file into a verified module,
MLIR-style error text, and all-or-nothing file writes."""

from __future__ import annotations

import gc
import os
import sys
import tempfile
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import ParseError

from vyre_xdsl.diagnostics import (
    VyreDiagnostic,
    VyreError,
    format_errors,
    source_lines,
)


class UsageError(VyreError):
    """A bad command line or unreadable input (printed as one `PROG: error:` line)."""


class ReportedError(Exception):
    """An error whose message is already formatted (located diagnostics)."""


#: allocations between two young-generation collections while a tool compiles
COMPILE_GC_THRESHOLD = 100_000


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Collect cyclic garbage less often inside the block (the young generation
    every `COMPILE_GC_THRESHOLD` allocations instead of 700). IR is a great many
    small objects, all in cycles (each op points to its parent), and the default
    thresholds make the collector rescan them over and over: on a 1,500-program
    module about a sixth of the CPU time. The thresholds are restored afterwards."""
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], COMPILE_GC_THRESHOLD), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


def exit_without_collecting(status: int) -> NoReturn:
    """`sys.exit(status)` for a tool's process, after moving every object to the
    collector's permanent generation (`gc.freeze`): the collections CPython runs at
    shutdown then skip xDSL's classes and the IR, tens of thousands of objects in
    cycles (about 40 ms, a sixth of a `vyre-opt` run on a small module). Exit
    handlers still run and the streams are flushed as usual. Only for a process
    that ends here, never for a tool run inside a longer-lived one."""
    gc.freeze()
    sys.exit(status)


def format_parse_error(error: ParseError) -> str:
    """`file:line:col: error: message`, the source line and a caret (MLIR style)."""
    where = error.span.get_location()
    lines = source_lines(error.span.input.content)
    index = where.line - 1 - error.span.line_offset
    line = lines[index] if 0 <= index < len(lines) else ""
    width = max(1, min(len(error.span), len(line) - where.col + 1))
    return f"{where.file}:{where.line}:{where.col}: error: {error.msg}\n{line}\n{' ' * (where.col - 1)}{'^' * width}"


def read_source(path: str) -> tuple[str, str]:
    """(text, display name) of FILE; '-' reads stdin."""
    from vyre_xdsl.context import decode_source

    name = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except OSError as error:
        raise UsageError(f"cannot read {name}: {error.strerror or error}") from None
    try:
        return decode_source(data, name), name
    except ParseError as error:  # invalid UTF-8, located
        raise ReportedError(format_parse_error(error)) from None


def load_module_text(text: str, name: str) -> ModuleOp:
    """Parse, convert and check (`frontend.load`: verified, runnable); errors
    become a `ReportedError` with located text."""
    from vyre_xdsl.context import parse_module
    from vyre_xdsl.frontend import load

    try:
        module = load(parse_module(text, name), name, own=True)
    except ParseError as error:
        raise ReportedError(format_parse_error(error)) from None
    except VyreDiagnostic as error:
        raise ReportedError(format_errors(error.errors, text)) from None
    return module


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class OutputFileError(UsageError):
    """An output file that cannot be written (nothing of the command's output is left behind)."""


def _check_target(path: str) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise OutputFileError(f"cannot write {path}: it is a directory")
    if not os.path.isdir(directory):
        raise OutputFileError(f"cannot write {path}: no such directory {directory}")


def write_files_atomically(files: Mapping[str, bytes | str]) -> None:
    """Write every file or none (raises `OutputFileError`, leaving no file
    changed). Each file goes to a temporary file of its own, with a unique name,
    beside its target (with the usual permissions); once all were written,
    `os.replace` renames each into place, so the path always holds a complete
    file, the old one or the new one, and never goes missing. Before a file is
    replaced, a hard link (or a copy) keeps its old content, so that a failed
    rename can put back what the earlier ones replaced. Several files are not
    replaced at one instant: a reader may see some new files beside old ones
    while the renames run. A target that exists and is not a regular file
    (`/dev/null`, a FIFO, `/dev/stdout`) is written in place after the renames:
    renaming over it would replace the device with a file."""
    for path in files:
        _check_target(path)
    special = {path: data for path, data in files.items() if _is_special(path)}
    staged: list[tuple[str, str]] = []
    committed: list[tuple[str, str | None]] = []  # (path, backup of what it replaced)
    current = ""
    try:
        for path, data in files.items():
            if path in special:
                continue
            current = path
            fd, tmp = tempfile.mkstemp(
                dir=os.path.dirname(os.path.abspath(path)), prefix=".vyre-", suffix=".tmp"
            )
            staged.append((tmp, path))
            with os.fdopen(fd, "wb" if isinstance(data, bytes) else "w") as f:
                f.write(data)
            os.chmod(tmp, 0o666 & ~_umask())
        for tmp, path in staged:
            current = path
            backup = _backup_of(path)
            committed.append((path, backup))
            os.replace(tmp, path)
        for path, data in special.items():
            current = path
            with open(path, "wb" if isinstance(data, bytes) else "w") as f:
                f.write(data)
    except OSError as error:
        _roll_back(committed)
        raise OutputFileError(f"cannot write {current}: {error.strerror or error}") from None
    finally:
        for tmp, _ in staged:
            _remove_if_present(tmp)
    for _, backup in committed:
        if backup is not None:
            _remove_if_present(backup)


def _is_special(path: str) -> bool:
    """Whether `path` exists and is something other than a regular file."""
    import stat

    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _backup_of(path: str) -> str | None:
    """A new name beside `path` that holds what `path` holds now (a hard link,
    or a copy where links are not allowed), leaving `path` in place; None when
    there is no `path`."""
    import shutil

    if not os.path.lexists(path):
        return None
    backup = os.path.join(os.path.dirname(os.path.abspath(path)), f".vyre-{uuid.uuid4().hex}.old")
    try:
        os.link(path, backup, follow_symlinks=False)
    except FileNotFoundError:  # another writer's rename: nothing to keep
        return None
    except OSError:
        try:
            shutil.copy2(path, backup, follow_symlinks=False)
        except FileNotFoundError:
            return None
    return backup


def _remove_if_present(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _roll_back(committed: list[tuple[str, str | None]]) -> None:
    for path, backup in reversed(committed):
        try:
            if backup is not None:
                os.replace(backup, path)
            elif os.path.lexists(path):
                os.unlink(path)
        except OSError:  # pragma: no cover - best effort; the original error is reported
            pass


def write_atomically(path: str, data: str | bytes) -> None:
    """Write `data` to `path` via a temporary file and a rename: never a partial file."""
    write_files_atomically({path: data})


def run_reporting_errors(prog: str, command) -> int:
    """Run `command()` and turn every error into a message and an exit status:
    1 for anything the user caused (located diagnostics, bad input), 2 for a bug
    (one line; `VYRE_DEBUG=1` shows the traceback). Never a traceback otherwise.
    A reader that goes away (`| head`) never turns a failure into success."""
    try:
        command()
    except ReportedError as error:
        return say_error(str(error), 1)
    except VyreDiagnostic as error:
        return say_error(format_errors(error.errors), 1)
    except VyreError as error:
        return say_error(f"{prog}: error: {error}", 1)
    except BrokenPipeError:
        silence_closed_streams()
        return 0
    except Exception as error:  # a bug: say so, without a traceback unless asked
        if os.environ.get("VYRE_DEBUG"):
            raise
        return say_error(
            f"{prog}: internal error: {type(error).__name__}: {error} (set VYRE_DEBUG=1 for a traceback)",
            2,
        )
    return 0


def say_error(text: str, status: int) -> int:
    """Print `text` to stderr (even when nobody reads it any more) and return `status`."""
    try:
        print(text, file=sys.stderr)
    except BrokenPipeError:
        silence_closed_streams()
    return status


def silence_closed_streams() -> None:
    """Point stdout and stderr at /dev/null, so that flushing them at exit cannot fail
    again after the reader of a pipe went away (Python's advice for SIGPIPE)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(devnull, stream.fileno())
        except (OSError, ValueError):
            pass
