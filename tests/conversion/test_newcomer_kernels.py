"""Programs a newcomer writes in standard MLIR (docs/mlir-input.md), each run on the
reference interpreter and on wgpu (lavapipe) against numpy: PolyBench kernels
(atax, bicg, gesummv, doitgen, 2-D convolution, heat-3d, seidel-2d), a windowed
`linalg.generic`, a rank-0 memref, dynamic sizes, the `linalg` named ops
(transpose, broadcast, reduce, the convolutions, max pooling, the quantized
matmul) and a 2-D `gpu.launch_func`, plus the input mistakes a user makes with
runtime-sized memrefs.

Expected values come from numpy (float64, then compared with a stated
tolerance: GPU compilers may contract), integers exactly. Before the fixes this
file goes with, `linalg.transpose`/`broadcast`/`reduce` were refused,
`linalg.pooling_nchw_max` returned `max(last window element, 0)` instead of the
window's maximum (xDSL 0.74 generalizes it with the wrong body), a
`memref<?x16xf32>` input of 33 elements ran, and a `memref<?xi8>` of 5
elements came back with 8 (`memref.dim` counted the word padding).
"""

from __future__ import annotations

import numpy as np
import pytest

from vyre_xdsl import run
from vyre_xdsl.abi import InputShapeError
from vyre_xdsl.api import parse
from vyre_xdsl.diagnostics import VyreDiagnostic

BACKENDS = ("reference", "wgpu")
TOL = {"rtol": 1e-5, "atol": 1e-5}


def rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def zeros(*shape, dtype=np.float32):
    return np.zeros(shape, dtype)


ATAX = """
// PolyBench atax: tmp = A x ; y = A^T tmp
func.func @atax(%A: memref<12x10xf32>, %x: memref<10xf32>, %tmp: memref<12xf32>, %y: memref<10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = arith.constant 12 : index
  %n = arith.constant 10 : index
  %zero = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %m, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %s = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
      %a = memref.load %A[%i, %j] : memref<12x10xf32>
      %xv = memref.load %x[%j] : memref<10xf32>
      %p = arith.mulf %a, %xv : f32
      %t = arith.addf %acc, %p : f32
      scf.yield %t : f32
    }
    memref.store %s, %tmp[%i] : memref<12xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%j: index):
    %s = scf.for %i = %c0 to %m step %c1 iter_args(%acc = %zero) -> (f32) {
      %a = memref.load %A[%i, %j] : memref<12x10xf32>
      %tv = memref.load %tmp[%i] : memref<12xf32>
      %p = arith.mulf %a, %tv : f32
      %t = arith.addf %acc, %p : f32
      scf.yield %t : f32
    }
    memref.store %s, %y[%j] : memref<10xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
"""


BICG = """
// PolyBench bicg with linalg.generic: s = A^T r ; q = A p
#id2 = affine_map<(i, j) -> (i, j)>
#ri = affine_map<(i, j) -> (i)>
#rj = affine_map<(i, j) -> (j)>
func.func @bicg(%A: memref<9x7xf32>, %r: memref<9xf32>, %p: memref<7xf32>, %s: memref<7xf32>, %q: memref<9xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%s : memref<7xf32>)
  linalg.fill ins(%zero : f32) outs(%q : memref<9xf32>)
  // s[j] += r[i] * A[i, j]: j parallel, i reduction
  linalg.generic {indexing_maps = [affine_map<(j, i) -> (i, j)>, affine_map<(j, i) -> (i)>, affine_map<(j, i) -> (j)>], iterator_types = ["parallel", "reduction"]} ins(%A, %r : memref<9x7xf32>, memref<9xf32>) outs(%s : memref<7xf32>) {
  ^bb0(%a: f32, %rv: f32, %acc: f32):
    %m = arith.mulf %rv, %a : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#id2, #rj, #ri], iterator_types = ["parallel", "reduction"]} ins(%A, %p : memref<9x7xf32>, memref<7xf32>) outs(%q : memref<9xf32>) {
  ^bb0(%a: f32, %pv: f32, %acc: f32):
    %m = arith.mulf %a, %pv : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  }
  func.return
}
"""


GESUMMV = """
// PolyBench gesummv: y = alpha * A x + beta * B x, scalar arguments
func.func @gesummv(%alpha: f32, %beta: f32, %A: memref<?x16xf32>, %B: memref<?x16xf32>, %x: memref<16xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %y, %c0 : memref<?xf32>
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %r:2 = scf.for %j = %c0 to %c16 step %c1 iter_args(%ta = %zero, %tb = %zero) -> (f32, f32) {
      %a = memref.load %A[%i, %j] : memref<?x16xf32>
      %b = memref.load %B[%i, %j] : memref<?x16xf32>
      %xv = memref.load %x[%j] : memref<16xf32>
      %na = math.fma %a, %xv, %ta : f32
      %nb = math.fma %b, %xv, %tb : f32
      scf.yield %na, %nb : f32, f32
    }
    %pa = arith.mulf %alpha, %r#0 : f32
    %pb = arith.mulf %beta, %r#1 : f32
    %s = arith.addf %pa, %pb : f32
    memref.store %s, %y[%i] : memref<?xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
"""


DOITGEN = """
// PolyBench doitgen: A[r,q,p] = sum_s A[r,q,s] * C4[s,p], A read and written, through sum
func.func @doitgen(%A: memref<3x4x5xf32>, %C4: memref<5x5xf32>, %sum: memref<3x4x5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %c0, %c0, %c3, %c4, %c5, %c1, %c1, %c1) <{operandSegmentSizes = array<i32: 3, 3, 3, 0>}> ({
  ^bb0(%r: index, %q: index, %p: index):
    %t = scf.for %s = %c0 to %c5 step %c1 iter_args(%acc = %zero) -> (f32) {
      %a = memref.load %A[%r, %q, %s] : memref<3x4x5xf32>
      %c = memref.load %C4[%s, %p] : memref<5x5xf32>
      %m = arith.mulf %a, %c : f32
      %n = arith.addf %acc, %m : f32
      scf.yield %n : f32
    }
    memref.store %t, %sum[%r, %q, %p] : memref<3x4x5xf32>
    scf.reduce
  }) : (index, index, index, index, index, index, index, index, index) -> ()
  "scf.parallel"(%c0, %c0, %c0, %c3, %c4, %c5, %c1, %c1, %c1) <{operandSegmentSizes = array<i32: 3, 3, 3, 0>}> ({
  ^bb0(%r: index, %q: index, %p: index):
    %v = memref.load %sum[%r, %q, %p] : memref<3x4x5xf32>
    memref.store %v, %A[%r, %q, %p] : memref<3x4x5xf32>
    scf.reduce
  }) : (index, index, index, index, index, index, index, index, index) -> ()
  func.return
}
"""


CONV2D = """
// PolyBench 2D convolution over a 13 x 17 image, interior only
func.func @conv2d(%A: memref<13x17xf32>, %B: memref<13x17xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c12 = arith.constant 12 : index
  %c16 = arith.constant 16 : index
  %c11 = arith.constant 0.2 : f32
  %c21 = arith.constant 0.5 : f32
  %c31 = arith.constant -0.8 : f32
  %c12f = arith.constant -0.3 : f32
  %c22 = arith.constant 0.6 : f32
  %c32 = arith.constant -0.9 : f32
  %c13 = arith.constant 0.4 : f32
  %c23 = arith.constant 0.7 : f32
  %c33 = arith.constant 0.1 : f32
  "scf.parallel"(%c1, %c1, %c12, %c16, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %im = arith.subi %i, %c1 : index
    %ip = arith.addi %i, %c1 : index
    %jm = arith.subi %j, %c1 : index
    %jp = arith.addi %j, %c1 : index
    %a11 = memref.load %A[%im, %jm] : memref<13x17xf32>
    %a21 = memref.load %A[%i, %jm] : memref<13x17xf32>
    %a31 = memref.load %A[%ip, %jm] : memref<13x17xf32>
    %a12 = memref.load %A[%im, %j] : memref<13x17xf32>
    %a22 = memref.load %A[%i, %j] : memref<13x17xf32>
    %a32 = memref.load %A[%ip, %j] : memref<13x17xf32>
    %a13 = memref.load %A[%im, %jp] : memref<13x17xf32>
    %a23 = memref.load %A[%i, %jp] : memref<13x17xf32>
    %a33 = memref.load %A[%ip, %jp] : memref<13x17xf32>
    %t11 = arith.mulf %c11, %a11 : f32
    %t21 = arith.mulf %c21, %a21 : f32
    %t31 = arith.mulf %c31, %a31 : f32
    %t12 = arith.mulf %c12f, %a12 : f32
    %t22 = arith.mulf %c22, %a22 : f32
    %t32 = arith.mulf %c32, %a32 : f32
    %t13 = arith.mulf %c13, %a13 : f32
    %t23 = arith.mulf %c23, %a23 : f32
    %t33 = arith.mulf %c33, %a33 : f32
    %s1 = arith.addf %t11, %t21 : f32
    %s2 = arith.addf %s1, %t31 : f32
    %s3 = arith.addf %s2, %t12 : f32
    %s4 = arith.addf %s3, %t22 : f32
    %s5 = arith.addf %s4, %t32 : f32
    %s6 = arith.addf %s5, %t13 : f32
    %s7 = arith.addf %s6, %t23 : f32
    %s8 = arith.addf %s7, %t33 : f32
    memref.store %s8, %B[%i, %j] : memref<13x17xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  func.return
}
"""


