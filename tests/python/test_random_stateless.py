"""Stateless random ops, generators, seeds (issue 15): TF 2.21's numbers (Philox-4x32-10
and TF's CPU distributions), the same numbers eagerly, traced and after a SavedModel
load, no gradients (as TF), and generator state in checkpoints."""

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

import gradtape as gt


def h(t):
    return hashlib.sha256(np.ascontiguousarray(t.numpy()).tobytes()).hexdigest()[:16]


S = [5, 6]

# sha256 prefixes of TF 2.21's outputs (tensorflow-cpu, CPU) for the same calls.
TF_HASHES = {
    "uniform_f32": "021239652ade064c",
    "uniform_f64": "300c2e35c1589569",
    "uniform_f16": "d44a4ec9e8e31f16",
    "uniform_range": "9d3d533753ed6d1e",
    "int32": "d60a5a1773175449",
    "int64": "555c15b89b2b2a89",
    "full_i32": "05f4f6d593256550",
    "full_u64": "e04a0713f452d64e",
    "normal_f32": "1d6580d4c2e257b0",
    "normal_f64": "8e56c4e678eeddaa",
    "normal_f16": "c2f8f9ee0d9893b7",
    "trunc_f32": "21c72a74f13f2dac",
    "trunc_f64": "cb02403c0103523d",
    "trunc_f16": "2bdd2382f9e7d616",
    "seed64": "6fda6690a74bd86f",
    "categorical": "83018d2ab6b6de75",
}


def _cases():
    r = gt.random
    return {
        "uniform_f32": lambda: r.stateless_uniform([1000, 3], seed=S),
        "uniform_f64": lambda: r.stateless_uniform([1001], seed=S, dtype=gt.float64),
        "uniform_f16": lambda: r.stateless_uniform([1001], seed=S, dtype=gt.float16),
        "uniform_range": lambda: r.stateless_uniform([999], seed=S, minval=-2.5, maxval=7.0),
        "int32": lambda: r.stateless_uniform([1001], seed=S, minval=-7, maxval=1000, dtype=gt.int32),
        "int64": lambda: r.stateless_uniform([1001], seed=S, minval=-7, maxval=10**12, dtype=gt.int64),
        "full_i32": lambda: r.stateless_uniform([1001], seed=S, minval=None, maxval=None, dtype=gt.int32),
        "full_u64": lambda: r.stateless_uniform([1001], seed=S, minval=None, maxval=None, dtype=gt.uint64),
        "normal_f32": lambda: r.stateless_normal([5000], seed=S, mean=1.5, stddev=2.0),
        "normal_f64": lambda: r.stateless_normal([5001], seed=S, dtype=gt.float64),
        "normal_f16": lambda: r.stateless_normal([1001], seed=S, dtype=gt.float16),
        "trunc_f32": lambda: r.stateless_truncated_normal([5003], seed=S),
        "trunc_f64": lambda: r.stateless_truncated_normal([5001], seed=S, dtype=gt.float64, mean=-1.0, stddev=0.5),
        "trunc_f16": lambda: r.stateless_truncated_normal([1001], seed=S, dtype=gt.float16),
        "seed64": lambda: r.stateless_normal([100], seed=gt.constant([2**40 + 3, -5], gt.int64)),
        "categorical": lambda: r.stateless_categorical(
            gt.math.log([[0.2, 0.3, 0.5], [0.9, 0.05, 0.05], [1 / 3, 1 / 3, 1 / 3]]), 50, seed=S),
    }


@pytest.mark.parametrize("name", sorted(TF_HASHES))
def test_bit_identical_to_tf(name):
    assert h(_cases()[name]()) == TF_HASHES[name]


@pytest.mark.parametrize("name", sorted(TF_HASHES))
def test_traced_gives_the_eager_numbers(name):
    f = _cases()[name]
    eager = f()
    traced = gt.function(f)
    np.testing.assert_array_equal(traced().numpy(), eager.numpy())
    np.testing.assert_array_equal(traced().numpy(), eager.numpy())  # a pure function of the seed


