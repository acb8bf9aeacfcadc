/*
 * backend.h - what segstore.c shares with the segment stores
 * (segstore_sqlite.c, segstore_pg.c): the common part of a store and the
 * table of operations each backend provides. segstore.c checks every
 * argument before a backend sees it (tag names, a spec with its defaults
 * applied and first rounded up, counts), so the backends only talk to
 * their database. The public meaning is in <idmint/segstore.h>. Not
 * installed.
 *
 * Backends return 0 or an IDMSEG_E* code and write the message with
 * idmseg__msg; err is never NULL here (each public call passes a record
 * of its own, and segstore.c sets the code when it hands it on).
 */
#ifndef IDMSEG_BACKEND_H
#define IDMSEG_BACKEND_H

#include <idmint/segstore.h>

/* The largest value a BIGINT column holds. */
#define IDMSEG_BIGINT_MAX ((uint64_t)INT64_MAX)

struct idmseg__ops;

struct idmseg_store {
    const struct idmseg__ops *ops;
    void *impl; /* the backend's */
};

typedef struct idmseg__ops {
    const char *kind; /* "sqlite", "postgresql" */
    /* Connects and makes the table; sets st->impl. target is the URL after
     * "sqlite:" (a path) or the whole URL (PostgreSQL). */
    int (*open)(idmseg_store *st, const char *target, idmseg_error *err);
    void (*close)(idmseg_store *st);
    /* spec is complete and valid (every value <= IDMSEG_BIGINT_MAX). */
    int (*create)(idmseg_store *st, const char *tag, const idmseg_tag_spec *spec, int64_t now_ms,
                  idmseg_error *err);
    /* 1 <= count <= IDMSEG_BIGINT_MAX. */
    int (*lease)(idmseg_store *st, const char *tag, uint64_t count, int64_t now_ms, uint64_t *first,
                 uint64_t *stride, idmseg_error *err);
    int (*show)(idmseg_store *st, const char *tag, idmseg_tag_info *out, idmseg_error *err);
    int (*list)(idmseg_store *st, void (*fn)(void *ctx, const idmseg_tag_info *tag), void *ctx,
                idmseg_error *err);
} idmseg__ops;

/* The backends this build has (NULL when built without one). */
extern const idmseg__ops *const idmseg__sqlite_ops;
extern const idmseg__ops *const idmseg__pg_ops;

/* The SQL both backends run: one dialect is enough for these statements
 * ($N parameters are understood by SQLite as well as by PostgreSQL). */
extern const char idmseg__sql_create_table[];
extern const char idmseg__sql_insert[]; /* $1 tag, $2 next_id, $3 step, $4 max_step,
                                        $5 stride, $6 offset, $7 now_ms */
extern const char idmseg__sql_lease[];  /* $1 tag, $2 count, $3 now_ms */
#define IDMSEG_SQL_COLUMNS                                                                         \
    "SELECT tag, next_id, step, max_step, stride, \"offset\", leases, created_ms, updated_ms "     \
    "FROM idmint_segments"
extern const char idmseg__sql_select[]; /* $1 tag; IDMSEG_SQL_COLUMNS */
extern const char idmseg__sql_list[];   /* IDMSEG_SQL_COLUMNS in tag order (SQLite's) */

/* vsnprintf into err->msg. */
void idmseg__msg(idmseg_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The wall clock in Unix ms, for created_ms and updated_ms. */
int64_t idmseg__now_ms(void);

/* Fills *out from the nine columns of idmseg__sql_select, given as integers;
 * -1 when a value is out of range (a row not written by idmint). */
int idmseg__tag_info_fill(idmseg_tag_info *out, const char *tag, const int64_t v[8]);

/* The message for a lease that found the tag but could not take count
 * IDs (IDMSEG_EUSAGE): the tag is used up. */
int idmseg__used_up(const char *tag, uint64_t next_id, uint64_t count, uint64_t stride,
                    idmseg_error *err);

#endif
