// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "xdsl-opt %s --split-input-file -p vyre-privatize-atomics > %t.xdsl" \
// RUN:   --run "vyre-opt %s --split-input-file -p vyre-privatize-atomics > %t.private" \
// RUN:   --run "vyre-opt %s --split-input-file --lower -p kernel-coarsen -t wgsl > %t.wgsl"
// RUN: filecheck %s < %t.private
// RUN: diff %t.private %t.xdsl
// RUN: filecheck %s --check-prefix=WGSL < %t.wgsl

// A 256-bin histogram in a 256-wide workgroup: the atomics go to a workgroup
// copy (zeroed, the identity of add), then one barrier and one flush per
// invocation, skipping bins that stayed at the identity.
vyre.program @hist workgroup_size [256, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[4096]
  vyre.buffer @out binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %one = vyre.const 1 : ui32
  %old = vyre.atomic add @out[%v], %one : ui32
}

// CHECK-LABEL: vyre.program @hist
// CHECK:         vyre.buffer @__vyre_private_out workgroup : ui32[256]
// CHECK-NEXT:    vyre.region "vyre.privatize.body" {
// CHECK:           %old = vyre.atomic add @__vyre_private_out[%v], %one : ui32
// CHECK-NEXT:    }
// CHECK-NEXT:    vyre.barrier
// CHECK-NEXT:    %[[LANE:.*]] = vyre.local_id x
// CHECK-NEXT:    %[[COUNT:.*]] = vyre.load @__vyre_private_out[%[[LANE]]] : ui32
// CHECK-NEXT:    %[[ZERO:.*]] = vyre.const 0 : ui32
// CHECK-NEXT:    %[[CHANGED:.*]] = vyre.ne %[[COUNT]], %[[ZERO]] : ui32
// CHECK-NEXT:    vyre.if %[[CHANGED]] {
// CHECK-NEXT:      %{{.*}} = vyre.atomic add @out[%[[LANE]]], %[[COUNT]] : ui32
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// In WGSL, a workgroup array of atomics, atomicAdd on it under the only bounds
// check the data needs, and a flush whose index (the lane) needs none.
// WGSL-LABEL: // vyre kernel @hist
// WGSL:       var<workgroup> w___vyre_private_out: array<atomic<u32>, 256>;
// WGSL:       if (v_v < 256u) {
// WGSL-NEXT:    atomicAdd(&w___vyre_private_out[min(v_v, 256u - 1u)], v_one);
// WGSL-NEXT:  }
// WGSL-NEXT:  }
// WGSL-NEXT:  workgroupBarrier();
// WGSL-NEXT:  let [[LANE:v.*]] = vyre_lid.x;
// WGSL-NEXT:  let [[COUNT:v.*]] = atomicLoad(&w___vyre_private_out[[[LANE]]]);
// WGSL-NEXT:  let [[ZERO:v.*]] = 0u;
// WGSL-NEXT:  let [[CHANGED:v.*]] = (!([[COUNT]] == [[ZERO]]));
// WGSL-NEXT:  if ([[CHANGED]]) {
// WGSL-NEXT:    atomicAdd(&b_out[[[LANE]]], [[COUNT]]);
// WGSL-NEXT:  }
// WGSL-NEXT: }

// -----

// min starts its copy at 0xFFFFFFFF (its identity): each invocation stores its
// share, then a barrier. 100 bins in a [16, 4, 1] workgroup (64 invocations):
// two chunks of the linear lane index, the second one guarded and clamped.
// The early return becomes an if around the rest, so every invocation reaches
// the barriers.
vyre.program @low workgroup_size [16, 4, 1] grid [63, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[1000]
  vyre.buffer @low binding 1 read_write : ui32[100]
  %i = vyre.invocation_id x
  %n = vyre.buf_len @x
  %outside = vyre.ge %i, %n : ui32
  vyre.if %outside {
    vyre.return
  }
  %v = vyre.load @x[%i] : ui32
  %b = vyre.const 7 : ui32
  %old = vyre.atomic min @low[%b], %v : ui32
}

