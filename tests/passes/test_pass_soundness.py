"""No pass may change a module's run interface or its results (SPEC section 4).

Every case of the conformance corpus and `VYRE_SOUNDNESS_MODULES` (default 300)
generated modules go through xDSL's stock passes that act on generic IR
(`canonicalize`, `cse`, `dce`, alone and in sequence) and every `vyre-*` pass
registered in the xDSL universe (alone and in sequence; `vyre-lower` excepted,
it leaves the vyre dialect): `vyre_xdsl.testing.soundness.check_pipelines`.
After each pipeline the module must verify, keep its run interface, and give
the same outputs on the reference backend as before — or trap again when it
trapped. The work is spread over two processes (the CI machine has two cores).

The two hand-made reproducers of unsound stock passes are the named regression
tests at the end.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

import vyre_xdsl
from vyre_xdsl.abi import signature
from vyre_xdsl.context import vyre_context
from vyre_xdsl.interpreter import VyreTrap
from vyre_xdsl.testing.generators import GeneratorOptions
from vyre_xdsl.testing.soundness import check_generated, check_texts, pipelines, vyre_passes

sys.path.insert(0, str(Path(__file__).parents[1] / "conformance"))

MODULES = int(os.environ.get("VYRE_SOUNDNESS_MODULES", "300"))
WORKERS = 2
#: small buffers, grids and bodies keep 300 modules fast; every construct stays in
OPTIONS = GeneratorOptions(max_count=48, big_grid=0, statements=3, depth=2)


def test_the_pass_list_comes_from_the_universe():
    assert {"vyre-fuse", "vyre-licm", "vyre-unroll", "vyre-strength-reduce"} <= set(vyre_passes())
    assert "vyre-lower" not in vyre_passes()
    assert ("canonicalize", "cse", "dce") in pipelines()
    assert vyre_passes() in pipelines()


def _pool() -> ProcessPoolExecutor:
    # spawn: the parent may hold a GPU device, which a forked child must not inherit
    return ProcessPoolExecutor(WORKERS, mp_context=multiprocessing.get_context("spawn"))


def _corpus() -> list[tuple[str, str, dict]]:
    import test_conformance_control
    import test_conformance_fusion
    import test_conformance_memory
    import test_conformance_ops
    import test_conformance_sync
    import test_conformance_traps

    cases = []
    for module in (
        test_conformance_control,
        test_conformance_fusion,
        test_conformance_memory,
        test_conformance_ops,
        test_conformance_sync,
        test_conformance_traps,
    ):
        cases += [(case.name, case.text, case.inputs) for case in module.CASES]
    return cases


def test_every_pass_keeps_interface_and_results_of_every_case():
    corpus = _corpus()
    seeds = list(range(10_000, 10_000 + MODULES))
    with _pool() as pool:
        corpus_jobs = [pool.submit(check_texts, corpus[k::WORKERS]) for k in range(WORKERS)]
        module_jobs = [
            pool.submit(check_generated, seeds[k::WORKERS], OPTIONS) for k in range(WORKERS)
        ]
        corpus_compared = sum(job.result() for job in corpus_jobs)
        modules_compared = sum(job.result() for job in module_jobs)
    assert len(corpus) > 200
    # every pipeline ran on every case, but where vyre-fuse refused a module
    assert corpus_compared >= len(corpus) * (len(pipelines()) - 2)
    assert modules_compared >= MODULES * (len(pipelines()) - 2) * 9 // 10


# ------------------------------------------------------------------ regressions

UNUSED_TRAPPING_DIVISION = """
vyre.program @p workgroup_size [4, 1, 1] {
  vyre.buffer @a binding 0 read_only : si32[4]
  vyre.buffer @zero binding 1 read_only : si32[4]
  vyre.buffer @o binding 2 write_only : si32[4]
  %i = vyre.invocation_id x
  %a = vyre.load @a[%i] : si32
  %z = vyre.load @zero[%i] : si32
  %q = vyre.div %a, %z : si32
  vyre.store @o[%i] = %a : si32
}
"""


@pytest.mark.parametrize(
    "pass_class", [CanonicalizePass, DeadCodeElimination], ids=["canonicalize", "dce"]
)
@pytest.mark.parametrize("backend", ["reference", "wgpu"])
def test_regression_unused_si32_division_by_zero_still_traps(pass_class, backend):
    module = vyre_xdsl.parse(UNUSED_TRAPPING_DIVISION)
    pass_class().apply(vyre_context(), module)
    assert "vyre.div %a, %z : si32" in str(module)
    inputs = {"a": np.arange(4, dtype=np.int32), "zero": np.zeros(4, np.int32)}
    with pytest.raises(VyreTrap):
        vyre_xdsl.run(module, inputs, backend=backend)


READ_ONLY_OUTPUT_AND_INTERMEDIATE = """
vyre.program @first workgroup_size [4, 1, 1] {
  vyre.buffer @keep binding 0 read_only output : ui32[4]
  vyre.buffer @t binding 1 write_only : ui32[4]
  %i = vyre.invocation_id x
  %unused = vyre.load @keep[%i] : ui32
  vyre.store @t[%i] = %i : ui32
}
vyre.program @second workgroup_size [4, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[4]
  vyre.buffer @out binding 1 write_only : ui32[4]
  %i = vyre.invocation_id x
  %dead = vyre.load @t[%i] : ui32
  %two = vyre.const 2 : ui32
  vyre.store @out[%i] = %two : ui32
}
"""


def test_regression_dce_keeps_a_read_only_output_an_input_and_an_intermediate_hidden():
    module = vyre_xdsl.parse(READ_ONLY_OUTPUT_AND_INTERMEDIATE)
    DeadCodeElimination().apply(vyre_context(), module)
    assert "vyre.load" not in str(module)  # both loads were dead
    sig = signature(module)
    assert sig.inputs == ("keep",)
    assert set(sig.outputs) == {"keep", "out"}
    assert [b.name for b in sig.buffers if b.is_intermediate] == ["t"]
    keep = np.array([9, 8, 7, 6], np.uint32)
    out = vyre_xdsl.run(module, {"keep": keep}, backend="reference")
    assert set(out) == {"keep", "out"}
    np.testing.assert_array_equal(out["keep"], keep)  # the caller's values, not zeros
    np.testing.assert_array_equal(out["out"], np.full(4, 2, np.uint32))
