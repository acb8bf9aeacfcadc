/*
 * local.c - the host-local registry of node numbers (idmint_coord.h).
 *
 * A node is held by two locks that the kernel drops when the holder closes
 * them or dies (kill -9 included), so that no stale-lock clean-up is ever
 * needed and a claim never waits (a held slot is skipped):
 *
 * - a name in Linux's abstract Unix socket namespace, bound by the holder:
 *   "idmint-node/HASH/N", where HASH is a hash of the namespace
 *   directory's canonical path. Nobody can delete or replace it, whatever
 *   is removed from the file system (a /tmp cleaner, rm -rf), and it is
 *   the same for every user of the host (abstract names have no owner or
 *   mode). It spans one network namespace.
 * - flock(LOCK_EX | LOCK_NB) on the slot file DIR/NS/node-N, which spans
 *   processes in other network namespaces (containers) that share the
 *   directory, and holders of idmint versions before the name.
 *
 * The file stays when its holder goes: it carries the mark that the next
 * holder must resume above. A holder checks now and then that its file is
 * still the one at its path (idmc_slot_check); the name keeps the node
 * its own meanwhile.
 *
 * Directories: a private registry (mode 0700, this user's) or a shared one
 * (mode 1777, sticky as /tmp: every user makes slot files there, and none
 * can remove or replace another's). The host's registry, the default, is
 * shared; its slot files are mode 0666, so that a node held by one user
 * and freed can be held next by another, who must read and raise the mark.
 */
#include "idmint_coord.h"
#include "record.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static const char magic[8] = {'I', 'D', 'M', 'S', 'L', 'O', 'T', '1'};

#define NAME_PREFIX "idmint-node/"

struct idmc_slot {
    pthread_mutex_t mu; /* over fd and mark_ms: marks, checks and repairs may
                         * come from different threads */
    int fd;             /* the slot file, flock'd */
    int name_fd;        /* the socket bound to the slot's abstract name */
    bool shared;        /* in a shared registry (mode 0666 files) */
    uint64_t node;
    int64_t mark_ms;
    char dir[1024], ns[256]; /* as claimed: a repair makes them again */
    char holder[IDMC_SLOT_BYTES - IDMC_HOLDER_AT];
    char path[1200];
};

int idmc_local_default_dir(char *dst, size_t cap)
{
    int n = snprintf(dst, cap, "%s", IDMC_HOST_REGISTRY);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* ---- directories ---------------------------------------------------------- */

/* Whether path is a registry directory fit for slots: private (a directory
 * of this user's that no one else may write) or shared (world-writable
 * with the sticky bit: no one can remove or replace another user's slot).
 * Anything else could let someone replace a slot file and take a node. */
static int check_dir(const char *path, bool *shared, char *msg, size_t cap)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        snprintf(msg, cap, "cannot use the node registry %s: %s", path, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0 && (st.st_mode & S_IWOTH) != 0) {
        *shared = true;
        return 0;
    }
    if (S_ISDIR(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 022) == 0) {
        *shared = false;
        return 0;
    }
    snprintf(msg, cap,
             "refusing the node registry %s: it must be a directory (not a symbolic link) owned "
             "by this user and writable by no one else, or a shared one of mode 1777 (sticky, as "
             "/tmp)",
             path);
    return -1;
}

/* Makes path (mode 01777 when shared, else 0700) if missing, and checks it.
 * restore: the directory was shared when this process claimed from it (a
 * repair): found private and this user's - made anew by a process that did
 * not know - it is made shared again, as it was. */
static int make_dir(const char *path, bool shared, bool restore, bool *is_shared, char *msg,
                    size_t cap)
{
    bool made = mkdir(path, shared ? 01777 : 0700) == 0;
    if (!made && errno != EEXIST)
        return -1;
    if (check_dir(path, is_shared, msg, cap) != 0)
        return -1;
    /* mkdir's mode passed through the umask. */
    if (shared && (made || (restore && !*is_shared)) && !*is_shared) {
        if (chmod(path, 01777) != 0) {
            snprintf(msg, cap, "cannot make the node registry %s shared: %s", path,
                     strerror(errno));
            return -1;
        }
        return check_dir(path, is_shared, msg, cap);
    }
    return 0;
}

