"""gt.saved_model (issue 15): round trips checked in fresh processes that never saw the
model's Python code (values, gradients, custom gradients with and without the option,
variables, nested modules), fine-tuning a loaded model and saving it again, the Rust
loader on a model this suite writes, and damaged directories refused whole."""

import json
import os
import subprocess

import numpy as np
import pytest

import gradtape as gt
from isolated import fresh

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@gt.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return gt.clip_by_norm(dy, 0.5)

    return y, backward


class MyModule(gt.Module):
    @gt.function(input_signature=[gt.TensorSpec(None)])
    def call_custom_grad(self, x):
        return clip_gradients(x)


SEED_CHECK = """
import sys
import gradtape as tf
v = tf.Variable(2.0)
loaded = tf.saved_model.load(sys.argv[1])
with tf.GradientTape() as t:
    output = loaded.call_custom_grad(v * v)
try:
    print(t.gradient(output, v))
except LookupError as e:
    print("LookupError:", e)
"""


def test_the_seed_example_prints_the_same_gradient_in_a_fresh_process(tmp_path):
    # The guide's numbers: the gradient 2 * v = 4 is clipped to 2.
    v = gt.Variable(2.0)
    with gt.GradientTape() as t:
        output = clip_gradients(v * v)
    here = str(t.gradient(output, v))
    assert here == "gt.Tensor(2.0, shape=(), dtype=float32)"
    model = MyModule()
    gt.saved_model.save(model, tmp_path / "saved_model",
                        options=gt.saved_model.SaveOptions(experimental_custom_gradients=True))
    assert fresh(SEED_CHECK, tmp_path / "saved_model").strip() == here


def test_without_the_option_a_fresh_process_raises_tf_s_lookup_error(tmp_path):
    gt.saved_model.save(MyModule(), tmp_path / "m",
                        options=gt.saved_model.SaveOptions(experimental_custom_gradients=False))
    out = fresh(SEED_CHECK, tmp_path / "m").strip()
    assert out == "LookupError: No gradient defined for operation 'IdentityN' (op type: IdentityN)"
    # The forward value is still there.
    loaded = gt.saved_model.load(tmp_path / "m")
    assert float(loaded.call_custom_grad(gt.constant(3.0))) == 3.0


class Dense(gt.Module):
    def __init__(self, n_in, n_out, name=None):
        super().__init__(name=name)
        rng = np.random.default_rng(n_in * 10 + n_out)
        with self.name_scope:
            self.w = gt.Variable(rng.standard_normal((n_in, n_out)).astype(np.float32), name="w")
            self.b = gt.Variable(np.zeros(n_out, np.float32), name="b")

    def __call__(self, x):
        return gt.matmul(x, self.w) + self.b


class MLP(gt.Module):
    def __init__(self):
        super().__init__(name="mlp")
        with self.name_scope:
            self.layers = [Dense(3, 4, name="hidden"), Dense(4, 2, name="out")]
            self.extra = {"scale": gt.Variable(1.5, name="scale"), "frozen": gt.Variable(2.0, trainable=False)}

    def _forward(self, x):
        h = gt.nn.relu(self.layers[0](x))
        y = self.layers[1](h) * self.extra["scale"]
        return {"y": y, "energy": gt.reduce_sum(gt.square(y), axis=1) + 0.0 * self.extra["frozen"]}

    @gt.function(input_signature=[gt.TensorSpec([None, 3], gt.float32, name="x")])
    def __call__(self, x):
        return self._forward(x)

    @gt.function(input_signature=[gt.TensorSpec([None, 3], gt.float32)])
    def loss(self, x):
        return gt.reduce_mean(self._forward(x)["energy"])


def _x():
    return np.array([[0.5, -1.0, 2.0], [1.0, 0.25, -0.5]], np.float32)


