"""Diagnostic: does a WGSL kernel's bandwidth change over time or with fresh buffers?

Times the vec4 `o = a*2+b` kernel in batches (20 dispatches in one timed pass)
many times in a row and prints one line per batch, then again on freshly
allocated buffers, then after an idle pause.

    python bench/wgsl_series.py --log2n 26
"""

import argparse
import time

import numpy as np
import wgpu
from wgsl_ceiling import grid_for, shaders


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--log2n", type=int, default=26)
    p.add_argument("--batches", type=int, default=30)
    p.add_argument("--variant", default="vec4")
    args = p.parse_args()
    n = 1 << args.log2n
    nbytes = 4 * n
    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    lim = adapter.limits
    device = adapter.request_device_sync(
        required_features=["timestamp-query"],
        required_limits={k: lim[k] for k in ("max-storage-buffer-binding-size", "max-buffer-size")},
    )
    code, invocations, _ = shaders(n // 4, 132 * 16)[args.variant]
    pipe = device.create_compute_pipeline(
        layout="auto",
        compute={"module": device.create_shader_module(code=code), "entry_point": "main"},
    )
    qs = device.create_query_set(type="timestamp", count=2)
    qbuf = device.create_buffer(
        size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC
    )
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    rng = np.random.default_rng(0)
    host = {"zeros": np.zeros(n, np.float32), "random": rng.standard_normal(n, dtype=np.float32)}

    def buffers(fill):
        bufs = [device.create_buffer(size=nbytes, usage=usage) for _ in range(3)]
        for buf in bufs[:2]:
            device.queue.write_buffer(buf, 0, host[fill])
        return device.create_bind_group(
            layout=pipe.get_bind_group_layout(0),
            entries=[{"binding": k, "resource": {"buffer": b}} for k, b in enumerate(bufs)],
        )

    gx, gy = grid_for(invocations)

    def batch(bg, count=20):
        enc = device.create_command_encoder()
        pas = enc.begin_compute_pass(
            timestamp_writes={
                "query_set": qs,
                "beginning_of_pass_write_index": 0,
                "end_of_pass_write_index": 1,
            }
        )
        pas.set_pipeline(pipe)
        pas.set_bind_group(0, bg)
        for _ in range(count):
            pas.dispatch_workgroups(gx, gy, 1)
        pas.end()
        enc.resolve_query_set(qs, 0, 2, qbuf, 0)
        device.queue.submit([enc.finish()])
        t = np.frombuffer(device.queue.read_buffer(qbuf), dtype=np.uint64)
        return float(t[1] - t[0]) * 1e-9 / count

    def series(label, bg, k):
        rates = [3 * nbytes / batch(bg) / 1e12 for _ in range(k)]
        print(f"{label:28s} " + " ".join(f"{r:4.2f}" for r in rates), flush=True)

    bg = buffers("random")
    series("random inputs", bg, args.batches)
    series("fresh buffers, random", buffers("random"), 10)
    series("fresh buffers, zeros", buffers("zeros"), 10)
    time.sleep(3)
    series("after 3 s idle (first set)", bg, 10)


if __name__ == "__main__":
    main()
