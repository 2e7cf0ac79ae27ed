"""A tour of gradtape: the ``tf.GradientTape`` guide examples, then a small model trained.

Run it with ``python -m gradtape.demo`` (or ``bash scripts/demo`` from a checkout).
Only the public ``gt`` API is used, exactly as a TensorFlow user would write it with
``import tensorflow as tf``. Options: ``--epochs N``, ``--seed N``, ``--quiet-examples``,
``--out DIR`` (where the pictures go: the loss curve, the fit, the tape of one training
step; ``gradtape-demo`` by default), ``--no-plots``.
"""

import argparse
import math
import os
import sys
import time

import numpy as np

import gradtape as gt


def _show(label, value):
    print(f"  {label:<34} {value!s}")


def _num(t):
    """A tensor's value as TF's ``.numpy()`` prints it."""
    return None if t is None else t.numpy()


def first_gradient():
    x = gt.constant(3.0)
    with gt.GradientTape() as g:
        g.watch(x)
        y = x * x
    dy_dx = g.gradient(y, x)
    _show("d(x*x)/dx at x=3:", dy_dx)
    return dy_dx


def nested_tapes():
    x = gt.constant(5.0)
    with gt.GradientTape() as g:
        g.watch(x)
        with gt.GradientTape() as gg:
            gg.watch(x)
            y = x * x
        dy_dx = gg.gradient(y, x)  # 2 * x
    d2y_dx2 = g.gradient(dy_dx, x)  # 2
    _show("d(x*x)/dx at x=5:", dy_dx)
    _show("d2(x*x)/dx2:", d2y_dx2)
    return dy_dx, d2y_dx2


def persistent_tape():
    x = gt.constant(3.0)
    with gt.GradientTape(persistent=True) as g:
        g.watch(x)
        y = x * x
        z = y * y
    dz_dx = g.gradient(z, x)  # 4 * x**3 = 108
    dy_dx = g.gradient(y, x)  # 2 * x = 6
    del g  # a persistent tape keeps its records until it is dropped
    _show("persistent: dz/dx (4x^3 at 3):", dz_dx)
    _show("persistent: dy/dx (2x at 3):", dy_dx)
    return dz_dx, dy_dx


def watch_accessed_variables():
    x = gt.Variable(2.0)
    w = gt.Variable(5.0)
    with gt.GradientTape(watch_accessed_variables=False, persistent=True) as tape:
        tape.watch(x)
        y = x**2  # x is watched explicitly
        z = w**3  # w is not watched: no gradient
    dy_dx = tape.gradient(y, x)
    dz_dw = tape.gradient(z, w)
    _show("watched x: dy/dx (2x at 2):", dy_dx)
    _show("unwatched w: dz/dw:", dz_dw)
    return dy_dx, dz_dw


def dense_layer_gradients():
    gt.random.set_seed(0)
    layer = gt.layers.Dense(2, activation="relu")
    x = gt.constant([[1.0, 2.0, 3.0]])
    with gt.GradientTape() as tape:
        y = layer(x)
        loss = gt.reduce_mean(y**2)
    grads = tape.gradient(loss, layer.trainable_variables)
    shapes = []
    for var, g in zip(layer.trainable_variables, grads):
        _show("Dense gradient:", f"{var.name}, shape: {g.shape}")
        shapes.append((var.name, tuple(g.shape)))
    return shapes


def multiple_tapes():
    x0 = gt.constant(0.0)
    x1 = gt.constant(0.0)
    with gt.GradientTape() as tape0, gt.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        y0 = gt.math.sin(x0)
        y1 = gt.nn.sigmoid(x1)
        y = y0 + y1
        ys = gt.reduce_sum(y)
    g0 = tape0.gradient(ys, x0).numpy()  # cos(0) = 1.0
    g1 = tape1.gradient(ys, x1).numpy()  # sigmoid'(0) = 0.25
    _show("tape0: d/dx0 sin(x0) at 0:", g0)
    _show("tape1: d/dx1 sigmoid(x1) at 0:", g1)
    return g0, g1


