/*
 * segstore_pg.c - the segment store in PostgreSQL (postgresql://... or
 * postgres://..., a libpq connection URI), over libpq (<idmint/segstore.h>).
 *
 * Each statement runs in autocommit: the lease is one UPDATE ...
 * RETURNING, atomic under PostgreSQL's row lock, so servers sharing the
 * database queue on the row and never see the same next_id. Values are
 * always bound as parameters, never spliced into the SQL.
 *
 * Every call is bounded: connect_timeout (5 s unless the URI sets one),
 * statement_timeout (5 s, unless the URI has options of its own), and TCP
 * keepalives with tcp_user_timeout, so that a server that vanishes
 * without closing the connection fails a call instead of hanging it
 * (statement_timeout is the server's and cannot help then).
 *
 * A lost connection (a restarted server) is re-established on the next
 * call, with PQreset. A lease, show or list that failed because the
 * connection was lost is tried once more on the new one: at worst the
 * first lease was applied and its IDs are lost, never handed out twice.
 * A create is not, since its retry could take its own row for a clash.
 *
 * Messages name the store as HOST:PORT/DB, never with the URI itself,
 * which may hold a password.
 */
#include "backend.h"

#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Byte order, as SQLite's BINARY: not the database's locale, which may
 * sort '_' and '.' anywhere. */
static const char sql_list_pg[] = IDMSEG_SQL_COLUMNS " ORDER BY tag COLLATE \"C\"";

typedef struct pg_store {
    PGconn *conn;
    char where[320]; /* "PostgreSQL at HOST:PORT/DB" */
} pg_store;

static pg_store *pg(idmseg_store *st)
{
    return st->impl;
}

/* Copies libpq's message without its trailing newlines, lines joined. */
static void copy_pq_msg(char *dst, size_t cap, const char *src)
{
    if (cap == 0)
        return;
    size_t n = 0;
    for (; src != NULL && *src != '\0' && n + 1 < cap; src++)
        dst[n++] = *src == '\n' ? ' ' : *src;
    while (n > 0 && dst[n - 1] == ' ')
        n--;
    dst[n] = '\0';
}

/* "PostgreSQL at HOST:PORT/DB" from the URI's parts (the defaults where
 * it names none, as libpq would take them). */
static void describe(pg_store *s, PQconninfoOption *opts)
{
    const char *host = NULL, *port = NULL, *db = NULL, *user = NULL;
    for (PQconninfoOption *o = opts; o != NULL && o->keyword != NULL; o++) {
        if (o->val == NULL || o->val[0] == '\0')
            continue;
        if (strcmp(o->keyword, "host") == 0)
            host = o->val;
        else if (strcmp(o->keyword, "port") == 0)
            port = o->val;
        else if (strcmp(o->keyword, "dbname") == 0)
            db = o->val;
        else if (strcmp(o->keyword, "user") == 0)
            user = o->val;
    }
    snprintf(s->where, sizeof s->where, "PostgreSQL at %.100s:%.40s/%.100s",
             host != NULL ? host : "(local socket)", port != NULL ? port : "5432",
             db != NULL     ? db
             : user != NULL ? user
                            : "(default database)");
}

/* The SQLSTATEs of writing where one may not: a read-only transaction or
 * server (a standby), and a role without the privilege. */
static bool sqlstate_readonly(const char *state)
{
    return state != NULL && (strcmp(state, "25006") == 0 || strcmp(state, "42501") == 0);
}

/* Runs sql with n text parameters. Returns the result (to PQclear), or
 * NULL with *rc (IDMSEG_EREADONLY, IDMSEG_EDB) and the message in err;
 * *lost says whether it failed for a lost connection (worth one more
 * try). */
static PGresult *run(pg_store *s, const char *sql, int n, const char *const *vals, const char *what,
                     int *rc, bool *lost, idmseg_error *err)
{
    char why[512];
    *lost = false;
    if (PQstatus(s->conn) != CONNECTION_OK) {
        /* The last call lost the connection: a fresh one, bounded by
         * connect_timeout. */
        PQreset(s->conn);
        if (PQstatus(s->conn) != CONNECTION_OK) {
            copy_pq_msg(why, sizeof why, PQerrorMessage(s->conn));
            idmseg__msg(err, "%s: %s: cannot reconnect: %s", s->where, what, why);
            *rc = IDMSEG_EDB;
            return NULL;
        }
    }
    PGresult *res = PQexecParams(s->conn, sql, n, NULL, vals, NULL, NULL, 0);
    ExecStatusType status = PQresultStatus(res);
    if (res != NULL && (status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK))
        return res;
    const char *state = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    const char *text = res != NULL ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    copy_pq_msg(why, sizeof why, text != NULL ? text : PQerrorMessage(s->conn));
    if (sqlstate_readonly(state)) {
        idmseg__msg(err, "%s is read-only for this connection (SQLSTATE %s: %s): %s", s->where,
                    state, why, what);
        *rc = IDMSEG_EREADONLY;
    } else {
        idmseg__msg(err, "%s: %s: %s%s%s", s->where, what, why, state != NULL ? " SQLSTATE " : "",
                    state != NULL ? state : "");
        *rc = IDMSEG_EDB;
    }
    *lost = PQstatus(s->conn) != CONNECTION_OK;
    PQclear(res);
    return NULL;
}

