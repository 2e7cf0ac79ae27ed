"""The training loops of five TF tutorials, written once against a module ``tf``.

``test_keras_tutorials.py`` runs each with ``tf = gradtape``; the expected numbers in
it came from running the same functions with ``tf = tensorflow`` (TF 2.21, Keras 3):
``python tests/python/keras_tutorials.py`` in an environment with TensorFlow prints
them. The tutorial code is as TF's pages have it, except: the data is small and
synthetic, the initial weights come from ``set_seeded_weights`` (so both runs start
from the same point) and shuffle buffers are a parameter (1, the identity, where the
numbers are compared).

Tutorials: "Basic training loops", "Introduction to modules" (its Keras part),
"Custom training: walkthrough", "TensorFlow 2 quickstart for experts", "Writing a
training loop from scratch".
"""

from __future__ import annotations

import numpy as np


def set_seeded_weights(model, seed):
    """Every variable of ``model`` set from a seeded numpy generator."""
    rng = np.random.default_rng(seed)
    model.set_weights([rng.uniform(-0.3, 0.3, size=tuple(w.shape)).astype(np.float32) for w in model.get_weights()])


# --- Basic training loops (the Keras part) -------------------------------------


def basic_training_loops(tf, seed=0):
    TRUE_W = 3.0
    TRUE_B = 2.0
    NUM_EXAMPLES = 201
    rng = np.random.default_rng(seed)
    x = np.linspace(-2, 2, NUM_EXAMPLES).astype(np.float32)
    noise = rng.normal(size=NUM_EXAMPLES).astype(np.float32)
    y = x * TRUE_W + TRUE_B + noise

    class MyModelKeras(tf.keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            # Initialize the weights to `5.0` and the bias to `0.0`
            # In practice, these should be randomly initialized
            self.w = tf.Variable(5.0)
            self.b = tf.Variable(0.0)

        def call(self, x):
            return self.w * x + self.b

    keras_model = MyModelKeras()

    # A custom loop with the Keras model.
    def loss(target_y, predicted_y):
        return tf.reduce_mean(tf.square(target_y - predicted_y))

    def train(model, x, y, learning_rate):
        with tf.GradientTape() as t:
            current_loss = loss(y, model(x))
        dw, db = t.gradient(current_loss, [model.w, model.b])
        model.w.assign_sub(learning_rate * dw)
        model.b.assign_sub(learning_rate * db)

    epochs = range(10)
    losses = []
    for epoch in epochs:  # noqa: B007 (the page's code)
        train(keras_model, x, y, learning_rate=0.1)
        losses.append(float(loss(y, keras_model(x))))

    keras_model = MyModelKeras()
    keras_model.compile(
        # By default, fit() uses tf.function().  You can
        # turn that off for debugging, but it is on now.
        run_eagerly=False,
        # Using a built-in optimizer, configuring as an object
        optimizer=tf.keras.optimizers.SGD(learning_rate=0.1),
        # Keras comes with built-in MSE error
        # However, you could use the loss function
        # defined above
        loss=tf.keras.losses.MSE,  # the page: `mean_squared_error` (not in TF 2.21's tf.keras)
    )
    history = keras_model.fit(x, y, epochs=10, batch_size=1000, verbose=0)
    return {
        "loop_losses": losses,
        "fit_losses": [float(v) for v in history.history["loss"]],
        "w": float(keras_model.w.numpy()),
        "b": float(keras_model.b.numpy()),
    }


# --- Introduction to modules (Keras layers and models) ------------------------


def intro_to_modules(tf, seed=0):
    class FlexibleDense(tf.keras.layers.Layer):
        # Note the added `**kwargs`, as Keras supports many arguments
        def __init__(self, out_features, **kwargs):
            super().__init__(**kwargs)
            self.out_features = out_features

        def build(self, input_shape):  # Create the state of the layer (weights)
            self.w = self.add_weight(shape=[input_shape[-1], self.out_features], initializer="random_normal", name="w")
            self.b = self.add_weight(shape=[self.out_features], initializer="zeros", name="b")

        def call(self, inputs):  # Defines the computation from inputs to outputs
            return tf.matmul(inputs, self.w) + self.b

    class MySequentialModel(tf.keras.Model):
        def __init__(self, name=None, **kwargs):
            super().__init__(**kwargs)

            self.dense_1 = FlexibleDense(out_features=3)
            self.dense_2 = FlexibleDense(out_features=2)

        def call(self, x):
            x = self.dense_1(x)
            return self.dense_2(x)

    # You have made a Keras model!
    my_sequential_model = MySequentialModel(name="the_model")

    # Call it on a tensor, with random results
    first = my_sequential_model(tf.constant([[2.0, 2.0, 2.0]]))
    set_seeded_weights(my_sequential_model, seed)
    subclassed = my_sequential_model(tf.constant([[2.0, 2.0, 2.0]]))

    inputs = tf.keras.Input(shape=[3])

    x = FlexibleDense(3)(inputs)
    x = FlexibleDense(2)(x)

    my_functional_model = tf.keras.Model(inputs=inputs, outputs=x)

    my_functional_model.summary(print_fn=lambda *a, **k: None)
    set_seeded_weights(my_functional_model, seed)
    functional = my_functional_model(tf.constant([[2.0, 2.0, 2.0]]))
    return {
        "first_shape": list(first.shape),
        "n_variables": len(my_sequential_model.variables),
        "n_submodules": len(my_sequential_model.layers),
        "subclassed": np.asarray(subclassed).astype(np.float64).tolist(),
        "functional": np.asarray(functional).astype(np.float64).tolist(),
    }


# --- Custom training: walkthrough ---------------------------------------------


def penguin_data(seed=0, n=120):
    """Four features and three classes, in the spirit of the penguins data."""
    rng = np.random.default_rng(seed)
    centers = np.array([[0.4, 0.6, 0.3, 0.4], [0.7, 0.3, 0.6, 0.7], [0.5, 0.8, 0.8, 0.3]], np.float32)
    labels = rng.integers(0, 3, size=n)
    features = centers[labels] + rng.normal(scale=0.1, size=(n, 4)).astype(np.float32)
    return features.astype(np.float32), labels.astype(np.int64)


def custom_training_walkthrough(tf, seed=0, num_epochs=21):
    features, labels = penguin_data(seed)
    ds_train_batch = tf.data.Dataset.from_tensor_slices((features, labels)).batch(32)

    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(10, activation=tf.nn.relu, input_shape=(4,)),  # input shape required
            tf.keras.layers.Dense(10, activation=tf.nn.relu),
            tf.keras.layers.Dense(3),
        ]
    )
    set_seeded_weights(model, seed)

    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def loss(model, x, y, training):
        # training=training is needed only if there are layers with different
        # behavior during training versus inference (e.g. Dropout).
        y_ = model(x, training=training)

        return loss_object(y_true=y, y_pred=y_)

    features_batch, labels_batch = next(iter(ds_train_batch))
    first_loss = loss(model, features_batch, labels_batch, training=False)

    def grad(model, inputs, targets):
        with tf.GradientTape() as tape:
            loss_value = loss(model, inputs, targets, training=True)
        return loss_value, tape.gradient(loss_value, model.trainable_variables)

    optimizer = tf.keras.optimizers.SGD(learning_rate=0.01)

    # Keep results for plotting
    train_loss_results = []
    train_accuracy_results = []
    printed = []

    for epoch in range(num_epochs):
        epoch_loss_avg = tf.keras.metrics.Mean()
        epoch_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()

        # Training loop - using batches of 32
        for x, y in ds_train_batch:
            # Optimize the model
            loss_value, grads = grad(model, x, y)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))

            # Track progress
            epoch_loss_avg.update_state(loss_value)  # Add current batch loss
            # Compare predicted label to actual label
            # training=True is needed only if there are layers with different
            # behavior during training versus inference (e.g. Dropout).
            epoch_accuracy.update_state(y, model(x, training=True))

        # End epoch
        train_loss_results.append(float(epoch_loss_avg.result()))
        train_accuracy_results.append(float(epoch_accuracy.result()))

        if epoch % 10 == 0:
            printed.append(
                "Epoch {:03d}: Loss: {:.3f}, Accuracy: {:.3%}".format(  # noqa: UP032 (the page's code)
                    epoch, epoch_loss_avg.result(), epoch_accuracy.result()
                )
            )

    test_accuracy = tf.keras.metrics.Accuracy()
    ds_test_batch = tf.data.Dataset.from_tensor_slices((features[:40], labels[:40])).batch(10)
    for x, y in ds_test_batch:
        # training=False is needed only if there are layers with different
        # behavior during training versus inference (e.g. Dropout).
        logits = model(x, training=False)
        prediction = tf.math.argmax(logits, axis=1, output_type=tf.int64)
        test_accuracy(prediction, y)

    predict_dataset = tf.convert_to_tensor(
        [
            [
                0.3,
                0.8,
                0.4,
                0.5,
            ],
            [
                0.4,
                0.1,
                0.8,
                0.5,
            ],
            [0.7, 0.9, 0.8, 0.4],
        ]
    )
    predictions = model(predict_dataset, training=False)
    probs = []
    for i, logits in enumerate(predictions):  # noqa: B007 (the page's code)
        class_idx = tf.math.argmax(logits).numpy()
        p = tf.nn.softmax(logits)[class_idx]
        probs.append((int(class_idx), float(p)))
    return {
        "first_loss": float(first_loss),
        "losses": train_loss_results,
        "accuracies": train_accuracy_results,
        "printed": printed,
        "test_accuracy": float(test_accuracy.result()),
        "predictions": probs,
    }


