"""The neutral megakernel artifact: what the planner decided, target-independent.

An `Artifact` holds node records (each program's canonical text), the values
as resources (element counts, lifetimes, first and last stage), every
dependence, the plan (fusion records with group id, stage and members, the
rejected edges with their reason codes, stage barriers, materializations,
cost), the ABI (per value: slot, dtype, access; per node: the values it reads
and writes), the run signature (SPEC section 8) and provenance.

Its identity is `digest()`: BLAKE3 over a domain tag and the canonical JSON
body. `to_bytes()` frames it the upstream way (vyre-semantics section 4.2.7):

    b"VMK0" | u16 schema (LE) | u32 body length (LE) | body | 32-byte digest

with digest = BLAKE3(domain | schema u16 LE | length u64 LE | body).
"""

from __future__ import annotations

import struct
from importlib.metadata import PackageNotFoundError, version

import attrs
import blake3

from vyre_xdsl.abi import BufferSignature, RunSignature
from vyre_xdsl.diagnostics import VyreError
from vyre_xdsl.megakernel.graph import ProgramGraph
from vyre_xdsl.megakernel.planner import Plan
from vyre_xdsl.megakernel.records import RecordShapeError, from_json, to_json
from vyre_xdsl.program_text import canonical_json

ARTIFACT_MAGIC = b"VMK0"
ARTIFACT_SCHEMA_VERSION = 2
ARTIFACT_DOMAIN = b"vyre-xdsl-megakernel-artifact-v2\0"
GRAPH_DOMAIN = b"vyre-xdsl-program-graph-v1\0"
ELEMENT_BYTES = 4  # every element type is one 32-bit word in a buffer


class ArtifactError(VyreError):
    """Artifact bytes that are not a canonical, intact artifact."""


class ArtifactGraphMismatchError(ArtifactError):
    """A decoded artifact whose nodes, values, dependences, ABI, signature or
    provenance are not the ones of its node programs."""


class ArtifactPlanError(ArtifactError):
    """A decoded artifact whose plan does not cover its nodes consistently."""


@attrs.frozen
class NodeRecord:
    id: int
    name: str
    program: str  # canonical program text
    workgroup_size: tuple[int, int, int]
    work: int


@attrs.frozen
class ResourceRecord:
    value: int
    name: str
    element: str
    element_count: int | None  # None: runtime-sized
    byte_count: int | None
    access: str
    lifetime: str
    first_stage: int
    last_stage: int
    materialized: bool  # False: an intermediate that never leaves its fusion group


@attrs.frozen
class ScratchRecord:
    """Per-invocation device memory a fusion group's dispatches need: the values a
    `grid_sync` split spills (`docs/kernel-dialect.md`). No program declares it
    and it never leaves the device; `per_invocation` elements of `element` for
    every invocation the group launches."""

    group: int
    name: str
    element: str
    per_invocation: int


@attrs.frozen
class DependenceRecord:
    producer: int
    consumer: int
    value: int
    kind: str  # data, anti, output


@attrs.frozen
class MaterializationEdge:
    producer: int
    value: int


@attrs.frozen
class FusionRecord:
    id: int
    stage: int
    members: tuple[int, ...]
    legality: str


@attrs.frozen
class FusedEdgeRecord:
    producer: int
    consumer: int
    value: int
    dependence: str  # invocation or workgroup


@attrs.frozen
class RejectionRecord:
    producer: int
    consumer: int
    value: int
    code: str
    message: str


@attrs.frozen
class BarrierRecord:
    before_stage: int
    after_stage: int
    dependences: tuple[int, ...]


@attrs.frozen
class MaterializationRecord:
    value: int
    group: int
    stage: int
    reason: str


@attrs.frozen
class CostRecord:
    semantic_work: int
    launches: int
    materializations: int
    total: int


@attrs.frozen
class PlanRecord:
    fusion: tuple[FusionRecord, ...]
    fused_edges: tuple[FusedEdgeRecord, ...]
    rejections: tuple[RejectionRecord, ...]
    barriers: tuple[BarrierRecord, ...]
    materializations: tuple[MaterializationRecord, ...]
    cost: CostRecord
    candidates_explored: int


@attrs.frozen
class AbiResource:
    slot: int
    value: int
    name: str
    dtype: str
    access: str  # read_only, write_only, read_write, uniform


