// vyre-run prints each output buffer: name, dtype, element count, and the values when
// there are at most 16; --output-dir writes NAME.npy per output instead.

// RUN: %python -c "import numpy as np; np.save('%t.x.npy', np.arange(4, dtype=np.float32)); np.save('%t.y.npy', np.full(4, 0.5, np.float32)); np.save('%t.c.npy', np.array([1, 0, 7, 0], np.uint32))"
// RUN: vyre-run %s --backend reference --input x=%t.x.npy --input y=%t.y.npy --input c=%t.c.npy | filecheck %s
// RUN: cat %s | vyre-run - --backend reference --input x=%t.x.npy --input y=%t.y.npy --input c=%t.c.npy | filecheck %s

// CHECK:      y: float32[4] = [0.5, 2.5, 4.5, 6.5]
// CHECK-NEXT: flags: bool[4] = [True, False, True, False]
// CHECK-NEXT: count: uint32[1] = [2]
// CHECK-NEXT: wide: int32[20] = [{{.*}}, ...] (20 values; --output-dir DIR saves them)
// CHECK-NOT:  {{.}}

// RUN: rm -rf %t.out
// RUN: vyre-run %s --backend reference --input x=%t.x.npy --input y=%t.y.npy --input c=%t.c.npy --output-dir %t.out > %t.stdout
// RUN: %python -c "import os; assert os.path.getsize('%t.stdout') == 0, 'output printed'"
// RUN: %python -c "import numpy as np, os; print(sorted(os.listdir('%t.out'))); print(np.load('%t.out/y.npy').tolist(), np.load('%t.out/wide.npy').tolist())" | filecheck %s --check-prefix=SAVED
// SAVED:      ['count.npy', 'flags.npy', 'wide.npy', 'y.npy']
// SAVED-NEXT: [0.5, 2.5, 4.5, 6.5] [0, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16, -17, -18, -19]

// --random-inputs fills every input that --input does not give, deterministically.
// RUN: vyre-run %s --backend reference --random-inputs 7 --input x=%t.x.npy > %t.r1
// RUN: vyre-run %s --backend reference --random-inputs 7 --input x=%t.x.npy > %t.r2
// RUN: diff %t.r1 %t.r2
// RUN: filecheck %s --check-prefix=RANDOM < %t.r1
// RANDOM: y: float32[4] = [
// RANDOM: wide: int32[20]

vyre.program @axpy workgroup_size [64, 1, 1] {
  vyre.buffer @x binding 0 read_only : f32[4]
  vyre.buffer @y binding 1 read_write : f32[4]
  vyre.buffer @c binding 2 read_only : i1[4]
  vyre.buffer @flags binding 3 write_only : i1[4]
  vyre.buffer @count binding 4 write_only : ui32[1]
  vyre.buffer @wide binding 5 write_only : si32[20]
  %i = vyre.invocation_id x
  %a = vyre.const 2.0 : f32
  %xv = vyre.load @x[%i] : f32
  %yv = vyre.load @y[%i] : f32
  %p = vyre.mul %a, %xv : f32
  %s = vyre.add %p, %yv : f32
  vyre.store @y[%i] = %s : f32
  %b = vyre.load @c[%i] : i1
  vyre.store @flags[%i] = %b : i1
  %n = vyre.buf_len @c
  %inside = vyre.lt %i, %n : ui32
  %hit = vyre.and %b, %inside : i1
  vyre.if %hit {
    %z = vyre.const 0 : ui32
    %one = vyre.const 1 : ui32
    %old = vyre.atomic add @count[%z], %one : ui32
  }
  %si = vyre.bitcast %i : ui32 to si32
  %neg = vyre.neg %si : si32
  vyre.store @wide[%i] = %neg : si32
}
