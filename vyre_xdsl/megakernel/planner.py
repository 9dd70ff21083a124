"""The megakernel planner: fusion groups, legality, cost and stages (SPEC section 7).

The planner is small and deterministic (vyre-semantics section 4.2, step 4):

1. Candidates. The baseline puts every program in its own group; one
   candidate per data edge that is legal on its own; and the max-fusion
   candidate, which unions (union-find) every data edge, in canonical order,
   that is legal against the groups built so far, repeated until nothing more
   merges. Each one-edge candidate is extended the same way, so every
   candidate but the baseline is maximal.
2. Legality (`check_merge`): merging the groups of an edge's producer and
   consumer is refused with the first of these stable codes that applies:

   | code | refused when |
   | --- | --- |
   | `MKL001_UNKNOWN_ENDPOINT` | the edge names a program or value the graph does not have |
   | `MKL002_DISCONNECTED_VALUE` | the producer does not write the value, the consumer does not read it, or the consumer does not come later |
   | `MKL006_SYNCHRONIZATION_BOUNDARY` | either program contains `vyre.barrier grid_sync` (it is split into several dispatches) or is marked `non_composable` |
   | `MKL003_LIFETIME_BOUNDARY` | the edge's own dependence crosses workgroups (`vyre_xdsl.fusion` classifies it `grid`): the value must outlive the producer's dispatch |
   | `MKL004_SEVERAL_CONSUMERS` | the edge itself is fine, but merging the two groups would also fuse another dependence between them (another consumer of the value, another buffer, a write-after-read or write-after-write) that crosses workgroups |
   | `MKL007_CYCLE` | the merged group would both precede and follow another group |
   | `MKL005_WORKGROUP_MISMATCH` | `vyre-fuse` refuses the merged group's programs: a member whose workgroup differs from the fused one uses workgroup memory, barriers or local/workgroup ids, over-dispatch (fused workgroup > 4x the largest member's), or a member whose invocations the fused dispatch does not cover (the message is fusion's) |

   | `MKL009_INDIRECT_DISPATCH` | either program launches an indirect grid (`{indirect = @grid}`): its grid is only known on the GPU, so it is never fused |
   | `MKL011_EXPLICIT_GRID` | either program launches an explicit grid (`grid [GX, GY, GZ]`) or reads `vyre.num_workgroups`: its ids or that count belong to its own grid, which a fused dispatch would not keep, so it is never fused |
   | `MKL010_NO_GAIN` | the fused group would lose against its programs run one by one: by the fusion cost model (`vyre_xdsl.fusion.cost`), its idle workgroups cost more than the launches and bytes it saves |
   | `MKL008_RESOURCE_LIMIT` | the fused program does not fit the target profile (storage buffers per stage, workgroup memory, workgroup size): lowering refuses it |

   The last three checks are a trial: the merged group is fused and lowered
   exactly as target compilation will do it, so every planned group compiles;
   a trial that still needs a `grid_sync` split is `MKL004`.
   Invocation-local dependences are legal as they are; workgroup-local ones
   are legal because `vyre-fuse` puts a workgroup barrier between the arms.
3. Cost: `semantic_work + 1000 x groups + 100 x data edges crossing groups`;
   the cheapest candidate wins, ties going to the lexicographically smaller
   group assignment.
4. Group ids number the groups in order of their first program; stages are
   the longest-path depth of the group graph (every dependence kind counts).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import attrs

from vyre_xdsl.diagnostics import VyreDiagnostic, VyreError, unlocated_text
from vyre_xdsl.dialects.vyre import BarrierOp, ProgramOp
from vyre_xdsl.megakernel.graph import DATA, Dependence, ProgramGraph
from vyre_xdsl.target_profile import DEFAULT_PROFILE, TargetProfile

SINGLE_NODE_GROUP = "MKL000_SINGLE_NODE_GROUP"
LEGAL_DATAFLOW = "MKL000_LEGAL_DATAFLOW"
MKL001_UNKNOWN_ENDPOINT = "MKL001_UNKNOWN_ENDPOINT"
MKL002_DISCONNECTED_VALUE = "MKL002_DISCONNECTED_VALUE"
MKL003_LIFETIME_BOUNDARY = "MKL003_LIFETIME_BOUNDARY"
MKL004_SEVERAL_CONSUMERS = "MKL004_SEVERAL_CONSUMERS"
MKL005_WORKGROUP_MISMATCH = "MKL005_WORKGROUP_MISMATCH"
MKL006_SYNCHRONIZATION_BOUNDARY = "MKL006_SYNCHRONIZATION_BOUNDARY"
MKL007_CYCLE = "MKL007_CYCLE"
MKL008_RESOURCE_LIMIT = "MKL008_RESOURCE_LIMIT"
MKL009_INDIRECT_DISPATCH = "MKL009_INDIRECT_DISPATCH"
MKL010_NO_GAIN = "MKL010_NO_GAIN"
MKL011_EXPLICIT_GRID = "MKL011_EXPLICIT_GRID"

REJECTION_CODES = (
    MKL001_UNKNOWN_ENDPOINT,
    MKL002_DISCONNECTED_VALUE,
    MKL003_LIFETIME_BOUNDARY,
    MKL004_SEVERAL_CONSUMERS,
    MKL005_WORKGROUP_MISMATCH,
    MKL006_SYNCHRONIZATION_BOUNDARY,
    MKL007_CYCLE,
    MKL008_RESOURCE_LIMIT,
    MKL009_INDIRECT_DISPATCH,
    MKL010_NO_GAIN,
    MKL011_EXPLICIT_GRID,
)

#: dependence classes (from `vyre_xdsl.fusion`)
INVOCATION_LOCAL, WORKGROUP_LOCAL, CROSS_WORKGROUP = "invocation", "workgroup", "cross"

WORK_WEIGHT, LAUNCH_WEIGHT, MATERIALIZATION_WEIGHT = 1, 1000, 100

#: classify(graph, dependence) -> INVOCATION_LOCAL | WORKGROUP_LOCAL | CROSS_WORKGROUP
Classifier = Callable[[ProgramGraph, Dependence], str]


def default_classifier(graph: ProgramGraph, dep: Dependence) -> str:
    """The dependence class of `vyre_xdsl.fusion` for one dependence."""
    from vyre_xdsl.megakernel.classify import classify_dependence

    return classify_dependence(graph, dep)


@attrs.frozen
class Rules:
    """What legality is judged by: the dependence classifier and the target profile."""

    classify: Classifier = default_classifier
    profile: TargetProfile = DEFAULT_PROFILE


@attrs.frozen
class Rejection:
    edge: Dependence
    code: str
    message: str


@attrs.frozen
class Cost:
    semantic_work: int
    launches: int
    materializations: int

    @property
    def total(self) -> int:
        return (
            WORK_WEIGHT * self.semantic_work
            + LAUNCH_WEIGHT * self.launches
            + MATERIALIZATION_WEIGHT * self.materializations
        )


@attrs.frozen
class FusionGroup:
    id: int
    stage: int
    members: tuple[int, ...]
    legality: str


@attrs.frozen
class StageBarrier:
    """The dependences (indices into `graph.dependences`) that cross into `after_stage`."""

    before_stage: int
    after_stage: int
    dependences: tuple[int, ...]


@attrs.frozen
class MaterializedValue:
    value: int
    group: int
    stage: int
    reason: str  # output, retained, cross_group_use


@attrs.frozen
class Plan:
    groups: tuple[FusionGroup, ...]
    node_groups: tuple[int, ...]  # group id of each node
    fused: tuple[tuple[Dependence, str], ...]  # data edges inside a group, with their class
    rejections: tuple[Rejection, ...]  # data edges between groups, with the reason
    barriers: tuple[StageBarrier, ...]
    materializations: tuple[MaterializedValue, ...]
    cost: Cost
    candidates_explored: int

    @property
    def stages(self) -> int:
        return 1 + max((g.stage for g in self.groups), default=-1)

    def stage_of_node(self, node: int) -> int:
        return self.groups[self.node_groups[node]].stage


# ------------------------------------------------------------------ union-find


class UnionFind:
    """Disjoint sets over program ids; the root of a set is its smallest member."""

    def __init__(self, n: int, parent: Sequence[int] | None = None):
        self.parent = list(parent) if parent is not None else list(range(n))

    def find(self, x: int) -> int:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def copy(self) -> UnionFind:
        return UnionFind(len(self.parent), self.parent)

    def members(self, x: int) -> list[int]:
        root = self.find(x)
        return [k for k in range(len(self.parent)) if self.find(k) == root]

    def assignment(self) -> tuple[int, ...]:
        """Group id of every node: groups numbered by their first node."""
        ids: dict[int, int] = {}
        return tuple(ids.setdefault(self.find(k), len(ids)) for k in range(len(self.parent)))


# ------------------------------------------------------------------ legality


def has_grid_sync(program: ProgramOp) -> bool:
    return any(isinstance(op, BarrierOp) and op.is_grid_sync for op in program.walk())


def fused_workgroup(sizes: Sequence[tuple[int, int, int]]) -> tuple[int, int, int]:
    return tuple(max(s[a] for s in sizes) for a in range(3))  # type: ignore[return-value]


def _describe(graph: ProgramGraph, dep: Dependence) -> str:
    producer, consumer = graph.nodes[dep.producer].name, graph.nodes[dep.consumer].name
    value = graph.values[dep.value].name
    what = {
        "data": f"reads @{value} written by @{producer}",
        "anti": f"overwrites @{value} read by @{producer}",
        "output": f"overwrites @{value} written by @{producer}",
    }[dep.kind]
    return f"@{consumer} {what}"


def check_merge(
    graph: ProgramGraph, groups: UnionFind, edge: Dependence, rules: Rules | None = None
) -> Rejection | None:
    """Why the groups of `edge`'s endpoints cannot be merged, or None when they can."""
    rules = rules or Rules()
    n, m = len(graph.nodes), len(graph.values)
    if not (0 <= edge.producer < n and 0 <= edge.consumer < n and 0 <= edge.value < m):
        return Rejection(
            edge,
            MKL001_UNKNOWN_ENDPOINT,
            f"edge {edge} names a program or value the graph does not have",
        )
    reason = (
        _disconnected(graph, edge)
        or _synchronization(graph, edge)
        or _edge_class(graph, edge, rules.classify)
        or _group_hazard(graph, groups, edge, rules.classify)
        or _cycle(graph, groups, edge)
        or _fusion_trial(graph, groups, edge, rules.profile)
    )
    return None if reason is None else Rejection(edge, *reason)