@attrs.frozen
class AbiEntry:
    node: int
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


@attrs.frozen
class AbiRecord:
    resources: tuple[AbiResource, ...]
    entries: tuple[AbiEntry, ...]


@attrs.frozen
class SignatureBuffer:
    """One `vyre_xdsl.abi.BufferSignature`, as data."""

    name: str
    element: str
    count: int | None
    min_count: int
    requires_input: bool
    is_output: bool
    is_intermediate: bool


@attrs.frozen
class ResourceEnvelope:
    total_bytes: int  # over statically sized resources
    peak_live_bytes: int
    unsized: tuple[str, ...]  # runtime-sized resources (not counted)


@attrs.frozen
class Provenance:
    compiler_version: str
    source_graph: str  # BLAKE3 hex of the graph's canonical JSON


@attrs.frozen
class Artifact:
    schema_version: int
    nodes: tuple[NodeRecord, ...]
    resources: tuple[ResourceRecord, ...]
    dependences: tuple[DependenceRecord, ...]
    materialization_edges: tuple[MaterializationEdge, ...]
    plan: PlanRecord
    scratch: tuple[ScratchRecord, ...]
    abi: AbiRecord
    signature: tuple[SignatureBuffer, ...]
    envelope: ResourceEnvelope
    provenance: Provenance

    def body(self) -> bytes:
        return canonical_json(to_json(self))

    def digest(self) -> bytes:
        return blake3.blake3(ARTIFACT_DOMAIN + self.body()).digest()

    def digest_hex(self) -> str:
        return self.digest().hex()

    def run_signature(self) -> RunSignature:
        return run_signature(self.signature)

    def node(self, node_id: int) -> NodeRecord:
        for record in self.nodes:
            if record.id == node_id:
                return record
        raise KeyError(node_id)

    def to_bytes(self) -> bytes:
        body = self.body()
        header = ARTIFACT_MAGIC + struct.pack("<HI", self.schema_version, len(body))
        return header + body + _framed_digest(self.schema_version, body)

    @classmethod
    def from_bytes(cls, data: bytes) -> Artifact:
        if len(data) < 10 + 32 or data[:4] != ARTIFACT_MAGIC:
            raise ArtifactError("not a megakernel artifact (bad magic or truncated)")
        schema, length = struct.unpack("<HI", data[4:10])
        if schema != ARTIFACT_SCHEMA_VERSION:
            raise ArtifactError(
                f"artifact schema {schema} is unsupported; expected {ARTIFACT_SCHEMA_VERSION}"
            )
        if len(data) != 10 + length + 32:
            raise ArtifactError(f"artifact length mismatch: header says {length} body bytes")
        body, digest = data[10 : 10 + length], data[10 + length :]
        if _framed_digest(schema, body) != digest:
            raise ArtifactError("artifact digest mismatch")
        import json

        try:
            artifact = from_json(cls, json.loads(body))
        except (ValueError, RecordShapeError) as error:
            raise ArtifactError(f"malformed artifact: {error}") from None
        except RecursionError:
            raise ArtifactError("malformed artifact: JSON nested too deeply") from None
        if artifact.body() != body:
            raise ArtifactError("artifact body is not canonical JSON")
        artifact.validate()
        return artifact

    def validate(self) -> None:
        """Check a decoded artifact against its own node programs: everything the
        program graph decides is re-derived and compared (`ArtifactGraphMismatchError`),
        and the plan, which also depends on the target profile, must place every
        node in exactly one fusion group, in stages that respect every dependence
        (`ArtifactPlanError`)."""
        from vyre_xdsl.diagnostics import VyreDiagnostic
        from vyre_xdsl.program_text import ProgramTextError, parse_program_text

        if [n.id for n in self.nodes] != list(range(len(self.nodes))):
            raise ArtifactGraphMismatchError("artifact node ids are not 0, 1, ... in program order")
        try:
            programs = [parse_program_text(n.program, f"node {n.id}") for n in self.nodes]
            graph = ProgramGraph.from_programs(programs)
        except (ProgramTextError, VyreDiagnostic) as error:
            raise ArtifactGraphMismatchError(
                f"artifact node programs are malformed: {error}"
            ) from None
        derived = {
            "nodes": tuple(
                NodeRecord(n.id, n.name, n.text, n.workgroup, n.work) for n in graph.nodes
            ),
            "dependences": tuple(
                DependenceRecord(d.producer, d.consumer, d.value, d.kind) for d in graph.dependences
            ),
            "materialization_edges": tuple(
                MaterializationEdge(m.producer, m.value) for m in graph.materializations
            ),
            "abi": _abi(graph),
            "signature": signature_records(graph.signature),
        }
        for field, value in derived.items():
            if getattr(self, field) != value:
                raise ArtifactGraphMismatchError(
                    f"artifact {field} are not the ones of its node programs"
                )
        if self.provenance.source_graph != _graph_digest(self.nodes):
            raise ArtifactGraphMismatchError("artifact provenance names another program graph")
        own = [
            (r.value, r.name, r.element, r.element_count, r.access, r.lifetime)
            for r in self.resources
        ]
        if own != [(v.id, v.name, v.element, v.count, v.access, v.lifetime) for v in graph.values]:
            raise ArtifactGraphMismatchError(
                "artifact resources are not the values of its node programs"
            )
        self._validate_plan()
        self._validate_scratch(graph)

    def _validate_scratch(self, graph: ProgramGraph) -> None:
        """The scratch records are those the plan's groups need (re-derived)."""
        groups = [(g.id, g.members) for g in self.plan.fusion]
        try:
            derived = scratch_records(graph, groups)
        except VyreError as error:
            raise ArtifactPlanError(
                f"artifact fusion groups do not fuse and split: {error}"
            ) from None
        if self.scratch != derived:
            raise ArtifactPlanError(
                "artifact scratch resources are not the ones its fusion groups need"
            )

    def _validate_plan(self) -> None:
        groups = self.plan.fusion
        members = sorted(n for g in groups for n in g.members)
        if members != list(range(len(self.nodes))):
            raise ArtifactPlanError("artifact fusion groups do not hold every node exactly once")
        if len({g.id for g in groups}) != len(groups) or any(g.stage < 0 for g in groups):
            raise ArtifactPlanError("artifact fusion groups repeat an id or have a negative stage")
        group_of = {n: g for g in groups for n in g.members}
        for d in self.dependences:
            before, after = group_of[d.producer], group_of[d.consumer]
            if before.id != after.id and before.stage >= after.stage:
                raise ArtifactPlanError(
                    f"artifact plan runs node {d.consumer} (stage {after.stage}) no later than node "
                    f"{d.producer} (stage {before.stage}), which it depends on"
                )