# --- TensorFlow 2 quickstart for experts ---------------------------------------


def mnist_like(seed=0, n=64, size=8):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 10, size=n).astype(np.uint8)
    x = rng.uniform(0, 255, size=(n, size, size)) * 0.3
    for i, label in enumerate(y):  # a class-dependent bright row
        x[i, label % size, :] += 150
    return x.clip(0, 255).astype(np.uint8), y


def quickstart_for_experts(tf, seed=0, shuffle_buffer=1, epochs=3):
    x_train, y_train = mnist_like(seed)
    x_test, y_test = mnist_like(seed + 1, n=32)
    x_train, x_test = x_train / 255.0, x_test / 255.0

    # Add a channels dimension
    x_train = x_train[..., tf.newaxis].astype("float32")
    x_test = x_test[..., tf.newaxis].astype("float32")

    train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(shuffle_buffer).batch(16)

    test_ds = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(16)

    class MyModel(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.conv1 = tf.keras.layers.Conv2D(4, 3, activation="relu")
            self.flatten = tf.keras.layers.Flatten()
            self.d1 = tf.keras.layers.Dense(16, activation="relu")
            self.d2 = tf.keras.layers.Dense(10)

        def call(self, x):
            x = self.conv1(x)
            x = self.flatten(x)
            x = self.d1(x)
            return self.d2(x)

    # Create an instance of the model
    model = MyModel()
    model(x_train[:1])
    set_seeded_weights(model, seed)

    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    optimizer = tf.keras.optimizers.Adam()

    train_loss = tf.keras.metrics.Mean(name="train_loss")
    train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")

    test_loss = tf.keras.metrics.Mean(name="test_loss")
    test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="test_accuracy")

    @tf.function
    def train_step(images, labels):
        with tf.GradientTape() as tape:
            # training=True is only needed if there are layers with different
            # behavior during training versus inference (e.g. Dropout).
            predictions = model(images, training=True)
            loss = loss_object(labels, predictions)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))

        train_loss(loss)
        train_accuracy(labels, predictions)

    @tf.function
    def test_step(images, labels):
        # training=False is only needed if there are layers with different
        # behavior during training versus inference (e.g. Dropout).
        predictions = model(images, training=False)
        t_loss = loss_object(labels, predictions)

        test_loss(t_loss)
        test_accuracy(labels, predictions)

    EPOCHS = epochs
    printed = []
    history = []
    for epoch in range(EPOCHS):
        # Reset the metrics at the start of the next epoch
        train_loss.reset_state()
        train_accuracy.reset_state()
        test_loss.reset_state()
        test_accuracy.reset_state()

        for images, labels in train_ds:
            train_step(images, labels)

        for test_images, test_labels in test_ds:
            test_step(test_images, test_labels)

        printed.append(
            f"Epoch {epoch + 1}, "
            f"Loss: {train_loss.result():0.2f}, "
            f"Accuracy: {train_accuracy.result() * 100:0.2f}, "
            f"Test Loss: {test_loss.result():0.2f}, "
            f"Test Accuracy: {test_accuracy.result() * 100:0.2f}"
        )
        history.append(
            [
                float(train_loss.result()),
                float(train_accuracy.result()),
                float(test_loss.result()),
                float(test_accuracy.result()),
            ]
        )
    return {"history": history, "printed": printed}


