/*
 * dbb_pg.c - the PostgreSQL backend of idmint_dbbench.h
 * (postgresql://... or postgres://..., a libpq URI), over libpq.
 *
 * Inserts: one prepared statement per table,
 *   INSERT INTO t (id, n) SELECT * FROM unnest($1::T[], $2::bigint[])
 * with both arrays sent in binary: a whole batch is one round trip, one
 * statement and one transaction (autocommit), and the server parses no
 * literal. Binary arrays cost nothing to build because the keys arrive
 * as their binary wire form already: a big-endian int8 for bigint, the 16
 * bytes of a uuid, the bytes of a bytea. COPY would be as quick on the
 * server but needs its own framing per row and a second round trip for
 * the result; unnest keeps errors (a duplicate key) in the ordinary path.
 * Prepared statements are kept for the last few tables inserted into and
 * forgotten (DEALLOCATE) when their table is dropped or made again.
 *
 * The session runs with synchronous_commit = off (no WAL flush per batch;
 * the WAL bytes are read with pg_current_wal_insert_lsn, which is right
 * under asynchronous commit), and pgstatindex (the pgstattuple extension)
 * is made available at open, so that a missing extension is reported
 * before any work. Calls are bounded by connect_timeout (5 s unless the
 * URI sets one).
 *
 * Messages name the database by its URL with the password hidden.
 */
#include "dbb_backend.h"

#include <libpq-fe.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PG_SLOTS 8
#define PG_OID_INT8 20
#define PG_OID_BYTEA 17
#define PG_OID_UUID 2950

typedef struct pg_slot {
    char table[IDMB_TABLE_MAX + 1]; /* "" when free */
    char name[16];                  /* the prepared statement's, "idmb_insN" */
} pg_slot;

typedef struct pg_db {
    PGconn *conn;
    pg_slot slots[PG_SLOTS];
    unsigned next_slot; /* round-robin replacement */
    unsigned prepared;  /* statements prepared so far, for unique names */
    uint8_t *buf;       /* the two arrays of a batch */
    size_t buf_cap;
} pg_db;

static pg_db *pg(idmb_db *db)
{
    return db->impl;
}

/* A failed result (or none) as IDMB_EDB with the server's words. */
static int pg_fail(idmb_db *db, PGresult *res, const char *what, idmb_error *err)
{
    char why[384];
    const char *text = res != NULL ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    idmb__copy_msg(why, sizeof why, text != NULL ? text : PQerrorMessage(pg(db)->conn));
    idmb__msg(err, "%s: %s: %s", db->where, what, why);
    return IDMB_EDB;
}

static bool pg_ok(PGresult *res)
{
    ExecStatusType st = PQresultStatus(res);
    return res != NULL && (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK);
}

static int pg_exec(idmb_db *db, const char *sql, idmb_error *err)
{
    PGresult *res = PQexec(pg(db)->conn, sql);
    int rc = pg_ok(res) ? IDMB_OK : pg_fail(db, res, sql, err);
    PQclear(res);
    return rc;
}

/* pgstatindex callable: the extension is there, or this role makes it. */
static int ensure_pgstattuple(idmb_db *db, idmb_error *err)
{
    PGconn *c = pg(db)->conn;
    PGresult *res = PQexec(c, "SELECT 1 FROM pg_extension WHERE extname = 'pgstattuple'");
    if (!pg_ok(res)) {
        int rc = pg_fail(db, res, "looking for pgstattuple", err);
        PQclear(res);
        return rc;
    }
    int have = PQntuples(res);
    PQclear(res);
    if (have > 0)
        return IDMB_OK;
    res = PQexec(c, "CREATE EXTENSION IF NOT EXISTS pgstattuple");
    if (pg_ok(res)) {
        PQclear(res);
        return IDMB_OK;
    }
    char why[256];
    const char *text = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
    idmb__copy_msg(why, sizeof why, text != NULL ? text : PQerrorMessage(c));
    PQclear(res);
    idmb__msg(err,
              "%s: pgstatindex needs the pgstattuple extension: CREATE EXTENSION pgstattuple "
              "(Debian: postgresql-contrib), or allow this role to create it (%s)",
              db->where, why);
    return IDMB_EMISSING;
}

/* Replaces each occurrence of secret in msg by "***" (libpq quotes parts
 * of a URI it cannot parse, and the password may be among them). */
