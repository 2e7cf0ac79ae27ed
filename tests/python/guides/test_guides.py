"""The TF GradientTape documents in ``seeds/`` run under gradtape.

Each test is one example of a guide, ported by changing ``tf`` to ``gt`` (and
``tf.keras.layers`` to ``gt.layers``); it asserts the values the guide shows and,
where the guide prints, the numbers of the printed text.

Some seed texts lost ``tape.watch(x)`` lines that the original TF pages have. TF run on
the seed text as given returns ``None`` for those gradients, and so must gradtape: both
the text as given and the original page (with the watch) are tested.
"""

import numpy as np
import pytest

import gradtape as gt
from conftest import assert_printed

# --------------------------------------------------------------------------------------
# Seed 000: the tf.GradientTape API reference page.
# --------------------------------------------------------------------------------------


def test_000_first_example_as_given_is_none(capsys):
    # Seed text (watch line lost): x is a constant, not watched -> None, as in TF.
    x = gt.constant(3.0)
    with gt.GradientTape() as g:
        y = x * x
    dy_dx = g.gradient(y, x)
    print(dy_dx)
    assert dy_dx is None
    assert_printed(capsys.readouterr().out, [None])


def test_000_first_example_with_watch(capsys):
    x = gt.constant(3.0)
    with gt.GradientTape() as g:
        g.watch(x)
        y = x * x
    dy_dx = g.gradient(y, x)
    print(dy_dx)
    assert dy_dx.numpy() == 6.0
    assert dy_dx.shape == ()
    assert dy_dx.dtype == gt.float32
    out = capsys.readouterr().out
    assert out.strip().endswith("Tensor(6.0, shape=(), dtype=float32)")


def test_000_nested_as_given_is_none():
    x = gt.constant(5.0)
    with gt.GradientTape() as g:
        with gt.GradientTape() as gg:
            y = x * x
        dy_dx = gg.gradient(y, x)
    assert dy_dx is None
    assert g.watched_variables() == ()


def test_000_nested_with_watch(capsys):
    x = gt.constant(5.0)
    with gt.GradientTape() as g:
        g.watch(x)
        with gt.GradientTape() as gg:
            gg.watch(x)
            y = x * x
        dy_dx = gg.gradient(y, x)  # dy_dx = 2 * x
    d2y_dx2 = g.gradient(dy_dx, x)  # d2y_dx2 = 2
    print(dy_dx)
    print(d2y_dx2)
    assert dy_dx.numpy() == 10.0
    assert d2y_dx2.numpy() == 2.0
    # shape=() prints no number; dtype float32 prints 32.
    assert_printed(capsys.readouterr().out, [10.0, 32, 2.0, 32])


def test_000_persistent_as_given_is_none():
    x = gt.constant(3.0)
    with gt.GradientTape(persistent=True) as g:
        y = x * x
        z = y * y
    assert g.gradient(z, x) is None
    assert g.gradient(y, x) is None


def test_000_persistent_with_watch(capsys):
    x = gt.constant(3.0)
    with gt.GradientTape(persistent=True) as g:
        g.watch(x)
        y = x * x
        z = y * y
    dz_dx = g.gradient(z, x)  # (4*x^3 at x = 3)
    print(dz_dx)
    dy_dx = g.gradient(y, x)
    print(dy_dx)
    assert dz_dx.numpy() == 108.0
    assert dy_dx.numpy() == 6.0
    assert_printed(capsys.readouterr().out, [108.0, 32, 6.0, 32])
    del g


def test_000_watch_accessed_variables_false_as_given():
    # The seed lost `tape.watch(x)`: nothing is watched, both gradients are None.
    x = gt.Variable(2.0)
    w = gt.Variable(5.0)
    with gt.GradientTape(watch_accessed_variables=False, persistent=True) as tape:
        y = x**2
        z = w**3
    assert tape.gradient(y, x) is None
    assert tape.gradient(z, w) is None
    assert tape.watched_variables() == ()


def test_000_watch_accessed_variables_false_with_watch(capsys):
    x = gt.Variable(2.0)
    w = gt.Variable(5.0)
    with gt.GradientTape(watch_accessed_variables=False, persistent=True) as tape:
        tape.watch(x)
        y = x**2  # Gradients will be available for `x`.
        z = w**3  # No gradients will be available as `w` isn't being watched.
    dy_dx = tape.gradient(y, x)
    print(dy_dx)
    dz_dy = tape.gradient(z, w)
    assert dy_dx.numpy() == 4.0
    assert dz_dy is None
    assert_printed(capsys.readouterr().out, [4.0, 32])


