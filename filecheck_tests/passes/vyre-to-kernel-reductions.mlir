// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "vyre-opt %s --split-input-file -p 'vyre-to-kernel{fuse=true}' > %t.pipeline.mlir" \
// RUN:   --run "vyre-opt %s --split-input-file -p 'vyre-to-kernel{fuse=true coarsen-reductions=false}' > %t.off.mlir" \
// RUN:   --run "vyre-opt %s --split-input-file -p vyre-to-kernel > %t.unfused.mlir" \
// RUN:   --run "vyre-opt %s --split-input-file -p 'vyre-to-kernel{fuse=true resident-workgroups=8}' > %t.resident.mlir" \
// RUN:   --run "vyre-opt %s --split-input-file -p 'vyre-coarsen-reductions{inputs-only=true},vyre-fuse,vyre-coarsen-reductions,vyre-lower,kernel-vectorize,kernel-coarsen' > %t.steps.mlir"
// RUN: filecheck %s < %t.pipeline.mlir
// RUN: filecheck %s --check-prefix=OFF < %t.off.mlir
// RUN: filecheck %s --check-prefix=UNFUSED < %t.unfused.mlir
// RUN: filecheck %s --check-prefix=RESIDENT < %t.resident.mlir
// RUN: diff %t.pipeline.mlir %t.steps.mlir

// The named pipeline coarsens workgroup tree reductions by default. A level
// fed by a producer is coarsened after vyre-fuse: the elementwise producer
// @square fuses into the first level (its leaf becomes x[i] * x[i]), and that
// level then combines k = 4 leaves per invocation (4096 workgroups of 256
// become 1024: an explicit grid). The later levels are too small to coarsen.
// With coarsen-reductions=false the fused level keeps its 4096 workgroups;
// unfused, the level alone is coarsened.

vyre.program @square workgroup_size [256, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[1048576]
  vyre.buffer @y binding 1 write_only : ui32[1048576]
  %i = vyre.invocation_id x
  %a = vyre.load @x[%i] : ui32
  %b = vyre.mul %a, %a : ui32
  vyre.store @y[%i] = %b : ui32
}
vyre.program @level0 workgroup_size [256, 1, 1] {
  vyre.buffer @y binding 0 read_only : ui32[1048576]
  vyre.buffer @r0 binding 1 write_only : ui32[4096]
  vyre.buffer @tile_level0 workgroup : ui32[256]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @y[%i] : ui32
  vyre.store @tile_level0[%l] = %v : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 8 : ui32
  %half = vyre.const 128 : ui32
  vyre.loop @level = %zero to %levels {
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_level0[%l] : ui32
      %b = vyre.load @tile_level0[%j] : ui32
      %s = vyre.add %a, %b : ui32
      vyre.store @tile_level0[%l] = %s : ui32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile_level0[%zero] : ui32
    vyre.store @r0[%w] = %total : ui32
  }
}
vyre.program @level1 workgroup_size [256, 1, 1] {
  vyre.buffer @r0 binding 0 read_only : ui32[4096]
  vyre.buffer @r1 binding 1 write_only : ui32[16]
  vyre.buffer @tile_level1 workgroup : ui32[256]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @r0[%i] : ui32
  vyre.store @tile_level1[%l] = %v : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 8 : ui32
  %half = vyre.const 128 : ui32
  vyre.loop @level = %zero to %levels {
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_level1[%l] : ui32
      %b = vyre.load @tile_level1[%j] : ui32
      %s = vyre.add %a, %b : ui32
      vyre.store @tile_level1[%l] = %s : ui32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile_level1[%zero] : ui32
    vyre.store @r1[%w] = %total : ui32
  }
}
vyre.program @level2 workgroup_size [256, 1, 1] {
  vyre.buffer @r1 binding 0 read_only : ui32[16]
  vyre.buffer @out binding 1 write_only : ui32[1]
  vyre.buffer @tile_level2 workgroup : ui32[256]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @r1[%i] : ui32
  %n = vyre.const 16 : ui32
  %inside = vyre.lt %i, %n : ui32
  %ident = vyre.const 0 : ui32
  %vp = vyre.select %inside, %v, %ident : ui32
  vyre.store @tile_level2[%l] = %vp : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 8 : ui32
  %half = vyre.const 128 : ui32
  vyre.loop @level = %zero to %levels {
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_level2[%l] : ui32
      %b = vyre.load @tile_level2[%j] : ui32
      %s = vyre.add %a, %b : ui32
      vyre.store @tile_level2[%l] = %s : ui32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile_level2[%zero] : ui32
    vyre.store @out[%w] = %total : ui32
  }
}


// CHECK:      kernel.descriptor @fused_square_level0
// CHECK-NEXT:   kernel.dispatch {{.*}} grid explicit [1024, 1, 1] count [@x, @r0]
// CHECK:        kernel.for %__vyre_coarsen_k = %{{.*}} to %{{.*}} {
// CHECK:          %[[A:.*]] = kernel.load_constant slot 0 [%{{.*}}] : ui32
// CHECK-NEXT:     %[[B:.*]] = vyre.mul %[[A]], %[[A]] : ui32
// CHECK:          vyre.add %{{.*}}, %[[B]] : ui32
// CHECK:      kernel.descriptor @level1
// CHECK-NEXT:   kernel.dispatch {{.*}} grid [16, 1, 1] count [@r0, @r1]
// CHECK:      kernel.descriptor @level2
// CHECK-NEXT:   kernel.dispatch {{.*}} grid [1, 1, 1] count [@r1, @out]

