"""Memory comes back (issue 10): deleting a tape returns its memory every time, the
allocator cache is bounded once no tape is alive and can be emptied or limited
(``gt.experimental``), and a gradient function that refers to its own tape does not
make a cycle the garbage collector cannot free. RSS is measured in fresh interpreters
(``isolated.run_python``) so that other tests' memory does not blur the figures."""

import pytest

import gradtape as gt
from isolated import run_python

_RSS = """
import gc, os
import numpy as np
import gradtape as gt

def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
"""

pytestmark = pytest.mark.skipif(
    not __import__("os").path.exists("/proc/self/statm"), reason="RSS read from /proc (Linux)"
)


def _figures(out):
    """`name value` lines of a snippet's output, as floats."""
    return {k: float(v) for k, v in (line.split() for line in out.splitlines())}


def test_deep_mlp_tape_deleted_returns_its_memory():
    # The goal of issue 10: a 50-layer 512-wide ReLU MLP at batch 256, forward and
    # gradient twice on a persistent tape, then `del tape` and a collection, with no
    # release call: at most 8 MiB over the baseline.
    #
    # The baseline is taken after one warm-up step of the same shapes (two layers): a
    # process's first matmul, ReLU and backward sweep page in the extension's code and
    # start the thread pool, whose threads keep their own heaps (GEMM packing buffers the
    # size of a core's L2 cache). That first-use cost belongs to the process, not to a
    # tape, and depends on the build: 4.3 MiB of code in the release wheel, 6.9 MiB in the
    # unoptimized one CI tests (measured from /proc/self/pagemap), plus about 1 MiB per
    # pool thread. With it in the baseline, what a deleted tape keeps is measured alone,
    # and the bound is half the goal's.
    out = run_python(
        _RSS
        + """
rng = np.random.default_rng(0)
ws = [gt.Variable(rng.standard_normal((512, 512)).astype(np.float32) * 0.05) for _ in range(50)]
x = gt.constant(rng.standard_normal((256, 512)).astype(np.float32))

def steps(layers, times):
    for _ in range(times):
        with gt.GradientTape(persistent=True) as tape:
            h = x
            for w in layers:
                h = gt.nn.relu(h @ w)
            loss = gt.reduce_sum(h * h)
        grads = tape.gradient(loss, layers)
        assert len(grads) == len(layers) and grads[0].shape == (512, 512)
    return tape, grads, h, loss

gc.collect()
first = rss_mib()
held = steps(ws[:2], 1)
del held
gc.collect()
base = rss_mib()
tape, grads, h, loss = steps(ws, 2)
peak = rss_mib()
del tape, grads, h, loss
gc.collect()
print("first_use", base - first)
print("grew", peak - base)
print("kept", rss_mib() - base)
""",
        timeout=300,
    )
    f = _figures(out)
    assert f["grew"] > 50, f  # the tape really held its activations
    assert f["kept"] <= 4.0, f
    # The first-use cost is bounded too (code and pool threads, not tensors).
    assert f["first_use"] <= 24.0, f


def test_every_tape_drop_returns_memory_even_in_quick_succession():
    # Three tapes, each holding 40 activations of 1 MiB (malloc's heap, not the
    # allocator cache, as a deep MLP's are), deleted one right
    # after the other: the heap used to be trimmed at most once a second, so the
    # later ones kept their memory.
    out = run_python(
        _RSS
        + """
rng = np.random.default_rng(0)
x = gt.constant(rng.standard_normal((512, 512)).astype(np.float32))
gc.collect()
base = rss_mib()
tapes = []
for i in range(3):
    with gt.GradientTape(persistent=True) as t:
        t.watch(x)
        h = x
        for _ in range(40):
            h = gt.nn.relu(h * 1.01 - 0.001)
    tapes.append(t)
del t, h
gc.collect()
print("held", rss_mib() - base)
for i in range(3):
    del tapes[0]
    print(f"kept{i}", rss_mib() - base)
""",
        timeout=300,
    )
    f = _figures(out)
    per_tape = f["held"] / 3
    assert per_tape > 35, f  # a saved activation of 1 MiB per step
    for i in range(3):
        assert f[f"kept{i}"] < (2 - i) * per_tape + 6, f


def test_cache_with_no_tape_alive_is_bounded_and_releasable():
    # 16 blocks of 32 MiB freed with no tape alive used to stay (+512 MiB).
    out = run_python(
        _RSS
        + """
gc.collect()
base = rss_mib()
blocks = [gt.fill([8 << 20], 1.0) for _ in range(16)]     # 16 x 32 MiB
print("live", rss_mib() - base)
del blocks
gc.collect()
print("kept", rss_mib() - base)
print("cached", gt.experimental.memory_cached_bytes() / 2**20)
gt.experimental.release_memory()
print("released", rss_mib() - base)
print("cached_after", gt.experimental.memory_cached_bytes())
""",
        timeout=120,
    )
    f = _figures(out)
    assert f["live"] > 500, f
    assert 0 < f["cached"] <= 64, f
    assert f["kept"] <= 64 + 8, f
    assert f["released"] <= 8, f
    assert f["cached_after"] == 0, f


