"""Target compilation: artifact -> one WGSL module per fusion group (seed
`compile_selected_modules`, vyre-semantics section 4.5).

For each fusion record of the artifact, in order:

1. decode the member programs from the node records (members sorted by node id);
2. fuse them with `vyre-fuse` (`vyre_xdsl.fusion.fuse_programs`; the group's
   intermediates may lose their stores); a refusal, or what the WGSL target
   cannot express (an indirect grid with grid_sync spills), is a
   `TargetUnsupportedError` with a stable `MKT…` code;
3. lower (`vyre-lower` + `kernel-verify`) and print WGSL; a failure is
   `EmissionError`;
4. project every host binding of every descriptor onto the artifact resource of
   the same name among the members' ABI values (`InvalidArtifactError` when
   there is none): bind group 1 for uniform, else 0; memory `constant` for
   constant/uniform classes or constant-lifetime values, else `global`;
   the run's own bindings are recorded apart: `scratch` (grid_sync spills) to
   the artifact's scratch records, the repetition word (`vyre.repetition`) as
   the entry's `repetition_slot`; the trap sidecar is not recorded;
5. compute the logical element count by the seed's rule;
6. build the `TargetModuleImage` (with each descriptor's dispatch record) and
   one `TargetEntryPoint` per dispatch.

The images form the `TargetModuleBundle` (ordered by stage, group), whose
bytes become the payload's bytes.

```python
envelope = compile_module(module)
open("out.vkb", "wb").write(envelope.bundle_bytes())
```
"""

from __future__ import annotations

import attrs
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from vyre_xdsl.backends.wgsl.kernel_module import WgslKernel
from vyre_xdsl.conversion import memref_shapes
from vyre_xdsl.diagnostics import VyreDiagnostic, VyreError, verify_module
from vyre_xdsl.dialects.vyre import ProgramOp
from vyre_xdsl.dispatch import uses_whole_buffers
from vyre_xdsl.megakernel.artifact import Artifact, FusionRecord, build_artifact
from vyre_xdsl.megakernel.bundle import (
    BundleNode,
    DispatchRecord,
    ProfileRecord,
    TargetModuleBundle,
    TargetModuleImage,
    dispatch_record,
)
from vyre_xdsl.megakernel.envelope import (
    WGSL_FORMAT,
    ArtifactEnvelope,
    TargetEntryPoint,
    TargetPayload,
    TargetPayloadFormat,
    TargetResourceBinding,
    TargetScratchBinding,
)
from vyre_xdsl.megakernel.graph import ProgramGraph
from vyre_xdsl.megakernel.planner import fuse_group, plan
from vyre_xdsl.passes.pipeline import VyreToKernelPass, run_steps
from vyre_xdsl.program_text import ProgramTextError, canonical_program_text, parse_program_text
from vyre_xdsl.target_profile import DEFAULT_PROFILE, TargetProfile

ELEMENT_BYTES = 4


class TargetCompileError(VyreError):
    """Target compilation of an artifact failed; `nodes` are the artifact nodes
    of the fusion group it failed on (empty when it is about no one group)."""

    nodes: tuple[int, ...] = ()


class InvalidArtifactError(TargetCompileError):
    """The artifact cannot be decoded into selected modules."""


#: `TargetUnsupportedError.code`: `vyre-fuse` refused the group's programs
MKT000_FUSION_REFUSED = "MKT000_FUSION_REFUSED"
#: `TargetUnsupportedError.code`: a program launched with an indirect grid keeps
#: values across a `grid_sync`; their per-invocation scratch would be sized by
#: a grid that only the GPU knows when the dispatch starts
MKT001_INDIRECT_GRID_SCRATCH = "MKT001_INDIRECT_GRID_SCRATCH"
#: retired `TargetUnsupportedError.code`: a program read `vyre.repetition`,
#: which bundles did not carry. They now do (`TargetEntryPoint.repetition_slot`,
#: the kernel's `is_repetition` binding), and nothing raises this code; the
#: name is kept so that it is never reused for another refusal
MKT002_REPETITION = "MKT002_REPETITION"


class TargetUnsupportedError(TargetCompileError):
    """A fusion group cannot form one target module; `code` names why (a stable
    `MKT…` code, also the start of the message)."""

    def __init__(self, code: str, message: str):
        self.code = code
        super().__init__(f"{code}: {message}")


class EmissionError(TargetCompileError):
    """Lowering or WGSL emission of a fusion group failed."""


