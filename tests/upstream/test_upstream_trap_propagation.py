"""Upstream `vyre-driver-wgpu/tests/trap_propagation.rs`, and the deterministic
trap choice of SPEC 3.4: the lowest trapping invocation, on every backend.

Upstream: a `[1, 1, 1]` program whose body is `trap(7, "trap-propagation-test")`
then a store; the dispatch must fail with the tag, address 7 and the lane
(vyre_xdsl raises `VyreTrap(tag, address, invocation)`). Upstream's second test
is the same through `dispatch_async` (address 11): vyre_xdsl has one run path,
so it is the same program with the other tag and address.
"""

from __future__ import annotations

import numpy as np
import pytest
from upstream_support import backends, run

from vyre_xdsl.interpreter import VyreTrap

TRAP = """vyre.program @p workgroup_size [1, 1, 1] {{
  vyre.buffer @out binding 0 read_write output : ui32[1]
  %z = vyre.const 0 : ui32
  %a = vyre.const {address} : ui32
  vyre.trap %a "{tag}"
  %one = vyre.const 1 : ui32
  vyre.store @out[%z] = %one : ui32
}}
"""


@backends
@pytest.mark.parametrize(
    "tag,address", [("trap-propagation-test", 7), ("async-trap-propagation-test", 11)]
)
def test_dispatch_reports_trap_tag_address_and_lane(backend, tag, address):
    with pytest.raises(VyreTrap) as raised:
        run(TRAP.format(tag=tag, address=address), {"out": np.zeros(1, np.uint32)}, backend=backend)
    trap = raised.value
    assert (trap.tag, trap.address, trap.invocation) == (tag, address, 0)
    message = str(trap)
    assert tag in message and str(address) in message


N = 256_000
SCATTERED = f"""vyre.program @scattered workgroup_size [64, 1, 1] {{
  vyre.buffer @x binding 0 read_only : ui32[{N}]
  vyre.buffer @out binding 1 write_only : ui32[{N}]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %z = vyre.const 0 : ui32
  %bad = vyre.ne %v, %z : ui32
  vyre.if %bad {{
    %seven = vyre.const 7 : ui32
    %a = vyre.mul %i, %seven : ui32
    vyre.trap %a "bad"
  }}
  vyre.store @out[%i] = %v : ui32
}}
"""


@backends
def test_lowest_trapping_invocation_is_reported_every_time(backend):
    """Invocations 3..63 of workgroups 3900, 2600 and 1500 trap (183 invocations in
    three places far apart); the lowest, 1500 * 64 + 3 = 96003, is reported in
    each of 6 runs."""
    x = np.zeros(N, np.uint32)
    for workgroup in (3900, 2600, 1500):
        x[workgroup * 64 + 3 : workgroup * 64 + 64] = 1
    lowest = 1500 * 64 + 3
    for _ in range(6):
        with pytest.raises(VyreTrap) as raised:
            run(SCATTERED, {"x": x}, backend=backend)
        assert (raised.value.tag, raised.value.address, raised.value.invocation) == (
            "bad",
            7 * lowest,
            lowest,
        )
