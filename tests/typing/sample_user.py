"""A user's training script, checked with ``mypy --strict`` by tests/python/test_stubs.py.

It is never run by the tests as a program of its own: it exists so that the public API
keeps type-checking as a user sees it (a typed training loop, jacobians, custom
gradients and nested structures). It runs as a plain script too.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

import gradtape as gt


class Batch(NamedTuple):
    x: gt.Tensor
    y: gt.Tensor


def make_data(n: int) -> Batch:
    gt.random.set_seed(0)
    x = gt.random.normal([n, 3])
    w = gt.constant([[1.0], [-2.0], [0.5]])
    return Batch(x=x, y=gt.matmul(x, w) + 0.1)


def train(steps: int) -> float:
    data = make_data(32)
    model = gt.layers.Sequential([gt.layers.Dense(8, activation="tanh"), gt.layers.Dense(1)])
    opt = gt.optimizers.SGD(learning_rate=0.1)
    loss_value = 0.0
    for _ in range(steps):
        with gt.GradientTape() as tape:
            pred = model(data.x)
            loss = gt.reduce_mean(gt.square(pred - data.y))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        loss_value = float(loss)
    return loss_value


def jacobians() -> tuple[np.ndarray[Any, Any], list[int]]:
    x = gt.constant([1.0, 2.0, 3.0])
    layer = gt.layers.Dense(2, name="jac")
    with gt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = layer(gt.reshape(x, [1, 3]))
        z = gt.reduce_sum(x * x)
    j = tape.jacobian(y, x)
    per_var = tape.jacobian(y, layer.trainable_variables)
    dz = tape.gradient(z, x)
    assert j is not None and dz is not None
    shapes = [int(gt.size(t)) for t in per_var if t is not None]
    return j.numpy(), shapes


@gt.custom_gradient
def clip_grad(x: gt.Tensor) -> tuple[gt.Tensor, Callable[[gt.Tensor], gt.Tensor]]:
    def grad(dy: gt.Tensor) -> gt.Tensor:
        return gt.clip_by_norm(dy, 1.0)

    return gt.identity(x), grad


def nested() -> dict[str, gt.Tensor | None]:
    a = gt.Variable(1.0, name="a")
    b = gt.Variable([1.0, 2.0], name="b")
    with gt.GradientTape() as tape:
        loss = clip_grad(a * 10.0) + gt.reduce_sum(b * b)
    grads = tape.gradient(loss, {"a": a, "b": b})
    return grads


def hessian_demo() -> gt.Tensor:
    def f(x: gt.Tensor) -> gt.Tensor:
        return gt.reduce_sum(x ** 3)

    return gt.autodiff.hessian(f, gt.constant([1.0, 2.0]))


if __name__ == "__main__":
    print(f"loss after 20 steps: {train(20):.4f}")
    jac, sizes = jacobians()
    print(jac.shape, sizes)
    print({k: None if v is None else v.numpy().tolist() for k, v in nested().items()})
    print(hessian_demo().numpy().tolist())