def _disconnected(graph: ProgramGraph, edge: Dependence) -> tuple[str, str] | None:
    producer, consumer = graph.nodes[edge.producer], graph.nodes[edge.consumer]
    value = graph.values[edge.value].name
    if edge.kind != DATA:
        return MKL002_DISCONNECTED_VALUE, f"a {edge.kind} dependence is not a dataflow edge"
    if value not in producer.writes:
        return MKL002_DISCONNECTED_VALUE, f"@{producer.name} does not write @{value}"
    if value not in consumer.reads:
        return MKL002_DISCONNECTED_VALUE, f"@{consumer.name} does not read @{value}"
    if edge.consumer <= edge.producer:
        return MKL002_DISCONNECTED_VALUE, f"@{consumer.name} does not run after @{producer.name}"
    return None


def _synchronization(graph: ProgramGraph, edge: Dependence) -> tuple[str, str] | None:
    for node in (graph.nodes[edge.producer], graph.nodes[edge.consumer]):
        if has_grid_sync(node.program):
            return MKL006_SYNCHRONIZATION_BOUNDARY, (
                f"@{node.name} contains a grid_sync barrier; it is split into separate dispatches"
            )
        if node.program.non_composable:
            return MKL006_SYNCHRONIZATION_BOUNDARY, f"@{node.name} is marked non_composable"
        if node.program.indirect_buffer is not None:
            return MKL009_INDIRECT_DISPATCH, (
                f"@{node.name} launches an indirect grid (read from "
                f"@{node.program.indirect_buffer}); it is never fused with another program"
            )
        if node.program.explicit_grid is not None:
            return MKL011_EXPLICIT_GRID, (
                f"@{node.name} launches an explicit grid {list(node.program.explicit_grid)}; "
                "it is never fused with another program"
            )
        if node.program.fixed_launch:
            return MKL011_EXPLICIT_GRID, (
                f"@{node.name} reads vyre.num_workgroups; it is never fused with another program"
            )
    return None


