// RUN: vyre-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Structural errors of single kernel ops (descriptor-wide invariants are kernel-verify's; see passes/kernel-verify.mlir).

// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: a descriptor needs exactly one 'kernel.dispatch', found 0
kernel.descriptor @d id "0" entry "main" {
  kernel.binding @x slot 0 group 0 global read_write : f32[4]
}

// -----

kernel.descriptor @d id "0" entry "main" {
  kernel.dispatch workgroup_size [1, 1, 1] program_workgroup_size [1, 1, 1] grid [1, 1, 1] count []
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: binding @x of class uniform takes bind group 1, not 0
  kernel.binding @x slot 0 group 0 uniform read_only : f32[4]
}

// -----

kernel.descriptor @d id "0" entry "main" {
  kernel.dispatch workgroup_size [1, 1, 1] program_workgroup_size [1, 1, 1] grid [1, 1, 1] count []
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: shared binding @t needs a static element count > 0
  kernel.binding @t slot 16777216 shared read_write : f32[?]
}

// -----

kernel.descriptor @d id "0" entry "main" {
  kernel.dispatch workgroup_size [1, 1, 1] program_workgroup_size [1, 1, 1] grid [1, 1, 1] count []
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: atomic binding @x must hold ui32
  kernel.binding @x slot 0 group 0 global read_write atomic : f32[4]
}

// -----

kernel.descriptor @d id "0" entry "main" {
  kernel.dispatch workgroup_size [1, 1, 1] program_workgroup_size [1, 1, 1] grid [1, 1, 1] count []
  kernel.binding @x slot 0 group 0 global read_write : f32[4]
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: 'grid_sync' cannot appear in a kernel; vyre-lower splits the dispatch there
  kernel.barrier grid_sync
}

// -----

kernel.descriptor @d id "0" entry "main" {
  kernel.dispatch workgroup_size [1, 1, 1] program_workgroup_size [1, 1, 1] grid [1, 1, 1] count []
  %z = vyre.const 0 : ui32
// CHECK: invalid.mlir:[[# @LINE + 1]]:3: error: trap tag must not be empty
  kernel.trap %z ""
}

// -----

kernel.descriptor @d id "0" entry "main" {
  kernel.dispatch workgroup_size [1, 1, 1] program_workgroup_size [1, 1, 1] grid [1, 1, 1] count []
// CHECK: invalid.mlir:[[# @LINE + 1]]:28: error: expected a memory class, one of global, constant, uniform, shared, scratch
  kernel.binding @x slot 0 private read_write : f32[4]
}
