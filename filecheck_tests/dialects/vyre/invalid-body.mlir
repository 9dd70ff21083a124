// RUN: vyre-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Whole-body checks of a program: dominance (use before definition), foreign
// ops, and nesting depth. Each diagnostic is located at the offending op.

// A use before the definition in the same block.
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
// CHECK: invalid-body.mlir:[[# @LINE + 1]]:3: error: operand #0 of 'vyre.trap' uses %i before its definition (at [[# @LINE + 2]]:3); move the definition above its first use
  vyre.trap %i "t"
  %i = vyre.invocation_id x
}

// -----

// A value defined inside a nested region is not visible after it.
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
  %i = vyre.invocation_id x
  vyre.block {
    %v = vyre.load @x[%i] : ui32
  }
// (the parser's scopes catch it: the value is undefined there)
// CHECK: invalid-body.mlir:[[# @LINE + 1]]:23: error: use of undefined value %v: define it before this use (a value defined inside a nested region is not visible after it)
  vyre.store @x[%i] = %v : ui32
}

// -----

// A use inside a nested region of a value the enclosing block defines later.
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
  %i = vyre.invocation_id x
  vyre.block {
// CHECK: invalid-body.mlir:[[# @LINE + 1]]:5: error: operand #1 of 'vyre.store' uses %late before its definition (at [[# @LINE + 3]]:3)
    vyre.store @x[%i] = %late : ui32
  }
  %late = vyre.const 7 : ui32
}

// -----

// A cycle of uses under a barrier's condition: rejected before the barrier's
// own verifier follows the definitions (which would never end).
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
// CHECK: invalid-body.mlir:[[# @LINE + 1]]:3: error: operand #0 of 'vyre.if' uses %c before its definition
  vyre.if %c {
    vyre.barrier
  }
// CHECK: invalid-body.mlir:[[# @LINE + 1]]:3: error: operand #0 of 'vyre.not' uses %d before its definition
  %c = vyre.not %d : i1
  %d = vyre.not %c : i1
}

// -----

// The condition is defined only inside the op's own region (xDSL's parser leaves a
// placeholder there, which must not reach later stages).
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
// CHECK: invalid-body.mlir:[[# @LINE + 1]]:3: error: operand #0 of 'vyre.if' uses a value, which is defined only later, inside this op's own region; define it before the op
  vyre.if %5 {
    %5 = vyre.const true : i1
  }
}

// -----

// A foreign op inside a program.
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : f32[64]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : f32
// CHECK: invalid-body.mlir:[[# @LINE + 1]]:3: error: 'arith.addf' is not allowed inside a 'vyre.program'; a program holds only vyre ops
  %s = arith.addf %v, %v : f32
  vyre.store @x[%i] = %s : f32
}

// -----

// A kernel op inside a program is foreign too.
vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
// CHECK: invalid-body.mlir:[[# @LINE + 1]]:3: error: 'kernel.invocation_id' is not allowed inside a 'vyre.program'
  %i = kernel.invocation_id x
}

// -----

// A program nested in a program.
vyre.program @p workgroup_size [64, 1, 1] {
// CHECK: invalid-body.mlir:[[# @LINE + 1]]:3: error: 'vyre.program' is not allowed inside a 'vyre.program'
  vyre.program @q workgroup_size [64, 1, 1] {
  }
}

// -----

// A foreign op inside a kernel descriptor.
kernel.descriptor @k id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [1, 1, 1] count [@x]
  kernel.binding @x slot 0 group 0 global read_write : ui32[64]
  %i = kernel.invocation_id x
// CHECK: invalid-body.mlir:[[# @LINE + 1]]:3: error: 'arith.addi' is not allowed inside a 'kernel.descriptor'; a descriptor holds only kernel ops and the pure vyre arithmetic ops
  %s = arith.addi %i, %i : ui32
  kernel.store_global slot 0 [%i] = %s : ui32
}

// -----

// A use before the definition inside a kernel descriptor.
kernel.descriptor @k id "0" entry "main" {
  kernel.dispatch workgroup_size [64, 1, 1] program_workgroup_size [64, 1, 1] grid [1, 1, 1] count [@x]
  kernel.binding @x slot 0 group 0 global read_write : ui32[64]
// CHECK: invalid-body.mlir:[[# @LINE + 1]]:3: error: operand #0 of 'kernel.store_global' uses %i before its definition
  kernel.store_global slot 0 [%i] = %i : ui32
  %i = kernel.invocation_id x
}

// -----

// (last: the module is printed after every diagnostic)
// Values defined above are visible in nested regions (MLIR dominance).
vyre.program @ok workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
  %i = vyre.invocation_id x
  %c = vyre.const 1 : ui32
  vyre.block {
    vyre.loop @k = %c to %c {
      vyre.store @x[%i] = %c : ui32
    }
  }
}
// CHECK: vyre.program @ok
// CHECK: vyre.store @x[%i] = %c : ui32