def test_000_dense_layers_watch_accessed_variables_false():
    inputs = gt.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    a = gt.layers.Dense(32)
    b = gt.layers.Dense(32)
    assert a.variables == []  # not built yet
    with gt.GradientTape(watch_accessed_variables=False) as tape:
        result = b(a(inputs))
        grads = tape.gradient(result, a.variables)
    assert result.shape == (2, 32)
    assert len(a.variables) == 2
    assert grads == [None, None]
    assert tape.watched_variables() == ()


# --------------------------------------------------------------------------------------
# Seed 001: the autodiff guide notebook.
# --------------------------------------------------------------------------------------


def test_001_gradient_tapes_shapes(capsys):
    w = gt.Variable(gt.random.normal((3, 2)), name="w")
    b = gt.Variable(gt.zeros(2, dtype=gt.float32), name="b")
    x = [[1.0, 2.0, 3.0]]

    with gt.GradientTape(persistent=True) as tape:
        y = x @ w + b
        loss = gt.reduce_mean(y**2)

    [dl_dw, dl_db] = tape.gradient(loss, [w, b])
    print(w.shape)
    print(dl_dw.shape)
    assert_printed(capsys.readouterr().out, [3, 2, 3, 2])
    # The values: loss = mean(y^2), y = x @ w (b = 0) -> dl/dy = y, dl/dw = x^T y.
    xv = np.array(x, dtype=np.float32)
    yv = xv @ w.numpy()
    np.testing.assert_allclose(dl_dw.numpy(), xv.T @ yv, rtol=1e-5)
    np.testing.assert_allclose(dl_db.numpy(), yv[0], rtol=1e-5)


def test_001_gradients_wrt_a_model(capsys):
    layer = gt.layers.Dense(2, activation="relu")
    x = gt.constant([[1.0, 2.0, 3.0]])

    with gt.GradientTape() as tape:
        # Forward pass
        y = layer(x)
        loss = gt.reduce_mean(y**2)

    # Calculate gradients with respect to every trainable variable
    grad = tape.gradient(loss, layer.trainable_variables)

    for var, g in zip(layer.trainable_variables, grad):
        print(f"{var.name}, shape: {g.shape}")
    assert capsys.readouterr().out == "dense/kernel:0, shape: (3, 2)\ndense/bias:0, shape: (2,)\n"


def test_001_watched_variables(capsys):
    x = gt.constant(3.0)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x**2
    # dy = 2x * dx
    dy_dx = tape.gradient(y, x)
    print(dy_dx.numpy())

    # A trainable variable
    x0 = gt.Variable(3.0, name="x0")
    # Not trainable
    x1 = gt.Variable(3.0, name="x1", trainable=False)
    # Not a Variable: A variable + tensor returns a tensor.
    x2 = gt.Variable(2.0, name="x2") + 1.0
    # Not a variable
    x3 = gt.constant(3.0, name="x3")

    with gt.GradientTape() as tape:
        y = (x0**2) + (x1**2) + (x2**2)

    grad = tape.gradient(y, [x0, x1, x2, x3])

    for g in grad:
        print(g)
    print([var.name for var in tape.watched_variables()])

    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "6.0"
    assert lines[1].endswith("Tensor(6.0, shape=(), dtype=float32)")
    assert lines[2:5] == ["None", "None", "None"]
    assert lines[5] == "['x0:0']"
    assert isinstance(x2, gt.Tensor) and not isinstance(x2, gt.Variable)


def test_001_watch_accessed_variables_false_dict(capsys):
    x0 = gt.Variable(0.0)
    x1 = gt.Variable(10.0)

    with gt.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x1)
        y0 = gt.math.sin(x0)
        y1 = gt.nn.softplus(x1)
        y = y0 + y1
        ys = gt.reduce_sum(y)
    grad = tape.gradient(ys, {"x0": x0, "x1": x1})

    print("dy/dx0:", grad["x0"])
    print("dy/dx1:", grad["x1"].numpy())
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "dy/dx0: None"
    assert_printed(out, [0, None, 1, 0.9999546])
    assert [v.name for v in tape.watched_variables()] == ["Variable:0"]
    assert tape.watched_variables()[0] is x1


