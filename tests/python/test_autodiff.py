"""gt.autodiff.hessian and hessian_vector_product against analytic Hessians."""

import numpy as np
import pytest

import gradtape as gt

RNG = np.random.default_rng(7)


def quadratic_form(a):
    a = gt.constant(a)

    def f(x):
        n = x.shape[0]
        return gt.reduce_sum(x * gt.reshape(a @ gt.reshape(x, [n, 1]), [n]))

    return f


def test_hessian_of_quadratic_form_is_a_plus_a_transpose():
    a = RNG.normal(size=(4, 4))  # not symmetric
    x = gt.constant(RNG.normal(size=4))
    h = gt.autodiff.hessian(quadratic_form(a), x)
    assert h.shape == (4, 4)
    assert h.dtype == gt.float64
    np.testing.assert_allclose(h.numpy(), a + a.T, rtol=1e-12, atol=1e-12)


def test_hessian_of_sum_sin_is_diagonal_minus_sin():
    xv = np.array([-1.0, 0.25, 2.0], dtype=np.float32)
    h = gt.autodiff.hessian(lambda x: gt.reduce_sum(gt.sin(x)), gt.constant(xv))
    np.testing.assert_allclose(h.numpy(), np.diag(-np.sin(xv)), rtol=1e-6, atol=1e-7)


def test_hessian_of_a_matrix_argument_has_shape_x_shape_twice():
    xv = RNG.normal(size=(2, 3))
    h = gt.autodiff.hessian(lambda x: gt.reduce_sum(x**3), gt.constant(xv))
    assert h.shape == (2, 3, 2, 3)
    expected = np.diag(6 * xv.reshape(-1)).reshape(2, 3, 2, 3)
    np.testing.assert_allclose(h.numpy(), expected, rtol=1e-12)


def test_hessian_with_mixed_terms():
    # f = (sum x^2)^2: H = 8 x x^T + 4 |x|^2 I
    xv = np.array([1.0, -2.0, 0.5])
    h = gt.autodiff.hessian(lambda x: gt.reduce_sum(x * x) ** 2, gt.constant(xv))
    expected = 8 * np.outer(xv, xv) + 4 * (xv @ xv) * np.eye(3)
    np.testing.assert_allclose(h.numpy(), expected, rtol=1e-12)


def test_hessian_of_a_variable():
    v = gt.Variable([1.0, 2.0], dtype=gt.float64)
    h = gt.autodiff.hessian(lambda x: gt.reduce_sum(gt.exp(x)), v)
    np.testing.assert_allclose(h.numpy(), np.diag(np.exp([1.0, 2.0])), rtol=1e-12)


def test_hessian_of_numpy_input():
    h = gt.autodiff.hessian(lambda x: gt.reduce_sum(x**2), np.array([3.0, 4.0]))
    np.testing.assert_allclose(h.numpy(), 2 * np.eye(2))


def test_linear_and_constant_functions_give_zeros():
    x = gt.constant([1.0, 2.0])
    h = gt.autodiff.hessian(lambda x: gt.reduce_sum(3.0 * x), x)
    assert h.numpy().tolist() == [[0.0, 0.0], [0.0, 0.0]]
    h = gt.autodiff.hessian(lambda x: gt.constant(5.0), x)
    assert h.numpy().tolist() == [[0.0, 0.0], [0.0, 0.0]]
    hv = gt.autodiff.hessian_vector_product(lambda x: gt.reduce_sum(3.0 * x), x, gt.constant([1.0, 1.0]))
    assert hv.numpy().tolist() == [0.0, 0.0]


@pytest.mark.parametrize(
    "f, hess",
    [
        (lambda x: gt.reduce_sum(gt.sin(x)), lambda x: np.diag(-np.sin(x))),
        (lambda x: gt.reduce_sum(x * x) ** 2, lambda x: 8 * np.outer(x, x) + 4 * (x @ x) * np.eye(x.size)),
        (
            lambda x: gt.reduce_sum(gt.exp(x[:-1] * x[1:])),
            None,  # compared with the explicit Hessian from gt.autodiff.hessian
        ),
    ],
)
def test_hessian_vector_product_equals_h_at_v(f, hess):
    xv = RNG.normal(size=5)
    vv = RNG.normal(size=5)
    x, v = gt.constant(xv), gt.constant(vv)
    hv = gt.autodiff.hessian_vector_product(f, x, v)
    assert hv.shape == (5,)
    h = gt.autodiff.hessian(f, x).numpy()
    if hess is not None:
        np.testing.assert_allclose(h, hess(xv), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(hv.numpy(), h @ vv, rtol=1e-10, atol=1e-12)


def test_hessian_vector_product_of_quadratic_form():
    a = RNG.normal(size=(3, 3))
    xv, vv = RNG.normal(size=3), RNG.normal(size=3)
    hv = gt.autodiff.hessian_vector_product(quadratic_form(a), gt.constant(xv), gt.constant(vv))
    np.testing.assert_allclose(hv.numpy(), (a + a.T) @ vv, rtol=1e-12)


def test_hessian_vector_product_matrix_shaped():
    xv, vv = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    hv = gt.autodiff.hessian_vector_product(lambda x: gt.reduce_sum(x**3), gt.constant(xv), gt.constant(vv))
    assert hv.shape == (2, 3)
    np.testing.assert_allclose(hv.numpy(), 6 * xv * vv, rtol=1e-12)


def test_results_are_differentiable_again():
    # d/dx of sum(H(x) v) for f = sum(x^3) is 6 v: the helpers record under an outer tape.
    x = gt.constant([1.0, 2.0])
    v = gt.constant([3.0, -1.0])
    with gt.GradientTape() as t:
        t.watch(x)
        hv = gt.autodiff.hessian_vector_product(lambda x: gt.reduce_sum(x**3), x, v)
    assert hv.numpy().tolist() == [18.0, -12.0]
    assert t.gradient(hv, x).numpy().tolist() == [18.0, -6.0]


def test_errors():
    x = gt.constant([1.0, 2.0])
    with pytest.raises(ValueError, match="scalar"):
        gt.autodiff.hessian(lambda x: x * x, x)
    with pytest.raises(ValueError, match="scalar"):
        gt.autodiff.hessian_vector_product(lambda x: x * x, x, x)
    with pytest.raises(ValueError, match="shape"):
        gt.autodiff.hessian_vector_product(lambda x: gt.reduce_sum(x * x), x, gt.constant([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match="dtype"):
        gt.autodiff.hessian_vector_product(
            lambda x: gt.reduce_sum(x * x), x, gt.constant([1.0, 2.0], dtype=gt.float64)
        )
    with pytest.raises(TypeError, match="floating"):
        gt.autodiff.hessian(lambda x: gt.reduce_sum(x), gt.constant([1, 2]))
