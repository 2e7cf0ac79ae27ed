"""gt.nn convolutions, pooling and fused_batch_norm beyond the op_specs rows: TF's tie
rules for max pooling, SAME averages over the valid elements, second order through
MaxPoolGrad, fused_batch_norm's outputs, gradients through gt.function, and errors.

The expected numbers here are TF 2.21's (checked with TensorFlow when they were written)."""

import numpy as np
import pytest

import gradtape as gt


def grad(f, x, dy=None):
    x = gt.constant(x)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    return tape.gradient(y, x, output_gradients=None if dy is None else gt.constant(dy)).numpy()


def test_max_pool2d_ties_go_to_the_first_maximum_in_scan_order():
    x = np.array([[1, 3, 3, 2], [3, 0, 1, 3], [0, 0, 0, 0], [0, 0, 0, 0]], np.float32).reshape(1, 4, 4, 1)
    y = gt.nn.max_pool2d(x, 2, 1, "VALID")
    np.testing.assert_array_equal(y.numpy()[0, :, :, 0], [[3, 3, 3], [3, 1, 3], [0, 0, 0]])
    g = grad(lambda t: gt.nn.max_pool2d(t, 2, 1, "VALID"), x)
    np.testing.assert_array_equal(g[0, :, :, 0], [[0, 2, 1, 0], [1, 0, 1, 1], [1, 1, 1, 0], [0, 0, 0, 0]])


def test_max_pool2d_same_padding_is_not_a_candidate():
    x = -np.ones((1, 3, 3, 1), np.float32)
    y = gt.nn.max_pool2d(x, 2, 2, "SAME")
    np.testing.assert_array_equal(y.numpy()[0, :, :, 0], [[-1, -1], [-1, -1]])
    g = grad(lambda t: gt.nn.max_pool2d(t, 2, 2, "SAME"), x)
    np.testing.assert_array_equal(g[0, :, :, 0], [[1, 0, 1], [0, 0, 0], [1, 0, 1]])


def test_max_pool3d_ties_all_receive_the_gradient():
    # TF's MaxPool3DGrad (unlike the 2-D kernel) gives dy to every tied maximum.
    g = grad(lambda t: gt.nn.max_pool3d(t, [1, 2, 2], 1, "VALID"), np.ones((1, 2, 3, 3, 1), np.float32))
    np.testing.assert_array_equal(g[0, 0, :, :, 0], [[1, 2, 1], [2, 4, 2], [1, 2, 1]])
    x = np.array([0, 1, 1, 0, 0, 1, 0, 0], np.float32).reshape(1, 2, 2, 2, 1)
    g = grad(lambda t: gt.nn.max_pool3d(t, 2, 2, "VALID"), x)
    np.testing.assert_array_equal(g.ravel(), [0, 1, 1, 0, 0, 1, 0, 0])


def test_avg_pool_same_divides_by_the_valid_count():
    x = -np.ones((1, 3, 3, 1), np.float32)
    np.testing.assert_array_equal(gt.nn.avg_pool2d(x, 2, 2, "SAME").numpy()[0, :, :, 0], [[-1, -1], [-1, -1]])
    g = grad(lambda t: gt.nn.avg_pool2d(t, 2, 2, "SAME"), x)
    np.testing.assert_array_equal(g[0, :, :, 0], [[0.25, 0.25, 0.5], [0.25, 0.25, 0.5], [0.5, 0.5, 1.0]])
    x = np.arange(9.0).reshape(1, 3, 3, 1)
    np.testing.assert_allclose(gt.nn.avg_pool2d(x, 3, 1, "SAME").numpy()[0, 0, :, 0], [2.0, 2.5, 3.0])


def test_max_pool_second_order_routes_through_the_argmax():
    # d/d(dy) of sum(MaxPoolGrad(x, dy) * r) is r read at each window's first maximum
    # (TF's MaxPoolGradGrad); d/dx of the first gradient is zero.
    x = gt.constant(np.array([[1, 3, 3, 2], [3, 0, 1, 3], [0, 0, 0, 0], [0, 0, 0, 5]], np.float32).reshape(1, 4, 4, 1))
    r = gt.constant(np.arange(16.0, dtype=np.float32).reshape(1, 4, 4, 1))
    dy = gt.ones([1, 2, 2, 1])
    with gt.GradientTape(persistent=True) as outer:
        outer.watch([x, dy])
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = gt.nn.max_pool2d(x, 2, 2, "VALID")
        g = inner.gradient(y, x, output_gradients=dy)
        s = gt.reduce_sum(g * r)
    np.testing.assert_array_equal(outer.gradient(s, dy).numpy().ravel(), [1.0, 2.0, 8.0, 15.0])
    np.testing.assert_array_equal(outer.gradient(s, x, unconnected_gradients="zero").numpy(), np.zeros((1, 4, 4, 1)))