def higher_order():
    x = gt.Variable(1.0)
    with gt.GradientTape() as t2:
        with gt.GradientTape() as t1:
            y = x * x * x
        # Computed inside t2: the gradient computation is recorded too.
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)
    _show("dy_dx (3x^2 at 1):", dy_dx.numpy())
    _show("d2y_dx2 (6x at 1):", d2y_dx2.numpy())
    return dy_dx.numpy(), d2y_dx2.numpy()


EXAMPLES = [
    ("The first gradient", first_gradient),
    ("Nested tapes: a second derivative", nested_tapes),
    ("A persistent tape", persistent_tape),
    ("watch_accessed_variables=False", watch_accessed_variables),
    ("Gradients of a Dense layer", dense_layer_gradients),
    ("Two tapes at once", multiple_tapes),
    ("Higher-order gradients of a Variable", higher_order),
]


def run_examples():
    results = {}
    for i, (title, fn) in enumerate(EXAMPLES, 1):
        print(f"{i}. {title}")
        results[fn.__name__] = fn()
    return results


# -- Training ---------------------------------------------------------------------------


class Progress:
    """A plain-text progress bar: redrawn in place on a terminal, one line per update
    otherwise (logs, CI)."""

    def __init__(self, total, width=30, stream=None):
        self.total = total
        self.width = width
        self.stream = stream or sys.stdout
        self.tty = self.stream.isatty()
        self.start = time.perf_counter()

    def update(self, done, text):
        filled = int(self.width * done / self.total)
        bar = "#" * filled + "." * (self.width - filled)
        elapsed = time.perf_counter() - self.start
        line = f"  [{bar}] {done:>{len(str(self.total))}}/{self.total} {text}  {elapsed:5.1f}s"
        if self.tty:
            self.stream.write("\r" + line)
            if done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def make_data(n, seed):
    """Noisy samples of sin(x) on [-pi, pi], as float32 columns."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-math.pi, math.pi, size=(n, 1)).astype(np.float32)
    y = (np.sin(x) + rng.normal(0.0, 0.1, size=(n, 1))).astype(np.float32)
    return x, y


def train(epochs=60, batch_size=32, seed=0, learning_rate=0.05):
    """Fit sin(x) with a 1-32-32-1 tanh network and SGD with momentum.
    Returns (first epoch loss, last epoch loss, test MSE, test R^2)."""
    r = _fit(epochs, batch_size, seed, learning_rate)
    return r["losses"][0], r["losses"][-1], r["mse"], r["r2"]


def _fit(epochs, batch_size, seed, learning_rate):
    """``train``'s work; returns everything the pictures need."""
    gt.random.set_seed(seed)
    x_train, y_train = make_data(512, seed)
    x_test = np.linspace(-math.pi, math.pi, 200, dtype=np.float32).reshape(-1, 1)
    y_test = np.sin(x_test)

    model = gt.layers.Sequential(
        [
            gt.layers.Dense(32, activation="tanh"),
            gt.layers.Dense(32, activation="tanh"),
            gt.layers.Dense(1),
        ]
    )
    rng = np.random.default_rng(seed + 1)
    n = len(x_train)
    steps = n // batch_size
    total_steps = epochs * steps

    def cosine_decay(step):
        # A learning-rate schedule is any callable of the step, as in Keras.
        return learning_rate * 0.5 * (1.0 + math.cos(math.pi * min(step, total_steps) / total_steps))

    opt = gt.optimizers.SGD(learning_rate=cosine_decay, momentum=0.9)

    print(
        f"Training a 1-32-32-1 tanh network on {n} noisy samples of sin(x) "
        f"(SGD, lr={learning_rate} with cosine decay, momentum 0.9, batch {batch_size}, {epochs} epochs)"
    )
    bar = Progress(epochs)
    losses = []
    for epoch in range(1, epochs + 1):
        order = rng.permutation(n)
        total = 0.0
        for s in range(steps):
            idx = order[s * batch_size : (s + 1) * batch_size]
            xb = gt.constant(x_train[idx])
            yb = gt.constant(y_train[idx])
            with gt.GradientTape() as tape:
                pred = model(xb)
                loss = gt.reduce_mean(gt.square(pred - yb))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            total += float(loss)
        losses.append(total / steps)
        bar.update(epoch, f"epoch loss {losses[-1]:.4f}")

    pred = model(gt.constant(x_test)).numpy()
    mse = float(np.mean((pred - y_test) ** 2))
    r2 = 1.0 - mse / float(np.var(y_test))
    print(
        f"Fit: loss {losses[0]:.4f} -> {losses[-1]:.4f} (noise floor 0.0100); "
        f"on a clean test grid MSE {mse:.4f}, R^2 {r2:.3f}"
    )
    # One more step on a persistent tape, kept for its picture.
    with gt.GradientTape(persistent=True) as tape:
        loss = gt.reduce_mean(gt.square(model(gt.constant(x_train[:batch_size])) - gt.constant(y_train[:batch_size])))
    return {
        "losses": losses, "mse": mse, "r2": r2, "x_train": x_train, "y_train": y_train,
        "x_test": x_test, "y_test": y_test, "pred": pred, "tape": tape,
    }


