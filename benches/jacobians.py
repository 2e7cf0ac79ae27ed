"""Jacobians, batch Jacobians and Hessians: gradtape beside PyTorch, TensorFlow and JAX.

    python benches/jacobians.py                 # every framework that imports
    python benches/jacobians.py --only gradtape # one of them

Workloads (float32, medians over repeated runs, milliseconds, eager everywhere):

* jacobian: ``tanh(tanh(x @ W1) @ W2)`` with 256x256 weights, Jacobian with respect to
  the input x of shape (1, 256). gradtape/TF: ``tape.jacobian`` (pfor); PyTorch:
  ``torch.func.jacrev``; JAX: ``jax.jacrev`` (not jitted).
* jacobian_matvec: ``tanh(matvec(W2, tanh(matvec(W1, x) + b1)) + b2)``, the same
  network on a vector x of shape (256,) with biases (issue 14: every gradient rule takes
  the stacked seeds at once); PyTorch: ``torch.func.jacrev`` of ``W @ x + b``.
* batch_jacobian: ``elu(elu(x @ V1) @ V2)`` with 64x64 weights, batch of 128;
  gradtape/TF: ``tape.batch_jacobian``; PyTorch: ``vmap(jacrev)``; JAX: ``vmap(jacrev)``.
* hessian: ``sum(sin(A @ p) * p)`` of 200 parameters; gradtape/TF: jacobian of a
  gradient under nested tapes; PyTorch: ``torch.func.hessian``; JAX: ``jax.hessian``.

Each framework runs in its own subprocess. gradtape must be a release build
(``bash scripts/setup --release`` or an installed wheel).
"""

import argparse
import json
import statistics
import subprocess
import sys
import time

FRAMEWORKS = ["gradtape", "torch", "tensorflow", "jax"]
WORKLOADS = ["jacobian", "jacobian_matvec", "batch_jacobian", "hessian"]


def data():
    import numpy as np

    rng = np.random.default_rng(0)
    f = np.float32
    return {
        "W1": (rng.normal(size=(256, 256)) / 16).astype(f),
        "W2": (rng.normal(size=(256, 256)) / 16).astype(f),
        "X": rng.normal(size=(1, 256)).astype(f),
        "x": rng.normal(size=(256,)).astype(f),
        "b1": rng.normal(size=(256,)).astype(f),
        "b2": rng.normal(size=(256,)).astype(f),
        "V1": (rng.normal(size=(64, 64)) / 8).astype(f),
        "V2": (rng.normal(size=(64, 64)) / 8).astype(f),
        "XB": rng.normal(size=(128, 64)).astype(f),
        "P": rng.normal(size=(200,)).astype(f),
        "A": (rng.normal(size=(200, 200)) / 20).astype(f),
    }


def gradtape_fns(d):
    import gradtape as gt

    c = {k: gt.constant(v) for k, v in d.items()}

    def jac():
        with gt.GradientTape() as t:
            t.watch(c["X"])
            y = gt.tanh(gt.tanh(c["X"] @ c["W1"]) @ c["W2"])
        return t.jacobian(y, c["X"])

    def jac_mv():
        mv = gt.linalg.matvec
        with gt.GradientTape() as t:
            t.watch(c["x"])
            y = gt.tanh(mv(c["W2"], gt.tanh(mv(c["W1"], c["x"]) + c["b1"])) + c["b2"])
        return t.jacobian(y, c["x"])

    def bj():
        with gt.GradientTape() as t:
            t.watch(c["XB"])
            y = gt.nn.elu(gt.nn.elu(c["XB"] @ c["V1"]) @ c["V2"])
        return t.batch_jacobian(y, c["XB"])

    def hess():
        p = c["P"]
        with gt.GradientTape() as t2:
            t2.watch(p)
            with gt.GradientTape() as t1:
                t1.watch(p)
                f = gt.reduce_sum(gt.sin(gt.linalg.matvec(c["A"], p)) * p)
            g = t1.gradient(f, p)
        return t2.jacobian(g, p)

    return jac, jac_mv, bj, hess


