"""Target-module bundles: the `.vkb` file (seed `TargetModuleBundle`, schema 2).

A bundle holds one `TargetModuleImage` per fusion group, ordered by
(stage, group). An image carries the group's nodes, the canonical text of the
fused program, and per dispatch (a `grid_sync` split gives several) the
`kernel.descriptor` text, its dispatch geometry as the descriptor has it
(`DispatchRecord`) and the `WgslKernel` (entry point, WGSL, bindings,
workgroup size, count buffers, static grid, trap tags). The bundle also
carries the run signature (SPEC section 8), the canonical text of every
original program, the target profile it was compiled for and the digest of
its neutral artifact, so it runs without its source.

Bytes: `to_bytes()` = 32-byte BLAKE3 of the body, then the body (canonical
JSON). `from_bytes()` checks, in order, each failure its own `BundleError`:

| error | when |
| --- | --- |
| `BundleTruncatedError` | fewer than 32 bytes |
| `BundleDigestMismatchError` | the digest is not BLAKE3 of the body (any flipped byte) |
| `MalformedBundleError` | the body is not JSON of the bundle's shape, or a module names an unknown node |
| `UnsupportedSchemaError` | `schema_version` is not 2 |
| `EmptyGroupError` | a module (fusion group) has no nodes |
| `MalformedProgramError` | a node's or a module's program does not parse and verify |
| `InvalidDescriptorError` | a descriptor does not parse, fails `kernel-verify`, or does not match its kernel or its dispatch record |
| `NonCanonicalOrderError` | modules are not strictly ordered by (stage, group) |
| `NonCanonicalEncodingError` | the body is not the canonical JSON of what it decodes to |
| `InvalidProfileError` | the profile is not a WGSL generation-2 profile within the hard limits below |
| `InvalidSignatureError` | a run-signature entry has a bad name, element type, count or flags, or a host shape that is not one of its buffers' |
| `InvalidBindingError` | a kernel's bindings: bad or repeated slots, visibility, memory class, element type, count, sidecar, scratch, a repetition binding not exactly the lowering's |
| `InvalidLaunchError` | a workgroup size or grid outside the profile (or WGSL's 65535 workgroups per axis), an indirect grid that is no ui32 buffer of the run or whose offset leaves no 3 words, a kernel that does not launch as its dispatch record says |
| `InvalidElementCountError` | count buffers that are not bindings, counts that disagree with the bindings |
| `InvalidWgslError` | a WGSL module larger than 32 MiB, or one without its entry point |
| `InvalidArtifactDigestError` | the artifact digest is not 64 lowercase hex digits |
| `NodeMismatchError` | a node's name or text is not the canonical text of its program |
| `SignatureMismatchError` | the run signature is not the one of the node programs |
| `ArtifactMismatchError` | the artifact digest is not the one of the node programs' plan |
| `PlanMismatchError` | the modules' groups, stages or nodes are not the plan of the node programs |
| `ProgramMismatchError` | a module's program is not the fusion of its nodes |
| `DescriptorMismatchError` | a descriptor is not the lowering of its module's program |
| `WgslMismatchError` | a kernel's WGSL, bindings or launch are not the ones printed from its descriptor |

The last group of checks re-derives the whole bundle from its node programs
and its profile (plan, fuse, lower, print; memoized) and compares: so a
bundle that loads is exactly what `vyre-compile` writes for those programs,
its WGSL is the printer's (which naga accepts), and running it can fail only
the way compiling and running the source can. A consequence: a bundle loads
only with the compiler version that wrote it (its artifact digest names that
version); recompile the source after an upgrade.
"""

from __future__ import annotations

import functools
import json
import math

import attrs
import blake3
from xdsl.utils.exceptions import ParseError

from vyre_xdsl.abi import RunSignature
from vyre_xdsl.backends.wgsl.kernel_module import WgslKernel
from vyre_xdsl.diagnostics import VyreDiagnostic, VyreError
from vyre_xdsl.dialects.kernel import REPETITION_NAME
from vyre_xdsl.megakernel.artifact import SignatureBuffer, run_signature
from vyre_xdsl.megakernel.records import RecordShapeError, from_json, to_json
from vyre_xdsl.program_text import ProgramTextError, canonical_json, parse_program_text
from vyre_xdsl.semantics import ELEMENT_TYPE_NAMES

TARGET_MODULE_BUNDLE_SCHEMA_VERSION = 2
DIGEST_BYTES = 32


