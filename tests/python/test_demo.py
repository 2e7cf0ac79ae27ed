"""`python -m gradtape.demo`: the guide examples give TF's numbers, training fits, and
the progress bar draws in place on a terminal but prints lines otherwise."""

import io
import os
import subprocess
import sys

import numpy as np

import gradtape as gt
from gradtape import demo


def test_first_gradient_is_six():
    assert float(demo.first_gradient()) == 6.0


def test_nested_tapes_give_10_and_2():
    dy_dx, d2y_dx2 = demo.nested_tapes()
    assert (float(dy_dx), float(d2y_dx2)) == (10.0, 2.0)


def test_persistent_tape_gives_108_and_6():
    dz_dx, dy_dx = demo.persistent_tape()
    assert (float(dz_dx), float(dy_dx)) == (108.0, 6.0)


def test_unwatched_variable_has_no_gradient():
    dy_dx, dz_dw = demo.watch_accessed_variables()
    assert float(dy_dx) == 4.0
    assert dz_dw is None


def test_dense_layer_gradient_shapes():
    (kname, kshape), (bname, bshape) = demo.dense_layer_gradients()
    assert kname.endswith("/kernel:0") and bname.endswith("/bias:0")
    assert (kshape, bshape) == ((3, 2), (2,))


def test_multiple_tapes_give_1_and_quarter():
    g0, g1 = demo.multiple_tapes()
    assert (float(g0), float(g1)) == (1.0, 0.25)


def test_higher_order_gives_3_and_6():
    assert tuple(float(v) for v in demo.higher_order()) == (3.0, 6.0)


def test_training_fits_sin(capsys):
    first, last, mse, r2 = demo.train(epochs=30, seed=0)
    assert last < first / 4
    assert mse < 0.02
    assert r2 > 0.95
    out = capsys.readouterr().out
    # Not a terminal: one progress line per epoch, no carriage returns.
    assert "\r" not in out
    assert sum(" epoch loss " in line for line in out.splitlines()) == 30
    assert out.splitlines()[-1].startswith("Fit: loss ")


def test_training_is_reproducible():
    import contextlib

    runs = []
    for _ in range(2):
        with contextlib.redirect_stdout(io.StringIO()):
            runs.append(demo.train(epochs=2, seed=3))
    assert runs[0] == runs[1]


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_redraws_in_place_on_a_terminal():
    out = _Tty()
    bar = demo.Progress(4, width=8, stream=out)
    for i in range(1, 5):
        bar.update(i, f"loss {1.0 / i:.2f}")
    text = out.getvalue()
    assert text.count("\r") == 4
    assert text.endswith("\n") and text.count("\n") == 1
    assert "[########] 4/4 loss 0.25" in text
    assert "[####....] 2/4 loss 0.50" in text


def test_demo_runs_as_a_module(tmp_path):
    env = dict(os.environ, PYTHONWARNINGS="error")
    res = subprocess.run(
        [sys.executable, "-m", "gradtape.demo", "--epochs", "3"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    out = res.stdout
    for expected in [
        "gt.Tensor(6.0, shape=(), dtype=float32)",
        "gt.Tensor(10.0, shape=(), dtype=float32)",
        "gt.Tensor(2.0, shape=(), dtype=float32)",
        "gt.Tensor(108.0, shape=(), dtype=float32)",
        "dense/kernel:0, shape: (3, 2)",
        "dense/bias:0, shape: (2,)",
        "0.25",
        "Fit: loss ",
    ]:
        assert expected in out, f"{expected!r} missing from:\n{out}"
    assert res.stderr == ""
    # The pictures: saved where the demo says, each a PNG.
    saved = out.split("Pictures saved:\n", 1)[1].splitlines()[:3]
    names = [os.path.join(os.path.realpath(tmp_path), "gradtape-demo", n) for n in ("loss.png", "fit.png", "tape.png")]
    assert [os.path.realpath(p.strip()) for p in saved] == names
    for n in names:
        with open(n, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_demo_out_and_no_plots(tmp_path):
    res = subprocess.run(
        [sys.executable, "-m", "gradtape.demo", "--epochs", "1", "--quiet-examples", "--no-plots", "--out", "pics"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    assert "Pictures saved" not in res.stdout
    assert not (tmp_path / "pics").exists()


def test_demo_rejects_bad_epochs():
    res = subprocess.run(
        [sys.executable, "-m", "gradtape.demo", "--epochs", "0"], capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 2
    assert "--epochs must be at least 1" in res.stderr


def test_make_data_is_float32_sin_with_noise():
    x, y = demo.make_data(1000, seed=0)
    assert x.dtype == np.float32 and y.dtype == np.float32
    assert x.shape == y.shape == (1000, 1)
    assert -np.pi <= x.min() and x.max() <= np.pi
    resid = y - np.sin(x)
    assert 0.08 < float(resid.std()) < 0.12
    assert isinstance(gt.constant(x), gt.Tensor)
