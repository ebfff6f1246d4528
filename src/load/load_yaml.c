// load_yaml.c: YAML model files (docs/model-format.md) to pt_spec.
//
// A recursive descent over libyaml's event stream, driven by one key table per entry kind
// (what a value looks like, where it goes, which types take it and which need it). Parsing
// stops at the first problem, so the nesting depth, memory and work are bounded by the schema
// and the limits below whatever the input is, and the whole file is refused with one message
// `FILE:LINE: ENTRY: WHAT`. Before the descent, one pass of libyaml's scanner (tokens only, no
// tree) enforces the limits of pt_load_options on nesting depth and node count, so a hostile
// text is refused before any work it asks for is done; aliases are refused at their first use
// (next()), never expanded. Checks that need other entries (unknown bodies, duplicate names,
// motions on joints that cannot take them) belong to pt_model_compile, which reuses the lines
// recorded here.
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "partita.h"

#define MAX_ENTRIES 10000     // entries per list (bodies and joints: pt_load_options)
#define MAX_POINTS 100000     // table points in one file
#define MAX_COEF 100          // coefficients of one polynomial
#define MAX_KEYS 32           // keys of one entry kind
#define MAX_LIST 100          // numbers of a control element's list or matrix row, rows of a
                              // matrix, signals read, states of an ode
#define ZERO_LENGTH 1e-12     // axes and quaternions shorter than this are refused

// Enum-valued spec fields are written through an int.
_Static_assert(sizeof(pt_joint_type) == sizeof(int), "enum size");
_Static_assert(sizeof(pt_profile_type) == sizeof(int), "enum size");
_Static_assert(sizeof(pt_force_type) == sizeof(int), "enum size");
_Static_assert(sizeof(pt_actuator_type) == sizeof(int), "enum size");
_Static_assert(sizeof(pt_ucoord_type) == sizeof(int), "enum size");
_Static_assert(sizeof(pt_integrator) == sizeof(int), "enum size");
_Static_assert(sizeof(pt_visual_type) == sizeof(int), "enum size");
_Static_assert(sizeof(pt_control_type) == sizeof(int), "enum size");

typedef enum {
  V_NUM,      // number
  V_POS,      // number > 0
  V_NONNEG,   // number >= 0
  V_VEC3,     // [x, y, z]
  V_DIR,      // [x, y, z] of non-zero length, normalised
  V_NUM_OR6,  // number >= 0 (at off) or 6 numbers >= 0 (at off6): stiffness, damping
  V_INERTIA,  // 3 principal moments or 6 tensor entries -> double[6]
  V_QUAT,     // [e0, e1, e2, e3] or {axis, angle} -> double[4], normalised
  V_AXES,     // 3x3 rotation matrix as a list of rows -> double[9]
  V_NAME,     // 1..63 printable characters -> char[PT_NAME_MAX]
  V_ENUM,     // one of `names` -> int (its index)
  V_COEF,     // polynomial coefficients (pt_spec_motion)
  V_POINTS,   // table points (pt_spec_motion)
  V_RGBA,     // [r, g, b, a] each in [0, 1]
  V_PATH,     // a file name, 1..PT_PATH_MAX-1 bytes -> char[PT_PATH_MAX]
  V_VISUALS,  // a body's list of visual shapes (pt_spec_visual)
  V_COLLISION,  // a body's list of collision shapes (pt_spec_visual, in spec->collisions)
  V_LIMITS,   // [lower, upper], finite, lower < upper (pt_spec_joint)
  V_CNAME,    // a coordinate's or body's name -> char[PT_COORD_NAME_MAX]
  V_SIGNAL,   // one signal's name -> pt_spec_control inputs (ninput 1)
  V_SIGNALS,  // a list of signal names -> pt_spec_control inputs
  V_SIGNS,    // a list of 1, -1, "+" or "-" -> pt_spec_control signs
  V_NUMS,     // a list of numbers -> double * at off, its count (int) at off6
  V_MATRIX,   // a list of rows of numbers -> pt_spec_matrix at off
  V_EXPR,     // a formula -> char * at off (malloc'd)
  V_STATES,   // a list of names -> pt_spec_control states
  V_EXPRS,    // a list of formulas -> pt_spec_control derivatives
  V_SOURCE    // a signal, or a list of 3 (body actuators) -> pt_spec_actuator source
} vkind;

typedef struct {
  const char *key;
  vkind kind;
  size_t off;                // field in the entry struct
  unsigned takes;            // bit t: entries of type t take this key
  unsigned needs;            // bit t: entries of type t must give it
  const char *const *names;  // V_ENUM: NULL-terminated
  size_t off6;               // V_NUM_OR6: the 6-vector field
} keydef;

typedef struct loader loader;

// What the parser recorded about one entry's keys.
typedef struct {
  int line[MAX_KEYS];  // line of each key given, 0 when absent
  int list[MAX_KEYS];  // V_NUM_OR6: 1 when given as a list
} seen;

typedef struct {
  const char *list;      // "joints"
  const keydef *keys;    // keys[0] is "name"
  int nkeys;
  int type_key;          // index of the key that selects the type, -1: one type only
  size_t line_off;
  void *(*add)(pt_spec *s);
  int (*check)(loader *L, void *entry, const seen *sn);
} kinddef;

struct loader {
  yaml_parser_t parser;
  yaml_event_t ev;       // the current event, valid when has_ev
  int has_ev;
  pt_spec *spec;
  pt_error *err;
  const char *source;
  const char *text;      // the input, to place encoding errors
  size_t len;
  char entry[256];       // ENTRY of messages: `joints[2] "knee"`, `model`, `simulation`
  long npoints;          // table points so far
  int shapes;            // the shape list being read: SHAPES_VISUAL, _COLLISION or _GROUND
  pt_load_options lim;   // limits in effect (pt_load_options_resolve)
  int code;              // the error code once something failed
};

// ---------------------------------------------------------------------------------------------
// Messages and events.

static int line_of(const loader *L) { return (int)L->ev.start_mark.line + 1; }

__attribute__((format(printf, 3, 4))) static int fail(loader *L, int line, const char *fmt,
                                                      ...) {
  char what[640];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  L->code = pt_error_set(L->err, PT_EPARSE, "%s:%d: %s: %s", L->source, line, L->entry, what);
  return -1;
}

static int out_of_memory(loader *L) {
  L->code = pt_error_set(L->err, PT_ENOMEM, "%s: out of memory", L->source);
  return -1;
}

