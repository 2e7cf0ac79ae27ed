"""The rank-side half of test_distributed.py, run under ``mpiexec -n 2``.

``python mpi_worker.py checks``: runs every check below on every rank and prints one
line per check, ``rank R: ok NAME`` or ``rank R: FAIL NAME: error`` (a failing check
does not stop the others: each check leaves the ranks in step). ``raise``: rank 1
raises while rank 0 waits in a collective (the abort-on-error path). ``exit``: rank 1
dies (``os._exit(3)``, as a crash would) while rank 0 waits. ``sysexit`` /
``systemexit`` / ``exit0``: rank 1 leaves with ``sys.exit(3)``, ``raise SystemExit(4)``,
``sys.exit(0)`` in the middle of training while rank 0 waits in the next reduction;
``exit-before`` / ``exit-traced``: rank 0 is in the reduction (eager / a traced step's
graph node) before rank 1 leaves. ``clean``: both ranks
train and ``sys.exit(0)`` at the end.
"""

from __future__ import annotations

import os
import sys
import time
import traceback

import numpy as np

import gradtape as gt
from gradtape import distributed as dist

CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


def mlp(seed, dtype="float64", sizes=(5, 7, 6, 3)):
    rng = np.random.default_rng(seed)
    return [
        gt.Variable(rng.normal(size=shape).astype(dtype) * 0.5, name=f"{kind}{i}")
        for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:]))
        for kind, shape in (("w", (m, n)), ("b", (n,)))
    ]


def forward(params, x):
    h = x
    for k in range(0, len(params), 2):
        h = h @ params[k] + params[k + 1]
        if k + 2 < len(params):
            h = gt.tanh(h)
    return h


def data(n=8, dtype="float64"):
    rng = np.random.default_rng(123)
    return rng.normal(size=(n, 5)).astype(dtype), rng.normal(size=(n, 3)).astype(dtype)


def shard(a):
    r, s = dist.rank(), dist.size()
    k = len(a) // s
    return a[r * k:(r + 1) * k]


def loss_of(params, x, y):
    return gt.reduce_mean(gt.square(forward(params, gt.constant(x)) - gt.constant(y)))


def same_on_all_ranks(arrays):
    """Whether every rank's arrays are bitwise equal to rank 0's (the same answer on
    every rank)."""
    flat = np.concatenate([np.asarray(a, dtype=np.float64).ravel() for a in arrays])
    root = dist.broadcast(gt.constant(flat), root_rank=0).numpy()
    agree = dist.allreduce(gt.constant(int(np.array_equal(flat, root))), op=dist.Sum)
    return int(agree) == dist.size()


@check
def ranks_and_sizes():
    assert dist.size() == 2 and dist.rank() in (0, 1)
    assert dist.local_size() == 2 and dist.local_rank() == dist.rank()
    assert dist.is_initialized()


@check
def averaged_gradients_equal_full_batch_gradients():
    x, y = data()
    params = mlp(0)
    for bucket_bytes in (dist.DEFAULT_BUCKET_BYTES, 64, 1):
        with gt.GradientTape() as tape:
            loss = loss_of(params, shard(x), shard(y))
        grads = dist.DistributedGradientTape(tape, bucket_bytes=bucket_bytes).gradient(loss, params)
        with gt.GradientTape() as full:
            loss_full = loss_of(params, x, y)
        want = full.gradient(loss_full, params)
        for g, w, p in zip(grads, want, params):
            assert g.dtype == gt.float64 and tuple(g.shape) == tuple(p.shape)
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=0)


@check
def sum_op_and_nested_sources():
    x, y = data()
    params = mlp(1)
    with gt.GradientTape() as tape:
        loss = loss_of(params, shard(x), shard(y))
    grads = dist.DistributedGradientTape(tape, op=dist.Sum).gradient(loss, {"first": params[:2], "rest": params[2:]})
    with gt.GradientTape() as full:
        loss_full = loss_of(params, x, y)
    want = full.gradient(loss_full, params)
    got = grads["first"] + grads["rest"]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), 2 * w.numpy(), rtol=1e-12, atol=0)


