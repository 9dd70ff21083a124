"""The public analysis module: each answer checked on hand-written IR whose
facts are read off the text (an independent source), not from the code."""

from __future__ import annotations

from vyre_xdsl.analysis import (
    accesses,
    buffers_read,
    buffers_written,
    contains_trap,
    declaration_of,
    declared_local_names,
    hazards,
    is_dispatch_uniform,
    is_expression,
    is_kernel_workgroup_uniform,
    is_speculatable,
    is_workgroup_uniform,
    local_reads,
    locals_assigned_in,
    may_trap,
    reads_loop_variable,
)
from vyre_xdsl.context import parse_module
from vyre_xdsl.dialects.vyre import LetOp, LoopOp, VarOp, programs

PROGRAM = """
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[64]
  vyre.buffer @y binding 1 read_write : ui32[64]
  vyre.buffer @w binding 2 write_only : ui32[64]
  vyre.buffer @c binding 3 read_write : ui32[1]
  %i = vyre.invocation_id x
  %wid = vyre.workgroup_id x
  %zero = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %n = vyre.buf_len @x
  %sa = vyre.const 7 : si32
  %sb = vyre.const 2 : si32
  %sdiv = vyre.div %sa, %sb : si32
  %udiv = vyre.div %one, %zero : ui32
  %v = vyre.load @x[%i] : ui32
  vyre.let @acc = %zero : ui32
  vyre.let @fixed = %one : ui32
  vyre.loop @k = %zero to %n {
    %k = vyre.var @k : ui32
    %a = vyre.var @acc : ui32
    %f = vyre.var @fixed : ui32
    %s = vyre.add %a, %k : ui32
    vyre.assign @acc = %s : ui32
    vyre.store @y[%k] = %s : ui32
  }
  %old = vyre.atomic add @w[%zero], %one : ui32
  %old2 = vyre.atomic add @c[%zero], %one : ui32
  %wn = vyre.add %wid, %n : ui32
  %in = vyre.add %i, %n : ui32
}
"""


def _program():
    return programs(parse_module(PROGRAM))[0]


def _value(program, name):
    for op in program.walk():
        for result in op.results:
            if result.name_hint == name:
                return result
    raise KeyError(name)


def _loop(program) -> LoopOp:
    return next(op for op in program.walk() if isinstance(op, LoopOp))


def test_accesses_list_every_load_store_and_atomic_with_its_index():
    program = _program()
    found = [
        (a.op.name, a.buffer, a.index.name_hint, a.reads, a.writes) for a in accesses([program])
    ]
    assert found == [
        ("vyre.load", "x", "i", True, False),
        ("vyre.store", "y", "k", False, True),
        ("vyre.atomic", "w", "zero", True, True),
        ("vyre.atomic", "c", "zero", True, True),
    ]


def test_buffers_read_and_written():
    program = _program()
    assert buffers_written(program) == {"y", "w", "c"}
    # an atomic on a write_only buffer sees only what the program wrote: not a read
    assert buffers_read(program) == {"x", "c"}
    assert buffers_written(_loop(program)) == {"y"}
    assert buffers_read(_loop(program)) == set()


def test_may_trap_only_signed_division_and_trap():
    program = _program()
    assert may_trap(_value(program, "sdiv").owner)
    assert not may_trap(_value(program, "udiv").owner)  # ui32 div by 0 is defined
    assert contains_trap(program)
    assert not contains_trap(_loop(program))


def test_speculatable_is_a_non_trapping_expression():
    program = _program()
    sdiv, udiv, v = (_value(program, n).owner for n in ("sdiv", "udiv", "v"))
    assert is_expression(sdiv) and not is_speculatable(sdiv)
    assert is_speculatable(udiv)
    assert not is_expression(v)  # a load reads memory
    assert is_speculatable(_value(program, "n").owner)  # buf_len is fixed for a run


def test_uniformity_of_workgroup_and_dispatch():
    program = _program()
    wn, in_, k = _value(program, "wn"), _value(program, "in"), _value(program, "k")
    assert is_workgroup_uniform(wn) and not is_dispatch_uniform(wn)
    assert not is_workgroup_uniform(in_) and not is_dispatch_uniform(in_)
    assert is_dispatch_uniform(_value(program, "n"))
    assert is_workgroup_uniform(k)  # loop variable of a loop with uniform bounds
    assert not is_dispatch_uniform(k)  # a named local is not an expression