def save_pictures(result, out_dir):
    """Saves the loss curve, the fit and the tape of one training step as PNG files in
    ``out_dir``; returns their paths ([] without matplotlib)."""
    try:
        import matplotlib
    except ImportError:
        print("(pictures skipped: matplotlib is not installed; pip install matplotlib)")
        return []
    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(out_dir, exist_ok=True)
    paths = []
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(range(1, len(result["losses"]) + 1), result["losses"], marker=".")
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean squared error")
    ax.set_title("Training loss")
    ax.axhline(0.01, color="gray", linestyle="--", linewidth=1, label="noise floor")
    ax.legend()
    paths.append(os.path.join(out_dir, "loss.png"))
    fig.tight_layout()
    fig.savefig(paths[-1])
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.scatter(result["x_train"], result["y_train"], s=6, alpha=0.4, label="noisy samples")
    ax.plot(result["x_test"], result["y_test"], color="gray", linestyle="--", label="sin(x)")
    ax.plot(result["x_test"], result["pred"], color="C3", linewidth=2, label="network")
    ax.set_title(f"The fit (test R^2 {result['r2']:.3f})")
    ax.legend()
    paths.append(os.path.join(out_dir, "fit.png"))
    fig.tight_layout()
    fig.savefig(paths[-1])
    plt.close(fig)

    paths.append(os.path.join(out_dir, "tape.png"))
    gt.debugging.plot_tape(result["tape"], paths[-1])
    return paths


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m gradtape.demo", description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=60, help="training epochs (default 60)")
    p.add_argument("--seed", type=int, default=0, help="seed for data and initial weights")
    p.add_argument("--quiet-examples", action="store_true", help="skip printing the guide examples")
    p.add_argument("--out", default="gradtape-demo", help="directory for the pictures (default ./gradtape-demo)")
    p.add_argument("--no-plots", action="store_true", help="do not save pictures")
    args = p.parse_args(argv)
    if args.epochs < 1:
        p.error("--epochs must be at least 1")

    t0 = time.perf_counter()
    print(f"gradtape {gt.__version__}: TensorFlow's GradientTape, with a Rust engine\n")
    if not args.quiet_examples:
        run_examples()
        print()
    result = _fit(args.epochs, 32, args.seed, 0.05)
    if not args.no_plots:
        paths = save_pictures(result, args.out)
        if paths:
            print("Pictures saved:")
            for path in paths:
                print(f"  {os.path.abspath(path)}")
    print(f"Done in {time.perf_counter() - t0:.1f}s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
