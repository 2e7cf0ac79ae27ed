"""Data-parallel training over MPI, with Horovod's tape API.

``gt.distributed`` runs on MPI through ``mpi4py`` — the optional extra
``pip install "gradtape[mpi]"`` (mpi4py and the ``mpich`` wheel: no system MPI needed).
mpi4py is imported on first use, never by ``import gradtape``. Launch one process per
rank::

    mpiexec -n 2 python train.py

and in ``train.py`` (the names are Horovod's for TF users, ``hvd`` → ``gt.distributed``)::

    import gradtape as gt
    from gradtape import distributed as dist

    dist.init()
    model = ...                                   # the same model on every rank
    opt = gt.optimizers.SGD(0.1)
    first = True
    for xb, yb in my_shard_of_the_data:           # each rank its own slice of the batch
        with gt.GradientTape() as tape:
            loss = ...
        tape = dist.DistributedGradientTape(tape)
        grads = tape.gradient(loss, model.trainable_variables)   # averaged over ranks
        opt.apply_gradients(zip(grads, model.trainable_variables))
        if first:                                  # start every rank from rank 0's weights
            dist.broadcast_variables(model.variables, root_rank=0)
            first = False

How the gradients travel: ``DistributedGradientTape.gradient`` asks the backward sweep to
hand over each gradient as soon as it is final (``_Tape._gradient``'s ``ready`` hook; the
sweep calls it when it has passed every recorded op that reads the source). Gradients
are packed into buckets of about ``bucket_bytes`` (in reverse source order, the order the
sweep finishes them: the last layer first) and each full bucket is reduced with a
non-blocking ``MPI_Iallreduce`` while the sweep goes on with the earlier layers, as
PyTorch's DistributedDataParallel does. Bucket buffers are kept and reused from step to
step. ``compression=Compression.fp16`` sends floating gradients as float16 (half the
bytes; worth it on a slow network, not on one machine).

Every collective first checks, with one 16-byte allreduce, that all ranks pass the same
shapes and dtypes, and raises ``ValueError`` naming what differs otherwise (MPI itself
would hang or mix up buffers). After ``init()`` an uncaught exception on any rank prints
its traceback and aborts every rank (``MPI_Abort``), so a failing rank never leaves the
others waiting in a collective. A rank that leaves otherwise (``sys.exit(n)``, a
``SystemExit``, the end of its script) tells the others at exit; a rank that is waiting
for it in a collective, or starts one later, aborts the job after a grace of two seconds
(every rank exits non-zero) instead of waiting forever. At a normal end every rank leaves and each waits for the
others' word before MPI finishes, so the job exits 0.

Inside a ``gt.function`` the collectives are graph nodes that run the MPI call on every
call of the graph (not while tracing: tracing gives placeholders of the right shape, so
ranks may retrace independently; only ``allgather`` exchanges its row counts then),
with Horovod's gradients: ``allreduce``'s is the allreduce of the upstream gradient,
``allgather``'s this rank's slice of the averaged upstream gradient, ``broadcast``'s
the averaged upstream gradient on the root (zeros elsewhere). ``DistributedGradientTape.gradient``,
``DistributedOptimizer`` and ``broadcast_variables`` work in a traced training step
too; there the gradients are reduced once the backward pass has finished (the overlap
is eager only).
"""

from __future__ import annotations

import atexit
import contextlib
import enum
import hashlib
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any, Callable

import numpy as np

from . import _gradtape as _native
from . import _nest

__all__ = [
    "DEFAULT_BUCKET_BYTES", "Average", "Compression", "DistributedGradientTape", "DistributedOptimizer",
    "ReduceOp", "Sum",
    "allgather", "allreduce", "broadcast", "broadcast_variables", "init", "is_initialized",
    "local_rank", "local_size", "rank", "shutdown", "size",
]

_EXTRA = 'gt.distributed needs mpi4py and an MPI library: pip install "gradtape[mpi]"'

# Bucket size: PyTorch DDP's default (25 MiB).
DEFAULT_BUCKET_BYTES = 25 * 1024 * 1024


class ReduceOp(enum.Enum):
    """How ``allreduce`` combines the ranks' tensors. Horovod: ``hvd.Average``, ``hvd.Sum``."""

    AVERAGE = "average"
    SUM = "sum"


Average = ReduceOp.AVERAGE
Sum = ReduceOp.SUM


class Compression(enum.Enum):
    """How gradients travel. Horovod: ``hvd.Compression.none`` / ``hvd.Compression.fp16``.

    ``fp16`` sends floating tensors (float32, float64) as float16, halving (or quartering)
    the bytes on the wire at the price of float16's precision (3 significant digits,
    range ±65504); the result has the tensor's own dtype. Other dtypes travel as they are.
    """

    none = "none"
    fp16 = "fp16"


class _State:
    MPI: Any = None
    comm: Any = None
    local: Any = None
    trace_comm: Any = None
    f16_sum: Any = None
    hooks_installed = False
    # Departures (see _Departures): the control communicator's watch, or None.
    departures: Any = None
    # The collective this process is waiting in (its name), for the watchdog.
    waiting_in: Any = None
    waiting_depth = 0
    waiting_seq = 0  # counts the collectives entered


