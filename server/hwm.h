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
 * run on libuv's thread pool, ahead of need (idm_mark_want: when less than
 * half of --reserve is left), never on the loop; idm_mark_commit raises
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
 * made again (hwm.c; the mark file by the library). Not installed.
 */
#ifndef IDMS_HWM_H
#define IDMS_HWM_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include <idmint/mark.h>

struct idms_server;
struct idmc_slot;

/* Whose mark the generators resume above (what a waiting server names). */
enum { IDMS_RESUME_NONE, IDMS_RESUME_STATE_DIR, IDMS_RESUME_SLOT, IDMS_RESUME_SELF };

typedef struct idms_hwm {
    struct idms_server *server;
    bool enabled; /* a --state-dir is configured */
    int dir_fd;   /* STATE_DIR, locked: the exclusion */
    int lock_fd;  /* STATE_DIR/lock (locked too) */
    char dir[1024];
    char path[1040];   /* STATE_DIR/mark */
    idm_mark *mark;    /* NULL without a state directory */
    bool old_file;     /* STATE_DIR/hwm (before 0.3) found: removed after the first write */
    int64_t resume_ms; /* the mark found at start-up, 0 = none */
    int resume_from;   /* whose mark resume_ms is: IDMS_RESUME_* */
    int64_t limit_ms;  /* the node's promise for snowflakes (idms_hwm_set_limit) */
    int64_t target_ms; /* the mark being written */
    bool in_flight;    /* a write (or a look) is on the thread pool */
    bool failing;      /* the last write failed: not ready */
    bool taken;        /* another idmintd has the directory: for good */
    char why[1400];    /* why it failed */
    bool retry_armed;
    uv_work_t work;
    uv_timer_t retry;     /* after a failure, every second */
    uv_timer_t check;     /* every second: is the mark still there? */
    bool work_check_only; /* the work only checks (and remakes) */
    unsigned work_remade; /* what the work made again (hwm.c's REMADE_*) */
    bool work_taken;      /* the work found another idmintd there */
    int64_t work_durable; /* the mark the write made durable */
    /* The node's slot (node.h) the mark is also recorded in, NULL for
     * none: node.c sets it (idms_hwm_set_slot); a write takes it on the
     * loop when it is queued (work_slot). */
    struct idmc_slot *slot;
    uint64_t slot_node; /* the node whose slot mark was resumed above (messages) */
    struct idmc_slot *work_slot;
    /* Results of the write, for the loop thread. */
    char work_why[1400];
    /* Upward news, set by main.c before idms_hwm_open: the ceilings moved
     * (a write committed), or a write ended without raising them (done,
     * or failed: h->failing): the node's limit is to follow, and the
     * requests parked on the ceiling to go on. hwm.c knows nothing of
     * either. */
    void (*on_ceiling)(struct idms_server *s);
} idms_hwm;

/* Takes the state directory (creating it, mode 0700), refusing when
 * another idmintd holds it; opens the mark (and reads a STATE_DIR/hwm left
 * by an older idmintd), refuses one past the layout's end, and sets the
 * resume point above it and above slot_mark_ms (the mark in the slot of
 * node slot_node: node.h, 0 for none); attaches s->gen. Writes no mark: the
 * snowflake generator and the hybrid logical clock are made with resume_ms
 * next (idms_hwm_adopt_snowflake, idms_hwm_attach_hlc), and idms_hwm_commit
 * writes once they have taken it. Returns 0, or 1 after logging why. */
int idms_hwm_open(struct idms_server *s, uint64_t slot_node, int64_t slot_mark_ms);
/* Raises the mark resumed above to ms if it is higher, recording whose it
 * is (IDMS_RESUME_*); a tie keeps the first source. */
void idms_hwm_resume_above(idms_hwm *h, int64_t ms, int from);
/* A new snowflake generator (made with resume_unix_ms = resume_ms) takes
 * old's place under the mark (old may be NULL; it is detached, not
 * freed), with the ceiling the mark and the limit give it. 0, or -1 after
 * logging why. */
int idms_hwm_adopt_snowflake(struct idms_server *s, idm_snowflake *old, idm_snowflake *sf);
/* The hybrid logical clock, attached to the mark (0, or -1 after logging). */
int idms_hwm_attach_hlc(struct idms_server *s, idm_hlc *h);
/* The node's promise for snowflakes (a slot's recorded mark, a lease's
 * ceiling; INT64_MAX: none): the mark's limit, or without a state
 * directory the snowflakes' ceiling itself. */
void idms_hwm_set_limit(struct idms_server *s, int64_t limit_ms);
/* The mark last made durable: INT64_MAX without a state directory. */
int64_t idms_hwm_durable_ms(const struct idms_server *s);
/* Makes the first mark durable, in the state directory and in the node's
 * slot (synchronously: the loop is not running yet), which raises the
 * generators' ceilings to it; then on_ceiling. Returns 0, or 1 after
 * logging why. */
int idms_hwm_commit(struct idms_server *s);
/* Starts the loop-side machinery (the retry timer). */
void idms_hwm_start(struct idms_server *s);
/* Minting has reached now_ms: starts a background write when less than
 * half of the reserve is left above it, or the ceiling was reached (what
 * minting calls is idms_node_need, which also asks the lease: node.h). */
void idms_hwm_need(struct idms_server *s, int64_t now_ms, bool at_ceiling);
/* Whether the mark can be made durable; why is the reason when not. */
bool idms_hwm_ready(struct idms_server *s, char *why, size_t cap);
/* After the loop has stopped: shrinks the mark to the latest time the
 * attached generators handed out (not when a write failed or another
 * idmintd took the directory), so that an ordinary restart does not wait,
 * and releases the directory. */
void idms_hwm_close(struct idms_server *s);
/* The node's slot that the mark is recorded in from the next write on
 * (NULL: none). A slot given up stays in use until idms_hwm_busy is
 * false. */
void idms_hwm_set_slot(idms_hwm *h, struct idmc_slot *slot);
/* Whether a --state-dir is configured. */
bool idms_hwm_enabled(const idms_hwm *h);
/* Whether a write or a look is on the thread pool (it may be using the
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
int64_t idms_hwm_used_ms(struct idms_server *s);
/* The system clock in Unix ms (0 when it cannot be read). */
int64_t idms_clock_ms(void);

#endif