def test_first_values_and_dtypes():
    u = gt.random.stateless_uniform([3], seed=[1, 2])
    assert u.dtype == gt.float32
    assert u.numpy().tolist() == [0.8440604209899902, 0.19204533100128174, 0.9962232112884521]
    n = gt.random.stateless_normal([3], seed=[1, 2], dtype="float64").numpy().tolist()
    assert n == [-0.1423118100189212, 0.7406072461585091, -1.469047669443883]
    w = gt.random.stateless_uniform([3], seed=[1, 2], minval=None, maxval=None, dtype=gt.uint32)
    assert w.dtype == gt.uint32 and w.numpy().tolist() == [1105988140, 1738052849, 3959391294]
    # int32 and int64 seeds with the same values are the same seed (TF sign-extends).
    a = gt.random.stateless_uniform([2], seed=gt.constant([-1, 2], gt.int32))
    b = gt.random.stateless_uniform([2], seed=gt.constant([-1, 2], gt.int64))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert a.numpy().tolist() == [0.41359949111938477, 0.6200978755950928]
    # Tensor bounds broadcast as TF's (rnd * (maxval - minval) + minval).
    lo, hi = gt.constant([0.0, 10.0]), gt.constant([1.0, 20.0])
    t = gt.random.stateless_uniform([3, 2], seed=S, minval=lo, maxval=hi).numpy()
    base = gt.random.stateless_uniform([3, 2], seed=S).numpy()
    np.testing.assert_allclose(t, base * (hi.numpy() - lo.numpy()) + lo.numpy(), rtol=1e-6)
    assert gt.random.stateless_uniform([0, 4], seed=S).shape == [0, 4]


def test_split_and_fold_in_are_tfs():
    assert gt.random.split([1, 2], num=3).numpy().tolist() == [
        [1105988140, 1738052849], [-335576002, 370444179], [10670227, -246211131]]
    assert gt.random.split([1, 2]).dtype == gt.int32
    assert gt.random.split(gt.constant([1, 2], gt.int64), 2).dtype == gt.int64
    assert gt.random.fold_in([1, 2], 3).numpy().tolist() == [1105988140, 3]
    assert gt.random.fold_in([1, 2], gt.constant(3, gt.int64)).dtype == gt.int64
    # TF's docstring: a normal draw from a folded-in seed.
    x = gt.random.stateless_normal([3], seed=gt.random.fold_in([1, 2], 3)).numpy()
    np.testing.assert_allclose(x, [0.03197195, 0.8979765, 0.13253039], rtol=1e-6)
    x = gt.random.stateless_normal([3], seed=gt.random.split([1, 2], 3)[0]).numpy()
    np.testing.assert_allclose(x, [-0.59835213, -0.9578608, 0.9002807], rtol=1e-6)


def test_bad_arguments():
    with pytest.raises(ValueError, match="both"):
        gt.random.stateless_uniform([2], seed=S, minval=0, dtype=gt.int32)
    with pytest.raises(ValueError, match="bounded"):
        gt.random.stateless_uniform([2], seed=S, minval=0, maxval=4, dtype=gt.uint32)
    with pytest.raises(ValueError, match="Invalid dtype"):
        gt.random.stateless_uniform([2], seed=S, dtype=gt.bool)
    with pytest.raises(gt.errors.InvalidArgumentError, match="minval < maxval"):
        gt.random.stateless_uniform([2], seed=S, minval=5, maxval=5, dtype=gt.int32)
    with pytest.raises(gt.errors.InvalidArgumentError, match="shape \\[2\\]"):
        gt.random.stateless_normal([2], seed=[1, 2, 3])
    with pytest.raises(TypeError, match="int32 or int64"):
        gt.random.stateless_normal([2], seed=[1.0, 2.0])
    with pytest.raises(TypeError):
        gt.random.stateless_normal([2], seed=S, dtype=gt.int32)
    with pytest.raises(gt.errors.InvalidArgumentError, match="Unsupported algorithm"):
        gt.random.stateless_uniform([2], seed=S, alg="threefry")
    with pytest.raises(ValueError, match="Unsupported algorithm"):
        gt.random.stateless_uniform([2], seed=S, alg="mersenne")
    with pytest.raises(gt.errors.InvalidArgumentError, match="matrix"):
        gt.random.stateless_categorical([1.0, 2.0], 3, seed=S)
    with pytest.raises(gt.errors.InvalidArgumentError, match="nonnegative"):
        gt.random.stateless_categorical([[1.0, 2.0]], -1, seed=S)
    with pytest.raises(gt.errors.ResourceExhaustedError):
        gt.random.stateless_normal([2**31, 2**31], seed=S)
    # alg accepted in every spelling that means Philox.
    for alg in ("philox", "auto_select", gt.random.Algorithm.PHILOX, 1, 3):
        np.testing.assert_array_equal(gt.random.stateless_uniform([2], seed=S, alg=alg).numpy(),
                                      gt.random.stateless_uniform([2], seed=S).numpy())


