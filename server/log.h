/*
 * log.h - idmintd's log: levels, a file or stderr, reopened on SIGHUP
 * (log.c). Not installed.
 */
#ifndef IDMS_LOG_H
#define IDMS_LOG_H

enum { IDMS_LOG_ERROR = 0, IDMS_LOG_WARN = 1, IDMS_LOG_INFO = 2, IDMS_LOG_DEBUG = 3 };
int idms_log_open(const char *path, int level); /* NULL path: stderr */
int idms_log_reopen(void);                       /* SIGHUP */
void idms_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int idms_log_level_from_name(const char *name);

#endif
