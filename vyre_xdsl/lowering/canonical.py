"""The descriptor id: BLAKE3 hex of the program's canonical text.

The canonical text (`vyre_xdsl.canonical.canonical_program_text`) drops SSA name
hints and source locations, so renaming values or moving the program in its
file does not change its identity, while any change of ops, types, buffers,
workgroup size, attributes or f32 literal bits does.
"""

from __future__ import annotations

import blake3

from vyre_xdsl.canonical import canonical_program_text
from vyre_xdsl.dialects.vyre import ProgramOp


def canonical_program_bytes(program: ProgramOp) -> bytes:
    return canonical_program_text(program).encode()


def descriptor_id(program: ProgramOp) -> str:
    return blake3.blake3(canonical_program_bytes(program)).hexdigest()
