"""AutoGraph: ``if``, ``while`` and ``for`` statements on tensors in a ``gt.function``
become ``gt.cond`` / ``gt.while_loop``, by rewriting the function's source as TF does.

Each converted statement becomes calls of the helpers at the end of this file, which
decide when they run: on a Python value or an eager tensor the statement runs as plain
Python; on a symbolic tensor (inside a trace) it becomes graph control flow. The names a
statement assigns are passed in and out of the branch / body functions explicitly; of
those, only the ones read after the statement (or, for a loop, read by the loop before
the body binds them) become outputs of the ``gt.cond`` / loop variables of the
``gt.while_loop``, as TF's liveness analysis decides. Names declared ``global`` or
``nonlocal`` are always carried, and the rewritten function writes the module's global /
the enclosing function's variable itself (as TF: a global assigned in a graph loop holds
the loop's symbolic result after the trace).

Converted: ``if``/``elif``/``else`` (with no ``return``, or with both branches ending in
``return``), ``while`` and ``for`` loops with ``break`` and ``continue`` at any depth of
``if`` statements inside the loop (a ``return`` inside a loop, or a loop ``else``, leaves
the statement as Python: a symbolic condition then raises the error naming ``gt.cond`` /
``gt.while_loop``). Functions whose source is unavailable run unconverted.
"""

import ast
import builtins
import functools
import inspect
import os
import sysconfig
import textwrap
import threading
import tokenize
import types

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


_status = threading.local()


def enabled():
    """Whether converted code is running on this thread (a ``gt.function`` with
    ``autograph=True`` is tracing): TF's ``control_status_ctx`` being ``ENABLED``, under
    which ``gt.map_fn`` converts its ``fn`` as TF's does."""
    return getattr(_status, "depth", 0) > 0


def convert(func):
    """``func`` with its control flow statements converted (and the functions it calls,
    see ``convert_call``), or ``func`` itself when its source cannot be converted; while
    it runs, ``enabled()`` holds."""
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
        converted = func
    elif hasattr(func, "__self__"):
        converted = converted.__get__(func.__self__, type(func.__self__))
    return _entered(converted, func)


def _entered(converted, func):
    @functools.wraps(func)
    def run(*args, **kwargs):
        _status.depth = getattr(_status, "depth", 0) + 1
        try:
            return converted(*args, **kwargs)
        finally:
            _status.depth -= 1

    return run


def convert_call(f):
    """``f`` as converted code calls it (TF's ``converted_call``): a user's Python
    function (or method) converted, anything else (gradtape's own functions, builtins,
    the standard library's and installed packages', callable objects) as it is."""
    target = getattr(f, "__func__", f)
    if not isinstance(target, types.FunctionType) or not _user_code(target):
        return f
    code = target.__code__
    try:
        made = _code_cache[code]
    except KeyError:
        made = _code_cache[code] = _converted_code(target)
    if made is None:
        return f
    new = _rebuild(target, made)
    if new is None:
        return f
    if hasattr(f, "__self__"):
        return new.__get__(f.__self__, type(f.__self__))
    return new


_code_cache: dict = {}


def _library_dirs():
    paths = sysconfig.get_paths()
    dirs = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return tuple(os.path.join(d, "") for d in dirs if d)


_LIBRARY_DIRS = _library_dirs()
_PACKAGE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "")


def _user_code(func):
    """Whether ``func`` is the user's code (converted when converted code calls it), not
    gradtape's, the standard library's or an installed package's."""
    module = getattr(func, "__module__", None) or ""
    if module == "gradtape" or module.startswith("gradtape."):
        return False
    filename = func.__code__.co_filename
    if filename.startswith("<"):
        return False
    filename = os.path.abspath(filename)
    return not filename.startswith(_PACKAGE_DIR) and not filename.startswith(_LIBRARY_DIRS)


