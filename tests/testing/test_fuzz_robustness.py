"""Hostile input, in CI: a fresh fuzzing campaign per run (`vyre_xdsl.testing.fuzz`).

At least 1000 text mutants (of the examples, the docs' modules, the seeds of
`fuzz_seeds` and random modules) go through
parse, verify, fuse, lower, WGSL (validated by naga), the reference interpreter
and `vyre-compile`'s bundle, in process, each under a time limit; mutants that
are not UTF-8 go through `vyre-opt`'s driver; a sample runs `vyre-opt` as a
subprocess. At least 1000 bundle mutants, half with the BLAKE3 digest rebuilt,
must be refused with the project's own errors or, when accepted, run on wgpu
exactly like the reference. Any internal error, hang, forged result, WGSL that
naga rejects or partial output file fails the test, which prints the seed:
`VYRE_FUZZ_SEED=<seed> pytest tests/testing/test_fuzz_robustness.py` replays it, and
`python -m vyre_xdsl.testing.fuzz --seed <seed>` shows every failure site.

The tests below the campaign check that the fuzzer itself can fail: that each
failure class is recognised.
"""

from __future__ import annotations

import dataclasses
import os
import random
import re

import numpy as np
import pytest

import vyre_xdsl
from vyre_xdsl.testing import fuzz, generators
from vyre_xdsl.testing.fuzz_seeds import FUZZ_SEEDS

TEXT_CASES = int(os.environ.get("VYRE_FUZZ_TEXT", "1000"))
BUNDLE_CASES = int(os.environ.get("VYRE_FUZZ_BUNDLES", "1000"))


def test_a_fresh_campaign_finds_nothing():
    seed = fuzz.fresh_seed()
    report = fuzz.Campaign(seed, text_cases=TEXT_CASES, bundle_cases=BUNDLE_CASES).run()
    print(report.summary())
    counts = report.counts()
    assert sum(n for (kind, _), n in counts.items() if kind in ("text", "cli")) >= TEXT_CASES
    assert sum(n for (kind, _), n in counts.items() if kind == "bundle") >= BUNDLE_CASES
    assert sum(n for (kind, _), n in counts.items() if kind == "subprocess") > 0
    # the mutants reach every stage: some are accepted, some refused
    assert counts[("text", "accepted")] > 0 and counts[("text", "refused")] > 0, counts
    # the scale probes (loop nests at the depth limit, long chains) all go through
    assert counts[("scale", "accepted")] == fuzz.Campaign(seed).scale_cases, counts
    assert not report.failures, report.summary(examples=2)


# ---------------------------------------------------------------- the scale probes


def test_the_scale_nests_stay_within_the_reference_runs_iteration_limit():
    """A probe of scale must not be refused as "large": three loops of 16 trips
    (4096 iterations per invocation) passed the reference run's limit, which
    failed about one fresh campaign in twenty."""
    import math

    for seed in range(2000):
        trips = fuzz.scale_nest_trips(random.Random(seed))
        assert 48 <= len(trips) <= 64
        assert math.prod(trips) <= fuzz.SCALE_NEST_ITERATIONS, trips
        assert trips == sorted(trips, key=lambda trip: trip > 1)  # the long loops innermost


def test_the_largest_scale_nest_runs_on_the_reference_backend():
    """The worst nest the bound allows (two loops of 16, one of 2) is accepted."""
    trips = [1] * 61 + [2, 16, 16]
    with fuzz.time_limit(fuzz.Campaign(0).scale_limit):
        outcome, detail, _ = fuzz.check_text(
            generators.deep_nest_text(trips), np.random.default_rng(0), [], bundle_sample=0.0
        )
    assert outcome == "accepted", detail


def test_a_nest_at_the_depth_limit_goes_through_the_pipeline_in_time():
    """64 nested loops, one of 16 trips: parse, lower, fuse, WGSL, vyre-compile
    and the reference run, within the campaign's CPU limit for a scale probe."""
    trips = [1] * 63 + [16]
    with fuzz.time_limit(fuzz.Campaign(0).scale_limit):
        outcome, detail, _ = fuzz.check_text(
            generators.deep_nest_text(trips), np.random.default_rng(0), [], bundle_sample=1.0
        )
    assert outcome == "accepted", detail