def _edge_class(
    graph: ProgramGraph, edge: Dependence, classify: Classifier
) -> tuple[str, str] | None:
    if classify(graph, edge) == CROSS_WORKGROUP:
        return MKL003_LIFETIME_BOUNDARY, (
            f"{_describe(graph, edge)} across workgroups; the value must be materialized "
            "between dispatches"
        )
    return None


def _group_hazard(
    graph: ProgramGraph, groups: UnionFind, edge: Dependence, classify: Classifier
) -> tuple[str, str] | None:
    left = set(groups.members(edge.producer))
    right = set(groups.members(edge.consumer))
    for dep in graph.dependences:
        if dep == edge:
            continue
        joins = (dep.producer in left and dep.consumer in right) or (
            dep.producer in right and dep.consumer in left
        )
        if joins and classify(graph, dep) == CROSS_WORKGROUP:
            return MKL004_SEVERAL_CONSUMERS, (
                f"merging would also fuse a dependence that crosses workgroups: {_describe(graph, dep)}"
            )
    return None


def _cycle(graph: ProgramGraph, groups: UnionFind, edge: Dependence) -> tuple[str, str] | None:
    merged = groups.copy()
    merged.union(edge.producer, edge.consumer)
    root = merged.find(edge.producer)
    successors = _group_successors(graph, merged)
    # the merged group is on a cycle iff it reaches itself through another group
    stack = [s for s in successors.get(root, ()) if s != root]
    seen: set[int] = set()
    while stack:
        group = stack.pop()
        if group == root:
            names = ", ".join(f"@{graph.nodes[k].name}" for k in merged.members(root))
            return MKL007_CYCLE, f"the group of {names} would both precede and follow another group"
        if group not in seen:
            seen.add(group)
            stack.extend(successors.get(group, ()))
    return None