def test_001_intermediate_results(capsys):
    x = gt.constant(3.0)

    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = y * y

    # dz_dy = 2 * y, where y = x ** 2
    print(tape.gradient(z, y).numpy())
    assert_printed(capsys.readouterr().out, [18.0])


def test_001_persistent_vector(capsys):
    x = gt.constant([1, 3.0])
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y

    print(tape.gradient(z, x).numpy())  # 108.0 (4 * x**3 at x = 3)
    print(tape.gradient(y, x).numpy())  # 6.0 (2 * x)
    out = capsys.readouterr().out
    assert out == "[  4. 108.]\n[2. 6.]\n"


def test_001_unconnected_is_none(capsys):
    x = gt.Variable(2.0)
    y = gt.Variable(3.0)

    with gt.GradientTape() as tape:
        z = y * y
    print(tape.gradient(z, x))
    assert capsys.readouterr().out == "None\n"


def test_001_variable_replaced_by_tensor(capsys):
    x = gt.Variable(2.0)

    kinds = []
    for _epoch in range(2):
        with gt.GradientTape() as tape:
            y = x + 1

        kinds.append(type(x))
        print(type(x).__name__, ":", tape.gradient(y, x))
        x = x + 1  # This should be `x.assign_add(1)`

    assert issubclass(kinds[0], gt.Variable)
    assert issubclass(kinds[1], gt.Tensor) and not issubclass(kinds[1], gt.Variable)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(": gt.Tensor(1.0, shape=(), dtype=float32)") or lines[0].endswith(
        "Tensor(1.0, shape=(), dtype=float32)"
    )
    assert lines[1].endswith(": None")


def test_001_calculation_outside_gradtape(capsys):
    x = gt.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=gt.float32)

    with gt.GradientTape() as tape:
        x2 = x**2

        # This step is calculated with NumPy
        y = np.mean(x2, axis=0)

        # Like most ops, reduce_mean will cast the NumPy array to a constant tensor
        # using `gt.convert_to_tensor`.
        y = gt.reduce_mean(y, axis=0)

    print(tape.gradient(y, x))
    assert capsys.readouterr().out == "None\n"
    assert float(y) == pytest.approx(7.5)


def test_001_gradient_through_integer(capsys):
    # The x0 variable has an `int` dtype.
    x = gt.Variable([[2, 2], [2, 2]])

    with gt.GradientTape() as tape:
        # The path to x1 is blocked by the `int` dtype here.
        y = gt.cast(x, gt.float32)
        y = gt.reduce_sum(x)

    print(tape.gradient(y, x))
    assert capsys.readouterr().out == "None\n"
    assert x.dtype == gt.int32
    assert int(y) == 8


# --------------------------------------------------------------------------------------
# Seed 002: the advanced autodiff guide (tape control, stop_gradient, multiple tapes,
# higher order). Custom gradients, jacobians and BatchNormalization are tested elsewhere.
# --------------------------------------------------------------------------------------


def test_002_stop_recording(capsys):
    x = gt.Variable(2.0)
    y = gt.Variable(3.0)

    with gt.GradientTape() as t:
        x_sq = x * x
        with t.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq

    grad = t.gradient(z, {"x": x, "y": y})

    print("dz/dx:", grad["x"])  # 2*x => 4
    print("dz/dy:", grad["y"])
    assert grad["x"].numpy() == 4.0
    assert grad["y"] is None
    out = capsys.readouterr().out
    assert out.splitlines()[1] == "dz/dy: None"
    assert_printed(out, [4.0, 32, None])


@pytest.mark.parametrize("reset", [True, False])
def test_002_reset(capsys, reset):
    x = gt.Variable(2.0)
    y = gt.Variable(3.0)

    with gt.GradientTape() as t:
        y_sq = y * y
        if reset:
            # Throw out all the tape recorded so far.
            t.reset()
        z = x * x + y_sq

    grad = t.gradient(z, {"x": x, "y": y})

    print("dz/dx:", grad["x"])  # 2*x => 4
    print("dz/dy:", grad["y"])
    assert grad["x"].numpy() == 4.0
    if reset:
        assert grad["y"] is None
        assert_printed(capsys.readouterr().out, [4.0, 32, None])
    else:
        assert grad["y"].numpy() == 6.0


