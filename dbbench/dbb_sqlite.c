/*
 * dbb_sqlite.c - the SQLite backend of idmint_dbbench.h (sqlite:PATH).
 *
 * Tables are WITHOUT ROWID, so the primary key's b-tree is the table
 * itself: the key order under test is the order of the only b-tree.
 *
 * Inserts: one prepared INSERT per table (kept while the handle inserts
 * into that table), bound and stepped once per row inside BEGIN ... COMMIT.
 * SQLite is in-process, so a row costs a bind and a step, no parsing and
 * no round trip; a multi-row VALUES list would only add SQL text to build
 * and parse. Keys are bound SQLITE_STATIC straight from the caller's array.
 *
 * journal_mode=WAL and synchronous=NORMAL: a commit writes the WAL without
 * an fsync, which is what a benchmark of the b-tree's write cost wants.
 *
 * Figures: dbstat (compiled in with SQLITE_ENABLE_DBSTAT_VTAB, as Debian's
 * is) for pages; sqlite3_db_status for the cache; /proc/self/io for the
 * bytes this process wrote (the WAL and the checkpoints into the file).
 */
#include "dbb_backend.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SQ_BUSY_TIMEOUT_MS 5000

typedef struct sq_db {
    sqlite3 *db;
    sqlite3_stmt *ins; /* INSERT into ins_table, or NULL */
    char ins_table[IDMB_TABLE_MAX + 1];
} sq_db;

static sq_db *sq(idmb_db *db)
{
    return db->impl;
}

static int sq_fail(idmb_db *db, sqlite3 *h, const char *what, idmb_error *err)
{
    char why[256];
    idmb__copy_msg(why, sizeof why, h != NULL ? sqlite3_errmsg(h) : "out of memory");
    idmb__msg(err, "%s: %s: %s", db->where, what, why);
    return IDMB_EDB;
}

static void forget_insert(sq_db *s)
{
    sqlite3_finalize(s->ins);
    s->ins = NULL;
    s->ins_table[0] = '\0';
}

static int sq_open(idmb_db *db, const char *path, idmb_error *err)
{
    sq_db *s = calloc(1, sizeof *s);
    if (s == NULL) {
        idmb__msg(err, "out of memory");
        return IDMB_EDB;
    }
    int flags = db->reader ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    int rc = sqlite3_open_v2(path, &s->db, flags, NULL);
    if (rc != SQLITE_OK) {
        char why[256];
        idmb__copy_msg(why, sizeof why, s->db != NULL ? sqlite3_errmsg(s->db) : "out of memory");
        idmb__msg(err, "%s: cannot open the file: %s", db->where, why);
        sqlite3_close(s->db);
        free(s);
        return IDMB_EDB;
    }
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, SQ_BUSY_TIMEOUT_MS);
    int ret = IDMB_OK;
    sqlite3_stmt *st = NULL;
    if (db->reader) /* idmb_open_reader: no figures, nothing changed */
        goto done;
    /* dbstat exists when it can be prepared against. */
    if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM dbstat LIMIT 0", -1, &st, NULL) != SQLITE_OK) {
        idmb__msg(err,
                  "%s: this SQLite has no dbstat table (built without "
                  "SQLITE_ENABLE_DBSTAT_VTAB)",
                  db->where);
        ret = IDMB_EMISSING;
        goto fail;
    }
    sqlite3_finalize(st);
    st = NULL;
    /* journal_mode answers with the mode it took: a file that cannot use
     * WAL (an in-memory database) says so. */
    if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st, NULL) != SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW) {
        ret = sq_fail(db, s->db, "PRAGMA journal_mode = WAL", err);
        goto fail;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_exec(s->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL) != SQLITE_OK) {
        ret = sq_fail(db, s->db, "PRAGMA synchronous = NORMAL", err);
        goto fail;
    }
done:
    snprintf(db->version, sizeof db->version, "SQLite %s", sqlite3_libversion());
    db->impl = s;
    return IDMB_OK;
fail:
    sqlite3_finalize(st);
    sqlite3_close(s->db);
    free(s);
    return ret;
}

static void sq_close(idmb_db *db)
{
    sq_db *s = sq(db);
    if (s == NULL)
        return;
    forget_insert(s);
    sqlite3_close(s->db);
    free(s);
    db->impl = NULL;
}

