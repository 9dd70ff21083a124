"""The descriptor id: the IR digest (`vyre_xdsl.program_text.ir_digest`) of a program.

The canonical text (`vyre_xdsl.program_text.canonical_program_text`) drops SSA name
hints and source locations, so renaming values or moving the program in its
file does not change its identity, while any change of ops, types, buffers,
workgroup size, attributes or f32 literal bits does.
"""

from __future__ import annotations

from vyre_xdsl.dialects.vyre import ProgramOp
from vyre_xdsl.program_text import canonical_program_text, ir_digest


def canonical_program_bytes(program: ProgramOp) -> bytes:
    return canonical_program_text(program).encode()


def descriptor_id(program: ProgramOp) -> str:
    return ir_digest(program)
