"""Regenerates the Chebyshev tables of bessel_math.h (Note [Bessel family approximations]).

Each table holds the coefficients c_k of f(u) ~ c_0 + sum_k c_k T_k(u), u in [-1, 1], computed
with mpmath at 40 digits on Chebyshev nodes and truncated where |c_k| falls below `tol` times the
largest one. Run with any Python that has mpmath; it prints C++ declarations.
"""
import mpmath as mp

mp.mp.dps = 40


def cheb(f, n=80, tol=1e-18):
    fv = [f(mp.cos(mp.pi * (j + mp.mpf(1) / 2) / n)) for j in range(n)]
    c = [2 * mp.fsum(fv[j] * mp.cos(mp.pi * k * (j + mp.mpf(1) / 2) / n) for j in range(n)) / n
         for k in range(n)]
    c[0] /= 2
    scale = max(abs(v) for v in c)
    m = n
    while m > 1 and abs(c[m - 1]) < tol * scale:
        m -= 1
    return c[:m]


def emit(name, c, typ='double'):
    body = ', '.join(mp.nstr(v, 20 if typ == 'double' else 10, min_fixed=0, max_fixed=0)
                     for v in c)
    print('constexpr %s %s[%d] = {%s};' % (typ, name, len(c), body))


def emit_monomial(name, c):
    """The series c as float coefficients of 1, u, u^2, ... (for Horner's rule in float, which
    rounds less than Clenshaw's recurrence for these short, well-conditioned series)."""
    coeffs = [mp.mpf(0)] * len(c)
    tk_prev, tk = [mp.mpf(1)], [mp.mpf(0), mp.mpf(1)]  # T_0, T_1 as monomial coefficients
    for k, ck in enumerate(c):
        t = tk_prev if k == 0 else tk
        if k >= 2:
            t = [2 * a for a in [mp.mpf(0)] + tk]
            for i, v in enumerate(tk_prev):
                t[i] -= v
            tk_prev, tk = tk, t
        for i, v in enumerate(t):
            coeffs[i] += ck * v
    emit(name, coeffs, 'float')


def sx(u, a, b):
    """The point of [a, b] that u in [-1, 1] maps to."""
    return a + (b - a) * (u + 1) / 2


def tail(nu, scale):
    # sqrt(x) e^-x I_nu(x) in w = scale / x, u = 2w - 1.
    return lambda u: (lambda x: mp.sqrt(x) * mp.exp(-x) * mp.besseli(nu, x))(scale / sx(u, 0, 1))


