"""Where does a large run submitted on its own lose time against one in a batch?

The fused 8-stage chain at 2^28 runs at the copy ceiling when 20 dispatches share
one compute pass (`chain_kernel_variants.py`), but through the public path
(`run(device=True)` back to back) each run binds 2 GiB and goes in a submission of
its own. Two measurements, wall clock per dispatch from the first submit to the
end of the wait, `--count` dispatches per round, median (min-max) of `--rounds`
rounds, the settings interleaved round by round after `--warmup` seconds:

1. **shapes**: the generated kernel through raw wgpu, its `--count` dispatches
   recorded as
   - `one_pass`: one compute pass, one command buffer, one submit;
   - `pass_each`: a compute pass each, one command buffer, one submit;
   - `buffer_each`: a command buffer each, all in one submit call;
   - `submit_each`: a submit each (what the public path does now).
2. **bounds**: `vyre_xdsl.run(text, device=True)` back to back, then one
   `synchronize()`, with the runtime's `MAX_PENDING_WORK_BYTES` (a pending batch
   is submitted once its dispatches bind this many bytes) and `MAX_QUEUED_BATCHES`
   (such a batch is held while this many batches submitted for their work are
   unfinished; 0: never held) set per round to each `W:Q` of `--settings`
   (W in MiB). `W:Q` keeps every run's output alive until the round ends;
   `W:Q:drop` releases each output once the next run replaces it, as
   `out = run(...)` in a loop does (the pool then hands the same buffers back).

`torch.compile` of the same chain and a `torch` device copy are timed in the
same process (CUDA events, `--count` calls per round) where CUDA is present;
`torch.compile wall` is the same chain by wall clock, `--count` calls then
`torch.cuda.synchronize()`, as the public path is timed. Every output is checked
against numpy.

    python bench/chain_submissions.py --log2n 28 --rounds 9   # on the H200
    python bench/chain_submissions.py --log2n 20 --rounds 3   # on lavapipe
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from chain_kernel_variants import compiled_chain, pipeline_and_group, torch_rows  # noqa: E402
from workloads import make, spread  # noqa: E402

import vyre_xdsl  # noqa: E402
from vyre_xdsl.runtime import device as device_module  # noqa: E402

SHAPES = ("one_pass", "pass_each", "buffer_each", "submit_each")


def shape_runner(exe, work, n: int):
    """A function (shape, count) -> seconds per dispatch, and one that checks the output."""
    import wgpu

    (kernel,) = exe.compiled.kernels
    device = exe.gpu.device
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    x = device.create_buffer_with_data(data=work.x, usage=usage)
    out = device.create_buffer(size=n * 4, usage=usage)
    pipeline, group = pipeline_and_group(device, kernel.wgsl, x, out, n * 4)
    grid = kernel.static_grid

    def dispatch(compute) -> None:
        compute.set_pipeline(pipeline)
        compute.set_bind_group(0, group)
        compute.dispatch_workgroups(*grid)

    def command_buffer(dispatches: int):
        encoder = device.create_command_encoder()
        compute = encoder.begin_compute_pass()
        for _ in range(dispatches):
            dispatch(compute)
        compute.end()
        return encoder.finish()

    def passes(count: int):
        encoder = device.create_command_encoder()
        for _ in range(count):
            compute = encoder.begin_compute_pass()
            dispatch(compute)
            compute.end()
        return encoder.finish()

    def timed(shape: str, count: int) -> float:
        start = time.perf_counter()
        if shape == "one_pass":
            device.queue.submit([command_buffer(count)])
        elif shape == "pass_each":
            device.queue.submit([passes(count)])
        elif shape == "buffer_each":
            device.queue.submit([command_buffer(1) for _ in range(count)])
        else:
            for _ in range(count):
                device.queue.submit([command_buffer(1)])
        device._poll_wait()
        return (time.perf_counter() - start) / count

    def correct() -> bool:
        got = np.frombuffer(device.queue.read_buffer(out), dtype=np.float32)
        return bool(work.check(got))

    return timed, correct


def torch_wall_rows(work, args) -> dict[str, list[float]]:
    """`torch.compile` of the chain by wall clock: `args.count` calls then one
    synchronize per round, after `args.warmup` seconds of the same."""
    chain = compiled_chain(work)
    if chain is None:
        return {}
    import torch

    t, compiled = chain

    def round_seconds() -> float:
        start = time.perf_counter()
        for _ in range(args.count):
            compiled(t)
        torch.cuda.synchronize()
        return (time.perf_counter() - start) / args.count

    end = time.perf_counter() + args.warmup
    while time.perf_counter() < end:
        round_seconds()
    return {"torch.compile wall": [round_seconds() for _ in range(args.rounds)]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2n", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument(
        "--settings",
        nargs="+",
        default=["256:0", "256:1", "256:2", "256:3", "4096:0", "8192:0", f"{1 << 40}:0"],
        help="MAX_PENDING_WORK_BYTES (MiB):MAX_QUEUED_BATCHES[:drop] settings",
    )
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    n = 1 << args.log2n
    work = make("chain8", n, n)
    exe = vyre_xdsl.compile(work.text, backend="wgpu", fuse=True)
    adapter = exe.gpu.describe()
    print(f"adapter: {adapter}; n = 2^{args.log2n}; {args.count} dispatches per round")
    timed, shapes_correct = shape_runner(exe, work, n)
    x = vyre_xdsl.to_device(work.x)
    outputs = []

    def public(setting: str, count: int) -> float:
        bound_mib, queued, *keep = setting.split(":")
        device_module.MAX_PENDING_WORK_BYTES = int(bound_mib) << 20
        device_module.MAX_QUEUED_BATCHES = int(queued)
        drop = keep == ["drop"]
        start = time.perf_counter()
        for _ in range(count):
            out = vyre_xdsl.run(work.text, {"x": x}, backend="wgpu", fuse=True, device=True)
            if drop and outputs:
                outputs.pop().free()
            outputs.append(out["out"])
        vyre_xdsl.synchronize()
        seconds = (time.perf_counter() - start) / count
        *old, last = outputs
        for array in old:
            array.free()
        outputs[:] = [last]
        return seconds

    settings = [("shape", s) for s in SHAPES] + [("bound", b) for b in args.settings]

    def one(setting) -> float:
        kind, value = setting
        return timed(value, args.count) if kind == "shape" else public(value, args.count)

    defaults = device_module.MAX_PENDING_WORK_BYTES, device_module.MAX_QUEUED_BATCHES
    try:
        for setting in settings:
            one(setting)
        correct = {"shapes": shapes_correct(), "public": bool(work.check(outputs[-1].numpy()))}
        end = time.perf_counter() + args.warmup
        while time.perf_counter() < end:
            for setting in settings:
                one(setting)
        times: dict[str, list[float]] = {f"{k} {v}": [] for k, v in settings}
        for _ in range(args.rounds):
            for setting in settings:
                times[f"{setting[0]} {setting[1]}"].append(one(setting))
        correct["public_after"] = bool(work.check(outputs[-1].numpy()))
    finally:
        device_module.MAX_PENDING_WORK_BYTES, device_module.MAX_QUEUED_BATCHES = defaults
    args.batch = args.count  # torch_rows times `batch` calls per round
    times.update(torch_rows(work, args))
    times.update(torch_wall_rows(work, args))
    rows = {name: spread(values) for name, values in times.items()}
    print("\n| setting | ms per dispatch, median (min-max) |\n| --- | --- |")
    for name, row in rows.items():
        print(
            f"| {name} | {row['median'] * 1e3:.3f} ({row['min'] * 1e3:.3f}-"
            f"{row['max'] * 1e3:.3f}) |"
        )
    print(f"correct: {correct}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"adapter": adapter, "log2n": args.log2n, "rows": rows, "correct": correct}, f
            )
    return 0 if all(correct.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