def test_no_gradients_as_tf():
    logits = gt.Variable([[0.1, 0.2]])
    mean = gt.Variable(1.0)
    with gt.GradientTape(persistent=True) as tape:
        c = gt.cast(gt.random.stateless_categorical(logits, 3, seed=S), gt.float32)
        s = gt.reduce_sum(c)
        n = gt.random.stateless_normal([2], seed=S)
        y = gt.reduce_sum(n)
    assert tape.gradient(s, logits) is None
    assert tape.gradient(y, mean) is None


def test_categorical_frequencies_and_never_infinite_logits():
    logits = gt.constant([[0.0, float("-inf"), np.log(3.0)]])
    c = gt.random.stateless_categorical(logits, 20000, seed=[9, 9]).numpy()[0]
    assert 1 not in c
    np.testing.assert_allclose(np.mean(c == 2), 0.75, atol=0.015)
    assert gt.random.stateless_categorical(logits, 4, seed=S, dtype=gt.int32).dtype == gt.int32
    # The stateful one follows TF's seed rules.
    gt.random.set_seed(3)
    a = gt.random.categorical(gt.math.log([[0.5, 0.5]]), 10, seed=1)
    gt.random.set_seed(3)
    b = gt.random.categorical(gt.math.log([[0.5, 0.5]]), 10, seed=1)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert a.dtype == gt.int64 and a.shape == [1, 10]
    gt.random.set_seed(None)


# --- Generators -------------------------------------------------------------------------


def test_generator_numbers_and_state_are_tfs():
    g = gt.random.Generator.from_seed(1)
    assert g.state.numpy().tolist() == [1, 0, 0]
    np.testing.assert_allclose(g.normal([3]).numpy(), [0.4384227395057678, -0.5343984365463257, -0.07710261642932892],
                               rtol=0, atol=0)
    assert g.state.numpy().tolist() == [769, 0, 0]
    g = gt.random.Generator.from_seed(42)
    outs = [g.normal([3, 4]), g.uniform([5], maxval=3.0, dtype=gt.float64), g.truncated_normal([7]),
            g.uniform([6], minval=0, maxval=100, dtype=gt.int64), g.uniform_full_int([2])]
    assert [h(x) for x in outs] == ["946b41d7cea5e13f", "131cb146e1ab15d3", "9864438ebe2f99a7",
                                    "33ffddd148290fc1", "63e5d622e0d7e299"]
    assert g.state.numpy().tolist() == [8234, 0, 0]
    assert g.make_seeds(2).numpy().tolist() == [[-498909660266896773, -5975852512477548417], [0, 0]]
    kids = g.split(2)
    assert [k.state.numpy().tolist() for k in kids] == [[0, 0, -2903648990026894100], [0, 0, 7938436014721274263]]
    # A counter that overflows its low word (TF's 128-bit counter).
    g2 = gt.random.Generator.from_key_counter(key=7, counter=[2**63 - 1, 3], alg="philox")
    np.testing.assert_array_equal(g2.normal([2]).numpy(), np.float32([-0.06864014267921448, 0.6577026844024658]))
    assert g2.state.numpy().tolist() == [-9223372036854775297, 3, 7]
    assert gt.random.create_rng_state([12, 34], "philox").numpy().tolist() == [0, 12, 34]
    assert gt.random.create_rng_state(2**70 + 5, "philox").numpy().tolist() == [5, 64, 0]
    assert gt.random.create_rng_state([1, 2, 3, 4], "philox").numpy().tolist() == [1, 2, 3]
    assert gt.random.create_rng_state(1234, "philox").dtype == gt.int64


