"""Lower + verify + print: the Python API the runtime and the bundle compiler use."""

from __future__ import annotations

import io
import os
from collections.abc import Sequence

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

from vyre_xdsl.backends.wgsl.kernel_module import WgslBinding, WgslKernel
from vyre_xdsl.backends.wgsl.printer import MAX_WGSL_BYTES, print_descriptor
from vyre_xdsl.diagnostics import is_verified, verify_module
from vyre_xdsl.dialects import kernel as k
from vyre_xdsl.dialects.vyre import ProgramOp
from vyre_xdsl.passes.kernel_verify import verify_descriptors
from vyre_xdsl.passes.pipeline import run_steps, vyre_to_kernel
from vyre_xdsl.target_profile import DEFAULT_PROFILE, TargetProfile

DUMP_ENV = "VYRE_DUMP_KDESC"


def lowered_module(
    module_or_programs: ModuleOp | Sequence[ProgramOp],
    profile: TargetProfile = DEFAULT_PROFILE,
) -> ModuleOp:
    """A verified module with every program of the input lowered to descriptors:
    a lowered copy of vyre input, or kernel input itself (nothing changes it then).
    A module in a driver's `verified` block is not verified again."""
    if not isinstance(module_or_programs, ModuleOp):
        module = ModuleOp([p.clone() for p in module_or_programs])
    elif any(isinstance(op, ProgramOp) for op in module_or_programs.ops):
        module = module_or_programs.clone()
    else:  # already lowered: checked as it is, against this profile
        if not is_verified(module_or_programs):
            verify_module(module_or_programs)
        verify_descriptors(module_or_programs, profile)
        return module_or_programs
    if not (isinstance(module_or_programs, ModuleOp) and is_verified(module_or_programs)):
        verify_module(module)
    # the named pipeline's steps (vyre-fuse is the caller's); `vyre-lower` ends in
    # kernel-verify, and the input was verified above: nothing between the steps
    run_steps(Context(), module, vyre_to_kernel(profile=profile).steps(), verify=False)
    return module


def compile_module(
    module_or_programs: ModuleOp | Sequence[ProgramOp],
    profile: TargetProfile = DEFAULT_PROFILE,
    max_bytes: int = MAX_WGSL_BYTES,
) -> list[WgslKernel]:
    """One `WgslKernel` per descriptor, in dispatch order. The input is not changed."""
    module = lowered_module(module_or_programs, profile)
    return [compile_descriptor(d, max_bytes) for d in k.descriptors(module)]


def compile_descriptor(descriptor: k.DescriptorOp, max_bytes: int = MAX_WGSL_BYTES) -> WgslKernel:
    printed = print_descriptor(descriptor, max_bytes)
    dispatch = descriptor.dispatch()
    assert dispatch is not None  # DescriptorOp.verify_ requires one
    bindings = tuple(
        WgslBinding(
            name=b.buffer_name,
            group=b.group_number or 0,
            slot=b.slot_number,
            element=b.element,
            count=None if b.is_scratch else b.static_count,
            memory_class=b.mem_class,
            per_invocation=b.static_count if b.is_scratch else 0,
            visibility=b.access,
            is_trap_sidecar=b.is_trap_sidecar,
            is_repetition=b.is_repetition,
            no_clear=b.is_no_clear,
        )
        for b in descriptor.bindings()
        # the indirect grid buffer is bound even when the body never reads it,
        # so that the runtime has it (an unused layout entry is valid)
        if b.is_host
        and (b.slot_number in printed.used_slots or b.buffer_name == dispatch.indirect_buffer)
    )
    declared = []
    for name in dispatch.count_names:
        binding = descriptor.binding_named(name)
        declared.append(None if binding is None else binding.static_count)
    source = descriptor.attributes.get("source")
    part = descriptor.attributes.get("part")
    kernel = WgslKernel(
        id=descriptor.id,
        wgsl=printed.wgsl,
        entry_point=descriptor.entry,
        workgroup_size=dispatch.kernel_workgroup,  # type: ignore[arg-type]
        bindings=bindings,
        count_buffers=dispatch.count_names,
        indirect=dispatch.indirect_buffer,
        indirect_offset=dispatch.indirect_byte_offset,
        # the launch grid (kernel-vectorize and kernel-coarsen record theirs here)
        static_grid=dispatch.static_grid,  # type: ignore[arg-type]
        trap_tags=printed.trap_tags,
        program_workgroup_size=dispatch.program_workgroup,  # type: ignore[arg-type]
        source=source.data if source is not None else descriptor.sym_name.data,  # type: ignore[union-attr]
        part=part.value.data if part is not None else 0,  # type: ignore[union-attr]
        count_declared=tuple(declared),
        elements_per_invocation=dispatch.vector_width,
    )
    _dump_if_requested(descriptor, kernel)
    return kernel


def _dump_if_requested(descriptor: k.DescriptorOp, kernel: WgslKernel) -> None:
    """`VYRE_DUMP_KDESC=DIR`: write the descriptor and its WGSL (seed 001)."""
    directory = os.environ.get(DUMP_ENV)
    if not directory:
        return
    os.makedirs(directory, exist_ok=True)
    text = io.StringIO()
    Printer(stream=text).print_op(descriptor)
    with open(os.path.join(directory, f"{descriptor.id}.kdesc.mlir"), "w") as f:
        f.write(text.getvalue() + "\n")
    with open(os.path.join(directory, f"{descriptor.id}.wgsl"), "w") as f:
        f.write(kernel.wgsl)