def _framed_digest(schema: int, body: bytes) -> bytes:
    return blake3.blake3(ARTIFACT_DOMAIN + struct.pack("<HQ", schema, len(body)) + body).digest()


def signature_records(sig: RunSignature) -> tuple[SignatureBuffer, ...]:
    return tuple(
        SignatureBuffer(
            name=b.name,
            element=b.element,
            count=b.count,
            min_count=b.min_count,
            requires_input=b.requires_input,
            is_output=b.is_output,
            is_intermediate=b.is_intermediate,
        )
        for b in sig.buffers
    )


def run_signature(records: tuple[SignatureBuffer, ...]) -> RunSignature:
    return RunSignature(tuple(BufferSignature(**attrs.asdict(r)) for r in records))


def compiler_version() -> str:
    try:
        return f"vyre_xdsl {version('vyre_xdsl')}"
    except PackageNotFoundError:  # pragma: no cover - running from a plain checkout
        return "vyre_xdsl (unknown version)"


# ------------------------------------------------------------------ building


def build_artifact(graph: ProgramGraph, plan: Plan) -> Artifact:
    """The artifact of `plan` over `graph` (deterministic: same input, same bytes)."""
    resources = _resources(graph, plan)
    nodes = tuple(NodeRecord(n.id, n.name, n.text, n.workgroup, n.work) for n in graph.nodes)
    return Artifact(
        schema_version=ARTIFACT_SCHEMA_VERSION,
        nodes=nodes,
        resources=resources,
        dependences=tuple(
            DependenceRecord(d.producer, d.consumer, d.value, d.kind) for d in graph.dependences
        ),
        materialization_edges=tuple(
            MaterializationEdge(m.producer, m.value) for m in graph.materializations
        ),
        plan=_plan_record(plan),
        scratch=scratch_records(graph, [(g.id, g.members) for g in plan.groups]),
        abi=_abi(graph),
        signature=signature_records(graph.signature),
        envelope=_envelope(resources, plan.stages),
        provenance=Provenance(compiler_version(), _graph_digest(nodes)),
    )