@check
def buckets_are_reduced_while_the_backward_pass_runs():
    x, y = data()
    params = mlp(2)
    with gt.GradientTape() as tape:
        loss = loss_of(params, shard(x), shard(y))
    dtape = dist.DistributedGradientTape(tape, bucket_bytes=1)  # one bucket per gradient
    dtape.gradient(loss, params)
    stats = dtape._reducer.last_stats
    # Six buckets; all but the first layer's (finished last) were posted during the sweep.
    assert stats["buckets"] == 6, stats
    assert stats["posted_during_backward"] >= 5, stats
    # The order the sweep finished them: the last layer's first.
    assert stats["ready_order"] == [5, 4, 3, 2, 1, 0], stats
    # The next step (a new wrapper, as Horovod's pattern makes) reuses the buffers.
    buffers = {id(b.send) for layout in dist._LAYOUTS.values() for b in layout.buckets}
    with gt.GradientTape() as tape:
        loss = loss_of(params, shard(x), shard(y))
    dist.DistributedGradientTape(tape, bucket_bytes=1).gradient(loss, params)
    assert {id(b.send) for layout in dist._LAYOUTS.values() for b in layout.buckets} == buffers


@check
def variables_stay_identical_after_steps():
    x, y = data(16)
    for wrap in ("tape", "optimizer"):
        params = mlp(10 + dist.rank())  # different on each rank until broadcast
        assert not same_on_all_ranks(params)
        dist.broadcast_variables(params, root_rank=0)
        assert same_on_all_ranks(params)
        opt = gt.optimizers.SGD(0.1, momentum=0.9)
        if wrap == "optimizer":
            opt = dist.DistributedOptimizer(opt, bucket_bytes=100)
        for step in range(4):
            xb, yb = shard(x[step * 4:(step + 1) * 4]), shard(y[step * 4:(step + 1) * 4])
            with gt.GradientTape() as tape:
                loss = loss_of(params, xb, yb)
            if wrap == "tape":
                grads = dist.DistributedGradientTape(tape).gradient(loss, params)
            else:
                grads = tape.gradient(loss, params)
            opt.apply_gradients(zip(grads, params))
        assert same_on_all_ranks(params)
        assert int(opt.iterations.numpy()) == 4


@check
def optimizer_minimize():
    x, y = data()
    params = mlp(3)
    opt = dist.DistributedOptimizer(gt.optimizers.SGD(0.5))
    before = [p.numpy() for p in params]
    opt.minimize(lambda: loss_of(params, shard(x), shard(y)), params)
    with gt.GradientTape() as full:
        loss_full = loss_of([gt.Variable(b) for b in before], x, y)
    want = full.gradient(loss_full, full.watched_variables())
    for p, b, w in zip(params, before, want):
        np.testing.assert_allclose(p.numpy(), b - 0.5 * w.numpy(), rtol=1e-12)


