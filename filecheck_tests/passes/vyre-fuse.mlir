// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "vyre-opt %s --split-input-file -p 'vyre-fuse{force=true}' > %t.fused.mlir" \
// RUN:   --run "vyre-opt %t.fused.mlir --split-input-file > %t.reparsed" \
// RUN:   --run "vyre-opt %s --split-input-file -p 'vyre-fuse{remarks=true}' > %t.cost 2> %t.remarks"
// RUN: filecheck %s < %t.fused.mlir
// RUN: filecheck %s < %t.reparsed
// RUN: filecheck %s --check-prefix=COST < %t.cost
// RUN: filecheck %s --check-prefix=REMARK < %t.remarks

// A chain t1 = x * 3, t2 = t1 + x, out = t2 ^ t1: every load reads what the
// same invocation stored, so no barrier; t1 and t2 are intermediates.
vyre.program @scale workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[256]
  vyre.buffer @t1 binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %three = vyre.const 3 : ui32
  %v = vyre.load @x[%i] : ui32
  %r = vyre.mul %v, %three : ui32
  vyre.store @t1[%i] = %r : ui32
}
vyre.program @plus workgroup_size [64, 1, 1] {
  vyre.buffer @t1 binding 0 read_only : ui32[256]
  vyre.buffer @x binding 1 read_only : ui32[256]
  vyre.buffer @t2 binding 2 write_only : ui32[256]
  %i = vyre.invocation_id x
  %a = vyre.load @t1[%i] : ui32
  %b = vyre.load @x[%i] : ui32
  %s = vyre.add %a, %b : ui32
  vyre.store @t2[%i] = %s : ui32
}
vyre.program @mix workgroup_size [64, 1, 1] {
  vyre.buffer @t2 binding 0 read_only : ui32[256]
  vyre.buffer @t1 binding 1 read_only : ui32[256]
  vyre.buffer @out binding 2 write_only : ui32[256]
  %i = vyre.invocation_id x
  %a = vyre.load @t2[%i] : ui32
  %b = vyre.load @t1[%i] : ui32
  %r = vyre.bit_xor %a, %b : ui32
  vyre.store @out[%i] = %r : ui32
}

// The cost model (plain vyre-fuse) fuses a chain that needs no dispatch split.
// COST-LABEL: vyre.program @fused_scale_plus_mix workgroup_size [64, 1, 1] {
// CHECK-LABEL: vyre.program @fused_scale_plus_mix workgroup_size [64, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_only : ui32[256]
// CHECK-NEXT:    vyre.buffer @out binding 1 write_only : ui32[256]
// CHECK-NEXT:    %i = vyre.invocation_id x
// CHECK-NEXT:    %three = vyre.const 3 : ui32
// CHECK-NEXT:    %v = vyre.load @x[%i] : ui32
// CHECK-NEXT:    %r = vyre.mul %v, %three : ui32
// CHECK-NEXT:    %i_1 = vyre.invocation_id x
// CHECK-NEXT:    %b = vyre.load @x[%i_1] : ui32
// CHECK-NEXT:    %s = vyre.add %r, %b : ui32
// CHECK-NEXT:    %i_2 = vyre.invocation_id x
// CHECK-NEXT:    %r_1 = vyre.bit_xor %s, %r : ui32
// CHECK-NEXT:    vyre.store @out[%i_2] = %r_1 : ui32
// CHECK-NEXT:  }

// -----

// Shifted index: forwarding needs an in-bounds select; t stays an output because it is marked.
vyre.program @shift_store workgroup_size [32, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[64]
  vyre.buffer @t binding 1 write_only output : f32[64]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %v = vyre.load @x[%i] : f32
  vyre.store @t[%j] = %v : f32
}
vyre.program @shift_load workgroup_size [32, 1, 1] {
  vyre.buffer @t binding 0 read_only : f32[64]
  vyre.buffer @out binding 1 write_only : f32[64]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %v = vyre.load @t[%j] : f32
  %d = vyre.add %v, %v : f32
  vyre.store @out[%i] = %d : f32
}

// CHECK-LABEL: vyre.program @fused_shift_store_shift_load workgroup_size [32, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_only : f32[64]
// CHECK-NEXT:    vyre.buffer @t binding 1 read_write output : f32[64]
// CHECK-NEXT:    vyre.buffer @out binding 2 write_only : f32[64]
// CHECK-NEXT:    %i = vyre.invocation_id x
// CHECK-NEXT:    %one = vyre.const 1 : ui32
// CHECK-NEXT:    %j = vyre.add %i, %one : ui32
// CHECK-NEXT:    %v = vyre.load @x[%i] : f32
// CHECK-NEXT:    vyre.store @t[%j] = %v : f32
// CHECK-NEXT:    %0 = vyre.const 64 : ui32
// CHECK-NEXT:    %1 = vyre.lt %j, %0 : ui32
// CHECK-NEXT:    %2 = vyre.const 0.0 : f32
// CHECK-NEXT:    %v_1 = vyre.select %1, %v, %2 : f32
// CHECK-NEXT:    %i_1 = vyre.invocation_id x
// CHECK-NEXT:    %d = vyre.add %v_1, %v_1 : f32
// CHECK-NEXT:    vyre.store @out[%i_1] = %d : f32
// CHECK-NEXT:  }

