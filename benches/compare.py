"""gradtape beside PyTorch, TensorFlow and JAX: the performance workloads of issue 5.

    python benches/compare.py                   # full run (several minutes)
    python benches/compare.py --quick           # fewer rounds and repetitions
    python benches/compare.py --only gradtape,torch
    python benches/compare.py --python jax=/path/to/venv/bin/python

Workloads (float32 everywhere, eager everywhere: no ``tf.function``, no
``torch.compile``, no ``jax.jit``):

 1. tiny op, forward: ``x + c`` on 4-element tensors inside an active tape with ``x``
    watched; µs per recorded op.
 2. tiny op, backward: the gradient of a chain of N such adds, timed and divided by N.
 3. MLP step 64×784→256→256→10 (ReLU): forward, softmax cross-entropy (written as
    logsumexp minus the true logit, the same formula everywhere), backward, SGD; ms.
 4. MLP step 16×32→32→32→1 (ReLU), mean squared error, backward, SGD: overhead-bound; ms.
 5. matmul 1024², forward and backward: ``y = a @ b`` then the gradients of ``a`` and
    ``b`` for an upstream gradient of ones (3 GEMMs); GFLOP/s = 3·2n³ / time.
 6. the same at 2048².
 7. elementwise: ``reduce_sum(exp(sin(x)·x) + x)`` on 10M elements and its gradient
    with respect to ``x``; ms.
 8. peak memory: a 50-layer 512-wide ReLU MLP (no bias), batch 256, forward and the
    gradient of the sum of its output with respect to all 50 weights under a
    non-persistent tape; the peak RSS increase over the RSS just before the forward
    (weights and input already allocated), MiB.
 9. memory kept: the same under a persistent tape; the gradient is computed, then the
    tape, outputs and gradients are deleted and ``gc.collect()`` runs; RSS after minus
    RSS before the forward, MiB (values under 1 MiB are RSS noise).
10. threads: two Python threads each running workload 3's step on its own weights,
    throughput relative to one thread running it alone: 2·t_one / t_two (2.0 = perfect).
11. CNN step on 64×28×28×1 inputs: conv 3×3·32 (VALID) → ReLU → max pool 2×2 → conv
    3×3·64 → ReLU → max pool 2×2 → flatten (1600) → dense 10, softmax cross-entropy
    (logsumexp minus the true logit), backward, SGD; ms. NHWC where the framework
    takes it (PyTorch: NCHW, its native layout; the same weights, transposed).

The MLPs use plain weight tensors (Variables where the framework has them) updated in
place with ``assign_sub`` (PyTorch: ``sub_`` under ``no_grad``), the same code shape
in every framework. PyTorch records into its autograd graph (``requires_grad``),
TensorFlow and gradtape into a ``GradientTape``. JAX has no tape: it runs eagerly (no
``jit``) under ``jax.vjp`` / ``jax.grad``, whose closure plays the tape's role, so its
column is like-for-like with the issue's eager JAX figures, not JAX's jitted speed.

Method. One long-lived worker subprocess per framework (JSON lines over stdin/stdout);
the timing workloads run in rounds, round-robin over the frameworks (the order rotates
each round), so load drift on a shared machine hits every framework alike. Each cell
shows the median over all samples and, in parentheses, the interquartile range.
The memory workloads each run in a fresh subprocess per framework (after a 2-layer
warm-up of the same code, so lazy library initialization is not counted); the peak is
reset through ``/proc/self/clear_refs`` and read from ``VmHWM`` (Linux only).
Every workload checks its result against a NumPy reference (gradtape's outside the
timed region, on every repetition where cheap), so a broken computation cannot be timed.
Frameworks that cannot be imported are skipped and said so. gradtape must be a release
build (``bash scripts/setup --release`` or an installed wheel).

The "gradtape ratio" column divides gradtape's median by the goal's anchor: PyTorch for
the tiny op, MLP steps, matmul and kept memory; TensorFlow for the elementwise chain and
peak memory; the threads row is absolute.
"""

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Callable, NamedTuple, Optional

FRAMEWORKS = ["gradtape", "torch", "tensorflow", "jax"]
LABEL = {"gradtape": "gradtape", "torch": "PyTorch", "tensorflow": "TensorFlow", "jax": "JAX (eager)"}

BIG_MLP, BIG_BATCH = (784, 256, 256, 10), 64
SMALL_MLP, SMALL_BATCH = (32, 32, 32, 1), 16
ELEMENTS = 10_000_000
DEEP_LAYERS, DEEP_WIDTH, DEEP_BATCH = 50, 512, 256
LR = 0.01
MIB = 1024.0 * 1024.0


class Workload(NamedTuple):
    key: str
    label: str
    unit: str
    convert: Callable[[float], float]  # raw worker sample -> displayed value
    anchor: Optional[str]  # framework the goal is relative to (None: absolute)
    goal: str
    met: Callable[[float, Optional[float]], bool]  # (gradtape value, anchor value)
    memory: bool = False


def _le(k):
    return lambda g, a: g <= k * a


def _gflops(n):
    return lambda s: 6.0 * n**3 / s / 1e9