@check
def allreduce_allgather_broadcast():
    r = dist.rank()
    t = gt.constant(np.arange(6, dtype=np.float32).reshape(2, 3) * (r + 1))
    np.testing.assert_array_equal(dist.allreduce(t, op=dist.Sum).numpy(), np.arange(6).reshape(2, 3) * 3.0)
    avg = dist.allreduce(t)
    assert avg.dtype == gt.float32
    np.testing.assert_array_equal(avg.numpy(), np.arange(6).reshape(2, 3) * 1.5)
    i = dist.allreduce(gt.constant([7, 8], dtype=gt.int32) + r, op=dist.Sum)
    assert i.dtype == gt.int32 and i.numpy().tolist() == [15, 17]
    h = dist.allreduce(gt.constant([1.5, -2.0], dtype=gt.float16) * (r + 1), op=dist.Sum)
    assert h.dtype == gt.float16 and h.numpy().tolist() == [4.5, -6.0]
    c = dist.allreduce(gt.constant(np.array([1 + 2j], np.complex128)) * (r + 1))
    np.testing.assert_array_equal(c.numpy(), [1.5 + 3j])
    # A non-contiguous tensor (a transposed view) and a Variable.
    tt = dist.allreduce(gt.transpose(t), op=dist.Sum)
    np.testing.assert_array_equal(tt.numpy(), (np.arange(6).reshape(2, 3) * 3.0).T)
    v = dist.allreduce(gt.Variable([1.0, 2.0]) * 1.0 + r)
    np.testing.assert_array_equal(v.numpy(), [1.5, 2.5])
    # allgather: rank 0 has 1 row, rank 1 has 2.
    g = dist.allgather(gt.constant(np.full((r + 1, 2), r, np.int64)))
    assert g.dtype == gt.int64 and g.numpy().tolist() == [[0, 0], [1, 1], [1, 1]]
    gb = dist.allgather(gt.constant([r == 0, True]))
    assert gb.numpy().tolist() == [True, True, False, True]
    b = dist.broadcast(gt.constant([[r + 0.25]], dtype=gt.float64), root_rank=1)
    assert b.dtype == gt.float64 and b.numpy().tolist() == [[1.25]]
    bb = dist.broadcast(gt.constant([r == 1]), root_rank=1)
    assert bb.numpy().tolist() == [True]
    s = dist.broadcast(gt.constant(3.5 + r), root_rank=0)
    assert s.shape == () and float(s) == 3.5


@check
def fp16_compression():
    r = dist.rank()
    x = np.linspace(-3, 3, 1001).astype(np.float32) * (r + 1)
    out = dist.allreduce(gt.constant(x), compression=dist.Compression.fp16)
    assert out.dtype == gt.float32
    want = np.linspace(-3, 3, 1001) * 1.5
    err = np.abs(out.numpy() - want).max()
    assert 0 < err <= 4.5 * 2**-11 * 2, err  # float16 rounding, not exact
    x, y = data()
    params = mlp(4)
    with gt.GradientTape() as tape:
        loss = loss_of(params, shard(x), shard(y))
    grads = dist.DistributedGradientTape(tape, compression=dist.Compression.fp16).gradient(loss, params)
    with gt.GradientTape() as full:
        loss_full = loss_of(params, x, y)
    want = full.gradient(loss_full, params)
    for g, w in zip(grads, want):
        assert g.dtype == gt.float64
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=2e-3, atol=2e-3 * np.abs(w.numpy()).max())


@check
def none_gradients():
    a, b = gt.Variable([1.0, 2.0]), gt.Variable([3.0])
    with gt.GradientTape() as tape:
        loss = gt.reduce_sum(a * a)
    g = dist.DistributedGradientTape(tape).gradient(loss, [a, b])
    assert g[1] is None and g[0].numpy().tolist() == [2.0, 4.0]
    with gt.GradientTape() as tape:
        loss = gt.reduce_sum(a * a)
    g = dist.DistributedGradientTape(tape).gradient(loss, [a, b], unconnected_gradients="zero")
    assert g[1].numpy().tolist() == [0.0]
    # b has a gradient on rank 1 only: an error on both ranks.
    with gt.GradientTape() as tape:
        loss = gt.reduce_sum(a * a) + (gt.reduce_sum(b) if dist.rank() == 1 else 0.0)
    try:
        dist.DistributedGradientTape(tape).gradient(loss, [a, b])
    except ValueError as e:
        assert "has a gradient on 1 of 2 ranks" in str(e), e
    else:
        raise AssertionError("no error for a gradient that is None on one rank only")


@check
def mismatched_shapes_give_a_clear_error():
    r = dist.rank()
    w = gt.Variable(np.ones((3, 2 + r)))
    with gt.GradientTape() as tape:
        loss = gt.reduce_sum(w * w)
    try:
        dist.DistributedGradientTape(tape).gradient(loss, [w])
    except ValueError as e:
        msg = str(e)
        assert "ranks disagree" in msg and "rank 0: " in msg and "(3, 2)" in msg and "(3, 3)" in msg, msg
    else:
        raise AssertionError("no error for mismatched shapes")
    for call in (lambda: dist.allreduce(gt.ones((2 + r,))), lambda: dist.broadcast(gt.ones((1, 1 + r)))):
        try:
            call()
        except ValueError as e:
            assert "ranks disagree" in str(e), e
        else:
            raise AssertionError("no error for mismatched shapes")
    try:
        dist.allgather(gt.ones((1, 1 + r)))
    except ValueError as e:
        assert "(1, 1)" in str(e) and "(1, 2)" in str(e), e
    else:
        raise AssertionError("no error for mismatched shapes")
    # The ranks are still in step afterwards.
    assert float(dist.allreduce(gt.constant(1.0), op=dist.Sum)) == 2.0


