"""Recurrent layers: ``SimpleRNN``, ``GRU`` and ``LSTM`` (with their cells), the
generic ``RNN`` and ``Bidirectional``, as Keras 3 computes them (issue 16). The
sequence runs as a Python loop over time steps, so the tape records every step and
gradients flow through time."""

from __future__ import annotations

from typing import Any

from .. import activations, initializers
from .._gradtape import Tensor, concat, convert_to_tensor, gather, matmul, split, stack, unstack, zeros
from ._base import Layer, in_example_run


def _reverse_time(x: Any) -> Any:
    return gather(x, list(range(int(x.shape[1]) - 1, -1, -1)), axis=1)


def _orthogonal(shape: tuple, dtype: Any) -> Any:
    """Keras' default recurrent initializer: an orthogonal matrix (the Q of a QR
    decomposition of a standard normal draw, signs fixed by R's diagonal)."""
    import numpy as np

    from .. import random

    from .._everyday import init_scope

    rows, cols = int(shape[0]), int(shape[-1]) if len(shape) > 1 else 1
    flat = (max(rows, cols), min(rows, cols))
    with init_scope():  # a concrete draw, also when the layer is built inside a gt.function
        a = random.normal(list(flat), dtype="float64").numpy()
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return convert_to_tensor(q.reshape(shape).astype(dtype if isinstance(dtype, str) else dtype.name))


def _init(value: Any) -> Any:
    return _orthogonal if value == "orthogonal" else initializers.get(value)