KERNEL = """
builtin.module {
  kernel.descriptor @p id "0" entry "main" attributes {source = "p"} {
    kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [4, 1, 1] count [@y]
    kernel.binding @x slot 0 group 0 constant read_only : ui32[256]
    kernel.binding @y slot 1 group 0 global read_write : ui32[256]
    kernel.binding @__vyre_descriptor_trap_sidecar slot 2 group 0 global read_write atomic trap_sidecar : ui32[8]
    %i = kernel.invocation_id x
    %l = kernel.local_id x
    %w = kernel.workgroup_id x
    %n = kernel.buffer_length slot 0
    %two = vyre.const 2 : ui32
    %z = vyre.const 0 : ui32
    %wn = vyre.add %w, %n : ui32
    %c = vyre.lt %wn, %two : ui32
    %wl = vyre.add %w, %l : ui32
    %sa = vyre.bitcast %w : ui32 to si32
    %sb = vyre.const 3 : si32
    %sd = vyre.div %sa, %sb : si32
    kernel.if %c {
      %v = kernel.load_constant slot 0 [%i] : ui32
      %v2 = vyre.add %v, %wl : ui32
      %sdu = vyre.bitcast %sd : si32 to ui32
      %v3 = vyre.add %v2, %sdu : ui32
      kernel.store_global slot 1 [%i] = %v3 : ui32
    }
  }
}

"""


def test_workgroup_uniformity_of_kernel_ir():
    descriptor = parse_module(KERNEL).body.block.first_op
    uniform = {"n", "two", "wn", "c", "w"}
    varying = {"i", "l", "wl", "v", "v2", "v3"}
    trapping = {"sd", "sdu"}  # an si32 division may trap: not counted as uniform
    for name in uniform:
        assert is_kernel_workgroup_uniform(_value(descriptor, name)), name
    for name in varying | trapping:
        assert not is_kernel_workgroup_uniform(_value(descriptor, name)), name


def test_named_locals():
    program = _program()
    loop = _loop(program)
    acc, fixed = (op for op in program.walk() if isinstance(op, LetOp))
    assert locals_assigned_in(loop) == {acc}
    reads = {r.var_name.data: r for r in local_reads(loop)}
    assert declaration_of(reads["fixed"]) is fixed
    assert declaration_of(reads["k"]) is loop and reads_loop_variable(reads["k"])
    assert not reads_loop_variable(reads["acc"])
    assert declared_local_names(program) == {"acc", "fixed", "k"}
    assert all(isinstance(r, VarOp) for r in reads.values())


CHAIN = """
vyre.program @a workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 write_only : ui32[64]
  %i = vyre.invocation_id x
  vyre.store @t[%i] = %i : ui32
}
vyre.program @b workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[64]
  vyre.buffer @u binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  %v = vyre.load @t[%i] : ui32
  vyre.store @u[%i] = %v : ui32
}
vyre.program @c workgroup_size [64, 1, 1] {
  vyre.buffer @u binding 0 read_only : ui32[64]
  vyre.buffer @o binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %sixty4 = vyre.const 64 : ui32
  %base = vyre.mul %w, %sixty4 : ui32
  %j = vyre.add %base, %l : ui32
  %zero = vyre.const 0 : ui32
  %v = vyre.load @u[%zero] : ui32
  vyre.store @o[%i] = %v : ui32
}
"""


def test_hazards_classify_each_dependence():
    progs = programs(parse_module(CHAIN))
    per_arm = [accesses(p.statements()) for p in progs]
    found = hazards([p.workgroup for p in progs], per_arm, (64, 1, 1), {"t", "u", "o"})
    summary = [(h.earlier, h.later, h.buffer, h.kind, h.strength) for h in found]
    # t: same index %i in both arms; u: arm c reads element 0, written by invocation 0 only
    assert summary == [
        (0, 1, "t", "read-after-write", "invocation"),
        (1, 2, "u", "read-after-write", "grid"),
    ]


def test_hazard_within_the_workgroup_span_needs_a_workgroup_barrier():
    progs = programs(parse_module(CHAIN.replace("vyre.load @u[%zero]", "vyre.load @u[%j]")))
    per_arm = [accesses(p.statements()) for p in progs]
    found = hazards([p.workgroup for p in progs], per_arm, (64, 1, 1), {"t", "u", "o"})
    assert [(h.buffer, h.strength) for h in found] == [("t", "invocation"), ("u", "workgroup")]


