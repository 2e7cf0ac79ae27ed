"""Tape overhead and a small training step: gradtape beside PyTorch, TensorFlow and JAX.

    python benches/compare.py            # full run (a minute or two per framework)
    python benches/compare.py --quick    # fewer repetitions (seconds per framework)
    python benches/compare.py --only gradtape,torch

Three measurements, each the median over repeated runs, in microseconds:

* record op: ``y = x + c`` on two 4-element float32 tensors, ``x`` watched, inside an
  active tape: the Python-visible cost of one recorded op.
* backward / op: a chain of N such adds is recorded, then the gradient of the result
  with respect to ``x`` is timed and divided by N.
* MLP step: one training step of a 784-256-256-10 ReLU network on a batch of 64:
  forward, softmax cross-entropy (written as logsumexp minus the true logit, the same
  formula in every framework), backward, and an SGD update.

Every framework runs in its own subprocess, eagerly (no ``tf.function``, no
``torch.compile``), with its default thread settings. JAX has no tape to record into,
so its first two columns are not measured and its step is ``jax.jit``-compiled (which
is how JAX is used); it is shown for scale, not as a like-for-like tape comparison.
Frameworks that cannot be imported are skipped and listed as such. gradtape must be a
release build (``bash scripts/setup --release``): a debug build is many times slower.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

FRAMEWORKS = ["gradtape", "torch", "tensorflow", "jax"]
MODULE = {"gradtape": "gradtape", "torch": "torch", "tensorflow": "tensorflow", "jax": "jax"}
LABEL = {"gradtape": "gradtape", "torch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX (jit)"}

SIZES = (784, 256, 256, 10)
BATCH = 64


def _median_us(samples):
    return statistics.median(samples) * 1e6


def _time(fn, reps):
    """Median seconds of ``fn()`` (which may return its own duration) over ``reps`` runs."""
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        r = fn()
        out.append(r if isinstance(r, float) else time.perf_counter() - t0)
    return out


def _data(np):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    labels = rng.integers(0, SIZES[-1], size=BATCH)
    onehot = np.eye(SIZES[-1], dtype=np.float32)[labels]
    return x, onehot


def _layer_init(np, rng, fan_in, fan_out):
    lim = (6.0 / (fan_in + fan_out)) ** 0.5
    return rng.uniform(-lim, lim, (fan_in, fan_out)).astype(np.float32), np.zeros(fan_out, np.float32)


# -- one function per framework: returns {"record": [...], "backward": [...], "step": [...]} in s


def bench_gradtape(cfg):
    import numpy as np

    import gradtape as gt

    n, reps = cfg["n"], cfg["reps"]
    x = gt.constant([1.0, 2.0, 3.0, 4.0])
    c = gt.constant([0.5, 0.5, 0.5, 0.5])

    def record():
        with gt.GradientTape() as t:
            t.watch(x)
            t0 = time.perf_counter()
            for _ in range(n):
                x + c
            dt = time.perf_counter() - t0
        return dt / n

    def backward():
        with gt.GradientTape() as t:
            t.watch(x)
            y = x
            for _ in range(n):
                y = y + c
        t0 = time.perf_counter()
        g = t.gradient(y, x)
        dt = time.perf_counter() - t0
        assert float(g.numpy()[0]) == 1.0
        return dt / n

    xb, onehot = _data(np)
    xb, onehot = gt.constant(xb), gt.constant(onehot)
    model = gt.layers.Sequential(
        [gt.layers.Dense(SIZES[1], activation="relu"), gt.layers.Dense(SIZES[2], activation="relu"), gt.layers.Dense(SIZES[3])]
    )
    opt = gt.optimizers.SGD(0.01)

    def step():
        with gt.GradientTape() as t:
            logits = model(xb)
            loss = gt.reduce_mean(gt.math.reduce_logsumexp(logits, axis=1) - gt.reduce_sum(logits * onehot, axis=1))
        grads = t.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return _run(record, backward, step, cfg, lambda l: float(l))


def bench_torch(cfg):
    import numpy as np
    import torch

    n = cfg["n"]
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    c = torch.tensor([0.5, 0.5, 0.5, 0.5])
    ones = torch.ones(4)

    def record():
        t0 = time.perf_counter()
        for _ in range(n):
            x + c
        return (time.perf_counter() - t0) / n

    def backward():
        y = x
        for _ in range(n):
            y = y + c
        t0 = time.perf_counter()
        (g,) = torch.autograd.grad(y, x, grad_outputs=ones)
        dt = time.perf_counter() - t0
        assert float(g[0]) == 1.0
        return dt / n

    xb, onehot = _data(np)
    xb, onehot = torch.from_numpy(xb), torch.from_numpy(onehot)
    model = torch.nn.Sequential(
        torch.nn.Linear(SIZES[0], SIZES[1]),
        torch.nn.ReLU(),
        torch.nn.Linear(SIZES[1], SIZES[2]),
        torch.nn.ReLU(),
        torch.nn.Linear(SIZES[2], SIZES[3]),
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad(set_to_none=True)
        logits = model(xb)
        loss = (torch.logsumexp(logits, dim=1) - (logits * onehot).sum(dim=1)).mean()
        loss.backward()
        opt.step()
        return loss

    return _run(record, backward, step, cfg, lambda l: float(l))


def bench_tensorflow(cfg):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import numpy as np
    import tensorflow as tf

    n = cfg["n"]
    x = tf.constant([1.0, 2.0, 3.0, 4.0])
    c = tf.constant([0.5, 0.5, 0.5, 0.5])

    def record():
        with tf.GradientTape() as t:
            t.watch(x)
            t0 = time.perf_counter()
            for _ in range(n):
                x + c
            dt = time.perf_counter() - t0
        return dt / n

    def backward():
        with tf.GradientTape() as t:
            t.watch(x)
            y = x
            for _ in range(n):
                y = y + c
        t0 = time.perf_counter()
        g = t.gradient(y, x)
        dt = time.perf_counter() - t0
        assert float(g.numpy()[0]) == 1.0
        return dt / n

    xb, onehot = _data(np)
    xb, onehot = tf.constant(xb), tf.constant(onehot)
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(SIZES[1], activation="relu"),
            tf.keras.layers.Dense(SIZES[2], activation="relu"),
            tf.keras.layers.Dense(SIZES[3]),
        ]
    )
    model(xb)
    opt = tf.keras.optimizers.SGD(0.01)

    def step():
        with tf.GradientTape() as t:
            logits = model(xb)
            loss = tf.reduce_mean(tf.reduce_logsumexp(logits, axis=1) - tf.reduce_sum(logits * onehot, axis=1))
        grads = t.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return _run(record, backward, step, cfg, lambda l: float(l))


def bench_jax(cfg):
    import jax
    import jax.numpy as jnp
    import numpy as np

    xb, onehot = _data(np)
    rng = np.random.default_rng(0)
    params = [_layer_init(np, rng, a, b) for a, b in zip(SIZES[:-1], SIZES[1:])]
    params = [(jnp.asarray(w), jnp.asarray(b)) for w, b in params]
    xb, onehot = jnp.asarray(xb), jnp.asarray(onehot)

    def loss_fn(params, x, y):
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            if i < len(params) - 1:
                h = jax.nn.relu(h)
        return jnp.mean(jax.nn.logsumexp(h, axis=1) - jnp.sum(h * y, axis=1))

    @jax.jit
    def update(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(params, grads)], loss

    state = {"p": params}

    def step():
        state["p"], loss = update(state["p"], xb, onehot)
        loss.block_until_ready()
        return loss

    return _run(None, None, step, cfg, lambda l: float(l))


def _run(record, backward, step, cfg, as_float):
    out = {}
    if record is not None:
        record()  # warm-up
        out["record"] = _time(record, cfg["reps"])
        backward()
        out["backward"] = _time(backward, cfg["reps"])
    first = as_float(step())
    for _ in range(cfg["warmup"]):
        step()
    out["step"] = _time(step, cfg["step_reps"])
    last = as_float(step())
    out["loss"] = [first, last]
    return out


def worker(name, cfg):
    try:
        mod = __import__(MODULE[name])
    except Exception as e:  # not installed, or broken: reported, not fatal
        print(json.dumps({"skipped": f"{type(e).__name__}: {e}".splitlines()[0][:120]}))
        return
    res = globals()[f"bench_{name}"](cfg)
    res["version"] = getattr(mod, "__version__", "?")
    if name == "gradtape":
        res["path"] = os.path.dirname(mod.__file__)
    print(json.dumps(res))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer repetitions")
    p.add_argument("--only", default=",".join(FRAMEWORKS), help="comma-separated subset of " + ",".join(FRAMEWORKS))
    p.add_argument("--python", action="append", default=[], metavar="NAME=PYTHON",
                   help="run framework NAME with another interpreter (e.g. a venv that has it)")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--cfg", help=argparse.SUPPRESS)
    args = p.parse_args()

    if args.worker:
        worker(args.worker, json.loads(args.cfg))
        return 0

    cfg = (
        {"n": 1000, "reps": 7, "warmup": 3, "step_reps": 15}
        if args.quick
        else {"n": 2000, "reps": 21, "warmup": 10, "step_reps": 50}
    )
    pythons = dict(s.split("=", 1) for s in args.python)
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    for n in names:
        if n not in FRAMEWORKS:
            p.error(f"unknown framework {n!r}; choose from {', '.join(FRAMEWORKS)}")

    print(f"# {platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs; {'quick' if args.quick else 'full'} mode: "
          f"N={cfg['n']} ops x {cfg['reps']} runs, {cfg['step_reps']} MLP steps; medians")
    rows, skipped = [], []
    for name in names:
        py = pythons.get(name, sys.executable)
        res = subprocess.run(
            [py, os.path.abspath(__file__), "--worker", name, "--cfg", json.dumps(cfg)],
            capture_output=True, text=True,
        )
        lines = [l for l in res.stdout.splitlines() if l.startswith("{")]
        if res.returncode != 0 or not lines:
            skipped.append((name, f"failed: {res.stderr.strip().splitlines()[-1] if res.stderr.strip() else res.returncode}"))
            continue
        r = json.loads(lines[-1])
        if "skipped" in r:
            skipped.append((name, r["skipped"]))
            continue
        if name == "gradtape":
            print(f"# gradtape {r['version']} from {r['path']}")
        rows.append((name, r))

    def fmt(r, key):
        return f"{_median_us(r[key]):.2f}" if key in r else "n/a"

    print()
    print("| framework | version | record op (µs) | backward / op (µs) | MLP step (µs) | loss first → last |")
    print("|---|---|---:|---:|---:|---|")
    for name, r in rows:
        step = f"{_median_us(r['step']):.0f}"
        print(f"| {LABEL[name]} | {r['version']} | {fmt(r, 'record')} | {fmt(r, 'backward')} | {step} | "
              f"{r['loss'][0]:.3f} → {r['loss'][1]:.3f} |")
    for name, why in skipped:
        print(f"\n{LABEL[name]}: skipped ({why})", end="")
    print()
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
