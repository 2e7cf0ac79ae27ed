"""Runnable examples. ``python -m gradtape.examples.guide`` draws the figures of TF's
advanced-autodiff guide with gradtape (matplotlib is an optional extra);
``python -m gradtape.examples.cnn`` trains a small convolutional network."""
