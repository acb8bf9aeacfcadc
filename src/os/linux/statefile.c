/*
 * statefile.c - the OS side of host-wide state files: open or create,
 * lock while the header is checked, size, map shared.
 *
 * The flock is held only while a header is created or checked. Minting
 * never takes it: state in the mapping advances by compare-and-swap. The
 * kernel releases the flock of a process that dies, so no crash leaves the
 * file locked.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int idm__os_state_open(const char *path, int *fd_out, uint64_t *size, idm_error *err)
{
    int fd;
    do {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return idm__fail(err, IDM_ESTATE, 0, "cannot open state file %s: %s", path, strerror(errno));
    int rc;
    do {
        rc = flock(fd, LOCK_EX);
    } while (rc != 0 && errno == EINTR);
    struct stat st;
    if (rc != 0 || fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return idm__fail(err, IDM_ESTATE, 0, "cannot lock state file %s: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return idm__fail(err, IDM_ESTATE, 0, "state file %s is not a regular file", path);
    }
    *fd_out = fd;
    *size = (uint64_t)st.st_size;
    return IDM_OK;
}

int idm__os_state_extend(int fd, uint64_t size, idm_error *err)
{
    int rc;
    do {
        rc = ftruncate(fd, (off_t)size);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0)
        return idm__fail(err, IDM_ESTATE, 0, "cannot size the state file: %s", strerror(errno));
    return IDM_OK;
}

int idm__os_state_map(int fd, size_t size, void **base, idm_error *err)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return idm__fail(err, IDM_ESTATE, 0, "cannot map the state file: %s", strerror(errno));
    *base = p;
    return IDM_OK;
}

void idm__os_state_unlock_close(int fd)
{
    flock(fd, LOCK_UN);
    close(fd);
}

void idm__os_state_unmap(void *base, size_t size)
{
    if (base != NULL)
        munmap(base, size);
}