FRESH_MLP = """
import sys, json
import numpy as np
import gradtape as gt
m = gt.saved_model.load(sys.argv[1])
x = gt.constant(np.array([[0.5, -1.0, 2.0], [1.0, 0.25, -0.5]], np.float32))
with gt.GradientTape() as tape:
    tape.watch(x)
    out = m(x)
    loss = gt.reduce_sum(out["energy"])
gx, gw = tape.gradient(loss, [x, m.layers[0].w])
print(json.dumps({
    "y": out["y"].numpy().tolist(), "gx": gx.numpy().tolist(), "gw": gw.numpy().tolist(),
    "names": [v.name for v in m.variables], "trainable": [v.name for v in m.trainable_variables],
    "submodules": len(m.submodules), "signature": sorted(m.signatures),
    "sig_y": m.signatures["serving_default"](x=x)["y"].numpy().tolist(),
}))
"""


def test_a_static_size_of_a_none_dimension_is_refused_and_a_known_one_saved(tmp_path):
    class Mean(gt.Module):
        @gt.function(input_signature=[gt.TensorSpec([None], gt.float32)])
        def __call__(self, x):
            return gt.reduce_sum(x) / float(len(x))

    # The file would hold the traced example's size for every size: refused.
    with pytest.raises(ValueError, match=r"static size of a None dimension.*gt\.shape"):
        gt.saved_model.save(Mean(), str(tmp_path / "mean"))

    class Scaled(gt.Module):
        def __init__(self):
            self.w = gt.Variable([[1.0], [2.0], [3.0]])

        @gt.function(input_signature=[gt.TensorSpec([None, 3], gt.float32)])
        def __call__(self, x):
            # The last size is in the signature; the first is read dynamically.
            return gt.matmul(x, self.w) * float(x.shape[-1]) / gt.cast(gt.shape(x)[0], gt.float32)

    gt.saved_model.save(Scaled(), str(tmp_path / "scaled"))
    loaded = gt.saved_model.load(str(tmp_path / "scaled"))
    np.testing.assert_array_equal(loaded(gt.ones([4, 3])).numpy(), np.full((4, 1), 4.5, np.float32))
    np.testing.assert_array_equal(loaded(gt.ones([2, 3])).numpy(), np.full((2, 1), 9.0, np.float32))


def test_nested_modules_round_trip_values_gradients_and_variables(tmp_path):
    m = MLP()
    x = gt.constant(_x())
    with gt.GradientTape() as tape:
        tape.watch(x)
        out = m(x)
        loss = gt.reduce_sum(out["energy"])
    gx, gw = tape.gradient(loss, [x, m.layers[0].w])
    gt.saved_model.save(m, tmp_path / "mlp", signatures=m.__call__)
    got = json.loads(fresh(FRESH_MLP, tmp_path / "mlp"))
    np.testing.assert_allclose(got["y"], out["y"].numpy(), rtol=1e-6)
    np.testing.assert_allclose(got["sig_y"], out["y"].numpy(), rtol=1e-6)
    np.testing.assert_allclose(got["gx"], gx.numpy(), rtol=1e-5)
    np.testing.assert_allclose(got["gw"], gw.numpy(), rtol=1e-5)
    assert sorted(got["names"]) == sorted(v.name for v in m.variables)
    assert "mlp/hidden/w:0" in got["names"] and "frozen:0" not in got["trainable"]
    assert got["signature"] == ["serving_default"]
    assert got["submodules"] == 2


def test_load_finetune_save_load_again(tmp_path):
    m = MLP()
    gt.saved_model.save(m, tmp_path / "a")
    loaded = gt.saved_model.load(tmp_path / "a")
    opt = gt.optimizers.SGD(0.002)
    x = gt.constant(_x())
    before = loaded.loss(x).numpy()
    for _ in range(3):
        with gt.GradientTape() as tape:
            loss = loaded.loss(x)
        grads = tape.gradient(loss, loaded.trainable_variables)
        assert all(g is not None for g in grads)
        opt.apply_gradients(zip(grads, loaded.trainable_variables))
    after = loaded.loss(x).numpy()
    assert after < before
    tuned = {v.name: v.numpy() for v in loaded.variables}
    gt.saved_model.save(loaded, tmp_path / "b")
    again = gt.saved_model.load(tmp_path / "b")
    for v in again.variables:
        np.testing.assert_array_equal(v.numpy(), tuned[v.name])
    np.testing.assert_allclose(again.loss(x).numpy(), after, rtol=1e-6)
    # In a fresh process too.
    code = "import sys, gradtape as gt, numpy as np\nm = gt.saved_model.load(sys.argv[1])\n" \
           "print(float(m.loss(gt.constant(np.array([[0.5, -1.0, 2.0], [1.0, 0.25, -0.5]], np.float32)))))"
    np.testing.assert_allclose(float(fresh(code, tmp_path / "b")), after, rtol=1e-6)