def test_a_chain_of_hundreds_of_programs_goes_through_fusion_in_time():
    shifted = [k % 10 == 3 for k in range(250)]
    text = generators.long_chain_text(shifted)
    with fuzz.time_limit(fuzz.Campaign(0).scale_limit):
        outcome, detail, _ = fuzz.check_text(text, np.random.default_rng(0), [], bundle_sample=0.0)
        x = np.arange(256, dtype=np.uint32) * 7
        got = vyre_xdsl.run(text, {"x": x}, backend="reference", fuse=True)["t250"]
    assert outcome == "accepted", detail
    np.testing.assert_array_equal(got, generators.long_chain_expected(shifted, x))


# ---------------------------------------------------------------- the fuzzer can fail


def test_an_exception_that_is_not_the_projects_is_internal(monkeypatch):
    import vyre_xdsl

    def broken(text, name="<input>"):
        return {}["missing"]

    monkeypatch.setattr(vyre_xdsl, "parse", broken)
    outcome, _, site = fuzz.check_text(
        "vyre.program @p workgroup_size [1, 1, 1] {\n}\n", np.random.default_rng(0), []
    )
    assert outcome == "internal" and site.startswith("KeyError"), site


def test_a_located_diagnostic_is_a_refusal():
    outcome, _, _ = fuzz.check_text(
        "vyre.program @p workgroup_size [1, 1, 1] {\n  %x = vyre.nonsense\n}\n",
        np.random.default_rng(0),
        [],
    )
    assert outcome == "refused"


def test_the_time_limit_stops_a_hang():
    with pytest.raises(fuzz.CaseTimeout):
        with fuzz.time_limit(0.2):
            while True:
                pass


def test_a_failed_command_with_its_output_file_is_partial(tmp_path):
    target = tmp_path / "out.wgsl"
    target.write_text("half")
    assert fuzz._classify_cli(1, "in.mlir:1:1: error: x", str(target))[0] == "partial"
    assert (
        fuzz._classify_cli(2, "vyre-opt: internal error: KeyError", str(tmp_path / "none"))[0]
        == "internal"
    )
    assert fuzz._classify_cli(1, "in.mlir:1:1: error: x", str(tmp_path / "none"))[0] == "refused"


def test_wgsl_that_naga_rejects_is_reported():
    worker = fuzz.GpuWorker()
    try:
        errors = worker.call(
            (
                "naga",
                [
                    "@compute @workgroup_size(1) fn main() { let x: u32 = 4294967296u; }",
                    "@compute @workgroup_size(1) fn main() {}",
                ],
            ),
            120,
        )
    finally:
        worker.close()
    assert errors[0] is not None and errors[1] is None


def test_a_worker_that_cannot_start_raises_its_error_and_closes_quietly(monkeypatch):
    worker = fuzz.GpuWorker()

    class Unstartable:
        def __init__(self, **kwargs):
            pass

        def start(self):
            raise RuntimeError("cannot spawn here")

    monkeypatch.setattr(worker._context, "Process", Unstartable)
    with pytest.raises(RuntimeError, match="cannot spawn here"):
        worker.call(("naga", []), 5)
    worker.close()  # nothing started: nothing to close


def test_text_mutations_cover_every_operator():
    rng = random.Random(0)
    mutator = fuzz.TextMutator(rng)
    text = (fuzz.EXAMPLES / "reduction.mlir").read_bytes()
    seen = set()
    for _ in range(600):
        _, steps = mutator.mutate(text, edits=1)
        seen.update(steps)
    assert seen == {op.__name__ for op, _ in mutator.operators}, seen


def test_bundle_mutants_without_a_new_digest_never_verify():
    import blake3

    rng = random.Random(1)
    mutator = fuzz.BundleMutator(rng)
    import vyre_xdsl
    from vyre_xdsl.megakernel.compile import compile_module

    data = compile_module(vyre_xdsl.parse((fuzz.EXAMPLES / "axpy.mlir").read_text())).bundle_bytes()
    kept = rebuilt = 0
    for n in range(200):
        mutant, _ = mutator.mutate(data, rebuild_digest=n % 2 == 0)
        valid = len(mutant) >= 32 and blake3.blake3(mutant[32:]).digest() == mutant[:32]
        if n % 2 == 0:
            rebuilt += valid
        else:
            kept += valid and mutant != data
    assert kept == 0 and rebuilt > 90


# ---------------------------------------------------------------- the text seeds