def scratch_records(
    graph: ProgramGraph, groups: list[tuple[int, tuple[int, ...]]]
) -> tuple[ScratchRecord, ...]:
    """The scratch each group's fused program needs once split at its grid_syncs,
    by (group, name)."""
    from vyre_xdsl.lowering.split import is_scratch_buffer, split_program
    from vyre_xdsl.megakernel.planner import fuse_group

    records = []
    for group, members in sorted(groups):
        need: dict[str, ScratchRecord] = {}
        for part in split_program(fuse_group(graph, sorted(members))):
            for buffer in filter(is_scratch_buffer, part.buffers()):
                name = buffer.buffer_name
                count = max(
                    buffer.static_count or 0, need[name].per_invocation if name in need else 0
                )
                need[name] = ScratchRecord(group, name, buffer.element, count)
        records += [need[name] for name in sorted(need)]
    return tuple(records)


def _plan_record(plan: Plan) -> PlanRecord:
    return PlanRecord(
        fusion=tuple(FusionRecord(g.id, g.stage, g.members, g.legality) for g in plan.groups),
        fused_edges=tuple(
            FusedEdgeRecord(e.producer, e.consumer, e.value, cls) for e, cls in plan.fused
        ),
        rejections=tuple(
            RejectionRecord(r.edge.producer, r.edge.consumer, r.edge.value, r.code, r.message)
            for r in plan.rejections
        ),
        barriers=tuple(
            BarrierRecord(b.before_stage, b.after_stage, b.dependences) for b in plan.barriers
        ),
        materializations=tuple(
            MaterializationRecord(m.value, m.group, m.stage, m.reason)
            for m in plan.materializations
        ),
        cost=CostRecord(
            plan.cost.semantic_work, plan.cost.launches, plan.cost.materializations, plan.cost.total
        ),
        candidates_explored=plan.candidates_explored,
    )


def _resources(graph: ProgramGraph, plan: Plan) -> tuple[ResourceRecord, ...]:
    final = max(plan.stages - 1, 0)
    materialized = {m.value for m in plan.materializations}
    records = []
    for value in graph.values:
        writer_stages = [plan.stage_of_node(w) for w in value.writers]
        user_stages = writer_stages + [plan.stage_of_node(r) for r in value.readers]
        last = max(user_stages, default=0)
        if value.lifetime in ("output", "retained"):
            last = final
        records.append(
            ResourceRecord(
                value=value.id,
                name=value.name,
                element=value.element,
                element_count=value.count,
                byte_count=None if value.count is None else value.count * ELEMENT_BYTES,
                access=value.access,
                lifetime=value.lifetime,
                first_stage=min(writer_stages) if writer_stages and not value.requires_input else 0,
                last_stage=last,
                materialized=value.id in materialized or not value.writers,
            )
        )
    return tuple(records)


def _abi(graph: ProgramGraph) -> AbiRecord:
    names = {v.name: v.id for v in graph.values}
    return AbiRecord(
        resources=tuple(AbiResource(v.id, v.id, v.name, v.element, v.access) for v in graph.values),
        entries=tuple(
            AbiEntry(
                node=n.id,
                inputs=tuple(sorted(names[b] for b in n.reads if b in names)),
                outputs=tuple(sorted(names[b] for b in n.writes if b in names)),
            )
            for n in graph.nodes
        ),
    )


def _envelope(resources: tuple[ResourceRecord, ...], stages: int) -> ResourceEnvelope:
    sized = [r for r in resources if r.byte_count is not None]
    peak = max(
        (
            sum(r.byte_count for r in sized if r.first_stage <= s <= r.last_stage)  # type: ignore[misc]
            for s in range(max(stages, 1))
        ),
        default=0,
    )
    return ResourceEnvelope(
        total_bytes=sum(r.byte_count for r in sized),  # type: ignore[misc]
        peak_live_bytes=peak,
        unsized=tuple(r.name for r in resources if r.byte_count is None),
    )


def _graph_digest(nodes: tuple[NodeRecord, ...]) -> str:
    return blake3.blake3(GRAPH_DOMAIN + canonical_json(to_json(nodes))).hexdigest()
