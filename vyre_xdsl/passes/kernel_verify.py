"""`kernel-verify`: every descriptor invariant, all violations reported at once.

Upstream `vyre_lower::verify` (reference section 3.5) plus the wgpu target's
limits. Each violation is reported on the op that causes it:

- bindings: duplicate slots; a host or scratch slot (global, constant, uniform,
  scratch: bound in a bind group) at or above 2^24 and a shared slot below it; a user buffer named like the trap
  sidecar; a malformed sidecar; more storage buffers than the target allows;
  more workgroup memory than the target allows; a `no_clear` binding that
  the kernel is not proven to write in full (`writes_every_element`);
- dispatch: a zero extent (workgroup size or grid); a workgroup size over the
  target profile; a widened geometry the printer cannot remap; count buffers
  that name no host binding;
- body: memory ops on an unbound slot (dangling reference), on a slot of
  another memory class, or with another element type; stores and atomics on a
  read-only slot; atomics on a binding not marked `atomic`; local reads and
  writes of an undeclared local; traps (explicit or si32 division) without a
  trap sidecar; barriers in a widened kernel;
- records for the backend (a kernel without them is valid): an
  `elements_per_invocation` on a kernel that is not elementwise at that width, a
  `groups_per_workgroup` without exactly one `coarsened` region, a launch `grid`
  that is not `launch_grid` of the record over `logical_grid`, a wrong
  `declared_invocations`, an `unroll` loop without constant bounds, a
  `written_first` binding the kernel does not store in full first, a
  `workgroup_only` barrier where invocations share storage across barriers.

```
vyre-opt -p kernel-verify lowered.mlir
vyre-opt -p 'kernel-verify{max-storage-buffers=8}' lowered.mlir
```
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from vyre_xdsl.analysis import may_trap, writes_every_element
from vyre_xdsl.analysis.loops import constant_trip_range
from vyre_xdsl.analysis.vector_form import elementwise, vector_element_count, width_fits
from vyre_xdsl.analysis.workgroup_memory import (
    storage_shared_across_barriers,
    written_before_read,
)
from vyre_xdsl.diagnostics import VyreDiagnostic
from vyre_xdsl.dialects import kernel as k
from vyre_xdsl.dialects import vyre as v
from vyre_xdsl.dispatch import declared_invocations, launch_grid
from vyre_xdsl.semantics import storage_bytes
from vyre_xdsl.target_profile import ProfilePass, TargetProfile

Violation = tuple[Operation, str]


#: WebGPU's `maxComputeWorkgroupsPerDimension` (the same on every device)
MAX_WORKGROUPS_PER_DIMENSION = 65535


def descriptor_violations(descriptor: k.DescriptorOp, profile: TargetProfile) -> list[Violation]:
    """Every invariant `descriptor` breaks, in op order."""
    return [
        *_binding_violations(descriptor, profile),
        *_dispatch_violations(descriptor, profile),
        *_record_violations(descriptor),
        *_body_violations(descriptor),
    ]


def module_violations(module: Operation, profile: TargetProfile) -> list[Violation]:
    return [
        violation
        for descriptor in k.descriptors(module)
        for violation in descriptor_violations(descriptor, profile)
    ]


# ============================================================================ bindings


def _binding_violations(descriptor: k.DescriptorOp, profile: TargetProfile) -> list[Violation]:
    errors: list[Violation] = []
    seen_slots: dict[int, k.BindingOp] = {}
    seen_names: dict[str, k.BindingOp] = {}
    storage = 0
    workgroup_bytes = 0
    for binding in descriptor.bindings():
        slot, name = binding.slot_number, binding.buffer_name
        if slot in seen_slots:
            errors.append(
                (
                    binding,
                    f"duplicate binding slot {slot}: @{name} and @{seen_slots[slot].buffer_name}",
                )
            )
        seen_slots.setdefault(slot, binding)
        if name in seen_names:
            errors.append((binding, f"binding @{name} is declared twice"))
        seen_names.setdefault(name, binding)
        if binding.is_host and slot >= k.WORKGROUP_SLOT_BASE:
            errors.append(
                (
                    binding,
                    f"{'scratch' if binding.is_scratch else 'host'} binding @{name} "
                    f"({binding.mem_class}) at slot {slot} is in the "
                    f"workgroup range (>= 2^24 = {k.WORKGROUP_SLOT_BASE})",
                )
            )
        if not binding.is_host and slot < k.WORKGROUP_SLOT_BASE:
            errors.append(
                (
                    binding,
                    f"{binding.mem_class} binding @{name} at slot {slot} is in the host "
                    f"range (< 2^24 = {k.WORKGROUP_SLOT_BASE})",
                )
            )
        errors.extend(_sidecar_violations(binding))
        if binding.is_no_clear and not writes_every_element(descriptor, binding):
            errors.append(
                (
                    binding,
                    f"binding @{name} is marked no_clear, but this kernel is not proven to "
                    "write every element of it before any read. Fix: run kernel-elide-clears "
                    "(which marks only proven bindings) or drop the mark",
                )
            )
        if binding.is_host:
            storage += 1
            if storage == profile.max_storage_buffers + 1:
                errors.append(
                    (
                        binding,
                        f"binding @{name} is storage buffer {storage}; the target allows "
                        f"{profile.max_storage_buffers} per shader stage. Fix: fuse fewer programs "
                        "or split the program",
                    )
                )
        else:
            before = workgroup_bytes
            workgroup_bytes += storage_bytes(binding.element, binding.static_count or 0)
            limit = profile.max_workgroup_storage_bytes
            if before <= limit < workgroup_bytes:
                errors.append(
                    (
                        binding,
                        f"workgroup memory reaches {workgroup_bytes} bytes with @{name}; "
                        f"the target allows {limit}",
                    )
                )
    return errors


def _sidecar_violations(binding: k.BindingOp) -> list[Violation]:
    name = binding.buffer_name
    if binding.is_trap_sidecar:
        shape_ok = (
            name == k.TRAP_SIDECAR_NAME
            and binding.element == "ui32"
            and binding.static_count == k.TRAP_SIDECAR_WORDS
            and binding.mem_class == "global"
            and binding.access == "read_write"
        )
        if not shape_ok:
            return [
                (
                    binding,
                    f"the trap sidecar must be @{k.TRAP_SIDECAR_NAME}, a global "
                    f"read_write ui32[{k.TRAP_SIDECAR_WORDS}] binding",
                )
            ]
        return []
    if binding.is_repetition or name == k.REPETITION_NAME:
        shape_ok = (
            binding.is_repetition
            and name == k.REPETITION_NAME
            and binding.element == "ui32"
            and binding.static_count == 1
            and binding.mem_class == "constant"
            and binding.access == "read_only"
        )
        if not shape_ok:
            return [
                (
                    binding,
                    f"the repetition binding must be @{k.REPETITION_NAME}, a constant "
                    "read_only ui32[1] binding marked 'repetition' (the name is reserved "
                    "for it; rename any other buffer)",
                )
            ]
        return []
    if name == k.TRAP_SIDECAR_NAME:
        return [
            (
                binding,
                f"buffer name @{name} is reserved for the trap sidecar. Fix: rename the buffer",
            )
        ]
    return []


# ============================================================================ dispatch


def _dispatch_violations(descriptor: k.DescriptorOp, profile: TargetProfile) -> list[Violation]:
    dispatch = descriptor.dispatch()
    if dispatch is None:
        return []
    errors: list[Violation] = []
    for what, values in (
        ("workgroup size", dispatch.kernel_workgroup),
        ("program workgroup size", dispatch.program_workgroup),
        ("grid", dispatch.static_grid),
    ):
        for axis, value in enumerate(values or ()):
            if value == 0:
                errors.append((dispatch, f"dispatch {what} is 0 on axis {v.AXES[axis]}"))
    for axis, value in enumerate(dispatch.static_grid or ()):
        if value > MAX_WORKGROUPS_PER_DIMENSION:
            errors.append(
                (
                    dispatch,
                    f"dispatch grid is {value} on axis {v.AXES[axis]}; WebGPU launches at "
                    f"most {MAX_WORKGROUPS_PER_DIMENSION} workgroups per axis",
                )
            )
    workgroup = dispatch.kernel_workgroup
    for axis, (size, limit) in enumerate(zip(workgroup, profile.max_workgroup_size)):
        if size > limit:
            errors.append(
                (
                    dispatch,
                    f"workgroup size {list(workgroup)} exceeds the target profile on axis "
                    f"{v.AXES[axis]} ({size} > {limit})",
                )
            )
    if math.prod(workgroup) > profile.max_invocations:
        errors.append(
            (
                dispatch,
                f"workgroup size {list(workgroup)} has {math.prod(workgroup)} invocations; "
                f"the target profile allows {profile.max_invocations}",
            )
        )
    if dispatch.is_widened and (dispatch.program_workgroup != (1, 1, 1) or workgroup[1:] != (1, 1)):
        errors.append(
            (
                dispatch,
                f"a kernel workgroup {list(workgroup)} that differs from the program's "
                f"{list(dispatch.program_workgroup)} is only supported when widening [1, 1, 1] to [N, 1, 1]",
            )
        )
    if dispatch.is_widened:
        for binding in descriptor.bindings():
            if not binding.is_host:
                errors.append(
                    (
                        binding,
                        f"workgroup memory @{binding.buffer_name} in a kernel whose "
                        "workgroup was widened from [1, 1, 1]",
                    )
                )
    if (indirect := dispatch.indirect_buffer) is not None:
        binding = descriptor.binding_named(indirect)
        if binding is None or binding.mem_class not in k.HOST_CLASSES or binding.element != "ui32":
            errors.append(
                (
                    dispatch,
                    f"indirect grid buffer @{indirect} is not a ui32 host binding of this descriptor",
                )
            )
        elif (binding.static_count or 0) < dispatch.indirect_byte_offset // 4 + 3:
            errors.append(
                (
                    dispatch,
                    f"indirect grid buffer @{indirect} has no 3 words from byte "
                    f"{dispatch.indirect_byte_offset}",
                )
            )
    for name in dispatch.count_names:
        binding = descriptor.binding_named(name)
        if binding is None or binding.mem_class not in k.HOST_CLASSES:
            errors.append(
                (dispatch, f"count buffer @{name} is not a host binding of this descriptor")
            )
    return errors


# ============================================================================ backend records


def _record_violations(descriptor: k.DescriptorOp) -> list[Violation]:
    """The facts recorded for a backend hold: `elements_per_invocation` on an
    elementwise kernel that fits that width, `groups_per_workgroup` with exactly
    one `coarsened` region, a launch `grid` that is `launch_grid` of the
    logical one, `declared_invocations` of the program's declared launch,
    `unroll` on loops with constant bounds, `written_first` on workgroup
    bindings stored in full before any read. A kernel without them is valid."""
    dispatch = descriptor.dispatch()
    if dispatch is None:
        return []
    errors: list[Violation] = []
    width, groups = dispatch.vector_width, dispatch.coarsening
    workgroup = dispatch.kernel_workgroup
    if width > 1:
        if not (elementwise(descriptor) and width_fits(descriptor, width)):
            errors.append(
                (
                    dispatch,
                    f"elements_per_invocation {width} on a kernel that is not elementwise at "
                    "that width (see kernel-vectorize)",
                )
            )
        else:
            want = launch_grid(
                vector_element_count(descriptor), workgroup, elements_per_invocation=width
            )
            errors += _grid_mismatch(dispatch, want, "elements_per_invocation")
    coarsened = [
        op
        for op in descriptor.statements()
        if isinstance(op, k.RegionOp) and k.COARSENED in op.attributes
    ]
    if groups > 1 or coarsened:
        if groups == 1 or len(coarsened) != 1:
            errors.append(
                (
                    dispatch,
                    f"groups_per_workgroup {groups} with {len(coarsened)} 'coarsened' regions; "
                    "a coarsened kernel has exactly one (see kernel-coarsen)",
                )
            )
        elif dispatch.logical_static_grid is not None:
            logical = math.prod(dispatch.logical_static_grid) * math.prod(workgroup)
            want = launch_grid(logical, workgroup, groups_per_workgroup=groups)
            errors += _grid_mismatch(dispatch, want, "groups_per_workgroup")
    total = dispatch.declared_total
    if total is not None:
        counts = [descriptor.binding_named(name) for name in dispatch.count_names]
        if all(b is not None and b.static_count is not None for b in counts):
            n = max([b.static_count for b in counts if b is not None] + [1])  # type: ignore[misc]
            if total != declared_invocations(n, dispatch.program_workgroup):
                errors.append(
                    (
                        dispatch,
                        f"declared_invocations {total} is not the "
                        f"{declared_invocations(n, dispatch.program_workgroup)} invocations "
                        f"of the program's declared launch over {n} elements",
                    )
                )
        else:
            errors.append((dispatch, "declared_invocations needs static counts"))
    for binding in descriptor.bindings():
        if k.WRITTEN_FIRST in binding.attributes and not written_before_read(descriptor, binding):
            errors.append(
                (
                    binding,
                    f"binding @{binding.buffer_name} is marked 'written_first', but the kernel "
                    "is not proven to store every element of it before any read",
                )
            )
    marked = [op for op in descriptor.walk() if k.WORKGROUP_ONLY in op.attributes]
    if marked and storage_shared_across_barriers(descriptor):
        errors += [
            (
                op,
                "a 'workgroup_only' barrier in a kernel whose invocations share storage "
                "elements across barriers (it must order storage memory too)",
            )
            for op in marked
        ]
    for op in descriptor.walk():
        if isinstance(op, k.ForOp) and k.UNROLL in op.attributes:
            if constant_trip_range(op) is None:
                errors.append((op, "an 'unroll' loop needs constant ui32 bounds"))
    return errors


def _grid_mismatch(dispatch: k.DispatchOp, want, what: str) -> list[Violation]:
    if dispatch.static_grid == tuple(want):
        return []
    return [
        (
            dispatch,
            f"grid {list(dispatch.static_grid or ())} is not the launch grid {list(want)} "
            f"that {what} gives over logical_grid "
            f"{list(dispatch.logical_static_grid or ())}",
        )
    ]


# ============================================================================ body


def _body_violations(descriptor: k.DescriptorOp) -> list[Violation]:
    dispatch = descriptor.dispatch()
    widened = dispatch is not None and dispatch.is_widened
    has_sidecar = any(b.is_trap_sidecar for b in descriptor.bindings())
    errors: list[Violation] = []
    for op in descriptor.body.walk():
        if op.has_trait(k.SlotAddressed):
            errors.extend(_memory_violations(descriptor, op))
        elif isinstance(op, k.LocalStoreOp | k.LocalLoadOp):
            errors.extend(_local_violations(op))
        elif isinstance(op, k.TrapOp) and not has_sidecar:
            errors.append((op, "'kernel.trap' needs a trap sidecar binding, and there is none"))
        elif isinstance(op, k.ForOp) and not has_sidecar:
            errors.append(
                (
                    op,
                    "'kernel.for' needs a trap sidecar binding (where a driver that "
                    "leaves loops early is reported), and there is none",
                )
            )
        elif isinstance(op, v.BinaryOp) and not has_sidecar and may_trap(op):
            errors.append(
                (
                    op,
                    f"'{op.name}' on si32 may trap and needs a trap sidecar binding, and there is none",
                )
            )
        elif isinstance(op, k.BarrierOp) and widened:
            errors.append((op, "a barrier in a kernel whose workgroup was widened from [1, 1, 1]"))
    return errors


def _memory_violations(descriptor: k.DescriptorOp, op: Operation) -> list[Violation]:
    slot = op.slot_number
    binding = descriptor.binding_at(slot)
    if binding is None:
        return [(op, f"'{op.name}' refers to slot {slot}, which no binding declares")]
    errors: list[Violation] = []
    name = binding.buffer_name
    if binding.mem_class not in op.CLASSES:
        errors.append(
            (
                op,
                f"'{op.name}' cannot address slot {slot} (@{name}), which is {binding.mem_class} memory",
            )
        )
    ty = _access_type(op)
    if ty is not None and ty != binding.element_type:
        errors.append((op, f"slot {slot} (@{name}) holds {binding.element_type}, not {ty}"))
    writes = op.has_trait(k.StoreLike) or isinstance(op, k.AtomicOp)
    if writes and binding.access == "read_only":
        errors.append((op, f"'{op.name}' writes read-only slot {slot} (@{name})"))
    if isinstance(op, k.RepetitionOp) and not binding.is_repetition:
        errors.append(
            (
                op,
                f"'kernel.repetition' reads slot {slot} (@{name}), which is not the repetition binding",
            )
        )
    if isinstance(op, k.AtomicOp) and not binding.is_atomic:
        errors.append((op, f"atomic on slot {slot} (@{name}), which is not marked 'atomic'"))
    return errors


def _access_type(op: Operation):
    if op.has_trait(k.LoadLike):
        return op.result.type
    if op.has_trait(k.StoreLike):
        return op.value.type
    if isinstance(op, k.AtomicOp):
        return v.ui32
    return None


def _local_violations(op: k.LocalStoreOp | k.LocalLoadOp) -> list[Violation]:
    declaration = k.find_local(op, op.local_name)
    if declaration is None:
        return [(op, f"'{op.name}' of @{op.local_name}, which no visible 'kernel.local' declares")]
    ty = op.value.type if isinstance(op, k.LocalStoreOp) else op.result.type
    if declaration.value.type != ty:
        return [(op, f"local @{op.local_name} has type {declaration.value.type}, not {ty}")]
    return []


# ============================================================================ pass


@dataclass(frozen=True)
class KernelVerifyPass(ProfilePass):
    """Checks every `kernel.descriptor` of the module against the target profile."""

    name = "kernel-verify"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        verify_descriptors(op, self.profile())


def verify_descriptors(module: Operation, profile: TargetProfile) -> None:
    """Raise one `VyreDiagnostic` listing every violation, if there is any."""
    errors = module_violations(module, profile)
    if errors:
        raise VyreDiagnostic(errors)