def _fusion_trial(
    graph: ProgramGraph, groups: UnionFind, edge: Dependence, profile: TargetProfile
) -> tuple[str, str] | None:
    """Fuse and lower the merged group's programs exactly as target compilation will.

    `vyre-fuse` refusing (workgroup geometry, over-dispatch, an arm whose
    invocations the fused dispatch does not cover) is MKL005; a fused program
    that needs a `grid_sync` split is MKL004 (a dependence between the groups
    crosses workgroups in the fused geometry); lowering refusing it for the
    target profile is MKL008. Memoised per member set and profile."""
    members = tuple(sorted(set(groups.members(edge.producer)) | set(groups.members(edge.consumer))))
    key = ("fusion-trial", members, profile)
    if key not in graph.memo:
        graph.memo[key] = _trial(graph, members, profile)
    return graph.memo[key]


def _trial(
    graph: ProgramGraph, members: tuple[int, ...], profile: TargetProfile
) -> tuple[str, str] | None:
    from vyre_xdsl.backends.wgsl import lowered_module
    from vyre_xdsl.fusion.cost import benefit, explain

    try:
        outcome = _fuse_group_outcome(graph, members)
    except VyreDiagnostic as error:
        return MKL005_WORKGROUP_MISMATCH, unlocated_text(error)
    fused = outcome.program
    names = ", ".join(f"@{graph.nodes[k].name}" for k in members)
    if has_grid_sync(fused):
        return MKL004_SEVERAL_CONSUMERS, (
            f"fusing {names} needs a dispatch split: a dependence between them crosses workgroups "
            "in the fused workgroup"
        )
    if benefit(outcome) < 0:
        return MKL010_NO_GAIN, f"fusing {names} would lose: {explain(outcome)}"
    try:
        lowered_module([fused], profile)
    except VyreError as error:
        return (
            MKL008_RESOURCE_LIMIT,
            f"the fused program does not fit the target: {unlocated_text(error)}",
        )
    return None


def group_intermediates(graph: ProgramGraph, members: Sequence[int]) -> tuple[str, ...]:
    """Intermediates of the module (SPEC section 8) written and read only inside `members`:
    the fused program need not store them."""
    inside = set(members)
    return tuple(
        v.name
        for v in graph.values
        if v.is_intermediate and set(v.writers) <= inside and set(v.readers) <= inside
    )


def fuse_group(graph: ProgramGraph, members: Sequence[int]) -> ProgramOp:
    """The fused program of a group (`vyre-fuse`, splitting at grid_sync where needed)."""
    return _fuse_group_outcome(graph, members).program


def _fuse_group_outcome(graph: ProgramGraph, members: Sequence[int]):
    from vyre_xdsl.fusion.fuse import fuse_with_outcome

    programs = [graph.nodes[k].program for k in members]
    return fuse_with_outcome(
        programs, split_grid_sync=True, intermediates=group_intermediates(graph, members)
    )


def _group_successors(graph: ProgramGraph, groups: UnionFind) -> dict[int, set[int]]:
    successors: dict[int, set[int]] = {}
    for dep in graph.dependences:
        a, b = groups.find(dep.producer), groups.find(dep.consumer)
        if a != b:
            successors.setdefault(a, set()).add(b)
    return successors


# ------------------------------------------------------------------ search


def cost_of(graph: ProgramGraph, assignment: Sequence[int]) -> Cost:
    crossing = sum(
        1 for d in graph.data_edges() if assignment[d.producer] != assignment[d.consumer]
    )
    return Cost(
        semantic_work=sum(node.work for node in graph.nodes),
        launches=len(set(assignment)),
        materializations=crossing,
    )


def extend(graph: ProgramGraph, groups: UnionFind, rules: Rules) -> UnionFind:
    """`groups` with every data edge merged that is legal against the groups so
    far, in canonical edge order, repeated until nothing more merges."""
    search = _Search(graph, rules)
    return search.extend(search.state_of(groups)).union_find()


