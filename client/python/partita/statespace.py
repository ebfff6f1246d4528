"""A small continuous-time state-space model: x' = A x + B u, y = C x + D u.

Linearize answers with one of these. Simulation discretises exactly for piecewise-constant
inputs (zero-order hold) through the matrix exponential of the augmented matrix [[A, B], [0, 0]],
so it needs only numpy (no scipy, no python-control).
"""

import math
import re

import numpy as np

# python-control names signals as identifiers: it reads "sys.signal" in interconnect() and
# "x[i]" as indices, and refuses names with '.' ("'.' not allowed"). Every name a StateSpace
# shows in states / inputs / outputs matches this (the engine's names are kept in
# state_names / input_names / output_names).
CONTROL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def control_name(name):
    """The engine's name as python-control accepts it: "slide.rate" -> "slide_dot",
    "slide.acc" -> "slide_ddot", any other '.' or character outside [A-Za-z0-9_] -> '_',
    a leading digit prefixed with '_'."""
    base, suffix = name, ""
    if base.endswith(".rate"):
        base, suffix = base[:-5], "_dot"
    elif base.endswith(".acc"):
        base, suffix = base[:-4], "_ddot"
    out = re.sub(r"[^A-Za-z0-9_]", "_", base) + suffix
    if not out or out[0].isdigit():
        out = "_" + out
    return out


def control_names(names):
    """control_name of each, made unique ("a_b" twice: "a_b", "a_b_2")."""
    out, seen = [], set()
    for n in names:
        c = control_name(n)
        k, cand = 2, c
        while cand in seen:
            cand = "%s_%d" % (c, k)
            k += 1
        seen.add(cand)
        out.append(cand)
    return out


