// RUN: %python -m vyre_xdsl.testing.cli_batch \
// RUN:   --run "xdsl-opt %s --split-input-file -p vyre-scalar-replace > %t.xdsl" \
// RUN:   --run "vyre-opt %s --split-input-file -p vyre-scalar-replace > %t.vyre"
// RUN: filecheck %s < %t.vyre
// RUN: diff %t.vyre %t.xdsl

// PolyBench's CUDA gemm: C[i, j] is scaled, then accumulated in memory. Each
// invocation owns its element (row * 10 + col over 12 x 10 guarded outputs), so
// the element is kept in @C_elem across the loop and stored once at the end.
vyre.program @gemm workgroup_size [8, 8, 1] grid [2, 2, 1] {
  vyre.buffer @A binding 0 read_only : f32[192]
  vyre.buffer @B binding 1 read_only : f32[160]
  vyre.buffer @C binding 2 read_write : f32[120]
  %col = vyre.invocation_id x
  %row = vyre.invocation_id y
  %ni = vyre.const 12 : ui32
  %nj = vyre.const 10 : ui32
  %nk = vyre.const 16 : ui32
  %lo = vyre.const 0 : ui32
  %beta = vyre.const 0.5 : f32
  %in_col = vyre.lt %col, %nj : ui32
  %in_row = vyre.lt %row, %ni : ui32
  %inside = vyre.and %in_col, %in_row : i1
  vyre.if %inside {
    %rc = vyre.mul %row, %nj : ui32
    %ic = vyre.add %rc, %col : ui32
    %c = vyre.load @C[%ic] : f32
    %cb = vyre.mul %c, %beta : f32
    vyre.store @C[%ic] = %cb : f32
    vyre.loop @k = %lo to %nk {
      %kv = vyre.var @k : ui32
      %ra = vyre.mul %row, %nk : ui32
      %ia = vyre.add %ra, %kv : ui32
      %a = vyre.load @A[%ia] : f32
      %rb = vyre.mul %kv, %nj : ui32
      %ib = vyre.add %rb, %col : ui32
      %b = vyre.load @B[%ib] : f32
      %p = vyre.mul %a, %b : f32
      %rc2 = vyre.mul %row, %nj : ui32
      %ic2 = vyre.add %rc2, %col : ui32
      %cur = vyre.load @C[%ic2] : f32
      %next = vyre.add %cur, %p : f32
      vyre.store @C[%ic2] = %next : f32
    }
  }
}

// CHECK-LABEL: vyre.program @gemm
// CHECK:         vyre.if %inside {
// CHECK:           %c = vyre.load @C[%ic] : f32
// CHECK-NEXT:      %cb = vyre.mul %c, %beta : f32
// CHECK-NEXT:      vyre.let @C_elem = %cb : f32
// CHECK-NEXT:      vyre.loop @k = %lo to %nk {
// CHECK-NOT:         vyre.load @C
// CHECK:             %cur = vyre.var @C_elem : f32
// CHECK-NEXT:        %next = vyre.add %cur, %p : f32
// CHECK-NEXT:        vyre.assign @C_elem = %next : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[LAST:.*]] = vyre.var @C_elem : f32
// CHECK-NEXT:      vyre.store @C[%ic] = %[[LAST]] : f32
// CHECK-NEXT:    }

// -----

// PolyBench's atax, first kernel, on a derived grid (as many invocations as
// @A has elements) under its guard i < 64: tmp[i] is zeroed, then accumulated
// over a row. The stored zero starts the local; no load is left.
vyre.program @atax workgroup_size [64, 1, 1] {
  vyre.buffer @A binding 0 read_only : f32[4096]
  vyre.buffer @x binding 1 read_only : f32[64]
  vyre.buffer @tmp binding 2 read_write : f32[64]
  %i = vyre.invocation_id x
  %n = vyre.const 64 : ui32
  %lo = vyre.const 0 : ui32
  %zero = vyre.const 0.0 : f32
  %inside = vyre.lt %i, %n : ui32
  vyre.if %inside {
    vyre.store @tmp[%i] = %zero : f32
    vyre.loop @j = %lo to %n {
      %jv = vyre.var @j : ui32
      %ri = vyre.mul %i, %n : ui32
      %ia = vyre.add %ri, %jv : ui32
      %a = vyre.load @A[%ia] : f32
      %xv = vyre.load @x[%jv] : f32
      %p = vyre.mul %a, %xv : f32
      %t = vyre.load @tmp[%i] : f32
      %s = vyre.add %t, %p : f32
      vyre.store @tmp[%i] = %s : f32
    }
  }
}

// CHECK-LABEL: vyre.program @atax
// CHECK:         vyre.if %inside {
// CHECK-NEXT:      vyre.let @tmp_elem = %zero : f32
// CHECK-NEXT:      vyre.loop @j = %lo to %n {
// CHECK:             %t = vyre.var @tmp_elem : f32
// CHECK:             vyre.assign @tmp_elem = %s : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[LAST:.*]] = vyre.var @tmp_elem : f32
// CHECK-NEXT:      vyre.store @tmp[%i] = %[[LAST]] : f32
// CHECK-NOT:       vyre.load @tmp

