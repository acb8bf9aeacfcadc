/*
 * hwm.c - the state directory and the owner of the durable ceiling (see
 * hwm.h for the guarantee), over libidmint's mark in split mode.
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
 *   mark  the library's mark file (include/idmint/mark.h), locked by it.
 *   hwm   left by idmintd before 0.3 (16 bytes: "IDMHWM01" and the mark,
 *         a little-endian int64 of Unix ms): read at start-up, and removed
 *         once the first mark of this run is durable in mark.
 * At start-up the marks are read, and the first one written only once the
 * generators have taken the mark found (idms_hwm_commit): a start refused
 * (a mark past the layout's end, say) leaves the directory as it was.
 *
 * A write runs on the executor's thread (hwm_loop.c: libuv's thread pool):
 * the loop asks idm_mark_want, the worker runs idm_mark_write
 * (idms_hwm_work), and the loop's completion (idms_hwm_work_done) passes
 * the result to idm_mark_commit, which raises the ceilings only once the
 * bytes are on disk. Only one write is in flight. The worker first checks
 * (and every second without a write, too) that the directory is still
 * where a restart looks and still its own (keep_dir); the write counts
 * only once that is so:
 *   - lock removed: made again and locked.
 *   - the directory removed or replaced (another inode at the path): made
 *     again and locked anew, with lock and (by the mark's write) mark.
 *   - mark removed or replaced: the library makes it again (or takes a
 *     replacement over) with the mark being written (idm_mark_relinked);
 *     a file with a later mark put there, or one locked, is another
 *     idmintd's.
 * A lock refused means another idmintd has the directory: this one stops
 * minting past its durable mark for good (not ready, no more writes, no
 * shrinking at exit), so that neither can lower the other's mark. Any
 * other failure (ENOSPC making the mark again, a file where the directory
 * was) is logged once with its reason, makes /readyz false and is retried
 * every second while there is demand; requests that reach the ceiling
 * meanwhile get 503.
 */
#include "hwm.h"
#include "idmint_coord.h"
#include "log.h"
#include "pause.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define OLD_MARK_LEN 16 /* STATE_DIR/hwm before 0.3 */
#define RETRY_MS     1000

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

/* The mark in a STATE_DIR/hwm left by idmintd before 0.3: 0 with *mark (0
 * for a file allocated but never written), or -1 when it is no mark of
 * that kind (*len: the bytes read). */
static int read_old_mark(int fd, int64_t *mark, ssize_t *len)
{
    uint8_t rec[OLD_MARK_LEN];
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
    return fstat(fd, &a) == 0 && fstatat(dir, name, &b, follow ? 0 : AT_SYMLINK_NOFOLLOW) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* ---- the write, on the thread pool ------------------------------------- */

enum { REMADE_DIR = 1, REMADE_LOCK = 2, REMADE_MARK = 4, REPLACED_MARK = 8 };

/* what (the directory, or its lock file) was not found as we left it, and
 * could not be made again and locked: another idmintd holds it
 * (EWOULDBLOCK: h->work_taken), or errno says why. */
static void lock_failed(idms_hwm *h, const char *what)
{
    if (errno == EWOULDBLOCK) {
        snprintf(h->work_why, sizeof h->work_why,
                 "%s was replaced, and another idmintd holds the "
                 "new one",
                 what);
        h->work_taken = true;
    } else {
        snprintf(h->work_why, sizeof h->work_why, "%s is gone and cannot be made again: %s", what,
                 strerror(errno));
    }
}

/* Makes sure that the directory is still ours and where a restart looks:
 * a removed lock file is made again under the directory's lock, held
 * throughout; a directory removed or replaced is made again and locked
 * anew (the mark's write then makes the mark file in it). A lock refused
 * means another idmintd has the directory now (h->work_taken). Fills
 * h->work_why on failure; then the descriptors are left as they were. */
static void keep_dir(idms_hwm *h)
{
    int dir = h->dir_fd, lock = h->lock_fd;
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
            if (dir != h->dir_fd)
                close(dir);
            h->work_remade = 0;
            return;
        }
        h->work_remade |= REMADE_LOCK;
    }
    if (lock != h->lock_fd)
        close(h->lock_fd);
    if (dir != h->dir_fd)
        close(h->dir_fd);
    h->dir_fd = dir;
    h->lock_fd = lock;
}

