"""AutoGraph: ``if``, ``while`` and ``for`` statements on tensors in a ``gt.function``
become ``gt.cond`` / ``gt.while_loop``, by rewriting the function's source as TF does.

Each converted statement becomes calls of the helpers at the end of this file, which
decide when they run: on a Python value or an eager tensor the statement runs as plain
Python; on a symbolic tensor (inside a trace) it becomes graph control flow. The names a
statement assigns are passed in and out of the branch / body functions explicitly.

Converted: ``if``/``elif``/``else`` (with no ``return``, or with both branches ending in
``return``), ``while`` and ``for`` loops with ``break`` and ``continue`` at any depth of
``if`` statements inside the loop (a ``return`` inside a loop, or a loop ``else``, leaves
the statement as Python: a symbolic condition then raises the error naming ``gt.cond`` /
``gt.while_loop``). Functions whose source is unavailable run unconverted.
"""

import ast
import functools
import inspect
import textwrap

from . import _gradtape as _native
from ._gradtape import Tensor as _Tensor

_cache: dict = {}


class Undefined:
    """A name with no value yet on entry to a converted statement."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"<undefined {self.name}>"


def convert(func):
    """``func`` with its control flow statements converted, or ``func`` itself when
    its source cannot be converted."""
    target = getattr(func, "__func__", func)
    try:
        converted = _cache[target]
    except (KeyError, TypeError):
        converted = _convert_function(target)
        try:
            _cache[target] = converted
        except TypeError:
            pass
    if converted is None:
        return func
    if hasattr(func, "__self__"):
        return converted.__get__(func.__self__, type(func.__self__))
    return converted


def _convert_function(func):
    if not inspect.isfunction(func):
        return None
    try:
        source = textwrap.dedent(inspect.getsource(func))
        filename = inspect.getsourcefile(func) or "<gt.function>"
        first_line = func.__code__.co_firstlineno
    except (OSError, TypeError):
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    fdef = tree.body[0] if tree.body else None
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    # The rewritten function runs on a copy of the module's globals: one that assigns a
    # global (`global n; n += 1`) must keep writing the module's, so it stays as written.
    if _contains(fdef.body, (ast.Global,)):
        return None
    # Decorators ran already (gt.function is one of them).
    fdef.decorator_list = []
    t = _Transformer()
    fdef.body = t.block(fdef.body)
    if not t.changed:
        return None
    ast.fix_missing_locations(tree)
    ast.increment_lineno(tree, first_line - 1)
    # The function is rebuilt inside a factory taking its free variables, so closures
    # keep working (their current values are passed in).
    freevars = func.__code__.co_freevars
    factory = ast.FunctionDef(
        name="__gt_factory",
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(arg=n) for n in freevars],
            kwonlyargs=[],
            kw_defaults=[],
            defaults=[],
        ),
        body=[fdef, ast.Return(value=ast.Name(id=fdef.name, ctx=ast.Load()))],
        decorator_list=[],
        returns=None,
        type_params=[],
    )
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    try:
        code = compile(module, filename, "exec")
    except SyntaxError:
        return None
    namespace = dict(func.__globals__)
    namespace["__gt_ag"] = _Helpers
    exec(code, namespace)  # noqa: S102 - the user's own function, rewritten
    cells = [c.cell_contents if _has_contents(c) else None for c in (func.__closure__ or ())]
    new = namespace["__gt_factory"](*cells)
    new.__defaults__ = func.__defaults__
    new.__kwdefaults__ = func.__kwdefaults__
    functools.update_wrapper(new, func)
    # The rewritten function reads globals from a copy: keep it in sync with the module.
    new.__globals__.update(func.__globals__)
    return _GlobalsView(new, func)


def _has_contents(cell):
    try:
        _ = cell.cell_contents
        return True
    except ValueError:
        return False


class _GlobalsView:
    """Calls the converted function after refreshing its globals from the module's (a
    global assigned after the conversion is seen, as in the original)."""

    def __init__(self, new, original):
        self._new = new
        self._original = original
        functools.update_wrapper(self, original)

    def __call__(self, *args, **kwargs):
        g = self._new.__globals__
        for k, v in self._original.__globals__.items():
            if g.get(k, _MISSING) is not v:
                g[k] = v
        return self._new(*args, **kwargs)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return functools.partial(self, instance)


_MISSING = object()


# ---- the rewrite -------------------------------------------------------------------


def _assigned(stmts):
    """Names a list of statements binds (not inside nested functions or classes)."""
    names = []

    class V(ast.NodeVisitor):
        def visit_Name(self, node):
            if isinstance(node.ctx, ast.Store) and node.id not in names:
                names.append(node.id)

        def visit_FunctionDef(self, node):
            # The rewrite's own branch and body functions are not the user's names.
            if node.name not in names and not node.name.startswith("__gt_"):
                names.append(node.name)

        visit_AsyncFunctionDef = visit_FunctionDef

        def visit_ClassDef(self, node):
            if node.name not in names:
                names.append(node.name)

        def visit_Lambda(self, node):
            pass

    for s in stmts:
        V().visit(s)
    return names


def _contains(stmts, kinds, into_loops=True):
    class V(ast.NodeVisitor):
        found = False

        def generic_visit(self, node):
            if isinstance(node, kinds):
                self.found = True
                return
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                return
            if not into_loops and isinstance(node, (ast.For, ast.While)):
                return
            super().generic_visit(node)

    v = V()
    for s in stmts:
        v.visit(s)
    return v.found


def _name(n, ctx=ast.Load):
    return ast.Name(id=n, ctx=ctx())


def _tuple(names, ctx=ast.Load):
    return ast.Tuple(elts=[_name(n, ctx) for n in names], ctx=ctx())


def _helper(attr):
    return ast.Attribute(value=_name("__gt_ag"), attr=attr, ctx=ast.Load())


def _call(helper, *args):
    """``__gt_ag.helper(*args)``."""
    return ast.Call(func=_helper(helper), args=list(args), keywords=[])


def _strings(names):
    """``('a', 'b')``: the names as string constants."""
    return ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())


def _bind(names, call):
    """``a, b = call`` (or the bare call when nothing is bound)."""
    if not names:
        return ast.Expr(value=call)
    return ast.Assign(targets=[_tuple(names, ast.Store)], value=call)


def _current(names):
    """``(__gt_ag.ld(locals(), 'a'), ...)``: each name's value, or Undefined."""
    return ast.Tuple(
        elts=[
            ast.Call(
                func=_helper("ld"),
                args=[ast.Call(func=_name("locals"), args=[], keywords=[]), ast.Constant(n)],
                keywords=[],
            )
            for n in names
        ],
        ctx=ast.Load(),
    )


