"""The descriptor id: the IR digest (`vyre_xdsl.program_text.ir_digest`) of a program.

The canonical text (`vyre_xdsl.program_text.canonical_program_text`) drops SSA name
hints and source locations, so renaming values or moving the program in its
file does not change its identity, while any change of ops, types, buffers,
workgroup size, attributes or f32 literal bits does.

The dispatch facts a program records (`source`, `part`, `count_buffers`,
`active_workgroups`: `vyre.DISPATCH_FACT_ATTRS`) name and size its dispatch
and are not part of the code: the id of part `@p_partK {source = "p", ...}`
is the digest of the part under its source's name `@p`, without them (as
when lowering split the program itself).
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr

from vyre_xdsl.dialects.vyre import DISPATCH_FACT_ATTRS, ProgramOp
from vyre_xdsl.program_text import canonical_program_text, ir_digest


def canonical_program_bytes(program: ProgramOp) -> bytes:
    return canonical_program_text(program).encode()


def descriptor_id(program: ProgramOp) -> str:
    if not any(name in program.attributes for name in DISPATCH_FACT_ATTRS):
        return ir_digest(program)
    attributes = dict(program.attributes)
    name = program.sym_name
    program.sym_name = StringAttr(program.source_name)
    for fact in DISPATCH_FACT_ATTRS:
        program.attributes.pop(fact, None)
    try:
        return ir_digest(program)
    finally:
        program.sym_name = name
        program.attributes.clear()
        program.attributes.update(attributes)