class _Cell(Layer):
    _gates = 1

    def __init__(
        self, units: int, activation: Any = "tanh", recurrent_activation: Any = "sigmoid", use_bias: bool = True,
        kernel_initializer: Any = "glorot_uniform", recurrent_initializer: Any = "orthogonal",
        bias_initializer: Any = "zeros", dropout: float = 0.0, recurrent_dropout: float = 0.0,
        seed: int | None = None, dtype: Any = "float32", **kwargs: Any,
    ) -> None:
        for k in ("kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "kernel_constraint",
                  "recurrent_constraint", "bias_constraint"):
            kwargs.pop(k, None)
        super().__init__(**kwargs)
        if isinstance(units, bool) or int(units) <= 0:
            raise ValueError(f"Received an invalid value for argument `units`, expected a positive integer, "
                             f"got {units}.")
        for what, rate in (("dropout", dropout), ("recurrent_dropout", recurrent_dropout)):
            if isinstance(rate, bool) or not isinstance(rate, (int, float)):
                raise ValueError(f"Invalid value for argument `{what}`: expected a float, got {rate!r}")
        self.units = int(units)
        # As Keras: rates clipped to [0, 1]; a rate of 1 (or 0) drops nothing.
        self.dropout = min(1.0, max(0.0, float(dropout)))
        self.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))
        self.seed = seed
        self._dropout_mask: Any = None
        self._recurrent_dropout_mask: Any = None
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = _init(kernel_initializer)
        self.recurrent_initializer = _init(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.dtype = dtype
        self.kernel: Any = None
        self.recurrent_kernel: Any = None
        self.bias: Any = None

    @property
    def state_size(self) -> Any:
        return self.units

    def _bias_shape(self) -> tuple:
        return (self._gates * self.units,)

    def _bias_init(self, shape: tuple, dtype: Any) -> Any:
        return self.bias_initializer(shape, dtype)

    def build(self, input_shape: Any) -> None:
        d = int(input_shape[-1])
        n = self._gates * self.units
        self.kernel = self.add_weight("kernel", (d, n), self.kernel_initializer, dtype=self.dtype)
        self.recurrent_kernel = self.add_weight(
            "recurrent_kernel", (self.units, n), self.recurrent_initializer, dtype=self.dtype)
        if self.use_bias:
            self.bias = self.add_weight("bias", self._bias_shape(), self._bias_init, dtype=self.dtype)
        self.built = True

    def get_initial_state(self, batch_size: int) -> list[Any]:
        return [zeros([batch_size, self.units], dtype=self.dtype)]

    # Dropout (Keras' DropoutRNNCell): one mask per sequence, drawn at its first step and
    # applied at every step (training only); the RNN layer resets them per call.
    def get_dropout_mask(self, step_input: Any) -> Any:
        """The dropout mask of the inputs (``ones`` with a fraction ``dropout`` zeroed,
        the rest scaled by ``1 / (1 - dropout)``), drawn once per sequence."""
        if self._dropout_mask is None and 0.0 < self.dropout < 1.0:
            self._dropout_mask = _dropout_ones(step_input, self.dropout, self.seed)
        return self._dropout_mask

    def get_recurrent_dropout_mask(self, step_state: Any) -> Any:
        """The dropout mask of the previous output (``recurrent_dropout``), drawn once
        per sequence."""
        if self._recurrent_dropout_mask is None and 0.0 < self.recurrent_dropout < 1.0:
            self._recurrent_dropout_mask = _dropout_ones(step_state, self.recurrent_dropout, self.seed)
        return self._recurrent_dropout_mask

    def reset_dropout_mask(self) -> None:
        self._dropout_mask = None

    def reset_recurrent_dropout_mask(self) -> None:
        self._recurrent_dropout_mask = None

    def _dropped(self, inputs: Any, h_prev: Any, training: Any) -> tuple[Any, Any]:
        """``inputs`` and ``h_prev`` times their dropout masks when training."""
        if training and 0.0 < self.dropout < 1.0:
            inputs = inputs * self.get_dropout_mask(inputs)
        if training and 0.0 < self.recurrent_dropout < 1.0:
            h_prev = h_prev * self.get_recurrent_dropout_mask(h_prev)
        return inputs, h_prev


def _dropout_ones(like: Any, rate: float, seed: int | None) -> Any:
    from .._gradtape import ones_like
    from ..nn import dropout

    return dropout(ones_like(like), rate=rate, seed=seed)


class SimpleRNNCell(_Cell):
    """``h = activation(x @ kernel + bias + h_prev @ recurrent_kernel)``.
    TF equivalent: ``tf.keras.layers.SimpleRNNCell``."""

    def call(self, inputs: Any, states: Any = None, training: Any = None, **kwargs: Any) -> Any:
        h_prev = states[0] if isinstance(states, (list, tuple)) else states
        inputs, h_prev = self._dropped(inputs, h_prev, training)
        h = matmul(inputs, self.kernel)
        if self.use_bias:
            h = h + self.bias
        out = self.activation(h + matmul(h_prev, self.recurrent_kernel))
        return out, [out]


class LSTMCell(_Cell):
    """Gates ``i, f, c, o`` from ``x @ kernel + h @ recurrent_kernel + bias``;
    ``c = f c_prev + i activation(c̃)``, ``h = o activation(c)``. The forget gate's
    bias starts at 1 (``unit_forget_bias``). TF equivalent: ``tf.keras.layers.LSTMCell``."""

    _gates = 4

    def __init__(self, units: int, *args: Any, unit_forget_bias: bool = True, **kwargs: Any) -> None:
        kwargs.pop("implementation", None)
        super().__init__(units, *args, **kwargs)
        self.unit_forget_bias = bool(unit_forget_bias)

    @property
    def state_size(self) -> Any:
        return [self.units, self.units]

    def _bias_init(self, shape: tuple, dtype: Any) -> Any:
        if not self.unit_forget_bias:
            return self.bias_initializer(shape, dtype)
        u = self.units
        b = self.bias_initializer((u,), dtype)
        one = initializers.get("ones")((u,), dtype)
        return concat([b, one, self.bias_initializer((2 * u,), dtype)], axis=0)

    def get_initial_state(self, batch_size: int) -> list[Any]:
        return [zeros([batch_size, self.units], dtype=self.dtype), zeros([batch_size, self.units], dtype=self.dtype)]

    def call(self, inputs: Any, states: Any = None, training: Any = None, **kwargs: Any) -> Any:
        h_prev, c_prev = states[0], states[1]
        inputs, h_prev = self._dropped(inputs, h_prev, training)
        z = matmul(inputs, self.kernel) + matmul(h_prev, self.recurrent_kernel)
        if self.use_bias:
            z = z + self.bias
        zi, zf, zc, zo = split(z, 4, axis=-1)
        i = self.recurrent_activation(zi)
        f = self.recurrent_activation(zf)
        c = f * c_prev + i * self.activation(zc)
        o = self.recurrent_activation(zo)
        h = o * self.activation(c)
        return h, [h, c]


class GRUCell(_Cell):
    """Gates ``z, r`` and candidate ``h̃``; with ``reset_after`` (Keras 3's default)
    ``h̃ = activation(x_h + r (h_prev @ U_h + b_h))``; ``h = z h_prev + (1 - z) h̃``.
    TF equivalent: ``tf.keras.layers.GRUCell``."""

    _gates = 3

    def __init__(self, units: int, *args: Any, reset_after: bool = True, **kwargs: Any) -> None:
        kwargs.pop("implementation", None)
        super().__init__(units, *args, **kwargs)
        self.reset_after = bool(reset_after)

    def _bias_shape(self) -> tuple:
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def call(self, inputs: Any, states: Any = None, training: Any = None, **kwargs: Any) -> Any:
        h_prev = states[0] if isinstance(states, (list, tuple)) else states
        # The recurrent dropout mask drops h_prev in its projections, not in the final mix.
        inputs, h_proj = self._dropped(inputs, h_prev, training)
        mx = matmul(inputs, self.kernel)
        if self.use_bias:
            mx = mx + (self.bias[0] if self.reset_after else self.bias)
        x_z, x_r, x_h = split(mx, 3, axis=-1)
        u_z, u_r, u_h = split(self.recurrent_kernel, 3, axis=-1)
        if self.reset_after:
            inner = matmul(h_proj, self.recurrent_kernel)
            if self.use_bias:
                inner = inner + self.bias[1]
            r_z, r_r, r_h = split(inner, 3, axis=-1)
            z = self.recurrent_activation(x_z + r_z)
            r = self.recurrent_activation(x_r + r_r)
            hh = self.activation(x_h + r * r_h)
        else:
            z = self.recurrent_activation(x_z + matmul(h_proj, u_z))
            r = self.recurrent_activation(x_r + matmul(h_proj, u_r))
            hh = self.activation(x_h + matmul(r * h_proj, u_h))
        h = z * h_prev + (1.0 - z) * hh
        return h, [h]


class RNN(Layer):
    """Runs a cell over the time axis of ``(batch, time, features)`` inputs:
    the last output (or every step's with ``return_sequences``), and the final
    states with ``return_state``. With a Keras mask (``mask=``, or carried from
    ``Embedding(mask_zero=True)`` / ``Masking``) a masked step keeps the previous
    states and repeats the previous output (zeros with ``zero_output_for_mask``), as
    Keras. ``stateful=True`` starts each call from the final states of the last one
    (``reset_state()`` zeros them); the cells' ``dropout`` / ``recurrent_dropout``
    apply when ``training``. TF equivalent: ``tf.keras.layers.RNN``."""

    supports_masking = True
    # The stateful states are no weights of the layer (Keras does not track them).
    _TF_MODULE_IGNORED_PROPERTIES = frozenset({"states"})

    def __init__(self, cell: Any, return_sequences: bool = False, return_state: bool = False,
                 go_backwards: bool = False, stateful: bool = False, unroll: bool = False,
                 zero_output_for_mask: bool = False, **kwargs: Any) -> None:
        kwargs.pop("time_major", None)
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = bool(stateful)
        self.unroll = bool(unroll)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.states: list[Any] | None = None
        self.dtype = getattr(cell, "dtype", "float32")

    def build(self, input_shape: Any) -> None:
        if input_shape is None or len(input_shape) != 3:
            raise ValueError(f"{type(self).__name__} expects inputs of shape (batch, time, features), "
                             f"got {input_shape}")
        if not self.cell.built:
            self.cell.build((input_shape[0], input_shape[-1]))
            self.cell.built = True
        self.built = True

    def _make_states(self, batch: int) -> None:
        """The variables a ``stateful`` layer carries its states in (made by its first
        call on real data, of that call's batch size)."""
        from .._everyday import init_scope
        from .._variable import Variable

        with init_scope():  # made once, also when the first call is inside a gt.function
            self.states = [Variable(v, trainable=False, name=f"{self.name}/rnn_state", dtype=v.dtype)
                           for v in self.cell.get_initial_state(batch)]

    def reset_state(self) -> None:
        """Zeros the states a ``stateful`` layer carries between calls.
        TF equivalent: ``tf.keras.layers.RNN.reset_state``."""
        if self.states is not None:
            from .._gradtape import zeros_like

            for v in self.states:
                v.assign(zeros_like(v))

    def reset_states(self, states: Any = None) -> None:
        """The Keras 2 name of ``reset_state`` (``states``: values to set instead of zeros)."""
        if states is None or self.states is None:
            self.reset_state()
            return
        values = list(states) if isinstance(states, (list, tuple)) else [states]
        if len(values) != len(self.states):
            raise ValueError(f"{self.name} expects {len(self.states)} state values, got {len(values)}")
        for v, value in zip(self.states, values):
            v.assign(convert_to_tensor(value, dtype=v.dtype))

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        out = mask if self.return_sequences else None
        if self.return_state:
            return [out, *(None for _ in self.cell.get_initial_state(0))]
        return out

    def call(self, inputs: Any, initial_state: Any = None, training: Any = None, mask: Any = None,
             **kwargs: Any) -> Any:
        from .._gradtape import cast, expand_dims, where, zeros_like

        x = inputs
        if x.ndim != 3:
            raise ValueError(f"{type(self).__name__} expects inputs of shape (batch, time, features), "
                             f"got {tuple(x.shape)}")
        if int(x.shape[1]) == 0:
            raise ValueError(f"{type(self).__name__} needs at least one time step, got shape {tuple(x.shape)}")
        batch = int(x.shape[0])
        carry = self.stateful and not in_example_run()
        if carry and self.states is None:
            self._make_states(batch)
        if carry and self.states is not None and int(self.states[0].shape[0]) != batch:
            raise ValueError(f"{self.name} is stateful with batch size {int(self.states[0].shape[0])}, "
                             f"called on a batch of {batch}; call reset_state() or keep the batch size")
        if isinstance(mask, (list, tuple)) and mask and all(m is None or isinstance(m, Tensor) for m in mask):
            mask = mask[0]  # the masks of several inputs: the sequence's comes first
        if mask is not None:
            mask = cast(convert_to_tensor(mask), "bool")
            if tuple(mask.shape) != tuple(x.shape[:2]):
                raise ValueError(f"{type(self).__name__}: the mask must have shape (batch, time) = "
                                 f"{tuple(x.shape[:2])}, got {tuple(mask.shape)}")
        if batch == 0:
            # An empty batch: empty outputs and states, without a loop over the steps.
            n = [self.cell.units] * len(self.cell.get_initial_state(0))
            y = zeros([0, int(x.shape[1]), n[0]] if self.return_sequences else [0, n[0]], dtype=x.dtype)
            return [y, *(zeros([0, u], dtype=x.dtype) for u in n)] if self.return_state else y
        if self.go_backwards:
            x = _reverse_time(x)
            if mask is not None:
                mask = _reverse_time(mask)
        if initial_state is not None:
            states = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
            states = [convert_to_tensor(s) for s in states]
        elif carry and self.states is not None:
            states = [v.read_value() for v in self.states]
        else:
            states = self.cell.get_initial_state(batch)
        for reset in ("reset_dropout_mask", "reset_recurrent_dropout_mask"):
            if hasattr(self.cell, reset):
                getattr(self.cell, reset)()
        step_masks = [None] * int(x.shape[1]) if mask is None else unstack(expand_dims(mask, -1), axis=1)
        outputs: list[Any] = []
        cell_kwargs = {"training": training} if training is not None else {}
        for x_t, m in zip(unstack(x, axis=1), step_masks):
            out, new_states = self.cell(x_t, states, **cell_kwargs)
            new_states = list(new_states) if isinstance(new_states, (list, tuple)) else [new_states]
            if m is not None:
                # A masked step: the states carry over; the output repeats the last one (or is zeros).
                held = zeros_like(out) if self.zero_output_for_mask or not outputs else outputs[-1]
                out = where(m, out, held)
                new_states = [where(m, new, old) for new, old in zip(new_states, states)]
            outputs.append(out)
            states = new_states
        if carry and self.states is not None:
            for v, value in zip(self.states, states):
                v.assign(value)
        y = stack(outputs, axis=1) if self.return_sequences else outputs[-1]
        if self.return_state:
            return [y, *states]
        return y


class _Recurrent(RNN):
    _cell: Any = None

    def __init__(self, units: int, activation: Any = "tanh", recurrent_activation: Any = "sigmoid",
                 use_bias: bool = True, kernel_initializer: Any = "glorot_uniform",
                 recurrent_initializer: Any = "orthogonal", bias_initializer: Any = "zeros",
                 return_sequences: bool = False, return_state: bool = False, go_backwards: bool = False,
                 stateful: bool = False, unroll: bool = False, dtype: Any = "float32", name: str | None = None,
                 **kwargs: Any) -> None:
        cell_kwargs = {k: kwargs.pop(k) for k in list(kwargs) if k in (
            "unit_forget_bias", "reset_after", "dropout", "recurrent_dropout", "implementation", "seed",
            "kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "kernel_constraint",
            "recurrent_constraint", "bias_constraint")}
        kwargs.pop("activity_regularizer", None)
        kwargs.pop("use_cudnn", None)
        params = dict(activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                      recurrent_initializer=recurrent_initializer, bias_initializer=bias_initializer, dtype=dtype)
        if type(self)._cell is not SimpleRNNCell:
            params["recurrent_activation"] = recurrent_activation
        cell = type(self)._cell(units, name=f"{name or type(self).__name__.lower()}_cell", **params, **cell_kwargs)
        super().__init__(cell, return_sequences, return_state, go_backwards, stateful, unroll, name=name, **kwargs)
        self.units = cell.units


class SimpleRNN(_Recurrent):
    """A fully connected RNN. TF equivalent: ``tf.keras.layers.SimpleRNN``.

    >>> import gradtape as gt
    >>> gt.layers.SimpleRNN(4, return_sequences=True)(gt.ones([2, 5, 3])).shape
    TensorShape([2, 5, 4])
    """

    _cell = SimpleRNNCell


class LSTM(_Recurrent):
    """Long short-term memory. TF equivalent: ``tf.keras.layers.LSTM``."""

    _cell = LSTMCell


class GRU(_Recurrent):
    """Gated recurrent unit (``reset_after=True``, as Keras 3). TF equivalent:
    ``tf.keras.layers.GRU``."""

    _cell = GRUCell


class Bidirectional(Layer):
    """Runs ``layer`` forwards and a copy backwards and merges the outputs
    (``merge_mode``: ``"concat"``, ``"sum"``, ``"mul"``, ``"ave"`` or ``None`` for a list);
    a Keras mask goes to both directions. TF equivalent: ``tf.keras.layers.Bidirectional``."""

    supports_masking = True

    def __init__(self, layer: Any, merge_mode: str | None = "concat", backward_layer: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(layer, RNN):
            raise ValueError(f"Bidirectional expects an RNN layer, got {layer!r}")
        if merge_mode not in ("concat", "sum", "mul", "ave", None):
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. "
                             "Merge mode should be one of {'sum', 'mul', 'ave', 'concat', None}")
        if backward_layer is None:
            cell = layer.cell
            kw = dict(activation=cell.activation, use_bias=cell.use_bias, return_sequences=layer.return_sequences,
                      return_state=layer.return_state, go_backwards=not layer.go_backwards, dtype=cell.dtype,
                      stateful=layer.stateful, dropout=cell.dropout, recurrent_dropout=cell.recurrent_dropout,
                      seed=cell.seed, name=f"backward_{layer.name}")
            if not isinstance(cell, SimpleRNNCell):
                kw["recurrent_activation"] = cell.recurrent_activation
            backward_layer = type(layer)(cell.units, **kw)
        self.forward_layer = layer
        self.backward_layer = backward_layer
        self.merge_mode = merge_mode
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        # As Keras: with a mask, each direction's masked steps give zeros in the sequences.
        layer.zero_output_for_mask = backward_layer.zero_output_for_mask = self.return_sequences
        self.dtype = layer.dtype

    @property
    def variables(self) -> list[Any]:  # type: ignore[override]
        """The forward layer's variables, then the backward layer's (Keras' order)."""
        return [*self.forward_layer.variables, *self.backward_layer.variables]

    weights = variables

    def reset_state(self) -> None:
        """Zeros both directions' carried states (``stateful`` layers)."""
        self.forward_layer.reset_state()
        self.backward_layer.reset_state()

    reset_states = reset_state

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        out: Any = mask if self.return_sequences else None
        if self.merge_mode is None:
            out = [out, out]
        if self.return_state:
            n = len(self.forward_layer.cell.get_initial_state(0))
            return [*(out if isinstance(out, list) else [out]), *(None for _ in range(2 * n))]
        return out

    def call(self, inputs: Any, training: Any = None, mask: Any = None, **kwargs: Any) -> Any:
        fwd = self.forward_layer(inputs, training=training, mask=mask)
        bwd = self.backward_layer(inputs, training=training, mask=mask)
        states: list[Any] = []
        if self.forward_layer.return_state:
            fwd, *fs = fwd
            bwd, *bs = bwd
            states = [*fs, *bs]
        if self.return_sequences:
            bwd = _reverse_time(bwd)
        if self.merge_mode == "concat":
            out: Any = concat([fwd, bwd], axis=-1)
        elif self.merge_mode == "sum":
            out = fwd + bwd
        elif self.merge_mode == "ave":
            out = (fwd + bwd) / 2.0
        elif self.merge_mode == "mul":
            out = fwd * bwd
        else:
            out = [fwd, bwd]
        if states:
            return [*(out if isinstance(out, list) else [out]), *states]
        return out