// -----

// Reading within the workgroup's own span (mirrored per workgroup): a workgroup barrier.
// (The producer's value goes through a named local, so it is not recomputed.)
vyre.program @produce workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[256]
  vyre.buffer @t binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.let @kept = %v : ui32
  %k = vyre.var @kept : ui32
  vyre.store @t[%i] = %k : ui32
}
vyre.program @mirror workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[256]
  vyre.buffer @out binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %w = vyre.workgroup_id x
  %l = vyre.local_id x
  %c64 = vyre.const 64 : ui32
  %c63 = vyre.const 63 : ui32
  %base = vyre.mul %w, %c64 : ui32
  %r = vyre.sub %c63, %l : ui32
  %j = vyre.add %base, %r : ui32
  %v = vyre.load @t[%j] : ui32
  vyre.store @out[%i] = %v : ui32
}

// CHECK-LABEL: vyre.program @fused_produce_mirror workgroup_size [64, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_only : ui32[256]
// CHECK-NEXT:    vyre.buffer @t binding 1 read_write : ui32[256]
// CHECK-NEXT:    vyre.buffer @out binding 2 write_only : ui32[256]
// CHECK-NEXT:    %i = vyre.invocation_id x
// CHECK-NEXT:    %v = vyre.load @x[%i] : ui32
// CHECK-NEXT:    vyre.let @kept = %v : ui32
// CHECK-NEXT:    %k = vyre.var @kept : ui32
// CHECK-NEXT:    vyre.store @t[%i] = %k : ui32
// CHECK-NEXT:    vyre.barrier
// CHECK-NEXT:    %i_1 = vyre.invocation_id x
// CHECK-NEXT:    %w = vyre.workgroup_id x
// CHECK-NEXT:    %l = vyre.local_id x
// CHECK-NEXT:    %c64 = vyre.const 64 : ui32
// CHECK-NEXT:    %c63 = vyre.const 63 : ui32
// CHECK-NEXT:    %base = vyre.mul %w, %c64 : ui32
// CHECK-NEXT:    %r = vyre.sub %c63, %l : ui32
// CHECK-NEXT:    %j = vyre.add %base, %r : ui32
// CHECK-NEXT:    %v_1 = vyre.load @t[%j] : ui32
// CHECK-NEXT:    vyre.store @out[%i_1] = %v_1 : ui32
// CHECK-NEXT:  }

// -----

// A reversed index crosses workgroups: grid_sync (a separate dispatch). (The
// producer's value goes through a named local, so it is not recomputed.)
vyre.program @produce workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[256]
  vyre.buffer @t binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.let @kept = %v : ui32
  %k = vyre.var @kept : ui32
  vyre.store @t[%i] = %k : ui32
}
// REMARK: vyre-fuse.mlir:[[# @LINE + 1]]:1: remark: not fused with @produce before it: a dependence crosses workgroups (a grid_sync split)
vyre.program @reverse workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[256]
  vyre.buffer @out binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %c255 = vyre.const 255 : ui32
  %j = vyre.sub %c255, %i : ui32
  %v = vyre.load @t[%j] : ui32
  vyre.store @out[%i] = %v : ui32
}

// Plain vyre-fuse keeps them apart (the split would give back the launch that
// fusion saves); force=true fuses them with a grid_sync.
// COST-LABEL:  vyre.program @produce workgroup_size [64, 1, 1] {
// COST-NOT:     grid_sync
// COST:         vyre.program @reverse workgroup_size [64, 1, 1] {
// CHECK-LABEL: vyre.program @fused_produce_reverse workgroup_size [64, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_only : ui32[256]
// CHECK-NEXT:    vyre.buffer @t binding 1 read_write : ui32[256]
// CHECK-NEXT:    vyre.buffer @out binding 2 write_only : ui32[256]
// CHECK-NEXT:    %i = vyre.invocation_id x
// CHECK-NEXT:    %v = vyre.load @x[%i] : ui32
// CHECK-NEXT:    vyre.let @kept = %v : ui32
// CHECK-NEXT:    %k = vyre.var @kept : ui32
// CHECK-NEXT:    vyre.store @t[%i] = %k : ui32
// CHECK-NEXT:    vyre.barrier grid_sync
// CHECK-NEXT:    %i_1 = vyre.invocation_id x
// CHECK-NEXT:    %c255 = vyre.const 255 : ui32
// CHECK-NEXT:    %j = vyre.sub %c255, %i_1 : ui32
// CHECK-NEXT:    %v_1 = vyre.load @t[%j] : ui32
// CHECK-NEXT:    vyre.store @out[%i_1] = %v_1 : ui32
// CHECK-NEXT:  }

