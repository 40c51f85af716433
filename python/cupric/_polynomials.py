"""NumPy's poly* functions and poly1d (coefficients highest power first) on every device: evaluation
and arithmetic from ufuncs and convolve, fitting by least squares (cu.linalg.lstsq), roots as the
eigenvalues of the companion matrix (cu.linalg.eigvals)."""

import functools as _functools
import numbers as _numbers
import operator as _op

from . import _cupric as _c
from . import _dtypes as _dt
from ._math_extras import convolve, vander
from ._namespace import finfo as _finfo
from ._operands import device_of, on
from ._shape_functions import atleast_1d, trim_zeros

__all__ = ["polyval", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint", "polyfit", "roots", "poly",
           "poly1d"]


def _poly1d_aware(wrap):
    """NumPy's poly* functions take poly1d arguments for coefficients, and (when `wrap`) return
    poly1d results when any argument was one."""

    def decorate(fn):
        @_functools.wraps(fn)
        def call(*args, **kwargs):
            given = any(isinstance(a, poly1d) for a in args)
            out = fn(*(a.coeffs if isinstance(a, poly1d) else a for a in args), **kwargs)
            if not (wrap and given):
                return out
            return tuple(poly1d(o) for o in out) if isinstance(out, tuple) else poly1d(out)

        return call

    return decorate


def _arr(x):
    return x if isinstance(x, _c.ndarray) else _c.asarray(x)


def polyval(p, x):
    if isinstance(x, poly1d):  # composition, as NumPy's
        return poly1d(p)(x)
    p = p.coeffs if isinstance(p, poly1d) else p
    device = device_of(x, p)
    c = on(p, device)
    v = on(x, device)
    y = _c.zeros_like(v) if c.shape[0] == 0 else None
    for k in range(c.shape[0]):
        y = c[k] if y is None else y * v + c[k]
    return y * _c.ones_like(v) if isinstance(y, _c.ndarray) and y.ndim < v.ndim else y


def _trim(c):
    return c if c.shape[0] <= 1 else c[_first_nonzero(c):]


def _first_nonzero(c):
    nz = _c.flatnonzero(c).tolist()
    return nz[0] if nz else c.shape[0] - 1


@_poly1d_aware(wrap=True)
def polyadd(a1, a2):
    device = device_of(a1, a2)
    a, b = on(a1, device).reshape(-1), on(a2, device).reshape(-1)
    dtype = _c.result_type(a.dtype, b.dtype)
    n = max(a.shape[0], b.shape[0])
    pad = lambda c: _c.concatenate([_c.zeros((n - c.shape[0],), dtype=dtype, device=c.device), c.astype(dtype)])
    return pad(a) + pad(b)


@_poly1d_aware(wrap=True)
def polysub(a1, a2):
    device = device_of(a1, a2)
    return polyadd(on(a1, device), -on(a2, device))


@_poly1d_aware(wrap=True)
def polymul(a1, a2):
    device = device_of(a1, a2)
    return convolve(on(a1, device).reshape(-1), on(a2, device).reshape(-1))


@_poly1d_aware(wrap=True)
def polyder(p, m=1):
    c = _arr(p).reshape(-1)
    c = c if _dt.kind(c.dtype) in "fc" else c.astype("float64") if _dt.kind(c.dtype) == "b" else c
    for _ in range(_op.index(m)):
        n = c.shape[0] - 1
        if n < 0:  # already empty (NumPy: the derivative of a constant is an empty polynomial)
            return c
        c = c[:-1] * _c.arange(n, 0, -1, device=c.device).astype(c.dtype)
    return c


@_poly1d_aware(wrap=True)
def polyint(p, m=1, k=None):
    c = _arr(p).reshape(-1)
    c = c if _dt.kind(c.dtype) in "fc" else c.astype("float64")
    m = _op.index(m)
    ks = [0.0] * m if k is None else (list(k) if hasattr(k, "__len__") else [k] * m)
    for i in range(m):
        n = c.shape[0]
        c = _c.concatenate([c / _c.arange(n, 0, -1, device=c.device).astype(c.dtype),
                            _c.asarray([ks[i]], dtype=c.dtype, device=c.device)])
    return c


