"""gt.saved_model with functions that do more than compute (format version 2): variable
assigns that act on the loaded object's variables, random draws made afresh on every
call, a gt.function calling another, ops saved through their families' rows (a conv
net), and damaged encodings of those ops refused with a clear error."""

import json
import sys

import numpy as np
import pytest

import gradtape as gt
from isolated import fresh


class Counter(gt.Module):
    def __init__(self):
        super().__init__()
        self.total = gt.Variable(0.0)
        self.last = gt.Variable([0.0, 0.0])
        self.scale = gt.Variable(1.0)

    @gt.function(input_signature=[gt.TensorSpec([2], gt.float32)])
    def add(self, x):
        self.total.assign_add(gt.reduce_sum(x))
        self.last.assign(x * self.scale)
        self.scale.assign_sub(0.5)
        return self.total.read_value() + 0.0


def test_assigns_act_on_the_loaded_object_s_variables(tmp_path):
    m = Counter()
    gt.saved_model.save(m, tmp_path / "c")
    # Tracing for saving is not a call: the variables are untouched.
    assert float(m.total) == 0.0 and float(m.scale) == 1.0
    out = fresh("""
        import sys
        import gradtape as gt
        m = gt.saved_model.load(sys.argv[1])
        a = m.add(gt.constant([1.0, 2.0]))
        b = m.add(gt.constant([3.0, 4.0]))
        print(float(a), float(b), float(m.total), m.last.numpy().tolist(), float(m.scale))
    """, tmp_path / "c")
    assert out.split() == ["3.0", "10.0", "10.0", "[1.5,", "2.0]", "0.0"]
    doc = json.loads((tmp_path / "c" / "saved_model.json").read_text())
    ops = [n["op"] for n in doc["functions"][0]["graph"]["nodes"]]
    assert {"AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp"} <= set(ops)


class Noisy(gt.Module):
    @gt.function(input_signature=[gt.TensorSpec([3], gt.float32)])
    def __call__(self, x):
        return x + gt.random.normal([3]) + gt.random.uniform([3], maxval=2.0) + gt.cast(
            gt.random.uniform([3], maxval=5, dtype=gt.int32), gt.float32)

    @gt.function(input_signature=[])
    def seeded(self):
        return gt.random.truncated_normal([4], seed=7)


RANDOM_CHECK = """
import sys
import numpy as np
import gradtape as gt
m = gt.saved_model.load(sys.argv[1])
x = gt.zeros([3])
a, b = m(x).numpy(), m(x).numpy()
print(int(np.array_equal(a, b)), int(np.all(np.isfinite(a))))
print(" ".join(repr(float(v)) for v in m.seeded().numpy()))
"""


def test_random_draws_are_fresh_on_every_call_after_loading(tmp_path):
    gt.saved_model.save(Noisy(), tmp_path / "n")
    lines = fresh(RANDOM_CHECK, tmp_path / "n").splitlines()
    assert lines[0] == "0 1"  # two calls, two different draws
    # A seeded op gives the same numbers in every process, as the unsaved function does.
    again = fresh(RANDOM_CHECK, tmp_path / "n").splitlines()
    assert lines[1] == again[1]
    got = np.array([float(v) for v in lines[1].split()])
    assert len(set(got.tolist())) == 4 and np.all(np.abs(got) <= 2.0)  # truncated at 2 stddev


@gt.function
def _inner(x, w):
    return gt.nn.relu(gt.matmul(x, w))


class Outer(gt.Module):
    def __init__(self):
        super().__init__()
        self.w = gt.Variable(np.arange(6.0, dtype=np.float32).reshape(3, 2) - 2.0)

    @gt.function(input_signature=[gt.TensorSpec([None, 3], gt.float32)])
    def __call__(self, x):
        return gt.reduce_sum(_inner(x, self.w) ** 2)


