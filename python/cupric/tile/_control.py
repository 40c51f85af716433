"""Control flow for the frontend: `if` and `for` statements, compile-time ones evaluated in
Python, run-time ones built as IR regions whose assigned variables are merged (if) or carried
(for), with their types unified by re-building the region when the body changes them."""

import ast

import numpy as np

from .. import _cupric as _c
from .. import _dtypes as _dt
from . import _ops
from ._source import SUPPORTED
from ._values import PY_NUMBERS, Value


def _stored_names(stmts):
    names = set()
    for s in stmts:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.add(n.id)
    return names


class ControlFlow:
    """Mixin of Frontend: the statements that open regions."""

    def stmt_If(self, node, scope):
        cond = self.expr(node.test, scope)
        if not isinstance(cond, Value):
            self.block(node.body if cond else node.orelse, scope)
            return
        if cond.shape:
            self.error(
                f"an `if` needs a scalar condition, got a tile {cond.dtype}{list(cond.shape)}; use ct.where for tiles",
                node.test,
            )
        self.runtime_if(node, cond, scope)

    def runtime_if(self, node, cond, scope):
        assigned = _stored_names(node.body) | _stored_names(node.orelse)
        else_assigned = _stored_names(node.orelse)
        targets = {}
        for _ in range(4):
            depth = self.b.depth()
            self.b.begin_if(cond.id)
            try:
                then_scope = dict(scope)
                self.block(node.body, then_scope)
                names = [n for n in sorted(assigned) if n in then_scope and (n in scope or n in else_assigned)]
                names = [n for n in names if self._mergeable(n, then_scope.get(n), scope.get(n), node)]
                then_vals = [self.coerce(self.to_value(then_scope[n], n), targets.get(n)) for n in names]
                self.b.begin_else([v.id for v in then_vals])
                else_scope = dict(scope)
                self.block(node.orelse, else_scope)
                for n in names:
                    if n not in else_scope:
                        self.error(f"'{n}' is assigned in the `if` branch but has no value in the `else` branch", node)
                    self._mergeable(n, else_scope[n], scope.get(n), node)
                else_vals = [self.coerce(self.to_value(else_scope[n], n), targets.get(n)) for n in names]
            except BaseException:
                self.b.rollback(depth)
                raise
            changed = self._unify(names, then_vals, else_vals, targets, "if/else", node)
            if changed:
                self.b.rollback(depth)
                continue
            results = self.b.end_if([v.id for v in else_vals])
            for n, r in zip(names, results, strict=True):
                scope[n] = self.wrap(r)
            for n in assigned - set(names):
                scope.pop(n, None)  # defined on one side only: not usable after the if
            return
        self.error("the types of the values assigned in this if/else do not settle", node)

    def _mergeable(self, name, value, before, node):
        if isinstance(value, Value) and not value.is_array:
            return True
        if isinstance(value, PY_NUMBERS) or isinstance(value, np.generic):
            return True
        if value is before:
            return False  # untouched compile-time value: nothing to merge
        self.error(
            f"'{name}' holds {self._describe(value)} and is assigned under a run-time condition; only tiles "
            "and scalars can be",
            node,
        )

    def coerce(self, v, target):
        """v converted to the (dtype, shape) target, if one is set."""
        if target is None:
            return v
        dtype, shape = target
        vid = v.id
        if v.dtype != dtype:
            vid = self.b.cast(vid, dtype)
        if tuple(self.type(vid)[2]) != tuple(shape):
            vid = (
                self.b.full(list(shape), vid, dtype) if not self.type(vid)[2] else self.b.broadcast_to(vid, list(shape))
            )
        return self.wrap(vid)

    def _unify(self, names, first, second, targets, where, node):
        """Records target types where `first` and `second` differ; True if any changed."""
        changed = False
        for n, a, b in zip(names, first, second, strict=True):
            if a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape) and a.weak == b.weak:
                continue
            if a.weak and not b.weak:
                dtype = b.dtype
            elif b.weak and not a.weak:
                dtype = a.dtype
            else:
                dtype = _c.result_type(a.dtype, b.dtype)
            try:
                shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
            except ValueError:
                self.error(
                    f"'{n}' is a tile of shape {tuple(a.shape)} before and {tuple(b.shape)} after the {where}; "
                    "a value must keep its shape",
                    node,
                )
            new = (_dt.as_dtype(dtype), shape)
            if targets.get(n) != new:
                targets[n] = new
                changed = True
        return changed

    def stmt_For(self, node, scope):
        if node.orelse:
            self.error("`for ... else` is not supported", node)
        it = node.iter
        if isinstance(it, ast.Call):
            fn = self.expr(it.func, scope)
            if fn is _ops.static_range or fn is range:
                args = [self.expr(a, scope) for a in it.args]
                if it.keywords:
                    self.error("range() takes no keyword arguments", it)
                if fn is _ops.static_range:
                    bounds = [self.int_const(a, "ct.static_range bound") for a in args]
                    for i in range(*bounds):
                        self.assign(node.target, i, scope)
                        self.block(node.body, scope)
                    return
                self.runtime_for(node, args, scope)
                return
        items = self.expr(it, scope)
        if isinstance(items, (tuple, list)):
            for x in items:
                self.assign(node.target, x, scope)
                self.block(node.body, scope)
            return
        self.error("a for loop must iterate over range(...), ct.static_range(...) or a tuple", it)

    def runtime_for(self, node, args, scope):
        if not isinstance(node.target, ast.Name):
            self.error("the loop variable of a range() loop must be a plain name", node.target)
        if not 1 <= len(args) <= 3:
            self.error(f"range expected 1 to 3 arguments, got {len(args)}", node.iter)
        lo, hi, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
        stored = _stored_names(node.body) - {node.target.id}
        carried = sorted(n for n in stored if n in scope and self._carriable(scope[n]))
        targets = {}
        for _ in range(6):
            depth = self.b.depth()
            inits = [self.coerce(self.to_value(scope[n], n), targets.get(n)) for n in carried]
            ids = self.b.begin_for(self.val(lo), self.val(hi), self.val(step), [v.id for v in inits])
            try:
                body = dict(scope)
                body[node.target.id] = self.wrap(ids[0])
                for n, i in zip(carried, ids[1:], strict=True):
                    body[n] = self.wrap(i)
                self.block(node.body, body)
                yields = [self.coerce(self.to_value(body[n], n), targets.get(n)) for n in carried]
            except BaseException:
                self.b.rollback(depth)
                raise
            if self._unify(carried, inits, yields, targets, "loop", node):
                self.b.rollback(depth)
                continue
            results = self.b.end_for([v.id for v in yields])
            for n, r in zip(carried, results, strict=True):
                scope[n] = self.wrap(r)
            for n in stored - set(carried):
                scope.pop(n, None)  # first defined inside the loop: not usable after it
            scope.pop(node.target.id, None)
            return
        self.error("the types of the values carried by this loop do not settle", node)

    @staticmethod
    def _carriable(v):
        return (isinstance(v, Value) and not v.is_array) or isinstance(v, PY_NUMBERS) or isinstance(v, np.generic)

    def stmt_While(self, node, scope):
        self.error(f"`while` loops are not supported (use `for ... in range(...)`); {SUPPORTED}", node)

    def stmt_Break(self, node, scope):
        self.error("`break` is not supported in tile kernels (use a loop bound or ct.where)", node)

    stmt_Continue = stmt_Break

    # ---- expressions -------------------------------------------------------------------------------
