// vyre-run prints each output buffer: name, dtype, element count, and the values when
// there are at most 16; --output-dir writes NAME.npy per output instead. The cases run
// in one process (vyre_xdsl.testing.cli_batch); one RUN line launches the executable.

// RUN: %python -c "import numpy as np; np.save('%t.x.npy', np.arange(4, dtype=np.float32)); np.save('%t.y.npy', np.full(4, 0.5, np.float32)); np.save('%t.c.npy', np.array([1, 0, 7, 0], np.uint32))"
// RUN: rm -rf %t.out
// RUN: %python -m vyre_xdsl.testing.cli_batch %s %t > %t.batch
// RUN: filecheck %s < %t.batch
// RUN: vyre-run %s --backend reference --input x=%t.x.npy --input y=%t.y.npy --input c=%t.c.npy | filecheck %s --check-prefix=PRINTED

// CASE printed: vyre-run %s --backend reference --input x=%t.x.npy --input y=%t.y.npy --input c=%t.c.npy
// CHECK-LABEL: == printed: exit 0
// CHECK-NEXT: y: float32[4] = [0.5, 2.5, 4.5, 6.5]
// CHECK-NEXT: flags: bool[4] = [True, False, True, False]
// CHECK-NEXT: count: uint32[1] = [2]
// CHECK-NEXT: wide: int32[20] = [{{.*}}, ...] (20 values; --output-dir DIR saves them)
// CHECK-NOT:  {{.}}
// PRINTED:      y: float32[4] = [0.5, 2.5, 4.5, 6.5]
// PRINTED-NEXT: flags: bool[4] = [True, False, True, False]
// PRINTED-NEXT: count: uint32[1] = [2]
// PRINTED-NEXT: wide: int32[20] = [{{.*}}, ...] (20 values; --output-dir DIR saves them)
// PRINTED-NOT:  {{.}}

// CASE stdin: vyre-run - --backend reference --input x=%t.x.npy --input y=%t.y.npy --input c=%t.c.npy < %s
// CHECK-LABEL: == stdin: exit 0
// CHECK-NEXT: y: float32[4] = [0.5, 2.5, 4.5, 6.5]
// CHECK-NEXT: flags: bool[4] = [True, False, True, False]
// CHECK-NEXT: count: uint32[1] = [2]
// CHECK-NEXT: wide: int32[20] = [{{.*}}, ...] (20 values; --output-dir DIR saves them)
// CHECK-NOT:  {{.}}

// --output-dir: files instead of printed values.
// CASE saved: vyre-run %s --backend reference --input x=%t.x.npy --input y=%t.y.npy --input c=%t.c.npy --output-dir %t.out
// CHECK-LABEL: == saved: exit 0
// CHECK-NOT:  {{.}}
// RUN: %python -c "import numpy as np, os; print(sorted(os.listdir('%t.out'))); print(np.load('%t.out/y.npy').tolist(), np.load('%t.out/wide.npy').tolist())" | filecheck %s --check-prefix=SAVED
// SAVED:      ['count.npy', 'flags.npy', 'wide.npy', 'y.npy']
// SAVED-NEXT: [0.5, 2.5, 4.5, 6.5] [0, -1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16, -17, -18, -19]

// --random-inputs fills every input that --input does not give, deterministically.
// CASE random1: vyre-run %s --backend reference --random-inputs 7 --input x=%t.x.npy
// CHECK-LABEL: == random1: exit 0
// CHECK-NEXT: [[Y:y: float32.4. = .*]]
// CHECK-NEXT: [[FLAGS:flags: bool.4. = .*]]
// CHECK-NEXT: [[COUNT:count: uint32.1. = .*]]
// CHECK-NEXT: wide: int32[20]
// CASE random2: vyre-run %s --backend reference --random-inputs 7 --input x=%t.x.npy
// CHECK-LABEL: == random2: exit 0
// CHECK-NEXT: [[Y]]
// CHECK-NEXT: [[FLAGS]]
// CHECK-NEXT: [[COUNT]]

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