// A user string in a message: quoted, control characters replaced, at most 60 bytes, cut at
// a character boundary (messages travel in protobuf strings, which must be valid UTF-8).
static const char *quote(char buf[72], const char *s, size_t n) {
  size_t k = 0, m = n;
  if (m > 60) {
    m = 60;
    while (m > 0 && ((unsigned char)s[m] & 0xc0) == 0x80) m--;
  }
  buf[k++] = '"';
  for (size_t i = 0; i < m; i++) {
    unsigned char c = (unsigned char)s[i];
    buf[k++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
  }
  if (m < n) {
    memcpy(buf + k, "...", 3);
    k += 3;
  }
  buf[k++] = '"';
  buf[k] = '\0';
  return buf;
}

// What the current event is, for "X expected, got Y".
static const char *describe(const loader *L, char buf[72]) {
  switch (L->ev.type) {
    case YAML_SCALAR_EVENT:
      return quote(buf, (const char *)L->ev.data.scalar.value, L->ev.data.scalar.length);
    case YAML_SEQUENCE_START_EVENT:
      return "a list";
    case YAML_MAPPING_START_EVENT:
      return "a mapping";
    default:
      return "nothing";
  }
}

static int syntax_error(loader *L) {
  const yaml_parser_t *p = &L->parser;
  if (p->error == YAML_MEMORY_ERROR) return out_of_memory(L);
  size_t line = p->problem_mark.line;
  if (p->error == YAML_READER_ERROR) {
    // The reader decodes ahead and reports a byte offset, not a mark: count the lines.
    line = 0;
    for (size_t i = 0; i < p->problem_offset && i < L->len; i++) line += L->text[i] == '\n';
  }
  const char *problem = p->problem ? p->problem : "malformed YAML";
  if (p->context)
    return fail(L, (int)line + 1, "YAML syntax error: %s (%s at line %d)", problem, p->context,
                (int)p->context_mark.line + 1);
  return fail(L, (int)line + 1, "YAML syntax error: %s", problem);
}

// Advances to the next event. Aliases are refused: replaying them would let a few bytes
// expand into arbitrarily many entries.
static int next(loader *L) {
  if (L->has_ev) yaml_event_delete(&L->ev);
  L->has_ev = 0;
  if (!yaml_parser_parse(&L->parser, &L->ev)) return syntax_error(L);
  L->has_ev = 1;
  if (L->ev.type == YAML_ALIAS_EVENT) {
    char q[72];
    const char *a = (const char *)L->ev.data.alias.anchor;
    return fail(L, line_of(L), "YAML aliases are not supported (alias %s)",
                quote(q, a, strlen(a)));
  }
  return 0;
}

static int is_scalar(const loader *L) { return L->ev.type == YAML_SCALAR_EVENT; }

static const char *scalar(const loader *L) { return (const char *)L->ev.data.scalar.value; }

// `key:` with nothing, `~` or `null`: an optional section left empty.
static int is_null(const loader *L) {
  if (!is_scalar(L) || L->ev.data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return 0;
  const char *s = scalar(L);
  return !strcmp(s, "") || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
         !strcmp(s, "NULL");
}

// ---------------------------------------------------------------------------------------------
// Scalars.

// 0: a finite number; -1: not a number; -2: a YAML infinity or NaN, or out of range.
static int parse_number(const char *s, size_t n, double *out) {
  const char *p = (s[0] == '+' || s[0] == '-') ? s + 1 : s;
  if (!strcmp(p, ".inf") || !strcmp(p, ".Inf") || !strcmp(p, ".INF") || !strcmp(s, ".nan") ||
      !strcmp(s, ".NaN") || !strcmp(s, ".NAN"))
    return -2;
  // strtod would also take "inf", "nan" and leading blanks, which YAML does not.
  int digit = (p[0] >= '0' && p[0] <= '9') || (p[0] == '.' && p[1] >= '0' && p[1] <= '9');
  if (!digit) return -1;
  char *end = NULL;
  double v = strtod(s, &end);
  if (end != s + n) return -1;
  if (!isfinite(v)) return -2;
  *out = v;
  return 0;
}

// The current event as a number.
static int number_here(loader *L, const char *key, double *out) {
  char q[72];
  if (!is_scalar(L) || L->ev.data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
    return fail(L, line_of(L), "%s: number expected, got %s", key, describe(L, q));
  int rc = parse_number(scalar(L), L->ev.data.scalar.length, out);
  if (rc == -2) return fail(L, line_of(L), "%s: non-finite number %s", key, describe(L, q));
  if (rc) return fail(L, line_of(L), "%s: number expected, got %s", key, describe(L, q));
  return 0;
}

// The current event as a list of up to `max` numbers; *n gets the count.
static int numbers_here(loader *L, const char *key, double *v, int max, int *n,
                        const char *expect) {
  char q[72];
  if (L->ev.type != YAML_SEQUENCE_START_EVENT)
    return fail(L, line_of(L), "%s: %s expected, got %s", key, expect, describe(L, q));
  int start = line_of(L);
  *n = 0;
  for (;;) {
    if (next(L)) return -1;
    if (L->ev.type == YAML_SEQUENCE_END_EVENT) return 0;
    if (*n == max) return fail(L, start, "%s: %s expected, got more values", key, expect);
    if (number_here(L, key, &v[*n])) return -1;
    (*n)++;
  }
}

static int vec_here(loader *L, const char *key, double *v, int count, const char *expect) {
  int n = 0, start = line_of(L);
  if (numbers_here(L, key, v, count, &n, expect)) return -1;
  if (n != count) return fail(L, start, "%s: %s expected, got %d", key, expect, n);
  return 0;
}

static double norm3(const double v[3]) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

// A name of 1..max-1 bytes without control characters into out (what: the kind of value, for
// the message when it is not a scalar).
static int name_here(loader *L, const char *key, char *out, size_t max, const char *what) {
  char q[72];
  if (!is_scalar(L))
    return fail(L, line_of(L), "%s: %s expected, got %s", key, what, describe(L, q));
  const char *s = scalar(L);
  size_t n = L->ev.data.scalar.length;
  if (n == 0) return fail(L, line_of(L), "%s: must not be empty", key);
  if (n > max - 1)
    return fail(L, line_of(L), "%s: %s is longer than %d bytes", key, quote(q, s, n),
                (int)max - 1);
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
      return fail(L, line_of(L), "%s: %s contains control characters", key, quote(q, s, n));
  memcpy(out, s, n);
  out[n] = '\0';
  return 0;
}

static int string_here(loader *L, const char *key, char out[PT_NAME_MAX]) {
  return name_here(L, key, out, PT_NAME_MAX, "string");
}

static int enum_here(loader *L, const char *key, const char *const *names, int *out) {
  char s[PT_NAME_MAX], q[72], list[256] = "";
  if (string_here(L, key, s)) return -1;
  for (int i = 0; names[i]; i++) {
    if (!strcmp(s, names[i])) {
      *out = i;
      return 0;
    }
    size_t k = strlen(list);
    snprintf(list + k, sizeof(list) - k, "%s%s", i ? ", " : "", names[i]);
  }
  return fail(L, line_of(L), "%s: invalid value %s, expected one of %s", key,
              quote(q, s, strlen(s)), list);
}

// ---------------------------------------------------------------------------------------------
// Structured values.

// Eigenvalues of the symmetric tensor [Ixx Ixy Ixz; Ixy Iyy Iyz; Ixz Iyz Izz] (closed form:
// the characteristic cubic solved trigonometrically).
static void principal_moments(const double t[6], double lam[3]) {
  double a = t[0], b = t[1], c = t[2], xy = t[3], xz = t[4], yz = t[5];
  double off = xy * xy + xz * xz + yz * yz;
  if (off == 0.0) {
    lam[0] = a, lam[1] = b, lam[2] = c;
    return;
  }
  double q = (a + b + c) / 3.0;
  double p2 = (a - q) * (a - q) + (b - q) * (b - q) + (c - q) * (c - q) + 2.0 * off;
  double p = sqrt(p2 / 6.0);
  // B = (A - qI) / p; r = det(B) / 2, in [-1, 1] up to rounding.
  double ba = (a - q) / p, bb = (b - q) / p, bc = (c - q) / p;
  double bxy = xy / p, bxz = xz / p, byz = yz / p;
  double det = ba * (bb * bc - byz * byz) - bxy * (bxy * bc - byz * bxz) +
               bxz * (bxy * byz - bb * bxz);
  double r = fmax(-1.0, fmin(1.0, det / 2.0));
  double phi = acos(r) / 3.0;
  lam[0] = q + 2.0 * p * cos(phi);
  lam[2] = q + 2.0 * p * cos(phi + 2.0 * M_PI / 3.0);
  lam[1] = 3.0 * q - lam[0] - lam[2];
}

static int inertia_here(loader *L, const char *key, double out[6]) {
  const char *expect = "list of 3 principal moments or 6 tensor entries";
  int n = 0, start = line_of(L);
  double v[6] = {0};
  if (numbers_here(L, key, v, 6, &n, expect)) return -1;
  if (n != 3 && n != 6) return fail(L, start, "%s: %s expected, got %d", key, expect, n);
  memcpy(out, v, sizeof(v));
  double lam[3];
  principal_moments(out, lam);
  double lmax = fmax(lam[0], fmax(lam[1], lam[2]));
  double lmin = fmin(lam[0], fmin(lam[1], lam[2]));
  if (!isfinite(lam[0] + lam[1] + lam[2]))
    return fail(L, start, "%s: values too large", key);
  if (!(lmin > 0.0) || lmin < 1e-12 * lmax)
    return fail(L, start, "%s: not positive definite (principal moments %g, %g, %g)", key,
                lam[0], lam[1], lam[2]);
  // Each principal moment is at most the sum of the other two (equality: a flat plate).
  double sum = lam[0] + lam[1] + lam[2];
  for (int i = 0; i < 3; i++)
    if (lam[i] > sum - lam[i] + 1e-9 * sum)
      return fail(L, start,
                  "%s: principal moments %g, %g, %g violate the triangle inequality "
                  "(each must be <= the sum of the other two)",
                  key, lam[0], lam[1], lam[2]);
  return 0;
}

// [e0, e1, e2, e3] or {axis: [x, y, z], angle: a}.
static int quat_here(loader *L, const char *key, double out[4]) {
  char q[72];
  int start = line_of(L);
  if (L->ev.type == YAML_SEQUENCE_START_EVENT) {
    if (vec_here(L, key, out, 4, "list of 4 Euler parameters")) return -1;
    double n = sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2] + out[3] * out[3]);
    if (n < ZERO_LENGTH) return fail(L, start, "%s: quaternion of zero length", key);
    for (int i = 0; i < 4; i++) out[i] /= n;
    return 0;
  }
  if (L->ev.type != YAML_MAPPING_START_EVENT)
    return fail(L, start, "%s: [e0, e1, e2, e3] or {axis, angle} expected, got %s", key,
                describe(L, q));
  double axis[3] = {0}, angle = 0;
  int axis_line = 0, angle_line = 0;
  for (;;) {
    if (next(L)) return -1;
    if (L->ev.type == YAML_MAPPING_END_EVENT) break;
    if (!is_scalar(L)) return fail(L, line_of(L), "%s: keys must be strings", key);
    int at = line_of(L), is_axis = !strcmp(scalar(L), "axis");
    if (!is_axis && strcmp(scalar(L), "angle"))
      return fail(L, at, "%s: unknown key %s", key, describe(L, q));
    if (is_axis ? axis_line : angle_line)
      return fail(L, at, "%s: duplicate key %s", key, describe(L, q));
    if (next(L)) return -1;
    if (is_axis) {
      axis_line = at;
      if (vec_here(L, "orientation.axis", axis, 3, "list of 3 numbers")) return -1;
    } else {
      angle_line = at;
      if (number_here(L, "orientation.angle", &angle)) return -1;
    }
  }
  if (!axis_line) return fail(L, start, "%s: missing required field \"axis\"", key);
  if (!angle_line) return fail(L, start, "%s: missing required field \"angle\"", key);
  double n = norm3(axis);
  if (n < ZERO_LENGTH) return fail(L, axis_line, "orientation.axis: zero length");
  double s = sin(angle / 2.0) / n;
  out[0] = cos(angle / 2.0);
  for (int i = 0; i < 3; i++) out[i + 1] = s * axis[i];
  return 0;
}

// A rotation matrix given by rows; its columns are the bushing axes in global coordinates.
static int axes_here(loader *L, const char *key, double out[9]) {
  const char *expect = "3x3 list of rows";
  char q[72];
  int start = line_of(L);
  if (L->ev.type != YAML_SEQUENCE_START_EVENT)
    return fail(L, start, "%s: %s expected, got %s", key, expect, describe(L, q));
  int rows = 0;
  for (;;) {
    if (next(L)) return -1;
    if (L->ev.type == YAML_SEQUENCE_END_EVENT) break;
    if (rows == 3) return fail(L, start, "%s: %s expected, got more rows", key, expect);
    if (vec_here(L, key, out + 3 * rows, 3, "row of 3 numbers")) return -1;
    rows++;
  }
  if (rows != 3) return fail(L, start, "%s: %s expected, got %d rows", key, expect, rows);
  double dev = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double d = out[3 * i] * out[3 * j] + out[3 * i + 1] * out[3 * j + 1] +
                 out[3 * i + 2] * out[3 * j + 2];
      dev = fmax(dev, fabs(d - (i == j)));
    }
  const double *m = out;
  double det = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
               m[2] * (m[3] * m[7] - m[4] * m[6]);
  if (dev > 1e-6 || det < 0)
    return fail(L, start, "%s: not a rotation matrix (rows must be orthonormal, right-handed)",
                key);
  return 0;
}

static int coef_here(loader *L, const char *key, pt_spec_motion *mo) {
  double c[MAX_COEF];
  int n = 0, start = line_of(L);
  char expect[64];
  snprintf(expect, sizeof(expect), "list of at most %d numbers", MAX_COEF);
  if (numbers_here(L, key, c, MAX_COEF, &n, expect)) return -1;
  if (n == 0) return fail(L, start, "%s: at least one coefficient required", key);
  mo->coef = malloc((size_t)n * sizeof(double));
  if (!mo->coef) return out_of_memory(L);
  memcpy(mo->coef, c, (size_t)n * sizeof(double));
  mo->ncoef = n;
  return 0;
}

// [[t, v], ...] with t strictly increasing. The array hangs in the motion while it grows, so
// pt_spec_free releases it on every error path.
static int points_here(loader *L, const char *key, pt_spec_motion *mo) {
  char q[72];
  int start = line_of(L), cap = 0;
  if (L->ev.type != YAML_SEQUENCE_START_EVENT)
    return fail(L, start, "%s: list of [t, value] pairs expected, got %s", key, describe(L, q));
  for (;;) {
    if (next(L)) return -1;
    if (L->ev.type == YAML_SEQUENCE_END_EVENT) break;
    if (++L->npoints > MAX_POINTS)
      return fail(L, line_of(L), "%s: more than %d table points in the file", key, MAX_POINTS);
    if (mo->npoint == cap) {
      cap = cap ? 2 * cap : 16;
      double *p = realloc(mo->points, (size_t)cap * 2 * sizeof(double));
      if (!p) return out_of_memory(L);
      mo->points = p;
    }
    double *pt = mo->points + 2 * mo->npoint;
    int at = line_of(L);
    if (vec_here(L, key, pt, 2, "[t, value] pair")) return -1;
    if (mo->npoint > 0 && !(pt[0] > pt[-2]))
      return fail(L, at, "%s: t must be strictly increasing (t = %g after %g)", key, pt[0],
                  pt[-2]);
    mo->npoint++;
  }
  if (mo->npoint < 2) return fail(L, start, "%s: a table needs at least 2 points", key);
  return 0;
}