def tensorflow_fns(d):
    import tensorflow as tf

    c = {k: tf.constant(v) for k, v in d.items()}

    def jac():
        with tf.GradientTape() as t:
            t.watch(c["X"])
            y = tf.tanh(tf.tanh(c["X"] @ c["W1"]) @ c["W2"])
        return t.jacobian(y, c["X"])

    def jac_mv():
        mv = tf.linalg.matvec
        with tf.GradientTape() as t:
            t.watch(c["x"])
            y = tf.tanh(mv(c["W2"], tf.tanh(mv(c["W1"], c["x"]) + c["b1"])) + c["b2"])
        return t.jacobian(y, c["x"])

    def bj():
        with tf.GradientTape() as t:
            t.watch(c["XB"])
            y = tf.nn.elu(tf.nn.elu(c["XB"] @ c["V1"]) @ c["V2"])
        return t.batch_jacobian(y, c["XB"])

    def hess():
        p = c["P"]
        with tf.GradientTape() as t2:
            t2.watch(p)
            with tf.GradientTape() as t1:
                t1.watch(p)
                f = tf.reduce_sum(tf.sin(tf.linalg.matvec(c["A"], p)) * p)
            g = t1.gradient(f, p)
        return t2.jacobian(g, p)

    return jac, jac_mv, bj, hess


def torch_fns(d):
    import torch
    from torch.func import hessian, jacrev, vmap

    c = {k: torch.tensor(v) for k, v in d.items()}
    f1 = lambda x: torch.tanh(torch.tanh(x @ c["W1"]) @ c["W2"])  # noqa: E731
    f1v = lambda x: torch.tanh(c["W2"] @ torch.tanh(c["W1"] @ x + c["b1"]) + c["b2"])  # noqa: E731
    elu = torch.nn.functional.elu
    f2 = lambda x: elu(elu(x @ c["V1"]) @ c["V2"])  # noqa: E731
    f3 = lambda p: (torch.sin(c["A"] @ p) * p).sum()  # noqa: E731
    return (
        lambda: jacrev(f1)(c["X"]),
        lambda: jacrev(f1v)(c["x"]),
        lambda: vmap(jacrev(f2))(c["XB"]),
        lambda: hessian(f3)(c["P"]),
    )


def jax_fns(d):
    import jax
    import jax.numpy as jnp

    c = {k: jnp.asarray(v) for k, v in d.items()}
    f1 = lambda x: jnp.tanh(jnp.tanh(x @ c["W1"]) @ c["W2"])  # noqa: E731
    f1v = lambda x: jnp.tanh(c["W2"] @ jnp.tanh(c["W1"] @ x + c["b1"]) + c["b2"])  # noqa: E731
    f2 = lambda x: jax.nn.elu(jax.nn.elu(x @ c["V1"]) @ c["V2"])  # noqa: E731
    f3 = lambda p: (jnp.sin(c["A"] @ p) * p).sum()  # noqa: E731
    return (
        lambda: jax.jacrev(f1)(c["X"]).block_until_ready(),
        lambda: jax.jacrev(f1v)(c["x"]).block_until_ready(),
        lambda: jax.vmap(jax.jacrev(f2))(c["XB"]).block_until_ready(),
        lambda: jax.hessian(f3)(c["P"]).block_until_ready(),
    )


def median_ms(f, reps):
    f()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def child(name, reps):
    fns = {"gradtape": gradtape_fns, "tensorflow": tensorflow_fns, "torch": torch_fns, "jax": jax_fns}[name]
    try:
        fs = fns(data())
    except ImportError as e:
        print(json.dumps({"skipped": str(e)}))
        return
    print(json.dumps({w: median_ms(f, reps) for w, f in zip(WORKLOADS, fs)}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=",".join(FRAMEWORKS))
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child, a.reps)
        return
    rows = {}
    for name in a.only.split(","):
        out = subprocess.run(
            [sys.executable, __file__, "--child", name, "--reps", str(a.reps)],
            capture_output=True, text=True,
        )
        lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
        rows[name] = json.loads(lines[-1]) if lines else {"skipped": out.stderr.strip()[-200:]}
    base = rows.get("gradtape", {})
    print(f"| framework | {' | '.join(WORKLOADS)} |")
    print("|---|" + "---:|" * len(WORKLOADS))
    for name, r in rows.items():
        if "skipped" in r:
            print(f"| {name} | skipped: {r['skipped'][:60]} |")
            continue
        cells = []
        for w in WORKLOADS:
            ratio = f" ({base[w] / r[w]:.2f}x)" if name != "gradtape" and w in base else ""
            cells.append(f"{r[w]:.2f} ms{ratio}")
        print(f"| {name} | {' | '.join(cells)} |")
    print("\n(x) = gradtape's time / this framework's time: below 1 means gradtape is faster.")


if __name__ == "__main__":
    main()
