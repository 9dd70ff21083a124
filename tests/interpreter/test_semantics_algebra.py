"""The algebraic facts of the semantics table (associative, idempotent, identity),
which vyre-coarsen-reductions relies on, hold for the table's own evaluation on
random operands, checked law by law (integers exactly, floats for the identity)."""

from __future__ import annotations

import numpy as np
import pytest

from vyre_xdsl.semantics import OPS

CLAIMED = [name for name, op in OPS.items() if op.associative or op.idempotent or op.identity]
INTEGERS = {"ui32": np.uint32, "si32": np.int32}


def test_the_reduction_combines_carry_their_facts():
    # written out from the ops' definitions, not read from the table
    assert {n for n in OPS if OPS[n].associative} == {
        "add",
        "mul",
        "min",
        "max",
        "bit_and",
        "bit_or",
        "bit_xor",
    }
    assert {n for n in OPS if OPS[n].idempotent} == {"min", "max", "bit_and", "bit_or"}


@pytest.mark.parametrize("name", CLAIMED)
@pytest.mark.parametrize("tname", sorted(INTEGERS))
def test_integer_laws(name, tname):
    op = OPS[name]
    rng = np.random.default_rng(7)
    info = np.iinfo(INTEGERS[tname])
    a, b, c = (
        rng.integers(info.min, info.max, 1000, endpoint=True, dtype=INTEGERS[tname])
        for _ in range(3)
    )
    if op.associative:
        left = op.evaluate(op.evaluate(a, b), c)
        right = op.evaluate(a, op.evaluate(b, c))
        assert np.array_equal(left, right)
        assert np.array_equal(op.evaluate(a, b), op.evaluate(b, a))
    if op.idempotent:
        assert np.array_equal(op.evaluate(a, a), a)
    if op.identity is not None:
        e = np.full_like(a, op.identity[0])
        assert np.array_equal(op.evaluate(a, e), a)


@pytest.mark.parametrize("name", [n for n in CLAIMED if OPS[n].identity and "f32" in OPS[n].types])
def test_float_identity_keeps_every_value_and_its_sign(name):
    op = OPS[name]
    a = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, 1e-45, -3e38], dtype=np.float32)
    out = op.evaluate(a, np.full_like(a, op.identity[1]))
    assert np.array_equal(out.view(np.uint32), a.view(np.uint32))
