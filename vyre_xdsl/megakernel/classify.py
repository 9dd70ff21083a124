"""Dependence classes for the planner, taken from `vyre_xdsl.analysis` (not re-derived).

A dependence between two programs through one buffer is classified exactly as
`vyre-fuse` classifies it between two arms fused under their fused workgroup:
`invocation` (every access uses the same invocation-injective index: no
barrier), `workgroup` (every access stays in its workgroup's span: a workgroup
barrier orders it) or `cross` (fusion's `grid`: only a dispatch boundary
orders it).
"""

from __future__ import annotations

from vyre_xdsl.megakernel.graph import Dependence, ProgramGraph
from vyre_xdsl.megakernel.planner import (
    CROSS_WORKGROUP,
    INVOCATION_LOCAL,
    WORKGROUP_LOCAL,
    Classifier,
    fused_workgroup,
)

_STRENGTH_CLASS = {
    "invocation": INVOCATION_LOCAL,
    "workgroup": WORKGROUP_LOCAL,
    "grid": CROSS_WORKGROUP,
}


def classify_dependence(graph: ProgramGraph, dep: Dependence) -> str:
    from vyre_xdsl.analysis import accesses, classify
    from vyre_xdsl.fusion.merge import clone_arms

    first, second = graph.nodes[dep.producer], graph.nodes[dep.consumer]
    buffer = graph.values[dep.value].name
    arms = clone_arms([first.program, second.program])
    workgroup = fused_workgroup([first.workgroup, second.workgroup])
    per_arm = [[a for a in accesses(arm.statements()) if a.buffer == buffer] for arm in arms]
    if not per_arm[0] or not per_arm[1]:
        return INVOCATION_LOCAL  # one side only declares the buffer: no shared element
    return _STRENGTH_CLASS[
        classify(per_arm[0], per_arm[1], (arms[0].workgroup, arms[1].workgroup), workgroup)
    ]


def memoized(classify: Classifier) -> Classifier:
    """`classify` answering each (producer, consumer, value) once per graph."""

    def classify_once(graph: ProgramGraph, dep: Dependence) -> str:
        key = ("class", classify, dep.producer, dep.consumer, dep.value)
        if key not in graph.memo:
            graph.memo[key] = classify(graph, dep)
        return graph.memo[key]

    return classify_once
