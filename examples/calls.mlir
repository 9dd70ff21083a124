// Functions beside the programs: y[i] = lerp(a[i], b[i], 0.25) + sum_below(i % 8).
// Calls are inlined (vyre-inline) before fusion, lowering and the interpreter run them.
vyre.func @lerp(%a: f32, %b: f32, %t: f32) -> f32 {
  %d = vyre.sub %b, %a : f32
  %m = vyre.mul %d, %t : f32
  %r = vyre.add %a, %m : f32
  vyre.yield %r : f32
}
vyre.func @sum_below(%n: ui32) -> ui32 {
  %zero = vyre.const 0 : ui32
  vyre.let @acc = %zero : ui32
  vyre.loop @k = %zero to %n {
    %k = vyre.var @k : ui32
    %acc = vyre.var @acc : ui32
    %next = vyre.add %acc, %k : ui32
    vyre.assign @acc = %next : ui32
  }
  %total = vyre.var @acc : ui32
  vyre.yield %total : ui32
}
vyre.program @blend workgroup_size [64, 1, 1] {
  vyre.buffer @a binding 0 read_only : f32[256]
  vyre.buffer @b binding 1 read_only : f32[256]
  vyre.buffer @y binding 2 write_only : f32[256]
  %i = vyre.invocation_id x
  %av = vyre.load @a[%i] : f32
  %bv = vyre.load @b[%i] : f32
  %t = vyre.const 0.25 : f32
  %l = vyre.call @lerp(%av, %bv, %t) : f32
  %seven = vyre.const 7 : ui32
  %n = vyre.bit_and %i, %seven : ui32
  %s = vyre.call @sum_below(%n) : ui32
  %sf = vyre.cast %s : ui32 to f32
  %r = vyre.add %l, %sf : f32
  vyre.store @y[%i] = %r : f32
}
