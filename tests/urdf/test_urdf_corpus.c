// test_urdf_corpus.c: public robot descriptions, as users bring them (issue 11).
//
// Every *.urdf of the corpus directory loads (the number of warnings is printed); one that is
// refused for a non-physical inertia must load with balance_inertia. For MuJoCo, which
// refuses those too, the copy carries the repaired inertias (balance_copy). With MuJoCo (built with -DHAVE_MUJOCO), each robot is also
// loaded by MuJoCo's URDF importer from a copy without <visual>, <collision>, <gazebo>,
// <transmission> and <mujoco> elements and without `friction` attributes (MuJoCo needs no
// meshes then, and its friction loss is a constraint Partita does not have); Partita loads the
// same copy, both with the root welded to ground and MuJoCo's contacts and joint limits off.
// At a mid-range pose (the middle of each limited joint's range, 0.3 rad or m for the others)
// with rates and accelerations from a fixed sequence, the torque requests must equal
// mj_inverse to 1e-8 relative to the largest.
//
// The corpus is not in the repository (its files are others' work): the directory is
// $PARTITA_URDF_CORPUS, else argv[1] (the shared data folder beside the source tree). Without
// one the test is skipped (exit 77).
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inertia.h"
#include "partita.h"
#include "urdf_test.h"
#ifdef HAVE_MUJOCO
#include <mujoco/mujoco.h>
#endif