/* What the mark's write (or look) did about its file, as REMADE_*. */
static void note_relinked(idms_hwm *h, int rc, const idm_error *err)
{
    unsigned r = idm_mark_relinked(h->mark);
    if (r & IDM_MARK_REMADE)
        h->work_remade |= REMADE_MARK;
    if (r & IDM_MARK_REPLACED)
        h->work_remade |= REPLACED_MARK;
    if (rc != IDM_OK) {
        snprintf(h->work_why, sizeof h->work_why, "%s", err->msg);
        h->work_taken = (r & IDM_MARK_TAKEN) != 0;
    }
}

void idms_hwm_work(idms_hwm *h)
{
    h->work_why[0] = '\0';
    h->work_remade = 0;
    h->work_taken = false;
    /* First, also for the periodic look: is the directory still where a
     * restart would read it, and still ours? (A write into a file another
     * idmintd now shares could lower its mark.) */
    keep_dir(h);
    if (h->work_why[0] != '\0')
        return;
    idm_error err = {0};
    if (h->work_check_only) {
        note_relinked(h, idm_mark_check(h->mark, &err), &err);
        return;
    }
    int rc = idm_mark_write(h->mark, h->target_ms, &h->work_durable, &err);
    note_relinked(h, rc, &err);
    if (rc != IDM_OK)
        return;
    /* The node's slot carries the mark to whoever holds the node next:
     * written before the ceiling passes it, as the state directory's. */
    if (h->work_slot != NULL && idmc_slot_record_mark(h->work_slot, h->work_durable) != 0)
        snprintf(h->work_why, sizeof h->work_why,
                 "cannot record the time high-water mark in the node's slot: %s", strerror(errno));
}

static void queue_work(idms_hwm *h, int64_t target, bool check_only);

static bool draining(const idms_hwm *h)
{
    return h->cfg.draining != NULL && *h->cfg.draining;
}

void idms_hwm_retry(idms_hwm *h)
{
    h->retry_armed = false;
    int64_t target;
    if (h->failing && !h->in_flight && !draining(h) &&
        idm_mark_want(h->mark, idms_clock_ms(), true, &target))
        queue_work(h, target, false);
}

/* What keep_dir and the mark's write made again, said once. */
static void log_remade(const idms_hwm *h, int64_t written)
{
    char mark[IDM_RFC3339_CAP];
    if (idm_time_format(written, mark, sizeof mark) != IDM_OK)
        snprintf(mark, sizeof mark, "%" PRId64, written);
    if (h->work_remade & REMADE_DIR) {
        idms_log(IDMS_LOG_WARN,
                 "the state directory %s was removed or replaced: made it again, "
                 "with the lock and the mark (%s)",
                 h->dir, mark);
        return;
    }
    if (h->work_remade & REMADE_LOCK)
        idms_log(IDMS_LOG_WARN,
                 "%s/lock was removed: made it again and locked it (the lock on the "
                 "directory itself, held throughout, is what keeps other idmintd processes out)",
                 h->dir);
    if (h->work_remade & (REMADE_MARK | REPLACED_MARK))
        idms_log(IDMS_LOG_WARN,
                 "%s was %s: made it again under the lock held, with the mark "
                 "(%s)",
                 h->path, h->work_remade & REMADE_MARK ? "removed" : "replaced", mark);
}

