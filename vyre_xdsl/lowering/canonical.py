"""Canonical program bytes and the descriptor id (BLAKE3 hex of them).

The canonical form is the generic MLIR print of the program with SSA name hints
and source locations dropped, so renaming values or moving the program in its
file does not change its identity, while any change of ops, types, buffers,
workgroup size or attributes does.
"""

from __future__ import annotations

import io

import blake3
from xdsl.printer import Printer

from vyre_xdsl.dialects.vyre import ProgramOp


def canonical_program_bytes(program: ProgramOp) -> bytes:
    clone = program.clone(clone_name_hints=False)
    for op in clone.walk():
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    arg.name_hint = None
    stream = io.StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(clone)
    return stream.getvalue().encode()


def descriptor_id(program: ProgramOp) -> str:
    return blake3.blake3(canonical_program_bytes(program)).hexdigest()