@attrs.frozen
class SelectedModule:
    """One fusion group decoded from the artifact."""

    group: int
    stage: int
    nodes: tuple[int, ...]
    programs: tuple[ProgramOp, ...] = attrs.field(eq=False)


def profile_record(profile: TargetProfile) -> ProfileRecord:
    return ProfileRecord(
        identity=WGSL_FORMAT.identity,
        generation=WGSL_FORMAT.version,
        max_workgroup_size=tuple(profile.max_workgroup_size),  # type: ignore[arg-type]
        max_invocations=profile.max_invocations,
        max_storage_buffers=profile.max_storage_buffers,
        max_dynamic_shared_bytes=profile.max_workgroup_storage_bytes,
        subgroup_size=profile.subgroup_size,
    )


def compile_module(
    module: ModuleOp,
    profile: TargetProfile = DEFAULT_PROFILE,
    coarsen_reductions: bool = True,
    reassociate_floats: bool = False,
) -> ArtifactEnvelope:
    """Plan, fuse, lower and emit `module`: its artifact with the WGSL payload
    attached. The options are the pipeline's (`planned_artifact`)."""
    verify_module(module)
    artifact = planned_artifact(module, profile, coarsen_reductions, reassociate_floats)
    payload = compile_selected_modules(artifact, profile, shapes=memref_shapes(module))
    return ArtifactEnvelope(artifact).attach_target_payload(payload)


def planned_artifact(
    module: ModuleOp,
    profile: TargetProfile = DEFAULT_PROFILE,
    coarsen_reductions: bool = True,
    reassociate_floats: bool = False,
) -> Artifact:
    """The planned artifact of a verified `module` (left unchanged): its programs
    after the pipeline's planning steps (`VyreToKernelPass.planning_steps`:
    `vyre-inline`, then `vyre-coarsen-reductions` on every tree and scan level),
    planned for `profile`. The artifact's node programs are those programs, so
    a bundle re-derived from them needs no step again."""
    pipeline = VyreToKernelPass(
        coarsen_reductions=coarsen_reductions,
        reassociate_floats=reassociate_floats,
        resident_workgroups=profile.resident_workgroups,
    )
    planned = module.clone()
    run_steps(Context(), planned, pipeline.planning_steps())
    graph = ProgramGraph.from_module(planned)
    return build_artifact(graph, plan(graph, profile=profile))


def compile_selected_modules(
    artifact: Artifact,
    profile: TargetProfile = DEFAULT_PROFILE,
    format: TargetPayloadFormat = WGSL_FORMAT,
    shapes: dict[str, tuple[int, ...]] | None = None,
) -> TargetPayload:
    """The bundle of `artifact`'s fusion groups; `shapes` are the host shapes
    of buffers that were memrefs (`vyre_xdsl.conversion.memref_shapes`)."""
    modules = selected_modules(artifact)
    graph = _decoded_graph(modules)
    images, entries = [], []
    for module in modules:
        try:
            fused = _fuse(graph, module)
            kernels = _emit(fused, module, profile)
            entries += _entries(artifact, module, fused, kernels)
        except TargetCompileError as error:
            error.nodes = module.nodes
            raise
        images.append(
            TargetModuleImage(
                group=module.group,
                stage=module.stage,
                nodes=module.nodes,
                program=canonical_program_text(fused),
                descriptors=tuple(text for text, _, _ in kernels),
                dispatches=tuple(record for _, record, _ in kernels),
                kernels=tuple(kernel for _, _, kernel in kernels),
                logical_element_count=selected_logical_element_count(artifact, module, fused),
            )
        )
    record = profile_record(profile)
    bundle = TargetModuleBundle.new(
        artifact=artifact.digest_hex(),
        profile=record,
        signature=artifact.signature,
        nodes=tuple(BundleNode(n.id, n.name, n.program) for n in artifact.nodes),
        modules=images,
        shapes=shapes,
    )
    return TargetPayload.new(artifact, format, record, entries, bundle.to_bytes())


def selected_modules(artifact: Artifact) -> list[SelectedModule]:
    """The fusion groups of the artifact with their decoded member programs."""
    if [n.id for n in artifact.nodes] != list(range(len(artifact.nodes))):
        raise InvalidArtifactError("the artifact's node ids are not 0, 1, ... in program order")
    modules = [_decode_group(artifact, group) for group in artifact.plan.fusion]
    covered = sorted(n for m in modules for n in m.nodes)
    if covered != list(range(len(artifact.nodes))):
        raise InvalidArtifactError("the fusion records do not cover every node exactly once")
    return modules