/* The host's registry cannot be made by this process: what to do. */
static void explain_host_registry(int e, char *msg, size_t cap)
{
    snprintf(msg, cap,
             "this host's node registry %s does not exist and uid %u cannot make it (%s). Every "
             "process on a host must use one registry for their nodes to differ: have root make "
             "it once (install -d -m 1777 %s, or the tmpfiles.d line 'd %s 1777 root root -'), "
             "or give every process on this host the same --node-registry DIR, or a node "
             "(--node N) or a coordinator (--coord URL)",
             IDMC_HOST_REGISTRY, (unsigned)geteuid(), strerror(e), IDMC_HOST_REGISTRY,
             IDMC_HOST_REGISTRY);
}

/* Makes dir and its namespace directory as needed (nsdir gets the latter's
 * canonical path); only those two levels are held to check_dir's rules.
 * The host's registry is made shared, with its parent mode 0755, and so is
 * any registry when *shared is true on entry (a repair of a shared one:
 * whoever repairs first must not lock the other users' holders out); any
 * other registry private, with its parents made 0700 where missing.
 * *shared is set to what the registry is. */
static int make_dirs(const char *dir, const char *ns, char *nsdir, size_t nscap, bool *shared,
                     char *msg, size_t cap)
{
    bool restore = *shared;
    char path[1024];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) {
        snprintf(msg, cap, "the node registry path is too long");
        return -1;
    }
    bool host = strcmp(dir, IDMC_HOST_REGISTRY) == 0;
    for (char *p = path + 1; *p != '\0'; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        /* Parents: whatever exists is fine. The host registry's own parent
         * is readable by every user. */
        if (mkdir(path, host ? 0755 : 0700) == 0 && host)
            (void)chmod(path, 0755);
        *p = '/';
    }
    msg[0] = '\0';
    if (make_dir(path, host || restore, restore, shared, msg, cap) != 0) {
        if (msg[0] == '\0') {
            int e = errno;
            if (host && (e == EACCES || e == ENOENT || e == EPERM || e == EROFS))
                explain_host_registry(e, msg, cap);
            else
                snprintf(msg, cap, "cannot make the node registry %s: %s", path, strerror(e));
        }
        return -1;
    }
    /* The namespace: the layout's name, '/' made harmless. */
    char nspath[1100];
    int n = snprintf(nspath, sizeof nspath, "%s/", path);
    if (n < 0 || (size_t)n >= sizeof nspath)
        return -1;
    for (const char *q = ns; *q != '\0' && (size_t)n + 1 < sizeof nspath; q++)
        nspath[n++] = *q == '/' ? '_' : *q;
    nspath[n] = '\0';
    bool registry_shared = *shared;
    if (make_dir(nspath, registry_shared, restore, shared, msg, cap) != 0) {
        if (msg[0] == '\0')
            snprintf(msg, cap, "cannot make the node registry %s: %s", nspath, strerror(errno));
        return -1;
    }
    /* The canonical path names the slots' abstract socket names: the same
     * directory however it is spelled, and the same again if it is removed
     * and made anew. */
    char real[PATH_MAX];
    if (realpath(nspath, real) == NULL) {
        snprintf(msg, cap, "cannot resolve the node registry %s: %s", nspath, strerror(errno));
        return -1;
    }
    if (snprintf(nsdir, nscap, "%s", real) >= (int)nscap) {
        snprintf(msg, cap, "the node registry path is too long");
        return -1;
    }
    return 0;
}

/* ---- slot files and names ------------------------------------------------- */

