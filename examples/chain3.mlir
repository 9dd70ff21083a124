// A three-program elementwise chain: t1 = x * 2, t2 = t1 + 1, out = t2 * t2.
// t1 and t2 are intermediates (written, then only read by later programs).
vyre.program @scale workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[4096]
  vyre.buffer @t1 binding 1 write_only : f32[4096]
  %i = vyre.invocation_id x
  %two = vyre.const 2.0 : f32
  %v = vyre.load @x[%i] : f32
  %r = vyre.mul %v, %two : f32
  vyre.store @t1[%i] = %r : f32
}
vyre.program @shift workgroup_size [64, 1, 1] {
  vyre.buffer @t1 binding 0 read_only : f32[4096]
  vyre.buffer @t2 binding 1 write_only : f32[4096]
  %i = vyre.invocation_id x
  %one = vyre.const 1.0 : f32
  %v = vyre.load @t1[%i] : f32
  %r = vyre.add %v, %one : f32
  vyre.store @t2[%i] = %r : f32
}
vyre.program @square workgroup_size [64, 1, 1] {
  vyre.buffer @t2 binding 0 read_only : f32[4096]
  vyre.buffer @out binding 1 write_only : f32[4096]
  %i = vyre.invocation_id x
  %v = vyre.load @t2[%i] : f32
  %r = vyre.mul %v, %v : f32
  vyre.store @out[%i] = %r : f32
}