static void scrub(char *msg, const char *secret)
{
    size_t n = secret != NULL ? strlen(secret) : 0;
    if (n == 0)
        return;
    char *hit;
    while ((hit = strstr(msg, secret)) != NULL) {
        size_t rest = strlen(hit + n);
        if (n >= 3) {
            memcpy(hit, "***", 3);
            memmove(hit + 3, hit + n, rest + 1);
        } else {
            memset(hit, '*', n);
        }
    }
}

/* The URI's password, %-decoded as libpq takes it, into dst ("" if none
 * or unparseable). */
static void uri_password(const char *url, char *dst, size_t cap)
{
    dst[0] = '\0';
    PQconninfoOption *opts = PQconninfoParse(url, NULL);
    if (opts == NULL)
        return;
    for (PQconninfoOption *o = opts; o->keyword != NULL; o++)
        if (strcmp(o->keyword, "password") == 0 && o->val != NULL)
            snprintf(dst, cap, "%s", o->val);
    PQconninfoFree(opts);
}

static int pg_open(idmb_db *db, const char *url, idmb_error *err)
{
    char *perr = NULL;
    PQconninfoOption *opts = PQconninfoParse(url, &perr);
    if (opts == NULL) {
        /* libpq's reason may quote the URI: not shown. */
        PQfreemem(perr);
        idmb__msg(err, "%s: not a valid libpq URI (postgresql://USER@HOST:PORT/DB?KEY=VALUE)",
                  db->where);
        return IDMB_EUSAGE;
    }
    PQconninfoFree(opts);
    pg_db *s = calloc(1, sizeof *s);
    if (s == NULL) {
        idmb__msg(err, "out of memory");
        return IDMB_EDB;
    }
    /* connect_timeout first: the URI's own settings (expanded from
     * dbname) override it. */
    const char *const keys[] = {"connect_timeout", "dbname", NULL};
    const char *const vals[] = {"5", url, NULL};
    s->conn = PQconnectdbParams(keys, vals, 1);
    db->impl = s;
    int rc = IDMB_OK;
    if (s->conn == NULL) {
        idmb__msg(err, "%s: out of memory", db->where);
        rc = IDMB_EDB;
        goto fail;
    }
    if (PQstatus(s->conn) != CONNECTION_OK) {
        char why[384], secret[256];
        idmb__copy_msg(why, sizeof why, PQerrorMessage(s->conn));
        uri_password(url, secret, sizeof secret);
        scrub(why, secret);
        memset(secret, 0, sizeof secret);
        idmb__msg(err, "%s: cannot connect (is the server running?): %s", db->where, why);
        rc = IDMB_EDB;
        goto fail;
    }
    if (db->reader) /* idmb_open_reader: no settings, no extension */
        goto version;
    rc = pg_exec(db, "SET synchronous_commit = off", err);
    /* DROP TABLE IF EXISTS would print a NOTICE per table otherwise. */
    if (rc == IDMB_OK)
        rc = pg_exec(db, "SET client_min_messages = warning", err);
    if (rc != IDMB_OK)
        goto fail;
    rc = ensure_pgstattuple(db, err);
    if (rc != IDMB_OK)
        goto fail;
version:;
    /* "15.20 (Debian 15.20-0+deb12u1)" -> "PostgreSQL 15.20". */
    const char *v = PQparameterStatus(s->conn, "server_version");
    snprintf(db->version, sizeof db->version, "PostgreSQL %.*s",
             v != NULL ? (int)strcspn(v, " ") : 1, v != NULL ? v : "?");
    return IDMB_OK;
fail:
    PQfinish(s->conn);
    free(s);
    db->impl = NULL;
    return rc;
}

static void pg_close(idmb_db *db)
{
    pg_db *s = pg(db);
    if (s == NULL)
        return;
    PQfinish(s->conn);
    free(s->buf);
    free(s);
    db->impl = NULL;
}

/* Forgets table's prepared INSERT, if any. */
static void forget(idmb_db *db, const char *table)
{
    pg_db *s = pg(db);
    for (int i = 0; i < PG_SLOTS; i++) {
        if (strcmp(s->slots[i].table, table) != 0)
            continue;
        char sql[48];
        snprintf(sql, sizeof sql, "DEALLOCATE %s", s->slots[i].name);
        PQclear(PQexec(s->conn, sql));
        s->slots[i].table[0] = '\0';
    }
}