/* The slot file's path; 0, or -1 when it does not fit. */
static int slot_path(const char *nsdir, uint64_t node, char *dst, size_t cap)
{
    int n = snprintf(dst, cap, "%s/node-%" PRIu64, nsdir, node);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
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

/* Opens the slot file at path, refusing anything but a regular file (no
 * symbolic links), and in a private registry one of ours. With create, a
 * missing file is made (0666 in a shared registry: see the top). An
 * existing file is opened without O_CREAT, which Linux's protected_regular
 * would refuse for another user's file in a sticky directory. */
static int open_slot(const char *path, int flags, bool create, bool shared)
{
    int fd = -1;
    for (int tries = 0; tries < 3 && fd < 0; tries++) {
        fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW);
        if (fd >= 0 || errno != ENOENT || !create)
            break;
        fd = open(path, flags | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, shared ? 0666 : 0600);
        if (fd >= 0 && shared && fchmod(fd, 0666) != 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (!shared && st.st_uid != geteuid())) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    return fd;
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* The abstract socket name of nsdir's node: its length in sun_path. */
static socklen_t name_of(const char *nsdir, uint64_t node, struct sockaddr_un *a)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, NAME_PREFIX "%016" PRIx64 "/%" PRIu64,
                     fnv1a(nsdir), node);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* Binds nsdir's node name: the socket, or -1 with errno (EADDRINUSE: held). */
static int bind_name(const char *nsdir, uint64_t node)
{
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_un a;
    socklen_t len = name_of(nsdir, node, &a);
    if (bind(fd, (const struct sockaddr *)&a, len) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* The holder of a node whose name is bound, for messages: the slot file's
 * line when the file is there. */
static void describe_busy(const char *path, uint64_t node, char *msg, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        snprintf(msg, cap,
                 "node %" PRIu64 " is held by a process whose slot file %s was removed "
                 "(it holds the node until it exits)",
                 node, path);
        return;
    }
    char who[256];
    read_holder(fd, who, sizeof who);
    close(fd);
    snprintf(msg, cap, "node %" PRIu64 " is held by %s", node, who);
}

/* Writes the whole record (magic, mark, holder line) into fd. */
static int write_record(int fd, int64_t mark, const char *holder)
{
    char buf[IDMC_SLOT_BYTES] = {0};
    memcpy(buf, magic, sizeof magic);
    memcpy(buf + 8, &mark, sizeof mark);
    snprintf(buf + IDMC_HOLDER_AT, sizeof buf - IDMC_HOLDER_AT, "%s\n", holder);
    return pwrite(fd, buf, sizeof buf, 0) == (ssize_t)sizeof buf ? 0 : -1;
}

/* What take() found: a slot it cannot use without being asked to. */
enum { TAKE_UNUSABLE = 100 };

/* Takes node's slot: 0 held (into slot), IDMC_BUSY (the holder in msg),
 * TAKE_UNUSABLE (a slot whose mark is past max_mark_ms or whose file
 * cannot be opened: msg says which and what to do), or IDMC_ERROR. The
 * name is bound first: a slot file removed under its holder cannot hand
 * the node out twice. */
static int take(const char *nsdir, bool shared, uint64_t node, int64_t max_mark_ms,
                const char *holder, idmc_slot *slot, char *msg, size_t cap)
{
    char path[sizeof slot->path];
    if (slot_path(nsdir, node, path, sizeof path) != 0) {
        snprintf(msg, cap, "the node registry path is too long");
        return IDMC_ERROR;
    }
    int name = bind_name(nsdir, node);
    if (name < 0) {
        int e = errno;
        if (e == EADDRINUSE) {
            describe_busy(path, node, msg, cap);
            return IDMC_BUSY;
        }
        snprintf(msg, cap, "cannot bind the name of node %" PRIu64 ": %s", node, strerror(e));
        return IDMC_ERROR;
    }
    int fd = open_slot(path, O_RDWR, true, shared);
    if (fd < 0) {
        int e = errno;
        close(name);
        snprintf(msg, cap, "cannot open the slot of node %" PRIu64 ", %s: %s", node, path,
                 e == EPERM ? "not a regular file of this user's" : strerror(e));
        return e == EACCES || e == EPERM || e == ELOOP ? TAKE_UNUSABLE : IDMC_ERROR;
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
        close(name);
        return e == EWOULDBLOCK ? IDMC_BUSY : IDMC_ERROR;
    }
    int64_t mark = read_mark(fd);
    if (mark > max_mark_ms) {
        /* Written under a clock set far ahead: no ID can be minted above
         * it, and nothing was minted at it. Read, never written. */
        snprintf(msg, cap,
                 "the slot of node %" PRIu64 ", %.600s, records a time high-water mark (%" PRId64
                 " Unix ms) past the layout's last time (%" PRId64 "): a clock set far ahead "
                 "wrote it; once that clock is right, remove the file (rm %.600s) to use the node",
                 node, path, mark, max_mark_ms, path);
        close(fd);
        close(name);
        return TAKE_UNUSABLE;
    }
    if (write_record(fd, mark, holder) != 0) {
        snprintf(msg, cap, "cannot write the slot of node %" PRIu64 ": %s", node, strerror(errno));
        close(fd);
        close(name);
        return IDMC_ERROR;
    }
    slot->fd = fd;
    slot->name_fd = name;
    slot->shared = shared;
    slot->node = node;
    slot->mark_ms = mark;
    snprintf(slot->holder, sizeof slot->holder, "%s", holder);
    snprintf(slot->path, sizeof slot->path, "%s", path);
    return 0;
}

static int local_claim_msg(const char *dir, const char *ns, uint64_t lo, uint64_t hi,
                           int64_t max_mark_ms, const char *holder, idmc_slot **out, char *msg,
                           size_t cap)
{
    *out = NULL;
    msg[0] = '\0';
    char nsdir[PATH_MAX];
    bool shared = false;
    if (make_dirs(dir, ns, nsdir, sizeof nsdir, &shared, msg, cap) != 0)
        return IDMC_ERROR;
    idmc_slot *slot = calloc(1, sizeof *slot);
    if (slot == NULL) {
        snprintf(msg, cap, "out of memory");
        return IDMC_ERROR;
    }
    /* The first slot skipped as unusable, said again on success. */
    char skipped[IDMC_MSG_CAP] = "";
    for (uint64_t node = lo;; node++) {
        int rc = take(nsdir, shared, node, max_mark_ms, holder, slot, msg, cap);
        if (rc == 0) {
            pthread_mutex_init(&slot->mu, NULL);
            snprintf(slot->dir, sizeof slot->dir, "%s", dir);
            snprintf(slot->ns, sizeof slot->ns, "%s", ns);
            *out = slot;
            if (skipped[0] != '\0')
                snprintf(msg, cap, "skipped %s", skipped);
            else
                msg[0] = '\0';
            return 0;
        }
        if (rc == TAKE_UNUSABLE && lo != hi && skipped[0] == '\0')
            snprintf(skipped, sizeof skipped, "%s", msg);
        if (rc == TAKE_UNUSABLE && lo == hi)
            rc = IDMC_ERROR;
        if (rc == IDMC_ERROR || node == hi) {
            if (rc != IDMC_ERROR && lo != hi)
                snprintf(msg, cap,
                         "every node from %" PRIu64 " to %" PRIu64 " is held (%.600s)%s%.1000s", lo,
                         hi, nsdir, skipped[0] ? "; skipped " : "", skipped);
            free(slot);
            return rc == TAKE_UNUSABLE ? IDMC_BUSY : rc;
        }
    }
}

uint64_t idmc_slot_node(const idmc_slot *slot)
{
    return slot->node;
}

int64_t idmc_slot_mark_ms(const idmc_slot *slot)
{
    idmc_slot *w = (idmc_slot *)slot; /* the mutex, not the slot, changes */
    pthread_mutex_lock(&w->mu);
    int64_t ms = slot->mark_ms;
    pthread_mutex_unlock(&w->mu);
    return ms;
}

const char *idmc_slot_path(const idmc_slot *slot)
{
    return slot->path;
}

/* Under mu: whether slot->fd is still the file at slot->path. */
static int check_locked(const idmc_slot *slot, char *msg, size_t cap)
{
    struct stat a, b;
    if (fstat(slot->fd, &a) != 0) {
        snprintf(msg, cap, "cannot look at the slot file %s: %s", slot->path, strerror(errno));
        return IDMC_ERROR;
    }
    if (a.st_nlink == 0 || lstat(slot->path, &b) != 0 || a.st_dev != b.st_dev ||
        a.st_ino != b.st_ino) {
        snprintf(msg, cap,
                 "the slot file %s of node %" PRIu64 " was removed or replaced while "
                 "this process held it",
                 slot->path, slot->node);
        return IDMC_LOST;
    }
    return 0;
}

static int slot_check_msg(idmc_slot *slot, char *msg, size_t cap)
{
    pthread_mutex_lock(&slot->mu);
    int rc = check_locked(slot, msg, cap);
    pthread_mutex_unlock(&slot->mu);
    return rc;
}

static int slot_repair_msg(idmc_slot *slot, char *msg, size_t cap)
{
    msg[0] = '\0';
    pthread_mutex_lock(&slot->mu);
    int rc = check_locked(slot, msg, cap);
    if (rc != IDMC_LOST)
        goto out;
    /* The directories too, should they be gone; they must resolve to the
     * same place, whose name this process holds. */
    char nsdir[PATH_MAX], path[sizeof slot->path];
    bool shared = slot->shared;
    rc = IDMC_ERROR;
    if (make_dirs(slot->dir, slot->ns, nsdir, sizeof nsdir, &shared, msg, cap) != 0)
        goto out;
    if (slot_path(nsdir, slot->node, path, sizeof path) != 0 || strcmp(path, slot->path) != 0) {
        snprintf(msg, cap, "the node registry %.400s/%.400s now resolves to %.400s, not %.400s",
                 slot->dir, slot->ns, nsdir, slot->path);
        goto out;
    }
    int fd = open_slot(path, O_RDWR, true, shared);
    if (fd < 0) {
        snprintf(msg, cap, "cannot make the slot file %s again: %s", path, strerror(errno));
        goto out;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char who[256];
        read_holder(fd, who, sizeof who);
        close(fd);
        if (e == EWOULDBLOCK) {
            snprintf(msg, cap,
                     "the slot file %s of node %" PRIu64 " was removed, and another "
                     "process now holds the one made in its place (%s)",
                     path, slot->node, who);
            rc = IDMC_BUSY;
        } else {
            snprintf(msg, cap, "cannot lock the slot file %s: %s", path, strerror(e));
        }
        goto out;
    }
    /* A file someone else made meanwhile may carry a mark of its own. */
    int64_t mark = read_mark(fd);
    if (mark < slot->mark_ms)
        mark = slot->mark_ms;
    if (write_record(fd, mark, slot->holder) != 0 || fdatasync(fd) != 0) {
        snprintf(msg, cap, "cannot write the slot file %s again: %s", path, strerror(errno));
        close(fd);
        goto out;
    }
    close(slot->fd);
    slot->fd = fd;
    slot->mark_ms = mark;
    rc = 0;
    snprintf(msg, cap,
             "the slot file %s of node %" PRIu64 " was removed or replaced while this "
             "process held it: made it again with the mark",
             path, slot->node);
out:
    pthread_mutex_unlock(&slot->mu);
    return rc;
}

/* Writes ms as the slot's mark, durably. Under mu. */
static int write_mark(idmc_slot *slot, int64_t ms)
{
    if (pwrite(slot->fd, &ms, sizeof ms, 8) != (ssize_t)sizeof ms || fdatasync(slot->fd) != 0)
        return -1;
    slot->mark_ms = ms;
    return 0;
}

int idmc_slot_record_mark(idmc_slot *slot, int64_t ms)
{
    pthread_mutex_lock(&slot->mu);
    int rc = ms <= slot->mark_ms ? 0 : write_mark(slot, ms);
    pthread_mutex_unlock(&slot->mu);
    return rc;
}

int idmc_slot_shrink_mark(idmc_slot *slot, int64_t ms)
{
    pthread_mutex_lock(&slot->mu);
    int rc = ms >= slot->mark_ms ? 0 : write_mark(slot, ms);
    pthread_mutex_unlock(&slot->mu);
    return rc;
}

void idmc_slot_release(idmc_slot *slot)
{
    if (slot == NULL)
        return;
    close(slot->fd);
    close(slot->name_fd);
    pthread_mutex_destroy(&slot->mu);
    free(slot);
}

/* ---- listing -------------------------------------------------------------- */

/* The nodes of nsdir whose name is bound now, from /proc/net/unix (this
 * network namespace's sockets): a bitmap over nodes below cap_nodes. */
static void bound_names(const char *nsdir, uint8_t *bits, uint64_t cap_nodes)
{
    FILE *f = fopen("/proc/net/unix", "re");
    if (f == NULL)
        return;
    char want[64];
    int wn = snprintf(want, sizeof want, "@" NAME_PREFIX "%016" PRIx64 "/", fnv1a(nsdir));
    char line[512];
    while (fgets(line, sizeof line, f) != NULL) {
        char *at = strstr(line, want);
        if (at == NULL)
            continue;
        uint64_t node;
        char tail;
        if (sscanf(at + wn, "%" SCNu64 "%c", &node, &tail) == 2 && tail == '\n' && node < cap_nodes)
            bits[node / 8] |= (uint8_t)(1u << (node % 8));
    }
    fclose(f);
}

#define LIST_NAMES_MAX 65536 /* nodes whose bound names are looked for */

static int local_list_msg(const char *dir, const char *ns,
                          void (*fn)(void *ctx, uint64_t node, bool held, int64_t mark_ms,
                                     const char *holder),
                          void *ctx, char *msg, size_t cap)
{
    char given[1100], nsdir[PATH_MAX];
    snprintf(given, sizeof given, "%s/%s", dir, ns);
    DIR *d = NULL;
    if (realpath(given, nsdir) == NULL || (d = opendir(nsdir)) == NULL) {
        snprintf(msg, cap, "cannot read the node registry %s: %s", given, strerror(errno));
        return -1;
    }
    uint8_t *names = calloc(LIST_NAMES_MAX / 8, 1);
    if (names != NULL)
        bound_names(nsdir, names, LIST_NAMES_MAX);
    int seen = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t node;
        char tail;
        if (sscanf(e->d_name, "node-%" SCNu64 "%c", &node, &tail) != 1)
            continue;
        char path[sizeof((idmc_slot *)0)->path];
        int fd = slot_path(nsdir, node, path, sizeof path) == 0
                     ? open_slot(path, O_RDONLY, false, true)
                     : -1;
        if (fd < 0)
            continue;
        bool named = names != NULL && node < LIST_NAMES_MAX && (names[node / 8] >> (node % 8) & 1);
        /* A shared lock for an instant: refused while a holder has it. */
        bool held = named || flock(fd, LOCK_SH | LOCK_NB) != 0;
        if (named)
            names[node / 8] &= (uint8_t) ~(1u << (node % 8));
        char who[256];
        read_holder(fd, who, sizeof who);
        fn(ctx, node, held, read_mark(fd), held ? who : "");
        close(fd);
        seen++;
    }
    closedir(d);
    /* Nodes held by name whose slot file is gone. */
    for (uint64_t node = 0; names != NULL && node < LIST_NAMES_MAX; node++)
        if (names[node / 8] >> (node % 8) & 1) {
            fn(ctx, node, true, 0, "unknown (its slot file was removed)");
            seen++;
        }
    free(names);
    return seen;
}

/* The public calls: each fills the caller's record (idmc_error). */
int idmc_local_claim(const char *dir, const char *ns, uint64_t lo, uint64_t hi, int64_t max_mark_ms,
                     const char *holder, idmc_slot **out, idmc_error *err)
{
    idmc_error scratch, *e = idmc__record(err, &scratch);
    return e->code =
               local_claim_msg(dir, ns, lo, hi, max_mark_ms, holder, out, e->msg, sizeof e->msg);
}

int idmc_slot_check(idmc_slot *slot, idmc_error *err)
{
    idmc_error scratch, *e = idmc__record(err, &scratch);
    return e->code = slot_check_msg(slot, e->msg, sizeof e->msg);
}

int idmc_slot_repair(idmc_slot *slot, idmc_error *err)
{
    idmc_error scratch, *e = idmc__record(err, &scratch);
    return e->code = slot_repair_msg(slot, e->msg, sizeof e->msg);
}

int idmc_local_list(const char *dir, const char *ns,
                    void (*fn)(void *ctx, uint64_t node, bool held, int64_t mark_ms,
                               const char *holder),
                    void *ctx, idmc_error *err)
{
    idmc_error scratch, *e = idmc__record(err, &scratch);
    int n = local_list_msg(dir, ns, fn, ctx, e->msg, sizeof e->msg);
    e->code = n < 0 ? IDMC_ERROR : 0;
    return n;
}

int idmc_slot_keep(idmc_slot *slot, int64_t *recorded_ms, int64_t used_ms, int64_t now_ms,
                   bool at_ceiling, idmc_error *err)
{
    idmc_error scratch, *e = idmc__record(err, &scratch);
    e->code = 0;
    e->msg[0] = '\0';
    if (!at_ceiling && now_ms + IDMC_SLOT_LOW_MS < *recorded_ms)
        return 0;
    int64_t want = (used_ms > now_ms ? used_ms : now_ms) + IDMC_SLOT_AHEAD_MS;
    if (want <= *recorded_ms)
        return 0;
    /* The file carries the mark to the next holder: put it back if it was
     * removed (the node stays ours meanwhile, by its name). */
    int rc = slot_repair_msg(slot, e->msg, sizeof e->msg);
    if (rc == IDMC_BUSY)
        return e->code = IDMC_LOST;
    if (rc != 0)
        return e->code = rc;
    if (idmc_slot_record_mark(slot, want) != 0) {
        snprintf(e->msg, sizeof e->msg, "%s: %s", idmc_slot_path(slot), strerror(errno));
        return e->code = IDMC_ERROR;
    }
    *recorded_ms = want;
    return 0;
}

void idmc_slot_end(idmc_slot *slot, int64_t claim_ms, int64_t recorded_ms, int64_t used_ms)
{
    if (slot == NULL)
        return;
    /* Everything minted lies at or below used (and above the claim's
     * mark). */
    int64_t used = used_ms > claim_ms ? used_ms : claim_ms;
    if (used < recorded_ms)
        (void)idmc_slot_shrink_mark(slot, used);
    idmc_slot_release(slot);
}
