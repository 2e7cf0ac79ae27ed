"""Tapes are per thread: concurrent threads, each with its own tapes, never see each
other's recordings and get exact results; threads mixing pool work, the GIL and Python
gradient functions never deadlock."""

import threading
from pathlib import Path

import numpy as np

import gradtape as gt
from isolated import run_python

N_THREADS = 4
ITERS = 150


def _run_threads(target):
    errors = []

    def wrap(k):
        try:
            target(k)
        except BaseException as e:  # noqa: BLE001 - reported to the main thread
            errors.append((k, e))

    threads = [threading.Thread(target=wrap, args=(k,)) for k in range(N_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
        assert not t.is_alive()
    assert errors == [], errors


def test_threads_each_with_own_tape():
    def work(k):
        x = gt.constant(np.full((64,), float(k + 1), dtype=np.float32))
        for i in range(ITERS):
            with gt.GradientTape() as t:
                t.watch(x)
                y = gt.reduce_sum(x * x * x)  # dy/dx = 3 x^2
                n = t._num_nodes
            g = t.gradient(y, x)
            # only this thread's ops are on this tape
            assert n == 3, (k, i, n)
            np.testing.assert_array_equal(g.numpy(), np.full(64, 3.0 * (k + 1) ** 2, np.float32))

    _run_threads(work)


def test_threads_with_variables_and_nested_tapes():
    def work(k):
        v = gt.Variable(float(k + 1), name=f"v{k}")
        for i in range(ITERS // 3):
            with gt.GradientTape() as t2:
                with gt.GradientTape() as t1:
                    y = v * v * v
                d1 = t1.gradient(y, v)
            d2 = t2.gradient(d1, v)
            watched = [w.name for w in t2.watched_variables()]
            assert watched == [f"v{k}:0"], (k, i, watched)
            assert float(d1) == 3.0 * (k + 1) ** 2
            assert float(d2) == 6.0 * (k + 1)

    _run_threads(work)


def test_tape_in_one_thread_does_not_record_other_threads_ops():
    x = gt.constant(2.0)
    started = threading.Event()
    done = threading.Event()
    other = {}

    def background():
        started.wait(10)
        # x is watched by the main thread's tape, but this thread has no tape
        other["y"] = x * x * x
        done.set()

    th = threading.Thread(target=background)
    th.start()
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        started.set()
        assert done.wait(10)
        z = x * x
    th.join(10)
    assert t._num_nodes == 1
    assert t.gradient(other["y"], x) is None
    assert float(t.gradient(z, x)) == 4.0


def test_threads_large_ops_release_gil_and_stay_correct():
    def work(k):
        a = np.arange(200 * 200, dtype=np.float64).reshape(200, 200) / 1e4 + k
        x = gt.constant(a)
        for _ in range(5):
            with gt.GradientTape() as t:
                t.watch(x)
                y = gt.reduce_sum(gt.matmul(x, x))
            g = t.gradient(y, x)
            # d/dX sum(X X) = 1 X^T + X^T 1 with 1 the all-ones matrix
            ones = np.ones_like(a)
            np.testing.assert_allclose(g.numpy(), ones @ a.T + a.T @ ones, rtol=1e-12)

    _run_threads(work)


# --- the GIL and the thread pool (issue 10) --------------------------------------------

_DEADLOCK = """
import threading, numpy as np, gradtape as gt

@gt.custom_gradient
def ident(z):
    return gt.identity(z), lambda dy: dy

def jac():
    x = gt.constant(np.ones(64, np.float32))
    for _ in range(200):
        with gt.GradientTape() as t:
            t.watch(x)
            y = ident(x * 2.0)
        j = t.jacobian(y, x, parallel_iterations=1)
    assert np.array_equal(j.numpy(), 2 * np.eye(64, dtype=np.float32))

col, row = gt.ones([300, 1]), gt.ones([1, 300])

def other():
    for _ in range(2000):
        s = col + row
    assert float(gt.reduce_sum(s)) == 180000.0

a, b = threading.Thread(target=jac), threading.Thread(target=other)
a.start(); b.start(); a.join(); b.join()
print("done")
"""


def test_python_gradient_in_jacobian_beside_a_parallel_kernel_holding_the_gil():
    # Pool threads used to wait for the GIL to run the custom grad_fn while the
    # other thread held the GIL and waited for the pool: a hang.
    assert run_python(_DEADLOCK, timeout=180) == "done\n"


def test_threads_stress_mix_equals_serial():
    # 4 threads for a few seconds of custom-gradient jacobians, small broadcasts
    # with large results, big and batched matmuls and reductions; every result equal
    # to the serial one. A longer run: python tests/python/stress_threads.py --seconds 60
    out = run_python(
        "import stress_threads; stress_threads.main(['--seconds', '4', '--threads', '4'])",
        timeout=300,
        env={"PYTHONPATH": str(Path(__file__).parent)},
    )
    assert "0 wrong, 0 hangs" in out
    counts = {line.rsplit(None, 1)[0].strip(): int(line.rsplit(None, 1)[1]) for line in out.splitlines()[1:]}
    assert set(counts) == {
        "custom-gradient jacobian",
        "small broadcast, large result",
        "matmul fwd+bwd",
        "batched matmul fwd+bwd",
        "reductions",
    }
    assert all(n >= 1 for n in counts.values()), counts
