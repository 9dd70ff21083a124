// RUN: vyre-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: vyre-opt %s --split-input-file --verify-diagnostics --lower | filecheck %s --check-prefix=LOWER
// Refused launch geometry, each at the program.

// CHECK: grid-invalid.mlir:[[# @LINE + 1]]:1: error: grid axis y is 0 workgroups; every axis must launch 1 ... 65535 workgroups (the device limit per dimension)
vyre.program @p workgroup_size [64, 1, 1] grid [4, 0, 1] {
}

// -----

// CHECK: grid-invalid.mlir:[[# @LINE + 1]]:1: error: grid axis x is 65536 workgroups; every axis must launch 1 ... 65535 workgroups (the device limit per dimension)
vyre.program @p workgroup_size [64, 1, 1] grid [65536, 1, 1] {
}

// -----

// CHECK: grid-invalid.mlir:[[# @LINE + 1]]:1: error: a program has either an explicit grid or an indirect one, not both: remove 'grid [...]' or the 'indirect' attribute
vyre.program @p {indirect = @g} workgroup_size [64, 1, 1] grid [2, 1, 1] {
  vyre.buffer @g binding 0 read_only : ui32[3]
}

// -----

// CHECK: grid-invalid.mlir:[[# @LINE + 2]]:48: error: grid needs exactly 3 values [X, Y, Z], got 2
// LOWER: grid-invalid.mlir:[[# @LINE + 1]]:48: error: grid needs exactly 3 values [X, Y, Z], got 2
vyre.program @p workgroup_size [64, 1, 1] grid [2, 2] {
}

// -----

// A 2-D workgroup without `grid` whose i comes from invocation_id y: the
// derived grid launches one workgroup, far too few for 256 elements.
// LOWER: grid-invalid.mlir:[[# @LINE + 1]]:1: error: @rows: workgroup_size [32, 8, 1] has y or z above 1, but without 'grid' the derived grid launches 1 workgroup(s) along x only, so invocation_id x covers 32 of its 256 elements (invocation_id y only 0 ... 7). Fix: add an explicit grid after the workgroup size, e.g. 'grid [8, 1, 1]' for one element per invocation along x, or the grid of your 2-D/3-D layout
vyre.program @rows workgroup_size [32, 8, 1] {
  vyre.buffer @out binding 0 write_only : ui32[256]
  %x = vyre.invocation_id x
  %y = vyre.invocation_id y
  %w = vyre.const 32 : ui32
  %r = vyre.mul %y, %w : ui32
  %i = vyre.add %r, %x : ui32
  vyre.store @out[%i] = %i : ui32
}