def _decoded_graph(modules: list[SelectedModule]) -> ProgramGraph:
    """The program graph of the decoded programs (node ids as in the artifact)."""
    by_node = {n: p for m in modules for n, p in zip(m.nodes, m.programs)}
    return ProgramGraph.from_programs([by_node[n] for n in sorted(by_node)])


def _decode_group(artifact: Artifact, group: FusionRecord) -> SelectedModule:
    nodes = tuple(sorted(group.members))
    if not nodes:
        raise InvalidArtifactError(f"fusion group {group.id} has no member node")
    programs = []
    for node in nodes:
        try:
            record = artifact.node(node)
        except KeyError:
            raise InvalidArtifactError(
                f"fusion group {group.id} references missing node {node}"
            ) from None
        try:
            programs.append(parse_program_text(record.program, f"node {node}"))
        except ProgramTextError as error:
            raise InvalidArtifactError(
                f"node {node} canonical program failed to decode: {error}"
            ) from None
    return SelectedModule(group.id, group.stage, nodes, tuple(programs))


def _fuse(graph: ProgramGraph, module: SelectedModule) -> ProgramOp:
    try:
        return fuse_group(graph, module.nodes)
    except VyreDiagnostic as error:
        raise TargetUnsupportedError(
            MKT000_FUSION_REFUSED,
            f"fusion group {module.group} cannot form one target module: {error}",
        ) from None


def _check_expressible(fused: ProgramOp, module: SelectedModule) -> None:
    """Refuse, with its stable code, a group the WGSL target cannot express."""
    from vyre_xdsl.lowering.split import is_scratch_buffer, split_program

    if fused.indirect_buffer is None:
        return
    parts = split_program(fused)
    scratch = sorted({b.buffer_name for p in parts for b in p.buffers() if is_scratch_buffer(b)})
    if not scratch:
        return
    raise TargetUnsupportedError(
        MKT001_INDIRECT_GRID_SCRATCH,
        f"fusion group {module.group} (@{fused.sym_name.data}) has an indirect grid "
        f"(@{fused.indirect_buffer}) and values live across a grid_sync (scratch "
        f"{', '.join(scratch)}): their per-invocation scratch would be sized by a grid known "
        "only on the GPU. Fix: pass the values through a buffer, or split the program in two",
    )


def _emit(
    fused: ProgramOp, module: SelectedModule, profile: TargetProfile
) -> list[tuple[str, DispatchRecord, WgslKernel]]:
    """(descriptor text, its dispatch record, its WGSL kernel) per dispatch."""
    from vyre_xdsl.backends.wgsl import compile_descriptor, lowered_module
    from vyre_xdsl.dialects.kernel import descriptors

    _check_expressible(fused, module)
    try:
        lowered = lowered_module([fused], profile)
        return [
            (_descriptor_text(d), dispatch_record(d.dispatch()), compile_descriptor(d))
            for d in descriptors(lowered)
        ]
    except VyreError as error:
        raise EmissionError(
            f"verified lowering failed for fusion group {module.group}: {error}"
        ) from None


def _descriptor_text(descriptor) -> str:
    import io

    from xdsl.printer import Printer

    stream = io.StringIO()
    Printer(stream=stream).print_op(descriptor)
    return stream.getvalue() + "\n"


def _group_values(artifact: Artifact, module: SelectedModule) -> tuple[set[int], set[int]]:
    """(every value the members use, the values they write), from the ABI entries."""
    used: set[int] = set()
    written: set[int] = set()
    for entry in artifact.abi.entries:
        if entry.node in module.nodes:
            used |= set(entry.inputs) | set(entry.outputs)
            written |= set(entry.outputs)
    return used, written


def selected_resource_bindings(
    artifact: Artifact, module: SelectedModule, kernel: WgslKernel
) -> tuple[TargetResourceBinding, ...]:
    used, _ = _group_values(artifact, module)
    by_name = {r.name: r for r in artifact.resources if r.value in used}
    bindings = []
    for binding in kernel.bindings:
        if binding.is_trap_sidecar or binding.is_scratch or binding.is_repetition:
            continue
        resource = by_name.get(binding.name)
        if resource is None:
            raise InvalidArtifactError(
                f"fusion group {module.group} descriptor binding `{binding.name}` has no canonical "
                "artifact resource"
            )
        constant = (
            binding.memory_class in ("constant", "uniform") or resource.lifetime == "constant"
        )
        bindings.append(
            TargetResourceBinding(
                resource=resource.value,
                group=1 if binding.memory_class == "uniform" else 0,
                slot=binding.slot,
                memory="constant" if constant else "global",
                access=binding.visibility,
            )
        )
    return tuple(bindings)