_state = _State()
# Set while a collective's graph node is being traced (its callback gives placeholders).
_tracing_node = threading.local()


def _mpi() -> Any:
    """mpi4py's ``MPI`` module, imported on first use (importing it starts MPI)."""
    if _state.MPI is None:
        try:
            from mpi4py import MPI
        except ImportError as e:
            raise ImportError(f"{_EXTRA} (importing mpi4py failed: {e})") from e
        _state.MPI = MPI
    return _state.MPI


def init(comm: Any = None, abort_on_error: bool = True) -> None:
    """Starts MPI (if mpi4py has not) and sets the communicator the collectives use: a
    duplicate of ``comm`` (default ``MPI.COMM_WORLD``). Horovod: ``hvd.init``.

    With ``abort_on_error`` (the default), an exception no code catches, on any thread
    of any rank, prints that rank's traceback and calls ``MPI_Abort``: every rank exits
    non-zero at once instead of waiting forever for the failed one in a collective. A
    rank that exits (``sys.exit``, ``SystemExit``, the end of the script) tells the
    others and waits for their word; one that is waiting for it in a collective, or
    starts one afterwards, aborts the job (after two seconds' grace). Calling ``init`` again is a no-op.
    """
    MPI = _mpi()
    if _state.comm is not None:
        return
    base = MPI.COMM_WORLD if comm is None else comm
    _state.comm = base.Dup()
    _state.local = _state.comm.Split_type(MPI.COMM_TYPE_SHARED, key=_state.comm.Get_rank())
    _state.trace_comm = base.Dup()
    if abort_on_error and not _state.hooks_installed:
        _install_abort_hooks()
    if abort_on_error and _state.comm.Get_size() > 1:
        _state.departures = _Departures(base.Dup())


def is_initialized() -> bool:
    """Whether ``init()`` has run (and ``shutdown()`` not since)."""
    return _state.comm is not None


def shutdown() -> None:
    """Frees the communicators ``init`` made (MPI itself ends at interpreter exit).
    Horovod: ``hvd.shutdown``. Like leaving the script, it waits until every rank has
    left (or shut down) too."""
    if _state.departures is not None:
        _state.departures.leave()
        _state.departures = None
    for c in (_state.local, _state.trace_comm, _state.comm):
        if c is not None:
            c.Free()
    _state.comm = _state.local = _state.trace_comm = None


def _where() -> str:
    comm = _state.comm
    return f"rank {comm.Get_rank()} of {comm.Get_size()}" if comm is not None else "a rank"


def _abort(message: str) -> None:
    """Prints ``gt.distributed: {message}; aborting every rank`` and calls MPI_Abort."""
    sys.stderr.write(f"gt.distributed: {message}; aborting every rank (MPI_Abort)\n")
    sys.stderr.flush()
    sys.stdout.flush()
    # mpiexec forwards each rank's output through its process manager; MPI_Abort kills
    # the job at once, and output still on its way (the traceback) can be lost. Give
    # the forwarding a moment first.
    time.sleep(0.25)
    _mpi().COMM_WORLD.Abort(1)


def _install_abort_hooks() -> None:
    prev_sys = sys.excepthook
    prev_thread = threading.excepthook

    def abort(kind: str) -> None:
        _abort(f"{kind} on {_where()}")

    def excepthook(tp: Any, value: Any, tb: Any) -> None:
        prev_sys(tp, value, tb)
        if _state.comm is not None and not issubclass(tp, KeyboardInterrupt):
            abort("uncaught exception")

    def thread_excepthook(args: Any) -> None:
        prev_thread(args)
        if _state.comm is not None and not issubclass(args.exc_type, SystemExit):
            abort(f"uncaught exception in thread {args.thread.name if args.thread else '?'}")

    sys.excepthook = excepthook
    threading.excepthook = thread_excepthook
    _state.hooks_installed = True