void idms_hwm_work_done(idms_hwm *h, bool cancelled)
{
    int status = cancelled ? -1 : 0;
    bool check = h->work_check_only, ok = status == 0 && h->work_why[0] == '\0';
    h->in_flight = false;
    /* The write's token goes back: committed (the ceilings rise) or not. */
    if (!check && ok)
        idm_mark_commit(h->mark, h->work_durable);
    else if (!check)
        idm_mark_abort(h->mark);
    if (status == 0)
        log_remade(h, check ? idm_mark_durable_ms(h->mark) : h->target_ms);
    if (ok) {
        if (!check)
            h->writes++;
        if (h->failing) {
            h->failing = false;
            h->why[0] = '\0';
            idms_log(IDMS_LOG_INFO, "the time high-water mark is durable again");
        }
    } else if (status == 0 && h->work_taken) {
        /* For good: whatever this one writes now could lower the other's
         * mark, and the other's stop could lower this one's. No more
         * writes, and none at exit (the mark knows: the write failed). */
        h->write_errors++;
        h->taken = true;
        h->failing = true;
        snprintf(h->why, sizeof h->why, "%s", h->work_why);
        idms_log(IDMS_LOG_ERROR,
                 "%s; not ready, and no ID past %" PRId64 " (Unix ms) until "
                 "restarted; the mark is left as it is",
                 h->work_why, idm_mark_durable_ms(h->mark));
    } else {
        h->write_errors++;
        const char *why = status == 0 ? h->work_why : "write cancelled";
        if (!h->failing)
            idms_log(IDMS_LOG_ERROR,
                     "%s; not ready, and no ID past %" PRId64 " (Unix ms) until it can be written",
                     why, idm_mark_durable_ms(h->mark));
        h->failing = true;
        snprintf(h->why, sizeof h->why, "%s", why);
        if (!h->retry_armed && !draining(h)) {
            h->retry_armed = true;
            h->cfg.exec.retry_in(h->cfg.exec.ctx, RETRY_MS);
        }
    }
    /* The node's limit follows, and parked requests go on: minted now, or
     * refused with the reason. */
    h->cfg.on_ceiling(h->cfg.ctx);
}

/* target: the mark idm_mark_want handed out (the write token is held), or
 * for a look the durable mark. */
static void queue_work(idms_hwm *h, int64_t target, bool check_only)
{
    h->target_ms = target;
    h->work_check_only = check_only;
    h->work_slot = h->slot;
    /* In flight before it is queued: an executor may finish it at once. */
    h->in_flight = true;
    if (h->cfg.exec.queue(h->cfg.exec.ctx) != 0) {
        h->in_flight = false;
        if (!check_only)
            idm_mark_abort(h->mark);
    }
}

void idms_hwm_check(idms_hwm *h)
{
    /* A restart would not find a mark that was removed: looked at even
     * while no write is due. */
    if (h->enabled && !h->failing && !h->in_flight && !h->taken)
        queue_work(h, idm_mark_durable_ms(h->mark), true);
}

/* ---- the loop side ------------------------------------------------------ */

void idms_hwm_need(idms_hwm *h, int64_t now_ms, bool at_ceiling)
{
    /* Also while draining: parked requests still need the mark. */
    if (!h->enabled || h->in_flight || h->taken)
        return;
    if (h->failing && !at_ceiling)
        return; /* the retry timer tries again */
    int64_t target;
    if (idm_mark_want(h->mark, now_ms, at_ceiling, &target))
        queue_work(h, target, false);
}

bool idms_hwm_ready(const idms_hwm *h, idms_pause_why *w)
{
    if (!h->failing)
        return true;
    w->cause = IDMS_PAUSE_MARK;
    snprintf(w->why, sizeof w->why, "%.880s", h->why);
    snprintf(w->ends, sizeof w->ends,
             "a write of the mark to the state directory succeeding (tried again every %d ms)",
             RETRY_MS);
    w->eta_ms = -1;
    return false;
}

int64_t idms_hwm_durable_ms(const idms_hwm *h)
{
    return h->enabled ? idm_mark_durable_ms(h->mark) : INT64_MAX;
}