def candidates(graph: ProgramGraph, rules: Rules) -> list[UnionFind]:
    """The baseline, max-fusion (the baseline extended), and for every edge that
    is legal on its own, that one merge extended: distinct assignments only."""
    return [state.union_find() for state in _Search(graph, rules).candidates()]


def plan(
    graph: ProgramGraph,
    classify: Classifier | None = None,
    profile: TargetProfile = DEFAULT_PROFILE,
) -> Plan:
    """The cheapest legal plan for `graph` (deterministic).

    Every candidate but the baseline is maximal (no data edge between two of
    its groups can be merged), so each edge left between groups carries the
    reason it was refused.
    """
    from vyre_xdsl.megakernel.classify import memoized

    rules = Rules(memoized(classify or default_classifier), profile)
    search = _Search(graph, rules)
    explored = search.candidates()
    chosen = min(explored, key=lambda s: (cost_of(graph, s.assignment()).total, s.assignment()))
    return _plan_of(graph, search, chosen, rules, len(explored))


def _plan_of(
    graph: ProgramGraph, search: _Search, state: _State, rules: Rules, explored: int
) -> Plan:
    assignment = state.assignment()
    stages = group_stages(graph, assignment)
    members: dict[int, list[int]] = {}
    for node, group in enumerate(assignment):
        members.setdefault(group, []).append(node)
    fusion_groups = tuple(
        FusionGroup(g, stages[g], tuple(ms), SINGLE_NODE_GROUP if len(ms) == 1 else LEGAL_DATAFLOW)
        for g, ms in sorted(members.items())
    )
    fused, rejections = [], []
    for k, edge in enumerate(search.edges):
        if assignment[edge.producer] == assignment[edge.consumer]:
            fused.append((edge, rules.classify(graph, edge)))
        else:
            reason = search.check(state, k)
            if reason is None:
                raise AssertionError(f"the selected plan leaves the legal edge {edge} unfused")
            rejections.append(Rejection(edge, *reason))
    return Plan(
        groups=fusion_groups,
        node_groups=assignment,
        fused=tuple(fused),
        rejections=tuple(rejections),
        barriers=_barriers(graph, assignment, stages),
        materializations=_materializations(graph, assignment, stages),
        cost=cost_of(graph, assignment),
        candidates_explored=explored,
    )


# ------------------------------------------------------------------ near-linear search
#
# `_Search` computes exactly what `check_merge`, `extend` and the candidate list
# above define (tests/megakernel/test_planner_identical.py compares it with a copy of the
# original quadratic planner), in near-linear time on long chains:
#
# - the checks that depend on the edge only (MKL002, MKL006, MKL009, MKL003) run
#   once per edge;
# - the groups are a union-find whose roots carry an immutable summary (size,
#   span, members on demand, and for pointwise groups the buffers still open);
#   MKL004 looks only at the dependences of the smaller group's members;
# - MKL007 needs no search when every group is an interval of program order and
#   the two groups are adjacent intervals (all dependences run forward, so no
#   other group can be both after and before the merged one); otherwise the
#   group graph is searched as `_cycle` does;
# - the trial (MKL005/MKL004/MKL010/MKL008) is decided without fusing when both
#   groups are *pointwise* (`_pointwise`) with the same workgroup and buffer
#   length: fusion then cannot refuse, places no barrier, guards no arm (every
#   arm launches the same grid, so `benefit` >= 1), forwards every load of a
#   buffer an earlier member stored, and drops each group intermediate whose
#   first writer precedes its first reader; the fused kernel needs no trap
#   sidecar (no member does), so it fits the target iff its remaining buffers
#   fit `max_storage_buffers` (and its workgroup the workgroup limits). Any other
#   case runs the real trial, memoised per member set;
# - a candidate's extension stops as soon as its partition equals the max-fusion
#   run's partition after the same edge of the first pass (a 128-bit partition
#   hash): from there both runs take the same decisions, so they end alike.

_MASK = (1 << 128) - 1
_MIX = 0x9E3779B97F4A7C15F39CC0605CEDC835
_POINTWISE_OPS = frozenset(
    ("vyre.buffer", "vyre.invocation_id", "vyre.const", "vyre.load", "vyre.store")
    + ("vyre.add", "vyre.sub", "vyre.mul")
)
_POINTWISE_ACCESS = frozenset(("read_only", "write_only", "read_write"))


def _mix(key: int) -> int:
    return ((key ^ (key >> 61)) * _MIX) & _MASK


