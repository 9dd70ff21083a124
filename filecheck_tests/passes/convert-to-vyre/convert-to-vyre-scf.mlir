// RUN: vyre-opt %s --split-input-file -p convert-to-vyre | filecheck %s

// A 2-D scf.parallel that is not elementwise (it reads %A[%i, %k]) is one
// program on an explicit grid: the inner dimension %j is axis x, %i axis y;
// the workgroup [16, 16, 1] is clipped to the extents (2, 4) and the grid is
// ceil(extent / workgroup) per axis; every axis is guarded by its extent. The
// inner scf.for runs in each invocation with its iter_arg in a named local.
func.func @rows(%A: memref<4x8xf32>, %S: memref<4x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %c0, %c4, %c2, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %sum = scf.for %k = %c0 to %c8 step %c2 iter_args(%acc = %z) -> (f32) {
      %v = memref.load %A[%i, %k] : memref<4x8xf32>
      %s = arith.addf %acc, %v : f32
      scf.yield %s : f32
    }
    memref.store %sum, %S[%i, %j] : memref<4x2xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return
}
// CHECK:      vyre.program @rows_0 workgroup_size [2, 4, 1] grid [1, 1, 1] {
// CHECK:        %[[X:.*]] = vyre.invocation_id x
// CHECK-NEXT:   %[[Y:.*]] = vyre.invocation_id y
// CHECK-NEXT:   %[[NX:.*]] = vyre.const 2 : ui32
// CHECK-NEXT:   %[[INX:.*]] = vyre.lt %[[X]], %[[NX]] : ui32
// CHECK-NEXT:   %[[NY:.*]] = vyre.const 4 : ui32
// CHECK-NEXT:   %[[INY:.*]] = vyre.lt %[[Y]], %[[NY]] : ui32
// CHECK-NEXT:   %[[IN:.*]] = vyre.and %[[INX]], %[[INY]] : i1
// CHECK-NEXT:   vyre.if %[[IN]] {
// CHECK-NEXT:     vyre.let @carry[[N:[0-9]+]] = %{{.*}} : f32
// CHECK:          vyre.loop @k{{[0-9]+}} = %{{.*}} to %[[TRIPS:.*]] {
// CHECK:            %[[ACC:.*]] = vyre.var @carry[[N]] : f32
// CHECK:            %[[V:.*]] = vyre.load @A
// CHECK-NEXT:       %[[S:.*]] = vyre.add %[[ACC]], %[[V]] : f32
// CHECK-NEXT:       vyre.assign @carry[[N]] = %[[S]] : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %[[SUM:.*]] = vyre.var @carry[[N]] : f32
// CHECK-NEXT:     %[[W:.*]] = vyre.const 2 : ui32
// CHECK-NEXT:     %[[ROW:.*]] = vyre.mul %[[Y]], %[[W]] : ui32
// CHECK-NEXT:     %[[I:.*]] = vyre.add %[[ROW]], %[[X]] : ui32
// CHECK-NEXT:     vyre.store @S[%[[I]]] = %[[SUM]] : f32

// -----

