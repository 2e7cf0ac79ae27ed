"""`python -m gradtape.examples.cnn`: the small convnet learns its synthetic classes."""

import gradtape.examples.cnn as cnn


def test_images_and_labels():
    x, y = cnn.make_images(20, 0)
    assert x.shape == (20, 28, 28, 1) and y.shape == (20,)
    assert set(y.tolist()) <= set(range(10))


def test_short_training_learns():
    lines = []
    acc = cnn.train(epochs=2, batch_size=32, n_train=320, n_test=128, log=lines.append)
    assert len(lines) == 2 and lines[0].startswith("epoch 1: loss ")
    assert acc >= 0.8