class BundleError(VyreError):
    """Bundle bytes that cannot be trusted or used."""


class BundleTruncatedError(BundleError):
    pass


class BundleDigestMismatchError(BundleError):
    pass


class MalformedBundleError(BundleError):
    pass


class UnsupportedSchemaError(BundleError):
    pass


class EmptyGroupError(BundleError):
    pass


class MalformedProgramError(BundleError):
    pass


class InvalidDescriptorError(BundleError):
    pass


class NonCanonicalOrderError(BundleError):
    pass


class NonCanonicalEncodingError(BundleError):
    pass


class InvalidProfileError(BundleError):
    pass


class InvalidSignatureError(BundleError):
    pass


class InvalidBindingError(BundleError):
    pass


class InvalidLaunchError(BundleError):
    pass


class InvalidElementCountError(BundleError):
    pass


class InvalidWgslError(BundleError):
    pass


class InvalidArtifactDigestError(BundleError):
    pass


class NodeMismatchError(BundleError):
    pass


class SignatureMismatchError(BundleError):
    pass


class ArtifactMismatchError(BundleError):
    pass


class PlanMismatchError(BundleError):
    pass


class ProgramMismatchError(BundleError):
    pass


class DescriptorMismatchError(BundleError):
    pass


class WgslMismatchError(BundleError):
    pass


#: Hard limits a bundle's profile must respect (every WebGPU device is within them).
MAX_PROFILE_WORKGROUP_AXIS = 1024
MAX_PROFILE_INVOCATIONS = 1024
MAX_PROFILE_STORAGE_BUFFERS = 1 << 16
MAX_PROFILE_SHARED_BYTES = 1 << 20
MAX_PROFILE_SUBGROUP = 128
MAX_WORKGROUPS_PER_AXIS = 65535
#: host binding slots are below 2^24 (`shared`/`scratch` slots start there)
MAX_HOST_SLOT = 1 << 24
MAX_COUNT = 1 << 32  # element counts are u32 in WGSL
MAX_WGSL_BYTES = 32 << 20
ELEMENT_TYPES = ELEMENT_TYPE_NAMES
VISIBILITIES = ("read_only", "write_only", "read_write")
MEMORY_CLASSES = ("global", "constant", "uniform")
#: values of every type but i1 spill as themselves (an i1 spills as a ui32)
SCRATCH_ELEMENT_TYPES = tuple(t for t in ELEMENT_TYPE_NAMES if t != "i1")


@attrs.frozen
class BundleNode:
    id: int
    name: str
    program: str  # canonical program text


@attrs.frozen
class ProfileRecord:
    """The target profile (vyre-semantics section 4.4) the bundle was compiled for."""

    identity: str
    generation: int
    max_workgroup_size: tuple[int, int, int]
    max_invocations: int
    max_storage_buffers: int
    max_dynamic_shared_bytes: int
    subgroup_size: int

    def lowering_profile(self):
        from vyre_xdsl.target_profile import TargetProfile

        return TargetProfile(
            max_workgroup_size=self.max_workgroup_size,
            max_invocations=self.max_invocations,
            max_storage_buffers=self.max_storage_buffers,
            max_workgroup_storage_bytes=self.max_dynamic_shared_bytes,
            subgroup_size=self.subgroup_size,
        )


@attrs.frozen
class DispatchRecord:
    """The geometry of one dispatch exactly as its descriptor's `kernel.dispatch`
    op has it: nothing here is re-derived.

    ```mlir
    kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [4, 1, 1] count [@out]
    ```
    is `DispatchRecord((64, 1, 1), (64, 1, 1), (4, 1, 1), False, ("out",), None, 0)`.
    """

    workgroup_size: tuple[int, int, int]  # the kernel's (a [1, 1, 1] program may be widened)
    program_workgroup_size: tuple[int, int, int]
    grid: tuple[int, int, int] | None  # workgroups per axis; None: runtime-sized or indirect
    explicit: bool  # `grid explicit [...]`: the grid is the program's own
    count_buffers: tuple[str, ...]  # the buffers whose lengths give the element count
    indirect: str | None  # the buffer the grid is read from at launch
    indirect_offset: int  # the byte offset of that grid in it


def dispatch_record(dispatch) -> DispatchRecord:
    """The record of a `kernel.dispatch` op."""
    return DispatchRecord(
        workgroup_size=dispatch.kernel_workgroup,
        program_workgroup_size=dispatch.program_workgroup,
        grid=dispatch.static_grid,
        explicit=dispatch.properties.get("explicit") is not None,
        count_buffers=dispatch.count_names,
        indirect=dispatch.indirect_buffer,
        indirect_offset=dispatch.indirect_byte_offset,
    )