def test_a_function_calling_another_function_round_trips(tmp_path):
    m = Outer()
    x = gt.constant([[1.0, -1.0, 2.0], [0.5, 0.5, 0.5]])
    with gt.GradientTape() as t:
        y = m(x)
    g = t.gradient(y, m.w).numpy()
    gt.saved_model.save(m, tmp_path / "o")
    out = fresh("""
        import sys
        import gradtape as gt
        m = gt.saved_model.load(sys.argv[1])
        x = gt.constant([[1.0, -1.0, 2.0], [0.5, 0.5, 0.5]])
        with gt.GradientTape() as t:
            y = m(x)
        print(float(y), *t.gradient(y, m.w).numpy().ravel().tolist())
    """, tmp_path / "o")
    vals = [float(v) for v in out.split()]
    assert vals[0] == pytest.approx(float(y), rel=1e-6)
    np.testing.assert_allclose(vals[1:], g.ravel(), rtol=1e-6)


class ConvNet(gt.Module):
    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(0)
        self.k = gt.Variable(rng.standard_normal((3, 3, 1, 4)).astype(np.float32))
        self.d = gt.Variable(rng.standard_normal((4, 3)).astype(np.float32))

    @gt.function(input_signature=[gt.TensorSpec([None, 6, 6, 1], gt.float32), gt.TensorSpec([None], gt.int32)])
    def loss(self, x, labels):
        h = gt.nn.relu(gt.nn.conv2d(x, self.k, 1, "SAME"))
        h = gt.nn.max_pool2d(h, 2, 2, "VALID")[:, ::2, :, :]
        h = gt.pad(h, [[0, 0], [1, 0], [0, 0], [0, 0]])
        logits = gt.matmul(gt.reduce_mean(h, axis=[1, 2]), self.d)
        picked = gt.gather(logits, labels, axis=1, batch_dims=1)
        return gt.reduce_mean(gt.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)) + 0.1 * gt.reduce_sum(
            picked)


def test_a_conv_net_saved_with_family_ops_loads_in_a_fresh_process(tmp_path):
    m = ConvNet()
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 6, 6, 1)).astype(np.float32)
    labels = np.array([0, 2], dtype=np.int32)
    with gt.GradientTape() as t:
        y = m.loss(gt.constant(x), gt.constant(labels))
    gk, gd = t.gradient(y, [m.k, m.d])
    gt.saved_model.save(m, tmp_path / "cnn")
    np.save(tmp_path / "x.npy", x)
    out = fresh("""
        import sys
        import numpy as np
        import gradtape as gt
        m = gt.saved_model.load(sys.argv[1])
        x = gt.constant(np.load(sys.argv[2]))
        with gt.GradientTape() as t:
            y = m.loss(x, gt.constant([0, 2]))
        gk, gd = t.gradient(y, [m.k, m.d])
        print(float(y), float(gt.reduce_sum(gk * gk)), float(gt.reduce_sum(gd * gd)))
    """, tmp_path / "cnn", tmp_path / "x.npy")
    vals = [float(v) for v in out.split()]
    np.testing.assert_allclose(
        vals, [float(y), float(gt.reduce_sum(gk * gk)), float(gt.reduce_sum(gd * gd))], rtol=1e-5)
    doc = json.loads((tmp_path / "cnn" / "saved_model.json").read_text())
    assert doc["version"] == 2
    ops = {n["op"] for n in doc["functions"][0]["graph"]["nodes"]}
    assert {"Conv2D", "MaxPool", "StridedSlice", "PadV2", "GatherV2", "SparseSoftmaxCrossEntropyWithLogits"} <= ops


def _node(doc, op):
    for n in doc["functions"][0]["graph"]["nodes"]:
        if n["op"] == op:
            return n
    raise AssertionError(op)


