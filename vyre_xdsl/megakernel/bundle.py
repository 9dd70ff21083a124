"""Target-module bundles: the `.vkb` file (seed `TargetModuleBundle`, schema 2).

A bundle holds one `TargetModuleImage` per fusion group, ordered by
(stage, group). An image carries the group's nodes, the canonical text of the
fused program, and per dispatch (a `grid_sync` split gives several) the
`kernel.descriptor` text and the `WgslKernel` (entry point, WGSL, bindings,
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
| `InvalidDescriptorError` | a descriptor does not parse, fails `kernel-verify`, or does not match its kernel |
| `NonCanonicalOrderError` | modules are not strictly ordered by (stage, group) |
| `NonCanonicalEncodingError` | the body is not the canonical JSON of what it decodes to |
"""

from __future__ import annotations

import json

import attrs
import blake3
from xdsl.utils.exceptions import ParseError

from vyre_xdsl.abi import RunSignature
from vyre_xdsl.backends.wgsl.kernel_module import WgslKernel
from vyre_xdsl.diagnostics import VyreDiagnostic, VyreError
from vyre_xdsl.megakernel.artifact import SignatureBuffer, run_signature
from vyre_xdsl.canonical import ProgramTextError, canonical_json, parse_program_text
from vyre_xdsl.megakernel.records import RecordShapeError, from_json, to_json

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
        from vyre_xdsl.lowering.profile import TargetProfile

        return TargetProfile(
            max_workgroup_size=self.max_workgroup_size,
            max_invocations=self.max_invocations,
            max_storage_buffers=self.max_storage_buffers,
            max_workgroup_storage_bytes=self.max_dynamic_shared_bytes,
            subgroup_size=self.subgroup_size,
        )


@attrs.frozen
class TargetModuleImage:
    """One fusion group, compiled."""

    group: int
    stage: int
    nodes: tuple[int, ...]
    program: str  # canonical text of the fused program
    descriptors: tuple[str, ...]  # one kernel.descriptor per dispatch, in order
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

    @classmethod
    def new(
        cls,
        artifact: str,
        profile: ProfileRecord,
        signature: tuple[SignatureBuffer, ...],
        nodes: tuple[BundleNode, ...],
        modules: list[TargetModuleImage],
    ) -> TargetModuleBundle:
        """A bundle with its modules in canonical (stage, group) order."""
        return cls(
            schema_version=TARGET_MODULE_BUNDLE_SCHEMA_VERSION,
            artifact=artifact,
            profile=profile,
            signature=signature,
            nodes=tuple(sorted(nodes, key=lambda n: n.id)),
            modules=tuple(sorted(modules, key=lambda m: (m.stage, m.group))),
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


def _json_object(body: bytes) -> dict:
    try:
        document = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise MalformedBundleError(f"target module bundle body is not JSON: {error}") from None
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
    if not module.descriptors or len(module.descriptors) != len(module.kernels):
        raise InvalidDescriptorError(
            f"{where} has {len(module.descriptors)} descriptors for {len(module.kernels)} kernels"
        )
    for index, (text, kernel) in enumerate(zip(module.descriptors, module.kernels)):
        try:
            parsed = parse_module(text, f"{where} descriptor {index}")
            verify_module(parsed)
            verify_descriptors(parsed, profile)
        except ParseError as error:
            raise InvalidDescriptorError(f"{where} descriptor {index} is invalid: {error.msg}") from None
        except VyreDiagnostic as error:
            raise InvalidDescriptorError(f"{where} descriptor {index} is invalid: {error}") from None
        found = descriptors(parsed)
        if len(found) != 1 or len(list(parsed.ops)) != 1:
            raise InvalidDescriptorError(f"{where} descriptor {index} is not exactly one kernel.descriptor")
        if found[0].id != kernel.id or found[0].entry != kernel.entry_point:
            raise InvalidDescriptorError(
                f"{where} descriptor {index} (id {found[0].id[:16]}…) does not match its kernel "
                f"(id {kernel.id[:16]}…)"
            )
