// RUN: vyre-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Functions and calls: each verifier error names the offending op's location.

vyre.program @p workgroup_size [64, 1, 1] {
  %a = vyre.const 1 : ui32
// CHECK: invalid-calls.mlir:[[# @LINE + 1]]:3: error: call to undefined function @nope; define it with 'vyre.func @nope(...) -> T { ... }' at module level
  %r = vyre.call @nope(%a) : ui32
}

// -----

vyre.func @f(%a: ui32, %b: ui32) -> ui32 {
  vyre.yield %a : ui32
}
vyre.program @p workgroup_size [64, 1, 1] {
  %a = vyre.const 1 : ui32
// CHECK: invalid-calls.mlir:[[# @LINE + 1]]:3: error: function @f takes 2 argument(s), but the call passes 1
  %r = vyre.call @f(%a) : ui32
}

// -----

vyre.func @f(%a: ui32) -> ui32 {
  vyre.yield %a : ui32
}
vyre.program @p workgroup_size [64, 1, 1] {
  %a = vyre.const 1.0 : f32
// CHECK: invalid-calls.mlir:[[# @LINE + 1]]:3: error: argument #0 of the call to @f is a f32, but the function takes ui32
  %r = vyre.call @f(%a) : ui32
}

// -----

vyre.func @f(%a: ui32) -> ui32 {
  vyre.yield %a : ui32
}
vyre.program @p workgroup_size [64, 1, 1] {
  %a = vyre.const 1 : ui32
// CHECK: invalid-calls.mlir:[[# @LINE + 1]]:3: error: function @f returns ui32, but the call expects si32
  %r = vyre.call @f(%a) : si32
}

// -----

// CHECK: invalid-calls.mlir:[[# @LINE + 1]]:1: error: recursive call @f -> @f; vyre functions are inlined and cannot recurse
vyre.func @f(%a: ui32) -> ui32 {
  %r = vyre.call @f(%a) : ui32
  vyre.yield %r : ui32
}

// -----

// CHECK: invalid-calls.mlir:[[# @LINE + 1]]:1: error: recursive call @even -> @odd -> @even; vyre functions are inlined and cannot recurse
vyre.func @even(%a: ui32) -> ui32 {
  %r = vyre.call @odd(%a) : ui32
  vyre.yield %r : ui32
}
// CHECK: invalid-calls.mlir:[[# @LINE + 1]]:1: error: recursive call @odd -> @even -> @odd
vyre.func @odd(%a: ui32) -> ui32 {
  %r = vyre.call @even(%a) : ui32
  vyre.yield %r : ui32
}

// -----

vyre.func @f(%a: ui32) -> ui32 {
// CHECK: invalid-calls.mlir:[[# @LINE + 1]]:3: error: 'vyre.load' is not allowed inside a 'vyre.func'; a function computes from its arguments alone
  %v = vyre.load @x[%a] : ui32
  vyre.yield %v : ui32
}

// -----

vyre.func @f(%a: ui32) -> ui32 {
// CHECK: invalid-calls.mlir:[[# @LINE + 1]]:3: error: 'vyre.invocation_id' is not allowed inside a 'vyre.func'
  %i = vyre.invocation_id x
  %r = vyre.add %a, %i : ui32
  vyre.yield %r : ui32
}

// -----

vyre.func @f(%a: ui32) -> ui32 {
  %c = vyre.const true : i1
  vyre.if %c {
// CHECK: invalid-calls.mlir:[[# @LINE + 1]]:5: error: 'vyre.trap' is not allowed inside a 'vyre.func'
    vyre.trap %a "no"
  }
  vyre.yield %a : ui32
}

// -----

// CHECK: invalid-calls.mlir:[[# @LINE + 1]]:1: error: function @f must end with 'vyre.yield %r : T'
vyre.func @f(%a: ui32) -> ui32 {
  %r = vyre.add %a, %a : ui32
}

// -----

// CHECK: invalid-calls.mlir:[[# @LINE + 1]]:1: error: function @f returns f32, but yields a ui32
vyre.func @f(%a: ui32) -> f32 {
  vyre.yield %a : ui32
}

// -----

vyre.func @f(%a: ui32) -> ui32 {
  %c = vyre.const true : i1
  vyre.if %c {
// CHECK: invalid-calls.mlir:[[# @LINE + 1]]:5: error: 'vyre.yield' expects parent op 'vyre.func'
    vyre.yield %a : ui32
  }
  vyre.yield %a : ui32
}

// -----

// CHECK: invalid-calls.mlir:[[# @LINE + 1]]:1: error: unsupported element type i8 for argument #0 of function @f
vyre.func @f(%a: i8) -> ui32 {
  %r = vyre.const 0 : ui32
  vyre.yield %r : ui32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %i = vyre.invocation_id x
// CHECK: invalid-calls.mlir:[[# @LINE + 1]]:3: error: 'vyre.yield' is not allowed inside a 'vyre.program'
  vyre.yield %i : ui32
}