def test_conv2d_same_padding_is_split_with_the_smaller_half_first():
    # 4 wide, kernel 2, stride 2 needs no padding; 5 wide needs 1: after the input.
    x = np.arange(5.0, dtype=np.float32).reshape(1, 1, 5, 1)
    w = np.ones((1, 2, 1, 1), np.float32)
    np.testing.assert_array_equal(gt.nn.conv2d(x, w, 2, "SAME").numpy().ravel(), [1.0, 5.0, 4.0])
    # 6 wide, kernel 4, stride 1: 3 padding elements, 1 before and 2 after.
    x = np.arange(1.0, 7.0, dtype=np.float32).reshape(1, 1, 6, 1)
    w = np.ones((1, 4, 1, 1), np.float32)
    np.testing.assert_array_equal(gt.nn.conv2d(x, w, 1, "SAME").numpy().ravel(), [6.0, 10.0, 14.0, 18.0, 15.0, 11.0])


def test_conv2d_gradients_are_the_transposed_convolutions():
    rng = np.random.default_rng(1)
    x = gt.constant(rng.standard_normal((2, 5, 5, 3)))
    w = gt.constant(rng.standard_normal((3, 3, 3, 4)))
    dy = gt.constant(rng.standard_normal((2, 3, 3, 4)))
    with gt.GradientTape() as tape:
        tape.watch([x, w])
        y = gt.nn.conv2d(x, w, 2, "SAME")
    gx, gw = tape.gradient(y, [x, w], output_gradients=dy)
    np.testing.assert_allclose(gx.numpy(), gt.nn.conv2d_transpose(dy, w, [2, 5, 5, 3], 2, "SAME").numpy(), rtol=1e-12)
    # <dy, conv(x, w)> is linear in w: its gradient contracts dy with x's windows.
    np.testing.assert_allclose(float(gt.reduce_sum(gw * w)), float(gt.reduce_sum(y * dy)), rtol=1e-12)