def _fn(name, params, body):
    return ast.FunctionDef(
        name=name,
        args=ast.arguments(
            posonlyargs=[], args=[ast.arg(arg=p) for p in params], kwonlyargs=[], kw_defaults=[], defaults=[]
        ),
        body=body or [ast.Pass()],
        decorator_list=[],
        returns=None,
        type_params=[],
    )


class _Transformer:
    def __init__(self):
        self.changed = False
        self.counter = 0

    def fresh(self, base):
        self.counter += 1
        return f"__gt_{base}_{self.counter}"

    def block(self, stmts):
        out = []
        for s in stmts:
            out.extend(self.stmt(s))
        return out

    def stmt(self, s):
        if isinstance(s, ast.If):
            return self.if_(s)
        if isinstance(s, ast.While):
            return self.while_(s)
        if isinstance(s, ast.For):
            return self.for_(s)
        if isinstance(s, (ast.With, ast.AsyncWith)):
            s.body = self.block(s.body)
            return [s]
        if isinstance(s, ast.Try):
            s.body = self.block(s.body)
            s.orelse = self.block(s.orelse)
            s.finalbody = self.block(s.finalbody)
            for h in s.handlers:
                h.body = self.block(h.body)
            return [s]
        return [s]

    # -- if --
    def if_(self, s):
        body_returns = bool(s.body) and isinstance(s.body[-1], ast.Return)
        else_returns = bool(s.orelse) and isinstance(s.orelse[-1], ast.Return)
        inner_return = _contains(s.body[:-1] if body_returns else s.body, (ast.Return,)) or _contains(
            s.orelse[:-1] if else_returns else s.orelse, (ast.Return,)
        )
        if _contains(s.body + s.orelse, (ast.Break, ast.Continue), into_loops=False) or _contains(
            s.body + s.orelse, (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal)
        ):
            s.body = self.block(s.body)
            s.orelse = self.block(s.orelse)
            return [s]
        if inner_return or (body_returns != else_returns):
            s.body = self.block(s.body)
            s.orelse = self.block(s.orelse)
            return [s]
        self.changed = True
        names = _assigned(s.body + s.orelse)
        t_name, f_name = self.fresh("if_true"), self.fresh("if_false")
        body = self.block(s.body)
        orelse = self.block(s.orelse)
        if not body_returns:
            # Each branch hands the names it may assign back.
            body = body + [ast.Return(value=_tuple(names))]
            orelse = orelse + [ast.Return(value=_tuple(names))]
        t = _fn(t_name, names, body)
        f = _fn(f_name, names, orelse)
        call = _call(
            "if_stmt",
            s.test,
            _name(t_name),
            _name(f_name),
            _current(names),
            _strings(names),
            ast.Constant(body_returns),
        )
        # `if c: ...; return a  else: ...; return b` -> return cond(...)
        return [t, f, ast.Return(value=call) if body_returns else _bind(names, call)]

    # -- loops --
    def _loop_ok(self, s):
        return not s.orelse and not _contains(s.body, (ast.Return, ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal))

    def _lower_jumps(self, body, brk, cont):
        """Rewrites ``break`` / ``continue`` of this loop into flag assignments, guarding
        the statements after them."""
        out = []
        for i, st in enumerate(body):
            if isinstance(st, ast.Break):
                out.append(ast.Assign(targets=[_name(brk, ast.Store)], value=ast.Constant(True)))
                return out, True
            if isinstance(st, ast.Continue):
                out.append(ast.Assign(targets=[_name(cont, ast.Store)], value=ast.Constant(True)))
                return out, True
            if isinstance(st, ast.If) and _contains([st], (ast.Break, ast.Continue), into_loops=False):
                st.body, _ = self._lower_jumps(st.body, brk, cont)
                st.orelse, _ = self._lower_jumps(st.orelse, brk, cont)
                out.append(st)
                rest, _ = self._lower_jumps(body[i + 1 :], brk, cont)
                if rest:
                    guard = _call("no_jump", _name(brk), _name(cont))
                    out.append(ast.If(test=guard, body=rest, orelse=[]))
                return out, True
            out.append(st)
        return out, False

    def _jumps(self, body):
        """``body`` with its ``break``/``continue`` lowered to flags: ``(body, flags,
        prelude)``, the flags ``(break, continue)`` names or ``None`` when it has none."""
        if not _contains(body, (ast.Break, ast.Continue), into_loops=False):
            return body, None, []
        brk, cont = self.fresh("break"), self.fresh("continue")
        body, _ = self._lower_jumps(body, brk, cont)

        def clear(n):
            return ast.Assign(targets=[_name(n, ast.Store)], value=ast.Constant(False))

        return [clear(cont)] + body, (brk, cont), [clear(brk), clear(cont)]

    def while_(self, s):
        if not self._loop_ok(s):
            s.body = self.block(s.body)
            return [s]
        self.changed = True
        body, flags, pre = self._jumps(s.body)
        test = s.test
        names = _assigned(body)
        if flags:
            thunk = ast.Lambda(
                args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                body=test,
            )
            test = _call("not_broken_and", _name(flags[0]), thunk)
            names += [n for n in flags if n not in names]
        body = self.block(body)
        c_name, b_name = self.fresh("loop_test"), self.fresh("loop_body")
        c = _fn(c_name, names, [ast.Return(value=test)])
        b = _fn(b_name, names, body + [ast.Return(value=_tuple(names))])
        call = _call("while_stmt", _name(c_name), _name(b_name), _current(names), _strings(names))
        return pre + [c, b, _bind(names, call)]

    def for_(self, s):
        if not self._loop_ok(s):
            s.body = self.block(s.body)
            return [s]
        self.changed = True
        body, flags, pre = self._jumps(s.body)
        item = self.fresh("item")
        names = _assigned(body)
        targets = _assigned([ast.Assign(targets=[s.target], value=ast.Constant(None))])
        names += [n for n in targets + list(flags or ()) if n not in names]
        body = self.block(body)
        bind = ast.Assign(targets=[s.target], value=_name(item))
        b_name = self.fresh("for_body")
        b = _fn(b_name, [item] + names, [bind] + body + [ast.Return(value=_tuple(names))])
        stop = ast.Constant(flags[0] if flags else None)
        call = _call("for_stmt", s.iter, _name(b_name), _current(names), _strings(names), stop)
        return pre + [b, _bind(names, call)]