class _Departures:
    """Ranks leaving: at exit each rank sends every other rank a word on a communicator
    of its own (``ctl``) and waits for theirs. A watchdog thread receives the words
    while the process runs: a word from a rank this process is waiting for in a
    collective (or starts one with later) means the collective can never finish, so the
    job is aborted. The watchdog gives the collective ``GRACE_S`` first: a rank may
    leave right after its part of a collective whose other parts are still finishing
    (a broadcast's root sends and returns before the others have received). Without
    MPI_THREAD_MULTIPLE there is no watchdog (and no such abort)."""

    TAG = 0x6774  # "gt"
    POLL_S = 0.05
    GRACE_S = 2.0

    def __init__(self, ctl: Any) -> None:
        MPI = _mpi()
        self.ctl = ctl
        self.me = ctl.Get_rank()
        self.n = ctl.Get_size()
        self.gone: list[int] = []
        self.lock = threading.Lock()
        self.buf = np.zeros(1, dtype=np.int64)
        self.status = MPI.Status()
        self.req: Any = ctl.Irecv([self.buf, MPI.INT64_T], source=MPI.ANY_SOURCE, tag=self.TAG)
        self.left = False
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None
        if MPI.Query_thread() == MPI.THREAD_MULTIPLE:
            self.thread = threading.Thread(target=self._watch, name="gt.distributed watchdog", daemon=True)
            self.thread.start()
        atexit.register(self._at_exit)

    def poll(self) -> list[int]:
        """Receives the words that have arrived; returns the ranks gone so far."""
        with self.lock:
            MPI = _mpi()
            while self.req is not None and self.req.Test(self.status):
                self.gone.append(self.status.Get_source())
                self.req = None
                if len(self.gone) < self.n - 1:
                    self.req = self.ctl.Irecv([self.buf, MPI.INT64_T], source=MPI.ANY_SOURCE, tag=self.TAG)
            return list(self.gone)

    def _watch(self) -> None:
        suspect: tuple[int, float] | None = None  # (collective, since when it waits for a rank gone)
        while not self.stop.wait(self.POLL_S):
            if not self.poll():
                continue
            what, seq = _state.waiting_in, _state.waiting_seq
            if what is None:
                suspect = None
                continue
            now = time.monotonic()
            if suspect is None or suspect[0] != seq:
                suspect = (seq, now)
            elif now - suspect[1] >= self.GRACE_S:
                self.abort_waiting(what)

    def abort_waiting(self, what: str) -> None:
        who = ", ".join(str(r) for r in self.gone)
        _abort(f"rank {who} left (exited) while {_where()} waits for it in {what}")

    def leave(self) -> None:
        """Tells every other rank this one is leaving and waits for their word."""
        if self.left:
            return
        self.left = True
        self.stop.set()
        if self.thread is not None and self.thread is not threading.current_thread():
            self.thread.join()
        MPI = _mpi()
        word = np.array([self.me], dtype=np.int64)
        sends = [self.ctl.Isend([word, MPI.INT64_T], dest=r, tag=self.TAG) for r in range(self.n) if r != self.me]
        while len(self.poll()) < self.n - 1:
            time.sleep(0.01)
        MPI.Request.Waitall(sends)
        self.ctl.Free()

    def _at_exit(self) -> None:
        if _state.departures is self:
            self.leave()
            _state.departures = None


@contextlib.contextmanager
def _waiting(what: str) -> Iterator[None]:
    """Marks the block as waiting for every rank in a collective: the watchdog aborts
    the job if it still waits after a rank has left."""
    outermost = _state.waiting_depth == 0
    _state.waiting_depth += 1
    if outermost:
        _state.waiting_seq += 1
        _state.waiting_in = what
    try:
        yield
    finally:
        _state.waiting_depth -= 1
        if outermost:
            _state.waiting_in = None


def _comm() -> Any:
    if _state.comm is None:
        raise RuntimeError("gt.distributed is not initialized: call gt.distributed.init() first")
    return _state.comm


def rank() -> int:
    """This process's rank, 0 … ``size() - 1``. Horovod: ``hvd.rank``."""
    return int(_comm().Get_rank())


def size() -> int:
    """The number of ranks. Horovod: ``hvd.size``."""
    return int(_comm().Get_size())


def local_rank() -> int:
    """This process's rank among the ranks on its machine. Horovod: ``hvd.local_rank``."""
    _comm()
    return int(_state.local.Get_rank())


def local_size() -> int:
    """The number of ranks on this machine. Horovod: ``hvd.local_size``."""
    _comm()
    return int(_state.local.Get_size())


# -- agreement between ranks ----------------------------------------------------------


def _check_same(what: str, desc: Any, detail: Any = None) -> None:
    """Raises ValueError on every rank unless every rank passed an equal ``desc`` (one
    16-byte allreduce; on a mismatch the ranks exchange ``detail`` to say what differs)."""
    comm = _comm()
    MPI = _mpi()
    h = int.from_bytes(hashlib.blake2b(repr(desc).encode(), digest_size=7).digest(), "little")
    buf = np.array([h, -h], dtype=np.int64)
    comm.Allreduce(MPI.IN_PLACE, buf, op=MPI.MAX)
    if int(buf[0]) == h and int(buf[1]) == -h:
        return
    everyone = comm.allgather(desc if detail is None else detail)
    lines = "; ".join(f"rank {r}: {d}" for r, d in enumerate(everyone))
    raise ValueError(f"gt.distributed.{what}: the ranks disagree on the tensors to combine ({lines})")


def _tensor(x: Any) -> Any:
    if isinstance(x, (_native.Tensor, _native.Variable)):
        return x
    return _native.convert_to_tensor(x)


def _node(fn: Callable[[list[Any]], list[Any]], inputs: list[Any],
          placeholder: Callable[[list[Any]], list[Any]]) -> list[Any]:
    """Inside a trace: ``fn`` (tensors in, tensors out; MPI calls) as a graph node that
    runs on every call of the graph. While tracing it gives ``placeholder``'s tensors
    instead (the right shapes and dtypes, no communication): ranks need not trace
    together, only call together."""

    def callback(tensors: list[Any]) -> list[Any]:
        if getattr(_tracing_node, "on", False):
            return [_native.identity(t) for t in placeholder(list(tensors))]
        return list(fn(list(tensors)))

    _tracing_node.on = True
    try:
        return list(_native._py_call(callback, list(inputs)))
    finally:
        _tracing_node.on = False


