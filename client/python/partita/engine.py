"""The Partita engine in process: Model, Data and the analyses, with numpy arrays.

    import partita
    m = partita.Model("configs/models/pendulum.yaml")
    m.step(1000)                          # the model's own data (m.data() makes more)
    print(m.state.time, m.state["hinge"])
    lin = m.linearize()                   # == `partita linearize MODEL --json`
    print(lin.A, lin.states, lin.state_names)

The same engine as `partita` and `partitad` (compiled into partita._engine), so the same
numbers: Model(path).linearize() equals `partita linearize path --json`, inverse() equals
`partita inverse`, equilibrium() equals `partita equilibrium`.
"""

import math

import numpy as np

from .statespace import StateSpace

try:
    from ._engine import ffi, lib
except ImportError as e:   # a source checkout without the built extension
    ffi = lib = None
    _IMPORT_ERROR = e
else:
    _IMPORT_ERROR = None


class EngineError(Exception):
    """An engine call failed: code (negative pt_status), name ("invalid argument") and the
    engine's message."""

    def __init__(self, code, message):
        self.code = code
        self.name = ffi.string(lib.pt_strerror(code)).decode() if lib else str(code)
        super().__init__(message or self.name)


def _need_engine():
    if lib is None:
        raise ImportError("partita was imported without its engine extension (install the "
                          "package: pip install ./client/python): %s" % _IMPORT_ERROR)


def _check(rc, err=None):
    if rc < 0:
        msg = ffi.string(err.msg).decode(errors="replace") if err is not None else ""
        raise EngineError(rc, msg)
    return rc


def _str(p):
    return ffi.string(p).decode() if p != ffi.NULL else ""


def _vec(ptr, n):
    return np.frombuffer(ffi.buffer(ptr, 8 * n), dtype=np.float64).copy() if n else \
        np.zeros(0)


class State:
    """One state of a Data: time, step, and numpy vectors of coordinate values, rates,
    accelerations and inputs, with their names; state["hinge"] is a coordinate's value."""

    def __init__(self, model, d):
        nc, ni = model.ncoord, model.ninput
        self.time = lib.pt_time(d)
        self.step = int(lib.pt_nstep(d))
        self.coordinate_names = model.coordinate_names
        self.input_names = model.input_names
        self.coordinates = _vec(lib.pt_coords(d), nc)
        self.rates = _vec(lib.pt_coord_rates(d), nc)
        self.accelerations = _vec(lib.pt_coord_accels(d), nc)
        self.inputs = _vec(lib.pt_inputs(d), ni)
        ke, pe = lib.pt_energy_kinetic(d), lib.pt_energy_potential(d)
        self.energy = {"kinetic": ke, "potential": pe, "total": ke + pe}
        self.residual = {"position": lib.pt_residual_position(d),
                         "velocity": lib.pt_residual_velocity(d)}

    def coordinate(self, name):
        return self.coordinates[self.coordinate_names.index(name)]

    def rate(self, name):
        return self.rates[self.coordinate_names.index(name)]

    def __getitem__(self, name):
        return self.coordinate(name)

    def __repr__(self):
        return "State(t=%g, %s)" % (self.time, ", ".join(
            "%s=%.6g" % kv for kv in zip(self.coordinate_names, self.coordinates)))


