// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "xdsl-opt %s --split-input-file -p 'vyre-coarsen-reductions{k=4}' > %t.xdsl" \
// RUN:   --run "vyre-opt %s --split-input-file -p 'vyre-coarsen-reductions{k=4 remarks=true}' > %t.out 2> %t.remarks" \
// RUN:   --run "vyre-opt %s --split-input-file -p 'vyre-coarsen-reductions{k=4 inputs-only=true remarks=true}' > %t.inputs 2> %t.inremarks" \
// RUN:   --run "vyre-opt %s --split-input-file -p 'vyre-coarsen-reductions{k=4 inputs-only=true},vyre-fuse,vyre-coarsen-reductions{k=4}' > %t.two" \
// RUN:   --run "vyre-opt %s --split-input-file -p 'vyre-fuse,vyre-coarsen-reductions{k=4}' > %t.fusefirst" \
// RUN:   --run "vyre-opt %s --split-input-file -p 'vyre-coarsen-reductions{k=4 subgroups=true}' > %t.subgroups"
// RUN: diff %t.out %t.xdsl
// RUN: filecheck %s < %t.out
// RUN: filecheck %s --check-prefix=REMARK < %t.remarks
// RUN: filecheck %s --check-prefix=INPUTS < %t.inputs
// RUN: filecheck %s --check-prefix=INREMARK < %t.inremarks
// RUN: filecheck %s --check-prefix=TWO < %t.two
// RUN: filecheck %s --check-prefix=FUSEFIRST < %t.fusefirst
// RUN: filecheck %s --check-prefix=SUBGROUPS < %t.subgroups

// A two-level ui32 sum of 1000 elements, 64 wide: 16 workgroups become 4.
// Each invocation first adds x[i], x[i + 256], x[i + 512], x[i + 768] (the
// padded leaf, cloned per term); workgroup w writes r0[w], and its lanes 1-3
// write the identity 0 into r0[w + 4], r0[w + 8], r0[w + 12]. The second
// level (one workgroup) is unchanged.
// CHECK:      vyre.program @level0 workgroup_size [64, 1, 1] grid [4, 1, 1] {
// CHECK:        %vp = vyre.select %inside, %v, %ident : ui32
// CHECK-NEXT:   vyre.let @__vyre_coarsen_acc = %vp : ui32
// CHECK-NEXT:   %[[ONE:.*]] = vyre.const 1 : ui32
// CHECK-NEXT:   %[[K:.*]] = vyre.const 4 : ui32
// CHECK-NEXT:   vyre.loop @__vyre_coarsen_k = %[[ONE]] to %[[K]] {
// CHECK-NEXT:     %[[J:.*]] = vyre.var @__vyre_coarsen_k : ui32
// CHECK-NEXT:     %[[I:.*]] = vyre.invocation_id x
// CHECK-NEXT:     %[[STRIDE:.*]] = vyre.const 256 : ui32
// CHECK-NEXT:     %[[OFF:.*]] = vyre.mul %[[J]], %[[STRIDE]] : ui32
// CHECK-NEXT:     %[[IDX:.*]] = vyre.add %[[I]], %[[OFF]] : ui32
// CHECK-NEXT:     %[[V:.*]] = vyre.load @x[%[[IDX]]] : ui32
// CHECK-NEXT:     %[[IN:.*]] = vyre.lt %[[IDX]], %n : ui32
// CHECK-NEXT:     %[[VP:.*]] = vyre.select %[[IN]], %[[V]], %ident : ui32
// CHECK-NEXT:     %[[ACC:.*]] = vyre.var @__vyre_coarsen_acc : ui32
// CHECK-NEXT:     %[[SUM:.*]] = vyre.add %[[ACC]], %[[VP]] : ui32
// CHECK-NEXT:     vyre.assign @__vyre_coarsen_acc = %[[SUM]] : ui32
// CHECK-NEXT:   }
// CHECK-NEXT:   %[[TOTAL:.*]] = vyre.var @__vyre_coarsen_acc : ui32
// CHECK-NEXT:   vyre.store @tile_level0[%l] = %[[TOTAL]] : ui32
// CHECK-NEXT:   vyre.barrier
// CHECK:        vyre.loop @level
// CHECK:        %[[LANE:.*]] = vyre.local_id x
// CHECK-NEXT:   %[[KC:.*]] = vyre.const 4 : ui32
// CHECK-NEXT:   %[[WRITER:.*]] = vyre.lt %[[LANE]], %[[KC]] : ui32
// CHECK-NEXT:   vyre.if %[[WRITER]] {
// CHECK-NEXT:     %[[Z:.*]] = vyre.const 0 : ui32
// CHECK-NEXT:     %[[T:.*]] = vyre.load @tile_level0[%[[Z]]] : ui32
// CHECK-NEXT:     %[[Z2:.*]] = vyre.const 0 : ui32
// CHECK-NEXT:     %[[FIRST:.*]] = vyre.eq %[[LANE]], %[[Z2]] : ui32
// CHECK-NEXT:     %[[E:.*]] = vyre.const 0 : ui32
// CHECK-NEXT:     %[[VAL:.*]] = vyre.select %[[FIRST]], %[[T]], %[[E]] : ui32
// CHECK-NEXT:     %[[W:.*]] = vyre.workgroup_id x
// CHECK-NEXT:     %[[G:.*]] = vyre.const 4 : ui32
// CHECK-NEXT:     %[[SOFF:.*]] = vyre.mul %[[LANE]], %[[G]] : ui32
// CHECK-NEXT:     %[[SLOT:.*]] = vyre.add %[[W]], %[[SOFF]] : ui32
// CHECK-NEXT:     vyre.store @r0[%[[SLOT]]] = %[[VAL]] : ui32
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-NEXT: vyre.program @level1 workgroup_size [64, 1, 1] {
vyre.program @level0 workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[1000]
  vyre.buffer @r0 binding 1 write_only : ui32[16]
  vyre.buffer @tile_level0 workgroup : ui32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : ui32
  %n = vyre.const 1000 : ui32
  %inside = vyre.lt %i, %n : ui32
  %ident = vyre.const 0 : ui32
  %vp = vyre.select %inside, %v, %ident : ui32
  vyre.store @tile_level0[%l] = %vp : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
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
// REMARK: vyre-coarsen-reductions.mlir:[[# @LINE + 1]]:1: remark: not coarsened: it runs one workgroup (or keeps one partial)
vyre.program @level1 workgroup_size [64, 1, 1] {
  vyre.buffer @r0 binding 0 read_only : ui32[16]
  vyre.buffer @out binding 1 write_only : ui32[1]
  vyre.buffer @tile_level1 workgroup : ui32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @r0[%i] : ui32
  %n = vyre.const 16 : ui32
  %inside = vyre.lt %i, %n : ui32
  %ident = vyre.const 0 : ui32
  %vp = vyre.select %inside, %v, %ident : ui32
  vyre.store @tile_level1[%l] = %vp : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
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
    vyre.store @out[%w] = %total : ui32
  }
}