def _differentiable(x: Any, forward: Callable[[Any], Any], backward: Callable[[Any], Any],
                    placeholder: Callable[[Any], Any], backward_placeholder: Callable[[Any], Any]) -> Any:
    """``forward(x)`` (a collective on a concrete tensor) recorded with the gradient
    ``backward(dy)``: eagerly as it is, in a trace as a graph node. The gradient runs
    eagerly, when the tape's gradient is computed (in a traced step, on every call)."""
    from ._custom_gradient import _custom_gradient

    def run(t: Any) -> Any:
        if _native._is_tracing():
            return _node(lambda ts: [forward(ts[0])], [t], lambda ts: [placeholder(ts[0])])[0]
        return forward(t)

    if isinstance(x, _native.Variable):
        x = _native.identity(x)  # a read the tape sees (and a tensor for the node)
    if not (x.dtype.is_floating or x.dtype.is_complex):
        return run(x)

    def f(t: Any) -> Any:
        def grad(dy: Any) -> Any:
            # Tracing records the tape's gradient as one node and computes it once on
            # the placeholders: no communication then (and no node for it).
            was_tracing = _native._suspend_tracing()
            try:
                return backward_placeholder(dy) if was_tracing else backward(dy)
            finally:
                _native._resume_tracing(was_tracing)

        return run(t), grad

    return _custom_gradient(f, trace_gradient=False)(x)


def _reducible(t: Any, what: str) -> None:
    if t.dtype.name == "bool":
        raise TypeError(f"gt.distributed.{what}: bool tensors cannot be summed or averaged")


def _f16_sum() -> Any:
    """An MPI op summing float16 buffers (sent as uint16): numpy's float16 add, about
    twice as fast as MPICH's own float16 reduction."""
    if _state.f16_sum is None:
        MPI = _mpi()

        def add(inbuf: Any, inout: Any, datatype: Any) -> None:
            a = np.frombuffer(inbuf, dtype=np.float16)
            b = np.frombuffer(inout, dtype=np.float16)
            np.add(b, a, out=b)

        _state.f16_sum = MPI.Op.Create(add, commute=True)
    return _state.f16_sum


def _wire_dtype(dtype: np.dtype, compression: Compression) -> np.dtype:
    if compression is Compression.fp16 and dtype.kind == "f" and dtype.itemsize > 2:
        return np.dtype(np.float16)
    return dtype


def _iallreduce(send: np.ndarray, recv: np.ndarray) -> Any:
    """A non-blocking sum of ``send`` into ``recv`` over the ranks."""
    comm, MPI = _comm(), _mpi()
    if send.dtype == np.float16:
        u16 = MPI.UINT16_T
        return comm.Iallreduce([send.view(np.uint16), u16], [recv.view(np.uint16), u16], op=_f16_sum())
    return comm.Iallreduce(send, recv, op=MPI.SUM)


def _finish(buf: np.ndarray, out: np.ndarray, op: ReduceOp, n: int) -> None:
    """``out = buf / n`` (average) or ``out = buf`` (sum), casting to ``out``'s dtype."""
    if op is ReduceOp.AVERAGE:
        if out.dtype.kind in "iu":
            np.floor_divide(buf, n, out=out, casting="unsafe")
        else:
            np.multiply(buf, 1.0 / n, out=out, casting="unsafe")
    elif buf is not out:
        np.copyto(out, buf, casting="unsafe")


# -- collectives on tensors -----------------------------------------------------------


def _fresh(shape: tuple[int, ...], dtype: Any) -> tuple[Any, np.ndarray]:
    """A new tensor and a writeable view of its storage (MPI receives straight into it)."""
    return _native._fresh_buffer(list(shape), dtype)


def allreduce(
    tensor: Any, op: ReduceOp = Average, compression: Compression = Compression.none, name: Any = None
) -> Any:
    """The sum or average (``op=Average``, the default, as Horovod) of ``tensor`` over
    all ranks, a new tensor of the same shape and dtype on every rank. Horovod:
    ``hvd.allreduce``. The tensor's storage is sent as it is (no copy) and the result
    received straight into the new tensor's; integers average with floor division.
    Differentiable: the gradient is the same allreduce of the upstream gradient. In a
    ``gt.function``, a graph node that communicates on every call.
    ``name`` is accepted for Horovod's signature and unused."""
    del name
    t = _tensor(tensor)
    _reducible(t, "allreduce")
    op, compression = ReduceOp(op), Compression(compression)
    _comm()

    def reduce(x: Any) -> Any:
        return _allreduce_now(x, op, compression)

    return _differentiable(t, reduce, reduce, lambda x: x, lambda dy: dy)


