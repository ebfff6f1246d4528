// json.c: the output writers of the command line: a small streaming JSON writer and CSV field
// quoting.
//
// Output is written as it is produced (a long simulation streams its rows), so the writer
// only tracks, per open container, how many values it already holds to place the commas.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

void cli_json_init(cli_json *j, FILE *out) {
  j->out = out;
  j->depth = 0;
  j->after_key = 0;
  j->overflow = 0;
  j->newline = 0;
  for (int i = 0; i < CLI_JSON_MAXDEPTH; i++) {
    j->count[i] = 0;
  }
}

void cli_json_write_string(FILE *out, const char *s) {
  static const char hex[] = "0123456789abcdef";
  fputc('"', out);
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    switch (*c) {
      case '"':  fputs("\\\"", out); break;
      case '\\': fputs("\\\\", out); break;
      case '\n': fputs("\\n", out); break;
      case '\r': fputs("\\r", out); break;
      case '\t': fputs("\\t", out); break;
      case '\b': fputs("\\b", out); break;
      case '\f': fputs("\\f", out); break;
      default:
        // Other control characters must be escaped; bytes >= 0x80 are UTF-8 and pass through
        // (the model loaders only accept valid UTF-8 text).
        if (*c < 0x20 || *c == 0x7f) {
          fprintf(out, "\\u00%c%c", hex[*c >> 4], hex[*c & 15]);
        } else {
          fputc(*c, out);
        }
    }
  }
  fputc('"', out);
}

// Comma before every value but the first of its container (a value after a key has had its
// comma placed before the key).
static void before_value(cli_json *j) {
  if (j->after_key) {
    j->after_key = 0;
    return;
  }
  if (j->depth > 0 && j->depth <= CLI_JSON_MAXDEPTH) {
    if (j->count[j->depth - 1]++ > 0) {
      fputc(',', j->out);
    }
  }
  if (j->newline) {
    fputc('\n', j->out);
    j->newline = 0;
  }
}

static void begin(cli_json *j, char open) {
  before_value(j);
  fputc(open, j->out);
  if (j->depth < CLI_JSON_MAXDEPTH) {
    j->count[j->depth] = 0;
  } else {
    j->overflow = 1;
  }
  j->depth++;
}

static void end(cli_json *j, char close) {
  if (j->newline) {
    fputc('\n', j->out);
    j->newline = 0;
  }
  fputc(close, j->out);
  if (j->depth > 0) {
    j->depth--;
  } else {
    j->overflow = 1;
  }
}

void cli_json_begin_object(cli_json *j) { begin(j, '{'); }
void cli_json_end_object(cli_json *j) { end(j, '}'); }
void cli_json_begin_array(cli_json *j) { begin(j, '['); }
void cli_json_end_array(cli_json *j) { end(j, ']'); }

void cli_json_key(cli_json *j, const char *key) {
  before_value(j);
  cli_json_write_string(j->out, key);
  fputc(':', j->out);
  j->after_key = 1;
}

void cli_json_string(cli_json *j, const char *s) {
  if (!s) {
    cli_json_null(j);
    return;
  }
  before_value(j);
  cli_json_write_string(j->out, s);
}

void cli_json_number(cli_json *j, double v) {
  if (!isfinite(v)) {
    cli_json_null(j);   // JSON has no NaN or infinity
    return;
  }
  before_value(j);
  fprintf(j->out, "%.17g", v);
}

void cli_json_int(cli_json *j, long long v) {
  before_value(j);
  fprintf(j->out, "%lld", v);
}

void cli_json_bool(cli_json *j, int v) {
  before_value(j);
  fputs(v ? "true" : "false", j->out);
}

void cli_json_null(cli_json *j) {
  before_value(j);
  fputs("null", j->out);
}

void cli_json_newline(cli_json *j) { j->newline = 1; }

int cli_json_finish(cli_json *j) {
  fputc('\n', j->out);
  return (j->depth == 0 && !j->overflow && !j->after_key) ? 0 : -1;
}

void cli_json_member_number(cli_json *j, const char *key, double v) {
  cli_json_key(j, key);
  cli_json_number(j, v);
}

void cli_json_member_int(cli_json *j, const char *key, long long v) {
  cli_json_key(j, key);
  cli_json_int(j, v);
}

void cli_json_member_string(cli_json *j, const char *key, const char *s) {
  cli_json_key(j, key);
  cli_json_string(j, s);
}

void cli_csv_field(FILE *out, const char *s) {
  if (strpbrk(s, ",\"\r\n") == NULL) {
    fputs(s, out);
    return;
  }
  fputc('"', out);
  for (const char *c = s; *c; c++) {
    if (*c == '"') {
      fputc('"', out);   // a quote inside a quoted field is doubled
    }
    fputc(*c, out);
  }
  fputc('"', out);
}
