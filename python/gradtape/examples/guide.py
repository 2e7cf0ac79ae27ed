"""The figures of TensorFlow's advanced-autodiff guide, drawn with gradtape.

Usage::

    python -m gradtape.examples.guide [OUTPUT_DIR]      # default: ./guide_figures

Writes PNG files into OUTPUT_DIR:

- ``sigmoid.png``: ``sigmoid(x)`` and its derivative, from ``tape.jacobian`` with
  respect to a scalar source;
- ``hessian.png``: the Hessian of a loss with respect to a Dense layer's kernel,
  flattened to a matrix (``imshow_zero_center``);
- ``batch_slice.png``: one ``(batch, batch)`` slice of a full Jacobian (diagonal);
- ``batch_patches.png``: every ``(batch, batch)`` slice as a patch (``plot_as_patches``,
  which uses ``gt.transpose`` and ``gt.pad``): all diagonal;
- ``batchnorm_patches.png``: the same with ``BatchNormalization(training=True)`` in the
  model: the slices are no longer diagonal;

then takes the guide's Newton step on the kernel (with ``gt.linalg.solve``) and prints
the loss before and after it.

matplotlib is an optional extra: without it the program says so and exits with status 2.
It also exits non-zero, with a message, if a gradtape feature it needs is missing or if
the Newton step does not lower the loss.
"""

import argparse
import os
import sys

import gradtape as gt

# Exit statuses.
_OK, _FAILED, _MISSING = 0, 1, 2


class MissingFeature(RuntimeError):
    """A gradtape function the guide needs is not available in this build."""


def _require(module, name, what):
    fn = getattr(module, name, None)
    if fn is None:
        prefix = "gt" if module is gt else f"gt.{module.__name__.rsplit('.', 1)[-1]}"
        raise MissingFeature(f"{prefix}.{name} is not available in this gradtape build; {what} needs it")
    return fn


def _pyplot():
    """matplotlib's pyplot with a non-interactive backend, or None if not installed."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["figure.figsize"] = (8, 6)
    return plt


def imshow_zero_center(plt, image, **kwargs):
    """The guide's helper: a diverging colormap centred on zero."""
    lim = float(gt.reduce_max(abs(image)))
    plt.imshow(image, vmin=-lim, vmax=lim, cmap="seismic", **kwargs)
    plt.colorbar()


def plot_as_patches(plt, j):
    """The guide's helper: each ``(batch, batch)`` slice of a ``(batch, ins, batch,
    outs)`` Jacobian as one patch of a single image, patches separated by padding."""
    pad = _require(gt, "pad", "plot_as_patches")
    # Reorder axes so the diagonals will each form a contiguous patch.
    j = gt.transpose(j, [1, 0, 3, 2])
    # Pad in between each patch.
    lim = gt.reduce_max(abs(j))
    j = pad(j, [[0, 0], [1, 1], [0, 0], [1, 1]], constant_values=-lim)
    # Reshape to form a single image.
    s = j.shape
    j = gt.reshape(j, [s[0] * s[1], s[2] * s[3]])
    imshow_zero_center(plt, j, extent=[-0.5, s[2] - 0.5, s[0] - 0.5, -0.5])


def _save(plt, out, name):
    path = os.path.join(out, name)
    plt.savefig(path, dpi=80)
    plt.close()
    print(f"wrote {path}")
    return path


def sigmoid_figure(plt, out):
    """Jacobian of a vector target with respect to a scalar source."""
    x = gt.linspace(-10.0, 10.0, 200 + 1)
    delta = gt.Variable(0.0)
    with gt.GradientTape() as tape:
        y = gt.nn.sigmoid(x + delta)
    dy_dx = tape.jacobian(y, delta)
    plt.plot(x.numpy(), y, label="y")
    plt.plot(x.numpy(), dy_dx, label="dy/dx")
    plt.legend()
    plt.xlabel("x")
    return _save(plt, out, "sigmoid.png")


def kernel_hessian():
    """The guide's Hessian example: the loss, its gradient and Hessian with respect to
    ``layer1.kernel`` (shapes ``(5, 8)`` and ``(5, 8, 5, 8)``), and a function
    recomputing the loss."""
    x = gt.random.normal([7, 5])
    layer1 = gt.layers.Dense(8, activation=gt.nn.relu)
    layer2 = gt.layers.Dense(6, activation=gt.nn.relu)

    def loss_fn():
        return gt.reduce_mean(layer2(layer1(x)) ** 2)

    with gt.GradientTape() as t2:
        with gt.GradientTape() as t1:
            loss = loss_fn()
        g = t1.gradient(loss, layer1.kernel)
    h = t2.jacobian(g, layer1.kernel)
    return layer1, loss, g, h, loss_fn