def _allreduce_now(t: Any, op: ReduceOp, compression: Compression) -> Any:
    shape = tuple(t.shape)
    with _waiting("allreduce"):
        _check_same("allreduce", (shape, t.dtype.name, op.value, compression.value))
        src = np.asarray(t)
        if not src.flags.c_contiguous:
            src = np.ascontiguousarray(src)
        n = size()
        wire = _wire_dtype(src.dtype, compression)
        if wire == src.dtype:
            # Blocking: nothing to overlap here, and MPICH's blocking allreduce is faster
            # than its non-blocking one on large buffers. The result starts as a copy of
            # this rank's tensor and is reduced in place: one pass over the data fewer
            # than a zeroed receive buffer (MPI copies the send buffer into it first).
            comm, MPI = _comm(), _mpi()
            out, view = _native._fresh_copy(t)
            comm.Allreduce(MPI.IN_PLACE, view, op=MPI.SUM)
            _finish(view, view, op, n)
        else:
            out, view = _fresh(shape, t.dtype)
            send = np.multiply(src, 1.0 / n, dtype=wire) if op is ReduceOp.AVERAGE else src.astype(wire)
            recv = np.empty_like(send)
            _iallreduce(send, recv).Wait()
            np.copyto(view, recv, casting="unsafe")
        del view
    return out


def allgather(tensor: Any, name: Any = None) -> Any:
    """The ranks' tensors concatenated along the first axis, in rank order (they may
    differ in that axis only). Horovod: ``hvd.allgather``. Differentiable (Horovod's
    rule): the gradient is this rank's rows of the upstream gradient averaged over the
    ranks. In a ``gt.function``, a graph node that communicates on every call; tracing
    it exchanges the ranks' numbers of rows (every rank traces it at the same call)."""
    del name
    t = _tensor(tensor)
    shape = tuple(t.shape)
    if not shape:
        raise ValueError("gt.distributed.allgather: the tensor needs at least one axis (a scalar has none)")
    n = size()
    # The rows of every rank at the latest forward run (the gradient's slice; a traced
    # call's gradient function is made once, at the trace, so it reads this cell).
    rows: list[Any] = [None]

    def gather(x: Any) -> Any:
        out, firsts = _allgather_now(x)
        rows[0] = firsts
        return out

    def grad(dy: Any) -> Any:
        firsts = rows[0]
        total = int(dy.shape[0])
        if firsts is None or sum(firsts) != total:
            raise RuntimeError(
                f"gt.distributed.allgather's gradient: the upstream gradient has {total} rows, the gather "
                f"gave {firsts} (its gradient must follow its own forward call)"
            )
        me = rank()
        avg = _allreduce_now(dy, ReduceOp.AVERAGE, Compression.none)
        start = sum(firsts[:me])
        return _native.convert_to_tensor(np.array(np.asarray(avg)[start:start + firsts[me]]))

    # While tracing, the placeholder needs every rank's rows: the ranks exchange them on
    # a communicator kept for tracing (so the exchange never meets a call's collective).
    traced: list[int] = [shape[0]] * n
    if _native._is_tracing():
        with _waiting("allgather (while tracing)"):
            traced = [int(f) for f in _state.trace_comm.allgather(shape[0])]

    def placeholder(x: Any) -> Any:
        return _native.convert_to_tensor(np.zeros((sum(traced), *shape[1:]), dtype=np.asarray(x).dtype))

    def grad_placeholder(dy: Any) -> Any:
        start = sum(traced[: rank()])
        return _native.convert_to_tensor(np.array(np.asarray(dy)[start:start + traced[rank()]]))

    return _differentiable(t, gather, grad, placeholder, grad_placeholder)


def _allgather_now(t: Any) -> tuple[Any, list[int]]:
    shape = tuple(t.shape)
    with _waiting("allgather"):
        _check_same("allgather", (shape[1:], t.dtype.name), detail=(shape, t.dtype.name))
        comm = _comm()
        src = np.ascontiguousarray(np.asarray(t))
        firsts = [int(f) for f in comm.allgather(shape[0])]
        row = int(np.prod(shape[1:], dtype=np.int64))
        out, view = _fresh((sum(firsts), *shape[1:]), t.dtype)
        counts = [f * row for f in firsts]
        displs = [int(d) for d in np.cumsum([0, *counts[:-1]])]
        flat_send = src.reshape(-1)
        flat_recv = view.reshape(-1)
        if src.dtype == np.bool_:
            flat_send, flat_recv = flat_send.view(np.uint8), flat_recv.view(np.uint8)
        comm.Allgatherv(flat_send, [flat_recv, (counts, displs)])
        del view, flat_recv
    return out, firsts


def broadcast(tensor: Any, root_rank: int = 0, name: Any = None) -> Any:
    """``root_rank``'s tensor, as a new tensor on every rank. Horovod: ``hvd.broadcast``.
    Differentiable (Horovod's rule): on the root the gradient is the upstream gradient
    averaged over the ranks, elsewhere zeros. In a ``gt.function``, a graph node that
    communicates on every call."""
    del name
    t = _tensor(tensor)
    n = size()
    if not (isinstance(root_rank, int) and 0 <= root_rank < n):
        raise ValueError(f"gt.distributed.broadcast: root_rank must be an int in [0, {n}), got {root_rank!r}")

    def grad(dy: Any) -> Any:
        avg = _allreduce_now(dy, ReduceOp.AVERAGE, Compression.none)
        return avg if rank() == root_rank else _native.zeros_like(avg)

    return _differentiable(t, lambda x: _broadcast_now(x, root_rank), grad, lambda x: x, lambda dy: dy)


