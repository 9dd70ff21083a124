// vyre kernel @subgroup_tree id e9307249fb18da355818e498b64b1054bf6694efa60da127f69b95975e37f82a
// program workgroup [256, 1, 1], kernel workgroup [256, 1, 1], grid [61681, 17, 1], count [@x, @p]
@group(0) @binding(0) var<storage, read> b_x: array<f32>;
@group(0) @binding(1) var<storage, read_write> b_p: array<f32>;
var<workgroup> w_partials: array<f32, 256>;
@group(0) @binding(2) var<storage, read_write> vyre_trap_sidecar: array<atomic<u32>>;

fn vyre_loop_left_early() {
  atomicOr(&vyre_trap_sidecar[3], 2u);
}

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) vyre_wid: vec3<u32>, @builtin(local_invocation_id) vyre_lid: vec3<u32>, @builtin(num_workgroups) vyre_nwg: vec3<u32>, @builtin(subgroup_size) vyre_sg_size: u32, @builtin(subgroup_invocation_id) vyre_sg_id: u32) {
  let vyre_group = vyre_wid.x + (vyre_wid.y + vyre_wid.z * vyre_nwg.y) * vyre_nwg.x;
  let vyre_local = vyre_lid.x + vyre_lid.y * 256u + vyre_lid.z * 256u;
  let vyre_invocation = vyre_group * 256u + vyre_local;
  for (var vyre_z: u32 = vyre_local; vyre_z < 256u; vyre_z = vyre_z + 256u) {
    w_partials[vyre_z] = 0.0f;
  }
  workgroupBarrier();
  let v_i = (vyre_group * 256u + vyre_lid.x);
  let v_l = vyre_lid.x;
  let v_w = vyre_group;
  let v_zero = 0u;
  let v_v = select(0.0f, b_x[min(v_i, 268435456u - 1u)], v_i < 268435456u);
  let v_s = subgroupAdd(v_v);
  let v_size = vyre_sg_size;
  let v_lane = vyre_sg_id;
  let v_lead = (v_lane == v_zero);
  if (v_lead) {
    let v_g = select(v_l / select(v_size, 1u, v_size == 0u), 4294967295u, v_size == 0u);
    if (v_g < 256u) {
      w_partials[min(v_g, 256u - 1u)] = v_s;
    }
  }
  workgroupBarrier();
  let v_first = (v_l == v_zero);
  if (v_first) {
    let v_width = 256u;
    let v_count = select(v_width / select(v_size, 1u, v_size == 0u), 4294967295u, v_size == 0u);
    let v_fzero = 0.0f;
    var l_acc: f32 = v_fzero;
    var i_k: u32 = v_zero;
    for (; i_k < v_count; i_k = i_k + 1u) {
      let v_k = i_k;
      let v_q = select(0.0f, w_partials[min(v_k, 256u - 1u)], v_k < 256u);
      let v_a = l_acc;
      let v_t = (v_a + v_q);
      l_acc = v_t;
    }
    if (i_k < v_count) {
      vyre_loop_left_early();
    }
    let v_total = l_acc;
    if (v_w < 1048576u) {
      b_p[v_w] = v_total;
    }
  }
}