def test_generator_state_management():
    g = gt.random.Generator.from_seed(5)
    a = g.normal([4]).numpy()
    g.reset_from_seed(5)
    np.testing.assert_array_equal(g.normal([4]).numpy(), a)
    g.reset([5, 0, 0])
    old = g.skip(4)
    assert old.numpy().tolist() == [5, 0, 0] and g.state.numpy().tolist() == [5 + 4 * 256, 0, 0]
    g.reset_from_key_counter(0, [5, 0])
    np.testing.assert_array_equal(g.normal([4]).numpy(), a)
    c = gt.random.Generator(copy_from=g)
    np.testing.assert_array_equal(c.normal([3]).numpy(), g.normal([3]).numpy())
    assert int(g.key) == 0 and g.algorithm == 1
    v = gt.Variable(gt.constant([5, 0, 0], gt.int64))
    shared = gt.random.Generator(state=v, alg="philox")
    assert shared.state is v
    np.testing.assert_array_equal(shared.normal([4]).numpy(), a)
    assert v.numpy().tolist() == [5 + 4 * 256, 0, 0]
    n1 = gt.random.Generator.from_non_deterministic_state()
    n2 = gt.random.Generator.from_non_deterministic_state()
    assert n1.state.numpy().tolist() != n2.state.numpy().tolist()
    with pytest.raises(ValueError, match="shape"):
        gt.random.Generator(state=[1, 2], alg="philox")
    with pytest.raises(ValueError):
        gt.random.Generator(state=[1, 2, 3])
    with pytest.raises(ValueError, match="both"):
        g.uniform([2], minval=None, maxval=3, dtype=gt.int32)


def test_global_generator():
    g = gt.random.get_global_generator()
    assert g is gt.random.get_global_generator()
    mine = gt.random.Generator.from_seed(1)
    gt.random.set_global_generator(mine)
    try:
        assert gt.random.get_global_generator() is mine
        np.testing.assert_allclose(gt.random.get_global_generator().normal([1]).numpy(), [0.4384227395057678])
    finally:
        gt.random.set_global_generator(g)
    with pytest.raises(TypeError):
        gt.random.set_global_generator(3)


def test_generator_in_gt_function_advances_its_state():
    g = gt.random.Generator.from_seed(1)

    @gt.function
    def draw():
        return g.normal([3])

    first = draw().numpy()
    second = draw().numpy()
    ref = gt.random.Generator.from_seed(1)
    np.testing.assert_array_equal(first, ref.normal([3]).numpy())
    np.testing.assert_array_equal(second, ref.normal([3]).numpy())
    assert g.state.numpy().tolist() == ref.state.numpy().tolist()


def test_generator_checkpoint_resumes_the_sequence(tmp_path):
    g = gt.random.Generator.from_seed(7)
    g.normal([10])
    path = gt.train.Checkpoint(generator=g).save(tmp_path / "ckpt")
    expected = g.normal([5]).numpy()
    fresh = gt.random.Generator.from_seed(123)
    gt.train.Checkpoint(generator=fresh).restore(path).assert_consumed()
    np.testing.assert_array_equal(fresh.normal([5]).numpy(), expected)
    assert ("generator/_state_var/.ATTRIBUTES/VARIABLE_VALUE", [3]) in gt.train.list_variables(path)


# --- SavedModel round trips ---------------------------------------------------------------


class _Sampler(gt.Module):
    def __init__(self):
        super().__init__()
        self.gen = gt.random.Generator.from_seed(11)

    @gt.function(input_signature=[gt.TensorSpec([2], gt.int64)])
    def stateless(self, seed):
        return {
            "u": gt.random.stateless_uniform([4], seed=seed),
            "i": gt.random.stateless_uniform([4], seed=seed, minval=-3, maxval=9, dtype=gt.int64),
            "f": gt.random.stateless_uniform([3], seed=seed, minval=None, maxval=None, dtype=gt.int32),
            "n": gt.random.stateless_normal([5], seed=seed, mean=1.0, stddev=3.0, dtype=gt.float64),
            "t": gt.random.stateless_truncated_normal([6], seed=seed),
            "c": gt.random.stateless_categorical(gt.math.log([[0.3, 0.7]]), 8, seed=seed),
        }

    @gt.function(input_signature=[])
    def stateful(self):
        return self.gen.normal([4])


_CHILD = r"""
import sys, numpy as np, gradtape as gt
m = gt.saved_model.load(sys.argv[1])
out = m.stateless(gt.constant([5, 6], gt.int64))
for k in sorted(out):
    print(k, out[k].numpy().tolist())
print("gen", m.stateful().numpy().tolist(), m.stateful().numpy().tolist())
"""


