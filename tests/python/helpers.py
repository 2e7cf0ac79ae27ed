"""Shared helpers of the op tests."""

import numpy as np

import gradtape as gt


def grad_of(f, x, w=None):
    """Gradient of ``sum(f(x) * w)`` with respect to tensor ``x`` (dense: a gather's
    ``gt.IndexedSlices``, TF's type there, converted)."""
    x = gt.constant(x, dtype=gt.float64)
    with gt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
        if w is not None:
            y = y * gt.constant(w, dtype=gt.float64)
        loss = gt.reduce_sum(y)
    return gt.convert_to_tensor(tape.gradient(loss, x)).numpy()


A = np.arange(1.0, 7.0).reshape(2, 3)