def test_gradients_inside_a_traced_function():
    rng = np.random.default_rng(2)
    x = gt.constant(rng.standard_normal((2, 6, 6, 1)).astype(np.float32))
    w = gt.Variable(rng.standard_normal((3, 3, 1, 2)).astype(np.float32))

    def step(x):
        with gt.GradientTape() as tape:
            y = gt.nn.max_pool2d(gt.nn.relu(gt.nn.conv2d(x, w, 1, "SAME")), 2, 2, "VALID")
            loss = gt.reduce_sum(gt.nn.avg_pool2d(y, 2, 1, "SAME") ** 2)
        return loss, tape.gradient(loss, w)

    eager = step(x)
    traced = gt.function(step)(x)
    np.testing.assert_allclose(traced[0].numpy(), eager[0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(traced[1].numpy(), eager[1].numpy(), rtol=1e-5)


def test_float16_computes_in_float32_and_rounds_once():
    x = np.full((1, 4, 4, 1), 0.1, np.float16)
    w = np.full((3, 3, 1, 1), 0.1, np.float16)
    y = gt.nn.conv2d(x, w, 1, "VALID")
    assert y.dtype == gt.float16
    np.testing.assert_array_equal(y.numpy().ravel(), np.float16(9 * float(np.float16(0.1)) ** 2))


def test_fused_batch_norm_training_outputs():
    x = np.array([1.0, 2.0, 4.0, 9.0], np.float32).reshape(2, 2, 1, 1)
    y, m, v = gt.nn.fused_batch_norm(x, [2.0], [1.0])
    mean, var = 4.0, np.var([1.0, 2.0, 4.0, 9.0])
    np.testing.assert_allclose(y.numpy().ravel(), 2.0 * (x.ravel() - mean) / np.sqrt(var + 1e-3) + 1.0, rtol=1e-6)
    np.testing.assert_allclose(m.numpy(), [mean])
    np.testing.assert_allclose(v.numpy(), [var * 4 / 3], rtol=1e-6)  # Bessel-corrected
    # exponential_avg_factor mixes with the given statistics.
    _, m, v = gt.nn.fused_batch_norm(x, [2.0], [1.0], mean=[1.0], variance=[3.0], exponential_avg_factor=0.25)
    np.testing.assert_allclose(m.numpy(), [0.75 * 1.0 + 0.25 * mean], rtol=1e-6)
    np.testing.assert_allclose(v.numpy(), [0.75 * 3.0 + 0.25 * var * 4 / 3], rtol=1e-6)
    # NCHW: statistics over axes 0, 2, 3.
    xc = np.arange(16.0, dtype=np.float32).reshape(2, 2, 2, 2)
    _, m, _ = gt.nn.fused_batch_norm(xc, [1.0, 1.0], [0.0, 0.0], data_format="NCHW")
    np.testing.assert_allclose(m.numpy(), xc.mean(axis=(0, 2, 3)))


def test_fused_batch_norm_inference_and_its_gradients():
    rng = np.random.default_rng(3)
    x = gt.constant(rng.standard_normal((2, 3, 3, 2)).astype(np.float32))
    mean, var = gt.constant([0.5, -1.0]), gt.constant([2.0, 0.5])
    scale, offset = gt.constant([1.5, 0.5]), gt.constant([0.1, 0.2])
    with gt.GradientTape(persistent=True) as tape:
        tape.watch([x, mean, var, scale, offset])
        y, m, v = gt.nn.fused_batch_norm(x, scale, offset, mean, var, is_training=False)
    want = (x.numpy() - mean.numpy()) / np.sqrt(var.numpy() + 1e-3) * scale.numpy() + offset.numpy()
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5)
    np.testing.assert_array_equal(m.numpy(), mean.numpy())
    np.testing.assert_array_equal(v.numpy(), var.numpy())
    # TF gives no gradient to the statistics.
    assert tape.gradient(y, [mean, var]) == [None, None]
    np.testing.assert_allclose(tape.gradient(y, offset).numpy(), [18.0, 18.0])
    np.testing.assert_allclose(
        tape.gradient(y, x).numpy(),
        np.broadcast_to(scale.numpy() / np.sqrt(var.numpy() + 1e-3), (2, 3, 3, 2)),
        rtol=1e-6,
    )
    # The statistic outputs of training are not differentiable either (TF's rule).
    with gt.GradientTape() as tape:
        tape.watch(x)
        _, m, _ = gt.nn.fused_batch_norm(x, scale, offset)
    assert tape.gradient(m, x) is None


def test_fused_batch_norm_epsilon_floor():
    x = np.array([0.0, 2.0], np.float32).reshape(2, 1, 1, 1)
    y, _, _ = gt.nn.fused_batch_norm(x, [1.0], [0.0], epsilon=0.0)
    np.testing.assert_allclose(y.numpy().ravel(), [-1 / np.sqrt(1 + 1.001e-5), 1 / np.sqrt(1 + 1.001e-5)], rtol=1e-6)


def _conv3d_direct(x, w, strides, padding, dilations=(1, 1, 1)):
    n, *size, c = x.shape
    *k, _, o = w.shape
    outs, before = [], []
    for a in range(3):
        eff = (k[a] - 1) * dilations[a] + 1
        if padding == "SAME":
            out = -(-size[a] // strides[a])
            total = max((out - 1) * strides[a] + eff - size[a], 0)
            before.append(total // 2)
        else:
            out = (size[a] - eff) // strides[a] + 1
            before.append(0)
        outs.append(out)
    y = np.zeros((n, *outs, o))
    for b, z, r, q in np.ndindex(n, *outs):
        for t in np.ndindex(*k):
            at = [(z, r, q)[a] * strides[a] + t[a] * dilations[a] - before[a] for a in range(3)]
            if all(0 <= at[a] < size[a] for a in range(3)):
                y[b, z, r, q] += x[b, at[0], at[1], at[2]] @ w[t]
    return y


@pytest.mark.parametrize("padding, strides, dilations", [
    ("SAME", (1, 1, 1), (1, 1, 1)), ("VALID", (2, 1, 2), (1, 1, 1)), ("SAME", (2, 2, 1), (1, 1, 1)),
    ("VALID", (1, 1, 1), (2, 1, 2)), ("SAME", (1, 2, 1), (1, 2, 1)),
])
def test_conv3d_matches_the_definition(padding, strides, dilations):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 4, 6, 2))
    w = rng.standard_normal((2, 3, 2, 2, 3))
    y = gt.nn.conv3d(x, w, [1, *strides, 1], padding, dilations=[1, *dilations, 1])
    want = _conv3d_direct(x, w, strides, padding, dilations)
    assert tuple(y.shape) == want.shape
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12, atol=1e-12)