class Data:
    """The mutable state of a Model (MuJoCo's model/data split): step it, set inputs and
    states, copy it (a snapshot). Made by Model.data()."""

    def __init__(self, model, _ptr=None):
        self.model = model
        ptr = _ptr if _ptr is not None else lib.pt_data_new(model._m)
        if ptr == ffi.NULL:
            raise MemoryError("pt_data_new")
        self._d = ffi.gc(ptr, lib.pt_data_free)

    def step(self, n=1):
        """n fixed steps; answers the state after them. EngineError if a step fails (the
        data stays at the last good state)."""
        for _ in range(int(n)):
            _check(lib.pt_step(self.model._m, self._d))
        return self.state

    def forward(self):
        """Evaluate accelerations and outputs at the current state without stepping."""
        _check(lib.pt_forward(self.model._m, self._d))
        return self.state

    @property
    def state(self):
        return State(self.model, self._d)

    @property
    def time(self):
        return lib.pt_time(self._d)

    def set_inputs(self, values=None, **named):
        """values: {input: value}, or a sequence for inputs 0..n-1 (ModelInfo order); or
        keyword arguments. Held until changed; clipped to the actuator's limit."""
        m = self.model
        items = []
        if values is not None:
            if hasattr(values, "items"):
                items += list(values.items())
            else:
                values = list(values)
                if len(values) != m.ninput:
                    raise ValueError("%d values for %d inputs" % (len(values), m.ninput))
                items += list(zip(m.input_names, values))
        items += list(named.items())
        idx = []
        for name, v in items:
            i = lib.pt_input_index(m._m, name.encode())
            if i < 0:
                raise KeyError("model '%s' has no input '%s' (inputs: %s)"
                               % (m.name, name, ", ".join(m.input_names)))
            if not np.isfinite(v):
                raise ValueError("input '%s': value not finite" % name)
            idx.append((i, float(v)))
        for i, v in idx:
            _check(lib.pt_set_input(m._m, self._d, i, v))

    def set_state(self, coordinates=None, rates=None):
        """Coordinate values and rates by name ({name: value}); the engine assembles a
        consistent state around them. Nothing changes on error."""
        pos = self.model._assigns(coordinates)
        vel = self.model._assigns(rates)
        err = ffi.new("pt_error *")
        _check(lib.pt_set_state(self.model._m, self._d, pos.arr, len(pos), vel.arr, len(vel),
                                err), err)

    def reset(self):
        lib.pt_data_reset(self.model._m, self._d)

    # control elements (docs/controls.md)
    @property
    def signals(self):
        """The signals at the state held now (Model.signal_names order)."""
        return _vec(lib.pt_signals(self._d), self.model.nsignal)

    @property
    def control_states(self):
        """The control states (Model.control_state_names order)."""
        return _vec(lib.pt_control_states(self._d), self.model.ncontrol_state)

    @property
    def parameters(self):
        """{name: value} of the control elements' tunable parameters, as tuned."""
        v = _vec(lib.pt_params(self._d), len(self.model.parameter_names))
        return dict(zip(self.model.parameter_names, v.tolist()))

    def signal(self, name):
        return self.signals[self.model.signal_names.index(name)]

    def set_control_states(self, values):
        """Control states by name ({"pid.integral": 0.2}); the state is evaluated again."""
        m = self.model
        for name, v in values.items():
            i = lib.pt_control_state_index(m._m, name.encode())
            if i < 0:
                raise KeyError("model '%s' has no control state '%s' (control states: %s)"
                               % (m.name, name, ", ".join(m.control_state_names)))
            idx, val, err = ffi.new("int *", i), ffi.new("double *", float(v)), \
                ffi.new("pt_error *")
            _check(lib.pt_set_control_states(m._m, self._d, idx, val, 1, err), err)

    def set_parameters(self, values):
        """Control parameters by name ({"pid.kp": 2.0}), from the next step on; a refused
        value raises EngineError with the reason (the ones before it are kept)."""
        m = self.model
        for name, v in values.items():
            i = lib.pt_param_index(m._m, name.encode())
            if i < 0:
                raise KeyError("model '%s' has no parameter '%s' (parameters: %s)"
                               % (m.name, name, ", ".join(m.parameter_names)))
            err = ffi.new("pt_error *")
            _check(lib.pt_set_param(m._m, self._d, i, float(v), err), err)

    def copy(self):
        """A snapshot: continues bit-identically."""
        c = Data(self.model)
        _check(lib.pt_data_copy(self.model._m, c._d, self._d))
        return c

    def set_dt(self, dt):
        if not (dt > 0 and math.isfinite(dt)):
            raise ValueError("dt must be positive and finite")
        lib.pt_set_dt(self._d, float(dt))

    def set_integrator(self, name):
        it = ffi.new("pt_integrator *")
        if lib.pt_integrator_parse(name.encode(), it) < 0:
            raise ValueError("integrator: rk4, abm4 or euler")
        lib.pt_set_integrator(self._d, it[0])


