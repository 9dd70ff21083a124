"""Target-module bundles: canonical bytes, every `from_bytes` rejection, byte flips,
payloads and the envelope, artifact framing."""

from __future__ import annotations

import json

import attrs
import blake3
import pytest

from vyre_xdsl.diagnostics import VyreError
from vyre_xdsl.megakernel import bundle as B
from vyre_xdsl.megakernel import envelope as E
from vyre_xdsl.megakernel.artifact import Artifact, ArtifactError
from vyre_xdsl.megakernel.compile import compile_module

from ..api.test_repetition import COUNTER
from ..support import EXAMPLES
from .test_megakernel_cases import MKL003, PIPELINE, module_of


@pytest.fixture(scope="module")
def small() -> bytes:
    """A one-program bundle (examples/axpy.mlir)."""
    return compile_module(module_of((EXAMPLES / "axpy.mlir").read_text())).bundle_bytes()


@pytest.fixture(scope="module")
def staged() -> bytes:
    """A bundle with two modules in two stages."""
    return compile_module(module_of(MKL003)).bundle_bytes()


@pytest.fixture(scope="module")
def repeating() -> bytes:
    """One fused group of two programs that read `vyre.repetition` (its kernel
    binds the repetition word)."""
    return compile_module(module_of(COUNTER)).bundle_bytes()


def document(data: bytes) -> dict:
    return json.loads(data[32:])


def signed(body: bytes | dict) -> bytes:
    """Bytes with a correct digest, so that the check under test is reached."""
    if isinstance(body, dict):
        body = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    return blake3.blake3(body).digest() + body


# ---------------------------------------------------------------------- encoding


def test_layout_is_blake3_of_the_body_then_canonical_json(small):
    body = small[32:]
    assert small[:32] == blake3.blake3(body).digest()
    assert body == json.dumps(json.loads(body), sort_keys=True, separators=(",", ":")).encode()
    assert json.loads(body)["schema_version"] == 2


@pytest.mark.parametrize("name", ["small", "staged", "repeating"])
def test_round_trip_is_byte_exact(name, request):
    data = request.getfixturevalue(name)
    assert B.TargetModuleBundle.from_bytes(data).to_bytes() == data


def test_modules_are_in_stage_group_order(staged):
    bundle = B.TargetModuleBundle.from_bytes(staged)
    assert [(m.stage, m.group, m.nodes) for m in bundle.modules] == [(0, 0, (0,)), (1, 1, (1,))]


def test_compiling_twice_gives_the_same_bytes():
    assert (
        compile_module(module_of(PIPELINE)).bundle_bytes()
        == compile_module(module_of(PIPELINE)).bundle_bytes()
    )


def test_new_sorts_modules(staged):
    bundle = B.TargetModuleBundle.from_bytes(staged)
    shuffled = B.TargetModuleBundle.new(
        bundle.artifact,
        bundle.profile,
        bundle.signature,
        bundle.nodes,
        list(reversed(bundle.modules)),
    )
    assert shuffled.to_bytes() == staged


# ---------------------------------------------------------------------- rejections


@pytest.mark.parametrize("length", [0, 1, 31])
def test_truncated(small, length):
    with pytest.raises(B.BundleTruncatedError, match="truncated"):
        B.TargetModuleBundle.from_bytes(small[:length])


def test_truncated_body_is_a_digest_mismatch(small):
    with pytest.raises(B.BundleDigestMismatchError):
        B.TargetModuleBundle.from_bytes(small[:-1])
    with pytest.raises(B.BundleDigestMismatchError):
        B.TargetModuleBundle.from_bytes(small[:32])


def test_digest_mismatch(small):
    body = bytearray(small)
    body[40] ^= 0x01
    with pytest.raises(B.BundleDigestMismatchError, match="digest mismatch"):
        B.TargetModuleBundle.from_bytes(bytes(body))


def test_every_single_byte_flip_is_refused(small):
    for position in range(len(small)):
        for mask in (0xFF, 0x01):
            flipped = bytearray(small)
            flipped[position] ^= mask
            with pytest.raises(B.BundleError):
                B.TargetModuleBundle.from_bytes(bytes(flipped))