@attrs.frozen
class TargetModuleImage:
    """One fusion group, compiled."""

    group: int
    stage: int
    nodes: tuple[int, ...]
    program: str  # canonical text of the fused program
    descriptors: tuple[str, ...]  # one kernel.descriptor per dispatch, in order
    dispatches: tuple[DispatchRecord, ...]  # the dispatch op of each descriptor
    kernels: tuple[WgslKernel, ...]  # the WGSL module of each descriptor
    logical_element_count: int | None  # seed rule; None when a count buffer is runtime-sized


@attrs.frozen
class TargetModuleBundle:
    schema_version: int
    artifact: str  # BLAKE3 hex digest of the neutral artifact
    profile: ProfileRecord
    signature: tuple[SignatureBuffer, ...]
    nodes: tuple[BundleNode, ...]
    modules: tuple[TargetModuleImage, ...]
    #: host shapes of the buffers that were memrefs of standard MLIR input
    #: (-1: the dynamic dimension); empty for a module written in vyre
    shapes: dict[str, tuple[int, ...]]

    @classmethod
    def new(
        cls,
        artifact: str,
        profile: ProfileRecord,
        signature: tuple[SignatureBuffer, ...],
        nodes: tuple[BundleNode, ...],
        modules: list[TargetModuleImage],
        shapes: dict[str, tuple[int, ...]] | None = None,
    ) -> TargetModuleBundle:
        """A bundle with its modules in canonical (stage, group) order."""
        return cls(
            schema_version=TARGET_MODULE_BUNDLE_SCHEMA_VERSION,
            artifact=artifact,
            profile=profile,
            signature=signature,
            nodes=tuple(sorted(nodes, key=lambda n: n.id)),
            modules=tuple(sorted(modules, key=lambda m: (m.stage, m.group))),
            shapes=dict(sorted((shapes or {}).items())),
        )

    def run_signature(self) -> RunSignature:
        return run_signature(self.signature)

    def kernels(self) -> list[WgslKernel]:
        """Every dispatch, in execution order."""
        return [kernel for module in self.modules for kernel in module.kernels]

    def body(self) -> bytes:
        return canonical_json(to_json(self))

    def to_bytes(self) -> bytes:
        body = self.body()
        return blake3.blake3(body).digest() + body

    @classmethod
    def from_bytes(cls, data: bytes) -> TargetModuleBundle:
        if len(data) < DIGEST_BYTES:
            raise BundleTruncatedError(
                f"target module bundle is truncated: {len(data)} bytes, fewer than the "
                f"{DIGEST_BYTES}-byte digest"
            )
        expected, body = data[:DIGEST_BYTES], data[DIGEST_BYTES:]
        if blake3.blake3(body).digest() != expected:
            raise BundleDigestMismatchError(
                "target module bundle digest mismatch: the bytes were changed or truncated"
            )
        document = _json_object(body)
        schema = document.get("schema_version")
        if schema != TARGET_MODULE_BUNDLE_SCHEMA_VERSION:
            raise UnsupportedSchemaError(
                f"target module bundle schema {schema} is unsupported; expected "
                f"{TARGET_MODULE_BUNDLE_SCHEMA_VERSION}"
            )
        try:
            bundle = from_json(cls, document, "bundle")
        except RecordShapeError as error:
            raise MalformedBundleError(f"target module bundle is malformed: {error}") from None
        bundle.validate()
        if bundle.to_bytes() != bytes(data):
            raise NonCanonicalEncodingError(
                "target module bundle is not canonically encoded (sorted keys, no spaces, "
                "ASCII escapes)"
            )
        return bundle

    def validate(self) -> None:
        """Every check of `from_bytes` after decoding (the seed's order)."""
        node_ids = [n.id for n in self.nodes]
        for module in self.modules:
            if not module.nodes:
                raise EmptyGroupError(f"fusion group {module.group} has no selected nodes")
            unknown = [n for n in module.nodes if n not in node_ids]
            if unknown:
                raise MalformedBundleError(
                    f"fusion group {module.group} selects node {unknown[0]}, which the bundle does not hold"
                )
        _check_profile(self.profile)
        _check_signature(self.signature)
        _check_shapes(self.shapes, self.signature)
        _check_artifact_digest(self.artifact)
        for node in self.nodes:
            _check_program(node.program, f"node {node.id} (@{node.name})")
        profile = self.profile.lowering_profile()
        for module in self.modules:
            _check_program(module.program, f"fusion group {module.group}")
            _check_descriptors(module, profile)
        for before, after in zip(self.modules, self.modules[1:]):
            if (before.stage, before.group) >= (after.stage, after.group):
                raise NonCanonicalOrderError(
                    "target module bundle is not in canonical stage/group order: "
                    f"(stage {before.stage}, group {before.group}) comes before "
                    f"(stage {after.stage}, group {after.group})"
                )
        signature = {b.name: b for b in self.signature}
        for module in self.modules:
            for index, kernel in enumerate(module.kernels):
                where = f"fusion group {module.group} kernel {index}"
                _check_bindings(kernel, signature, self.profile, where)
                _check_launch(kernel, self.profile, signature, where)
                _check_element_counts(kernel, module, signature, where)
                _check_wgsl(kernel, where)
                _check_dispatch(kernel, module.dispatches[index], where)
        _check_rederived(self)