enum { SHAPES_VISUAL, SHAPES_COLLISION, SHAPES_GROUND };
static int shapes_here(loader *L, const char *key, int list);

static int path_here(loader *L, const char *key, char out[PT_PATH_MAX]) {
  char q[72];
  if (!is_scalar(L))
    return fail(L, line_of(L), "%s: file name expected, got %s", key, describe(L, q));
  const char *s = scalar(L);
  size_t n = L->ev.data.scalar.length;
  if (n == 0) return fail(L, line_of(L), "%s: must not be empty", key);
  if (n > PT_PATH_MAX - 1)
    return fail(L, line_of(L), "%s: longer than %d bytes", key, PT_PATH_MAX - 1);
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
      return fail(L, line_of(L), "%s: %s contains control characters", key, quote(q, s, n));
  memcpy(out, s, n);
  out[n] = '\0';
  return 0;
}

// ---- control elements' values (docs/controls.md) ---------------------------------------------

// A signal's name, 1..PT_SIGNAL_NAME_MAX-1 bytes; a coordinate's or body's, PT_COORD_NAME_MAX.
static int signal_here(loader *L, const char *key, char out[PT_SIGNAL_NAME_MAX]) {
  return name_here(L, key, out, PT_SIGNAL_NAME_MAX, "signal name");
}

static int cname_here(loader *L, const char *key, char out[PT_COORD_NAME_MAX]) {
  return name_here(L, key, out, PT_COORD_NAME_MAX, "name");
}

// The current event: a list (the key's list) whose items `item` reads one by one; *n counts
// them, at most MAX_LIST.
typedef int (*item_fn)(loader *L, const char *key, void *ctx, int k);
static int list_here(loader *L, const char *key, const char *what, item_fn item, void *ctx,
                     int *n) {
  char q[72];
  int start = line_of(L);
  if (L->ev.type != YAML_SEQUENCE_START_EVENT)
    return fail(L, start, "%s: list of %s expected, got %s", key, what, describe(L, q));
  *n = 0;
  for (;;) {
    if (next(L)) return -1;
    if (L->ev.type == YAML_SEQUENCE_END_EVENT) break;
    if (*n == MAX_LIST) return fail(L, start, "%s: more than %d %s", key, MAX_LIST, what);
    if (item(L, key, ctx, *n)) return -1;
    (*n)++;
  }
  if (*n == 0) return fail(L, start, "%s: at least one of %s expected", key, what);
  return 0;
}

// A list read into storage for MAX_LIST items, cut to the n read (what stays allocated is in
// proportion to the text, whatever the number of entries).
static void *shrink(void *p, int n, size_t size) {
  void *q = realloc(p, size * (size_t)(n > 0 ? n : 1));
  return q ? q : p;
}

static int signal_item(loader *L, const char *key, void *ctx, int k) {
  char (*names)[PT_SIGNAL_NAME_MAX] = ctx;
  return signal_here(L, key, names[k]);
}

static int signals_here(loader *L, const char *key, pt_spec_control *c) {
  c->inputs = calloc(MAX_LIST, sizeof(*c->inputs));
  if (!c->inputs) return out_of_memory(L);
  int rc = list_here(L, key, "signal names", signal_item, c->inputs, &c->ninput);
  c->inputs = shrink(c->inputs, c->ninput, sizeof(*c->inputs));
  return rc;
}

static int sign_item(loader *L, const char *key, void *ctx, int k) {
  double *signs = ctx;
  char q[72];
  if (is_scalar(L) && (!strcmp(scalar(L), "+") || !strcmp(scalar(L), "-"))) {
    signs[k] = scalar(L)[0] == '+' ? 1 : -1;
    return 0;
  }
  if (number_here(L, key, &signs[k])) return -1;
  if (signs[k] != 1 && signs[k] != -1)
    return fail(L, line_of(L), "%s: each sign is 1, -1, + or -, got %s", key, describe(L, q));
  return 0;
}

static int number_item(loader *L, const char *key, void *ctx, int k) {
  return number_here(L, key, (double *)ctx + k);
}

// A list of numbers into a malloc'd array at *out, its count at *n.
static int nums_here(loader *L, const char *key, double **out, int *n) {
  *out = calloc(MAX_LIST, sizeof(double));
  if (!*out) return out_of_memory(L);
  int rc = list_here(L, key, "numbers", number_item, *out, n);
  *out = shrink(*out, *n, sizeof(double));
  return rc;
}

static int matrix_here(loader *L, const char *key, pt_spec_matrix *mt) {
  char q[72];
  int start = line_of(L);
  if (L->ev.type != YAML_SEQUENCE_START_EVENT)
    return fail(L, start, "%s: list of rows expected, got %s", key, describe(L, q));
  mt->v = calloc((size_t)MAX_LIST * MAX_LIST, sizeof(double));
  if (!mt->v) return out_of_memory(L);
  for (;;) {
    if (next(L)) return -1;
    if (L->ev.type == YAML_SEQUENCE_END_EVENT) break;
    if (mt->rows == MAX_LIST) return fail(L, start, "%s: more than %d rows", key, MAX_LIST);
    int at = line_of(L), n = 0;
    if (list_here(L, key, "numbers", number_item, mt->v + (size_t)mt->rows * MAX_LIST, &n))
      return -1;
    if (mt->rows > 0 && n != mt->cols)
      return fail(L, at, "%s: row %d has %d numbers, row 1 has %d", key, mt->rows + 1, n,
                  mt->cols);
    mt->cols = n;
    mt->rows++;
  }
  if (mt->rows == 0) return fail(L, start, "%s: at least one row expected", key);
  for (int r = 1; r < mt->rows; r++)  // packed row-major
    memmove(mt->v + r * mt->cols, mt->v + (size_t)r * MAX_LIST, sizeof(double) * (size_t)mt->cols);
  mt->v = shrink(mt->v, mt->rows * mt->cols, sizeof(double));
  return 0;
}

// A formula: a string of at most PT_EXPR_MAX_TEXT bytes (its grammar is checked by
// pt_model_compile, which knows the signals).
#define EXPR_MAX 65536
static int expr_here(loader *L, const char *key, char **out) {
  char q[72];
  if (!is_scalar(L) || L->ev.data.scalar.length == 0)
    return fail(L, line_of(L), "%s: formula expected, got %s", key, describe(L, q));
  const char *s = scalar(L);
  size_t n = L->ev.data.scalar.length;
  if (n > EXPR_MAX) return fail(L, line_of(L), "%s: longer than %d bytes", key, EXPR_MAX);
  for (size_t i = 0; i < n; i++)
    if (((unsigned char)s[i] < 0x20 && s[i] != '\n' && s[i] != '\t' && s[i] != '\r') ||
        s[i] == 0x7f || s[i] == 0)
      return fail(L, line_of(L), "%s: contains control characters", key);
  *out = malloc(n + 1);
  if (!*out) return out_of_memory(L);
  memcpy(*out, s, n + 1);
  return 0;
}

static int state_item(loader *L, const char *key, void *ctx, int k) {
  char (*names)[PT_NAME_MAX] = ctx;
  return string_here(L, key, names[k]);
}

static int expr_item(loader *L, const char *key, void *ctx, int k) {
  return expr_here(L, key, (char **)ctx + k);
}

static int source_here(loader *L, const char *key, pt_spec_actuator *a) {
  for (int k = 0; k < 3; k++) a->source_scale[k] = 1;
  if (L->ev.type != YAML_SEQUENCE_START_EVENT) {
    a->nsource = 1;
    return signal_here(L, key, a->source[0]);
  }
  char (*names)[PT_SIGNAL_NAME_MAX] = calloc(MAX_LIST, sizeof(*names));
  if (!names) return out_of_memory(L);
  int start = line_of(L), rc = list_here(L, key, "signal names", signal_item, names, &a->nsource);
  if (!rc && a->nsource != 3)
    rc = fail(L, start, "%s: one signal, or a list of 3 (x, y, z) for a body actuator", key);
  if (!rc) memcpy(a->source, names, sizeof(a->source));
  free(names);
  return rc;
}

