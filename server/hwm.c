/*
 * hwm.c - the state directory and its time high-water mark (see hwm.h for
 * the guarantee).
 *
 * STATE_DIR (mode 0700, created if missing) is held for the server's life
 * with flock(LOCK_EX | LOCK_NB) on the directory itself: the exclusion,
 * which a cleaner cannot delete (it would have to remove the directory,
 * and a new one is a new inode, noticed below). A second idmintd on the
 * directory refuses to start before it has touched anything else; the
 * kernel drops the lock of a process that dies, so a crash never leaves
 * the directory taken. In it:
 *   lock  flock'd too (what an older idmintd takes as the exclusion), with
 *         the holder's pid.
 *   hwm   16 bytes: "IDMHWM01" and the mark, a little-endian int64 of Unix
 *         ms. Allocated at creation (posix_fallocate), so rewriting it in
 *         place never needs a new block on a full filesystem; at creation
 *         it, its directory and the directory's parent are fsynced.
 * At start-up the mark is read, and the first one written only once the
 * generators have taken the mark found (idms_hwm_commit): a start refused
 * (a mark past the layout's end, say) leaves the directory as it was.
 *
 * A write (pwrite + fdatasync) runs on libuv's thread pool; the loop
 * thread raises the generators' ceilings only in its completion callback,
 * once the bytes are on disk. Only one write is in flight. The worker
 * first checks (and every second without a write, too) that what it holds
 * is still where a restart looks and still its own (keep_dir); the write
 * counts only once that is so:
 *   - hwm removed (or replaced): made again under the directory's lock,
 *     held throughout, with the mark being written; fsynced with the
 *     directory. A file put in its place is taken over, unless its mark is
 *     above ours (then another idmintd writes it).
 *   - lock removed: made again and locked.
 *   - the directory removed or replaced (another inode at the path): made
 *     again and locked anew, with lock and hwm.
 * A lock refused there means another idmintd has the directory: this one
 * stops minting past its durable mark for good (not ready, no more writes,
 * no shrinking at exit), so that neither can lower the other's mark. Any
 * other failure (ENOSPC making hwm again, a file where the directory was)
 * is logged once with its reason, makes /readyz false and is retried every
 * second while there is demand; requests that reach the ceiling meanwhile
 * get 503.
 */
#include "hwm.h"
#include "log.h"
#include "server.h"
#include "idmint_coord.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MARK_LEN 16
#define RETRY_MS 1000
#define CHECK_MS 1000

int64_t idms_clock_ms(void)
{
    idm_clock clock = idm_clock_system();
    int64_t ns = 0;
    if (clock.now_ns(clock.ctx, &ns) != IDM_OK)
        return 0;
    return ns / 1000000;
}

static int mkdirs(const char *path)
{
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    }
    if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

static void close_keeping_errno(int fd)
{
    int e = errno;
    close(fd);
    errno = e;
}

/* Opens STATE_DIR and locks it: the exclusion, on the directory's inode,
 * which no cleaner can delete while it is in use. -1 with errno
 * (EWOULDBLOCK: another idmintd holds it). */
static int lock_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close_keeping_errno(fd);
        return -1;
    }
    return fd;
}

/* Opens and locks STATE_DIR/lock (dir: the directory's descriptor), which
 * an older idmintd takes as the exclusion, and which shows the holder's
 * pid. -1 with errno (EWOULDBLOCK: held). */
static int lock_file(int dir)
{
    int fd = openat(dir, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close_keeping_errno(fd);
        return -1;
    }
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
        /* Not fatal: the pid is for people, the locks are what count. */
    }
    return fd;
}

/* Creates STATE_DIR/hwm, allocated (so that rewriting it in place never
 * needs a block), and makes its name durable: the directory and the
 * directory's own entry in its parent are fsynced. -1 with errno. */