static int pg_drop(idmb_db *db, const char *table, idmb_error *err)
{
    forget(db, table);
    char sql[128];
    snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s", table);
    return pg_exec(db, sql, err);
}

static const char *pg_type(int key_bytes)
{
    return key_bytes == 8 ? "bigint" : key_bytes == 16 ? "uuid" : "bytea";
}

static int pg_create(idmb_db *db, const char *table, int key_bytes, idmb_error *err)
{
    int rc = pg_drop(db, table, err);
    if (rc != IDMB_OK)
        return rc;
    char sql[192];
    snprintf(sql, sizeof sql, "CREATE TABLE %s (id %s PRIMARY KEY, n bigint NOT NULL)", table,
             pg_type(key_bytes));
    return pg_exec(db, sql, err);
}

/* The prepared INSERT of table (prepared now if need be), or NULL. */
static const char *statement(idmb_db *db, const char *table, int key_bytes, idmb_error *err,
                             int *rc)
{
    pg_db *s = pg(db);
    for (int i = 0; i < PG_SLOTS; i++)
        if (strcmp(s->slots[i].table, table) == 0)
            return s->slots[i].name;
    pg_slot *slot = &s->slots[s->next_slot];
    s->next_slot = (s->next_slot + 1) % PG_SLOTS;
    if (slot->table[0] != '\0')
        forget(db, slot->table);
    snprintf(slot->name, sizeof slot->name, "idmb_ins%u", s->prepared++);
    char sql[256];
    snprintf(sql, sizeof sql,
             "INSERT INTO %s (id, n) SELECT * FROM unnest($1::%s[], $2::bigint[])", table,
             pg_type(key_bytes));
    PGresult *res = PQprepare(s->conn, slot->name, sql, 2, NULL);
    if (!pg_ok(res)) {
        *rc = pg_fail(db, res, "preparing the INSERT", err);
        PQclear(res);
        return NULL;
    }
    PQclear(res);
    snprintf(slot->table, sizeof slot->table, "%s", table);
    return slot->name;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* A one-dimensional array without NULLs in PostgreSQL's binary form
 * (array_recv): ndim, has-nulls flag, element type, then the dimension's
 * length and lower bound, then each element as a length and its bytes. */
static uint8_t *put_array_head(uint8_t *p, uint32_t oid, size_t n)
{
    put32(p, 1);
    put32(p + 4, 0);
    put32(p + 8, oid);
    put32(p + 12, (uint32_t)n);
    put32(p + 16, 1);
    return p + 20;
}

static int pg_insert(idmb_db *db, const char *table, int key_bytes, const uint8_t *keys, size_t n,
                     int64_t first_n, idmb_error *err)
{
    pg_db *s = pg(db);
    int rc = IDMB_OK;
    const char *name = statement(db, table, key_bytes, err, &rc);
    if (name == NULL)
        return rc;
    size_t kb = (size_t)key_bytes;
    /* n <= INT32_MAX (dbbench.c): these sizes do not wrap. */
    size_t len1 = 20 + n * (4 + kb), len2 = 20 + n * 12;
    if (len1 + len2 > (size_t)INT32_MAX) {
        idmb__msg(err, "%s: a batch of %zu rows is too large for one statement", db->where,
                  n);
        return IDMB_EUSAGE;
    }
    if (s->buf_cap < len1 + len2) {
        uint8_t *b = realloc(s->buf, len1 + len2);
        if (b == NULL) {
            idmb__msg(err, "out of memory for a batch of %zu rows", n);
            return IDMB_EDB;
        }
        s->buf = b;
        s->buf_cap = len1 + len2;
    }
    uint32_t oid = key_bytes == 8 ? PG_OID_INT8 : key_bytes == 16 ? PG_OID_UUID : PG_OID_BYTEA;
    uint8_t *p = put_array_head(s->buf, oid, n);
    for (size_t i = 0; i < n; i++) {
        put32(p, (uint32_t)kb);
        memcpy(p + 4, keys + i * kb, kb);
        p += 4 + kb;
    }
    uint8_t *q = put_array_head(p, PG_OID_INT8, n);
    for (size_t i = 0; i < n; i++) {
        uint64_t v = (uint64_t)(first_n + (int64_t)i);
        put32(q, 8);
        put32(q + 4, (uint32_t)(v >> 32));
        put32(q + 8, (uint32_t)v);
        q += 12;
    }
    const char *vals[2] = {(const char *)s->buf, (const char *)p};
    int lens[2] = {(int)len1, (int)len2};
    int fmts[2] = {1, 1};
    PGresult *res = PQexecPrepared(s->conn, name, 2, vals, lens, fmts, 0);
    if (pg_ok(res)) {
        PQclear(res);
        return IDMB_OK;
    }
    const char *state = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    if (state != NULL && strcmp(state, "23505") == 0) {
        char detail[256];
        idmb__copy_msg(detail, sizeof detail, PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL));
        idmb__msg(err,
                  "%s: duplicate key in %s (rows %lld to %lld): the generator under test "
                  "repeated a key (%s)",
                  db->where, table, (long long)first_n, (long long)(first_n + (int64_t)n - 1),
                  detail);
        rc = IDMB_EDB;
    } else {
        rc = pg_fail(db, res, "INSERT", err);
    }
    PQclear(res);
    return rc;
}

