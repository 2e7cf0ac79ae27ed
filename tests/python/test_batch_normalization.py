"""gt.layers.BatchNormalization: Keras defaults, batch and moving statistics, the
moving-average update, variables, parameter shapes for other axes, gradients, errors."""

import numpy as np
import pytest

import gradtape as gt

X = np.array([[1.0, 2.0], [3.0, 6.0], [5.0, 10.0]], dtype=np.float32)
# By hand: column means [3, 6], biased variances [8/3, 32/3].
MEAN = np.array([3.0, 6.0])
VAR = np.array([8.0 / 3.0, 32.0 / 3.0])


def test_defaults():
    bn = gt.layers.BatchNormalization()
    assert bn.axis == -1
    assert bn.momentum == pytest.approx(0.99)
    assert bn.epsilon == pytest.approx(1e-3)
    assert bn.center is True and bn.scale is True
    assert bn.variables == []


def test_variables_names_and_initial_values():
    bn = gt.layers.BatchNormalization()
    bn(gt.constant(X))
    assert [v.name for v in bn.variables] == [
        "batch_normalization/gamma:0",
        "batch_normalization/beta:0",
        "batch_normalization/moving_mean:0",
        "batch_normalization/moving_variance:0",
    ]
    assert [v.name for v in bn.trainable_variables] == [
        "batch_normalization/gamma:0",
        "batch_normalization/beta:0",
    ]
    assert [v.name for v in bn.non_trainable_variables] == [
        "batch_normalization/moving_mean:0",
        "batch_normalization/moving_variance:0",
    ]
    assert bn.gamma.numpy().tolist() == [1.0, 1.0]
    assert bn.beta.numpy().tolist() == [0.0, 0.0]
    assert bn.moving_mean.numpy().tolist() == [0.0, 0.0]
    assert bn.moving_variance.numpy().tolist() == [1.0, 1.0]
    assert bn.gamma.shape == (2,)
    # A second layer gets a unique name, as in Keras.
    bn2 = gt.layers.BatchNormalization()
    bn2(gt.constant(X))
    assert bn2.gamma.name == "batch_normalization_1/gamma:0"


def test_training_uses_batch_statistics():
    bn = gt.layers.BatchNormalization()
    y = bn(gt.constant(X), training=True)
    expected = (X - MEAN) / np.sqrt(VAR + 1e-3)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5, atol=1e-6)
    # Concrete numbers: (1 - 3) / sqrt(8/3 + 0.001) = -1.2245153...
    assert y.numpy()[0, 0] == pytest.approx(-1.2245153, rel=1e-6)
    assert y.numpy()[2, 1] == pytest.approx(4.0 / np.sqrt(32.0 / 3.0 + 1e-3), rel=1e-6)


def test_training_updates_moving_statistics():
    bn = gt.layers.BatchNormalization()
    bn(gt.constant(X), training=True)
    # moving = moving * 0.99 + batch * 0.01
    np.testing.assert_allclose(bn.moving_mean.numpy(), [0.03, 0.06], rtol=1e-6)
    np.testing.assert_allclose(
        bn.moving_variance.numpy(), [0.99 + 0.08 / 3.0, 0.99 + 0.32 / 3.0], rtol=1e-6
    )
    bn(gt.constant(X), training=True)
    np.testing.assert_allclose(bn.moving_mean.numpy(), [0.03 * 0.99 + 0.03, 0.06 * 0.99 + 0.06], rtol=1e-5)


def test_custom_momentum_and_epsilon():
    bn = gt.layers.BatchNormalization(momentum=0.5, epsilon=0.25)
    y = bn(gt.constant(X), training=True)
    np.testing.assert_allclose(y.numpy(), (X - MEAN) / np.sqrt(VAR + 0.25), rtol=1e-5)
    np.testing.assert_allclose(bn.moving_mean.numpy(), [1.5, 3.0], rtol=1e-6)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.5 + VAR / 2, rtol=1e-6)


@pytest.mark.parametrize("training", [None, False])
def test_inference_uses_moving_statistics(training):
    bn = gt.layers.BatchNormalization()
    # Fresh layer: moving mean 0, variance 1 -> x / sqrt(1.001).
    y = bn(gt.constant(X), training=training)
    np.testing.assert_allclose(y.numpy(), X / np.sqrt(1.001), rtol=1e-6)
    assert bn.moving_mean.numpy().tolist() == [0.0, 0.0]  # no update
    bn.moving_mean.assign([1.0, -2.0])
    bn.moving_variance.assign([4.0, 0.5])
    bn.gamma.assign([2.0, 3.0])
    bn.beta.assign([1.0, -1.0])
    y = bn(gt.constant(X), training=training)
    expected = (X - [1.0, -2.0]) / np.sqrt(np.array([4.0, 0.5]) + 1e-3) * [2.0, 3.0] + [1.0, -1.0]
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5)
    assert bn.moving_mean.numpy().tolist() == [1.0, -2.0]