// -----

// f32 min needs no permission (min is exact whatever the grouping). 1088
// elements (17 workgroups, no padding) become 5 workgroups: 5 x 4 > 17, so a
// term past the original 1088 invocations is skipped with a select, and the
// slots past r0[16] are not written. An idempotent combine repeats the
// workgroup's partial in the slots it no longer produces.
// CHECK:      vyre.program @level0 workgroup_size [64, 1, 1] grid [5, 1, 1] {
// CHECK:        vyre.loop @__vyre_coarsen_k
// CHECK:          %[[V:.*]] = vyre.load @x[%[[IDX:.*]]] : f32
// CHECK-NEXT:     %[[ACC:.*]] = vyre.var @__vyre_coarsen_acc : f32
// CHECK-NEXT:     %[[MIN:.*]] = vyre.min %[[ACC]], %[[V]] : f32
// CHECK-NEXT:     %[[LIMIT:.*]] = vyre.const 1088 : ui32
// CHECK-NEXT:     %[[IN:.*]] = vyre.lt %[[IDX]], %[[LIMIT]] : ui32
// CHECK-NEXT:     %[[NEW:.*]] = vyre.select %[[IN]], %[[MIN]], %[[ACC]] : f32
// CHECK-NEXT:     vyre.assign @__vyre_coarsen_acc = %[[NEW]] : f32
// CHECK:          %[[T:.*]] = vyre.load @tile_level0[%{{[0-9]+}}] : f32
// CHECK-NOT:      vyre.select
// CHECK:          %[[SLOT:.*]] = vyre.add
// CHECK-NEXT:     %[[G:.*]] = vyre.const 17 : ui32
// CHECK-NEXT:     %[[OK:.*]] = vyre.lt %[[SLOT]], %[[G]] : ui32
// CHECK-NEXT:     vyre.if %[[OK]] {
// CHECK-NEXT:       vyre.store @r0[%[[SLOT]]] = %[[T]] : f32
vyre.program @level0 workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[1088]
  vyre.buffer @r0 binding 1 write_only : f32[17]
  vyre.buffer @tile_level0 workgroup : f32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : f32
  vyre.store @tile_level0[%l] = %v : f32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
  vyre.loop @level = %zero to %levels {
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_level0[%l] : f32
      %b = vyre.load @tile_level0[%j] : f32
      %s = vyre.min %a, %b : f32
      vyre.store @tile_level0[%l] = %s : f32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile_level0[%zero] : f32
    vyre.store @r0[%w] = %total : f32
  }
}
vyre.program @level1 workgroup_size [64, 1, 1] {
  vyre.buffer @r0 binding 0 read_only : f32[17]
  vyre.buffer @out binding 1 write_only : f32[1]
  vyre.buffer @tile_level1 workgroup : f32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @r0[%i] : f32
  %n = vyre.const 17 : ui32
  %inside = vyre.lt %i, %n : ui32
  %ident = vyre.const 0x7F800000 : f32
  %vp = vyre.select %inside, %v, %ident : f32
  vyre.store @tile_level1[%l] = %vp : f32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
  vyre.loop @level = %zero to %levels {
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_level1[%l] : f32
      %b = vyre.load @tile_level1[%j] : f32
      %s = vyre.min %a, %b : f32
      vyre.store @tile_level1[%l] = %s : f32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile_level1[%zero] : f32
    vyre.store @out[%w] = %total : f32
  }
}

// -----

// f32 add regroups only with permission: here the program attribute
// {reassociate}; the identity written into the freed slots is -0.0.
// CHECK:      vyre.program @level0 {reassociate} workgroup_size [64, 1, 1] grid [4, 1, 1] {
// CHECK:        vyre.add %{{.*}}, %{{.*}} : f32
// CHECK:        vyre.const -0.0 : f32
vyre.program @level0 {reassociate} workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[1000]
  vyre.buffer @r0 binding 1 write_only : f32[16]
  vyre.buffer @tile_level0 workgroup : f32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : f32
  %n = vyre.const 1000 : ui32
  %inside = vyre.lt %i, %n : ui32
  %ident = vyre.const 0.0 : f32
  %vp = vyre.select %inside, %v, %ident : f32
  vyre.store @tile_level0[%l] = %vp : f32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
  vyre.loop @level = %zero to %levels {
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_level0[%l] : f32
      %b = vyre.load @tile_level0[%j] : f32
      %s = vyre.add %a, %b : f32
      vyre.store @tile_level0[%l] = %s : f32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile_level0[%zero] : f32
    vyre.store @r0[%w] = %total : f32
  }
}
vyre.program @level1 {reassociate} workgroup_size [64, 1, 1] {
  vyre.buffer @r0 binding 0 read_only : f32[16]
  vyre.buffer @out binding 1 write_only : f32[1]
  vyre.buffer @tile_level1 workgroup : f32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @r0[%i] : f32
  %n = vyre.const 16 : ui32
  %inside = vyre.lt %i, %n : ui32
  %ident = vyre.const 0.0 : f32
  %vp = vyre.select %inside, %v, %ident : f32
  vyre.store @tile_level1[%l] = %vp : f32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
  vyre.loop @level = %zero to %levels {
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_level1[%l] : f32
      %b = vyre.load @tile_level1[%j] : f32
      %s = vyre.add %a, %b : f32
      vyre.store @tile_level1[%l] = %s : f32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile_level1[%zero] : f32
    vyre.store @out[%w] = %total : f32
  }
}

// -----

// Without permission, f32 add is left alone.
// CHECK:      vyre.program @level0 workgroup_size [64, 1, 1] {
// CHECK-NOT:  __vyre_coarsen
// REMARK: vyre-coarsen-reductions.mlir:[[# @LINE + 1]]:1: remark: not coarsened: float 'add' rounds differently when regrouped; allow it with reassociate-floats=true or the program attribute {reassociate}
vyre.program @level0 workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[1000]
  vyre.buffer @r0 binding 1 write_only : f32[16]
  vyre.buffer @tile_level0 workgroup : f32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : f32
  %n = vyre.const 1000 : ui32
  %inside = vyre.lt %i, %n : ui32
  %ident = vyre.const 0.0 : f32
  %vp = vyre.select %inside, %v, %ident : f32
  vyre.store @tile_level0[%l] = %vp : f32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
  vyre.loop @level = %zero to %levels {
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_level0[%l] : f32
      %b = vyre.load @tile_level0[%j] : f32
      %s = vyre.add %a, %b : f32
      vyre.store @tile_level0[%l] = %s : f32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile_level0[%zero] : f32
    vyre.store @r0[%w] = %total : f32
  }
}
vyre.program @level1 workgroup_size [64, 1, 1] {
  vyre.buffer @r0 binding 0 read_only : f32[16]
  vyre.buffer @out binding 1 write_only : f32[1]
  vyre.buffer @tile_level1 workgroup : f32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @r0[%i] : f32
  %n = vyre.const 16 : ui32
  %inside = vyre.lt %i, %n : ui32
  %ident = vyre.const 0.0 : f32
  %vp = vyre.select %inside, %v, %ident : f32
  vyre.store @tile_level1[%l] = %vp : f32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
  vyre.loop @level = %zero to %levels {
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_level1[%l] : f32
      %b = vyre.load @tile_level1[%j] : f32
      %s = vyre.add %a, %b : f32
      vyre.store @tile_level1[%l] = %s : f32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile_level1[%zero] : f32
    vyre.store @out[%w] = %total : f32
  }
}