static int64_t get_i64(PGresult *res, int col)
{
    if (PQgetisnull(res, 0, col))
        return -1;
    char *end = NULL;
    long long v = strtoll(PQgetvalue(res, 0, col), &end, 10);
    return end != NULL && *end == '\0' && v >= 0 ? (int64_t)v : -1;
}

static double get_double(PGresult *res, int col)
{
    if (PQgetisnull(res, 0, col))
        return -1;
    char *end = NULL;
    double v = strtod(PQgetvalue(res, 0, col), &end);
    return end != NULL && *end == '\0' && isfinite(v) ? v : -1;
}

static int pg_counters(idmb_db *db, idmb_counters *out, idmb_error *err)
{
    pg_db *s = pg(db);
    /* The statistics of this backend reach the shared views only when it
     * goes idle: the flush is asked for by one statement and happens
     * before the next one (PostgreSQL 15's pgstat). */
    /* A role not allowed to call it reads counters that may lag. */
    if (PQserverVersion(s->conn) >= 150000)
        PQclear(PQexec(s->conn, "SELECT pg_stat_force_next_flush()"));
    static const char sql[] =
        "SELECT pg_current_wal_insert_lsn() - '0/0', "
        "(SELECT blks_read FROM pg_stat_database WHERE datname = current_database()), "
        "(SELECT buffers_checkpoint + buffers_clean + buffers_backend FROM pg_stat_bgwriter)";
    PGresult *res = PQexec(s->conn, sql);
    if (!pg_ok(res) || PQntuples(res) != 1) {
        int rc = pg_fail(db, res, "reading the counters", err);
        PQclear(res);
        return rc;
    }
    /* The LSN difference is numeric: "123456" (no fraction). */
    out->wal_bytes = get_i64(res, 0);
    out->buffer_reads = get_i64(res, 1);
    out->buffer_writes = get_i64(res, 2);
    PQclear(res);
    return IDMB_OK;
}

static int pg_stats(idmb_db *db, const char *table, idmb_stats *out, idmb_error *err)
{
    pg_db *s = pg(db);
    /* The primary key's index by pg_index (its name may be truncated from
     * TABLE_pkey for long table names). */
    static const char sql[] =
        "SELECT pg_relation_size(i.indexrelid), st.leaf_pages, st.avg_leaf_density, "
        "st.leaf_fragmentation, pg_relation_size(i.indrelid), "
        "current_setting('block_size')::int "
        "FROM pg_index i, pgstatindex(i.indexrelid::regclass) st "
        "WHERE i.indrelid = to_regclass($1) AND i.indisprimary";
    const char *vals[1] = {table};
    PGresult *res = PQexecParams(s->conn, sql, 1, NULL, vals, NULL, NULL, 0);
    if (!pg_ok(res)) {
        int rc = pg_fail(db, res, "pgstatindex", err);
        PQclear(res);
        return rc;
    }
    if (PQntuples(res) != 1) {
        PQclear(res);
        idmb__msg(err, "%s: no table %s with a primary key", db->where, table);
        return IDMB_EDB;
    }
    out->index_bytes = get_i64(res, 0);
    out->leaf_pages = get_i64(res, 1);
    double d = get_double(res, 2), f = get_double(res, 3);
    /* An index without entries has NaN densities: not reported. */
    out->leaf_density = d > 0 ? d / 100 : -1;
    out->leaf_fragmentation = f >= 0 ? f / 100 : -1;
    out->table_bytes = get_i64(res, 4);
    out->page_bytes = get_i64(res, 5);
    PQclear(res);
    return IDMB_OK;
}