// -----

// Write-after-write from different invocations also needs ordering.
vyre.program @fill workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[128]
  %i = vyre.invocation_id x
  vyre.store @out[%i] = %i : ui32
}
vyre.program @overwrite workgroup_size [64, 1, 1] {
  vyre.buffer @out binding 0 write_only : ui32[128]
  %i = vyre.invocation_id x
  %c127 = vyre.const 127 : ui32
  %j = vyre.sub %c127, %i : ui32
  %seven = vyre.const 7 : ui32
  vyre.store @out[%j] = %seven : ui32
}

// COST-NOT:     grid_sync
// COST-LABEL:  vyre.program @fill workgroup_size [64, 1, 1] {
// COST-NOT:     grid_sync
// COST:         vyre.program @overwrite workgroup_size [64, 1, 1] {
// COST-NOT:     grid_sync
// COST:         vyre.program @fused_first_second
// CHECK-LABEL: vyre.program @fused_fill_overwrite workgroup_size [64, 1, 1] {
// CHECK-NEXT:    vyre.buffer @out binding 0 write_only : ui32[128]
// CHECK-NEXT:    %i = vyre.invocation_id x
// CHECK-NEXT:    vyre.store @out[%i] = %i : ui32
// CHECK-NEXT:    vyre.barrier grid_sync
// CHECK-NEXT:    %i_1 = vyre.invocation_id x
// CHECK-NEXT:    %c127 = vyre.const 127 : ui32
// CHECK-NEXT:    %j = vyre.sub %c127, %i_1 : ui32
// CHECK-NEXT:    %seven = vyre.const 7 : ui32
// CHECK-NEXT:    vyre.store @out[%j] = %seven : ui32
// CHECK-NEXT:  }

// -----

// @acc is declared in both programs: renamed per arm. @only is declared in one
// and keeps its name; so does the loop variable @k.
vyre.program @first workgroup_size [16, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[16]
  vyre.buffer @a binding 1 write_only : ui32[16]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.let @acc = %v : ui32
  vyre.let @only = %v : ui32
  %z = vyre.const 0 : ui32
  %n = vyre.const 2 : ui32
  vyre.loop @k = %z to %n {
    %k = vyre.var @k : ui32
    %acc = vyre.var @acc : ui32
    %s = vyre.add %acc, %k : ui32
    vyre.assign @acc = %s : ui32
  }
  %r = vyre.var @acc : ui32
  vyre.store @a[%i] = %r : ui32
}
vyre.program @second workgroup_size [16, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[16]
  vyre.buffer @b binding 1 write_only : ui32[16]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.let @acc = %v : ui32
  %r = vyre.var @acc : ui32
  vyre.store @b[%i] = %r : ui32
}

// CHECK-LABEL: vyre.program @fused_first_second workgroup_size [16, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_only : ui32[16]
// CHECK-NEXT:    vyre.buffer @a binding 1 write_only : ui32[16]
// CHECK-NEXT:    vyre.buffer @b binding 2 write_only : ui32[16]
// CHECK-NEXT:    %i = vyre.invocation_id x
// CHECK-NEXT:    %v = vyre.load @x[%i] : ui32
// CHECK-NEXT:    vyre.let @__vyre_fuse_a0_acc = %v : ui32
// CHECK-NEXT:    vyre.let @only = %v : ui32
// CHECK-NEXT:    %z = vyre.const 0 : ui32
// CHECK-NEXT:    %n = vyre.const 2 : ui32
// CHECK-NEXT:    vyre.loop @k = %z to %n {
// CHECK-NEXT:      %k = vyre.var @k : ui32
// CHECK-NEXT:      %acc = vyre.var @__vyre_fuse_a0_acc : ui32
// CHECK-NEXT:      %s = vyre.add %acc, %k : ui32
// CHECK-NEXT:      vyre.assign @__vyre_fuse_a0_acc = %s : ui32
// CHECK-NEXT:    }
// CHECK-NEXT:    %r = vyre.var @__vyre_fuse_a0_acc : ui32
// CHECK-NEXT:    vyre.store @a[%i] = %r : ui32
// CHECK-NEXT:    %i_1 = vyre.invocation_id x
// CHECK-NEXT:    %v_1 = vyre.load @x[%i_1] : ui32
// CHECK-NEXT:    vyre.let @__vyre_fuse_a1_acc = %v_1 : ui32
// CHECK-NEXT:    %r_1 = vyre.var @__vyre_fuse_a1_acc : ui32
// CHECK-NEXT:    vyre.store @b[%i_1] = %r_1 : ui32
// CHECK-NEXT:  }