def test_conv3d_small_values_and_same_padding_after():
    # 2x2x2 ones over 0..7, SAME: one padding plane/row/column after the input.
    x = np.arange(8.0, dtype=np.float32).reshape(1, 2, 2, 2, 1)
    y = gt.nn.conv3d(x, np.ones((2, 2, 2, 1, 1), np.float32), [1, 1, 1, 1, 1], "SAME")
    np.testing.assert_array_equal(y.numpy().ravel(), [28.0, 16.0, 18.0, 10.0, 22.0, 12.0, 13.0, 7.0])
    y = gt.nn.conv3d(x, np.ones((2, 2, 2, 1, 1), np.float32), [1, 1, 1, 1, 1], "VALID")
    assert y.dtype == gt.float32 and y.numpy().ravel().tolist() == [28.0]


def test_conv3d_gradients_are_conv3d_transpose_and_second_order_works():
    rng = np.random.default_rng(4)
    x = gt.constant(rng.standard_normal((2, 4, 5, 3, 2)))
    w = gt.constant(rng.standard_normal((3, 2, 2, 2, 3)))
    dy = gt.constant(rng.standard_normal((2, 2, 3, 2, 3)))
    with gt.GradientTape(persistent=True) as outer:
        outer.watch(w)
        with gt.GradientTape() as tape:
            tape.watch([x, w])
            y = gt.nn.conv3d(x, w, [1, 2, 2, 2, 1], "SAME")
        gx, gw = tape.gradient(y, [x, w], output_gradients=dy)
        s = gt.reduce_sum(gx * gx)
    back = gt.nn.conv3d_transpose(dy, w, [2, 4, 5, 3, 2], [1, 2, 2, 2, 1], "SAME")
    np.testing.assert_allclose(gx.numpy(), back.numpy(), rtol=1e-12)
    # <dy, conv(x, w)> is linear in w: <gw, w> equals it.
    np.testing.assert_allclose(float(gt.reduce_sum(gw * w)), float(gt.reduce_sum(y * dy)), rtol=1e-12)
    # gx is linear in w, so sum(gx²) is quadratic: <d/dw, w> = 2 sum(gx²).
    g2 = outer.gradient(s, w)
    np.testing.assert_allclose(float(gt.reduce_sum(g2 * w)), 2 * float(s), rtol=1e-10)


def test_conv3d_jacobian_forward_mode_and_trace_agree():
    rng = np.random.default_rng(5)
    x = gt.constant(rng.standard_normal((1, 3, 3, 3, 2)))
    w = gt.constant(rng.standard_normal((2, 2, 2, 2, 2)))
    f = lambda x, w: gt.nn.conv3d(x, w, [1, 1, 1, 1, 1], "VALID")  # noqa: E731
    with gt.GradientTape(persistent=True) as tape:
        tape.watch([x, w])
        y = f(x, w)
    jx = tape.jacobian(y, x)
    jx_rows = tape.jacobian(y, x, experimental_use_pfor=False)
    np.testing.assert_allclose(jx.numpy(), jx_rows.numpy(), rtol=1e-12, atol=1e-14)
    # Linear in x: the jacobian applied to x is y.
    np.testing.assert_allclose(np.tensordot(jx.numpy(), x.numpy(), axes=5), y.numpy(), rtol=1e-12)
    dx = gt.constant(rng.standard_normal(x.shape))
    with gt.autodiff.ForwardAccumulator(x, dx) as acc:
        yy = f(x, w)
    np.testing.assert_allclose(acc.jvp(yy).numpy(), f(dx, w).numpy(), rtol=1e-12)
    traced = gt.function(f)
    np.testing.assert_allclose(traced(x, w).numpy(), y.numpy(), rtol=1e-12)


def test_conv3d_transpose_values():
    # One input voxel spreads the filter: a 2x2x2 window into a 3x3x3 output (stride 1).
    w = np.arange(1.0, 9.0, dtype=np.float32).reshape(2, 2, 2, 1, 1)
    y = gt.nn.conv3d_transpose(np.ones((1, 1, 1, 1, 1), np.float32), w, [1, 2, 2, 2, 1], 1, "VALID")
    np.testing.assert_array_equal(y.numpy().ravel(), np.arange(1.0, 9.0))
    # Stride 2, SAME: the windows tile the 4x4x4 output without overlap.
    y = gt.nn.conv3d_transpose(np.ones((1, 2, 2, 2, 1), np.float32), w, [1, 4, 4, 4, 1], 2, "SAME")
    np.testing.assert_array_equal(y.numpy()[0, :2, :2, :2, 0], w[..., 0, 0])
    np.testing.assert_array_equal(y.numpy()[0, 2:, 2:, 2:, 0], w[..., 0, 0])


