// RUN: vyre-opt %s --split-input-file -p 'vyre-fuse{force=true}' | filecheck %s
// RUN: %python -m vyre_xdsl.testing.cli_batch --run 'vyre-opt %s --split-input-file -p "vyre-fuse{force=true}" | vyre-opt --split-input-file' | filecheck %s

// Recompute fusion (docs/fusion.md, "Recompute"): a load of a producer's
// output at another index takes the producer's expression at that index when
// it is a pure function of unwritten buffers; otherwise the dependence keeps
// its barrier.

// Neighbour chain: t[i] = 2 x[i], y[i] = t[i] + t[i+1]. t[i] is forwarded;
// t[i+1] is recomputed at i+1 (2 x[i+1]), zero past the end as unfused.
vyre.program @double workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[256]
  vyre.buffer @t binding 1 write_only : f32[256]
  %i = vyre.invocation_id x
  %two = vyre.const 2.0 : f32
  %v = vyre.load @x[%i] : f32
  %r = vyre.mul %two, %v : f32
  vyre.store @t[%i] = %r : f32
}
vyre.program @pair workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : f32[256]
  vyre.buffer @y binding 1 write_only : f32[256]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %a = vyre.load @t[%i] : f32
  %b = vyre.load @t[%j] : f32
  %s = vyre.add %a, %b : f32
  vyre.store @y[%i] = %s : f32
}

// CHECK-LABEL: vyre.program @fused_double_pair workgroup_size [64, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_only : f32[256]
// CHECK-NEXT:    vyre.buffer @y binding 1 write_only : f32[256]
// CHECK-NEXT:    %i = vyre.invocation_id x
// CHECK-NEXT:    %two = vyre.const 2.0 : f32
// CHECK-NEXT:    %v = vyre.load @x[%i] : f32
// CHECK-NEXT:    %r = vyre.mul %two, %v : f32
// CHECK-NEXT:    %i_1 = vyre.invocation_id x
// CHECK-NEXT:    %one = vyre.const 1 : ui32
// CHECK-NEXT:    %j = vyre.add %i_1, %one : ui32
// CHECK-NEXT:    %two_1 = vyre.const 2.0 : f32
// CHECK-NEXT:    %v_1 = vyre.load @x[%j] : f32
// CHECK-NEXT:    %r_1 = vyre.mul %two_1, %v_1 : f32
// CHECK-NEXT:    %0 = vyre.const 256 : ui32
// CHECK-NEXT:    %1 = vyre.lt %j, %0 : ui32
// CHECK-NEXT:    %2 = vyre.const 0.0 : f32
// CHECK-NEXT:    %b = vyre.select %1, %r_1, %2 : f32
// CHECK-NEXT:    %s = vyre.add %r, %b : f32
// CHECK-NEXT:    vyre.store @y[%i_1] = %s : f32

// -----

// 3-point stencil y[i] = t[i-1] + t[i] + t[i+1] over a producer with two
// loads, t[i] = x[i] * w[i] + 1. At i = 0, i - 1 wraps to 4294967295: out of
// bounds, so the select gives 0, as the unfused load did.
vyre.program @weigh workgroup_size [32, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[128]
  vyre.buffer @w binding 1 read_only : ui32[128]
  vyre.buffer @t binding 2 write_only : ui32[128]
  %i = vyre.invocation_id x
  %a = vyre.load @x[%i] : ui32
  %b = vyre.load @w[%i] : ui32
  %one = vyre.const 1 : ui32
  %p = vyre.mul %a, %b : ui32
  %r = vyre.add %p, %one : ui32
  vyre.store @t[%i] = %r : ui32
}
vyre.program @stencil workgroup_size [32, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[128]
  vyre.buffer @y binding 1 write_only : ui32[128]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %l = vyre.sub %i, %one : ui32
  %h = vyre.add %i, %one : ui32
  %tl = vyre.load @t[%l] : ui32
  %tc = vyre.load @t[%i] : ui32
  %th = vyre.load @t[%h] : ui32
  %s1 = vyre.add %tl, %tc : ui32
  %s = vyre.add %s1, %th : ui32
  vyre.store @y[%i] = %s : ui32
}