def test_saved_model_round_trip_in_a_fresh_process(tmp_path):
    m = _Sampler()
    seed = gt.constant([5, 6], gt.int64)
    want = {k: v.numpy().tolist() for k, v in m.stateless(seed).items()}
    path = str(tmp_path / "sm")
    gt.saved_model.save(m, path)
    ref = gt.random.Generator.from_seed(11)
    g1, g2 = ref.normal([4]).numpy().tolist(), ref.normal([4]).numpy().tolist()
    out = subprocess.run([sys.executable, "-c", _CHILD, path], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONHASHSEED": "0"})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    got = {}
    for line in lines[:-1]:
        k, _, v = line.partition(" ")
        got[k] = eval(v)
    assert got == want
    assert lines[-1] == f"gen {g1} {g2}"
    # The loaded generator state is a variable of the loaded object (as TF's, a restored
    # object with its `_state_var`): it advances there, from the saved state.
    loaded = gt.saved_model.load(path)
    loaded.stateful()
    assert loaded.gen._state_var.numpy().tolist() == [11 + 4 * 256, 0, 0]


def test_the_rust_loader_draws_the_same_numbers(tmp_path):
    m = _Sampler()
    path = str(tmp_path / "sm")
    gt.saved_model.save(m, path)
    loaded = gt.saved_model.load(path)
    want = loaded.stateless(gt.constant([5, 6], gt.int64))
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    exe = os.path.join(root, "target", "debug", "examples", "random_saved_model")
    if not os.path.exists(exe):
        subprocess.run(["cargo", "build", "--quiet", "--example", "random_saved_model"], cwd=root, check=True,
                       timeout=3000)
    out = subprocess.run([exe, path, "stateless", "5", "6"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert len(lines) == len(want)
    for line, k in zip(lines, sorted(want)):
        dtype, _, values = line.partition(" ")
        assert dtype == want[k].dtype.name
        np.testing.assert_array_equal(np.array(eval(values)), want[k].numpy().astype(np.float64).ravel())
    # The generator's draws continue from its saved state, as in Python.
    ref = gt.random.Generator.from_seed(11)
    out = subprocess.run([exe, path, "stateful"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "float32 [" + ", ".join(repr(float(v)) for v in ref.normal([4]).numpy()) + "]"


def test_large_categorical_is_tfs_single_threaded_stream():
    # Beyond one shard TF's StatelessMultinomial skips each shard's generator to
    # start_row * (num_samples + 3) / 4 blocks, and the shards are cut by Eigen's cost
    # model from the intra-op thread count: TF's numbers for [300, 5] x 100 differ with 1, 2
    # and 4 threads (tensorflow-cpu 2.21: e8c5c1761b8df32c, baa47e20795f3c32,
    # 149e46af4fc7dac5). gradtape's do not depend on threads: they are TF's with
    # tf.config.threading.set_intra_op_parallelism_threads(1) (one shard).
    logits = gt.math.log(gt.fill([300, 5], 0.2))
    c = gt.random.stateless_categorical(logits, 100, seed=S)
    assert h(c) == "e8c5c1761b8df32c"
    assert c.numpy()[150, :5].tolist() == [4, 4, 2, 0, 0]
    assert c.numpy()[299, :5].tolist() == [4, 4, 0, 1, 3]


def test_bfloat16_draws_are_tfs():
    # sha256 prefixes and first values of TF 2.21's outputs (tensorflow-cpu, CPU).
    r = gt.random
    cases = [
        (r.stateless_uniform([1001], seed=S, dtype=gt.bfloat16), "c3518c2bb195e849", [0.8359375, 0.0859375, 0.5]),
        (r.stateless_uniform([1001], seed=S, minval=-2.0, maxval=3.0, dtype=gt.bfloat16), "e0b5e122f74cf6af",
         [2.1875, -1.5703125, 0.5]),
        (r.stateless_normal([1001], seed=S, dtype=gt.bfloat16, mean=1.0, stddev=2.0), "bcaba3eb4bdee485",
         [3.046875, -0.078125, 3.5625]),
        (r.stateless_truncated_normal([1001], seed=S, dtype=gt.bfloat16), "2d45fa4f524c93f8",
         [1.0234375, -0.5390625, 1.28125]),
    ]
    for t, want, first in cases:
        assert t.dtype == gt.bfloat16
        assert np.asarray(t.numpy(), np.float64)[:3].tolist() == first
        assert h(t) == want
    g = gt.random.Generator.from_seed(3)
    assert g.normal([4], dtype=gt.bfloat16).dtype == gt.bfloat16
