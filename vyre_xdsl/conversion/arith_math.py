"""`arith` and `math` ops as vyre expressions.

Each entry maps one op to the vyre op with the same semantics, or to a short
composition of vyre ops where vyre has none (`math.round`, `math.powf`,
`math.copysign`, the `arith` floor/ceil divisions, the float compare predicates
that vyre lacks). Ops with neither are refused by the converter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Attribute, Operation, SSAValue

from vyre_xdsl.conversion.emitter import ProgramEmitter, i1, ui32
from vyre_xdsl.conversion.types import bit_width, signed_of, unsigned_of, vyre_type
from vyre_xdsl.dialects.vyre import ELEMENT_TYPES, is_float_type

Rule = Callable[[ProgramEmitter, Operation, Sequence[SSAValue]], SSAValue]


def signed(em: ProgramEmitter, v: SSAValue) -> SSAValue:
    return em.bitcast(v, signed_of(v.type))


def unsigned(em: ProgramEmitter, v: SSAValue) -> SSAValue:
    return em.bitcast(v, unsigned_of(v.type))


def result_type(op: Operation) -> Attribute:
    ty = vyre_type(op.results[0].type)
    assert ty is not None  # checked before conversion
    return ty


def same(mnemonic: str) -> Rule:
    """The vyre op `mnemonic` on the operands as they are."""
    return lambda em, op, args: em.op(mnemonic, *args)


def as_signed(mnemonic: str) -> Rule:
    """`mnemonic` on the operands read as signed integers, back in the result type."""
    return lambda em, op, args: em.bitcast(
        em.op(mnemonic, *(signed(em, a) for a in args)), result_type(op)
    )


def as_unsigned(mnemonic: str) -> Rule:
    """`mnemonic` on the operands read as unsigned integers, back in the result type."""
    return lambda em, op, args: em.bitcast(
        em.op(mnemonic, *(unsigned(em, a) for a in args)), result_type(op)
    )


def logic(bitwise: str, boolean: str) -> Rule:
    """A bitwise op, or its `i1` counterpart on booleans."""

    def rule(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
        return em.op(boolean if args[0].type == i1 else bitwise, *args)

    return rule


def constant(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    attr = constant_attribute(op)
    ty = result_type(op)
    if ty == i1:
        return em.const(bool(attr.value.data), ty)
    if is_float_type(ty):
        return em.const(float(attr.value.data), ty)
    return em.const(int(attr.value.data), ty)


def floordiv_signed(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    """`a / b` rounded toward negative infinity: the quotient, one less where the
    remainder is non-zero and its sign differs from the divisor's."""
    a, b = (signed(em, x) for x in args)
    q, r = em.op("div", a, b), em.op("mod", a, b)
    zero = em.zero(a.type)
    inexact = em.op("ne", r, zero)
    differ = em.op("ne", em.op("lt", r, zero), em.op("lt", b, zero))
    one = em.const(1, a.type)
    fixed = em.select(em.op("and", inexact, differ), em.op("sub", q, one), q)
    return em.bitcast(fixed, result_type(op))