@pytest.mark.parametrize(
    "body",
    [b"not json", b"[1, 2]", b"\xff\xfe", b'{"schema_version": 2}', b"[" * 100000 + b"]" * 100000],
    ids=["not-json", "array", "not-utf8", "missing-keys", "nested-100000-deep"],
)
def test_malformed_body(body):
    with pytest.raises(B.MalformedBundleError):
        B.TargetModuleBundle.from_bytes(signed(body))


def test_malformed_field_types(small):
    doc = document(small)
    doc["modules"][0]["group"] = "0"
    with pytest.raises(B.MalformedBundleError, match=r"modules\[0\].group: expected an integer"):
        B.TargetModuleBundle.from_bytes(signed(doc))
    doc = document(small)
    doc["modules"][0]["kernels"][0]["workgroup_size"] = [64, 1]
    with pytest.raises(B.MalformedBundleError, match="expected 3 elements"):
        B.TargetModuleBundle.from_bytes(signed(doc))
    doc = document(small)
    doc["extra"] = 1
    with pytest.raises(B.MalformedBundleError, match="unexpected key 'extra'"):
        B.TargetModuleBundle.from_bytes(signed(doc))


def test_module_naming_an_unknown_node(small):
    doc = document(small)
    doc["modules"][0]["nodes"] = [5]
    with pytest.raises(B.MalformedBundleError, match="node 5"):
        B.TargetModuleBundle.from_bytes(signed(doc))


@pytest.mark.parametrize("schema", [1, 3, "2", None])
def test_unsupported_schema(small, schema):
    doc = document(small)
    doc["schema_version"] = schema
    with pytest.raises(B.UnsupportedSchemaError, match="schema"):
        B.TargetModuleBundle.from_bytes(signed(doc))


def test_group_with_no_nodes(small):
    doc = document(small)
    doc["modules"][0]["nodes"] = []
    with pytest.raises(B.EmptyGroupError, match="fusion group 0 has no selected nodes"):
        B.TargetModuleBundle.from_bytes(signed(doc))


@pytest.mark.parametrize(
    "where, text",
    [
        ("module", "garbage"),
        ("module", "vyre.program @p workgroup_size [0, 1, 1] {\n}\n"),  # parses, does not verify
        (
            "node",
            "vyre.program @p workgroup_size [64, 1, 1] {\n}\nvyre.program @q workgroup_size [64, 1, 1] {\n}\n",
        ),
        ("node", "vyre.program @p workgroup_size [64, 1, 1] {\n  %0 = vyre.load @x[%0] : f32\n}\n"),
    ],
)
def test_malformed_program(small, where, text):
    doc = document(small)
    if where == "module":
        doc["modules"][0]["program"] = text
    else:
        doc["nodes"][0]["program"] = text
    with pytest.raises(B.MalformedProgramError, match="malformed"):
        B.TargetModuleBundle.from_bytes(signed(doc))


def _edit_descriptor(data: bytes, edit) -> bytes:
    doc = document(data)
    doc["modules"][0]["descriptors"][0] = edit(doc["modules"][0]["descriptors"][0])
    return signed(doc)


@pytest.mark.parametrize(
    "edit, match",
    [
        (lambda text: "kernel.garbage", "invalid"),
        # both bindings on slot 0: kernel-verify reports a duplicate slot
        (lambda text: text.replace("slot 1 group 0", "slot 0 group 0"), "invalid"),
        # a valid descriptor, but not the one its kernel was printed from
        (lambda text: text.replace('entry "main"', 'entry "other"'), "does not match"),
        (
            lambda text: text + text.replace("kernel.descriptor @", "kernel.descriptor @copy_"),
            "exactly one",
        ),
    ],
    ids=["unparsable", "kernel-verify", "mismatch", "two"],
)
def test_invalid_descriptor(small, edit, match):
    with pytest.raises(B.InvalidDescriptorError, match=match):
        B.TargetModuleBundle.from_bytes(_edit_descriptor(small, edit))


def test_descriptor_count_must_match_kernels(small):
    doc = document(small)
    doc["modules"][0]["descriptors"] = []
    with pytest.raises(
        B.InvalidDescriptorError, match="0 descriptors and 1 dispatch records for 1 kernels"
    ):
        B.TargetModuleBundle.from_bytes(signed(doc))


