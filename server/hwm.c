/*
 * hwm.c - the state directory and its time high-water mark (see hwm.h for
 * the guarantee).
 *
 * Files in STATE_DIR (mode 0700, created if missing):
 *   lock  held with flock(LOCK_EX | LOCK_NB) for the server's life: a
 *         second idmintd on the directory refuses to start before it has
 *         touched anything else. The kernel drops the lock of a process
 *         that dies, so a crash never leaves the directory taken.
 *   hwm   16 bytes: "IDMHWM01" and the mark, a little-endian int64 of Unix
 *         ms. Allocated at creation (posix_fallocate), so rewriting it in
 *         place never needs a new block on a full filesystem; it and its
 *         directory are fsynced when new.
 *
 * A write (pwrite + fdatasync) runs on libuv's thread pool; the loop
 * thread raises the generators' ceilings only in its completion callback,
 * once the bytes are on disk. Only one write is in flight. The worker then
 * also checks that the file is still the one at STATE_DIR/hwm (a deleted
 * or replaced directory would make the write worthless); if not, it makes
 * the directory, the lock and the file afresh, and the write counts only
 * once they are durable. A failure is logged once, makes /readyz false
 * and is retried every second while there is demand; requests that reach
 * the ceiling meanwhile get 503.
 */
#include "idmintd.h"
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

static void path_of(const idms_hwm *h, const char *name, char *dst, size_t cap)
{
    snprintf(dst, cap, "%s/%s", h->dir, name);
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

static int fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

/* Opens and locks STATE_DIR/lock. -1 with errno (EWOULDBLOCK: held). */
static int take_lock(const idms_hwm *h)
{
    char path[1100];
    path_of(h, "lock", path, sizeof path);
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    /* The holder's pid, for people: the lock itself is what counts. */
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
        /* Not fatal: the lock is held. */
    }
    return fd;
}

/* Opens STATE_DIR/hwm, creating it (allocated, fsynced with its directory)
 * when missing. -1 with errno; *fresh tells whether it was created. */
static int open_mark(const idms_hwm *h, bool *fresh)
{
    char path[1100];
    path_of(h, "hwm", path, sizeof path);
    *fresh = false;
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 || errno != ENOENT)
        return fd;
    fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int rc = posix_fallocate(fd, 0, MARK_LEN);
    if (rc != 0) {
        close(fd);
        unlink(path);
        errno = rc;
        return -1;
    }
    *fresh = true;
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

