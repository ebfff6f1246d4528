// log.c: one line per message, "partitad 2026-01-01T12:00:00.123Z warn: text".
#include "log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static atomic_int current = LOG_INFO;
static const char *const names[] = {"error", "warn", "info", "debug"};

void log_set_level(int level) { atomic_store(&current, level); }
int log_level(void) { return atomic_load(&current); }

int log_parse_level(const char *s) {
  for (int i = 0; i < 4; i++)
    if (strcmp(s, names[i]) == 0)
      return i;
  if (strcmp(s, "warning") == 0)
    return LOG_WARN;
  return -1;
}

void log_msg(int level, const char *fmt, ...) {
  if (level > atomic_load(&current))
    return;
  char line[1024], stamp[32];
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  // one fprintf per line keeps lines from different threads whole
  fprintf(stderr, "partitad %s.%03ldZ %s: %s\n", stamp, ts.tv_nsec / 1000000L, names[level], line);
}