static int create_mark(int dir)
{
    int fd = openat(dir, "hwm", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int rc = posix_fallocate(fd, 0, MARK_LEN);
    if (rc != 0) {
        close(fd);
        unlinkat(dir, "hwm", 0);
        errno = rc;
        return -1;
    }
    int parent = openat(dir, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fsync(dir) != 0 || parent < 0 || fsync(parent) != 0) {
        int e = errno;
        if (parent >= 0)
            close(parent);
        close(fd);
        unlinkat(dir, "hwm", 0);
        errno = e;
        return -1;
    }
    close(parent);
    return fd;
}

static int write_mark(int fd, int64_t mark)
{
    uint8_t rec[MARK_LEN];
    memcpy(rec, "IDMHWM01", 8);
    for (int i = 0; i < 8; i++)
        rec[8 + i] = (uint8_t)((uint64_t)mark >> (8 * i));
    ssize_t n;
    do {
        n = pwrite(fd, rec, sizeof rec, 0);
    } while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof rec) {
        if (n >= 0)
            errno = EIO;
        return -1;
    }
    return fdatasync(fd);
}

/* The mark in an open hwm file: 0 with *mark (0 for a file allocated but
 * never written: a crash while creating it), or -1 when it is no mark of
 * ours (*len: the bytes read). */
static int read_mark(int fd, int64_t *mark, ssize_t *len)
{
    uint8_t rec[MARK_LEN];
    ssize_t r = pread(fd, rec, sizeof rec, 0);
    *mark = 0;
    *len = r;
    if (r == (ssize_t)sizeof rec && memcmp(rec, "IDMHWM01", 8) == 0) {
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
            v |= (uint64_t)rec[8 + i] << (8 * i);
        /* A mark beyond 48-bit Unix ms (year 10889) is no mark of ours. */
        if (v < (UINT64_C(1) << 48)) {
            *mark = (int64_t)v;
            return 0;
        }
    }
    bool zero = r == (ssize_t)sizeof rec;
    for (ssize_t i = 0; zero && i < r; i++)
        zero = rec[i] == 0;
    return zero ? 0 : -1;
}

/* Whether fd is the file at name (relative to dir, not followed if a
 * symbolic link; or, with dir AT_FDCWD and follow, the path name). */
static bool is_at(int fd, int dir, const char *name, bool follow)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 &&
           fstatat(dir, name, &b, follow ? 0 : AT_SYMLINK_NOFOLLOW) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* ---- the write, on the thread pool ------------------------------------- */

enum { REMADE_DIR = 1, REMADE_LOCK = 2, REMADE_MARK = 4, REPLACED_MARK = 8 };

/* STATE_DIR/hwm again, in the directory dir we hold: a new file, or the
 * one someone put in its place, either way with the mark being written.
 * A file in its place with a mark above it was written by another idmintd
 * (ours only rise): it is left alone, and h->work_taken set. -1 with
 * h->work_why. */
