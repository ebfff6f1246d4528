"""cffi builder (API mode) of partita._engine: the Partita engine compiled from the source
tree's src/*.c into the extension itself, so `import partita` needs no installed libpartita.

Used by setup.py (cffi_modules). The engine's own libraries are Debian's: libyaml, libxml2,
OpenBLAS/LAPACKE, SuiteSparse (KLU, LDL, AMD), qhull (collision hulls)."""

import glob
import os
import shlex
import subprocess

from cffi import FFI

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.environ.get("PARTITA_SOURCE_ROOT", os.path.join(HERE, "..", "..")))
SRC = os.path.join(ROOT, "src")
# the engine's layer folders (src/meson.build's partita_inc): every folder of src/ that holds
# sources or headers, so a new layer folder needs no change here
LAYERS = sorted(os.path.relpath(d, SRC) for d, _, files in os.walk(SRC)
                if any(f.endswith((".c", ".h")) for f in files))
if not os.path.isfile(os.path.join(SRC, "include", "partita", "partita.h")):
    raise RuntimeError("the Partita source tree was not found at %s (src/include/partita/partita.h): build the "
                       "package from client/python of a source checkout, or set "
                       "PARTITA_SOURCE_ROOT" % ROOT)


def pkg_config(*args):
    out = subprocess.run(["pkg-config"] + list(args), capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("pkg-config %s: %s" % (" ".join(args), out.stderr.strip()))
    return shlex.split(out.stdout)


CDEF = r"""
typedef int... pt_integrator;
typedef int... pt_lin_solver;
static const int PT_LIN_SPARSE;
static const int PT_LIN_DENSE;
static const int PT_LIN_EIGEN;

typedef struct { int code; char msg[1024]; } pt_error;
typedef struct {
  int floating_base;
  int balance_inertia;
  int no_joint_limits;
  double dt;
  int has_integrator;
  int integrator;
  ...;
} pt_load_options;
typedef struct pt_model pt_model;
typedef struct pt_data pt_data;
typedef struct { int coord; double value; } pt_assign;

const char *pt_strerror(int code);
int pt_model_load_file(const char *path, const pt_load_options *opt, pt_model **out,
                       pt_error *err);
int pt_model_load_string(const char *text, size_t len, int format, const char *source,
                         const pt_load_options *opt, pt_model **out, pt_error *err);
void pt_model_free(pt_model *m);
const char *pt_model_name(const pt_model *m);
const char *pt_model_warnings(const pt_model *m);
int pt_model_nbody(const pt_model *m);
int pt_model_njoint(const pt_model *m);
int pt_model_ndof(const pt_model *m);
int pt_model_ncoord(const pt_model *m);
int pt_model_ninput(const pt_model *m);
int pt_model_nactuator(const pt_model *m);
int pt_model_nmotion(const pt_model *m);
double pt_model_dt(const pt_model *m);
pt_integrator pt_model_integrator(const pt_model *m);
const char *pt_body_name(const pt_model *m, int i);
const char *pt_joint_name(const pt_model *m, int i);
const char *pt_coord_name(const pt_model *m, int i);
const char *pt_input_name(const pt_model *m, int i);
const char *pt_actuator_name(const pt_model *m, int i);
const char *pt_motion_name(const pt_model *m, int i);
int pt_coord_index(const pt_model *m, const char *name);
int pt_input_index(const pt_model *m, const char *name);
double pt_input_limit(const pt_model *m, int i);
const char *pt_integrator_name(pt_integrator it);
int pt_integrator_parse(const char *s, pt_integrator *out);

pt_data *pt_data_new(const pt_model *m);
void pt_data_free(pt_data *d);
int pt_data_copy(const pt_model *m, pt_data *dst, const pt_data *src);
void pt_data_reset(const pt_model *m, pt_data *d);
void pt_set_dt(pt_data *d, double dt);
void pt_set_integrator(pt_data *d, pt_integrator it);
int pt_set_input(const pt_model *m, pt_data *d, int i, double value);
int pt_set_state(const pt_model *m, pt_data *d, const pt_assign *pos, int npos,
                 const pt_assign *vel, int nvel, pt_error *err);
int pt_step(const pt_model *m, pt_data *d);
int pt_forward(const pt_model *m, pt_data *d);
double pt_time(const pt_data *d);
int64_t pt_nstep(const pt_data *d);
const double *pt_coords(const pt_data *d);
const double *pt_coord_rates(const pt_data *d);
const double *pt_coord_accels(const pt_data *d);
const double *pt_inputs(const pt_data *d);
const double *pt_body_pose(const pt_data *d, int i);
const double *pt_body_velocity(const pt_data *d, int i);
double pt_energy_kinetic(const pt_data *d);
double pt_energy_potential(const pt_data *d);
double pt_residual_position(const pt_data *d);
double pt_residual_velocity(const pt_data *d);

int pt_model_nsignal(const pt_model *m);
int pt_model_ncontrol_state(const pt_model *m);
int pt_model_nparam(const pt_model *m);
const char *pt_signal_name(const pt_model *m, int i);
const char *pt_control_state_name(const pt_model *m, int i);
const char *pt_param_name(const pt_model *m, int i);
int pt_signal_index(const pt_model *m, const char *name);
int pt_control_state_index(const pt_model *m, const char *name);
int pt_param_index(const pt_model *m, const char *name);
const char *pt_input_source(const pt_model *m, int i);
const double *pt_signals(const pt_data *d);
const double *pt_control_states(const pt_data *d);
const double *pt_control_state_rates(const pt_data *d);
const double *pt_params(const pt_data *d);
int pt_set_control_states(const pt_model *m, pt_data *d, const int *idx, const double *value,
                          int n, pt_error *err);
int pt_set_param(const pt_model *m, pt_data *d, int i, double value, pt_error *err);

typedef struct {
  double time;
  int maxreq;
  int nreq;
  int *req_coord;
  int *req_actuator;
  double *req_effort;
  int nmotion;
  double *motion_effort;
  int ncoord;
  double *coord;
  double *coord_rate;
  double *coord_acc;
  int njoint;
  double *reaction;
  ...;
} pt_inverse_result;
pt_inverse_result *pt_inverse_result_new(const pt_model *m, int maxreq);
void pt_inverse_result_free(pt_inverse_result *r);
int pt_inverse_kinematic(const pt_model *m, const pt_data *d, double t, pt_inverse_result *res,
                         pt_error *err);
int pt_inverse_request(const pt_model *m, pt_data *d, const pt_assign *acc, int nacc,
                       pt_inverse_result *res, pt_error *err);
int pt_inverse_set_time(const pt_model *m, pt_data *d, double t, pt_error *err);
int pt_actuated_coords(const pt_model *m, int *coords, int max);
int pt_inverse_holding(const pt_model *m, pt_data *d, pt_inverse_result *res, pt_error *err);

typedef struct {
  int max_iterations;
  double tolerance;
  int max_damped_steps;
  int no_damped;
  int allow_unstable;
} pt_equilibrium_options;
typedef struct {
  double time;
  int ncoord;
  double *coord;
  int njoint;
  double *reaction;
  int nmotion;
  double *motion_effort;
  int iterations;
  int damped_steps;
  int stable;
  double residual;
  ...;
} pt_equilibrium_result;
pt_equilibrium_result *pt_equilibrium_result_new(const pt_model *m);
void pt_equilibrium_result_free(pt_equilibrium_result *r);
int pt_equilibrium(const pt_model *m, const pt_data *d, const pt_equilibrium_options *opt,
                   pt_equilibrium_result *res, pt_error *err);
int pt_equilibrium_apply(const pt_model *m, pt_data *d, const pt_equilibrium_result *res,
                         pt_error *err);

typedef struct {
  const char *const *states;
  int nstates;
  const char *const *inputs;
  int ninputs;
  const char *const *outputs;
  int noutputs;
  pt_lin_solver solver;
} pt_linearize_options;
typedef struct { double re, im; double freq_hz; double damping_ratio; } pt_eigenvalue;
typedef struct {
  int nz;
  int nu;
  int ny;
  double time;
  char (*state_name)[80];
  char (*input_name)[80];
  char (*output_name)[80];
  double *A;
  double *B;
  double *C;
  double *D;
  double *M;
  double *Cmat;
  double *K;
  pt_eigenvalue *eig;
  char *notes;
  int size;
  int nd;
} pt_linearization;
int pt_linearize(const pt_model *m, const pt_data *d, const pt_linearize_options *opt,
                 pt_linearization **out, pt_error *err);
void pt_linearization_free(pt_linearization *lin);
"""

ffibuilder = FFI()
ffibuilder.cdef(CDEF)

_cflags = pkg_config("--cflags", "yaml-0.1", "libxml-2.0", "openblas", "lapacke", "qhull_r")
_libs = pkg_config("--libs", "yaml-0.1", "libxml-2.0", "openblas", "lapacke", "qhull_r")
ffibuilder.set_source(
    "partita._engine",
    '#include "partita.h"\n'
    "_Static_assert(PT_LIN_NAME_MAX == 80, \"engine_build.py: names are char[80]\");\n",
    sources=sorted(glob.glob(os.path.join(SRC, "**", "*.c"), recursive=True)),
    include_dirs=[os.path.join(SRC, d) for d in LAYERS] + ["/usr/include/suitesparse"],
    extra_compile_args=["-std=c11", "-O2", "-D_POSIX_C_SOURCE=200809L", "-D_DEFAULT_SOURCE",
                        "-Wno-unused-parameter"] + _cflags,
    extra_link_args=_libs + ["-lklu", "-lldl", "-lamd", "-lsuitesparseconfig", "-lm"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