def _pointwise(node) -> tuple | None:
    """(workgroup, buffer length) when the node's program is pointwise: top-level
    straight-line ops among `_POINTWISE_OPS`, a 1-D workgroup, every declared
    host buffer of one static length, accessed (only loaded or only stored, at
    most one store) exactly at `vyre.invocation_id x`, no trap sidecar needed.
    (`_Search` also requires that no buffer name has two element types.)"""
    from vyre_xdsl.dialects.vyre import BufferOp, InvocationIdOp, LoadOp, StoreOp
    from vyre_xdsl.lowering.lower import needs_sidecar

    program = node.program
    if program.non_composable or program.indirect_buffer is not None:
        return None
    if program.workgroup[1:] != (1, 1):
        return None
    counts, loaded, stored = set(), set(), []
    for op in program.body.block.ops:
        if op.name not in _POINTWISE_OPS or op.regions:
            return None
        if isinstance(op, BufferOp):
            if op.is_workgroup or op.access_mode not in _POINTWISE_ACCESS:
                return None
            counts.add(op.static_count)
        elif isinstance(op, InvocationIdOp):
            if op.axis.value.data != 0:
                return None
        elif isinstance(op, LoadOp | StoreOp):
            owner = op.index.owner
            if not isinstance(owner, InvocationIdOp) or owner.axis.value.data != 0:
                return None
            (loaded.add if isinstance(op, LoadOp) else stored.append)(op.buffer_name)
    declared = {b.buffer_name for b in program.buffers()}
    if (
        len(counts) != 1
        or None in counts
        or len(stored) != len(set(stored))
        or loaded & set(stored)
        or loaded | set(stored) != declared
        or needs_sidecar(program)
    ):
        return None
    return program.workgroup, counts.pop()


class _Group:
    """The immutable summary of one group (shared by every state that has it)."""

    __slots__ = ("size", "lo", "hi", "key", "kind", "open", "closed", "parts", "_members")

    def __init__(self, size, lo, hi, key, kind, open_, closed, parts, members=None):
        self.size, self.lo, self.hi, self.key = size, lo, hi, key
        self.kind = kind  # pointwise (workgroup, length), or None
        self.open = open_  # pointwise: value -> members touching it, for values touched outside too
        self.closed = closed  # pointwise: values touched only inside that its fused program keeps
        self.parts = parts
        self._members = members

    @property
    def convex(self) -> bool:
        return self.hi - self.lo + 1 == self.size

    def members(self) -> tuple[int, ...]:
        if self._members is None:
            found, stack = [], [self]
            while stack:
                group = stack.pop()
                if group._members is not None:
                    found.extend(group._members)
                else:
                    stack.extend(group.parts)
            self._members = tuple(sorted(found))
        return self._members


class _State:
    """A partition of the programs: union-find (the root of a set is its
    smallest member, as `UnionFind`) with a `_Group` per root."""

    __slots__ = ("parent", "groups", "key", "nonconvex")

    def __init__(self, parent, groups, key, nonconvex):
        self.parent, self.groups, self.key, self.nonconvex = parent, groups, key, nonconvex

    def copy(self) -> _State:
        return _State(list(self.parent), list(self.groups), self.key, self.nonconvex)

    def find(self, x: int) -> int:
        parent = self.parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def assignment(self) -> tuple[int, ...]:
        ids: dict[int, int] = {}
        return tuple(ids.setdefault(self.find(k), len(ids)) for k in range(len(self.parent)))

    def union_find(self) -> UnionFind:
        return UnionFind(len(self.parent), [self.find(k) for k in range(len(self.parent))])


