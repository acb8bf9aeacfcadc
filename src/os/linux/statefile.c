/*
 * statefile.c - the OS side of host-wide state files: open or create,
 * refusing what another user could have planted or could change; lock
 * while the header is checked; allocate the blocks; map shared; make a new
 * file durable; notice a truncation.
 *
 * The flock is held only while a header is created or checked. Minting
 * never takes it: state in the mapping advances by compare-and-swap. The
 * kernel releases the flock of a process that dies, so no crash leaves the
 * file locked. The descriptor stays open (O_CLOEXEC) for the map's life so
 * that a truncation can be noticed with one fstat.
 *
 * Left out: checking the directories above the file. O_NOFOLLOW covers
 * the last component only, and in a directory that others may write
 * (/dev/shm, /tmp) they can still remove or replace the file between runs;
 * hence the docs' advice of a private directory.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail_open(const char *what, const char *path, int e, idm_error *err)
{
    struct stat st;
    if (e == ELOOP && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
        return idm__fail(err, IDM_ESTATE, 0, "%s %s is a symbolic link; refusing to follow it",
                         what, path);
    if (e == EISDIR)
        return idm__fail(err, IDM_ESTATE, 0, "%s %s is a directory, not a regular file", what,
                         path);
    if (e == ENOSPC || e == EDQUOT)
        return idm__fail(err, IDM_ESTATE, 0, "no space left for %s %s: %s", what, path,
                         strerror(e));
    return idm__fail(err, IDM_ESTATE, 0, "cannot open %s %s: %s", what, path, strerror(e));
}

static const char *file_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    return "of unknown type";
}

/* A file that another user planted, or may change, could reset the
 * host's sequence: only a regular file of this user that neither its
 * group nor others may write is used. */
static int vet(const char *what, const char *path, const struct stat *st, idm_error *err)
{
    unsigned mode = (unsigned)(st->st_mode & 07777);
    if (!S_ISREG(st->st_mode))
        return idm__fail(err, IDM_ESTATE, 0, "%s %s is not a regular file (%s)", what, path,
                         file_kind(st->st_mode));
    if (st->st_uid != geteuid())
        return idm__fail(err, IDM_ESTATE, 0, "%s %s belongs to uid %u, not to this user (uid %u)",
                         what, path, (unsigned)st->st_uid, (unsigned)geteuid());
    if (st->st_mode & S_IWOTH)
        return idm__fail(err, IDM_ESTATE, 0,
                         "%s %s is writable by other users (mode %04o); chmod 600 it", what, path,
                         mode);
    if (st->st_mode & S_IWGRP)
        return idm__fail(err, IDM_ESTATE, 0,
                         "%s %s is writable by its group (mode %04o); chmod 600 it", what, path,
                         mode);
    return IDM_OK;
}

int idm__os_open_vetted(const char *what, const char *path, int *fd_out, idm_error *err)
{
    /* O_NONBLOCK and O_NOCTTY: a FIFO or a terminal at path must not
     * block the open or become the controlling terminal before vet()
     * refuses it. */
    int fd;
    do {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0600);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return fail_open(what, path, errno, err);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return idm__fail(err, IDM_ESTATE, 0, "cannot stat %s %s: %s", what, path, strerror(e));
    }
    int rc = vet(what, path, &st, err);
    if (rc != IDM_OK) {
        close(fd);
        return rc;
    }
    *fd_out = fd;
    return IDM_OK;
}

int idm__os_state_open(const char *path, int *fd_out, uint64_t *size, uint64_t *dev, uint64_t *ino,
                       idm_error *err)
{
    int fd = -1;
    int rc = idm__os_open_vetted("state file", path, &fd, err);
    if (rc != IDM_OK)
        return rc;
    struct stat st;
    do {
        rc = flock(fd, LOCK_EX);
    } while (rc != 0 && errno == EINTR);
    /* The size only counts under the lock: another opener may have been
     * creating the file meanwhile. */
    if (rc != 0 || fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return idm__fail(err, IDM_ESTATE, 0, "cannot lock state file %s: %s", path, strerror(e));
    }
    *fd_out = fd;
    *size = st.st_size < 0 ? 0 : (uint64_t)st.st_size;
    *dev = (uint64_t)st.st_dev;
    *ino = (uint64_t)st.st_ino;
    return IDM_OK;
}