X5 = np.zeros((1, 4, 4, 4, 2), np.float32)
W5 = np.zeros((2, 2, 2, 2, 3), np.float32)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: gt.nn.conv3d(X5[0], W5, 1, "SAME"), gt.errors.InvalidArgumentError, "5-dimensional"),
        (lambda: gt.nn.conv3d(X5, W5[0], 1, "SAME"), gt.errors.InvalidArgumentError, "5-dimensional"),
        (lambda: gt.nn.conv3d(X5, np.zeros((2, 2, 2, 3, 3), np.float32), 1, "SAME"), gt.errors.InvalidArgumentError,
         "depth"),
        (lambda: gt.nn.conv3d(X5, W5, [2, 1, 1, 1, 1], "SAME"), gt.errors.InvalidArgumentError, "batch and depth"),
        (lambda: gt.nn.conv3d(X5, W5, [1, 1, 1, 1], "SAME"), ValueError, "length 1, 3 or 5"),
        (lambda: gt.nn.conv3d(X5, W5, 0, "SAME"), gt.errors.InvalidArgumentError, "Stride must be > 0"),
        (lambda: gt.nn.conv3d(X5, W5, 1, "FOO"), ValueError, "SAME"),
        (lambda: gt.nn.conv3d(X5, W5, 1, "SAME", data_format="NCDHW"), gt.errors.InvalidArgumentError, "NDHWC"),
        (lambda: gt.nn.conv3d(X5.astype(np.int32), W5.astype(np.int32), 1, "SAME"), TypeError, "int32"),
        # (1 - 3 + 1) / 1 < 0 (a 2-deep filter would give an empty output, as TF)
        (lambda: gt.nn.conv3d(X5[:, :1], np.zeros((3, 2, 2, 2, 3), np.float32), 1, "VALID"),
         gt.errors.InvalidArgumentError, "negative"),
        (lambda: gt.nn.conv3d_transpose(np.zeros((1, 4, 4, 4, 2), np.float32), np.zeros((2, 2, 2, 3, 2), np.float32),
                                        [1, 5, 5, 5, 3], 1, "SAME"), gt.errors.InvalidArgumentError, "shape"),
        (lambda: gt.nn.conv3d_transpose(X5, W5, [1, 4, 4, 3], 1, "SAME"), gt.errors.InvalidArgumentError, "5 elements"),
    ],
)
def test_conv3d_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