class Flow(gt.Module):
    def __init__(self):
        super().__init__()
        self.k = gt.Variable(3.0)

    @gt.function(input_signature=[gt.TensorSpec([], gt.float32), gt.TensorSpec([], gt.int32)])
    def power(self, x, n):
        i = gt.constant(0)
        acc = gt.ones_like(x)
        while i < n:
            acc = acc * x
            i += 1
        if gt.reduce_sum(acc) > 100.0:
            acc = acc / self.k
        return acc


def test_control_flow_round_trips(tmp_path):
    gt.saved_model.save(Flow(), tmp_path / "f")
    loaded = gt.saved_model.load(tmp_path / "f")
    assert float(loaded.power(gt.constant(2.0), gt.constant(3))) == 8.0
    assert float(loaded.power(gt.constant(5.0), gt.constant(3))) == pytest.approx(125.0 / 3.0)
    x = gt.constant(2.0)
    with gt.GradientTape() as t:
        t.watch(x)
        y = loaded.power(x, gt.constant(4))
    assert float(t.gradient(y, x)) == pytest.approx(4 * 8.0)


def test_custom_gradient_reading_forward_values_and_variables(tmp_path):
    class M(gt.Module):
        def __init__(self):
            super().__init__()
            self.a = gt.Variable(2.0)

        @gt.function(input_signature=[gt.TensorSpec([None], gt.float32)])
        def f(self, x):
            @gt.custom_gradient
            def g(x):
                y = gt.exp(x) * self.a

                def grad(dy, variables=None):
                    # 3x the true gradient wrt x; the variable's is true.
                    return 3.0 * dy * y, [gt.reduce_sum(dy * y / self.a)]

                return y, grad

            return g(x)

    m = M()
    x = np.array([0.0, 1.0], np.float32)
    gt.saved_model.save(m, tmp_path / "c")
    loaded = gt.saved_model.load(tmp_path / "c")
    xt = gt.constant(x)
    with gt.GradientTape() as t:
        t.watch(xt)
        y = loaded.f(xt)
    gx, ga = t.gradient(y, [xt, loaded.a])
    np.testing.assert_allclose(gx.numpy(), 3.0 * 2.0 * np.exp(x), rtol=1e-6)
    np.testing.assert_allclose(float(ga), np.exp(x).sum(), rtol=1e-6)


def test_saved_files_are_the_documented_format(tmp_path):
    from gradtape import _safetensors

    gt.saved_model.save(MLP(), tmp_path / "m")
    assert sorted(os.listdir(tmp_path / "m")) == ["constants.safetensors", "saved_model.json", "variables.safetensors"]
    doc = json.loads((tmp_path / "m" / "saved_model.json").read_text())
    assert (doc["format"], doc["version"]) == ("gradtape.saved_model", 2)
    assert doc["objects"][0]["kind"] == "module" and doc["objects"][0]["class"] == "MLP"
    values = _safetensors.load_file(tmp_path / "m" / "variables.safetensors")
    assert sorted(values) == sorted(str(i) for i in range(len(doc["variables"])))
    ops = {n["op"] for f in doc["functions"] for n in f["graph"]["nodes"]}
    assert {"ReadVariableOp", "BatchMatMulV2", "Binary", "Unary"} <= ops