def _json_object(body: bytes) -> dict:
    try:
        document = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise MalformedBundleError(f"target module bundle body is not JSON: {error}") from None
    except RecursionError:
        raise MalformedBundleError("target module bundle body nests JSON too deeply") from None
    if not isinstance(document, dict):
        raise MalformedBundleError("target module bundle body is not a JSON object")
    return document


def _check_program(text: str, where: str) -> None:
    try:
        parse_program_text(text, where)
    except ProgramTextError as error:
        raise MalformedProgramError(f"{where}: selected program is malformed: {error}") from None


def _check_descriptors(module: TargetModuleImage, profile) -> None:
    from vyre_xdsl.context import parse_module
    from vyre_xdsl.diagnostics import verify_module
    from vyre_xdsl.dialects.kernel import descriptors
    from vyre_xdsl.passes.kernel_verify import verify_descriptors

    where = f"fusion group {module.group}"
    counts = {len(module.descriptors), len(module.dispatches), len(module.kernels)}
    if not module.descriptors or len(counts) != 1:
        raise InvalidDescriptorError(
            f"{where} has {len(module.descriptors)} descriptors and {len(module.dispatches)} "
            f"dispatch records for {len(module.kernels)} kernels"
        )
    triples = zip(module.descriptors, module.dispatches, module.kernels)
    for index, (text, record, kernel) in enumerate(triples):
        try:
            parsed = parse_module(text, f"{where} descriptor {index}")
            verify_module(parsed)
            verify_descriptors(parsed, profile)
        except ParseError as error:
            raise InvalidDescriptorError(
                f"{where} descriptor {index} is invalid: {error.msg}"
            ) from None
        except VyreDiagnostic as error:
            raise InvalidDescriptorError(
                f"{where} descriptor {index} is invalid: {error}"
            ) from None
        found = descriptors(parsed)
        if len(found) != 1 or len(list(parsed.ops)) != 1:
            raise InvalidDescriptorError(
                f"{where} descriptor {index} is not exactly one kernel.descriptor"
            )
        if found[0].id != kernel.id or found[0].entry != kernel.entry_point:
            raise InvalidDescriptorError(
                f"{where} descriptor {index} (id {found[0].id[:16]}…) does not match its kernel "
                f"(id {kernel.id[:16]}…)"
            )
        dispatch = found[0].dispatch()
        if dispatch is None or dispatch_record(dispatch) != record:
            raise InvalidDescriptorError(
                f"{where} dispatch record {index} is not the dispatch of its descriptor"
            )


# ------------------------------------------------------------------ field checks


def _is_count(value: int | None) -> bool:
    return value is None or 0 <= value < MAX_COUNT