@_poly1d_aware(wrap=True)
def polydiv(u, v):
    """(quotient, remainder) of the long division of u by v."""
    device = device_of(u, v)
    num = on(u, device).reshape(-1)
    den = on(v, device).reshape(-1)
    work = _c.result_type(num.dtype, den.dtype, 1.0)
    num, den = num.astype(work), den.astype(work)
    m, n = num.shape[0] - 1, den.shape[0] - 1
    scale = 1.0 / den[0]
    q = _c.zeros((max(m - n + 1, 1),), dtype=work, device=num.device)
    r = num.copy()
    for k in range(m - n + 1):
        d = scale * r[k]
        q[k] = d
        r[k:k + n + 1] = r[k:k + n + 1] - d * den
    while r.shape[0] > 1 and bool(_c.isclose(r[0], 0, rtol=1e-14)):  # leading zeros go, as NumPy's
        r = r[1:]
    return q, r


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    device = device_of(x, y, w)
    xs = on(x, device)
    xs = xs.astype("float64") if _dt.kind(xs.dtype) != "c" else xs
    ys = on(y, device)
    ys = ys if _dt.kind(ys.dtype) in "fc" else ys.astype("float64")
    deg = _op.index(deg)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if xs.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if xs.size == 0:
        raise TypeError("expected non-empty vector for x")
    if ys.ndim < 1 or ys.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if xs.shape[0] != ys.shape[0]:
        raise TypeError("expected x and y to have same length")
    rcond = xs.shape[0] * float(_finfo(xs.dtype).eps) if rcond is None else rcond
    lhs = vander(xs, deg + 1)
    rhs = ys
    if w is not None:
        wv = on(w, device).astype("float64")
        if wv.ndim != 1 or wv.shape[0] != ys.shape[0]:
            raise TypeError("expected a 1-d weight vector of the same length as y")
        lhs = lhs * wv.reshape(-1, 1)
        rhs = rhs * (wv.reshape(-1, 1) if rhs.ndim == 2 else wv)
    scale = _c.sqrt(_c.sum(lhs * _c.conj(lhs), axis=0).real if _dt.kind(lhs.dtype) == "c"
                    else _c.sum(lhs * lhs, axis=0))
    scale = _c.where(scale == 0, _c.ones_like(scale), scale)
    from . import linalg

    c, resids, rank, s = linalg.lstsq(lhs / scale, rhs, rcond=rcond)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, s, rcond
    if cov:
        raise NotImplementedError("polyfit(cov=True) is not supported yet; use full=True for the residuals")
    return c


@_poly1d_aware(wrap=False)
def roots(p):
    c = _arr(p).reshape(-1)
    nz = _c.flatnonzero(c).tolist()
    if not nz:
        return _c.zeros((0,), dtype="float64", device=c.device)
    trailing = c.shape[0] - nz[-1] - 1
    c = c[nz[0]:nz[-1] + 1]
    c = c if _dt.kind(c.dtype) in "fc" else c.astype("float64")
    n = c.shape[0]
    if n > 1:
        companion = _c.zeros((n - 1, n - 1), dtype=c.dtype, device=c.device)
        if n > 2:
            i = _c.arange(n - 2, device=c.device)
            companion[i + 1, i] = 1
        companion[0, :] = -c[1:] / c[0]
        from . import linalg

        r = linalg.eigvals(companion)
    else:
        r = _c.zeros((0,), dtype=c.dtype, device=c.device)
    if trailing:
        r = _c.concatenate([r, _c.zeros((trailing,), dtype=r.dtype, device=r.device)])
    return r


def poly(seq_of_zeros):
    z = _arr(seq_of_zeros)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] != 0:
        from . import linalg

        z = linalg.eigvals(z)
    elif z.ndim != 1 and z.ndim != 0:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    z = z.reshape(-1)
    dt = z.dtype if _dt.kind(z.dtype) in "fc" else _dt.as_dtype("float64")
    a = _c.ones((1,), dtype=dt, device=z.device)
    for k in range(z.shape[0]):
        a = convolve(a, _c.concatenate([_c.ones((1,), dtype=dt, device=z.device), -z[k:k + 1].astype(dt)]))
    if _dt.kind(a.dtype) == "c":  # conjugate pairs of roots give real coefficients
        from ._math_extras import real_if_close

        a = real_if_close(a) if bool(_c.all(_c.abs(_c.imag(a)) < 1e-10 * (1 + _c.abs(_c.real(a))))) else a
    return a


def _is_scalar(x):
    """numpy.isscalar's answer for numbers: Python's and NumPy's scalars, not 0-d arrays."""
    return isinstance(x, _numbers.Number)


