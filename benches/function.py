"""gt.function beside eager gradtape, TensorFlow (eager and tf.function) and jax.jit:
the performance rows of issue 13.

    python benches/function.py            # gradtape must be a release build
    python benches/function.py --quick

Rows (float32; each cell the median of the repetitions, ratios from the same run; the
threads row runs first, before TensorFlow and JAX are imported):

 1. elementwise: ``reduce_sum(exp(sin(x)·x) + x)`` on 10M elements, value and gradient
    with respect to ``x`` (the tape inside the traced function); ms.
 2. tiny chain, forward: 1000 ops (alternating ``*`` and ``+`` on 4-element tensors)
    in one traced function; µs per op.
 3. tiny chain, forward + backward: the same chain and the gradient of its sum inside
    the function; µs per op.
 4. MLP step 64×784→256→256→10 (ReLU, softmax cross-entropy, SGD with ``assign_sub``),
    tape and update inside the function; ms; against gradtape eager.
 5. trace time of that step (first call minus a later call); ms.
 6. two Python threads each calling a traced 16×32→32→32→1 step on its own weights:
    steps per second relative to one thread (2.0 = perfect), median of several runs;
    "same cores": each thread kept on a CPU of its own, against one thread alone on
    each of those CPUs (timed before and after), so that CPUs of a virtual machine
    running at different speeds do not count as the engine's (see ``threads_ratio``);
    "unpinned": the scheduler places the threads, against one thread where it ran.

TensorFlow and JAX columns appear when they can be imported (a bench virtualenv with
``tensorflow-cpu`` and ``jax``); otherwise they are skipped and said so.
"""

import argparse
import os
import statistics
import threading
import time

# numpy's OpenBLAS threads spin for a while after it starts and take CPU from the
# threads row; nothing timed here uses numpy's BLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import gradtape as gt  # noqa: E402

ELEMENTS = 10_000_000
CHAIN = 1000


def timed(fn, reps, warm=2):
    for _ in range(warm):
        fn()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


# -- the workloads, per engine ---------------------------------------------------------


def gt_elementwise(traced):
    x = gt.constant(np.random.default_rng(0).standard_normal(ELEMENTS).astype(np.float32))

    def f(x):
        with gt.GradientTape() as t:
            t.watch(x)
            y = gt.reduce_sum(gt.exp(gt.sin(x) * x) + x)
        return y, t.gradient(y, x)

    f = gt.function(f) if traced else f
    return lambda: f(x)[1].numpy()


def gt_chain(backward):
    x, c = gt.constant([0.5, 1.0, 1.5, 2.0]), gt.constant([1.0001, 1.0001, 1.0001, 1.0001])

    def chain(x):
        y = x
        for i in range(CHAIN):
            y = y * c if i % 2 == 0 else y + c
        return y

    if backward:

        def f(x):
            with gt.GradientTape() as t:
                t.watch(x)
                y = gt.reduce_sum(chain(x))
            return t.gradient(y, x)

    else:
        f = chain
    f = gt.function(f)
    return lambda: f(x)


def mlp_params(sizes, seed):
    rng = np.random.default_rng(seed)
    ps = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        ps += [rng.standard_normal((a, b)).astype(np.float32) * float(np.sqrt(2.0 / a)), np.zeros(b, np.float32)]
    return ps


def mlp_data(sizes, batch, seed):
    rng = np.random.default_rng(seed + 100)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = (
        np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], batch)]
        if sizes[-1] > 1
        else (rng.standard_normal((batch, 1)).astype(np.float32))
    )
    return x, y


def gt_mlp(sizes, batch, traced, seed=0):
    ws = [gt.Variable(p) for p in mlp_params(sizes, seed)]
    xn, yn = mlp_data(sizes, batch, seed)
    x, y = gt.constant(xn), gt.constant(yn)
    xent = sizes[-1] > 1

    def step(x, y):
        with gt.GradientTape() as t:
            h = x
            for i in range(0, len(ws), 2):
                h = gt.matmul(h, ws[i]) + ws[i + 1]
                if i + 2 < len(ws):
                    h = gt.nn.relu(h)
            if xent:
                loss = gt.reduce_mean(gt.reduce_logsumexp(h, axis=1) - gt.reduce_sum(h * y, axis=1))
            else:
                loss = gt.reduce_mean(gt.square(h - y))
        grads = t.gradient(loss, ws)
        for w, g in zip(ws, grads):
            w.assign_sub(0.01 * g)
        return loss

    f = gt.function(step) if traced else step
    return lambda: f(x, y)


