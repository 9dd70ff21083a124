"""GPU-versus-reference conformance (issue 6).

Two sources of programs, each run on the reference interpreter and on wgpu
(lavapipe in CI), unfused and fused (`vyre-fuse`):

* the conformance corpus (`tests/conformance/`): every case whose expected
  values hold on any conforming backend is checked against those values (its
  `device_ulp` for f32, or the accuracy the WGSL specification states for
  approximate ops) on wgpu unfused, wgpu fused and the reference fused.
  Cases that pin a choice WGSL leaves open (`backends=("reference",)`: NaN
  propagation, order of contended atomics, IEEE specials of approximate ops,
  which trap wins) must still run on wgpu and produce the same outcome kind
  (trap or not) and output buffers (dtypes, lengths);
* at least 300 random programs per run from the hypothesis strategy
  `vyre_xdsl.testing.generators.modules()`: the unfused reference run is the
  oracle; wgpu unfused, reference fused and wgpu fused must agree with it:
  integers and Bools byte for byte, f32 within the per-buffer tolerance the
  generator derived from the ops' ULP budgets (0 for buffers of exact
  values), traps on (tag, address, invocation) under SPEC 3.4 (of several
  trapping invocations any may be reported; the generator knows which can
  trap), atomic tickets as multisets, IEEE-special buffers exactly between the
  reference configurations only. `vyre-fuse` may refuse only
  modules the generator flags as fusion hazards.

Every failure shows the module text (hypothesis `note`) and the disagreeing
configuration.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings

import vyre_xdsl
from vyre_xdsl.api import fuse_module
from vyre_xdsl.diagnostics import VyreDiagnostic
from vyre_xdsl.dialects.vyre import programs
from vyre_xdsl.interpreter import VyreTrap
from vyre_xdsl.runtime import adapter_available
from vyre_xdsl.runtime.device import no_adapter_message
from vyre_xdsl.testing.compare import generated_differences, outcome
from vyre_xdsl.testing.generators import modules

RANDOM_PROGRAMS = int(os.environ.get("VYRE_RANDOM_PROGRAMS", "300"))
CORPUS_DIR = pathlib.Path(__file__).parents[1] / "conformance"


def test_a_gpu_adapter_exists():
    assert adapter_available(), no_adapter_message()


# ============================================================================ corpus


def _corpus():
    sys.path.insert(0, str(CORPUS_DIR))
    cases, bitcasts = [], set()
    for path in sorted(CORPUS_DIR.glob("test_conformance_*.py")):
        spec = importlib.util.spec_from_file_location(f"_corpus_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        cases += list(module.CASES)
        if hasattr(module, "bitcast_cases"):
            extra = list(module.bitcast_cases())
            bitcasts |= {c.name for c in extra}
            cases += extra
    return cases, bitcasts


CORPUS, BITCAST_CASES = _corpus()
from conformance_support import assert_matches, assert_within_wgsl_accuracy, expected_outputs  # noqa: E402  (on sys.path now)

CONFIGURATIONS = (("wgpu", False), ("wgpu", True), ("reference", True))


def _portable(case) -> bool:
    return case.backends is None or "wgpu" in case.backends


def _run_case(case, backend: str, fuse: bool):
    inputs = {name: np.array(array, copy=True) for name, array in case.inputs.items()}
    try:
        return vyre_xdsl.run(case.text, inputs, backend=backend, fuse=fuse), None
    except VyreTrap as trap:
        return None, (trap.tag, trap.address, trap.invocation)


def test_the_corpus_is_loaded():
    assert len(CORPUS) >= 100, [c.name for c in CORPUS]


def test_fused_corpus_runs_include_real_fusions():
    """Most corpus cases are one program (their "fused" run fuses nothing); the
    multi-program cases of test_conformance_fusion.py cover every dependence
    kind, so the fused configurations below do fuse."""
    multi = [case.name for case in CORPUS if len(programs(vyre_xdsl.parse(case.text))) > 1]
    assert len(multi) >= 9, multi


@pytest.mark.parametrize("case", CORPUS, ids=str)
def test_corpus_case(case):
    for backend, fuse in CONFIGURATIONS:
        where = f"{case.name} on {backend}{' fused' if fuse else ''}"
        outputs, trap = _run_case(case, backend, fuse)
        if not _portable(case):
            _check_shape_only(case, outputs, trap, where)
            continue
        assert trap == case.trap, f"{where}: trap {trap}, expected {case.trap}"
        if trap is not None:
            continue
        ulp = case.ulp if backend == "reference" or case.device_ulp is None else case.device_ulp
        if case.exact_outputs:
            assert sorted(outputs) == sorted(case.expected), f"{where}: outputs {sorted(outputs)}"
        for name, want in expected_outputs(case).items():
            got = outputs[name]
            if case.accuracy is not None and backend != "reference":
                assert_within_wgsl_accuracy(case, got, f"{where}: {name}")
                continue
            if case.name in BITCAST_CASES and got.dtype == np.float32:
                got = got.view(np.uint32)  # bit patterns, as the corpus compares them
            device = backend != "reference"
            flushed = (case.flushed or {}).get(name) if device else None
            assert_matches(got, want, ulp, f"{where}: {name}", flushed, device=device)


def _check_shape_only(case, outputs, trap, where: str) -> None:
    """A reference-only case on another configuration: the same kind of outcome
    and the same output buffers; the values are the reference's choice."""
    assert (trap is None) == (case.trap is None), f"{where}: trap {trap}, expected {case.trap}"
    if trap is not None:
        return  # which of several trapping statements or lanes wins is the reference's choice
    for name, want in expected_outputs(case).items():
        got = outputs[name]
        want = np.asarray(want)
        assert (got.dtype, got.shape) == (want.dtype, want.shape), (
            f"{where}: {name} {got.dtype}{got.shape}"
        )


