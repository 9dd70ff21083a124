// RUN: vyre-compile %s --plan-dot - | filecheck %s
//
// Invocation-local and workgroup-local dependences fuse (the latter with a
// workgroup barrier, inserted by vyre-fuse); a write-after-read ordering edge
// is drawn dotted and puts its writer in a later stage.

// CHECK:       graph [rankdir="TB", label="2 groups, 2 stages, cost 2028 = work 28 + 1000 x 2 groups + 100 x 0 crossing edges"];
// CHECK:       label="group 0 (MKL000_LEGAL_DATAFLOW)";
// CHECK-NEXT:  "n0" [label="@scale\nnode 0, work 6"];
// CHECK-NEXT:  "n1" [label="@reverse\nnode 1, work 12"];
// CHECK:       label="stage 1";
// CHECK-NEXT:  subgraph "cluster_group1" {
// CHECK-NEXT:    label="group 1 (MKL000_SINGLE_NODE_GROUP)";
// CHECK-NEXT:    "n2" [label="@refill\nnode 2, work 10"];
// CHECK:       "n0" -> "n1" [label="@t fused (workgroup)", color="darkgreen"];
// CHECK-NOT:   MKL0
// CHECK:       "n0" -> "n2" [label="@x anti order", color="grey50", style="dotted"];
// CHECK-NEXT:  }

vyre.program @scale workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_write : ui32[256]
  vyre.buffer @t binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %r = vyre.add %v, %v : ui32
  vyre.store @t[%i] = %r : ui32
}
vyre.program @reverse workgroup_size [64, 1, 1] {
  vyre.buffer @t binding 0 read_only : ui32[256]
  vyre.buffer @out binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %w = vyre.workgroup_id x
  %l = vyre.local_id x
  %size = vyre.const 64 : ui32
  %last = vyre.const 63 : ui32
  %base = vyre.mul %w, %size : ui32
  %r = vyre.sub %last, %l : ui32
  %j = vyre.add %base, %r : ui32
  %v = vyre.load @t[%j] : ui32
  vyre.store @out[%i] = %v : ui32
}
vyre.program @refill workgroup_size [64, 1, 1] {
  vyre.buffer @y binding 0 read_only : ui32[256]
  vyre.buffer @x binding 1 read_write : ui32[256]
  %i = vyre.invocation_id x
  %n = vyre.const 255 : ui32
  %j = vyre.sub %n, %i : ui32
  %v = vyre.load @y[%j] : ui32
  %one = vyre.const 1 : ui32
  %s = vyre.add %v, %one : ui32
  %k = vyre.add %i, %one : ui32
  vyre.store @x[%k] = %s : ui32
}
