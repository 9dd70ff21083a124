"""The planner: one test per legality code, cost, stages, determinism."""

from __future__ import annotations

import re

import pytest

from vyre_xdsl.fusion import fuse_programs
from vyre_xdsl.megakernel import planner as P
from vyre_xdsl.megakernel.artifact import build_artifact
from vyre_xdsl.megakernel.graph import ANTI, DATA, Dependence
from vyre_xdsl.megakernel.planner import UnionFind, check_merge, default_classifier, plan
from vyre_xdsl.target_profile import TargetProfile

from ..support import EXAMPLES
from .test_megakernel_cases import (
    MKL003,
    MKL004,
    MKL005,
    MKL005_OVER_DISPATCH,
    MKL006,
    MKL006_NON_COMPOSABLE,
    MKL007,
    PIPELINE,
    WORKGROUP_LOCAL,
    WRITE_AFTER_READ,
    _copy,
    graph_of,
)


def _groups(p) -> list[tuple[int, ...]]:
    return [g.members for g in p.groups]


def _rejections(p, graph) -> dict[tuple[str, str, str], str]:
    return {
        (
            graph.nodes[r.edge.producer].name,
            graph.nodes[r.edge.consumer].name,
            graph.values[r.edge.value].name,
        ): r.code
        for r in p.rejections
    }


def _fresh_check(graph, edge):
    return check_merge(graph, UnionFind(len(graph.nodes)), edge)


# ---------------------------------------------------------------------- legality codes


def test_mkl001_unknown_endpoint():
    graph = graph_of(MKL003)
    for edge in (Dependence(0, 7, 1, DATA), Dependence(0, 1, 42, DATA), Dependence(-1, 1, 1, DATA)):
        rejection = _fresh_check(graph, edge)
        assert rejection is not None and rejection.code == P.MKL001_UNKNOWN_ENDPOINT


def test_mkl002_disconnected_value():
    graph = graph_of(MKL003)
    x, t, out = (graph.value_named(n).id for n in ("x", "t", "out"))
    cases = [
        Dependence(0, 1, x, DATA),  # the producer does not write x
        Dependence(0, 1, out, DATA),  # the consumer does not read out
        Dependence(1, 0, t, DATA),  # backwards
        Dependence(0, 1, t, ANTI),  # not a dataflow edge
    ]
    for edge in cases:
        rejection = _fresh_check(graph, edge)
        assert rejection is not None and rejection.code == P.MKL002_DISCONNECTED_VALUE, edge


def test_mkl003_cross_workgroup_dependence_is_not_fused():
    graph = graph_of(MKL003)
    p = plan(graph)
    assert _groups(p) == [(0,), (1,)]
    assert _rejections(p, graph) == {("p", "c", "t"): P.MKL003_LIFETIME_BOUNDARY}
    assert "across workgroups" in p.rejections[0].message


def test_mkl004_merging_would_fuse_another_cross_workgroup_dependence():
    graph = graph_of(MKL004)
    p = plan(graph)
    # p and c1 fuse (invocation-local); c2 reads t shifted, so c1 -> c2 (itself
    # invocation-local on u) would bring p's t and c2 together: refused.
    assert _groups(p) == [(0, 1), (2,)]
    assert _rejections(p, graph) == {
        ("p", "c2", "t"): P.MKL003_LIFETIME_BOUNDARY,
        ("c1", "c2", "u"): P.MKL004_SEVERAL_CONSUMERS,
    }
    message = [r.message for r in p.rejections if r.code == P.MKL004_SEVERAL_CONSUMERS][0]
    assert "@c2 reads @t written by @p" in message


def test_mkl005_workgroup_mismatch_when_a_program_pins_its_geometry():
    graph = graph_of(MKL005)
    p = plan(graph)
    assert _groups(p) == [(0,), (1,)]
    assert _rejections(p, graph) == {("p", "c", "t"): P.MKL005_WORKGROUP_MISMATCH}
    assert "workgroup_id" in p.rejections[0].message


def test_mkl005_over_dispatch():
    graph = graph_of(MKL005_OVER_DISPATCH)
    p = plan(graph)
    assert _rejections(p, graph) == {("p", "c", "t"): P.MKL005_WORKGROUP_MISMATCH}
    assert "over-dispatch" in p.rejections[0].message


