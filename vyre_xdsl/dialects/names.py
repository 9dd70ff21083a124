"""Which names the `vyre` and `kernel` dialects accept.

Names of programs, buffers, named locals and loop variables (and of kernel
descriptors, bindings and locals) are MLIR bare identifiers:
`[A-Za-z_][A-Za-z0-9_$.]*`. A quoted name with any other character
(`@"a b"`, a line break) is rejected by the verifier: names become WGSL
identifiers, comments, host array keys and SSA name hints, and each of those
has its own rules.

A kernel's entry point is printed verbatim as the WGSL function name, so it
must be a plain WGSL identifier (`[A-Za-z][A-Za-z0-9_]*`) that is neither a
WGSL keyword or reserved word nor a predeclared name the printed module uses,
and does not start with `vyre_` (the printer's own names).

```python
name_problem("a b")            # "... is not an identifier ..."
entry_point_problem("main")    # None
```
"""

from __future__ import annotations

import re

BARE_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")
WGSL_ENTRY = re.compile(r"[A-Za-z][A-Za-z0-9_]*")

#: WGSL keywords and reserved words (WGSL specification, "Keyword and Token Summary")
WGSL_KEYWORDS = frozenset(
    """
    alias break case const const_assert continue continuing default diagnostic discard
    else enable false fn for if let loop override requires return struct switch true var
    while
    NULL Self abstract active alignas alignof as asm asm_fragment async attribute auto
    await become cast catch class co_await co_return co_yield coherent column_major
    common compile compile_fragment concept const_cast consteval constexpr constinit crate
    debugger decltype delete demote demote_to_helper do dynamic_cast enum explicit export
    extends extern external fallthrough filter final finally friend from fxgroup get goto
    groupshared highp impl implements import inline instanceof interface layout lowp
    macro macro_rules match mediump meta mod module move mut mutable namespace new nil
    noexcept noinline nointerpolation noperspective null nullptr of operator package
    packoffset partition pass patch pixelfragment precise precision premerge priv
    protected pub public readonly ref regardless register reinterpret_cast require
    resource restrict self set shared sizeof smooth snorm static static_assert static_cast
    std subroutine super target template this thread_local throw trait try type typedef
    typeid typename typeof union unless unorm unsafe unsized use using varying virtual
    volatile wgsl where with writeonly yield
    """.split()
)

#: predeclared WGSL types and built-in functions (a function named like one would
#: shadow it in the module the printer emits)
WGSL_PREDECLARED = frozenset(
    """
    bool f16 f32 i32 u32 vec2 vec3 vec4 mat2x2 mat2x3 mat2x4 mat3x2 mat3x3 mat3x4 mat4x2
    mat4x3 mat4x4 array atomic ptr sampler sampler_comparison
    read write read_write function private workgroup uniform storage
    abs acos acosh all any arrayLength asin asinh atan atan2 atanh atomicAdd atomicAnd
    atomicCompareExchangeWeak atomicExchange atomicLoad atomicMax atomicMin atomicOr
    atomicStore atomicSub atomicXor bitcast ceil clamp cos cosh countLeadingZeros
    countOneBits countTrailingZeros cross degrees determinant distance dot exp exp2
    extractBits faceForward firstLeadingBit firstTrailingBit floor fma fract frexp
    insertBits inverseSqrt ldexp length log log2 max min mix modf normalize pow radians
    reflect refract reverseBits round saturate select sign sin sinh smoothstep sqrt step
    storageBarrier tan tanh transpose trunc workgroupBarrier workgroupUniformLoad
    """.split()
)


def name_problem(name: str, what: str) -> str | None:
    """Why `name` cannot name `what`, or None."""
    if BARE_IDENTIFIER.fullmatch(name):
        return None
    return (
        f"{what} name {name!r} is not an identifier; names are letters, digits, '_', '$' "
        "and '.', not starting with a digit"
    )


def entry_point_problem(entry: str) -> str | None:
    """Why `entry` cannot be a WGSL entry point name, or None."""
    if not WGSL_ENTRY.fullmatch(entry):
        return (
            f"entry point {entry!r} is not a WGSL identifier; use ASCII letters, digits "
            "and '_', starting with a letter (e.g. 'main')"
        )
    if entry in WGSL_KEYWORDS or entry in WGSL_PREDECLARED or entry.startswith("vyre_"):
        return (
            f"entry point {entry!r} is a WGSL keyword, reserved or predeclared name, or "
            "starts with 'vyre_'; choose another name (e.g. 'main')"
        )
    return None