// CHECK-LABEL: vyre.program @fused_weigh_stencil workgroup_size [32, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_only : ui32[128]
// CHECK-NEXT:    vyre.buffer @w binding 1 read_only : ui32[128]
// CHECK-NEXT:    vyre.buffer @y binding 2 write_only : ui32[128]
// CHECK-NEXT:    %i = vyre.invocation_id x
// CHECK-NEXT:    %a = vyre.load @x[%i] : ui32
// CHECK-NEXT:    %b = vyre.load @w[%i] : ui32
// CHECK-NEXT:    %one = vyre.const 1 : ui32
// CHECK-NEXT:    %p = vyre.mul %a, %b : ui32
// CHECK-NEXT:    %r = vyre.add %p, %one : ui32
// CHECK-NEXT:    %i_1 = vyre.invocation_id x
// CHECK-NEXT:    %one_1 = vyre.const 1 : ui32
// CHECK-NEXT:    %l = vyre.sub %i_1, %one_1 : ui32
// CHECK-NEXT:    %h = vyre.add %i_1, %one_1 : ui32
// CHECK-NEXT:    %a_1 = vyre.load @x[%l] : ui32
// CHECK-NEXT:    %b_1 = vyre.load @w[%l] : ui32
// CHECK-NEXT:    %p_1 = vyre.mul %a_1, %b_1 : ui32
// CHECK-NEXT:    %one_2 = vyre.const 1 : ui32
// CHECK-NEXT:    %r_1 = vyre.add %p_1, %one_2 : ui32
// CHECK-NEXT:    %0 = vyre.const 128 : ui32
// CHECK-NEXT:    %1 = vyre.lt %l, %0 : ui32
// CHECK-NEXT:    %2 = vyre.const 0 : ui32
// CHECK-NEXT:    %tl = vyre.select %1, %r_1, %2 : ui32
// CHECK-NEXT:    %a_2 = vyre.load @x[%h] : ui32
// CHECK-NEXT:    %b_2 = vyre.load @w[%h] : ui32
// CHECK-NEXT:    %p_2 = vyre.mul %a_2, %b_2 : ui32
// CHECK-NEXT:    %one_3 = vyre.const 1 : ui32
// CHECK-NEXT:    %r_2 = vyre.add %p_2, %one_3 : ui32
// CHECK-NEXT:    %3 = vyre.const 128 : ui32
// CHECK-NEXT:    %4 = vyre.lt %h, %3 : ui32
// CHECK-NEXT:    %5 = vyre.const 0 : ui32
// CHECK-NEXT:    %th = vyre.select %4, %r_2, %5 : ui32
// CHECK-NEXT:    %s1 = vyre.add %tl, %r : ui32
// CHECK-NEXT:    %s = vyre.add %s1, %th : ui32
// CHECK-NEXT:    vyre.store @y[%i_1] = %s : ui32

// -----

// @t is also a module output: its store stays, only the shifted load is
// recomputed (no grid_sync).
vyre.program @square workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[256]
  vyre.buffer @t binding 1 write_only output : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %r = vyre.mul %v, %v : ui32
  vyre.store @t[%i] = %r : ui32
}
vyre.program @next workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[256]
  vyre.buffer @y binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %c255 = vyre.const 255 : ui32
  %j = vyre.sub %c255, %i : ui32
  %v = vyre.load @t[%j] : ui32
  vyre.store @y[%i] = %v : ui32
}

// CHECK-LABEL: vyre.program @fused_square_next workgroup_size [64, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_only : ui32[256]
// CHECK-NEXT:    vyre.buffer @t binding 1 read_write output : ui32[256]
// CHECK-NEXT:    vyre.buffer @y binding 2 write_only : ui32[256]
// CHECK-NEXT:    %i = vyre.invocation_id x
// CHECK-NEXT:    %v = vyre.load @x[%i] : ui32
// CHECK-NEXT:    %r = vyre.mul %v, %v : ui32
// CHECK-NEXT:    vyre.store @t[%i] = %r : ui32
// CHECK-NEXT:    %i_1 = vyre.invocation_id x
// CHECK-NEXT:    %c255 = vyre.const 255 : ui32
// CHECK-NEXT:    %j = vyre.sub %c255, %i_1 : ui32
// CHECK-NEXT:    %v_1 = vyre.load @x[%j] : ui32
// CHECK-NEXT:    %r_1 = vyre.mul %v_1, %v_1 : ui32
// CHECK-NEXT:    %0 = vyre.const 256 : ui32
// CHECK-NEXT:    %1 = vyre.lt %j, %0 : ui32
// CHECK-NEXT:    %2 = vyre.const 0 : ui32
// CHECK-NEXT:    %v_2 = vyre.select %1, %r_1, %2 : ui32
// CHECK-NEXT:    vyre.store @y[%i_1] = %v_2 : ui32

// -----