def test_non_canonical_order(staged):
    doc = document(staged)
    doc["modules"].reverse()
    with pytest.raises(B.NonCanonicalOrderError, match="canonical stage/group order"):
        B.TargetModuleBundle.from_bytes(signed(doc))
    doc = document(staged)
    doc["modules"][1] = dict(doc["modules"][0])  # a duplicate (stage, group)
    with pytest.raises(B.NonCanonicalOrderError):
        B.TargetModuleBundle.from_bytes(signed(doc))


def test_non_canonical_encoding(small):
    pretty = json.dumps(document(small), sort_keys=True, indent=1).encode()
    with pytest.raises(B.NonCanonicalEncodingError, match="canonically encoded"):
        B.TargetModuleBundle.from_bytes(signed(pretty))


def _kernel(doc: dict, module: int = 0) -> dict:
    return doc["modules"][module]["kernels"][0]


def _swap_module_parts(doc: dict, *keys: str) -> None:
    first, second = doc["modules"]
    for key in keys:
        first[key], second[key] = second[key], first[key]


# Forged fields (the digest rebuilt): each is refused with its own error.
FORGERIES = {
    "profile": (
        lambda d: d["profile"].update(max_invocations=0),
        B.InvalidProfileError,
        "max_invocations 0",
    ),
    "profile-target": (
        lambda d: d["profile"].update(identity="spirv"),
        B.InvalidProfileError,
        "generation 2",
    ),
    "signature-element": (
        lambda d: d["signature"][0].update(element="i64"),
        B.InvalidSignatureError,
        "element type 'i64'",
    ),
    "signature-count": (
        lambda d: d["signature"][0].update(count=1 << 32),
        B.InvalidSignatureError,
        "2\\^32",
    ),
    "signature-name": (
        lambda d: d["signature"].append(dict(d["signature"][0])),
        B.InvalidSignatureError,
        "second time",
    ),
    "shape-unknown-buffer": (
        lambda d: d["shapes"].update(nope=[2]),
        B.InvalidSignatureError,
        "no such buffer",
    ),
    "shape-size": (
        lambda d: d["shapes"].update({d["signature"][0]["name"]: [3, 5]}),
        B.InvalidSignatureError,
        "holds 15 elements",
    ),
    "shape-dimension": (
        lambda d: d["shapes"].update({d["signature"][0]["name"]: [0, -1]}),
        B.InvalidSignatureError,
        "is not a shape",
    ),
    "binding-slot": (
        lambda d: _kernel(d)["bindings"][1].update(slot=_kernel(d)["bindings"][0]["slot"]),
        B.InvalidBindingError,
        "reuses group 0 slot 0",
    ),
    "binding-visibility": (
        lambda d: _kernel(d)["bindings"][0].update(visibility="everything"),
        B.InvalidBindingError,
        "visibility",
    ),
    "binding-class": (
        lambda d: _kernel(d)["bindings"][0].update(memory_class="private"),
        B.InvalidBindingError,
        "memory class",
    ),
    "binding-name": (
        lambda d: _kernel(d)["bindings"][0].update(name="zz"),
        B.InvalidBindingError,
        "not a buffer of the run",
    ),
    "workgroup": (
        lambda d: _kernel(d).update(workgroup_size=[512, 1, 1]),
        B.InvalidLaunchError,
        "does not fit",
    ),
    "grid": (
        lambda d: _kernel(d).update(static_grid=[1 << 16, 1, 1]),
        B.InvalidLaunchError,
        "65535",
    ),
    "count-buffer": (
        lambda d: _kernel(d).update(count_buffers=["zz"], count_declared=[1]),
        B.InvalidElementCountError,
        "neither one of its bindings",
    ),
    "count-declared": (
        lambda d: _kernel(d).update(count_buffers=["x"], count_declared=[7]),
        B.InvalidElementCountError,
        "declared with 7",
    ),
    "logical-count": (
        lambda d: d["modules"][0].update(logical_element_count=0),
        B.InvalidElementCountError,
        "logical",
    ),
    "wgsl-entry": (lambda d: _kernel(d).update(wgsl=""), B.InvalidWgslError, "no entry point"),
    "artifact-digest": (
        lambda d: d.update(artifact="xyz"),
        B.InvalidArtifactDigestError,
        "64 lowercase hex",
    ),
    "node-name": (
        lambda d: d["nodes"][0].update(name="q"),
        B.NodeMismatchError,
        "canonical text and name",
    ),
    "signature-flag": (
        lambda d: d["signature"][0].update(is_output=True),
        B.SignatureMismatchError,
        "entry 0: is_output",
    ),
    "artifact": (
        lambda d: d.update(artifact="0" * 64),
        B.ArtifactMismatchError,
        "another compiler version",
    ),
    "stage": (
        lambda d: d["modules"][0].update(stage=1),
        B.PlanMismatchError,
        "plan of its node programs",
    ),
    "wgsl": (
        lambda d: _kernel(d).update(wgsl="// x\n" + _kernel(d)["wgsl"]),
        B.WgslMismatchError,
        "wgsl is not",
    ),
    "kernel-part": (lambda d: _kernel(d).update(part=1), B.WgslMismatchError, "part is not"),
}

