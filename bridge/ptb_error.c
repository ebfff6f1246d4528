// ptb_error.c: filling a ptb_error (ptb_error.h).
#include "ptb_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ptb_error_clear(ptb_error *e) { memset(e, 0, sizeof(*e)); }

static void vset(ptb_error *e, int code, ptb_stage stage, const char *fmt, va_list ap) {
  e->code = code;
  e->stage = stage;
  vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
}

int ptb_fail(ptb_error *e, int code, ptb_stage stage, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vset(e, code, stage, fmt, ap);
  va_end(ap);
  return code;
}

int ptb_refuse(ptb_error *e, ptb_why why, const char *field, const char *name,
               const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vset(e, PT_EINVAL, PTB_AT_REQUEST, fmt, ap);
  va_end(ap);
  e->why = why;
  e->field = field;
  snprintf(e->name, sizeof(e->name), "%s", name ? name : "");
  return PT_EINVAL;
}

int ptb_engine_fail(ptb_error *e, int rc, ptb_stage stage, const pt_error *err,
                    const char *prefix) {
  e->engine = *err;
  return ptb_fail(e, rc, stage, "%s%.500s", prefix, err->msg[0] ? err->msg : pt_strerror(rc));
}