// -----

// The access lattice: read_only + write_only = read_write, write_only + write_only
// = write_only, uniform + read_only = uniform; output is or-ed; count = max;
// fresh bindings in order of first appearance.
vyre.program @one workgroup_size [8, 1, 1] {
  vyre.buffer @p binding 5 read_only : ui32[8]
  vyre.buffer @q binding 4 write_only : ui32[8]
  vyre.buffer @u binding 3 uniform : ui32[4]
  vyre.buffer @w binding 2 write_only : ui32[8]
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %a = vyre.load @p[%i] : ui32
  %b = vyre.load @u[%z] : ui32
  %s = vyre.add %a, %b : ui32
  vyre.store @q[%i] = %s : ui32
  vyre.store @w[%i] = %s : ui32
}
vyre.program @two workgroup_size [8, 1, 1] {
  vyre.buffer @u binding 0 read_only : ui32[8]
  vyre.buffer @p binding 1 write_only : ui32[16]
  vyre.buffer @w binding 2 write_only output : ui32[8]
  %i = vyre.invocation_id x
  %a = vyre.load @u[%i] : ui32
  vyre.store @p[%i] = %a : ui32
  vyre.store @w[%i] = %a : ui32
}

// CHECK-LABEL: vyre.program @fused_one_two workgroup_size [8, 1, 1] {
// CHECK-NEXT:    vyre.buffer @p binding 0 read_write : ui32[16]
// CHECK-NEXT:    vyre.buffer @q binding 1 write_only : ui32[8]
// CHECK-NEXT:    vyre.buffer @u binding 2 uniform : ui32[8]
// CHECK-NEXT:    vyre.buffer @w binding 3 write_only output : ui32[8]
// CHECK-NEXT:    %0 = vyre.const 1 : ui32
// CHECK-NEXT:    %1 = vyre.workgroup_id x
// CHECK-NEXT:    %2 = vyre.lt %1, %0 : ui32
// CHECK-NEXT:    vyre.if %2 {
// CHECK-NEXT:      %i = vyre.invocation_id x
// CHECK-NEXT:      %z = vyre.const 0 : ui32
// CHECK-NEXT:      %3 = vyre.const 8 : ui32
// CHECK-NEXT:      %4 = vyre.lt %i, %3 : ui32
// CHECK-NEXT:      %5 = vyre.const 4294967295 : ui32
// CHECK-NEXT:      %6 = vyre.select %4, %i, %5 : ui32
// CHECK-NEXT:      %a = vyre.load @p[%6] : ui32
// CHECK-NEXT:      %7 = vyre.const 4 : ui32
// CHECK-NEXT:      %8 = vyre.lt %z, %7 : ui32
// CHECK-NEXT:      %9 = vyre.const 4294967295 : ui32
// CHECK-NEXT:      %10 = vyre.select %8, %z, %9 : ui32
// CHECK-NEXT:      %b = vyre.load @u[%10] : ui32
// CHECK-NEXT:      %s = vyre.add %a, %b : ui32
// CHECK-NEXT:      vyre.store @q[%i] = %s : ui32
// CHECK-NEXT:      vyre.store @w[%i] = %s : ui32
// CHECK-NEXT:    }
// CHECK-NEXT:    %i_1 = vyre.invocation_id x
// CHECK-NEXT:    %a_1 = vyre.load @u[%i_1] : ui32
// CHECK-NEXT:    vyre.store @p[%i_1] = %a_1 : ui32
// CHECK-NEXT:    vyre.store @w[%i_1] = %a_1 : ui32
// CHECK-NEXT:  }

// -----

// Different logical element counts: the smaller arm runs under a guard on
// its own workgroups; it is the producer, so its load is not forwarded (and,
// through a named local, not recomputed).
vyre.program @small workgroup_size [32, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[64]
  vyre.buffer @t binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.let @kept = %v : ui32
  %k = vyre.var @kept : ui32
  vyre.store @t[%i] = %k : ui32
}
vyre.program @large workgroup_size [32, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[64]
  vyre.buffer @out binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @t[%i] : ui32
  vyre.store @out[%i] = %v : ui32
}