STAGED_FORGERIES = {
    "program": (
        lambda d: _swap_module_parts(d, "program"),
        B.ProgramMismatchError,
        "not the fusion",
    ),
    "descriptor": (
        lambda d: _swap_module_parts(d, "descriptors", "dispatches", "kernels"),
        B.DescriptorMismatchError,
        "not the lowering",
    ),
}


def _repetition(doc: dict) -> dict:
    """The repetition binding of the (one) kernel of the `repeating` bundle."""
    (binding,) = [b for b in _kernel(doc)["bindings"] if b["name"] == "__vyre_repetition"]
    return binding


def _buffer_binding(doc: dict, name: str) -> dict:
    (binding,) = [b for b in _kernel(doc)["bindings"] if b["name"] == name]
    return binding


_NOT_ONE_WORD = "must be a constant read_only ui32\\[1\\] in bind group 0"

# Forged repetition bindings (of the `repeating` bundle): the one binding the
# runtime fills with the repetition, exactly as the lowering emits it.
REPETITION_FORGERIES = {
    "repetition-name": (
        lambda d: _repetition(d).update(name="rep"),
        B.InvalidBindingError,
        "marked repetition but is not @__vyre_repetition",
    ),
    "repetition-flag-on-a-buffer": (
        lambda d: _buffer_binding(d, "acc").update(is_repetition=True),
        B.InvalidBindingError,
        "'acc' is marked repetition",
    ),
    "repetition-flag-dropped": (
        lambda d: _repetition(d).update(is_repetition=False),
        B.InvalidBindingError,
        "reserved name but is not marked repetition",
    ),
    "repetition-element": (
        lambda d: _repetition(d).update(element="f32"),
        B.InvalidBindingError,
        _NOT_ONE_WORD,
    ),
    "repetition-count": (
        lambda d: _repetition(d).update(count=2),
        B.InvalidBindingError,
        _NOT_ONE_WORD,
    ),
    "repetition-runtime-sized": (
        lambda d: _repetition(d).update(count=None),
        B.InvalidBindingError,
        _NOT_ONE_WORD,
    ),
    "repetition-class": (
        lambda d: _repetition(d).update(memory_class="global"),
        B.InvalidBindingError,
        _NOT_ONE_WORD,
    ),
    "repetition-uniform": (
        lambda d: _repetition(d).update(memory_class="uniform"),
        B.InvalidBindingError,
        _NOT_ONE_WORD,
    ),
    "repetition-visibility": (
        lambda d: _repetition(d).update(visibility="read_write"),
        B.InvalidBindingError,
        _NOT_ONE_WORD,
    ),
    "repetition-group": (
        lambda d: _repetition(d).update(group=1),
        B.InvalidBindingError,
        _NOT_ONE_WORD,
    ),
    "repetition-sidecar": (
        lambda d: _repetition(d).update(is_trap_sidecar=True),
        B.InvalidBindingError,
        _NOT_ONE_WORD,
    ),
    "repetition-no-clear": (
        lambda d: _repetition(d).update(no_clear=True),
        B.InvalidBindingError,
        _NOT_ONE_WORD,
    ),
    "repetition-per-invocation": (
        lambda d: _repetition(d).update(per_invocation=1),
        B.InvalidBindingError,
        _NOT_ONE_WORD,
    ),
    "repetition-twice": (
        lambda d: _kernel(d)["bindings"].append(dict(_repetition(d), slot=9)),
        B.InvalidBindingError,
        "bound twice",
    ),
    # a well-formed repetition binding at a slot the WGSL does not declare: the
    # re-derived kernel has it elsewhere
    "repetition-slot": (
        lambda d: _repetition(d).update(slot=9),
        B.WgslMismatchError,
        "bindings is not what its descriptor prints",
    ),
    "repetition-dropped": (
        lambda d: _kernel(d)["bindings"].remove(_repetition(d)),
        B.WgslMismatchError,
        "bindings is not what its descriptor prints",
    ),
}


