"""Canonical IR text, the IR digest and canonical JSON: the byte encodings
identities, caches and artifacts are built from.

A program's canonical text is its print in the `vyre` custom syntax with every
SSA name hint dropped (values print as `%0`, `%1`, ... in definition order) and
no source locations. It is deterministic, independent of how the source named
its values or where the program sat in its file, and it round-trips exactly:
the custom syntax prints f32 literals with 17 significant digits (or as hex
bits for NaNs), where the generic form prints only 7 and would change
constants on the way back.

`ir_digest(op)` is the one identity of IR in vyre_xdsl: the BLAKE3 hex of
its canonical text. A program's descriptor id (`kernel.descriptor ... id`)
is the digest of the program; a module's is what every cache keys it by
(`run()`'s executables, the compiled-kernel cache, the persistent compile
cache); bundles name their kernels by descriptor id. Modules that differ only in
value names, spacing or comments have the same digest.

```python
from vyre_xdsl.program_text import ir_digest
ir_digest(module) == ir_digest(vyre_xdsl.parse(str(module)))   # True
```

Canonical JSON is `json.dumps(sort_keys=True, separators=(",", ":"),
ensure_ascii=True, allow_nan=False)`, UTF-8 encoded.
"""

from __future__ import annotations

import io
import json

import blake3
from xdsl.ir import Block, Operation, SSAValue
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError

from vyre_xdsl.context import parse_module
from vyre_xdsl.diagnostics import VyreDiagnostic, VyreError, verify_module
from vyre_xdsl.dialects.vyre import ProgramOp, programs


class ProgramTextError(VyreError):
    """Canonical program text that does not parse or verify as exactly one program."""


class _HintlessPrinter(Printer):
    """A printer that ignores name hints: values print as `%0`, `%1`, ... and blocks
    as `^bb0`, ... in order, exactly as a copy without hints would (no copy made)."""

    def print_ssa_value(self, value: SSAValue) -> str:
        name = self._ssa_values.get(value)
        if name is None:
            name = self._get_new_valid_name_id()
            self._ssa_values[value] = name
        self.print_string(f"%{name}")
        return name

    def _populate_block_name(self, block: Block, block_index: int | None = None) -> None:
        assert block not in self._blocks
        index = block_index if block_index is not None else self._get_new_valid_block_id()
        self._blocks[block] = f"bb{index}"


def hintless_text(op: Operation) -> str:
    """`op` printed with every name hint dropped (values `%0`, `%1`, ...)."""
    stream = io.StringIO()
    _HintlessPrinter(stream=stream).print_op(op)
    return stream.getvalue()


def canonical_text(op: Operation) -> str:
    """`op`'s canonical text: printed without name hints, ending in a newline."""
    return hintless_text(op) + "\n"


def canonical_program_text(program: ProgramOp) -> str:
    return canonical_text(program)


def ir_digest(op: Operation) -> str:
    """BLAKE3 hex of `op`'s canonical text: the digest of a program (its
    descriptor id) or of a module (the key of every cache)."""
    return text_digest(canonical_text(op))


def text_digest(canonical: str) -> str:
    """`ir_digest` of the op whose canonical text (`canonical_text`) is `canonical`."""
    return blake3.blake3(canonical.encode()).hexdigest()


def source_digest(text: str | bytes) -> str:
    """BLAKE3 hex of IR text exactly as given (not canonical): what the
    persistent compile cache keys a text by, so that a hit needs no parse."""
    return blake3.blake3(text.encode() if isinstance(text, str) else text).hexdigest()


def parse_program_text(text: str, name: str = "<program>") -> ProgramOp:
    """The one verified program that canonical `text` holds."""
    try:
        module = parse_module(text, name)
        verify_module(module)
    except ParseError as error:
        raise ProgramTextError(f"does not parse: {error.msg}") from None
    except VyreDiagnostic as error:
        raise ProgramTextError(f"does not verify: {error}") from None
    progs = programs(module)
    if len(progs) != 1 or len(list(module.ops)) != 1:
        raise ProgramTextError(
            f"holds {len(list(module.ops))} ops; expected exactly one vyre.program"
        )
    program = progs[0]
    program.detach()
    return program


def canonical_json(value: object) -> bytes:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    ).encode("utf-8")