# --- Writing a training loop from scratch ---------------------------------------


def training_loop_from_scratch(tf, seed=0, shuffle_buffer=1, epochs=2):
    keras = tf.keras
    inputs = keras.Input(shape=(64,), name="digits")
    x1 = keras.layers.Dense(32, activation="relu")(inputs)
    x2 = keras.layers.Dense(32, activation="relu")(x1)
    outputs = keras.layers.Dense(10, name="predictions")(x2)
    model = keras.Model(inputs=inputs, outputs=outputs)
    set_seeded_weights(model, seed)

    # Instantiate an optimizer.
    optimizer = keras.optimizers.SGD(learning_rate=1e-2)
    # Instantiate a loss function.
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    # Prepare the training dataset.
    batch_size = 16
    x_train, y_train = mnist_like(seed, n=80)
    x_train = np.reshape(x_train, (-1, 64)).astype("float32") / 255.0
    x_test, y_test = mnist_like(seed + 1, n=32)
    x_test = np.reshape(x_test, (-1, 64)).astype("float32") / 255.0

    # Reserve 16 samples for validation.
    x_val = x_train[-16:]
    y_val = y_train[-16:]
    x_train = x_train[:-16]
    y_train = y_train[:-16]

    # Prepare the training dataset.
    train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train))
    train_dataset = train_dataset.shuffle(buffer_size=shuffle_buffer).batch(batch_size)

    # Prepare the validation dataset.
    val_dataset = tf.data.Dataset.from_tensor_slices((x_val, y_val))
    val_dataset = val_dataset.batch(batch_size)

    # Prepare the metrics.
    train_acc_metric = keras.metrics.SparseCategoricalAccuracy()
    val_acc_metric = keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss_value = loss_fn(y, logits)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply(grads, model.trainable_weights)
        train_acc_metric.update_state(y, logits)
        return loss_value

    @tf.function
    def test_step(x, y):
        val_logits = model(x, training=False)
        val_acc_metric.update_state(y, val_logits)

    losses, train_accs, val_accs = [], [], []
    for epoch in range(epochs):  # noqa: B007 (the page's code)
        # Iterate over the batches of the dataset.
        for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):  # noqa: B007
            loss_value = train_step(x_batch_train, y_batch_train)
            losses.append(float(loss_value))

        # Display metrics at the end of each epoch.
        train_acc = train_acc_metric.result()
        train_accs.append(float(train_acc))

        # Reset training metrics at the end of each epoch
        train_acc_metric.reset_state()

        # Run a validation loop at the end of each epoch.
        for x_batch_val, y_batch_val in val_dataset:
            test_step(x_batch_val, y_batch_val)

        val_acc = val_acc_metric.result()
        val_acc_metric.reset_state()
        val_accs.append(float(val_acc))

    # The same network through compile / fit / evaluate / predict.
    model2 = keras.Model(inputs=inputs, outputs=outputs)  # shares the layers (trained above)
    set_seeded_weights(model2, seed)
    model2.compile(
        optimizer=keras.optimizers.RMSprop(learning_rate=1e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    history = model2.fit(
        x_train, y_train, batch_size=16, epochs=2, validation_data=(x_val, y_val), shuffle=False, verbose=0
    )
    evaluation = model2.evaluate(x_test, y_test, batch_size=16, verbose=0)
    predictions = model2.predict(x_test[:3], verbose=0)
    return {
        "losses": losses,
        "train_accs": train_accs,
        "val_accs": val_accs,
        "fit_history": {k: [float(v) for v in vs] for k, vs in history.history.items()},
        "evaluate": [float(v) for v in evaluation],
        "predictions": np.asarray(predictions).astype(np.float64).tolist(),
    }


TUTORIALS = {
    "basic_training_loops": basic_training_loops,
    "intro_to_modules": intro_to_modules,
    "custom_training_walkthrough": custom_training_walkthrough,
    "quickstart_for_experts": quickstart_for_experts,
    "training_loop_from_scratch": training_loop_from_scratch,
}


if __name__ == "__main__":  # the reference numbers, with TensorFlow
    import json

    import tensorflow

    print(json.dumps({name: fn(tensorflow) for name, fn in TUTORIALS.items()}))
