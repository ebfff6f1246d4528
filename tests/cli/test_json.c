// test_json.c: the command line's JSON writer and CSV quoting (client/cli/json.c).
//
// Expected texts are written out by hand from RFC 8259 / RFC 4180; numbers are checked by
// parsing the output back with strtod and comparing the bits.
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static int failures = 0;

#define CHECK(cond, ...)                                    \
  do {                                                      \
    if (!(cond)) {                                          \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);       \
      fprintf(stderr, __VA_ARGS__);                         \
      fputc('\n', stderr);                                  \
      failures++;                                           \
    }                                                       \
  } while (0)

// A memory stream the writer can print into; take() closes it and returns the text.
typedef struct {
  char *buf;
  size_t len;
  FILE *f;
} sink;

static FILE *sink_open(sink *s) {
  s->buf = NULL;
  s->len = 0;
  s->f = open_memstream(&s->buf, &s->len);
  if (!s->f) {
    perror("open_memstream");
    exit(1);
  }
  return s->f;
}

static char *sink_take(sink *s) {
  fclose(s->f);
  return s->buf;
}

static void test_structure(void) {
  sink s;
  cli_json j;
  cli_json_init(&j, sink_open(&s));
  cli_json_begin_object(&j);
  cli_json_key(&j, "a");
  cli_json_int(&j, -12);
  cli_json_key(&j, "b");
  cli_json_begin_array(&j);
  cli_json_bool(&j, 1);
  cli_json_bool(&j, 0);
  cli_json_null(&j);
  cli_json_string(&j, "x");
  cli_json_string(&j, NULL);
  cli_json_end_array(&j);
  cli_json_key(&j, "c");
  cli_json_begin_object(&j);
  cli_json_end_object(&j);
  cli_json_key(&j, "d");
  cli_json_begin_array(&j);
  cli_json_begin_array(&j);
  cli_json_end_array(&j);
  cli_json_begin_array(&j);
  cli_json_number(&j, 2.5);
  cli_json_end_array(&j);
  cli_json_end_array(&j);
  cli_json_end_object(&j);
  int rc = cli_json_finish(&j);
  char *text = sink_take(&s);
  const char *want = "{\"a\":-12,\"b\":[true,false,null,\"x\",null],\"c\":{},\"d\":[[],[2.5]]}\n";
  CHECK(rc == 0, "finish of a balanced document returned %d", rc);
  CHECK(strcmp(text, want) == 0, "structure:\n got  %s want %s", text, want);
  free(text);
}

static void test_escapes(void) {
  sink s;
  cli_json j;
  cli_json_init(&j, sink_open(&s));
  cli_json_begin_array(&j);
  cli_json_string(&j, "q\"b\\s/n\nr\rt\tb\bf\f");
  cli_json_string(&j, "\x01\x1f\x7f");
  cli_json_string(&j, "caf\xc3\xa9");   // UTF-8 passes through
  cli_json_string(&j, "");
  cli_json_end_array(&j);
  cli_json_finish(&j);
  char *text = sink_take(&s);
  const char *want = "[\"q\\\"b\\\\s/n\\nr\\rt\\tb\\bf\\f\",\"\\u0001\\u001f\\u007f\","
                     "\"caf\xc3\xa9\",\"\"]\n";
  CHECK(strcmp(text, want) == 0, "escapes:\n got  %s want %s", text, want);
  free(text);
}

static void test_numbers(void) {
  const double values[] = {0.0, -0.0, 0.1, 1.0 / 3.0, -2.0 / 7.0, 5e-324, DBL_MIN, DBL_MAX,
                           1e21, 123456789012345678.0, 9.81, -1e-300, 0.30000000000000004};
  const int n = (int)(sizeof(values) / sizeof(values[0]));
  for (int i = 0; i < n; i++) {
    sink s;
    cli_json j;
    cli_json_init(&j, sink_open(&s));
    cli_json_number(&j, values[i]);
    cli_json_finish(&j);
    char *text = sink_take(&s);
    char *end = NULL;
    double back = strtod(text, &end);
    CHECK(end && *end == '\n', "number %d: '%s' is not one number", i, text);
    CHECK(memcmp(&back, &values[i], sizeof(double)) == 0,
          "number %d: %a printed as '%s' reads back as %a", i, values[i], text, back);
    // JSON numbers: no leading '+', no "inf"/"nan", no bare '.'
    CHECK(strspn(text, "-0123456789.e+\n") == strlen(text), "number %d: '%s'", i, text);
    free(text);
  }
  sink s;
  cli_json j;
  cli_json_init(&j, sink_open(&s));
  cli_json_begin_array(&j);
  cli_json_number(&j, NAN);
  cli_json_number(&j, INFINITY);
  cli_json_number(&j, -INFINITY);
  cli_json_end_array(&j);
  cli_json_finish(&j);
  char *text = sink_take(&s);
  CHECK(strcmp(text, "[null,null,null]\n") == 0, "non-finite: got %s", text);
  free(text);
}

static void test_newline(void) {
  sink s;
  cli_json j;
  cli_json_init(&j, sink_open(&s));
  cli_json_begin_array(&j);
  for (int i = 0; i < 3; i++) {
    cli_json_newline(&j);
    cli_json_begin_array(&j);
    cli_json_int(&j, i);
    cli_json_end_array(&j);
  }
  cli_json_newline(&j);
  cli_json_end_array(&j);
  cli_json_finish(&j);
  char *text = sink_take(&s);
  const char *want = "[\n[0],\n[1],\n[2]\n]\n";
  CHECK(strcmp(text, want) == 0, "newlines:\n got  %s want %s", text, want);
  free(text);
}

static void test_unbalanced(void) {
  sink s;
  cli_json j;
  cli_json_init(&j, sink_open(&s));
  cli_json_begin_object(&j);
  cli_json_key(&j, "open");
  cli_json_begin_array(&j);
  int rc = cli_json_finish(&j);
  free(sink_take(&s));
  CHECK(rc == -1, "finish of an unclosed document returned %d", rc);

  cli_json_init(&j, sink_open(&s));
  for (int i = 0; i < CLI_JSON_MAXDEPTH + 3; i++) {
    cli_json_begin_array(&j);
  }
  for (int i = 0; i < CLI_JSON_MAXDEPTH + 3; i++) {
    cli_json_end_array(&j);
  }
  rc = cli_json_finish(&j);
  free(sink_take(&s));
  CHECK(rc == -1, "finish after nesting deeper than the limit returned %d", rc);
}

static void test_csv(void) {
  static const char *const cases[][2] = {
    {"hinge", "hinge"},
    {"cyl.angle", "cyl.angle"},
    {"a,b", "\"a,b\""},
    {"say \"hi\"", "\"say \"\"hi\"\"\""},
    {"two\nlines", "\"two\nlines\""},
    {"", ""},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    sink s;
    cli_csv_field(sink_open(&s), cases[i][0]);
    char *text = sink_take(&s);
    CHECK(strcmp(text, cases[i][1]) == 0, "csv field %zu: got [%s] want [%s]", i, text,
          cases[i][1]);
    free(text);
  }
}

int main(void) {
  test_structure();
  test_escapes();
  test_numbers();
  test_newline();
  test_unbalanced();
  test_csv();
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("json writer: all checks passed\n");
  return 0;
}