STAGING = """
builtin.module {{
  kernel.descriptor @p id "0" entry "main" attributes {{source = "p"}} {{
    kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [2, 1, 1] count [@a]
    kernel.binding @a slot 0 group 0 constant read_only : ui32[128]
    kernel.binding @t slot 16777216 shared read_write : ui32[128]
    %l = kernel.local_id x
    %w = kernel.workgroup_id x
    %c64 = vyre.const 64 : ui32
    %c5 = vyre.const 5 : ui32
    %c1 = vyre.const 1 : ui32
    %j = vyre.add %l, %c64 : ui32
    %high = vyre.shr %j, %c5 : ui32
    %flip = vyre.bit_and %high, %c1 : ui32
    %slot = vyre.bit_xor %j, %flip : ui32
    %wj = vyre.add %w, %c64 : ui32
    %v = kernel.load_constant slot 0 [%l] : ui32
    kernel.store_shared slot 16777216 [%l] = %v : ui32
    {between}
    kernel.barrier
    %r = kernel.load_shared slot 16777216 [%j] : ui32
  }}
}}
"""


def _staging(between: str):
    from vyre_xdsl.analysis.workgroup_memory import stored_in_full_first

    descriptor = parse_module(STAGING.format(between=between)).body.block.first_op
    (tile,) = [b for b in descriptor.bindings() if b.buffer_name == "t"]
    return descriptor, stored_in_full_first(descriptor, tile)


def test_lane_values_evaluate_an_index_of_the_local_id_over_the_workgroup():
    from vyre_xdsl.analysis.workgroup_memory import lane_values

    descriptor, _ = _staging("")
    q = [n + 64 for n in range(64)]
    swizzled = [x ^ ((x >> 5) & 1) for x in q]  # slots 64..95 as they are, 96..127 pairwise swapped
    assert list(lane_values(_value(descriptor, "slot"), 64)) == swizzled
    assert lane_values(_value(descriptor, "wj"), 64) is None  # the workgroup id varies by workgroup


def test_workgroup_memory_stored_in_full_before_its_barrier():
    """Stores at l and at a swizzle of l + 64 cover all 128 slots before the
    barrier: written first. Half the slots, a read before the barrier, or an
    index of the workgroup id: not."""
    store_rest = "kernel.store_shared slot 16777216 [%slot] = %v : ui32"
    assert _staging(store_rest)[1]
    assert not _staging("")[1]
    read_first = "%early = kernel.load_shared slot 16777216 [%l] : ui32\n    " + store_rest
    assert not _staging(read_first)[1]
    assert not _staging("kernel.store_shared slot 16777216 [%wj] = %v : ui32")[1]


OWNED = """
builtin.module {{
  kernel.descriptor @p id "0" entry "main" attributes {{source = "p"}} {{
    kernel.dispatch workgroup_size [8, 4, 1] program_workgroup_size [8, 4, 1] grid explicit [2, 3, 1] count [@y]
    kernel.binding @y slot 0 group 0 global read_write : ui32[4096]
    %lx = kernel.local_id x
    %ly = kernel.local_id y
    %wx = kernel.workgroup_id x
    %wy = kernel.workgroup_id y
    %ix = kernel.invocation_id x
    %c1 = vyre.const 1 : ui32
    %c2 = vyre.const 2 : ui32
    %c4 = vyre.const 4 : ui32
    %c8 = vyre.const 8 : ui32
    %c16 = vyre.const 16 : ui32
    %c32 = vyre.const 32 : ui32
    %c64 = vyre.const 64 : ui32
    {body}
  }}
}}
"""


def _owned(body: str) -> bool:
    from vyre_xdsl.analysis.workgroup_memory import owned_elements

    descriptor = parse_module(OWNED.format(body=body)).body.block.first_op
    return "y" in owned_elements(descriptor)


def test_owned_elements_each_invocation_its_own():
    """The launch: x = 8 lanes x 2 workgroups (ids 0..15), y = 4 lanes x 3
    workgroups (rows 0..11); row * 16 + x numbers the 192 invocations apart."""
    row = """%r0 = vyre.mul %wy, %c4 : ui32
    %row = vyre.add %r0, %ly : ui32
    %r16 = vyre.mul %row, %c16 : ui32
    %own = vyre.add %r16, %ix : ui32"""
    # a load and a store of the invocation's own element, across a barrier
    assert _owned(
        row
        + """
    %v = kernel.load_global slot 0 [%own] : ui32
    kernel.barrier
    kernel.store_global slot 0 [%own] = %v : ui32"""
    )
    # two elements each: 2 * own and 2 * own + 1 (a register block of two)
    assert _owned(
        row
        + """
    %even = vyre.mul %own, %c2 : ui32
    %odd = vyre.add %even, %c1 : ui32
    %v = kernel.load_global slot 0 [%even] : ui32
    kernel.barrier
    kernel.store_global slot 0 [%odd] = %v : ui32"""
    )
    # the same through local and workgroup ids: 8 * wx + lx is invocation_id x
    assert _owned(
        row.replace(
            "%own = vyre.add %r16, %ix : ui32",
            "%wx8 = vyre.mul %wx, %c8 : ui32\n    %x = vyre.add %wx8, %lx : ui32\n    %own = vyre.add %r16, %x : ui32",
        )
        + """
    kernel.store_global slot 0 [%own] = %c1 : ui32"""
    )


