"""A small continuous-time state-space model: x' = A x + B u, y = C x + D u.

Linearize answers with one of these. Simulation discretises exactly for piecewise-constant
inputs (zero-order hold) through the matrix exponential of the augmented matrix [[A, B], [0, 0]],
so it needs only numpy (no scipy, no python-control).
"""

import math

import numpy as np


def expm(a):
    """Matrix exponential by scaling and squaring with a diagonal Pade(6, 6) approximant."""
    a = np.asarray(a, dtype=float)
    n = a.shape[0]
    if n == 0:
        return np.zeros((0, 0))
    norm = np.linalg.norm(a, 1)
    # Scale so that ||A / 2^s|| <= 0.5, where Pade(6,6) is accurate to about 1e-16.
    s = max(0, int(math.ceil(math.log2(norm / 0.5)))) if norm > 0.5 else 0
    x = a / (2.0 ** s)
    # Pade(6,6) coefficients c_k = (12-k)! 6! / (12! k! (6-k)!)
    c = [1.0]
    for k in range(1, 7):
        c.append(c[-1] * (6 - k + 1) / (k * (12 - k + 1)))
    ident = np.eye(n)
    power = ident
    num = c[0] * ident
    den = c[0] * ident
    for k in range(1, 7):
        power = power @ x
        num = num + c[k] * power
        den = den + ((-1) ** k) * c[k] * power
    e = np.linalg.solve(den, num)
    for _ in range(s):
        e = e @ e
    return e


class StateSpace:
    """Matrices A (n x n), B (n x m), C (p x n), D (p x m) with names for x, u and y.

    mck holds the second-order form (M, C, K) when the server gave one, and server_eigenvalues
    the eigenvalues it computed (complex numpy array), for comparison with eigenvalues().
    """

    def __init__(self, A, B, C=None, D=None, states=None, inputs=None, outputs=None,
                 mck=None, server_eigenvalues=None):
        self.A = np.atleast_2d(np.asarray(A, dtype=float))
        n = self.A.shape[0]
        if self.A.shape != (n, n):
            raise ValueError("A must be square, got %s" % (self.A.shape,))
        self.B = np.asarray(B, dtype=float).reshape(n, -1) if n else np.zeros((0, 0))
        m = self.B.shape[1]
        self.C = np.eye(n) if C is None else np.asarray(C, dtype=float).reshape(-1, n)
        p = self.C.shape[0]
        self.D = np.zeros((p, m)) if D is None else np.asarray(D, dtype=float).reshape(p, m)
        self.states = list(states) if states is not None else ["x%d" % i for i in range(n)]
        self.inputs = list(inputs) if inputs is not None else ["u%d" % i for i in range(m)]
        self.outputs = list(outputs) if outputs is not None else ["y%d" % i for i in range(p)]
        self.mck = mck
        self.server_eigenvalues = server_eigenvalues

    @property
    def nstates(self):
        return self.A.shape[0]

    @property
    def ninputs(self):
        return self.B.shape[1]

    @property
    def noutputs(self):
        return self.C.shape[0]

    def eigenvalues(self):
        return np.linalg.eigvals(self.A)

    def modes(self):
        """(eigenvalue, natural frequency in Hz, damping ratio) per eigenvalue, by frequency."""
        out = []
        for lam in self.eigenvalues():
            wn = abs(lam)
            zeta = -lam.real / wn if wn > 0 else 1.0
            out.append((complex(lam), wn / (2 * math.pi), zeta))
        out.sort(key=lambda mode: (mode[1], mode[0].imag))
        return out

    def discretize(self, dt):
        """Zero-order-hold discretisation: x[k+1] = Ad x[k] + Bd u[k]."""
        n, m = self.nstates, self.ninputs
        aug = np.zeros((n + m, n + m))
        aug[:n, :n] = self.A
        aug[:n, n:] = self.B
        e = expm(aug * dt)
        return e[:n, :n], e[:n, n:]

    def simulate(self, u, dt, x0=None, steps=None):
        """Simulate with piecewise-constant inputs.

        u: array (steps x m), a constant vector (m), or a function u(t) -> (m); steps is
        required unless u is an array. Returns (t, x, y) with steps+1 rows each.
        """
        n, m = self.nstates, self.ninputs
        if callable(u):
            if steps is None:
                raise ValueError("steps is required when u is a function")
            ufun = u
        else:
            arr = np.asarray(u, dtype=float)
            if arr.ndim <= 1:
                if steps is None:
                    raise ValueError("steps is required when u is constant")
                vec = arr.reshape(m)
                ufun = lambda _t: vec  # noqa: E731
            else:
                if arr.shape[1] != m:
                    raise ValueError("u has %d columns, the model %d inputs" % (arr.shape[1], m))
                steps = arr.shape[0] if steps is None else steps
                ufun = lambda t: arr[min(int(round(t / dt)), arr.shape[0] - 1)]  # noqa: E731
        ad, bd = self.discretize(dt)
        x = np.zeros((steps + 1, n))
        uu = np.zeros((steps + 1, m))
        x[0] = np.zeros(n) if x0 is None else np.asarray(x0, dtype=float).reshape(n)
        t = np.arange(steps + 1) * dt
        for k in range(steps + 1):
            uu[k] = np.asarray(ufun(t[k]), dtype=float).reshape(m)
            if k < steps:
                x[k + 1] = ad @ x[k] + bd @ uu[k]
        y = x @ self.C.T + uu @ self.D.T
        return t, x, y

    def step(self, duration, dt, input=0):
        """Response from rest to a unit step on one input (index or name): (t, y)."""
        idx = self.inputs.index(input) if isinstance(input, str) else int(input)
        u = np.zeros(self.ninputs)
        u[idx] = 1.0
        steps = int(round(duration / dt))
        t, _x, y = self.simulate(u, dt, steps=steps)
        return t, y

    def __repr__(self):
        return "StateSpace(states=%r, inputs=%r, outputs=%r)" % (self.states, self.inputs,
                                                                  self.outputs)
