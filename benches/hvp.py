"""Hessian-vector products: forward over reverse against reverse over reverse.

    python benches/hvp.py            # gradtape must be a release build
    python benches/hvp.py --quick

``gt.autodiff.hessian_vector_product(f, x, v, mode=...)`` on three cases (float32;
each cell the median of the repetitions, in ms; the ratio is reverse-over-reverse time
over forward-over-reverse time, so above 1 means forward over reverse is faster):

 1. elementwise: ``f(x) = sum(tanh(x)² · sin(x))`` on 1M elements;
 2. MLP loss: a 64×256→256→256→10 tanh MLP with softmax cross-entropy, ``x`` the
    first weight matrix (256×256 parameters);
 3. tiny: the elementwise function on 8 elements (per-op overhead).
"""

import argparse
import statistics
import time

import numpy as np

import gradtape as gt


def _time(fn, reps):
    fn()  # warm up
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def _elementwise(x):
    t = gt.tanh(x)
    return gt.reduce_sum(t * t * gt.sin(x))


def _mlp_case(rng):
    batch, width = 64, 256
    inputs = gt.constant(rng.standard_normal((batch, width)).astype(np.float32))
    labels = gt.constant(np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)])
    w2 = gt.constant((rng.standard_normal((width, width)) / 16).astype(np.float32))
    w3 = gt.constant((rng.standard_normal((width, 10)) / 16).astype(np.float32))

    def loss(w1):
        h = gt.tanh(gt.matmul(inputs, w1))
        h = gt.tanh(gt.matmul(h, w2))
        logits = gt.matmul(h, w3)
        return gt.reduce_mean(gt.nn.softmax_cross_entropy_with_logits(labels, logits))

    w1 = gt.constant((rng.standard_normal((width, width)) / 16).astype(np.float32))
    return loss, w1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    reps = 3 if args.quick else 15
    rng = np.random.default_rng(0)
    big = gt.constant(rng.standard_normal(1_000_000).astype(np.float32))
    tiny = gt.constant(rng.standard_normal(8).astype(np.float32))
    mlp, w1 = _mlp_case(rng)
    cases = [
        ("elementwise 1M", _elementwise, big),
        ("MLP 256x256 weights", mlp, w1),
        ("tiny (8 elements)", _elementwise, tiny),
    ]
    print(f"{'case':<22} {'fwd-over-rev ms':>16} {'rev-over-rev ms':>16} {'ratio':>7}")
    for name, f, x in cases:
        v = gt.constant(rng.standard_normal(tuple(x.shape)).astype(np.float32))
        a = gt.autodiff.hessian_vector_product(f, x, v, mode="forward_over_reverse")
        b = gt.autodiff.hessian_vector_product(f, x, v, mode="reverse_over_reverse")
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-3, atol=1e-5)
        fwd = _time(
            lambda f=f, x=x, v=v: gt.autodiff.hessian_vector_product(
                f, x, v, mode="forward_over_reverse"
            ),
            reps,
        )
        rev = _time(
            lambda f=f, x=x, v=v: gt.autodiff.hessian_vector_product(
                f, x, v, mode="reverse_over_reverse"
            ),
            reps,
        )
        print(f"{name:<22} {fwd:>16.3f} {rev:>16.3f} {rev / fwd:>7.2f}")


if __name__ == "__main__":
    main()