// Reads the value of `k` (the current event is its first event) into the entry.
static int value_here(loader *L, const keydef *k, void *entry, int *as_list) {
  char *f = (char *)entry + k->off;
  double *d = (double *)(void *)f;
  switch (k->kind) {
    case V_NUM:
      return number_here(L, k->key, d);
    case V_POS:
      if (number_here(L, k->key, d)) return -1;
      if (!(*d > 0)) return fail(L, line_of(L), "%s: must be > 0, got %g", k->key, *d);
      return 0;
    case V_NONNEG:
      if (number_here(L, k->key, d)) return -1;
      if (*d < 0) return fail(L, line_of(L), "%s: must not be negative, got %g", k->key, *d);
      return 0;
    case V_VEC3:
      return vec_here(L, k->key, d, 3, "list of 3 numbers");
    case V_DIR: {
      int start = line_of(L);
      if (vec_here(L, k->key, d, 3, "list of 3 numbers")) return -1;
      double n = norm3(d);
      if (n < ZERO_LENGTH) return fail(L, start, "%s: zero length", k->key);
      for (int i = 0; i < 3; i++) d[i] /= n;
      return 0;
    }
    case V_NUM_OR6: {
      if (L->ev.type != YAML_SEQUENCE_START_EVENT) {
        *as_list = 0;
        if (number_here(L, k->key, d)) return -1;
        if (*d < 0) return fail(L, line_of(L), "%s: must not be negative, got %g", k->key, *d);
        return 0;
      }
      *as_list = 1;
      double *v = (double *)(void *)((char *)entry + k->off6);
      int start = line_of(L);
      if (vec_here(L, k->key, v, 6, "list of 6 numbers")) return -1;
      for (int i = 0; i < 6; i++)
        if (v[i] < 0)
          return fail(L, start, "%s: must not be negative, got %g", k->key, v[i]);
      return 0;
    }
    case V_INERTIA:
      return inertia_here(L, k->key, d);
    case V_QUAT:
      return quat_here(L, k->key, d);
    case V_AXES:
      return axes_here(L, k->key, d);
    case V_NAME:
      return string_here(L, k->key, f);
    case V_ENUM:
      return enum_here(L, k->key, k->names, (int *)(void *)f);
    case V_COEF:
      return coef_here(L, k->key, entry);
    case V_POINTS:
      return points_here(L, k->key, entry);
    case V_RGBA: {
      int start = line_of(L);
      if (vec_here(L, k->key, d, 4, "list of 4 numbers [r, g, b, a]")) return -1;
      for (int i = 0; i < 4; i++)
        if (!(d[i] >= 0 && d[i] <= 1))
          return fail(L, start, "%s: each of r, g, b, a must be in [0, 1], got %g", k->key, d[i]);
      return 0;
    }
    case V_PATH:
      return path_here(L, k->key, f);
    case V_VISUALS:
      return shapes_here(L, k->key, SHAPES_VISUAL);
    case V_COLLISION:
      return shapes_here(L, k->key, SHAPES_COLLISION);
    case V_CNAME:
      return cname_here(L, k->key, f);
    case V_SIGNAL: {
      pt_spec_control *c = entry;
      c->inputs = calloc(1, sizeof(*c->inputs));
      if (!c->inputs) return out_of_memory(L);
      c->ninput = 1;
      return signal_here(L, k->key, c->inputs[0]);
    }
    case V_SIGNALS:
      return signals_here(L, k->key, entry);
    case V_SIGNS: {
      pt_spec_control *c = entry;
      int n = 0;
      c->signs = calloc(MAX_LIST, sizeof(double));
      if (!c->signs) return out_of_memory(L);
      int rc = list_here(L, k->key, "signs", sign_item, c->signs, &n);
      c->signs = shrink(c->signs, n, sizeof(double));
      if (rc) return -1;
      *as_list = n;  // checked against inputs by check_control
      return 0;
    }
    case V_NUMS:
      return nums_here(L, k->key, (double **)(void *)f, (int *)(void *)((char *)entry + k->off6));
    case V_MATRIX:
      return matrix_here(L, k->key, (pt_spec_matrix *)(void *)f);
    case V_EXPR:
      return expr_here(L, k->key, (char **)(void *)f);
    case V_STATES: {
      pt_spec_control *c = entry;
      c->states = calloc(MAX_LIST, sizeof(*c->states));
      if (!c->states) return out_of_memory(L);
      int rc = list_here(L, k->key, "state names", state_item, c->states, &c->nstate);
      c->states = shrink(c->states, c->nstate, sizeof(*c->states));
      return rc;
    }
    case V_EXPRS: {
      pt_spec_control *c = entry;
      c->derivatives = calloc(MAX_LIST, sizeof(char *));
      if (!c->derivatives) return out_of_memory(L);
      // nderivative counts the formulas read (and allocated), also when a later one fails
      int rc = list_here(L, k->key, "formulas", expr_item, c->derivatives, &c->nderivative);
      c->derivatives = shrink(c->derivatives, c->nderivative, sizeof(char *));
      return rc;
    }
    case V_SOURCE:
      return source_here(L, k->key, entry);
    case V_LIMITS: {
      int start = line_of(L);
      if (vec_here(L, k->key, d, 2, "[lower, upper]")) return -1;
      if (!(d[0] < d[1]))
        return fail(L, start, "%s: lower must be less than upper (lower = %g, upper = %g)",
                    k->key, d[0], d[1]);
      ((pt_spec_joint *)entry)->has_limits = 1;
      return 0;
    }
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Entries.

static void name_entry(loader *L, const char *list, int index, const char *name) {
  if (name && name[0])
    snprintf(L->entry, sizeof(L->entry), "%s[%d] \"%s\"", list, index, name);
  else
    snprintf(L->entry, sizeof(L->entry), "%s[%d]", list, index);
}

// One `- key: value ...` mapping of list `k` (the current event is its start).
static int parse_entry(loader *L, const kinddef *k, int index) {
  void *e = k->add(L->spec);
  if (!e) return out_of_memory(L);
  int line = line_of(L);
  *(int *)(void *)((char *)e + k->line_off) = line;
  seen sn;
  memset(&sn, 0, sizeof(sn));
  char q[72];
  for (;;) {
    if (next(L)) return -1;
    if (L->ev.type == YAML_MAPPING_END_EVENT) break;
    if (!is_scalar(L)) return fail(L, line_of(L), "keys must be strings, got %s", describe(L, q));
    int i = 0, at = line_of(L);
    while (i < k->nkeys && strcmp(k->keys[i].key, scalar(L))) i++;
    if (i == k->nkeys) return fail(L, at, "unknown key %s", describe(L, q));
    if (sn.line[i]) return fail(L, at, "duplicate key %s", describe(L, q));
    sn.line[i] = at;
    if (next(L) || value_here(L, &k->keys[i], e, &sn.list[i])) return -1;
    if (i == 0) name_entry(L, k->list, index, (const char *)e + k->keys[0].off);
  }
  int type = 0;
  const char *tname = "";
  if (k->type_key >= 0) {
    const keydef *tk = &k->keys[k->type_key];
    if (!sn.line[k->type_key])
      return fail(L, line, "missing required field \"%s\"", tk->key);
    type = *(int *)(void *)((char *)e + tk->off);
    tname = tk->names[type];
  }
  for (int i = 0; i < k->nkeys && k->type_key >= 0; i++)
    if (sn.line[i] && !(k->keys[i].takes >> type & 1u))
      return fail(L, sn.line[i], "key \"%s\" does not apply to %s %s", k->keys[i].key,
                  k->keys[k->type_key].key, tname);
  for (int i = 0; i < k->nkeys; i++)
    if (!sn.line[i] && (k->keys[i].needs >> type & 1u)) {
      if (k->type_key < 0) return fail(L, line, "missing required field \"%s\"", k->keys[i].key);
      return fail(L, line, "missing required field \"%s\" (%s %s)", k->keys[i].key,
                  k->keys[k->type_key].key, tname);
    }
  return k->check ? k->check(L, e, &sn) : 0;
}

// The index of `key` in a key table (check functions look up what they need by name).
static int key_index(const keydef *keys, int n, const char *key) {
  for (int i = 0; i < n; i++)
    if (!strcmp(keys[i].key, key)) return i;
  return 0;
}
#define NKEYS(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define LINE(keys, key) (sn->line[key_index(keys, NKEYS(keys), key)])

#define ALL 0xffffu
#define FIELD(T, f) offsetof(T, f)

// bodies
static const keydef body_keys[] = {
    {"name", V_NAME, FIELD(pt_spec_body, name), ALL, ALL, NULL, 0},
    {"mass", V_POS, FIELD(pt_spec_body, mass), ALL, ALL, NULL, 0},
    {"inertia", V_INERTIA, FIELD(pt_spec_body, inertia), ALL, ALL, NULL, 0},
    {"position", V_VEC3, FIELD(pt_spec_body, position), ALL, ALL, NULL, 0},
    {"orientation", V_QUAT, FIELD(pt_spec_body, quat), ALL, 0, NULL, 0},
    {"velocity", V_VEC3, FIELD(pt_spec_body, velocity), ALL, 0, NULL, 0},
    {"angular_velocity", V_VEC3, FIELD(pt_spec_body, angvel), ALL, 0, NULL, 0},
    {"visuals", V_VISUALS, 0, ALL, 0, NULL, 0},
    {"collision", V_COLLISION, 0, ALL, 0, NULL, 0},
};

static int check_body(loader *L, void *e, const seen *sn) {
  const pt_spec_body *b = e;
  // this body's shapes were parsed before its name may have been: they are the unnamed ones
  for (int i = 0; i < L->spec->nvisual; i++)
    if (!L->spec->visuals[i].body[0]) memcpy(L->spec->visuals[i].body, b->name, PT_NAME_MAX);
  for (int i = 0; i < L->spec->ncollision; i++)
    if (!L->spec->collisions[i].body[0])
      memcpy(L->spec->collisions[i].body, b->name, PT_NAME_MAX);
  if (!strcmp(b->name, "ground"))
    return fail(L, LINE(body_keys, "name"),
                "name: \"ground\" is reserved for the fixed global frame");
  return 0;
}

// joints
enum { J_REV = 1, J_PRI = 2, J_CYL = 4, J_SPH = 8, J_UNI = 16, J_FIX = 32, J_PLA = 64 };
static const char *const joint_types[] = {"revolute",  "prismatic", "cylindrical", "spherical",
                                          "universal", "fixed",     "planar",      NULL};

static const keydef joint_keys[] = {
    {"name", V_NAME, FIELD(pt_spec_joint, name), ALL, ALL, NULL, 0},
    {"type", V_ENUM, FIELD(pt_spec_joint, type), ALL, ALL, joint_types, 0},
    {"body1", V_NAME, FIELD(pt_spec_joint, body1), ALL, ALL, NULL, 0},
    {"body2", V_NAME, FIELD(pt_spec_joint, body2), ALL, ALL, NULL, 0},
    {"point", V_VEC3, FIELD(pt_spec_joint, point), ALL, ALL, NULL, 0},
    {"axis", V_DIR, FIELD(pt_spec_joint, axis), J_REV | J_PRI | J_CYL | J_PLA,
     J_REV | J_PRI | J_CYL | J_PLA, NULL, 0},
    {"axis1", V_DIR, FIELD(pt_spec_joint, axis1), J_UNI | J_PLA, J_UNI, NULL, 0},
    {"axis2", V_DIR, FIELD(pt_spec_joint, axis2), J_UNI, J_UNI, NULL, 0},
    {"damping", V_NONNEG, FIELD(pt_spec_joint, damping), J_REV | J_PRI | J_CYL | J_UNI | J_PLA,
     0, NULL, 0},
    {"friction", V_NONNEG, FIELD(pt_spec_joint, friction), J_REV | J_PRI | J_CYL | J_UNI | J_PLA,
     0, NULL, 0},
    {"friction_velocity", V_POS, FIELD(pt_spec_joint, friction_velocity),
     J_REV | J_PRI | J_CYL | J_UNI | J_PLA, 0, NULL, 0},
    {"limits", V_LIMITS, FIELD(pt_spec_joint, limits), J_REV | J_PRI, 0, NULL, 0},
};

static int check_joint(loader *L, void *e, const seen *sn) {
  const pt_spec_joint *j = e;
  if (j->type != PT_JOINT_UNIVERSAL) return 0;
  double c = j->axis1[0] * j->axis2[0] + j->axis1[1] * j->axis2[1] + j->axis1[2] * j->axis2[2];
  if (fabs(c) > 1e-6)
    return fail(L, LINE(joint_keys, "axis2"),
                "axis1 and axis2 must be perpendicular at t=0 (cosine %g)", c);
  return 0;
}

// motions
enum { P_CONST = 1, P_SINE = 2, P_POLY = 4, P_STEP = 8, P_TABLE = 16 };
static const char *const profiles[] = {"constant", "sine", "polynomial", "step", "table", NULL};

static const keydef motion_keys[] = {
    {"name", V_NAME, FIELD(pt_spec_motion, name), ALL, ALL, NULL, 0},
    {"joint", V_NAME, FIELD(pt_spec_motion, joint), ALL, ALL, NULL, 0},
    {"coordinate", V_NAME, FIELD(pt_spec_motion, coordinate), ALL, 0, NULL, 0},
    {"profile", V_ENUM, FIELD(pt_spec_motion, profile), ALL, ALL, profiles, 0},
    {"offset", V_NUM, FIELD(pt_spec_motion, offset), P_SINE, 0, NULL, 0},
    {"amplitude", V_NUM, FIELD(pt_spec_motion, amplitude), P_SINE, P_SINE, NULL, 0},
    {"omega", V_NUM, FIELD(pt_spec_motion, omega), P_SINE, P_SINE, NULL, 0},
    {"phase", V_NUM, FIELD(pt_spec_motion, phase), P_SINE, 0, NULL, 0},
    {"value", V_NUM, FIELD(pt_spec_motion, value), P_CONST, P_CONST, NULL, 0},
    {"coefficients", V_COEF, 0, P_POLY, P_POLY, NULL, 0},
    {"t0", V_NUM, FIELD(pt_spec_motion, t0), P_STEP, P_STEP, NULL, 0},
    {"t1", V_NUM, FIELD(pt_spec_motion, t1), P_STEP, P_STEP, NULL, 0},
    {"value0", V_NUM, FIELD(pt_spec_motion, value0), P_STEP, P_STEP, NULL, 0},
    {"value1", V_NUM, FIELD(pt_spec_motion, value1), P_STEP, P_STEP, NULL, 0},
    {"points", V_POINTS, 0, P_TABLE, P_TABLE, NULL, 0},
};

static int check_motion(loader *L, void *e, const seen *sn) {
  const pt_spec_motion *m = e;
  int coord_line = LINE(motion_keys, "coordinate");
  if (coord_line && strcmp(m->coordinate, "angle") && strcmp(m->coordinate, "slide") &&
      strcmp(m->coordinate, "angle1") && strcmp(m->coordinate, "angle2") &&
      strcmp(m->coordinate, "x") && strcmp(m->coordinate, "y"))
    return fail(L, coord_line,
                "coordinate: invalid value \"%s\", expected one of angle, slide, angle1, angle2, "
                "x, y",
                m->coordinate);
  if (m->profile == PT_PROFILE_STEP && !(m->t1 > m->t0))
    return fail(L, LINE(motion_keys, "t1"), "t1: must be greater than t0 (t0 = %g, t1 = %g)",
                m->t0, m->t1);
  return 0;
}

// forces
enum { F_TS = 1, F_SD = 2, F_BU = 4, F_FO = 8, F_TQ = 16, F_EX = 32 };
static const char *const force_types[] = {"torsion_spring", "spring_damper", "bushing", "force",
                                          "torque", "expression_force", NULL};
static const char *const frames[] = {"global", "body", NULL};

static const keydef force_keys[] = {
    {"name", V_NAME, FIELD(pt_spec_force, name), ALL, ALL, NULL, 0},
    {"type", V_ENUM, FIELD(pt_spec_force, type), ALL, ALL, force_types, 0},
    {"joint", V_NAME, FIELD(pt_spec_force, joint), F_TS | F_EX, F_TS, NULL, 0},
    {"body1", V_NAME, FIELD(pt_spec_force, body1), F_SD | F_BU, F_SD | F_BU, NULL, 0},
    {"body2", V_NAME, FIELD(pt_spec_force, body2), F_SD | F_BU, F_SD | F_BU, NULL, 0},
    {"body", V_NAME, FIELD(pt_spec_force, body), F_FO | F_TQ | F_EX, F_FO | F_TQ, NULL, 0},
    {"point", V_VEC3, FIELD(pt_spec_force, point), F_BU | F_FO | F_EX, F_BU | F_FO, NULL, 0},
    {"point1", V_VEC3, FIELD(pt_spec_force, point1), F_SD, F_SD, NULL, 0},
    {"point2", V_VEC3, FIELD(pt_spec_force, point2), F_SD, F_SD, NULL, 0},
    {"stiffness", V_NUM_OR6, FIELD(pt_spec_force, stiffness), F_TS | F_SD | F_BU,
     F_TS | F_SD | F_BU, NULL, FIELD(pt_spec_force, stiffness6)},
    {"damping", V_NUM_OR6, FIELD(pt_spec_force, damping), F_TS | F_SD | F_BU, 0, NULL,
     FIELD(pt_spec_force, damping6)},
    {"free_length", V_NONNEG, FIELD(pt_spec_force, free_length), F_SD, F_SD, NULL, 0},
    {"free_angle", V_NUM, FIELD(pt_spec_force, free_angle), F_TS, 0, NULL, 0},
    {"preload", V_NUM, FIELD(pt_spec_force, preload), F_TS | F_SD, 0, NULL, 0},
    {"axes", V_AXES, FIELD(pt_spec_force, axes), F_BU, 0, NULL, 0},
    {"value", V_VEC3, FIELD(pt_spec_force, value), F_FO | F_TQ, F_FO | F_TQ, NULL, 0},
    {"expr", V_EXPR, FIELD(pt_spec_force, expr), F_EX, F_EX, NULL, 0},
    {"coordinate", V_NAME, FIELD(pt_spec_force, coordinate), F_EX, 0, NULL, 0},
    {"direction", V_DIR, FIELD(pt_spec_force, direction), F_EX, 0, NULL, 0},
    {"axis", V_DIR, FIELD(pt_spec_force, axis), F_EX, 0, NULL, 0},
    {"frame", V_ENUM, FIELD(pt_spec_force, frame_body), F_EX, 0, frames, 0},
};

static int check_force(loader *L, void *e, const seen *sn) {
  pt_spec_force *f = e;
  // stiffness and damping: one number for springs, six for a bushing.
  static const char *const keys[] = {"stiffness", "damping"};
  for (int k = 0; k < 2; k++) {
    const char *key = keys[k];
    int i = key_index(force_keys, NKEYS(force_keys), key);
    if (!sn->line[i]) continue;
    if (f->type == PT_FORCE_BUSHING && !sn->list[i])
      return fail(L, sn->line[i], "%s: list of 6 numbers expected for a bushing", key);
    if (f->type != PT_FORCE_BUSHING && sn->list[i])
      return fail(L, sn->line[i], "%s: number expected, got a list", key);
  }
  f->has_axes = LINE(force_keys, "axes") != 0;
  if (f->type != PT_FORCE_EXPRESSION) return 0;
  // expression_force: a joint effort (joint, coordinate), or on a body a force (direction,
  // point) or a torque (axis), in the global or the body frame
  int joint = LINE(force_keys, "joint"), body = LINE(force_keys, "body");
  int dir = LINE(force_keys, "direction"), axis = LINE(force_keys, "axis");
  int point = LINE(force_keys, "point"), frame = LINE(force_keys, "frame");
  f->has_direction = dir != 0;
  f->has_axis = axis != 0;
  if (!joint == !body)
    return fail(L, joint ? joint : sn->line[0] ? sn->line[0] : line_of(L),
                "an expression_force acts on a joint (joint:) or on a body (body:), one of them");
  if (joint && (dir || axis || point || frame))
    return fail(L, dir ? dir : axis ? axis : point ? point : frame,
                "a joint's expression_force takes joint and coordinate, not direction, axis, "
                "point or frame");
  if (body && LINE(force_keys, "coordinate"))
    return fail(L, LINE(force_keys, "coordinate"), "coordinate applies to a joint's "
                "expression_force");
  if (body && !dir == !axis)
    return fail(L, body, "a body's expression_force is a force along direction: (at point:) or a "
                "torque about axis:, one of them");
  if (dir && !point) return fail(L, dir, "a force along direction: needs its point:");
  if (axis && point) return fail(L, point, "a torque about axis: has no point");
  return 0;
}

// actuators
enum { A_JT = 1, A_JF = 2, A_BF = 4, A_BT = 8 };
static const char *const actuator_types[] = {"joint_torque", "joint_force", "body_force",
                                             "body_torque", NULL};
static const keydef actuator_keys[] = {
    {"name", V_NAME, FIELD(pt_spec_actuator, name), ALL, ALL, NULL, 0},
    {"type", V_ENUM, FIELD(pt_spec_actuator, type), ALL, ALL, actuator_types, 0},
    {"joint", V_NAME, FIELD(pt_spec_actuator, joint), A_JT | A_JF, A_JT | A_JF, NULL, 0},
    {"coordinate", V_NAME, FIELD(pt_spec_actuator, coordinate), A_JT | A_JF, 0, NULL, 0},
    {"body", V_NAME, FIELD(pt_spec_actuator, body), A_BF | A_BT, A_BF | A_BT, NULL, 0},
    {"point", V_VEC3, FIELD(pt_spec_actuator, point), A_BF, A_BF, NULL, 0},
    {"frame", V_ENUM, FIELD(pt_spec_actuator, frame_body), A_BF | A_BT, 0, frames, 0},
    {"limit", V_POS, FIELD(pt_spec_actuator, limit), ALL, 0, NULL, 0},
    {"gear", V_NUM, FIELD(pt_spec_actuator, gear), A_JT | A_JF, 0, NULL, 0},
    {"source", V_SOURCE, 0, ALL, 0, NULL, 0},
};

static int check_actuator(loader *L, void *e, const seen *sn) {
  (void)sn;
  const pt_spec_actuator *a = e;
  int line = LINE(actuator_keys, "gear");
  if (line && a->gear == 0) return fail(L, line, "gear: must not be 0 (joint effort = gear x input)");
  int src = LINE(actuator_keys, "source"), body = a->type == PT_ACT_BODY_FORCE ||
                                                   a->type == PT_ACT_BODY_TORQUE;
  if (src && body && a->nsource != 3)
    return fail(L, src, "source: a body actuator takes a list of 3 signals (x, y, z)");
  if (src && !body && a->nsource != 1)
    return fail(L, src, "source: a joint actuator takes one signal");
  return 0;
}

// coordinates
enum { C_PP = 1, C_DI = 2 };
static const char *const coord_types[] = {"point_position", "distance", NULL};
static const char *const components[] = {"x", "y", "z", NULL};

static const keydef coord_keys[] = {
    {"name", V_NAME, FIELD(pt_spec_coord, name), ALL, ALL, NULL, 0},
    {"type", V_ENUM, FIELD(pt_spec_coord, type), ALL, ALL, coord_types, 0},
    {"body", V_NAME, FIELD(pt_spec_coord, body), C_PP, C_PP, NULL, 0},
    {"point", V_VEC3, FIELD(pt_spec_coord, point), C_PP, C_PP, NULL, 0},
    {"component", V_ENUM, FIELD(pt_spec_coord, component), C_PP, C_PP, components, 0},
    {"body1", V_NAME, FIELD(pt_spec_coord, body1), C_DI, C_DI, NULL, 0},
    {"point1", V_VEC3, FIELD(pt_spec_coord, point1), C_DI, C_DI, NULL, 0},
    {"body2", V_NAME, FIELD(pt_spec_coord, body2), C_DI, C_DI, NULL, 0},
    {"point2", V_VEC3, FIELD(pt_spec_coord, point2), C_DI, C_DI, NULL, 0},
};

// visuals (a body's `visuals:` list; pose in the global frame at t=0 like the rest), and
// collision shapes: the same keys, and for the ground's a plane (point, normal) besides
enum { V_BOXB = 1, V_SPHB = 2, V_CYLB = 4, V_CAPB = 8, V_MESHB = 16, V_PLANEB = 32 };
static const char *const visual_types[] = {"box", "sphere", "cylinder", "capsule", "mesh", NULL};
static const char *const collision_types[] = {"box",  "sphere", "cylinder", "capsule",
                                              "mesh", "plane",  NULL};

static const keydef visual_keys[] = {
    {"name", V_NAME, FIELD(pt_spec_visual, uri), 0, 0, NULL, 0},   // never taken: see below
    {"type", V_ENUM, FIELD(pt_spec_visual, type), ALL, ALL, visual_types, 0},
    {"size", V_VEC3, FIELD(pt_spec_visual, size), V_BOXB, V_BOXB, NULL, 0},
    {"radius", V_POS, FIELD(pt_spec_visual, radius), V_SPHB | V_CYLB | V_CAPB,
     V_SPHB | V_CYLB | V_CAPB, NULL, 0},
    {"length", V_POS, FIELD(pt_spec_visual, length), V_CYLB | V_CAPB, V_CYLB | V_CAPB, NULL, 0},
    {"file", V_PATH, FIELD(pt_spec_visual, uri), V_MESHB, V_MESHB, NULL, 0},
    {"scale", V_VEC3, FIELD(pt_spec_visual, scale), V_MESHB, 0, NULL, 0},
    {"position", V_VEC3, FIELD(pt_spec_visual, position), ALL, 0, NULL, 0},
    {"orientation", V_QUAT, FIELD(pt_spec_visual, quat), ALL, 0, NULL, 0},
    {"rgba", V_RGBA, FIELD(pt_spec_visual, rgba), ALL, 0, NULL, 0},
};

static const keydef plane_keys[] = {
    {"point", V_VEC3, FIELD(pt_spec_visual, point), V_PLANEB, V_PLANEB, NULL, 0},
    {"normal", V_DIR, FIELD(pt_spec_visual, normal), V_PLANEB, V_PLANEB, NULL, 0},
};
#define NSHAPE_KEYS (NKEYS(visual_keys) + NKEYS(plane_keys))
_Static_assert(NSHAPE_KEYS <= MAX_KEYS, "MAX_KEYS");

// The collision shapes' keys: the visuals', with plane among the types (taking point and
// normal, and none of the others but type).
static void collision_keys(keydef keys[NSHAPE_KEYS]) {
  memcpy(keys, visual_keys, sizeof(visual_keys));
  for (int i = 2; i < NKEYS(visual_keys); i++) keys[i].takes &= ~(unsigned)V_PLANEB;
  keys[1].names = collision_types;
  memcpy(keys + NKEYS(visual_keys), plane_keys, sizeof(plane_keys));
}

static int check_visual(loader *L, void *e, const seen *sn) {
  pt_spec_visual *v = e;
  v->has_position = LINE(visual_keys, "position") != 0;
  v->has_quat = LINE(visual_keys, "orientation") != 0;
  v->has_rgba = LINE(visual_keys, "rgba") != 0;
  if (v->type == PT_VISUAL_PLANE) {
    if (L->shapes != SHAPES_GROUND)
      return fail(L, LINE(visual_keys, "type"), "type: a plane is a collision shape of the "
                  "ground only (ground: {collision: [...]})");
  } else if (v->type == PT_VISUAL_BOX) {
    for (int k = 0; k < 3; k++)
      if (!(v->size[k] > 0))
        return fail(L, LINE(visual_keys, "size"), "size: edge lengths must be > 0, got %g",
                    v->size[k]);
  } else if (v->type == PT_VISUAL_MESH) {
    for (int k = 0; k < 3; k++)
      if (v->scale[k] == 0)
        return fail(L, LINE(visual_keys, "scale"), "scale: must not be 0");
    if (!pt_mesh_kind_ok(v->uri))
      return fail(L, LINE(visual_keys, "file"),
                  "file: \"%.200s\" is not a mesh file (.stl, .dae or .obj expected)", v->uri);
  } else {
    v->size[0] = v->radius;
    v->size[1] = v->length;
  }
  return 0;
}

// controls (docs/controls.md): the signal graph's elements
enum { K_MEA = 1, K_INP = 2, K_GAIN = 4, K_SUM = 8, K_SAT = 16, K_EXPR = 32, K_PID = 64,
       K_TF = 128, K_SS = 256, K_ODE = 512 };
static const char *const control_types[] = {"measure", "input", "gain", "sum", "saturation",
                                            "expression", "pid", "transfer_function",
                                            "state_space", "ode", NULL};
static const char *const quantities[] = {"position", "velocity", "angular_velocity", NULL};
#define CF(f) FIELD(pt_spec_control, f)

static const keydef control_keys[] = {
    {"name", V_NAME, CF(name), ALL, ALL, NULL, 0},
    {"type", V_ENUM, CF(type), ALL, ALL, control_types, 0},
    {"coordinate", V_CNAME, CF(target), K_MEA, 0, NULL, 0},
    {"rate", V_CNAME, CF(target), K_MEA, 0, NULL, 0},
    {"body", V_NAME, CF(target), K_MEA, 0, NULL, 0},
    {"quantity", V_ENUM, CF(measure), K_MEA, 0, quantities, 0},
    {"axis", V_ENUM, CF(axis), K_MEA, 0, components, 0},
    {"input", V_SIGNAL, 0, K_GAIN | K_SAT | K_PID | K_TF, K_GAIN | K_SAT | K_PID | K_TF, NULL, 0},
    {"inputs", V_SIGNALS, 0, K_SUM | K_SS, K_SUM | K_SS, NULL, 0},
    {"signs", V_SIGNS, 0, K_SUM, 0, NULL, 0},
    {"k", V_NUM, CF(k), K_GAIN, K_GAIN, NULL, 0},
    {"lower", V_NUM, CF(lower), K_SAT, 0, NULL, 0},
    {"upper", V_NUM, CF(upper), K_SAT, 0, NULL, 0},
    {"expr", V_EXPR, CF(expr), K_EXPR, K_EXPR, NULL, 0},
    {"kp", V_NUM, CF(kp), K_PID, 0, NULL, 0},
    {"ki", V_NUM, CF(ki), K_PID, 0, NULL, 0},
    {"kd", V_NUM, CF(kd), K_PID, 0, NULL, 0},
    {"tf", V_NONNEG, CF(tf), K_PID, 0, NULL, 0},
    {"limit", V_POS, CF(limit), K_PID, 0, NULL, 0},
    {"num", V_NUMS, CF(num), K_TF, K_TF, NULL, CF(nnum)},
    {"den", V_NUMS, CF(den), K_TF, K_TF, NULL, CF(nden)},
    {"A", V_MATRIX, CF(mat[0]), K_SS, 0, NULL, 0},   // A, B, C, D: checked by compile
    {"B", V_MATRIX, CF(mat[1]), K_SS, 0, NULL, 0},
    {"C", V_MATRIX, CF(mat[2]), K_SS, 0, NULL, 0},
    {"D", V_MATRIX, CF(mat[3]), K_SS, 0, NULL, 0},
    {"initial", V_NUMS, CF(initial), K_SS | K_ODE, 0, NULL, CF(ninitial)},
    {"states", V_STATES, 0, K_ODE, K_ODE, NULL, 0},
    {"derivatives", V_EXPRS, 0, K_ODE, K_ODE, NULL, 0},
};
_Static_assert(NKEYS(control_keys) <= MAX_KEYS, "MAX_KEYS");

static int check_control(loader *L, void *e, const seen *sn) {
  pt_spec_control *c = e;
  if (c->type == PT_CONTROL_MEASURE) {
    int co = LINE(control_keys, "coordinate"), ra = LINE(control_keys, "rate");
    int bo = LINE(control_keys, "body"), qu = LINE(control_keys, "quantity");
    int ax = LINE(control_keys, "axis");
    if ((co != 0) + (ra != 0) + (bo != 0) != 1)
      return fail(L, co ? co : ra ? ra : bo ? bo : sn->line[0],
                  "a measure reads one of coordinate:, rate: or body: (with quantity: and "
                  "axis:)");
    if (bo && (!qu || !ax))
      return fail(L, bo, "body: needs quantity: (position, velocity or angular_velocity) and "
                  "axis: (x, y or z)");
    if (!bo && (qu || ax))
      return fail(L, qu ? qu : ax, "quantity: and axis: go with body:");
    int quantity = (int)c->measure;  // the enum's index, read into measure
    c->measure = co   ? PT_MEASURE_COORDINATE
                 : ra ? PT_MEASURE_RATE
                      : (pt_measure_kind)(PT_MEASURE_POSITION + quantity);
  }
  if (c->type == PT_CONTROL_SUM) {
    int si = key_index(control_keys, NKEYS(control_keys), "signs");
    if (sn->line[si] && sn->list[si] != c->ninput)
      return fail(L, sn->line[si], "signs: %d given for %d inputs", sn->list[si], c->ninput);
  }
  c->has_lower = LINE(control_keys, "lower") != 0;
  c->has_upper = LINE(control_keys, "upper") != 0;
  c->has_limit = LINE(control_keys, "limit") != 0;
  return 0;
}

static void *add_control(pt_spec *s) { return pt_spec_add_control(s); }

// couplers: follower = multiplier x leader + offset between two joints' coordinates
static const keydef coupler_keys[] = {
    {"name", V_NAME, FIELD(pt_spec_coupler, name), ALL, ALL, NULL, 0},
    {"follower", V_NAME, FIELD(pt_spec_coupler, follower), ALL, ALL, NULL, 0},
    {"leader", V_NAME, FIELD(pt_spec_coupler, leader), ALL, ALL, NULL, 0},
    {"multiplier", V_NUM, FIELD(pt_spec_coupler, multiplier), ALL, 0, NULL, 0},
    {"offset", V_NUM, FIELD(pt_spec_coupler, offset), ALL, 0, NULL, 0},
};

static int check_coupler(loader *L, void *e, const seen *sn) {
  const pt_spec_coupler *c = e;
  if (!(c->multiplier != 0 && isfinite(c->multiplier)))
    return fail(L, LINE(coupler_keys, "multiplier"),
                "multiplier: must be a finite number other than 0, got %g", c->multiplier);
  if (!isfinite(c->offset))
    return fail(L, LINE(coupler_keys, "offset"), "offset: must be finite, got %g", c->offset);
  return 0;
}

static void *add_visual(pt_spec *s) { return pt_spec_add_visual(s); }
static void *add_collision(pt_spec *s) { return pt_spec_add_collision(s); }

static void *add_body(pt_spec *s) { return pt_spec_add_body(s); }
static void *add_joint(pt_spec *s) { return pt_spec_add_joint(s); }
static void *add_motion(pt_spec *s) { return pt_spec_add_motion(s); }
static void *add_force(pt_spec *s) { return pt_spec_add_force(s); }
static void *add_actuator(pt_spec *s) { return pt_spec_add_actuator(s); }
static void *add_coord(pt_spec *s) { return pt_spec_add_coord(s); }
static void *add_coupler(pt_spec *s) { return pt_spec_add_coupler(s); }

static const kinddef kinds[] = {
    {"bodies", body_keys, NKEYS(body_keys), -1, FIELD(pt_spec_body, line), add_body, check_body},
    {"joints", joint_keys, NKEYS(joint_keys), 1, FIELD(pt_spec_joint, line), add_joint,
     check_joint},
    {"motions", motion_keys, NKEYS(motion_keys), 3, FIELD(pt_spec_motion, line), add_motion,
     check_motion},
    {"forces", force_keys, NKEYS(force_keys), 1, FIELD(pt_spec_force, line), add_force,
     check_force},
    {"actuators", actuator_keys, NKEYS(actuator_keys), 1, FIELD(pt_spec_actuator, line),
     add_actuator, check_actuator},
    {"coordinates", coord_keys, NKEYS(coord_keys), 1, FIELD(pt_spec_coord, line), add_coord,
     NULL},
    {"couplers", coupler_keys, NKEYS(coupler_keys), -1, FIELD(pt_spec_coupler, line), add_coupler,
     check_coupler},
    {"controls", control_keys, NKEYS(control_keys), 1, FIELD(pt_spec_control, line), add_control,
     check_control},
};
#define NKINDS NKEYS(kinds)
#define MAX_VISUALS 10000     // visual shapes in one file
_Static_assert(NKEYS(force_keys) <= MAX_KEYS, "MAX_KEYS");

// ---------------------------------------------------------------------------------------------
// Top level.

// The list of kind `k` (the current event is its value).
static int parse_list(loader *L, const kinddef *k) {
  char q[72];
  if (is_null(L)) return 0;
  if (L->ev.type != YAML_SEQUENCE_START_EVENT)
    return fail(L, line_of(L), "%s: list expected, got %s", k->list, describe(L, q));
  for (int i = 0;; i++) {
    if (next(L)) return -1;
    if (L->ev.type == YAML_SEQUENCE_END_EVENT) break;
    name_entry(L, k->list, i, NULL);
    if (k->add == add_body && i == L->lim.max_bodies)
      return fail(L, line_of(L), "more than %d bodies (max_bodies)", L->lim.max_bodies);
    if (k->add == add_joint && i == L->lim.max_joints)
      return fail(L, line_of(L), "more than %d joints (max_joints)", L->lim.max_joints);
    if (i == MAX_ENTRIES)
      return fail(L, line_of(L), "more than %d entries in %s", MAX_ENTRIES, k->list);
    if (L->ev.type != YAML_MAPPING_START_EVENT)
      return fail(L, line_of(L), "mapping expected, got %s", describe(L, q));
    if (parse_entry(L, k, i)) return -1;
  }
  snprintf(L->entry, sizeof(L->entry), "model");
  return 0;
}

// A list of shapes (the current event is its value): a body's `visuals:` or `collision:`, or
// the ground's. Entries are named in messages `bodies[2] "arm" visuals[1]`, `ground
// collision[0]`.
static int shapes_here(loader *L, const char *key, int list) {
  char q[72], prefix[100];
  if (is_null(L)) return 0;
  if (L->ev.type != YAML_SEQUENCE_START_EVENT)
    return fail(L, line_of(L), "%s: list expected, got %s", key, describe(L, q));
  snprintf(prefix, sizeof(prefix), "%.80s %.10s", L->entry, key);
  keydef ckeys[NSHAPE_KEYS];
  collision_keys(ckeys);
  int visual = list == SHAPES_VISUAL;
  kinddef k = {prefix, visual ? visual_keys : ckeys, visual ? NKEYS(visual_keys) : NSHAPE_KEYS,
               1, FIELD(pt_spec_visual, line), visual ? add_visual : add_collision,
               check_visual};
  L->shapes = list;
  for (int i = 0;; i++) {
    if (next(L)) return -1;
    if (L->ev.type == YAML_SEQUENCE_END_EVENT) break;
    if ((visual ? L->spec->nvisual : L->spec->ncollision) >= MAX_VISUALS)
      return fail(L, line_of(L), "more than %d %s shapes in the file", MAX_VISUALS,
                  visual ? "visual" : "collision");
    char saved[sizeof(L->entry)];
    memcpy(saved, L->entry, sizeof(saved));
    name_entry(L, prefix, i, NULL);
    if (L->ev.type != YAML_MAPPING_START_EVENT)
      return fail(L, line_of(L), "mapping expected, got %s", describe(L, q));
    if (parse_entry(L, &k, i)) return -1;
    pt_spec_visual *v = visual ? &L->spec->visuals[L->spec->nvisual - 1]
                               : &L->spec->collisions[L->spec->ncollision - 1];
    v->index = i;
    if (list == SHAPES_GROUND) snprintf(v->body, sizeof(v->body), "ground");
    memcpy(L->entry, saved, sizeof(saved));
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Mappings of fixed keys: simulation, ground, contact.

// The next key of such a mapping, one of keys (n): its index, the event moved on to its value;
// -2 at the mapping's end; -1 on an error (a key not a string, unknown, or given twice).
// given (n): the line of each key given so far.
static int next_key(loader *L, const char *const *keys, int n, int *given) {
  char q[72];
  if (next(L)) return -1;
  if (L->ev.type == YAML_MAPPING_END_EVENT) return -2;
  if (!is_scalar(L)) return fail(L, line_of(L), "keys must be strings, got %s", describe(L, q));
  int at = line_of(L), key = -1;
  for (int k = 0; k < n; k++)
    if (!strcmp(scalar(L), keys[k])) key = k;
  if (key < 0) return fail(L, at, "unknown key %s", describe(L, q));
  if (given[key]) return fail(L, at, "duplicate key %s", describe(L, q));
  given[key] = at;
  return next(L) ? -1 : key;
}

// The start of such a mapping (the current event): 1 when it is one, 0 when the value is empty
// (null), -1 with the message when it is something else.
static int mapping_here(loader *L) {
  char q[72];
  if (is_null(L)) return 0;
  if (L->ev.type != YAML_MAPPING_START_EVENT)
    return fail(L, line_of(L), "mapping expected, got %s", describe(L, q));
  return 1;
}

// ---------------------------------------------------------------------------------------------
// Ground and contact.

// `ground:` {collision: [...], visuals: [...]}: fixed shapes (the current event is its value).
static int parse_ground(loader *L) {
  static const char *const keys[] = {"collision", "visuals"};
  int given[2] = {0}, key, m;
  snprintf(L->entry, sizeof(L->entry), "ground");
  if ((m = mapping_here(L)) <= 0) return m;
  while ((key = next_key(L, keys, 2, given)) >= 0) {
    int list = key ? SHAPES_VISUAL : SHAPES_GROUND;
    if (shapes_here(L, key ? "visuals" : "collision", list)) return -1;
    if (key)   // the ground's visuals: fixed scenery
      for (int i = 0; i < L->spec->nvisual; i++)
        if (!L->spec->visuals[i].body[0]) snprintf(L->spec->visuals[i].body, PT_NAME_MAX, "ground");
  }
  if (key == -1) return -1;
  snprintf(L->entry, sizeof(L->entry), "model");
  return 0;
}

// contact pairs: {body1, body2, friction, restitution}
static const keydef pair_keys[] = {
    {"name", V_NAME, FIELD(pt_spec_contact_pair, body1), 0, 0, NULL, 0},   // never taken
    {"body1", V_NAME, FIELD(pt_spec_contact_pair, body1), ALL, ALL, NULL, 0},
    {"body2", V_NAME, FIELD(pt_spec_contact_pair, body2), ALL, ALL, NULL, 0},
    {"friction", V_NONNEG, FIELD(pt_spec_contact_pair, friction), ALL, 0, NULL, 0},
    {"restitution", V_NONNEG, FIELD(pt_spec_contact_pair, restitution), ALL, 0, NULL, 0},
};

static int check_pair(loader *L, void *e, const seen *sn) {
  pt_spec_contact_pair *p = e;
  if (LINE(pair_keys, "name")) return fail(L, LINE(pair_keys, "name"), "unknown key \"name\"");
  p->has_friction = LINE(pair_keys, "friction") != 0;
  p->has_restitution = LINE(pair_keys, "restitution") != 0;
  if (p->has_restitution && !(p->restitution <= 1))
    return fail(L, LINE(pair_keys, "restitution"), "restitution: must be in [0, 1], got %g",
                p->restitution);
  if (!p->has_friction && !p->has_restitution)
    return fail(L, sn->line[1], "a pair sets friction, restitution or both");
  return 0;
}

static void *add_pair(pt_spec *s) { return pt_spec_add_contact_pair(s); }

// `exclude: [[A, B], ...]` (the current event is its value).
static int exclude_here(loader *L) {
  char q[72];
  if (is_null(L)) return 0;
  if (L->ev.type != YAML_SEQUENCE_START_EVENT)
    return fail(L, line_of(L), "exclude: list of [body1, body2] pairs expected, got %s",
                describe(L, q));
  for (int i = 0;; i++) {
    if (next(L)) return -1;
    if (L->ev.type == YAML_SEQUENCE_END_EVENT) break;
    if (i == MAX_ENTRIES)
      return fail(L, line_of(L), "exclude: more than %d pairs", MAX_ENTRIES);
    int at = line_of(L);
    if (L->ev.type != YAML_SEQUENCE_START_EVENT)
      return fail(L, at, "exclude[%d]: [body1, body2] expected, got %s", i, describe(L, q));
    pt_spec_contact_pair *p = pt_spec_add_exclude(L->spec);
    if (!p) return out_of_memory(L);
    p->line = at;
    char key[32];
    snprintf(key, sizeof(key), "exclude[%d]", i);
    if (next(L) || string_here(L, key, p->body1) || next(L) || string_here(L, key, p->body2) ||
        next(L))
      return -1;
    if (L->ev.type != YAML_SEQUENCE_END_EVENT)
      return fail(L, at, "%s: two body names expected, got more", key);
    if (!strcmp(p->body1, p->body2))
      return fail(L, at, "%s: a body and itself (\"%s\")", key, p->body1);
  }
  return 0;
}

// `contact:` {friction, restitution, max_contacts, exclude, pairs} (the current event is its
// value).
static int parse_contact(loader *L) {
  static const char *const keys[] = {"friction", "restitution", "max_contacts", "exclude",
                                     "pairs"};
  int given[5] = {0}, key, m;
  snprintf(L->entry, sizeof(L->entry), "contact");
  L->spec->contact_line = line_of(L);
  if ((m = mapping_here(L)) <= 0) return m;
  while ((key = next_key(L, keys, 5, given)) >= 0) {
    double v = 0;
    if (key == 0) {
      if (number_here(L, "friction", &v)) return -1;
      if (!(v >= 0)) return fail(L, line_of(L), "friction: must not be negative, got %g", v);
      L->spec->contact_friction = v;
    } else if (key == 1) {
      if (number_here(L, "restitution", &v)) return -1;
      if (!(v >= 0 && v <= 1))
        return fail(L, line_of(L), "restitution: must be in [0, 1], got %g", v);
      L->spec->contact_restitution = v;
    } else if (key == 2) {
      if (number_here(L, "max_contacts", &v)) return -1;
      if (!(v >= 1 && v <= 100000 && v == floor(v)))
        return fail(L, line_of(L), "max_contacts: a whole number from 1 to 100000, got %g", v);
      L->spec->max_contacts = (int)v;
    } else if (key == 3) {
      if (exclude_here(L)) return -1;
    } else {
      kinddef k = {"contact pairs", pair_keys, NKEYS(pair_keys), -1,
                   FIELD(pt_spec_contact_pair, line), add_pair, check_pair};
      if (parse_list(L, &k)) return -1;
      snprintf(L->entry, sizeof(L->entry), "contact");
    }
  }
  if (key == -1) return -1;
  snprintf(L->entry, sizeof(L->entry), "model");
  return 0;
}

static const char *const integrators[] = {"rk4", "abm4", "euler", NULL};

static const char *const on_off[] = {"on", "off", NULL};

static int parse_simulation(loader *L) {
  // dt, integrator, switch_back_steps, joint_limits, restitution: each at most once
  static const char *const keys[] = {"dt", "integrator", "switch_back_steps", "joint_limits",
                                     "restitution"};
  int given[5] = {0}, key, m;
  snprintf(L->entry, sizeof(L->entry), "simulation");
  if ((m = mapping_here(L)) <= 0) return m;
  while ((key = next_key(L, keys, 5, given)) >= 0) {
    if (key == 2) {  // hybrid LU/QR partitioning: stable QR steps before LU is tried again
      double v = 0;
      if (number_here(L, "switch_back_steps", &v)) return -1;
      if (!(v >= 1 && v <= 100000 && v == floor(v)))
        return fail(L, line_of(L), "switch_back_steps: a whole number from 1 to 100000, got %g",
                    v);
      L->spec->switch_back_steps = (int)v;
    } else if (key == 0) {
      if (number_here(L, "dt", &L->spec->dt)) return -1;
      if (!(L->spec->dt > 0))
        return fail(L, line_of(L), "dt: must be > 0, got %g", L->spec->dt);
    } else if (key == 1) {
      int v = 0;
      if (enum_here(L, "integrator", integrators, &v)) return -1;
      L->spec->integrator = (pt_integrator)v;
      L->spec->has_integrator = 1;
    } else if (key == 3) {  // joint limits enforced (on, the default) or only kept (off)
      if (enum_here(L, "joint_limits", on_off, &L->spec->limits_off)) return -1;
    } else {
      double e = 0;
      if (number_here(L, "restitution", &e)) return -1;
      if (!(e >= 0 && e <= 1))
        return fail(L, line_of(L), "restitution: must be in [0, 1], got %g", e);
      L->spec->restitution = e;
    }
  }
  if (key == -1) return -1;
  snprintf(L->entry, sizeof(L->entry), "model");
  return 0;
}

static int model_name_here(loader *L) {
  char q[72];
  if (string_here(L, "model", L->spec->model)) return -1;
  const char *s = L->spec->model;
  for (size_t i = 0; s[i]; i++) {
    char c = s[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '_' || c == '.' || c == '-';
    if (!ok)
      return fail(L, line_of(L), "invalid model name %s: must match [A-Za-z0-9_.-]+",
                  quote(q, s, strlen(s)));
  }
  return 0;
}

// Top-level keys: model, gravity, simulation, then the lists in the order of kinds[], then the
// ground and contact mappings.
static const char *const top_keys[] = {"model",     "gravity",    "simulation", "bodies",
                                       "joints",    "motions",    "forces",     "actuators",
                                       "coordinates", "couplers", "controls",   "ground",
                                       "contact",   NULL};
#define TOP_GROUND 11

static int parse_document(loader *L) {
  char q[72];
  int seen_key[13] = {0};
  if (next(L) || next(L)) return -1;  // stream start, then a document or the end
  if (L->ev.type == YAML_STREAM_END_EVENT)
    return fail(L, line_of(L), "empty file (expected a mapping with model: and bodies:)");
  if (next(L)) return -1;
  if (L->ev.type != YAML_MAPPING_START_EVENT)
    return fail(L, line_of(L), "top level must be a mapping, got %s", describe(L, q));
  int root = line_of(L);
  for (;;) {
    if (next(L)) return -1;
    if (L->ev.type == YAML_MAPPING_END_EVENT) break;
    if (!is_scalar(L)) return fail(L, line_of(L), "keys must be strings, got %s", describe(L, q));
    int i = 0, at = line_of(L);
    while (top_keys[i] && strcmp(top_keys[i], scalar(L))) i++;
    if (!top_keys[i]) return fail(L, at, "unknown key %s", describe(L, q));
    if (seen_key[i]) return fail(L, at, "duplicate key %s", describe(L, q));
    seen_key[i] = at;
    if (next(L)) return -1;
    int rc = 0;
    if (i == 0) {
      L->spec->line = at;
      rc = model_name_here(L);
    } else if (i == 1) {
      rc = vec_here(L, "gravity", L->spec->gravity, 3, "list of 3 numbers");
    } else if (i == 2) {
      rc = parse_simulation(L);
    } else if (i == TOP_GROUND) {
      rc = parse_ground(L);
    } else if (i == TOP_GROUND + 1) {
      rc = parse_contact(L);
    } else {
      rc = parse_list(L, &kinds[i - 3]);
      if (!rc && i == 3 && L->spec->nbody == 0)
        rc = fail(L, at, "bodies: at least one body required");
    }
    if (rc) return rc;
  }
  if (!seen_key[0]) return fail(L, root, "missing required field \"model\"");
  if (!seen_key[3]) return fail(L, root, "missing required field \"bodies\"");
  if (next(L) || next(L)) return -1;  // document end, then the stream end
  if (L->ev.type != YAML_STREAM_END_EVENT)
    return fail(L, line_of(L), "more than one YAML document in the file");
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Limits: one pass of the scanner over the whole text before the descent.

// 0 when the text is within the limits (or has a syntax error, which the descent reports with
// its own message); -1 with the message set otherwise.
static int prescan(loader *L) {
  yaml_parser_t p;
  if (!yaml_parser_initialize(&p)) return out_of_memory(L);
  yaml_parser_set_input_string(&p, (const unsigned char *)L->text, L->len);
  long depth = 0, nodes = 0;
  int rc = 0;
  for (;;) {
    yaml_token_t t;
    if (!yaml_parser_scan(&p, &t)) break;
    int line = (int)t.start_mark.line + 1, done = t.type == YAML_STREAM_END_TOKEN;
    switch (t.type) {
      case YAML_BLOCK_SEQUENCE_START_TOKEN:
      case YAML_BLOCK_MAPPING_START_TOKEN:
      case YAML_FLOW_SEQUENCE_START_TOKEN:
      case YAML_FLOW_MAPPING_START_TOKEN:
        nodes++;
        if (++depth > L->lim.max_yaml_depth)
          rc = fail(L, line, "YAML nesting deeper than %d levels (max_yaml_depth)",
                    L->lim.max_yaml_depth);
        break;
      case YAML_BLOCK_END_TOKEN:
      case YAML_FLOW_SEQUENCE_END_TOKEN:
      case YAML_FLOW_MAPPING_END_TOKEN:
        depth--;
        break;
      case YAML_SCALAR_TOKEN:
      case YAML_ALIAS_TOKEN:  // refused by the descent, with its entry, before any use
        nodes++;
        break;
      default:
        break;
    }
    if (!rc && nodes > L->lim.max_yaml_nodes)
      rc = fail(L, line, "more than %d YAML nodes (max_yaml_nodes)", L->lim.max_yaml_nodes);
    yaml_token_delete(&t);
    if (rc || done) break;
  }
  if (!rc && p.error == YAML_MEMORY_ERROR) rc = out_of_memory(L);
  yaml_parser_delete(&p);
  return rc;
}

int pt_spec_from_yaml(const char *text, size_t len, const char *source, pt_spec **out,
                      pt_error *err) {
  return pt_spec_from_yaml_opt(text, len, source, NULL, out, err);
}

int pt_spec_from_yaml_opt(const char *text, size_t len, const char *source,
                          const pt_load_options *opt, pt_spec **out, pt_error *err) {
  *out = NULL;
  if (!source) source = "<string>";
  pt_load_options lim = pt_load_options_resolve(opt);
  if (len > lim.max_text_bytes)
    return pt_error_set(err, PT_EPARSE, "%s:1: model: text larger than %zu bytes (max_text_bytes)",
                        source, lim.max_text_bytes);
  loader L;
  memset(&L, 0, sizeof(L));
  L.lim = lim;
  L.err = err;
  L.source = source;
  L.text = text ? text : "";
  L.len = text ? len : 0;
  snprintf(L.entry, sizeof(L.entry), "model");
  L.spec = pt_spec_new();
  if (!L.spec || !yaml_parser_initialize(&L.parser)) {
    pt_spec_free(L.spec);
    return pt_error_set(err, PT_ENOMEM, "%s: out of memory", source);
  }
  snprintf(L.spec->source, sizeof(L.spec->source), "%s", source);
  yaml_parser_set_input_string(&L.parser, (const unsigned char *)L.text, L.len);
  int rc = prescan(&L);
  if (!rc) rc = parse_document(&L);
  if (L.has_ev) yaml_event_delete(&L.ev);
  yaml_parser_delete(&L.parser);
  if (rc) {
    pt_spec_free(L.spec);
    return L.code ? L.code : pt_error_set(err, PT_EPARSE, "%s: malformed model", source);
  }
  *out = L.spec;
  return PT_OK;
}
