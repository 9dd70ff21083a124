// RUN: vyre-opt %s --split-input-file -p convert-to-vyre | filecheck %s

// linalg.generic: the parallel iterators become the invocations, the
// reduction iterator a loop inside; operands are loaded through their indexing
// maps and linalg.yield stores to the outputs.
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @rowsum(%A: memref<6x5xf32>, %s: memref<6xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%A : memref<6x5xf32>) outs(%s : memref<6xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  }
  func.return
}
// CHECK:      vyre.program @rowsum_0
// CHECK:        %[[SIX:.*]] = vyre.const 6 : ui32
// CHECK-NEXT:   %[[FIVE:.*]] = vyre.const 5 : ui32
// CHECK-NEXT:   %[[I:.*]] = vyre.invocation_id x
// CHECK-NEXT:   %[[IN:.*]] = vyre.lt %[[I]], %[[SIX]] : ui32
// CHECK-NEXT:   vyre.if %[[IN]] {
// CHECK:          vyre.loop @k{{[0-9]+}} = %{{.*}} to %[[FIVE]] {
// CHECK-NEXT:       %[[J:.*]] = vyre.var @k{{[0-9]+}} : ui32
// CHECK:            %[[A:.*]] = vyre.load @A[%{{.*}}] : f32
// CHECK-NEXT:       %[[ACC:.*]] = vyre.load @s[%[[I]]] : f32
// CHECK-NEXT:       %[[R:.*]] = vyre.add %[[A]], %[[ACC]] : f32
// CHECK-NEXT:       vyre.store @s[%[[I]]] = %[[R]] : f32

// -----

// Named ops go through their generic form: linalg.fill is elementwise (its
// output map is the identity on %C's shape), so it keeps the flattened 1-D
// mapping and can fuse; linalg.matmul is not (it has a reduction iterator), so
// its two parallel iterators are grid axes (j on x, i on y; the workgroup
// [16, 16, 1] clipped to the extents 2 and 4) with a k loop inside.
func.func @mm(%A: memref<4x3xf32>, %B: memref<3x2xf32>, %C: memref<4x2xf32>, %z: f32) {
  linalg.fill ins(%z : f32) outs(%C : memref<4x2xf32>)
  linalg.matmul ins(%A, %B : memref<4x3xf32>, memref<3x2xf32>) outs(%C : memref<4x2xf32>)
  func.return
}
// CHECK:      vyre.program @mm_0 workgroup_size [64, 1, 1] {
// CHECK:        %[[ID:.*]] = vyre.invocation_id x
// CHECK:          vyre.store @C[%[[ID]]]
// CHECK:      vyre.program @mm_1 workgroup_size [2, 4, 1] grid [1, 1, 1] {
// CHECK:        %[[J:.*]] = vyre.invocation_id x
// CHECK-NEXT:   %[[I:.*]] = vyre.invocation_id y
// CHECK:        vyre.if
// CHECK:          vyre.loop @k{{[0-9]+}}
// CHECK:            vyre.mul %[[I]], %{{.*}} : ui32
// CHECK:            vyre.mul %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:       vyre.add %{{.*}}, %{{.*}} : f32
// CHECK:            vyre.store @C

// -----

// linalg.transpose, linalg.broadcast and linalg.reduce are generalized as
// upstream MLIR does: transpose and broadcast run one invocation per output
// element (T[j][i] = A[i][j]: j on x, i on y; B[i][j] = v[j]), reduce one per
// kept row with a loop over the reduced dimension (its region is the body).
func.func @tbr(%A: memref<4x6xf32>, %T: memref<6x4xf32>, %v: memref<6xf32>, %B: memref<4x6xf32>, %R: memref<4xf32>) {
  linalg.transpose ins(%A : memref<4x6xf32>) outs(%T : memref<6x4xf32>) permutation = [1, 0]
  linalg.broadcast ins(%v : memref<6xf32>) outs(%B : memref<4x6xf32>) dimensions = [0]
  linalg.reduce ins(%A : memref<4x6xf32>) outs(%R : memref<4xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.mulf %in, %init : f32
      linalg.yield %s : f32
    }
  func.return
}
// CHECK:      vyre.program @tbr_0 workgroup_size [4, 6, 1] grid [1, 1, 1] {
// CHECK:        %[[X:.*]] = vyre.invocation_id x
// CHECK-NEXT:   %[[Y:.*]] = vyre.invocation_id y
// CHECK:        vyre.if
// CHECK-NEXT:     %[[SIX:.*]] = vyre.const 6 : ui32
// CHECK-NEXT:     %[[AR:.*]] = vyre.mul %[[X]], %[[SIX]] : ui32
// CHECK-NEXT:     %[[AI:.*]] = vyre.add %[[AR]], %[[Y]] : ui32
// CHECK-NEXT:     %[[V:.*]] = vyre.load @A[%[[AI]]] : f32
// CHECK-NEXT:     %[[FOUR:.*]] = vyre.const 4 : ui32
// CHECK-NEXT:     %[[TR:.*]] = vyre.mul %[[Y]], %[[FOUR]] : ui32
// CHECK-NEXT:     %[[TI:.*]] = vyre.add %[[TR]], %[[X]] : ui32
// CHECK-NEXT:     vyre.store @T[%[[TI]]] = %[[V]] : f32
// CHECK:      vyre.program @tbr_1 workgroup_size [6, 4, 1] grid [1, 1, 1] {
// CHECK:        %[[BX:.*]] = vyre.invocation_id x
// CHECK:          %[[VV:.*]] = vyre.load @v[%[[BX]]] : f32
// CHECK:          vyre.store @B[%{{.*}}] = %[[VV]] : f32
// CHECK:      vyre.program @tbr_2 workgroup_size [64, 1, 1] {
// CHECK:        %[[RI:.*]] = vyre.invocation_id x
// CHECK:          vyre.loop @k{{[0-9]+}}
// CHECK:            %[[IN:.*]] = vyre.load @A[%{{.*}}] : f32
// CHECK-NEXT:       %[[ACC:.*]] = vyre.load @R[%[[RI]]] : f32
// CHECK-NEXT:       %[[M:.*]] = vyre.mul %[[IN]], %[[ACC]] : f32
// CHECK-NEXT:       vyre.store @R[%[[RI]]] = %[[M]] : f32

// -----

// linalg.pooling_nchw_max folds each input element into the output with
// max(output, input) (upstream's body; the window memref %K only gives the
// window's shape and is never read).
func.func @pool(%I: memref<1x1x4x4xf32>, %K: memref<2x2xf32>, %P: memref<1x1x2x2xf32>) {
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%I, %K : memref<1x1x4x4xf32>, memref<2x2xf32>) outs(%P : memref<1x1x2x2xf32>)
  func.return
}
// CHECK:      vyre.program @pool_0 workgroup_size [2, 2, 1] grid [1, 1, 1] {
// CHECK-NOT:    vyre.load @K
// CHECK:        vyre.loop @k{{[0-9]+}}
// CHECK:          vyre.loop @k{{[0-9]+}}
// CHECK:            %[[IN:.*]] = vyre.load @I[%{{.*}}] : f32
// CHECK-NOT:        vyre.load @K
// CHECK:            %[[OUT:.*]] = vyre.load @P[%{{.*}}] : f32
// CHECK:            %{{.*}} = vyre.max %[[OUT]], %[[IN]] : f32
// CHECK:            vyre.store @P