# ---- the run-time helpers ------------------------------------------------------------


def _symbolic(x):
    if isinstance(x, _Tensor):
        return _native._is_symbolic(x)
    return False


def _is_var(x):
    from ._variable import Variable

    return isinstance(x, Variable)


def _as_bool_tensor(x):
    return _native.cast(x, _native.bool) if isinstance(x, _Tensor) else _native.constant(bool(x))


class _Helpers:
    @staticmethod
    def ld(local_vars, name):
        return local_vars.get(name, Undefined(name))

    @staticmethod
    def no_jump(brk, cont):
        """``not (brk or cont)`` for Python bools or tensors."""
        if not isinstance(brk, _Tensor) and not isinstance(cont, _Tensor):
            return not (brk or cont)
        return _native.logical_not(_native.logical_or(_as_bool_tensor(brk), _as_bool_tensor(cont)))

    @staticmethod
    def not_broken_and(brk, test):
        """``not brk and test()`` for a Python bool or tensor ``brk``."""
        if not isinstance(brk, _Tensor):
            return False if brk else test()
        t = test()
        return _native.logical_and(_native.logical_not(_as_bool_tensor(brk)), _as_bool_tensor(t))

    @staticmethod
    def if_stmt(test, true_fn, false_fn, init, names, returns):
        from . import _function

        if _is_var(test) and _native._is_tracing():
            test = test.read_value()
        if not _symbolic(test):
            return true_fn(*init) if _function._truth(test) else false_fn(*init)

        def branch(fn, which):
            def run():
                out = fn(*init)
                if returns:
                    return out
                for n, v in zip(names, out):
                    if isinstance(v, Undefined):
                        raise ValueError(
                            f"'{n}' must also be initialized in the {'else' if which == 'true' else 'if'} "
                            f"branch: it is assigned in the {which} branch of an `if` on a tensor "
                            "(both branches of a gt.cond must give every variable a value)"
                        )
                return tuple(out)

            return run

        out = _function.cond(test, branch(true_fn, "true"), branch(false_fn, "false"))
        return out

    @staticmethod
    def while_stmt(test_fn, body_fn, init, names):
        from . import _function

        first = test_fn(*init)
        if _is_var(first):
            first = first.read_value()
        if not _symbolic(first):
            vals = tuple(init)
            c = first
            while _function._truth(c):
                vals = tuple(body_fn(*vals))
                c = test_fn(*vals)
            return vals
        for n, v in zip(names, init):
            if isinstance(v, Undefined) and not n.startswith("__gt_"):
                raise ValueError(
                    f"'{n}' must be defined before the loop: a `while` on a tensor becomes a "
                    "gt.while_loop, whose loop variables need a value on entry"
                )
        return _function.while_loop(
            lambda *v: test_fn(*v),
            lambda *v: tuple(body_fn(*v)),
            tuple(_init_value(v) for v in init),
        )

    @staticmethod
    def for_stmt(iterable, body_fn, init, names, stop):
        from . import _function

        stop_at = names.index(stop) if stop is not None else None
        if _is_var(iterable):
            iterable = iterable.read_value()
        if isinstance(iterable, _Tensor) and _symbolic(iterable):
            n = _native.shape(iterable)[0]
            row = _native.zeros(list(iterable.shape[1:]), dtype=iterable.dtype)

            def test(i, *vals):
                more = i < n
                if stop_at is not None:
                    more = _native.logical_and(more, _native.logical_not(_native.cast(vals[stop_at], _native.bool)))
                return more

            def body(i, *vals):
                # Traced on the entry values (i = 0, maybe past an empty end): clamped,
                # which changes nothing when the graph runs (i < n there).
                out = body_fn(iterable[_native.maximum(_native.minimum(i, n - 1), 0)], *vals)
                return (i + 1, *out)

            # A name first bound in the loop (its target) starts as a zero row.
            init_vals = tuple(_init_value(v, row) for v in init)
            out = _function.while_loop(test, body, (_native.constant(0),) + init_vals)
            return tuple(out[1:])
        vals = tuple(init)
        if isinstance(iterable, _Tensor):
            rows = iterable
            iterable = (rows[i] for i in range(rows.shape[0]))
        for x in iterable:
            vals = tuple(body_fn(x, *vals))
            if stop_at is not None and _function._truth(vals[stop_at]):
                break
        return vals


def _init_value(v, like=None):
    if isinstance(v, Undefined):
        if v.name.startswith("__gt_"):
            return False
        # The loop target, or a name first bound inside the body: a placeholder the
        # body overwrites before any use.
        if like is None:
            raise ValueError(
                f"'{v.name}' must be defined before the loop: a `while` on a tensor becomes a "
                "gt.while_loop, whose loop variables need a value on entry"
            )
        return like
    return v
