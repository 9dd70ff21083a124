"""Target payloads and the envelope that attaches them to their artifact
(vyre-semantics section 4.4, upstream `envelope.rs`).

A `TargetPayload` is one target's compilation of one artifact: its format
(`("wgsl", 2)`), the profile, one entry point per dispatch (workgroup size,
grid, dynamic shared bytes, and the canonical resource bindings that tie each
descriptor slot to an artifact value), and the target bytes (the target-module
bundle). `TargetPayload.new` validates it; its digest covers the artifact
digest, format, profile, entries and BLAKE3 of the bytes.

`ArtifactEnvelope.attach_target_payload` accepts a payload only for its own
artifact (association) and only when the payload's recorded digest is the
digest of its contents; `require_target_payload(format)` returns the exact
format or says why not (version skew, missing).
"""

from __future__ import annotations

import attrs
import blake3

from vyre_xdsl.diagnostics import VyreError
from vyre_xdsl.megakernel.artifact import Artifact
from vyre_xdsl.megakernel.bundle import ProfileRecord
from vyre_xdsl.megakernel.records import to_json
from vyre_xdsl.program_text import canonical_json

PAYLOAD_SCHEMA_VERSION = 5
PAYLOAD_DOMAIN = b"vyre-xdsl-target-payload-v5\0"


class PayloadError(VyreError):
    """A target payload that violates the payload contract (MKC017)."""


class PayloadVersionSkewError(PayloadError):
    """The envelope holds the format's identity at another version (MKC018)."""


class PayloadDigestMismatchError(PayloadError):
    """The payload's recorded digest is not the digest of its contents (MKC019)."""


class PayloadAssociationError(PayloadError):
    """The payload was compiled for another artifact (MKC020)."""


class MissingPayloadError(PayloadError):
    """The envelope has no payload of the format's identity (MKC021)."""


class DuplicatePayloadError(PayloadError):
    pass


@attrs.frozen(order=True)
class TargetPayloadFormat:
    identity: str
    version: int


WGSL_FORMAT = TargetPayloadFormat("wgsl", 2)


@attrs.frozen
class TargetResourceBinding:
    resource: int  # artifact value id
    group: int
    slot: int
    memory: str  # global or constant
    access: str  # read_only, write_only, read_write


@attrs.frozen
class TargetScratchBinding:
    scratch: int  # index of the artifact's scratch record
    group: int
    slot: int


@attrs.frozen
class TargetEntryPoint:
    name: str
    node: int  # the group's first node
    group: int
    workgroup_size: tuple[int, int, int]
    # None: decided by runtime-sized buffers, or read from `indirect` at launch
    grid_size: tuple[int, int, int] | None
    dynamic_shared_bytes: int
    resource_bindings: tuple[TargetResourceBinding, ...]
    scratch_bindings: tuple[TargetScratchBinding, ...] = ()
    indirect: int | None = None  # artifact value holding the grid (dispatch_workgroups_indirect)
    indirect_offset: int = 0  # byte offset of the grid in it
    # bind group 0 slot of the repetition word (`vyre.repetition`), which the
    # runtime binds per repetition of the run; None: the kernel reads none
    repetition_slot: int | None = None


@attrs.frozen
class TargetPayload:
    artifact: str  # digest hex of the artifact it was compiled from
    format: TargetPayloadFormat
    profile: ProfileRecord
    entries: tuple[TargetEntryPoint, ...]
    bytes: bytes = attrs.field(repr=lambda b: f"<{len(b)} bytes>")
    digest: str = ""

    @classmethod
    def new(
        cls,
        artifact: Artifact,
        format: TargetPayloadFormat,
        profile: ProfileRecord,
        entries: list[TargetEntryPoint],
        data: bytes,
    ) -> TargetPayload:
        ordered = tuple(
            attrs.evolve(
                e,
                resource_bindings=tuple(
                    sorted(e.resource_bindings, key=lambda b: (b.group, b.slot))
                ),
                scratch_bindings=tuple(sorted(e.scratch_bindings, key=lambda b: (b.group, b.slot))),
            )
            for e in sorted(entries, key=lambda e: e.name)
        )
        _validate(artifact, format, profile, ordered, data)
        payload = cls(artifact.digest_hex(), format, profile, ordered, bytes(data))
        return attrs.evolve(payload, digest=payload.content_digest())

    def content_digest(self) -> str:
        document = {
            "schema": PAYLOAD_SCHEMA_VERSION,
            "artifact": self.artifact,
            "format": to_json(self.format),
            "profile": to_json(self.profile),
            "entries": to_json(self.entries),
            "bytes": blake3.blake3(self.bytes).hexdigest(),
        }
        return blake3.blake3(PAYLOAD_DOMAIN + canonical_json(document)).hexdigest()


def _validate(
    artifact: Artifact,
    format: TargetPayloadFormat,
    profile: ProfileRecord,
    entries: tuple[TargetEntryPoint, ...],
    data: bytes,
) -> None:
    if not format.identity or format.version <= 0:
        raise PayloadError(f"invalid payload format {format}")
    if not data:
        raise PayloadError("target payload bytes are empty")
    names = [e.name for e in entries]
    if any(not n for n in names) or len(set(names)) != len(names):
        raise PayloadError("entry point names must be non-empty and unique")
    node_ids = {n.id for n in artifact.nodes}
    values = {r.value for r in artifact.resources}
    for entry in entries:
        _validate_entry(entry, node_ids, values, profile)
        _validate_scratch_and_indirect(entry, artifact)