def test_cache_limit_set_by_call_and_by_environment():
    snippet = (
        _RSS
        + """
print("limit", gt.experimental.memory_cache_limit())
with gt.GradientTape():                                  # a tape alive: the full limit
    blocks = [gt.fill([2 << 20], 1.0) for _ in range(8)]   # 8 x 8 MiB
    del blocks
    print("cached", gt.experimental.memory_cached_bytes() / 2**20)
    gt.experimental.set_memory_cache_limit(16 << 20)
    print("lowered", gt.experimental.memory_cached_bytes() / 2**20)
    gt.experimental.set_memory_cache_limit(0)
    blocks = [gt.fill([2 << 20], 1.0) for _ in range(4)]
    del blocks
    print("off", gt.experimental.memory_cached_bytes())
"""
    )
    f = _figures(run_python(snippet, timeout=120))
    assert f == {"limit": 512 * 2**20, "cached": 64.0, "lowered": 16.0, "off": 0.0}
    f = _figures(run_python(snippet, timeout=120, env={"GRADTAPE_MEMORY_CACHE_LIMIT": "24M"}))
    assert f["limit"] == 24 * 2**20
    assert f["cached"] == 24.0, f


def test_bad_cache_limits_are_rejected():
    with pytest.raises(ValueError, match="must be >= 0"):
        gt.experimental.set_memory_cache_limit(-1)
    with pytest.raises(TypeError):
        gt.experimental.set_memory_cache_limit(1.5)
    with pytest.raises(AssertionError, match="GRADTAPE_MEMORY_CACHE_LIMIT"):
        run_python("import gradtape", timeout=60, env={"GRADTAPE_MEMORY_CACHE_LIMIT": "a lot"})


def test_grad_fn_referring_to_its_tape_is_collected():
    # grad_fn -> its tape -> the recorded node -> grad_fn: a cycle through the native
    # tape, which used to be invisible to the collector (+400 MB never freed).
    out = run_python(
        _RSS
        + """
import weakref

def make():
    x = gt.constant(np.ones(20_000_000, np.float32))   # 80 MB, saved by the node
    tape = gt.GradientTape(persistent=True)

    @gt.custom_gradient
    def f(z):
        def grad_fn(dy):
            return dy * float(tape.persistent)
        return gt.identity(z), grad_fn

    with tape:
        tape.watch(x)
        y = f(x * 2.0)
    assert float(tape.gradient(y, x)[-1]) == 2.0
    return weakref.ref(tape)

gc.collect()
base = rss_mib()
refs = [make() for _ in range(5)]
gc.collect()
print("alive", sum(r() is not None for r in refs))
print("kept", rss_mib() - base)
""",
        timeout=300,
    )
    f = _figures(out)
    assert f["alive"] == 0, f
    assert f["kept"] < 40, f


def test_a_traced_function_using_a_tape_keeps_the_tape_limit_while_it_lives():
    # A traced training step is a loop body: its large buffers stay cached between
    # calls (no fresh pages each call) while the function lives, and the cache falls
    # back to the idle bound once it is gone.
    out = run_python(
        _RSS
        + """
x = gt.fill([4 << 20], 0.5)                      # 16 MiB

@gt.function
def step(x):
    with gt.GradientTape() as t:
        t.watch(x)
        y = gt.reduce_sum(gt.nn.relu(x * 2.0) + gt.reduce_sum(x) * x * x)
    return t.gradient(y, x)

blocks = [gt.fill([4 << 20], 1.0) for _ in range(6)]   # 6 x 16 MiB freed while it lives
g = step(x)
print("grad", float(g[0]))
del blocks
gc.collect()
print("living", gt.experimental.memory_cached_bytes() / 2**20)
del step, g
gc.collect()
print("gone", gt.experimental.memory_cached_bytes() / 2**20)
""",
        timeout=120,
    )
    f = _figures(out)
    # d/dx [2 relu(x) + s x²] with s = sum(x): 2 + 2 s x + sum(x²) = 2 + 2 s (0.5) + n/4.
    n = 4 << 20
    s = 0.5 * n
    assert f["grad"] == pytest.approx(2 + s + n / 4, rel=1e-5), f
    assert f["living"] >= 96, f
    assert f["gone"] <= 64, f
