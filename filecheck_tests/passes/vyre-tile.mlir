// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "xdsl-opt %s --split-input-file -p 'vyre-tile{threads-m=2 threads-n=2 reg-m=2 reg-n=2 tile-k=4 vector-width=1}' > %t.xdsl" \
// RUN:   --run "vyre-opt %s --split-input-file -p 'vyre-tile{threads-m=2 threads-n=2 reg-m=2 reg-n=2 tile-k=4 vector-width=1}' > %t.small" \
// RUN:   --run "vyre-opt %s --split-input-file -p 'vyre-tile{reg-m=4 reg-n=4}' > %t.wide" \
// RUN:   --run "vyre-opt %s --split-input-file -p 'vyre-tile{remarks=true}' > /dev/null 2> %t.remarks"
// RUN: filecheck %s < %t.small
// RUN: diff %t.small %t.xdsl
// RUN: filecheck %s --check-prefix=WIDE < %t.wide
// RUN: filecheck %s --check-prefix=REMARK < %t.remarks

// The naive product, 8 x 7 outputs over k = 6, one per invocation on a 2 x 2
// grid of 4 x 4 workgroups. Tiled 2 x 2 outputs per invocation on 2 x 2
// workgroups: 4 x 4 outputs per workgroup, so the grid stays 2 x 2 with
// workgroups of 2 x 2. One full slice of 4 values of k, then a partial one of
// 2 (zero past k = 6), each loaded into workgroup memory and followed by a
// barrier; every output is updated by the same fma, in the same order of k;
// the stores keep the program's guard.
vyre.program @gemm workgroup_size [4, 4, 1] grid [2, 2, 1] {
  vyre.buffer @A binding 0 read_only : f32[48]
  vyre.buffer @B binding 1 read_only : f32[42]
  vyre.buffer @C binding 2 write_only : f32[56]
  %col = vyre.invocation_id x
  %row = vyre.invocation_id y
  %m = vyre.const 8 : ui32
  %n = vyre.const 7 : ui32
  %k = vyre.const 6 : ui32
  %zero = vyre.const 0.0 : f32
  %lo = vyre.const 0 : ui32
  %in_col = vyre.lt %col, %n : ui32
  %in_row = vyre.lt %row, %m : ui32
  %inside = vyre.and %in_col, %in_row : i1
  vyre.if %inside {
    vyre.let @acc = %zero : f32
    vyre.loop @kk = %lo to %k {
      %kv = vyre.var @kk : ui32
      %ra = vyre.mul %row, %k : ui32
      %ia = vyre.add %ra, %kv : ui32
      %a = vyre.load @A[%ia] : f32
      %rb = vyre.mul %kv, %n : ui32
      %ib = vyre.add %rb, %col : ui32
      %b = vyre.load @B[%ib] : f32
      %acc = vyre.var @acc : f32
      %s = vyre.fma %a, %b, %acc : f32
      vyre.assign @acc = %s : f32
    }
    %r = vyre.var @acc : f32
    %rc = vyre.mul %row, %n : ui32
    %ic = vyre.add %rc, %col : ui32
    vyre.store @C[%ic] = %r : f32
  }
}

// CHECK-LABEL: vyre.program @gemm workgroup_size [2, 2, 1] grid [2, 2, 1] {
// CHECK:         vyre.buffer @A_tile workgroup : f32[32]
// CHECK-NEXT:    vyre.buffer @B_tile workgroup : f32[16]
// CHECK:         %lx = vyre.local_id x
// CHECK-NEXT:    %ly = vyre.local_id y
// CHECK-NEXT:    %wx = vyre.workgroup_id x
// CHECK-NEXT:    %wy = vyre.workgroup_id y
// CHECK:         vyre.let @tile_acc_0_0 = %zero : f32
// CHECK-NEXT:    vyre.let @tile_acc_0_1 = %zero : f32
// CHECK-NEXT:    vyre.let @tile_acc_1_0 = %zero : f32
// CHECK-NEXT:    vyre.let @tile_acc_1_1 = %zero : f32
// CHECK:         vyre.loop @tile_t = %{{.*}} to %{{.*}} {
// CHECK:           %[[A0:.*]] = vyre.load @A[%ia] : f32
// CHECK-NEXT:      vyre.store @A_tile[%{{.*}}] = %[[A0]] : f32
// CHECK:           %[[B0:.*]] = vyre.load @B[%ib] : f32
// CHECK-NEXT:      vyre.store @B_tile[%{{.*}}] = %[[B0]] : f32
// CHECK:           vyre.barrier
// CHECK:           %[[X:.*]] = vyre.load @A_tile[%{{.*}}] : f32
// CHECK:           %[[Y:.*]] = vyre.load @B_tile[%{{.*}}] : f32
// CHECK:           %[[ACC:.*]] = vyre.var @tile_acc_0_0 : f32
// CHECK-NEXT:      %s = vyre.fma %[[X]], %[[Y]], %[[ACC]] : f32
// CHECK-NEXT:      vyre.assign @tile_acc_0_0 = %s : f32
// CHECK:           vyre.barrier
// CHECK-NEXT:    }
// CHECK:         %k_rest = vyre.add %lo, %{{.*}} : ui32
// CHECK:         vyre.if %{{.*}} {
// CHECK:           vyre.load @A[%ia_4] : f32
// CHECK:         } else {
// CHECK-NEXT:      vyre.store @A_tile[%{{.*}}] = %{{.*}} : f32
// CHECK-NEXT:    }
// CHECK:         vyre.barrier
// CHECK:         %in_col = vyre.lt %col0, %n : ui32
// CHECK-NEXT:    %in_row = vyre.lt %row0, %m : ui32
// CHECK-NEXT:    %inside = vyre.and %in_col, %in_row : i1
// CHECK-NEXT:    vyre.if %inside {
// CHECK-NEXT:      %[[R:.*]] = vyre.var @tile_acc_0_0 : f32
// CHECK-NEXT:      %rc = vyre.mul %row0, %n : ui32
// CHECK-NEXT:      %ic = vyre.add %rc, %col0 : ui32
// CHECK-NEXT:      vyre.store @C[%ic] = %[[R]] : f32
// CHECK-NEXT:    }
// CHECK-NOT:     vyre.loop @kk

