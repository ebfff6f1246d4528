// load.c: model files to specs and models, the format chosen by extension or content.
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "mesh.h"
#include "mesh_read.h"

// Refuses a file beyond `max` bytes before reading it whole.
static int read_file(const char *path, size_t max, char **text, size_t *len, pt_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return pt_error_set(err, PT_EIO, "%s: cannot open: %s", path, strerror(errno));
  char *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n + 4096 + 1 > cap) {
      if (n > max) {
        free(buf);
        fclose(f);
        return pt_error_set(err, PT_EPARSE,
                            "%s:1: model: text larger than %zu bytes (max_text_bytes)", path, max);
      }
      cap = cap ? 2 * cap : 65536;
      char *nb = realloc(buf, cap);
      if (!nb) {
        free(buf);
        fclose(f);
        return pt_error_set(err, PT_ENOMEM, "%s: out of memory", path);
      }
      buf = nb;
    }
    size_t r = fread(buf + n, 1, cap - n - 1, f);
    n += r;
    if (r == 0) break;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return pt_error_set(err, PT_EIO, "%s: read error", path);
  }
  buf[n] = '\0';
  *text = buf;
  *len = n;
  return PT_OK;
}

// 2 = URDF, 1 = YAML: URDF when the first non-blank character is '<'.
static int sniff(const char *text, size_t len) {
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    return c == '<' ? 2 : 1;
  }
  return 1;
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int spec_from_text(const char *text, size_t len, int format, const char *source,
                          const pt_load_options *opt, pt_spec **out, pt_error *err) {
  if (format == 0) format = sniff(text, len);
  int rc = format == 2 ? pt_spec_from_urdf(text, len, source, opt, out, err)
                       : pt_spec_from_yaml_opt(text, len, source, opt, out, err);
  if (rc == PT_OK) pt_spec_resolve_meshes(*out, opt);
  if (rc == PT_OK && (rc = pt_spec_read_collision_meshes(*out, err)) != PT_OK) {
    pt_spec_free(*out);
    *out = NULL;
  }
  return rc;
}

// The spec of a model file; its text (malloc'd) in *text, its format in *format.
static int spec_from_file_text(const char *path, const pt_load_options *opt, pt_spec **out,
                               char **text, size_t *len, int *format, pt_error *err) {
  pt_load_options lim = pt_load_options_resolve(opt);
  *text = NULL;
  int rc = read_file(path, lim.max_text_bytes, text, len, err);
  if (rc) return rc;
  *format = sniff(*text, *len);
  if (ends_with(path, ".urdf") || ends_with(path, ".xml")) *format = 2;
  if (ends_with(path, ".yaml") || ends_with(path, ".yml")) *format = 1;
  return spec_from_text(*text, *len, *format, path, opt, out, err);
}

int pt_spec_from_file(const char *path, const pt_load_options *opt, pt_spec **out,
                      pt_error *err) {
  char *text;
  size_t len;
  int format;
  int rc = spec_from_file_text(path, opt, out, &text, &len, &format, err);
  free(text);
  return rc;
}

// The load options' simulation settings over the file's.
static int apply_options(pt_spec *s, const pt_load_options *opt, pt_error *err) {
  if (!opt) return PT_OK;
  if (opt->dt != 0) {
    if (!(opt->dt > 0 && opt->dt <= 1.0))
      return pt_error_set(err, PT_EINVAL, "load option dt: %g is not in (0, 1] s", opt->dt);
    s->dt = opt->dt;
  }
  if (opt->has_integrator) {
    if (opt->integrator < PT_INT_RK4 || opt->integrator > PT_INT_EULER)
      return pt_error_set(err, PT_EINVAL, "load option integrator: unknown (%d)",
                          opt->integrator);
    s->integrator = (pt_integrator)opt->integrator;
    s->has_integrator = 1;
  }
  if (opt->no_joint_limits) s->limits_off = 1;
  if (opt->ground_plane) {
    if (!isfinite(opt->ground_z))
      return pt_error_set(err, PT_EINVAL, "load option ground plane: z = %g is not finite",
                          opt->ground_z);
    pt_spec_visual *g = pt_spec_add_collision(s);
    if (!g) return pt_error_set(err, PT_ENOMEM, "out of memory");
    snprintf(g->body, sizeof(g->body), "ground");
    g->type = PT_VISUAL_PLANE;
    g->point[2] = opt->ground_z;
    g->normal[2] = 1;
    g->index = -1;   // not from the file
  }
  return PT_OK;
}

int pt_model_load_file_text(const char *path, const pt_load_options *opt, pt_model **out,
                            char **text, size_t *len, int *format, pt_error *err) {
  pt_spec *s = NULL;
  int rc = spec_from_file_text(path, opt, &s, text, len, format, err);
  if (rc == PT_OK) rc = apply_options(s, opt, err);
  if (rc == PT_OK) rc = pt_model_compile(s, out, err);
  pt_spec_free(s);
  if (rc) {
    free(*text);
    *text = NULL;
  }
  return rc;
}

int pt_model_load_file(const char *path, const pt_load_options *opt, pt_model **out,
                       pt_error *err) {
  char *text;
  size_t len;
  int format;
  int rc = pt_model_load_file_text(path, opt, out, &text, &len, &format, err);
  free(text);
  return rc;
}

int pt_model_load_string(const char *text, size_t len, int format, const char *source,
                         const pt_load_options *opt, pt_model **out, pt_error *err) {
  pt_spec *s = NULL;
  int rc = spec_from_text(text, len, format, source ? source : "<string>", opt, &s, err);
  if (rc) return rc;
  rc = apply_options(s, opt, err);
  if (rc == PT_OK) rc = pt_model_compile(s, out, err);
  pt_spec_free(s);
  return rc;
}