// The producer writes 64 elements under a guard (its dispatch is smaller);
// every element of @t was written by it, so the consumer's reads at and past 64
// give 0 through the select, as unfused.
vyre.program @small workgroup_size [32, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[64]
  vyre.buffer @t binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %n = vyre.buf_len @x
  %r = vyre.add %v, %n : ui32
  vyre.store @t[%i] = %r : ui32
}
vyre.program @large workgroup_size [32, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[64]
  vyre.buffer @out binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %two = vyre.const 2 : ui32
  %j = vyre.mul %i, %two : ui32
  %v = vyre.load @t[%j] : ui32
  vyre.store @out[%i] = %v : ui32
}

// CHECK-LABEL: vyre.program @fused_small_large workgroup_size [32, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_only : ui32[64]
// CHECK-NEXT:    vyre.buffer @out binding 1 write_only : ui32[256]
// CHECK-NEXT:    %i = vyre.invocation_id x
// CHECK-NEXT:    %two = vyre.const 2 : ui32
// CHECK-NEXT:    %j = vyre.mul %i, %two : ui32
// CHECK-NEXT:    %v = vyre.load @x[%j] : ui32
// CHECK-NEXT:    %n = vyre.buf_len @x
// CHECK-NEXT:    %r = vyre.add %v, %n : ui32
// CHECK-NEXT:    %0 = vyre.const 64 : ui32
// CHECK-NEXT:    %1 = vyre.lt %j, %0 : ui32
// CHECK-NEXT:    %2 = vyre.const 0 : ui32
// CHECK-NEXT:    %v_1 = vyre.select %1, %r, %2 : ui32
// CHECK-NEXT:    vyre.store @out[%i] = %v_1 : ui32

// -----

// Not recomputed: the producer's value comes from an atomic. grid_sync stays.
vyre.program @count workgroup_size [64, 1, 1] {
  vyre.buffer @c binding 0 read_write : ui32[1]
  vyre.buffer @t binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %one = vyre.const 1 : ui32
  %old = vyre.atomic add @c[%z], %one : ui32
  vyre.store @t[%i] = %old : ui32
}
vyre.program @shift workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[256]
  vyre.buffer @y binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %v = vyre.load @t[%j] : ui32
  vyre.store @y[%i] = %v : ui32
}

// CHECK-LABEL: vyre.program @fused_count_shift workgroup_size [64, 1, 1] {
// CHECK-NEXT:    vyre.buffer @c binding 0 read_write : ui32[1]
// CHECK-NEXT:    vyre.buffer @t binding 1 read_write : ui32[256]
// CHECK-NEXT:    vyre.buffer @y binding 2 write_only : ui32[256]
// CHECK-NEXT:    %i = vyre.invocation_id x
// CHECK-NEXT:    %z = vyre.const 0 : ui32
// CHECK-NEXT:    %one = vyre.const 1 : ui32
// CHECK-NEXT:    %old = vyre.atomic add @c[%z], %one : ui32
// CHECK-NEXT:    vyre.store @t[%i] = %old : ui32
// CHECK-NEXT:    vyre.barrier grid_sync
// CHECK-NEXT:    %i_1 = vyre.invocation_id x
// CHECK-NEXT:    %one_1 = vyre.const 1 : ui32
// CHECK-NEXT:    %j = vyre.add %i_1, %one_1 : ui32
// CHECK-NEXT:    %v = vyre.load @t[%j] : ui32
// CHECK-NEXT:    vyre.store @y[%i_1] = %v : ui32

// -----

// Not recomputed: the producer loads @s, which the consumer updates in place
// (recomputing would read s[i+1] after invocation i+1 overwrote it).
vyre.program @double workgroup_size [64, 1, 1] {
  vyre.buffer @s binding 0 read_write : ui32[256]
  vyre.buffer @t binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @s[%i] : ui32
  %r = vyre.add %v, %v : ui32
  vyre.store @t[%i] = %r : ui32
}
vyre.program @update workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[256]
  vyre.buffer @s binding 1 read_write : ui32[256]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %a = vyre.load @t[%i] : ui32
  %b = vyre.load @t[%j] : ui32
  %r = vyre.add %a, %b : ui32
  vyre.store @s[%i] = %r : ui32
}

// CHECK-LABEL: vyre.program @fused_double_update workgroup_size [64, 1, 1] {
// CHECK-NEXT:    vyre.buffer @s binding 0 read_write : ui32[256]
// CHECK-NEXT:    vyre.buffer @t binding 1 read_write : ui32[256]
// CHECK-NEXT:    %i = vyre.invocation_id x
// CHECK-NEXT:    %v = vyre.load @s[%i] : ui32
// CHECK-NEXT:    %r = vyre.add %v, %v : ui32
// CHECK-NEXT:    vyre.store @t[%i] = %r : ui32
// CHECK-NEXT:    vyre.barrier grid_sync
// CHECK-NEXT:    %i_1 = vyre.invocation_id x
// CHECK-NEXT:    %one = vyre.const 1 : ui32
// CHECK-NEXT:    %j = vyre.add %i_1, %one : ui32
// CHECK-NEXT:    %a = vyre.load @t[%i_1] : ui32
// CHECK-NEXT:    %b = vyre.load @t[%j] : ui32
// CHECK-NEXT:    %r_1 = vyre.add %a, %b : ui32
// CHECK-NEXT:    vyre.store @s[%i_1] = %r_1 : ui32