def test_the_text_seeds_hold_standard_mlir_grids_and_repetition():
    """Standard MLIR (the scf examples, the docs' modules, linalg, gpu kernels),
    explicit 2-D and 3-D grids and `vyre.repetition` are mutated too."""
    seeds = dict(fuzz._seed_texts(random.Random(0), 0))
    assert {"matmul_scf.mlir", "stencil_scf.mlir"} <= set(seeds)
    assert sum(origin.startswith("mlir-input.md:") for origin in seeds) == 2, list(seeds)
    texts = [text.decode() for text in seeds.values()]
    for marker in (
        "linalg.generic",
        "linalg.matmul",
        "linalg.fill",
        "linalg.index",
        '"gpu.launch_func"',
        "scf.while",
        "math.tanh",
        "operandSegmentSizes = array<i32: 3, 3, 3, 0>",  # a 3-D scf.parallel
        "vyre.repetition",
    ):
        assert any(marker in text for text in texts), marker
    grids = [
        tuple(int(n) for n in g)
        for text in texts
        for g in re.findall(r"grid \[(\d+), (\d+), (\d+)\]", text)
    ]
    assert any(g[1] > 1 and g[2] == 1 for g in grids), grids  # 2-D
    assert any(g[2] > 1 for g in grids), grids  # 3-D


def test_every_hand_written_seed_runs_on_the_reference():
    from vyre_xdsl.abi import signature

    for name, text in FUZZ_SEEDS:
        module = vyre_xdsl.parse(text, name)
        inputs = fuzz.random_inputs(signature(module), np.random.default_rng(1))
        assert vyre_xdsl.run(module, inputs, backend="reference", repeat=3), name


def test_the_repetition_seed_runs_repeated():
    """`repeat=3` of the 2-D-grid seed adds rate[t % 4] for t = 0, 1, 2 to every
    cell (numpy), and the second program keeps the largest repetition it saw."""
    text = dict(FUZZ_SEEDS)["seed:grid_2d_repetition"]
    rng = np.random.default_rng(2)
    acc = rng.integers(-64, 65, 256).astype(np.float32) / 4
    rate = np.array([0.25, 1.5, -2.0, 8.0], np.float32)
    steps = rng.integers(0, 3, 256).astype(np.uint32)
    got = vyre_xdsl.run(
        text, {"acc": acc, "rate": rate, "steps": steps}, backend="reference", repeat=3
    )
    expected = acc + rate[0] + rate[1] + rate[2]
    np.testing.assert_array_equal(got["acc"], expected)
    np.testing.assert_array_equal(got["seen"], expected)
    np.testing.assert_array_equal(got["steps"], np.maximum(steps, 2))


def test_a_text_case_runs_repeated_only_on_small_buffers():
    rng = np.random.default_rng(0)
    small = {"x": np.zeros(64, np.float32)}
    big = {"x": np.zeros(fuzz.REPEAT_ELEMENTS + 1, np.float32)}
    drawn = [fuzz.run_repeat(small, rng) for _ in range(400)]
    assert set(drawn) == {1, 2, 3} and 60 < sum(r > 1 for r in drawn) < 140, drawn
    assert {fuzz.run_repeat(big, rng) for _ in range(100)} == {1}
    ran: list = []
    text = dict(FUZZ_SEEDS)["seed:grid_2d_repetition"]
    assert fuzz.check_text(text, rng, [], ran, bundle_sample=0.0, repeat=3)[0] == "accepted"
    assert ran[0][1] == 3 and set(ran[0][0]) == {"acc", "rate", "steps"}


# ---------------------------------------------------------------- regressions the fuzzer found


def test_a_loop_bound_defined_inside_the_loop_is_a_located_error():
    """xDSL's parser leaves a forward-declared placeholder when an op uses a value
    its own region defines; the verifier used to crash on it (ValueError)."""
    import vyre_xdsl
    from vyre_xdsl.diagnostics import VyreDiagnostic

    text = """vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
  %zero = vyre.const 0 : ui32
  vyre.loop @level = %zero to %levels {
    %levels = vyre.const 6 : ui32
  }
}
"""
    with pytest.raises(
        VyreDiagnostic, match="defined only later, inside this op's own region"
    ) as error:
        vyre_xdsl.parse(text, "loop.mlir")
    assert error.value.errors[0][0].name == "vyre.loop"


