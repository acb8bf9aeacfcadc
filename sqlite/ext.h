/*
 * ext.h - what the extension's files share: the per-connection state and
 * the error helpers. Private to sqlite/.
 *
 * Every file includes sqlite3ext.h through here: in the loadable module
 * SQLite's API is reached through the pointer that
 * sqlite3_idmintsqlite_init receives (SQLITE_EXTENSION_INIT1 in ext.c,
 * INIT3 elsewhere); in the static library (built with SQLITE_CORE) the
 * same calls go straight to the linked SQLite.
 */
#ifndef IDMSQ_EXT_H
#define IDMSQ_EXT_H

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3

#include <idmint/idmint.h>
#include <idmint/sfhost.h>

#include <stdint.h>

/* One per connection, shared by its functions (their user data), freed
 * when the last of them is dropped (the connection closes). A
 * connection runs one function call at a time (SQLite's connection mutex,
 * or the application's promise in SQLITE_CONFIG_MULTITHREAD), so nothing
 * here needs a lock. */
typedef struct idmsq_conn {
    int refs;
    sqlite3 *db;
    idm_gen *gen; /* UUIDv4/v7, ULID, KSUID, TypeID: uuidv7() order */
    /* snowflake(): the configuration last read and its generator. */
    idm_sfhost *sf;
    int sf_have_version;
    unsigned sf_data_version; /* SQLITE_FCNTL_DATA_VERSION when last read */
    int sf_configured;        /* the last read found a node */
    uint64_t sf_node;
    idm_sf_layout sf_layout;
} idmsq_conn;

/* The functions' registration, one table per file. */
typedef struct idmsq_fn {
    const char *name;
    int nargs;
    int flags;
    void (*fn)(sqlite3_context *, int, sqlite3_value **);
} idmsq_fn;

extern const idmsq_fn idmsq_uuid_fns[];
extern const idmsq_fn idmsq_text_fns[];
extern const idmsq_fn idmsq_snowflake_fns[];

/* The flags: pure functions may sit in indexes, CHECK constraints and
 * generated columns; generators only read the clock and randomness
 * (innocuous, as SQLite's random() and uuid.c's uuid()); functions that
 * touch files or tables are neither, and the configuration is callable
 * only from top-level SQL (SQLITE_DIRECTONLY). */
#define IDMSQ_PURE      (SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS)
#define IDMSQ_GENERATOR (SQLITE_UTF8 | SQLITE_INNOCUOUS)
#define IDMSQ_EFFECTS   SQLITE_UTF8
#define IDMSQ_DIRECT    (SQLITE_UTF8 | SQLITE_DIRECTONLY)

static inline idmsq_conn *idmsq_conn_of(sqlite3_context *ctx)
{
    return (idmsq_conn *)sqlite3_user_data(ctx);
}

/* Releases the connection's snowflake state (snowflake_fns.c). */
void idmsq_snowflake_close(idmsq_conn *c);

/* "what: reason" as the call's error; reason from err when it has one,
 * else the code's fixed text. Also SQLITE_NOMEM for IDM_ENOMEM. */
void idmsq_error(sqlite3_context *ctx, const char *what, int rc, const idm_error *err);

#endif