// CHECK-LABEL: vyre.program @low
// CHECK:         vyre.buffer @__vyre_private_low workgroup : ui32[100]
// CHECK-NEXT:    %[[LX:.*]] = vyre.local_id x
// CHECK-NEXT:    %[[LY:.*]] = vyre.local_id y
// CHECK-NEXT:    %[[W:.*]] = vyre.const 16 : ui32
// CHECK-NEXT:    %[[ROW:.*]] = vyre.mul %[[LY]], %[[W]] : ui32
// CHECK-NEXT:    %[[LANE:.*]] = vyre.add %[[LX]], %[[ROW]] : ui32
// CHECK-NEXT:    %[[ID:.*]] = vyre.const 4294967295 : ui32
// CHECK-NEXT:    vyre.store @__vyre_private_low[%[[LANE]]] = %[[ID]] : ui32
// CHECK-NEXT:    %[[C64:.*]] = vyre.const 64 : ui32
// CHECK-NEXT:    %[[SECOND:.*]] = vyre.add %[[LANE]], %[[C64]] : ui32
// CHECK-NEXT:    %[[C100:.*]] = vyre.const 100 : ui32
// CHECK-NEXT:    %[[IN:.*]] = vyre.lt %[[SECOND]], %[[C100]] : ui32
// CHECK-NEXT:    vyre.if %[[IN]] {
// CHECK-NEXT:      %[[C99:.*]] = vyre.const 99 : ui32
// CHECK-NEXT:      %[[CLAMPED:.*]] = vyre.min %[[SECOND]], %[[C99]] : ui32
// CHECK:           vyre.store @__vyre_private_low[%[[CLAMPED]]] = %{{.*}} : ui32
// CHECK-NEXT:    }
// CHECK-NEXT:    vyre.barrier
// CHECK-NEXT:    vyre.region "vyre.privatize.body" {
// CHECK-NEXT:      %i = vyre.invocation_id x
// CHECK:           %[[STAY:.*]] = vyre.not %outside : i1
// CHECK-NEXT:      vyre.if %[[STAY]] {
// CHECK-NEXT:        %v = vyre.load @x[%i] : ui32
// CHECK-NEXT:        %b = vyre.const 7 : ui32
// CHECK-NEXT:        %old = vyre.atomic min @__vyre_private_low[%b], %v : ui32
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    vyre.barrier
// CHECK:         vyre.const 4294967295 : ui32
// CHECK:         vyre.atomic min @low
// CHECK:         vyre.atomic min @low

// -----

// Left alone: the old value is used; the buffer is also loaded; two kinds on
// one buffer; exchange (not associative); a workgroup of 16 invocations; more
// bins than 4 per invocation; 4000 bytes more where 14000 of the 16 KiB of
// workgroup storage are taken.
vyre.program @used workgroup_size [64, 1, 1] {
  vyre.buffer @c binding 0 read_write : ui32[4]
  vyre.buffer @o binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %old = vyre.atomic add @c[%z], %i : ui32
  vyre.store @o[%i] = %old : ui32
}
vyre.program @loaded workgroup_size [64, 1, 1] {
  vyre.buffer @c binding 0 read_write : ui32[4]
  vyre.buffer @o binding 1 write_only : ui32[64]
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %old = vyre.atomic add @c[%z], %i : ui32
  %seen = vyre.load @c[%z] : ui32
  vyre.store @o[%i] = %seen : ui32
}
vyre.program @mixed workgroup_size [64, 1, 1] {
  vyre.buffer @c binding 0 read_write : ui32[4]
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %a = vyre.atomic add @c[%z], %i : ui32
  %b = vyre.atomic max @c[%z], %i : ui32
}
vyre.program @exchange workgroup_size [64, 1, 1] {
  vyre.buffer @c binding 0 read_write : ui32[4]
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %a = vyre.atomic exchange @c[%z], %i : ui32
}
vyre.program @narrow workgroup_size [16, 1, 1] {
  vyre.buffer @c binding 0 read_write : ui32[4]
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %a = vyre.atomic add @c[%z], %i : ui32
}
vyre.program @wide workgroup_size [64, 1, 1] {
  vyre.buffer @c binding 0 read_write : ui32[257]
  %i = vyre.invocation_id x
  %a = vyre.atomic add @c[%i], %i : ui32
}
vyre.program @big workgroup_size [256, 1, 1] {
  vyre.buffer @c binding 0 read_write : ui32[1000]
  vyre.buffer @tile workgroup : ui32[3500]
  %i = vyre.invocation_id x
  %a = vyre.atomic add @c[%i], %i : ui32
}

// CHECK-LABEL: vyre.program @used
// CHECK-NOT:     __vyre_private
// CHECK-NOT:     vyre.barrier
// CHECK-LABEL: vyre.program @big
// CHECK-NOT:     __vyre_private
// CHECK-NOT:     vyre.barrier

