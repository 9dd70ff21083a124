"""Barriers that order the dependences between fused arms.

The dependences themselves (which arms touch which buffer, and whether the
invocation, the workgroup or only the whole dispatch orders them) come from
`vyre_xdsl.analysis.dependences`. Barriers are placed greedily (latest
position first), so one barrier serves every dependence it separates; a
`grid_sync` also serves workgroup dependences.
"""

from __future__ import annotations

from collections.abc import Sequence

from vyre_xdsl.analysis.dependences import Hazard


def place_barriers(found: Sequence[Hazard], allowed_grid: set[int] | None = None) -> dict[int, str]:
    """Barrier positions (`p`: after arm p) -> "grid_sync" or "seq_cst".

    Each dependence between arms i < j needs a barrier of its strength at some
    position in [i, j-1]. Greedy by latest end gives the fewest barriers.
    `allowed_grid` restricts where a grid_sync may go (None: anywhere).
    """
    placed: dict[int, str] = {}
    for ordering, strengths in (("grid_sync", {"grid"}), ("seq_cst", {"workgroup", "grid"})):
        needed = sorted(
            ((h.later, h.earlier) for h in found if h.strength in strengths), key=lambda e: e
        )
        for later, earlier in needed:
            span = range(earlier, later)
            if any(
                placed.get(p) == "grid_sync" or (ordering == "seq_cst" and p in placed)
                for p in span
            ):
                continue
            candidates = [
                p
                for p in span
                if ordering == "seq_cst" or allowed_grid is None or p in allowed_grid
            ]
            placed[max(candidates or span)] = ordering
    return placed


def grid_between(placed: dict[int, str], earlier: int, later: int) -> bool:
    """Whether a grid_sync separates arm `earlier` from arm `later`."""
    return any(placed.get(p) == "grid_sync" for p in range(earlier, later))
