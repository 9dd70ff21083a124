"""The optimised megakernel planner chooses exactly the plan of the
pre-optimisation planner (`tests/megakernel/reference_planner.py`, a test-only oracle):
the same artifact bytes (groups, fused edges, rejections with their messages,
stages, barriers, cost and candidates_explored) on a corpus of every example,
every module of the megakernel/bundle tests and generated chains; and it
checks O(N) merge checks and fusion trials on a 100-program chain."""

from __future__ import annotations

import sys

import pytest

from vyre_xdsl.megakernel import planner as P
from vyre_xdsl.megakernel.artifact import build_artifact
from vyre_xdsl.megakernel.graph import ProgramGraph
from vyre_xdsl.target_profile import TargetProfile
from vyre_xdsl.testing.generators import long_chain_text
from vyre_xdsl.tools.common import load_module_text

from ..support import ROOT
from . import reference_planner as R
from . import test_megakernel_cases as cases
from . import test_megakernel_planner as planner_tests

sys.path.insert(0, str(ROOT / "bench"))
from compile_time import chain_module  # noqa: E402


def _module_texts() -> dict[str, str]:
    texts = {f"example:{p.name}": p.read_text() for p in sorted((ROOT / "examples").glob("*.mlir"))}
    for source in (cases, planner_tests):
        for name, value in vars(source).items():
            if isinstance(value, str) and "vyre.program" in value:
                texts[f"{source.__name__.rpartition('.')[2]}:{name}"] = value
    for n in (1, 2, 3, 5, 9):
        texts[f"chain{n}"] = chain_module(n, n=256)
    texts["long_chain_plain8"] = long_chain_text([False] * 8)
    texts["long_chain_shifted"] = long_chain_text([k % 3 == 1 for k in range(9)])
    texts["long_chain_all_shifted"] = long_chain_text([True] * 4)
    texts["diamond"] = DIAMOND
    texts["mixed_counts"] = MIXED_COUNTS
    return texts


def _copy(name: str, src: list[str], dst: str, n: int = 256, wg: int = 64) -> str:
    decls = "".join(
        f"  vyre.buffer @{s} binding {k} read_only : f32[{n}]\n" for k, s in enumerate(src)
    )
    loads = "".join(f"  %v{k} = vyre.load @{s}[%i] : f32\n" for k, s in enumerate(src))
    acc = "%v0"
    adds = ""
    for k in range(1, len(src)):
        adds += f"  %a{k} = vyre.add {acc}, %v{k} : f32\n"
        acc = f"%a{k}"
    return (
        f"vyre.program @{name} workgroup_size [{wg}, 1, 1] {{\n{decls}"
        f"  vyre.buffer @{dst} binding {len(src)} write_only : f32[{n}]\n"
        f"  %i = vyre.invocation_id x\n{loads}{adds}  vyre.store @{dst}[%i] = {acc} : f32\n}}\n"
    )


#: a fan-out and fan-in of pointwise programs (non-convex groups are possible)
DIAMOND = (
    _copy("a", ["x"], "t1")
    + _copy("b", ["t1"], "t2")
    + _copy("c", ["t1"], "t3")
    + _copy("d", ["x"], "u")
    + _copy("e", ["t2", "t3"], "t4")
    + _copy("f", ["t4", "u", "t1"], "out")
)

#: pointwise programs whose buffers differ in length and workgroup
MIXED_COUNTS = (
    _copy("a", ["x"], "t1", n=256)
    + _copy("b", ["t1"], "t2", n=256)
    + _copy("c", ["t2"], "t3", n=512)
    + _copy("d", ["t3"], "t4", n=512, wg=32)
    + _copy("e", ["t4"], "out", n=512, wg=32)
)

TEXTS = _module_texts()
PROFILES = {
    "default": TargetProfile(),
    "3-buffers": TargetProfile(max_storage_buffers=3),
    "4-buffers": TargetProfile(max_storage_buffers=4),
}


def _artifact_bytes(planner, text: str, name: str, profile: TargetProfile) -> bytes:
    graph = ProgramGraph.from_module(load_module_text(text, name))
    return build_artifact(graph, planner.plan(graph, profile=profile)).to_bytes()


@pytest.mark.parametrize("profile", sorted(PROFILES))
@pytest.mark.parametrize("name", sorted(TEXTS))
def test_the_plan_is_the_reference_plan(name, profile):
    text, limits = TEXTS[name], PROFILES[profile]
    assert _artifact_bytes(P, text, name, limits) == _artifact_bytes(R, text, name, limits)


def test_a_100_program_chain_needs_o_n_fusion_work(monkeypatch):
    """Not timed: the planner fuses O(N) programs in its trials on a pointwise
    chain (the pre-optimisation planner fused every prefix: ~N^2/2 programs in
    ~2N trials), and the plan is still the whole chain in one group."""
    trials: list[int] = []
    real = P._trial

    def counted(graph, members, profile):
        trials.append(len(members))
        return real(graph, members, profile)

    monkeypatch.setattr(P, "_trial", counted)
    n = 100
    graph = ProgramGraph.from_module(load_module_text(chain_module(n, n=256), "chain"))
    p = P.plan(graph)
    assert [g.members for g in p.groups] == [tuple(range(n))]
    assert len(trials) <= n // 2
    assert sum(trials) <= 2 * n