def tf_workloads(tf):
    def elementwise(traced):
        x = tf.constant(np.random.default_rng(0).standard_normal(ELEMENTS).astype(np.float32))

        def f(x):
            with tf.GradientTape() as t:
                t.watch(x)
                y = tf.reduce_sum(tf.exp(tf.sin(x) * x) + x)
            return y, t.gradient(y, x)

        f = tf.function(f) if traced else f
        return lambda: f(x)[1].numpy()

    def chain(backward):
        x, c = tf.constant([0.5, 1.0, 1.5, 2.0]), tf.constant([1.0001] * 4)

        def ch(x):
            y = x
            for i in range(CHAIN):
                y = y * c if i % 2 == 0 else y + c
            return y

        if backward:

            def f(x):
                with tf.GradientTape() as t:
                    t.watch(x)
                    y = tf.reduce_sum(ch(x))
                return t.gradient(y, x)

        else:
            f = ch
        f = tf.function(f)
        return lambda: f(x)

    def mlp(sizes, batch, traced, seed=0):
        ws = [tf.Variable(p) for p in mlp_params(sizes, seed)]
        xn, yn = mlp_data(sizes, batch, seed)
        x, y = tf.constant(xn), tf.constant(yn)

        def step(x, y):
            with tf.GradientTape() as t:
                h = x
                for i in range(0, len(ws), 2):
                    h = tf.matmul(h, ws[i]) + ws[i + 1]
                    if i + 2 < len(ws):
                        h = tf.nn.relu(h)
                loss = tf.reduce_mean(tf.reduce_logsumexp(h, axis=1) - tf.reduce_sum(h * y, axis=1))
            grads = t.gradient(loss, ws)
            for w, g in zip(ws, grads):
                w.assign_sub(0.01 * g)
            return loss

        f = tf.function(step) if traced else step
        return lambda: f(x, y)

    return elementwise, chain, mlp


def jax_elementwise(jax):
    jnp = jax.numpy
    x = jnp.asarray(np.random.default_rng(0).standard_normal(ELEMENTS).astype(np.float32))
    f = jax.jit(jax.value_and_grad(lambda x: jnp.sum(jnp.exp(jnp.sin(x) * x) + x)))
    return lambda: f(x)[1].block_until_ready()


def trace_time(make):
    """First call (trace + run) minus the median later call, in seconds."""
    run = make()
    t0 = time.perf_counter()
    run()
    first = time.perf_counter() - t0
    return first - timed(run, 5, warm=0)


def _pin(cpu):
    """Keeps the calling thread on `cpu` (None: any CPU the process may use)."""
    os.sched_setaffinity(0, _CPUS if cpu is None else {cpu})


