/*
 * segstore_backend.h - what segstore.c shares with the segment stores
 * (segstore_sqlite.c, segstore_pg.c): the common part of a store and the
 * table of operations each backend provides. segstore.c checks every
 * argument before a backend sees it (tag names, a spec with its defaults
 * applied and first rounded up, counts), so the backends only talk to
 * their database. The public meaning is in idmint_segstore.h. Not
 * installed.
 */
#ifndef IDMC_SEGSTORE_BACKEND_H
#define IDMC_SEGSTORE_BACKEND_H

#include "idmint_segstore.h"

/* The largest value a BIGINT column holds. */
#define IDMC_BIGINT_MAX ((uint64_t)INT64_MAX)

struct idmc_store_ops;

struct idmc_store {
    const struct idmc_store_ops *ops;
    void *impl; /* the backend's */
};

typedef struct idmc_store_ops {
    const char *kind; /* "sqlite", "postgresql" */
    /* Connects and makes the table; sets st->impl. target is the URL after
     * "sqlite:" (a path) or the whole URL (PostgreSQL). */
    int (*open)(idmc_store *st, const char *target, char *msg, size_t cap);
    void (*close)(idmc_store *st);
    /* spec is complete and valid (every value <= IDMC_BIGINT_MAX). */
    int (*create)(idmc_store *st, const char *tag, const idmc_tag_spec *spec, int64_t now_ms,
                  char *msg, size_t cap);
    /* 1 <= count <= IDMC_BIGINT_MAX. */
    int (*lease)(idmc_store *st, const char *tag, uint64_t count, int64_t now_ms, uint64_t *first,
                 uint64_t *stride, char *msg, size_t cap);
    int (*show)(idmc_store *st, const char *tag, idmc_tag_info *out, char *msg, size_t cap);
    int (*list)(idmc_store *st, void (*fn)(void *ctx, const idmc_tag_info *tag), void *ctx,
                char *msg, size_t cap);
} idmc_store_ops;

/* The backends this build has (NULL when built without one). */
extern const idmc_store_ops *const idmc_sqlite_store_ops;
extern const idmc_store_ops *const idmc_pg_store_ops;

/* The SQL both backends run: one dialect is enough for these statements
 * ($N parameters are understood by SQLite as well as by PostgreSQL). */
extern const char idmc_sql_create_table[];
extern const char idmc_sql_insert[]; /* $1 tag, $2 next_id, $3 step, $4 max_step,
                                        $5 stride, $6 offset, $7 now_ms */
extern const char idmc_sql_lease[];  /* $1 tag, $2 count, $3 now_ms */
#define IDMC_SQL_COLUMNS                                                                           \
    "SELECT tag, next_id, step, max_step, stride, \"offset\", leases, created_ms, updated_ms "     \
    "FROM idmint_segments"
extern const char idmc_sql_select[]; /* $1 tag; IDMC_SQL_COLUMNS */
extern const char idmc_sql_list[];   /* IDMC_SQL_COLUMNS in tag order (SQLite's) */

/* The wall clock in Unix ms, for created_ms and updated_ms. */
int64_t idmc_store_now_ms(void);

/* Fills *out from the nine columns of idmc_sql_select, given as integers;
 * -1 when a value is out of range (a row not written by idmint). */
int idmc_tag_info_fill(idmc_tag_info *out, const char *tag, const int64_t v[8]);

/* The message for a lease that found the tag but could not take count
 * IDs (IDMC_USAGE): the tag is used up. */
int idmc_used_up(const char *tag, uint64_t next_id, uint64_t count, uint64_t stride, char *msg,
                 size_t cap);

#endif