/* Whether fd is still the file at STATE_DIR/hwm. */
static bool still_there(const idms_hwm *h, int fd)
{
    char path[1100];
    path_of(h, "hwm", path, sizeof path);
    struct stat a, b;
    return fstat(fd, &a) == 0 && a.st_nlink > 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

/* ---- the write, on the thread pool ------------------------------------- */

static void remake(idms_hwm *h)
{
    /* The directory vanished or was replaced: make it again, with a lock
     * of our own, and a new file. */
    if (mkdirs(h->dir) != 0) {
        snprintf(h->work_why, sizeof h->work_why, "the state directory %s is gone and cannot be "
                 "made again: %s", h->dir, strerror(errno));
        return;
    }
    int lock = take_lock(h);
    if (lock < 0) {
        snprintf(h->work_why, sizeof h->work_why, "the state directory %s was replaced and %s",
                 h->dir, errno == EWOULDBLOCK ? "another idmintd now holds it"
                                              : strerror(errno));
        return;
    }
    bool fresh;
    int fd = open_mark(h, &fresh);
    if (fd < 0 || write_mark(fd, h->target_ms) != 0 || fsync_dir(h->dir) != 0) {
        snprintf(h->work_why, sizeof h->work_why, "cannot write the time high-water mark in %s: %s",
                 h->dir, strerror(errno));
        if (fd >= 0)
            close(fd);
        close(lock);
        return;
    }
    close(h->fd);
    close(h->lock_fd);
    h->fd = fd;
    h->lock_fd = lock;
    h->work_why[0] = '\0';
    h->work_remade = true;
}

static void on_work(uv_work_t *w)
{
    idms_hwm *h = w->data;
    h->work_why[0] = '\0';
    h->work_remade = false;
    if (h->work_check_only) {
        /* The periodic look: is the durable mark still where a restart
         * would read it? */
        if (!still_there(h, h->fd))
            remake(h);
        return;
    }
    if (write_mark(h->fd, h->target_ms) != 0) {
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
    if (!still_there(h, h->fd))
        remake(h);
}

static void request_write(idms_server *s, int64_t target);

static void on_retry(uv_timer_t *t)
{
    idms_server *s = t->data;
    s->hwm.retry_armed = false;
    if (s->hwm.failing && !s->hwm.in_flight && !s->draining)
        request_write(s, idms_clock_ms() + s->opt.reserve_ms);
}

static void on_work_done(uv_work_t *w, int status)
{
    idms_hwm *h = w->data;
    idms_server *s = h->server;
    h->in_flight = false;
    if (status == 0 && h->work_why[0] == '\0') {
        if (h->work_remade)
            idms_log(IDMS_LOG_WARN, "the state directory %s was removed or replaced: made it again, "
                     "with the lock and the mark", h->dir);
        if (!h->work_check_only)
            s->metrics.reserve_writes++;
        if (h->target_ms > h->durable_ms) {
            h->durable_ms = h->target_ms;
            idms_node_apply_ceiling(s);
            idm_gen_set_ceiling(s->gen, h->durable_ms);
        }
        if (h->failing) {
            h->failing = false;
            h->why[0] = '\0';
            idms_log(IDMS_LOG_INFO, "the time high-water mark is durable again");
        }
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
    /* Parked requests go on: minted now, or refused with the reason. */
    idms_conn_wake_ceiling(s);
}

static void queue_work(idms_server *s, int64_t target, bool check_only)
{
    idms_hwm *h = &s->hwm;
    if (h->in_flight)
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
    /* A coordinator's slot gets its mark from the lease thread (lease.h). */
    if (s->node.coord == IDMS_NODE_COORD)
        idms_lease_need(&s->node.lease, now_ms, at_ceiling);
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

static int read_mark(idms_hwm *h, int64_t *mark)
{
    uint8_t rec[MARK_LEN];
    ssize_t r = pread(h->fd, rec, sizeof rec, 0);
    *mark = 0;
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
    if (zero) /* allocated but never written: a crash while creating it */
        return 0;
    idms_log(IDMS_LOG_ERROR,
             "%s/hwm is damaged (%zd bytes, not an idmintd high-water mark); remove it only "
             "if no IDs were minted after the clock's current time",
             h->dir, r);
    return -1;
}

int idms_hwm_open(idms_server *s)
{
    idms_hwm *h = &s->hwm;
    h->server = s;
    h->fd = h->lock_fd = -1;
    h->durable_ms = INT64_MAX;
    if (s->opt.state_dir[0] == '\0')
        return 0;
    h->enabled = true;
    snprintf(h->dir, sizeof h->dir, "%s", s->opt.state_dir);
    if (mkdirs(h->dir) != 0) {
        idms_log(IDMS_LOG_ERROR, "cannot create state directory %s: %s", h->dir, strerror(errno));
        return 1;
    }
    h->lock_fd = take_lock(h);
    if (h->lock_fd < 0) {
        if (errno == EWOULDBLOCK)
            idms_log(IDMS_LOG_ERROR, "state directory %s is in use by another idmintd (it holds "
                     "%s/lock); give each server its own --state-dir", h->dir, h->dir);
        else
            idms_log(IDMS_LOG_ERROR, "cannot lock state directory %s: %s", h->dir, strerror(errno));
        return 1;
    }
    bool fresh;
    h->fd = open_mark(h, &fresh);
    if (h->fd < 0) {
        idms_log(IDMS_LOG_ERROR, "cannot open %s/hwm: %s", h->dir, strerror(errno));
        return 1;
    }
    if (!fresh && read_mark(h, &h->resume_ms) != 0)
        return 1;
    /* An earlier holder of the node may have minted up to its slot's mark
     * (another state directory): resume above that too. */
    int64_t slot_mark = idms_node_mark_ms(s);
    if (slot_mark > h->resume_ms)
        h->resume_ms = slot_mark;
    /* The first mark, durable before anything is minted. */
    int64_t now = idms_clock_ms(), base = h->resume_ms > now ? h->resume_ms : now;
    h->target_ms = base + s->opt.reserve_ms;
    if (write_mark(h->fd, h->target_ms) != 0 || (fresh && fsync_dir(h->dir) != 0)) {
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
    idm_error err = {0};
    if (h->resume_ms > 0 && idm_gen_resume_after(s->gen, h->resume_ms, &err) != IDM_OK) {
        idms_log(IDMS_LOG_ERROR, "cannot resume after the mark %" PRId64 ": %s", h->resume_ms,
                 err.msg);
        return 1;
    }
    idms_node_apply_ceiling(s);
    idm_gen_set_ceiling(s->gen, h->durable_ms);
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
    int64_t hlc_used = idms_hlc_used_ms(s); /* stamps count too (hlc.h) */
    if (hlc_used > used)
        used = hlc_used;
    if (used < s->hwm.resume_ms)
        used = s->hwm.resume_ms;
    return used;
}

void idms_hwm_close(idms_server *s)
{
    idms_hwm *h = &s->hwm;
    if (!h->enabled)
        return;
    if (h->fd >= 0) {
        int64_t used = idms_hwm_used_ms(s);
        if (!h->failing && used < h->durable_ms && write_mark(h->fd, used) == 0)
            idms_log(IDMS_LOG_INFO, "time high-water mark set to the last time used");
        close(h->fd);
        h->fd = -1;
    }
    if (h->lock_fd >= 0) {
        close(h->lock_fd);
        h->lock_fd = -1;
    }
}
