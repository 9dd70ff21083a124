// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "xdsl-opt %s --split-input-file -p convert-to-vyre > %t.xdsl" \
// RUN:   --run "vyre-opt %s --split-input-file -p convert-to-vyre > %t.vyre"
// RUN: filecheck %s < %t.vyre
// RUN: diff %t.vyre %t.xdsl

// Arguments become buffers named after them, bound in argument order: a scalar
// is a one-element uniform, a memref read_only (only read) or read_write
// (written: an output), with its element count or `?` when runtime-sized.
// Code outside any parallel loop runs in a one-invocation program; pure values
// (here the load of %src, which the function never writes, and the product)
// are computed at the top of the program, the store by invocation 0 alone.
func.func @args(%alpha: f32, %src: memref<4x8xf32>, %dst: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %src[%c0, %c0] : memref<4x8xf32>
  %w = arith.mulf %alpha, %v : f32
  memref.store %w, %dst[%c0] : memref<?xf32>
  func.return
}
// The module records each memref argument's shape (-1: the dynamic dimension):
// a run returns the memref's outputs in that shape.
// CHECK:      builtin.module attributes {vyre.memref_shapes = {src = array<i64: 4, 8>, dst = array<i64: -1>}} {
// CHECK-NEXT: vyre.program @args_0 workgroup_size [64, 1, 1] {
// CHECK-NEXT:   vyre.buffer @alpha binding 0 uniform : f32[1]
// CHECK-NEXT:   vyre.buffer @src binding 1 read_only : f32[32]
// CHECK-NEXT:   vyre.buffer @dst binding 2 read_write : f32[?]
// CHECK:        %[[ALPHA:.*]] = vyre.load @alpha[%{{.*}}] : f32
// CHECK:        %[[V:.*]] = vyre.load @src[%{{.*}}] : f32
// CHECK-NEXT:   %[[W:.*]] = vyre.mul %[[ALPHA]], %[[V]] : f32
// CHECK-NEXT:   %[[ID:.*]] = vyre.invocation_id x
// CHECK-NEXT:   %[[ZERO:.*]] = vyre.const 0 : ui32
// CHECK-NEXT:   %[[FIRST:.*]] = vyre.eq %[[ID]], %[[ZERO]] : ui32
// CHECK-NEXT:   vyre.if %[[FIRST]] {
// CHECK-NEXT:     vyre.store @dst[%{{.*}}] = %[[W]] : f32
// CHECK-NOT:  func.func

// -----

// Unnamed arguments are arg0, arg1, …; an argument no op uses is still a
// buffer (of the first program), so every memref argument is an input.
func.func @unnamed(%0: memref<4xi32>, %1: memref<4xi32>) {
  %c1 = arith.constant 1 : index
  %k = arith.constant 5 : i32
  memref.store %k, %1[%c1] : memref<4xi32>
  func.return
}
// CHECK:      vyre.program @unnamed_0
// CHECK-NEXT:   vyre.buffer @arg0 binding 0 read_only : si32[4]
// CHECK-NEXT:   vyre.buffer @arg1 binding 1 read_write : si32[4]
