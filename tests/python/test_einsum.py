"""gt.einsum (src/ops/einsum.rs): values against numpy, gradients to second order, bad equations."""

import numpy as np
import pytest

import gradtape as gt

RNG = np.random.default_rng(11)


EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij", [(2, 3)]),
    ("ji", [(2, 3)]),
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iii->i", [(2, 2, 2)]),
    ("bxby->bxy", [(2, 3, 2, 4)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("i,i->i", [(3,), (3,)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("bij,jk->bik", [(2, 2, 3), (3, 4)]),
    ("ijk,kji->", [(2, 3, 4), (4, 3, 2)]),
    ("abc,cd,de->abe", [(2, 3, 4), (4, 2), (2, 3)]),
    ("ij,ij,ij->i", [(2, 3), (2, 3), (2, 3)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (3, 4)]),
    ("...ij,...jk", [(5, 1, 2, 3), (4, 3, 2)]),
    ("i...->...", [(3, 2, 2)]),
    ("...ii->...i", [(2, 3, 3)]),
    ("aBc,cB->a", [(2, 3, 4), (4, 3)]),
    (" ij , jk -> ki ", [(2, 3), (3, 4)]),
    ("ij,->ij", [(2, 3), ()]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM_CASES)
def test_einsum_matches_numpy(eq, shapes):
    xs = [RNG.normal(size=s) for s in shapes]
    got = gt.einsum(eq, *[gt.constant(x) for x in xs]).numpy()
    want = np.einsum(eq.replace(" ", ""), *xs)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert gt.linalg.einsum is gt.einsum


def test_einsum_gradient_and_second_order():
    x = gt.constant(RNG.normal(size=(3, 3)))
    with gt.GradientTape() as outer:
        outer.watch(x)
        with gt.GradientTape() as inner:
            inner.watch(x)
            y = gt.einsum("ij,ji->", x, x)  # trace(x @ x)
        g = inner.gradient(y, x)
        s = gt.reduce_sum(g)
    np.testing.assert_allclose(g.numpy(), 2 * x.numpy().T, rtol=1e-12)
    np.testing.assert_allclose(outer.gradient(s, x).numpy(), np.full((3, 3), 2.0))


@pytest.mark.parametrize(
    "eq,shapes",
    [
        ("ij,jk->ik", [(2, 3), (4, 4)]),
        ("ij,jk->ik", [(2, 3)]),
        ("ii->i", [(2, 3)]),
        ("ij->iz", [(2, 3)]),
        ("ijk->i", [(2, 3)]),
        ("ij->ii", [(2, 3)]),
        ("i.j->i", [(2, 3)]),
    ],
)
def test_einsum_bad_equations_raise(eq, shapes):
    with pytest.raises(gt.errors.InvalidArgumentError):
        gt.einsum(eq, *[gt.zeros(s) for s in shapes])
