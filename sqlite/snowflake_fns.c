/*
 * snowflake_fns.c - 64-bit snowflake IDs, unique across every connection
 * and process that writes one database file.
 *
 *   idmint_snowflake_config(node [, layout])
 *       sets the database's node (and layout, default twitter): stored in
 *       the table idmint_config of the main database, so every connection
 *       and process of the file reads the same; returns the configuration
 *       as JSON text. Top-level SQL only (SQLITE_DIRECTONLY).
 *   idmint_snowflake_config()
 *       the configuration in force as JSON text, or NULL when none is set.
 *   snowflake()
 *       the next ID (integer) of the host-wide sequence for that node and
 *       layout: the library's idm_sfhost (idmint/sfhost.h) on the directory
 *       "<database file>-idmint" beside the database (as -wal and -shm
 *       are), shared by every connection and process that opens it, held
 *       to a durable mark, so nothing is repeated after a kill -9, a crash
 *       or a reboot with the clock set back. Waits (sleeps) while the
 *       layout's sequence is exhausted or the clock is slightly behind.
 *
 * Why a table: the node belongs to the database file, not to a connection
 * or a process (a process-wide setting would let two programs writing one
 * file mint with different nodes, or none). Each call compares the main
 * database's data version (SQLITE_FCNTL_DATA_VERSION, a memory read, which
 * changes on every commit by anyone) with the one it last read the table
 * at, and reads the table again only when it changed.
 *
 * Errors: an in-memory or temporary database (no file to put the state
 * beside), no node set, a node out of the layout's range, a bad layout, a
 * state directory that cannot be used, a clock set back by more than a
 * second.
 */
#include "ext.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define CONFIG_TABLE "idmint_config"
#define KEY_NODE     "snowflake.node"
#define KEY_LAYOUT   "snowflake.layout"

/* The state directory of the main database: "<file>-idmint". -1 for a
 * database without a file. */
static int state_dir(sqlite3 *db, char *dst, size_t cap)
{
    const char *file = sqlite3_db_filename(db, "main");
    if (file == NULL || file[0] == '\0')
        return -1;
    int n = snprintf(dst, cap, "%s-idmint", file);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* The call's error from a printf format (SQLite's). */
static void error_fmt(sqlite3_context *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = sqlite3_vmprintf(fmt, ap);
    va_end(ap);
    if (msg == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    sqlite3_result_error(ctx, msg, -1);
    sqlite3_free(msg);
}

static const char no_file[] = "the database has no file (in-memory or temporary): snowflake() "
                              "keeps its state beside the database file";

void idmsq_snowflake_close(idmsq_conn *c)
{
    idm_sfhost_close(c->sf);
    c->sf = NULL;
}

/* Reads the configuration table into *node and *layout. 1 when a node is
 * set, 0 when none is (no table, no row), -1 with *msg set (sqlite3_malloc'd)
 * on an error. */
static int read_config(sqlite3 *db, uint64_t *node, idm_sf_layout *layout, char **msg)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db,
                                "SELECT name, value FROM main." CONFIG_TABLE
                                " WHERE name IN ('" KEY_NODE "', '" KEY_LAYOUT "')",
                                -1, &st, NULL);
    if (rc != SQLITE_OK) {
        /* No table: nothing configured. Other errors are errors. */
        if (strstr(sqlite3_errmsg(db), "no such table") != NULL)
            return 0;
        *msg = sqlite3_mprintf("could not read " CONFIG_TABLE ": %s", sqlite3_errmsg(db));
        return -1;
    }
    int have_node = 0;
    char spec[IDM_SF_SPEC_CAP] = "twitter";
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        if (name != NULL && strcmp(name, KEY_NODE) == 0) {
            sqlite3_int64 v = sqlite3_column_int64(st, 1);
            if (sqlite3_column_type(st, 1) != SQLITE_INTEGER || v < 0) {
                *msg = sqlite3_mprintf(CONFIG_TABLE " holds a node that is not a non-negative "
                                                    "integer: '%s'",
                                       (const char *)sqlite3_column_text(st, 1));
                sqlite3_finalize(st);
                return -1;
            }
            *node = (uint64_t)v;
            have_node = 1;
        } else if (name != NULL && strcmp(name, KEY_LAYOUT) == 0) {
            const char *l = (const char *)sqlite3_column_text(st, 1);
            snprintf(spec, sizeof spec, "%s", l != NULL ? l : "");
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        *msg = sqlite3_mprintf("could not read " CONFIG_TABLE ": %s", sqlite3_errmsg(db));
        return -1;
    }
    idm_error err = {0};
    if (idm_sf_layout_parse(layout, spec, strlen(spec), &err) != IDM_OK) {
        *msg = sqlite3_mprintf(CONFIG_TABLE " holds an invalid layout '%s': %s", spec, err.msg);
        return -1;
    }
    return have_node;
}

