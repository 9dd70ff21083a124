// RUN: vyre-opt %s --split-input-file --verify-diagnostics | filecheck %s
// One chunk per verifier (or parser) error; each diagnostic names the offending op's location.

vyre.program @p workgroup_size [64, 1, 1] {
  %t = vyre.const true : i1
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'vyre.add' does not accept i1; it takes ui8, ui16, ui32, ui64, si8, si16, si32, si64, f32, f16, bf16, f64, vector<2xui32>, vector<4xui32>, vector<4xf32>{{$}}
  %r = vyre.add %t, %t : i1
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %a = vyre.const 1 : ui32
  %b = vyre.const 1.0 : f32
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: operand 'rhs' at position 1 does not verify
  %r = "vyre.add"(%a, %b) : (ui32, f32) -> ui32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %a = vyre.const 1 : ui32
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: result 'result' at position 0 does not verify
  %r = "vyre.lt"(%a, %a) : (ui32, ui32) -> ui32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %a = vyre.const 1.0 : f32
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'vyre.popcount' does not accept f32; it takes ui8, ui16, ui32, ui64, si8, si16, si32, si64, vector<2xui32>, vector<4xui32>{{$}}
  %r = vyre.popcount %a : f32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %t = vyre.const true : i1
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: no bitcast from i1 to ui32: a bitcast is between two non-i1 types of the same width
  %r = vyre.bitcast %t : i1 to ui32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %a = vyre.const 1.0 : f32
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: operand 'cond' at position 0 does not verify
  "vyre.if"(%a) ({}, {}) : (f32) -> ()
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[4]
  %i = vyre.const 1 : si32
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: index must be ui32, got si32
  %v = "vyre.load"(%i) <{buffer = @x}> : (si32) -> f32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %i = vyre.invocation_id x
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: buffer @missing is not declared in program @p
  %v = vyre.load @missing[%i] : f32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[4]
  %i = vyre.invocation_id x
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: buffer @x holds f32, but is loaded as ui32
  %v = vyre.load @x[%i] : ui32
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: buffer @x is declared twice
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[4]
  vyre.buffer @x binding 1 read_only : f32[4]
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: buffer @x is declared after a statement; declarations come first
vyre.program @p workgroup_size [64, 1, 1] {
  %i = vyre.invocation_id x
  vyre.buffer @x binding 0 read_only : f32[4]
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: workgroup_size axis x is 0; every axis must be >= 1
vyre.program @p workgroup_size [0, 1, 1] {
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: workgroup_size axis z is 128; the limit is 64
vyre.program @p workgroup_size [64, 1, 128] {
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: workgroup_size [64, 32, 1] has 2048 invocations; the limit is 1024
vyre.program @p workgroup_size [64, 32, 1] {
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %a = vyre.const 1 : ui32
  vyre.let @v = %a : ui32
  vyre.block {
// CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: named local @v is already declared in a visible scope; shadowing is not allowed
    vyre.let @v = %a : ui32
  }
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %a = vyre.const 1 : ui32
  vyre.let @v = %a : ui32
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: named local @v is already declared in a visible scope; shadowing is not allowed
  vyre.let @v = %a : ui32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %a = vyre.const 1 : ui32
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: assignment to undeclared named local @nowhere
  vyre.assign @nowhere = %a : ui32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: read of undeclared named local @nowhere
  %a = vyre.var @nowhere : ui32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %a = vyre.const 1 : ui32
  vyre.block {
    vyre.let @scoped = %a : ui32
  }
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: read of undeclared named local @scoped
  %b = vyre.var @scoped : ui32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %a = vyre.const 0 : ui32
  vyre.loop @k = %a to %a {
// CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: @k is a loop variable and cannot be assigned
    vyre.assign @k = %a : ui32
  }
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : f32[4]
  %a = vyre.const 0 : ui32
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: atomics need a ui32 buffer; @x holds f32
  %o = vyre.atomic add @x[%a], %a : ui32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[4]
  %a = vyre.const 0 : ui32
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: atomics need a writable buffer (read_write, write_only or workgroup); @x is read_only
  %o = vyre.atomic add @x[%a], %a : ui32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 uniform : ui32[64]
  %a = vyre.const 0 : ui32
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: atomics need a writable buffer (read_write, write_only or workgroup); @x is uniform
  %o = vyre.atomic max @x[%a], %a : ui32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[4]
  %i = vyre.invocation_id x
  %v = vyre.const 1.0 : f32
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: store to read_only buffer @x
  vyre.store @x[%i] = %v : f32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @u binding 0 uniform : ui32[4]
  %i = vyre.invocation_id x
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: store to uniform buffer @u
  vyre.store @u[%i] = %i : ui32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %i = vyre.invocation_id x
  %a = vyre.const 3 : ui32
  %c = vyre.lt %i, %a : ui32
  vyre.if %c {
// CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: barrier under invocation-dependent control flow ('vyre.if' whose condition or bounds depend on the invocation)
    vyre.barrier
  }
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @n binding 0 read_only : ui32[1]
  %z = vyre.const 0 : ui32
  %hi = vyre.load @n[%z] : ui32
  vyre.loop @k = %z to %hi {
// CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: barrier under invocation-dependent control flow ('vyre.loop' whose condition or bounds depend on the invocation)
    vyre.barrier
  }
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %l = vyre.local_id x
  %z = vyre.const 0 : ui32
  %c = vyre.eq %l, %z : ui32
  vyre.if %c {
    vyre.return
  }
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: barrier after a 'vyre.return' that only some invocations take
  vyre.barrier
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %zero = vyre.const 0 : ui32
  %four = vyre.const 4 : ui32
  vyre.loop @k = %zero to %four {
// CHECK: invalid.mlir:[[# @LINE + 1]]:5: error: 'grid_sync' barrier must be at the top level of its program or in 'vyre.block'/'vyre.region' scopes there (not in a loop or an if)
    vyre.barrier grid_sync
  }
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: unsupported element type i64 for buffer @x; vyre supports ui8, ui16, ui32, ui64, si8, si16, si32, si64, f16, bf16, f32, f64, i1, vector<2xui32>, vector<4xui32>, vector<4xf32>
  vyre.buffer @x binding 0 read_only : i64[4]
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: workgroup buffer @t takes no binding
  vyre.buffer @t binding 0 workgroup : f32[4]
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: workgroup buffer @t needs a static element count > 0
  vyre.buffer @t workgroup : f32[?]
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
// CHECK: invalid.mlir:[[# @LINE + 1]]:19: error: literal 4294967296 is out of range for ui32 [0, 4294967295]
  %a = vyre.const 4294967296 : ui32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
// CHECK: invalid.mlir:[[# @LINE + 1]]:23: error: unsupported element type i64; vyre supports ui8, ui16, ui32, ui64, si8, si16, si32, si64, f16, bf16, f32, f64, i1, vector<2xui32>, vector<4xui32>, vector<4xf32>
  %a = vyre.const 1 : i64
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %a = vyre.const 1 : ui32
  %b = vyre.const 1.0 : f32
  vyre.let @v = %a : ui32
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: @v has type ui32, but a f32 is assigned
  vyre.assign @v = %b : f32
}

// -----

vyre.program @bad workgroup_size [1, 1, 1] {
  %f = vyre.const 1.0 : f32
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'vyre.unpack8_low' does not accept f32; it takes ui32, si32
  %r = vyre.unpack8_low %f : f32
}

// -----

vyre.program @bad2 workgroup_size [1, 1, 1] {
  %x = vyre.const 1 : si32
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'vyre.saturating_mul' does not accept si32; it takes ui8, ui16, ui32, ui64, vector<2xui32>, vector<4xui32>{{$}}
  %r = vyre.saturating_mul %x, %x : si32
}

// -----

vyre.program @ordering workgroup_size [1, 1, 1] {
  vyre.buffer @c binding 0 read_write : ui32[4]
  %z = vyre.const 0 : ui32
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: unknown memory ordering 'consume'; expected one of relaxed, acquire, release, acq_rel, seq_cst
  %o = "vyre.atomic"(%z, %z) <{kind = "add", ordering = "consume", buffer = @c, operandSegmentSizes = array<i32: 1, 0, 1>}> : (ui32, ui32) -> ui32
}

// -----

vyre.program @weak workgroup_size [1, 1, 1] {
  vyre.buffer @c binding 0 read_write : ui32[4]
  %z = vyre.const 0 : ui32
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'compare_exchange' and 'compare_exchange_weak' take an expected value, and only they
  %o = "vyre.atomic"(%z, %z) <{kind = "compare_exchange_weak", buffer = @c, operandSegmentSizes = array<i32: 1, 0, 1>}> : (ui32, ui32) -> ui32
}

// -----

// Vulkan has no 64-bit sin, exp, log...: f64 is not among their types.
vyre.program @p workgroup_size [64, 1, 1] {
  %a = vyre.const 1.5 : f64
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'vyre.sin' does not accept f64; it takes f16, bf16, f32, vector<4xf32>
  %r = vyre.sin %a : f64
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %a = vyre.const 3 : ui32
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'vyre.fma' takes a float type (f16, bf16, f32, f64), not ui32
  %r = vyre.fma %a, %a, %a : ui32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %a = vyre.const 3 : ui32
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'vyre.from_elements' needs 4 lanes for vector<4xui32>, got 2
  %v = vyre.from_elements %a, %a : vector<4xui32>
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : vector<2xui32>[4]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : vector<2xui32>
// CHECK: invalid.mlir:[[# @LINE + 1]]:24: error: lane 2 is out of range for vector<2xui32> (0 to 1)
  %r = vyre.extract %v[2] : vector<2xui32>
}