def selected_scratch_bindings(
    artifact: Artifact, module: SelectedModule, kernel: WgslKernel
) -> tuple[TargetScratchBinding, ...]:
    """Each `scratch` binding of the kernel, tied to the artifact's scratch record
    of its group (`InvalidArtifactError` when the artifact has none like it)."""
    records = {(r.group, r.name): (k, r) for k, r in enumerate(artifact.scratch)}
    bindings = []
    for binding in kernel.bindings:
        if not binding.is_scratch:
            continue
        index, record = records.get((module.group, binding.name), (None, None))
        if record is None or (record.element, record.per_invocation) != (
            "ui32" if binding.element == "i1" else binding.element,
            binding.per_invocation,
        ):
            raise InvalidArtifactError(
                f"fusion group {module.group} descriptor binding `{binding.name}` has no scratch "
                "resource in the artifact"
            )
        bindings.append(TargetScratchBinding(scratch=index, group=0, slot=binding.slot))
    return tuple(bindings)


def selected_repetition_slot(module: SelectedModule, kernel: WgslKernel) -> int | None:
    """The bind group 0 slot of the kernel's repetition word (`kernel.repetition`,
    `vyre.repetition`), or None when it reads none. The runtime binds it, per
    repetition of the run, not the host; `InvalidArtifactError` for a repetition
    binding other than the lowering's `@__vyre_repetition` (group 0, ui32[1],
    constant, read_only)."""
    from vyre_xdsl.dialects.kernel import REPETITION_NAME

    found = [b for b in kernel.bindings if b.is_repetition or b.name == REPETITION_NAME]
    if not found:
        return None
    shape = [
        (b.name, b.is_repetition, b.group, b.element, b.count, b.memory_class, b.visibility)
        for b in found
    ]
    if shape != [(REPETITION_NAME, True, 0, "ui32", 1, "constant", "read_only")]:
        raise InvalidArtifactError(
            f"fusion group {module.group} kernel `{kernel.entry_point}` has a repetition binding "
            f"that is not one constant read_only ui32[1] @{REPETITION_NAME} in group 0"
        )
    return found[0].slot


def selected_indirect_resource(
    artifact: Artifact, module: SelectedModule, kernel: WgslKernel
) -> int | None:
    """The artifact value whose words hold the kernel's indirect grid, or None."""
    if kernel.indirect is None:
        return None
    used, _ = _group_values(artifact, module)
    for resource in artifact.resources:
        if resource.value in used and resource.name == kernel.indirect:
            return resource.value
    raise InvalidArtifactError(
        f"fusion group {module.group} reads its indirect grid from `{kernel.indirect}`, which "
        "is no resource of its nodes in the artifact"
    )


def selected_logical_element_count(
    artifact: Artifact, module: SelectedModule, fused: ProgramOp
) -> int | None:
    """The seed's rule, with SPEC section 5's full span: the largest element count
    among all the group's values when the fused program uses atomics or workgroup
    memory; else among the values the members write, falling back to all; at
    least 1. None when a chosen value is runtime-sized."""
    used, written = _group_values(artifact, module)
    counts = {r.value: r.element_count for r in artifact.resources}
    chosen = used if uses_whole_buffers(fused) or not written else written
    selected = [counts[v] for v in chosen]
    if any(c is None for c in selected):
        return None
    return max(selected + [1])  # type: ignore[operator]


def _entries(
    artifact: Artifact,
    module: SelectedModule,
    fused: ProgramOp,
    kernels: list[tuple[str, DispatchRecord, WgslKernel]],
) -> list[TargetEntryPoint]:
    shared = sum((b.static_count or 0) * ELEMENT_BYTES for b in fused.buffers() if b.is_workgroup)
    return [
        TargetEntryPoint(
            name=f"group{module.group}.part{part}.{kernel.entry_point}",
            node=module.nodes[0],
            group=module.group,
            workgroup_size=kernel.workgroup_size,
            grid_size=kernel.static_grid,
            dynamic_shared_bytes=shared,
            resource_bindings=selected_resource_bindings(artifact, module, kernel),
            scratch_bindings=selected_scratch_bindings(artifact, module, kernel),
            indirect=selected_indirect_resource(artifact, module, kernel),
            indirect_offset=kernel.indirect_offset,
            repetition_slot=selected_repetition_slot(module, kernel),
        )
        for part, (_, _, kernel) in enumerate(kernels)
    ]
