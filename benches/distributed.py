"""gt.distributed's figures (issue 18): data-parallel steps and the allreduce itself.

    python benches/distributed.py            # gradtape should be a release build
    python benches/distributed.py --quick

It launches its own processes (``mpiexec`` beside this Python: the ``mpich`` wheel):

 1. MLP training step, 784→256→256→10 (ReLU, softmax cross-entropy, SGD), float32, the
    same global batch of 512: **1 rank × 2 threads** (one process, the engine's pool at
    2 threads, no MPI) against **2 ranks × 1 thread** (``mpiexec -n 2``, each rank 256
    rows, one engine thread, ``DistributedGradientTape`` averaging the gradients in
    buckets while the backward pass runs). Steps/s of each, their ratio (goal ≥ 0.9),
    and the communication share of the 2-rank step: (step with the reduction − the same
    step's plain ``tape.gradient``) / step, measured on the same ranks.
 2. Allreduce (sum) of a 10M-float32 tensor over 2 ranks: ``gt.distributed.allreduce``
    (zero-copy: the tensor's storage is sent, the result received into a new tensor's)
    against ``mpi4py``'s ``comm.Allreduce`` on numpy buffers of the same size; the ratio
    of their throughputs (goal ≥ 0.8). Also the fp16-compressed allreduce.

Each figure is the median of repeated timings; on a shared machine, run it when idle.
The last two rows of its table are the issue's two goals. A full run takes under a
minute (28 s on the 2-core machine under load, debug build; ``--quick``: under 10 s).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = os.path.abspath(__file__)
GLOBAL_BATCH = 512
SIZES = (784, 256, 256, 10)
ALLREDUCE_FLOATS = 10_000_000


def median_time(fn, reps, warm=3, sync=None):
    for _ in range(warm):
        fn()
    out = []
    for _ in range(reps):
        if sync:
            sync()
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def make_step(gt, batch, reducer=None):
    """A training step on ``batch`` rows; with ``reducer`` (a function wrapping the
    tape) the gradients are reduced before the update."""
    rng = np.random.default_rng(0)
    params = []
    for m, n in zip(SIZES[:-1], SIZES[1:]):
        params.append(gt.Variable(rng.normal(0, (2 / m) ** 0.5, (m, n)).astype(np.float32)))
        params.append(gt.Variable(np.zeros(n, np.float32)))
    x = gt.constant(rng.normal(size=(batch, SIZES[0])).astype(np.float32))
    labels = gt.constant(rng.integers(0, SIZES[-1], batch).astype(np.int32))
    opt = gt.optimizers.SGD(0.01)

    def step(reduce=True):
        with gt.GradientTape() as tape:
            h = x
            for k in range(0, len(params), 2):
                h = h @ params[k] + params[k + 1]
                if k + 2 < len(params):
                    h = gt.nn.relu(h)
            loss = gt.reduce_mean(gt.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=h))
        t = reducer(tape) if (reducer and reduce) else tape
        grads = t.gradient(loss, params)
        opt.apply_gradients(zip(grads, params))

    return step


def one_rank(reps):
    """Row 1, one process with the engine's pool at 2 threads (set by the caller)."""
    import gradtape as gt

    step = make_step(gt, GLOBAL_BATCH)
    return {"step_s": median_time(step, reps)}