# ============================================================================ random


def test_random_programs_agree_with_the_reference():
    # "fused" counts only modules of two or more programs that vyre-fuse merged
    # (a one-program module "fuses" to itself and proves nothing about fusion)
    tally = {"examples": 0, "traps": 0, "fused": 0, "refused": 0, "single": 0, "programs": 0}

    @settings(
        max_examples=RANDOM_PROGRAMS,
        deadline=None,
        database=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(case=modules())
    def agree(case):
        tally["examples"] += 1
        tally["programs"] += len(programs(case.module))
        note(case.text)
        note(f"fusion hazards: {sorted(case.fusion_hazards)}; tolerances: {case.tolerances}")
        oracle = outcome(case.module, case.inputs, "reference")
        tally["traps"] += oracle.trap is not None
        problems = [
            f"wgpu: {p}"
            for p in generated_differences(
                case, oracle, outcome(case.module, case.inputs, "wgpu"), gpu=True
            )
        ]
        try:
            fused = fuse_module(case.module, force=True)
        except VyreDiagnostic as refusal:
            assert case.fusion_hazards, (
                f"vyre-fuse refused a module without fusion hazards: {refusal}"
            )
            tally["refused"] += 1
        else:
            if len(programs(case.module)) == 1:
                tally["single"] += 1
            else:
                assert len(programs(fused)) == 1, f"vyre-fuse left {len(programs(fused))} programs"
                tally["fused"] += 1
            for backend in ("reference", "wgpu"):
                got = outcome(case.module, case.inputs, backend, fuse="force")
                problems += [
                    f"{backend} fused: {p}"
                    for p in generated_differences(case, oracle, got, gpu=backend == "wgpu")
                ]
        assert not problems, "\n".join(problems)

    agree()
    print(f"random conformance: {tally}")
    assert tally["examples"] >= RANDOM_PROGRAMS
    # hypothesis draws many one-program modules (measured: 10 of 30 examples
    # were real fusions); almost every module of several programs fuses
    assert tally["fused"] >= RANDOM_PROGRAMS // 5, tally