HEAT3D = """
// PolyBench heat-3d, one half step: B = A + 0.125 * laplacian(A) over the interior of 6 x 7 x 9
func.func @heat3d(%A: memref<6x7x9xf32>, %B: memref<6x7x9xf32>) {
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %k = arith.constant 0.125 : f32
  %two = arith.constant 2.0 : f32
  "scf.parallel"(%c1, %c1, %c1, %c5, %c6, %c8, %c1, %c1, %c1) <{operandSegmentSizes = array<i32: 3, 3, 3, 0>}> ({
  ^bb0(%i: index, %j: index, %l: index):
    %im = arith.subi %i, %c1 : index
    %ip = arith.addi %i, %c1 : index
    %jm = arith.subi %j, %c1 : index
    %jp = arith.addi %j, %c1 : index
    %lm = arith.subi %l, %c1 : index
    %lp = arith.addi %l, %c1 : index
    %c = memref.load %A[%i, %j, %l] : memref<6x7x9xf32>
    %c2 = arith.mulf %two, %c : f32
    %xi0 = memref.load %A[%ip, %j, %l] : memref<6x7x9xf32>
    %xi1 = memref.load %A[%im, %j, %l] : memref<6x7x9xf32>
    %xj0 = memref.load %A[%i, %jp, %l] : memref<6x7x9xf32>
    %xj1 = memref.load %A[%i, %jm, %l] : memref<6x7x9xf32>
    %xl0 = memref.load %A[%i, %j, %lp] : memref<6x7x9xf32>
    %xl1 = memref.load %A[%i, %j, %lm] : memref<6x7x9xf32>
    %di0 = arith.subf %xi0, %c2 : f32
    %di = arith.addf %di0, %xi1 : f32
    %dj0 = arith.subf %xj0, %c2 : f32
    %dj = arith.addf %dj0, %xj1 : f32
    %dl0 = arith.subf %xl0, %c2 : f32
    %dl = arith.addf %dl0, %xl1 : f32
    %s0 = arith.addf %di, %dj : f32
    %s1 = arith.addf %s0, %dl : f32
    %s2 = arith.mulf %k, %s1 : f32
    %r = arith.addf %s2, %c : f32
    memref.store %r, %B[%i, %j, %l] : memref<6x7x9xf32>
    scf.reduce
  }) : (index, index, index, index, index, index, index, index, index) -> ()
  func.return
}
"""


WINDOW_CONV_RANK0 = """
// 1-D convolution via linalg.generic with a window map, rank-0 memref scalar, dynamic matmul
#in = affine_map<(i, k) -> (i + k)>
#w = affine_map<(i, k) -> (k)>
#o = affine_map<(i, k) -> (i)>
func.func @misc(%x: memref<20xf32>, %w: memref<5xf32>, %y: memref<16xf32>, %s: memref<f32>, %z: memref<16xf32>) {
  linalg.generic {indexing_maps = [#in, #w, #o], iterator_types = ["parallel", "reduction"]} ins(%x, %w : memref<20xf32>, memref<5xf32>) outs(%y : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %acc, %m : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%y, %s : memref<16xf32>, memref<f32>) outs(%z : memref<16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  }
  func.return
}
"""


DYNAMIC_MATMUL_SEIDEL = """
// matmul with a dynamic dimension and a scalar index bound; in-place scaling; seidel sequential nest
func.func @misc2(%A: memref<?x8xf32>, %B: memref<8x6xf32>, %C: memref<?x6xf32>, %n: index, %v: memref<10xf32>, %g: memref<6x6xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  linalg.matmul ins(%A, %B : memref<?x8xf32>, memref<8x6xf32>) outs(%C : memref<?x6xf32>)
  %half = arith.constant 0.5 : f32
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %e = memref.load %v[%i] : memref<10xf32>
    %f = arith.mulf %e, %half : f32
    memref.store %f, %v[%i] : memref<10xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  // seidel-2d one sweep: g[i][j] = (g[i-1][j] + g[i][j-1] + g[i][j] + g[i][j+1] + g[i+1][j]) / 5
  %five = arith.constant 5.0 : f32
  scf.for %i = %c1 to %c5 step %c1 {
    scf.for %j = %c1 to %c5 step %c1 {
      %im = arith.subi %i, %c1 : index
      %ip = arith.addi %i, %c1 : index
      %jm = arith.subi %j, %c1 : index
      %jp = arith.addi %j, %c1 : index
      %a = memref.load %g[%im, %j] : memref<6x6xf32>
      %b = memref.load %g[%i, %jm] : memref<6x6xf32>
      %c = memref.load %g[%i, %j] : memref<6x6xf32>
      %d = memref.load %g[%i, %jp] : memref<6x6xf32>
      %e = memref.load %g[%ip, %j] : memref<6x6xf32>
      %s1 = arith.addf %a, %b : f32
      %s2 = arith.addf %s1, %c : f32
      %s3 = arith.addf %s2, %d : f32
      %s4 = arith.addf %s3, %e : f32
      %r = arith.divf %s4, %five : f32
      memref.store %r, %g[%i, %j] : memref<6x6xf32>
    }
  }
  func.return
}
"""


NAMED_LINALG = """
// linalg named ops beyond fill/matmul/add: transpose, broadcast, copy, reduce, sub, max, exp, select
func.func @named(%A: memref<4x6xf32>, %v: memref<6xf32>, %T: memref<6x4xf32>, %Bc: memref<4x6xf32>, %C: memref<4x6xf32>, %R: memref<4xf32>, %D: memref<4x6xf32>, %M: memref<4x6xf32>, %E: memref<4x6xf32>) {
  linalg.transpose ins(%A : memref<4x6xf32>) outs(%T : memref<6x4xf32>) permutation = [1, 0]
  linalg.broadcast ins(%v : memref<6xf32>) outs(%Bc : memref<4x6xf32>) dimensions = [0]
  linalg.copy ins(%A : memref<4x6xf32>) outs(%C : memref<4x6xf32>)
  linalg.reduce ins(%A : memref<4x6xf32>) outs(%R : memref<4xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  linalg.sub ins(%A, %Bc : memref<4x6xf32>, memref<4x6xf32>) outs(%D : memref<4x6xf32>)
  linalg.max ins(%A, %Bc : memref<4x6xf32>, memref<4x6xf32>) outs(%M : memref<4x6xf32>)
  linalg.exp ins(%A : memref<4x6xf32>) outs(%E : memref<4x6xf32>)
  func.return
}
"""


CONV_AND_POOLING = """
func.func @conv(%I: memref<1x2x6x7xf32>, %F: memref<3x2x3x3xf32>, %O: memref<1x3x4x5xf32>, %P: memref<1x3x2x2xf32>, %K: memref<2x2xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%I, %F : memref<1x2x6x7xf32>, memref<3x2x3x3xf32>) outs(%O : memref<1x3x4x5xf32>)
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%O, %K : memref<1x3x4x5xf32>, memref<2x2xf32>) outs(%P : memref<1x3x2x2xf32>)
  func.return
}
"""