def ranks(reps, quick):
    """Rows 1 and 2 on each rank of an ``mpiexec -n 2`` job; rank 0 returns the figures."""
    from mpi4py import MPI

    import gradtape as gt
    from gradtape import distributed as dist

    dist.init()
    comm = MPI.COMM_WORLD
    n = dist.size()
    dtapes = []

    bucket = {"bytes": dist.DEFAULT_BUCKET_BYTES}

    def reducer(tape):
        d = dist.DistributedGradientTape(tape, bucket_bytes=bucket["bytes"])
        dtapes.append(d)
        return d

    step = make_step(gt, GLOBAL_BATCH // n, reducer)
    out = {"ranks": n}
    # Interleave the variants so that load hits them alike: the default bucket size (the
    # whole 1 MB gradient in one bucket, reduced once the sweep ends), 128 KiB buckets
    # (reduced while the sweep runs), and no reduction.
    sizes = {"default": dist.DEFAULT_BUCKET_BYTES, "small": 128 * 1024}
    times = {"default": [], "small": [], "none": []}
    for _ in range(3):
        step(True)
        step(False)
    for _ in range(reps):
        for name in times:
            bucket["bytes"] = sizes.get(name, 0)
            comm.Barrier()
            t0 = time.perf_counter()
            step(name != "none")
            times[name].append(time.perf_counter() - t0)
            if name != "none":
                out[f"buckets_{name}"] = dtapes[-1]._reducer.last_stats["buckets"]
                out[f"posted_{name}"] = dtapes[-1]._reducer.last_stats["posted_during_backward"]
    best = min(("default", "small"), key=lambda k: statistics.median(times[k]))
    out["default_step_s"] = statistics.median(times["default"])
    out["small_step_s"] = statistics.median(times["small"])
    out["step_s"] = statistics.median(times[best])
    out["best"] = best
    out["local_step_s"] = statistics.median(times["none"])

    # Row 2: 10M floats.
    data = np.random.default_rng(dist.rank()).standard_normal(ALLREDUCE_FLOATS).astype(np.float32)
    t = gt.constant(data)
    send, recv = data.copy(), np.empty_like(data)
    ar_reps = 5 if quick else 15

    def mpi_alone():
        comm.Allreduce(send, recv, op=MPI.SUM)

    def gt_allreduce():
        dist.allreduce(t, op=dist.Sum)

    def gt_fp16():
        dist.allreduce(t, op=dist.Sum, compression=dist.Compression.fp16)

    mpi_t, gt_t = [], []
    for _ in range(2):
        mpi_alone()
        gt_allreduce()
    for _ in range(ar_reps):  # interleaved
        comm.Barrier()
        t0 = time.perf_counter()
        mpi_alone()
        mpi_t.append(time.perf_counter() - t0)
        comm.Barrier()
        t0 = time.perf_counter()
        gt_allreduce()
        gt_t.append(time.perf_counter() - t0)
    out["mpi4py_allreduce_s"] = statistics.median(mpi_t)
    out["gt_allreduce_s"] = statistics.median(gt_t)
    out["gt_allreduce_fp16_s"] = median_time(gt_fp16, max(3, ar_reps // 3), warm=1, sync=comm.Barrier)
    check = dist.allreduce(t, op=dist.Sum).numpy()
    comm.Allreduce(send, recv, op=MPI.SUM)
    assert np.array_equal(check, recv)
    if dist.rank() == 0:
        print("RESULT " + json.dumps(out), flush=True)


def launch(args, env_extra, mpi=False):
    env = dict(os.environ, **env_extra)
    cmd = [sys.executable, HERE, *args]
    if mpi:
        cmd = [os.path.join(os.path.dirname(sys.executable), "mpiexec"), "-n", "2", *cmd]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if p.returncode != 0:
        sys.exit(f"benchmark worker failed:\n{p.stdout}\n{p.stderr}")
    line = next(ln for ln in p.stdout.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--worker", choices=["one", "ranks"])
    args = ap.parse_args()
    reps = 10 if args.quick else 40
    if args.worker == "one":
        print("RESULT " + json.dumps(one_rank(reps)), flush=True)
        return
    if args.worker == "ranks":
        ranks(reps, args.quick)
        return

    import platform

    import gradtape as gt

    started = time.monotonic()

    print(f"# CPython {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"# gradtape {gt.__version__} from {os.path.dirname(gt.__file__)}")
    q = ["--quick"] if args.quick else []
    # Alternate the two configurations, twice, and keep each one's best median.
    ones, twos = [], []
    for _ in range(1 if args.quick else 2):
        ones.append(launch(["--worker", "one", *q], {"RAYON_NUM_THREADS": "2"}))
        twos.append(launch(["--worker", "ranks", *q], {"RAYON_NUM_THREADS": "1"}, mpi=True))
    one = min(ones, key=lambda r: r["step_s"])
    two = min(twos, key=lambda r: r["step_s"])
    comm_share = max(0.0, two["step_s"] - two["local_step_s"]) / two["step_s"]
    ratio = one["step_s"] / two["step_s"]
    gbps = lambda s: ALLREDUCE_FLOATS * 4 / s / 1e9  # noqa: E731
    ar_ratio = two["mpi4py_allreduce_s"] / two["gt_allreduce_s"]
    print()
    print("| row | figure | goal | met |")
    print("|---|---:|---|---|")
    print(f"| MLP step 784→256→256→10, batch 512, 1 rank × 2 threads | {1 / one['step_s']:.1f} steps/s "
          f"({one['step_s'] * 1e3:.2f} ms) | | |")
    for name, label in (("default", "25 MiB buckets (default)"), ("small", "128 KiB buckets")):
        print(f"| same, 2 ranks × 1 thread (256 rows each, DistributedGradientTape, {label}) | "
              f"{1 / two[name + '_step_s']:.1f} steps/s ({two[name + '_step_s'] * 1e3:.2f} ms; "
              f"{two['buckets_' + name]} bucket(s), {two['posted_' + name]} posted during the backward pass) | | |")
    print(f"| same, 2 ranks × 1 thread, no reduction (the step's local part) | "
          f"{1 / two['local_step_s']:.1f} steps/s ({two['local_step_s'] * 1e3:.2f} ms) | | |")
    print(f"| allreduce 10M float32, mpi4py Allreduce on numpy | {two['mpi4py_allreduce_s'] * 1e3:.1f} ms "
          f"({gbps(two['mpi4py_allreduce_s']):.2f} GB/s) | | |")
    print(f"| same, gt.distributed.allreduce on a gt tensor | {two['gt_allreduce_s'] * 1e3:.1f} ms "
          f"({gbps(two['gt_allreduce_s']):.2f} GB/s) | | |")
    print(f"| same, fp16 compression (float16 on the wire) | {two['gt_allreduce_fp16_s'] * 1e3:.1f} ms | | |")
    print(f"| **goal 1**: steps/s, 2 ranks × 1 thread ({two['best']} buckets) / 1 rank × 2 threads; "
          f"communication share of the 2-rank step | {ratio:.2f}×; {comm_share * 100:.0f}% | ≥ 0.9× | "
          f"{'yes' if ratio >= 0.9 else 'no'} |")
    print(f"| **goal 2**: allreduce of 10M float32, gt.distributed / mpi4py alone (throughput) | "
          f"{ar_ratio:.2f}× | ≥ 0.8× | {'yes' if ar_ratio >= 0.8 else 'no'} |")
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"the benchmark took {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
