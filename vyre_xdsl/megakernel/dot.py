"""The plan as Graphviz DOT (`vyre-compile --plan-dot FILE.dot`).

One cluster per stage, inside it one cluster per fusion group (labelled with
its legality record), one box per program. Data edges that were fused are
solid green and name the dependence class; rejected data edges are dashed red
and carry their reason code; write-after-read and write-after-write ordering
edges are dotted grey. The output is deterministic.

```
digraph "vyre_plan" {
  subgraph "cluster_stage0" {
    label="stage 0";
    subgraph "cluster_group0" {
      label="group 0 (MKL000_SINGLE_NODE_GROUP)";
      "n0" [label="@p\\nnode 0, work 5"];
    }
  }
  ...
  "n0" -> "n1" [label="@t MKL003_LIFETIME_BOUNDARY", color="red", style="dashed", tooltip="..."];
}
```
"""

from __future__ import annotations

from vyre_xdsl.megakernel.artifact import Artifact


def quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _attrs(**pairs: str) -> str:
    return "[" + ", ".join(f"{key}={quote(value)}" for key, value in pairs.items()) + "]"


def plan_dot(artifact: Artifact) -> str:
    plan = artifact.plan
    names = {n.id: n.name for n in artifact.nodes}
    values = {r.value: r.name for r in artifact.resources}
    cost = plan.cost
    lines = [
        'digraph "vyre_plan" {',
        "  graph "
        + _attrs(
            rankdir="TB",
            label=(
                f"{len(plan.fusion)} groups, {1 + max((g.stage for g in plan.fusion), default=-1)} "
                f"stages, cost {cost.total} = work {cost.semantic_work} + 1000 x {cost.launches} "
                f"groups + 100 x {cost.materializations} crossing edges"
            ),
        )
        + ";",
        '  node [shape="box"];',
    ]
    stages = sorted({g.stage for g in plan.fusion})
    for stage in stages:
        lines.append(f'  subgraph "cluster_stage{stage}" {{')
        lines.append(f"    label={quote(f'stage {stage}')};")
        for group in (g for g in plan.fusion if g.stage == stage):
            lines.append(f'    subgraph "cluster_group{group.id}" {{')
            lines.append(f"      label={quote(f'group {group.id} ({group.legality})')};")
            for member in group.members:
                work = artifact.node(member).work
                lines.append(
                    f"      {quote(f'n{member}')} {_attrs(label=f'@{names[member]}' + chr(10) + f'node {member}, work {work}')};"
                )
            lines.append("    }")
        lines.append("  }")
    for edge in plan.fused_edges:
        lines.append(
            f"  {quote(f'n{edge.producer}')} -> {quote(f'n{edge.consumer}')} "
            f"{_attrs(label=f'@{values[edge.value]} fused ({edge.dependence})', color='darkgreen')};"
        )
    for rejection in plan.rejections:
        lines.append(
            f"  {quote(f'n{rejection.producer}')} -> {quote(f'n{rejection.consumer}')} "
            + _attrs(
                label=f"@{values[rejection.value]} {rejection.code}",
                color="red",
                style="dashed",
                tooltip=rejection.message,
            )
            + ";"
        )
    for dep in artifact.dependences:
        if dep.kind == "data":
            continue
        lines.append(
            f"  {quote(f'n{dep.producer}')} -> {quote(f'n{dep.consumer}')} "
            f"{_attrs(label=f'@{values[dep.value]} {dep.kind} order', color='grey50', style='dotted')};"
        )
    lines.append("}")
    return "\n".join(lines) + "\n"
