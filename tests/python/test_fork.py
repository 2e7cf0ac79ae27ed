"""fork: a child made by ``multiprocessing``'s ``fork`` context after the engine used
its thread pool can use the pool (matmul, jacobian, parallel kernels) and the
allocator cache (issue 10). Each case runs in a fresh interpreter so a hang in the
child shows as a timeout, not a stuck test run."""

from isolated import run_python

_CHILD_AFTER_POOL = """
import multiprocessing as mp
import numpy as np
import gradtape as gt

def work():
    a = gt.constant(np.arange(1024 * 1024, dtype=np.float32).reshape(1024, 1024) % 7)
    m = float(gt.reduce_sum(a @ a))          # a parallel product
    x = gt.constant(np.linspace(-1.0, 1.0, 256))
    with gt.GradientTape() as t:
        t.watch(x)
        y = gt.tanh(x) * 2.0
    j = t.jacobian(y, x, parallel_iterations=16)   # chunks swept on the pool
    big = gt.ones([1_000_000]) * 3.0              # parallel elementwise kernel
    return m, float(gt.reduce_sum(gt.linalg.diag_part(j))), float(gt.reduce_sum(big))

def child(q):
    q.put(work())

expected = work()                          # the parent's pool is up and has worked
ctx = mp.get_context("fork")
for _ in range(3):
    q = ctx.Queue()
    p = ctx.Process(target=child, args=(q,))
    p.start()
    got = q.get(timeout=120)
    p.join(60)
    assert p.exitcode == 0, p.exitcode
    assert got == expected, (got, expected)
print("ok", expected[2])
"""


def test_forked_child_uses_the_pool_after_the_parent_did():
    assert run_python(_CHILD_AFTER_POOL, timeout=300) == "ok 3000000.0\n"


_CHILD_WHILE_ALLOCATING = """
import multiprocessing as mp
import threading
import gradtape as gt

stop = threading.Event()

def churn():
    # Large blocks (>= 2 MiB) go through the allocator cache's lock, over and over.
    while not stop.is_set():
        a = gt.ones([1 << 20]) + 1.0
        del a

def child(q):
    b = gt.ones([1 << 20]) * 2.0          # a cached-size block: takes the cache's lock
    q.put(float(gt.reduce_sum(b)))

threads = [threading.Thread(target=churn) for _ in range(2)]
for t in threads:
    t.start()
ctx = mp.get_context("fork")
try:
    for _ in range(20):
        q = ctx.Queue()
        p = ctx.Process(target=child, args=(q,))
        p.start()
        assert q.get(timeout=60) == 2.0 * (1 << 20)
        p.join(60)
        assert p.exitcode == 0
finally:
    stop.set()
    for t in threads:
        t.join()
print("ok")
"""


def test_fork_while_other_threads_use_the_allocator_cache():
    assert run_python(_CHILD_WHILE_ALLOCATING, timeout=300) == "ok\n"


_CHILD_RANDOM = """
import multiprocessing as mp
import threading
import gradtape as gt

stop = threading.Event()

def draw():
    # Seeded and unseeded draws from another thread while the parent forks.
    while not stop.is_set():
        gt.random.uniform([64], seed=5)
        gt.random.normal([64])

def child(q):
    unseeded = gt.random.normal([4]).numpy().tolist()
    gt.random.set_seed(7)
    seeded = gt.random.uniform([4], seed=3).numpy().tolist()
    q.put((unseeded, seeded))

gt.random.set_seed(None)
t = threading.Thread(target=draw)
t.start()
ctx = mp.get_context("fork")
results = []
for _ in range(3):
    q = ctx.Queue()
    p = ctx.Process(target=child, args=(q,))
    p.start()
    results.append(q.get(timeout=120))
    p.join(60)
    assert p.exitcode == 0, p.exitcode
stop.set()
t.join()
mine = gt.random.normal([4]).numpy().tolist()
unseeded = [r[0] for r in results] + [mine]
# Unseeded draws differ between parent and children (each call keys from the OS).
assert len({tuple(u) for u in unseeded}) == len(unseeded), unseeded
# A seeded call is the same in every process.
gt.random.set_seed(7)
seeded = gt.random.uniform([4], seed=3).numpy().tolist()
assert all(r[1] == seeded for r in results), (results, seeded)
print("ok")
"""


def test_forked_children_draw_their_own_random_numbers():
    assert run_python(_CHILD_RANDOM, timeout=300) == "ok\n"