WORKLOADS = [
    Workload("tiny_fwd", "tiny recorded op, 4-elem add, forward", "µs/op", lambda s: s * 1e6, "torch", "≤ 0.5× PyTorch", _le(0.5)),
    Workload("tiny_bwd", "same, backward per op", "µs/op", lambda s: s * 1e6, "torch", "≤ 0.5× PyTorch", _le(0.5)),
    Workload("mlp_big", "MLP step 64×784→256→256→10", "ms", lambda s: s * 1e3, "torch", "≤ 1.0× PyTorch", _le(1.0)),
    Workload("mlp_small", "MLP step 16×32→32→32→1", "ms", lambda s: s * 1e3, "torch", "≤ 0.7× PyTorch", _le(0.7)),
    Workload("matmul_1024", "matmul 1024² fwd+bwd", "GFLOP/s", _gflops(1024), "torch", "≥ 0.95× PyTorch", lambda g, a: g >= 0.95 * a),
    Workload("matmul_2048", "matmul 2048² fwd+bwd", "GFLOP/s", _gflops(2048), "torch", "≥ 0.95× PyTorch", lambda g, a: g >= 0.95 * a),
    Workload("elementwise", "sum(exp(sin(x)·x)+x), 10M, fwd+bwd", "ms", lambda s: s * 1e3, "tensorflow", "≤ 0.5× TF", _le(0.5)),
    Workload("mem_peak", "peak memory, 50×512 ReLU MLP, batch 256", "MiB", float, "tensorflow", "≤ 1.0× TF", _le(1.0), True),
    Workload("mem_kept", "memory kept after `del` of a persistent tape", "MiB", float, "torch", "≤ PyTorch's",
             lambda g, a: g <= max(a, 1.0), True),
    Workload("threads", "2 threads, own tapes, vs 1 thread", "×", float, None, "≥ 1.0×", lambda g, a: g >= 1.0),
    Workload("cnn", "CNN step 64×28×28×1, 2 conv + 2 pool + dense", "ms", lambda s: s * 1e3, "torch", "≤ 1.0× PyTorch", _le(1.0)),
]

MODES = {
    # rounds; per round: repetitions of each timing workload; warm-up calls; memory repeats
    "quick": {"rounds": 3, "tiny_n": 500, "reps": {"tiny_fwd": 2, "tiny_bwd": 2, "mlp_big": 3, "mlp_small": 3,
              "matmul_1024": 2, "matmul_2048": 1, "elementwise": 1, "threads": 1, "cnn": 2},
              "small_inner": 10, "thread_steps": 10, "warmup": 1, "mem_repeats": 1},
    "full": {"rounds": 7, "tiny_n": 2000, "reps": {"tiny_fwd": 3, "tiny_bwd": 3, "mlp_big": 5, "mlp_small": 5,
             "matmul_1024": 3, "matmul_2048": 2, "elementwise": 2, "threads": 1, "cnn": 3},
             "small_inner": 10, "thread_steps": 25, "warmup": 2, "mem_repeats": 3},
}


# -- data and NumPy references (shared by every framework) ------------------------------


def mlp_data(sizes, batch, seed):
    import numpy as np

    rng = np.random.default_rng(seed)
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        lim = (6.0 / (a + b)) ** 0.5
        params += [rng.uniform(-lim, lim, (a, b)).astype(np.float32), rng.uniform(-0.1, 0.1, b).astype(np.float32)]
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    if sizes[-1] == 1:  # regression target
        y = rng.standard_normal((batch, 1)).astype(np.float32)
    else:  # one-hot labels
        y = np.eye(sizes[-1], dtype=np.float32)[rng.integers(0, sizes[-1], size=batch)]
    return params, x, y


def mlp_reference_grads(params, x, y, xent):
    """Loss and gradients of the MLP in float64 NumPy."""
    import numpy as np

    p = [q.astype(np.float64) for q in params]
    hs, h = [x.astype(np.float64)], x.astype(np.float64)
    n = len(p) // 2
    for i in range(n):
        h = h @ p[2 * i] + p[2 * i + 1]
        if i < n - 1:
            h = np.maximum(h, 0)
        hs.append(h)
    z, b = hs[-1], x.shape[0]
    if xent:
        m = z.max(axis=1, keepdims=True)
        e = np.exp(z - m)
        loss = np.mean(np.log(e.sum(axis=1)) + m[:, 0] - (z * y).sum(axis=1))
        dz = (e / e.sum(axis=1, keepdims=True) - y) / b
    else:
        loss = np.mean((z - y) ** 2)
        dz = 2 * (z - y) / z.size
    grads = [None] * len(p)
    for i in reversed(range(n)):
        grads[2 * i], grads[2 * i + 1] = hs[i].T @ dz, dz.sum(axis=0)
        dz = dz @ p[2 * i].T
        if i > 0:
            dz = dz * (hs[i] > 0)
    return loss, grads


def check_sgd(before, after, x, y, xent):
    """Assert that one SGD step turned ``before`` into ``after``."""
    import numpy as np

    _, grads = mlp_reference_grads(before, x, y, xent)
    for i, (w0, w1, g) in enumerate(zip(before, after, grads)):
        # A pre-activation within rounding of 0 may take the other side of the ReLU
        # kink in float32 than in this float64 reference, changing the gradient of the
        # weights feeding that unit (one column, < 1% of a matrix). A broken step
        # differs almost everywhere.
        bad = ~np.isclose(w1, w0 - LR * g, rtol=1e-4, atol=1e-5)
        assert bad.mean() <= 0.02, f"parameter {i}: {bad.mean():.1%} of the SGD update differs from NumPy's"


CNN_BATCH, CNN_CHANNELS = 64, (1, 32, 64)


def cnn_data(seed):
    """Weights (HWIO kernels, biases, dense), NHWC inputs and one-hot labels."""
    import numpy as np

    rng = np.random.default_rng(seed)
    c0, c1, c2 = CNN_CHANNELS

    def glorot(shape, fan_in, fan_out):
        lim = (6.0 / (fan_in + fan_out)) ** 0.5
        return rng.uniform(-lim, lim, shape).astype(np.float32)

    params = [
        glorot((3, 3, c0, c1), 9 * c0, 9 * c1), rng.uniform(-0.1, 0.1, c1).astype(np.float32),
        glorot((3, 3, c1, c2), 9 * c1, 9 * c2), rng.uniform(-0.1, 0.1, c2).astype(np.float32),
        glorot((5 * 5 * c2, 10), 5 * 5 * c2, 10), rng.uniform(-0.1, 0.1, 10).astype(np.float32),
    ]
    x = rng.standard_normal((CNN_BATCH, 28, 28, c0)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, size=CNN_BATCH)]
    return params, x, y