def is_control_name(name):
    """python-control's rule for a signal name, as this package applies it."""
    return bool(CONTROL_NAME.match(name)) and "." not in name


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

    states / inputs / outputs are names python-control accepts ("hinge_dot"); the engine's
    names ("hinge.rate") are in state_names / input_names / output_names, in the same order.
    mck holds the second-order form (M, C, K) when the engine gave one, and server_eigenvalues
    the eigenvalues it computed (complex numpy array), for comparison with eigenvalues().
    dt is 0 for a continuous-time system, the sampling period after c2d().
    """

    def __init__(self, A, B, C=None, D=None, states=None, inputs=None, outputs=None,
                 mck=None, server_eigenvalues=None, dt=0.0):
        self.A = np.atleast_2d(np.asarray(A, dtype=float))
        n = self.A.shape[0]
        if self.A.shape != (n, n):
            raise ValueError("A must be square, got %s" % (self.A.shape,))
        # Shapes are kept when given as 2-D arrays, so empty ones (no input: B is n x 0) stay
        # what they are; flat data is read row-major.
        self.B = self._shape(B, n, None)
        m = self.B.shape[1]
        self.C = np.eye(n) if C is None else self._shape(C, None, n)
        p = self.C.shape[0]
        self.D = np.zeros((p, m)) if D is None else self._shape(D, p, m)
        def names(given, k, prefix):   # given names, or x0, x1, ... when they do not fit
            given = list(given) if given is not None else []
            return given if len(given) == k else ["%s%d" % (prefix, i) for i in range(k)]

        self.state_names = names(states, n, "x")
        self.input_names = names(inputs, m, "u")
        self.output_names = names(outputs, p, "y")
        self.states = control_names(self.state_names)
        self.inputs = control_names(self.input_names)
        self.outputs = control_names(self.output_names)
        self.dt = float(dt)
        self.mck = mck
        self.server_eigenvalues = server_eigenvalues

    @staticmethod
    def _shape(x, rows, cols):
        x = np.asarray(x, dtype=float)
        if x.ndim == 2 and (rows is None or x.shape[0] == rows) and \
                (cols is None or x.shape[1] == cols):
            return x
        if rows is None:
            rows = x.size // cols if cols else 0
        if cols is None:
            cols = x.size // rows if rows else 0
        return x.reshape(rows, cols)

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

    def _input_index(self, input):
        if isinstance(input, str):
            names = self.inputs if input in self.inputs else self.input_names
            return names.index(input)
        return int(input)

    def step(self, duration, dt, input=0):
        """Response from rest to a unit step on one input (index or name): (t, y), y with one
        row per time (steps+1 x p). step_response() gives python-control's shapes."""
        idx = self._input_index(input)
        u = np.zeros(self.ninputs)
        u[idx] = 1.0
        steps = int(round(duration / dt))
        t, _x, y = self.simulate(u, dt, steps=steps)
        return t, y

    # ---- python-control conventions ----
    def c2d(self, dt, method="zoh"):
        """The zero-order-hold discretisation as a StateSpace with .dt = dt (python-control's
        c2d(sys, dt) / sys.sample(dt)): x[k+1] = A x[k] + B u[k], y = C x + D u."""
        if method != "zoh":
            raise ValueError("only method='zoh' is implemented")
        if self.dt:
            raise ValueError("already discrete (dt = %g)" % self.dt)
        ad, bd = self.discretize(dt)
        out = StateSpace(ad, bd, self.C, self.D, states=self.state_names,
                         inputs=self.input_names, outputs=self.output_names, dt=dt)
        return out

    def poles(self):
        return np.linalg.eigvals(self.A)

    def damp(self):
        """(wn, zeta, poles) as python-control's damp(): natural frequencies in rad/s, damping
        ratios, poles; for a discrete system through log(pole) / dt."""
        p = self.poles()
        s = np.log(p.astype(complex)) / self.dt if self.dt else p.astype(complex)
        wn = np.abs(s)
        with np.errstate(invalid="ignore", divide="ignore"):
            zeta = np.where(wn > 0, -s.real / np.where(wn > 0, wn, 1), 1.0)
        return wn, zeta, p

    def step_response(self, T, input=None, X0=None, squeeze=None):
        """Unit-step response from X0 (default rest) at the times T (evenly spaced, from 0;
        or a final time: 1000 steps), with python-control's shapes: outputs (ny, nu, nt) for
        every input, (ny, nt) for one input (index or name), squeezed to (nt,) when the system
        is SISO (squeeze=None) or always (squeeze=True). Returns a StepResponse: time,
        outputs, states (nx, [nu,] nt), and `t, y = response` unpacks as python-control's."""
        T = np.asarray(T, dtype=float)
        if T.ndim == 0:
            T = np.linspace(0.0, float(T), 1001)
        dt = T[1] - T[0] if len(T) > 1 else 1.0
        if len(T) > 2 and np.max(np.abs(np.diff(T) - dt)) > 1e-9 * max(1.0, abs(dt)):
            raise ValueError("T must be evenly spaced")
        n = self.nstates
        x0 = np.zeros(n) if X0 is None else np.asarray(X0, dtype=float).reshape(n)
        which = range(self.ninputs) if input is None else [self._input_index(input)]
        ys, xs = [], []
        for i in which:
            u = np.zeros(self.ninputs)
            u[i] = 1.0
            if self.dt:
                xk = np.zeros((len(T), n))
                xk[0] = x0
                for k in range(len(T) - 1):
                    xk[k + 1] = self.A @ xk[k] + self.B @ u
            else:
                _t, xk, _y = self.simulate(u, dt, x0=x0, steps=len(T) - 1)
            ys.append((xk @ self.C.T + u @ self.D.T).T)    # (ny, nt)
            xs.append(xk.T)                                 # (nx, nt)
        y = np.stack(ys, axis=1)        # (ny, nu, nt)
        x = np.stack(xs, axis=1)
        if input is not None:
            y, x = y[:, 0, :], x[:, 0, :]
        siso = self.noutputs == 1 and (self.ninputs == 1 or input is not None)
        if squeeze or (squeeze is None and siso):
            y = np.squeeze(y)
        return StepResponse(T, y, x)

    def to_control(self):
        """A python-control StateSpace (control.ss) with these matrices, names and dt; needs
        python-control installed (not in Debian 12)."""
        import control   # noqa: PLC0415 (optional dependency)
        kw = dict(states=self.states, inputs=self.inputs, outputs=self.outputs)
        name = getattr(self, "model", None)
        if name:
            kw["name"] = control_name(name)
        if self.dt:
            return control.ss(self.A, self.B, self.C, self.D, self.dt, **kw)
        return control.ss(self.A, self.B, self.C, self.D, **kw)

    def __repr__(self):
        return "StateSpace(states=%r, inputs=%r, outputs=%r%s)" % (
            self.states, self.inputs, self.outputs, ", dt=%g" % self.dt if self.dt else "")


class StepResponse:
    """time (nt), outputs and states in python-control's shapes (see step_response); unpacks
    as (time, outputs)."""

    def __init__(self, time, outputs, states):
        self.time, self.outputs, self.states = time, outputs, states

    def __iter__(self):
        return iter((self.time, self.outputs))
