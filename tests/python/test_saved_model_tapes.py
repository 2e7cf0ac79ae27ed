"""gt.saved_model with a GradientTape inside a saved function (issue 15): a training step
(tape, gradient, optimizer-style assigns), persistent tapes, watch, stop_recording,
reset, output gradients, unconnected zeros, jacobians and IndexedSlices gradients, each
saved, loaded in a fresh process that never saw the Python code, and checked against
the function before saving."""

import ast

import numpy as np

import gradtape as gt
from isolated import fresh


class Linear(gt.Module):
    def __init__(self):
        super().__init__()
        self.w = gt.Variable([[0.5], [-1.0]], name="w")
        self.b = gt.Variable([0.25], name="b")

    @gt.function(input_signature=[gt.TensorSpec([None, 2], gt.float32), gt.TensorSpec([None, 1], gt.float32)])
    def train_step(self, x, y):
        with gt.GradientTape() as tape:
            loss = gt.reduce_mean(gt.square(x @ self.w + self.b - y))
        dw, db = tape.gradient(loss, [self.w, self.b])
        self.w.assign_sub(0.1 * dw)
        self.b.assign_sub(0.1 * db)
        return loss


X = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]], np.float32)
Y = np.array([[1.0], [0.0], [2.0]], np.float32)


def test_a_saved_training_step_trains_the_loaded_variables_as_before(tmp_path):
    m = Linear()
    gt.saved_model.save(m, tmp_path / "m")
    # The same three steps here, on the original object.
    losses = [float(m.train_step(X, Y)) for _ in range(3)]
    assert losses[0] > losses[1] > losses[2]
    out = fresh(
        """
        import sys
        import numpy as np
        import gradtape as gt
        m = gt.saved_model.load(sys.argv[1])
        X = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]], np.float32)
        Y = np.array([[1.0], [0.0], [2.0]], np.float32)
        for _ in range(3):
            print(repr(float(m.train_step(X, Y))))
        print(repr(m.w.numpy().ravel().tolist()))
        print(repr(m.b.numpy().ravel().tolist()))
        """,
        tmp_path / "m",
    )
    lines = out.splitlines()
    np.testing.assert_allclose([float(v) for v in lines[:3]], losses, rtol=1e-6)
    w, b = ast.literal_eval(lines[3]), ast.literal_eval(lines[4])
    np.testing.assert_allclose(w, m.w.numpy().ravel(), rtol=1e-6)
    np.testing.assert_allclose(b, m.b.numpy().ravel(), rtol=1e-6)


class Tapes(gt.Module):
    def __init__(self):
        super().__init__()
        self.v = gt.Variable([1.0, -2.0, 3.0], name="v")
        self.table = gt.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], name="table")

    @gt.function(input_signature=[gt.TensorSpec([3], gt.float32)])
    def many(self, x):
        with gt.GradientTape(persistent=True, watch_accessed_variables=False) as t:
            t.watch(x)
            t.watch(self.v)
            y = gt.sin(x) * self.v
            with t.stop_recording():
                hidden = y * 100.0
            z = gt.reduce_sum(y * y) + gt.reduce_sum(hidden)
            x2 = gt.reshape(x, [3, 1])
            y2 = gt.sin(x2) * gt.reshape(self.v, [3, 1]) * 2.0
        dz_dx, dz_dv = t.gradient(z, [x, self.v])
        dy_dx = t.gradient(y, x, output_gradients=gt.constant([1.0, 2.0, 3.0]))
        zero = t.gradient(y, gt.constant(1.0), unconnected_gradients=gt.UnconnectedGradients.ZERO)
        jac = t.jacobian(y, x)
        bj = t.batch_jacobian(y2, x2)
        return dz_dx, dz_dv, dy_dx, zero, jac, bj

    @gt.function(input_signature=[gt.TensorSpec([2], gt.int32)])
    def sparse(self, ids):
        with gt.GradientTape() as t:
            rows = gt.gather(self.table, ids)
            loss = gt.reduce_sum(rows * rows)
        g = t.gradient(loss, self.table)  # IndexedSlices
        return gt.convert_to_tensor(g)

    @gt.function(input_signature=[gt.TensorSpec([], gt.float32)])
    def reset(self, x):
        with gt.GradientTape() as t:
            t.watch(x)
            y = x * x
            t.reset()
            t.watch(x)
            z = x * 3.0 + y
        return t.gradient(z, x)


def test_every_tape_use_round_trips_in_a_fresh_process(tmp_path):
    m = Tapes()
    x = np.array([0.5, -1.0, 2.0], np.float32)
    want = [r.numpy() for r in m.many(x)] + [m.sparse(np.array([2, 2], np.int32)).numpy(),
                                             m.reset(np.float32(1.5)).numpy()]
    # Hand-checked values: dz/dv = 2 y sin x, jacobian diagonal cos x * v, ...
    s, c, v = np.sin(x), np.cos(x), np.array([1.0, -2.0, 3.0])
    np.testing.assert_allclose(want[0], 2 * s * v * v * c, rtol=1e-5)
    np.testing.assert_allclose(want[1], 2 * s * v * s, rtol=1e-5)
    np.testing.assert_allclose(want[2], [1, 2, 3] * c * v, rtol=1e-5)
    assert float(want[3]) == 0.0
    np.testing.assert_allclose(want[4], np.diag(c * v), rtol=1e-5)
    np.testing.assert_allclose(want[5].ravel(), 2 * c * v, rtol=1e-5)
    np.testing.assert_array_equal(want[6], [[0, 0], [0, 0], [20, 24]])
    assert float(want[7]) == 3.0
    gt.saved_model.save(m, tmp_path / "t")
    out = fresh(
        """
        import sys
        import numpy as np
        import gradtape as gt
        m = gt.saved_model.load(sys.argv[1])
        x = np.array([0.5, -1.0, 2.0], np.float32)
        got = [r.numpy() for r in m.many(x)] + [m.sparse(np.array([2, 2], np.int32)).numpy(),
                                                m.reset(np.float32(1.5)).numpy()]
        np.save(sys.argv[2], np.array([g.astype(np.float64).ravel() for g in got], dtype=object),
                allow_pickle=True)
        """,
        tmp_path / "t",
        tmp_path / "got.npy",
    )
    del out
    got = np.load(tmp_path / "got.npy", allow_pickle=True)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, np.asarray(w, np.float64).ravel())


def test_a_loaded_function_with_a_tape_inside_is_differentiable_outside(tmp_path):
    # A function that takes a gradient inside can itself be differentiated outside after
    # loading (the outer tape sees the inner gradient's ops: second order).
    class Curv(gt.Module):
        @gt.function(input_signature=[gt.TensorSpec([], gt.float32)])
        def slope(self, x):
            with gt.GradientTape() as t:
                t.watch(x)
                y = x * x * x
            return t.gradient(y, x)

    gt.saved_model.save(Curv(), tmp_path / "c")
    loaded = gt.saved_model.load(tmp_path / "c")
    x = gt.constant(2.0)
    with gt.GradientTape() as outer:
        outer.watch(x)
        s = loaded.slope(x)
    assert float(s) == 12.0
    assert float(outer.gradient(s, x)) == 12.0
