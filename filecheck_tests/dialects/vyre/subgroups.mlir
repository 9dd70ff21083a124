// RUN: vyre-opt %s --split-input-file --verify-diagnostics | filecheck %s
// The subgroup ops round-trip; each verifier error names the offending op.

// CHECK-LABEL: vyre.program @ok
// CHECK:       %n = vyre.subgroup_size
// CHECK-NEXT:  %l = vyre.subgroup_local_id
// CHECK-NEXT:  %r = vyre.subgroup_reduce add %f : f32
// CHECK-NEXT:  %x = vyre.subgroup_reduce xor %l : ui32
// CHECK-NEXT:  %m = vyre.subgroup_reduce min %s : si32
// CHECK-NEXT:  %sh = vyre.subgroup_shuffle %f, %l : f32
// CHECK-NEXT:  %bc = vyre.subgroup_broadcast %s, %n : si32
// CHECK-NEXT:  %b = vyre.subgroup_ballot %c
vyre.program @ok workgroup_size [64, 1, 1] {
  vyre.buffer @o binding 0 write_only : ui32[64]
  %f = vyre.const 1.5 : f32
  %s = vyre.const -2 : si32
  %c = vyre.const true : i1
  %n = vyre.subgroup_size
  %l = vyre.subgroup_local_id
  %r = vyre.subgroup_reduce add %f : f32
  %x = vyre.subgroup_reduce xor %l : ui32
  %m = vyre.subgroup_reduce min %s : si32
  %sh = vyre.subgroup_shuffle %f, %l : f32
  %bc = vyre.subgroup_broadcast %s, %n : si32
  %b = vyre.subgroup_ballot %c
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %f = vyre.const 1.5 : f32
// CHECK: subgroups.mlir:[[# @LINE + 1]]:3: error: 'vyre.subgroup_reduce and' does not accept f32; it takes ui32, si32
  %r = vyre.subgroup_reduce and %f : f32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %f = vyre.const 1 : ui32
// CHECK: subgroups.mlir:[[# @LINE + 1]]:3: error: unknown subgroup reduction 'avg'; expected one of add, mul, min, max, and, or, xor
  %r = vyre.subgroup_reduce avg %f : ui32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %t = vyre.const true : i1
  %z = vyre.const 0 : ui32
// CHECK: subgroups.mlir:[[# @LINE + 1]]:3: error: 'vyre.subgroup_shuffle' does not accept i1; it takes ui32, si32, f32
  %r = vyre.subgroup_shuffle %t, %z : i1
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %i = vyre.invocation_id x
  %v = vyre.const 3 : ui32
// CHECK: subgroups.mlir:[[# @LINE + 1]]:3: error: the lane of 'vyre.subgroup_broadcast' must be the same for every invocation
  %r = vyre.subgroup_broadcast %v, %i : ui32
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %c = vyre.eq %i, %z : ui32
  vyre.if %c {
// CHECK: subgroups.mlir:[[# @LINE + 1]]:5: error: 'vyre.subgroup_reduce' under invocation-dependent control flow ('vyre.if' whose condition or bounds depend on the invocation)
    %r = vyre.subgroup_reduce add %i : ui32
  }
}

// -----

vyre.program @p workgroup_size [64, 1, 1] {
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %c = vyre.eq %i, %z : ui32
  vyre.if %c {
    vyre.return
  }
// CHECK: subgroups.mlir:[[# @LINE + 1]]:3: error: 'vyre.subgroup_ballot' after a 'vyre.return' that only some invocations take
  %b = vyre.subgroup_ballot %c
}

// -----

// A uniform condition is fine.
// CHECK-LABEL: vyre.program @uniform
vyre.program @uniform workgroup_size [64, 1, 1] {
  %w = vyre.workgroup_id x
  %z = vyre.const 0 : ui32
  %c = vyre.eq %w, %z : ui32
  vyre.if %c {
    %r = vyre.subgroup_reduce add %w : ui32
  }
}

// -----

vyre.func @f(%a: ui32) -> ui32 {
// CHECK: subgroups.mlir:[[# @LINE + 1]]:3: error: 'vyre.subgroup_reduce' is not allowed inside a 'vyre.func'
  %r = vyre.subgroup_reduce add %a : ui32
  vyre.yield %r : ui32
}

// -----

// How a GPU forms the subgroups of a multi-dimensional workgroup is not specified
// (lavapipe: 4 of 8 lanes active per row of a [4, 4, 1] workgroup).
vyre.program @p workgroup_size [4, 4, 1] {
// CHECK: subgroups.mlir:[[# @LINE + 1]]:3: error: 'vyre.subgroup_local_id' needs a one-dimensional workgroup_size [X, 1, 1]; program @p has [4, 4, 1]
  %l = vyre.subgroup_local_id
}
