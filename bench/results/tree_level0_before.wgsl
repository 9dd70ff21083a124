@group(0) @binding(0) var<storage, read> b_x: array<f32>;
@group(0) @binding(1) var<storage, read_write> b_p0: array<f32>;
var<workgroup> w_tile_level0: array<f32, 256>;
@group(0) @binding(2) var<storage, read_write> vyre_trap_sidecar: array<atomic<u32>>;

fn vyre_loop_left_early() {
  atomicOr(&vyre_trap_sidecar[3], 2u);
}

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) vyre_wid: vec3<u32>, @builtin(local_invocation_id) vyre_lid: vec3<u32>, @builtin(num_workgroups) vyre_nwg: vec3<u32>) {
  let vyre_group = vyre_wid.x + (vyre_wid.y + vyre_wid.z * vyre_nwg.y) * vyre_nwg.x;
  let vyre_local = vyre_lid.x + vyre_lid.y * 256u + vyre_lid.z * 256u;
  let vyre_invocation = vyre_group * 256u + vyre_local;
  for (var vyre_z: u32 = vyre_local; vyre_z < 256u; vyre_z = vyre_z + 256u) {
    w_tile_level0[vyre_z] = 0.0f;
  }
  workgroupBarrier();
  let v_i = (vyre_group * 256u + vyre_lid.x);
  let v_l = vyre_lid.x;
  let v_w = vyre_group;
  let v_v = select(0.0f, b_x[min(v_i, 268435456u - 1u)], v_i < 268435456u);
  if (v_l < 256u) {
    w_tile_level0[min(v_l, 256u - 1u)] = v_v;
  }
  storageBarrier();
  workgroupBarrier();
  let v_zero = 0u;
  let v_levels = 8u;
  let v_half = 128u;
  var i_level: u32 = v_zero;
  for (; i_level < v_levels; i_level = i_level + 1u) {
    let v_level = i_level;
    let v_stride = (v_half >> (v_level & 31u));
    let v_active = (v_l < v_stride);
    if (v_active) {
      let v_j = (v_l + v_stride);
      let v_a = select(0.0f, w_tile_level0[min(v_l, 256u - 1u)], v_l < 256u);
      let v_b = select(0.0f, w_tile_level0[min(v_j, 256u - 1u)], v_j < 256u);
      let v_s = (v_a + v_b);
      if (v_l < 256u) {
        w_tile_level0[min(v_l, 256u - 1u)] = v_s;
      }
    }
    storageBarrier();
    workgroupBarrier();
  }
  if (i_level < v_levels) {
    vyre_loop_left_early();
  }
  let v_first = (v_l == v_zero);
  if (v_first) {
    let v_total = select(0.0f, w_tile_level0[min(v_zero, 256u - 1u)], v_zero < 256u);
    if (v_w < 1048576u) {
      b_p0[v_w] = v_total;
    }
  }
}