def test_a_different_workgroup_alone_does_not_block_fusion():
    text = MKL003.replace("%next]", "%i]").replace(
        "@c workgroup_size [64, 1, 1]", "@c workgroup_size [128, 1, 1]"
    )
    p = plan(graph_of(text))
    assert _groups(p) == [(0, 1)]


@pytest.mark.parametrize(
    "text, what", [(MKL006, "grid_sync"), (MKL006_NON_COMPOSABLE, "non_composable")]
)
def test_mkl006_synchronization_boundary(text, what):
    graph = graph_of(text)
    p = plan(graph)
    assert _groups(p) == [(0,), (1,)]
    assert _rejections(p, graph) == {("p", "c", "t"): P.MKL006_SYNCHRONIZATION_BOUNDARY}
    assert what in p.rejections[0].message


MKL009_INDIRECT = (
    _copy("p", "x", "t")
    + """
vyre.program @c {indirect = @grid} workgroup_size [64, 1, 1] {
  vyre.buffer @grid binding 3 read_only : ui32[3]
  vyre.buffer @t binding 0 read_only : ui32[256]
  vyre.buffer @out binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @t[%i] : ui32
  vyre.store @out[%i] = %v : ui32
}
"""
)


def test_mkl009_indirect_dispatch_is_never_fused():
    graph = graph_of(MKL009_INDIRECT)
    p = plan(graph)
    assert _groups(p) == [(0,), (1,)]
    assert _rejections(p, graph) == {("p", "c", "t"): P.MKL009_INDIRECT_DISPATCH}
    assert "indirect grid" in p.rejections[0].message


MKL011_EXPLICIT = (
    _copy("p", "x", "t")
    + """
vyre.program @c workgroup_size [64, 1, 1] grid [4, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[256]
  vyre.buffer @out binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @t[%i] : ui32
  vyre.store @out[%i] = %v : ui32
}
"""
)


def test_mkl011_explicit_grid_is_never_fused():
    graph = graph_of(MKL011_EXPLICIT)
    p = plan(graph)
    assert _groups(p) == [(0,), (1,)]
    assert _rejections(p, graph) == {("p", "c", "t"): P.MKL011_EXPLICIT_GRID}
    assert "explicit grid [4, 1, 1]" in p.rejections[0].message


def test_mkl010_a_group_that_would_lose_is_not_fused():
    # @stage over 1024 workgroups with workgroup memory, @flip (one workgroup)
    # reads @t at its own index: legal without a split, but the fused kernel
    # would zero workgroup memory in 1023 workgroups where @flip's arm is idle
    from ..fusion.test_fusion_cost import _shared_pair

    graph = graph_of(_shared_pair(1024))
    p = plan(graph)
    assert _groups(p) == [(0,), (1,)]
    assert _rejections(p, graph) == {("stage", "flip", "t"): P.MKL010_NO_GAIN}
    assert "idle" in p.rejections[0].message
    # with 16 workgroups the saved launch wins
    assert _groups(plan(graph_of(_shared_pair(16)))) == [(0, 1)]


def test_mkl007_cycle():
    graph = graph_of(MKL007)
    p = plan(graph)
    assert _groups(p) == [(0,), (1,), (2,)]
    assert _rejections(p, graph) == {
        ("p", "m", "a"): P.MKL003_LIFETIME_BOUNDARY,
        ("p", "c", "a"): P.MKL007_CYCLE,
        ("m", "c", "b"): P.MKL003_LIFETIME_BOUNDARY,
    }
    # the p -> c edge is legal on its own terms: only the cycle through m refuses it
    a = graph.value_named("a").id
    assert P._edge_class(graph, Dependence(0, 2, a, DATA), default_classifier) is None


def test_mkl008_resource_limit():
    # each program binds 2 storage buffers, the fused one 3 (x, t, out: t is an
    # output, so its stores stay)
    text = MKL003.replace("%next]", "%i]").replace(
        "@t binding 1 write_only", "@t binding 1 write_only output"
    )
    graph = graph_of(text)
    assert _groups(plan(graph)) == [(0, 1)]
    tight = TargetProfile(max_storage_buffers=2)
    p = plan(graph, profile=tight)
    assert _groups(p) == [(0,), (1,)]
    assert _rejections(p, graph) == {("p", "c", "t"): P.MKL008_RESOURCE_LIMIT}
    assert "storage buffer 3; the target allows 2" in p.rejections[0].message


