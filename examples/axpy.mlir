// y = a * x + y over 1024 f32 elements.
vyre.program @axpy workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[1024]
  vyre.buffer @y binding 1 read_write : f32[1024]
  %i = vyre.invocation_id x
  %a = vyre.const 2.0 : f32
  %xv = vyre.load @x[%i] : f32
  %yv = vyre.load @y[%i] : f32
  %p = vyre.mul %a, %xv : f32
  %s = vyre.add %p, %yv : f32
  vyre.store @y[%i] = %s : f32
}
