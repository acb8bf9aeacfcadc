/*
 * local.c - the host-local registry of node numbers (idmint_coord.h).
 *
 * A slot is a file DIR/NS/node-N held with flock(LOCK_EX | LOCK_NB): the
 * lock belongs to the open file description, so it lasts as long as the
 * holder keeps the descriptor and goes when the holder closes it or dies
 * (kill -9 included); no stale-lock clean-up is ever needed, and a claim
 * never waits (a held slot is skipped). The file itself stays: it carries
 * the mark that the next holder must resume above.
 */
#include "idmint_coord.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static const char magic[8] = {'I', 'D', 'M', 'S', 'L', 'O', 'T', '1'};

struct idmc_slot {
    int fd;
    uint64_t node;
    int64_t mark_ms;
};

int idmc_local_default_dir(char *dst, size_t cap)
{
    const char *run = getenv("XDG_RUNTIME_DIR");
    int n;
    if (geteuid() == 0)
        n = snprintf(dst, cap, "/run/idmint/nodes");
    else if (run != NULL && run[0] == '/')
        n = snprintf(dst, cap, "%s/idmint/nodes", run);
    else
        n = snprintf(dst, cap, "/tmp/idmint-%u/nodes", (unsigned)geteuid());
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* A directory of ours: made (mode 0700) if missing; refused when it is a
 * symbolic link, not a directory, someone else's, or writable by others
 * (anyone who could replace a slot file could take a node). */
static int own_dir(const char *path, char *msg, size_t cap)
{
    if (mkdir(path, 0700) != 0 && errno != EEXIST) {
        snprintf(msg, cap, "cannot make the node registry %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(path, &st) != 0) {
        snprintf(msg, cap, "cannot use the node registry %s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) != 0) {
        snprintf(msg, cap,
                 "refusing the node registry %s: it must be a directory (not a symbolic link) owned "
                 "by this user and writable by no one else",
                 path);
        return -1;
    }
    return 0;
}

/* Makes dir and its parents as needed; only the last two levels (the
 * registry and the namespace) are held to own_dir's rules. */
static int make_dirs(const char *dir, const char *ns, char *nsdir, size_t nscap, char *msg,
                     size_t cap)
{
    char path[1024];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        snprintf(msg, cap, "the node registry path is too long");
        return -1;
    }
    for (char *p = path + 1; *p != '\0'; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        (void)mkdir(path, 0700); /* parents: whatever exists is fine */
        *p = '/';
    }
    if (own_dir(path, msg, cap) != 0)
        return -1;
    /* The namespace: the layout's name, '/' made harmless. */
    int n = snprintf(nsdir, nscap, "%s/", path);
    if (n < 0 || (size_t)n >= nscap)
        return -1;
    for (const char *q = ns; *q != '\0' && (size_t)n + 1 < nscap; q++)
        nsdir[n++] = *q == '/' ? '_' : *q;
    nsdir[n] = '\0';
    return own_dir(nsdir, msg, cap);
}

static void read_holder(int fd, char *dst, size_t cap)
{
    ssize_t r = pread(fd, dst, cap - 1, IDMC_HOLDER_AT);
    dst[r > 0 ? (size_t)r : 0] = '\0';
    dst[strcspn(dst, "\n")] = '\0';
    if (dst[0] == '\0')
        snprintf(dst, cap, "unknown");
}

static int64_t read_mark(int fd)
{
    char head[16];
    int64_t mark = 0;
    if (pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head && memcmp(head, magic, 8) == 0)
        memcpy(&mark, head + 8, sizeof mark);
    return mark > 0 ? mark : 0;
}

/* Opens the slot file of node, refusing anything but a regular file of
 * ours (no symbolic links). */
static int open_slot(const char *nsdir, uint64_t node, int flags)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/node-%" PRIu64, nsdir, node);
    int fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

/* Takes node's slot: 0 held (fd kept), IDMC_BUSY (holder line in msg), or
 * IDMC_ERROR. */
static int take(const char *nsdir, uint64_t node, const char *holder, idmc_slot *slot, char *msg,
                size_t cap)
{
    int fd = open_slot(nsdir, node, O_RDWR | O_CREAT);
    if (fd < 0) {
        snprintf(msg, cap, "cannot open the slot of node %" PRIu64 " in %s: %s", node, nsdir,
                 strerror(errno));
        return IDMC_ERROR;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        if (e == EWOULDBLOCK) {
            char who[256];
            read_holder(fd, who, sizeof who);
            snprintf(msg, cap, "node %" PRIu64 " is held by %s", node, who);
        } else {
            snprintf(msg, cap, "cannot lock the slot of node %" PRIu64 ": %s", node, strerror(e));
        }
        close(fd);
        return e == EWOULDBLOCK ? IDMC_BUSY : IDMC_ERROR;
    }
    int64_t mark = read_mark(fd);
    char buf[IDMC_SLOT_BYTES] = {0};
    memcpy(buf, magic, sizeof magic);
    memcpy(buf + 8, &mark, sizeof mark);
    snprintf(buf + IDMC_HOLDER_AT, sizeof buf - IDMC_HOLDER_AT, "%s\n", holder);
    if (pwrite(fd, buf, sizeof buf, 0) != (ssize_t)sizeof buf) {
        snprintf(msg, cap, "cannot write the slot of node %" PRIu64 ": %s", node, strerror(errno));
        close(fd);
        return IDMC_ERROR;
    }
    slot->fd = fd;
    slot->node = node;
    slot->mark_ms = mark;
    return 0;
}

int idmc_local_claim(const char *dir, const char *ns, uint64_t lo, uint64_t hi, const char *holder,
                     idmc_slot **out, char *msg, size_t cap)
{
    *out = NULL;
    char nsdir[1100];
    if (make_dirs(dir, ns, nsdir, sizeof nsdir, msg, cap) != 0)
        return IDMC_ERROR;
    idmc_slot *slot = calloc(1, sizeof *slot);
    if (slot == NULL) {
        snprintf(msg, cap, "out of memory");
        return IDMC_ERROR;
    }
    for (uint64_t node = lo;; node++) {
        int rc = take(nsdir, node, holder, slot, msg, cap);
        if (rc == 0) {
            *out = slot;
            return 0;
        }
        if (rc == IDMC_ERROR || node == hi) {
            if (rc == IDMC_BUSY && lo != hi)
                snprintf(msg, cap, "every node from %" PRIu64 " to %" PRIu64 " is held (%s)", lo,
                         hi, nsdir);
            free(slot);
            return rc;
        }
    }
}

uint64_t idmc_slot_node(const idmc_slot *slot)
{
    return slot->node;
}

int64_t idmc_slot_mark_ms(const idmc_slot *slot)
{
    return slot->mark_ms;
}

/* Writes ms as the slot's mark, durably. */
static int write_mark(idmc_slot *slot, int64_t ms)
{
    if (pwrite(slot->fd, &ms, sizeof ms, 8) != (ssize_t)sizeof ms || fdatasync(slot->fd) != 0)
        return -1;
    slot->mark_ms = ms;
    return 0;
}

int idmc_slot_record_mark(idmc_slot *slot, int64_t ms)
{
    return ms <= slot->mark_ms ? 0 : write_mark(slot, ms);
}

int idmc_slot_shrink_mark(idmc_slot *slot, int64_t ms)
{
    return ms >= slot->mark_ms ? 0 : write_mark(slot, ms);
}

void idmc_slot_release(idmc_slot *slot)
{
    if (slot == NULL)
        return;
    close(slot->fd);
    free(slot);
}

int idmc_local_list(const char *dir, const char *ns,
                    void (*fn)(void *ctx, uint64_t node, bool held, int64_t mark_ms,
                               const char *holder),
                    void *ctx, char *msg, size_t cap)
{
    char nsdir[1100];
    snprintf(nsdir, sizeof nsdir, "%s/%s", dir, ns);
    DIR *d = opendir(nsdir);
    if (d == NULL) {
        snprintf(msg, cap, "cannot read the node registry %s: %s", nsdir, strerror(errno));
        return -1;
    }
    int seen = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t node;
        char tail;
        if (sscanf(e->d_name, "node-%" SCNu64 "%c", &node, &tail) != 1)
            continue;
        int fd = open_slot(nsdir, node, O_RDONLY);
        if (fd < 0)
            continue;
        /* A shared lock for an instant: refused while a holder has it. */
        bool held = flock(fd, LOCK_SH | LOCK_NB) != 0;
        char who[256];
        read_holder(fd, who, sizeof who);
        fn(ctx, node, held, read_mark(fd), held ? who : "");
        close(fd);
        seen++;
    }
    closedir(d);
    return seen;
}
