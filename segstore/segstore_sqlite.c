/*
 * segstore_sqlite.c - the segment store in an SQLite file (sqlite:PATH),
 * the embedded default (<idmint/segstore.h>).
 *
 * Several processes may share one file: a lease is BEGIN IMMEDIATE (the
 * write lock up front, so that two leases never both read next_id and
 * then one fails to upgrade), one UPDATE ... RETURNING, COMMIT; a writer
 * that finds the file locked waits for it under sqlite3_busy_timeout
 * rather than failing. The file is put in WAL mode when it is made, so
 * that show and list never wait for a lease; synchronous stays FULL (the
 * default), since a lease that a power cut could undo would hand its IDs
 * out twice.
 *
 * Left out: SQLite's URI filenames (a PATH is a path), and any retry of a
 * lease that failed: the caller (the allocator) retries, and a failed
 * lease may have been applied, which only loses its IDs.
 */
#include "backend.h"

#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How long a call waits for another process's lock (ms). Leases hold it
 * for a millisecond or so: a wait this long means a stuck writer. */
#define SQ_BUSY_TIMEOUT_MS 5000

typedef struct sq_store {
    sqlite3 *db;
    char *path;
    bool readonly; /* opened read-only (the file's mode) */
    sqlite3_stmt *insert, *lease, *select, *list;
} sq_store;

static sq_store *sq(idmseg_store *st)
{
    return st->impl;
}

static bool denied(int r)
{
    return r != 0 && (errno == EACCES || errno == EPERM || errno == EROFS);
}

/* Whether PATH's directory exists and cannot be written (by this
 * process's IDs): then neither the file nor its journal can be made. */
static bool dir_readonly(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        return denied(access(".", W_OK));
    if (slash == path)
        return denied(access("/", W_OK));
    size_t len = (size_t)(slash - path);
    char *dir = malloc(len + 1);
    if (dir == NULL)
        return false;
    memcpy(dir, path, len);
    dir[len] = '\0';
    bool ro = denied(access(dir, W_OK));
    free(dir);
    return ro;
}

/* Maps an SQLite failure to a result and a message "SQLite file PATH:
 * WHAT: SQLite's message". Writing a file that cannot be written is
 * IDMSEG_EREADONLY, whether the file says so (SQLITE_READONLY) or its
 * journal cannot be made beside it (SQLITE_CANTOPEN in a read-only
 * directory). */
static int sq_fail(const sq_store *s, int rc, const char *what, idmseg_error *err)
{
    const char *why = s->db != NULL ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
    int prim = rc & 0xff;
    if (prim == SQLITE_READONLY ||
        ((prim == SQLITE_CANTOPEN || prim == SQLITE_IOERR) && dir_readonly(s->path))) {
        idmseg__msg(err, "SQLite file %s is read-only (%s): %s", s->path,
                    s->readonly ? "opened read-only: no write permission on it or its directory"
                                : why,
                    what);
        return IDMSEG_EREADONLY;
    }
    idmseg__msg(err, "SQLite file %s: %s: %s", s->path, what, why);
    return IDMSEG_EDB;
}

/* Binds an integer to the parameter named NAME ("$2"): the shared SQL
 * numbers its parameters as PostgreSQL does, and SQLite numbers "$N"
 * names by first appearance, not by N. */
static int bind_i64(sqlite3_stmt *stmt, const char *name, int64_t v)
{
    int i = sqlite3_bind_parameter_index(stmt, name);
    return i == 0 ? SQLITE_RANGE : sqlite3_bind_int64(stmt, i, v);
}

static int bind_text(sqlite3_stmt *stmt, const char *name, const char *v)
{
    int i = sqlite3_bind_parameter_index(stmt, name);
    return i == 0 ? SQLITE_RANGE : sqlite3_bind_text(stmt, i, v, -1, SQLITE_STATIC);
}

static void done(sqlite3_stmt *stmt)
{
    sqlite3_reset(stmt);
    sqlite3_clear_bindings(stmt);
}