def _broadcast_now(t: Any, root_rank: int) -> Any:
    shape = tuple(t.shape)
    with _waiting("broadcast"):
        _check_same("broadcast", (shape, t.dtype.name, root_rank))
        comm = _comm()
        if comm.Get_rank() == root_rank:
            # Sent from the tensor's own storage; tensors are immutable, so the root's
            # result is its tensor.
            src = np.ascontiguousarray(np.asarray(t))
            comm.Bcast(src.view(np.uint8) if src.dtype == np.bool_ else src, root=root_rank)
            return t if isinstance(t, _native.Tensor) else _native.identity(t)
        out, view = _fresh(shape, t.dtype)
        comm.Bcast(view.view(np.uint8) if view.dtype == np.bool_ else view, root=root_rank)
        del view
    return out


def broadcast_variables(variables: Any, root_rank: int = 0) -> None:
    """Assigns ``root_rank``'s values to ``variables`` (a variable or a nested structure
    of them) on every rank: start training from the same weights. Horovod:
    ``hvd.broadcast_variables``. In a ``gt.function``, on every call."""
    flat = _nest.flatten(variables)
    for v in flat:
        if not isinstance(v, _native.Variable):
            raise TypeError(f"gt.distributed.broadcast_variables expects Variables, got {type(v).__name__}")
    n = size()
    if not (isinstance(root_rank, int) and 0 <= root_rank < n):
        raise ValueError(f"gt.distributed.broadcast_variables: root_rank must be an int in [0, {n}), got {root_rank!r}")
    if _native._is_tracing():
        values = _node(
            lambda ts: _broadcast_values(ts, flat, root_rank),
            [_native.identity(v) for v in flat],
            lambda ts: ts,
        )
        for v, val in zip(flat, values):
            v.assign(val)
        return
    for v, val in zip(flat, _broadcast_values([v for v in flat], flat, root_rank)):
        v.assign(val)


def _broadcast_values(values: list[Any], flat: list[Any], root_rank: int) -> list[Any]:
    """Root's ``values`` on every rank (``flat``: the variables, for the messages)."""
    with _waiting("broadcast_variables"):
        _check_same(
            "broadcast_variables",
            ([(tuple(v.shape), v.dtype.name) for v in values], root_rank),
            detail=[f"{v.name} {tuple(x.shape)} {x.dtype.name}" for v, x in zip(flat, values)],
        )
        comm = _comm()
        outs = []
        for x in values:
            out, view = _fresh(tuple(x.shape), x.dtype)
            if comm.Get_rank() == root_rank:
                np.copyto(view, np.asarray(x))
            comm.Bcast(view.view(np.uint8) if view.dtype == np.bool_ else view, root=root_rank)
            del view
            outs.append(out)
    return outs


# -- bucketed gradient reduction ------------------------------------------------------


class _Bucket:
    """Sources ``members`` (indices), packed at ``offsets`` into ``send`` (the wire
    dtype); after the reduce ``recv`` holds the sum. One presence flag per member at the
    end of the buffer counts the ranks that had a gradient for it."""

    def __init__(self, members: list[int], shapes: list[tuple[int, ...]], wire: np.dtype, prescale: float) -> None:
        self.members = members
        self.offsets: dict[int, tuple[int, int]] = {}
        off = 0
        for i, shape in zip(members, shapes):
            n = int(np.prod(shape, dtype=np.int64))
            self.offsets[i] = (off, n)
            off += n
        self.flag_at = {i: off + k for k, i in enumerate(members)}
        self.send = np.zeros(off + len(members), dtype=wire)
        self.recv = np.empty_like(self.send)
        self.prescale = prescale
        self.pending = 0
        self.request: Any = None


class _Layout:
    """The buckets for one list of sources (shapes and dtypes), kept across steps."""

    def __init__(self, specs: list[tuple[tuple[int, ...], str]], bucket_bytes: int, compression: Compression,
                 op: ReduceOp, n: int) -> None:
        self.bucket_of: dict[int, _Bucket] = {}
        self.buckets: list[_Bucket] = []
        prescale = 1.0 / n if op is ReduceOp.AVERAGE else 1.0
        # Reverse order: the backward sweep finishes the last layers' gradients first.
        groups: dict[str, list[int]] = {}
        order: list[tuple[str, list[int]]] = []
        open_bytes: dict[str, int] = {}
        for i in reversed(range(len(specs))):
            shape, dtname = specs[i]
            wire = _wire_dtype(np.dtype(dtname), compression)
            key = wire.str
            nbytes = int(np.prod(shape, dtype=np.int64)) * wire.itemsize
            if key not in groups or (groups[key] and open_bytes[key] + nbytes > bucket_bytes):
                groups[key] = []
                open_bytes[key] = 0
                order.append((key, groups[key]))
            groups[key].append(i)
            open_bytes[key] += nbytes
        for key, members in order:
            wire = np.dtype(key)
            # Integers are summed exactly and divided at the end; floats are prescaled.
            b = _Bucket(members, [specs[i][0] for i in members], wire, prescale if wire.kind in "fc" else 1.0)
            self.buckets.append(b)
            for i in members:
                self.bucket_of[i] = b


# The bucket layouts (and their buffers) of the last few lists of sources reduced.
_LAYOUTS: dict[Any, _Layout] = {}
_MAX_LAYOUTS = 8