/* Type OIDs (pg_type.dat) that idmb_scan hands over. */
enum { PG_BYTEA = 17, PG_NAME = 19, PG_INT8 = 20, PG_INT2 = 21, PG_INT4 = 23, PG_TEXT = 25,
       PG_BPCHAR = 1042, PG_VARCHAR = 1043, PG_UUID = 2950 };

static uint64_t pg_be(const char *p, int len)
{
    uint64_t v = 0;
    for (int i = 0; i < len; i++)
        v = v << 8 | (unsigned char)p[i];
    return v;
}

/* One value of a binary-format result: integers as decimal text (they
 * arrive big-endian), text as text, uuid and bytea as bytes. */
static int pg_value(const PGresult *res, Oid type, idmb_row_fn fn, void *ctx)
{
    if (PQgetisnull(res, 0, 0))
        return fn(ctx, NULL, 0, false);
    const char *p = PQgetvalue(res, 0, 0);
    int len = PQgetlength(res, 0, 0);
    if (type == PG_INT8 || type == PG_INT4 || type == PG_INT2) {
        uint64_t v = pg_be(p, len);
        int bits = len * 8;
        char text[24];
        if (bits < 64 && (v >> (bits - 1)) != 0)
            v |= ~UINT64_C(0) << bits; /* sign-extend */
        if ((v >> 63) != 0)
            snprintf(text, sizeof text, "-%llu", (unsigned long long)(~v + 1));
        else
            snprintf(text, sizeof text, "%llu", (unsigned long long)v);
        return fn(ctx, text, strlen(text), false);
    }
    bool text = type == PG_TEXT || type == PG_VARCHAR || type == PG_BPCHAR || type == PG_NAME;
    return fn(ctx, p, (size_t)len, !text);
}

/* idmb_scan: one row at a time (single-row mode), in binary format. */
static int pg_scan(idmb_db *db, const char *sql, idmb_row_fn fn, void *ctx, idmb_error *err)
{
    PGconn *c = pg(db)->conn;
    if (!PQsendQueryParams(c, sql, 0, NULL, NULL, NULL, NULL, 1) || !PQsetSingleRowMode(c))
        return pg_fail(db, NULL, sql, err);
    int ret = IDMB_OK;
    bool checked = false;
    PGresult *res;
    while ((res = PQgetResult(c)) != NULL) {
        ExecStatusType st = PQresultStatus(res);
        if (ret == IDMB_OK && st == PGRES_SINGLE_TUPLE) {
            Oid type = PQftype(res, 0);
            if (!checked && type != PG_BYTEA && type != PG_NAME && type != PG_INT8 &&
                type != PG_INT2 && type != PG_INT4 && type != PG_TEXT && type != PG_BPCHAR &&
                type != PG_VARCHAR && type != PG_UUID) {
                idmb__msg(err,
                          "%s: the column's type (oid %u) is not one idmint reads: use text, "
                          "varchar, bigint, uuid or bytea (a view can cast it)",
                          db->where, (unsigned)type);
                ret = IDMB_EDB;
            } else if (pg_value(res, type, fn, ctx) != 0) {
                idmb__msg(err, "%s: stopped by the caller", db->where);
                ret = IDMB_EABORTED;
            }
            checked = true;
        } else if (ret == IDMB_OK && st != PGRES_TUPLES_OK && st != PGRES_SINGLE_TUPLE) {
            ret = pg_fail(db, res, sql, err);
        }
        /* After a stop the remaining rows are read and dropped: the
         * connection is closed next anyway. */
        PQclear(res);
    }
    return ret;
}

static const idmb_ops pg_ops = {
    .kind = IDMB_POSTGRESQL,
    .open = pg_open,
    .close = pg_close,
    .create_table = pg_create,
    .insert = pg_insert,
    .drop_table = pg_drop,
    .read_counters = pg_counters,
    .read_stats = pg_stats,
    .scan = pg_scan,
};

const idmb_ops *const idmb__pg_ops = &pg_ops;