static void sq_free(sq_store *s)
{
    sqlite3_finalize(s->insert);
    sqlite3_finalize(s->lease);
    sqlite3_finalize(s->select);
    sqlite3_finalize(s->list);
    sqlite3_close(s->db);
    free(s->path);
    free(s);
}

/* Whether the table exists: 1, 0, or an SQLite error code below 0. */
static int table_exists(sq_store *s)
{
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(s->db,
                                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                                "name = 'idmint_segments'",
                                -1, &stmt, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc == SQLITE_DONE)
        return 0;
    return -rc;
}

/* Opens s->path read-only with SQLite's immutable=1 (a URI filename, the
 * path percent-encoded). */
static int open_immutable(sq_store *s)
{
    size_t len = strlen(s->path);
    char *uri = malloc(len * 3 + 32);
    if (uri == NULL)
        return SQLITE_NOMEM;
    size_t n = (size_t)snprintf(uri, 8, "file:");
    for (const char *p = s->path; *p != '\0'; p++) {
        unsigned char ch = (unsigned char)*p;
        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
            strchr("/._-~", ch) != NULL) {
            uri[n++] = (char)ch;
        } else {
            snprintf(uri + n, 4, "%%%02X", ch);
            n += 3;
        }
    }
    snprintf(uri + n, 16, "?immutable=1");
    int rc = sqlite3_open_v2(uri, &s->db,
                             SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
    free(uri);
    if (rc == SQLITE_OK) {
        sqlite3_extended_result_codes(s->db, 1);
        sqlite3_busy_timeout(s->db, SQ_BUSY_TIMEOUT_MS);
    }
    return rc;
}