class Model:
    """A model file (YAML or URDF) loaded, assembled and compiled by the engine.

    Model(path, floating_base=False, dt=None, integrator=None, balance_inertia=False,
    no_joint_limits=False, ground_plane=None); Model.from_string(text). The options are the
    CLI's --floating-base, --dt, --integrator, --balance-inertia (URDF: repair non-physical
    inertias), --no-joint-limits (limits kept but not enforced) and --ground-plane Z (the plane
    z = Z added to the ground's collision shapes).
    The model keeps one Data of its own (model.default_data) for step(), state, set_inputs()
    and set_state(); data() makes independent ones. The analyses work at a Data's state (by
    default the model's own) on a copy, optionally moved by init / init_rate / set first, as
    the CLI's --init / --init-rate / --set do.
    """

    def __init__(self, path=None, floating_base=False, dt=None, integrator=None, _text=None,
                 _format=0, balance_inertia=False, no_joint_limits=False, ground_plane=None):
        _need_engine()
        opt = ffi.new("pt_load_options *")
        opt.floating_base = 1 if floating_base else 0
        opt.balance_inertia = 1 if balance_inertia else 0
        opt.no_joint_limits = 1 if no_joint_limits else 0
        if ground_plane is not None:
            if not math.isfinite(ground_plane):
                raise ValueError("ground_plane must be finite")
            opt.ground_plane = 1
            opt.ground_z = float(ground_plane)
        if dt is not None:
            if not (dt > 0 and math.isfinite(dt)):
                raise ValueError("dt must be positive and finite")
            opt.dt = float(dt)
        if integrator is not None:
            it = ffi.new("pt_integrator *")
            if lib.pt_integrator_parse(integrator.encode(), it) < 0:
                raise ValueError("integrator: rk4, abm4 or euler")
            opt.has_integrator = 1
            opt.integrator = it[0]
        out = ffi.new("pt_model **")
        err = ffi.new("pt_error *")
        if _text is not None:
            raw = _text.encode() if isinstance(_text, str) else bytes(_text)
            rc = lib.pt_model_load_string(raw, len(raw), _format, b"<string>", opt, out, err)
        else:
            rc = lib.pt_model_load_file(str(path).encode(), opt, out, err)
        _check(rc, err)
        if out[0] == ffi.NULL:
            raise EngineError(-4, "the model could not be loaded")
        self._m = ffi.gc(out[0], lib.pt_model_free)
        self.path = path
        m = self._m
        self.name = _str(lib.pt_model_name(m))
        self.warnings = [w for w in _str(lib.pt_model_warnings(m)).split("\n") if w]
        self.ncoord = lib.pt_model_ncoord(m)
        self.ninput = lib.pt_model_ninput(m)
        self.ndof = lib.pt_model_ndof(m)
        self.nbody = lib.pt_model_nbody(m)
        self.dt = lib.pt_model_dt(m)
        self.coordinate_names = [_str(lib.pt_coord_name(m, i)) for i in range(self.ncoord)]
        self.input_names = [_str(lib.pt_input_name(m, i)) for i in range(self.ninput)]
        self.body_names = [_str(lib.pt_body_name(m, i)) for i in range(self.nbody)]
        self.joint_names = [_str(lib.pt_joint_name(m, i))
                            for i in range(lib.pt_model_njoint(m))]
        self.actuator_names = [_str(lib.pt_actuator_name(m, i))
                               for i in range(lib.pt_model_nactuator(m))]
        self.motion_names = [_str(lib.pt_motion_name(m, i))
                             for i in range(lib.pt_model_nmotion(m))]
        # control elements (docs/controls.md)
        self.nsignal = lib.pt_model_nsignal(m)
        self.ncontrol_state = lib.pt_model_ncontrol_state(m)
        self.signal_names = [_str(lib.pt_signal_name(m, i)) for i in range(self.nsignal)]
        self.control_state_names = [_str(lib.pt_control_state_name(m, i))
                                    for i in range(self.ncontrol_state)]
        self.parameter_names = [_str(lib.pt_param_name(m, i))
                                for i in range(lib.pt_model_nparam(m))]
        self.input_sources = [_str(lib.pt_input_source(m, i)) if lib.pt_input_source(m, i)
                              != ffi.NULL else "" for i in range(self.ninput)]
        self.integrator = _str(lib.pt_integrator_name(lib.pt_model_integrator(m)))
        self.default_data = Data(self)

    @classmethod
    def from_string(cls, text, format="auto", **kw):
        """A model from text: format "yaml", "urdf" or "auto" (by content)."""
        fmt = {"auto": 0, "yaml": 1, "urdf": 2}[format]
        return cls(_text=text, _format=fmt, **kw)

    def __repr__(self):
        return "Model(%r: %d dof, coordinates %s, inputs %s)" % (
            self.name, self.ndof, self.coordinate_names, self.input_names)

    # ---- the model's own data ----
    def data(self):
        """A new Data at the model's assembled initial state."""
        return Data(self)

    def step(self, n=1):
        return self.default_data.step(n)

    @property
    def state(self):
        return self.default_data.state

    def set_inputs(self, values=None, **named):
        self.default_data.set_inputs(values, **named)

    def set_state(self, coordinates=None, rates=None):
        self.default_data.set_state(coordinates, rates)

    def reset(self):
        self.default_data.reset()

    # ---- helpers ----
    def _assigns(self, values):
        values = dict(values or {})
        arr = ffi.new("pt_assign[]", max(1, len(values)))
        for k, (name, v) in enumerate(values.items()):
            c = lib.pt_coord_index(self._m, name.encode())
            if c < 0:
                raise KeyError("model '%s' has no coordinate '%s' (coordinates: %s)"
                               % (self.name, name, ", ".join(self.coordinate_names)))
            if not np.isfinite(v):
                raise ValueError("coordinate '%s': value not finite" % name)
            arr[k].coord = c
            arr[k].value = float(v)
        return _Assigns(arr, len(values))

    def _operating_point(self, data, init, init_rate, inputs):
        d = (data or self.default_data).copy()
        if init or init_rate:
            d.set_state(init, init_rate)
        if inputs:
            d.set_inputs(inputs)
        return d

    def _reactions(self, ptr):
        out = {}
        for j, name in enumerate(self.joint_names):
            r = [ptr[6 * j + k] for k in range(6)]
            out[name] = {"force": np.array(r[:3]), "torque": np.array(r[3:])}
        return out

    # ---- analyses ----
    def inverse(self, acc=None, gravity=False, at=None, init=None, init_rate=None, data=None):
        """Inverse dynamics, as `partita inverse`: without acc, the kinematic inverse dynamics
        at time `at` (every degree of freedom prescribed by motions); with acc ({coordinate:
        acceleration}, "all" for every actuated coordinate), a torque request; gravity=True:
        the holding efforts (every rate and actuated acceleration zero). Answers the members
        of `partita inverse --json` (numpy arrays for the reaction vectors)."""
        acc = dict(acc or {})
        if gravity and (acc or init_rate):
            raise ValueError("gravity: every rate and acceleration is zero; give no acc and no "
                             "init_rate")
        d = (data or self.default_data).copy()
        m = self._m
        err = ffi.new("pt_error *")
        all_value = acc.pop("all", None)
        named = self._assigns(acc)
        nact = lib.pt_actuated_coords(m, ffi.NULL, 0)
        res = ffi.gc(lib.pt_inverse_result_new(m, len(named) + nact),
                     lib.pt_inverse_result_free)
        if res == ffi.NULL:
            raise MemoryError("pt_inverse_result_new")
        reqs = []
        if all_value is not None:
            if nact == 0:
                raise ValueError("acc all=...: model '%s' has no actuated coordinate" % self.name)
            coords = ffi.new("int[]", nact)
            lib.pt_actuated_coords(m, coords, nact)
            reqs = [[coords[k], float(all_value)] for k in range(nact)]
        for k in range(len(named)):
            c, v = named.arr[k].coord, named.arr[k].value
            for r in reqs:
                if r[0] == c:
                    r[1] = v
                    break
            else:
                reqs.append([c, v])
        if at is not None and (reqs or gravity):
            _check(lib.pt_inverse_set_time(m, d._d, float(at), err), err)
        if init or init_rate:
            d.set_state(init, init_rate)
        if gravity:
            _check(lib.pt_inverse_holding(m, d._d, res, err), err)
        elif reqs:
            arr = ffi.new("pt_assign[]", len(reqs))
            for k, (c, v) in enumerate(reqs):
                arr[k].coord, arr[k].value = c, v
            _check(lib.pt_inverse_request(m, d._d, arr, len(reqs), res, err), err)
        else:
            t = float(at) if at is not None else d.time
            _check(lib.pt_inverse_kinematic(m, d._d, t, res, err), err)
        efforts = {}
        for k in range(res.nreq):
            efforts[self.actuator_names[res.req_actuator[k]]] = res.req_effort[k]
        for i in range(res.nmotion):
            efforts[self.motion_names[i]] = res.motion_effort[i]
        nc = self.ncoord
        return {"model": self.name, "time": res.time,
                "mode": "torque_request" if res.nreq > 0 else "kinematic",
                "efforts": efforts, "reactions": self._reactions(res.reaction),
                "coordinates": dict(zip(self.coordinate_names, _vec(res.coord, nc))),
                "rates": dict(zip(self.coordinate_names, _vec(res.coord_rate, nc))),
                "accelerations": dict(zip(self.coordinate_names, _vec(res.coord_acc, nc)))}

    def linearize(self, states=(), inputs=(), outputs=(), init=None, init_rate=None, set=None,
                  dense=False, data=None):
        """The linearized plant x' = A x + B u, y = C x + D u at a state (default: the model's
        own data, at its initial state until stepped), as `partita linearize --json`: a
        Linearization (a StateSpace) with A, B, C, D, mck, eigenvalues, notes, order, time.
        states / inputs / outputs: names (empty: the defaults); init / init_rate: the operating
        point's coordinates and rates ({name: value}); set: actuator inputs held there."""
        d = self._operating_point(data, init, init_rate, set)
        keep = []

        def names(seq):
            seq = [seq] if isinstance(seq, str) else list(seq)
            arr = ffi.new("char *[]", max(1, len(seq)))
            for i, s in enumerate(seq):
                keep.append(ffi.new("char[]", s.encode()))
                arr[i] = keep[-1]
            keep.append(arr)
            return arr, len(seq)

        opt = ffi.new("pt_linearize_options *")
        opt.states, opt.nstates = names(states)
        opt.inputs, opt.ninputs = names(inputs)
        opt.outputs, opt.noutputs = names(outputs)
        opt.solver = lib.PT_LIN_DENSE if dense else lib.PT_LIN_SPARSE
        out = ffi.new("pt_linearization **")
        err = ffi.new("pt_error *")
        _check(lib.pt_linearize(self._m, d._d, opt, out, err), err)
        r = ffi.gc(out[0], lib.pt_linearization_free)
        n2, nz, nu, ny = 2 * r.nz + r.nd, r.nz, r.nu, r.ny  # with the control states

        def mat(p, rows, cols):
            return _vec(p, rows * cols).reshape(rows, cols)

        eig = [r.eig[i] for i in range(n2)]
        lin = Linearization(
            mat(r.A, n2, n2), mat(r.B, n2, nu), mat(r.C, ny, n2), mat(r.D, ny, nu),
            states=[ffi.string(r.state_name[i]).decode() for i in range(n2)],
            inputs=[ffi.string(r.input_name[i]).decode() for i in range(nu)],
            outputs=[ffi.string(r.output_name[i]).decode() for i in range(ny)],
            mck={"M": mat(r.M, nz, nz), "C": mat(r.Cmat, nz, nz), "K": mat(r.K, nz, nz)},
            server_eigenvalues=np.array([complex(e.re, e.im) for e in eig]))
        lin.eigen_table = [{"re": e.re, "im": e.im, "freq_hz": e.freq_hz,
                            "damping_ratio": e.damping_ratio} for e in eig]
        lin.model, lin.time, lin.order = self.name, r.time, r.size
        lin.notes = [n for n in _str(r.notes).split("\n") if n]
        return lin

    def equilibrium(self, init=None, max_iterations=0, tolerance=0.0, newton_only=False,
                    allow_unstable=False, apply=False, data=None):
        """Static equilibrium from a configuration, as `partita equilibrium --json` (plus
        "applied"). apply=True moves the data (default: the model's own) there."""
        target = data or self.default_data
        d = self._operating_point(target, init, None, None)
        opt = ffi.new("pt_equilibrium_options *")
        opt.max_iterations = int(max_iterations)
        opt.tolerance = float(tolerance)
        opt.no_damped = 1 if newton_only else 0
        opt.allow_unstable = 1 if allow_unstable else 0
        res = ffi.gc(lib.pt_equilibrium_result_new(self._m), lib.pt_equilibrium_result_free)
        if res == ffi.NULL:
            raise MemoryError("pt_equilibrium_result_new")
        err = ffi.new("pt_error *")
        _check(lib.pt_equilibrium(self._m, d._d, opt, res, err), err)
        if apply:
            _check(lib.pt_equilibrium_apply(self._m, target._d, res, err), err)
        return {"model": self.name, "time": res.time,
                "coordinates": dict(zip(self.coordinate_names, _vec(res.coord, self.ncoord))),
                "reactions": self._reactions(res.reaction),
                "efforts": {self.motion_names[i]: res.motion_effort[i]
                            for i in range(res.nmotion)},
                "iterations": res.iterations, "damped_steps": res.damped_steps,
                "stable": res.stable == 1, "residual": res.residual, "applied": bool(apply)}


class _Assigns:
    def __init__(self, arr, n):
        self.arr, self.n = arr, n

    def __len__(self):
        return self.n


class Linearization(StateSpace):
    """A StateSpace from the engine: A, B, C, D; names safe for python-control in states /
    inputs / outputs and the engine's in state_names / input_names / output_names; mck (M, C,
    K), eigenvalues (the engine's, complex), eigen_table (re, im, freq_hz, damping_ratio),
    notes, order, time, model."""