def hessian_figure(plt, out, g, h):
    n_params = int(gt.reduce_prod(g.shape))
    h_mat = gt.reshape(h, [n_params, n_params])
    imshow_zero_center(plt, h_mat)
    plt.title("Hessian of the loss with respect to a Dense kernel")
    return _save(plt, out, "hessian.png")


def newton_step(layer1, g, h, loss_fn):
    """The guide's Newton step on ``layer1.kernel``; returns the loss before and after."""
    solve = _require(gt.linalg, "solve", "the Newton step")
    n_params = int(gt.reduce_prod(layer1.kernel.shape))
    g_vec = gt.reshape(g, [n_params, 1])
    h_mat = gt.reshape(h, [n_params, n_params])
    eps = 1e-3
    eye_eps = gt.eye(h_mat.shape[0]) * eps
    before = float(loss_fn())
    # X(k+1) = X(k) - (∇²f(X(k)))^-1 @ ∇f(X(k))
    update = solve(h_mat + eye_eps, g_vec)
    layer1.kernel.assign_sub(gt.reshape(update, layer1.kernel.shape))
    after = float(loss_fn())
    return before, after


def batch_jacobian_figures(plt, out):
    """The full Jacobian of a two-layer model is block diagonal over the batch."""
    x = gt.random.normal([7, 5])
    layer1 = gt.layers.Dense(8, activation=gt.nn.elu)
    layer2 = gt.layers.Dense(6, activation=gt.nn.elu)
    with gt.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        y = layer2(y)
    j = tape.jacobian(y, x)
    imshow_zero_center(plt, j[:, 0, :, 0])
    plt.title("A (batch, batch) slice")
    paths = [_save(plt, out, "batch_slice.png")]
    plot_as_patches(plt, j)
    plt.title("All (batch, batch) slices are diagonal")
    paths.append(_save(plt, out, "batch_patches.png"))
    return paths


def batchnorm_figure(plt, out):
    """With batch normalization (training=True) the examples are coupled."""
    x = gt.random.normal([7, 5])
    layer1 = gt.layers.Dense(8, activation=gt.nn.elu)
    bn = gt.layers.BatchNormalization()
    layer2 = gt.layers.Dense(6, activation=gt.nn.elu)
    with gt.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        y = bn(y, training=True)
        y = layer2(y)
    j = tape.jacobian(y, x)
    plot_as_patches(plt, j)
    plt.title("These slices are not diagonal")
    plt.xlabel("Don't use `batch_jacobian`")
    return _save(plt, out, "batchnorm_patches.png")


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m gradtape.examples.guide",
        description="Draw the figures of TF's advanced-autodiff guide with gradtape.",
    )
    parser.add_argument(
        "output_dir", nargs="?", default="guide_figures",
        help="directory for the PNG files (default: ./guide_figures)",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    args = parser.parse_args(argv)

    plt = _pyplot()
    if plt is None:
        print(
            "error: gradtape.examples.guide needs matplotlib, an optional extra that is "
            "not installed (pip install matplotlib)",
            file=sys.stderr,
        )
        return _MISSING
    os.makedirs(args.output_dir, exist_ok=True)
    gt.random.set_seed(args.seed)

    try:
        sigmoid_figure(plt, args.output_dir)
        layer1, loss, g, h, loss_fn = kernel_hessian()
        print(f"layer.kernel.shape: {layer1.kernel.shape}")
        print(f"h.shape: {h.shape}")
        hessian_figure(plt, args.output_dir, g, h)
        batch_jacobian_figures(plt, args.output_dir)
        batchnorm_figure(plt, args.output_dir)
        before, after = newton_step(layer1, g, h, loss_fn)
    except MissingFeature as e:
        print(f"error: {e}", file=sys.stderr)
        return _MISSING
    print(f"Newton step: loss {before:.6g} -> {after:.6g}")
    if not after < before:
        print("error: the Newton step did not lower the loss", file=sys.stderr)
        return _FAILED
    return _OK


if __name__ == "__main__":
    sys.exit(main())