static int sq_open(idmseg_store *st, const char *path, idmseg_error *err)
{
    sq_store *s = calloc(1, sizeof *s);
    char *copy = strdup(path);
    if (s == NULL || copy == NULL) {
        free(s);
        free(copy);
        idmseg__msg(err, "out of memory");
        return IDMSEG_EDB;
    }
    s->path = copy;
    int result = IDMSEG_EDB;
    /* A file without write bits is read-only by intent; root could write
     * it anyway, so the mode is honoured here rather than left to open(2). */
    struct stat sb;
    if (stat(path, &sb) == 0) {
        if (!S_ISREG(sb.st_mode)) {
            idmseg__msg(err, "SQLite file %s is not a regular file", path);
            result = IDMSEG_EUSAGE;
            goto fail;
        }
        /* No journal (rollback or WAL) can be made in a read-only
         * directory, so no transaction either. */
        s->readonly = (sb.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0 || dir_readonly(path);
    } else if (errno != ENOENT) {
        idmseg__msg(err, "SQLite file %s: %s", path, strerror(errno));
        goto fail;
    }
    int flags = (s->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
                SQLITE_OPEN_NOMUTEX;
    int rc = sqlite3_open_v2(path, &s->db, flags, NULL);
    if (rc != SQLITE_OK) {
        result = sq_fail(s, rc, "cannot open it", err);
        goto fail;
    }
    sqlite3_extended_result_codes(s->db, 1);
    /* SQLite falls back to reading a file that it may not write. */
    if (sqlite3_db_readonly(s->db, "main") == 1)
        s->readonly = true;
    sqlite3_busy_timeout(s->db, SQ_BUSY_TIMEOUT_MS);
    int exists = table_exists(s);
    if (exists < 0 && s->readonly) {
        /* A WAL file is read through its -shm index, which cannot be made
         * beside a file in a read-only directory: read it as immutable,
         * as nobody can write it there either. */
        sqlite3_close(s->db);
        s->db = NULL;
        rc = open_immutable(s);
        if (rc != SQLITE_OK) {
            result = sq_fail(s, rc, "cannot open it", err);
            goto fail;
        }
        exists = table_exists(s);
    }
    if (exists < 0) {
        result = sq_fail(s, -exists, "cannot read it (is it an SQLite database?)", err);
        goto fail;
    }
    if (exists == 0) {
        if (s->readonly) {
            result = sq_fail(s, SQLITE_READONLY,
                             "it has no idmint_segments table and one cannot "
                             "be made",
                             err);
            goto fail;
        }
        /* Persistent in the file: set once, by whoever makes the table. */
        rc = sqlite3_exec(s->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_exec(s->db, idmseg__sql_create_table, NULL, NULL, NULL);
        if (rc != SQLITE_OK) {
            result = sq_fail(s, rc, "cannot create the idmint_segments table", err);
            goto fail;
        }
    }
    struct {
        const char *sql;
        sqlite3_stmt **stmt;
    } prep[] = {{idmseg__sql_insert, &s->insert},
                {idmseg__sql_lease, &s->lease},
                {idmseg__sql_select, &s->select},
                {idmseg__sql_list, &s->list}};
    for (size_t i = 0; i < sizeof prep / sizeof prep[0]; i++) {
        rc = sqlite3_prepare_v3(s->db, prep[i].sql, -1, SQLITE_PREPARE_PERSISTENT, prep[i].stmt,
                                NULL);
        if (rc != SQLITE_OK) {
            result = sq_fail(s, rc, "cannot prepare a statement (a table of another shape?)", err);
            goto fail;
        }
    }
    st->impl = s;
    return 0;
fail:
    sq_free(s);
    return result;
}

static void sq_close(idmseg_store *st)
{
    sq_free(sq(st));
    st->impl = NULL;
}

static int sq_create(idmseg_store *st, const char *tag, const idmseg_tag_spec *spec, int64_t now_ms,
                     idmseg_error *err)
{
    sq_store *s = sq(st);
    if (s->readonly)
        return sq_fail(s, SQLITE_READONLY, "cannot create a tag", err);
    sqlite3_stmt *q = s->insert;
    int rc = bind_text(q, "$1", tag);
    if (rc == SQLITE_OK)
        rc = bind_i64(q, "$2", (int64_t)spec->first);
    if (rc == SQLITE_OK)
        rc = bind_i64(q, "$3", (int64_t)spec->step);
    if (rc == SQLITE_OK)
        rc = bind_i64(q, "$4", (int64_t)spec->max_step);
    if (rc == SQLITE_OK)
        rc = bind_i64(q, "$5", (int64_t)spec->stride);
    if (rc == SQLITE_OK)
        rc = bind_i64(q, "$6", (int64_t)spec->offset);
    if (rc == SQLITE_OK)
        rc = bind_i64(q, "$7", now_ms);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(q);
    int result = 0;
    if (rc != SQLITE_DONE) {
        char what[128];
        snprintf(what, sizeof what, "cannot create tag %s", tag);
        result = sq_fail(s, rc, what, err);
    } else if (sqlite3_changes(s->db) == 0) {
        /* ON CONFLICT DO NOTHING: the row that was there is untouched. */
        idmseg__msg(err, "tag %s exists already in SQLite file %s", tag, s->path);
        result = IDMSEG_EEXISTS;
    }
    done(q);
    return result;
}

/* Reads the row of tag with s->select into *out: 0, IDMSEG_ENOTAG, or an
 * error. */
static int read_row(sq_store *s, const char *tag, idmseg_tag_info *out, idmseg_error *err)
{
    sqlite3_stmt *q = s->select;
    int rc = bind_text(q, "$1", tag);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(q);
    int result = 0;
    if (rc == SQLITE_ROW) {
        int64_t v[8];
        for (int i = 0; i < 8; i++)
            v[i] = sqlite3_column_int64(q, i + 1);
        if (idmseg__tag_info_fill(out, tag, v) != 0) {
            idmseg__msg(err, "SQLite file %s: the row of tag %s holds values out of range", s->path,
                        tag);
            result = IDMSEG_EDB;
        }
    } else if (rc == SQLITE_DONE) {
        idmseg__msg(err, "no tag %s in SQLite file %s", tag, s->path);
        result = IDMSEG_ENOTAG;
    } else {
        char what[128];
        snprintf(what, sizeof what, "cannot read tag %s", tag);
        result = sq_fail(s, rc, what, err);
    }
    done(q);
    return result;
}

static int sq_lease(idmseg_store *st, const char *tag, uint64_t count, int64_t now_ms,
                    uint64_t *first, uint64_t *stride, idmseg_error *err)
{
    sq_store *s = sq(st);
    char what[128];
    snprintf(what, sizeof what, "cannot lease from tag %s", tag);
    if (s->readonly)
        return sq_fail(s, SQLITE_READONLY, what, err);
    int rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        return sq_fail(s, rc, what, err);
    sqlite3_stmt *q = s->lease;
    rc = bind_text(q, "$1", tag);
    if (rc == SQLITE_OK)
        rc = bind_i64(q, "$2", (int64_t)count);
    if (rc == SQLITE_OK)
        rc = bind_i64(q, "$3", now_ms);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(q);
    int result = 0;
    bool got = false;
    if (rc == SQLITE_ROW) {
        int64_t f = sqlite3_column_int64(q, 0);
        int64_t k = sqlite3_column_int64(q, 1);
        got = true;
        /* Stepped to the end before COMMIT: a statement still running
         * would keep the transaction from committing. */
        rc = sqlite3_step(q);
        if (rc == SQLITE_DONE && (f < 0 || k <= 0)) {
            idmseg__msg(err, "SQLite file %s: the row of tag %s holds values out of range", s->path,
                        tag);
            result = IDMSEG_EDB;
        } else {
            *first = (uint64_t)f;
            *stride = (uint64_t)k;
        }
    }
    if (rc != SQLITE_DONE && result == 0)
        result = sq_fail(s, rc, what, err);
    done(q);
    if (result == 0 && !got) {
        /* No row changed: a missing tag, or one the guard refused. */
        idmseg_tag_info info;
        result = read_row(s, tag, &info, err);
        if (result == 0)
            result = idmseg__used_up(tag, info.next_id, count, info.stride, err);
    }
    if (result == 0) {
        rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
        if (rc != SQLITE_OK)
            result = sq_fail(s, rc, what, err);
    }
    /* After a failed COMMIT SQLite may have rolled back already. */
    if (!sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return result;
}

static int sq_show(idmseg_store *st, const char *tag, idmseg_tag_info *out, idmseg_error *err)
{
    return read_row(sq(st), tag, out, err);
}

static int sq_list(idmseg_store *st, void (*fn)(void *ctx, const idmseg_tag_info *tag), void *ctx,
                   idmseg_error *err)
{
    sq_store *s = sq(st);
    sqlite3_stmt *q = s->list;
    int n = 0;
    int rc = sqlite3_step(q);
    for (; rc == SQLITE_ROW; rc = sqlite3_step(q)) {
        const unsigned char *tag = sqlite3_column_text(q, 0);
        int64_t v[8];
        for (int i = 0; i < 8; i++)
            v[i] = sqlite3_column_int64(q, i + 1);
        idmseg_tag_info info;
        if (tag == NULL || idmseg__tag_info_fill(&info, (const char *)tag, v) != 0) {
            idmseg__msg(err, "SQLite file %s: a row holds values out of range", s->path);
            done(q);
            return -1;
        }
        fn(ctx, &info);
        n++;
    }
    if (rc != SQLITE_DONE) {
        sq_fail(s, rc, "cannot list the tags", err);
        n = -1;
    }
    done(q);
    return n;
}

static const idmseg__ops sqlite_ops = {
    .kind = "sqlite",
    .open = sq_open,
    .close = sq_close,
    .create = sq_create,
    .lease = sq_lease,
    .show = sq_show,
    .list = sq_list,
};

const idmseg__ops *const idmseg__sqlite_ops = &sqlite_ops;