def main():
    # I0, I1 on [0, 8] (u = x/4 - 1) and beyond (w = 8/x).
    f0 = lambda u: mp.exp(-sx(u, 0, 8)) * mp.besseli(0, sx(u, 0, 8))
    # e^-x I1(x) / x falls 28-fold over [0, 8]; times (1 + x) it stays within 3x, so Clenshaw's
    # rounding stays small relative to the value.
    f1 = lambda u: (lambda x: mp.exp(-x) * mp.besseli(1, x) * (1 + x) / x)(sx(u, 0, 8))
    for name, f in [('kI0A', f0), ('kI0B', tail(0, 8))]:
        emit(name, cheb(f))
        emit_monomial(name + 'F', cheb(f, tol=1e-9))
    emit('kI1A', cheb(f1))
    emit('kI1B', cheb(tail(1, 8)))
    # K0, K1: minus their logarithmic parts, in z = x^2 on (0, 4]; sqrt(x) e^x K in w = 2/x.
    def k0a(u):
        x = mp.sqrt(sx(u, 0, 4))
        return mp.besselk(0, x) + mp.log(x / 2) * mp.besseli(0, x)
    def k1a(u):
        x = mp.sqrt(sx(u, 0, 4))
        return x * mp.besselk(1, x) - x * mp.log(x / 2) * mp.besseli(1, x)
    kb = lambda nu: (lambda u: (lambda x: mp.sqrt(x) * mp.exp(x) * mp.besselk(nu, x))(
        2 / sx(u, 0, 1)))
    emit('kK0A', cheb(k0a))
    emit('kK1A', cheb(k1a))
    emit('kK0B', cheb(kb(0)))
    emit('kK1B', cheb(kb(1)))
    # J0, J1 over their first two zeros, Y0, Y1 minus their logarithmic parts, z = x^2 in [0, 64].
    j01, j02 = mp.besseljzero(0, 1), mp.besseljzero(0, 2)
    j11, j12 = mp.besseljzero(1, 1), mp.besseljzero(1, 2)
    for name, v in [('kJ0Zero1', j01), ('kJ0Zero2', j02), ('kJ1Zero1', j11), ('kJ1Zero2', j12)]:
        hi = float(v)
        print('constexpr double %s[2] = {%r, %r};' % (name, hi, float(v - mp.mpf(hi))))
    def zx(u):
        z = sx(u, 0, 64)
        return z, mp.sqrt(z)
    def j0a(u):
        z, x = zx(u)
        return mp.besselj(0, x) / ((z - j01**2) * (z - j02**2))
    def j1a(u):
        z, x = zx(u)
        return mp.besselj(1, x) / (x * (z - j11**2) * (z - j12**2))
    def y0a(u):
        z, x = zx(u)
        return mp.bessely(0, x) - 2 / mp.pi * mp.log(x) * mp.besselj(0, x)
    def y1a(u):
        z, x = zx(u)
        return (mp.bessely(1, x) - 2 / mp.pi * mp.log(x) * mp.besselj(1, x) + 2 / (mp.pi * x)) / x
    for name, f in [('kJ0A', j0a), ('kJ1A', j1a), ('kY0A', y0a), ('kY1A', y1a)]:
        emit(name, cheb(f))
    # Hankel P and Q / w for x > 8, in u = 2 w^2 - 1, w = 8/x.
    def pq(nu, which):
        def f(u):
            x = 8 / mp.sqrt(sx(u, 0, 1))
            xi = x - (2 * nu + 1) * mp.pi / 4
            j, y = mp.besselj(nu, x), mp.bessely(nu, x)
            s = mp.sqrt(mp.pi * x / 2)
            if which == 'P':
                return s * (j * mp.cos(xi) + y * mp.sin(xi))
            return s * (y * mp.cos(xi) - j * mp.sin(xi)) / (8 / x)
        return f
    for nu in (0, 1):
        emit('kP%d' % nu, cheb(pq(nu, 'P')))
        emit('kQ%d' % nu, cheb(pq(nu, 'Q')))
    # Airy Ai on [-3, 1]; above 1 in w = x^(-3/2); below -3 in w = (3/|x|)^(3/2).
    emit('kAiA', cheb(lambda u: mp.airyai(sx(u, -3, 1))))
    def aib(u):
        x = sx(u, 0, 1) ** (-mp.mpf(2) / 3)
        zeta = 2 * x ** mp.mpf(1.5) / 3
        return 2 * mp.sqrt(mp.pi) * x ** mp.mpf(0.25) * mp.exp(zeta) * mp.airyai(x)
    emit('kAiB', cheb(aib))
    def aic(which):
        def f(u):
            w = sx(u, 0, 1)
            x = 3 * w ** (-mp.mpf(2) / 3)
            th = 2 * x ** mp.mpf(1.5) / 3 + mp.pi / 4
            a, b = mp.airyai(-x), mp.airybi(-x)
            s = mp.sqrt(mp.pi) * x ** mp.mpf(0.25)
            if which == 'f':
                return s * (a * mp.sin(th) + b * mp.cos(th))
            return s * (b * mp.sin(th) - a * mp.cos(th)) / w
        return f
    emit('kAiF', cheb(aic('f')))
    emit('kAiG', cheb(aic('g')))
    # erfcx(a) = t exp(S(t)), t = 1 / (1 + a/2), u = 2t - 1 (float).
    def s_of(u):
        t = sx(u, 0, 1)
        a = 2 / t - 2
        return mp.log(mp.erfc(a) * mp.exp(a * a) / t)
    emit('kErfcxSF', cheb(s_of, 60, 2e-10), 'float')
    # erfinv(a) / a in w = -log(1 - a^2) on [0, 5]; erfinv(a) / sqrt(w) in v = 1/sqrt(w).
    def erfinv_w(w):
        a = mp.sqrt(-mp.expm1(-w))
        q = mp.exp(-w) / (1 + a)  # 1 - a, without cancellation
        if q > mp.mpf('0.3'):
            return mp.erfinv(a)
        return mp.findroot(lambda z: mp.log(mp.erfc(z)) - mp.log(q), mp.sqrt(w))
    central = lambda u: erfinv_w(sx(u, 0, 5)) / mp.sqrt(-mp.expm1(-sx(u, 0, 5)))
    emit('kNdtriAF', cheb(central, 40, 1e-9), 'float')
    emit('kNdtriA', cheb(central, 40, 1e-11))
    for name, hi, tol, typ in [('kNdtriBF', mp.mpf('10.2'), 1e-9, 'float'),
                               ('kNdtriB', mp.mpf('27.5'), 1e-11, 'double')]:
        def f(u):
            s = 1 / sx(u, 1 / hi, 1 / mp.sqrt(5))
            return erfinv_w(s * s) / s
        emit(name, cheb(f, 60, tol), typ)


if __name__ == '__main__':
    main()