def test_owned_elements_refuses_what_two_invocations_share():
    row = """%r0 = vyre.mul %wy, %c4 : ui32
    %row = vyre.add %r0, %ly : ui32
    %r16 = vyre.mul %row, %c16 : ui32
    %own = vyre.add %r16, %ix : ui32"""
    # the neighbour's element: invocation x + 1 of the same row stores it
    assert not _owned(
        row
        + """
    %next = vyre.add %own, %c1 : ui32
    %v = kernel.load_global slot 0 [%next] : ui32
    kernel.barrier
    kernel.store_global slot 0 [%own] = %v : ui32"""
    )
    # rows 8 apart in a 16-wide numbering: x 8..15 of one row meet x 0..7 of the next
    assert not _owned(
        row.replace("%r16 = vyre.mul %row, %c16 : ui32", "%r16 = vyre.mul %row, %c8 : ui32")
        + """
    kernel.store_global slot 0 [%own] = %c1 : ui32"""
    )
    # a second element 16 further on: the next row's own element
    assert not _owned(
        row
        + """
    %far = vyre.add %own, %c16 : ui32
    %v = kernel.load_global slot 0 [%far] : ui32
    kernel.store_global slot 0 [%own] = %v : ui32"""
    )
    # an index past 2^32 wraps: 2^31 * row is 0 for every even row
    assert not _owned(
        row.replace(
            "%r16 = vyre.mul %row, %c16 : ui32",
            "%big = vyre.const 2147483648 : ui32\n    %r16 = vyre.mul %row, %big : ui32",
        )
        + """
    kernel.store_global slot 0 [%own] = %c1 : ui32"""
    )


def test_owned_elements_refuses_an_index_every_row_shares():
    """invocation_id x alone, over 12 rows: each element is stored by 12 invocations."""
    assert not _owned("kernel.store_global slot 0 [%ix] = %c1 : ui32")


#: rows 0..11 of 12 elements, and x 0..15: the columns 12..15 overhang the rows
ROW12 = """%r0 = vyre.mul %wy, %c4 : ui32
    %row = vyre.add %r0, %ly : ui32
    %c12 = vyre.const 12 : ui32
    %c13 = vyre.const 13 : ui32
    %c24 = vyre.const 24 : ui32
    %r12 = vyre.mul %row, %c12 : ui32
    %own = vyre.add %r12, %ix : ui32
    %inside = vyre.lt %ix, %c12 : ui32
    %rows = vyre.lt %row, %c12 : ui32
    %both = vyre.and %inside, %rows : i1"""


def test_owned_elements_reads_the_guards_of_overhanging_outputs():
    """row * 12 + x for x up to 15 meets the next row's first elements; under
    `x < 12` (alone or in a conjunction) each element has one invocation."""
    load_then_store = """
      %v = kernel.load_global slot 0 [%own] : ui32
    }
    kernel.barrier
    kernel.if %both {
      kernel.store_global slot 0 [%own] = %c1 : ui32
    }"""
    assert not _owned(ROW12 + "\n    kernel.store_global slot 0 [%own] = %c1 : ui32")
    assert _owned(ROW12 + "\n    kernel.if %inside {" + load_then_store)
    assert _owned(ROW12 + "\n    kernel.if %both {" + load_then_store)
    # nested: the guard two ifs up, a loop in between
    assert _owned(
        ROW12
        + """
    kernel.if %inside {
      kernel.if %rows {
        kernel.for %t = %c1 to %c2 {
          kernel.store_global slot 0 [%own] = %c1 : ui32
        }
      }
    }"""
    )
    # a register block of two: 2x and 2x + 1 in rows of 24, each under its own guard
    assert _owned(
        """%r0 = vyre.mul %wy, %c4 : ui32
    %row = vyre.add %r0, %ly : ui32
    %c24 = vyre.const 24 : ui32
    %r24 = vyre.mul %row, %c24 : ui32
    %x2 = vyre.mul %ix, %c2 : ui32
    %x21 = vyre.add %x2, %c1 : ui32
    %even = vyre.add %r24, %x2 : ui32
    %odd = vyre.add %r24, %x21 : ui32
    %in_even = vyre.lt %x2, %c24 : ui32
    %in_odd = vyre.lt %x21, %c24 : ui32
    kernel.if %in_even {
      kernel.store_global slot 0 [%even] = %c1 : ui32
    }
    kernel.barrier
    kernel.if %in_odd {
      kernel.store_global slot 0 [%odd] = %c1 : ui32
    }"""
    )
    # column-major: x * 10 + row, under row < 10 (rows run to 11)
    assert _owned(
        """%r0 = vyre.mul %wy, %c4 : ui32
    %row = vyre.add %r0, %ly : ui32
    %c10 = vyre.const 10 : ui32
    %x10 = vyre.mul %ix, %c10 : ui32
    %own = vyre.add %x10, %row : ui32
    %inside = vyre.lt %row, %c10 : ui32
    kernel.if %inside {
      kernel.store_global slot 0 [%own] = %c1 : ui32
    }"""
    )