def _validate_scratch_and_indirect(entry: TargetEntryPoint, artifact: Artifact) -> None:
    where = f"entry point {entry.name}"
    for binding in entry.scratch_bindings:
        if not 0 <= binding.scratch < len(artifact.scratch):
            raise PayloadError(
                f"{where} binds scratch {binding.scratch}, which the artifact does not have"
            )
        if artifact.scratch[binding.scratch].group != entry.group:
            raise PayloadError(f"{where} binds the scratch of another fusion group")
    scratch = [b.scratch for b in entry.scratch_bindings]
    if len(set(scratch)) != len(scratch):
        raise PayloadError(f"{where} binds one scratch resource twice")
    slots = [(b.group, b.slot) for b in entry.resource_bindings + entry.scratch_bindings]
    if entry.repetition_slot is not None:
        if not 0 <= entry.repetition_slot < 1 << 24:
            raise PayloadError(
                f"{where}: repetition slot {entry.repetition_slot} is outside the host range"
            )
        slots.append((0, entry.repetition_slot))
    if len(set(slots)) != len(slots):
        raise PayloadError(f"{where} binds one (group, slot) twice")
    if entry.indirect is None:
        if entry.indirect_offset:
            raise PayloadError(f"{where} has an indirect grid offset but no indirect grid")
        return
    if entry.grid_size is not None:
        raise PayloadError(f"{where} has both a static grid and an indirect one")
    if entry.indirect not in {b.resource for b in entry.resource_bindings}:
        raise PayloadError(f"{where} reads its indirect grid from a resource it does not bind")
    if entry.indirect_offset < 0 or entry.indirect_offset % 4:
        raise PayloadError(
            f"{where}: indirect grid offset {entry.indirect_offset} is not a multiple of 4 bytes"
        )


def _validate_entry(
    entry: TargetEntryPoint, node_ids: set[int], values: set[int], profile: ProfileRecord
) -> None:
    where = f"entry point {entry.name}"
    if entry.node not in node_ids:
        raise PayloadError(f"{where} names node {entry.node}, which the artifact does not have")
    if min(entry.workgroup_size) <= 0 or (
        entry.grid_size is not None and min(entry.grid_size) <= 0
    ):
        raise PayloadError(f"{where} has a zero workgroup or grid extent")
    if any(s > m for s, m in zip(entry.workgroup_size, profile.max_workgroup_size)):
        raise PayloadError(f"{where}: workgroup {list(entry.workgroup_size)} exceeds the profile")
    x, y, z = entry.workgroup_size
    if x * y * z > profile.max_invocations:
        raise PayloadError(f"{where}: {x * y * z} invocations per workgroup exceed the profile")
    if entry.dynamic_shared_bytes > profile.max_dynamic_shared_bytes:
        raise PayloadError(
            f"{where}: {entry.dynamic_shared_bytes} bytes of workgroup memory exceed the profile"
        )
    slots = [(b.group, b.slot) for b in entry.resource_bindings]
    if len(set(slots)) != len(slots):
        raise PayloadError(f"{where} binds one (group, slot) twice")
    resources = [b.resource for b in entry.resource_bindings]
    if len(set(resources)) != len(resources):
        raise PayloadError(f"{where} binds one resource twice")
    missing = [r for r in resources if r not in values]
    if missing:
        raise PayloadError(f"{where} binds resource {missing[0]}, which the artifact does not have")


@attrs.frozen
class ArtifactEnvelope:
    """A neutral artifact with its target payloads (sorted by format)."""

    artifact: Artifact
    payloads: tuple[TargetPayload, ...] = ()

    def attach_target_payload(self, payload: TargetPayload) -> ArtifactEnvelope:
        if payload.artifact != self.artifact.digest_hex():
            raise PayloadAssociationError(
                f"the {payload.format.identity} payload was compiled for artifact "
                f"{payload.artifact[:16]}…, not this one ({self.artifact.digest_hex()[:16]}…)"
            )
        if payload.digest != payload.content_digest():
            raise PayloadDigestMismatchError(
                f"the {payload.format.identity} payload's digest does not match its contents"
            )
        if any(p.format == payload.format for p in self.payloads):
            raise DuplicatePayloadError(f"the envelope already holds a {payload.format} payload")
        return attrs.evolve(
            self, payloads=tuple(sorted(self.payloads + (payload,), key=lambda p: p.format))
        )

    def require_target_payload(self, format: TargetPayloadFormat) -> TargetPayload:
        for payload in self.payloads:
            if payload.format == format:
                return payload
        same = [p.format.version for p in self.payloads if p.format.identity == format.identity]
        if same:
            raise PayloadVersionSkewError(
                f"the envelope holds {format.identity} payload version {same[0]}, not {format.version}"
            )
        raise MissingPayloadError(f"the envelope holds no {format.identity} payload")

    def bundle_bytes(self, format: TargetPayloadFormat = WGSL_FORMAT) -> bytes:
        """The target-module bundle of `format` (the `.vkb` file)."""
        return self.require_target_payload(format).bytes
