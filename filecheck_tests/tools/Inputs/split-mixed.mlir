vyre.program @first workgroup_size [1, 1, 1] {
  vyre.buffer @o binding 0 write_only : ui32[1]
}

// -----

vyre.program @second workgroup_size [1, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[4]
  %i = vyre.invocation_id x
  %v = vyre.const 1.0 : f32
  vyre.store @x[%i] = %v : f32
}

// -----

vyre.program @third workgroup_size [1, 1, 1] {
  vyre.buffer @o binding 0 write_only : ui32[1]
}