// CHECK-LABEL: vyre.program @fused_small_large workgroup_size [32, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_only : ui32[64]
// CHECK-NEXT:    vyre.buffer @t binding 1 read_write : ui32[64]
// CHECK-NEXT:    vyre.buffer @out binding 2 write_only : ui32[256]
// CHECK-NEXT:    %0 = vyre.const 2 : ui32
// CHECK-NEXT:    %1 = vyre.workgroup_id x
// CHECK-NEXT:    %2 = vyre.lt %1, %0 : ui32
// CHECK-NEXT:    vyre.if %2 {
// CHECK-NEXT:      %i = vyre.invocation_id x
// CHECK-NEXT:      %v = vyre.load @x[%i] : ui32
// CHECK-NEXT:      vyre.let @kept = %v : ui32
// CHECK-NEXT:      %k = vyre.var @kept : ui32
// CHECK-NEXT:      vyre.store @t[%i] = %k : ui32
// CHECK-NEXT:    }
// CHECK-NEXT:    %i_1 = vyre.invocation_id x
// CHECK-NEXT:    %v_1 = vyre.load @t[%i_1] : ui32
// CHECK-NEXT:    vyre.store @out[%i_1] = %v_1 : ui32
// CHECK-NEXT:  }

// -----

// A different (1-D) workgroup: the fused workgroup is the max, and the narrower
// arm is guarded by its own invocation range.
vyre.program @narrow workgroup_size [16, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[40]
  vyre.buffer @a binding 1 write_only : ui32[40]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @a[%i] = %v : ui32
}
vyre.program @wide workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[40]
  vyre.buffer @b binding 1 write_only : ui32[40]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @b[%i] = %v : ui32
}

// CHECK-LABEL: vyre.program @fused_narrow_wide workgroup_size [64, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_only : ui32[40]
// CHECK-NEXT:    vyre.buffer @a binding 1 write_only : ui32[40]
// CHECK-NEXT:    vyre.buffer @b binding 2 write_only : ui32[40]
// CHECK-NEXT:    %0 = vyre.const 48 : ui32
// CHECK-NEXT:    %1 = vyre.invocation_id x
// CHECK-NEXT:    %2 = vyre.lt %1, %0 : ui32
// CHECK-NEXT:    vyre.if %2 {
// CHECK-NEXT:      %i = vyre.invocation_id x
// CHECK-NEXT:      %v = vyre.load @x[%i] : ui32
// CHECK-NEXT:      vyre.store @a[%i] = %v : ui32
// CHECK-NEXT:    }
// CHECK-NEXT:    %i_1 = vyre.invocation_id x
// CHECK-NEXT:    %v_1 = vyre.load @x[%i_1] : ui32
// CHECK-NEXT:    vyre.store @b[%i_1] = %v_1 : ui32
// CHECK-NEXT:  }

// -----

// A return ends only its own arm.
vyre.program @early workgroup_size [16, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[16]
  vyre.buffer @a binding 1 write_only : ui32[16]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %ten = vyre.const 10 : ui32
  %small = vyre.lt %v, %ten : ui32
  vyre.if %small {
    vyre.return
  }
  vyre.store @a[%i] = %v : ui32
}
vyre.program @after workgroup_size [16, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[16]
  vyre.buffer @b binding 1 write_only : ui32[16]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @b[%i] = %v : ui32
}

// CHECK-LABEL: vyre.program @fused_early_after workgroup_size [16, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_only : ui32[16]
// CHECK-NEXT:    vyre.buffer @a binding 1 write_only : ui32[16]
// CHECK-NEXT:    vyre.buffer @b binding 2 write_only : ui32[16]
// CHECK-NEXT:    %0 = vyre.const true : i1
// CHECK-NEXT:    vyre.let @__vyre_fuse_a0_live = %0 : i1
// CHECK-NEXT:    %i = vyre.invocation_id x
// CHECK-NEXT:    %v = vyre.load @x[%i] : ui32
// CHECK-NEXT:    %ten = vyre.const 10 : ui32
// CHECK-NEXT:    %small = vyre.lt %v, %ten : ui32
// CHECK-NEXT:    vyre.if %small {
// CHECK-NEXT:      %1 = vyre.const false : i1
// CHECK-NEXT:      vyre.assign @__vyre_fuse_a0_live = %1 : i1
// CHECK-NEXT:    }
// CHECK-NEXT:    %2 = vyre.var @__vyre_fuse_a0_live : i1
// CHECK-NEXT:    vyre.if %2 {
// CHECK-NEXT:      vyre.store @a[%i] = %v : ui32
// CHECK-NEXT:    }
// CHECK-NEXT:    %i_1 = vyre.invocation_id x
// CHECK-NEXT:    %v_1 = vyre.load @x[%i_1] : ui32
// CHECK-NEXT:    vyre.store @b[%i_1] = %v_1 : ui32
// CHECK-NEXT:  }

// -----

// An arm that declares a buffer shorter than another arm keeps seeing the short one;
// workgroup memory declared by two arms is not shared.
vyre.program @short workgroup_size [8, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[8]
  vyre.buffer @a binding 1 write_only : ui32[16]
  vyre.buffer @tile workgroup : ui32[8]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %n = vyre.buf_len @x
  %v = vyre.load @x[%i] : ui32
  vyre.store @tile[%l] = %v : ui32
  %s = vyre.add %v, %n : ui32
  vyre.store @a[%i] = %s : ui32
}
vyre.program @long workgroup_size [8, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[16]
  vyre.buffer @b binding 1 write_only : ui32[16]
  vyre.buffer @tile workgroup : ui32[8]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %v = vyre.load @x[%i] : ui32
  %t = vyre.load @tile[%l] : ui32
  %s = vyre.add %v, %t : ui32
  vyre.store @b[%i] = %s : ui32
}