def _convert_function(func):
    if not inspect.isfunction(func):
        return None
    made = _converted_code(func)
    return None if made is None else _rebuild(func, made)


def _converted_code(func):
    """The code of ``func`` converted (a function of ``func``'s free variables and
    ``__gt_ag``), or None when it cannot be converted."""
    try:
        source = textwrap.dedent(inspect.getsource(func))
        filename = inspect.getsourcefile(func) or "<gt.function>"
        first_line = func.__code__.co_firstlineno
    except (OSError, TypeError, SyntaxError, tokenize.TokenError):
        # No source, or a file of that name that is not this code's (exec'd text).
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    fdef = tree.body[0] if tree.body else None
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)) or fdef.name != func.__name__:
        return None
    # Decorators ran already (gt.function is one of them).
    fdef.decorator_list = []
    # `global` / `nonlocal` declarations apply to the whole function wherever they are
    # written: they move to its top, so the statements they sat in can be rewritten.
    # The branch and loop functions of the rewrite declare them too (TF's AutoGraph
    # does the same), so assignments keep writing the module's global / the enclosing
    # function's variable.
    globals_, nonlocals = _declared(fdef)
    decls = []
    if globals_:
        decls.append(ast.Global(names=list(globals_)))
    if nonlocals:
        decls.append(ast.Nonlocal(names=list(nonlocals)))
    if "__class__" in func.__code__.co_freevars:
        _explicit_super(fdef)
    _mangle_private(fdef, func.__qualname__)
    fdef.body = _fold_returns(fdef.body)
    # The function's own variables that its nested functions read (cells): the branch
    # and loop functions write them through (`nonlocal`), so a closure called inside a
    # converted statement sees the value the statement gave them so far.
    cells = [n for n in func.__code__.co_cellvars if n not in globals_ and n not in nonlocals]
    t = _Transformer(fdef, globals_, nonlocals, cells)
    fdef.body = t.block(fdef.body)
    # Calls go through __gt_ag.cv: the functions converted code calls are converted too.
    calls = _CallWrapper()
    fdef.body = [calls.visit(st) for st in fdef.body]
    if not (t.changed or calls.wrapped):
        return None
    _drop_def_time_expressions(fdef)
    fdef.body = decls + fdef.body
    ast.fix_missing_locations(tree)
    ast.increment_lineno(tree, first_line - 1)
    # The function is compiled inside a factory whose parameters are its free variables
    # (and the helpers), then rebuilt on the original function's globals and closure
    # cells: it reads and writes the module's globals and the enclosing function's
    # variables themselves, not copies.
    freevars = func.__code__.co_freevars
    factory = ast.FunctionDef(
        name="__gt_factory",
        args=ast.arguments(
            posonlyargs=[],
            args=[ast.arg(arg=n) for n in (*freevars, "__gt_ag")],
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
    scratch = {}
    exec(code, func.__globals__, scratch)  # noqa: S102 - the user's own function, rewritten
    return scratch["__gt_factory"](*([None] * len(freevars)), _Helpers).__code__


def _rebuild(func, made):
    """The converted function: code ``made`` on ``func``'s globals, defaults and
    closure cells (it reads and writes the enclosing function's variables themselves)."""
    cells = dict(zip(func.__code__.co_freevars, func.__closure__ or ()))
    closure = []
    for n in made.co_freevars:
        if n in cells:
            closure.append(cells[n])
        elif n == "__gt_ag":
            closure.append(types.CellType(_Helpers))
        else:  # pragma: no cover - the factory binds nothing else
            return None
    new = types.FunctionType(made, func.__globals__, func.__name__, func.__defaults__, tuple(closure))
    new.__kwdefaults__ = func.__kwdefaults__
    functools.update_wrapper(new, func)
    return new


class _CallWrapper(ast.NodeTransformer):
    """``f(...)`` -> ``__gt_ag.cv(f)(...)`` (TF's ``converted_call``), but for the
    rewrite's own helpers and the builtins that look at the calling frame or scope."""

    _AS_IS = frozenset({"super", "locals", "globals", "vars", "dir", "eval", "exec"})

    def __init__(self):
        self.wrapped = False

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and (f.id in self._AS_IS or f.id.startswith("__gt_")):
            return node
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "__gt_ag":
            return node
        self.wrapped = True
        node.func = ast.Call(func=_helper("cv"), args=[node.func], keywords=[])
        return node


def _drop_def_time_expressions(fdef):
    """Default values and annotations of ``fdef``'s own signature: evaluated where the
    rewrite compiles it they could name the enclosing function's variables; the rebuilt
    function takes the original's defaults instead."""
    a = fdef.args
    a.defaults = [ast.Constant(None) for _ in a.defaults]
    a.kw_defaults = [None if d is None else ast.Constant(None) for d in a.kw_defaults]
    for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg]:
        if p is not None:
            p.annotation = None
    fdef.returns = None


def _declared(fdef):
    """The names ``fdef`` declares ``global`` and ``nonlocal`` (its own scope, not
    nested functions'), each declaration statement removed from where it was."""
    globals_ = []
    nonlocals = []

    def strip(stmts):
        out = []
        for st in stmts:
            if isinstance(st, ast.Global):
                globals_.extend(n for n in st.names if n not in globals_)
                continue
            if isinstance(st, ast.Nonlocal):
                nonlocals.extend(n for n in st.names if n not in nonlocals)
                continue
            for field in ("body", "orelse", "finalbody"):
                if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    break
                inner = getattr(st, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    setattr(st, field, strip(inner) or [ast.Pass()])
            if isinstance(st, ast.Try):
                for h in st.handlers:
                    h.body = strip(h.body) or [ast.Pass()]
            if isinstance(st, ast.Match):
                for case in st.cases:
                    case.body = strip(case.body) or [ast.Pass()]
            out.append(st)
        return out

    fdef.body = strip(fdef.body) or [ast.Pass()]
    return globals_, nonlocals


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

        def visit_comprehension(self, node):
            # The target is the comprehension's own (a walrus in it still binds here).
            self.visit(node.iter)
            for c in node.ifs:
                self.visit(c)

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


def _current(names, globals_=()):
    """``(__gt_ag.ld(locals(), 'a'), ...)``: each name's value, or Undefined (a name
    declared ``global`` is read from ``globals()``)."""
    return ast.Tuple(
        elts=[
            ast.Call(
                func=_helper("ld"),
                args=[
                    ast.Call(func=_name("globals" if n in globals_ else "locals"), args=[], keywords=[]),
                    ast.Constant(n),
                ],
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


# ---- liveness (as far as the rewrite needs it) -----------------------------------------


def _loads(nodes):
    """The ``Name`` nodes reading a variable under ``nodes`` (nested functions and
    lambdas included: they may read it when called)."""
    out = []

    def visit(x, hidden):
        if isinstance(x, _COMPREHENSIONS):
            # Their targets are names of their own scope.
            hidden = hidden | _bound_by([g.target for g in x.generators])
        elif isinstance(x, ast.Lambda):
            a = x.args
            hidden = hidden | {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if p}
        if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load):
            if x.id not in hidden:
                out.append(x)
        elif isinstance(x, ast.AugAssign) and isinstance(x.target, ast.Name) and x.target.id not in hidden:
            out.append(x.target)  # `x += 1` reads x first
        for c in ast.iter_child_nodes(x):
            visit(c, hidden)

    for n in nodes:
        visit(n, frozenset())
    return out


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _bound_by(targets):
    """The names assignment targets bind."""
    return set(_assigned([ast.Assign(targets=list(targets), value=ast.Constant(None))]))


def _definitely_assigned(st):
    """Names statement ``st`` binds on every path through it."""
    if isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = st.targets if isinstance(st, ast.Assign) else [st.target]
        if isinstance(st, ast.AnnAssign) and st.value is None:
            return set()
        return _bound_by(targets)
    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {st.name}
    if isinstance(st, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in st.names}
    if isinstance(st, ast.If):
        return _block_assigned(st.body) & _block_assigned(st.orelse)
    if isinstance(st, (ast.With, ast.AsyncWith)):
        return _block_assigned(st.body)
    return set()


def _block_assigned(stmts):
    out = set()
    for st in stmts:
        out |= _definitely_assigned(st)
    return out


def _live_in(stmts, defined=()):
    """Names ``stmts`` may read before binding them (``defined``: bound on entry)."""
    defined = set(defined)
    live = set()
    for st in stmts:
        live |= _stmt_live_in(st, defined)
        defined |= _definitely_assigned(st)
    return live


def _stmt_live_in(st, defined):
    def reads(nodes):
        return {n.id for n in _loads(nodes) if n.id not in defined}

    if isinstance(st, ast.If):
        return reads([st.test]) | _live_in(st.body, defined) | _live_in(st.orelse, defined)
    if isinstance(st, ast.While):
        return reads([st.test]) | _live_in(st.body, defined) | _live_in(st.orelse, defined)
    if isinstance(st, ast.For):
        target = _bound_by([st.target])
        return reads([st.iter]) | _live_in(st.body, defined | target) | _live_in(st.orelse, defined)
    if isinstance(st, (ast.With, ast.AsyncWith)):
        bound = _bound_by([i.optional_vars for i in st.items if i.optional_vars])
        return reads([i.context_expr for i in st.items]) | _live_in(st.body, defined | bound)
    return reads([st])


def _always_returns(stmts):
    """Whether ``stmts`` end in a ``return`` on every path (a last ``if`` whose
    branches both do counts)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and _always_returns(last.body) and _always_returns(last.orelse)


def _fold_returns(stmts):
    """``stmts`` with the statements after an ``if`` one of whose branches always
    returns moved into its other branch (they only run after that one), as TF's return
    converter does: ``if c: return a`` then ``return b`` is an ``if``/``else`` whose
    branches both return."""
    out = []
    for i, st in enumerate(stmts):
        if isinstance(st, ast.If):
            rest = stmts[i + 1 :]
            if rest and _always_returns(st.body) and not _always_returns(st.orelse):
                st.orelse = st.orelse + rest
                rest = []
            elif rest and st.orelse and _always_returns(st.orelse) and not _always_returns(st.body):
                st.body = st.body + rest
                rest = []
            st.body = _fold_returns(st.body)
            st.orelse = _fold_returns(st.orelse)
            out.append(st)
            if not rest and i + 1 < len(stmts):
                break
            continue
        if isinstance(st, (ast.For, ast.While, ast.With, ast.AsyncWith, ast.Try)):
            st.body = _fold_returns(st.body)
        out.append(st)
    return out


def _mangle_private(fdef, qualname):
    """A method's ``self.__x`` names, mangled as the class body compiled them
    (``_Cls__x``): the rewrite compiles the function outside its class."""
    parts = qualname.split(".")
    if len(parts) < 2 or parts[-2] == "<locals>":
        return
    cls = parts[-2].lstrip("_")
    if not cls:
        return

    def mangle(name):
        if name.startswith("__") and not name.endswith("__") and "." not in name:
            return f"_{cls}{name}"
        return name

    for node in ast.walk(fdef):
        if isinstance(node, ast.Attribute):
            node.attr = mangle(node.attr)
        elif isinstance(node, ast.Name):
            node.id = mangle(node.id)
        elif isinstance(node, ast.arg):
            node.arg = mangle(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not fdef:
            node.name = mangle(node.name)


def _explicit_super(fdef):
    """Zero-argument ``super()`` in ``fdef``'s own scope becomes ``super(__class__,
    first_parameter)``: the rewrite moves statements into branch functions, where
    the implicit form would find the wrong first argument."""
    params = fdef.args.posonlyargs + fdef.args.args
    if not params:
        return

    class V(ast.NodeTransformer):
        def visit_FunctionDef(self, node):
            return node

        visit_AsyncFunctionDef = visit_FunctionDef

        def visit_ClassDef(self, node):
            return node

        def visit_Lambda(self, node):
            return node

        def visit_Call(self, node):
            self.generic_visit(node)
            if isinstance(node.func, ast.Name) and node.func.id == "super" and not node.args and not node.keywords:
                node.args = [_name("__class__"), _name(params[0].arg)]
            return node

    fdef.body = [V().visit(st) for st in fdef.body]


class _Transformer:
    def __init__(self, fdef, globals_=(), nonlocals=(), cells=()):
        self.changed = False
        self.counter = 0
        self.globals = set(globals_)
        self.declared = set(globals_) | set(nonlocals)
        self.nonlocals = set(nonlocals)
        # The function's cell variables: written through by the functions the rewrite
        # makes (declared `nonlocal` there, not in the function itself).
        self.cells = set(cells)
        # Every read of a variable in the function, by name: a name a statement binds
        # is live after it when the function reads it anywhere outside the statement
        # (an over-approximation: such a name is always carried).
        self.reads = {}
        for n in _loads(fdef.body):
            self.reads.setdefault(n.id, set()).add(id(n))

    def fresh(self, base):
        self.counter += 1
        return f"__gt_{base}_{self.counter}"

    def live_after(self, s, names):
        """For each name: whether it may be read after statement ``s``."""
        inside = {id(x) for x in ast.walk(s)}
        # The rewrite's own flags are read by code it makes: always carried.
        return tuple(
            n in self.declared or n.startswith("__gt_") or bool(self.reads.get(n, set()) - inside) for n in names
        )

    def scoped_fn(self, name, lead, names, body):
        """A branch / loop function taking ``lead`` then ``names``; a ``global`` or
        ``nonlocal`` name comes in under another parameter and is assigned to the real
        one first (a parameter cannot be declared global)."""
        params = list(lead)
        prologue = []
        for n in names:
            if n in self.declared or n in self.cells:
                alias = f"__gt_in_{n}"
                params.append(alias)
                prologue.append(ast.Assign(targets=[_name(n, ast.Store)], value=_name(alias)))
            else:
                params.append(n)
        decls = []
        g = [n for n in names if n in self.globals]
        if g:
            decls.append(ast.Global(names=g))
        nl = [n for n in names if n in self.nonlocals or n in self.cells]
        if nl:
            decls.append(ast.Nonlocal(names=nl))
        return _fn(name, params, decls + prologue + body)

    def current(self, names):
        return _current(names, self.globals)

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
        body_returns = _always_returns(s.body)
        else_returns = _always_returns(s.orelse)
        inner_return = _contains(s.body[:-1] if body_returns else s.body, (ast.Return,)) or _contains(
            s.orelse[:-1] if else_returns else s.orelse, (ast.Return,)
        )
        if _contains(s.body + s.orelse, (ast.Break, ast.Continue), into_loops=False) or _contains(
            s.body + s.orelse, (ast.Yield, ast.YieldFrom)
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
        live = self.live_after(s, names)
        t_name, f_name = self.fresh("if_true"), self.fresh("if_false")
        body = self.block(s.body)
        orelse = self.block(s.orelse)
        if not body_returns:
            # Each branch hands the names it may assign back.
            body = body + [ast.Return(value=_tuple(names))]
            orelse = orelse + [ast.Return(value=_tuple(names))]
        t = self.scoped_fn(t_name, [], names, body)
        f = self.scoped_fn(f_name, [], names, orelse)
        call = _call(
            "if_stmt",
            s.test,
            _name(t_name),
            _name(f_name),
            self.current(names),
            _strings(names),
            ast.Constant(body_returns),
            ast.Constant(live),
        )
        # `if c: ...; return a  else: ...; return b` -> return cond(...)
        return [t, f, ast.Return(value=call) if body_returns else _bind(names, call)]

    # -- loops --
    def _loop_ok(self, s):
        return not s.orelse and not _contains(s.body, (ast.Return, ast.Yield, ast.YieldFrom))

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

    def carried(self, s, names, live_in, always=()):
        """For each name a loop binds: whether it is a loop variable of a graph loop
        (read by the loop before the body binds it, or after the loop)."""
        after = self.live_after(s, names)
        return tuple(a or n in live_in or n in always for n, a in zip(names, after))

    def while_(self, s):
        if not self._loop_ok(s):
            s.body = self.block(s.body)
            return [s]
        self.changed = True
        body, flags, pre = self._jumps(s.body)
        test = s.test
        names = _assigned(body)
        live_in = {n.id for n in _loads([test])} | _live_in(body)
        if flags:
            thunk = ast.Lambda(
                args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
                body=test,
            )
            test = _call("not_broken_and", _name(flags[0]), thunk)
            names += [n for n in flags if n not in names]
        carried = self.carried(s, names, live_in, flags[:1] if flags else ())
        body = self.block(body)
        c_name, b_name = self.fresh("loop_test"), self.fresh("loop_body")
        c = self.scoped_fn(c_name, [], names, [ast.Return(value=test)])
        b = self.scoped_fn(b_name, [], names, body + [ast.Return(value=_tuple(names))])
        call = _call(
            "while_stmt",
            _name(c_name),
            _name(b_name),
            self.current(names),
            _strings(names),
            ast.Constant(carried),
        )
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
        live_in = _live_in(body, defined=targets)
        names += [n for n in targets + list(flags or ()) if n not in names]
        carried = self.carried(s, names, live_in, flags[:1] if flags else ())
        body = self.block(body)
        bind = ast.Assign(targets=[s.target], value=_name(item))
        b_name = self.fresh("for_body")
        b = self.scoped_fn(b_name, [item], names, [bind] + body + [ast.Return(value=_tuple(names))])
        stop = ast.Constant(flags[0] if flags else None)
        iterable = s.iter
        if (
            isinstance(iterable, ast.Call)
            and isinstance(iterable.func, ast.Name)
            and iterable.func.id == "range"
            and not iterable.keywords
        ):
            # `range(n)` of a tensor is `gt.range(n)` (TF's AutoGraph does the same).
            iterable = _call("range_", iterable.func, *iterable.args)
        call = _call(
            "for_stmt", iterable, _name(b_name), self.current(names), _strings(names), stop, ast.Constant(carried)
        )
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
    cv = staticmethod(convert_call)

    @staticmethod
    def ld(local_vars, name):
        return local_vars.get(name, Undefined(name))

    @staticmethod
    def range_(fn, *args):
        """``range(*args)``, or ``gt.range`` when an argument is a symbolic tensor (and
        ``fn`` is the builtin)."""
        if fn is builtins.range and any(_symbolic(a) or (_is_var(a) and _native._is_tracing()) for a in args):
            return _native.range(*args)
        return fn(*args)

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
    def if_stmt(test, true_fn, false_fn, init, names, returns, live=None):
        from . import _function

        if _is_var(test) and _native._is_tracing():
            test = test.read_value()
        if not _symbolic(test):
            return true_fn(*init) if _function._truth(test) else false_fn(*init)
        if live is None:
            live = (True,) * len(names)

        def branch(fn, which):
            def run():
                out = fn(*init)
                if returns:
                    return out
                kept = []
                for n, v, needed in zip(names, out, live):
                    if not needed:
                        # Bound only inside the statement: not an output of the cond.
                        continue
                    if isinstance(v, Undefined):
                        # This branch left it unbound: the other one assigns it.
                        other = "true" if which == "false" else "false"
                        raise ValueError(
                            f"'{n}' must also be initialized in the {'else' if which == 'false' else 'if'} "
                            f"branch: it is assigned in the {other} branch of an `if` on a tensor "
                            "(both branches of a gt.cond must give every variable a value)"
                        )
                    kept.append(v)
                return tuple(kept)

            return run

        out = _function.cond(test, branch(true_fn, "true"), branch(false_fn, "false"))
        if returns:
            return out
        it = iter(out)
        return tuple(next(it) if needed else Undefined(n) for n, needed in zip(names, live))

    @staticmethod
    def while_stmt(test_fn, body_fn, init, names, carried=None):
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
        if carried is None:
            carried = (True,) * len(names)
        for n, v, c in zip(names, init, carried):
            if c and isinstance(v, Undefined) and not n.startswith("__gt_"):
                raise ValueError(
                    f"'{n}' must be defined before the loop: a `while` on a tensor becomes a "
                    "gt.while_loop, whose loop variables need a value on entry"
                )
        idx = [i for i, c in enumerate(carried) if c]
        full, pick = _carry(init, idx)
        out = _function.while_loop(
            lambda *v: test_fn(*full(v)),
            lambda *v: pick(body_fn(*full(v))),
            tuple(_init_value(init[i]) for i in idx),
        )
        return full(out)

    @staticmethod
    def for_stmt(iterable, body_fn, init, names, stop, carried=None):
        from . import _function

        stop_at = names.index(stop) if stop is not None else None
        if _is_var(iterable):
            iterable = iterable.read_value()
        if isinstance(iterable, _Tensor) and _symbolic(iterable):
            if carried is None:
                carried = (True,) * len(names)
            idx = [i for i, c in enumerate(carried) if c]
            full, pick = _carry(init, idx)
            n = _native.shape(iterable)[0]
            row = _native.zeros(list(iterable.shape[1:]), dtype=iterable.dtype)
            rows = iterable
            last = n - 1
            if iterable.shape[0] == 0:
                # The body is traced on a row even when the iterable is empty now (the
                # graph may run on longer ones later): a zero row after the real ones
                # is what that trace reads.
                rows = _native.concat([iterable, _native.expand_dims(row, 0)], 0)
                last = n
            stop_in = idx.index(stop_at) if stop_at is not None else None

            def test(i, *vals):
                more = i < n
                if stop_in is not None:
                    more = _native.logical_and(more, _native.logical_not(_native.cast(vals[stop_in], _native.bool)))
                return more

            def body(i, *vals):
                # Traced on the entry values (i = 0, maybe past an empty end): clamped,
                # which changes nothing when the graph runs (i < n there).
                out = body_fn(rows[_native.maximum(_native.minimum(i, last), 0)], *full(vals))
                return (i + 1, *pick(out))

            # A loop variable first bound in the loop (its target) starts as a zero row.
            init_vals = tuple(_init_value(init[i], row) for i in idx)
            out = _function.while_loop(test, body, (_native.constant(0),) + init_vals)
            return full(out[1:])
        vals = tuple(init)
        if isinstance(iterable, _Tensor):
            rows = iterable
            iterable = (rows[i] for i in range(rows.shape[0]))
        for x in iterable:
            vals = tuple(body_fn(x, *vals))
            if stop_at is not None and _function._truth(vals[stop_at]):
                break
        return vals


def _carry(init, idx):
    """For a graph loop over the names at ``idx`` of ``init`` (the others are bound only
    inside the body): ``full(vals)`` gives every name's value from the loop variables,
    ``pick(values)`` the loop variables from every name's value."""

    def full(vals):
        # The others keep their entry values: the body binds them before reading them,
        # and nothing reads them after the loop.
        out = list(init)
        for i, v in zip(idx, vals):
            out[i] = v
        return tuple(out)

    def pick(values):
        values = tuple(values)
        return tuple(values[i] for i in idx)

    return full, pick


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
