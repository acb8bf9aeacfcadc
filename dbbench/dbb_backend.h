/*
 * dbb_backend.h - what dbbench.c shares with the backends (dbb_sqlite.c,
 * dbb_pg.c, dbb_mysql.c): the common part of a handle and the table of
 * operations each backend provides. dbbench.c checks every argument
 * before a backend sees it (table names, key widths, counts), so the
 * backends only talk to their database: a table name they get matches
 * IDMB_TABLE_PREFIX[a-z0-9_]* and fits IDMB_TABLE_MAX, and may be spliced
 * into SQL as it is. The public meaning is in idmint_dbbench.h. Not
 * installed. Backends return 0 or an IDMB_E* code and write the message
 * with idmb__msg.
 */
#ifndef IDMB_BACKEND_H
#define IDMB_BACKEND_H

#include "idmint_dbbench.h"

/* The URL as shown in messages (password "***"): room for a long one. */
#define IDMB_WHERE_CAP 320
#define IDMB_VERSION_CAP 64

struct idmb_ops;

struct idmb_db {
    const struct idmb_ops *ops;
    void *impl;                     /* the backend's */
    char where[IDMB_WHERE_CAP];     /* idmb_url_redact(url) */
    char version[IDMB_VERSION_CAP]; /* set by open */
    bool reader;                    /* idmb_open_reader: open to read, change nothing */
};

typedef struct idmb_ops {
    idmb_kind kind;
    /* Connects; sets db->impl and db->version. target is the URL after
     * "sqlite:" (a path) or the whole URL. On failure db->impl is left
     * NULL (everything the backend allocated is released). */
    int (*open)(idmb_db *db, const char *target, idmb_error *err);
    void (*close)(idmb_db *db);
    int (*create_table)(idmb_db *db, const char *table, int key_bytes, idmb_error *err);
    /* n >= 1; n * key_bytes and first_n + n do not overflow. */
    int (*insert)(idmb_db *db, const char *table, int key_bytes, const uint8_t *keys, size_t n,
                  int64_t first_n, idmb_error *err);
    int (*drop_table)(idmb_db *db, const char *table, idmb_error *err);
    int (*read_counters)(idmb_db *db, idmb_counters *out, idmb_error *err);
    int (*read_stats)(idmb_db *db, const char *table, idmb_stats *out, idmb_error *err);
    /* Runs sql (a SELECT of one column, names checked and quoted) and
     * streams its values to fn (idmb_scan); IDMB_EABORTED when fn stops. */
    int (*scan)(idmb_db *db, const char *sql, idmb_row_fn fn, void *ctx, idmb_error *err);
} idmb_ops;

/* The backends this build has (NULL when built without one). */
extern const idmb_ops *const idmb__sqlite_ops;
extern const idmb_ops *const idmb__pg_ops;
extern const idmb_ops *const idmb__mysql_ops;

/* snprintf into err->msg. Inside the component err is never NULL: each
 * public call passes a record of its own (dbbench.c's finish), which sets
 * the code. */
void idmb__msg(idmb_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Copies a database's message into dst: newlines and tabs become spaces,
 * other control bytes and bytes >= 0x7f (a binary key quoted in a
 * duplicate-key message) '?', trailing spaces dropped. */
void idmb__copy_msg(char *dst, size_t cap, const char *src);

/* Key i as a signed 64-bit integer (8-byte keys are big-endian). */
int64_t idmb__key_i64(const uint8_t *key);

/* The lowercase hex of len bytes into dst (2 * len + 1 bytes). */
void idmb__hex(char *dst, const uint8_t *src, size_t len);

#endif