@check
def bad_arguments():
    for call, exc in [
        (lambda: dist.allreduce(gt.constant([True])), TypeError),
        (lambda: dist.allreduce(gt.constant(1.0), op="max"), ValueError),
        (lambda: dist.broadcast(gt.constant(1.0), root_rank=2), ValueError),
        (lambda: dist.allgather(gt.constant(1.0)), ValueError),
        (lambda: dist.DistributedGradientTape("tape"), TypeError),
        (lambda: dist.DistributedGradientTape(gt.GradientTape(), bucket_bytes=0), ValueError),
        (lambda: dist.broadcast_variables([gt.constant(1.0)]), TypeError),
    ]:
        try:
            call()
        except exc:
            pass
        else:
            raise AssertionError(f"no {exc.__name__}")


@check
def collectives_in_a_gt_function():
    r = dist.rank()
    calls = []

    @gt.function
    def f(x):
        calls.append(1)  # Python runs at the trace only
        return (dist.allreduce(x, op=dist.Sum), dist.allreduce(x), dist.allgather(x[: r + 1]),
                dist.broadcast(x, root_rank=1))

    for k in range(3):  # the graph communicates on every call, with that call's values
        x = gt.constant([1.0, 2.0]) * (r + 1) + k
        s, a, g, b = f(x)
        np.testing.assert_array_equal(s.numpy(), [3.0 + 2 * k, 6.0 + 2 * k])
        np.testing.assert_array_equal(a.numpy(), [1.5 + k, 3.0 + k])
        np.testing.assert_array_equal(g.numpy(), [1.0 + k, 2.0 + k, 4.0 + k])
        np.testing.assert_array_equal(b.numpy(), [2.0 + k, 4.0 + k])
    assert len(calls) == 1
    # Integers and a bool gather as graph nodes too.
    h = gt.function(lambda x: (dist.allreduce(x, op=dist.Sum), dist.allgather(x > 7)))
    i, bl = h(gt.constant([7, 8], dtype=gt.int32) + r)
    assert i.dtype == gt.int32 and i.numpy().tolist() == [15, 17]
    assert bl.numpy().tolist() == [False, True, True, True]
    # Variables (an int one too) as the collectives' arguments.
    fv, iv = gt.Variable([1.0, 3.0]), gt.Variable([2, 4 + r])
    vs = gt.function(lambda: (dist.allreduce(fv), dist.allreduce(iv, op=dist.Sum), dist.broadcast(iv, root_rank=1)))()
    assert [v.numpy().tolist() for v in vs] == [[1.0, 3.0], [4, 9], [2, 5]]