def test_gamma_and_beta_apply_in_training():
    bn = gt.layers.BatchNormalization(gamma_initializer="random_normal", beta_initializer="ones")
    bn.build((3, 2))
    bn.gamma.assign([2.0, -0.5])
    y = bn(gt.constant(X), training=True)
    expected = (X - MEAN) / np.sqrt(VAR + 1e-3) * [2.0, -0.5] + 1.0
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5)


def test_not_trainable_runs_in_inference_mode():
    # Keras (TF2): a BatchNormalization with trainable=False runs in inference mode.
    bn = gt.layers.BatchNormalization(trainable=False)
    y = bn(gt.constant(X), training=True)
    np.testing.assert_allclose(y.numpy(), X / np.sqrt(1.001), rtol=1e-6)
    assert bn.moving_mean.numpy().tolist() == [0.0, 0.0]
    assert bn.trainable_variables == []


def test_center_and_scale_off():
    bn = gt.layers.BatchNormalization(center=False, scale=False)
    y = bn(gt.constant(X), training=True)
    assert [v.name for v in bn.variables] == [
        "batch_normalization/moving_mean:0",
        "batch_normalization/moving_variance:0",
    ]
    assert bn.gamma is None and bn.beta is None
    np.testing.assert_allclose(y.numpy(), (X - MEAN) / np.sqrt(VAR + 1e-3), rtol=1e-5)


def test_axis_1_on_rank_3():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) ** 1.5
    bn = gt.layers.BatchNormalization(axis=1)
    y = bn(gt.constant(x), training=True)
    assert bn.gamma.shape == (3,)
    mean = x.mean(axis=(0, 2), keepdims=True)
    var = x.var(axis=(0, 2), keepdims=True)
    np.testing.assert_allclose(y.numpy(), (x - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.01 * mean.reshape(3), rtol=1e-5)
    # Inference broadcasts the (3,) statistics along axis 1.
    bn.moving_mean.assign([1.0, 2.0, 3.0])
    y = bn(gt.constant(x))
    expected = (x - np.array([1.0, 2.0, 3.0]).reshape(1, 3, 1)) / np.sqrt(
        bn.moving_variance.numpy().reshape(1, 3, 1) + 1e-3
    )
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5)


def test_several_axes():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) ** 1.5
    bn = gt.layers.BatchNormalization(axis=[1, 2])
    y = bn(gt.constant(x), training=True)
    # Keras: with several axes, parameters keep the input's rank with 1 elsewhere.
    assert bn.gamma.shape == (1, 3, 4)
    mean = x.mean(axis=0, keepdims=True)
    var = x.var(axis=0, keepdims=True)
    np.testing.assert_allclose(y.numpy(), (x - mean) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.01 * mean, rtol=1e-5)