@pytest.mark.parametrize("op,attr,value,message", [
    ("Conv2D", "padding", "Bogus", "padding"),
    ("Conv2D", "strides", [1], "strides"),
    ("MaxPool", "ksize", "x", "ksize"),
    ("StridedSlice", "index", [{"Int": "zero"}], "index"),
    ("StridedSlice", "tensor_positions", [5], "tensor positions"),
    ("PadV2", "has_constant", True, "has_constant"),
    ("GatherV2", "batch_dims", None, "batch_dims"),
])
def test_damaged_family_op_encodings_are_refused(tmp_path, op, attr, value, message):
    d = tmp_path / "cnn"
    gt.saved_model.save(ConvNet(), d)
    doc = json.loads((d / "saved_model.json").read_text())
    _node(doc, op)["attrs"][attr] = value
    (d / "saved_model.json").write_text(json.dumps(doc))
    with pytest.raises(gt.errors.DataLossError, match=message):
        gt.saved_model.load(d)


@pytest.mark.parametrize("change,message", [
    (lambda n: n.update(op="RandomStandardNormalX"), "unknown op"),
    (lambda n: n["attrs"].update(shape=[10**9, 10**9, 10**9]), "RandomStandardNormal"),
    (lambda n: n["attrs"].update(dtype="float99"), "dtype"),
    (lambda n: n.update(outputs=2), "outputs"),
])
def test_damaged_random_nodes_are_refused(tmp_path, change, message):
    d = tmp_path / "n"
    gt.saved_model.save(Noisy(), d)
    doc = json.loads((d / "saved_model.json").read_text())
    change(_node(doc, "RandomStandardNormal"))
    (d / "saved_model.json").write_text(json.dumps(doc))
    with pytest.raises(gt.errors.DataLossError, match=message):
        gt.saved_model.load(d)


@pytest.mark.parametrize("change,message", [
    (lambda n: n["attrs"].update(variable=99), "variable 99 does not exist"),
    (lambda n: n.update(inputs=[]), "inputs"),
    (lambda n: n.update(outputs=1), "outputs"),
])
def test_damaged_assign_nodes_are_refused(tmp_path, change, message):
    d = tmp_path / "c"
    gt.saved_model.save(Counter(), d)
    doc = json.loads((d / "saved_model.json").read_text())
    change(_node(doc, "AssignAddVariableOp"))
    (d / "saved_model.json").write_text(json.dumps(doc))
    with pytest.raises(gt.errors.DataLossError, match=message):
        gt.saved_model.load(d)


def test_a_version_1_file_still_loads(tmp_path):
    class Lin(gt.Module):
        def __init__(self):
            super().__init__()
            self.w = gt.Variable([[1.0], [2.0]])

        @gt.function(input_signature=[gt.TensorSpec([None, 2])])
        def __call__(self, x):
            return gt.nn.relu(gt.matmul(x, self.w))

    d = tmp_path / "v1"
    gt.saved_model.save(Lin(), d)
    doc = json.loads((d / "saved_model.json").read_text())
    doc["version"] = 1  # only version-1 ops: a version-1 writer wrote the same file
    (d / "saved_model.json").write_text(json.dumps(doc))
    assert gt.saved_model.load(d)(gt.constant([[1.0, 1.0]])).numpy().tolist() == [[3.0]]


def test_effects_outside_the_vocabulary_still_raise_naming_the_op(tmp_path):
    class P(gt.Module):
        @gt.function(input_signature=[gt.TensorSpec([2], gt.float32)])
        def f(self, x):
            return gt.py_function(lambda t: t * 2.0, [x], gt.float32)

    with pytest.raises(gt.errors.InvalidArgumentError, match="EagerPyFunc.*cannot be saved"):
        gt.saved_model.save(P(), tmp_path / "p")

    class Other(gt.Module):
        def __init__(self, v):
            super().__init__()
            self._v = None
            self.keep = v

        @gt.function(input_signature=[gt.TensorSpec([], gt.float32)])
        def f(self, x):
            outside.assign(x)
            return x

    outside = gt.Variable(0.0)
    with pytest.raises(gt.errors.InvalidArgumentError, match="not an attribute"):
        gt.saved_model.save(Other(1.0), tmp_path / "o")