@check
def ranks_may_retrace_independently():
    # Tracing communicates nothing (allreduce, broadcast): rank 1 retraces at its second
    # call (another Python argument), rank 0 does not; their graphs still meet.
    r = dist.rank()
    traces = []

    @gt.function
    def f(x, scale):
        traces.append(scale)
        return dist.broadcast(dist.allreduce(x * scale, op=dist.Sum), root_rank=0)

    first = f(gt.constant([1.0, 2.0]), 1.0)
    second = f(gt.constant([1.0, 2.0]), 1.0 if r == 0 else 3.0)
    assert traces == ([1.0] if r == 0 else [1.0, 3.0]), traces
    np.testing.assert_array_equal(first.numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(second.numpy(), [4.0, 8.0])


def _grads_of(fn, x, traced):
    def step(x):
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        return tape.gradient(y, x)

    return (gt.function(step) if traced else step)(x)


@check
def collective_gradients_eager_and_traced():
    r, n = dist.rank(), dist.size()
    x0 = np.array([1.0, -2.0, 0.5]) * (r + 1)
    w = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])  # row r weighs rank r's loss
    for traced in (False, True):
        for k in range(2):
            x = gt.constant(x0 + k)
            # allreduce: the gradient of sum_r <w_r, avg(x)> is avg(w) on every rank
            # (each rank's gradient is the allreduce of the upstream gradients).
            g = _grads_of(lambda x, k=k: gt.reduce_sum(dist.allreduce(x) * w[r] * (k + 1)), x, traced)
            np.testing.assert_allclose(g.numpy(), w.mean(0) * (k + 1), rtol=1e-12)
            g = _grads_of(lambda x: gt.reduce_sum(dist.allreduce(x, op=dist.Sum) * w[r]), x, traced)
            np.testing.assert_allclose(g.numpy(), w.sum(0), rtol=1e-12)
            # allgather (rank r gives r + 1 rows): this rank's rows of the averaged
            # upstream gradient.
            xs = gt.constant(np.arange(2.0 * (r + 1)).reshape(r + 1, 2) + k)
            up = np.arange(6.0).reshape(3, 2) * (r + 1)  # rank r's upstream gradient
            g = _grads_of(lambda x, up=up: gt.reduce_sum(dist.allgather(x) * up), xs, traced)
            rows = slice(0, 1) if r == 0 else slice(1, 3)
            np.testing.assert_allclose(g.numpy(), (np.arange(6.0).reshape(3, 2) * 1.5)[rows], rtol=1e-12)
            # broadcast from rank 1: the averaged upstream gradient on the root, zeros
            # elsewhere.
            g = _grads_of(lambda x: gt.reduce_sum(dist.broadcast(x, root_rank=1) * w[r]), x, traced)
            np.testing.assert_allclose(g.numpy(), w.mean(0) if r == 1 else np.zeros(3), rtol=1e-12)
        # Through a variable (the tape watches its read).
        v = gt.Variable(x0)

        def var_grad(v=v):
            with gt.GradientTape() as tape:
                y = gt.reduce_sum(dist.allreduce(v) * w[r])
            return tape.gradient(y, v)

        g = (gt.function(var_grad) if traced else var_grad)()
        np.testing.assert_allclose(g.numpy(), w.mean(0), rtol=1e-12)
    # A traced call differentiated by a tape outside it.
    f = gt.function(lambda x: dist.allreduce(x) * (r + 1.0))
    for k in range(2):
        x = gt.constant([1.0, 2.0]) + k
        with gt.GradientTape() as tape:
            tape.watch(x)
            y = gt.reduce_sum(f(x))
        assert float(y) == (3.0 + 2 * k) * (r + 1)
        np.testing.assert_allclose(tape.gradient(y, x).numpy(), [1.5, 1.5], rtol=1e-12)
    assert n == 2


def _training_step(mode, params, opt):
    def step(xb, yb, first):
        with gt.GradientTape() as tape:
            loss = loss_of(params, xb, yb)
        if mode == "traced_optimizer":
            grads = tape.gradient(loss, params)  # the DistributedOptimizer reduces them
        else:
            grads = dist.DistributedGradientTape(tape, bucket_bytes=200).gradient(loss, params)
        opt.apply_gradients(zip(grads, params))
        if first:
            dist.broadcast_variables(params, root_rank=0)
        return grads

    return step


@check
def traced_training_step_matches_eager():
    x, y = data(16)
    results = {}
    for mode in ("eager", "traced", "traced_optimizer"):
        params = mlp(20 + dist.rank())  # different on each rank until broadcast
        opt = gt.optimizers.SGD(0.1, momentum=0.9)
        if mode == "traced_optimizer":
            opt = dist.DistributedOptimizer(opt, bucket_bytes=100)
        grads_seen = []
        step = _training_step(mode, params, opt)
        run = step if mode == "eager" else gt.function(step)
        for k in range(4):
            xb, yb = shard(x[k * 4:(k + 1) * 4]), shard(y[k * 4:(k + 1) * 4])
            grads = run(gt.constant(xb), gt.constant(yb), k == 0)
            grads_seen.append([g.numpy() for g in grads])
        assert same_on_all_ranks(params), mode
        results[mode] = ([p.numpy() for p in params], grads_seen)
        if mode != "eager":
            # The same averaged gradients and weights as the eager loop.
            for a, b in zip(results[mode][0], results["eager"][0]):
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
            if mode == "traced":
                for ga, gb in zip(grads_seen, results["eager"][1]):
                    for a, b in zip(ga, gb):
                        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