// With the default tile (16 x 16 invocations) and 4 x 4 outputs each, the
// operands are staged as vector<4xf32>: one wide load gives four operands.
// WIDE-LABEL: vyre.program @gemm workgroup_size [16, 16, 1] grid [1, 1, 1] {
// WIDE:         vyre.buffer @A_tile workgroup : vector<4xf32>[{{[0-9]+}}]
// WIDE-NEXT:    vyre.buffer @B_tile workgroup : vector<4xf32>[{{[0-9]+}}]
// WIDE:         vyre.from_elements
// WIDE:         vyre.barrier
// WIDE:         %[[V:.*]] = vyre.load @A_tile[%{{.*}}] : vector<4xf32>
// WIDE-NEXT:    vyre.extract %[[V]][0] : vector<4xf32>
// WIDE-NEXT:    vyre.extract %[[V]][1] : vector<4xf32>

// REMARK: vyre-tile.mlir:[[# @LINE - 88]]:1: remark: tiled: 8x8 outputs per invocation, 128x128 per workgroup, slices of 16

// -----

// PolyBench's CUDA form after scalar replacement: the output's initial value
// is beta * C, read before the loop. Tiled 4 x 4 outputs per workgroup over
// 6 x 6 outputs, the tiles overhang: past the edge, row * 6 + col is another
// row's element. The initial value is read only for the outputs the program
// stores, under the same guard as the store (zero elsewhere).
vyre.program @gemm_beta workgroup_size [4, 4, 1] grid [2, 2, 1] {
  vyre.buffer @A binding 0 read_only : f32[24]
  vyre.buffer @B binding 1 read_only : f32[24]
  vyre.buffer @C binding 2 read_write : f32[36]
  %col = vyre.invocation_id x
  %row = vyre.invocation_id y
  %n = vyre.const 6 : ui32
  %k = vyre.const 4 : ui32
  %lo = vyre.const 0 : ui32
  %beta = vyre.const 0.5 : f32
  %in_col = vyre.lt %col, %n : ui32
  %in_row = vyre.lt %row, %n : ui32
  %inside = vyre.and %in_col, %in_row : i1
  vyre.if %inside {
    %rc = vyre.mul %row, %n : ui32
    %ic = vyre.add %rc, %col : ui32
    %old = vyre.load @C[%ic] : f32
    %init = vyre.mul %old, %beta : f32
    vyre.let @acc = %init : f32
    vyre.loop @kk = %lo to %k {
      %kv = vyre.var @kk : ui32
      %ra = vyre.mul %row, %k : ui32
      %ia = vyre.add %ra, %kv : ui32
      %a = vyre.load @A[%ia] : f32
      %rb = vyre.mul %kv, %n : ui32
      %ib = vyre.add %rb, %col : ui32
      %b = vyre.load @B[%ib] : f32
      %acc = vyre.var @acc : f32
      %s = vyre.fma %a, %b, %acc : f32
      vyre.assign @acc = %s : f32
    }
    %r = vyre.var @acc : f32
    vyre.store @C[%ic] = %r : f32
  }
}