// CHECK-LABEL: vyre.program @fused_short_long workgroup_size [8, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_only : ui32[16]
// CHECK-NEXT:    vyre.buffer @a binding 1 write_only : ui32[16]
// CHECK-NEXT:    vyre.buffer @__vyre_fuse_a0_tile workgroup : ui32[8]
// CHECK-NEXT:    vyre.buffer @b binding 2 write_only : ui32[16]
// CHECK-NEXT:    vyre.buffer @__vyre_fuse_a1_tile workgroup : ui32[8]
// CHECK-NEXT:    %i = vyre.invocation_id x
// CHECK-NEXT:    %l = vyre.local_id x
// CHECK-NEXT:    %n = vyre.const 8 : ui32
// CHECK-NEXT:    %0 = vyre.const 8 : ui32
// CHECK-NEXT:    %1 = vyre.lt %i, %0 : ui32
// CHECK-NEXT:    %2 = vyre.const 4294967295 : ui32
// CHECK-NEXT:    %3 = vyre.select %1, %i, %2 : ui32
// CHECK-NEXT:    %v = vyre.load @x[%3] : ui32
// CHECK-NEXT:    vyre.store @__vyre_fuse_a0_tile[%l] = %v : ui32
// CHECK-NEXT:    %s = vyre.add %v, %n : ui32
// CHECK-NEXT:    vyre.store @a[%i] = %s : ui32
// CHECK-NEXT:    %i_1 = vyre.invocation_id x
// CHECK-NEXT:    %l_1 = vyre.local_id x
// CHECK-NEXT:    %v_1 = vyre.load @x[%i_1] : ui32
// CHECK-NEXT:    %t = vyre.load @__vyre_fuse_a1_tile[%l_1] : ui32
// CHECK-NEXT:    %s_1 = vyre.add %v_1, %t : ui32
// CHECK-NEXT:    vyre.store @b[%i_1] = %s_1 : ui32
// CHECK-NEXT:  }

// -----

// A CUDA-style guard `if j < 64` on a grid of exactly 64 invocations always
// holds: it is unwrapped, and the guarded store of the intermediate @t is
// forwarded (no buffer, no load, no if).
vyre.program @guarded_scale workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[64]
  vyre.buffer @t binding 1 write_only : ui32[64]
  %j = vyre.invocation_id x
  %n = vyre.const 64 : ui32
  %ok = vyre.lt %j, %n : ui32
  vyre.if %ok {
    %v = vyre.load @x[%j] : ui32
    %three = vyre.const 3 : ui32
    %r = vyre.mul %v, %three : ui32
    vyre.store @t[%j] = %r : ui32
  }
}
vyre.program @guarded_plus workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[64]
  vyre.buffer @y binding 1 write_only : ui32[64]
  %j = vyre.invocation_id x
  %n = vyre.const 64 : ui32
  %ok = vyre.gt %n, %j : ui32
  vyre.if %ok {
    %a = vyre.load @t[%j] : ui32
    %one = vyre.const 1 : ui32
    %s = vyre.add %a, %one : ui32
    vyre.store @y[%j] = %s : ui32
  }
}

// COST-LABEL: vyre.program @fused_guarded_scale_guarded_plus workgroup_size [64, 1, 1] {
// CHECK-LABEL: vyre.program @fused_guarded_scale_guarded_plus workgroup_size [64, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_only : ui32[64]
// CHECK-NEXT:    vyre.buffer @y binding 1 write_only : ui32[64]
// CHECK-NEXT:    %j = vyre.invocation_id x
// CHECK-NEXT:    %v = vyre.load @x[%j] : ui32
// CHECK-NEXT:    %three = vyre.const 3 : ui32
// CHECK-NEXT:    %r = vyre.mul %v, %three : ui32
// CHECK-NEXT:    %j_1 = vyre.invocation_id x
// CHECK-NEXT:    %n = vyre.const 64 : ui32
// CHECK-NEXT:    %ok = vyre.gt %n, %j_1 : ui32
// CHECK-NEXT:    vyre.if %ok {
// CHECK-NEXT:      %one = vyre.const 1 : ui32
// CHECK-NEXT:      %s = vyre.add %r, %one : ui32
// CHECK-NEXT:      vyre.store @y[%j_1] = %s : ui32
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// -----