@check
def traced_gradient_matches_full_batch():
    x, y = data()
    params = mlp(0)

    @gt.function
    def grads_of(xb, yb):
        with gt.GradientTape() as tape:
            loss = loss_of(params, xb, yb)
        return dist.DistributedGradientTape(tape, bucket_bytes=64).gradient(loss, params)

    grads = grads_of(gt.constant(shard(x)), gt.constant(shard(y)))
    with gt.GradientTape() as full:
        loss_full = loss_of(params, x, y)
    want = full.gradient(loss_full, params)
    for g, w in zip(grads, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=0)


@check
def traced_mismatch_is_a_clear_error():
    r = dist.rank()

    @gt.function
    def f(x):
        return dist.allreduce(x)

    try:
        f(gt.ones((2 + r,)))
    except ValueError as e:
        assert "ranks disagree" in str(e), e
    else:
        raise AssertionError("no error for mismatched shapes in a gt.function")
    assert float(dist.allreduce(gt.constant(1.0), op=dist.Sum)) == 2.0


def say(line):
    # One write per line: the ranks share the pipe, and a short write is not interleaved.
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def run_checks():
    r = dist.rank()
    for fn in CHECKS:
        try:
            fn()
            say(f"rank {r}: ok {fn.__name__}")
        except Exception as e:  # noqa: BLE001 - reported, and the next check runs
            tb = traceback.format_exc().replace("\n", " | ")
            say(f"rank {r}: FAIL {fn.__name__}: {type(e).__name__}: {e} :: {tb}")


def main():
    mode = sys.argv[1]
    dist.init()
    if mode == "checks":
        run_checks()
    elif mode == "raise":
        if dist.rank() == 1:
            time.sleep(0.2)
            raise ValueError("boom from rank 1")
        say("rank 0: waiting in allreduce")
        dist.allreduce(gt.constant(1.0))
        say("rank 0: allreduce returned (it should not have)")
        time.sleep(60)
    elif mode == "exit":
        if dist.rank() == 1:
            os._exit(3)
        dist.allreduce(gt.constant(1.0))
        time.sleep(60)
    elif mode in ("sysexit", "systemexit", "exit0", "exit-before", "exit-traced"):
        # Rank 1 leaves mid-training while rank 0 goes on to (or waits in) a collective.
        params = mlp(0)
        x, y = data()

        def train_step(xb, yb):
            with gt.GradientTape() as tape:
                loss = loss_of(params, xb, yb)
            return dist.DistributedGradientTape(tape).gradient(loss, params)

        if mode == "exit-traced":
            train_step = gt.function(train_step)
        for step in range(3):
            if dist.rank() == 1 and step == 2:
                if mode in ("exit-before", "exit-traced"):
                    time.sleep(2)
                say("rank 1: leaving")
                if mode == "systemexit":
                    raise SystemExit(4)
                sys.exit(0 if mode == "exit0" else 3)
            train_step(gt.constant(shard(x)), gt.constant(shard(y)))
        say("rank 0: step 2 reduced (it should not have)")
        time.sleep(60)
    elif mode == "clean":
        # A normal end: every rank trains, then leaves with sys.exit(0).
        params = mlp(0)
        x, y = data()
        for _ in range(3):
            with gt.GradientTape() as tape:
                loss = loss_of(params, shard(x), shard(y))
            dist.DistributedGradientTape(tape).gradient(loss, params)
        if dist.rank() == 1:
            time.sleep(1)  # the other rank reaches its exit first and waits
        say(f"rank {dist.rank()}: done")
        sys.exit(0)
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