def _check_profile(profile: ProfileRecord) -> None:
    def bad(what: str) -> InvalidProfileError:
        return InvalidProfileError(f"target module bundle profile is invalid: {what}")

    if (profile.identity, profile.generation) != ("wgsl", 2):
        raise bad(
            f"target {profile.identity!r:.40} generation {profile.generation}; expected 'wgsl' generation 2"
        )
    if not all(1 <= axis <= MAX_PROFILE_WORKGROUP_AXIS for axis in profile.max_workgroup_size):
        raise bad(
            f"max_workgroup_size {list(profile.max_workgroup_size)} is outside [1, {MAX_PROFILE_WORKGROUP_AXIS}]"
        )
    if not 1 <= profile.max_invocations <= MAX_PROFILE_INVOCATIONS:
        raise bad(
            f"max_invocations {profile.max_invocations} is outside [1, {MAX_PROFILE_INVOCATIONS}]"
        )
    if not 1 <= profile.max_storage_buffers <= MAX_PROFILE_STORAGE_BUFFERS:
        raise bad(
            f"max_storage_buffers {profile.max_storage_buffers} is outside [1, {MAX_PROFILE_STORAGE_BUFFERS}]"
        )
    if not 0 <= profile.max_dynamic_shared_bytes <= MAX_PROFILE_SHARED_BYTES:
        raise bad(
            f"max_dynamic_shared_bytes {profile.max_dynamic_shared_bytes} is outside [0, {MAX_PROFILE_SHARED_BYTES}]"
        )
    size = profile.subgroup_size
    if not (size == 0 or (0 < size <= MAX_PROFILE_SUBGROUP and size & (size - 1) == 0)):
        raise bad(
            f"subgroup_size {size} is neither 0 nor a power of two up to {MAX_PROFILE_SUBGROUP}"
        )


def _check_shapes(shapes: dict[str, tuple[int, ...]], buffers: tuple[SignatureBuffer, ...]) -> None:
    """Each shape names a buffer of the run signature, has dimensions of at
    least 1 (or one -1, the dynamic one) and, for a static count, holds it."""
    counts = {b.name: b.count for b in buffers}
    for name, shape in shapes.items():
        where = f"shape of buffer '{name}'"
        if name not in counts:
            raise InvalidSignatureError(f"{where}: no such buffer in the run signature")
        if not shape or any(d < 1 and d != -1 for d in shape) or shape.count(-1) > 1:
            raise InvalidSignatureError(
                f"{where}: {list(shape)} is not a shape (dimensions >= 1, at most one -1)"
            )
        size = math.prod(shape)
        if -1 not in shape and counts[name] is not None and size != counts[name]:
            raise InvalidSignatureError(
                f"{where}: {list(shape)} holds {size} elements, the buffer {counts[name]}"
            )


def _check_signature(buffers: tuple[SignatureBuffer, ...]) -> None:
    seen: set[str] = set()
    for index, buffer in enumerate(buffers):
        where = f"run signature entry {index}"
        if not buffer.name or not buffer.name.isprintable():
            raise InvalidSignatureError(f"{where} has an invalid buffer name {buffer.name!r:.60}")
        if buffer.name in seen:
            raise InvalidSignatureError(f"{where} names buffer '{buffer.name}' a second time")
        seen.add(buffer.name)
        if buffer.element not in ELEMENT_TYPES:
            raise InvalidSignatureError(
                f"{where} ('{buffer.name}') has element type {buffer.element!r:.40}; expected one of "
                f"{', '.join(ELEMENT_TYPES)}"
            )
        if not _is_count(buffer.count) or not _is_count(buffer.min_count):
            raise InvalidSignatureError(
                f"{where} ('{buffer.name}') has an element count outside [0, 2^32)"
            )
        if buffer.count is not None and buffer.min_count != buffer.count:
            raise InvalidSignatureError(
                f"{where} ('{buffer.name}') has count {buffer.count} but min_count {buffer.min_count}"
            )
        # an input may also be an intermediate (SPEC 8: first declared readable,
        # then written and read by later programs, never returned); an output may not
        if buffer.is_intermediate and buffer.is_output:
            raise InvalidSignatureError(
                f"{where} ('{buffer.name}') is an intermediate and also an output"
            )


def _check_artifact_digest(digest: str) -> None:
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise InvalidArtifactDigestError(
            f"target module bundle artifact digest {digest!r:.80} is not 64 lowercase hex digits"
        )