class _Search:
    def __init__(self, graph: ProgramGraph, rules: Rules):
        import random

        self.graph, self.rules = graph, rules
        self.edges = graph.data_edges()
        self.n = len(graph.nodes)
        self.profile = rules.profile
        self.adjacent: list[list[int]] = [[] for _ in range(self.n)]
        for k, dep in enumerate(graph.dependences):
            self.adjacent[dep.producer].append(k)
            if dep.consumer != dep.producer:
                self.adjacent[dep.consumer].append(k)
        self.edge_reasons: dict[int, tuple[str, str] | None] = {}
        self.touchers = [len(set(v.writers) | set(v.readers)) for v in graph.values]
        self.dropped = [
            v.is_intermediate
            and (not v.readers or (bool(v.writers) and min(v.readers) > min(v.writers)))
            for v in graph.values
        ]
        rng = random.Random(0x5EED)
        self.node_keys = [rng.getrandbits(128) for _ in range(self.n)]
        self.value_ids = {v.name: v.id for v in graph.values}
        self.trace: list[int] = []
        self.maximal: _State | None = None
        # host buffer names declared with two element types (fusion refuses them)
        types: dict[str, set[str]] = {}
        for node in graph.nodes:
            for buffer in node.program.buffers():
                types.setdefault(buffer.buffer_name, set()).add(str(buffer.element_type))
        self.mixed_types = {name for name, found in types.items() if len(found) > 1}

    # -------------------------------------------------------------- states

    def baseline(self) -> _State:
        groups = [self._leaf(k) for k in range(self.n)]
        key = sum(_mix(g.key) for g in groups) & _MASK
        return _State(list(range(self.n)), groups, key, 0)

    def state_of(self, groups: UnionFind) -> _State:
        state = self.baseline()
        for k in range(self.n):
            root = groups.find(k)
            if root != k:
                self._union(state, k, root)
        return state

    def _leaf(self, k: int) -> _Group:
        node = self.graph.nodes[k]
        kind = _pointwise(node)
        if kind is not None and not self.mixed_types.isdisjoint(node.reads | node.writes):
            kind = None
        open_, closed = None, 0
        if kind is not None:
            open_ = {}
            for name in node.reads | node.writes:
                v = self.value_ids[name]
                if self.touchers[v] > 1:
                    open_[v] = 1
                elif not self.dropped[v]:
                    closed += 1
        return _Group(1, k, k, self.node_keys[k], kind, open_, closed, (), (k,))

    def _union(self, state: _State, a: int, b: int) -> None:
        ra, rb = state.find(a), state.find(b)
        if ra == rb:
            return
        ga, gb = state.groups[ra], state.groups[rb]
        merged = self._merged(ga, gb)
        state.nonconvex += (not merged.convex) - (not ga.convex) - (not gb.convex)
        state.key = (state.key - _mix(ga.key) - _mix(gb.key) + _mix(merged.key)) & _MASK
        root, other = min(ra, rb), max(ra, rb)
        state.parent[other] = root
        state.groups[root] = merged
        state.groups[other] = None

    def _merged(self, ga: _Group, gb: _Group) -> _Group:
        open_, closed = None, 0
        kind = ga.kind if ga.kind is not None and ga.kind == gb.kind else None
        if kind is not None:
            small, large = sorted((ga.open, gb.open), key=len)
            open_ = dict(large)
            closed = ga.closed + gb.closed
            for v, count in small.items():
                total = open_.get(v, 0) + count
                if total == self.touchers[v]:
                    del open_[v]
                    closed += not self.dropped[v]
                else:
                    open_[v] = total
        return _Group(
            ga.size + gb.size,
            min(ga.lo, gb.lo),
            max(ga.hi, gb.hi),
            (ga.key + gb.key) & _MASK,
            kind,
            open_,
            closed,
            (ga, gb),
        )

    # -------------------------------------------------------------- checks

    def check(self, state: _State, k: int) -> tuple[str, str] | None:
        """`check_merge` of data edge `self.edges[k]` against `state` (code, message)."""
        edge = self.edges[k]
        if k not in self.edge_reasons:
            graph, classify = self.graph, self.rules.classify
            self.edge_reasons[k] = (
                _disconnected(graph, edge)
                or _synchronization(graph, edge)
                or _edge_class(graph, edge, classify)
            )
        reason = self.edge_reasons[k]
        if reason is not None:
            return reason
        ra, rb = state.find(edge.producer), state.find(edge.consumer)
        ga, gb = state.groups[ra], state.groups[rb]
        return (
            self._hazard(state, edge, ga, gb, rb)
            or self._cycle(state, edge, ga, gb)
            or self._trial(edge, ga, gb)
        )

    def _hazard(self, state, edge, ga, gb, rb) -> tuple[str, str] | None:
        graph, deps = self.graph, self.graph.dependences
        small, other_root = (ga, rb) if ga.size <= gb.size else (gb, state.find(edge.producer))
        joining = sorted(
            {
                index
                for m in small.members()
                for index in self.adjacent[m]
                if state.find(deps[index].producer + deps[index].consumer - m) == other_root
            }
        )
        for index in joining:
            dep = deps[index]
            if dep != edge and self.rules.classify(graph, dep) == CROSS_WORKGROUP:
                return MKL004_SEVERAL_CONSUMERS, (
                    "merging would also fuse a dependence that crosses workgroups: "
                    f"{_describe(graph, dep)}"
                )
        return None

    def _cycle(self, state, edge, ga, gb) -> tuple[str, str] | None:
        if state.nonconvex == 0 and (ga.hi + 1 == gb.lo or gb.hi + 1 == ga.lo):
            return None
        return _cycle(self.graph, state.union_find(), edge)

    def _trial(self, edge, ga, gb) -> tuple[str, str] | None:
        kind = ga.kind
        if kind is not None and kind == gb.kind:
            workgroup, profile = kind[0], self.profile
            fits_workgroup = (
                all(size <= most for size, most in zip(workgroup, profile.max_workgroup_size))
                and math.prod(workgroup) <= profile.max_invocations
            )
            if fits_workgroup and self._kept(ga, gb) <= profile.max_storage_buffers:
                return None
        members = tuple(sorted(ga.members() + gb.members()))
        key = ("fusion-trial", members, self.profile)
        if key not in self.graph.memo:
            self.graph.memo[key] = _trial(self.graph, members, self.profile)
        return self.graph.memo[key]

    def _kept(self, ga: _Group, gb: _Group) -> int:
        """The host buffers the fused program of two pointwise groups declares."""
        small, large = sorted((ga.open, gb.open), key=len)
        kept = ga.closed + gb.closed + len(ga.open) + len(gb.open)
        for v, count in small.items():
            if v in large:
                kept -= 1
                if large[v] + count == self.touchers[v] and self.dropped[v]:
                    kept -= 1
        return kept

    # -------------------------------------------------------------- search

    def extend(self, state: _State, record: bool = False, follow: bool = False) -> _State:
        """`extend`: with `record`, the partition key after each edge of the first
        pass is kept; with `follow`, the run stops at such a key (see above)."""
        state = state.copy()
        edges, trace = self.edges, self.trace
        first, changed = True, True
        while changed:
            changed = False
            for k, edge in enumerate(edges):
                if state.find(edge.producer) != state.find(edge.consumer):
                    if self.check(state, k) is None:
                        self._union(state, edge.producer, edge.consumer)
                        changed = True
                if first:
                    if record:
                        trace.append(state.key)
                    elif follow and state.key == trace[k]:
                        assert self.maximal is not None
                        return self.maximal
            first = False
        return state

    def candidates(self) -> list[_State]:
        baseline = self.baseline()
        self.trace = []
        self.maximal = self.extend(baseline, record=True)
        found = [baseline, self.maximal]
        for k, edge in enumerate(self.edges):
            if self.check(baseline, k) is None:
                single = baseline.copy()
                self._union(single, edge.producer, edge.consumer)
                found.append(self.extend(single, follow=True))
        distinct: dict[tuple[int, ...], _State] = {}
        for candidate in found:
            distinct.setdefault(candidate.assignment(), candidate)
        return list(distinct.values())