static int sq_exec(idmb_db *db, const char *sql, idmb_error *err)
{
    if (sqlite3_exec(sq(db)->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return sq_fail(db, sq(db)->db, sql, err);
    return IDMB_OK;
}

static int sq_drop(idmb_db *db, const char *table, idmb_error *err)
{
    sq_db *s = sq(db);
    if (strcmp(s->ins_table, table) == 0)
        forget_insert(s);
    char sql[128];
    snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s", table);
    return sq_exec(db, sql, err);
}

static int sq_create(idmb_db *db, const char *table, int key_bytes, idmb_error *err)
{
    int rc = sq_drop(db, table, err);
    if (rc != IDMB_OK)
        return rc;
    char sql[192];
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (id %s PRIMARY KEY, n BIGINT NOT NULL) WITHOUT ROWID", table,
             key_bytes == 8 ? "INTEGER" : "BLOB");
    return sq_exec(db, sql, err);
}

static int sq_insert(idmb_db *db, const char *table, int key_bytes, const uint8_t *keys, size_t n,
                     int64_t first_n, idmb_error *err)
{
    sq_db *s = sq(db);
    if (s->ins == NULL || strcmp(s->ins_table, table) != 0) {
        forget_insert(s);
        char sql[128];
        snprintf(sql, sizeof sql, "INSERT INTO %s (id, n) VALUES (?1, ?2)", table);
        if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s->ins, NULL) !=
            SQLITE_OK) {
            s->ins = NULL;
            return sq_fail(db, s->db, "preparing the INSERT", err);
        }
        snprintf(s->ins_table, sizeof s->ins_table, "%s", table);
    }
    int rc = sq_exec(db, "BEGIN", err);
    if (rc != IDMB_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *key = keys + i * (size_t)key_bytes;
        if (key_bytes == 8)
            sqlite3_bind_int64(s->ins, 1, idmb__key_i64(key));
        else
            sqlite3_bind_blob(s->ins, 1, key, key_bytes, SQLITE_STATIC);
        sqlite3_bind_int64(s->ins, 2, first_n + (int64_t)i);
        int st = sqlite3_step(s->ins);
        sqlite3_reset(s->ins);
        if (st == SQLITE_DONE)
            continue;
        if (st == SQLITE_CONSTRAINT_PRIMARYKEY || st == SQLITE_CONSTRAINT_UNIQUE) {
            char hex[2 * 20 + 1];
            idmb__hex(hex, key, (size_t)key_bytes);
            idmb__msg(err,
                      "%s: duplicate key in %s at row %lld (id %s): the generator under test "
                      "repeated a key",
                      db->where, table, (long long)(first_n + (int64_t)i), hex);
            rc = IDMB_EDB;
        } else {
            rc = sq_fail(db, s->db, "INSERT", err);
        }
        sqlite3_clear_bindings(s->ins);
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    /* No binding may point into the caller's keys after the call. */
    sqlite3_clear_bindings(s->ins);
    rc = sq_exec(db, "COMMIT", err);
    if (rc != IDMB_OK)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* write_bytes of /proc/self/io: what this process sent towards the block
 * layer (accounted when it dirties the page cache). -1 without procfs. */
static int64_t proc_write_bytes(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    if (f == NULL)
        return -1;
    char line[128];
    int64_t v = -1;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "write_bytes:", 12) == 0) {
            char *end = NULL;
            long long x = strtoll(line + 12, &end, 10);
            if (end != line + 12 && x >= 0)
                v = x;
            break;
        }
    }
    fclose(f);
    return v;
}

static int sq_counters(idmb_db *db, idmb_counters *out, idmb_error *err)
{
    (void)err;
    sq_db *s = sq(db);
    int cur = 0, hi = 0;
    out->bytes_written = proc_write_bytes();
    if (sqlite3_db_status(s->db, SQLITE_DBSTATUS_CACHE_MISS, &cur, &hi, 0) == SQLITE_OK)
        out->buffer_reads = cur;
    if (sqlite3_db_status(s->db, SQLITE_DBSTATUS_CACHE_WRITE, &cur, &hi, 0) == SQLITE_OK)
        out->buffer_writes = cur;
    return IDMB_OK;
}

static int sq_stats(idmb_db *db, const char *table, idmb_stats *out, idmb_error *err)
{
    sq_db *s = sq(db);
    /* The table's own b-tree (no overflow pages: rows are small). The
     * table's name is its b-tree's in dbstat. */
    static const char sql[] =
        "SELECT count(*), sum(pgsize), sum(pagetype = 'leaf'), "
        "sum(CASE WHEN pagetype = 'leaf' THEN pgsize - unused END), "
        "sum(CASE WHEN pagetype = 'leaf' THEN pgsize END) FROM dbstat WHERE name = ?1";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return sq_fail(db, s->db, "reading dbstat", err);
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        rc = sq_fail(db, s->db, "reading dbstat", err);
        sqlite3_finalize(st);
        return rc;
    }
    if (sqlite3_column_int64(st, 0) == 0) {
        sqlite3_finalize(st);
        idmb__msg(err, "%s: no table %s", db->where, table);
        return IDMB_EDB;
    }
    out->index_bytes = sqlite3_column_int64(st, 1);
    out->table_bytes = out->index_bytes;
    out->leaf_pages = sqlite3_column_int64(st, 2);
    double used = sqlite3_column_double(st, 3), total = sqlite3_column_double(st, 4);
    if (total > 0)
        out->leaf_density = used / total;
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(s->db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        out->page_bytes = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return IDMB_OK;
}

/* idmb_scan: integers as decimal text, text as text, blobs as bytes. */
static int sq_scan(idmb_db *db, const char *sql, idmb_row_fn fn, void *ctx, idmb_error *err)
{
    sqlite3 *h = sq(db)->db;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        return sq_fail(db, h, sql, err);
    int rc;
    int ret = IDMB_OK;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int type = sqlite3_column_type(st, 0);
        int stop;
        if (type == SQLITE_NULL) {
            stop = fn(ctx, NULL, 0, false);
        } else if (type == SQLITE_BLOB) {
            const void *p = sqlite3_column_blob(st, 0);
            stop = fn(ctx, p != NULL ? p : "", (size_t)sqlite3_column_bytes(st, 0), true);
        } else {
            const unsigned char *p = sqlite3_column_text(st, 0);
            stop = fn(ctx, p != NULL ? (const char *)p : "", (size_t)sqlite3_column_bytes(st, 0),
                      false);
        }
        if (stop != 0) {
            ret = IDMB_EABORTED;
            idmb__msg(err, "%s: stopped by the caller", db->where);
            break;
        }
    }
    if (ret == IDMB_OK && rc != SQLITE_DONE)
        ret = sq_fail(db, h, sql, err);
    sqlite3_finalize(st);
    return ret;
}

static const idmb_ops sqlite_ops = {
    .kind = IDMB_SQLITE,
    .open = sq_open,
    .close = sq_close,
    .create_table = sq_create,
    .insert = sq_insert,
    .drop_table = sq_drop,
    .read_counters = sq_counters,
    .read_stats = sq_stats,
    .scan = sq_scan,
};

const idmb_ops *const idmb__sqlite_ops = &sqlite_ops;