CONV_LAYOUTS = """
func.func @convs(%I: memref<1x6x7x2xf32>, %F: memref<3x3x2x4xf32>, %O: memref<1x4x5x4xf32>, %F2: memref<4x3x3x2xf32>, %O2: memref<1x4x5x4xf32>, %Ig: memref<1x2x2x5x5xf32>, %Fg: memref<2x3x2x3x3xf32>, %Og: memref<1x2x3x3x3xf32>, %Fg2: memref<3x2x2x3x3xf32>, %Og2: memref<1x2x3x3x3xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%I, %F : memref<1x6x7x2xf32>, memref<3x3x2x4xf32>) outs(%O : memref<1x4x5x4xf32>)
  linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%I, %F2 : memref<1x6x7x2xf32>, memref<4x3x3x2xf32>) outs(%O2 : memref<1x4x5x4xf32>)
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%Ig, %Fg : memref<1x2x2x5x5xf32>, memref<2x3x2x3x3xf32>) outs(%Og : memref<1x2x3x3x3xf32>)
  linalg.conv_2d_ngchw_fgchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%Ig, %Fg2 : memref<1x2x2x5x5xf32>, memref<3x2x2x3x3xf32>) outs(%Og2 : memref<1x2x3x3x3xf32>)
  func.return
}
"""


INTEGER_LINALG = """
func.func @ints(%a: memref<16xi32>, %b: memref<16xi32>, %mx: memref<16xi32>, %mn: memref<16xi32>, %c: memref<16xi1>, %s: memref<16xi32>, %A: memref<3x4xi8>, %B: memref<4x5xi8>, %az: i32, %bz: i32, %Q: memref<3x5xi32>) {
  linalg.max ins(%a, %b : memref<16xi32>, memref<16xi32>) outs(%mx : memref<16xi32>)
  linalg.min ins(%a, %b : memref<16xi32>, memref<16xi32>) outs(%mn : memref<16xi32>)
  linalg.select ins(%c, %a, %b : memref<16xi1>, memref<16xi32>, memref<16xi32>) outs(%s : memref<16xi32>)
  linalg.quantized_matmul ins(%A, %B, %az, %bz : memref<3x4xi8>, memref<4x5xi8>, i32, i32) outs(%Q : memref<3x5xi32>)
  func.return
}
"""


GPU_2D_TRANSPOSE = """
"gpu.module"() <{sym_name = "kernels"}> ({
  "gpu.func"() <{function_type = (memref<20x30xf32>, memref<30x20xf32>) -> ()}> ({
  ^bb0(%a: memref<20x30xf32>, %b: memref<30x20xf32>):
    %tx = "gpu.thread_id"() <{dimension = #gpu<dim x>}> : () -> index
    %ty = "gpu.thread_id"() <{dimension = #gpu<dim y>}> : () -> index
    %bx = "gpu.block_id"() <{dimension = #gpu<dim x>}> : () -> index
    %by = "gpu.block_id"() <{dimension = #gpu<dim y>}> : () -> index
    %dx = "gpu.block_dim"() <{dimension = #gpu<dim x>}> : () -> index
    %dy = "gpu.block_dim"() <{dimension = #gpu<dim y>}> : () -> index
    %x0 = arith.muli %bx, %dx : index
    %x = arith.addi %x0, %tx : index
    %y0 = arith.muli %by, %dy : index
    %y = arith.addi %y0, %ty : index
    %c20 = arith.constant 20 : index
    %c30 = arith.constant 30 : index
    %inx = arith.cmpi ult, %x, %c30 : index
    %iny = arith.cmpi ult, %y, %c20 : index
    %in = arith.andi %inx, %iny : i1
    scf.if %in {
      %v = memref.load %a[%y, %x] : memref<20x30xf32>
      memref.store %v, %b[%x, %y] : memref<30x20xf32>
    }
    "gpu.return"() : () -> ()
  }) {sym_name = "transpose", gpu.kernel} : () -> ()
}) : () -> ()
func.func @main(%a: memref<20x30xf32>, %b: memref<30x20xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  "gpu.launch_func"(%c4, %c3, %c1, %c8, %c8, %c1, %a, %b) <{kernel = @kernels::@transpose, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, 0>}> : (index, index, index, index, index, index, memref<20x30xf32>, memref<30x20xf32>) -> ()
  func.return
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_atax_two_parallel_loops_sharing_tmp(backend):
    rng = np.random.default_rng(1)
    a, x = rand(rng, 12, 10), rand(rng, 10)
    tmp = a.astype(np.float64) @ x
    for fuse in (False, True):
        out = run(ATAX, {"A": a, "x": x, "tmp": zeros(12), "y": zeros(10)}, backend, fuse=fuse)
        np.testing.assert_allclose(out["tmp"], tmp, **TOL)
        np.testing.assert_allclose(out["y"], a.T.astype(np.float64) @ tmp, **TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bicg_linalg_generic_with_transposed_maps(backend):
    rng = np.random.default_rng(2)
    a, r, p = rand(rng, 9, 7), rand(rng, 9), rand(rng, 7)
    out = run(BICG, {"A": a, "r": r, "p": p, "s": rand(rng, 7), "q": rand(rng, 9)}, backend)
    np.testing.assert_allclose(out["s"], a.T.astype(np.float64) @ r, **TOL)
    np.testing.assert_allclose(out["q"], a.astype(np.float64) @ p, **TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gesummv_scalar_arguments_and_a_dynamic_row_count(backend):
    rng = np.random.default_rng(3)
    a, b, x = rand(rng, 20, 16), rand(rng, 20, 16), rand(rng, 16)
    inputs = {"alpha": np.float32(1.5), "beta": np.float32(-0.5), "A": a, "B": b, "x": x}
    out = run(GESUMMV, {**inputs, "y": zeros(20)}, backend)
    expected = 1.5 * (a.astype(np.float64) @ x) - 0.5 * (b.astype(np.float64) @ x)
    np.testing.assert_allclose(out["y"], expected, **TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_doitgen_3d_nest_reads_and_writes_a(backend):
    rng = np.random.default_rng(4)
    a, c4 = rand(rng, 3, 4, 5), rand(rng, 5, 5)
    expected = np.einsum("rqs,sp->rqp", a.astype(np.float64), c4)
    for fuse in (False, True):
        out = run(DOITGEN, {"A": a, "C4": c4, "sum": zeros(3, 4, 5)}, backend, fuse=fuse)
        assert out["A"].shape == (3, 4, 5)
        np.testing.assert_allclose(out["A"], expected, **TOL)
        np.testing.assert_allclose(out["sum"], expected, **TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_conv2d_interior_on_grid_axes(backend):
    a = rand(np.random.default_rng(5), 13, 17)
    out = run(CONV2D, {"A": a, "B": zeros(13, 17)}, backend)
    np.testing.assert_allclose(out["B"], conv2d_expected(a), **TOL)


def conv2d_expected(a: np.ndarray) -> np.ndarray:
    weights = {(-1, -1): 0.2, (0, -1): 0.5, (1, -1): -0.8, (-1, 0): -0.3, (0, 0): 0.6}
    weights |= {(1, 0): -0.9, (-1, 1): 0.4, (0, 1): 0.7, (1, 1): 0.1}
    expected = np.zeros((13, 17))
    for (di, dj), w in weights.items():
        expected[1:12, 1:16] += w * a[1 + di : 12 + di, 1 + dj : 16 + dj].astype(np.float64)
    return expected


@pytest.mark.parametrize("backend", BACKENDS)
def test_heat3d_interior_on_three_grid_axes(backend):
    rng = np.random.default_rng(6)
    a = rand(rng, 6, 7, 9)
    d = a.astype(np.float64)
    c = d[1:5, 1:6, 1:8]
    lap = (d[2:6, 1:6, 1:8] - 2 * c + d[0:4, 1:6, 1:8]) + (
        d[1:5, 2:7, 1:8] - 2 * c + d[1:5, 0:5, 1:8]
    )
    lap += d[1:5, 1:6, 2:9] - 2 * c + d[1:5, 1:6, 0:7]
    expected = np.zeros((6, 7, 9))
    expected[1:5, 1:6, 1:8] = 0.125 * lap + c
    out = run(HEAT3D, {"A": a, "B": zeros(6, 7, 9)}, backend)
    np.testing.assert_allclose(out["B"], expected, **TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_windowed_generic_and_a_rank0_memref(backend):
    rng = np.random.default_rng(7)
    x, w, y0 = rand(rng, 20), rand(rng, 5), rand(rng, 16)
    y = y0 + np.array([np.dot(x[i : i + 5].astype(np.float64), w) for i in range(16)])
    inputs = {"x": x, "w": w, "y": y0, "s": np.array(1.5, np.float32), "z": zeros(16)}
    out = run(WINDOW_CONV_RANK0, inputs, backend)
    np.testing.assert_allclose(out["y"], y, **TOL)
    np.testing.assert_allclose(out["z"], 1.5 * y, **TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dynamic_matmul_index_bound_and_sequential_seidel(backend):
    rng = np.random.default_rng(8)
    a, b, c, v, g = (
        rand(rng, 7, 8),
        rand(rng, 8, 6),
        rand(rng, 7, 6),
        rand(rng, 10),
        rand(rng, 6, 6),
    )
    seidel = g.astype(np.float64)
    for i in range(1, 5):
        for j in range(1, 5):
            seidel[i, j] = (
                seidel[i - 1, j]
                + seidel[i, j - 1]
                + seidel[i, j]
                + seidel[i, j + 1]
                + seidel[i + 1, j]
            ) / 5
    half = v.astype(np.float64)
    half[:7] *= 0.5
    inputs = {"A": a, "B": b, "C": c, "n": np.uint32(7), "v": v, "g": g}
    out = run(DYNAMIC_MATMUL_SEIDEL, inputs, backend)
    assert out["C"].shape == (7, 6)
    np.testing.assert_allclose(out["C"], c + a.astype(np.float64) @ b, **TOL)
    np.testing.assert_allclose(out["v"], half, **TOL)
    np.testing.assert_allclose(out["g"], seidel, **TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_linalg_transpose_broadcast_reduce_and_elementwise_named_ops(backend):
    rng = np.random.default_rng(9)
    a, v, r0 = rand(rng, 4, 6), rand(rng, 6), rand(rng, 4)
    names = ("T", "Bc", "C", "D", "M", "E")
    inputs = {"A": a, "v": v, "R": r0} | {
        n: zeros(6, 4) if n == "T" else zeros(4, 6) for n in names
    }
    out = run(NAMED_LINALG, inputs, backend)
    d = a.astype(np.float64)
    np.testing.assert_array_equal(out["T"], a.T)
    np.testing.assert_array_equal(out["Bc"], np.broadcast_to(v, (4, 6)))
    np.testing.assert_array_equal(out["C"], a)
    np.testing.assert_allclose(out["R"], r0 + d.sum(axis=1), **TOL)
    np.testing.assert_allclose(out["D"], d - v, **TOL)
    np.testing.assert_array_equal(out["M"], np.maximum(a, v))
    np.testing.assert_allclose(out["E"], np.exp(d), rtol=1e-5)


def test_transpose_broadcast_reduce_convert_to_loops_with_upstream_iterators():
    """The generalized forms: transpose and broadcast run one invocation per output
    element, reduce one per kept row with a loop over the reduced dimension."""
    from vyre_xdsl.dialects.vyre import LoopOp, ProgramOp

    module = parse(NAMED_LINALG)
    programs = [op for op in module.ops if isinstance(op, ProgramOp)]
    assert [p.sym_name.data for p in programs] == [f"named_{k}" for k in range(7)]
    loops = [sum(isinstance(op, LoopOp) for op in p.walk()) for p in programs]
    assert loops == [0, 0, 0, 1, 0, 0, 0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_conv_2d_nchw_and_max_pooling(backend):
    rng = np.random.default_rng(10)
    image, filters = rand(rng, 1, 2, 6, 7), rand(rng, 3, 2, 3, 3)
    conv = np.zeros((1, 3, 4, 5))
    for h in range(4):
        for w in range(5):
            window = image[0, :, h : h + 3, w : w + 3].astype(np.float64)
            conv[0, :, h, w] = np.einsum("chw,fchw->f", window, filters)
    pooled = np.zeros((1, 3, 2, 2))  # 2 x 2 windows, stride 2
    for h in range(2):
        for w in range(2):
            pooled[0, :, h, w] = conv[0, :, 2 * h : 2 * h + 2, 2 * w : 2 * w + 2].max(axis=(1, 2))
    inputs = {"I": image, "F": filters, "O": zeros(1, 3, 4, 5), "K": zeros(2, 2)}
    out = run(CONV_AND_POOLING, inputs | {"P": np.full((1, 3, 2, 2), -1e30, np.float32)}, backend)
    np.testing.assert_allclose(out["O"], conv, **TOL)
    np.testing.assert_allclose(out["P"], pooled, **TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_integer_max_pooling_keeps_the_window_maximum(backend):
    text = """
