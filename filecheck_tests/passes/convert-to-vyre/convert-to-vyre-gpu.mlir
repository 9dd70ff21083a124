// RUN: vyre-opt %s -p convert-to-vyre | filecheck %s

// gpu.launch_func: the threads of the launch (grid × block) are the iterations
// of one parallel nest ordered (grid z, y, x, block z, y, x), flattened onto
// invocation_id x; gpu.thread_id/block_id are the decomposed counters,
// block_dim/grid_dim the launch's sizes. The gpu.module is consumed.
// (xDSL 0.74 has no custom syntax for the gpu dialect: generic form.)
"gpu.module"() <{sym_name = "kernels"}> ({
  "gpu.func"() <{function_type = (memref<256xf32>) -> ()}> ({
  ^bb0(%x: memref<256xf32>):
    %t = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %b = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %d = "gpu.block_dim"() <{dimension = #gpu<dim x>}> : () -> index
    %base = arith.muli %b, %d : index
    %i = arith.addi %base, %t : index
    %v = memref.load %x[%i] : memref<256xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %x[%i] : memref<256xf32>
    "gpu.return"() : () -> ()
  }) {sym_name = "double", gpu.kernel} : () -> ()
}) : () -> ()
func.func @main(%x: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  "gpu.launch_func"(%c4, %c1, %c1, %c64, %c1, %c1, %x) <{kernel = @kernels::@double, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<256xf32>) -> ()
  func.return
}
// CHECK:      builtin.module
// CHECK-NOT:  gpu.module
// CHECK:      vyre.program @main_0 workgroup_size [64, 1, 1] {
// CHECK-NEXT:   vyre.buffer @x binding 0 read_write : f32[256]
// CHECK-DAG:    %[[FOUR:.*]] = vyre.const 4 : ui32
// CHECK-DAG:    %[[SIXTYFOUR:.*]] = vyre.const 64 : ui32
// CHECK:        %[[ID:.*]] = vyre.invocation_id x
// CHECK-NEXT:   %[[TOTAL:.*]] = vyre.mul %[[FOUR]], %[[SIXTYFOUR]] : ui32
// CHECK-NEXT:   %[[IN:.*]] = vyre.lt %[[ID]], %[[TOTAL]] : ui32
// CHECK-NEXT:   vyre.if %[[IN]] {
// CHECK-NEXT:     %[[TX:.*]] = vyre.mod %[[ID]], %[[SIXTYFOUR]] : ui32
// CHECK-NEXT:     %[[BX:.*]] = vyre.div %[[ID]], %[[SIXTYFOUR]] : ui32
// CHECK:          %[[BASE:.*]] = vyre.mul %[[BX]], %[[SIXTYFOUR]] : ui32
// CHECK:          %[[I:.*]] = vyre.add %[[BASE]], %[[TX]] : ui32
// CHECK:          vyre.load @x[%[[I]]] : f32
// CHECK-NOT:  gpu.