IAE = gt.errors.InvalidArgumentError
F32 = np.float32
X4 = np.zeros((1, 5, 5, 2), np.float32)
W4 = np.zeros((3, 3, 2, 4), np.float32)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: gt.nn.conv2d(X4[0], W4, 1, "SAME"), IAE, "4-dimensional"),
        (lambda: gt.nn.conv2d(X4, W4[0], 1, "SAME"), IAE, "4-dimensional"),
        (lambda: gt.nn.conv2d(X4, np.zeros((3, 3, 3, 4), F32), 1, "SAME"), IAE, "depth"),
        (lambda: gt.nn.conv2d(X4, W4, 0, "SAME"), IAE, "Stride must be > 0"),
        (lambda: gt.nn.conv2d(X4, W4, -1, "SAME"), IAE, "strides must be > 0"),
        (lambda: gt.nn.conv2d(X4, W4, [2, 1, 1, 1], "SAME"), IAE, "batch and depth"),
        (lambda: gt.nn.conv2d(X4, W4, [1, 1, 1], "SAME"), ValueError, "length 1, 2 or 4"),
        (lambda: gt.nn.conv2d(X4, W4, 1, "SAME", dilations=0), IAE, "Dilation"),
        (lambda: gt.nn.conv2d(X4, W4, 1, "FOO"), ValueError, "SAME"),
        (lambda: gt.nn.conv2d(X4, W4, 1, [[1, 0], [0, 0], [0, 0], [0, 0]]), ValueError, "batch or channel"),
        # (1 - 3 + 1) / 1 < 0 (TF: "negative: -1"; a 2-row input gives 0 rows)
        (lambda: gt.nn.conv2d(X4[:, :1], W4, 1, "VALID"), IAE, "negative: -1"),
        (lambda: gt.nn.conv2d(gt.constant(X4), gt.constant(W4, dtype=gt.float64), 1, "SAME"), IAE, "float"),
        # int32 is computed (TF's CPU Conv2D); other integers are not.
        (lambda: gt.nn.conv2d(X4.astype(np.int64), W4.astype(np.int64), 1, "SAME"), TypeError, "int64"),
        # grouped: 4 input channels, filter depth 2 (2 groups), 3 output channels
        (lambda: gt.nn.conv2d(np.zeros((1, 5, 5, 4), F32), np.zeros((3, 3, 2, 3), F32), 1, "SAME"), IAE,
         "multiple of the number of groups"),
        (lambda: gt.nn.conv2d(X4, W4, 1, "SAME", data_format="NCHW"), IAE, "NHWC"),
        (lambda: gt.nn.conv2d_transpose(X4, np.zeros((3, 3, 4, 2), F32), [1, 6, 6, 4], 1, "SAME"), IAE, "shape"),
        (lambda: gt.nn.conv1d(X4, W4, 1, "SAME"), IAE, "3-dimensional"),
        (lambda: gt.nn.depthwise_conv2d(X4, np.zeros((3, 3, 3, 1), F32), [1, 1, 1, 1], "SAME"), IAE, "depth"),
        (lambda: gt.nn.max_pool2d(X4, 0, 1, "SAME"), IAE, "ksize must be positive"),
        (lambda: gt.nn.max_pool2d(X4, 2, 0, "SAME"), IAE, "Stride must be > 0"),
        (lambda: gt.nn.avg_pool2d(X4, 9, 1, "VALID"), IAE, "negative"),
        (lambda: gt.nn.max_pool2d(X4[0], 2, 1, "VALID"), IAE, "ksize and strides"),
        (lambda: gt.nn.max_pool(np.zeros((2, 2), F32), 2, 1, "VALID"), ValueError, "rank"),
        # explicit padding: max pooling in 1-D and 2-D only (as TF)
        (lambda: gt.nn.avg_pool2d(X4, 2, 1, [[0, 0], [1, 1], [1, 1], [0, 0]]), ValueError, "SAME"),
        (lambda: gt.nn.max_pool3d(np.zeros((1, 2, 2, 2, 1), F32), 2, 1, [[0, 0]] * 5), ValueError, "SAME"),
        (lambda: gt.nn.max_pool2d(X4, 2, 1, [[0, 0], [1, 1], [0, 0]]), ValueError, "pairs"),
        (lambda: gt.nn.max_pool2d(X4, 2, 1, [[0, 0], [-1, 1], [1, 1], [0, 0]]), IAE, "nonnegative"),
        (lambda: gt.nn.conv2d(X4, np.zeros((5, 5, 2, 1), F32), 1, "SAME", dilations=2**62), IAE, "overflow"),
        (lambda: gt.nn.fused_batch_norm(X4[0], [1.0, 1.0], [0.0, 0.0]), IAE, "4-dimensional"),
        (lambda: gt.nn.fused_batch_norm(X4, [1.0], [0.0, 0.0]), IAE, "scale"),
        (lambda: gt.nn.fused_batch_norm(X4, [1.0, 1.0], [0.0, 0.0], is_training=False), ValueError, "mean"),
    ],
)
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_huge_sizes_raise_and_huge_windows_work():
    x = gt.zeros([1, 1, 1, 1])
    w = gt.zeros([1, 1, 1, 1])
    with pytest.raises(gt.errors.ResourceExhaustedError):
        gt.nn.conv2d_transpose(x, w, [1, 1 << 31, 1 << 31, 1], [1 << 31, 1 << 31], "SAME")
    with pytest.raises(gt.errors.ResourceExhaustedError):
        gt.nn.conv2d(x, w, 1, [[0, 0], [1 << 30, 1 << 30], [1 << 30, 1 << 30], [0, 0]])
    # A window larger than the input (SAME) covers all of it.
    x = np.arange(50.0, dtype=np.float32).reshape(1, 5, 5, 2)
    np.testing.assert_array_equal(gt.nn.max_pool2d(x, 2**62, 2**62, "SAME").numpy().ravel(), [48.0, 49.0])


def test_filter_a_little_larger_than_the_input_gives_an_empty_output_as_tf():
    # TF 2.21: conv2d of a 5x5 input with a 6x6 filter, VALID: shape (2, 0, 0, 2).
    x = gt.constant(np.ones((2, 5, 5, 2), np.float32))
    w = gt.constant(np.ones((6, 6, 2, 2), np.float32))
    with gt.GradientTape() as t:
        t.watch([x, w])
        y = gt.nn.conv2d(x, w, 1, "VALID")
    assert tuple(y.shape) == (2, 0, 0, 2)
    gx, gw = t.gradient(y, [x, w])
    assert not np.any(gx.numpy()) and not np.any(gw.numpy()) and tuple(gw.shape) == (6, 6, 2, 2)
    with pytest.raises(gt.errors.InvalidArgumentError, match="negative"):
        gt.nn.conv2d(x, gt.constant(np.ones((7, 7, 2, 2), np.float32)), 1, "VALID")


# ----------------------------------------------------------------------------- issue 14

LOWEST32 = float(np.finfo(np.float32).min)