def test_owned_elements_refuses_guards_that_do_not_separate_rows():
    """Each of these lets x = 12 of one row and x = 0 of the next (or another
    pair) touch one element."""
    # a bound past the row's width
    assert not _owned(
        ROW12
        + """
    %loose = vyre.lt %ix, %c13 : ui32
    kernel.if %loose {
      kernel.store_global slot 0 [%own] = %c1 : ui32
    }"""
    )
    # the guard holds the load; the store is unguarded
    assert not _owned(
        ROW12
        + """
    kernel.if %inside {
      %v = kernel.load_global slot 0 [%own] : ui32
    }
    kernel.barrier
    kernel.store_global slot 0 [%own] = %c1 : ui32"""
    )
    # the store sits in the else branch: there x >= 12
    assert not _owned(
        ROW12
        + """
    kernel.if %inside {
    } else {
      kernel.store_global slot 0 [%own] = %c1 : ui32
    }"""
    )
    # the guard bounds the row only
    assert not _owned(
        ROW12
        + """
    kernel.if %rows {
      kernel.store_global slot 0 [%own] = %c1 : ui32
    }"""
    )
    # `or` is no conjunction: either side may fail
    assert not _owned(
        ROW12
        + """
    %either = vyre.or %inside, %rows : i1
    kernel.if %either {
      kernel.store_global slot 0 [%own] = %c1 : ui32
    }"""
    )
    # the next row's element, under the same guard: x of row r + 1 meets it
    assert not _owned(
        ROW12
        + """
    %next = vyre.add %own, %c12 : ui32
    kernel.if %inside {
      %v = kernel.load_global slot 0 [%next] : ui32
      kernel.store_global slot 0 [%own] = %v : ui32
    }"""
    )
    # six on, under x < 12: x = 0's sixth is x = 6's own (6 is no whole row)
    assert not _owned(
        ROW12
        + """
    %c6 = vyre.const 6 : ui32
    %six = vyre.add %own, %c6 : ui32
    kernel.if %inside {
      %v = kernel.load_global slot 0 [%six] : ui32
      kernel.store_global slot 0 [%own] = %v : ui32
    }"""
    )
    # rows 2^29 apart wrap: row 8 is row 0 again
    assert not _owned(
        ROW12.replace(
            "%r12 = vyre.mul %row, %c12 : ui32",
            "%big = vyre.const 536870912 : ui32\n    %r12 = vyre.mul %row, %big : ui32",
        )
        + """
    %wide = vyre.lt %ix, %big : ui32
    kernel.if %wide {
      kernel.store_global slot 0 [%own] = %c1 : ui32
    }"""
    )
    # rows of 24, a second element 12 on under x + 12 < 24: x = 0's second
    # element, 24 * row + 12, is x = 12's first
    assert not _owned(
        """%r0 = vyre.mul %wy, %c4 : ui32
    %row = vyre.add %r0, %ly : ui32
    %c12 = vyre.const 12 : ui32
    %c24 = vyre.const 24 : ui32
    %r24 = vyre.mul %row, %c24 : ui32
    %own = vyre.add %r24, %ix : ui32
    %x12 = vyre.add %ix, %c12 : ui32
    %far = vyre.add %own, %c12 : ui32
    %in = vyre.lt %ix, %c24 : ui32
    %in12 = vyre.lt %x12, %c24 : ui32
    kernel.if %in {
      kernel.store_global slot 0 [%own] = %c1 : ui32
    }
    kernel.if %in12 {
      kernel.store_global slot 0 [%far] = %c1 : ui32
    }"""
    )
