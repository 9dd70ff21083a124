"""Located diagnostics: every error names the op and its `file:line:col`.

Verifiers raise xDSL's `VerifyException` from the offending op's `verify_`;
passes raise :class:`VyreDiagnostic` naming the op(s). The CLIs format both the
same way MLIR does:

```
in.mlir:7:3: error: store to read_only buffer @x
  vyre.store @x[%i] = %v : f32
  ^
```
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from xdsl.dialects.builtin import FileLineColLoc, ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from vyre_xdsl.dialects.verify import LocatedVerifyException, forward_reference_errors

_PREFIX = "Operation does not verify: "


class VyreError(Exception):
    """Base class of every user-facing vyre_xdsl error."""


class VyreDiagnostic(DiagnosticException, VyreError):
    """One or more errors, each attached to an op.

    ```python
    raise VyreDiagnostic([(op, "cannot fuse ...")])
    ```


    `str()` of it is one line per error, each starting with its op's
    `file:line:col` when the op has one.
    """

    def __init__(self, errors: Sequence[tuple[Operation | None, str]]):
        self.errors = list(errors)
        super().__init__("\n".join(located_message(op, message) for op, message in self.errors))

    def __reduce__(self):
        # pickled (to another process) as its located messages: ops do not travel
        errors = [(None, located_message(op, message)) for op, message in self.errors]
        return (type(self), (errors,))


def unlocated_text(error: Exception) -> str:
    """`str(error)` without the locations a `VyreDiagnostic` starts its lines
    with: for records that must not depend on where the source file is."""
    if isinstance(error, VyreDiagnostic):
        return "\n".join(message for _, message in error.errors)
    return str(error)


def located_message(op: Operation | None, message: str) -> str:
    """`file:line:col: message` at `op`'s location, or `message` when it has none."""
    where = Located(op, message).location()
    if where is None:
        return message
    file, line, col = where
    return f"{file}:{line}:{col}: {message}"


@dataclass(frozen=True)
class Located:
    op: Operation | None
    message: str

    def location(self) -> tuple[str, int, int] | None:
        """The op's `file:line:col`; for an op made by a pass (a fused program's
        buffer declarations), the nearest enclosing op's (its program's header)."""
        op = self.op
        while op is not None:
            loc = op.location
            if isinstance(loc, FileLineColLoc):
                return loc.filename.data, loc.line.data, loc.column.data
            op = op.parent_op()
        return None


_LOCATION = re.compile(r"[^\n:]+:\d+:\d+(?=[:\n]|$)")


def unlocated_errors(error: VyreDiagnostic) -> list[str]:
    """The messages of `error` that name no `file:line:col`: neither their op
    (or an op around it) has one nor does their text start with one."""
    return [
        message
        for op, message in error.errors
        if Located(op, message).location() is None and not _LOCATION.match(message)
    ]


def clean_message(error: Exception) -> str:
    message = str(error.args[0]) if error.args else str(error)
    while message.startswith(_PREFIX):
        message = message[len(_PREFIX) :]
    return message


def verification_errors(module: ModuleOp) -> list[Located]:
    """Every op of `module` that fails verification, innermost first, with its message."""
    errors: list[Located] = []
    for op in module.walk(reverse=False):
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as error:
            errors.append(Located(op, clean_message(error)))
        except Exception as error:
            if op.name.split(".")[0] in OWN_DIALECTS:
                raise  # a verifier of ours must raise VerifyException: a bug
            # some stock xDSL verifiers raise a bare Exception on bad input
            # (memref.store with too few indices): still the input's error
            errors.append(Located(op, clean_message(error)))
    return errors


#: the dialects whose verifiers this project writes
OWN_DIALECTS = ("vyre", "kernel")


def verify_module(module: ModuleOp) -> None:
    """Verify `module`; on failure raise a :class:`VyreDiagnostic` naming every bad op."""
    unresolved = forward_reference_errors(module)
    if unresolved:
        raise VyreDiagnostic(unresolved)
    duplicates = duplicate_symbol_errors(module)
    if duplicates:
        raise VyreDiagnostic(duplicates)
    try:
        module.verify()
    except LocatedVerifyException as error:
        # a whole-body check (nesting, foreign ops, dominance) failed: the ops
        # inside must not be verified one by one (their verifiers assume it holds)
        raise VyreDiagnostic(error.errors) from None
    except VerifyException as error:
        located = verification_errors(module) or [Located(None, clean_message(error))]
        raise VyreDiagnostic([(e.op, e.message) for e in located]) from None
    except Exception:
        located = verification_errors(module)  # raises again when the verifier is ours
        if not located:
            raise
        raise VyreDiagnostic([(e.op, e.message) for e in located]) from None