def _check_bindings(
    kernel: WgslKernel, signature: dict, profile: ProfileRecord, where: str
) -> None:
    def bad(what: str) -> InvalidBindingError:
        return InvalidBindingError(f"{where}: {what}")

    slots: set[tuple[int, int]] = set()
    names: set[str] = set()
    sidecars = 0
    for binding in kernel.bindings:
        this = f"binding '{binding.name:.60}'"
        if (binding.group, binding.slot) in slots:
            raise bad(f"{this} reuses group {binding.group} slot {binding.slot}")
        slots.add((binding.group, binding.slot))
        if binding.name in names:
            raise bad(f"{this} is bound twice")
        names.add(binding.name)
        # host slots keep the program's binding, below 2^24 (the kernel dialect's rule)
        if binding.group not in (0, 1) or not 0 <= binding.slot < MAX_HOST_SLOT:
            raise bad(f"{this} has group {binding.group} slot {binding.slot}")
        if binding.visibility not in VISIBILITIES:
            raise bad(f"{this} has visibility {binding.visibility!r:.40}")
        if binding.is_scratch:
            _check_scratch(binding, signature, bad)
            continue
        if binding.is_repetition or binding.name == REPETITION_NAME:
            _check_repetition(binding, signature, bad)
            continue
        if binding.per_invocation:
            raise bad(
                f"{this} is not scratch but has {binding.per_invocation} elements per invocation"
            )
        if binding.memory_class not in MEMORY_CLASSES:
            raise bad(f"{this} has memory class {binding.memory_class!r:.40}")
        if binding.element not in ELEMENT_TYPES:
            raise bad(f"{this} has element type {binding.element!r:.40}")
        if not _is_count(binding.count):
            raise bad(f"{this} has element count {binding.count}, outside [0, 2^32)")
        if binding.is_trap_sidecar:
            sidecars += 1
            continue
        declared = signature.get(binding.name)
        if declared is None:
            raise bad(f"{this} is not a buffer of the run signature")
        if declared.element != binding.element:
            raise bad(
                f"{this} holds {binding.element} but the run signature says {declared.element}"
            )
    if sidecars > 1:
        raise bad(f"{sidecars} trap sidecars")
    if len(kernel.bindings) - sidecars > profile.max_storage_buffers:
        raise bad(
            f"{len(kernel.bindings)} bindings exceed the profile's {profile.max_storage_buffers}"
        )


def _check_scratch(binding, signature: dict, bad) -> None:
    """A `scratch` binding: device memory of the kernel's own (grid_sync spills)."""
    this = f"scratch binding '{binding.name:.60}'"
    if binding.name in signature:
        raise bad(f"{this} has the name of a buffer of the run")
    if binding.group != 0 or binding.visibility != "read_write" or binding.is_trap_sidecar:
        raise bad(f"{this} must be read_write in bind group 0")
    if binding.element not in SCRATCH_ELEMENT_TYPES:
        raise bad(f"{this} has element type {binding.element!r:.40}")
    if binding.count is not None or not 1 <= binding.per_invocation < MAX_COUNT:
        raise bad(
            f"{this} needs no element count and 1 to 2^32 - 1 elements per invocation "
            f"(has {binding.count} and {binding.per_invocation})"
        )


def _check_repetition(binding, signature: dict, bad) -> None:
    """The repetition binding (`kernel.repetition`, `vyre.repetition`): the
    runtime binds it, one ui32 per repetition of the run; exactly the
    lowering's `@__vyre_repetition`, never a buffer of the run (the name is
    reserved for it, and the flag on any other binding is forged)."""
    this = f"binding '{binding.name:.60}'"
    if not binding.is_repetition:
        raise bad(f"{this} has the repetition binding's reserved name but is not marked repetition")
    if binding.name != REPETITION_NAME:
        raise bad(f"{this} is marked repetition but is not @{REPETITION_NAME}")
    if REPETITION_NAME in signature:
        raise bad(f"{this} has the name of a buffer of the run")
    shape = (
        binding.group,
        binding.element,
        binding.count,
        binding.memory_class,
        binding.visibility,
        binding.per_invocation,
        binding.is_trap_sidecar,
        binding.no_clear,
    )
    if shape != (0, "ui32", 1, "constant", "read_only", 0, False, False):
        raise bad(
            f"the repetition binding must be a constant read_only ui32[1] in bind group 0 "
            f"(has group {binding.group}, {binding.memory_class} {binding.visibility} "
            f"{binding.element!s:.40}[{binding.count}]"
            f"{', per-invocation' if binding.per_invocation else ''}"
            f"{', trap sidecar' if binding.is_trap_sidecar else ''}"
            f"{', no_clear' if binding.no_clear else ''})"
        )


