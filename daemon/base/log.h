// log.h: leveled logging to stderr (or a file in its place), safe from any thread.
#ifndef PD_LOG_H
#define PD_LOG_H

enum { LOG_ERROR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

void log_set_level(int level);
int log_level(void);
int log_parse_level(const char *s);   // -1 if unknown
// Log to `path` (appending) from now on instead of stderr, and again after log_reopen (SIGHUP,
// after logrotate moved the file). The file takes stderr's place, so what any library writes
// there lands in it too. 0 ok, -1 with errno.
int log_open(const char *path);
int log_reopen(void);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