def test_a_loop_bound_defined_in_a_function_nested_in_the_loop_is_a_located_error():
    """A fuzz mutant (seed 1124554991) moved a loop line to the top of the module,
    above a function: the loop's bounds became placeholders the parser never
    resolved, and xDSL's IsolatedFromAbove verifier raised ValueError on them."""
    import vyre_xdsl
    from vyre_xdsl.diagnostics import VyreDiagnostic

    text = """builtin.module {
  vyre.loop @k = %5 to %4 {
    vyre.func @f(%0: ui32) -> ui32 {
      %4 = vyre.const 3 : ui32
      %5 = vyre.const 0 : ui32
      vyre.yield %4 : ui32
    }
  }
}
"""
    with pytest.raises(
        VyreDiagnostic, match="operand #0 of 'vyre.loop' uses .* defined only later"
    ):
        vyre_xdsl.parse(text, "loop.mlir")
    outcome, _, _ = fuzz.check_text(text, np.random.default_rng(0), [])
    assert outcome == "refused"


# a fuzz mutant (seed 1485362679) turned a mask into 0x7fffffff: the loop's
# bound, computed by a call from constants, became about 2^31 on the reference
LOOP_BOUND_FROM_A_CALL = """
vyre.func @mask(%x: ui32) -> ui32 {
  %m = vyre.const 0x7fffffff : ui32
  %r = vyre.bit_and %x, %m : ui32
  vyre.yield %r : ui32
}
vyre.program @p workgroup_size [4, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[4]
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %big = vyre.const 4000000000 : ui32
  %n = vyre.call @mask(%big) : ui32
  vyre.let @acc = %z : ui32
  vyre.loop @k = %z to %n {
    %a = vyre.var @acc : ui32
    %s = vyre.add %a, %i : ui32
    vyre.assign @acc = %s : ui32
  }
  %r = vyre.var @acc : ui32
  vyre.store @out[%i] = %r : ui32
}
"""


def test_a_loop_too_long_to_run_here_is_large_not_a_hang():
    """Only running tells how long a computed loop is: the reference stops at
    MAX_RUN_ITERATIONS, at once, and the case is "large" (it hung for 5 s)."""
    with fuzz.time_limit(5.0):  # CaseTimeout, were it to run the loop
        outcome, detail, _ = fuzz.check_text(LOOP_BOUND_FROM_A_CALL, np.random.default_rng(0), [])
    assert (outcome, "1852516352 iterations" in detail) == ("large", True), detail


def test_a_bundle_too_long_to_run_here_is_large_before_the_gpu_runs_it():
    import vyre_xdsl
    from vyre_xdsl.megakernel.compile import compile_module

    data = compile_module(vyre_xdsl.parse(LOOP_BOUND_FROM_A_CALL)).bundle_bytes()
    with fuzz.time_limit(5.0):
        outcome = fuzz._run_forged(data, {}, 0.0)
    assert outcome == ("large", "loops past the iteration limit", "")


def test_atomic_tickets_in_another_order_are_no_forgery(monkeypatch):
    """Which invocation gets which atomic ticket is open: a GPU that hands them
    out in another order than the reference computes the same bundle (seed
    4072401974 reported that as a forgery). Other buffers, and tickets with
    other values, still must match exactly."""
    from vyre_xdsl.megakernel import run as megakernel_run

    outputs = {
        "reference": {"tix": np.array([4, 5, 6], np.uint32), "y": np.array([1], np.uint32)},
        "wgpu": {"tix": np.array([5, 4, 6], np.uint32), "y": np.array([1], np.uint32)},
    }
    monkeypatch.setattr(
        megakernel_run, "run_bundle", lambda data, inputs, backend: outputs[backend]
    )
    assert fuzz._run_forged(b"", {}, 0.0, None, frozenset({"tix"}))[0] == "accepted"
    assert fuzz._run_forged(b"", {}, 0.0)[0] == "forged"
    outputs["wgpu"]["tix"] = np.array([5, 4, 7], np.uint32)
    assert fuzz._run_forged(b"", {}, 0.0, None, frozenset({"tix"}))[0] == "forged"
    outputs["wgpu"] = {"tix": np.array([4, 5, 6], np.uint32), "y": np.array([2], np.uint32)}
    assert fuzz._run_forged(b"", {}, 0.0, None, frozenset({"tix"}))[0] == "forged"


def test_seed_bundles_name_their_ticket_buffers():
    from vyre_xdsl.testing.generators import random_module

    seeds = fuzz._seed_bundles(random.Random(3), 40)
    generated = [s for s in seeds if s[0].startswith("random_module(")]
    with_tickets = [s for s in generated if s[3]]
    assert with_tickets, "no seed module with atomic tickets"
    for origin, _, _, multisets in generated:
        seed = int(origin[len("random_module(") :].split(",")[0])
        options = dataclasses.replace(fuzz._small_modules(), traps=False)
        assert multisets == random_module(seed, options).multisets


