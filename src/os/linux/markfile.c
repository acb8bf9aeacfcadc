/*
 * markfile.c - the OS side of the durable mark file (src/mark/markfile.h):
 * open or create it as state files are vetted, lock it, allocate it, read
 * it, write one slot and sync it.
 */
#include "mark/markfile.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static const char WHAT[] = "mark file";

static long fail_write_at; /* test hook: countdown to a failed write, 0 = none */
static int fail_write_errno;

void idm__mark_fail_write_at(long nth, int e)
{
    fail_write_at = nth;
    fail_write_errno = e;
}

static int flock_retry(int fd, int op)
{
    int rc;
    do {
        rc = flock(fd, op);
    } while (rc != 0 && errno == EINTR);
    return rc;
}

int idm__os_mark_open(const char *path, bool exclusive, int *fd_out, bool *fresh, bool *busy,
                      idm_error *err)
{
    int fd = -1;
    if (busy != NULL)
        *busy = false;
    int rc = idm__os_open_vetted(WHAT, path, &fd, err);
    if (rc != IDM_OK)
        return rc;
    if (flock_retry(fd, exclusive ? LOCK_EX | LOCK_NB : LOCK_EX) != 0) {
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK && busy != NULL)
            *busy = true;
        if (e == EWOULDBLOCK)
            return idm__fail(err, IDM_ESTATE, 0,
                             "mark file %s is in use by another process; give each its own "
                             "mark file",
                             path);
        return idm__fail(err, IDM_ESTATE, 0, "cannot lock mark file %s: %s", path, strerror(e));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return idm__fail(err, IDM_ESTATE, 0, "cannot stat mark file %s: %s", path, strerror(e));
    }
    *fresh = st.st_size == 0;
    if (*fresh) {
        /* Its blocks now, so a rewrite in place never needs one; then the
         * file and its directory entry on disk before it counts. */
        int e;
        do {
            e = posix_fallocate(fd, 0, IDM_MARK_FILE_BYTES);
        } while (e == EINTR);
        if (e != 0 || idm__os_fsync(fd) != 0) {
            if (e == 0)
                e = errno;
            if (ftruncate(fd, 0) != 0) {
                /* left empty if it can be: new to the next opener */
            }
            close(fd);
            if (e == ENOSPC || e == EDQUOT)
                return idm__fail(err, IDM_ESTATE, 0, "no space left for mark file %s: %s", path,
                                 strerror(e));
            return idm__fail(err, IDM_ESTATE, 0, "cannot allocate mark file %s: %s", path,
                             strerror(e));
        }
        rc = idm__os_sync_dir(WHAT, path, err);
        if (rc != IDM_OK) {
            close(fd);
            return rc;
        }
    }
    *fd_out = fd;
    return IDM_OK;
}

bool idm__os_mark_at(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

int idm__os_mark_sync_dir(const char *path, idm_error *err)
{
    return idm__os_sync_dir(WHAT, path, err);
}

int idm__os_mark_lock(int fd, const char *path, idm_error *err)
{
    if (flock_retry(fd, LOCK_EX) != 0)
        return idm__fail(err, IDM_ESTATE, 0, "cannot lock mark file %s: %s", path, strerror(errno));
    return IDM_OK;
}

void idm__os_mark_unlock(int fd)
{
    flock(fd, LOCK_UN);
}

int idm__os_mark_read(int fd, const char *path, uint8_t *buf, size_t *len, idm_error *err)
{
    size_t got = 0;
    while (got < IDM_MARK_FILE_BYTES) {
        ssize_t r = pread(fd, buf + got, IDM_MARK_FILE_BYTES - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return idm__fail(err, IDM_ESTATE, 0, "cannot read mark file %s: %s", path,
                             strerror(errno));
        if (r == 0)
            break;
        got += (size_t)r;
    }
    *len = got;
    return IDM_OK;
}

int idm__os_mark_write(int fd, const char *path, unsigned slot,
                       const uint8_t bytes[IDM_MARK_SLOT_BYTES], idm_error *err)
{
    if (fail_write_at > 0 && --fail_write_at == 0) {
        errno = fail_write_errno;
        return idm__fail(err, IDM_ESTATE, 0, "cannot write mark file %s: %s", path,
                         strerror(fail_write_errno));
    }
    off_t off = (off_t)slot * IDM_MARK_SLOT_STRIDE;
    ssize_t n;
    do {
        n = pwrite(fd, bytes, IDM_MARK_SLOT_BYTES, off);
    } while (n < 0 && errno == EINTR);
    if (n != IDM_MARK_SLOT_BYTES)
        return idm__fail(err, IDM_ESTATE, 0, "cannot write mark file %s: %s", path,
                         n < 0 ? strerror(errno) : "a short write");
    int rc;
    do {
        rc = fdatasync(fd);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0 && errno != EINVAL)
        return idm__fail(err, IDM_ESTATE, 0, "cannot sync mark file %s to disk: %s", path,
                         strerror(errno));
    return IDM_OK;
}

void idm__os_mark_close(int fd)
{
    if (fd >= 0)
        close(fd);
}
