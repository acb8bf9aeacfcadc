/*
 * tmpfiles.h - a test program's own temporary directory (made on first
 * use under /tmp, removed at exit) and the mark a mark file holds, for the
 * tests of files (test_mark.c, test_sfhost.c).
 */
#ifndef IDM_TMPFILES_H
#define IDM_TMPFILES_H

#include <idmint/idmint.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char test_tmpdir_[64];

static void test_tmpdir_remove_(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", test_tmpdir_);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", test_tmpdir_);
}

/* DIR/name in the program's directory (idm-test-PREFIX.XXXXXX), made and
 * registered for removal at the first call. The result lives until the
 * next call. */
static inline const char *test_tmp_path(const char *prefix, const char *name)
{
    static char path[128];
    if (test_tmpdir_[0] == '\0') {
        snprintf(test_tmpdir_, sizeof test_tmpdir_, "/tmp/idm-test-%s.XXXXXX", prefix);
        if (mkdtemp(test_tmpdir_) == NULL) {
            perror("mkdtemp");
            exit(2);
        }
        atexit(test_tmpdir_remove_);
    }
    snprintf(path, sizeof path, "%s/%s", test_tmpdir_, name);
    return path;
}

/* The mark in the mark file at path (idm_mark_decode), or -1 when the file
 * cannot be read or holds no valid slot. */
static inline int64_t test_file_mark(const char *path)
{
    uint8_t buf[IDM_MARK_FILE_BYTES * 2];
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    int64_t mark = -1;
    if (n < 0 || idm_mark_decode(buf, (size_t)n, &mark, NULL, NULL, NULL) != IDM_OK)
        return -1;
    return mark;
}

#endif
