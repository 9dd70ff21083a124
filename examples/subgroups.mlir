// Subgroup collectives whose results do not depend on the subgroup size (the GPU's, or
// the reference interpreter's simulated one): every value reduced or broadcast here is
// the same in all lanes of a workgroup, a shuffle reads the lane's own value, and the
// ballot asks whether a lane is its subgroup's first.
vyre.program @subgroups workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : ui32[256]
  vyre.buffer @wg_max binding 1 write_only : ui32[256]
  vyre.buffer @own binding 2 write_only : ui32[256]
  vyre.buffer @leader_mask binding 3 write_only : ui32[256]
  vyre.buffer @has_lanes binding 4 write_only : ui32[256]
  %i = vyre.invocation_id x
  %w = vyre.workgroup_id x
  %m = vyre.subgroup_reduce max %w : ui32
  %zero = vyre.const 0 : ui32
  %b = vyre.subgroup_broadcast %m, %zero : ui32
  vyre.store @wg_max[%i] = %b : ui32
  %v = vyre.load @x[%i] : ui32
  %lane = vyre.subgroup_local_id
  %mine = vyre.subgroup_shuffle %v, %lane : ui32
  vyre.store @own[%i] = %mine : ui32
  %first = vyre.eq %lane, %zero : ui32
  %mask = vyre.subgroup_ballot %first
  vyre.store @leader_mask[%i] = %mask : ui32
  %n = vyre.subgroup_size
  %one = vyre.const 1 : ui32
  %some = vyre.min %n, %one : ui32
  vyre.store @has_lanes[%i] = %some : ui32
}