// CHECK-LABEL: vyre.program @gemm_beta workgroup_size [2, 2, 1] grid [2, 2, 1] {
// CHECK:         %inside = vyre.and %in_col, %in_row : i1
// CHECK-NEXT:    vyre.let @tile_acc_0_0 = %[[ZERO:[0-9]+]] : f32
// CHECK-NEXT:    vyre.if %inside {
// CHECK-NEXT:      %rc = vyre.mul %row0, %n : ui32
// CHECK-NEXT:      %ic = vyre.add %rc, %col0 : ui32
// CHECK-NEXT:      %old = vyre.load @C[%ic] : f32
// CHECK-NEXT:      %init = vyre.mul %old, %beta : f32
// CHECK-NEXT:      vyre.assign @tile_acc_0_0 = %init : f32
// CHECK-NEXT:    }
// CHECK:         vyre.let @tile_acc_1_1 = %[[ZERO]] : f32
// CHECK-NEXT:    vyre.if %inside_3 {
// CHECK:           vyre.load @C
// CHECK:         vyre.barrier
// CHECK:         vyre.if %inside_7 {
// CHECK-NEXT:      %{{.*}} = vyre.var @tile_acc_1_1 : f32
// CHECK:           vyre.store @C

// -----

// Not a product: each invocation reads one row of @A only (nothing is
// shared along the columns). Left as it is.
vyre.program @rowsum workgroup_size [4, 4, 1] grid [1, 1, 1] {
  vyre.buffer @A binding 0 read_only : f32[64]
  vyre.buffer @out binding 1 write_only : f32[16]
  %col = vyre.invocation_id x
  %row = vyre.invocation_id y
  %n = vyre.const 4 : ui32
  %zero = vyre.const 0.0 : f32
  %lo = vyre.const 0 : ui32
  vyre.let @acc = %zero : f32
  vyre.loop @kk = %lo to %n {
    %kv = vyre.var @kk : ui32
    %ra = vyre.mul %row, %n : ui32
    %ia = vyre.add %ra, %kv : ui32
    %a = vyre.load @A[%ia] : f32
    %acc = vyre.var @acc : f32
    %s = vyre.add %acc, %a : f32
    vyre.assign @acc = %s : f32
  }
  %r = vyre.var @acc : f32
  %rc = vyre.mul %row, %n : ui32
  %ic = vyre.add %rc, %col : ui32
  vyre.store @out[%ic] = %r : f32
}

// CHECK-LABEL: vyre.program @rowsum workgroup_size [4, 4, 1] grid [1, 1, 1] {
// CHECK-NOT:     vyre.barrier
// CHECK:         vyre.loop @kk
// REMARK: vyre-tile.mlir:[[# @LINE - 27]]:1: remark: not tiled: the loop body does not make exactly two loads (loads: @A)

// -----

// Two invocations would write one element (@out[row + col]): not tiled.
vyre.program @collide workgroup_size [4, 4, 1] grid [1, 1, 1] {
  vyre.buffer @A binding 0 read_only : f32[16]
  vyre.buffer @B binding 1 read_only : f32[16]
  vyre.buffer @out binding 2 write_only : f32[16]
  %col = vyre.invocation_id x
  %row = vyre.invocation_id y
  %n = vyre.const 4 : ui32
  %zero = vyre.const 0.0 : f32
  %lo = vyre.const 0 : ui32
  vyre.let @acc = %zero : f32
  vyre.loop @kk = %lo to %n {
    %kv = vyre.var @kk : ui32
    %ra = vyre.mul %row, %n : ui32
    %ia = vyre.add %ra, %kv : ui32
    %a = vyre.load @A[%ia] : f32
    %rb = vyre.mul %kv, %n : ui32
    %ib = vyre.add %rb, %col : ui32
    %b = vyre.load @B[%ib] : f32
    %p = vyre.mul %a, %b : f32
    %acc = vyre.var @acc : f32
    %s = vyre.add %acc, %p : f32
    vyre.assign @acc = %s : f32
  }
  %r = vyre.var @acc : f32
  %ic = vyre.add %row, %col : ui32
  vyre.store @out[%ic] = %r : f32
}

// CHECK-LABEL: vyre.program @collide workgroup_size [4, 4, 1] grid [1, 1, 1] {
// CHECK-NOT:     vyre.barrier
// REMARK: vyre-tile.mlir:[[# @LINE - 30]]:1: remark: not tiled: the store index may give two invocations the same element

// -----

// No explicit grid: how many rows and columns it covers is not known here.
vyre.program @derived workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 write_only : f32[64]
  %i = vyre.invocation_id x
  %zero = vyre.const 0.0 : f32
  vyre.store @out[%i] = %zero : f32
}

// CHECK-LABEL: vyre.program @derived workgroup_size [64, 1, 1] {
// REMARK: vyre-tile.mlir:[[# @LINE - 8]]:1: remark: not tiled: the program has no explicit grid
