// error.c: the error vocabulary of partita.h (one X-macro table).
#include <stdarg.h>
#include <stdio.h>

#include "partita.h"

const char *pt_strerror(int code) {
  switch (code) {
#define PT_ERR_TEXT(name, c, text, status) \
  case c:                                  \
    return text;
    PT_ERRORS(PT_ERR_TEXT)
#undef PT_ERR_TEXT
  }
  return "unknown error";
}

const char *pt_status_name(int code) {
  switch (code) {
#define PT_ERR_STATUS(name, c, text, status) \
  case c:                                    \
    return status;
    PT_ERRORS(PT_ERR_STATUS)
#undef PT_ERR_STATUS
  }
  return "INTERNAL";
}

int pt_error_set(pt_error *err, int code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    err->code = code;
  }
  return code;
}