def _check_indirect(kernel: WgslKernel, signature: dict, where: str) -> None:
    """An indirect kernel reads its grid from a ui32 buffer of the run that it binds."""
    offset = kernel.indirect_offset
    if kernel.indirect is None:
        if offset:
            raise InvalidLaunchError(f"{where}: an indirect grid offset without an indirect grid")
        return
    if kernel.static_grid is not None:
        raise InvalidLaunchError(f"{where}: both a static grid and an indirect one")
    bound = [b for b in kernel.bindings if b.name == kernel.indirect and not b.is_scratch]
    declared = signature.get(kernel.indirect)
    if not bound or declared is None or declared.element != "ui32" or bound[0].is_trap_sidecar:
        raise InvalidLaunchError(
            f"{where}: the indirect grid '{kernel.indirect:.60}' is no ui32 buffer of the run "
            "bound by the kernel"
        )
    count = bound[0].count
    if offset < 0 or offset % 4 or count is None or offset // 4 + 3 > count:
        raise InvalidLaunchError(
            f"{where}: indirect grid offset {offset} bytes does not leave 3 words in "
            f"'{kernel.indirect}' ({count} elements)"
        )


def _fits(size: tuple[int, int, int], profile: ProfileRecord) -> bool:
    x, y, z = size
    return (
        min(size) >= 1
        and all(s <= m for s, m in zip(size, profile.max_workgroup_size))
        and x * y * z <= profile.max_invocations
    )


def _check_launch(kernel: WgslKernel, profile: ProfileRecord, signature: dict, where: str) -> None:
    limits = f"the profile allows {list(profile.max_workgroup_size)}, {profile.max_invocations} invocations"
    if not _fits(kernel.workgroup_size, profile):
        raise InvalidLaunchError(
            f"{where}: workgroup size {list(kernel.workgroup_size)} does not fit: {limits}"
        )
    declared = kernel.program_workgroup_size
    if declared is not None and not _fits(declared, profile):
        raise InvalidLaunchError(
            f"{where}: program workgroup size {list(declared)} does not fit: {limits}"
        )
    grid = kernel.static_grid
    if grid is not None and not all(1 <= g <= MAX_WORKGROUPS_PER_AXIS for g in grid):
        raise InvalidLaunchError(
            f"{where}: grid {list(grid)} is outside [1, {MAX_WORKGROUPS_PER_AXIS}] workgroups per axis"
        )
    _check_indirect(kernel, signature, where)
    if kernel.elements_per_invocation not in (1, 4, 8, 16) or kernel.part < 0:
        raise InvalidLaunchError(
            f"{where}: elements per invocation {kernel.elements_per_invocation}, part {kernel.part}"
        )


def _check_dispatch(kernel: WgslKernel, record: DispatchRecord, where: str) -> None:
    """The kernel launches as its descriptor's dispatch says: the same workgroup,
    count buffers and indirect grid, and a static grid exactly when the dispatch
    has one (a kernel that covers several elements per invocation launches
    fewer workgroups than the dispatch's grid)."""
    launch = (
        kernel.workgroup_size,
        kernel.program_workgroup_size,
        kernel.count_buffers,
        kernel.indirect,
        kernel.indirect_offset,
        kernel.static_grid is None,
    )
    wanted = (
        record.workgroup_size,
        record.program_workgroup_size,
        record.count_buffers,
        record.indirect,
        record.indirect_offset,
        record.grid is None,
    )
    if launch != wanted:
        raise InvalidLaunchError(f"{where}: the kernel does not launch as its dispatch record says")


def _check_element_counts(
    kernel: WgslKernel, module: TargetModuleImage, signature: dict, where: str
) -> None:
    bound = {b.name: b.count for b in kernel.bindings if not b.is_trap_sidecar}
    if len(kernel.count_declared) != len(kernel.count_buffers):
        raise InvalidElementCountError(
            f"{where}: {len(kernel.count_declared)} declared counts for {len(kernel.count_buffers)} count buffers"
        )
    for name, count in zip(kernel.count_buffers, kernel.count_declared):
        if name not in bound and name not in signature:
            raise InvalidElementCountError(
                f"{where}: count buffer '{name:.60}' is neither one of its bindings nor a buffer of the run"
            )
        if not _is_count(count):
            raise InvalidElementCountError(
                f"{where}: count buffer '{name}' has {count} elements, outside [0, 2^32)"
            )
        if name in bound and count != bound[name]:
            raise InvalidElementCountError(
                f"{where}: count buffer '{name}' is declared with {count} elements but bound with {bound[name]}"
            )
    count = module.logical_element_count
    if count is not None and not 1 <= count < MAX_COUNT:
        raise InvalidElementCountError(
            f"fusion group {module.group}: logical element count {count} is outside [1, 2^32)"
        )