static int remake_mark(idms_hwm *h, int dir)
{
    int fd = openat(dir, "hwm", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        int64_t found;
        ssize_t len;
        if (read_mark(fd, &found, &len) == 0 && found > h->target_ms) {
            snprintf(h->work_why, sizeof h->work_why, "%s/hwm was replaced by a file with a higher "
                     "mark (%" PRId64 " Unix ms): another idmintd writes in this state directory",
                     h->dir, found);
            h->work_taken = true;
            close(fd);
            return -1;
        }
        h->work_remade |= REPLACED_MARK;
    } else if (errno == ENOENT) {
        fd = create_mark(dir);
        h->work_remade |= REMADE_MARK;
    }
    /* A file put there by rename needs its name made durable too. */
    if (fd < 0 || write_mark(fd, h->target_ms) != 0 ||
        ((h->work_remade & REPLACED_MARK) && fsync(dir) != 0)) {
        snprintf(h->work_why, sizeof h->work_why, "%s/hwm was %s and cannot be made again: %s",
                 h->dir, h->work_remade & REMADE_MARK ? "removed" : "replaced", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* what (the directory, or its lock file) was not found as we left it, and
 * could not be made again and locked: another idmintd holds it
 * (EWOULDBLOCK: h->work_taken), or errno says why. */
static void lock_failed(idms_hwm *h, const char *what)
{
    if (errno == EWOULDBLOCK) {
        snprintf(h->work_why, sizeof h->work_why, "%s was replaced, and another idmintd holds the "
                 "new one", what);
        h->work_taken = true;
    } else {
        snprintf(h->work_why, sizeof h->work_why, "%s is gone and cannot be made again: %s", what,
                 strerror(errno));
    }
}

/* Makes sure that the mark being written is where a restart reads it, and
 * that the directory is still ours: a removed lock file or mark is made
 * again under the directory's lock, held throughout; a directory removed
 * or replaced is made again and locked anew. A lock refused means another
 * idmintd has the directory now (h->work_taken). Fills h->work_why on
 * failure; then the descriptors are left as they were. */
static void keep_dir(idms_hwm *h)
{
    int dir = h->dir_fd, lock = h->lock_fd, fd = h->fd;
    char what[1100];
    if (!is_at(dir, AT_FDCWD, h->dir, true)) {
        if (mkdirs(h->dir) != 0 || (dir = lock_dir(h->dir)) < 0) {
            snprintf(what, sizeof what, "the state directory %s", h->dir);
            lock_failed(h, what);
            return;
        }
        h->work_remade |= REMADE_DIR;
    }
    if (dir != h->dir_fd || !is_at(lock, dir, "lock", false)) {
        lock = lock_file(dir);
        if (lock < 0) {
            snprintf(what, sizeof what, "%s/lock", h->dir);
            lock_failed(h, what);
            goto undo;
        }
        h->work_remade |= REMADE_LOCK;
    }
    if (dir != h->dir_fd || !is_at(fd, dir, "hwm", false)) {
        fd = remake_mark(h, dir);
        if (fd < 0)
            goto undo;
    }
    if (fd != h->fd)
        close(h->fd);
    if (lock != h->lock_fd)
        close(h->lock_fd);
    if (dir != h->dir_fd)
        close(h->dir_fd);
    h->dir_fd = dir;
    h->lock_fd = lock;
    h->fd = fd;
    return;
undo:
    if (lock >= 0 && lock != h->lock_fd)
        close(lock);
    if (dir != h->dir_fd)
        close(dir);
    h->work_remade = 0;
}

static void on_work(uv_work_t *w)
{
    idms_hwm *h = w->data;
    h->work_why[0] = '\0';
    h->work_remade = 0;
    h->work_taken = false;
    /* First, also for the periodic look: is the mark still where a restart
     * would read it, and the directory still ours? (A write into a file
     * another idmintd now shares could lower its mark.) */
    keep_dir(h);
    if (h->work_why[0] != '\0' || h->work_check_only)
        return;
    if (!(h->work_remade & (REMADE_MARK | REPLACED_MARK)) && write_mark(h->fd, h->target_ms) != 0) {
        snprintf(h->work_why, sizeof h->work_why, "cannot write the time high-water mark %s/hwm: %s",
                 h->dir, strerror(errno));
        return;
    }
    /* The node's slot carries the mark to whoever holds the node next:
     * written before the ceiling passes it, as the state directory's. */
    if (h->work_slot != NULL && idmc_slot_record_mark(h->work_slot, h->target_ms) != 0) {
        snprintf(h->work_why, sizeof h->work_why,
                 "cannot record the time high-water mark in the node's slot: %s", strerror(errno));
        return;
    }
}

static void request_write(idms_server *s, int64_t target);

static void on_retry(uv_timer_t *t)
{
    idms_server *s = t->data;
    s->hwm.retry_armed = false;
    if (s->hwm.failing && !s->hwm.in_flight && !s->draining)
        request_write(s, idms_clock_ms() + s->opt.reserve_ms);
}

/* What keep_dir made again, said once. */
static void log_remade(const idms_hwm *h)
{
    char mark[IDM_RFC3339_CAP];
    if (idm_time_format(h->target_ms, mark, sizeof mark) != IDM_OK)
        snprintf(mark, sizeof mark, "%" PRId64, h->target_ms);
    if (h->work_remade & REMADE_DIR) {
        idms_log(IDMS_LOG_WARN, "the state directory %s was removed or replaced: made it again, "
                 "with the lock and the mark (%s)", h->dir, mark);
        return;
    }
    if (h->work_remade & REMADE_LOCK)
        idms_log(IDMS_LOG_WARN, "%s/lock was removed: made it again and locked it (the lock on the "
                 "directory itself, held throughout, is what keeps other idmintd processes out)",
                 h->dir);
    if (h->work_remade & (REMADE_MARK | REPLACED_MARK))
        idms_log(IDMS_LOG_WARN, "%s/hwm was %s: made it again under the lock held, with the mark "
                 "(%s)", h->dir, h->work_remade & REMADE_MARK ? "removed" : "replaced", mark);
}

static void on_work_done(uv_work_t *w, int status)
{
    idms_hwm *h = w->data;
    idms_server *s = h->server;
    h->in_flight = false;
    if (status == 0)
        log_remade(h);
    if (status == 0 && h->work_why[0] == '\0') {
        if (!h->work_check_only)
            s->metrics.reserve_writes++;
        if (h->target_ms > h->durable_ms) {
            h->durable_ms = h->target_ms;
            idm_gen_set_ceiling(s->gen, h->durable_ms); /* the snowflakes': on_ceiling */
        }
        if (h->failing) {
            h->failing = false;
            h->why[0] = '\0';
            idms_log(IDMS_LOG_INFO, "the time high-water mark is durable again");
        }
    } else if (status == 0 && h->work_taken) {
        /* For good: whatever this one writes now could lower the other's
         * mark, and the other's stop could lower this one's. No more
         * writes, and none at exit (h->failing). */
        s->metrics.reserve_errors++;
        h->taken = true;
        h->failing = true;
        snprintf(h->why, sizeof h->why, "%s", h->work_why);
        idms_log(IDMS_LOG_ERROR, "%s; not ready, and no ID past %" PRId64 " (Unix ms) until "
                 "restarted; the mark is left as it is", h->work_why, h->durable_ms);
    } else {
        s->metrics.reserve_errors++;
        if (!h->failing)
            idms_log(IDMS_LOG_ERROR, "%s; not ready, and no ID past %" PRId64
                     " (Unix ms) until it can be written", status == 0 ? h->work_why : "write cancelled",
                     h->durable_ms);
        h->failing = true;
        snprintf(h->why, sizeof h->why, "%s", status == 0 ? h->work_why : "write cancelled");
        if (!h->retry_armed && !s->draining) {
            h->retry_armed = true;
            uv_timer_start(&h->retry, on_retry, RETRY_MS, 0);
        }
    }
    /* The snowflake ceiling follows, and parked requests go on: minted
     * now, or refused with the reason. */
    h->on_ceiling(s);
}

static void queue_work(idms_server *s, int64_t target, bool check_only)
{
    idms_hwm *h = &s->hwm;
    if (h->in_flight || h->taken)
        return;
    h->target_ms = target;
    h->work_check_only = check_only;
    h->work_slot = s->node.slot;
    h->work.data = h;
    if (uv_queue_work(s->loop, &h->work, on_work, on_work_done) == 0)
        h->in_flight = true;
}

static void request_write(idms_server *s, int64_t target)
{
    queue_work(s, target, false);
}

/* Every CHECK_MS: a deleted or replaced state directory is noticed even
 * while no write is due (a restart would not find the mark there). */
static void on_check(uv_timer_t *t)
{
    idms_server *s = t->data;
    if (s->hwm.enabled && !s->hwm.failing && !s->hwm.in_flight)
        queue_work(s, s->hwm.durable_ms, true);
}

/* ---- the loop side ------------------------------------------------------ */

void idms_hwm_need(idms_server *s, int64_t now_ms, bool at_ceiling)
{
    idms_hwm *h = &s->hwm;
    /* Also while draining: parked requests still need the mark. */
    if (!h->enabled || h->in_flight)
        return;
    if (h->failing && !at_ceiling)
        return; /* the retry timer tries again */
    if (at_ceiling || now_ms + s->opt.reserve_ms / 2 >= h->durable_ms)
        request_write(s, now_ms + s->opt.reserve_ms);
}

bool idms_hwm_ready(idms_server *s, char *why, size_t cap)
{
    if (!s->hwm.failing)
        return true;
    snprintf(why, cap, "%s", s->hwm.why);
    return false;
}

/* A resume mark past the layout's last time unit: no snowflake could ever
 * be minted above it, and the generator refuses it. Said here, before
 * anything is written, with where the mark is and what to do. Returns 0,
 * or 1 after logging. */
static int check_layout_end(idms_server *s, int64_t file_mark)
{
    const idm_sf_layout *l = &s->layout;
    int64_t last = idm_sf_layout_max_unix_ms(l), mark = s->hwm.resume_ms;
    if (mark == 0 || mark <= last || mark - last < l->unit_ms)
        return 0; /* none, or one the layout can mint above */
    char when[IDM_RFC3339_CAP], end[IDM_RFC3339_CAP];
    if (idm_time_format(mark, when, sizeof when) != IDM_OK)
        snprintf(when, sizeof when, "%" PRId64, mark);
    if (idm_time_format(last + l->unit_ms, end, sizeof end) != IDM_OK)
        snprintf(end, sizeof end, "%" PRId64, last + l->unit_ms);
    if (mark == file_mark)
        idms_log(IDMS_LOG_ERROR, "the time high-water mark in %s/hwm, %s (Unix ms %" PRId64 "), is "
                 "past the end of layout %s (%s): no snowflake could be minted above it, and nothing "
                 "was written. If no IDs were minted after the clock's current time (a clock far "
                 "ahead wrote it), remove %s/hwm; otherwise use a --layout or --epoch that reaches "
                 "past the mark", s->hwm.dir, when, mark, s->layout_name, end, s->hwm.dir);
    else
        idms_log(IDMS_LOG_ERROR, "the time high-water mark recorded in the slot of node %" PRIu64
                 ", %s (Unix ms %" PRId64 "), is past the end of layout %s (%s): no snowflake could "
                 "be minted above it, and nothing was written; use a --layout or --epoch that "
                 "reaches past the mark (idmint lease list shows the slot)", s->node.node, when,
                 mark, s->layout_name, end);
    return 1;
}

void idms_hwm_resume_above(idms_hwm *h, int64_t ms, int from)
{
    if (ms > h->resume_ms) {
        h->resume_ms = ms;
        h->resume_from = from;
    }
}

int idms_hwm_open(idms_server *s, int64_t slot_mark_ms)
{
    idms_hwm *h = &s->hwm;
    h->server = s;
    h->fd = h->lock_fd = h->dir_fd = -1;
    h->durable_ms = INT64_MAX;
    if (s->opt.state_dir[0] == '\0')
        return 0;
    h->enabled = true;
    h->durable_ms = 0; /* nothing is, until idms_hwm_commit */
    snprintf(h->dir, sizeof h->dir, "%s", s->opt.state_dir);
    if (mkdirs(h->dir) != 0) {
        idms_log(IDMS_LOG_ERROR, "cannot create state directory %s: %s", h->dir, strerror(errno));
        return 1;
    }
    h->dir_fd = lock_dir(h->dir);
    if (h->dir_fd >= 0)
        h->lock_fd = lock_file(h->dir_fd);
    if (h->lock_fd < 0) {
        if (errno == EWOULDBLOCK)
            idms_log(IDMS_LOG_ERROR, "state directory %s is in use by another idmintd (it holds "
                     "%s%s); give each server its own --state-dir", h->dir,
                     h->dir_fd < 0 ? "a lock on the directory" : h->dir,
                     h->dir_fd < 0 ? "" : "/lock");
        else
            idms_log(IDMS_LOG_ERROR, "cannot lock state directory %s: %s", h->dir, strerror(errno));
        return 1;
    }
    /* A missing file is made by idms_hwm_commit. */
    h->fd = openat(h->dir_fd, "hwm", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (h->fd < 0 && errno != ENOENT) {
        idms_log(IDMS_LOG_ERROR, "cannot open %s/hwm: %s", h->dir, strerror(errno));
        return 1;
    }
    int64_t file_mark = 0;
    ssize_t len;
    if (h->fd >= 0 && read_mark(h->fd, &file_mark, &len) != 0) {
        idms_log(IDMS_LOG_ERROR,
                 "%s/hwm is damaged (%zd bytes, not an idmintd high-water mark); remove it only "
                 "if no IDs were minted after the clock's current time",
                 h->dir, len);
        return 1;
    }
    idms_hwm_resume_above(h, file_mark, IDMS_RESUME_STATE_DIR);
    /* An earlier holder of the node may have minted up to its slot's mark
     * (another state directory): resume above that too. */
    idms_hwm_resume_above(h, slot_mark_ms, IDMS_RESUME_SLOT);
    if (check_layout_end(s, file_mark) != 0)
        return 1;
    idm_error err = {0};
    if (h->resume_ms > 0 && idm_gen_resume_after(s->gen, h->resume_ms, &err) != IDM_OK) {
        idms_log(IDMS_LOG_ERROR, "cannot resume after the mark %" PRId64 ": %s", h->resume_ms,
                 err.msg);
        return 1;
    }
    return 0;
}

int idms_hwm_commit(idms_server *s)
{
    idms_hwm *h = &s->hwm;
    if (!h->enabled)
        return 0;
    if (h->fd < 0 && (h->fd = create_mark(h->dir_fd)) < 0) {
        idms_log(IDMS_LOG_ERROR, "cannot create %s/hwm: %s", h->dir, strerror(errno));
        return 1;
    }
    /* The first mark, durable before anything is minted. */
    int64_t now = idms_clock_ms(), base = h->resume_ms > now ? h->resume_ms : now;
    h->target_ms = base + s->opt.reserve_ms;
    if (write_mark(h->fd, h->target_ms) != 0) {
        idms_log(IDMS_LOG_ERROR, "cannot write the time high-water mark %s/hwm: %s", h->dir,
                 strerror(errno));
        return 1;
    }
    if (s->node.slot != NULL && idmc_slot_record_mark(s->node.slot, h->target_ms) != 0) {
        idms_log(IDMS_LOG_ERROR, "cannot record the time high-water mark in the slot of node %" PRIu64
                 ": %s", s->node.node, strerror(errno));
        return 1;
    }
    s->metrics.reserve_writes++;
    h->durable_ms = h->target_ms;
    idm_gen_set_ceiling(s->gen, h->durable_ms);
    h->on_ceiling(s);
    return 0;
}

void idms_hwm_start(idms_server *s)
{
    uv_timer_init(s->loop, &s->hwm.retry);
    s->hwm.retry.data = s;
    uv_unref((uv_handle_t *)&s->hwm.retry);
    uv_timer_init(s->loop, &s->hwm.check);
    s->hwm.check.data = s;
    if (s->hwm.enabled)
        uv_timer_start(&s->hwm.check, on_check, CHECK_MS, CHECK_MS);
    uv_unref((uv_handle_t *)&s->hwm.check);
}

int64_t idms_hwm_used_ms(idms_server *s)
{
    /* Everything handed out lies at or below both generators' high water
     * (and at or below the durable mark). */
    int64_t used = s->sf != NULL ? idm_snowflake_high_water_ms(s->sf) : 0;
    int64_t gen_used = s->gen != NULL ? idm_gen_high_water_ms(s->gen) : 0;
    if (gen_used > used)
        used = gen_used;
    if (used < s->hwm.resume_ms)
        used = s->hwm.resume_ms;
    return used;
}

void idms_hwm_close(idms_server *s, int64_t used)
{
    idms_hwm *h = &s->hwm;
    if (!h->enabled)
        return;
    if (h->fd >= 0 && !h->failing && used >= 0) {
        /* Where a restart reads it: what was removed since the last look
         * is made again (with the mark to leave), as on the thread pool. */
        h->target_ms = used < h->durable_ms ? used : h->durable_ms;
        h->work_why[0] = '\0';
        h->work_remade = 0;
        keep_dir(h);
        if (h->work_why[0] != '\0') {
            idms_log(IDMS_LOG_ERROR, "%s; the mark is left as it is", h->work_why);
        } else {
            log_remade(h);
            if (used < h->durable_ms && write_mark(h->fd, used) == 0)
                idms_log(IDMS_LOG_INFO, "time high-water mark set to the last time used");
        }
    }
    if (h->fd >= 0) {
        close(h->fd);
        h->fd = -1;
    }
    if (h->lock_fd >= 0) {
        close(h->lock_fd);
        h->lock_fd = -1;
    }
    if (h->dir_fd >= 0) {
        close(h->dir_fd);
        h->dir_fd = -1;
    }
}