void idms_hwm_set_limit(idms_hwm *h, int64_t limit_ms)
{
    h->limit_ms = limit_ms;
    if (h->mark != NULL)
        idm_mark_set_limit(h->mark, limit_ms);
    else if (h->sf != NULL)
        idm_snowflake_set_ceiling(h->sf, limit_ms); /* min(no mark, limit) */
}

int idms_hwm_adopt_snowflake(idms_hwm *h, idm_snowflake *old, idm_snowflake *sf)
{
    idm_error err = {0};
    if (h->mark == NULL) {
        idm_snowflake_set_ceiling(sf, h->limit_ms);
        h->sf = sf;
        return 0;
    }
    if (old != NULL && idm_mark_detach(h->mark, old, &err) != IDM_OK) {
        idms_log(IDMS_LOG_ERROR, "cannot detach the old snowflake generator: %s", err.msg);
        return -1;
    }
    if (idm_mark_attach_snowflake(h->mark, sf, &err) != IDM_OK) {
        idms_log(IDMS_LOG_ERROR, "cannot attach the snowflake generator to the mark: %s", err.msg);
        if (old != NULL && idm_mark_attach_snowflake(h->mark, old, &err) != IDM_OK)
            idms_log(IDMS_LOG_ERROR, "cannot attach the old one again: %s", err.msg);
        return -1;
    }
    h->sf = sf;
    return 0;
}

int idms_hwm_attach_hlc(idms_hwm *h, idm_hlc *hlc)
{
    idm_error err = {0};
    if (h->mark != NULL && idm_mark_attach_hlc(h->mark, hlc, &err) != IDM_OK) {
        idms_log(IDMS_LOG_ERROR, "cannot attach the hybrid logical clock to the mark: %s", err.msg);
        return -1;
    }
    return 0;
}

/* A resume mark past the layout's last time unit: no snowflake could ever
 * be minted above it, and the generator refuses it. Said here, before
 * anything is written, with where the mark is and what to do. Returns 0,
 * or 1 after logging. */
static int check_layout_end(const idms_hwm *h, int64_t file_mark, const char *file)
{
    const idm_sf_layout *l = h->cfg.layout;
    if (l == NULL)
        return 0; /* no snowflakes */
    int64_t last = idm_sf_layout_max_unix_ms(l), mark = h->resume_ms;
    if (mark == 0 || mark <= last || mark - last < l->unit_ms)
        return 0; /* none, or one the layout can mint above */
    char when[IDM_RFC3339_CAP], end[IDM_RFC3339_CAP];
    if (idm_time_format(mark, when, sizeof when) != IDM_OK)
        snprintf(when, sizeof when, "%" PRId64, mark);
    if (idm_time_format(last + l->unit_ms, end, sizeof end) != IDM_OK)
        snprintf(end, sizeof end, "%" PRId64, last + l->unit_ms);
    if (mark == file_mark)
        idms_log(
            IDMS_LOG_ERROR,
            "the time high-water mark in %s/%s, %s (Unix ms %" PRId64 "), is "
            "past the end of layout %s (%s): no snowflake could be minted above it, and nothing "
            "was written. If no IDs were minted after the clock's current time (a clock far "
            "ahead wrote it), remove %s/%s; otherwise use a --layout or --epoch that reaches "
            "past the mark",
            h->dir, file, when, mark, h->cfg.layout_name, end, h->dir, file);
    else
        idms_log(IDMS_LOG_ERROR,
                 "the time high-water mark recorded in the slot of node %" PRIu64
                 ", %s (Unix ms %" PRId64
                 "), is past the end of layout %s (%s): no snowflake could "
                 "be minted above it, and nothing was written; use a --layout or --epoch that "
                 "reaches past the mark (idmint lease list shows the slot)",
                 h->cfg.slot_node, when, mark, h->cfg.layout_name, end);
    return 1;
}

void idms_hwm_resume_above(idms_hwm *h, int64_t ms, int from)
{
    if (ms > h->resume_ms) {
        h->resume_ms = ms;
        h->resume_from = from;
    }
}

/* STATE_DIR/hwm of idmintd before 0.3, if there: its mark (0 for none),
 * or -1 after logging that it is damaged or cannot be read. */