def ceildiv_signed(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    """`a / b` rounded toward positive infinity."""
    a, b = (signed(em, x) for x in args)
    q, r = em.op("div", a, b), em.op("mod", a, b)
    zero = em.zero(a.type)
    inexact = em.op("ne", r, zero)
    agree = em.op("eq", em.op("lt", r, zero), em.op("lt", b, zero))
    one = em.const(1, a.type)
    fixed = em.select(em.op("and", inexact, agree), em.op("add", q, one), q)
    return em.bitcast(fixed, result_type(op))


def ceildiv_unsigned(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    a, b = (unsigned(em, x) for x in args)
    q, r = em.op("div", a, b), em.op("mod", a, b)
    up = em.op("ne", r, em.zero(a.type))
    fixed = em.select(up, em.op("add", q, em.const(1, a.type)), q)
    return em.bitcast(fixed, result_type(op))


def nan_propagating(mnemonic: str) -> Rule:
    """IEEE minimum/maximum: NaN when either operand is NaN (vyre's min/max
    return the other operand)."""

    def rule(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
        a, b = args
        either = em.op("or", em.op("is_nan", a), em.op("is_nan", b))
        return em.select(either, em.op("add", a, b), em.op(mnemonic, a, b))

    return rule


CMPI = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")


def cmpi(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    predicate = CMPI[op.properties["predicate"].value.data]
    a, b = args
    if a.type == i1:
        a, b = em.cast(a, ELEMENT_TYPES["ui32"]), em.cast(b, ELEMENT_TYPES["ui32"])
        if predicate[0] == "s":  # i1 as a signed number: true is -1
            a, b = (em.op("neg", x) for x in (a, b))
    if predicate in ("eq", "ne"):
        return em.op(predicate, a, b)
    view = signed if predicate[0] == "s" else unsigned
    return em.op(predicate[1:], view(em, a), view(em, b))


CMPF = (
    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
    "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true",
)  # fmt: skip

#: ordered predicates vyre has (false on NaN), and the unordered ones as their negation
ORDERED = {"oeq": "eq", "ogt": "gt", "oge": "ge", "olt": "lt", "ole": "le"}
UNORDERED = {"ugt": "le", "uge": "lt", "ult": "ge", "ule": "gt"}


def cmpf(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    predicate = CMPF[op.properties["predicate"].value.data]
    a, b = args
    if predicate in ("false", "true"):
        return em.const(predicate == "true", i1)
    if predicate in ORDERED:
        return em.op(ORDERED[predicate], a, b)
    if predicate in UNORDERED:
        return em.op("not", em.op(UNORDERED[predicate], a, b))
    if predicate == "une":
        return em.op("ne", a, b)
    unordered = em.op("or", em.op("is_nan", a), em.op("is_nan", b))
    if predicate == "uno":
        return unordered
    if predicate == "ord":
        return em.op("not", unordered)
    one = em.op("or", em.op("lt", a, b), em.op("gt", a, b))
    return one if predicate == "one" else em.op("not", one)  # ueq


def extsi(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    (a,) = args
    ty = result_type(op)
    if a.type == i1:  # true is -1
        return em.select(a, em.const(-1, ty), em.zero(ty))
    return em.bitcast(em.cast(signed(em, a), signed_of(ty)), ty)


def extui(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    (a,) = args
    ty = result_type(op)
    if a.type == i1:
        return em.cast(a, ty)
    return em.bitcast(em.cast(unsigned(em, a), unsigned_of(ty)), ty)


def trunci(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    (a,) = args
    ty = result_type(op)
    if ty == i1:  # the low bit
        low = em.op("bit_and", a, em.const(1, a.type))
        return em.op("ne", low, em.zero(a.type))
    return em.cast(a, ty)


def to_float(view: Callable) -> Rule:
    return lambda em, op, args: em.cast(view(em, args[0]), result_type(op))


def fptoui(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    ty = result_type(op)
    return em.bitcast(em.cast(args[0], unsigned_of(ty)), ty)


def cast(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    return em.cast(args[0], result_type(op))


def bitcast(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    return em.bitcast(args[0], result_type(op))


def index_cast(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    """To `index` (`ui32`): a value outside 0 … 2^32 - 1 traps (tag `index_cast`).
    From `index`: the 32 bits, zero-extended or truncated."""
    (a,) = args
    ty = result_type(op)
    if ty != ui32:
        return em.cast(a, ty) if bit_width(ty) != 32 else em.bitcast(a, ty)
    if a.type == i1:
        return em.cast(a, ui32)
    bad = None
    if a.type == signed_of(a.type) and op.name == "arith.index_cast":
        bad = em.op("lt", a, em.zero(a.type))
    if bit_width(a.type) > 32:
        big = em.op("gt", unsigned(em, a), em.const(2**32 - 1, unsigned_of(a.type)))
        bad = big if bad is None else em.op("or", bad, big)
    result = em.cast(unsigned(em, a), ui32)
    if bad is not None:
        with em.if_(bad):
            em.trap(result, "index_cast")
    return result


def round_half_away(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    """`math.round`: to nearest, ties away from zero (vyre.round is ties-to-even):
    the truncation, one further from zero when the dropped fraction (exact) is ≥ 1/2."""
    (a,) = args
    t = em.op("trunc", a)
    frac = em.op("abs", em.op("sub", a, t))
    up = em.op("ge", frac, em.const(0.5, a.type))
    return em.select(up, em.op("add", t, em.op("sign", a)), t)


def copysign(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    """The magnitude bits of `a` with the sign bit of `b` (exact)."""
    a, b = args
    bits = ELEMENT_TYPES[{16: "ui16", 32: "ui32", 64: "ui64"}[float_bits(a.type)]]
    sign = 1 << (float_bits(a.type) - 1)
    magnitude = em.op("bit_and", em.bitcast(a, bits), em.const(sign - 1, bits))
    sign_bit = em.op("bit_and", em.bitcast(b, bits), em.const(sign, bits))
    return em.bitcast(em.op("bit_or", magnitude, sign_bit), a.type)


def float_bits(ty: Attribute) -> int:
    names = {ELEMENT_TYPES[n]: b for n, b in (("f16", 16), ("bf16", 16), ("f32", 32), ("f64", 64))}
    return names[ty]


def powf(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    """`a ** b` as `exp2(b * log2(|a|))` (WGSL's own definition of `pow`, with its
    accuracy), with C's rules where that formula differs: `b == 0` or `a == 1`
    gives 1; a negative `a` gives NaN unless `b` is an integer, and then the
    sign of `a` when `b` is odd."""
    a, b = args
    ty = a.type
    one, zero = em.const(1.0, ty), em.zero(ty)
    magnitude = em.op("exp2", em.op("mul", b, em.op("log2", em.op("abs", a))))
    integral = em.op("eq", em.op("trunc", b), b)
    half = em.op("mul", b, em.const(0.5, ty))
    odd = em.op("ne", em.op("trunc", half), half)
    negative = em.op("lt", a, zero)
    signed_result = em.select(odd, em.op("neg", magnitude), magnitude)
    nan = em.op("div", zero, zero)
    for_negative = em.select(integral, signed_result, nan)
    result = em.select(negative, for_negative, magnitude)
    trivial = em.op("or", em.op("eq", b, zero), em.op("eq", a, one))
    return em.select(trivial, one, result)


def fma(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    return em.fma(*args)


def select(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
    return em.select(*args)


INDEX_MAX = 2**32 - 1


def index_range(value: SSAValue) -> tuple[int, int]:
    """Bounds `(lo, hi)` that the `index` value `value` of the input stays within:
    exact for a constant; for the induction variable of an `scf.for` or a
    dimension of an `scf.parallel`, from its lower bound (when constant) to one
    below its upper bound (when constant; below 2^32 - 1 otherwise, since the
    bound is an index); 0 … 2^32 - 1 for anything else."""
    owner = value.owner
    if isinstance(owner, Operation):
        if owner.name == "arith.constant":
            attr = constant_attribute(owner)
            if isinstance(attr, IntegerAttr) and 0 <= attr.value.data <= INDEX_MAX:
                return attr.value.data, attr.value.data
        return 0, INDEX_MAX
    loop = owner.parent_op() if owner is not None else None
    bounds = None
    if loop is not None and loop.name == "scf.for" and value.index == 0:
        bounds = (loop.lb, loop.ub)
    elif loop is not None and loop.name == "scf.parallel" and value.index < len(loop.lowerBound):
        bounds = (loop.lowerBound[value.index], loop.upperBound[value.index])
    if bounds is None:
        return 0, INDEX_MAX
    lo = index_range(bounds[0])
    hi = index_range(bounds[1])
    return (lo[0] if lo[0] == lo[1] else 0), (hi[1] - 1 if hi[0] == hi[1] else INDEX_MAX - 1)


def index_op_may_leave_range(mnemonic: str, op: Operation) -> bool:
    """Whether `add`/`sub`/`mul` on the `index` operands of `op` may give an exact
    result outside 0 … 2^32 - 1, by `index_range` (`%i - 1` in a loop from 1,
    `%i + 1` in a loop below a bound, need no check)."""
    (a_lo, a_hi), (b_lo, b_hi) = (index_range(v) for v in op.operands)
    if mnemonic == "add":
        return a_hi + b_hi > INDEX_MAX
    if mnemonic == "sub":
        return b_hi > a_lo
    return a_hi * b_hi > INDEX_MAX


def checked_index(mnemonic: str) -> Rule:
    """`add`/`sub`/`mul` on `index` (`ui32`) that traps (tag `index`) where the
    exact result does not fit in 0 … 2^32 - 1; other integers wrap. The check is
    left out where the operands' ranges (`index_range`) show it cannot fire."""

    def rule(em: ProgramEmitter, op: Operation, args: Sequence[SSAValue]) -> SSAValue:
        if not isinstance(op.results[0].type, IndexType):
            return em.op(mnemonic, *args)
        if not index_op_may_leave_range(mnemonic, op):
            return em.op(mnemonic, *args)
        return index_arithmetic(em, mnemonic, *args)

    return rule


def index_arithmetic(em: ProgramEmitter, mnemonic: str, a: SSAValue, b: SSAValue) -> SSAValue:
    """`a <mnemonic> b` (`add`, `sub` or `mul`) on `ui32` index values, trapping
    (tag `index`) where the exact result does not fit in 0 … 2^32 - 1."""
    result = em.op(mnemonic, a, b)
    if mnemonic == "add":
        bad = em.op("lt", result, a)
    elif mnemonic == "sub":
        bad = em.op("gt", b, a)
    else:
        bad = em.op("ne", em.op("mul_high", a, b), em.zero(ui32))
    with em.if_(bad):
        em.trap(result, "index")
    return result


RULES: dict[str, Rule] = {
    "arith.constant": constant,
    "arith.addi": checked_index("add"),
    "arith.subi": checked_index("sub"),
    "arith.muli": checked_index("mul"),
    "arith.divsi": as_signed("div"),
    "arith.divui": as_unsigned("div"),
    "arith.remsi": as_signed("mod"),
    "arith.remui": as_unsigned("mod"),
    "arith.floordivsi": floordiv_signed,
    "arith.ceildivsi": ceildiv_signed,
    "arith.ceildivui": ceildiv_unsigned,
    "arith.minsi": as_signed("min"),
    "arith.maxsi": as_signed("max"),
    "arith.minui": as_unsigned("min"),
    "arith.maxui": as_unsigned("max"),
    "arith.andi": logic("bit_and", "and"),
    "arith.ori": logic("bit_or", "or"),
    "arith.xori": logic("bit_xor", "ne"),
    "arith.shli": same("shl"),
    "arith.shrsi": as_signed("shr"),
    "arith.shrui": as_unsigned("shr"),
    "arith.addf": same("add"),
    "arith.subf": same("sub"),
    "arith.mulf": same("mul"),
    "arith.divf": same("div"),
    "arith.negf": same("neg"),
    "arith.minnumf": same("min"),
    "arith.maxnumf": same("max"),
    "arith.minimumf": nan_propagating("min"),
    "arith.maximumf": nan_propagating("max"),
    "arith.cmpi": cmpi,
    "arith.cmpf": cmpf,
    "arith.select": select,
    "arith.extsi": extsi,
    "arith.extui": extui,
    "arith.trunci": trunci,
    "arith.sitofp": to_float(signed),
    "arith.uitofp": to_float(unsigned),
    "arith.fptosi": cast,
    "arith.fptoui": fptoui,
    "arith.extf": cast,
    "arith.truncf": cast,
    "arith.bitcast": bitcast,
    "arith.index_cast": index_cast,
    "arith.index_castui": index_cast,
    "math.sqrt": same("sqrt"),
    "math.rsqrt": same("inverse_sqrt"),
    "math.exp": same("exp"),
    "math.exp2": same("exp2"),
    "math.log": same("log"),
    "math.log2": same("log2"),
    "math.sin": same("sin"),
    "math.cos": same("cos"),
    "math.tan": same("tan"),
    "math.tanh": same("tanh"),
    "math.sinh": same("sinh"),
    "math.cosh": same("cosh"),
    "math.asin": same("asin"),
    "math.acos": same("acos"),
    "math.atan": same("atan"),
    "math.absf": same("abs"),
    "math.absi": same("abs"),
    "math.floor": same("floor"),
    "math.ceil": same("ceil"),
    "math.trunc": same("trunc"),
    "math.roundeven": same("round"),
    "math.round": round_half_away,
    "math.fma": fma,
    "math.powf": powf,
    "math.copysign": copysign,
    "math.ctlz": same("clz"),
    "math.cttz": same("ctz"),
    "math.ctpop": same("popcount"),
}


def index_constant_problem(op: Operation) -> str | None:
    """Why an `arith.constant` of type index cannot be a `ui32`, or None."""
    attr = constant_attribute(op)
    if not isinstance(attr, IntegerAttr):
        return "only scalar constants are supported (not dense or vector ones)"
    value = attr.value.data
    if not 0 <= value < 2**32:
        return f"index constant {value} does not fit in 32 bits (vyre's index is ui32)"
    return None


def constant_attribute(op: Operation) -> Attribute | None:
    """The `value` of an `arith.constant` (a property, or an attribute in older IR)."""
    attr = op.properties.get("value")
    return op.attributes.get("value") if attr is None else attr