class poly1d:
    """numpy.poly1d: poly1d([1, 2, 3]) is x**2 + 2x + 3; poly1d(roots, r=True) is built from its
    roots; `variable` names the unknown in str(). The coefficients are a cupric array; a
    poly1d's operations run on its device."""

    __hash__ = None

    def __init__(self, c_or_r, r=False, variable=None):
        if isinstance(c_or_r, poly1d):
            self._variable = c_or_r._variable if variable is None else variable
            self._coeffs = c_or_r._coeffs
            return
        if r:
            c_or_r = poly(c_or_r)
        c = atleast_1d(on(c_or_r, device_of(c_or_r)))
        if c.ndim > 1:
            raise ValueError(f"Polynomial must be 1d only, got coefficients of shape {c.shape}")
        c = trim_zeros(c, trim="f")
        if c.shape[0] == 0:
            c = _c.zeros((1,), dtype=c.dtype, device=c.device)
        self._coeffs = c
        self._variable = "x" if variable is None else variable

    # -- NumPy's attributes and their short names
    @property
    def coeffs(self):
        return self._coeffs

    @coeffs.setter
    def coeffs(self, value):
        if value is not self._coeffs:  # NumPy allows only `p.coeffs += ...`-style writes in place
            raise AttributeError("Cannot set attribute")

    c = coef = coefficients = coeffs

    @property
    def variable(self):
        return self._variable

    @property
    def order(self):
        return self._coeffs.shape[0] - 1

    o = order

    @property
    def roots(self):
        return roots(self._coeffs)

    r = roots

    # -- conversions and printing
    def __array__(self, dtype=None, copy=None):
        import numpy

        return numpy.asarray(self._coeffs.get(), dtype=dtype)

    def _host(self):
        import numpy

        return numpy.poly1d(self._coeffs.get(), variable=self._variable)

    def __repr__(self):
        return repr(self._host())

    def __str__(self):
        return str(self._host())

    def __len__(self):
        return self.order

    def __iter__(self):
        return iter(self._coeffs)

    # -- evaluation and arithmetic (NumPy's rules: a scalar scales, anything else is a polynomial)
    def __call__(self, val):
        if isinstance(val, poly1d):
            out = poly1d([0], variable=self._variable)
            for k in range(self._coeffs.shape[0]):
                out = out * val + self._coeffs[k:k + 1]
            return out
        return polyval(self._coeffs, val)

    def _other(self, other):
        return other if isinstance(other, poly1d) else poly1d(on(other, self._coeffs.device))

    def __neg__(self):
        return poly1d(-self._coeffs)

    def __pos__(self):
        return self

    def __mul__(self, other):
        if _is_scalar(other):
            return poly1d(self._coeffs * other)
        return poly1d(polymul(self._coeffs, self._other(other)._coeffs))

    def __rmul__(self, other):
        return poly1d(other * self._coeffs) if _is_scalar(other) else self._other(other) * self

    def __add__(self, other):
        return poly1d(polyadd(self._coeffs, self._other(other)._coeffs))

    __radd__ = __add__

    def __sub__(self, other):
        return poly1d(polysub(self._coeffs, self._other(other)._coeffs))

    def __rsub__(self, other):
        return self._other(other) - self

    def __pow__(self, val):
        if not _is_scalar(val) or int(val) != val or val < 0:
            raise ValueError(f"Power to non-negative integers only, got {val!r}")
        out = poly1d(_c.ones((1,), dtype="int64", device=self._coeffs.device))
        for _ in range(int(val)):
            out = self * out
        return out

    def __truediv__(self, other):
        if _is_scalar(other):
            return poly1d(self._coeffs / other)
        q, r = polydiv(self._coeffs, self._other(other)._coeffs)
        return poly1d(q), poly1d(r)

    def __rtruediv__(self, other):
        if _is_scalar(other):
            return poly1d(other / self._coeffs)
        return self._other(other) / self

    def __eq__(self, other):
        if not isinstance(other, poly1d):
            return NotImplemented
        if self._coeffs.shape != other._coeffs.shape:
            return False
        return bool(_c.all(self._coeffs == other._coeffs))

    def __ne__(self, other):
        if not isinstance(other, poly1d):
            return NotImplemented
        return not self.__eq__(other)

    # -- coefficients by power
    def __getitem__(self, power):
        power = _op.index(power)
        if power > self.order or power < 0:
            return self._coeffs.dtype.type(0)
        return self._coeffs[self.order - power]

    def __setitem__(self, power, val):
        power = _op.index(power)
        if power < 0:
            raise ValueError(f"Does not support negative powers, got {power}")
        if power > self.order:
            zeros = _c.zeros((power - self.order,), dtype=self._coeffs.dtype, device=self._coeffs.device)
            self._coeffs = _c.concatenate([zeros, self._coeffs])
        self._coeffs[self.order - power] = val

    # -- calculus
    def integ(self, m=1, k=0):
        return poly1d(polyint(self._coeffs, m=m, k=k))

    def deriv(self, m=1):
        return poly1d(polyder(self._coeffs, m=m))
