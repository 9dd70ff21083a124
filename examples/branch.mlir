// out[i] = x[i] * 2 where x[i] > 0, else -x[i]; a branch per element.
vyre.program @relu_like workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : si32[2048]
  vyre.buffer @out binding 1 write_only : si32[2048]
  %i = vyre.invocation_id x
  %v = vyre.load @x[%i] : si32
  %zero = vyre.const 0 : si32
  %positive = vyre.gt %v, %zero : si32
  vyre.if %positive {
    %two = vyre.const 2 : si32
    %d = vyre.mul %v, %two : si32
    vyre.store @out[%i] = %d : si32
  } else {
    %n = vyre.neg %v : si32
    vyre.store @out[%i] = %n : si32
  }
}