static int64_t old_mark(idms_hwm *h)
{
    int fd = openat(h->dir_fd, "hwm", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT)
        return 0;
    if (fd < 0) {
        idms_log(IDMS_LOG_ERROR, "cannot open %s/hwm: %s", h->dir, strerror(errno));
        return -1;
    }
    int64_t mark = 0;
    ssize_t len;
    int rc = read_old_mark(fd, &mark, &len);
    close(fd);
    if (rc != 0) {
        idms_log(IDMS_LOG_ERROR,
                 "%s/hwm is damaged (%zd bytes, not an idmintd high-water mark); remove it only "
                 "if no IDs were minted after the clock's current time",
                 h->dir, len);
        return -1;
    }
    h->old_file = true;
    return mark;
}

int idms_hwm_open(idms_hwm *h, const idms_hwm_config *cfg)
{
    h->cfg = *cfg;
    h->lock_fd = h->dir_fd = -1;
    h->limit_ms = INT64_MAX;
    if (cfg->state_dir == NULL || cfg->state_dir[0] == '\0')
        return 0;
    h->enabled = true;
    snprintf(h->dir, sizeof h->dir, "%s", cfg->state_dir);
    snprintf(h->path, sizeof h->path, "%s/mark", h->dir);
    if (mkdirs(h->dir) != 0) {
        idms_log(IDMS_LOG_ERROR, "cannot create state directory %s: %s", h->dir, strerror(errno));
        return 1;
    }
    h->dir_fd = lock_dir(h->dir);
    if (h->dir_fd >= 0)
        h->lock_fd = lock_file(h->dir_fd);
    if (h->lock_fd < 0) {
        if (errno == EWOULDBLOCK)
            idms_log(IDMS_LOG_ERROR,
                     "state directory %s is in use by another idmintd (it holds "
                     "%s%s); give each server its own --state-dir",
                     h->dir, h->dir_fd < 0 ? "a lock on the directory" : h->dir,
                     h->dir_fd < 0 ? "" : "/lock");
        else
            idms_log(IDMS_LOG_ERROR, "cannot lock state directory %s: %s", h->dir, strerror(errno));
        return 1;
    }
    int64_t file_old = old_mark(h);
    if (file_old < 0)
        return 1;
    idm_mark_config mc;
    idm_mark_config_init(&mc);
    mc.reserve_ms = cfg->reserve_ms;
    mc.flags = IDM_MARK_SPLIT;
    idm_error err = {0};
    if (idm_mark_open(&h->mark, h->path, &mc, &err) != IDM_OK) {
        idms_log(IDMS_LOG_ERROR, "%s", err.msg);
        return 1;
    }
    int64_t file_mark = idm_mark_resume_ms(h->mark);
    idms_hwm_resume_above(h, file_mark, IDMS_RESUME_STATE_DIR);
    idms_hwm_resume_above(h, file_old, IDMS_RESUME_STATE_DIR);
    /* An earlier holder of the node may have minted up to its slot's mark
     * (another state directory): resume above that too. */
    idms_hwm_resume_above(h, cfg->slot_mark_ms, IDMS_RESUME_SLOT);
    if (check_layout_end(h, file_old > file_mark ? file_old : file_mark,
                         file_old > file_mark ? "hwm" : "mark") != 0)
        return 1;
    if (h->resume_ms > 0 && idm_gen_resume_after(cfg->gen, h->resume_ms, &err) != IDM_OK) {
        idms_log(IDMS_LOG_ERROR, "cannot resume after the mark %" PRId64 ": %s", h->resume_ms,
                 err.msg);
        return 1;
    }
    if (idm_mark_attach_gen(h->mark, cfg->gen, &err) != IDM_OK) {
        idms_log(IDMS_LOG_ERROR, "cannot attach the generators to the mark: %s", err.msg);
        return 1;
    }
    return 0;
}

