"""Upstream `vyre-driver-wgpu/tests/loop_carrier_three_level_if_real_dispatch.rs`:
named locals assigned three `if`s deep inside loops ("carriers") must reach the
stores after the loops, on a real dispatch. Same programs (a brace-scope walker
over token kinds), same inputs, upstream's expected values; on the reference and
on wgpu.
"""

from __future__ import annotations

from upstream_support import backends, run, u32

SENTINEL = 2**32 - 1
LBRACE, RBRACE = 1, 2

HEADER = """vyre.program @walker workgroup_size [{wx}, 1, 1] {{
  vyre.buffer @kinds binding 0 read_only : ui32[4]
  vyre.buffer @out binding 1 write_only : ui32[{n}]
  %sent = vyre.const 4294967295 : ui32
  %c0 = vyre.const 0 : ui32
  %c1 = vyre.const 1 : ui32
  %c2 = vyre.const 2 : ui32
  %c4 = vyre.const 4 : ui32
  %t = vyre.invocation_id x
"""


def scan_body(p: str, index: str, rbrace: bool, depth: str = "depth") -> str:
    """One walker step at token `index` (an SSA name): the carriers are @scope_open and @{depth}."""
    text = f"""    vyre.let @kind_{p} = %k_{p} : ui32
"""
    text = f"""    %k_{p} = vyre.load @kinds[{index}] : ui32
    vyre.let @kind_{p} = %k_{p} : ui32
"""
    if rbrace:
        text += f"""    %so_{p} = vyre.var @scope_open : ui32
    %open_{p} = vyre.eq %so_{p}, %sent : ui32
    %kr_{p} = vyre.var @kind_{p} : ui32
    %isr_{p} = vyre.eq %kr_{p}, %c2 : ui32
    %both_{p} = vyre.and %open_{p}, %isr_{p} : i1
    vyre.if %both_{p} {{
      %d_{p} = vyre.var @{depth} : ui32
      %d1_{p} = vyre.add %d_{p}, %c1 : ui32
      vyre.assign @{depth} = %d1_{p} : ui32
    }}
"""
    text += f"""    %so2_{p} = vyre.var @scope_open : ui32
    %open2_{p} = vyre.eq %so2_{p}, %sent : ui32
    vyre.if %open2_{p} {{
      %kl_{p} = vyre.var @kind_{p} : ui32
      %isl_{p} = vyre.eq %kl_{p}, %c1 : ui32
      vyre.if %isl_{p} {{
        %dz_{p} = vyre.var @{depth} : ui32
        %zero_{p} = vyre.eq %dz_{p}, %c0 : ui32
        vyre.if %zero_{p} {{
          vyre.assign @scope_open = {index} : ui32
        }} else {{
          %dd_{p} = vyre.var @{depth} : ui32
          %dm_{p} = vyre.sub %dd_{p}, %c1 : ui32
          vyre.assign @{depth} = %dm_{p} : ui32
        }}
      }}
    }}
"""
    return text


def single_invocation(rbrace: bool, outputs: int) -> str:
    """Invocation 0 walks the four tokens forward; stores scope_open (and depth)."""
    text = (
        HEADER.format(wx=1, n=outputs)
        + """  %first = vyre.eq %t, %c0 : ui32
  vyre.if %first {
    vyre.let @scope_open = %sent : ui32
    vyre.let @depth = %c0 : ui32
    vyre.loop @i = %c0 to %c4 {
      %i = vyre.var @i : ui32
"""
        + scan_body("a", "%i", rbrace)
        .replace("\n    ", "\n      ")
        .replace("    %k_a", "      %k_a", 1)
        + """    }
    %r0 = vyre.var @scope_open : ui32
    vyre.store @out[%c0] = %r0 : ui32
"""
    )
    if outputs == 2:
        text += """    %r1 = vyre.var @depth : ui32
    vyre.store @out[%c1] = %r1 : ui32
"""
    return text + "  }\n}\n"


def backward_walk(row: str) -> str:
    """The walk from token row - 1 down to 0 (the per-row scope walker)."""
    return (
        f"""    vyre.let @scope_open = %sent : ui32
    vyre.let @scope_depth = %c0 : ui32
    vyre.loop @scope_scan = %c0 to {row} {{
      %scan = vyre.var @scope_scan : ui32
      %before = vyre.sub {row}, %c1 : ui32
      %rev = vyre.sub %before, %scan : ui32
"""
        + scan_body("b", "%rev", True, "scope_depth")
        .replace("\n    ", "\n      ")
        .replace("    %k_b", "      %k_b", 1)
        + """    }
"""
    )


@backends
def test_three_level_if_assign_in_loop_propagates_via_carrier(backend):
    got = run(single_invocation(False, 1), {"kinds": u32([LBRACE, 0, 0, 0])}, backend=backend)
    assert got["out"].tolist() == [0]


@backends
def test_parallel_per_row_scope_walker_via_invocation_id(backend):
    text = (
        HEADER.format(wx=4, n=4)
        + """  %row = vyre.lt %t, %c4 : ui32
  vyre.if %row {
"""
        + backward_walk("%t")
        + """    %r = vyre.var @scope_open : ui32
    vyre.store @out[%t] = %r : ui32
  }
}
"""
    )
    got = run(text, {"kinds": u32([LBRACE, LBRACE, 0, 0])}, backend=backend)
    assert got["out"].tolist() == [SENTINEL, 0, 1, 1]


@backends
def test_nested_outer_loop_with_inner_scope_walker_per_row(backend):
    text = (
        HEADER.format(wx=1, n=4)
        + """  %first = vyre.eq %t, %c0 : ui32
  vyre.if %first {
    vyre.loop @row = %c0 to %c4 {
      %rowv = vyre.var @row : ui32
"""
        + backward_walk("%rowv")
        .replace("\n    ", "\n      ")
        .replace("    vyre.let @scope_open", "      vyre.let @scope_open", 1)
        + """      %r = vyre.var @scope_open : ui32
      vyre.store @out[%rowv] = %r : ui32
    }
  }
}
"""
    )
    got = run(text, {"kinds": u32([LBRACE, LBRACE, 0, 0])}, backend=backend)
    assert got["out"].tolist() == [SENTINEL, 0, 1, 1]


@backends
def test_two_sequential_conditionals_with_shared_carrier_propagate(backend):
    got = run(
        single_invocation(True, 2), {"kinds": u32([RBRACE, LBRACE, LBRACE, 0])}, backend=backend
    )
    assert got["out"].tolist() == [2, 0]
