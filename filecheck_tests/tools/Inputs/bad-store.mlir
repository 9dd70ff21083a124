vyre.program @p workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[4]
  %i = vyre.invocation_id x
  %v = vyre.const 1.0 : f32
  vyre.store @x[%i] = %v : f32
}