class _Reducer:
    """Reduces one step's gradients, bucket by bucket, as the sweep hands them over."""

    def __init__(self, op: ReduceOp, compression: Compression, bucket_bytes: int) -> None:
        self.op = ReduceOp(op)
        self.compression = Compression(compression)
        if not (isinstance(bucket_bytes, int) and bucket_bytes > 0):
            raise ValueError(f"bucket_bytes must be a positive int, got {bucket_bytes!r}")
        self.bucket_bytes = bucket_bytes
        self.last_stats: dict[str, Any] = {}

    def layout(self, sources: list[Any]) -> tuple[_Layout, list[tuple[tuple[int, ...], str]]]:
        specs = [(tuple(int(d) for d in s.shape), s.dtype.name) for s in sources]
        for s, (_, dt) in zip(sources, specs):
            if dt == "bool" or not (s.dtype.is_floating or s.dtype.is_complex):
                raise TypeError(
                    f"gt.distributed: gradients are reduced for floating or complex sources only, got {dt} "
                    f"({getattr(s, 'name', 'a tensor')})"
                )
        # Kept per process, not per wrapper: Horovod's pattern wraps a new tape every
        # step, and the buckets' buffers are reused from one step to the next.
        key = (tuple(specs), self.bucket_bytes, self.compression, self.op, size())
        layout = _LAYOUTS.pop(key, None) or _Layout(specs, self.bucket_bytes, self.compression, self.op, size())
        _LAYOUTS[key] = layout  # most recently used last
        while len(_LAYOUTS) > _MAX_LAYOUTS:
            del _LAYOUTS[next(iter(_LAYOUTS))]
        return layout, specs

    def reduce(self, sources: list[Any], produce: Any) -> list[Any]:
        """Runs ``produce(ready)`` (the sweep, calling ``ready(i, g)`` per final
        gradient; it returns every gradient) and returns the reduced gradients."""
        with _waiting("DistributedGradientTape.gradient"):
            return self._reduce(sources, produce)

    def in_graph(self, sources: list[Any], grads: list[Any]) -> list[Any]:
        """Inside a trace: one graph node reducing ``grads`` (``None`` where the
        trace has no gradient) on every call, once the backward pass has finished."""
        present = [i for i, g in enumerate(grads) if g is not None]

        def run(tensors: list[Any]) -> list[Any]:
            full: list[Any] = [None] * len(sources)
            for i, t in zip(present, tensors):
                full[i] = t
            out = self.reduce(sources, lambda ready: full)
            return [out[i] for i in present]

        reduced = _node(run, [grads[i] for i in present], lambda ts: ts)
        out: list[Any] = [None] * len(sources)
        for i, t in zip(present, reduced):
            out[i] = t
        return out

    def _reduce(self, sources: list[Any], produce: Any) -> list[Any]:
        n = size()
        layout, specs = self.layout(sources)
        names = [getattr(s, "name", f"source {i}") for i, s in enumerate(sources)]
        _check_same(
            "DistributedGradientTape.gradient",
            (specs, self.op.value, self.compression.value, self.bucket_bytes),
            detail=[f"{nm} {sh} {dt}" for nm, (sh, dt) in zip(names, specs)],
        )
        buckets = layout.buckets
        for b in buckets:
            b.pending = len(b.members)
            b.request = None
            b.send[-len(b.members):] = 0
        reported = [False] * len(sources)
        state = {"next": 0}  # buckets are posted in order: the same order on every rank

        def pack(i: int, g: Any) -> None:
            b = layout.bucket_of[i]
            off, cnt = b.offsets[i]
            dst = b.send[off:off + cnt].reshape(specs[i][0])
            src = np.asarray(g)
            if b.prescale != 1.0:
                np.multiply(src, b.prescale, out=dst, casting="unsafe")
            else:
                np.copyto(dst, src, casting="unsafe")
            b.send[b.flag_at[i]] = 1
            b.pending -= 1

        def post_ready() -> None:
            while state["next"] < len(buckets) and buckets[state["next"]].pending == 0:
                b = buckets[state["next"]]
                b.request = _iallreduce(b.send, b.recv)
                state["next"] += 1
            # MPI makes progress on a non-blocking collective only inside MPI calls.
            live = [b.request for b in buckets[: state["next"]] if b.request is not None]
            if live:
                _mpi().Request.Testall(live)

        order: list[int] = []

        def ready(i: int, g: Any) -> None:
            reported[i] = True
            order.append(i)
            pack(i, g)
            post_ready()

        grads = produce(ready)
        # What the last step did (tests and the benchmark read it).
        self.last_stats = {"buckets": len(buckets), "posted_during_backward": state["next"], "ready_order": order}
        # Sources the sweep did not report: no gradient here (zeros on the wire, flag 0).
        for i, g in enumerate(grads):
            if not reported[i]:
                b = layout.bucket_of[i]
                off, cnt = b.offsets[i]
                if g is None:
                    b.send[off:off + cnt] = 0
                    b.pending -= 1
                else:
                    pack(i, g)
        post_ready()
        MPI = _mpi()
        MPI.Request.Waitall([b.request for b in buckets])
        out: list[Any] = [None] * len(sources)
        for b in buckets:
            for i in b.members:
                have = int(round(float(b.recv[b.flag_at[i]].real)))
                if have == 0:
                    continue
                if have != n:
                    raise ValueError(
                        f"gt.distributed.DistributedGradientTape.gradient: {names[i]} has a gradient on {have} of "
                        f"{n} ranks and None on the others; every rank must compute the same gradients"
                    )
                off, cnt = b.offsets[i]
                t, view = _fresh(specs[i][0], specs[i][1])
                np.copyto(view, b.recv[off:off + cnt].reshape(specs[i][0]), casting="unsafe")
                del view
                out[i] = t
        return out