def _check_wgsl(kernel: WgslKernel, where: str) -> None:
    if len(kernel.wgsl.encode("utf-8", "surrogatepass")) > MAX_WGSL_BYTES:
        raise InvalidWgslError(
            f"{where}: the WGSL module is larger than {MAX_WGSL_BYTES >> 20} MiB"
        )
    if not kernel.entry_point.isidentifier() or f"fn {kernel.entry_point}(" not in kernel.wgsl:
        raise InvalidWgslError(
            f"{where}: the WGSL module has no entry point {kernel.entry_point!r:.60}"
        )


# ------------------------------------------------------------------ re-derivation


def _check_rederived(bundle: TargetModuleBundle) -> None:
    """Compare `bundle` with what compiling its node programs for its profile gives."""
    expected = _rederived(tuple((n.id, n.name, n.program) for n in bundle.nodes), bundle.profile)
    _check_nodes(bundle, expected)
    if bundle.signature != expected.signature:
        raise SignatureMismatchError(
            "target module bundle run signature is not the one of its node programs: "
            f"{_first_difference(bundle.signature, expected.signature)}"
        )
    if bundle.artifact != expected.artifact:
        raise ArtifactMismatchError(
            f"target module bundle artifact {bundle.artifact[:16]}… is not the artifact of its node programs "
            f"({expected.artifact[:16]}…); the bundle was tampered with or written by another compiler "
            "version: recompile the source"
        )
    shape = [(m.group, m.stage, m.nodes, m.logical_element_count) for m in bundle.modules]
    wanted = [(m.group, m.stage, m.nodes, m.logical_element_count) for m in expected.modules]
    if shape != wanted:
        raise PlanMismatchError(
            "target module bundle modules (group, stage, nodes, element count) are "
            f"{shape}, but the plan of its node programs gives {wanted}"
        )
    for module, want in zip(bundle.modules, expected.modules):
        where = f"fusion group {module.group}"
        if module.program != want.program:
            raise ProgramMismatchError(
                f"{where}: the module's program is not the fusion of its nodes"
            )
        if module.descriptors != want.descriptors:
            raise DescriptorMismatchError(
                f"{where}: a descriptor is not the lowering of the module's program"
            )
        for index, (kernel, wanted_kernel) in enumerate(zip(module.kernels, want.kernels)):
            if kernel != wanted_kernel:
                field = _first_difference(kernel, wanted_kernel)
                raise WgslMismatchError(
                    f"{where} kernel {index}: {field} is not what its descriptor prints"
                )


def _check_nodes(bundle: TargetModuleBundle, expected: TargetModuleBundle) -> None:
    if [n.id for n in bundle.nodes] != list(range(len(bundle.nodes))):
        raise NodeMismatchError("target module bundle node ids are not 0, 1, ... in program order")
    for node, want in zip(bundle.nodes, expected.nodes):
        if node != want:
            raise NodeMismatchError(
                f"node {node.id} (@{node.name:.60}) is not its program's canonical text and name"
            )


def _first_difference(got, want) -> str:
    if isinstance(got, tuple) and isinstance(want, tuple):
        if len(got) != len(want):
            return f"{len(got)} entries, expected {len(want)}"
        for index, (a, b) in enumerate(zip(got, want)):
            if a != b:
                return f"entry {index}: {_first_difference(a, b)}"
        return "no difference"
    if attrs.has(type(got)) and type(got) is type(want):
        for field in attrs.fields(type(got)):
            if getattr(got, field.name) != getattr(want, field.name):
                return f"{field.name}"
    return "value"


@functools.lru_cache(maxsize=32)
def _rederived(
    nodes: tuple[tuple[int, str, str], ...], profile: ProfileRecord
) -> TargetModuleBundle:
    """The bundle `vyre-compile` writes for these node programs and this profile."""
    from vyre_xdsl.megakernel.artifact import build_artifact
    from vyre_xdsl.megakernel.compile import TargetCompileError, compile_selected_modules
    from vyre_xdsl.megakernel.graph import ProgramGraph
    from vyre_xdsl.megakernel.planner import plan

    programs = [parse_program_text(text, f"node {id}") for id, _, text in nodes]
    lowering = profile.lowering_profile()
    try:
        graph = ProgramGraph.from_programs(programs)
        artifact = build_artifact(graph, plan(graph, profile=lowering))
        payload = compile_selected_modules(artifact, lowering)
    except (TargetCompileError, VyreDiagnostic) as error:
        raise PlanMismatchError(
            f"target module bundle node programs do not compile together: {error}"
        ) from None
    return from_json(TargetModuleBundle, json.loads(payload.bytes[DIGEST_BYTES:]), "bundle")
