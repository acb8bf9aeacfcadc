/*
 * hwm.h - the state directory and the durable ceiling's owner (hwm.c).
 *
 * The invariant idmintd keeps, for every time-ordered format: no ID in any
 * reply has a time above the mark that was durable (written and fsynced)
 * when the reply was sent. The mark is libidmint's (include/idmint/mark.h:
 * STATE_DIR/mark, two checksummed slots, fdatasync), used in its split
 * mode, and the generators enforce it themselves: every one of them
 * (UUIDv7/ULID/KSUID/TypeID, the snowflake's, the hybrid logical clock) is
 * attached to the mark, which sets their ceilings - the durable mark, and
 * for snowflakes min(durable mark, limit), the limit being the node's
 * promise (the slot's recorded mark, the lease: node.c hands it over with
 * idms_hwm_set_limit). That rule is the mark's and nowhere else. Writes
 * run on another thread (libuv's pool: hwm_loop.c), ahead of need
 * (idm_mark_want: when less than half of --reserve is left), never on
 * the loop; idm_mark_commit raises
 * the ceilings in the completion, once the bytes are on disk; a request
 * that reaches the ceiling meanwhile is parked until then. At start-up the
 * mark found on disk is where the generators resume, so a restart after a
 * crash or a power loss never repeats (snowflakes) or reorders (UUIDv7,
 * ULID, KSUID) what was handed out, for a clock set back by up to the
 * reserve. A STATE_DIR/hwm of idmintd before 0.3 (16 bytes) is read as
 * well and removed once the first mark is durable.
 *
 * The directory is held with a lock on the directory itself and on its
 * lock file (flock, dropped by the kernel when the holder dies): one
 * idmintd per state directory; what is removed under a running server is
 * made again (hwm.c; the mark file by the library).
 *
 * hwm.c has no libuv and no server.h: the thread its writes run on and
 * the timers of its retries and looks are an executor it is given
 * (idms_hwm_exec: hwm_loop.c's over libuv's thread pool and timers; the
 * unit test's runs them when it chooses), and what it needs of the rest
 * is in its configuration (idms_hwm_config). Not installed.
 */
#ifndef IDMS_HWM_H
#define IDMS_HWM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <idmint/idmint.h>
#include <idmint/mark.h>

struct idms_pause_why;

struct idmc_slot;

/* Whose mark the generators resume above (what a waiting server names). */
enum { IDMS_RESUME_NONE, IDMS_RESUME_STATE_DIR, IDMS_RESUME_SLOT, IDMS_RESUME_SELF };

/* Where the mark's writes and looks run, and its timers (hwm_loop.c over
 * libuv). Each gets ctx. */
typedef struct idms_hwm_exec {
    void *ctx;
    /* Runs idms_hwm_work(h) on another thread, then idms_hwm_work_done(h,
     * cancelled) on the loop's: 0, or -1 when it cannot (nothing runs). */
    int (*queue)(void *ctx);
    /* Calls idms_hwm_retry(h) once, ms from now, on the loop's thread. */
    void (*retry_in)(void *ctx, uint64_t ms);
} idms_hwm_exec;

/* What idms_hwm_open needs of the server. */
typedef struct idms_hwm_config {
    const char *state_dir;       /* NULL or "": none (no mark) */
    int64_t reserve_ms;          /* --reserve */
    const idm_sf_layout *layout; /* the snowflake layout, for a mark past its end */
    const char *layout_name;
    idm_gen *gen;           /* attached to the mark (the snowflake's and HLC's come later) */
    uint64_t slot_node;     /* the node whose slot's mark is slot_mark_ms */
    int64_t slot_mark_ms;   /* the mark in that slot (node.h), 0 for none */
    const bool *draining;   /* the server is draining: no retries armed */
    idms_hwm_exec exec;
    /* Upward news: the ceilings moved (a write committed), or a write
     * ended without raising them (done, or failed: idms_hwm_failing): the
     * node's limit is to follow, and the requests parked on the ceiling to
     * go on. hwm.c knows nothing of either. */
    void (*on_ceiling)(void *ctx);
    void *ctx;
} idms_hwm_config;

typedef struct idms_hwm {
    idms_hwm_config cfg;
    bool enabled; /* a --state-dir is configured */
    int dir_fd;   /* STATE_DIR, locked: the exclusion */
    int lock_fd;  /* STATE_DIR/lock (locked too) */
    char dir[1024];
    char path[1040];   /* STATE_DIR/mark */
    idm_mark *mark;    /* NULL without a state directory */
    idm_snowflake *sf; /* the snowflake generator in service (idms_hwm_adopt_snowflake) */
    bool old_file;     /* STATE_DIR/hwm (before 0.3) found: removed after the first write */
    int64_t resume_ms; /* the mark found at start-up, 0 = none */
    int resume_from;   /* whose mark resume_ms is: IDMS_RESUME_* */
    int64_t limit_ms;  /* the node's promise for snowflakes (idms_hwm_set_limit) */
    int64_t target_ms; /* the mark being written */
    bool in_flight;    /* a write (or a look) is on the other thread */
    bool failing;      /* the last write failed: not ready */
    bool taken;        /* another idmintd has the directory: for good */
    char why[1400];    /* why it failed */
    bool retry_armed;
    uint64_t writes;       /* marks made durable (idmint_high_water_mark_writes_total) */
    uint64_t write_errors; /* writes that failed (..._errors_total) */
    bool work_check_only; /* the work only checks (and remakes) */
    unsigned work_remade; /* what the work made again (hwm.c's REMADE_*) */
    bool work_taken;      /* the work found another idmintd there */
    int64_t work_durable; /* the mark the write made durable */
    /* The node's slot (node.h) the mark is also recorded in, NULL for
     * none: node.c sets it (idms_hwm_set_slot); a write takes it on the
     * loop when it is queued (work_slot). */
    struct idmc_slot *slot;
    struct idmc_slot *work_slot;
    /* Results of the write, for the loop thread. */
    char work_why[1400];
} idms_hwm;