// A target that runs 8 workgroups at once (resident-workgroups=8, the wgpu
// runtime's figure for a 2-thread CPU adapter): k = 16 (max-k) leaves 256 of the
// 4096 workgroups, and the 16 workgroups of @level1 (twice 8) take k = 2.
// RESIDENT:      kernel.descriptor @fused_square_level0
// RESIDENT-NEXT:   kernel.dispatch {{.*}} grid explicit [256, 1, 1] count [@x, @r0]
// RESIDENT:      kernel.descriptor @level1
// RESIDENT-NEXT:   kernel.dispatch {{.*}} grid explicit [8, 1, 1] count [@r0, @r1]
// RESIDENT:      kernel.descriptor @level2
// RESIDENT-NEXT:   kernel.dispatch {{.*}} grid [1, 1, 1] count [@r1, @out]

// OFF:          kernel.descriptor @fused_square_level0
// OFF-NEXT:       kernel.dispatch {{.*}} grid [4096, 1, 1] count [@x, @r0]
// OFF-NOT:        __vyre_coarsen_k

// UNFUSED:      kernel.descriptor @square
// UNFUSED:      kernel.descriptor @level0
// UNFUSED-NEXT:   kernel.dispatch {{.*}} grid explicit [1024, 1, 1] count [@y, @r0]
// UNFUSED:        kernel.for %__vyre_coarsen_k

// -----

// A level whose leaf reads only module inputs (@x: no earlier program writes
// it) is coarsened before vyre-fuse. @beside reads @x too but writes @w, which
// the tree does not read; coarsened first, the level has an explicit grid and
// @beside stays a dispatch of its own. With coarsen-reductions=false @beside
// fuses into the first level (which then runs its 4096 workgroups).
// CHECK:        kernel.descriptor @beside
// CHECK:        kernel.descriptor @level0
// CHECK-NEXT:     kernel.dispatch {{.*}} grid explicit [1024, 1, 1] count [@x, @r0]
// CHECK:          kernel.for %__vyre_coarsen_k
// CHECK:        kernel.descriptor @level1
// CHECK-NEXT:     kernel.dispatch {{.*}} grid [16, 1, 1] count [@r0, @r1]

// OFF:          kernel.descriptor @fused_beside_level0
// OFF-NEXT:       kernel.dispatch {{.*}} grid [4096, 1, 1] count [@x, @w, @r0]
// OFF-NOT:        __vyre_coarsen_k

// UNFUSED:      kernel.descriptor @beside
// UNFUSED:      kernel.descriptor @level0
// UNFUSED-NEXT:   kernel.dispatch {{.*}} grid explicit [1024, 1, 1] count [@x, @r0]

vyre.program @beside workgroup_size [256, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[1048576]
  vyre.buffer @w binding 1 write_only : ui32[1048576]
  %i = vyre.invocation_id x
  %a = vyre.load @x[%i] : ui32
  %b = vyre.mul %a, %a : ui32
  vyre.store @w[%i] = %b : ui32
}
vyre.program @level0 workgroup_size [256, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[1048576]
  vyre.buffer @r0 binding 1 write_only : ui32[4096]
  vyre.buffer @tile_level0 workgroup : ui32[256]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @tile_level0[%l] = %v : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 8 : ui32
  %half = vyre.const 128 : ui32
  vyre.loop @level = %zero to %levels {
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_level0[%l] : ui32
      %b = vyre.load @tile_level0[%j] : ui32
      %s = vyre.add %a, %b : ui32
      vyre.store @tile_level0[%l] = %s : ui32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile_level0[%zero] : ui32
    vyre.store @r0[%w] = %total : ui32
  }
}
vyre.program @level1 workgroup_size [256, 1, 1] {
  vyre.buffer @r0 binding 0 read_only : ui32[4096]
  vyre.buffer @r1 binding 1 write_only : ui32[16]
  vyre.buffer @tile_level1 workgroup : ui32[256]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @r0[%i] : ui32
  vyre.store @tile_level1[%l] = %v : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 8 : ui32
  %half = vyre.const 128 : ui32
  vyre.loop @level = %zero to %levels {
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_level1[%l] : ui32
      %b = vyre.load @tile_level1[%j] : ui32
      %s = vyre.add %a, %b : ui32
      vyre.store @tile_level1[%l] = %s : ui32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile_level1[%zero] : ui32
    vyre.store @r1[%w] = %total : ui32
  }
}
vyre.program @level2 workgroup_size [256, 1, 1] {
  vyre.buffer @r1 binding 0 read_only : ui32[16]
  vyre.buffer @out binding 1 write_only : ui32[1]
  vyre.buffer @tile_level2 workgroup : ui32[256]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @r1[%i] : ui32
  %n = vyre.const 16 : ui32
  %inside = vyre.lt %i, %n : ui32
  %ident = vyre.const 0 : ui32
  %vp = vyre.select %inside, %v, %ident : ui32
  vyre.store @tile_level2[%l] = %vp : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 8 : ui32
  %half = vyre.const 128 : ui32
  vyre.loop @level = %zero to %levels {
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_level2[%l] : ui32
      %b = vyre.load @tile_level2[%j] : ui32
      %s = vyre.add %a, %b : ui32
      vyre.store @tile_level2[%l] = %s : ui32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile_level2[%zero] : ui32
    vyre.store @out[%w] = %total : ui32
  }
}