/* Brings c->sf in line with the table when the database changed since the
 * last look. 0, or -1 with the call's error set. */
static int refresh(sqlite3_context *ctx, idmsq_conn *c)
{
    /* Without a data version (a VFS that does not give one), every call
     * reads the table. */
    unsigned version = 0;
    int have_version =
        sqlite3_file_control(c->db, "main", SQLITE_FCNTL_DATA_VERSION, &version) == SQLITE_OK;
    if (have_version && c->sf_have_version && version == c->sf_data_version && c->sf != NULL)
        return 0;
    char dir[4096];
    if (state_dir(c->db, dir, sizeof dir) != 0) {
        error_fmt(ctx, "snowflake: %s", no_file);
        return -1;
    }
    uint64_t node = 0;
    idm_sf_layout layout;
    char *msg = NULL;
    int found = read_config(c->db, &node, &layout, &msg);
    if (found < 0) {
        error_fmt(ctx, "snowflake: %s", msg);
        sqlite3_free(msg);
        return -1;
    }
    if (found == 0) {
        sqlite3_result_error(ctx,
                             "snowflake: no node is set for this database: run SELECT "
                             "idmint_snowflake_config(NODE [, LAYOUT]) once",
                             -1);
        return -1;
    }
    if (c->sf == NULL || node != c->sf_node || !idm_sf_layout_equal(&layout, &c->sf_layout)) {
        idmsq_snowflake_close(c);
        idm_sfhost_config cfg;
        idm_sfhost_config_init(&cfg);
        cfg.dir = dir;
        cfg.node = node;
        cfg.layout = layout;
        idm_error err = {0};
        int rc = idm_sfhost_open(&c->sf, &cfg, &err);
        if (rc != IDM_OK) {
            idmsq_error(ctx, "snowflake", rc, &err);
            c->sf = NULL;
            return -1;
        }
        c->sf_node = node;
        c->sf_layout = layout;
    }
    c->sf_data_version = version;
    c->sf_have_version = have_version;
    return 0;
}

static void fn_snowflake(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    (void)argv;
    idmsq_conn *c = idmsq_conn_of(ctx);
    if (refresh(ctx, c) != 0)
        return;
    uint64_t id = 0;
    idm_error err = {0};
    int rc = idm_sfhost_next(c->sf, &id, &err);
    if (rc != IDM_OK) {
        idmsq_error(ctx, "snowflake", rc, &err);
        return;
    }
    /* SQLite's integers are signed: a layout that uses the 64th bit (none
     * of the presets before the far future) gives a negative number with
     * the same bits. */
    sqlite3_result_int64(ctx, (sqlite3_int64)id);
}

