"""Upstream `vyre-driver-wgpu/tests/buf_len_array_length/basic_len_contracts.rs`,
the u32 cases: `buf_len` of a runtime-sized read-only buffer that the program
never loads is its element count (1, 3 and 8 for 4, 12 and 32 bytes).

The U8 cases (byte capacity, byte loads, byte packing) and the other files of
`buf_len_array_length/` are listed in README.md.
"""

from __future__ import annotations

import pytest
from upstream_support import backends, run, u32

WRITER = """vyre.program @len workgroup_size [1, 1, 1] {
  vyre.buffer @input binding 0 read_only : ui32[?]
  vyre.buffer @out binding 1 write_only : ui32[1]
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %first = vyre.eq %i, %z : ui32
  vyre.if %first {
    %n = vyre.buf_len @input
    vyre.store @out[%z] = %n : ui32
  }
}
"""


@backends
@pytest.mark.parametrize(
    "words,expected",
    [([0xAB], 1), ([1, 2, 3], 3), (list(range(0, 32, 4)), 8)],
    ids=["four-bytes", "twelve-bytes", "thirty-two-bytes"],
)
def test_buf_len_of_a_never_loaded_runtime_sized_input(backend, words, expected):
    assert run(WRITER, {"input": u32(words)}, backend=backend)["out"].tolist() == [expected]
