// RUN: vyre-opt %s -t wgsl | filecheck %s
// Barriers and workgroup memory: a barrier orders storage memory
// (`storageBarrier()`) only when invocations can meet in a storage buffer
// (one written by one op and accessed by another, or written in a loop);
// workgroup memory is zeroed in the prologue unless each invocation stores
// its own element first.

// The textbook tree: the input is only read, the output written once, the
// tile stored at local_id before anything reads it.
vyre.program @tree workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[4096]
  vyre.buffer @partial binding 1 write_only : f32[64]
  vyre.buffer @tile workgroup : f32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %w = vyre.workgroup_id x
  %v = vyre.load @x[%i] : f32
  vyre.store @tile[%l] = %v : f32
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
      %a = vyre.load @tile[%l] : f32
      %b = vyre.load @tile[%j] : f32
      %s = vyre.add %a, %b : f32
      vyre.store @tile[%l] = %s : f32
    }
    vyre.barrier
  }
  %first = vyre.eq %l, %zero : ui32
  vyre.if %first {
    %total = vyre.load @tile[%zero] : f32
    vyre.store @partial[%w] = %total : f32
  }
}

// CHECK:      // vyre kernel @tree id
// CHECK-NOT:  vyre_z
// CHECK-NOT:  storageBarrier
// CHECK:        if (v_l < 64u) {
// CHECK-NEXT:     w_tile[min(v_l, 64u - 1u)] = v_v;
// CHECK-NEXT:   }
// CHECK-NEXT:   workgroupBarrier();
// CHECK:          workgroupBarrier();
// CHECK-NEXT:   }
// CHECK-NOT:  storageBarrier
// CHECK:      // -----

// A storage buffer written by one invocation and read by another after the
// barrier: the barrier orders storage memory too.
vyre.program @exchange workgroup_size [64, 1, 1] {
  vyre.buffer @buf binding 0 read_write : ui32[64]
  vyre.buffer @out binding 1 write_only : ui32[64]
  %l = vyre.local_id x
  vyre.store @buf[%l] = %l : ui32
  vyre.barrier
  %one = vyre.const 1 : ui32
  %n = vyre.add %l, %one : ui32
  %r = vyre.load @buf[%n] : ui32
  vyre.store @out[%l] = %r : ui32
}

// CHECK:      // vyre kernel @exchange id
// CHECK:        storageBarrier();
// CHECK-NEXT:   workgroupBarrier();
// CHECK:      // -----

// One store site, but inside a loop with a barrier: a later iteration of
// another invocation overwrites after the barrier, so it is ordered too.
// The tile is read before it is written: the prologue zeroes it.
vyre.program @looped workgroup_size [64, 1, 1] {
  vyre.buffer @last binding 0 write_only : ui32[1]
  vyre.buffer @tile workgroup : ui32[64]
  %l = vyre.local_id x
  %zero = vyre.const 0 : ui32
  %four = vyre.const 4 : ui32
  %t = vyre.load @tile[%l] : ui32
  vyre.loop @k = %zero to %four {
    %k = vyre.var @k : ui32
    %mine = vyre.eq %l, %k : ui32
    vyre.if %mine {
      vyre.store @last[%zero] = %t : ui32
    }
    vyre.barrier
  }
}

// CHECK:      // vyre kernel @looped id
// CHECK:        for (var vyre_z: u32 = vyre_local; vyre_z < 64u; vyre_z = vyre_z + 64u) {
// CHECK-NEXT:     w_tile[vyre_z] = 0u;
// CHECK-NEXT:   }
// CHECK-NEXT:   workgroupBarrier();
// CHECK:          storageBarrier();
// CHECK-NEXT:     workgroupBarrier();
// CHECK:      // -----

// The tile is wider than the workgroup: a store at local_id leaves elements
// unwritten, so the prologue still zeroes it.
vyre.program @wide_tile workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[64]
  vyre.buffer @tile workgroup : ui32[128]
  %l = vyre.local_id x
  vyre.store @tile[%l] = %l : ui32
  vyre.barrier
  %sixty4 = vyre.const 64 : ui32
  %j = vyre.add %l, %sixty4 : ui32
  %r = vyre.load @tile[%j] : ui32
  vyre.store @out[%l] = %r : ui32
}

// CHECK:      // vyre kernel @wide_tile id
// CHECK:        for (var vyre_z: u32 = vyre_local; vyre_z < 128u; vyre_z = vyre_z + 64u) {
// CHECK:        workgroupBarrier();
// CHECK-NOT:  storageBarrier