def duplicate_symbol_errors(module: ModuleOp) -> list[tuple[Operation | None, str]]:
    """Every symbol defined twice in one symbol table (`vyre.program @p` twice),
    at its second definition and naming the first."""
    errors: list[tuple[Operation | None, str]] = []
    tables: list[Operation] = [module]  # and the symbol tables nested in their blocks
    while tables:
        table = tables.pop()
        for block in (b for region in table.regions for b in region.blocks):
            errors.extend(_duplicates_in(block.ops))
            tables.extend(op for op in block.ops if op.has_trait(SymbolTable))
    return errors


def _duplicates_in(ops: Iterable[Operation]) -> list[tuple[Operation | None, str]]:
    first: dict[str, Operation] = {}
    errors: list[tuple[Operation | None, str]] = []
    for op in ops:
        name = op.get_attr_or_prop("sym_name")
        if not isinstance(name, StringAttr):
            continue
        if name.data not in first:
            first[name.data] = op
            continue
        earlier = Located(first[name.data], "").location()
        where = f" (first defined at {earlier[0]}:{earlier[1]}:{earlier[2]})" if earlier else ""
        errors.append((op, f'Redefinition of symbol "{name.data}"{where}'))
    return errors


#: ids of the modules a driver has verified and will not change before it prints them
_VERIFIED: set[int] = set()


@contextmanager
def verified(module: ModuleOp) -> Iterator[None]:
    """Within this block, `module` counts as verified (`is_verified`): a driver that
    verified it after its last pass says so to the target that prints it, which then
    does not verify it again. The module must not change inside the block."""
    _VERIFIED.add(id(module))
    try:
        yield
    finally:
        _VERIFIED.discard(id(module))


def is_verified(module: ModuleOp) -> bool:
    """Whether `module` is inside a `verified(module)` block."""
    return id(module) in _VERIFIED


def verify_after_pass(module: ModuleOp, pass_name: str) -> None:
    """Verify `module` after the pass `pass_name`; a failure names the pass that left
    the bad IR: `IR fails to verify after pass 'NAME': MESSAGE`, at the offending op."""
    try:
        verify_module(module)
    except VyreDiagnostic as error:
        raise VyreDiagnostic(
            [
                (op, f"IR fails to verify after pass '{pass_name}': {message}")
                for op, message in error.errors
            ]
        ) from None


def check_module(
    module: ModuleOp, *, after_pass: str | None = None, runnable: bool = False
) -> None:
    """The one check of a module a compile starts from: `verify_module`, naming
    `after_pass` in every error when that pass made the module (as
    `verify_after_pass`), then, with `runnable`, `check_runnable`."""
    if after_pass is None:
        verify_module(module)
    else:
        verify_after_pass(module, after_pass)
    if runnable:
        check_runnable(module)


def source_lines(text: str) -> list[str]:
    """The lines of `text` as the parser numbers them: split at `\n` only (not at
    U+2028 and the other breaks `str.splitlines` knows), without a trailing `\r`."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def format_errors(errors: Sequence[tuple[Operation | None, str]], source: str | None = None) -> str:
    """MLIR-style `file:line:col: error: message` lines with the source line and a caret."""
    lines = source_lines(source) if source is not None else []
    out: list[str] = []
    for op, message in errors:
        where = Located(op, message).location()
        if where is None:
            out.append(f"error: {message}")
            continue
        file, line, col = where
        out.append(f"{file}:{line}:{col}: error: {message}")
        if 0 < line <= len(lines):
            out.append(lines[line - 1])
            out.append(" " * (col - 1) + "^")
    return "\n".join(out)


def check_runnable(module: ModuleOp) -> None:
    """Raise a located `VyreDiagnostic` unless `module` is something to run or
    compile: one or more `vyre.program` ops and nothing else at the top level."""
    errors: list[tuple[Operation | None, str]] = []
    for op in module.ops:
        if op.name == "kernel.descriptor":
            errors.append(
                (
                    op,
                    "'kernel.descriptor' is lowered IR; run or compile the vyre module it was lowered from",
                )
            )
        elif op.name not in ("vyre.program", "vyre.func"):
            errors.append(
                (
                    op,
                    f"'{op.name}' is not a 'vyre.program'; a module to run or compile holds only "
                    "vyre.program ops (and the vyre.func functions they call)",
                )
            )
    if not errors and not any(op.name == "vyre.program" for op in module.ops):
        errors.append((module, "the module holds no 'vyre.program' to run or compile"))
    if errors:
        raise VyreDiagnostic(errors)