def group_stages(graph: ProgramGraph, assignment: Sequence[int]) -> list[int]:
    """Kahn's order over the group graph: stage(g) = max(stage(pred) + 1), else 0."""
    count = max(assignment, default=-1) + 1
    preds: list[set[int]] = [set() for _ in range(count)]
    for dep in graph.dependences:
        a, b = assignment[dep.producer], assignment[dep.consumer]
        if a != b:
            preds[b].add(a)
    stages = [-1] * count
    remaining = set(range(count))
    while remaining:
        ready = sorted(g for g in remaining if all(stages[p] >= 0 for p in preds[g]))
        if not ready:
            raise AssertionError("the plan's group graph has a cycle")
        for g in ready:
            stages[g] = 1 + max((stages[p] for p in preds[g]), default=-1)
            remaining.discard(g)
    return stages


def _barriers(
    graph: ProgramGraph, assignment: Sequence[int], stages: Sequence[int]
) -> tuple[StageBarrier, ...]:
    last = max(stages, default=0)
    barriers = []
    for stage in range(1, last + 1):
        crossing = tuple(
            k
            for k, dep in enumerate(graph.dependences)
            if stages[assignment[dep.consumer]] == stage
            and stages[assignment[dep.producer]] < stage
        )
        barriers.append(StageBarrier(stage - 1, stage, crossing))
    return tuple(barriers)


def _materializations(
    graph: ProgramGraph, assignment: Sequence[int], stages: Sequence[int]
) -> tuple[MaterializedValue, ...]:
    crossing = {
        d.value for d in graph.data_edges() if assignment[d.producer] != assignment[d.consumer]
    }
    records = []
    for value in graph.values:
        if not value.writers:
            continue
        if value.lifetime in ("output", "retained"):
            reason = value.lifetime
        elif value.id in crossing:
            reason = "cross_group_use"
        else:
            continue
        group = assignment[value.writers[-1]]
        records.append(MaterializedValue(value.id, group, stages[group], reason))
    return tuple(records)