/* run, once more when the connection was lost (for statements that may be
 * repeated: see the file comment). */
static PGresult *run_again(pg_store *s, const char *sql, int n, const char *const *vals,
                           const char *what, int *rc, idmseg_error *err)
{
    bool lost;
    PGresult *res = run(s, sql, n, vals, what, rc, &lost, err);
    if (res == NULL && lost)
        res = run(s, sql, n, vals, what, rc, &lost, err);
    return res;
}

static int parse_i64(const char *s, int64_t *out)
{
    if (s == NULL || *s == '\0')
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

/* Row `row` of a result with IDMSEG_SQL_COLUMNS into *out; 0 or -1. */
static int row_info(PGresult *res, int row, idmseg_tag_info *out)
{
    int64_t v[8];
    for (int i = 0; i < 8; i++)
        if (parse_i64(PQgetvalue(res, row, i + 1), &v[i]) != 0)
            return -1;
    return idmseg__tag_info_fill(out, PQgetvalue(res, row, 0), v);
}

/* libpq's default prints notices and warnings (a shutdown's, CREATE ...
 * IF NOT EXISTS's) to stderr: a library must not. */
static void ignore_notice(void *arg, const PGresult *res)
{
    (void)arg;
    (void)res;
}

static int pg_open(idmseg_store *st, const char *url, idmseg_error *err)
{
    char *why_pq = NULL;
    PQconninfoOption *opts = PQconninfoParse(url, &why_pq);
    if (opts == NULL) {
        char why[512];
        bool bad_uri = why_pq != NULL; /* else libpq ran out of memory */
        copy_pq_msg(why, sizeof why, bad_uri ? why_pq : "out of memory");
        PQfreemem(why_pq);
        idmseg__msg(err, "not a PostgreSQL connection URI: %s", why);
        return bad_uri ? IDMSEG_EUSAGE : IDMSEG_EDB;
    }
    pg_store *s = calloc(1, sizeof *s);
    if (s == NULL) {
        PQconninfoFree(opts);
        idmseg__msg(err, "out of memory");
        return IDMSEG_EDB;
    }
    describe(s, opts);
    PQconninfoFree(opts);
    /* The bounds come first and the URI last (expand_dbname): libpq keeps
     * the last value of a keyword, so the URI's own settings win. */
    static const char *const keys[] = {"connect_timeout",
                                       "options",
                                       "keepalives",
                                       "keepalives_idle",
                                       "keepalives_interval",
                                       "keepalives_count",
                                       "tcp_user_timeout",
                                       "application_name",
                                       "dbname",
                                       NULL};
    const char *vals[] = {
        "5", "-c statement_timeout=5000", "1", "5", "2", "3", "10000", "idmint", url, NULL};
    s->conn = PQconnectdbParams(keys, vals, 1);
    int result = IDMSEG_EDB;
    char why[512];
    if (s->conn == NULL) {
        idmseg__msg(err, "%s: out of memory", s->where);
        goto fail;
    }
    /* Kept by PQreset, which reuses the PGconn. */
    PQsetNoticeReceiver(s->conn, ignore_notice, NULL);
    if (PQstatus(s->conn) != CONNECTION_OK) {
        copy_pq_msg(why, sizeof why, PQerrorMessage(s->conn));
        idmseg__msg(err, "%s: cannot connect: %s", s->where, why);
        goto fail;
    }
    /* Made only when missing: CREATE TABLE IF NOT EXISTS would need the
     * privilege to create even when the table is there, and a read-only
     * role must still be able to show and list. */
    bool lost;
    const char *exists_sql = "SELECT to_regclass('idmint_segments') IS NOT NULL";
    PGresult *res = run(s, exists_sql, 0, NULL, "cannot look for the table", &result, &lost, err);
    if (res == NULL)
        goto fail;
    bool exists = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    PQclear(res);
    if (!exists) {
        res = run(s, idmseg__sql_create_table, 0, NULL, "cannot create the idmint_segments table",
                  &result, &lost, err);
        if (res == NULL) {
            /* Two stores opened at once can race to create it (a unique
             * violation in the catalog): fine when the other one made it. */
            idmseg_error again;
            int rc2;
            res = run(s, exists_sql, 0, NULL, "", &rc2, &lost, &again);
            exists = res != NULL && PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
            if (!exists) {
                PQclear(res);
                goto fail;
            }
        }
        PQclear(res);
    }
    st->impl = s;
    return 0;
fail:
    PQfinish(s->conn);
    free(s);
    return result;
}

static void pg_close(idmseg_store *st)
{
    pg_store *s = pg(st);
    PQfinish(s->conn);
    free(s);
    st->impl = NULL;
}

static int pg_create(idmseg_store *st, const char *tag, const idmseg_tag_spec *spec, int64_t now_ms,
                     idmseg_error *err)
{
    pg_store *s = pg(st);
    char num[6][24];
    snprintf(num[0], sizeof num[0], "%" PRIu64, spec->first);
    snprintf(num[1], sizeof num[1], "%" PRIu64, spec->step);
    snprintf(num[2], sizeof num[2], "%" PRIu64, spec->max_step);
    snprintf(num[3], sizeof num[3], "%" PRIu64, spec->stride);
    snprintf(num[4], sizeof num[4], "%" PRIu64, spec->offset);
    snprintf(num[5], sizeof num[5], "%" PRId64, now_ms);
    const char *vals[] = {tag, num[0], num[1], num[2], num[3], num[4], num[5]};
    char what[128];
    snprintf(what, sizeof what, "cannot create tag %s", tag);
    int rc;
    bool lost;
    PGresult *res = run(s, idmseg__sql_insert, 7, vals, what, &rc, &lost, err);
    if (res == NULL)
        return rc;
    rc = 0;
    if (strcmp(PQcmdTuples(res), "0") == 0) {
        idmseg__msg(err, "tag %s exists already in %s", tag, s->where);
        rc = IDMSEG_EEXISTS;
    }
    PQclear(res);
    return rc;
}

static int pg_show(idmseg_store *st, const char *tag, idmseg_tag_info *out, idmseg_error *err)
{
    pg_store *s = pg(st);
    const char *vals[] = {tag};
    char what[128];
    snprintf(what, sizeof what, "cannot read tag %s", tag);
    int rc;
    PGresult *res = run_again(s, idmseg__sql_select, 1, vals, what, &rc, err);
    if (res == NULL)
        return rc;
    rc = 0;
    if (PQntuples(res) == 0) {
        idmseg__msg(err, "no tag %s in %s", tag, s->where);
        rc = IDMSEG_ENOTAG;
    } else if (PQnfields(res) != 9 || row_info(res, 0, out) != 0) {
        idmseg__msg(err, "%s: the row of tag %s holds values out of range", s->where, tag);
        rc = IDMSEG_EDB;
    }
    PQclear(res);
    return rc;
}

static int pg_lease(idmseg_store *st, const char *tag, uint64_t count, int64_t now_ms,
                    uint64_t *first, uint64_t *stride, idmseg_error *err)
{
    pg_store *s = pg(st);
    char num[2][24];
    snprintf(num[0], sizeof num[0], "%" PRIu64, count);
    snprintf(num[1], sizeof num[1], "%" PRId64, now_ms);
    const char *vals[] = {tag, num[0], num[1]};
    char what[128];
    snprintf(what, sizeof what, "cannot lease from tag %s", tag);
    int rc;
    PGresult *res = run_again(s, idmseg__sql_lease, 3, vals, what, &rc, err);
    if (res == NULL)
        return rc;
    if (PQntuples(res) == 1 && PQnfields(res) == 2) {
        int64_t f, k;
        rc = 0;
        if (parse_i64(PQgetvalue(res, 0, 0), &f) != 0 ||
            parse_i64(PQgetvalue(res, 0, 1), &k) != 0 || f < 0 || k <= 0) {
            idmseg__msg(err, "%s: the row of tag %s holds values out of range", s->where, tag);
            rc = IDMSEG_EDB;
        } else {
            *first = (uint64_t)f;
            *stride = (uint64_t)k;
        }
        PQclear(res);
        return rc;
    }
    PQclear(res);
    /* No row changed: a missing tag, or one the guard refused (a later
     * lease cannot make a used-up tag usable again, so reading it apart
     * from the UPDATE is safe). */
    idmseg_tag_info info;
    rc = pg_show(st, tag, &info, err);
    if (rc == 0)
        rc = idmseg__used_up(tag, info.next_id, count, info.stride, err);
    return rc;
}

static int pg_list(idmseg_store *st, void (*fn)(void *ctx, const idmseg_tag_info *tag), void *ctx,
                   idmseg_error *err)
{
    pg_store *s = pg(st);
    int rc;
    PGresult *res = run_again(s, sql_list_pg, 0, NULL, "cannot list the tags", &rc, err);
    if (res == NULL)
        return -1;
    int n = PQntuples(res);
    for (int i = 0; i < n; i++) {
        idmseg_tag_info info;
        if (PQnfields(res) != 9 || row_info(res, i, &info) != 0) {
            idmseg__msg(err, "%s: a row holds values out of range", s->where);
            PQclear(res);
            return -1;
        }
        fn(ctx, &info);
    }
    PQclear(res);
    return n;
}

static const idmseg__ops pg_ops = {
    .kind = "postgresql",
    .open = pg_open,
    .close = pg_close,
    .create = pg_create,
    .lease = pg_lease,
    .show = pg_show,
    .list = pg_list,
};

const idmseg__ops *const idmseg__pg_ops = &pg_ops;