// An elementwise 2-D scf.parallel (lower bounds 0, steps 1, every access
// indexes a memref of the loop's shape by exactly %i, %j) keeps the flattened
// mapping on the derived 1-D grid, so it fuses with its neighbours: the space
// is flattened row-major onto invocation_id x, guarded by its size, and both
// accesses use the invocation id itself (the div/mod that would decompose it
// are dead and DCE removes them).
func.func @scale(%x: memref<37x23xf32>, %y: memref<37x23xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c23 = arith.constant 23 : index
  %c37 = arith.constant 37 : index
  "scf.parallel"(%c0, %c0, %c37, %c23, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %x[%i, %j] : memref<37x23xf32>
    %d = arith.addf %v, %v : f32
    memref.store %d, %y[%i, %j] : memref<37x23xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return
}
// CHECK:      vyre.program @scale_0 workgroup_size [64, 1, 1] {
// CHECK:        %[[ID:.*]] = vyre.invocation_id x
// CHECK-NEXT:   %[[TOTAL:.*]] = vyre.mul %{{.*}}, %{{.*}} : ui32
// CHECK-NEXT:   %[[IN:.*]] = vyre.lt %[[ID]], %[[TOTAL]] : ui32
// CHECK-NEXT:   vyre.if %[[IN]] {
// CHECK-NEXT:     %[[V:.*]] = vyre.load @x[%[[ID]]] : f32
// CHECK-NEXT:     %[[D:.*]] = vyre.add %[[V]], %[[V]] : f32
// CHECK-NEXT:     vyre.store @y[%[[ID]]] = %[[D]] : f32
// CHECK-NOT:  vyre.invocation_id y

// -----

// A 2-D stencil over the interior of 37 x 23 (trip counts 35 and 21): grid
// axes, workgroup [16, 16, 1], grid [ceil(21 / 16), ceil(35 / 16), 1]; the
// induction variables are 1 + the ids.
func.func @stencil(%x: memref<37x23xf32>, %y: memref<37x23xf32>) {
  %c1 = arith.constant 1 : index
  %c22 = arith.constant 22 : index
  %c36 = arith.constant 36 : index
  "scf.parallel"(%c1, %c1, %c36, %c22, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %jm = arith.subi %j, %c1 : index
    %l = memref.load %x[%i, %jm] : memref<37x23xf32>
    %m = memref.load %x[%i, %j] : memref<37x23xf32>
    %s = arith.addf %l, %m : f32
    memref.store %s, %y[%i, %j] : memref<37x23xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return
}
// CHECK:      vyre.program @stencil_0 workgroup_size [16, 16, 1] grid [2, 3, 1] {
// CHECK:        %[[X:.*]] = vyre.invocation_id x
// CHECK-NEXT:   %[[Y:.*]] = vyre.invocation_id y
// CHECK-NEXT:   %[[NX:.*]] = vyre.const 21 : ui32
// CHECK-NEXT:   %[[INX:.*]] = vyre.lt %[[X]], %[[NX]] : ui32
// CHECK-NEXT:   %[[NY:.*]] = vyre.const 35 : ui32
// CHECK-NEXT:   %[[INY:.*]] = vyre.lt %[[Y]], %[[NY]] : ui32
// CHECK-NEXT:   %[[IN:.*]] = vyre.and %[[INX]], %[[INY]] : i1
// CHECK-NEXT:   vyre.if %[[IN]] {
// CHECK-NEXT:     %[[I:.*]] = vyre.add %{{.*}}, %[[Y]] : ui32
// CHECK-NEXT:     %[[J:.*]] = vyre.add %{{.*}}, %[[X]] : ui32

// -----

// A 3-D scf.parallel that is not elementwise (a transpose): %k on axis x, %j
// on y, %i on z; workgroup [8, 8, 4] clipped to the extents (5, 6, 3), grid
// [1, 1, 1].
func.func @transpose3(%a: memref<3x6x5xi32>, %b: memref<5x6x3xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  "scf.parallel"(%c0, %c0, %c0, %c3, %c6, %c5, %c1, %c1, %c1) <{operandSegmentSizes = array<i32: 3, 3, 3, 0>}> ({
  ^bb0(%i: index, %j: index, %k: index):
    %v = memref.load %a[%i, %j, %k] : memref<3x6x5xi32>
    memref.store %v, %b[%k, %j, %i] : memref<5x6x3xi32>
    scf.reduce
  }) : (index, index, index, index, index, index, index, index, index) -> ()
  func.return
}
// CHECK:      vyre.program @transpose3_0 workgroup_size [5, 6, 3] grid [1, 1, 1] {
// CHECK:        %[[X:.*]] = vyre.invocation_id x
// CHECK-NEXT:   %[[Y:.*]] = vyre.invocation_id y
// CHECK-NEXT:   %[[Z:.*]] = vyre.invocation_id z
// CHECK-NEXT:   %[[NX:.*]] = vyre.const 5 : ui32
// CHECK-NEXT:   %[[INX:.*]] = vyre.lt %[[X]], %[[NX]] : ui32
// CHECK-NEXT:   %[[NY:.*]] = vyre.const 6 : ui32
// CHECK-NEXT:   %[[INY:.*]] = vyre.lt %[[Y]], %[[NY]] : ui32
// CHECK-NEXT:   %[[INXY:.*]] = vyre.and %[[INX]], %[[INY]] : i1
// CHECK-NEXT:   %[[NZ:.*]] = vyre.const 3 : ui32
// CHECK-NEXT:   %[[INZ:.*]] = vyre.lt %[[Z]], %[[NZ]] : ui32
// CHECK-NEXT:   %[[IN:.*]] = vyre.and %[[INXY]], %[[INZ]] : i1
// CHECK-NEXT:   vyre.if %[[IN]] {
// CHECK:          vyre.load @a
// CHECK:          vyre.store @b

// -----

// scf.if with results: a named local per result, assigned in each branch.
// scf.while: two nested bounded loops (256 × 256) under a `done` flag, and a
// trap when the flag is still clear after them.
func.func @branches(%a: memref<4xi32>) {
  %c0 = arith.constant 0 : index
  %one = arith.constant 1 : i32
  %x = memref.load %a[%c0] : memref<4xi32>
  %p = arith.cmpi sgt, %x, %one : i32
  %y = scf.if %p -> (i32) {
    scf.yield %one : i32
  } else {
    scf.yield %x : i32
  }
  %w = scf.while (%v = %y) : (i32) -> i32 {
    %more = arith.cmpi slt, %v, %x : i32
    scf.condition(%more) %v : i32
  } do {
  ^bb0(%v2: i32):
    %n = arith.addi %v2, %one : i32
    scf.yield %n : i32
  }
  memref.store %w, %a[%c0] : memref<4xi32>
  func.return
}
// CHECK:      vyre.let @branch[[B:[0-9]+]] = %{{.*}} : si32
// CHECK-NEXT: vyre.if %{{.*}} {
// CHECK-NEXT:   vyre.assign @branch[[B]] = %{{.*}} : si32
// CHECK-NEXT: } else {
// CHECK-NEXT:   vyre.assign @branch[[B]] = %{{.*}} : si32
// CHECK-NEXT: }
// CHECK-NEXT: %[[Y:.*]] = vyre.var @branch[[B]] : si32
// CHECK-NEXT: vyre.let @carry[[C:[0-9]+]] = %[[Y]] : si32
// CHECK:      vyre.let @result[[R:[0-9]+]] = %{{.*}} : si32
// CHECK:      vyre.let @done[[D:[0-9]+]] = %{{.*}} : i1
// CHECK-NEXT: %[[LIMIT:.*]] = vyre.const 256 : ui32
// CHECK:      vyre.loop @step{{[0-9]+}} = %{{.*}} to %[[LIMIT]] {
// CHECK:        vyre.loop @step{{[0-9]+}} = %{{.*}} to %[[LIMIT]] {
// CHECK:            vyre.if %{{.*}} {
// CHECK:              vyre.assign @carry[[C]] = %{{.*}} : si32
// CHECK-NEXT:       } else {
// CHECK-NEXT:         vyre.assign @result[[R]] = %{{.*}} : si32
// CHECK-NEXT:         %[[T:.*]] = vyre.const true
// CHECK-NEXT:         vyre.assign @done[[D]] = %[[T]] : i1
// CHECK:      vyre.trap %{{.*}} "scf.while"
// CHECK:      %[[W:.*]] = vyre.var @result[[R]] : si32
// CHECK-NEXT: vyre.store @a[%{{.*}}] = %[[W]] : si32

// -----

// scf.parallel with a reduction runs in order: a named local per result,
// folded with the reduce region after each iteration. At the top of the
// function it is a one-invocation program.
func.func @total(%a: memref<16xf32>, %out: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %z = arith.constant 0.0 : f32
  %s = "scf.parallel"(%c0, %c16, %c1, %z) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> ({
  ^bb0(%i: index):
    %v = memref.load %a[%i] : memref<16xf32>
    scf.reduce(%v : f32) {
    ^bb1(%x: f32, %y: f32):
      %t = arith.addf %x, %y : f32
      scf.reduce.return %t : f32
    }
  }) : (index, index, index, f32) -> f32
  memref.store %s, %out[%c0] : memref<1xf32>
  func.return
}
// CHECK:      vyre.program @total_0
// CHECK:        %[[FIRST:.*]] = vyre.eq %{{.*}}, %{{.*}} : ui32
// CHECK-NEXT:   vyre.if %[[FIRST]] {
// CHECK-NEXT:     vyre.let @reduce[[R:[0-9]+]] = %{{.*}} : f32
// CHECK:          vyre.loop @k{{[0-9]+}} = %{{.*}} to %{{.*}} {
// CHECK:            %[[V:.*]] = vyre.load @a[%{{.*}}] : f32
// CHECK-NEXT:       %[[ACC:.*]] = vyre.var @reduce[[R]] : f32
// CHECK-NEXT:       %[[T:.*]] = vyre.add %[[ACC]], %[[V]] : f32
// CHECK-NEXT:       vyre.assign @reduce[[R]] = %[[T]] : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %[[S:.*]] = vyre.var @reduce[[R]] : f32
// CHECK-NEXT:     vyre.store @out[%{{.*}}] = %[[S]] : f32