// -----

// sub is not associative: left alone.
// CHECK:      vyre.program @level0 workgroup_size [64, 1, 1] {
// CHECK-NOT:  __vyre_coarsen
// REMARK: vyre-coarsen-reductions.mlir:[[# @LINE + 1]]:1: remark: not coarsened: 'sub' is not associative and commutative
vyre.program @level0 workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[1000]
  vyre.buffer @r0 binding 1 write_only : ui32[16]
  vyre.buffer @tile_level0 workgroup : ui32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : ui32
  %n = vyre.const 1000 : ui32
  %inside = vyre.lt %i, %n : ui32
  %ident = vyre.const 0 : ui32
  %vp = vyre.select %inside, %v, %ident : ui32
  vyre.store @tile_level0[%l] = %vp : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
  vyre.loop @level = %zero to %levels {
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_level0[%l] : ui32
      %b = vyre.load @tile_level0[%j] : ui32
      %s = vyre.sub %a, %b : ui32
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
vyre.program @level1 workgroup_size [64, 1, 1] {
  vyre.buffer @r0 binding 0 read_only : ui32[16]
  vyre.buffer @out binding 1 write_only : ui32[1]
  vyre.buffer @tile_level1 workgroup : ui32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @r0[%i] : ui32
  %n = vyre.const 16 : ui32
  %inside = vyre.lt %i, %n : ui32
  %ident = vyre.const 0 : ui32
  %vp = vyre.select %inside, %v, %ident : ui32
  vyre.store @tile_level1[%l] = %vp : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
  vyre.loop @level = %zero to %levels {
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_level1[%l] : ui32
      %b = vyre.load @tile_level1[%j] : ui32
      %s = vyre.sub %a, %b : ui32
      vyre.store @tile_level1[%l] = %s : ui32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile_level1[%zero] : ui32
    vyre.store @out[%w] = %total : ui32
  }
}

// -----

// The partials are marked output: the caller reads them back, so their
// number and values must stay as they are.
// CHECK:      vyre.program @level0 workgroup_size [64, 1, 1] {
// CHECK-NOT:  __vyre_coarsen
// REMARK: vyre-coarsen-reductions.mlir:[[# @LINE + 1]]:1: remark: not coarsened: its partials are observable: @r0 is marked output
vyre.program @level0 workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : si32[1000]
  vyre.buffer @r0 binding 1 write_only output : si32[16]
  vyre.buffer @tile_level0 workgroup : si32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : si32
  %n = vyre.const 1000 : ui32
  %inside = vyre.lt %i, %n : ui32
  %ident = vyre.const -2147483648 : si32
  %vp = vyre.select %inside, %v, %ident : si32
  vyre.store @tile_level0[%l] = %vp : si32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
  vyre.loop @level = %zero to %levels {
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_level0[%l] : si32
      %b = vyre.load @tile_level0[%j] : si32
      %s = vyre.max %a, %b : si32
      vyre.store @tile_level0[%l] = %s : si32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile_level0[%zero] : si32
    vyre.store @r0[%w] = %total : si32
  }
}
vyre.program @level1 workgroup_size [64, 1, 1] {
  vyre.buffer @r0 binding 0 read_only : si32[16]
  vyre.buffer @out binding 1 write_only : si32[1]
  vyre.buffer @tile_level1 workgroup : si32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @r0[%i] : si32
  %n = vyre.const 16 : ui32
  %inside = vyre.lt %i, %n : ui32
  %ident = vyre.const -2147483648 : si32
  %vp = vyre.select %inside, %v, %ident : si32
  vyre.store @tile_level1[%l] = %vp : si32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %levels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
  vyre.loop @level = %zero to %levels {
    %k = vyre.var @level : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_level1[%l] : si32
      %b = vyre.load @tile_level1[%j] : si32
      %s = vyre.max %a, %b : si32
      vyre.store @tile_level1[%l] = %s : si32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile_level1[%zero] : si32
    vyre.store @out[%w] = %total : si32
  }
}

// -----