// -----

// Not recomputed: the producer's value comes through workgroup memory.
vyre.program @stage workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[256]
  vyre.buffer @t binding 1 write_only : ui32[256]
  vyre.buffer @tile workgroup : ui32[64]
  %i = vyre.invocation_id x
  %l = vyre.local_id x
  %v = vyre.load @x[%i] : ui32
  vyre.store @tile[%l] = %v : ui32
  vyre.barrier
  %c63 = vyre.const 63 : ui32
  %m = vyre.sub %c63, %l : ui32
  %w = vyre.load @tile[%m] : ui32
  vyre.store @t[%i] = %w : ui32
}
vyre.program @shift workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[256]
  vyre.buffer @y binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %v = vyre.load @t[%j] : ui32
  vyre.store @y[%i] = %v : ui32
}

// CHECK-LABEL: vyre.program @fused_stage_shift workgroup_size [64, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_only : ui32[256]
// CHECK-NEXT:    vyre.buffer @t binding 1 read_write : ui32[256]
// CHECK-NEXT:    vyre.buffer @tile workgroup : ui32[64]
// CHECK-NEXT:    vyre.buffer @y binding 2 write_only : ui32[256]
// CHECK-NEXT:    %i = vyre.invocation_id x
// CHECK-NEXT:    %l = vyre.local_id x
// CHECK-NEXT:    %v = vyre.load @x[%i] : ui32
// CHECK-NEXT:    vyre.store @tile[%l] = %v : ui32
// CHECK-NEXT:    vyre.barrier
// CHECK-NEXT:    %c63 = vyre.const 63 : ui32
// CHECK-NEXT:    %m = vyre.sub %c63, %l : ui32
// CHECK-NEXT:    %w = vyre.load @tile[%m] : ui32
// CHECK-NEXT:    vyre.store @t[%i] = %w : ui32
// CHECK-NEXT:    vyre.barrier grid_sync
// CHECK-NEXT:    %i_1 = vyre.invocation_id x
// CHECK-NEXT:    %one = vyre.const 1 : ui32
// CHECK-NEXT:    %j = vyre.add %i_1, %one : ui32
// CHECK-NEXT:    %v_1 = vyre.load @t[%j] : ui32
// CHECK-NEXT:    vyre.store @y[%i_1] = %v_1 : ui32

// -----

// Not recomputed: si32 division may trap, and computing it at another index
// could trap where the program did not.
vyre.program @divide workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : si32[256]
  vyre.buffer @t binding 1 write_only : si32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : si32
  %k = vyre.const 100 : si32
  %q = vyre.div %k, %v : si32
  vyre.store @t[%i] = %q : si32
}
vyre.program @shift workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : si32[256]
  vyre.buffer @y binding 1 write_only : si32[256]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %v = vyre.load @t[%j] : si32
  vyre.store @y[%i] = %v : si32
}

// CHECK-LABEL: vyre.program @fused_divide_shift workgroup_size [64, 1, 1] {
// CHECK-NEXT:    vyre.buffer @x binding 0 read_only : si32[256]
// CHECK-NEXT:    vyre.buffer @t binding 1 read_write : si32[256]
// CHECK-NEXT:    vyre.buffer @y binding 2 write_only : si32[256]
// CHECK-NEXT:    %i = vyre.invocation_id x
// CHECK-NEXT:    %v = vyre.load @x[%i] : si32
// CHECK-NEXT:    %k = vyre.const 100 : si32
// CHECK-NEXT:    %q = vyre.div %k, %v : si32
// CHECK-NEXT:    vyre.store @t[%i] = %q : si32
// CHECK-NEXT:    vyre.barrier grid_sync
// CHECK-NEXT:    %i_1 = vyre.invocation_id x
// CHECK-NEXT:    %one = vyre.const 1 : ui32
// CHECK-NEXT:    %j = vyre.add %i_1, %one : ui32
// CHECK-NEXT:    %v_1 = vyre.load @t[%j] : si32
// CHECK-NEXT:    vyre.store @y[%i_1] = %v_1 : si32

