// Each chunk breaks the -verify-diagnostics contract in one way.
vyre.program @missing workgroup_size [1, 1, 1] {
  vyre.buffer @o binding 0 write_only : ui32[1]
  // expected-error @+1 {{this error never comes}}
  %i = vyre.invocation_id x
}

// -----

vyre.program @unexpected workgroup_size [1, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[4]
  %i = vyre.invocation_id x
  %v = vyre.const 1.0 : f32
  vyre.store @x[%i] = %v : f32
}

// -----

vyre.program @mismatched workgroup_size [1, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[4]
  %i = vyre.invocation_id x
  %v = vyre.const 1.0 : f32
  // expected-error @+1 {{store to write_only buffer}}
  vyre.store @x[%i] = %v : f32
}

// -----

vyre.program @kind workgroup_size [1, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[4]
  %i = vyre.invocation_id x
  %v = vyre.const 1.0 : f32
  vyre.store @x[%i] = %v : f32 // expected-warning {{store to read_only buffer @x}}
}

// -----

vyre.program @wrong_line workgroup_size [1, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[4]
  %i = vyre.invocation_id x
  %v = vyre.const 1.0 : f32
  // expected-error @+2 {{store to read_only buffer @x}}
  vyre.store @x[%i] = %v : f32
}