int idm__os_state_allocate(int fd, const char *path, uint64_t size, bool fresh, idm_error *err)
{
    /* posix_fallocate returns the error rather than setting errno. */
    int e;
    do {
        e = posix_fallocate(fd, 0, (off_t)size);
    } while (e == EINTR);
    if (e == 0)
        return IDM_OK;
    if (fresh) {
        /* Leave the file empty, hence new to the next opener, rather than
         * partly sized (which it would refuse as not a state file). */
        int rc;
        do {
            rc = ftruncate(fd, 0);
        } while (rc != 0 && errno == EINTR);
    }
    if (e == ENOSPC || e == EDQUOT)
        return idm__fail(err, IDM_ESTATE, 0, "no space left for state file %s: %s", path,
                         strerror(e));
    return idm__fail(err, IDM_ESTATE, 0, "cannot allocate state file %s: %s", path, strerror(e));
}

int idm__os_state_map(int fd, size_t size, void **base, idm_error *err)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return idm__fail(err, IDM_ESTATE, 0, "cannot map the state file: %s", strerror(errno));
    *base = p;
    return IDM_OK;
}

int idm__os_fsync(int fd)
{
    int rc;
    do {
        rc = fsync(fd);
    } while (rc != 0 && errno == EINTR);
    /* EINVAL: a file system that has no use for syncing (it keeps nothing). */
    return rc != 0 && errno != EINVAL ? -1 : 0;
}

int idm__os_state_sync(int fd, const char *path, void *base, size_t size, idm_error *err)
{
    if (msync(base, size, MS_SYNC) != 0 || idm__os_fsync(fd) != 0)
        return idm__fail(err, IDM_ESTATE, 0, "cannot write state file %s to disk: %s", path,
                         strerror(errno));
    return idm__os_sync_dir("state file", path, err);
}

int idm__os_sync_dir(const char *what, const char *path, idm_error *err)
{
    /* The new directory entry too, or a power loss can drop the file. */
    char dir[4096];
    const char *slash = strrchr(path, '/');
    size_t len = slash == NULL ? 0 : slash == path ? 1 : (size_t)(slash - path);
    if (len >= sizeof dir)
        return idm__fail(err, IDM_ESTATE, 0, "the directory of %s %s is too long a path", what,
                         path);
    if (len == 0) {
        dir[0] = '.';
        len = 1;
    } else {
        memcpy(dir, path, len);
    }
    dir[len] = '\0';
    int dfd;
    do {
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    } while (dfd < 0 && errno == EINTR);
    int rc = dfd < 0 ? -1 : idm__os_fsync(dfd);
    int e = errno;
    if (dfd >= 0)
        close(dfd);
    if (rc != 0)
        return idm__fail(err, IDM_ESTATE, 0, "cannot write the directory of %s %s to disk: %s",
                         what, path, strerror(e));
    return IDM_OK;
}

int idm__os_state_size(int fd, uint64_t dev, uint64_t ino, uint64_t *size, idm_error *err)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return idm__fail(err, IDM_ESTATE, 0, "cannot check the state file (descriptor %d): %s", fd,
                         strerror(errno));
    if ((uint64_t)st.st_dev != dev || (uint64_t)st.st_ino != ino)
        return idm__fail(err, IDM_ESTATE, 0,
                         "descriptor %d no longer refers to the state file (did the program close "
                         "it?); create the generator again",
                         fd);
    *size = st.st_size < 0 ? 0 : (uint64_t)st.st_size;
    return IDM_OK;
}

void idm__os_state_unlock(int fd)
{
    flock(fd, LOCK_UN);
}

void idm__os_state_close(int fd)
{
    if (fd >= 0)
        close(fd);
}

void idm__os_state_unmap(void *base, size_t size)
{
    if (base != NULL)
        munmap(base, size);
}

int idm__os_make_dir(const char *what, const char *path, bool *made, idm_error *err)
{
    *made = false;
    if (mkdir(path, 0700) == 0) {
        *made = true;
        return idm__os_sync_dir(what, path, err);
    }
    int e = errno;
    struct stat st;
    if (e == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return IDM_OK;
    if (e == EEXIST)
        return idm__fail(err, IDM_ESTATE, 0, "%s %s exists and is not a directory", what, path);
    return idm__fail(err, IDM_ESTATE, 0, "cannot create %s %s: %s", what, path, strerror(e));
}

size_t idm__os_boot_id(char *buf, size_t cap)
{
    int fd;
    do {
        fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0 || cap == 0)
        return 0;
    ssize_t n = read(fd, buf, cap);
    close(fd);
    return n > 0 ? (size_t)n : 0;
}

bool idm__os_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}
