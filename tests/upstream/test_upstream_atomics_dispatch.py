"""Upstream `vyre-reference/tests/atomic_oracle_contract.rs` and
`vyre-driver-wgpu/tests/dispatch_adversarial.rs`.

Atomics: each op returns the value before it and stores upstream's exact new
value (one invocation, so the order is fixed), on the reference and on wgpu.
Upstream's `LruUpdate` has no vyre_xdsl counterpart (README.md). Upstream's
reference rejects `CompareExchangeWeak` and `FetchNand` ("unsupported atomic op");
vyre_xdsl defines them (`~(old & v)`, and a compare-exchange that the reference
never fails spuriously), as its emitter does, so those cases check the values.
"""

from __future__ import annotations

import pytest
from upstream_support import backends, run, u32

from vyre_xdsl.abi import MissingInputError

ATOMIC = """vyre.program @atomic workgroup_size [1, 1, 1] {{
  vyre.buffer @cell binding 0 read_write : ui32[1]
  vyre.buffer @old binding 1 write_only : ui32[1]
  %z = vyre.const 0 : ui32
  %v = vyre.const {value} : ui32
{expected}  %o = vyre.atomic {op} @cell[%z], {operands} : ui32
  vyre.store @old[%z] = %o : ui32
}}
"""

# (op, old, expected, value, returned old, stored new): upstream's table
CASES = [
    ("add", 0xFFFF_FFFE, None, 5, 0xFFFF_FFFE, 3),
    ("or", 0b1010, None, 0b0101, 0b1010, 0b1111),
    ("and", 0b1010, None, 0b0110, 0b1010, 0b0010),
    ("xor", 0b1010, None, 0b0110, 0b1010, 0b1100),
    ("min", 99, None, 7, 99, 7),
    ("max", 99, None, 777, 99, 777),
    ("exchange", 123, None, 456, 123, 456),
    ("compare_exchange", 0xAAAA, 0xAAAA, 0xBBBB, 0xAAAA, 0xBBBB),
    ("compare_exchange", 0xAAAA, 0xCCCC, 0xBBBB, 0xAAAA, 0xAAAA),
    # beyond upstream's reference (its emitter has them)
    ("fetch_nand", 0b1100, None, 0b1010, 0b1100, ~0b1000 & 0xFFFF_FFFF),
    ("compare_exchange_weak", 0xAAAA, 0xCCCC, 0xBBBB, 0xAAAA, 0xAAAA),
]


@backends
@pytest.mark.parametrize(
    "op,old,expected,value,returned,stored", CASES, ids=[f"{c[0]}-{k}" for k, c in enumerate(CASES)]
)
def test_atomic_returns_old_value_and_stores_exact_new_value(
    backend, op, old, expected, value, returned, stored
):
    if expected is None:
        text = ATOMIC.format(op=op, value=value, expected="", operands="%v")
    else:
        text = ATOMIC.format(
            op=op, value=value, expected=f"  %e = vyre.const {expected} : ui32\n", operands="%e, %v"
        )
    got = run(text, {"cell": u32([old])}, backend=backend)
    assert (got["old"].tolist(), got["cell"].tolist()) == ([returned], [stored])


def test_compare_exchange_without_expected_is_rejected_with_an_actionable_error():
    from vyre_xdsl.api import parse
    from vyre_xdsl.diagnostics import VyreError

    text = ATOMIC.format(op="compare_exchange", value=2, expected="", operands="%v")
    with pytest.raises(VyreError, match="takes an expected value and a new value"):
        parse(text)


# ------------------------------------------------- dispatch_adversarial.rs

NO_OP = """vyre.program @noop workgroup_size [1, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[1]
}
"""


@backends
def test_no_op_program_returns_zero_initialized_output(backend):
    assert run(NO_OP, {}, backend=backend)["out"].tolist() == [0]


@backends
def test_dispatch_with_missing_inputs_yields_structured_error(backend):
    text = """vyre.program @p workgroup_size [1, 1, 1] {
  vyre.buffer @a binding 0 read_only : ui32[1]
  vyre.buffer @out binding 1 write_only : ui32[1]
}
"""
    with pytest.raises(MissingInputError, match="'a'"):
        run(text, {}, backend=backend)
