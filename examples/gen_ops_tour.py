"""Regenerates examples/ops_tour.mlir: one program that uses every vyre op.

python examples/gen_ops_tour.py > examples/ops_tour.mlir
"""

from vyre_xdsl.builder import ProgramBuilder, module_of
from vyre_xdsl.diagnostics import verify_module
from vyre_xdsl.semantics import OPS

N = 256
TYPES = ("ui32", "si32", "f32")


def build():
    b = ProgramBuilder("ops_tour", workgroup_size=(64, 1, 1))
    for t in TYPES:
        b.buffer(f"in_{t}_a", "read_only", t, N, binding=len(b.program.body.block.ops))
        b.buffer(f"in_{t}_b", "read_only", t, N, binding=len(b.program.body.block.ops))
    ops_per_type = {
        t: [n for n, s in OPS.items() if t in s.types and s.kind in ("binary", "unary")]
        for t in TYPES
    }
    for t in TYPES:
        b.buffer(
            f"out_{t}",
            "write_only",
            t,
            N * len(ops_per_type[t]),
            binding=len(b.program.body.block.ops),
        )
    b.buffer("out_i1", "write_only", "i1", N * 64, binding=len(b.program.body.block.ops))
    b.buffer("counters", "read_write", "ui32", 8, binding=len(b.program.body.block.ops))
    b.buffer("scratch", "workgroup", "ui32", 64)

    i = b.invocation_id("x", name="i")
    n = b.buf_len("in_ui32_a", name="n")
    inside = b.lt(i, n)
    with b.if_(b.op("not", inside)):
        # returns after the barriers below would be rejected, so this program
        # guards with a store-free branch instead of vyre.return
        b.store("counters", b.const(100, "ui32"), i)
    vals = {}
    for t in TYPES:
        a = b.load(f"in_{t}_a", i, name=f"a_{t}")
        c = b.load(f"in_{t}_b", i, name=f"b_{t}")
        vals[t] = (a, c)
    # a safe si32 divisor: (b & 0x7fff) | 1 is in [1, 32767]
    mask = b.const(0x7FFF, "si32")
    one_s = b.const(1, "si32")
    safe_si32 = b.bit_or(b.bit_and(vals["si32"][1], mask), one_s, name="safe_div")
    # positive f32 operands for sqrt/log: |a| + 1
    one_f = b.const(1.0, "f32")
    pos_f = b.add(b.abs(vals["f32"][0]), one_f, name="positive")

    for t in TYPES:
        width = b.const(len(ops_per_type[t]), "ui32")
        base = b.mul(i, width)
        a, c = vals[t]
        for k, name in enumerate(ops_per_type[t]):
            sem = OPS[name]
            if sem.kind == "binary":
                rhs = safe_si32 if (t == "si32" and name in ("div", "mod")) else c
                r = b.op(name, a, rhs)
            else:
                arg = pos_f if t == "f32" and name in ("sqrt", "inverse_sqrt", "log", "log2") else a
                r = b.op(name, arg)
            idx = b.add(base, b.const(k, "ui32"))
            b.store(f"out_{t}", idx, r)

    # comparisons, logic, predicates -> out_i1
    k = 0
    bool_base = b.mul(i, b.const(64, "ui32"))

    def put_bool(v):
        nonlocal k
        b.store("out_i1", b.add(bool_base, b.const(k, "ui32")), v)
        k += 1

    for t in TYPES:
        a, c = vals[t]
        for name in ("eq", "ne", "lt", "le", "gt", "ge"):
            put_bool(b.op(name, a, c))
    p = b.lt(vals["ui32"][0], vals["ui32"][1])
    q = b.gt(vals["si32"][0], vals["si32"][1])
    put_bool(b.op("and", p, q))
    put_bool(b.op("or", p, q))
    put_bool(b.op("not", p))
    for name in ("is_nan", "is_inf", "is_finite"):
        put_bool(b.op(name, vals["f32"][0]))
    put_bool(b.eq(b.op("not", p), b.op("not", q)))

    # select, fma, casts, bitcasts
    sel = b.select(p, vals["f32"][0], vals["f32"][1], name="sel")
    fma = b.fma(vals["f32"][0], vals["f32"][1], sel, name="fused")
    as_u = b.cast(fma, "ui32")
    as_s = b.cast(vals["ui32"][0], "si32")
    as_f = b.cast(as_s, "f32")
    bits = b.bitcast(as_f, "ui32")
    flag = b.cast(bits, "i1")
    back = b.cast(flag, "si32")
    put_bool(b.eq(b.cast(back, "ui32"), b.cast(flag, "ui32")))
    put_bool(b.ne(as_u, bits))
    put_bool(b.eq(b.bitcast(b.bitcast(vals["si32"][0], "f32"), "si32"), vals["si32"][0]))

    # named locals in a region, a loop and a block
    with b.region("ops_tour.locals"):
        b.let("acc", b.const(0, "ui32"))
        with b.loop("k", b.const(0, "ui32"), b.const(3, "ui32")):
            kk = b.var("k", "ui32")
            b.assign("acc", b.add(b.var("acc", "ui32"), kk))
        with b.block():
            b.let("twice", b.mul(b.var("acc", "ui32"), b.const(2, "ui32")))
            put_bool(b.eq(b.var("twice", "ui32"), b.const(6, "ui32")))

    # workgroup memory with barriers of every ordering (uniform control flow)
    l = b.local_id("x")
    b.store("scratch", l, vals["ui32"][0])
    b.barrier()
    b.barrier("acquire")
    b.barrier("release")
    b.barrier("acq_rel")
    w = b.workgroup_id("x")
    wy = b.workgroup_id("y")
    lz = b.local_id("z")
    neighbour = b.bit_xor(l, b.const(1, "ui32"))
    put_bool(
        b.eq(b.load("scratch", neighbour), b.load("in_ui32_a", b.bit_xor(i, b.const(1, "ui32"))))
    )
    put_bool(b.eq(b.add(wy, lz), b.const(0, "ui32")))
    put_bool(b.lt(w, b.const(4, "ui32")))

    # atomics: order-independent final state
    zero = b.const(0, "ui32")
    b.atomic("add", "counters", zero, b.const(1, "ui32"))
    b.atomic("or", "counters", b.const(1, "ui32"), vals["ui32"][0])
    b.atomic("and", "counters", b.const(2, "ui32"), vals["ui32"][0])
    b.atomic("xor", "counters", b.const(3, "ui32"), vals["ui32"][0])
    b.atomic("min", "counters", b.const(4, "ui32"), vals["ui32"][0])
    b.atomic("max", "counters", b.const(5, "ui32"), vals["ui32"][0])
    b.atomic("exchange", "counters", b.const(6, "ui32"), b.const(7, "ui32"))
    b.atomic("compare_exchange", "counters", b.const(7, "ui32"), b.const(9, "ui32"), expected=zero)

    # a trap that random inputs never reach, and a return at the very end
    never = b.const(0xFFFFFFFF, "ui32")
    with b.if_(b.eq(i, never)):
        b.trap(i, "ops_tour.unreachable")
    with b.if_(inside):
        b.ret()
    return b.build()


if __name__ == "__main__":
    module = module_of([build()])
    verify_module(module)
    print("// Generated by examples/gen_ops_tour.py: one program using every vyre op.")
    print("// Inputs: in_*_a/in_*_b (256 each) and counters (8 ui32).")
    for op in module.ops:
        print(op)