// A workgroup scan (Hillis-Steele over each 16-block, the block's total to
// sums0): with k = 4 a workgroup covers 4 blocks (7 blocks: 2 workgroups).
// Each invocation loads elements lane, lane + 16, lane + 32, lane + 48 of its
// workgroup (coalesced) into the staging area (slot q + q / 32), scans its 4
// consecutive ones in registers, the invocation totals are scanned in
// segments of 4 invocations (one per block: 2 steps, ping-pong between the two
// halves of a workgroup buffer of their own), each invocation adds the inclusive total of the invocation
// before it (the identity 0 for the first of a segment) to its 4 prefixes, and
// the results go back out the way they came in. The last invocation of a
// segment writes its block's total.
// CHECK:      vyre.program @scan0 workgroup_size [16, 1, 1] grid [2, 1, 1] {
// CHECK:        vyre.buffer @tile_scan0 workgroup : ui32[65]
// CHECK-NEXT:   vyre.buffer @tile_scan0_totals workgroup : ui32[32]
// CHECK-NEXT:   %lane = vyre.local_id x
// CHECK-NEXT:   %[[W:.*]] = vyre.workgroup_id x
// CHECK-NEXT:   %[[TILE:.*]] = vyre.const 64 : ui32
// CHECK-NEXT:   %start = vyre.mul %[[W]], %[[TILE]] : ui32
// CHECK-NEXT:   %[[K:.*]] = vyre.const 4 : ui32
// CHECK-NEXT:   %own = vyre.mul %lane, %[[K]] : ui32
// CHECK-NEXT:   %element = vyre.add %start, %lane : ui32
// CHECK-NEXT:   %[[FIVE:.*]] = vyre.const 5 : ui32
// CHECK-NEXT:   %[[PAD:.*]] = vyre.shr %lane, %[[FIVE]] : ui32
// CHECK-NEXT:   %[[SLOT0:.*]] = vyre.add %lane, %[[PAD]] : ui32
// CHECK:        %[[OWNPAD:.*]] = vyre.shr %own, %[[FIVE]] : ui32
// CHECK-NEXT:   %[[OWN0:.*]] = vyre.add %own, %[[OWNPAD]] : ui32
// CHECK-NEXT:   %[[ONE:.*]] = vyre.const 1 : ui32
// CHECK-NEXT:   %[[OWN1:.*]] = vyre.add %[[OWN0]], %[[ONE]] : ui32
// CHECK:        %base = vyre.add %start, %own : ui32
// CHECK-NEXT:   %v = vyre.load @x[%element] : ui32
// CHECK-NEXT:   vyre.store @tile_scan0[%[[SLOT0]]] = %v : ui32
// CHECK:        %v_3 = vyre.load @x[%{{.*}}] : ui32
// CHECK-NEXT:   vyre.store @tile_scan0[%{{.*}}] = %v_3 : ui32
// CHECK-NEXT:   vyre.barrier
// CHECK-NEXT:   %[[E0:.*]] = vyre.load @tile_scan0[%[[OWN0]]] : ui32
// CHECK-NEXT:   %[[E1:.*]] = vyre.load @tile_scan0[%[[OWN1]]] : ui32
// CHECK-NEXT:   %[[P1:.*]] = vyre.add %[[E0]], %[[E1]] : ui32
// CHECK:        %[[E2:.*]] = vyre.load @tile_scan0[%{{.*}}] : ui32
// CHECK-NEXT:   %[[P2:.*]] = vyre.add %[[P1]], %[[E2]] : ui32
// CHECK:        %[[E3:.*]] = vyre.load @tile_scan0[%{{.*}}] : ui32
// CHECK-NEXT:   %[[P3:.*]] = vyre.add %[[P2]], %[[E3]] : ui32
// CHECK-NEXT:   %position = vyre.bit_and %lane, %{{.*}} : ui32
// CHECK:        vyre.store @tile_scan0_totals[%lane] = %[[P3]] : ui32
// CHECK-NEXT:   vyre.barrier
// CHECK-NEXT:   %[[HAS:.*]] = vyre.ge %position, %{{.*}} : ui32
// CHECK:        %[[BOTH:.*]] = vyre.add %{{.*}}, %{{.*}} : ui32
// CHECK-NEXT:   %[[STEP:.*]] = vyre.select %[[HAS]], %[[BOTH]], %{{.*}} : ui32
// CHECK-NEXT:   vyre.store @tile_scan0_totals[%{{.*}}] = %[[STEP]] : ui32
// CHECK-NEXT:   vyre.barrier
// CHECK:        vyre.barrier
// CHECK-NEXT:   %first = vyre.eq %position, %{{.*}} : ui32
// CHECK:        %exclusive = vyre.load @tile_scan0_totals[%{{.*}}] : ui32
// CHECK-NEXT:   %carried = vyre.select %first, %{{.*}}, %exclusive : ui32
// CHECK-NEXT:   %[[R0:.*]] = vyre.add %carried, %[[E0]] : ui32
// CHECK-NEXT:   %[[R1:.*]] = vyre.add %carried, %[[P1]] : ui32
// CHECK-NEXT:   %[[R2:.*]] = vyre.add %carried, %[[P2]] : ui32
// CHECK-NEXT:   %[[R3:.*]] = vyre.add %carried, %[[P3]] : ui32
// CHECK-NEXT:   vyre.store @tile_scan0[%[[OWN0]]] = %[[R0]] : ui32
// CHECK:        vyre.barrier
// CHECK-NEXT:   %[[OUT0:.*]] = vyre.load @tile_scan0[%[[SLOT0]]] : ui32
// CHECK-NEXT:   vyre.store @local0[%element] = %[[OUT0]] : ui32
// CHECK:        %block = vyre.shr %base, %{{.*}} : ui32
// CHECK-NEXT:   %[[LAST:.*]] = vyre.eq %position, %{{.*}} : ui32
// CHECK-NEXT:   vyre.if %[[LAST]] {
// CHECK-NEXT:     vyre.store @sums0[%block] = %[[R3]] : ui32
// CHECK-NEXT:   }
// CHECK-NEXT: }

