"""Host cost of runs: small launches, chains with device arrays, plain run() vs compile().

Three parts, each printed as a markdown table (and saved with --json):

1. **small** — one small run (N = 1024, one stage, `out = x * c + d`) end to
   end: numpy in and out; device arrays in and out plus `synchronize()`; device
   runs queued back to back: their recording alone (the synchronize after the
   batches is not timed), and 300 of them plus the one `synchronize()` that
   submits and waits for them (per run; on a CPU adapter such as lavapipe the
   wait is the kernels' own execution on the CPU). Host cost per extra
   dispatch: a 100-kernel unfused chain against a 1-kernel one (N = 256). With
   PyTorch and CUDA present: the same op on a tiny tensor plus synchronize, and
   numpy -> cuda -> op -> numpy.
2. **chain** — ten runs of a one-stage program at 2^24 f32, each fed the last
   output: with numpy arrays (upload and readback every run) and with device
   arrays (one upload, one readback). Results checked against numpy.
3. **cache** — an 8-stage chain at 2^22, fused and unfused: `vyre_xdsl.run(text)`
   (cached executable) against `compile()` once + `Executable.run`, and the first,
   uncached `run()`.

Every figure is the median over --batches batches (each the mean of --reps
runs), with the spread (min-max of the batch means); a 0.5 s warm-up of GPU
work comes first.

    python bench/small_runs.py --json bench/results/small_runs.json
    python bench/small_runs.py --parts small --profile   # + cProfile of one device run
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import statistics
import sys
import time

import numpy as np
from gpu_chains import chain_text, numpy_chain

import vyre_xdsl
from vyre_xdsl.runtime import gpu_device


def batches(fn, reps: int, count: int) -> dict:
    """Median and spread (seconds) of `count` batch means of `reps` calls."""
    means = []
    for _ in range(count):
        start = time.perf_counter()
        for _ in range(reps):
            fn()
        means.append((time.perf_counter() - start) / reps)
    return {"median_s": statistics.median(means), "min_s": min(means), "max_s": max(means)}


def warm(seconds: float = 0.5) -> None:
    """Back-to-back GPU work, so that the GPU reaches its clocks (docs/performance.md)."""
    n = 1 << 22
    exe = vyre_xdsl.compile(chain_text(1, n), backend="wgpu")
    x = vyre_xdsl.to_device(np.ones(n, np.float32))
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(10):
            exe.run({"x": x}, device=True)
        vyre_xdsl.synchronize()


def small(reps: int, count: int, profile: bool) -> dict:
    n = 1024
    x = np.linspace(-1, 1, n, dtype=np.float32)
    exe = vyre_xdsl.compile(chain_text(1, n), backend="wgpu")
    dx = vyre_xdsl.to_device(x)
    assert exe.run({"x": dx}, device=True)["out"].numpy().tolist() == numpy_chain(x, 1).tolist()

    def device_sync():
        exe.run({"x": dx}, device=True)
        vyre_xdsl.synchronize()

    result = {
        "numpy in/out": batches(lambda: exe.run({"x": x}), reps, count),
        "device in/out + synchronize": batches(device_sync, reps, count),
    }
    queued = batches(lambda: exe.run({"x": dx}, device=True), reps, count)
    vyre_xdsl.synchronize()
    result["device, queued (per run, recording only)"] = queued

    def queued_300():
        for _ in range(300):
            exe.run({"x": dx}, device=True)
        vyre_xdsl.synchronize()

    whole = batches(queued_300, 1, count)
    result["device, 300 queued + one synchronize (per run)"] = {
        key: seconds / 300 for key, seconds in whole.items()
    }

    # per extra dispatch: 100 kernels against 1, N = 256
    m = 256
    xs = vyre_xdsl.to_device(np.linspace(-1, 1, m, dtype=np.float32))
    one = vyre_xdsl.compile(chain_text(1, m), backend="wgpu")
    many = vyre_xdsl.compile(chain_text(100, m), backend="wgpu")
    check = many.run({"x": xs}, device=True)["out"].numpy()
    assert np.allclose(check, numpy_chain(xs.numpy(), 100), rtol=1e-5)

    def run_sync(e):
        def f():
            e.run({"x": xs}, device=True)
            vyre_xdsl.synchronize()

        return f

    t1 = batches(run_sync(one), reps, count)
    t100 = batches(run_sync(many), max(1, reps // 10), count)
    result["1-kernel run (N=256), device + sync"] = t1
    result["100-kernel run (N=256), device + sync"] = t100
    result["per extra dispatch"] = _per_dispatch(t1, t100)
    host1 = batches(lambda: one.run({"x": xs.numpy()}), reps // 4 or 1, count)
    host100 = batches(lambda: many.run({"x": xs.numpy()}), max(1, reps // 20), count)
    result["per extra dispatch, numpy in/out"] = _per_dispatch(host1, host100)
    result.update(torch_small(reps, count))
    if profile:
        result["cprofile"] = cprofile(device_sync, reps * 4)
    result["phases_us"] = phases()
    return result


def phases(calls: int = 2000) -> dict:
    """Microseconds per phase of one small device run (N = 1024, one kernel),
    each phase timed with perf_counter over `calls` runs: the Python side
    (binding and checking inputs, the runtime's cached plan lookups, the
    output DeviceArray) and each wgpu call the run makes."""
    from vyre_xdsl.runtime.arrays import DeviceArray
    from vyre_xdsl.runtime.execute import _bind_groups, _dispatch, _plan, _sized

    n = 1024
    exe = vyre_xdsl.compile(chain_text(1, n), backend="wgpu")
    gpu = exe.gpu
    dx = vyre_xdsl.to_device(np.linspace(-1, 1, n, dtype=np.float32))
    exe.run({"x": dx}, device=True)
    spent: dict[str, float] = {}

    def timed(name, fn, *args):
        start = time.perf_counter()
        value = fn(*args)
        spent[name] = spent.get(name, 0.0) + time.perf_counter() - start
        return value

    for _ in range(calls):
        bound = timed("bind + check inputs (api)", exe.compiled.bind, {"x": dx})
        plan = timed("plan + sized lookups", lambda: _plan(gpu, exe._kernels))
        sized = timed("plan + sized lookups", _sized, gpu, plan, bound)
        out = timed(
            "pool acquire (output buffer)", gpu.pool.acquire, sized.buffer_bytes[1], "storage"
        )
        groups = timed(
            "bind group lookup", _bind_groups, gpu, plan, sized, [[dx.buffer(), 0], [out, 0]], None
        )
        encoder = timed("create_command_encoder", gpu.device.create_command_encoder)
        compute = timed("begin_compute_pass", encoder.begin_compute_pass)
        timed(
            "dispatch (set_pipeline, set_bind_group, dispatch)",
            _dispatch,
            compute,
            plan.steps[0],
            groups[0],
            sized.grids[0],
        )
        timed("end pass", compute.end)
        command = timed("finish", encoder.finish)
        timed("submit", gpu.device.queue.submit, [command])
        array = timed(
            "output DeviceArray", DeviceArray, gpu, out, "storage", np.dtype(np.float32), (n,)
        )
        timed("synchronize (wait for the GPU)", gpu.synchronize)
        timed("free output (to the pool)", array.free)
    whole = batches(lambda: (exe.run({"x": dx}, device=True), gpu.synchronize()), calls // 4, 3)
    result = {name: seconds / calls * 1e6 for name, seconds in spent.items()}
    result["sum of phases"] = sum(spent.values()) / calls * 1e6
    result["whole run + synchronize (measured)"] = whole["median_s"] * 1e6
    result.update(wrapper_cost(gpu, calls))
    return result


def wrapper_cost(gpu, calls: int) -> dict:
    """What wgpu-py's wrappers add: an empty encoder, pass and finish through
    wgpu-py against the same four wgpu-native calls made directly (neither
    submitted)."""
    from wgpu.backends.wgpu_native._api import ffi, lib

    device = gpu.device._internal

    def wrapped():
        encoder = gpu.device.create_command_encoder()
        compute = encoder.begin_compute_pass()
        compute.end()
        encoder.finish()

    def native():
        encoder = lib.wgpuDeviceCreateCommandEncoder(device, ffi.NULL)
        compute = lib.wgpuCommandEncoderBeginComputePass(encoder, ffi.NULL)
        lib.wgpuComputePassEncoderEnd(compute)
        command = lib.wgpuCommandEncoderFinish(encoder, ffi.NULL)
        lib.wgpuComputePassEncoderRelease(compute)
        lib.wgpuCommandEncoderRelease(encoder)
        lib.wgpuCommandBufferRelease(command)

    return {
        "empty encoder+pass+finish via wgpu-py (not a phase)": batches(wrapped, calls, 3)[
            "median_s"
        ]
        * 1e6,
        "the same via wgpu-native directly (not a phase)": batches(native, calls, 3)["median_s"]
        * 1e6,
    }


def _per_dispatch(one: dict, many: dict) -> dict:
    """(t(100) - t(1)) / 99, with the widest spread the two spreads allow."""
    return {
        "median_s": (many["median_s"] - one["median_s"]) / 99,
        "min_s": (many["min_s"] - one["max_s"]) / 99,
        "max_s": (many["max_s"] - one["min_s"]) / 99,
    }


def torch_small(reps: int, count: int) -> dict:
    try:
        import torch
    except ImportError:
        return {}
    if not torch.cuda.is_available():
        return {}
    x = torch.linspace(-1, 1, 1024, device="cuda")
    host = np.linspace(-1, 1, 1024, dtype=np.float32)
    c, d = 1.0, 0.5

    def op():
        _ = x * c + d
        torch.cuda.synchronize()

    def round_trip():
        t = torch.from_numpy(host).cuda()
        (t * c + d).cpu().numpy()

    for _ in range(100):
        op()
        round_trip()
    return {
        "PyTorch: op on a tiny tensor + synchronize": batches(op, reps, count),
        "PyTorch: numpy -> cuda -> op -> numpy": batches(round_trip, reps, count),
    }


def cprofile(fn, calls: int) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        fn()
    profiler.disable()
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(25)
    return stream.getvalue()


def chain(log2n: int, count: int) -> dict:
    n = 1 << log2n
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, n).astype(np.float32)
    exe = vyre_xdsl.compile(chain_text(1, n), backend="wgpu")
    expected = x
    for _ in range(10):
        expected = numpy_chain(expected, 1)

    def host():
        y = x
        for _ in range(10):
            y = exe.run({"x": y})["out"]
        return y

    def device():
        y = vyre_xdsl.to_device(x)
        for _ in range(10):
            y = exe.run({"x": y}, device=True)["out"]
        return y.numpy()

    assert host().tolist() == expected.tolist()
    assert device().tolist() == expected.tolist()
    return {
        f"10 runs at 2^{log2n}, numpy arrays": batches(host, 1, count),
        f"10 runs at 2^{log2n}, device arrays": batches(device, 1, count),
    }


def cache(log2n: int, count: int) -> dict:
    n = 1 << log2n
    text = chain_text(8, n)
    x = np.random.default_rng(1).uniform(-1, 1, n).astype(np.float32)
    expected = numpy_chain(x, 8)
    result = {}
    for fuse in (False, True):
        label = "fused" if fuse else "unfused"

        def first():
            vyre_xdsl.clear_cache()
            vyre_xdsl.run(text, {"x": x}, backend="wgpu", fuse=fuse)

        exe = vyre_xdsl.compile(text, backend="wgpu", fuse=fuse)
        out = vyre_xdsl.run(text, {"x": x}, backend="wgpu", fuse=fuse)["out"]
        assert np.allclose(out, expected, rtol=1e-5) and np.array_equal(
            out, exe.run({"x": x})["out"]
        )
        result[f"8 stages at 2^{log2n}, {label}: run() (cached)"] = batches(
            lambda: vyre_xdsl.run(text, {"x": x}, backend="wgpu", fuse=fuse), 1, count
        )
        result[f"8 stages at 2^{log2n}, {label}: compile() once + Executable.run"] = batches(
            lambda: exe.run({"x": x}), 1, count
        )
        result[f"8 stages at 2^{log2n}, {label}: first run() (uncached)"] = batches(first, 1, count)
    return result


def table(results: dict) -> str:
    lines = ["| measurement | median | spread (batch means) |", "| --- | ---: | --- |"]
    for name, value in results.items():
        if not isinstance(value, dict) or "median_s" not in value:
            continue
        lines.append(
            f"| {name} | {_fmt(value['median_s'])} | {_fmt(value['min_s'])} - {_fmt(value['max_s'])} |"
        )
    return "\n".join(lines)


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} us"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="+", default=["small", "chain", "cache"])
    parser.add_argument("--reps", type=int, default=200, help="runs per batch (small part)")
    parser.add_argument("--batches", type=int, default=7)
    parser.add_argument("--chain-log2n", type=int, default=24)
    parser.add_argument("--cache-log2n", type=int, default=22)
    parser.add_argument("--profile", action="store_true", help="cProfile a device run (small part)")
    parser.add_argument("--json", help="write every figure here")
    args = parser.parse_args(argv)
    gpu = gpu_device()
    print(f"adapter: {gpu.describe()}", flush=True)
    warm()
    results: dict = {"adapter": gpu.describe()}
    if "small" in args.parts:
        results["small"] = small(args.reps, args.batches, args.profile)
    if "chain" in args.parts:
        results["chain"] = chain(args.chain_log2n, args.batches)
    if "cache" in args.parts:
        results["cache"] = cache(args.cache_log2n, args.batches)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    for part in ("small", "chain", "cache"):
        if part in results:
            if "cprofile" in results[part]:
                print(results[part]["cprofile"])
            print(f"\n### {part} ({results['adapter']})\n")
            print(table(results[part]))
            if "phases_us" in results[part]:
                print("\n| phase of one small device run | us |\n| --- | ---: |")
                for name, us in results[part]["phases_us"].items():
                    print(f"| {name} | {us:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
