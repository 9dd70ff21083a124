"""Host cost of a repeated small run, this tree against another (alternated).

Three measurements of one process (a "worker"), each the mean over a batch
of runs, repeated:

- **queued**: `exe.run({"x": dx}, device=True)` back to back (N = 1024, one
  kernel, a device array in), timed up to the return of each run: the
  recording, plus the submits the pending-batch bounds cause (every 64
  dispatches); the `synchronize()` after each batch is not timed;
- **per extra dispatch**: the same for a 100-kernel unfused chain against a
  1-kernel one (N = 256): (t(100) - t(1)) / 99, host time only;
- each of these two also in CPU time of the calling thread
  (`time.thread_time`), which the other processes of a loaded machine
  disturb less than the wall clock;
- **numpy in/out**: `exe.run({"x": x})` with a numpy array of 1024 elements
  in and out (upload, submit, wait, readback).

It also counts the Python calls (Python functions and C functions called
from Python, `sys.setprofile`) one queued run makes: a figure that does not
depend on the machine's load.

`--against TREE` runs workers of this tree and of TREE (another checkout of
the repository, e.g. `git archive main | tar -x -C /tmp/main`) in
alternation, `--rounds` times each, and reports min / median / max of the
batch means of each. The machine may be shared and noisy: alternation makes
both trees see the same load.

    python bench/repeated_runs.py                      # this tree only
    python bench/repeated_runs.py --against /tmp/main --rounds 6
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def worker(batches: int, reps: int) -> dict:
    import numpy as np

    sys.path.insert(0, HERE)
    from gpu_chains import chain_text, numpy_chain

    import vyre_xdsl

    n = 1024
    x = np.linspace(-1, 1, n, dtype=np.float32)
    exe = vyre_xdsl.compile(chain_text(1, n), backend="wgpu")
    dx = vyre_xdsl.to_device(x)
    assert np.array_equal(exe.run({"x": dx}, device=True)["out"].numpy(), numpy_chain(x, 1))
    assert np.array_equal(exe.run({"x": x})["out"], numpy_chain(x, 1))

    def queued(e, arg, count, clock=time.perf_counter):
        means = []
        for _ in range(batches):
            start = clock()
            for _ in range(count):
                e.run(arg, device=True)
            means.append((clock() - start) / count)
            vyre_xdsl.synchronize()
        return means

    def host(e, arg, count):
        means = []
        for _ in range(batches):
            start = time.perf_counter()
            for _ in range(count):
                e.run(arg)
            means.append((time.perf_counter() - start) / count)
        return means

    queued(exe, {"x": dx}, reps)  # warm
    result = {"tree": os.path.dirname(os.path.dirname(vyre_xdsl.__file__))}
    result["queued"] = queued(exe, {"x": dx}, reps)
    result["queued, CPU time of the thread"] = queued(exe, {"x": dx}, reps, time.thread_time)

    m = 256
    xs = vyre_xdsl.to_device(np.linspace(-1, 1, m, dtype=np.float32))
    one = vyre_xdsl.compile(chain_text(1, m), backend="wgpu")
    many = vyre_xdsl.compile(chain_text(100, m), backend="wgpu")
    assert np.allclose(
        many.run({"x": xs}, device=True)["out"].numpy(), numpy_chain(xs.numpy(), 100), rtol=1e-5
    )
    queued(many, {"x": xs}, 4)
    t1 = queued(one, {"x": xs}, reps)
    t100 = queued(many, {"x": xs}, max(1, reps // 16))
    result["per extra dispatch"] = [(b - a) / 99 for a, b in zip(t1, t100)]
    t1 = queued(one, {"x": xs}, reps, time.thread_time)
    t100 = queued(many, {"x": xs}, max(1, reps // 16), time.thread_time)
    result["per extra dispatch, CPU time"] = [(b - a) / 99 for a, b in zip(t1, t100)]

    host(exe, {"x": x}, 20)
    result["numpy in/out"] = host(exe, {"x": x}, max(1, reps // 4))

    calls = 0

    def counter(frame, event, arg):
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    count = 63  # below the pending batch's bound: no submit among them
    vyre_xdsl.synchronize()
    sys.setprofile(counter)
    for _ in range(count):
        exe.run({"x": dx}, device=True)
    sys.setprofile(None)
    vyre_xdsl.synchronize()
    result["calls per queued run"] = calls / count
    return result


def run_worker(tree: str, batches: int, reps: int) -> dict:
    env = dict(os.environ, PYTHONPATH=tree)
    env.setdefault("VYRE_CACHE_DIR", "off")
    command = [sys.executable, os.path.join(HERE, "repeated_runs.py"), "--worker"]
    command += ["--batches", str(batches), "--reps", str(reps)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=tree)
    if done.returncode:
        raise SystemExit(done.stderr)
    result = json.loads(done.stdout.splitlines()[-1])
    if os.path.realpath(result["tree"]) != os.path.realpath(tree):
        raise SystemExit(f"the worker imported {result['tree']}, not {tree}")
    return result


def summary(values: list[float], unit: float = 1e6) -> str:
    values = [v * unit for v in values]
    return f"{min(values):.1f} / {statistics.median(values):.1f} / {max(values):.1f}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--against", help="another checkout to alternate with")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--reps", type=int, default=256)
    parser.add_argument("--json", help="write every batch mean here")
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.batches, args.reps)))
        return 0
    trees = {"this tree": ROOT}
    if args.against:
        trees["other tree"] = os.path.abspath(args.against)
    gathered: dict[str, dict[str, list]] = {label: {} for label in trees}
    for _ in range(args.rounds):
        for label, tree in trees.items():
            for key, value in run_worker(tree, args.batches, args.reps).items():
                if key != "tree":
                    values = value if isinstance(value, list) else [value]
                    gathered[label].setdefault(key, []).extend(values)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"trees": trees, "results": gathered}, f, indent=1)
    labels = list(trees)
    print(
        f"rounds {args.rounds} x batches {args.batches}, load {os.getloadavg()[0]:.2f}; "
        "min / median / max of the batch means, us"
    )
    print("\n| measurement | " + " | ".join(labels) + " |")
    print("| --- |" + " ---: |" * len(labels))
    for key in gathered[labels[0]]:
        if key == "calls per queued run":
            cells = [f"{statistics.median(gathered[label][key]):.0f}" for label in labels]
        else:
            cells = [summary(gathered[label][key]) for label in labels]
        print(f"| {key} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