// With subgroups=true the same staging and serial prefixes, then the segmented
// scan of the invocation totals on subgroup shuffles: a Hillis-Steele scan within
// pieces of P = min(subgroup size, 4) invocations (P = 1 for a subgroup size that
// is no power of two), the inclusive values stored in a workgroup buffer of their
// own (16 slots, not two halves of 16), one barrier, then the totals of the pieces before
// this one in the segment (a loop of position / P trips) and the inclusive value
// of the lane before, within the piece.
// SUBGROUPS:      vyre.program @scan0 workgroup_size [16, 1, 1] grid [2, 1, 1] {
// SUBGROUPS:        vyre.buffer @tile_scan0 workgroup : ui32[65]
// SUBGROUPS-NEXT:   vyre.buffer @tile_scan0_totals workgroup : ui32[16]
// SUBGROUPS:        vyre.barrier
// SUBGROUPS-NEXT:   %{{.*}} = vyre.load @tile_scan0[%{{.*}}] : ui32
// SUBGROUPS-COUNT-2:  vyre.add %{{.*}}, %{{.*}} : ui32
// SUBGROUPS:        %[[P3:.*]] = vyre.add %{{.*}}, %{{.*}} : ui32
// SUBGROUPS-NEXT:   %position = vyre.bit_and %lane, %{{.*}} : ui32
// SUBGROUPS-NEXT:   %[[SIZE:.*]] = vyre.subgroup_size
// SUBGROUPS-NEXT:   %[[SUB:.*]] = vyre.subgroup_local_id
// SUBGROUPS:        %[[POW2:.*]] = vyre.eq %{{.*}}, %{{.*}} : ui32
// SUBGROUPS-NEXT:   %[[CAP:.*]] = vyre.min %[[SIZE]], %{{.*}} : ui32
// SUBGROUPS-NEXT:   %piece = vyre.select %[[POW2]], %[[CAP]], %{{.*}} : ui32
// SUBGROUPS-NEXT:   %[[PM1:.*]] = vyre.sub %piece, %{{.*}} : ui32
// SUBGROUPS-NEXT:   %in_piece = vyre.bit_and %[[SUB]], %[[PM1]] : ui32
// SUBGROUPS-NEXT:   %[[FROM1:.*]] = vyre.sub %[[SUB]], %{{.*}} : ui32
// SUBGROUPS-NEXT:   %[[UP1:.*]] = vyre.subgroup_shuffle %[[P3]], %[[FROM1]] : ui32
// SUBGROUPS-NEXT:   %[[HAS1:.*]] = vyre.ge %in_piece, %{{.*}} : ui32
// SUBGROUPS-NEXT:   %[[SUM1:.*]] = vyre.add %[[UP1]], %[[P3]] : ui32
// SUBGROUPS-NEXT:   %[[S1:.*]] = vyre.select %[[HAS1]], %[[SUM1]], %[[P3]] : ui32
// SUBGROUPS-NEXT:   %[[FROM2:.*]] = vyre.sub %[[SUB]], %{{.*}} : ui32
// SUBGROUPS-NEXT:   %[[UP2:.*]] = vyre.subgroup_shuffle %[[S1]], %[[FROM2]] : ui32
// SUBGROUPS-NEXT:   %[[HAS2:.*]] = vyre.ge %in_piece, %{{.*}} : ui32
// SUBGROUPS-NEXT:   %[[SUM2:.*]] = vyre.add %[[UP2]], %[[S1]] : ui32
// SUBGROUPS-NEXT:   %[[S2:.*]] = vyre.select %[[HAS2]], %[[SUM2]], %[[S1]] : ui32
// SUBGROUPS-NEXT:   vyre.store @tile_scan0_totals[%lane] = %[[S2]] : ui32
// SUBGROUPS-NEXT:   vyre.barrier
// SUBGROUPS-NEXT:   vyre.let @__vyre_coarsen_acc = %{{.*}} : ui32
// SUBGROUPS-NEXT:   %[[BEFORE:.*]] = vyre.div %position, %piece : ui32
// SUBGROUPS-NEXT:   vyre.loop @__vyre_coarsen_k = %{{.*}} to %[[BEFORE]] {
// SUBGROUPS:          %[[PIECE_TOTAL:.*]] = vyre.load @tile_scan0_totals[%{{.*}}] : ui32
// SUBGROUPS-NEXT:     %[[ACC:.*]] = vyre.var @__vyre_coarsen_acc : ui32
// SUBGROUPS-NEXT:     %[[MORE:.*]] = vyre.add %[[ACC]], %[[PIECE_TOTAL]] : ui32
// SUBGROUPS-NEXT:     vyre.assign @__vyre_coarsen_acc = %[[MORE]] : ui32
// SUBGROUPS-NEXT:   }
// SUBGROUPS-NEXT:   %[[PIECES:.*]] = vyre.var @__vyre_coarsen_acc : ui32
// SUBGROUPS-NEXT:   %[[FROM:.*]] = vyre.sub %[[SUB]], %{{.*}} : ui32
// SUBGROUPS-NEXT:   %[[PREV:.*]] = vyre.subgroup_shuffle %[[S2]], %[[FROM]] : ui32
// SUBGROUPS-NEXT:   %[[LEADS:.*]] = vyre.eq %in_piece, %{{.*}} : ui32
// SUBGROUPS-NEXT:   %[[WITHIN:.*]] = vyre.select %[[LEADS]], %{{.*}}, %[[PREV]] : ui32
// SUBGROUPS-NEXT:   %carried = vyre.add %[[PIECES]], %[[WITHIN]] : ui32
// SUBGROUPS-NOT:    vyre.barrier
// SUBGROUPS:        vyre.store @tile_scan0[%{{.*}}] = %{{.*}} : ui32
// SUBGROUPS:        vyre.barrier
// SUBGROUPS-NOT:    vyre.barrier
// SUBGROUPS:        vyre.store @sums0[%block] = %{{.*}} : ui32
vyre.program @scan0 workgroup_size [16, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[100]
  vyre.buffer @local0 binding 1 write_only : ui32[100]
  vyre.buffer @sums0 binding 2 write_only : ui32[7]
  vyre.buffer @tile_scan0 workgroup : ui32[16]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @tile_scan0[%l] = %v : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %steps = vyre.const 4 : ui32
  %one = vyre.const 1 : ui32
  vyre.loop @step = %zero to %steps {
    %k = vyre.var @step : ui32
    %off = vyre.shl %one, %k : ui32
    %has = vyre.ge %l, %off : ui32
    %j = vyre.sub %l, %off : ui32
    %cur = vyre.load @tile_scan0[%l] : ui32
    %prev = vyre.load @tile_scan0[%j] : ui32
    %add = vyre.select %has, %prev, %zero : ui32
    %s = vyre.add %cur, %add : ui32
    vyre.barrier
    vyre.store @tile_scan0[%l] = %s : ui32
    vyre.barrier
  }
  %r = vyre.load @tile_scan0[%l] : ui32
  vyre.store @local0[%i] = %r : ui32
  %lastlane = vyre.const 15 : ui32
  %islast = vyre.eq %l, %lastlane : ui32
  vyre.if %islast {
    vyre.store @sums0[%w] = %r : ui32
  }
}

// -----

// Blocks of 32 (a multiple of 32, k = 4 dividing 32): the staging area is
// swizzled instead of padded, element q at slot q ^ ((q >> 5) & 3). It has
// exactly 4 x 32 slots, every one stored by the coalesced loads before the first
// barrier (so lowering need not zero it), and an invocation's 4 consecutive
// elements 4 l ... 4 l + 3 share one swizzle.
// CHECK:      vyre.program @scan0 workgroup_size [32, 1, 1] grid [2, 1, 1] {
// CHECK:        vyre.buffer @tile_scan0 workgroup : ui32[128]
// CHECK-NEXT:   vyre.buffer @tile_scan0_totals workgroup : ui32[64]
// CHECK:        %[[FIVE:.*]] = vyre.const 5 : ui32
// CHECK-NEXT:   %[[HIGH0:.*]] = vyre.shr %lane, %[[FIVE]] : ui32
// CHECK-NEXT:   %[[THREE:.*]] = vyre.const 3 : ui32
// CHECK-NEXT:   %[[FLIP0:.*]] = vyre.bit_and %[[HIGH0]], %[[THREE]] : ui32
// CHECK-NEXT:   %[[SLOT0:.*]] = vyre.bit_xor %lane, %[[FLIP0]] : ui32
// CHECK:        %[[OWNHIGH:.*]] = vyre.shr %own, %[[FIVE]] : ui32
// CHECK-NEXT:   %[[SWIZZLE:.*]] = vyre.bit_and %[[OWNHIGH]], %[[THREE]] : ui32
// CHECK-NEXT:   %[[OWN0:.*]] = vyre.bit_xor %own, %[[SWIZZLE]] : ui32
// CHECK:        %[[OWNPLUS1:.*]] = vyre.add %own, %{{.*}} : ui32
// CHECK-NEXT:   %[[OWN1:.*]] = vyre.bit_xor %[[OWNPLUS1]], %[[SWIZZLE]] : ui32
// CHECK:        %v = vyre.load @x[%element] : ui32
// CHECK-NEXT:   vyre.store @tile_scan0[%[[SLOT0]]] = %v : ui32
// CHECK:        vyre.barrier
// CHECK-NEXT:   %{{.*}} = vyre.load @tile_scan0[%[[OWN0]]] : ui32
// CHECK-NEXT:   %{{.*}} = vyre.load @tile_scan0[%[[OWN1]]] : ui32
vyre.program @scan0 workgroup_size [32, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[200]
  vyre.buffer @local0 binding 1 write_only : ui32[200]
  vyre.buffer @sums0 binding 2 write_only : ui32[7]
  vyre.buffer @tile_scan0 workgroup : ui32[32]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @tile_scan0[%l] = %v : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %steps = vyre.const 5 : ui32
  %one = vyre.const 1 : ui32
  vyre.loop @step = %zero to %steps {
    %k = vyre.var @step : ui32
    %off = vyre.shl %one, %k : ui32
    %has = vyre.ge %l, %off : ui32
    %j = vyre.sub %l, %off : ui32
    %cur = vyre.load @tile_scan0[%l] : ui32
    %prev = vyre.load @tile_scan0[%j] : ui32
    %add = vyre.select %has, %prev, %zero : ui32
    %s = vyre.add %cur, %add : ui32
    vyre.barrier
    vyre.store @tile_scan0[%l] = %s : ui32
    vyre.barrier
  }
  %r = vyre.load @tile_scan0[%l] : ui32
  vyre.store @local0[%i] = %r : ui32
  %lastlane = vyre.const 31 : ui32
  %islast = vyre.eq %l, %lastlane : ui32
  vyre.if %islast {
    vyre.store @sums0[%w] = %r : ui32
  }
}

