// json.h: the output writers of the command line (json.c): a streaming JSON writer and CSV
// fields. Writes compact JSON as the calls come; commas and nesting are tracked here, so
// callers just say what comes next. Strings are escaped; numbers use "%.17g" (round-trips a
// double exactly); non-finite numbers become null.
#ifndef PARTITA_CLI_JSON_H
#define PARTITA_CLI_JSON_H

#include <stdio.h>

#define CLI_JSON_MAXDEPTH 32

typedef struct {
  FILE *out;
  int depth;                          // open containers
  int count[CLI_JSON_MAXDEPTH];       // values written in each open container
  int after_key;                      // a key was just written: the value needs no comma
  int overflow;                       // nesting deeper than CLI_JSON_MAXDEPTH (a bug)
  int newline;                        // start the next value on a new line
} cli_json;

void cli_json_init(cli_json *j, FILE *out);
void cli_json_begin_object(cli_json *j);
void cli_json_end_object(cli_json *j);
void cli_json_begin_array(cli_json *j);
void cli_json_end_array(cli_json *j);
void cli_json_key(cli_json *j, const char *key);      // inside an object, before its value
void cli_json_string(cli_json *j, const char *s);     // NULL writes null
void cli_json_number(cli_json *j, double v);
void cli_json_int(cli_json *j, long long v);
void cli_json_bool(cli_json *j, int v);
void cli_json_null(cli_json *j);
// The next value starts on a new line (after its comma): long arrays read a row per line.
void cli_json_newline(cli_json *j);
// Ends the document with a newline. Returns 0, or -1 if the nesting was unbalanced.
int cli_json_finish(cli_json *j);

// "key": value members, the bulk of every object the commands print.
void cli_json_member_number(cli_json *j, const char *key, double v);
void cli_json_member_int(cli_json *j, const char *key, long long v);
void cli_json_member_string(cli_json *j, const char *key, const char *s);

// Writes `s` as a quoted, escaped JSON string (no comma handling).
void cli_json_write_string(FILE *out, const char *s);

// Writes one CSV field, quoted (RFC 4180) only when it holds a comma, quote or line break.
void cli_csv_field(FILE *out, const char *s);

#endif