@pytest.mark.parametrize(
    "name", sorted(FORGERIES) + sorted(STAGED_FORGERIES) + sorted(REPETITION_FORGERIES)
)
def test_forged_field_is_refused_with_its_own_error(small, staged, repeating, name):
    edit, error, match = (
        FORGERIES.get(name) or STAGED_FORGERIES.get(name) or REPETITION_FORGERIES[name]
    )
    source = (
        staged if name in STAGED_FORGERIES else repeating if name in REPETITION_FORGERIES else small
    )
    doc = document(source)
    edit(doc)
    with pytest.raises(error, match=match):
        B.TargetModuleBundle.from_bytes(signed(doc))


def test_a_bundle_for_a_larger_device_is_refused_before_running():
    from vyre_xdsl.megakernel.run import check_device_fits
    from vyre_xdsl.runtime import DeviceLimitError
    from vyre_xdsl.target_profile import TargetProfile

    text = (EXAMPLES / "axpy.mlir").read_text().replace("[64, 1, 1]", "[512, 1, 1]")
    profile = TargetProfile(max_workgroup_size=(1024, 1024, 64), max_invocations=1024)
    bundle = B.TargetModuleBundle.from_bytes(
        compile_module(module_of(text), profile).bundle_bytes()
    )
    check_device_fits(bundle, {"max-compute-invocations-per-workgroup": 512})
    with pytest.raises(DeviceLimitError, match="max-compute-invocations-per-workgroup = 512"):
        check_device_fits(bundle, {"max-compute-invocations-per-workgroup": 256})


def test_every_rejection_is_its_own_bundle_error():
    classes = [
        B.BundleTruncatedError,
        B.BundleDigestMismatchError,
        B.MalformedBundleError,
        B.UnsupportedSchemaError,
        B.EmptyGroupError,
        B.MalformedProgramError,
        B.InvalidDescriptorError,
        B.NonCanonicalOrderError,
        B.NonCanonicalEncodingError,
        B.InvalidProfileError,
        B.InvalidSignatureError,
        B.InvalidBindingError,
        B.InvalidLaunchError,
        B.InvalidElementCountError,
        B.InvalidWgslError,
        B.InvalidArtifactDigestError,
        B.NodeMismatchError,
        B.SignatureMismatchError,
        B.ArtifactMismatchError,
        B.PlanMismatchError,
        B.ProgramMismatchError,
        B.DescriptorMismatchError,
        B.WgslMismatchError,
    ]
    assert len(set(classes)) == len(classes)
    assert all(issubclass(c, B.BundleError) and issubclass(c, VyreError) for c in classes)


# ---------------------------------------------------------------------- payload and envelope


@pytest.fixture(scope="module")
def envelope() -> E.ArtifactEnvelope:
    return compile_module(module_of(MKL003))


def test_payload_entries_and_bindings(envelope):
    payload = envelope.require_target_payload(E.WGSL_FORMAT)
    artifact = envelope.artifact
    assert payload.artifact == artifact.digest_hex()
    assert [e.name for e in payload.entries] == sorted(e.name for e in payload.entries)
    names = {r.value: r.name for r in artifact.resources}
    bound = [[names[b.resource] for b in e.resource_bindings] for e in payload.entries]
    assert bound == [["x", "t"], ["t", "out"]]
    bundle = B.TargetModuleBundle.from_bytes(payload.bytes)
    assert bundle.artifact == artifact.digest_hex()