def test_invocation_local_dependences_fuse_without_a_barrier():
    graph = graph_of((EXAMPLES / "chain3.mlir").read_text())
    p = plan(graph)
    assert _groups(p) == [(0, 1, 2)]
    assert [cls for _, cls in p.fused] == [P.INVOCATION_LOCAL, P.INVOCATION_LOCAL]
    assert p.rejections == ()


def test_workgroup_local_dependence_fuses_with_a_barrier():
    graph = graph_of(WORKGROUP_LOCAL)
    p = plan(graph)
    assert _groups(p) == [(0, 1)]
    assert [cls for _, cls in p.fused] == [P.WORKGROUP_LOCAL]
    # The producer is a plain copy: fusion recomputes it at the consumer's
    # index, so the group needs no barrier at all ...
    fused = P.fuse_group(graph, (0, 1))
    assert not [op for op in fused.walk() if op.name == "vyre.barrier"]
    # ... and without recomputing, one workgroup barrier orders the arms.
    programs = [graph.nodes[k].program for k in (0, 1)]
    kept = fuse_programs(
        programs, intermediates=P.group_intermediates(graph, (0, 1)), recompute=False
    )
    barriers = [op for op in kept.walk() if op.name == "vyre.barrier"]
    assert len(barriers) == 1 and not barriers[0].is_grid_sync


def test_every_rejection_code_has_a_test():
    tested = {name for name in globals() if name.startswith("test_mkl")}
    for code in P.REJECTION_CODES:
        assert any(name.startswith(f"test_{code[:6].lower()}") for name in tested), code


# ---------------------------------------------------------------------- cost, stages


def test_cost_is_work_plus_1000_per_group_plus_100_per_crossing_edge():
    graph = graph_of(MKL004)
    p = plan(graph)
    work = sum(sum(1 for _ in node.program.walk()) - 1 for node in graph.nodes)
    crossing = sum(
        1 for d in graph.data_edges() if p.node_groups[d.producer] != p.node_groups[d.consumer]
    )
    assert (p.cost.semantic_work, p.cost.launches, p.cost.materializations) == (work, 2, crossing)
    assert p.cost.total == work + 1000 * 2 + 100 * crossing
    assert crossing == 2


def test_the_cheapest_candidate_wins():
    graph = graph_of(PIPELINE)
    p = plan(graph)
    totals = [P.cost_of(graph, c.assignment()).total for c in P.candidates(graph, P.Rules())]
    assert p.cost.total == min(totals)
    assert p.candidates_explored == len(totals)
    assert _groups(p) == [(0, 1), (2, 3, 4)]


def test_stages_are_topological_over_group_edges():
    p = plan(graph_of(MKL007))
    assert [g.stage for g in p.groups] == [0, 1, 2]
    assert [(b.before_stage, b.after_stage) for b in p.barriers] == [(0, 1), (1, 2)]


def test_stages_respect_write_after_read():
    graph = graph_of(WRITE_AFTER_READ)
    p = plan(graph)
    # no dataflow at all, yet c must run after p, which reads what c overwrites
    assert [(g.members, g.stage) for g in p.groups] == [((0,), 0), ((1,), 1)]
    assert p.rejections == () and p.fused == ()


def test_independent_groups_share_a_stage():
    # both only read x (shifted in the second): no dependence, two groups, one stage
    text = _copy("p", "x", "t") + _copy("q", "x", "u", index="%next")
    p = plan(graph_of(text))
    assert [(g.members, g.stage) for g in p.groups] == [((0,), 0), ((1,), 0)]
    assert p.barriers == ()


def test_materializations_name_outputs_and_cross_group_values():
    graph = graph_of(MKL003)
    p = plan(graph)
    reasons = {graph.values[m.value].name: m.reason for m in p.materializations}
    assert reasons == {"t": "cross_group_use", "out": "output"}


# ---------------------------------------------------------------------- determinism


def test_the_same_input_gives_the_same_artifact_bytes():
    first = build_artifact(graph_of(PIPELINE), plan(graph_of(PIPELINE))).to_bytes()
    second = build_artifact(graph_of(PIPELINE), plan(graph_of(PIPELINE))).to_bytes()
    assert first == second


def test_artifact_identity_ignores_ssa_names_and_layout():
    renamed = "\n\n// moved down\n" + re.sub(r"%v\b", "%value", PIPELINE)
    assert renamed != PIPELINE
    a = build_artifact(graph_of(PIPELINE), plan(graph_of(PIPELINE)))
    b = build_artifact(graph_of(renamed), plan(graph_of(renamed)))
    assert a.digest() == b.digest()