def test_002_stop_gradient(capsys):
    x = gt.Variable(2.0)
    y = gt.Variable(3.0)

    with gt.GradientTape() as t:
        y_sq = y**2
        z = x**2 + gt.stop_gradient(y_sq)

    grad = t.gradient(z, {"x": x, "y": y})

    print("dz/dx:", grad["x"])  # 2*x => 4
    print("dz/dy:", grad["y"])
    assert grad["x"].numpy() == 4.0
    assert grad["y"] is None
    assert_printed(capsys.readouterr().out, [4.0, 32, None])


def test_002_multiple_tapes():
    x0 = gt.constant(0.0)
    x1 = gt.constant(0.0)

    with gt.GradientTape() as tape0, gt.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)

        y0 = gt.math.sin(x0)
        y1 = gt.nn.sigmoid(x1)

        y = y0 + y1

        ys = gt.reduce_sum(y)

    assert tape0.gradient(ys, x0).numpy() == pytest.approx(1.0)  # cos(x) => 1.0
    assert tape1.gradient(ys, x1).numpy() == pytest.approx(0.25)  # sigmoid' => 0.25


def test_002_multiple_tapes_each_sees_only_its_source():
    x0 = gt.constant(0.0)
    x1 = gt.constant(0.0)
    with gt.GradientTape(persistent=True) as tape0, gt.GradientTape(persistent=True) as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        ys = gt.reduce_sum(gt.math.sin(x0) + gt.nn.sigmoid(x1))
    assert tape0.gradient(ys, x1) is None
    assert tape1.gradient(ys, x0) is None


def test_002_higher_order(capsys):
    x = gt.Variable(1.0)  # Create a gradtape variable initialized to 1.0

    with gt.GradientTape() as t2:
        with gt.GradientTape() as t1:
            y = x * x * x

        # Compute the gradient inside the outer `t2` context manager
        # which means the gradient computation is differentiable as well.
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)

    print("dy_dx:", dy_dx.numpy())  # 3 * x**2 => 3.0
    print("d2y_dx2:", d2y_dx2.numpy())  # 6 * x => 6.0
    assert capsys.readouterr().out == "dy_dx: 3.0\nd2y_dx2: 6.0\n"


def test_002_input_gradient_regularization():
    x = gt.random.normal([7, 5])
    layer = gt.layers.Dense(10, activation=gt.nn.relu)

    with gt.GradientTape() as t2:
        # The inner tape only takes the gradient with respect to the input,
        # not the variables.
        with gt.GradientTape(watch_accessed_variables=False) as t1:
            t1.watch(x)
            y = layer(x)
            out = gt.reduce_sum(layer(x) ** 2)
        # 1. Calculate the input gradient.
        g1 = t1.gradient(out, x)
        # 2. Calculate the magnitude of the input gradient.
        g1_mag = gt.norm(g1)

    # 3. Calculate the gradient of the magnitude with respect to the model.
    dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)

    assert y.shape == (7, 10)
    assert g1.shape == (7, 5)
    assert [var.shape for var in dg1_mag] == [(5, 10), (10,)]
    assert [tuple(var.shape) for var in dg1_mag] == [(5, 10), (10,)]

    # Check the values against the closed form: with a = relu mask,
    # g1 = 2 * ((x W + b) * a) W^T, and the gradient of ||g1|| follows by hand.
    xv, w, b = x.numpy().astype(np.float64), layer.kernel.numpy(), layer.bias.numpy()
    w = w.astype(np.float64)
    pre = xv @ w + b
    a = (pre > 0).astype(np.float64)
    h = pre * a
    g1v = 2 * h @ w.T
    np.testing.assert_allclose(g1.numpy(), g1v, rtol=1e-4, atol=1e-5)
    mag = np.linalg.norm(g1v)
    dm_dg1 = g1v / mag
    # g1 = 2 (a * (x W + b)) W^T ; d/dW of <dm_dg1, g1>:
    #   through W^T: 2 * dm_dg1^T h ; through h: x^T (a * (2 dm_dg1 W))
    u = a * (2 * dm_dg1 @ w)
    dW = 2 * (dm_dg1.T @ h) + xv.T @ u
    db = u.sum(axis=0)
    np.testing.assert_allclose(dg1_mag[0].numpy(), dW, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dg1_mag[1].numpy(), db, rtol=1e-4, atol=1e-5)


# --------------------------------------------------------------------------------------
# Seed 003: the TF 1.6 tf.contrib.eager.GradientTape reference (tfe -> gt).
# --------------------------------------------------------------------------------------


