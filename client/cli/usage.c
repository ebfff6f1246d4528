// usage.c: a command's usage text from its row of the table (usage.h).
#include "usage.h"

#include "link.h"

#define LINK_STR_(x) #x
#define LINK_STR(x) LINK_STR_(x)

void cli_usage(const cli_command *c, FILE *out) {
  fprintf(out, "usage: partita %s\n\n%s", c->synopsis, c->help);
  if (c->where == CLI_DAEMON) {
    fputs("\nTalks to a running partitad:\n"
          "  --connect HOST:PORT  TCP address (default " CLI_LINK_DEFAULT_CONNECT
          ", or $PARTITA_CONNECT)\n"
          "  --socket PATH        a Unix socket instead (default $PARTITA_SOCKET if set)\n"
          "  --timeout SECONDS    per request (default " LINK_STR(CLI_LINK_TIMEOUT_S) ")\n", out);
  } else if (c->where == CLI_BOTH) {
    fputs("\nWith MODEL the embedded engine does the work; with --model NAME a running\n"
          "partitad does (--connect HOST:PORT or --socket PATH).\n", out);
  }
}