/* Takes the state directory (creating it, mode 0700), refusing when
 * another idmintd holds it; opens the mark (and reads a STATE_DIR/hwm left
 * by an older idmintd), refuses one past the layout's end, and sets the
 * resume point above it and above cfg's slot mark; attaches cfg's gen.
 * Writes no mark: the snowflake generator and the hybrid logical clock
 * are made with resume_ms next (idms_hwm_adopt_snowflake,
 * idms_hwm_attach_hlc), and idms_hwm_commit writes once they have taken
 * it. Without a state directory it only keeps cfg. Returns 0, or 1 after
 * logging why. */
int idms_hwm_open(idms_hwm *h, const idms_hwm_config *cfg);
/* Raises the mark resumed above to ms if it is higher, recording whose it
 * is (IDMS_RESUME_*); a tie keeps the first source. */
void idms_hwm_resume_above(idms_hwm *h, int64_t ms, int from);
/* A new snowflake generator (made with resume_unix_ms = resume_ms) takes
 * old's place under the mark (old may be NULL; it is detached, not
 * freed), with the ceiling the mark and the limit give it. 0, or -1 after
 * logging why. */
int idms_hwm_adopt_snowflake(idms_hwm *h, idm_snowflake *old, idm_snowflake *sf);
/* The hybrid logical clock, attached to the mark (0, or -1 after logging). */
int idms_hwm_attach_hlc(idms_hwm *h, idm_hlc *hlc);
/* The node's promise for snowflakes (a slot's recorded mark, a lease's
 * ceiling; INT64_MAX: none): the mark's limit, or without a state
 * directory the snowflakes' ceiling itself. */
void idms_hwm_set_limit(idms_hwm *h, int64_t limit_ms);
/* The mark last made durable: INT64_MAX without a state directory. */
int64_t idms_hwm_durable_ms(const idms_hwm *h);
/* Makes the first mark durable, in the state directory and in the node's
 * slot (synchronously: the loop is not running yet), which raises the
 * generators' ceilings to it; then on_ceiling. Returns 0, or 1 after
 * logging why. */
int idms_hwm_commit(idms_hwm *h);
/* Minting has reached now_ms: starts a background write when less than
 * half of the reserve is left above it, or the ceiling was reached (what
 * minting calls is idms_node_need, which also asks the lease: node.h). */
void idms_hwm_need(idms_hwm *h, int64_t now_ms, bool at_ceiling);
/* The look every second (hwm_loop.c's timer): a deleted or replaced state
 * directory (or mark) is noticed even while no write is due. */
void idms_hwm_check(idms_hwm *h);
/* The executor's side: the write or look queued (on its thread), its end
 * (on the loop's: cancelled when it never ran), and a retry that came due
 * (on the loop's). */
void idms_hwm_work(idms_hwm *h);
void idms_hwm_work_done(idms_hwm *h, bool cancelled);
void idms_hwm_retry(idms_hwm *h);
/* Whether the mark can be made durable; when not, w says why and what
 * ends it (pause.h: IDMS_PAUSE_MARK). */
bool idms_hwm_ready(const idms_hwm *h, struct idms_pause_why *w);
/* After the loop has stopped: shrinks the mark to the latest time the
 * attached generators handed out (not when a write failed or another
 * idmintd took the directory), so that an ordinary restart does not wait,
 * and releases the directory. */
void idms_hwm_close(idms_hwm *h);
/* The node's slot that the mark is recorded in from the next write on
 * (NULL: none). A slot given up stays in use until idms_hwm_busy is
 * false. */
void idms_hwm_set_slot(idms_hwm *h, struct idmc_slot *slot);
/* Whether a --state-dir is configured. */
bool idms_hwm_enabled(const idms_hwm *h);
/* Whether a write or a look is on the other thread (it may be using the
 * slot that was set when it was queued). */
bool idms_hwm_busy(const idms_hwm *h);
/* Whether the state directory's last write failed (a mark that could not
 * be written is left as it is, higher, at the stop). */
bool idms_hwm_failing(const idms_hwm *h);
/* The mark the generators resume above (0 for none) and whose it is
 * (IDMS_RESUME_*; from may be NULL). */
int64_t idms_hwm_resume_ms(const idms_hwm *h, int *from);
/* The latest time the generators handed out: their high water, or the
 * mark resumed above when later (idms_used_ms adds the stamps). */
int64_t idms_hwm_used_ms(const idms_hwm *h);
/* The system clock in Unix ms (0 when it cannot be read). */
int64_t idms_clock_ms(void);

#endif
