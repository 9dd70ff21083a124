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