def test_max_pool_nans_and_empty_windows_follow_tf_cpu():
    # TF's CPU MaxPool starts each window at the lowest finite value and takes an element
    # only when it is larger: NaNs never win, a window of NaNs gives the lowest value.
    x = np.array([np.nan, 1.0, 3.0, np.nan, np.nan, np.nan, np.nan, np.nan], np.float32).reshape(1, 2, 4, 1)
    y = gt.nn.max_pool2d(x, 2, 2, "VALID").numpy().ravel()
    np.testing.assert_array_equal(y, [1.0, 3.0])
    y = gt.nn.max_pool2d(np.full((1, 2, 2, 1), np.nan), 2, 2, "VALID").numpy().ravel()
    np.testing.assert_array_equal(y, [np.finfo(np.float64).min])
    # MaxPool3D (Eigen's reduction) starts at -inf.
    y = gt.nn.max_pool3d(np.full((1, 1, 2, 2, 1), np.nan, np.float32), 2, 2, "SAME").numpy().ravel()
    np.testing.assert_array_equal(y, [-np.inf])
    # The gradient (TF's CPU MaxPoolGrad): the window's first element, replaced only by a
    # larger one: a NaN first element keeps it; a later NaN never takes it.
    x = np.array([[np.nan, 1.0], [3.0, 2.0]], np.float32).reshape(1, 2, 2, 1)
    np.testing.assert_array_equal(grad(lambda t: gt.nn.max_pool2d(t, 2, 2, "VALID"), x).ravel(), [1, 0, 0, 0])
    x = np.array([[0.0, np.nan], [3.0, np.nan]], np.float32).reshape(1, 2, 2, 1)
    np.testing.assert_array_equal(grad(lambda t: gt.nn.max_pool2d(t, 2, 2, "VALID"), x).ravel(), [0, 0, 1, 0])
    # A window wholly in explicit padding has no candidate: the lowest value, no gradient.
    x = np.array([5.0], np.float32).reshape(1, 1, 1, 1)
    pad = [[0, 0], [0, 2], [0, 0], [0, 0]]
    y = gt.nn.max_pool2d(x, 1, 1, pad)
    np.testing.assert_array_equal(y.numpy().ravel(), [5.0, LOWEST32, LOWEST32])
    np.testing.assert_array_equal(grad(lambda t: gt.nn.max_pool2d(t, 1, 1, pad), x).ravel(), [1.0])


def test_max_pool_explicit_padding_gradients_and_1d():
    x = np.array([3.0, -1.0, 4.0, -5.0, 9.0], np.float32).reshape(1, 5, 1)
    pad = [[0, 0], [2, 1], [0, 0]]
    y = gt.nn.max_pool1d(x, 3, 2, pad)
    # padded input: [p, p, 3, -1, 4, -5, 9, p]; windows at 0, 2, 4: [p p 3], [3 -1 4], [4 -5 9]
    np.testing.assert_array_equal(y.numpy().ravel(), [3.0, 4.0, 9.0])
    np.testing.assert_array_equal(grad(lambda t: gt.nn.max_pool1d(t, 3, 2, pad), x, [[[1.0], [2.0], [4.0]]]).ravel(),
                                  [1.0, 0.0, 2.0, 0.0, 4.0])
    # max_pool (rank from the input) takes it too, as TF's
    np.testing.assert_array_equal(gt.nn.max_pool(x, 3, 2, pad).numpy().ravel(), [3.0, 4.0, 9.0])


def test_pooling_on_batch_or_depth_is_tf_unimplemented_error():
    x = np.arange(24.0, dtype=np.float32).reshape(1, 2, 2, 6)
    assert issubclass(gt.errors.UnimplementedError, gt.errors.OpError)
    for call in [
        lambda: gt.nn.max_pool2d(x, [2, 1, 1, 1], 1, "VALID"),
        lambda: gt.nn.avg_pool2d(x, 1, [1, 1, 1, 3], "VALID"),  # AvgPool over depth
        lambda: gt.nn.max_pool2d(x, [1, 2, 2, 3], [1, 1, 1, 3], "VALID"),  # depth and space
        lambda: gt.nn.max_pool2d(x, [1, 1, 1, 3], [1, 1, 1, 2], "VALID"),  # window != stride
        lambda: gt.nn.max_pool2d(x, [1, 1, 1, 4], [1, 1, 1, 4], "VALID"),  # 6 % 4 != 0
    ]:
        with pytest.raises(gt.errors.UnimplementedError) as e:
            call()
        assert e.value.error_code == gt.errors.UNIMPLEMENTED
    # Depthwise max pooling: the maximum over blocks of 3 channels.
    y = gt.nn.max_pool2d(x, [1, 1, 1, 3], [1, 1, 1, 3], "SAME")
    np.testing.assert_array_equal(y.numpy(), x.reshape(1, 2, 2, 2, 3).max(-1))