// -----

// Left alone: a return that is not a top-level guard (inside a loop), and a
// grid_sync (vyre-lower privatizes each part after splitting instead).
vyre.program @nested workgroup_size [64, 1, 1] {
  vyre.buffer @c binding 0 read_write : ui32[4]
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %two = vyre.const 2 : ui32
  vyre.loop @k = %z to %two {
    %k = vyre.var @k : ui32
    %last = vyre.eq %k, %i : ui32
    vyre.if %last {
      vyre.return
    }
    %a = vyre.atomic add @c[%k], %i : ui32
  }
}
vyre.program @split workgroup_size [64, 1, 1] {
  vyre.buffer @c binding 0 read_write : ui32[4]
  %i = vyre.invocation_id x
  %z = vyre.const 0 : ui32
  %a = vyre.atomic add @c[%z], %i : ui32
  vyre.barrier grid_sync
  %b = vyre.atomic add @c[%z], %i : ui32
}

// CHECK-LABEL: vyre.program @nested
// CHECK-NOT:     __vyre_private

// -----

// 2^21 elements in workgroups of 256: 8192 logical workgroups. The privatized
// kernel has no barrier, loop or other workgroup memory of its own, so each
// launched workgroup runs 8 of them between one zeroing and one flush (1024
// workgroups launched): 8 times fewer global atomics in the flush.
vyre.program @big_hist workgroup_size [256, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[2097152]
  vyre.buffer @out binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : ui32
  %one = vyre.const 1 : ui32
  %old = vyre.atomic add @out[%v], %one : ui32
}

// CHECK-LABEL: vyre.program @big_hist
// CHECK:         vyre.region "vyre.privatize.body" {

// WGSL-LABEL: // vyre kernel @big_hist
// WGSL:       // program workgroup [256, 1, 1], kernel workgroup [256, 1, 1], grid [8192, 1, 1], count [@x, @out]
// WGSL-NEXT:  // each workgroup runs 8 logical workgroups; launch grid [1024, 1, 1]
// WGSL:         workgroupBarrier();
// WGSL-NEXT:    // region "vyre.privatize.body", for 8 logical workgroups
// WGSL-NEXT:    let vyre_first_group = vyre_group * 8u;
// WGSL-NEXT:    for (var vyre_c: u32 = 0u; vyre_c < 8u; vyre_c = vyre_c + 1u) {
// WGSL-NEXT:      let vyre_group = vyre_first_group + vyre_c;
// WGSL-NEXT:      if (vyre_group >= 8192u) {
// WGSL-NEXT:        break;
// WGSL-NEXT:      }
// WGSL-NEXT:      let vyre_invocation = vyre_group * 256u + vyre_local;
// WGSL-NEXT:      let v_i = (vyre_group * 256u + vyre_lid.x);
// WGSL:           atomicAdd(&w___vyre_private_out[min(v_v, 256u - 1u)], v_one);
// WGSL-NEXT:      }
// WGSL-NEXT:    }
// WGSL-NEXT:    workgroupBarrier();
// WGSL:         atomicAdd(&b_out[

// -----

// Only the first 2 of the 16 workgroups can have an effect (an arm guard): the
// pass records it before adding the flush, which runs in every workgroup but
// finds only identities past them; lowering keeps the grid of 2.
vyre.program @arm workgroup_size [256, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[4096]
  vyre.buffer @out binding 1 write_only : ui32[256]
  %i = vyre.invocation_id x
  %limit = vyre.const 512 : ui32
  %inside = vyre.lt %i, %limit : ui32
  vyre.if %inside {
    %v = vyre.load @x[%i] : ui32
    %one = vyre.const 1 : ui32
    %old = vyre.atomic add @out[%v], %one : ui32
  }
}

// CHECK-LABEL: vyre.program @arm {active_workgroups = 2 : i64} workgroup_size [256, 1, 1] {
// CHECK:         vyre.buffer @__vyre_private_out workgroup : ui32[256]
// CHECK:         vyre.region "vyre.privatize.body" {

// WGSL-LABEL: // vyre kernel @arm
// WGSL:       // program workgroup [256, 1, 1], kernel workgroup [256, 1, 1], grid [2, 1, 1], count [@x, @out]
// WGSL:         atomicAdd(&w___vyre_private_out[
