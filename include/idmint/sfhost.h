/*
 * idmint/sfhost.h - one snowflake sequence for every process of a host
 * that names the same directory, held to a durable mark shared by them.
 *
 * For owners in which many processes (or threads) mint for one node and
 * none coordinates the others: the backends of a PostgreSQL server
 * (pg_idmint), the connections and processes writing one SQLite database
 * (idmint_sqlite), the threads of a MariaDB server (idmint_udf). Each opens
 * an idm_sfhost on the same directory, node and layout, and every ID any of
 * them mints is unique, through crashes of any of them (kill -9 at any
 * instant), restarts, reboots and clocks set back by up to max_rewind_ms.
 *
 * Files, in dir (made with mode 0700 when missing; the owner's, never
 * group or world writable):
 *
 *   snowflake-NODE-HASH.state   libidmint's host-wide state (gen.h): one
 *                               word mapped shared by every opener, advanced
 *                               only by compare-and-swap. HASH is the
 *                               FNV-1a of the layout's canonical spec, so a
 *                               preset and its spec share one file.
 *   snowflake-NODE-HASH.idmark  the durable mark (mark.h), IDM_MARK_SHARED:
 *                               no ID carries a time later than the mark
 *                               that was on disk when it was minted; the
 *                               call that reaches it writes the next reserve
 *                               (one fdatasync per reserve for the host).
 *                               Its tag is the boot of the machine
 *                               (/proc/sys/kernel/random/boot_id) in which
 *                               the state was last resumed.
 *
 * Where a new opener resumes: from the state file when it is known to hold
 * every ID minted (it exists and the mark's tag names this boot: a crash or
 * a kill leaves the mapped pages in the page cache), else from the mark (a
 * new state file, or a reboot since, which may have lost the state's last
 * writes but never a synced mark). Resuming from the mark moves the shared
 * state above it and only then writes this boot as the tag. This is the one
 * place that rule lives; owners add only how they wait and report.
 *
 * Never remove the directory while an opener still runs: it would mint
 * beside a new state.
 */
#ifndef IDMINT_SFHOST_H
#define IDMINT_SFHOST_H

#include "common.h"
#include "error.h"
#include "snowflake.h"

IDM_BEGIN_DECLS

/* Start from idm_sfhost_config_init. */
typedef struct idm_sfhost_config {
    const char *dir;          /* the directory of the files (required) */
    idm_sf_layout layout;     /* default: twitter */
    uint64_t node;            /* 0 .. the layout's largest node */
    int64_t reserve_ms;       /* the mark's reserve (default IDM_MARK_DEFAULT_RESERVE_MS) */
    int64_t max_rewind_ms;    /* a clock behind the latest time used by up to this is waited
                                 out (IDM_EAGAIN); by more, IDM_ECLOCK_REWIND (default 1000) */
    int64_t floor_unix_ms;    /* a mark known from elsewhere (an older file format the owner
                                 read): a new state resumes above it too (default 0) */
    idm_clock clock;          /* zeroed: the OS's */
    idm_allocator allocator;  /* zeroed: malloc */
} idm_sfhost_config;

typedef struct idm_sfhost idm_sfhost;

/* Zeroes cfg, sets the twitter layout and the defaults above. */
IDM_API void idm_sfhost_config_init(idm_sfhost_config *cfg);

/* Opens (or creates) the files for cfg->node and cfg->layout in cfg->dir,
 * resumes as above, and makes the generator. IDM_OK; IDM_EINVAL (no dir, a
 * node out of the layout's range, a bad setting: the message says which);
 * IDM_ENOMEM; IDM_ESTATE (a file that cannot be made, opened or is
 * refused, a damaged mark; the message names the path). Thread-safe: yes
 * (a new object). */
IDM_API IDM_NODISCARD int idm_sfhost_open(idm_sfhost **out, const idm_sfhost_config *cfg,
                                          idm_error *err);

/* The next ID, without sleeping: IDM_OK; IDM_EAGAIN with *retry_unix_ns the
 * time to call again (the layout's sequence is exhausted for this unit, or
 * the clock reads behind the latest time used by up to max_rewind_ms);
 * IDM_ECLOCK_REWIND (behind by more: err->rewind_ms says how far);
 * IDM_ESTATE (the mark could not be written, or the state file was
 * truncated). Reaching the durable mark writes the next reserve inside the
 * call (an fdatasync, at most once per reserve for the whole host).
 * Thread-safe: yes. */
IDM_API IDM_NODISCARD int idm_sfhost_try_next(idm_sfhost *h, uint64_t *id,
                                              int64_t *retry_unix_ns, idm_error *err);

/* The same, sleeping through IDM_EAGAIN (with the configured clock's
 * sleep). For owners that have nothing to check while they wait (an owner
 * that must stay interruptible loops over idm_sfhost_try_next).
 * Thread-safe: yes. */
IDM_API IDM_NODISCARD int idm_sfhost_next(idm_sfhost *h, uint64_t *id, idm_error *err);

/* The path of one of cfg's files with the extension ext ("state",
 * "idmark"; an owner that carries an older file format names its own):
 * DIR/snowflake-NODE-HASH.EXT. IDM_OK, or IDM_EINVAL (a bad cfg, a path
 * longer than cap). Thread-safe: yes (pure function). */
IDM_API IDM_NODISCARD int idm_sfhost_path(const idm_sfhost_config *cfg, const char *ext,
                                          char *dst, size_t cap, idm_error *err);

/* The generator (for high_water, formatting, decoding; never free it),
 * and the paths of the two files. Thread-safe: yes. */
IDM_API idm_snowflake *idm_sfhost_generator(idm_sfhost *h);
IDM_API const char *idm_sfhost_state_path(const idm_sfhost *h);
IDM_API const char *idm_sfhost_mark_path(const idm_sfhost *h);

/* Closes the mark (a shared mark is never lowered) and the state, and frees
 * h. NULL is a no-op. Thread-safe: no (no call may be running on h). */
IDM_API void idm_sfhost_close(idm_sfhost *h);

IDM_END_DECLS

#endif