class Talk(gt.Module):
    @gt.function(input_signature=[gt.TensorSpec([3], gt.float32)])
    def f(self, x):
        gt.print("x is", x, "sum", gt.reduce_sum(x), output_stream=sys.stdout)
        return x * 2.0


def test_print_prints_at_call_time_after_loading(tmp_path, capsys):
    gt.saved_model.save(Talk(), tmp_path / "t")
    assert capsys.readouterr().out == ""  # tracing for saving is not a call
    for v in ([1.0, 2.0, 3.5], [0.25, -1.0, 1e7]):
        x = gt.constant(v)
        gt.print("x is", x, "sum", gt.reduce_sum(x), output_stream=sys.stdout)
    want = capsys.readouterr().out
    out = fresh("""
        import sys
        import gradtape as gt
        m = gt.saved_model.load(sys.argv[1])
        print("loaded", flush=True)
        m.f(gt.constant([1.0, 2.0, 3.5]))
        m.f(gt.constant([0.25, -1.0, 1e7]))
    """, tmp_path / "t")
    assert out == "loaded\n" + want
    doc = json.loads((tmp_path / "t" / "saved_model.json").read_text())
    spec = _node(doc, "PrintV2")["attrs"]["spec"]
    assert spec["parts"] == ["x is", None, "sum", None] and spec["stream"] == "stdout"


def test_a_print_to_another_stream_cannot_be_saved(tmp_path):
    import io

    buf = io.StringIO()

    class Quiet(gt.Module):
        @gt.function(input_signature=[gt.TensorSpec([], gt.float32)])
        def f(self, x):
            gt.print(x, output_stream=buf)
            return x

    with pytest.raises(gt.errors.InvalidArgumentError, match="PrintV2.*cannot be saved"):
        gt.saved_model.save(Quiet(), tmp_path / "q")


class Dropping(gt.Module):
    @gt.function(input_signature=[gt.TensorSpec([200], gt.float32)])
    def __call__(self, x):
        return gt.nn.dropout(x, 0.5)


def test_dropout_draws_a_fresh_mask_on_every_call_after_loading(tmp_path):
    gt.saved_model.save(Dropping(), tmp_path / "d")
    out = fresh("""
        import sys
        import numpy as np
        import gradtape as gt
        m = gt.saved_model.load(sys.argv[1])
        a, b = m(gt.ones([200])).numpy(), m(gt.ones([200])).numpy()
        print(sorted(set(a.tolist()) | set(b.tolist())), int(np.array_equal(a, b)), int(30 < (a == 0).sum() < 170))
    """, tmp_path / "d")
    assert out.split() == ["[0.0,", "2.0]", "0", "1"]


class Checked(gt.Module):
    @gt.function(input_signature=[gt.TensorSpec([2], gt.float32)])
    def f(self, x):
        gt.debugging.assert_less(x, 3.0, message="x too big")
        return x * 2.0


def test_a_traced_assert_is_saved_and_checks_each_call_after_loading(tmp_path):
    gt.saved_model.save(Checked(), tmp_path / "a")
    doc = json.loads((tmp_path / "a" / "saved_model.json").read_text())
    assert _node(doc, "Assert")["attrs"]["spec"] == {
        "message": "x too big\nCondition x < y did not hold.", "names": ["x", "y"]}
    out = fresh("""
        import sys
        import gradtape as gt
        m = gt.saved_model.load(sys.argv[1])
        print(m.f(gt.constant([1.0, 2.0])).numpy().tolist())
        try:
            m.f(gt.constant([1.0, 5.0]))
        except gt.errors.InvalidArgumentError as e:
            print(str(e).splitlines()[1:])
    """, tmp_path / "a")
    assert out == "[2.0, 4.0]\n['Condition x < y did not hold.', 'x = [1 5]', 'y = 3']\n"