_CPUS = set(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else set()


def threads_ratio(steps, reps=5):
    """Steps per second of two threads over one thread's: (on the same cores, unpinned),
    each the median of `reps` runs.

    On the same cores (Linux, two CPUs or more): each thread is kept on a CPU of its own,
    and one thread's rate is the mean of one thread alone on each of those CPUs, timed
    just before and just after the two threads. A virtual machine's CPUs do not keep one
    speed (on the machine of the README's table, one step takes 48 µs or 85 µs depending
    on when and on which CPU it runs, with a single thread), so a single thread timed on
    the fast CPU against two threads of which one runs on the slow one says ~1.1× for
    threads that scale perfectly. The unpinned ratio (the scheduler places the threads)
    is given beside it; None for the pinned one where threads cannot be placed."""
    a = gt_mlp((32, 32, 32, 1), 16, True, seed=1)
    b = gt_mlp((32, 32, 32, 1), 16, True, seed=2)
    for _ in range(20):
        a(), b()
    cpus = sorted(_CPUS)[:2]
    rate = {}

    def loop(f, name, cpu=None):
        if len(cpus) == 2:
            _pin(cpu)
        t0 = time.perf_counter()
        for _ in range(steps):
            f()
        rate[name] = steps / (time.perf_counter() - t0)

    def single(cpu):
        loop(a, "one", cpu)
        return rate["one"]

    def two(pinned):
        ts = [
            threading.Thread(target=loop, args=(f, n, c if pinned else None))
            for f, n, c in ((a, "a", cpus[0] if cpus else None), (b, "b", cpus[-1] if cpus else None))
        ]
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return 2 * steps / (time.perf_counter() - t0)

    same, free = [], []
    for _ in range(reps):
        loop(a, "one")
        free.append(two(False) / rate["one"])
        if len(cpus) == 2:
            before = [single(c) for c in cpus]
            pair = two(True)
            after = [single(c) for c in cpus]
            same.append(pair / statistics.mean(before + after))
    if len(cpus) == 2:
        _pin(None)
    return (statistics.median(same) if same else None), statistics.median(free)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    reps = 5 if args.quick else 15
    # The threads row first: TensorFlow's and JAX's own thread pools, once imported,
    # take CPU from it.
    threads_same, threads_free = threads_ratio(1000 if args.quick else 2000, 5 if args.quick else 9)
    try:
        import tensorflow as tf
    except ImportError:
        tf = None
        print("TensorFlow: not importable, its columns are skipped")
    try:
        import jax
    except ImportError:
        jax = None
        print("JAX: not importable, its column is skipped")
    rows = []

    def row(name, unit, scale, cells, goal):
        rows.append((name, unit, {k: (v * scale if v is not None else None) for k, v in cells.items()}, goal))

    ew = {"gradtape eager": timed(gt_elementwise(False), reps), "gradtape traced": timed(gt_elementwise(True), reps)}
    if tf is not None:
        el, ch, mlp = tf_workloads(tf)
        ew["TF eager"] = timed(el(False), reps)
        ew["tf.function"] = timed(el(True), reps)
    if jax is not None:
        ew["jax.jit"] = timed(jax_elementwise(jax), reps)
    row("elementwise 10M, value+grad", "ms", 1e3, ew, "traced ≤ 0.5× TF eager, ≤ 1.0× tf.function and jax.jit")

    for backward in (False, True):
        cells = {"gradtape traced": timed(gt_chain(backward), reps) / CHAIN}
        if tf is not None:
            cells["tf.function"] = timed(ch(backward), reps) / CHAIN
        row(f"tiny chain, {'forward+backward' if backward else 'forward'}", "µs/op", 1e6, cells, "≤ 0.5× tf.function")

    big = {
        "gradtape eager": timed(gt_mlp((784, 256, 256, 10), 64, False), reps * 4),
        "gradtape traced": timed(gt_mlp((784, 256, 256, 10), 64, True), reps * 4),
    }
    if tf is not None:
        big["tf.function"] = timed(mlp((784, 256, 256, 10), 64, True), reps * 4)
    row("MLP step 64×784→256→256→10", "ms", 1e3, big, "traced ≤ 0.8× gradtape eager")

    tt = {"gradtape": trace_time(lambda: gt_mlp((784, 256, 256, 10), 64, True))}
    if tf is not None:
        tt["tf.function"] = trace_time(lambda: mlp((784, 256, 256, 10), 64, True))
    row("trace time of that step", "ms", 1e3, tt, "≤ tf.function")

    cells = {}
    if threads_same is not None:
        cells["same cores"] = threads_same
    cells["unpinned"] = threads_free
    row("2 threads, traced 16×32→32→32→1 step", "× one thread", 1.0, cells, "≥ 1.6×")

    print()
    for name, unit, cells, goal in rows:
        print(f"{name} [{unit}]   goal: {goal}")
        for k, v in cells.items():
            print(f"    {k:<18} {v:10.3f}")
    ew = rows[0][2]
    print()
    print("ratios:")
    if "TF eager" in ew:
        print(f"    elementwise traced / TF eager     {ew['gradtape traced'] / ew['TF eager']:.2f}")
        print(f"    elementwise traced / tf.function  {ew['gradtape traced'] / ew['tf.function']:.2f}")
    if "jax.jit" in ew:
        print(f"    elementwise traced / jax.jit      {ew['gradtape traced'] / ew['jax.jit']:.2f}")
    for name, _, cells, _ in rows[1:3]:
        if "tf.function" in cells:
            print(f"    {name} / tf.function  {cells['gradtape traced'] / cells['tf.function']:.2f}")
    mlp_cells = rows[3][2]
    print(f"    MLP traced / eager                {mlp_cells['gradtape traced'] / mlp_cells['gradtape eager']:.2f}")
    if "tf.function" in rows[4][2]:
        print(f"    trace time / tf.function          {rows[4][2]['gradtape'] / rows[4][2]['tf.function']:.2f}")


if __name__ == "__main__":
    main()