#define MAX_FILES 256

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int count_lines(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

#ifdef HAVE_MUJOCO
// Removes every <name ...>...</name> and <name .../> element from text (in place).
static void strip_elements(char *text, const char *name) {
  char open[64], close[64];
  snprintf(open, sizeof(open), "<%s", name);
  snprintf(close, sizeof(close), "</%s>", name);
  size_t ol = strlen(open);
  char *p = text;
  while ((p = strstr(p, open))) {
    char c = p[ol];
    if (c != ' ' && c != '>' && c != '/' && c != '\n' && c != '\t' && c != '\r') {
      p += ol;
      continue;
    }
    char *gt = strchr(p, '>');
    if (!gt) return;
    char *end;
    if (gt[-1] == '/') {
      end = gt + 1;
    } else {
      char *cl = strstr(gt, close);
      if (!cl) return;
      end = cl + strlen(close);
    }
    memmove(p, end, strlen(end) + 1);
  }
}

// Removes every ` friction="..."` attribute (in place).
static void strip_friction(char *text) {
  char *p = text;
  while ((p = strstr(p, " friction=\""))) {
    char *q = strchr(p + 11, '"');
    if (!q) return;
    memmove(p, q + 1, strlen(q + 1) + 1);
  }
}

// The value of attribute `name` inside the element text [s, e); NAN if absent.
static double attr_in(const char *s, const char *e, const char *name) {
  char key[32];
  snprintf(key, sizeof(key), " %s=\"", name);
  for (const char *p = s; p && p < e; p++) {
    p = strstr(p, key);
    if (!p || p >= e) break;
    return strtod(p + strlen(key), NULL);
  }
  return NAN;
}

// A copy of text in which every <inertia> that is not physical (inertia.c) is replaced by the
// repair balance_inertia makes (plus 1e-9 of its trace on the diagonal), printed to 17 digits:
// MuJoCo, which refuses such inertias, and Partita then load the same physical robot. *nrepaired gets how many were replaced.
static char *balance_copy(const char *text, int *nrepaired) {
  size_t cap = strlen(text) + 1 + 4096, n = 0;
  char *out = malloc(cap);
  const char *p = text;
  *nrepaired = 0;
  while (out) {
    const char *in = strstr(p, "<inertial"), *end = in ? strstr(in, "</inertial>") : NULL;
    const char *el = in && end ? strstr(in, "<inertia ") : NULL;
    const char *ee = el && el < end ? strstr(el, "/>") : NULL;
    if (!ee || ee > end) {  // nothing more to repair: the rest as it is
      size_t rest = strlen(p);
      if (n + rest + 1 > cap) {
        char *o = realloc(out, n + rest + 1);
        if (!o) free(out);
        out = o;
        if (!out) break;
      }
      memcpy(out + n, p, rest + 1);
      break;
    }
    double I[6] = {attr_in(el, ee, "ixx"), attr_in(el, ee, "iyy"), attr_in(el, ee, "izz"),
                   attr_in(el, ee, "ixy"), attr_in(el, ee, "ixz"), attr_in(el, ee, "iyz")};
    const char *ms = strstr(in, "<mass");
    const double mass = ms && ms < end ? attr_in(ms, end, "value") : 0;
    double lam[3];
    int zero = 1;
    for (int k = 0; k < 6; k++) zero &= I[k] == 0;
    char rep[400] = "";
    if (!zero && mass > 0 && pt_inertia_check(I, lam) != PT_INERTIA_OK &&
        pt_inertia_balance(I, 0.4e-6 * mass) == 0) {
      // off the boundary A + B = C by 1e-9 of the trace, which MuJoCo checks without tolerance
      const double eps = 1e-9 * (I[0] + I[1] + I[2]);
      for (int k = 0; k < 3; k++) I[k] += eps;
      snprintf(rep, sizeof(rep),
               "<inertia ixx=\"%.17g\" ixy=\"%.17g\" ixz=\"%.17g\" iyy=\"%.17g\" "
               "iyz=\"%.17g\" izz=\"%.17g\"", I[0], I[3], I[4], I[1], I[5], I[2]);
      ++*nrepaired;
    }
    const char *upto = rep[0] ? el : ee;  // copy up to the element (replaced) or past it
    size_t a = (size_t)(upto - p), b = strlen(rep);
    if (n + a + b + 1 > cap) {
      cap = 2 * (n + a + b + 1);
      char *o = realloc(out, cap);
      if (!o) free(out);
      out = o;
      if (!out) break;
    }
    memcpy(out + n, p, a);
    memcpy(out + n + a, rep, b);
    n += a + b;
    p = ee;
  }
  return out;
}

static double urand(unsigned *seed) {  // uniform in [-1, 1)
  *seed = *seed * 1664525u + 1013904223u;
  return (double)(*seed >> 8) / (double)(1u << 23) - 1.0;
}

// Partita against mj_inverse on `path` (already stripped). Returns the relative difference,
// or -1 if MuJoCo does not load the file (printed, not a failure).
static double compare_mujoco(const char *name, const char *path, const pt_load_options *opt) {
  char msg[1000] = "";
  mjModel *mm = mj_loadXML(path, NULL, msg, sizeof(msg));
  if (!mm) {
    for (char *c = msg; *c; c++)
      if (*c == '\n') *c = ' ';
    printf("  %s: MuJoCo does not load it: %s\n", name, msg);
    return -1;
  }
  pt_model *pm = NULL;
  pt_error err = {0};
  int rc = pt_model_load_file(path, opt, &pm, &err);
  CHECK(rc == PT_OK, "%s (stripped): %s", name, err.msg);
  if (rc) {
    mj_deleteModel(mm);
    return -1;
  }
  mm->opt.disableflags |= mjDSBL_CONTACT | mjDSBL_LIMIT | mjDSBL_FRICTIONLOSS;
  mjData *md = mj_makeData(mm);
  const int nj = mm->njnt;
  pt_data *pd = pt_data_new(pm);
  pt_inverse_result *res = pt_inverse_result_new(pm, nj);
  pt_assign *pos = calloc((size_t)nj + 1, sizeof(*pos)), *vel = calloc((size_t)nj + 1, sizeof(*vel));
  pt_assign *acc = calloc((size_t)nj + 1, sizeof(*acc));
  unsigned seed = 7u;
  int matched = 1;
  for (int j = 0; j < nj && matched; j++) {
    const int c = pt_coord_index(pm, mj_id2name(mm, mjOBJ_JOINT, j));
    const int type = mm->jnt_type[j];
    matched = c >= 0 && (type == mjJNT_HINGE || type == mjJNT_SLIDE);
    CHECK(matched, "%s: MuJoCo joint %s not matched", name, mj_id2name(mm, mjOBJ_JOINT, j));
    const double *r = mm->jnt_range + 2 * j;
    const double mid = mm->jnt_limited[j] ? 0.5 * (r[0] + r[1]) : 0.3;
    pos[j] = (pt_assign){c, mid};
    vel[j] = (pt_assign){c, 0.5 * urand(&seed)};
    acc[j] = (pt_assign){c, urand(&seed)};
  }
  double rel = -1;
  if (matched) {
    CHECK(pt_model_ndof(pm) == nj, "%s: %d dof vs MuJoCo's %d joints", name, pt_model_ndof(pm),
          nj);
    rc = pt_set_state(pm, pd, pos, nj, vel, nj, &err);
    CHECK(rc == PT_OK, "%s state: %s", name, err.msg);
    if (!rc) rc = pt_inverse_request(pm, pd, acc, nj, res, &err);
    CHECK(rc == PT_OK, "%s inverse: %s", name, err.msg);
    if (!rc) {
      for (int j = 0; j < nj; j++) {  // Partita's assembled state, exactly
        md->qpos[mm->jnt_qposadr[j]] = pt_coords(pd)[pos[j].coord];
        md->qvel[mm->jnt_dofadr[j]] = pt_coord_rates(pd)[pos[j].coord];
        md->qacc[mm->jnt_dofadr[j]] = acc[j].value;
      }
      mj_inverse(mm, md);
      double dmax = 0, tmax = 0;
      for (int j = 0; j < nj; j++) {
        const double tau = md->qfrc_inverse[mm->jnt_dofadr[j]];
        dmax = fmax(dmax, fabs(res->req_effort[j] - tau));
        tmax = fmax(tmax, fabs(tau));
      }
      rel = tmax > 0 ? dmax / tmax : dmax;
      CHECK(rel <= 1e-8, "%s: torques differ by %.3g of %.3g", name, dmax, tmax);
    }
  }
  free(pos);
  free(vel);
  free(acc);
  pt_inverse_result_free(res);
  pt_data_free(pd);
  pt_model_free(pm);
  mj_deleteData(md);
  mj_deleteModel(mm);
  return rel;
}
#endif

static int has_urdf(const char *dir) {
  DIR *d = dir ? opendir(dir) : NULL;
  if (!d) return 0;
  int found = 0;
  struct dirent *de;
  while (!found && (de = readdir(d))) {
    size_t l = strlen(de->d_name);
    found = l > 5 && strcmp(de->d_name + l - 5, ".urdf") == 0;
  }
  closedir(d);
  return found;
}

int main(int argc, char **argv) {
  const char *dir = getenv("PARTITA_URDF_CORPUS");
  if (!has_urdf(dir)) dir = argc > 1 ? argv[1] : NULL;
  if (!has_urdf(dir)) {
    printf("urdf_corpus: skipped: no corpus (set PARTITA_URDF_CORPUS to a folder of the files "
           "tests/urdf/public/README.md lists)\n");
    return 77;
  }
  DIR *d = opendir(dir);
  char *names[MAX_FILES];
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)) && n < MAX_FILES) {
    size_t l = strlen(de->d_name);
    if (l > 5 && strcmp(de->d_name + l - 5, ".urdf") == 0) names[n++] = strdup(de->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof(names[0]), cmp_str);
  printf("%-40s %5s %4s %8s %s\n", "file", "dof", "warn", "mujoco", "note");
  for (int i = 0; i < n; i++) {
    char path[2048];
    snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
    pt_load_options opt = {0};
    pt_model *m = NULL;
    pt_error err = {0};
    int rc = pt_model_load_file(path, &opt, &m, &err);
    const char *note = "";
    char mjnote[160];
    if (rc == PT_EMODEL && strstr(err.msg, "balance_inertia")) {
      printf("  %s: %s\n", names[i], err.msg);
      opt.balance_inertia = 1;
      note = "needs balance_inertia";
      rc = pt_model_load_file(path, &opt, &m, &err);
    }
    CHECK(rc == PT_OK, "%s: %s", names[i], err.msg);
    if (rc) continue;
    const int dof = pt_model_ndof(m), nw = count_lines(pt_model_warnings(m));
    pt_model_free(m);
    double rel = -1;
#ifdef HAVE_MUJOCO
    size_t len = 0;
    char *text = read_text(path, &len);
    char copy[128];
    snprintf(copy, sizeof(copy), "/tmp/partita_corpus_%d.urdf", (int)getpid());
    if (text) {
      // <mimic> too: MuJoCo 2.2.2 ignores it, Partita couples; both read the copy
      static const char *const strip[] = {"visual", "collision", "gazebo", "transmission",
                                          "mujoco", "mimic"};
      for (int k = 0; k < 6; k++) strip_elements(text, strip[k]);
      strip_friction(text);
      int nrep = 0;
      char *bal = balance_copy(text, &nrep);  // physical inertias for MuJoCo too
      FILE *f = bal ? fopen(copy, "wb") : NULL;
      if (f) {
        fwrite(bal, 1, strlen(bal), f);
        fclose(f);
        const pt_load_options plain = {0};  // the copy needs no repair
        rel = compare_mujoco(names[i], copy, &plain);
        remove(copy);
        if (nrep && rel >= 0) {
          snprintf(mjnote, sizeof(mjnote), "%s; MuJoCo with the %d repaired inertias", note, nrep);
          note = mjnote;
        }
      }
      free(bal);
      free(text);
    }
#endif
    char rels[32] = "-";
    if (rel >= 0) snprintf(rels, sizeof(rels), "%.2g", rel);
    printf("%-40s %5d %4d %8s %s\n", names[i], dof, nw, rels, note);
  }
  for (int i = 0; i < n; i++) free(names[i]);
  if (nfail) fprintf(stderr, "%d failures\n", nfail);
  else printf("urdf_corpus: %d files, all checks passed\n", n);
  return nfail ? 1 : 0;
}