def test_conv2d_int32_forward_as_tf_cpu():
    x = np.arange(18, dtype=np.int32).reshape(1, 3, 3, 2)
    w = (np.arange(16, dtype=np.int32) - 8).reshape(2, 2, 2, 2)
    y = gt.nn.conv2d(x, w, 1, "SAME")
    assert y.dtype == gt.int32
    want = gt.nn.conv2d(x.astype(np.float64), w.astype(np.float64), 1, "SAME").numpy()
    np.testing.assert_array_equal(y.numpy(), want.astype(np.int32))
    y = gt.nn.conv2d_transpose(y, w, [1, 3, 3, 2], 1, "SAME")
    want = gt.nn.conv2d_transpose(want, w.astype(np.float64), [1, 3, 3, 2], 1, "SAME").numpy()
    np.testing.assert_array_equal(y.numpy(), want.astype(np.int32))
    # int32 products wrap, as TF's kernel's
    big = gt.nn.conv2d(np.full((1, 1, 1, 1), 1 << 30, np.int32), np.full((1, 1, 1, 1), 4, np.int32), 1, "VALID")
    np.testing.assert_array_equal(big.numpy().ravel(), [0])


def test_grouped_conv2d_gradients_are_the_per_group_ones():
    rng = np.random.RandomState(0)
    x = gt.constant(rng.uniform(-1, 1, (2, 5, 4, 6)))
    w = gt.constant(rng.uniform(-1, 1, (3, 2, 2, 9)))  # 3 groups of 2 input channels
    dy = rng.uniform(-1, 1, (2, 3, 2, 9))
    with gt.GradientTape(persistent=True) as tape:
        tape.watch([x, w])
        y = gt.nn.conv2d(x, w, [1, 2, 2, 1], "SAME")
        xs, ws = gt.split(x, 3, axis=3), gt.split(w, 3, axis=3)
        loop = gt.concat([gt.nn.conv2d(a, b, [1, 2, 2, 1], "SAME") for a, b in zip(xs, ws)], axis=3)
    np.testing.assert_allclose(y.numpy(), loop.numpy(), rtol=1e-12)
    got = tape.gradient(y, [x, w], output_gradients=gt.constant(dy))
    want = tape.gradient(loop, [x, w], output_gradients=gt.constant(dy))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


def test_conv_leading_batch_dims_fold_into_the_batch():
    rng = np.random.RandomState(1)
    x = rng.uniform(-1, 1, (2, 3, 4, 4, 2))
    w = rng.uniform(-1, 1, (2, 2, 2, 3))
    g5 = grad(lambda t: gt.nn.conv2d(t, w, 1, "VALID") ** 2, x)
    g4 = grad(lambda t: gt.nn.conv2d(t, w, 1, "VALID") ** 2, x.reshape(6, 4, 4, 2))
    np.testing.assert_allclose(g5, g4.reshape(x.shape), rtol=1e-12)
    y = gt.nn.conv1d(x[:, :, 0], w[0], 2, "SAME")  # [2, 3, 4, 2] -> [2, 3, 2, 3]
    want = gt.nn.conv1d(x[:, :, 0].reshape(6, 4, 2), w[0], 2, "SAME").numpy().reshape(2, 3, 2, 3)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12)


def test_fused_batch_norm_float16_with_float32_parameters_gradients():
    x = np.array([1.0, 2.0, 4.0, 9.0], np.float16).reshape(2, 2, 1, 1)
    s, o = np.array([2.0], np.float32), np.array([0.5], np.float32)
    xt, st, ot = gt.constant(x), gt.constant(s), gt.constant(o)
    with gt.GradientTape() as tape:
        tape.watch([xt, st, ot])
        y, m, v = gt.nn.fused_batch_norm(xt, st, ot, epsilon=0.001)
    assert (y.dtype, m.dtype, v.dtype) == (gt.float16, gt.float32, gt.float32)
    np.testing.assert_allclose(m.numpy(), [4.0])
    np.testing.assert_allclose(v.numpy(), [38.0 / 3.0], rtol=1e-6)
    gx, gs, go = tape.gradient(y, [xt, st, ot])
    assert (gx.dtype, gs.dtype, go.dtype) == (gt.float16, gt.float32, gt.float32)
    np.testing.assert_allclose(go.numpy(), [4.0])
    np.testing.assert_allclose(gs.numpy(), [0.0], atol=1e-3)