INPUT_THEN_INTERMEDIATE = """
vyre.program @first workgroup_size [64, 1, 1] {
  vyre.buffer @b binding 0 uniform : ui32[8]
  vyre.buffer @out binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %v = vyre.load @b[%z] : ui32
  vyre.store @out[%i] = %v : ui32
}
vyre.program @second workgroup_size [64, 1, 1] {
  vyre.buffer @b binding 0 write_only : ui32[8]
  %i = vyre.invocation_id x
  vyre.store @b[%i] = %i : ui32
}
vyre.program @third workgroup_size [64, 1, 1] {
  vyre.buffer @b binding 0 read_only : ui32[8]
  vyre.buffer @last binding 1 write_only : ui32[8]
  %i = vyre.invocation_id x
  %v = vyre.load @b[%i] : ui32
  vyre.store @last[%i] = %v : ui32
}
"""


def test_a_bundle_whose_input_is_also_an_intermediate_decodes_and_runs():
    """SPEC 8: `b` is an input (first declared uniform) and an intermediate
    (written, read later, never returned); vyre-compile wrote such a bundle and
    its decoder refused it (InvalidSignatureError)."""
    import vyre_xdsl
    from vyre_xdsl.abi import signature
    from vyre_xdsl.megakernel.compile import compile_module
    from vyre_xdsl.megakernel.run import run_bundle

    module = vyre_xdsl.parse(INPUT_THEN_INTERMEDIATE)
    b = signature(module)["b"]
    assert b.requires_input and b.is_intermediate
    data = compile_module(module).bundle_bytes()
    inputs = {"b": np.arange(5, 13, dtype=np.uint32)}
    got = run_bundle(data, inputs, backend="reference")
    assert sorted(got) == ["last", "out"]
    np.testing.assert_array_equal(got["out"], np.full(64, 5, np.uint32))
    np.testing.assert_array_equal(got["last"], np.arange(8, dtype=np.uint32))


def _axpy(binding: int = 1, name: str = "y") -> str:
    text = (fuzz.EXAMPLES / "axpy.mlir").read_text()
    return text.replace("binding 1 read_write", f"binding {binding} read_write").replace(
        "@y", f"@{name}"
    )


@pytest.mark.parametrize("binding,name", [(65536, "y"), (1, "n" * 300)])
def test_what_vyre_compile_writes_its_decoder_accepts(binding, name):
    """Bindings up to 2^24 - 1 and names of any length verify, so the bundle of
    such a module must decode (the decoder refused slot 65536 and names past 256
    characters: InvalidBindingError / InvalidSignatureError)."""
    import vyre_xdsl
    from vyre_xdsl.megakernel.bundle import TargetModuleBundle
    from vyre_xdsl.megakernel.compile import compile_module
    from vyre_xdsl.megakernel.run import run_bundle

    data = compile_module(vyre_xdsl.parse(_axpy(binding, name))).bundle_bytes()
    TargetModuleBundle.from_bytes(data)
    x = np.arange(1024, dtype=np.float32)
    got = run_bundle(data, {"x": x, name: np.ones(1024, np.float32)}, backend="reference")
    np.testing.assert_array_equal(got[name], 2 * x + 1)


def test_a_binding_past_the_device_limit_is_a_clear_error():
    """wgpu rejected the bind group layout (GPUValidationError, an internal error)."""
    import vyre_xdsl
    from vyre_xdsl.runtime.device import DeviceLimitError

    inputs = {"x": np.ones(1024, np.float32), "y": np.ones(1024, np.float32)}
    with pytest.raises(DeviceLimitError, match="binding 65536"):
        vyre_xdsl.run(_axpy(65536), inputs, backend="wgpu")
    np.testing.assert_array_equal(
        vyre_xdsl.run(_axpy(999), inputs, backend="wgpu")["y"], np.full(1024, 3.0)
    )


def test_a_tool_that_fails_after_writing_a_file_is_partial(monkeypatch, tmp_path):
    from vyre_xdsl.tools import vyre_compile

    def half_written(argv):
        open(argv[argv.index("-o") + 1], "wb").write(b"half")
        print("vyre-compile: error: disk full", file=__import__("sys").stderr)
        return 1

    monkeypatch.setattr(vyre_compile, "main", half_written)
    text = (fuzz.EXAMPLES / "axpy.mlir").read_bytes()
    assert fuzz.check_tools_in_process(text, str(tmp_path), run=False)[0] == "partial"