// -----

// A float sum scan without permission to reassociate: left as it is (the
// coarsened form adds each element to a different partial sum first, which
// rounds differently). The next program, which adds the scanned block totals
// back, is neither a tree nor a scan: untouched.
// CHECK:      vyre.program @scan0 workgroup_size [16, 1, 1] {
// CHECK-NEXT:   vyre.buffer @x binding 0 read_only : f32[100]
// CHECK-NOT:    grid
// CHECK:        vyre.loop @step
// CHECK:      vyre.program @add0 workgroup_size [16, 1, 1] {
// CHECK-NEXT:   vyre.buffer @local0 binding 0 read_only : f32[100]
// CHECK-NEXT:   vyre.buffer @carried binding 1 read_only : f32[7]
// CHECK-NEXT:   vyre.buffer @out binding 2 write_only : f32[100]
// CHECK-NEXT:   %i = vyre.invocation_id x
// CHECK-NEXT:   %four = vyre.const 4 : ui32
// CHECK-NEXT:   %block = vyre.shr %i, %four : ui32
// REMARK: vyre-coarsen-reductions.mlir:[[# @LINE + 1]]:1: remark: not coarsened: float 'add' rounds differently when regrouped; allow it with reassociate-floats=true or the program attribute {reassociate}
vyre.program @scan0 workgroup_size [16, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[100]
  vyre.buffer @local0 binding 1 write_only : f32[100]
  vyre.buffer @sums0 binding 2 write_only : f32[7]
  vyre.buffer @tile_scan0 workgroup : f32[16]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : f32
  vyre.store @tile_scan0[%l] = %v : f32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %fzero = vyre.const 0.0 : f32
  %steps = vyre.const 4 : ui32
  %one = vyre.const 1 : ui32
  vyre.loop @step = %zero to %steps {
    %k = vyre.var @step : ui32
    %off = vyre.shl %one, %k : ui32
    %has = vyre.ge %l, %off : ui32
    %j = vyre.sub %l, %off : ui32
    %cur = vyre.load @tile_scan0[%l] : f32
    %prev = vyre.load @tile_scan0[%j] : f32
    %add = vyre.select %has, %prev, %fzero : f32
    %s = vyre.add %cur, %add : f32
    vyre.barrier
    vyre.store @tile_scan0[%l] = %s : f32
    vyre.barrier
  }
  %r = vyre.load @tile_scan0[%l] : f32
  vyre.store @local0[%i] = %r : f32
  %lastlane = vyre.const 15 : ui32
  %islast = vyre.eq %l, %lastlane : ui32
  vyre.if %islast {
    vyre.store @sums0[%w] = %r : f32
  }
}
// REMARK: vyre-coarsen-reductions.mlir:[[# @LINE + 1]]:1: remark: not coarsened: neither a workgroup tree reduction nor a workgroup scan: its first store writes @out, not a workgroup buffer
vyre.program @add0 workgroup_size [16, 1, 1] {
  vyre.buffer @local0 binding 0 read_only : f32[100]
  vyre.buffer @carried binding 1 read_only : f32[7]
  vyre.buffer @out binding 2 write_only : f32[100]
  %i = vyre.invocation_id x
  %four = vyre.const 4 : ui32
  %block = vyre.shr %i, %four : ui32
  %zero = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %fzero = vyre.const 0.0 : f32
  %has = vyre.ne %block, %zero : ui32
  %b = vyre.sub %block, %one : ui32
  %c = vyre.load @carried[%b] : f32
  %add = vyre.select %has, %c, %fzero : f32
  %v = vyre.load @local0[%i] : f32
  %s = vyre.add %v, %add : f32
  vyre.store @out[%i] = %s : f32
}

// -----

