"""No silent wrong result from a driver's loop limit (SPEC 3.4).

Mesa's lavapipe leaves a shader loop after 65535 iterations per invocation,
counted across all its loops. A 131072-iteration loop and 300 x 300 nested
loops must run to the end on the reference, and on wgpu either give the same
result or raise `LoopLimitError`; on lavapipe they must raise it.
"""

from __future__ import annotations

import pytest
from upstream_support import backends, is_lavapipe, run

from vyre_xdsl.runtime.execute import LoopLimitError

M = 2**32

# acc = acc * 3 + i over 131072 iterations: every iteration changes the result
SINGLE = """vyre.program @single workgroup_size [1, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[1]
  %z = vyre.const 0 : ui32
  %n = vyre.const 131072 : ui32
  %three = vyre.const 3 : ui32
  vyre.let @acc = %z : ui32
  vyre.loop @i = %z to %n {
    %a = vyre.var @acc : ui32
    %i = vyre.var @i : ui32
    %m = vyre.mul %a, %three : ui32
    %s = vyre.add %m, %i : ui32
    vyre.assign @acc = %s : ui32
  }
  %r = vyre.var @acc : ui32
  vyre.store @out[%z] = %r : ui32
}
"""

NESTED = """vyre.program @nested workgroup_size [1, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[2]
  %z = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %n = vyre.const 300 : ui32
  %three = vyre.const 3 : ui32
  vyre.let @count = %z : ui32
  vyre.let @acc = %z : ui32
  vyre.loop @i = %z to %n {
    vyre.loop @j = %z to %n {
      %c = vyre.var @count : ui32
      %c1 = vyre.add %c, %one : ui32
      vyre.assign @count = %c1 : ui32
      %a = vyre.var @acc : ui32
      %j = vyre.var @j : ui32
      %m = vyre.mul %a, %three : ui32
      %s = vyre.add %m, %j : ui32
      vyre.assign @acc = %s : ui32
    }
  }
  %rc = vyre.var @count : ui32
  vyre.store @out[%z] = %rc : ui32
  %ra = vyre.var @acc : ui32
  vyre.store @out[%one] = %ra : ui32
}
"""


def single_expected() -> list[int]:
    acc = 0
    for i in range(131072):
        acc = (acc * 3 + i) % M
    return [acc]


def nested_expected() -> list[int]:
    acc = 0
    for _ in range(300):
        for j in range(300):
            acc = (acc * 3 + j) % M
    return [90000, acc]


@backends
@pytest.mark.parametrize(
    "text,expected",
    [(SINGLE, single_expected), (NESTED, nested_expected)],
    ids=["131072-iterations", "300x300-nested"],
)
def test_long_loops_are_right_or_refused(backend, text, expected):
    if backend == "reference":
        assert run(text, backend=backend)["out"].tolist() == expected()
        return
    if is_lavapipe():
        with pytest.raises(LoopLimitError, match="65535 iterations"):
            run(text, backend=backend)
        return
    try:
        got = run(text, backend=backend)["out"].tolist()
    except LoopLimitError:
        return  # refused with the clear error: allowed on any driver
    assert got == expected()


def test_a_loop_just_under_the_limit_runs_on_wgpu():
    """65000 iterations: no false alarm (the reference runs the longer loops above)."""
    text = SINGLE.replace("131072", "65000")
    acc = 0
    for i in range(65000):
        acc = (acc * 3 + i) % M
    assert run(text, backend="wgpu")["out"].tolist() == [acc]
