"""The random program generator: well-typed, deterministic, covering, and its
f32 abstract domain sound on the cases it claims."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings

from vyre_xdsl import semantics
from vyre_xdsl.abi import signature
from vyre_xdsl.context import parse_module
from vyre_xdsl.diagnostics import verify_module
from vyre_xdsl.dialects.vyre import programs
from vyre_xdsl.testing import f32_domain as fd
from vyre_xdsl.testing.generators import (
    WIDE_FLOAT_OPS,
    WIDE_TYPES,
    WIDE_UINT_OPS,
    GeneratorOptions,
    modules,
    random_module,
)

SEEDS = range(150)


@pytest.fixture(scope="module")
def cases():
    return [random_module(seed) for seed in SEEDS]


def test_modules_verify_and_their_inputs_bind(cases):
    for case in cases:
        verify_module(case.module)
        assert 1 <= len(programs(case.module)) <= 3
        sig = signature(case.module)
        assert sorted(case.inputs) == sorted(sig.inputs)
        bound = sig.bind(case.inputs)
        assert sorted(bound) == sorted(sig.names)


def test_printed_modules_parse_back_to_the_same_text(cases):
    for case in cases[:15]:
        assert str(parse_module(case.text)) == case.text


def test_a_seed_gives_the_same_module_and_inputs():
    a, b = random_module(1234), random_module(1234)
    assert a.text == b.text
    assert sorted(a.inputs) == sorted(b.inputs)
    for name in a.inputs:
        assert a.inputs[name].tobytes() == b.inputs[name].tobytes()
    assert random_module(1235).text != a.text


def test_every_op_and_construct_appears(cases):
    seen = set().union(*(case.features for case in cases))
    ops = {name.split(":")[0] for name in seen}
    assert set(semantics.OPS) <= ops, sorted(set(semantics.OPS) - ops)
    constructs = {
        "select",
        "fma",
        "const",
        "load",
        "store",
        "oob_store",
        "buf_len",
        "let",
        "assign",
        "var",
        "if",
        "else",
        "loop",
        "accumulator",
        "block",
        "region",
        "barrier",
        "workgroup_memory",
        "tile_load",
        "tile_store",
        "return",
        "trap",
        "runtime_sized",
        "zero_count",
        "sink",
        "atomic_contended",
        "atomic_result",
        "vyre.invocation_id:x",
        "vyre.workgroup_id:x",
        "vyre.local_id:x",
        "vyre.local_id:y",
    }
    constructs |= {f"atomic:{kind}" for kind in semantics.ATOMIC_OPS}
    for ty in ("ui32", "si32", "f32"):
        constructs |= {f"cast:{ty}:i1", f"cast:i1:{ty}"}
    constructs |= {
        "cast:f32:ui32",
        "cast:f32:si32",
        "cast:ui32:f32",
        "cast:si32:f32",
        "cast:ui32:si32",
    }
    constructs |= {"bitcast:ui32:f32", "bitcast:f32:ui32", "bitcast:si32:f32", "bitcast:f32:si32"}
    # what earlier versions never produced
    constructs |= {
        "grid_sync",
        "trap_div",
        "trap_mod",
        "trap_several",
        "traps_several_sites",
        "tickets",
        "big_grid",
        "barrier_in_block",
        "barrier_in_region",
        "barrier_in_loop",
        "barrier_in_if",
    }
    constructs |= {
        f"ieee:{op}" for op in ("add", "sub", "mul", "div", "min", "max", "lt", "eq", "ne")
    }
    assert constructs <= seen, sorted(constructs - seen)


def test_every_table_op_appears_on_every_type_it_accepts(cases):
    """On ui32, si32, f32 and i1 every op; on the wider types (their own buffers,
    bit-exact ops only: `WIDE_FLOAT_OPS`, `WIDE_UINT_OPS`) every one of those."""
    seen = set().union(*(case.features for case in cases))
    wanted = {
        f"{name}:{ty}"
        for name, sem in semantics.OPS.items()
        for ty in sem.types
        if ty not in WIDE_TYPES
    }
    for ty in WIDE_TYPES:
        info = semantics.ELEMENTS[ty]
        ops = WIDE_FLOAT_OPS if semantics.ELEMENTS[info.lane or ty].is_float else WIDE_UINT_OPS
        wanted |= {f"{name}:{ty}" for name in ops if ty in semantics.OPS[name].types}
    wanted |= {f"type:{ty}" for ty in WIDE_TYPES}
    assert wanted <= seen, sorted(wanted - seen)


def test_options_turn_features_off():
    options = GeneratorOptions(
        atomics=False, workgroup_memory=False, traps=False, returns=False, nonlocal_sharing=False
    )
    for seed in range(40):
        case = random_module(seed, options)
        assert not {f for f in case.features if f.startswith("atomic")}
        assert not case.features & {"workgroup_memory", "trap", "return"}
        assert "nonlocal_sharing" not in case.fusion_hazards
        text = case.text
        assert "vyre.atomic" not in text and "vyre.trap" not in text and "workgroup :" not in text


def test_exact_f32_buffers_have_no_tolerance_and_approximate_ones_do(cases):
    tolerances = [t for case in cases for t in case.tolerances.values()]
    assert 0.0 in tolerances
    assert any(t > 0 for t in tolerances)
    assert all(t <= fd.MAX_K for t in tolerances)


@settings(max_examples=25, deadline=None, database=None)
@given(case=modules(GeneratorOptions(max_programs=2)))
def test_the_hypothesis_strategy_gives_verified_modules(case):
    verify_module(case.module)
    assert len(programs(case.module)) <= 2
    signature(case.module).bind(case.inputs)


# ------------------------------------------------------------------ f32 domain


def test_exact_arithmetic_stays_exact_while_it_fits_the_significand():
    quarter = fd.F32(fd.EXACT, -64.0, 64.0, 2, 0.0, 0.25)
    product = fd.mul(quarter, quarter)
    assert product.kind == fd.EXACT and (product.lo, product.hi, product.frac) == (
        -4096.0,
        4096.0,
        4,
    )
    cube = fd.mul(product, quarter)
    assert cube.kind == fd.EXACT and cube.hi == 2.0**18 and cube.frac == 6  # 2**18 * 2**6 == 2**24
    fourth = fd.mul(cube, quarter)
    assert fourth.kind == fd.APPROX and fourth.k == 2.0


def test_the_exactness_rule_matches_float32_arithmetic():
    """Products of quarter-grid values in [-64, 64] (three factors) are exact in f32."""
    rng = np.random.default_rng(0)
    a, b, c = (rng.integers(-256, 257, 10000) / 4.0 for _ in range(3))
    exact = a * b * c  # float64: exact for these magnitudes
    single = (a.astype(np.float32) * b.astype(np.float32)) * c.astype(np.float32)
    assert np.array_equal(exact, single.astype(np.float64))


def test_inexact_additions_need_a_result_away_from_zero():
    approx = fd.F32(fd.APPROX, 1.0, 2.0, 0, 10.0, 1.0)
    assert fd.add(approx, approx).k == pytest.approx(10.0 * 2 * 2 / 2 + 2)  # (10*2 + 10*2) / 2 + 2
    crossing = fd.F32(fd.EXACT, -3.0, 3.0, 0, 0.0, 1.0)
    assert fd.add(approx, crossing) is None
    assert fd.minmax(approx, crossing, True).k == 10.0


def test_specials_only_flow_into_bit_preserving_ops():
    special = fd.SPECIAL_VALUE
    exact_zero_free = fd.F32(fd.EXACT, 1.0, 2.0, 0, 0.0, 1.0)
    exact_with_zero = fd.F32(fd.EXACT, -1.0, 2.0, 0, 0.0, 1.0)
    assert fd.add(special, exact_zero_free) is None and fd.mul(special, special) is None
    assert fd.join(special, exact_zero_free) == special
    assert fd.join(special, exact_with_zero) is None  # -0 and +0 have different bits
    assert fd.bit_exact(exact_zero_free) and not fd.bit_exact(exact_with_zero)


def test_transcendental_ops_take_quarter_grid_operands_in_their_domain():
    inside = fd.F32(fd.EXACT, -2.0, 3.0, 2, 0.0, 0.25)
    result = fd.transcendental("exp", inside)
    assert result.kind == fd.APPROX
    assert result.lo == pytest.approx(math.exp(-2.0)) and result.hi == pytest.approx(math.exp(3.0))
    assert (
        result.k == 2 * 16.0 + 2
    )  # WGSL: exp on [-6, 6] allows 3 + 2 * 6 = 15 ULP (+1 margin), numpy 1
    assert fd.transcendental("exp", fd.F32(fd.EXACT, 0.0, 7.0, 2, 0.0, 0.25)) is None
    assert fd.transcendental("sin", fd.F32(fd.EXACT, 0.0, 1.0, 5, 0.0, 2.0**-5)) is None
    assert fd.transcendental("log", fd.F32(fd.EXACT, 1.0, 4.0, 2, 0.0, 0.25)) is None


def test_constants_know_their_grid():
    assert fd.constant(0.75).frac == 2 and fd.constant(3.0).frac == 0
    assert fd.constant(-0.0).kind == fd.EXACT


# ------------------------------------------------------------------ oracles of the new constructs


def _outcomes(cases, feature):
    from vyre_xdsl.testing.compare import outcome

    chosen = [case for case in cases if feature(case)]
    assert chosen
    return [(case, outcome(case.module, case.inputs, "reference")) for case in chosen]


def test_every_reference_trap_is_one_the_generator_predicts(cases):
    """`may_trap` comes from the generator's construction; the interpreter's
    trap must be one of them (and a trap never appears without a pattern)."""
    trapped = 0
    for case, result in _outcomes(cases, lambda c: c.has_trap):
        if result.trap is not None:
            trapped += 1
            assert case.may_trap(result.trap), (result.trap, case.trap_patterns, case.text)
    assert trapped >= 5
    for case in cases:
        assert case.has_trap == bool(case.trap_patterns)


def test_the_trap_rule_accepts_any_trapping_invocation_and_nothing_else():
    from vyre_xdsl.testing.compare import Outcome, generated_differences

    case = next(c for c in (random_module(s) for s in range(400)) if "trap_several" in c.features)
    tag, mask, match, mul, add = next(p for p in case.trap_patterns if p[1] != 0xFFFFFFFF)
    first = (tag, (match * mul + add) & 0xFFFFFFFF, match)
    second = (tag, ((match + mask + 1) * mul + add) & 0xFFFFFFFF, match + mask + 1)
    assert not generated_differences(case, Outcome(trap=first), Outcome(trap=second), gpu=True)
    wrong_address = (tag, first[1] + 1, match)
    assert generated_differences(case, Outcome(trap=first), Outcome(trap=wrong_address), gpu=True)
    assert generated_differences(case, Outcome(trap=first), Outcome(outputs={}), gpu=True)


def test_tickets_are_a_permutation_of_the_counter_range(cases):
    """Checked with numpy: per counter slot, the tickets stored are exactly
    initial, initial + 1, ..., final - 1, each once."""
    checked = 0
    for case, result in _outcomes(cases, lambda c: c.multisets):
        if result.trap is not None:
            continue
        for tickets_name in case.multisets:
            counter_name = "ctr" + tickets_name.removeprefix("tix")
            initial = [int(v) for v in case.inputs[counter_name]]
            final = [int(v) for v in result.outputs[counter_name]]
            tickets = [int(v) for v in result.outputs[tickets_name]]
            slots = len(initial)
            for slot in range(slots):
                taken = (final[slot] - initial[slot]) % 2**32
                positions = [i for i in range(len(tickets)) if i & (slots - 1) == slot]
                assert taken <= len(positions)
                want = {(initial[slot] + j) % 2**32 for j in range(taken)}
                got = [tickets[i] for i in positions]
                # each ticket exactly once; positions of lanes that took none hold 0
                for value in want - {0}:
                    assert got.count(value) == 1, (case.text, slot, value)
                assert all(value in want or value == 0 for value in got), (case.text, slot)
                checked += 1
    assert checked >= 5


def _ieee_values(cases) -> np.ndarray:
    return np.concatenate(
        [
            result.outputs[name]
            for case, result in _outcomes(cases, lambda c: c.ieee_buffers)
            if result.trap is None
            for name in case.ieee_buffers
            if result.outputs[name].dtype == np.float32
        ]
    )


def _has_subnormal(values: np.ndarray) -> bool:
    tiny = np.abs(values[np.isfinite(values)])
    return bool(((tiny > 0) & (tiny < 2.0**-126)).any())


def test_ieee_buffers_carry_nan_infinity_and_subnormals(cases):
    values = _ieee_values(cases)
    assert np.isnan(values).any() and np.isinf(values).any()
    # a subnormal result is rarer: look further, a batch of seeds at a time
    for start in range(len(SEEDS), 10 * len(SEEDS), len(SEEDS)):
        if _has_subnormal(values):
            break
        more = [random_module(seed) for seed in range(start, start + len(SEEDS))]
        values = _ieee_values(more)
    assert _has_subnormal(values)


def test_big_grids_pass_65535_workgroups(cases):
    from vyre_xdsl.backends.wgsl import compile_module

    big = [case for case in cases if "big_grid" in case.features]
    grids = [kernel.static_grid for case in big for kernel in compile_module(case.module)]
    # folded over y (a runtime-sized buffer leaves a grid to the run: None)
    assert sum(1 for g in grids if g and g[0] * g[1] * g[2] > 65535 and g[1] > 1) >= 2, grids


def test_grid_sync_programs_read_across_invocations(cases):
    synced = [case for case in cases if "grid_sync" in case.features]
    assert synced
    for case in synced:
        assert "vyre.barrier grid_sync" in case.text
        assert "grid_sync" in case.fusion_hazards
