// log.c: one line per message, "partitad 2026-01-01T12:00:00.123Z warn: text".
#include "base/log.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_int current = LOG_INFO;
static const char *const names[] = {"error", "warn", "info", "debug"};

static char log_path[4096];

void log_set_level(int level) { atomic_store(&current, level); }

// The file replaces fd 2 with dup2, which is atomic: a thread writing a line meanwhile writes
// it whole to the old file or to the new one.
int log_open(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd < 0)
    return -1;
  int rc = dup2(fd, STDERR_FILENO);
  close(fd);
  if (rc < 0)
    return -1;
  if (path != log_path)
    snprintf(log_path, sizeof(log_path), "%s", path);
  return 0;
}

int log_reopen(void) { return log_path[0] ? log_open(log_path) : 0; }
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