def test_gradients_in_training_mode():
    # d/dx of sum(w * bn(x)) in closed form (float64 layer): with xhat = (x - m) / s,
    # dL/dx = (g - mean(g) - xhat * mean(g * xhat)) / s, g = w * gamma.
    rng = np.random.default_rng(3)
    x = rng.normal(size=(6, 3))
    w = rng.normal(size=(6, 3))
    bn = gt.layers.BatchNormalization(dtype="float64")
    bn.build((6, 3))
    bn.gamma.assign([1.5, -2.0, 0.5])
    xt = gt.constant(x)
    with gt.GradientTape() as tape:
        tape.watch(xt)
        loss = gt.reduce_sum(bn(xt, training=True) * w)
    dx, dgamma, dbeta = tape.gradient(loss, [xt, bn.gamma, bn.beta])
    s = np.sqrt(x.var(axis=0) + 1e-3)
    xhat = (x - x.mean(axis=0)) / s
    g = w * [1.5, -2.0, 0.5]
    expected = (g - g.mean(axis=0) - xhat * (g * xhat).mean(axis=0)) / s
    np.testing.assert_allclose(dx.numpy(), expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(dgamma.numpy(), (w * xhat).sum(axis=0), rtol=1e-9)
    np.testing.assert_allclose(dbeta.numpy(), w.sum(axis=0), rtol=1e-12)


def test_moving_statistics_not_watched_and_update_not_recorded():
    bn = gt.layers.BatchNormalization()
    x = gt.constant(X)
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = bn(x, training=True)
    assert tape.watched_variables() == (bn.gamma, bn.beta)
    assert tape.gradient(y, bn.moving_mean) is None
    assert tape.gradient(bn.moving_mean, x) is None


def test_second_derivative_of_the_variance_is_not_cut():
    # Hessian of sum(bn(x)**3) along x, float64, against central differences of the
    # gradient: the batch mean must stay differentiable at second order.
    rng = np.random.default_rng(0)
    x0 = rng.normal(size=(4, 1))
    bn = gt.layers.BatchNormalization(dtype="float64", epsilon=0.1)

    def grad(xv):
        x = gt.constant(xv)
        with gt.GradientTape() as t:
            t.watch(x)
            out = gt.reduce_sum(bn(x, training=True) ** 3)
        return t.gradient(out, x).numpy()

    h = gt.autodiff.hessian(lambda x: gt.reduce_sum(bn(x, training=True) ** 3), gt.constant(x0))
    eps = 1e-6
    num = np.zeros((4, 1, 4, 1))
    for i in range(4):
        d = np.zeros_like(x0)
        d[i, 0] = eps
        num[:, :, i, 0] = (grad(x0 + d) - grad(x0 - d)) / (2 * eps)
    np.testing.assert_allclose(h.numpy(), num, rtol=1e-5, atol=1e-6)


def test_errors():
    with pytest.raises(ValueError, match="Invalid axis"):
        gt.layers.BatchNormalization(axis=2)(gt.constant(X))
    with pytest.raises(TypeError, match="axis"):
        gt.layers.BatchNormalization(axis="last")
    with pytest.raises(ValueError, match="at least one dimension"):
        gt.layers.BatchNormalization()(gt.constant(1.0))
    bn = gt.layers.BatchNormalization()
    bn(gt.constant(X))
    with pytest.raises(ValueError, match="built for"):
        bn(gt.ones([3, 5]))
    with pytest.raises(ValueError, match="rank"):
        bn(gt.ones([3, 1, 2]))
    with pytest.raises(TypeError, match="floating"):
        bn(gt.constant([[True, False]]))
    # Keras 3 casts integer inputs to the layer's dtype (issue 16).
    np.testing.assert_array_equal(bn(gt.constant([[1, 2]])).numpy(), bn(gt.constant([[1.0, 2.0]])).numpy())
    with pytest.raises(ValueError, match="Duplicate"):
        gt.layers.BatchNormalization(axis=[1, -1])(gt.constant(X))


def test_float64_inputs_are_cast_to_the_layer_dtype():
    bn = gt.layers.BatchNormalization()
    y = bn(gt.constant(X.astype(np.float64)), training=True)
    assert y.dtype == gt.float32
    np.testing.assert_allclose(y.numpy(), (X - MEAN) / np.sqrt(VAR + 1e-3), rtol=1e-5)


def test_fused_matches_the_composed_layer_and_updates_with_the_unbiased_variance():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3, 3, 2)).astype(np.float32) * 2 + 1
    plain = gt.layers.BatchNormalization(momentum=0.9)
    fused = gt.layers.BatchNormalization(momentum=0.9, fused=True)
    yp = plain(x, training=True)
    yf = fused(x, training=True)
    np.testing.assert_allclose(yf.numpy(), yp.numpy(), rtol=1e-5, atol=1e-5)
    m, v = x.mean(axis=(0, 1, 2)), x.var(axis=(0, 1, 2))
    n = 4 * 3 * 3
    np.testing.assert_allclose(fused.moving_mean.numpy(), 0.1 * m, rtol=1e-5)
    np.testing.assert_allclose(fused.moving_variance.numpy(), 0.9 + 0.1 * v * n / (n - 1), rtol=1e-5)
    np.testing.assert_allclose(plain.moving_variance.numpy(), 0.9 + 0.1 * v, rtol=1e-5)
    # Inference uses the moving statistics.
    want = (x - fused.moving_mean.numpy()) / np.sqrt(fused.moving_variance.numpy() + 1e-3)
    np.testing.assert_allclose(fused(x).numpy(), want, rtol=1e-5, atol=1e-6)
    # Gradients reach gamma and beta.
    with gt.GradientTape() as tape:
        loss = gt.reduce_sum(fused(x, training=True) * gt.constant(rng.standard_normal(x.shape).astype(np.float32)))
    gg, gb = tape.gradient(loss, fused.trainable_variables)
    assert gg.shape == (2,) and gb.shape == (2,)


def test_fused_channels_first_and_errors():
    x = np.arange(16.0, dtype=np.float32).reshape(2, 2, 2, 2)
    bn = gt.layers.BatchNormalization(axis=1, fused=True, momentum=0.0)
    bn(x, training=True)
    np.testing.assert_allclose(bn.moving_mean.numpy(), x.mean(axis=(0, 2, 3)))
    with pytest.raises(ValueError, match="fused"):
        gt.layers.BatchNormalization(fused=True)(gt.ones([2, 3]))
    with pytest.raises(ValueError, match="fused"):
        gt.layers.BatchNormalization(axis=2, fused=True)(gt.ones([2, 3, 3, 2]))
    with pytest.raises(TypeError):
        gt.layers.BatchNormalization(fused="yes")
