// RUN: vyre-opt %s --split-input-file -p 'vyre-coarsen-reductions{k=4}' | filecheck %s
// RUN: xdsl-opt %s --split-input-file -p 'vyre-coarsen-reductions{k=4}' | filecheck %s
// RUN: vyre-opt %s --split-input-file -p 'vyre-coarsen-reductions{k=4 remarks=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK

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
