"""``Sequential``: layers applied in order."""

import inspect

from ._base import Layer


def _accepts_training(layer):
    try:
        return "training" in inspect.signature(layer.call).parameters
    except (TypeError, ValueError):
        return False


class Sequential(Layer):
    """A stack of layers. TF equivalent: ``tf.keras.Sequential``.

    >>> import gradtape as gt
    >>> model = gt.layers.Sequential([gt.layers.Dense(4, activation="tanh"), gt.layers.Dense(1)])
    >>> model(gt.ones([2, 3])).shape
    TensorShape([2, 1])
    >>> len(model.trainable_variables)
    4
    """

    def __init__(self, layers=None, name=None):
        super().__init__(name=name)
        self.layers = list(layers or [])

    def add(self, layer):
        self.layers.append(layer)

    def build(self, input_shape):
        self.built = True

    def call(self, inputs, training=None):
        x = inputs
        for layer in self.layers:
            if training is not None and _accepts_training(layer):
                x = layer(x, training=training)
            else:
                x = layer(x)
        return x

    @property
    def variables(self):
        return [v for layer in self.layers for v in layer.variables]

    weights = variables

    @property
    def trainable_variables(self):
        return [v for layer in self.layers for v in layer.trainable_variables]

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self):
        return [v for layer in self.layers for v in layer.non_trainable_variables]