def test_003_usage():
    with gt.GradientTape() as g:
        x = gt.constant(3.0)
        g.watch(x)
        y = x * x
    grad = g.gradient(y, [x])[0]
    assert grad.numpy() == 6.0


def test_003_higher_order():
    with gt.GradientTape() as g:
        x = gt.constant(3.0)
        g.watch(x)
        y = x * x
        with gt.GradientTape() as gg:
            gg.watch(y)
            z = 2 * y
        inner_grad = gg.gradient(z, [y])[0]
        assert inner_grad.numpy() == 2
        y = y + inner_grad
    grad = g.gradient(y, [x])[0]
    assert grad.numpy() == 6.0


def test_003_persistent():
    with gt.GradientTape(persistent=True) as g:
        x = gt.constant(3.0)
        g.watch(x)
        y = x * x
        z = y * y
    dz_dx = g.gradient(z, [x])[0]
    assert dz_dx.numpy() == 108.0  # 4*x^3 at x = 3
    dy_dx = g.gradient(y, [x])[0]
    assert dy_dx.numpy() == 6.0
    del g  # Drop the reference to the tape


def test_003_gradient_inside_context_of_non_persistent_tape_stops_it():
    # The reference page: "Raises RuntimeError if called ... more than once".
    with gt.GradientTape() as g:
        x = gt.constant(3.0)
        g.watch(x)
        y = x * x
        assert g.gradient(y, [x])[0].numpy() == 6.0
    with pytest.raises(RuntimeError):
        g.gradient(y, [x])


# --------------------------------------------------------------------------------------
# Seed 004: the TF 2.0 notes (zh_tw) notebook.
# --------------------------------------------------------------------------------------


@pytest.fixture
def x3():
    return gt.constant(3.0)


def test_004_constant_repr(x3):
    r = repr(x3)
    assert "shape=()" in r and "dtype=float32" in r and "3.0" in r


def test_004_watch(capsys, x3):
    x = x3
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    dy_dx = tape.gradient(y, x)  # Will compute to 6.0

    print(dy_dx)
    print("Value:", dy_dx.numpy())
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("Tensor(6.0, shape=(), dtype=float32)")
    assert lines[1] == "Value: 6.0"


def test_004_nested(capsys, x3):
    x = x3
    with gt.GradientTape() as tape2:
        tape2.watch(x)
        with gt.GradientTape() as tape3:
            tape3.watch(x)
            y = x * x
        dy_dx = tape3.gradient(y, x)
    d2y_d2x = tape2.gradient(dy_dx, x)

    print("Function: y = x * x, x = 3.0")
    print("First Derivative:", dy_dx.numpy())
    print("Second Derivative:", d2y_d2x.numpy())
    assert capsys.readouterr().out == (
        "Function: y = x * x, x = 3.0\nFirst Derivative: 6.0\nSecond Derivative: 2.0\n"
    )


def test_004_persistent(capsys, x3):
    x = x3
    with gt.GradientTape(persistent=True) as persistent_tape:
        persistent_tape.watch(x)
        y = x * x
        z = y * y
    dz_dx = persistent_tape.gradient(z, x)  # 108.0 (4*x^3 at x = 3)
    dy_dx = persistent_tape.gradient(y, x)  # 6.0
    print("First derivative of function y = x ^ 4 at x = 3 is", dz_dx.numpy())
    assert dy_dx.numpy() == 6.0

    # Drop the reference to the tape
    del persistent_tape
    assert capsys.readouterr().out == "First derivative of function y = x ^ 4 at x = 3 is 108.0\n"


def test_004_disable_automatic_tracking(capsys):
    variable_a = gt.Variable(3.0, name="x1")
    variable_b = gt.Variable(2.0, name="x2")

    with gt.GradientTape(persistent=True, watch_accessed_variables=False) as disable_tracking_tape:
        disable_tracking_tape.watch(variable_a)
        y = variable_a**2  # Gradients will be available for `variable_a`.
        z = variable_b**3  # No gradients will be available since `variable_b` is
        # not being watched.
    gradient_1 = disable_tracking_tape.gradient(y, variable_a)  # 6.0
    gradient_2 = disable_tracking_tape.gradient(z, variable_b)  # None

    print(gradient_1)
    print(gradient_2)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("Tensor(6.0, shape=(), dtype=float32)")
    assert lines[1] == "None"
    assert [v.name for v in disable_tracking_tape.watched_variables()] == ["x1:0"]