func.func @f(%I: memref<1x1x4x4xi32>, %K: memref<2x2xi32>, %P: memref<1x1x2x2xi32>) {
  linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%I, %K : memref<1x1x4x4xi32>, memref<2x2xi32>) outs(%P : memref<1x1x2x2xi32>)
  func.return
}
"""
    image = (np.arange(16, dtype=np.int32)[::-1] - 8).reshape(1, 1, 4, 4)
    inputs = {
        "I": image,
        "K": np.full((2, 2), 50, np.int32),
        "P": np.full((1, 1, 2, 2), -100, np.int32),
    }
    out = run(text, inputs, backend)
    expected = image[0, 0].reshape(2, 2, 2, 2).max(axis=(1, 3))
    np.testing.assert_array_equal(out["P"], expected[None, None])


@pytest.mark.parametrize("backend", BACKENDS)
def test_conv_2d_layouts(backend):
    rng = np.random.default_rng(11)
    image, hwcf, fhwc = rand(rng, 1, 6, 7, 2), rand(rng, 3, 3, 2, 4), rand(rng, 4, 3, 3, 2)
    grouped, gfchw, fgchw = (
        rand(rng, 1, 2, 2, 5, 5),
        rand(rng, 2, 3, 2, 3, 3),
        rand(rng, 3, 2, 2, 3, 3),
    )
    nhwc, nhwc2 = np.zeros((1, 4, 5, 4)), np.zeros((1, 4, 5, 4))
    for h in range(4):
        for w in range(5):
            window = image[0, h : h + 3, w : w + 3, :].astype(np.float64)
            nhwc[0, h, w] = np.einsum("hwc,hwcf->f", window, hwcf)
            nhwc2[0, h, w] = np.einsum("hwc,fhwc->f", window, fhwc)
    g1, g2 = np.zeros((1, 2, 3, 3, 3)), np.zeros((1, 2, 3, 3, 3))
    for h in range(3):
        for w in range(3):
            window = grouped[0, :, :, h : h + 3, w : w + 3].astype(np.float64)
            g1[0, :, :, h, w] = np.einsum("gchw,gfchw->gf", window, gfchw)
            g2[0, :, :, h, w] = np.einsum("gchw,fgchw->gf", window, fgchw)
    inputs = {"I": image, "F": hwcf, "F2": fhwc, "Ig": grouped, "Fg": gfchw, "Fg2": fgchw}
    inputs |= {"O": zeros(1, 4, 5, 4), "O2": zeros(1, 4, 5, 4)}
    inputs |= {"Og": zeros(1, 2, 3, 3, 3), "Og2": zeros(1, 2, 3, 3, 3)}
    out = run(CONV_LAYOUTS, inputs, backend)
    for name, expected in (("O", nhwc), ("O2", nhwc2), ("Og", g1), ("Og2", g2)):
        np.testing.assert_allclose(out[name], expected, **TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_integer_named_ops_and_quantized_matmul(backend):
    rng = np.random.default_rng(12)
    a = rng.integers(-100, 100, 16).astype(np.int32)
    b = rng.integers(-100, 100, 16).astype(np.int32)
    c = rng.integers(0, 2, 16).astype(bool)
    qa = rng.integers(-128, 128, (3, 4)).astype(np.int8)
    qb = rng.integers(-128, 128, (4, 5)).astype(np.int8)
    q0 = rng.integers(-5, 5, (3, 5)).astype(np.int32)
    inputs = {
        "a": a,
        "b": b,
        "c": c,
        "A": qa,
        "B": qb,
        "az": np.int32(3),
        "bz": np.int32(-2),
        "Q": q0,
    }
    inputs |= {
        "mx": zeros(16, dtype=np.int32),
        "mn": zeros(16, dtype=np.int32),
        "s": zeros(16, dtype=np.int32),
    }
    out = run(INTEGER_LINALG, inputs, backend)
    np.testing.assert_array_equal(out["mx"], np.maximum(a, b))
    np.testing.assert_array_equal(out["mn"], np.minimum(a, b))
    np.testing.assert_array_equal(out["s"], np.where(c, a, b))
    expected = q0 + (qa.astype(np.int64) - 3) @ (qb.astype(np.int64) + 2)
    np.testing.assert_array_equal(out["Q"], expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gpu_launch_of_a_2d_guarded_transpose(backend):
    a = rand(np.random.default_rng(13), 20, 30)
    out = run(GPU_2D_TRANSPOSE, {"a": a, "b": zeros(30, 20)}, backend)
    np.testing.assert_array_equal(out["b"], a.T)


# -- what a user gets wrong ---------------------------------------------------------

ROWS_OF_16 = GESUMMV


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_dynamic_memref_given_a_partial_row_is_refused(backend):
    a = np.ones(33, np.float32)  # memref<?x16xf32>: not a whole number of rows
    inputs = {
        "alpha": np.float32(1),
        "beta": np.float32(1),
        "A": a,
        "B": np.ones((20, 16), np.float32),
    }
    with pytest.raises(
        InputShapeError,
        match=r"'A' \(a memref of shape \?x16\) has 33 elements, not a multiple of 16",
    ):
        run(ROWS_OF_16, inputs | {"x": np.ones(16, np.float32), "y": zeros(20)}, backend)


BYTES = """
func.func @f(%x: memref<?xi8>, %y: memref<?xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xi8>
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %last = arith.subi %n, %c1 : index
    %j = arith.subi %last, %i : index
    %v = memref.load %x[%j] : memref<?xi8>
    memref.store %v, %y[%i] : memref<?xi8>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_dynamic_byte_memref_needs_whole_words(backend):
    """A `memref<?xi8>` reversed through `memref.dim`: 8 bytes run; 5 bytes would be
    padded to 8, `memref.dim` would say 8 and the reverse would start in the
    padding, so they are refused."""
    x = np.arange(1, 9, dtype=np.int8)
    out = run(BYTES, {"x": x, "y": np.zeros(8, np.int8)}, backend)
    np.testing.assert_array_equal(out["y"], x[::-1])
    with pytest.raises(
        InputShapeError, match="'x' .*has 5 elements.*needs a multiple of 4 elements"
    ):
        run(BYTES, {"x": x[:5], "y": np.zeros(5, np.int8)}, backend)


def test_a_dynamic_byte_memref_with_static_columns_needs_the_common_multiple():
    text = BYTES.replace("memref<?xi8>", "memref<?x3xi8>").replace("%x[%j]", "%x[%j, %c0]")
    text = text.replace("%y[%i]", "%y[%i, %c0]")
    x = np.arange(12, dtype=np.int8).reshape(4, 3)
    out = run(text, {"x": x, "y": np.zeros((4, 3), np.int8)}, "reference")
    np.testing.assert_array_equal(out["y"][:, 0], x[::-1, 0])
    with pytest.raises(InputShapeError, match="has 6 elements.*multiple of 12"):
        run(text, {"x": x[:2], "y": np.zeros((2, 3), np.int8)}, "reference")


def test_named_linalg_mistakes_are_located_at_the_op():
    """A named op with mismatched shapes is reported by its own verifier at its
    line, not by its generic form's verifier at the function (line 2)."""
    transpose = """
func.func @f(%A: memref<4x6xf32>, %T: memref<4x6xf32>) {
  linalg.transpose ins(%A : memref<4x6xf32>) outs(%T : memref<4x6xf32>) permutation = [1, 0]
  func.return
}
"""
    with pytest.raises(VyreDiagnostic, match=r"3:3: dim\(result, 0\) = 4 doesn't match"):
        run(transpose, {"A": zeros(4, 6), "T": zeros(4, 6)}, "reference")
    matmul = """
func.func @f(%A: memref<4x6xf32>, %B: memref<5x3xf32>, %C: memref<4x3xf32>) {
  linalg.matmul ins(%A, %B : memref<4x6xf32>, memref<5x3xf32>) outs(%C : memref<4x3xf32>)
  func.return
}
"""
    with pytest.raises(VyreDiagnostic, match=r"^<input>:3:3: .*dimension #0 to be 6, but found 5"):
        run(matmul, {"A": zeros(4, 6), "B": zeros(5, 3), "C": zeros(4, 3)}, "reference")


def test_a_bundle_of_a_dynamic_memref_refuses_a_partial_row_too():
    from vyre_xdsl.megakernel.compile import compile_module
    from vyre_xdsl.megakernel.run import run_bundle

    data = compile_module(parse(BYTES)).bundle_bytes()
    x = np.arange(1, 9, dtype=np.int8)
    out = run_bundle(data, {"x": x, "y": np.zeros(8, np.int8)}, backend="reference")
    np.testing.assert_array_equal(out["y"], x[::-1])
    with pytest.raises(InputShapeError, match="needs a multiple of 4 elements"):
        run_bundle(data, {"x": x[:6], "y": np.zeros(6, np.int8)}, backend="reference")


def test_vyre_compile_keeps_the_memref_shapes_for_vyre_run(tmp_path, capsys):
    """docs/mlir-input.md: a bundle made by `vyre-compile` carries the memrefs'
    shapes, so `vyre-run` on it saves each output in its memref's shape (it
    saved the 13 x 17 convolution output flat: `vyre-compile` dropped them)."""
    from vyre_xdsl.tools import vyre_compile, vyre_run

    source, bundle = tmp_path / "conv2d.mlir", tmp_path / "conv2d.vkb"
    source.write_text(CONV2D)
    a = rand(np.random.default_rng(14), 13, 17)
    np.save(tmp_path / "A.npy", a)
    np.save(tmp_path / "B.npy", zeros(13 * 17))  # flat: any array of the right size
    assert vyre_compile.main([str(source), "-o", str(bundle)]) == 0
    args = ["--input", f"A={tmp_path / 'A.npy'}", "--input", f"B={tmp_path / 'B.npy'}"]
    for path, folder in ((source, "from_mlir"), (bundle, "from_bundle")):
        out = tmp_path / folder
        assert (
            vyre_run.main([str(path), *args, "--backend", "reference", "--output-dir", str(out)])
            == 0
        )
        saved = np.load(out / "B.npy")
        assert saved.shape == (13, 17)
        np.testing.assert_allclose(saved, conv2d_expected(a), **TOL)
    capsys.readouterr()


REDUCE_WHILE_F64_I64 = """
// top-level reduction (sum and max), scf.while (collatz steps), scf.if with results, f64 math, i64
func.func @misc3(%x: memref<50xf32>, %out: memref<2xf32>, %n: memref<8xi32>, %steps: memref<8xi32>, %d: memref<8xf64>, %e: memref<8xf64>, %w: memref<8xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c50 = arith.constant 50 : index
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -3.0e38 : f32
  %r:2 = "scf.parallel"(%c0, %c50, %c1, %zero, %ninf) <{operandSegmentSizes = array<i32: 1, 1, 1, 2>}> ({
  ^bb0(%i: index):
    %v = memref.load %x[%i] : memref<50xf32>
    scf.reduce(%v, %v : f32, f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    } {
    ^bb0(%a: f32, %b: f32):
      %m = arith.maximumf %a, %b : f32
      scf.reduce.return %m : f32
    }
  }) : (index, index, index, f32, f32) -> (f32, f32)
  memref.store %r#0, %out[%c0] : memref<2xf32>
  memref.store %r#1, %out[%c1] : memref<2xf32>
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v0 = memref.load %n[%i] : memref<8xi32>
    %one = arith.constant 1 : i32
    %two = arith.constant 2 : i32
    %three = arith.constant 3 : i32
    %z = arith.constant 0 : i32
    %res:2 = scf.while (%v = %v0, %k = %z) : (i32, i32) -> (i32, i32) {
      %more = arith.cmpi sgt, %v, %one : i32
      scf.condition(%more) %v, %k : i32, i32
    } do {
    ^bb0(%v: i32, %k: i32):
      %rm = arith.remsi %v, %two : i32
      %even = arith.cmpi eq, %rm, %z : i32
      %nv = scf.if %even -> (i32) {
        %h = arith.divsi %v, %two : i32
        scf.yield %h : i32
      } else {
        %t = arith.muli %v, %three : i32
        %t1 = arith.addi %t, %one : i32
        scf.yield %t1 : i32
      }
      %k1 = arith.addi %k, %one : i32
      scf.yield %nv, %k1 : i32, i32
    }
    memref.store %res#1, %steps[%i] : memref<8xi32>
    %dv = memref.load %d[%i] : memref<8xf64>
    %sq = math.sqrt %dv : f64
    %fl = math.floor %dv : f64
    %s = arith.addf %sq, %fl : f64
    memref.store %s, %e[%i] : memref<8xf64>
    %wv = memref.load %w[%i] : memref<8xi64>
    %big = arith.constant 4294967296 : i64
    %c3_64 = arith.constant 3 : i64
    %wm = arith.muli %wv, %big : i64
    %ws = arith.shrsi %wm, %c3_64 : i64
    memref.store %ws, %w[%i] : memref<8xi64>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
"""


STEPS_INDEX_MAPS = """
// red-black style: 2-D parallel with steps 2 and non-zero lower bounds (grid axes), dynamic 2-D flattened, linalg.index + mod/floordiv maps
#m = affine_map<(i, j) -> (i floordiv 2, j mod 3)>
func.func @misc4(%A: memref<11x13xf32>, %B: memref<11x13xf32>, %D: memref<?x5xf32>, %E: memref<?x5xf32>, %S: memref<3x3xf32>, %G: memref<6x7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  %c10 = arith.constant 10 : index
  %c12 = arith.constant 12 : index
  "scf.parallel"(%c1, %c2, %c10, %c12, %c2, %c3) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %ip = arith.addi %i, %c1 : index
    %v = memref.load %A[%ip, %j] : memref<11x13xf32>
    %u = memref.load %A[%i, %j] : memref<11x13xf32>
    %s = arith.subf %v, %u : f32
    memref.store %s, %B[%i, %j] : memref<11x13xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  %n = memref.dim %D, %c0 : memref<?x5xf32>
  "scf.parallel"(%c0, %c0, %n, %c5, %c1, %c1) <{operandSegmentSizes = array<i32: 2, 2, 2, 0>}> ({
  ^bb0(%i: index, %j: index):
    %v = memref.load %D[%i, %j] : memref<?x5xf32>
    %jj = arith.index_cast %j : index to i32
    %jf = arith.sitofp %jj : i32 to f32
    %w = arith.mulf %v, %jf : f32
    memref.store %w, %E[%i, %j] : memref<?x5xf32>
    scf.reduce
  }) : (index, index, index, index, index, index) -> ()
  linalg.generic {indexing_maps = [#m, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%S : memref<3x3xf32>) outs(%G : memref<6x7xf32>) {
  ^bb0(%s: f32, %g: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = arith.muli %i, %j : index
    %kk = arith.index_cast %k : index to i32
    %kf = arith.sitofp %kk : i32 to f32
    %r = arith.addf %s, %kf : f32
    linalg.yield %r : f32
  }
  func.return
}
"""


DYNAMIC_NAMED_LINALG = """
func.func @dyn(%A: memref<?x4xf32>, %T: memref<4x?xf32>, %R: memref<?xf32>, %B: memref<?x4xf32>, %v: memref<4xf32>) {
  linalg.transpose ins(%A : memref<?x4xf32>) outs(%T : memref<4x?xf32>) permutation = [1, 0]
  linalg.reduce ins(%A : memref<?x4xf32>) outs(%R : memref<?xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.maximumf %in, %init : f32
      linalg.yield %s : f32
    }
  linalg.broadcast ins(%v : memref<4xf32>) outs(%B : memref<?x4xf32>) dimensions = [0]
  func.return
}
"""


HALF_FLOATS = """
func.func @half(%x: memref<32xf16>, %y: memref<32xf16>, %b: memref<32xbf16>, %c: memref<32xf32>, %h: f16) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  "scf.parallel"(%c0, %c32, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %x[%i] : memref<32xf16>
    %e = math.exp %v : f16
    %m = arith.mulf %e, %h : f16
    memref.store %m, %y[%i] : memref<32xf16>
    %w = arith.extf %v : f16 to f32
    %bv = memref.load %b[%i] : memref<32xbf16>
    %bw = arith.extf %bv : bf16 to f32
    %s = arith.addf %w, %bw : f32
    memref.store %s, %c[%i] : memref<32xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
"""


def collatz_steps(v: int) -> int:
    steps = 0
    while v > 1:
        v = v // 2 if v % 2 == 0 else 3 * v + 1
        steps += 1
    return steps


@pytest.mark.parametrize("backend", BACKENDS)
def test_top_level_reductions_scf_while_f64_and_i64(backend):
    rng = np.random.default_rng(15)
    x = rand(rng, 50)
    n = np.array([1, 2, 3, 6, 7, 27, 97, 5], np.int32)
    d = np.abs(rng.standard_normal(8)) * 10
    w = np.array([1, -1, 5, -7, 100, 2**20, -(2**20), 0], np.int64)
    inputs = {"x": x, "out": zeros(2), "n": n, "steps": zeros(8, dtype=np.int32), "d": d}
    out = run(REDUCE_WHILE_F64_I64, inputs | {"e": np.zeros(8), "w": w}, backend)
    np.testing.assert_allclose(out["out"], [x.astype(np.float64).sum(), x.max()], **TOL)
    np.testing.assert_array_equal(out["steps"], [collatz_steps(int(v)) for v in n])
    np.testing.assert_allclose(out["e"], np.sqrt(d) + np.floor(d), rtol=1e-15)
    np.testing.assert_array_equal(out["w"], (w * 2**32) >> 3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_strided_grid_nest_dynamic_2d_nest_and_linalg_index_maps(backend):
    rng = np.random.default_rng(16)
    a, b0, d, s = rand(rng, 11, 13), rand(rng, 11, 13), rand(rng, 9, 5), rand(rng, 3, 3)
    b = b0.astype(np.float64)
    for i in range(1, 10, 2):
        for j in range(2, 12, 3):
            b[i, j] = np.float64(a[i + 1, j]) - np.float64(a[i, j])
    g = np.array([[s[i // 2, j % 3] + i * j for j in range(7)] for i in range(6)], np.float64)
    inputs = {"A": a, "B": b0, "D": d, "E": zeros(9, 5), "S": s, "G": zeros(6, 7)}
    out = run(STEPS_INDEX_MAPS, inputs, backend)
    np.testing.assert_allclose(out["B"], b, **TOL)
    np.testing.assert_allclose(out["E"], d.astype(np.float64) * np.arange(5), **TOL)
    np.testing.assert_allclose(out["G"], g, **TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_named_linalg_ops_on_runtime_sized_memrefs(backend):
    rng = np.random.default_rng(17)
    a, v = rand(rng, 9, 4), rand(rng, 4)
    inputs = {
        "A": a,
        "T": zeros(4, 9),
        "R": np.full(9, -1e30, np.float32),
        "B": zeros(9, 4),
        "v": v,
    }
    out = run(DYNAMIC_NAMED_LINALG, inputs, backend)
    assert out["T"].shape == (4, 9) and out["B"].shape == (9, 4)
    np.testing.assert_array_equal(out["T"], a.T)
    np.testing.assert_array_equal(out["R"], a.max(axis=1))
    np.testing.assert_array_equal(out["B"], np.broadcast_to(v, (9, 4)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_f16_and_bf16_memrefs_and_an_f16_scalar(backend):
    import ml_dtypes

    rng = np.random.default_rng(18)
    x = rng.standard_normal(32).astype(np.float16)
    b = rng.standard_normal(32).astype(ml_dtypes.bfloat16)
    inputs = {"x": x, "y": np.zeros(32, np.float16), "b": b, "c": zeros(32), "h": np.float16(1.5)}
    out = run(HALF_FLOATS, inputs, backend)
    # exp within 2 f16 ULP (docs/language.md), then one exact-ish f16 multiply by 1.5
    expected = np.exp(x.astype(np.float64)) * 1.5
    np.testing.assert_allclose(out["y"].astype(np.float64), expected, rtol=3 * 2.0**-10)
    np.testing.assert_array_equal(out["c"], x.astype(np.float32) + b.astype(np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_workgroup_overrides_on_flattened_and_grid_axis_programs(backend):
    """`compile(..., workgroup_size=...)`: a grid-axes nest (heat-3d) takes any
    workgroup and is regridded; a flattened one (atax) takes a 1-D workgroup,
    and a 2-D one is a ValueError at compile on every backend naming the program
    (the reference backend compiled it and refused it at the run, with advice to
    edit a grid into text the user never wrote)."""
    from vyre_xdsl import compile

    rng = np.random.default_rng(19)
    a, x = rand(rng, 12, 10), rand(rng, 10)
    exe = compile(ATAX, backend=backend, workgroup_size=(16, 1, 1))
    out = exe.run({"A": a, "x": x, "tmp": zeros(12), "y": zeros(10)})
    np.testing.assert_allclose(out["y"], a.T.astype(np.float64) @ (a.astype(np.float64) @ x), **TOL)
    with pytest.raises(
        ValueError, match=r"program @atax_0 numbers its loop iterations along x only.*\(16, 1, 1\)"
    ):
        compile(ATAX, backend=backend, workgroup_size=(4, 4, 1))
    h = rand(rng, 6, 7, 9)
    plain = run(HEAT3D, {"A": h, "B": zeros(6, 7, 9)}, backend)
    exe = compile(HEAT3D, backend=backend, workgroup_size=(2, 4, 4))
    np.testing.assert_array_equal(exe.run({"A": h, "B": zeros(6, 7, 9)})["B"], plain["B"])


def test_upstream_custom_syntax_without_an_xdsl_parser_names_the_generic_form():
    """`scf.parallel (%i) = ...` as mlir-opt prints it: xDSL 0.74 has no custom
    syntax for it; the error (it said "Operation scf.parallel does not have a
    custom format.") says what to write instead, at the op."""
    text = """
func.func @f(%A: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %A[%i] : memref<8xf32>
    memref.store %v, %A[%i] : memref<8xf32>
  }
  func.return
}
"""
    with pytest.raises(VyreDiagnostic) as error:
        run(text, {"A": zeros(8)}, "reference")
    message = str(error.value)
    assert message.startswith("<input>:6:16")
    assert "'scf.parallel' has no custom syntax in xDSL: write it in MLIR's generic form" in message
    assert "--mlir-print-op-generic" in message


JACOBI_1D_TIME_LOOP = """
// PolyBench jacobi-1d with the time loop in the function: scf.for over t around two scf.parallel
func.func @jacobi1d(%A: memref<30xf32>, %B: memref<30xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c29 = arith.constant 29 : index
  %third = arith.constant 0.333333343 : f32
  scf.for %t = %c0 to %c4 step %c1 {
    "scf.parallel"(%c1, %c29, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %im = arith.subi %i, %c1 : index
      %ip = arith.addi %i, %c1 : index
      %a = memref.load %A[%im] : memref<30xf32>
      %b = memref.load %A[%i] : memref<30xf32>
      %c = memref.load %A[%ip] : memref<30xf32>
      %s1 = arith.addf %a, %b : f32
      %s2 = arith.addf %s1, %c : f32
      %r = arith.mulf %third, %s2 : f32
      memref.store %r, %B[%i] : memref<30xf32>
      scf.reduce
    }) : (index, index, index) -> ()
    "scf.parallel"(%c1, %c29, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
    ^bb0(%i: index):
      %im = arith.subi %i, %c1 : index
      %ip = arith.addi %i, %c1 : index
      %a = memref.load %B[%im] : memref<30xf32>
      %b = memref.load %B[%i] : memref<30xf32>
      %c = memref.load %B[%ip] : memref<30xf32>
      %s1 = arith.addf %a, %b : f32
      %s2 = arith.addf %s1, %c : f32
      %r = arith.mulf %third, %s2 : f32
      memref.store %r, %A[%i] : memref<30xf32>
      scf.reduce
    }) : (index, index, index) -> ()
  }
  func.return
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_jacobi_1d_with_its_time_loop_in_the_function(backend):
    """`scf.for` over time steps around two `scf.parallel` stencils: one
    invocation runs the nest. Its index arithmetic `%i - 1`, `%i + 1` (with %i
    from 1 to 29) can never leave 0 … 2^32 - 1, so it carries no trap check; with
    the checks, Mesa's lavapipe left the inner loop after one iteration (a
    return that only a wrapped `1 + k` reaches, in a nested loop) and the run
    failed with a LoopLimitError."""
    rng = np.random.default_rng(20)
    a, b = rand(rng, 30), rand(rng, 30)
    third = np.float32(0.333333343)
    ea, eb = a.astype(np.float64), b.astype(np.float64)
    for _ in range(4):
        eb[1:29] = (ea[0:28] + ea[1:29] + ea[2:30]) * third
        ea[1:29] = (eb[0:28] + eb[1:29] + eb[2:30]) * third
    out = run(JACOBI_1D_TIME_LOOP, {"A": a, "B": b}, backend)
    np.testing.assert_allclose(out["A"], ea, **TOL)
    np.testing.assert_allclose(out["B"], eb, **TOL)


SHIFTED = """
func.func @f(%A: memref<8xi32>, %B: memref<8xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %d = arith.constant SHIFT : index
  scf.for %i = %cLOWER to %c8 step %c1 {
    %j = arith.subi %i, %d : index
    %v = memref.load %A[%j] : memref<8xi32>
    memref.store %v, %B[%i] : memref<8xi32>
  }
  func.return
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_index_checks_left_out_only_where_they_cannot_fire(backend):
    """`%i - d` for %i from LOWER: no check when d <= LOWER (and the loads are
    right), a trap at the first iteration otherwise."""
    from vyre_xdsl.diagnostics import VyreError

    a = np.arange(10, 18, dtype=np.int32)
    inputs = {"A": a, "B": np.zeros(8, np.int32)}
    fine = SHIFTED.replace("SHIFT", "1").replace("%cLOWER", "%c1")
    assert "vyre.trap" not in str(parse(fine))
    np.testing.assert_array_equal(run(fine, inputs, backend)["B"], [0, *a[:7]])
    for lower, shift in (("%c0", "1"), ("%c1", "2")):
        bad = SHIFTED.replace("SHIFT", shift).replace("%cLOWER", lower)
        assert "vyre.trap" in str(parse(bad))
        with pytest.raises(VyreError, match="index"):
            run(bad, inputs, backend)


SUFFIXED_NAMES = """
func.func @x(%x: memref<8xf32>, %x_0: memref<8xf32>, %in_1: memref<8xf32>, %out_2: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  "scf.parallel"(%c0, %c8, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i_0: index):
    %v = memref.load %x[%i_0] : memref<8xf32>
    %w = memref.load %in_1[%i_0] : memref<8xf32>
    %s = arith.addf %v, %w : f32
    memref.store %s, %x_0[%i_0] : memref<8xf32>
    memref.store %w, %out_2[%i_0] : memref<8xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_argument_names_ending_in_digits_name_their_buffers(backend):
    """docs/mlir-input.md: an argument's buffer is named after its SSA name.
    xDSL's parser keeps `%x_0` as the name hint `x` (dropping `_<digits>`), so
    `%x` and `%x_0` were refused as one name twice, and `%in_1` became buffer
    `in`; the converter now takes the names as written."""
    x, y = rand(np.random.default_rng(21), 8), rand(np.random.default_rng(22), 8)
    inputs = {"x": x, "x_0": zeros(8), "in_1": y, "out_2": zeros(8)}
    out = run(SUFFIXED_NAMES, inputs, backend)
    assert sorted(out) == ["out_2", "x_0"]
    np.testing.assert_array_equal(out["x_0"], x + y)
    np.testing.assert_array_equal(out["out_2"], y)


PARAMETERS_IN_A_MEMREF = """
func.func @scale_shift(%params: memref<2xf32>, %x: memref<64xf32>, %y: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %alpha = memref.load %params[%c0] : memref<2xf32>
  %beta = memref.load %params[%c1] : memref<2xf32>
  "scf.parallel"(%c0, %c64, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %x[%i] : memref<64xf32>
    %w = math.fma %v, %alpha, %beta : f32
    memref.store %w, %y[%i] : memref<64xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  "scf.parallel"(%c0, %c64, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %v = memref.load %y[%i] : memref<64xf32>
    %w = arith.mulf %v, %alpha : f32
    memref.store %w, %x[%i] : memref<64xf32>
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_parameters_loaded_once_at_the_top_of_the_function(backend):
    """`%alpha = memref.load %params[%c0]` before the loops that use it: @params
    is never written, so the load is computed again in each program that uses
    it, like a constant (it was refused: "the result of 'memref.load' outside any
    parallel loop is used in another program")."""
    x = rand(np.random.default_rng(23), 64)
    params = np.array([1.5, -0.25], np.float32)
    for fuse in (False, True):
        out = run(
            PARAMETERS_IN_A_MEMREF, {"params": params, "x": x, "y": zeros(64)}, backend, fuse=fuse
        )
        y = x.astype(np.float64) * 1.5 - 0.25
        np.testing.assert_allclose(out["y"], y, **TOL)
        np.testing.assert_allclose(out["x"], y * 1.5, **TOL)


ROW_SUM_YIELDING = """
func.func @f(%A: memref<4x6xf32>, %B: memref<4xOUT>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%A : memref<4x6xf32>) outs(%B : memref<4xOUT>) {
  ^bb0(%a: f32, %b: OUT):
    linalg.yield YIELD
  }
  func.return
}
"""


@pytest.mark.parametrize(
    ("out", "yielded", "message"),
    [
        ("f32", "%a, %a : f32, f32", r"5:5: linalg.yield gives 2 value\(s\) for the 1 output\(s\)"),
        ("i32", "%a : f32", r"5:5: linalg.yield value #0 is f32, but output #0 .* holds i32"),
    ],
)
def test_a_linalg_yield_that_does_not_fit_the_outputs_is_located(out, yielded, message):
    """xDSL's verifier does not compare linalg.yield with the outputs: two values
    for one output raised a Python ValueError from the converter, a mistyped one
    an error "after pass 'convert-to-vyre'" about a buffer the user never wrote."""
    text = ROW_SUM_YIELDING.replace("OUT", out).replace("YIELD", yielded)
    with pytest.raises(VyreDiagnostic, match=message):
        run(
            text,
            {"A": zeros(4, 6), "B": zeros(4, dtype=np.int32 if out == "i32" else np.float32)},
            "reference",
        )


def test_vyre_run_random_inputs_fill_whole_rows_of_a_dynamic_memref(tmp_path, capsys):
    """`vyre-run --random-inputs` gives a runtime-sized memref whole rows of its
    static dimensions (1020 elements for `memref<?x6xf32>`, not 1024, which the
    input check refuses) and 8/16-bit memrefs whole words; as a .mlir and as a
    bundle."""
    from vyre_xdsl.abi import signature
    from vyre_xdsl.conversion import memref_shapes
    from vyre_xdsl.tools import vyre_compile, vyre_run

    module = parse(DYNAMIC_MATMUL_SEIDEL)
    inputs = vyre_run.random_inputs(signature(module), 0, {}, memref_shapes(module))
    assert inputs["A"].size == 1024 and inputs["C"].size == 1020  # ?x8, ?x6
    odd = parse(
        BYTES.replace("memref<?xi8>", "memref<?x3xi8>")
        .replace("%x[%j]", "%x[%j, %c0]")
        .replace("%y[%i]", "%y[%i, %c0]")
    )
    assert vyre_run.random_inputs(signature(odd), 0, {}, memref_shapes(odd))["x"].size == 1020
    source, bundle = tmp_path / "m.mlir", tmp_path / "m.vkb"
    source.write_text(DYNAMIC_MATMUL_SEIDEL)
    assert vyre_compile.main([str(source), "-o", str(bundle)]) == 0
    for path in (source, bundle):
        assert vyre_run.main([str(path), "--random-inputs", "0", "--backend", "reference"]) == 0
        assert "C: float32[1020]" in capsys.readouterr().out


SYRK = """
// PolyBench syrk (lower triangle): C[i][j] = beta*C[i][j] + alpha * sum_k A[i][k]*A[j][k], j <= i
func.func @syrk(%alpha: f32, %beta: f32, %A: memref<10x7xf32>, %C: memref<10x10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c10 = arith.constant 10 : index
  %zero = arith.constant 0.0 : f32
  "scf.parallel"(%c0, %c10, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    %ip = arith.addi %i, %c1 : index
    scf.for %j = %c0 to %ip step %c1 {
      %s = scf.for %k = %c0 to %c7 step %c1 iter_args(%acc = %zero) -> (f32) {
        %a = memref.load %A[%i, %k] : memref<10x7xf32>
        %b = memref.load %A[%j, %k] : memref<10x7xf32>
        %n = math.fma %a, %b, %acc : f32
        scf.yield %n : f32
      }
      %c = memref.load %C[%i, %j] : memref<10x10xf32>
      %bc = arith.mulf %beta, %c : f32
      %as = arith.mulf %alpha, %s : f32
      %r = arith.addf %bc, %as : f32
      memref.store %r, %C[%i, %j] : memref<10x10xf32>
    }
    scf.reduce
  }) : (index, index, index) -> ()
  func.return
}
"""


GPU_3D_IDS = """
"gpu.module"() <{sym_name = "k"}> ({
  "gpu.func"() <{function_type = (memref<4x6x10xi32>) -> ()}> ({
  ^bb0(%o: memref<4x6x10xi32>):
    %x = "gpu.global_id"() <{dimension = #gpu<dim x>}> : () -> index
    %y = "gpu.global_id"() <{dimension = #gpu<dim y>}> : () -> index
    %z = "gpu.global_id"() <{dimension = #gpu<dim z>}> : () -> index
    %c10 = arith.constant 10 : index
    %c6 = arith.constant 6 : index
    %c4 = arith.constant 4 : index
    %ix = arith.cmpi ult, %x, %c10 : index
    %iy = arith.cmpi ult, %y, %c6 : index
    %iz = arith.cmpi ult, %z, %c4 : index
    %a = arith.andi %ix, %iy : i1
    %b = arith.andi %a, %iz : i1
    scf.if %b {
      %c100 = arith.constant 100 : index
      %zz = arith.muli %z, %c100 : index
      %yy = arith.muli %y, %c10 : index
      %s0 = arith.addi %zz, %yy : index
      %s = arith.addi %s0, %x : index
      %v = arith.index_cast %s : index to i32
      memref.store %v, %o[%z, %y, %x] : memref<4x6x10xi32>
    }
    "gpu.return"() : () -> ()
  }) {sym_name = "ids", gpu.kernel} : () -> ()
}) : () -> ()
func.func @main(%o: memref<4x6x10xi32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  "gpu.launch_func"(%c3, %c2, %c2, %c4, %c4, %c2, %o) <{kernel = @k::@ids, operandSegmentSizes = array<i32: 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0>}> : (index, index, index, index, index, index, memref<4x6x10xi32>) -> ()
  func.return
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_syrk_triangular_loop_bounded_by_the_parallel_index(backend):
    rng = np.random.default_rng(24)
    a, c = rand(rng, 10, 7), rand(rng, 10, 7 + 3)
    expected = c.astype(np.float64)
    products = a.astype(np.float64) @ a.T
    for i in range(10):
        expected[i, : i + 1] = 0.5 * expected[i, : i + 1] + 1.5 * products[i, : i + 1]
    inputs = {"alpha": np.float32(1.5), "beta": np.float32(0.5), "A": a, "C": c}
    np.testing.assert_allclose(run(SYRK, inputs, backend)["C"], expected, **TOL)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gpu_launch_with_3d_blocks_and_grid(backend):
    """`gpu.global_id` on three axes of a 3 x 2 x 2 grid of 4 x 4 x 2 blocks,
    guarded to a 10 x 6 x 4 volume."""
    out = run(GPU_3D_IDS, {"o": np.zeros((4, 6, 10), np.int32)}, backend)
    expected = np.fromfunction(lambda z, y, x: z * 100 + y * 10 + x, (4, 6, 10), dtype=np.int32)
    np.testing.assert_array_equal(out["o"], expected)


@pytest.mark.parametrize(
    ("call", "hint"),
    [(False, "'// -----' with vyre-opt --split-input-file"), (True, "func.call is not supported")],
)
def test_a_second_function_says_what_to_do(call, hint):
    """Two functions in one module (two kernels pasted together, or a helper and
    its caller) were refused with no way out named."""
    helper = "func.func @g(%A: memref<8xf32>) {\n  func.return\n}\n"
    body = "  func.call @g(%A) : (memref<8xf32>) -> ()\n" if call else ""
    text = helper + f"func.func @f(%A: memref<8xf32>) {{\n{body}  func.return\n}}\n"
    with pytest.raises(
        VyreDiagnostic,
        match=rf"4:1: a module converted to vyre holds one func.func; this one has 2 .*{hint}",
    ):
        run(text, {"A": zeros(8)}, "reference")


def test_the_row_check_leaves_other_input_mistakes_to_their_own_errors():
    """A string for a runtime-sized memref is still an InputTypeError (the row
    check read it as one element); a list of 33 numbers is a partial row."""
    from vyre_xdsl.abi import InputTypeError

    inputs = {"alpha": np.float32(1), "beta": np.float32(1), "B": np.ones((20, 16), np.float32)}
    inputs |= {"x": np.ones(16, np.float32), "y": zeros(20)}
    with pytest.raises(InputTypeError, match="is str 'hello'"):
        run(GESUMMV, inputs | {"A": "hello"}, "reference")
    with pytest.raises(InputShapeError, match="has 33 elements, not a multiple of 16"):
        run(GESUMMV, inputs | {"A": [1.0] * 33}, "reference")
