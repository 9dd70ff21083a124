"""Upstream `vyre-foundation/tests/fusion_workgroup_geometry.rs`: fusion never
widens an arm whose meaning depends on its workgroup (a barrier, workgroup
memory) to a wider neighbour's workgroup; fusing them into one program
(`force=True`, upstream's explicit fusion) is refused with a diagnostic that
names the arm, both geometries, the reason(s) and a fix, and the default mode
(the cost model) leaves them unfused. Independent arms are
widened, arms that agree are fused, a lone arm is never refused. Upstream's
wording differs ("synchronizes its workgroup", "keeps state in workgroup
memory", "dispatch this arm separately"); the facts checked are the same. Each
accepted module also runs fused and unfused on both backends.
"""

from __future__ import annotations

import numpy as np
import pytest
from upstream_support import CONFIGURATIONS, run, u32

from vyre_xdsl.api import fuse_module, parse
from vyre_xdsl.diagnostics import VyreDiagnostic


def arm(name: str, workgroup: tuple[int, int, int], kind: str) -> str:
    """Upstream's `independent_arm`, `barrier_arm`, `workgroup_memory_arm` (and one
    that does both): out[gid] = in[gid] over 4 elements."""
    buffers = (
        f"  vyre.buffer @{name}_in binding 0 read_only : ui32[4]\n"
        f"  vyre.buffer @{name}_out binding 1 read_write : ui32[4]\n"
    )
    body = f"  %i = vyre.invocation_id x\n  %v = vyre.load @{name}_in[%i] : ui32\n"
    if kind in ("independent", "barrier"):
        body += f"  vyre.store @{name}_out[%i] = %v : ui32\n"
        body += "  vyre.barrier seq_cst\n" if kind == "barrier" else ""
    else:
        buffers += f"  vyre.buffer @{name}_scratch workgroup : ui32[4]\n"
        body += f"  vyre.store @{name}_scratch[%i] = %v : ui32\n"
        body += "  vyre.barrier seq_cst\n" if kind == "both" else ""
        body += f"  %w = vyre.load @{name}_scratch[%i] : ui32\n  vyre.store @{name}_out[%i] = %w : ui32\n"
    wx, wy, wz = workgroup
    return f"vyre.program @{name} workgroup_size [{wx}, {wy}, {wz}] {{\n{buffers}{body}}}\n"


def refusal(*arms: str) -> str:
    """The refusal of fusing `arms` into one program, as upstream's `fuse` does
    (`force=True`); the default mode, the cost model, leaves them unfused."""
    module = parse("".join(arms))
    with pytest.raises(VyreDiagnostic) as raised:
        fuse_module(module, force=True)
    assert len(list(fuse_module(module).ops)) == len(arms)
    return str(raised.value)


WIDE = (256, 1, 1)
NARROW = (4, 1, 1)


def test_a_narrow_synchronizing_arm_is_not_widened_by_a_wide_neighbour():
    message = refusal(arm("wide", WIDE, "independent"), arm("narrow", NARROW, "barrier"))
    assert "@narrow" in message
    assert "[256, 1, 1]" in message and "[4, 1, 1]" in message
    assert "contains a barrier" in message
    assert "fuse @narrow in a separate group" in message


def test_the_refusal_does_not_depend_on_which_arm_is_narrow():
    message = refusal(arm("narrow", NARROW, "barrier"), arm("wide", WIDE, "independent"))
    assert "cannot fuse @narrow" in message


def test_workgroup_memory_alone_blocks_the_widening():
    message = refusal(arm("wide", WIDE, "independent"), arm("narrow", NARROW, "wgmem"))
    assert "declares workgroup memory" in message
    assert "barrier" not in message


def test_an_arm_that_both_synchronizes_and_uses_workgroup_memory_reports_both():
    message = refusal(arm("wide", WIDE, "independent"), arm("narrow", NARROW, "both"))
    assert "declares workgroup memory and it contains a barrier" in message


def test_a_widening_on_a_different_axis_is_refused_too():
    message = refusal(arm("wide", (4, 8, 1), "independent"), arm("narrow", NARROW, "barrier"))
    assert "[4, 8, 1]" in message


ACCEPTED = {
    "matching_workgroups_fuse_even_when_both_arms_synchronize": (
        [arm("first", (64, 1, 1), "barrier"), arm("second", (64, 1, 1), "barrier")],
        (64, 1, 1),
    ),
    "independent_arms_are_still_widened": (
        [arm("wide", WIDE, "independent"), arm("narrow", NARROW, "independent")],
        (256, 1, 1),
    ),
    "a_lone_arm_is_never_refused": ([arm("only", NARROW, "barrier")], (4, 1, 1)),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_fusions_keep_upstreams_workgroup(name):
    arms, workgroup = ACCEPTED[name]
    fused = fuse_module(parse("".join(arms)))
    assert [tuple(p.workgroup) for p in fused.ops] == [workgroup]


@pytest.mark.parametrize("backend,fuse", CONFIGURATIONS)
@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_fusions_run_the_same_fused_and_unfused(name, backend, fuse):
    arms, _ = ACCEPTED[name]
    text = "".join(arms)
    names = [
        line.split("@")[1].split(" ")[0]
        for line in text.splitlines()
        if line.startswith("vyre.program")
    ]
    inputs = {}
    for k, n in enumerate(names):
        inputs[f"{n}_in"] = u32([10 * k + j for j in range(4)])
        inputs[f"{n}_out"] = np.zeros(4, np.uint32)
    got = run(text, inputs, backend=backend, fuse=fuse)
    for n in names:
        assert got[f"{n}_out"].tolist() == inputs[f"{n}_in"].tolist()