def test_attach_checks_the_association(envelope):
    payload = envelope.payloads[0]
    other = compile_module(module_of(PIPELINE))
    with pytest.raises(E.PayloadAssociationError, match="compiled for artifact"):
        E.ArtifactEnvelope(other.artifact).attach_target_payload(payload)


def test_attach_checks_the_digest(envelope):
    payload = envelope.payloads[0]
    tampered = attrs.evolve(payload, entries=payload.entries[:1])
    with pytest.raises(E.PayloadDigestMismatchError):
        E.ArtifactEnvelope(envelope.artifact).attach_target_payload(tampered)
    tampered = attrs.evolve(payload, bytes=payload.bytes + b" ")
    with pytest.raises(E.PayloadDigestMismatchError):
        E.ArtifactEnvelope(envelope.artifact).attach_target_payload(tampered)


def test_attach_refuses_a_duplicate_format(envelope):
    with pytest.raises(E.DuplicatePayloadError):
        envelope.attach_target_payload(envelope.payloads[0])


def test_require_target_payload(envelope):
    with pytest.raises(E.PayloadVersionSkewError, match="version 2"):
        envelope.require_target_payload(E.TargetPayloadFormat("wgsl", 3))
    with pytest.raises(E.MissingPayloadError):
        envelope.require_target_payload(E.TargetPayloadFormat("spirv", 1))


def test_payload_validation(envelope):
    payload = envelope.payloads[0]
    artifact = envelope.artifact
    with pytest.raises(E.PayloadError, match="empty"):
        E.TargetPayload.new(artifact, E.WGSL_FORMAT, payload.profile, list(payload.entries), b"")
    twice = [payload.entries[0], payload.entries[0]]
    with pytest.raises(E.PayloadError, match="unique"):
        E.TargetPayload.new(artifact, E.WGSL_FORMAT, payload.profile, twice, payload.bytes)
    too_big = attrs.evolve(payload.entries[0], workgroup_size=(512, 1, 1))
    with pytest.raises(E.PayloadError, match="exceeds the profile"):
        E.TargetPayload.new(artifact, E.WGSL_FORMAT, payload.profile, [too_big], payload.bytes)
    dangling = attrs.evolve(
        payload.entries[0],
        resource_bindings=(attrs.evolve(payload.entries[0].resource_bindings[0], resource=99),),
    )
    with pytest.raises(E.PayloadError, match="resource 99"):
        E.TargetPayload.new(artifact, E.WGSL_FORMAT, payload.profile, [dangling], payload.bytes)


def test_a_payload_entry_records_the_repetition_slot(repeating):
    envelope = compile_module(module_of(COUNTER))
    payload = envelope.require_target_payload(E.WGSL_FORMAT)
    (entry,) = payload.entries
    (kernel,) = B.TargetModuleBundle.from_bytes(repeating).kernels()
    (binding,) = [b for b in kernel.bindings if b.is_repetition]
    assert entry.repetition_slot == binding.slot
    names = {r.value: r.name for r in envelope.artifact.resources}
    assert sorted(names[b.resource] for b in entry.resource_bindings) == ["acc", "seen"]
    # the runtime's word may not share a slot with a resource of the run
    clash = attrs.evolve(entry, repetition_slot=entry.resource_bindings[0].slot)
    with pytest.raises(E.PayloadError, match="binds one \\(group, slot\\) twice"):
        E.TargetPayload.new(
            envelope.artifact, E.WGSL_FORMAT, payload.profile, [clash], payload.bytes
        )
    # a kernel that reads no repetition records none
    plain = compile_module(module_of(MKL003)).require_target_payload(E.WGSL_FORMAT)
    assert all(e.repetition_slot is None for e in plain.entries)


# ---------------------------------------------------------------------- artifact bytes


def test_artifact_round_trip_and_tamper(envelope):
    data = envelope.artifact.to_bytes()
    assert data[:4] == b"VMK0"
    assert Artifact.from_bytes(data) == envelope.artifact
    assert Artifact.from_bytes(data).to_bytes() == data
    for position in (0, 5, 12, len(data) // 2, len(data) - 1):
        flipped = bytearray(data)
        flipped[position] ^= 0xFF
        with pytest.raises(ArtifactError):
            Artifact.from_bytes(bytes(flipped))
    with pytest.raises(ArtifactError):
        Artifact.from_bytes(data[:-1])