def cnn_reference_grads(params, x, y):
    """Loss and gradients of the CNN in float64 NumPy (VALID convs, 2×2 max pools)."""
    import numpy as np
    from numpy.lib.stride_tricks import sliding_window_view

    w1, b1, w2, b2, w3, b3 = (q.astype(np.float64) for q in params)

    def conv(a, w):
        win = sliding_window_view(a, (3, 3), axis=(1, 2))  # n, oh, ow, c, 3, 3
        return np.einsum("nhwcij,ijco->nhwo", win, w), win

    def pool(a):
        n, h, w, c = a.shape
        h2, w2 = h // 2, w // 2
        blocks = a[:, : 2 * h2, : 2 * w2].reshape(n, h2, 2, w2, 2, c).transpose(0, 1, 3, 5, 2, 4).reshape(n, h2, w2, c, 4)
        arg = blocks.argmax(axis=-1)  # the first maximum, TF's and PyTorch's tie rule
        return blocks.max(axis=-1), arg

    def unpool(d, arg, shape):
        n, h2, w2, c = d.shape
        blocks = np.zeros((n, h2, w2, c, 4))
        np.put_along_axis(blocks, arg[..., None], d[..., None], axis=-1)
        out = np.zeros(shape)
        out[:, : 2 * h2, : 2 * w2] = blocks.reshape(n, h2, w2, c, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(n, 2 * h2, 2 * w2, c)
        return out

    x = x.astype(np.float64)
    z1, win1 = conv(x, w1)
    z1 = z1 + b1
    a1 = np.maximum(z1, 0)
    p1, arg1 = pool(a1)
    z2, win2 = conv(p1, w2)
    z2 = z2 + b2
    a2 = np.maximum(z2, 0)
    p2, arg2 = pool(a2)
    f = p2.reshape(len(x), -1)
    z = f @ w3 + b3
    m = z.max(axis=1, keepdims=True)
    e = np.exp(z - m)
    loss = np.mean(np.log(e.sum(axis=1)) + m[:, 0] - (z * y).sum(axis=1))
    dz = (e / e.sum(axis=1, keepdims=True) - y) / len(x)
    g3, gb3 = f.T @ dz, dz.sum(axis=0)
    dz2 = unpool((dz @ w3.T).reshape(p2.shape), arg2, a2.shape) * (z2 > 0)
    g2, gb2 = np.einsum("nhwcij,nhwo->ijco", win2, dz2), dz2.sum(axis=(0, 1, 2))
    dp1 = np.zeros(p1.shape)
    for i in range(3):
        for j in range(3):
            dp1[:, i : i + dz2.shape[1], j : j + dz2.shape[2]] += dz2 @ w2[i, j].T
    dz1 = unpool(dp1, arg1, a1.shape) * (z1 > 0)
    g1, gb1 = np.einsum("nhwcij,nhwo->ijco", win1, dz1), dz1.sum(axis=(0, 1, 2))
    return loss, [g1, gb1, g2, gb2, g3, gb3]


def check_cnn_sgd(before, after, x, y):
    """Assert that one SGD step of the CNN turned ``before`` into ``after``."""
    import numpy as np

    _, grads = cnn_reference_grads(before, x, y)
    for i, (w0, w1, g) in enumerate(zip(before, after, grads)):
        # As in check_sgd: float32 may put a pre-activation within rounding of 0 (or a
        # near-tie in a pooling window) on the other side.
        bad = ~np.isclose(w1, w0 - LR * g, rtol=1e-3, atol=1e-5)
        assert bad.mean() <= 0.02, f"CNN parameter {i}: {bad.mean():.1%} of the SGD update differs from NumPy's"


def deep_data(layers, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    ws = [(rng.standard_normal((DEEP_WIDTH, DEEP_WIDTH)) * (2.0 / DEEP_WIDTH) ** 0.5).astype(np.float32)
          for _ in range(layers)]
    return ws, rng.standard_normal((DEEP_BATCH, DEEP_WIDTH)).astype(np.float32)


def deep_reference_sums(ws, x):
    """Sum of squares of each weight's gradient of sum(relu(...relu(x @ W1)... @ Wn)), float64."""
    import numpy as np

    hs, h = [x.astype(np.float64)], x.astype(np.float64)
    for w in ws:
        h = np.maximum(h @ w, 0)
        hs.append(h)
    dh, sums = np.ones_like(h), [0.0] * len(ws)
    for i in reversed(range(len(ws))):
        dz = dh * (hs[i + 1] > 0)
        sums[i] = float(np.square(hs[i].T @ dz).sum())
        dh = dz @ ws[i].T
    return sums


def matrices(n):
    import numpy as np

    rng = np.random.default_rng(n)
    return rng.uniform(-1, 1, (n, n)).astype(np.float32), rng.uniform(-1, 1, (n, n)).astype(np.float32)


def elementwise_data():
    import numpy as np

    return np.random.default_rng(0).uniform(-2, 2, ELEMENTS).astype(np.float32)


def check_elementwise(x, y, g):
    """Check the value (relative 1e-3: a float32 sum of 10M terms) and the first 4096 grads."""
    import numpy as np

    x64 = x.astype(np.float64)
    want_y = float(np.sum(np.exp(np.sin(x64) * x64) + x64))
    assert abs(float(y) - want_y) <= 1e-3 * abs(want_y), (float(y), want_y)
    h = x64[:4096]
    want_g = (np.cos(h) * h + np.sin(h)) * np.exp(np.sin(h) * h) + 1
    np.testing.assert_allclose(np.asarray(g[:4096]), want_g, rtol=1e-4, atol=1e-5)


def check_matmul(a, b, ga, gb):
    """With an upstream gradient of ones: da = ones @ b.T (row sums of b), db = a.T @ ones."""
    import numpy as np

    ga, gb = np.asarray(ga), np.asarray(gb)
    np.testing.assert_allclose(ga[:2], np.broadcast_to(b.astype(np.float64).sum(axis=1), (2, b.shape[0])), rtol=1e-3, atol=1e-2)
    np.testing.assert_allclose(gb[:, :2], np.broadcast_to(a.astype(np.float64).sum(axis=0)[:, None], (a.shape[1], 2)), rtol=1e-3, atol=1e-2)


TINY_X, TINY_C = [1.0, 2.0, 3.0, 4.0], [0.5, 0.5, 0.5, 0.5]


def _clock(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t0, out


# -- one backend per framework ----------------------------------------------------------
# Each backend provides:
#   tiny_fwd(n) / tiny_bwd(n) -> run() returning seconds per op
#   mlp(sizes, batch, seed) -> step(check=False): one SGD step
#   matmul(n) -> run() returning seconds; elementwise() -> run() returning seconds
#   deep(ws, x, persistent) -> (keep, grad_sums): forward + gradient of the deep net


class Gradtape:
    def __init__(self):
        import gradtape as gt

        self.gt = gt
        self.version = gt.__version__

    def tiny_fwd(self, n):
        gt = self.gt
        x, c = gt.constant(TINY_X), gt.constant(TINY_C)

        def run():
            with gt.GradientTape() as t:
                t.watch(x)
                t0 = time.perf_counter()
                for _ in range(n):
                    y = x + c
                dt = time.perf_counter() - t0
            assert y.numpy().tolist() == [1.5, 2.5, 3.5, 4.5]
            return dt / n

        return run

    def tiny_bwd(self, n):
        gt = self.gt
        x, c = gt.constant(TINY_X), gt.constant(TINY_C)

        def run():
            with gt.GradientTape() as t:
                t.watch(x)
                y = x
                for _ in range(n):
                    y = y + c
            dt, g = _clock(t.gradient, y, x)
            assert g.numpy().tolist() == [1.0] * 4
            return dt / n

        return run

    def mlp(self, sizes, batch, seed):
        gt = self.gt
        params, xn, yn = mlp_data(sizes, batch, seed)
        ws = [gt.Variable(p) for p in params]
        x, y, xent = gt.constant(xn), gt.constant(yn), sizes[-1] > 1

        def step(check=False):
            before = [w.numpy() for w in ws] if check else None
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
                w.assign_sub(LR * g)
            if check:
                check_sgd(before, [w.numpy() for w in ws], xn, yn, xent)

        return step

    def cnn(self, seed):
        gt = self.gt
        params, xn, yn = cnn_data(seed)
        ws = [gt.Variable(p) for p in params]
        x, y = gt.constant(xn), gt.constant(yn)

        def step(check=False):
            before = [w.numpy() for w in ws] if check else None
            with gt.GradientTape() as t:
                h = gt.nn.relu(gt.nn.conv2d(x, ws[0], 1, "VALID") + ws[1])
                h = gt.nn.max_pool2d(h, 2, 2, "VALID")
                h = gt.nn.relu(gt.nn.conv2d(h, ws[2], 1, "VALID") + ws[3])
                h = gt.nn.max_pool2d(h, 2, 2, "VALID")
                h = gt.matmul(gt.reshape(h, [CNN_BATCH, -1]), ws[4]) + ws[5]
                loss = gt.reduce_mean(gt.reduce_logsumexp(h, axis=1) - gt.reduce_sum(h * y, axis=1))
            grads = t.gradient(loss, ws)
            for w, g in zip(ws, grads):
                w.assign_sub(LR * g)
            if check:
                check_cnn_sgd(before, [w.numpy() for w in ws], xn, yn)

        return step

    def matmul(self, n):
        gt = self.gt
        an, bn = matrices(n)
        a, b, ones = gt.constant(an), gt.constant(bn), gt.ones((n, n))

        def fwd_bwd():
            with gt.GradientTape() as t:
                t.watch([a, b])
                y = gt.matmul(a, b)
            return t.gradient(y, [a, b], output_gradients=ones)

        def run():
            dt, (ga, gb) = _clock(fwd_bwd)
            check_matmul(an, bn, ga.numpy(), gb.numpy())
            return dt

        return run

    def elementwise(self):
        gt = self.gt
        xn = elementwise_data()
        x = gt.constant(xn)

        def fwd_bwd():
            with gt.GradientTape() as t:
                t.watch(x)
                y = gt.reduce_sum(gt.exp(gt.sin(x) * x) + x)
            return y, t.gradient(y, x)

        def run():
            dt, (y, g) = _clock(fwd_bwd)
            check_elementwise(xn, y.numpy(), g.numpy())
            return dt

        return run

    def deep(self, wsn, xn, persistent):
        gt = self.gt
        ws, x = [gt.Variable(w) for w in wsn], gt.constant(xn)

        def run():
            with gt.GradientTape(persistent=persistent) as t:
                h = x
                for w in ws:
                    h = gt.nn.relu(gt.matmul(h, w))
                out = gt.reduce_sum(h)
            grads = t.gradient(out, ws)
            sums = [float(gt.reduce_sum(gt.square(g)).numpy()) for g in grads]
            return (t, h, out, grads), sums

        return run


class Torch:
    def __init__(self):
        import torch

        self.torch = torch
        self.version = torch.__version__

    def tiny_fwd(self, n):
        torch = self.torch
        x, c = torch.tensor(TINY_X, requires_grad=True), torch.tensor(TINY_C)

        def run():
            t0 = time.perf_counter()
            for _ in range(n):
                y = x + c
            dt = time.perf_counter() - t0
            assert y.tolist() == [1.5, 2.5, 3.5, 4.5]
            return dt / n

        return run

    def tiny_bwd(self, n):
        torch = self.torch
        x, c, ones = torch.tensor(TINY_X, requires_grad=True), torch.tensor(TINY_C), torch.ones(4)

        def run():
            y = x
            for _ in range(n):
                y = y + c
            dt, (g,) = _clock(torch.autograd.grad, y, x, ones)
            assert g.tolist() == [1.0] * 4
            return dt / n

        return run

    def mlp(self, sizes, batch, seed):
        torch = self.torch
        params, xn, yn = mlp_data(sizes, batch, seed)
        ws = [torch.tensor(p, requires_grad=True) for p in params]
        x, y, xent = torch.from_numpy(xn), torch.from_numpy(yn), sizes[-1] > 1

        def step(check=False):
            before = [w.detach().numpy().copy() for w in ws] if check else None
            h = x
            for i in range(0, len(ws), 2):
                h = h @ ws[i] + ws[i + 1]
                if i + 2 < len(ws):
                    h = torch.relu(h)
            if xent:
                loss = (torch.logsumexp(h, dim=1) - (h * y).sum(dim=1)).mean()
            else:
                loss = ((h - y) ** 2).mean()
            grads = torch.autograd.grad(loss, ws)
            with torch.no_grad():
                for w, g in zip(ws, grads):
                    w.sub_(LR * g)
            if check:
                check_sgd(before, [w.detach().numpy() for w in ws], xn, yn, xent)

        return step

    def cnn(self, seed):
        torch = self.torch
        F = torch.nn.functional
        params, xn, yn = cnn_data(seed)
        # PyTorch's native layout: NCHW inputs, OIHW kernels; the dense layer reads the
        # flattened features in NHWC order, as the other frameworks', so it gets the
        # same weights.
        ws = [torch.tensor(p.transpose(3, 2, 0, 1) if p.ndim == 4 else p, requires_grad=True) for p in params]
        x, y = torch.from_numpy(xn.transpose(0, 3, 1, 2).copy()), torch.from_numpy(yn)

        def numpy_params():
            return [(w.detach().numpy().transpose(2, 3, 1, 0) if w.ndim == 4 else w.detach().numpy()).copy() for w in ws]

        def step(check=False):
            before = numpy_params() if check else None
            h = F.max_pool2d(torch.relu(F.conv2d(x, ws[0], ws[1])), 2)
            h = F.max_pool2d(torch.relu(F.conv2d(h, ws[2], ws[3])), 2)
            h = h.permute(0, 2, 3, 1).reshape(CNN_BATCH, -1) @ ws[4] + ws[5]
            loss = (torch.logsumexp(h, dim=1) - (h * y).sum(dim=1)).mean()
            grads = torch.autograd.grad(loss, ws)
            with torch.no_grad():
                for w, g in zip(ws, grads):
                    w.sub_(LR * g)
            if check:
                check_cnn_sgd(before, numpy_params(), xn, yn)

        return step

    def matmul(self, n):
        torch = self.torch
        an, bn = matrices(n)
        a, b = torch.tensor(an, requires_grad=True), torch.tensor(bn, requires_grad=True)
        ones = torch.ones(n, n)

        def fwd_bwd():
            return torch.autograd.grad(a @ b, [a, b], grad_outputs=ones)

        def run():
            dt, (ga, gb) = _clock(fwd_bwd)
            check_matmul(an, bn, ga.numpy(), gb.numpy())
            return dt

        return run

    def elementwise(self):
        torch = self.torch
        xn = elementwise_data()
        x = torch.tensor(xn, requires_grad=True)

        def fwd_bwd():
            y = (torch.exp(torch.sin(x) * x) + x).sum()
            return y, torch.autograd.grad(y, x)[0]

        def run():
            dt, (y, g) = _clock(fwd_bwd)
            check_elementwise(xn, y.item(), g.numpy())
            return dt

        return run

    def deep(self, wsn, xn, persistent):
        torch = self.torch
        ws, x = [torch.tensor(w, requires_grad=True) for w in wsn], torch.from_numpy(xn)

        def run():
            h = x
            for w in ws:
                h = torch.relu(h @ w)
            out = h.sum()
            grads = torch.autograd.grad(out, ws, retain_graph=persistent)
            return (h, out, grads), [float(g.square().sum()) for g in grads]

        return run


class Tensorflow:
    def __init__(self):
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow as tf

        self.tf = tf
        self.version = tf.__version__

    def tiny_fwd(self, n):
        tf = self.tf
        x, c = tf.constant(TINY_X), tf.constant(TINY_C)

        def run():
            with tf.GradientTape() as t:
                t.watch(x)
                t0 = time.perf_counter()
                for _ in range(n):
                    y = x + c
                dt = time.perf_counter() - t0
            assert y.numpy().tolist() == [1.5, 2.5, 3.5, 4.5]
            return dt / n

        return run

    def tiny_bwd(self, n):
        tf = self.tf
        x, c = tf.constant(TINY_X), tf.constant(TINY_C)

        def run():
            with tf.GradientTape() as t:
                t.watch(x)
                y = x
                for _ in range(n):
                    y = y + c
            dt, g = _clock(t.gradient, y, x)
            assert g.numpy().tolist() == [1.0] * 4
            return dt / n

        return run

    def mlp(self, sizes, batch, seed):
        tf = self.tf
        params, xn, yn = mlp_data(sizes, batch, seed)
        ws = [tf.Variable(p) for p in params]
        x, y, xent = tf.constant(xn), tf.constant(yn), sizes[-1] > 1

        def step(check=False):
            before = [w.numpy() for w in ws] if check else None
            with tf.GradientTape() as t:
                h = x
                for i in range(0, len(ws), 2):
                    h = tf.matmul(h, ws[i]) + ws[i + 1]
                    if i + 2 < len(ws):
                        h = tf.nn.relu(h)
                if xent:
                    loss = tf.reduce_mean(tf.reduce_logsumexp(h, axis=1) - tf.reduce_sum(h * y, axis=1))
                else:
                    loss = tf.reduce_mean(tf.square(h - y))
            grads = t.gradient(loss, ws)
            for w, g in zip(ws, grads):
                w.assign_sub(LR * g)
            if check:
                check_sgd(before, [w.numpy() for w in ws], xn, yn, xent)

        return step

    def cnn(self, seed):
        tf = self.tf
        params, xn, yn = cnn_data(seed)
        ws = [tf.Variable(p) for p in params]
        x, y = tf.constant(xn), tf.constant(yn)

        def step(check=False):
            before = [w.numpy() for w in ws] if check else None
            with tf.GradientTape() as t:
                h = tf.nn.relu(tf.nn.conv2d(x, ws[0], 1, "VALID") + ws[1])
                h = tf.nn.max_pool2d(h, 2, 2, "VALID")
                h = tf.nn.relu(tf.nn.conv2d(h, ws[2], 1, "VALID") + ws[3])
                h = tf.nn.max_pool2d(h, 2, 2, "VALID")
                h = tf.matmul(tf.reshape(h, [CNN_BATCH, -1]), ws[4]) + ws[5]
                loss = tf.reduce_mean(tf.reduce_logsumexp(h, axis=1) - tf.reduce_sum(h * y, axis=1))
            grads = t.gradient(loss, ws)
            for w, g in zip(ws, grads):
                w.assign_sub(LR * g)
            if check:
                check_cnn_sgd(before, [w.numpy() for w in ws], xn, yn)

        return step

    def matmul(self, n):
        tf = self.tf
        an, bn = matrices(n)
        a, b, ones = tf.constant(an), tf.constant(bn), tf.ones((n, n))

        def fwd_bwd():
            with tf.GradientTape() as t:
                t.watch([a, b])
                y = tf.matmul(a, b)
            return t.gradient(y, [a, b], output_gradients=ones)

        def run():
            dt, (ga, gb) = _clock(fwd_bwd)
            check_matmul(an, bn, ga.numpy(), gb.numpy())
            return dt

        return run

    def elementwise(self):
        tf = self.tf
        xn = elementwise_data()
        x = tf.constant(xn)

        def fwd_bwd():
            with tf.GradientTape() as t:
                t.watch(x)
                y = tf.reduce_sum(tf.exp(tf.sin(x) * x) + x)
            return y, t.gradient(y, x)

        def run():
            dt, (y, g) = _clock(fwd_bwd)
            check_elementwise(xn, y.numpy(), g.numpy())
            return dt

        return run

    def deep(self, wsn, xn, persistent):
        tf = self.tf
        ws, x = [tf.Variable(w) for w in wsn], tf.constant(xn)

        def run():
            with tf.GradientTape(persistent=persistent) as t:
                h = x
                for w in ws:
                    h = tf.nn.relu(tf.matmul(h, w))
                out = tf.reduce_sum(h)
            grads = t.gradient(out, ws)
            return (t, h, out, grads), [float(tf.reduce_sum(tf.square(g))) for g in grads]

        return run


class Jax:
    def __init__(self):
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax
        import jax.numpy as jnp

        self.jax, self.jnp = jax, jnp
        self.version = jax.__version__

    def tiny_fwd(self, n):
        jax, jnp = self.jax, self.jnp
        x, c = jnp.asarray(TINY_X), jnp.asarray(TINY_C)

        def f(x):
            for _ in range(n):
                y = x + c
            return y

        def run():
            dt, (y, _) = _clock(jax.vjp, f, x)
            assert y.tolist() == [1.5, 2.5, 3.5, 4.5]
            return dt / n

        return run

    def tiny_bwd(self, n):
        jax, jnp = self.jax, self.jnp
        x, c, ones = jnp.asarray(TINY_X), jnp.asarray(TINY_C), jnp.ones(4)

        def f(x):
            for _ in range(n):
                x = x + c
            return x

        def run():
            _, vjp = jax.vjp(f, x)
            dt, (g,) = _clock(lambda: jax.block_until_ready(vjp(ones)))
            assert g.tolist() == [1.0] * 4
            return dt / n

        return run

    def mlp(self, sizes, batch, seed):
        jax, jnp = self.jax, self.jnp
        params, xn, yn = mlp_data(sizes, batch, seed)
        state = {"p": [jnp.asarray(p) for p in params]}
        x, y, xent = jnp.asarray(xn), jnp.asarray(yn), sizes[-1] > 1

        def loss_fn(ws):
            h = x
            for i in range(0, len(ws), 2):
                h = h @ ws[i] + ws[i + 1]
                if i + 2 < len(ws):
                    h = jax.nn.relu(h)
            if xent:
                return jnp.mean(jax.nn.logsumexp(h, axis=1) - jnp.sum(h * y, axis=1))
            return jnp.mean((h - y) ** 2)

        def step(check=False):
            before = [jax.device_get(w) for w in state["p"]] if check else None
            grads = jax.grad(loss_fn)(state["p"])
            state["p"] = jax.block_until_ready([w - LR * g for w, g in zip(state["p"], grads)])
            if check:
                check_sgd(before, [jax.device_get(w) for w in state["p"]], xn, yn, xent)

        return step

    def cnn(self, seed):
        jax, jnp = self.jax, self.jnp
        params, xn, yn = cnn_data(seed)
        state = {"p": [jnp.asarray(p) for p in params]}
        x, y = jnp.asarray(xn), jnp.asarray(yn)
        dn = ("NHWC", "HWIO", "NHWC")

        def pool(h):
            return jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

        def loss_fn(ws):
            h = pool(jax.nn.relu(jax.lax.conv_general_dilated(x, ws[0], (1, 1), "VALID", dimension_numbers=dn) + ws[1]))
            h = pool(jax.nn.relu(jax.lax.conv_general_dilated(h, ws[2], (1, 1), "VALID", dimension_numbers=dn) + ws[3]))
            h = h.reshape(CNN_BATCH, -1) @ ws[4] + ws[5]
            return jnp.mean(jax.nn.logsumexp(h, axis=1) - jnp.sum(h * y, axis=1))

        def step(check=False):
            before = [jax.device_get(w) for w in state["p"]] if check else None
            grads = jax.grad(loss_fn)(state["p"])
            state["p"] = jax.block_until_ready([w - LR * g for w, g in zip(state["p"], grads)])
            if check:
                check_cnn_sgd(before, [jax.device_get(w) for w in state["p"]], xn, yn)

        return step

    def matmul(self, n):
        jax, jnp = self.jax, self.jnp
        an, bn = matrices(n)
        a, b, ones = jnp.asarray(an), jnp.asarray(bn), jnp.ones((n, n))

        def fwd_bwd():
            _, vjp = jax.vjp(jnp.matmul, a, b)
            return jax.block_until_ready(vjp(ones))

        def run():
            dt, (ga, gb) = _clock(fwd_bwd)
            check_matmul(an, bn, jax.device_get(ga), jax.device_get(gb))
            return dt

        return run

    def elementwise(self):
        jax, jnp = self.jax, self.jnp
        xn = elementwise_data()
        x = jnp.asarray(xn)
        f = jax.value_and_grad(lambda x: jnp.sum(jnp.exp(jnp.sin(x) * x) + x))

        def run():
            dt, (y, g) = _clock(lambda: jax.block_until_ready(f(x)))
            check_elementwise(xn, float(y), jax.device_get(g))
            return dt

        return run

    def deep(self, wsn, xn, persistent):
        jax, jnp = self.jax, self.jnp
        ws, x = [jnp.asarray(w) for w in wsn], jnp.asarray(xn)

        def f(ws):
            h = x
            for w in ws:
                h = jax.nn.relu(h @ w)
            return jnp.sum(h)

        def run():
            if persistent:  # the vjp closure is the persistent tape
                out, vjp = jax.vjp(f, ws)
                (grads,) = vjp(jnp.ones_like(out))
                keep = (vjp, out, grads)
            else:
                grads = jax.grad(f)(ws)
                keep = (grads,)
            jax.block_until_ready(grads)
            return keep, [float(jnp.sum(jnp.square(g))) for g in grads]

        return run


BACKENDS = {"gradtape": Gradtape, "torch": Torch, "tensorflow": Tensorflow, "jax": Jax}


# -- workloads built from a backend ------------------------------------------------------


def per_call(step, inner=1):
    """run() timing ``inner`` calls of ``step`` (seconds per call); checked on demand."""

    def run():
        t0 = time.perf_counter()
        for _ in range(inner):
            step()
        return (time.perf_counter() - t0) / inner

    run.check = lambda: step(check=True)
    return run


def two_threads(backend, steps):
    """Throughput of two threads (each its own weights) relative to one thread."""
    a, b = backend.mlp(BIG_MLP, BIG_BATCH, 1), backend.mlp(BIG_MLP, BIG_BATCH, 2)
    errors = []

    def loop(step):
        try:
            for _ in range(steps):
                step()
        except BaseException as e:  # re-raised on the main thread
            errors.append(e)

    def run():
        t_one, _ = _clock(loop, a)
        threads = [threading.Thread(target=loop, args=(s,)) for s in (a, b)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        t_two = time.perf_counter() - t0
        if errors:
            raise errors[0]
        return 2 * t_one / t_two

    run.check = lambda: (a(check=True), b(check=True))
    return run


def make_workload(backend, key, cfg):
    n = cfg["tiny_n"]
    return {
        "tiny_fwd": lambda: backend.tiny_fwd(n),
        "tiny_bwd": lambda: backend.tiny_bwd(n),
        "mlp_big": lambda: per_call(backend.mlp(BIG_MLP, BIG_BATCH, 0)),
        "mlp_small": lambda: per_call(backend.mlp(SMALL_MLP, SMALL_BATCH, 0), cfg["small_inner"]),
        "matmul_1024": lambda: backend.matmul(1024),
        "matmul_2048": lambda: backend.matmul(2048),
        "elementwise": backend.elementwise,
        "threads": lambda: two_threads(backend, cfg["thread_steps"]),
        "cnn": lambda: per_call(backend.cnn(0)),
    }[key]()


def _status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def memory_run(backend, persistent):
    """Peak and kept RSS (MiB) of the deep net's forward + gradient, in this fresh process."""
    ws, x = deep_data(2, seed=1)  # warm-up: same code and shapes, 2 layers
    keep, _ = backend.deep(ws, x, persistent)()
    del keep, ws, x
    ws, x = deep_data(DEEP_LAYERS)
    run = backend.deep(ws, x, persistent)
    gc.collect()
    before = _status_kib("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current RSS
    keep, sums = run()
    peak = _status_kib("VmHWM")
    del keep
    gc.collect()
    after = _status_kib("VmRSS")
    for i, (s, w) in enumerate(zip(sums, deep_reference_sums(ws, x))):
        assert abs(s - w) <= 3e-3 * abs(w), f"layer {i}: gradient sum of squares {s}, want {w}"
    return {"mem_peak": (peak - before) / 1024, "mem_kept": (after - before) / 1024}


# -- worker side -------------------------------------------------------------------------


def worker(name, cfg, memory=None):
    """Serve JSON requests on stdin; framework chatter on fd 1 goes to stderr."""
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)

    def send(obj):
        proto.write(json.dumps(obj) + "\n")

    try:
        backend = BACKENDS[name]()
    except Exception as e:  # not installed, or broken: reported, not fatal
        send({"skipped": f"{type(e).__name__}: {e}".splitlines()[0][:160]})
        return
    hello = {"version": backend.version}
    if name == "gradtape":
        hello["path"] = os.path.dirname(backend.gt.__file__)
    if memory is not None:
        hello.update(memory_run(backend, memory == "kept"))
        send(hello)
        return
    send(hello)
    workloads = {}
    for line in sys.stdin:
        req = json.loads(line)
        key = req["workload"]
        try:
            if key not in workloads:
                run = make_workload(backend, key, cfg)
                for _ in range(cfg["warmup"]):
                    run()
                workloads[key] = run
            run = workloads[key]
            if hasattr(run, "check"):
                run.check()
            samples = [run() for _ in range(req["reps"])]
            if hasattr(run, "check"):
                run.check()
            send({"samples": samples})
        except Exception as e:  # e.g. a failed check: reported; the cell is not timed again
            msg = " / ".join(l.strip() for l in str(e).splitlines() if l.strip())
            send({"error": f"{type(e).__name__}: {msg}"[:600]})


# -- driver side -------------------------------------------------------------------------


class Worker:
    def __init__(self, name, python, cfg):
        self.name = name
        self.err = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(
            [python, os.path.abspath(__file__), "--worker", name, "--cfg", json.dumps(cfg)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, text=True, bufsize=1,
        )
        self.hello = self.receive()

    def receive(self):
        line = self.proc.stdout.readline()
        if not line:
            self.err.seek(0)
            tail = [l for l in self.err.read().splitlines() if l.strip()]
            return {"failed": f"worker exited ({self.proc.wait()}): {tail[-1] if tail else 'no output'}"}
        return json.loads(line)

    def ask(self, workload, reps):
        self.proc.stdin.write(json.dumps({"workload": workload, "reps": reps}) + "\n")
        self.proc.stdin.flush()
        return self.receive()

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()


def memory_once(name, python, kind):
    res = subprocess.run([python, os.path.abspath(__file__), "--worker", name, "--memory", kind],
                         capture_output=True, text=True)
    lines = [l for l in res.stdout.splitlines() if l.startswith("{")]
    if res.returncode != 0 or not lines:
        tail = [l for l in res.stderr.splitlines() if l.strip()]
        return {"failed": tail[-1] if tail else f"exit {res.returncode}"}
    return json.loads(lines[-1])


def fmt(v):
    if v == 0 or abs(v) >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}" if abs(v) >= 1 else f"{v:.2g}"


def cell(values):
    if not values:
        return "–"
    med = statistics.median(values)
    if len(values) < 3:
        return fmt(med) if len(values) == 1 else f"{fmt(med)} ({fmt(min(values))}–{fmt(max(values))})"
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return f"{fmt(med)} ({fmt(q1)}–{fmt(q3)})"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer rounds and repetitions (seconds per framework)")
    p.add_argument("--only", default=",".join(FRAMEWORKS), help="comma-separated subset of " + ",".join(FRAMEWORKS))
    p.add_argument("--python", action="append", default=[], metavar="NAME=PYTHON",
                   help="run framework NAME with another interpreter (e.g. a venv that has it)")
    p.add_argument("--workloads", default=",".join(w.key for w in WORKLOADS),
                   help="comma-separated subset of " + ",".join(w.key for w in WORKLOADS))
    p.add_argument("-v", "--verbose", action="store_true", help="print where gradtape was imported from")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--cfg", help=argparse.SUPPRESS)
    p.add_argument("--memory", choices=["peak", "kept"], help=argparse.SUPPRESS)
    args = p.parse_args()

    if args.worker:
        worker(args.worker, json.loads(args.cfg) if args.cfg else {}, args.memory)
        return 0

    mode = "quick" if args.quick else "full"
    cfg = MODES[mode]
    pythons = dict(s.split("=", 1) for s in args.python)
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    for n in names:
        if n not in FRAMEWORKS:
            p.error(f"unknown framework {n!r}; choose from {', '.join(FRAMEWORKS)}")
    chosen = {k.strip() for k in args.workloads.split(",") if k.strip()}
    known = {w.key for w in WORKLOADS}
    if chosen - known:
        p.error(f"unknown workload(s) {', '.join(sorted(chosen - known))}; choose from {', '.join(sorted(known))}")
    workloads = [w for w in WORKLOADS if w.key in chosen]

    load0 = os.getloadavg()
    print(f"# {platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
          f"{os.cpu_count()} CPUs, load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f} (1/5/15 min)")
    print(f"# {mode} mode: {cfg['rounds']} interleaved rounds, tiny-op chains of {cfg['tiny_n']}, "
          f"{cfg['mem_repeats']} fresh process(es) per memory cell; median (interquartile range or min–max)")

    workers, skipped = {}, {}
    for name in names:
        w = Worker(name, pythons.get(name, sys.executable), cfg)
        if "version" in w.hello:
            workers[name] = w
        else:
            skipped[name] = w.hello.get("skipped") or w.hello.get("failed")
            w.close()
    versions = {n: w.hello["version"] for n, w in workers.items()}
    print("# " + ", ".join(f"{LABEL[n]} {v}" for n, v in versions.items()))
    if "gradtape" in workers:
        path = workers["gradtape"].hello["path"]
        where = "an installed wheel (site-packages)" if "site-packages" in path else "the source tree"
        print(f"# gradtape from {path if args.verbose else where}")

    results = {w.key: {n: [] for n in names} for w in workloads}
    errors = {}
    timed = [w for w in workloads if not w.memory]
    for r in range(cfg["rounds"]):
        order = list(workers)[r % max(len(workers), 1):] + list(workers)[: r % max(len(workers), 1)]
        for wl in timed:
            for name in order:
                if (wl.key, name) in errors or name not in workers:
                    continue
                res = workers[name].ask(wl.key, cfg["reps"][wl.key])
                if "samples" in res:
                    results[wl.key][name] += [wl.convert(s) for s in res["samples"]]
                else:
                    errors[(wl.key, name)] = res.get("error") or res.get("failed")
                    if "failed" in res:  # the worker died (e.g. a reinstall): restart it once
                        workers[name].close()
                        workers[name] = Worker(name, pythons.get(name, sys.executable), cfg)
                        if "version" not in workers[name].hello:
                            skipped[name] = workers[name].hello.get("failed")
                            del workers[name]
        print(f"# round {r + 1}/{cfg['rounds']} done", file=sys.stderr)
    for w in workers.values():
        w.close()

    for kind in ("peak", "kept"):
        if f"mem_{kind}" not in chosen:
            continue
        for _ in range(cfg["mem_repeats"]):
            for name in workers:
                res = memory_once(name, pythons.get(name, sys.executable), kind)
                key = f"mem_{kind}"
                if key in res:
                    results[key][name].append(res[key])
                else:
                    errors[(key, name)] = res.get("failed") or res.get("skipped")

    cols = list(workers)
    print()
    print("| workload | " + " | ".join(f"{LABEL[n]}" for n in cols) + " | gradtape ratio | goal | met |")
    print("|---|" + "---:|" * len(cols) + "---:|---|---|")
    for wl in workloads:
        cells = [("error" if (wl.key, n) in errors and not results[wl.key][n] else cell(results[wl.key][n])) for n in cols]
        ratio, met = "n/a", "n/a"
        g = results[wl.key].get("gradtape")
        a = results[wl.key].get(wl.anchor) if wl.anchor else None
        if g and (wl.anchor is None or a):
            gm = statistics.median(g)
            am = statistics.median(a) if a else None
            if am is None:
                ratio = f"{gm:.2f}"
            elif am > 0:
                ratio = f"{gm / am:.2f}×"
            met = "yes" if wl.met(gm, am) else "no"
        print(f"| {wl.label} ({wl.unit}) | " + " | ".join(cells) + f" | {ratio} | {wl.goal} | {met} |")
    load1 = os.getloadavg()
    print(f"\nload average at the end: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    for name, why in skipped.items():
        print(f"{LABEL[name]}: skipped ({why})")
    for (key, name), why in errors.items():
        print(f"{LABEL[name]}, {key}: error ({why})")
    gradtape_broken = any(name == "gradtape" for _, name in errors)
    return 1 if gradtape_broken or not workers else 0


if __name__ == "__main__":
    sys.exit(main())