/* The configuration as JSON text. */
static void result_config(sqlite3_context *ctx, sqlite3 *db, uint64_t node,
                          const idm_sf_layout *layout)
{
    char spec[IDM_SF_SPEC_CAP];
    char dir[4096];
    if (idm_sf_layout_format(layout, spec, sizeof spec) != IDM_OK ||
        state_dir(db, dir, sizeof dir) != 0) {
        sqlite3_result_error(ctx, "idmint_snowflake_config: could not describe the configuration",
                             -1);
        return;
    }
    /* The path escaped for JSON: its quotes, backslashes and controls. */
    sqlite3_str *s = sqlite3_str_new(db);
    sqlite3_str_appendf(
        s, "{\"node\": %llu, \"layout\": \"%s\", \"max_node\": %llu, \"state_dir\": \"",
        (unsigned long long)node, spec, (unsigned long long)idm_sf_layout_max_node(layout));
    for (const char *p = dir; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            sqlite3_str_appendchar(s, 1, '\\');
        if ((unsigned char)*p < 0x20)
            sqlite3_str_appendf(s, "\\u%04x", (unsigned)*p);
        else
            sqlite3_str_appendchar(s, 1, *p);
    }
    sqlite3_str_appendall(s, "\"}");
    int len = sqlite3_str_length(s);
    char *out = sqlite3_str_finish(s);
    if (out == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    sqlite3_result_text(ctx, out, len, sqlite3_free);
}

static int exec_bound(sqlite3 *db, const char *sql, sqlite3_int64 node, const char *spec)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rc;
    if (spec != NULL) {
        sqlite3_bind_int64(st, 1, node);
        sqlite3_bind_text(st, 2, spec, -1, SQLITE_STATIC);
    }
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static void fn_config(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    idmsq_conn *c = idmsq_conn_of(ctx);
    char dir[4096];
    if (state_dir(c->db, dir, sizeof dir) != 0) {
        error_fmt(ctx, "idmint_snowflake_config: %s", no_file);
        return;
    }
    if (argc == 0) {
        uint64_t node = 0;
        idm_sf_layout layout;
        char *msg = NULL;
        int found = read_config(c->db, &node, &layout, &msg);
        if (found < 0) {
            error_fmt(ctx, "idmint_snowflake_config: %s", msg);
            sqlite3_free(msg);
        } else if (found > 0) {
            result_config(ctx, c->db, node, &layout);
        }
        return;
    }
    if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER) {
        sqlite3_result_error(ctx, "idmint_snowflake_config: the node must be an integer", -1);
        return;
    }
    sqlite3_int64 node = sqlite3_value_int64(argv[0]);
    idm_sf_layout layout;
    idm_error err = {0};
    int rc;
    if (argc > 1 && sqlite3_value_type(argv[1]) != SQLITE_NULL) {
        const char *l = (const char *)sqlite3_value_text(argv[1]);
        int len = sqlite3_value_bytes(argv[1]);
        rc = l == NULL ? IDM_ENOMEM : idm_sf_layout_parse(&layout, l, (size_t)len, &err);
        if (rc != IDM_OK) {
            char what[200];
            snprintf(what, sizeof what, "idmint_snowflake_config: invalid layout '%.*s'",
                     len > 100 ? 100 : len, l != NULL ? l : "");
            idmsq_error(ctx, what, rc, &err);
            return;
        }
    } else {
        rc = idm_sf_layout_preset(&layout, "twitter", 7, &err);
        if (rc != IDM_OK) {
            idmsq_error(ctx, "idmint_snowflake_config", rc, &err);
            return;
        }
    }
    uint64_t max_node = idm_sf_layout_max_node(&layout);
    if (node < 0 || (uint64_t)node > max_node) {
        error_fmt(ctx,
                  "idmint_snowflake_config: node %lld is out of range: the layout's node field "
                  "holds 0 to %llu",
                  (long long)node, (unsigned long long)max_node);
        return;
    }
    char spec[IDM_SF_SPEC_CAP];
    if (idm_sf_layout_format(&layout, spec, sizeof spec) != IDM_OK) {
        sqlite3_result_error(ctx, "idmint_snowflake_config: could not write the layout", -1);
        return;
    }
    /* Both rows or neither. */
    rc = exec_bound(c->db, "SAVEPOINT idmint_snowflake_config", 0, NULL);
    if (rc == SQLITE_OK)
        rc = exec_bound(c->db,
                        "CREATE TABLE IF NOT EXISTS main." CONFIG_TABLE
                        "(name TEXT PRIMARY KEY, value ANY NOT NULL) WITHOUT ROWID",
                        0, NULL);
    if (rc == SQLITE_OK)
        rc = exec_bound(c->db,
                        "INSERT OR REPLACE INTO main." CONFIG_TABLE
                        "(name, value) VALUES ('" KEY_NODE "', ?1), ('" KEY_LAYOUT "', ?2)",
                        node, spec);
    if (rc != SQLITE_OK) {
        error_fmt(ctx, "idmint_snowflake_config: could not write " CONFIG_TABLE ": %s",
                  sqlite3_errmsg(c->db));
        (void)exec_bound(c->db, "ROLLBACK TO idmint_snowflake_config", 0, NULL);
        (void)exec_bound(c->db, "RELEASE idmint_snowflake_config", 0, NULL);
        return;
    }
    rc = exec_bound(c->db, "RELEASE idmint_snowflake_config", 0, NULL);
    if (rc != SQLITE_OK) {
        error_fmt(ctx, "idmint_snowflake_config: could not commit: %s", sqlite3_errmsg(c->db));
        return;
    }
    /* This connection's next snowflake() reads the table again. */
    c->sf_have_version = 0;
    result_config(ctx, c->db, (uint64_t)node, &layout);
}

const idmsq_fn idmsq_snowflake_fns[] = {
    {"snowflake", 0, IDMSQ_EFFECTS, fn_snowflake},
    {"idmint_snowflake_config", 0, IDMSQ_DIRECT, fn_config},
    {"idmint_snowflake_config", 1, IDMSQ_DIRECT, fn_config},
    {"idmint_snowflake_config", 2, IDMSQ_DIRECT, fn_config},
    {NULL, 0, 0, NULL},
};