// -----

// The same without its guard: the invocations past 63 would store out of bounds,
// where memory keeps nothing and a load gives zero, so a local could differ.
// Left alone.
vyre.program @unguarded workgroup_size [64, 1, 1] {
  vyre.buffer @A binding 0 read_only : f32[4096]
  vyre.buffer @tmp binding 1 read_write : f32[64]
  %i = vyre.invocation_id x
  %n = vyre.const 64 : ui32
  %lo = vyre.const 0 : ui32
  %zero = vyre.const 0.0 : f32
  vyre.store @tmp[%i] = %zero : f32
  vyre.loop @j = %lo to %n {
    %jv = vyre.var @j : ui32
    %ri = vyre.mul %i, %n : ui32
    %ia = vyre.add %ri, %jv : ui32
    %a = vyre.load @A[%ia] : f32
    %t = vyre.load @tmp[%i] : f32
    %s = vyre.add %t, %a : f32
    vyre.store @tmp[%i] = %s : f32
  }
}

// CHECK-LABEL: vyre.program @unguarded
// CHECK-NOT:     vyre.let
// CHECK:         %t = vyre.load @tmp[%i] : f32

// -----

// The first access is inside the loop, at an index computed there: the element
// is loaded before the loop from a copy of that index, and stored after it.
vyre.program @inloop workgroup_size [64, 1, 1] grid [1, 1, 1] {
  vyre.buffer @acc binding 0 read_write : ui32[64]
  %lo = vyre.const 0 : ui32
  %n = vyre.const 8 : ui32
  vyre.loop @j = %lo to %n {
    %i = vyre.invocation_id x
    %one = vyre.const 1 : ui32
    %t = vyre.load @acc[%i] : ui32
    %s = vyre.add %t, %one : ui32
    vyre.store @acc[%i] = %s : ui32
  }
}

// CHECK-LABEL: vyre.program @inloop
// CHECK:         %[[I:.*]] = vyre.invocation_id x
// CHECK-NEXT:    %[[FIRST:.*]] = vyre.load @acc[%[[I]]] : ui32
// CHECK-NEXT:    vyre.let @acc_elem = %[[FIRST]] : ui32
// CHECK-NEXT:    vyre.loop @j = %lo to %n {
// CHECK:           %t = vyre.var @acc_elem : ui32
// CHECK:           vyre.assign @acc_elem = %s : ui32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[LAST:.*]] = vyre.var @acc_elem : ui32
// CHECK-NEXT:    %[[I2:.*]] = vyre.invocation_id x
// CHECK-NEXT:    vyre.store @acc[%[[I2]]] = %[[LAST]] : ui32

// -----

// Every invocation of a row accumulates into out[row]: the element is shared
// (the columns of a row race), so nothing changes.
vyre.program @shared workgroup_size [8, 8, 1] grid [1, 1, 1] {
  vyre.buffer @out binding 0 read_write : f32[8]
  %col = vyre.invocation_id x
  %row = vyre.invocation_id y
  %lo = vyre.const 0 : ui32
  %n = vyre.const 4 : ui32
  %one = vyre.const 1.0 : f32
  vyre.loop @k = %lo to %n {
    %t = vyre.load @out[%row] : f32
    %s = vyre.add %t, %one : f32
    vyre.store @out[%row] = %s : f32
  }
}

// CHECK-LABEL: vyre.program @shared
// CHECK-NOT:     vyre.let
// CHECK:         %t = vyre.load @out[%row] : f32
// CHECK:         vyre.store @out[%row] = %s : f32

// -----

// Loads and stores at two indices (i and i + 1): not one element, left alone.
vyre.program @two workgroup_size [64, 1, 1] grid [1, 1, 1] {
  vyre.buffer @v binding 0 read_write : f32[65]
  %i = vyre.invocation_id x
  %one = vyre.const 1 : ui32
  %next = vyre.add %i, %one : ui32
  %lo = vyre.const 0 : ui32
  %n = vyre.const 4 : ui32
  vyre.loop @k = %lo to %n {
    %t = vyre.load @v[%next] : f32
    vyre.store @v[%i] = %t : f32
  }
}

// CHECK-LABEL: vyre.program @two
// CHECK-NOT:     vyre.let
// CHECK:         %t = vyre.load @v[%next] : f32
// CHECK-NEXT:    vyre.store @v[%i] = %t : f32

// -----

// A return could end the invocation before the store at the block's end:
// left alone.
vyre.program @early workgroup_size [64, 1, 1] grid [1, 1, 1] {
  vyre.buffer @v binding 0 read_write : f32[64]
  %i = vyre.invocation_id x
  %lo = vyre.const 0 : ui32
  %n = vyre.const 4 : ui32
  %one = vyre.const 1.0 : f32
  vyre.loop @k = %lo to %n {
    %t = vyre.load @v[%i] : f32
    %s = vyre.add %t, %one : f32
    vyre.store @v[%i] = %s : f32
  }
  vyre.return
}

// CHECK-LABEL: vyre.program @early
// CHECK-NOT:     vyre.let
// CHECK:         %t = vyre.load @v[%i] : f32