def test_unsaveable_functions_raise_naming_the_op(tmp_path):
    class R(gt.Module):
        @gt.function(input_signature=[gt.TensorSpec([2], gt.float32)])
        def f(self, x):
            return gt.py_function(lambda t: t + 1.0, [x], gt.float32)

    with pytest.raises(gt.errors.InvalidArgumentError, match="cannot be saved"):
        gt.saved_model.save(R(), tmp_path / "r")
    with pytest.raises(ValueError, match="gt.Module"):
        gt.saved_model.save(3, tmp_path / "x")
    with pytest.raises(TypeError, match="SaveOptions"):
        gt.saved_model.save(MLP(), tmp_path / "x", options={"x": 1})


def _damage(d, name, how):
    p = d / name
    data = p.read_bytes()
    if how == "truncate":
        p.write_bytes(data[: len(data) // 2])
    elif how == "remove":
        p.unlink()
    elif how == "flip":
        b = bytearray(data)
        b[len(b) // 2] ^= 0xFF
        p.write_bytes(bytes(b))


@pytest.mark.parametrize("name,how", [
    ("saved_model.json", "truncate"), ("variables.safetensors", "truncate"),
    ("constants.safetensors", "truncate"), ("variables.safetensors", "remove"),
    ("constants.safetensors", "remove"), ("variables.safetensors", "flip"),
])
def test_damaged_models_are_refused_whole(tmp_path, name, how):
    d = tmp_path / "m"
    gt.saved_model.save(MLP(), d)
    _damage(d, name, how)
    with pytest.raises((gt.errors.DataLossError, ValueError)) as e:
        gt.saved_model.load(d)
    assert str(e.value)


def test_bad_structures_are_refused(tmp_path):
    d = tmp_path / "m"
    gt.saved_model.save(MLP(), d)
    good = json.loads((d / "saved_model.json").read_text())

    def load_with(doc):
        (d / "saved_model.json").write_text(json.dumps(doc))
        with pytest.raises(gt.errors.DataLossError) as e:
            gt.saved_model.load(d)
        return str(e.value)

    doc = json.loads(json.dumps(good))
    doc["version"] = 3
    assert "unsupported SavedModel format version 3" in load_with(doc)
    doc = json.loads(json.dumps(good))
    doc["variables"][0]["shape"] = [10**12, 10**12]
    assert "declared" in load_with(doc)
    doc = json.loads(json.dumps(good))
    doc["functions"][0]["graph"]["nodes"][0]["inputs"] = [{"node": [99, 0]}]
    assert "does not exist" in load_with(doc)
    doc = json.loads(json.dumps(good))
    doc["objects"][0]["children"]["layers"] = 10**6
    assert "object 1000000" in load_with(doc)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        gt.saved_model.load(tmp_path / "nowhere")


def test_the_rust_loader_reads_a_model_saved_here(tmp_path):
    class M(gt.Module):
        def __init__(self):
            super().__init__()
            self.w = gt.Variable([[1.0], [-2.0]], name="w")

        @gt.function(input_signature=[gt.TensorSpec([None, 2])])
        def __call__(self, x):
            return gt.tanh(x @ self.w)

    gt.saved_model.save(M(), tmp_path / "my_model")
    exe = os.path.join(ROOT, "target", "debug", "examples", "load_saved_model")
    if not os.path.exists(exe):
        subprocess.run(["cargo", "build", "--quiet", "--example", "load_saved_model"], cwd=ROOT, check=True,
                       timeout=3000)
    out = subprocess.run([exe, str(tmp_path / "my_model")], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    x = np.array([[0.1, 0.2], [0.3, 0.4]], np.float32)
    y = np.tanh(x @ np.array([[1.0], [-2.0]], np.float32))
    got = json.loads(lines[0].split("= ")[1])
    np.testing.assert_allclose(got, y.ravel(), rtol=1e-6)
    g = json.loads(lines[1].split("= ")[1])
    np.testing.assert_allclose(g, ((1 - y**2) * np.array([[1.0, -2.0]])).ravel(), rtol=1e-5)
    worst = float(lines[2].split("= ")[1])
    assert worst < 1e-2
    assert lines[3] == "variable w:0 [2, 1]"
    assert lines[4] == "after zeroing w:0: y = [0.0, 0.0]"
