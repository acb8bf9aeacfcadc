/*
 * log.c - one line per event, with a UTC timestamp and a level (or, on
 * journald's stream, a syslog priority prefix such as <4>), to stderr
 * or a file that SIGHUP reopens (for logrotate's copy-free rotation).
 */
#include "log.h"

#include <fcntl.h>
#include <idmint/rfc3339.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int log_fd = 2;
static int log_level = IDMS_LOG_INFO;
static char log_path[1024];
/* stderr is journald's stream ($JOURNAL_STREAM names its device and
 * inode): each line starts with its syslog priority, <3> to <7>, and no
 * time stamp (the journal keeps its own). */
static bool log_journal;

static const char *const level_names[] = {"error", "warn", "info", "debug"};
static const char level_prio[] = {'3', '4', '6', '7'};

/* Whether fd is the stream $JOURNAL_STREAM ("DEV:INODE") names. */
static bool is_journal(int fd)
{
    const char *v = getenv("JOURNAL_STREAM");
    unsigned long dev, ino;
    char end;
    if (v == NULL || sscanf(v, "%lu:%lu%c", &dev, &ino, &end) != 2)
        return false;
    struct stat st;
    return fstat(fd, &st) == 0 && (unsigned long)st.st_dev == dev &&
           (unsigned long)st.st_ino == ino;
}

int idms_log_level_from_name(const char *name)
{
    for (int i = 0; i < 4; i++) {
        if (strcmp(name, level_names[i]) == 0)
            return i;
    }
    return -1;
}

int idms_log_open(const char *path, int level)
{
    log_level = level;
    log_journal = false;
    if (path == NULL || path[0] == '\0') {
        log_fd = 2;
        log_path[0] = '\0';
        log_journal = is_journal(2);
        return 0;
    }
    snprintf(log_path, sizeof log_path, "%s", path);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    if (fd < 0)
        return -1;
    log_fd = fd;
    return 0;
}

int idms_log_reopen(void)
{
    if (log_path[0] == '\0')
        return 0;
    int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    if (fd < 0)
        return -1;
    int old = log_fd;
    log_fd = fd;
    if (old > 2)
        close(old);
    return 0;
}

void idms_log(int level, const char *fmt, ...)
{
    if (level > log_level)
        return;
    char line[1024];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char stamp[IDM_RFC3339_CAP];
    if (idm_time_format((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, stamp, sizeof stamp) !=
        IDM_OK)
        stamp[0] = '\0';
    int n = log_journal ? snprintf(line, sizeof line, "<%c>idmintd %s: ", level_prio[level],
                                   level_names[level])
                        : snprintf(line, sizeof line, "%s idmintd %s: ", stamp, level_names[level]);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    /* One line per event, whatever a message carries (a peer's text). */
    for (size_t i = (size_t)n; i < len; i++)
        if (line[i] == '\n' || line[i] == '\r')
            line[i] = ' ';
    line[len++] = '\n';
    /* One write per line: lines from a single process never interleave. */
    ssize_t w = write(log_fd, line, len);
    (void)w;
}