class DistributedGradientTape:
    """A ``gt.GradientTape`` whose ``gradient`` returns gradients averaged (or summed)
    over the ranks. Horovod: ``hvd.DistributedGradientTape(tape)``.

    Wrap the tape after (or around) recording: ``tape = DistributedGradientTape(tape)``
    or ``with DistributedGradientTape(gt.GradientTape()) as tape:``. Gradients are
    reduced in buckets of about ``bucket_bytes`` with non-blocking MPI while the backward
    sweep is still producing the rest (see the module's doc). In a ``gt.function``'s
    training step the gradients are reduced by a graph node on every call, after the
    sweep. Every other attribute is the wrapped tape's.
    """

    def __init__(
        self,
        gradtape: Any,
        compression: Compression = Compression.none,
        op: ReduceOp = Average,
        bucket_bytes: int = DEFAULT_BUCKET_BYTES,
    ) -> None:
        if not isinstance(gradtape, _native._Tape):
            raise TypeError(f"DistributedGradientTape wraps a gt.GradientTape, got {type(gradtape).__name__}")
        _comm()
        self._tape = gradtape
        self._reducer = _Reducer(op, compression, bucket_bytes)

    def __enter__(self) -> DistributedGradientTape:
        self._tape.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        return self._tape.__exit__(*exc)

    def __getattr__(self, name: str) -> Any:
        tape = self.__dict__.get("_tape")
        if tape is None:
            raise AttributeError(name)
        return getattr(tape, name)

    def gradient(self, target: Any, sources: Any, output_gradients: Any = None,
                 unconnected_gradients: Any = "none") -> Any:
        """``tape.gradient(...)``, each gradient reduced over the ranks (``None`` where
        no rank has one)."""
        flat = _nest.flatten(sources)
        og = None if output_gradients is None else _nest.flatten(output_gradients)
        targets = _nest.flatten(target)
        if _native._is_tracing():
            grads = list(self._tape._gradient(targets, flat, og, unconnected_gradients))
            return _nest.pack_sequence_as(sources, self._reducer.in_graph(flat, grads))

        def produce(ready: Any) -> list[Any]:
            return list(self._tape._gradient(targets, flat, og, unconnected_gradients, ready=ready))

        return _nest.pack_sequence_as(sources, self._reducer.reduce(flat, produce))


class DistributedOptimizer:
    """Wraps a ``gt.optimizers`` optimizer: ``apply_gradients`` first reduces the
    gradients over the ranks (bucketed, non-blocking, as ``DistributedGradientTape``;
    no overlap with a backward pass that has already finished), then applies them (in
    a ``gt.function`` too).
    ``minimize`` computes the gradients with a ``DistributedGradientTape``. Horovod:
    ``hvd.DistributedOptimizer``. Every other attribute is the wrapped optimizer's.
    """

    def __init__(
        self,
        optimizer: Any,
        compression: Compression = Compression.none,
        op: ReduceOp = Average,
        bucket_bytes: int = DEFAULT_BUCKET_BYTES,
    ) -> None:
        if not hasattr(optimizer, "apply_gradients"):
            raise TypeError(f"DistributedOptimizer wraps a gt.optimizers optimizer, got {type(optimizer).__name__}")
        _comm()
        self._optimizer = optimizer
        self._reducer = _Reducer(op, compression, bucket_bytes)
        self._args = (compression, op, bucket_bytes)

    def __getattr__(self, name: str) -> Any:
        optimizer = self.__dict__.get("_optimizer")
        if optimizer is None:
            raise AttributeError(name)
        return getattr(optimizer, name)

    def apply_gradients(self, grads_and_vars: Iterable[tuple[Any, Any]]) -> Any:
        """Reduces the gradients over the ranks, then applies them."""
        pairs = list(grads_and_vars)
        variables = [v for _, v in pairs]
        grads = [g for g, _ in pairs]
        if _native._is_tracing():
            reduced = self._reducer.in_graph(variables, grads)
        else:
            reduced = self._reducer.reduce(variables, lambda ready: grads)
        return self._optimizer.apply_gradients(zip(reduced, variables))

    def minimize(self, loss: Any, var_list: Any, tape: Any = None) -> Any:
        """Computes the gradients of ``loss`` reduced over the ranks and applies them."""
        from .optimizers._base import _loss_on_tape

        tape, value, var_list = _loss_on_tape(loss, var_list, tape)
        compression, op, bucket_bytes = self._args
        dtape = DistributedGradientTape(tape, compression=compression, op=op, bucket_bytes=bucket_bytes)
        grads = dtape.gradient(value, var_list)
        return self._optimizer.apply_gradients(zip(grads, var_list))
