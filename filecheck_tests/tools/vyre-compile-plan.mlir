// RUN: vyre-compile %s --plan-dot - | filecheck %s
// RUN: vyre-compile %s --plan-dot %t.dot && filecheck %s --input-file %t.dot
//
// One module with four independent sub-graphs, one per refusal: the plan names
// each rejected edge with its reason code (docs/megakernel.md).

// CHECK:      digraph "vyre_plan" {
// CHECK-NEXT:   graph [rankdir="TB", label="9 groups, 3 stages, cost 9789 = work 89 + 1000 x 9 groups + 100 x 7 crossing edges"];
// CHECK:        subgraph "cluster_stage0" {
// CHECK-NEXT:     label="stage 0";
// CHECK-NEXT:     subgraph "cluster_group0" {
// CHECK-NEXT:       label="group 0 (MKL000_LEGAL_DATAFLOW)";
// CHECK-NEXT:       "n0" [label="@p_a\nnode 0, work 8"];
// CHECK-NEXT:       "n1" [label="@c1_a\nnode 1, work 8"];
// CHECK:            label="group 6 (MKL000_SINGLE_NODE_GROUP)";
// CHECK-NEXT:       "n7" [label="@p_d\nnode 7, work 8"];
// CHECK:        subgraph "cluster_stage1" {
// CHECK:            label="group 7 (MKL000_SINGLE_NODE_GROUP)";
// CHECK-NEXT:       "n8" [label="@m_d
// CHECK:        subgraph "cluster_stage2" {
// CHECK-NEXT:     label="stage 2";
// CHECK-NEXT:     subgraph "cluster_group8" {
// CHECK-NEXT:       label="group 8 (MKL000_SINGLE_NODE_GROUP)";
// CHECK-NEXT:       "n9" [label="@c_d

// CHECK:      "n0" -> "n1" [label="@t_a fused (invocation)", color="darkgreen"];
// CHECK-NEXT: "n0" -> "n2" [label="@t_a MKL003_LIFETIME_BOUNDARY", color="red", style="dashed", tooltip="@c2_a reads @t_a written by @p_a across workgroups
// CHECK-NEXT: "n1" -> "n2" [label="@u_a MKL004_SEVERAL_CONSUMERS", color="red", style="dashed", tooltip="merging would also fuse a dependence that crosses workgroups: @c2_a reads @t_a written by @p_a"];
// CHECK-NEXT: "n3" -> "n4" [label="@t_b MKL005_WORKGROUP_MISMATCH", color="red", style="dashed", tooltip="cannot fuse @p_b: its workgroup [64, 1, 1] differs from the fused workgroup [128, 1, 1]
// CHECK-NEXT: "n5" -> "n6" [label="@t_c MKL006_SYNCHRONIZATION_BOUNDARY", color="red", style="dashed", tooltip="@p_c contains a grid_sync barrier
// CHECK-NEXT: "n7" -> "n8" [label="@a_d MKL003_LIFETIME_BOUNDARY"
// CHECK-NEXT: "n7" -> "n9" [label="@a_d MKL007_CYCLE", color="red", style="dashed", tooltip="the group of @p_d, @c_d would both precede and follow another group"];
// CHECK-NEXT: "n8" -> "n9" [label="@b_d MKL003_LIFETIME_BOUNDARY"
// CHECK-NEXT: }

// ---- mkl004
vyre.program @p_a workgroup_size [64, 1, 1] {
  vyre.buffer @x_a binding 0 read_only : ui32[256]
  vyre.buffer @t_a binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %next = vyre.add %i, %one : ui32
  %v = vyre.load @x_a[%i] : ui32
  %r = vyre.add %v, %one : ui32
  vyre.store @t_a[%i] = %r : ui32
}

vyre.program @c1_a workgroup_size [64, 1, 1] {
  vyre.buffer @t_a binding 0 read_only : ui32[256]
  vyre.buffer @u_a binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %next = vyre.add %i, %one : ui32
  %v = vyre.load @t_a[%i] : ui32
  %r = vyre.add %v, %one : ui32
  vyre.store @u_a[%i] = %r : ui32
}

vyre.program @c2_a workgroup_size [64, 1, 1] {
  vyre.buffer @t_a binding 0 read_only : ui32[256]
  vyre.buffer @u_a binding 1 read_only : ui32[256]
  vyre.buffer @out_a binding 2 write_only : ui32[256]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %a = vyre.load @t_a[%j] : ui32
  %b = vyre.load @u_a[%i] : ui32
  %s = vyre.add %a, %b : ui32
  vyre.store @out_a[%i] = %s : ui32
}

// ---- mkl005
vyre.program @p_b workgroup_size [64, 1, 1] {
  vyre.buffer @x_b binding 0 read_only : ui32[256]
  vyre.buffer @t_b binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %next = vyre.add %i, %one : ui32
  %w = vyre.workgroup_id x
  %wi = vyre.add %i, %w : ui32
  %v = vyre.load @x_b[%wi] : ui32
  %r = vyre.add %v, %one : ui32
  vyre.store @t_b[%i] = %r : ui32
}

vyre.program @c_b workgroup_size [128, 1, 1] {
  vyre.buffer @t_b binding 0 read_only : ui32[256]
  vyre.buffer @out_b binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %next = vyre.add %i, %one : ui32
  %v = vyre.load @t_b[%i] : ui32
  %r = vyre.add %v, %one : ui32
  vyre.store @out_b[%i] = %r : ui32
}

// ---- mkl006
vyre.program @p_c workgroup_size [64, 1, 1] {
  vyre.buffer @x_c binding 0 read_only : ui32[256]
  vyre.buffer @t_c binding 1 write_only : ui32[256]
  vyre.buffer @s_c binding 2 write_only : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x_c[%i] : ui32
  vyre.store @s_c[%i] = %v : ui32
  vyre.barrier grid_sync
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %w = vyre.load @s_c[%j] : ui32
  vyre.store @t_c[%i] = %w : ui32
}

vyre.program @c_c workgroup_size [64, 1, 1] {
  vyre.buffer @t_c binding 0 read_only : ui32[256]
  vyre.buffer @out_c binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %next = vyre.add %i, %one : ui32
  %v = vyre.load @t_c[%i] : ui32
  %r = vyre.add %v, %one : ui32
  vyre.store @out_c[%i] = %r : ui32
}

// ---- mkl007
vyre.program @p_d workgroup_size [64, 1, 1] {
  vyre.buffer @x_d binding 0 read_only : ui32[256]
  vyre.buffer @a_d binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %next = vyre.add %i, %one : ui32
  %v = vyre.load @x_d[%i] : ui32
  %r = vyre.add %v, %one : ui32
  vyre.store @a_d[%i] = %r : ui32
}

vyre.program @m_d workgroup_size [64, 1, 1] {
  vyre.buffer @a_d binding 0 read_only : ui32[256]
  vyre.buffer @b_d binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %next = vyre.add %i, %one : ui32
  %v = vyre.load @a_d[%next] : ui32
  %r = vyre.add %v, %one : ui32
  vyre.store @b_d[%i] = %r : ui32
}

vyre.program @c_d workgroup_size [64, 1, 1] {
  vyre.buffer @a_d binding 0 read_only : ui32[256]
  vyre.buffer @b_d binding 1 read_only : ui32[256]
  vyre.buffer @out_d binding 2 write_only : ui32[256]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %j = vyre.add %i, %one : ui32
  %p = vyre.load @a_d[%i] : ui32
  %q = vyre.load @b_d[%j] : ui32
  %s = vyre.add %p, %q : ui32
  vyre.store @out_d[%i] = %s : ui32
}