// The same guard on 28 elements of a 64-invocation grid (the column mean of a
// correlation): invocations 28..63 skip the store, but there it would have
// been out of bounds, so the stored value is forwarded through a named local
// (0 where the guard fails, as an out-of-bounds load gives).
vyre.program @mean_cols workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[28]
  vyre.buffer @mean binding 1 write_only : f32[28]
  %j = vyre.invocation_id x
  %m = vyre.buf_len @mean
  %ok = vyre.lt %j, %m : ui32
  vyre.if %ok {
    %v = vyre.load @x[%j] : f32
    %h = vyre.const 0.5 : f32
    %mu = vyre.mul %v, %h : f32
    vyre.store @mean[%j] = %mu : f32
  }
}
vyre.program @center workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[28]
  vyre.buffer @mean binding 1 read_only : f32[28]
  vyre.buffer @c binding 2 write_only : f32[28]
  %j = vyre.invocation_id x
  %m = vyre.const 28 : ui32
  %ok = vyre.lt %j, %m : ui32
  vyre.if %ok {
    %v = vyre.load @x[%j] : f32
    %mu = vyre.load @mean[%j] : f32
    %d = vyre.sub %v, %mu : f32
    vyre.store @c[%j] = %d : f32
  }
}

// COST-LABEL: vyre.program @fused_mean_cols_center workgroup_size [64, 1, 1] {
// CHECK-LABEL: vyre.program @fused_mean_cols_center workgroup_size [64, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_only : f32[28]
// CHECK-NEXT:    vyre.buffer @c binding 1 write_only : f32[28]
// CHECK-NEXT:    %j = vyre.invocation_id x
// CHECK-NEXT:    %m = vyre.const 28 : ui32
// CHECK-NEXT:    %ok = vyre.lt %j, %m : ui32
// CHECK-NEXT:    %0 = vyre.const 0.0 : f32
// CHECK-NEXT:    vyre.let @__vyre_fuse_a0_fwd_mean = %0 : f32
// CHECK-NEXT:    vyre.if %ok {
// CHECK-NEXT:      %v = vyre.load @x[%j] : f32
// CHECK-NEXT:      %h = vyre.const 0.5 : f32
// CHECK-NEXT:      %mu = vyre.mul %v, %h : f32
// CHECK-NEXT:      vyre.assign @__vyre_fuse_a0_fwd_mean = %mu : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %1 = vyre.var @__vyre_fuse_a0_fwd_mean : f32
// CHECK-NEXT:    %2 = vyre.invocation_id x
// CHECK-NEXT:    %3 = vyre.const 28 : ui32
// CHECK-NEXT:    %4 = vyre.lt %2, %3 : ui32
// CHECK-NEXT:    %5 = vyre.const 0.0 : f32
// CHECK-NEXT:    %mu_1 = vyre.select %4, %1, %5 : f32
// CHECK-NEXT:    %j_1 = vyre.invocation_id x
// CHECK-NEXT:    %m_1 = vyre.const 28 : ui32
// CHECK-NEXT:    %ok_1 = vyre.lt %j_1, %m_1 : ui32
// CHECK-NEXT:    vyre.if %ok_1 {
// CHECK-NEXT:      %v_1 = vyre.load @x[%j_1] : f32
// CHECK-NEXT:      %d = vyre.sub %v_1, %mu_1 : f32
// CHECK-NEXT:      vyre.store @c[%j_1] = %d : f32
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// -----

// A guard below the count (`j < 20` of 28 elements) leaves mean[20..27] as
// memory holds them: the buffer and its load stay.
vyre.program @mean_part workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[28]
  vyre.buffer @mean binding 1 write_only : f32[28]
  %j = vyre.invocation_id x
  %m = vyre.const 20 : ui32
  %ok = vyre.lt %j, %m : ui32
  vyre.if %ok {
    %v = vyre.load @x[%j] : f32
    vyre.store @mean[%j] = %v : f32
  }
}
vyre.program @center_all workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[28]
  vyre.buffer @mean binding 1 read_only : f32[28]
  vyre.buffer @c binding 2 write_only : f32[28]
  %j = vyre.invocation_id x
  %v = vyre.load @x[%j] : f32
  %mu = vyre.load @mean[%j] : f32
  %d = vyre.sub %v, %mu : f32
  vyre.store @c[%j] = %d : f32
}

