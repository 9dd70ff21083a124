// PolyBench fdtd-2d (MINI: NX = 20, NY = 30, TMAX = 20), one time step t written
// once; row-major NX x NY arrays, g = i * NY + j. `_fict_[t]` is read through
// vyre.repetition, so run it with `--repeat T` (T <= 20) or `repeat=T`:
//   ey[0][j] = _fict_[t]
//   ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i-1][j])                      i >= 1
//   ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j-1])                      j >= 1
//   hz[i][j] = hz[i][j] - 0.7 * (ex[i][j+1] - ex[i][j] + ey[i+1][j] - ey[i][j])
//                                                             i < NX-1, j < NY-1
vyre.program @fdtd_ey workgroup_size [64, 1, 1] {
  vyre.buffer @fict binding 0 read_only : f32[20]
  vyre.buffer @ey binding 1 read_write : f32[600]
  vyre.buffer @hz binding 2 read_only : f32[600]
  %g = vyre.invocation_id x
  %cells = vyre.const 600 : ui32
  %ny = vyre.const 30 : ui32
  %zero = vyre.const 0 : ui32
  %valid = vyre.lt %g, %cells : ui32
  vyre.if %valid {
    %i = vyre.div %g, %ny : ui32
    %first = vyre.eq %i, %zero : ui32
    vyre.if %first {
      %t = vyre.repetition
      %f = vyre.load @fict[%t] : f32
      vyre.store @ey[%g] = %f : f32
    } else {
      %up = vyre.sub %g, %ny : ui32
      %e = vyre.load @ey[%g] : f32
      %h = vyre.load @hz[%g] : f32
      %hu = vyre.load @hz[%up] : f32
      %d = vyre.sub %h, %hu : f32
      %half = vyre.const 0.5 : f32
      %c = vyre.mul %half, %d : f32
      %n = vyre.sub %e, %c : f32
      vyre.store @ey[%g] = %n : f32
    }
  }
}
vyre.program @fdtd_ex workgroup_size [64, 1, 1] {
  vyre.buffer @ex binding 0 read_write : f32[600]
  vyre.buffer @hz binding 1 read_only : f32[600]
  %g = vyre.invocation_id x
  %cells = vyre.const 600 : ui32
  %ny = vyre.const 30 : ui32
  %one = vyre.const 1 : ui32
  %j = vyre.mod %g, %ny : ui32
  %valid = vyre.lt %g, %cells : ui32
  %inner = vyre.ge %j, %one : ui32
  %update = vyre.and %valid, %inner : i1
  vyre.if %update {
    %left = vyre.sub %g, %one : ui32
    %e = vyre.load @ex[%g] : f32
    %h = vyre.load @hz[%g] : f32
    %hl = vyre.load @hz[%left] : f32
    %d = vyre.sub %h, %hl : f32
    %half = vyre.const 0.5 : f32
    %c = vyre.mul %half, %d : f32
    %n = vyre.sub %e, %c : f32
    vyre.store @ex[%g] = %n : f32
  }
}
vyre.program @fdtd_hz workgroup_size [64, 1, 1] {
  vyre.buffer @ex binding 0 read_only : f32[600]
  vyre.buffer @ey binding 1 read_only : f32[600]
  vyre.buffer @hz binding 2 read_write : f32[600]
  %g = vyre.invocation_id x
  %ny = vyre.const 30 : ui32
  %one = vyre.const 1 : ui32
  %last_i = vyre.const 19 : ui32
  %last_j = vyre.const 29 : ui32
  %i = vyre.div %g, %ny : ui32
  %j = vyre.mod %g, %ny : ui32
  %in_i = vyre.lt %i, %last_i : ui32
  %in_j = vyre.lt %j, %last_j : ui32
  %update = vyre.and %in_i, %in_j : i1
  vyre.if %update {
    %right = vyre.add %g, %one : ui32
    %down = vyre.add %g, %ny : ui32
    %x1 = vyre.load @ex[%right] : f32
    %x0 = vyre.load @ex[%g] : f32
    %y1 = vyre.load @ey[%down] : f32
    %y0 = vyre.load @ey[%g] : f32
    %h = vyre.load @hz[%g] : f32
    %a = vyre.sub %x1, %x0 : f32
    %b = vyre.add %a, %y1 : f32
    %c = vyre.sub %b, %y0 : f32
    %k = vyre.const 0.7 : f32
    %m = vyre.mul %k, %c : f32
    %n = vyre.sub %h, %m : f32
    vyre.store @hz[%g] = %n : f32
  }
}