// Reduce-then-scan: a ui32 sum scan of 100 elements in 16-blocks whose block
// scans @local0 only the add-back reads. The scan level, coarsened (k = 4, 2
// workgroups), reads x and stores only the block totals: no @local0; invocation
// p of a block's segment combines its elements p, p + 4, p + 8, p + 12 (no
// staging: the tile holds only the two halves of the totals' scan). The
// add-back becomes the same coarsened block scan of @x, each element combined
// with carried[block - 1] (the identity for block 0; loaded before the leaves, so
// that its latency overlaps theirs), stored into @out; it declares x, carried
// and out (bindings 0 ... 2), and @local0 is gone.
// CHECK:      vyre.program @scan0 workgroup_size [16, 1, 1] grid [2, 1, 1] {
// CHECK-NEXT:   vyre.buffer @x binding 0 read_only : ui32[100]
// CHECK-NEXT:   vyre.buffer @sums0 binding 2 write_only : ui32[7]
// CHECK-NEXT:   vyre.buffer @tile_scan0 workgroup : ui32[32]
// CHECK-NOT:    local0
// CHECK:        %position = vyre.bit_and %lane, %[[THREE:.*]] : ui32
// CHECK-NEXT:   %[[PK:.*]] = vyre.mul %position, %[[THREE]] : ui32
// CHECK-NEXT:   %lead = vyre.sub %base, %[[PK]] : ui32
// CHECK:        %v = vyre.load @x[%lead] : ui32
// CHECK-NOT:    local0
// CHECK:          vyre.store @sums0[%block] = %{{.*}} : ui32
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-NEXT: vyre.program @add0 workgroup_size [16, 1, 1] grid [2, 1, 1] {
// CHECK-NEXT:   vyre.buffer @x binding 0 read_only : ui32[100]
// CHECK-NEXT:   vyre.buffer @carried binding 1 read_only : ui32[7]
// CHECK-NEXT:   vyre.buffer @out binding 2 write_only : ui32[100]
// CHECK-NEXT:   vyre.buffer @tile_scan0 workgroup : ui32[65]
// CHECK-NEXT:   vyre.buffer @tile_scan0_totals workgroup : ui32[32]
// CHECK-NOT:    local0
// CHECK:        %base = vyre.add %start, %own : ui32
// CHECK-NEXT:   %block = vyre.shr %base, %{{.*}} : ui32
// CHECK-NEXT:   %[[ZERO:.*]] = vyre.const 0 : ui32
// CHECK-NEXT:   %later = vyre.ne %block, %[[ZERO]] : ui32
// CHECK-NEXT:   %[[B:.*]] = vyre.sub %block, %{{.*}} : ui32
// CHECK-NEXT:   %prefix = vyre.load @carried[%[[B]]] : ui32
// CHECK-NEXT:   %v = vyre.load @x[%element] : ui32
// CHECK:        %carried = vyre.select %first, %{{.*}}, %exclusive : ui32
// CHECK-NEXT:   %[[R0:.*]] = vyre.add %carried, %{{.*}} : ui32
// CHECK-COUNT-3: vyre.add %carried, %{{.*}} : ui32
// CHECK-NEXT:   %[[P:.*]] = vyre.select %later, %prefix, %[[ZERO]] : ui32
// CHECK-NEXT:   %[[S0:.*]] = vyre.add %[[R0]], %[[P]] : ui32
// CHECK-COUNT-3: vyre.add %{{.*}}, %[[P]] : ui32
// CHECK:        vyre.store @tile_scan0[%{{.*}}] = %[[S0]] : ui32
// CHECK:        vyre.barrier
// CHECK-COUNT-4: vyre.store @out[%{{.*}}] = %{{.*}} : ui32
// CHECK-NEXT: }
vyre.program @scan0 workgroup_size [16, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[100]
  vyre.buffer @local0 binding 1 write_only : ui32[100]
  vyre.buffer @sums0 binding 2 write_only : ui32[7]
  vyre.buffer @tile_scan0 workgroup : ui32[16]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @tile_scan0[%l] = %v : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %steps = vyre.const 4 : ui32
  %one = vyre.const 1 : ui32
  vyre.loop @step = %zero to %steps {
    %k = vyre.var @step : ui32
    %off = vyre.shl %one, %k : ui32
    %has = vyre.ge %l, %off : ui32
    %j = vyre.sub %l, %off : ui32
    %cur = vyre.load @tile_scan0[%l] : ui32
    %prev = vyre.load @tile_scan0[%j] : ui32
    %add = vyre.select %has, %prev, %zero : ui32
    %s = vyre.add %cur, %add : ui32
    vyre.barrier
    vyre.store @tile_scan0[%l] = %s : ui32
    vyre.barrier
  }
  %r = vyre.load @tile_scan0[%l] : ui32
  vyre.store @local0[%i] = %r : ui32
  %lastlane = vyre.const 15 : ui32
  %islast = vyre.eq %l, %lastlane : ui32
  vyre.if %islast {
    vyre.store @sums0[%w] = %r : ui32
  }
}
vyre.program @add0 workgroup_size [16, 1, 1] {
  vyre.buffer @local0 binding 0 read_only : ui32[100]
  vyre.buffer @carried binding 1 read_only : ui32[7]
  vyre.buffer @out binding 2 write_only : ui32[100]
  %i = vyre.invocation_id x
  %four = vyre.const 4 : ui32
  %block = vyre.shr %i, %four : ui32
  %zero = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %has = vyre.ne %block, %zero : ui32
  %b = vyre.sub %block, %one : ui32
  %c = vyre.load @carried[%b] : ui32
  %add = vyre.select %has, %c, %zero : ui32
  %v = vyre.load @local0[%i] : ui32
  %s = vyre.add %v, %add : ui32
  vyre.store @out[%i] = %s : ui32
}

// -----

// The block scans are an output (marked so): the pair stays a scan and an
// add-back; the scan level is still coarsened on its own.
// CHECK:      vyre.program @scan0 workgroup_size [16, 1, 1] grid [2, 1, 1] {
// CHECK:        vyre.store @local0[%{{.*}}] = %{{.*}} : ui32
// CHECK:      vyre.program @add0 workgroup_size [16, 1, 1] {
// CHECK-NEXT:   vyre.buffer @local0 binding 0 read_only : ui32[100]
// REMARK: vyre-coarsen-reductions.mlir:[[# @LINE + 1]]:1: remark: scan not split into reduce-then-scan: @local0 is marked output
vyre.program @scan0 workgroup_size [16, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[100]
  vyre.buffer @local0 binding 1 write_only output : ui32[100]
  vyre.buffer @sums0 binding 2 write_only : ui32[7]
  vyre.buffer @tile_scan0 workgroup : ui32[16]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @tile_scan0[%l] = %v : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %steps = vyre.const 4 : ui32
  %one = vyre.const 1 : ui32
  vyre.loop @step = %zero to %steps {
    %k = vyre.var @step : ui32
    %off = vyre.shl %one, %k : ui32
    %has = vyre.ge %l, %off : ui32
    %j = vyre.sub %l, %off : ui32
    %cur = vyre.load @tile_scan0[%l] : ui32
    %prev = vyre.load @tile_scan0[%j] : ui32
    %add = vyre.select %has, %prev, %zero : ui32
    %s = vyre.add %cur, %add : ui32
    vyre.barrier
    vyre.store @tile_scan0[%l] = %s : ui32
    vyre.barrier
  }
  %r = vyre.load @tile_scan0[%l] : ui32
  vyre.store @local0[%i] = %r : ui32
  %lastlane = vyre.const 15 : ui32
  %islast = vyre.eq %l, %lastlane : ui32
  vyre.if %islast {
    vyre.store @sums0[%w] = %r : ui32
  }
}
vyre.program @add0 workgroup_size [16, 1, 1] {
  vyre.buffer @local0 binding 0 read_only : ui32[100]
  vyre.buffer @carried binding 1 read_only : ui32[7]
  vyre.buffer @out binding 2 write_only : ui32[100]
  %i = vyre.invocation_id x
  %four = vyre.const 4 : ui32
  %block = vyre.shr %i, %four : ui32
  %zero = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %has = vyre.ne %block, %zero : ui32
  %b = vyre.sub %block, %one : ui32
  %c = vyre.load @carried[%b] : ui32
  %add = vyre.select %has, %c, %zero : ui32
  %v = vyre.load @local0[%i] : ui32
  %s = vyre.add %v, %add : ui32
  vyre.store @out[%i] = %s : ui32
}

// -----

// inputs-only: before fusion, only the levels whose leaf reads module inputs.
// @xlevel0 reads @x, which no earlier program writes: coarsened (16 workgroups
// become 4). @ylevel0 reads @y, which @square writes: left for the run after
// vyre-fuse, which first fuses @square into it; the second levels read the
// partials the first ones write. Coarsened first, @xlevel0 (explicit grid) is
// not fused with @ylevel1 beside it. Fused first instead, @ylevel1 and @xlevel0
// become one program that is no tree level, and neither first level is
// coarsened (@ylevel0's partials are then read by a program that is no level).
// INPUTS:      vyre.program @square workgroup_size [64, 1, 1] {
// INPUTS:      vyre.program @ylevel0 workgroup_size [64, 1, 1] {
// INPUTS:      vyre.program @ylevel1 workgroup_size [64, 1, 1] {
// INPUTS:      vyre.program @xlevel0 workgroup_size [64, 1, 1] grid [4, 1, 1] {
// INPUTS:        vyre.loop @__vyre_coarsen_k
// INPUTS:      vyre.program @xlevel1 workgroup_size [64, 1, 1] {
// INPUTS-NOT:  __vyre_coarsen_k
// TWO:         vyre.program @fused_square_ylevel0 workgroup_size [64, 1, 1] grid [4, 1, 1] {
// TWO:           %[[A:.*]] = vyre.load @x[%{{.*}}] : ui32
// TWO-NEXT:      vyre.mul %[[A]], %[[A]] : ui32
// TWO:           vyre.loop @__vyre_coarsen_k
// TWO:         vyre.program @ylevel1 workgroup_size [64, 1, 1] {
// TWO:         vyre.program @xlevel0 workgroup_size [64, 1, 1] grid [4, 1, 1] {
// TWO:         vyre.program @xlevel1 workgroup_size [64, 1, 1] {
// FUSEFIRST:   vyre.program @fused_square_ylevel0 workgroup_size [64, 1, 1] {
// FUSEFIRST:   vyre.program @fused_ylevel1_xlevel0 workgroup_size [64, 1, 1] {
// FUSEFIRST:   vyre.program @xlevel1 workgroup_size [64, 1, 1] {
// FUSEFIRST-NOT: __vyre_coarsen_k
// CHECK:       vyre.program @square workgroup_size [64, 1, 1] {
// CHECK:       vyre.program @ylevel0 workgroup_size [64, 1, 1] grid [4, 1, 1] {
// CHECK:       vyre.program @xlevel0 workgroup_size [64, 1, 1] grid [4, 1, 1] {
vyre.program @square workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[1024]
  vyre.buffer @y binding 1 write_only : ui32[1024]
  %i = vyre.invocation_id x
  %a = vyre.load @x[%i] : ui32
  %b = vyre.mul %a, %a : ui32
  vyre.store @y[%i] = %b : ui32
}
// INREMARK: vyre-coarsen-reductions.mlir:[[# @LINE + 1]]:1: remark: not coarsened: left for after fusion (inputs-only): its leaf reads @y, which @square writes before it
vyre.program @ylevel0 workgroup_size [64, 1, 1] {
  vyre.buffer @y binding 0 read_only : ui32[1024]
  vyre.buffer @yr0 binding 1 write_only : ui32[16]
  vyre.buffer @tile_ylevel0 workgroup : ui32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @y[%i] : ui32
  %n = vyre.const 1024 : ui32
  %inside = vyre.lt %i, %n : ui32
  %ident = vyre.const 0 : ui32
  %vp = vyre.select %inside, %v, %ident : ui32
  vyre.store @tile_ylevel0[%l] = %vp : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %ylevels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
  vyre.loop @ylevel = %zero to %ylevels {
    %k = vyre.var @ylevel : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_ylevel0[%l] : ui32
      %b = vyre.load @tile_ylevel0[%j] : ui32
      %s = vyre.add %a, %b : ui32
      vyre.store @tile_ylevel0[%l] = %s : ui32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile_ylevel0[%zero] : ui32
    vyre.store @yr0[%w] = %total : ui32
  }
}
// INREMARK: vyre-coarsen-reductions.mlir:[[# @LINE + 1]]:1: remark: not coarsened: left for after fusion (inputs-only): its leaf reads @yr0, which @ylevel0 writes before it
vyre.program @ylevel1 workgroup_size [64, 1, 1] {
  vyre.buffer @yr0 binding 0 read_only : ui32[16]
  vyre.buffer @yout binding 1 write_only : ui32[1]
  vyre.buffer @tile_ylevel1 workgroup : ui32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @yr0[%i] : ui32
  %n = vyre.const 16 : ui32
  %inside = vyre.lt %i, %n : ui32
  %ident = vyre.const 0 : ui32
  %vp = vyre.select %inside, %v, %ident : ui32
  vyre.store @tile_ylevel1[%l] = %vp : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %ylevels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
  vyre.loop @ylevel = %zero to %ylevels {
    %k = vyre.var @ylevel : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_ylevel1[%l] : ui32
      %b = vyre.load @tile_ylevel1[%j] : ui32
      %s = vyre.add %a, %b : ui32
      vyre.store @tile_ylevel1[%l] = %s : ui32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile_ylevel1[%zero] : ui32
    vyre.store @yout[%w] = %total : ui32
  }
}
vyre.program @xlevel0 workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[1024]
  vyre.buffer @xr0 binding 1 write_only : ui32[16]
  vyre.buffer @tile_xlevel0 workgroup : ui32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : ui32
  %n = vyre.const 1024 : ui32
  %inside = vyre.lt %i, %n : ui32
  %ident = vyre.const 0 : ui32
  %vp = vyre.select %inside, %v, %ident : ui32
  vyre.store @tile_xlevel0[%l] = %vp : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %xlevels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
  vyre.loop @xlevel = %zero to %xlevels {
    %k = vyre.var @xlevel : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_xlevel0[%l] : ui32
      %b = vyre.load @tile_xlevel0[%j] : ui32
      %s = vyre.add %a, %b : ui32
      vyre.store @tile_xlevel0[%l] = %s : ui32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile_xlevel0[%zero] : ui32
    vyre.store @xr0[%w] = %total : ui32
  }
}
// INREMARK: vyre-coarsen-reductions.mlir:[[# @LINE + 1]]:1: remark: not coarsened: left for after fusion (inputs-only): its leaf reads @xr0, which @xlevel0 writes before it
vyre.program @xlevel1 workgroup_size [64, 1, 1] {
  vyre.buffer @xr0 binding 0 read_only : ui32[16]
  vyre.buffer @xout binding 1 write_only : ui32[1]
  vyre.buffer @tile_xlevel1 workgroup : ui32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @xr0[%i] : ui32
  %n = vyre.const 16 : ui32
  %inside = vyre.lt %i, %n : ui32
  %ident = vyre.const 0 : ui32
  %vp = vyre.select %inside, %v, %ident : ui32
  vyre.store @tile_xlevel1[%l] = %vp : ui32
  vyre.barrier
  %zero = vyre.const 0 : ui32
  %xlevels = vyre.const 6 : ui32
  %half = vyre.const 32 : ui32
  vyre.loop @xlevel = %zero to %xlevels {
    %k = vyre.var @xlevel : ui32
    %stride = vyre.shr %half, %k : ui32
    %active = vyre.lt %l, %stride : ui32
    vyre.if %active {
      %j = vyre.add %l, %stride : ui32
      %a = vyre.load @tile_xlevel1[%l] : ui32
      %b = vyre.load @tile_xlevel1[%j] : ui32
      %s = vyre.add %a, %b : ui32
      vyre.store @tile_xlevel1[%l] = %s : ui32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile_xlevel1[%zero] : ui32
    vyre.store @xout[%w] = %total : ui32
  }
}