// COST-LABEL: vyre.program @fused_mean_part_center_all workgroup_size [64, 1, 1] {
// CHECK-LABEL: vyre.program @fused_mean_part_center_all workgroup_size [64, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_only : f32[28]
// CHECK-NEXT:    vyre.buffer @mean binding 1 read_write : f32[28]
// CHECK-NEXT:    vyre.buffer @c binding 2 write_only : f32[28]
// CHECK-NEXT:    %j = vyre.invocation_id x
// CHECK-NEXT:    %m = vyre.const 20 : ui32
// CHECK-NEXT:    %ok = vyre.lt %j, %m : ui32
// CHECK-NEXT:    vyre.if %ok {
// CHECK-NEXT:      %v = vyre.load @x[%j] : f32
// CHECK-NEXT:      vyre.store @mean[%j] = %v : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %j_1 = vyre.invocation_id x
// CHECK-NEXT:    %v_1 = vyre.load @x[%j_1] : f32
// CHECK-NEXT:    %mu = vyre.load @mean[%j_1] : f32
// CHECK-NEXT:    %d = vyre.sub %v_1, %mu : f32
// CHECK-NEXT:    vyre.store @c[%j_1] = %d : f32
// CHECK-NEXT:  }

// -----

// The column mean runs over 28 invocations, the next program over 200 (the
// count of @out): fused, the mean runs under fusion's own guard, and its
// guarded store is forwarded through a named local declared and read outside
// that guard.
vyre.program @col_mean workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[28]
  vyre.buffer @mean binding 1 write_only : f32[28]
  %j = vyre.invocation_id x
  %m = vyre.const 28 : ui32
  %ok = vyre.lt %j, %m : ui32
  vyre.if %ok {
    %v = vyre.load @x[%j] : f32
    %h = vyre.const 0.5 : f32
    %mu = vyre.mul %v, %h : f32
    vyre.store @mean[%j] = %mu : f32
  }
}
vyre.program @spread workgroup_size [64, 1, 1] {
  vyre.buffer @mean binding 0 read_only : f32[28]
  vyre.buffer @out binding 1 write_only : f32[200]
  %j = vyre.invocation_id x
  %m = vyre.const 28 : ui32
  %ok = vyre.lt %j, %m : ui32
  vyre.if %ok {
    %mu = vyre.load @mean[%j] : f32
    %k = vyre.const 100 : ui32
    %g = vyre.add %j, %k : ui32
    vyre.store @out[%g] = %mu : f32
  }
}

// COST-LABEL: vyre.program @fused_col_mean_spread workgroup_size [64, 1, 1] {
// CHECK-LABEL: vyre.program @fused_col_mean_spread workgroup_size [64, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_only : f32[28]
// CHECK-NEXT:    vyre.buffer @out binding 1 write_only : f32[200]
// CHECK-NEXT:    %0 = vyre.const 0.0 : f32
// CHECK-NEXT:    vyre.let @__vyre_fuse_a0_fwd_mean = %0 : f32
// CHECK-NEXT:    %1 = vyre.const 1 : ui32
// CHECK-NEXT:    %2 = vyre.workgroup_id x
// CHECK-NEXT:    %3 = vyre.lt %2, %1 : ui32
// CHECK-NEXT:    vyre.if %3 {
// CHECK-NEXT:      %j = vyre.invocation_id x
// CHECK-NEXT:      %m = vyre.const 28 : ui32
// CHECK-NEXT:      %ok = vyre.lt %j, %m : ui32
// CHECK-NEXT:      vyre.if %ok {
// CHECK-NEXT:        %v = vyre.load @x[%j] : f32
// CHECK-NEXT:        %h = vyre.const 0.5 : f32
// CHECK-NEXT:        %mu = vyre.mul %v, %h : f32
// CHECK-NEXT:        vyre.assign @__vyre_fuse_a0_fwd_mean = %mu : f32
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    %4 = vyre.var @__vyre_fuse_a0_fwd_mean : f32
// CHECK-NEXT:    %5 = vyre.invocation_id x
// CHECK-NEXT:    %6 = vyre.const 28 : ui32
// CHECK-NEXT:    %7 = vyre.lt %5, %6 : ui32
// CHECK-NEXT:    %8 = vyre.const 0.0 : f32
// CHECK-NEXT:    %mu_1 = vyre.select %7, %4, %8 : f32
// CHECK-NEXT:    %j_1 = vyre.invocation_id x
// CHECK-NEXT:    %m_1 = vyre.const 28 : ui32
// CHECK-NEXT:    %ok_1 = vyre.lt %j_1, %m_1 : ui32
// CHECK-NEXT:    vyre.if %ok_1 {
// CHECK-NEXT:      %k = vyre.const 100 : ui32
// CHECK-NEXT:      %g = vyre.add %j_1, %k : ui32
// CHECK-NEXT:      vyre.store @out[%g] = %mu_1 : f32
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// -----

// One program: unchanged.
vyre.program @alone workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[64]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @x[%i] = %v : ui32
}

// CHECK-LABEL: vyre.program @alone workgroup_size [64, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_write : ui32[64]
// CHECK-NEXT:    %i = vyre.invocation_id x
// CHECK-NEXT:    %v = vyre.load @x[%i] : ui32
// CHECK-NEXT:    vyre.store @x[%i] = %v : ui32
// CHECK-NEXT:  }