int idms_hwm_commit(idms_hwm *h)
{
    if (!h->enabled)
        return 0;
    /* The first mark, durable before anything is minted: a reserve past
     * the clock or the mark resumed above, whichever is later. */
    idm_error err = {0};
    int64_t durable = 0;
    if (!idm_mark_want(h->mark, h->resume_ms, true, &h->target_ms)) {
        idms_log(IDMS_LOG_ERROR, "the first write of %s could not start", h->path);
        return 1;
    }
    if (idm_mark_write(h->mark, h->target_ms, &durable, &err) != IDM_OK) {
        idm_mark_abort(h->mark);
        idms_log(IDMS_LOG_ERROR, "cannot write the time high-water mark: %s", err.msg);
        return 1;
    }
    if (h->slot != NULL && idmc_slot_record_mark(h->slot, durable) != 0) {
        idm_mark_abort(h->mark);
        idms_log(IDMS_LOG_ERROR,
                 "cannot record the time high-water mark in the slot of node %" PRIu64 ": %s",
                 idmc_slot_node(h->slot), strerror(errno));
        return 1;
    }
    idm_mark_commit(h->mark, durable);
    h->writes++;
    if (h->old_file) {
        /* Carried over: the mark file holds a later mark now. */
        if (unlinkat(h->dir_fd, "hwm", 0) == 0 && fsync(h->dir_fd) == 0)
            idms_log(IDMS_LOG_INFO,
                     "%s/hwm (the mark of idmintd before 0.3) carried over to %s "
                     "and removed",
                     h->dir, h->path);
        h->old_file = false;
    }
    h->cfg.on_ceiling(h->cfg.ctx);
    return 0;
}

void idms_hwm_set_slot(idms_hwm *h, struct idmc_slot *slot)
{
    h->slot = slot;
}

bool idms_hwm_enabled(const idms_hwm *h)
{
    return h->enabled;
}

bool idms_hwm_busy(const idms_hwm *h)
{
    return h->in_flight;
}

bool idms_hwm_failing(const idms_hwm *h)
{
    return h->enabled && h->failing;
}

int64_t idms_hwm_resume_ms(const idms_hwm *h, int *from)
{
    if (from != NULL)
        *from = h->resume_from;
    return h->resume_ms;
}

int64_t idms_hwm_used_ms(const idms_hwm *h)
{
    /* Everything handed out lies at or below both generators' high water
     * (and at or below the durable mark). */
    int64_t used = h->sf != NULL ? idm_snowflake_high_water_ms(h->sf) : 0;
    int64_t gen_used = h->cfg.gen != NULL ? idm_gen_high_water_ms(h->cfg.gen) : 0;
    if (gen_used > used)
        used = gen_used;
    if (used < h->resume_ms)
        used = h->resume_ms;
    return used;
}

void idms_hwm_close(idms_hwm *h)
{
    if (!h->enabled)
        return;
    if (h->mark != NULL) {
        /* Where a restart reads it: what was removed since the last look
         * is made again, then the mark is lowered to the time used (the
         * mark leaves it as it is when its last write failed). */
        int64_t durable = idm_mark_durable_ms(h->mark), used = idm_mark_used_ms(h->mark);
        h->work_why[0] = '\0';
        h->work_remade = 0;
        if (!h->failing)
            keep_dir(h);
        if (h->work_why[0] != '\0')
            idms_log(IDMS_LOG_ERROR, "%s; the mark is left as it is", h->work_why);
        else if (!h->failing)
            log_remade(h, used);
        /* Failing, or the directory another's: close is to leave the file
         * (which may now be another idmintd's) as it is. */
        if (h->failing || h->work_why[0] != '\0')
            idm_mark_abort(h->mark);
        idm_error err = {0};
        if (idm_mark_close(h->mark, &err) != IDM_OK)
            idms_log(IDMS_LOG_WARN, "%s", err.msg);
        else if (!h->failing && used < durable)
            idms_log(IDMS_LOG_INFO, "time high-water mark set to the last time used");
        h->mark = NULL;
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
