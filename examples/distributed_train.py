"""The demo's model (``python -m gradtape.demo``) trained data-parallel on several processes.

    .venv/bin/mpiexec -n 2 .venv/bin/python examples/distributed_train.py

Each rank builds the same 1-32-32-1 tanh network, rank 0's initial weights are broadcast
to the others, and every step each rank computes the gradient on its own slice of the
global batch of 32; ``DistributedGradientTape`` averages the gradients over the ranks (in
buckets, while the backward pass runs), so every rank applies the same update and the
weights stay identical. Same data, schedule and epochs as the demo: the fit is the same.
Rank 0 prints the progress; the last line checks that the ranks agree.
"""

import argparse
import math
import sys
import time

import numpy as np

import gradtape as gt
from gradtape import distributed as dist
from gradtape.demo import make_data


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=60)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compression", choices=["none", "fp16"], default="none")
    args = p.parse_args(argv)

    dist.init()
    rank, size = dist.rank(), dist.size()
    say = print if rank == 0 else (lambda *a, **k: None)

    batch_size, learning_rate = 32, 0.05
    if batch_size % size:
        raise SystemExit(f"the global batch of {batch_size} does not split over {size} ranks")
    local = batch_size // size

    x_train, y_train = make_data(512, args.seed)  # the same data on every rank
    gt.random.set_seed(args.seed + rank)  # different initial weights: the broadcast fixes them
    model = gt.layers.Sequential(
        [gt.layers.Dense(32, activation="tanh"), gt.layers.Dense(32, activation="tanh"), gt.layers.Dense(1)]
    )
    model(gt.constant(x_train[:1]))  # build the weights
    dist.broadcast_variables(model.variables, root_rank=0)

    n = len(x_train)
    steps = n // batch_size
    total_steps = args.epochs * steps

    def cosine_decay(step):
        return learning_rate * 0.5 * (1.0 + math.cos(math.pi * min(step, total_steps) / total_steps))

    opt = gt.optimizers.SGD(learning_rate=cosine_decay, momentum=0.9)
    compression = dist.Compression(args.compression)
    rng = np.random.default_rng(args.seed + 1)  # the same shuffles on every rank
    say(
        f"Training the demo's 1-32-32-1 tanh network on {size} processes: global batch {batch_size} "
        f"({local} per rank), {args.epochs} epochs, gradients averaged with MPI (compression {args.compression})"
    )
    t0 = time.perf_counter()
    first = last = 0.0
    for epoch in range(1, args.epochs + 1):
        order = rng.permutation(n)
        total = 0.0
        for s in range(steps):
            idx = order[s * batch_size:(s + 1) * batch_size][rank * local:(rank + 1) * local]
            xb, yb = gt.constant(x_train[idx]), gt.constant(y_train[idx])
            with gt.GradientTape() as tape:
                loss = gt.reduce_mean(gt.square(model(xb) - yb))
            tape = dist.DistributedGradientTape(tape, compression=compression)
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            total += float(dist.allreduce(loss))  # the global batch's loss, for the log
        epoch_loss = total / steps
        first = epoch_loss if epoch == 1 else first
        last = epoch_loss
        if epoch == 1 or epoch % 10 == 0 or epoch == args.epochs:
            say(f"  epoch {epoch:>3}/{args.epochs}  loss {epoch_loss:.4f}  {time.perf_counter() - t0:5.1f}s")

    x_test = np.linspace(-math.pi, math.pi, 200, dtype=np.float32).reshape(-1, 1)
    pred = model(gt.constant(x_test)).numpy()
    mse = float(np.mean((pred - np.sin(x_test)) ** 2))
    flat = np.concatenate([v.numpy().ravel() for v in model.variables])
    same = np.array_equal(flat, dist.broadcast(gt.constant(flat), root_rank=0).numpy())
    agree = float(dist.allreduce(gt.constant(1.0 if same else 0.0), op=dist.Sum))
    say(f"Fit: loss {first:.4f} -> {last:.4f} (noise floor 0.0100); on a clean test grid MSE {mse:.4f}")
    say(f"Weights identical on all {size} ranks: {agree == size}")
    return 0 if agree == size else 1


if __name__ == "__main__":
    sys.exit(main())
