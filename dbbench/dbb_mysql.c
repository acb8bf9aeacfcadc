/*
 * dbb_mysql.c - the MySQL/MariaDB backend of idmint_dbbench.h
 * (mysql://USER:PASS@HOST:PORT/DB or mariadb://..., parsed by
 * idmb_mysql_url_parse), over libmariadb. Tables are InnoDB, whose
 * clustered index is the primary key: the B-tree under test is the table.
 *
 * Inserts: one transaction per batch (START TRANSACTION ... COMMIT) of
 * multi-row INSERT statements, keys as hex literals (X'...') and 8-byte
 * keys as decimals: a statement carries up to MY_STMT_BYTES of SQL
 * (several thousand rows), well below any server's max_allowed_packet
 * (1 MiB at the least, 16 MiB by default in MariaDB 10.11 and MySQL 8).
 * Text is cheap here: formatting a row is a few dozen bytes written into
 * one reused buffer, and the server parses a VALUES list quickly; a
 * server-side prepared multi-row statement would need one fixed row count
 * (batches vary) and binds per row as well, for no gain on the server.
 *
 * Counters come from SHOW GLOBAL STATUS (server-wide); the stats from
 * mysql.innodb_index_stats after ANALYZE TABLE, which needs SELECT on that
 * table (tests/coord/mariadb.sh grants it). Without it, index_bytes is
 * information_schema.TABLES.DATA_LENGTH (the clustered index's size as
 * well) and leaf_pages is not reported.
 *
 * Every call is bounded: connect (5 s), reads and writes (600 s: a large
 * batch on a slow disk still fits).
 */
#include "dbb_backend.h"

#include <errmsg.h>
#include <mysql.h>
#include <mysqld_error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MY_STMT_BYTES (512u * 1024u)
#define MY_CONNECT_TIMEOUT_S 5u
#define MY_IO_TIMEOUT_S 600u

typedef struct my_db {
    MYSQL *conn;
    char *sql; /* a statement being built, MY_STMT_BYTES + one row of room */
    bool uuid_column; /* ?key=uuid: 16-byte keys in a UUID column */
} my_db;

static my_db *my(idmb_db *db)
{
    return db->impl;
}

static int my_fail(idmb_db *db, const char *what, idmb_error *err)
{
    char why[384];
    idmb__copy_msg(why, sizeof why, mysql_error(my(db)->conn));
    idmb__msg(err, "%s: %s: %s (error %u)", db->where, what, why, mysql_errno(my(db)->conn));
    return IDMB_EDB;
}

/* Runs sql and drops any result (ANALYZE TABLE answers with rows). */
static int my_exec(idmb_db *db, const char *sql, idmb_error *err)
{
    MYSQL *c = my(db)->conn;
    if (mysql_query(c, sql) != 0)
        return my_fail(db, sql, err);
    MYSQL_RES *res = mysql_store_result(c);
    mysql_free_result(res);
    if (res == NULL && mysql_field_count(c) != 0)
        return my_fail(db, sql, err);
    return IDMB_OK;
}

static int my_open(idmb_db *db, const char *url, idmb_error *err)
{
    idmb_mysql_url u;
    int rc = idmb_mysql_url_parse(url, strlen(url), &u, err);
    if (rc != IDMB_OK)
        return rc;
    my_db *s = calloc(1, sizeof *s);
    if (s != NULL)
        s->sql = malloc(MY_STMT_BYTES + 256);
    if (s == NULL || s->sql == NULL || (s->conn = mysql_init(NULL)) == NULL) {
        if (s != NULL)
            free(s->sql);
        free(s);
        memset(&u, 0, sizeof u);
        idmb__msg(err, "out of memory");
        return IDMB_EDB;
    }
    db->impl = s;
    s->uuid_column = u.uuid_column;
    unsigned ct = MY_CONNECT_TIMEOUT_S, io = MY_IO_TIMEOUT_S;
    mysql_options(s->conn, MYSQL_OPT_CONNECT_TIMEOUT, &ct);
    mysql_options(s->conn, MYSQL_OPT_READ_TIMEOUT, &io);
    mysql_options(s->conn, MYSQL_OPT_WRITE_TIMEOUT, &io);
    if (u.socket[0] != '\0') {
        unsigned proto = MYSQL_PROTOCOL_SOCKET;
        mysql_options(s->conn, MYSQL_OPT_PROTOCOL, &proto);
    } else {
        unsigned proto = MYSQL_PROTOCOL_TCP;
        mysql_options(s->conn, MYSQL_OPT_PROTOCOL, &proto);
    }
    MYSQL *ok = mysql_real_connect(s->conn, u.socket[0] != '\0' ? "localhost" : u.host, u.user,
                                   u.password, u.db, u.port,
                                   u.socket[0] != '\0' ? u.socket : NULL, 0);
    memset(u.password, 0, sizeof u.password);
    if (ok == NULL) {
        char why[384];
        idmb__copy_msg(why, sizeof why, mysql_error(s->conn));
        unsigned no = mysql_errno(s->conn);
        const char *hint = no == CR_CONN_HOST_ERROR || no == CR_CONNECTION_ERROR
                               ? " (is the server running?)"
                               : "";
        idmb__msg(err, "%s: cannot connect%s: %s (error %u)", db->where, hint, why, no);
        rc = IDMB_EDB;
        goto fail;
    }
    /* Row numbers and keys are given exactly; a strict mode refuses a
     * truncated value instead of storing it. */
    rc = my_exec(db, "SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'", err);
    if (rc != IDMB_OK)
        goto fail;
    /* "10.11.6-MariaDB-0+deb12u1" -> "MariaDB 10.11.6", "8.0.36" -> "MySQL 8.0.36". */
    const char *v = mysql_get_server_info(s->conn);
    snprintf(db->version, sizeof db->version, "%s %.*s",
             strstr(v, "MariaDB") != NULL ? "MariaDB" : "MySQL", (int)strcspn(v, "-"), v);
    return IDMB_OK;
fail:
    mysql_close(s->conn);
    free(s->sql);
    free(s);
    db->impl = NULL;
    return rc;
}

static void my_close(idmb_db *db)
{
    my_db *s = my(db);
    if (s == NULL)
        return;
    mysql_close(s->conn);
    free(s->sql);
    free(s);
    db->impl = NULL;
}

static int my_drop(idmb_db *db, const char *table, idmb_error *err)
{
    char sql[128];
    snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s", table);
    return my_exec(db, sql, err);
}

static int my_create(idmb_db *db, const char *table, int key_bytes, idmb_error *err)
{
    int rc = my_drop(db, table, err);
    if (rc != IDMB_OK)
        return rc;
    char sql[192];
    /* A UUID column takes the 16 bytes of the X'...' literals as the UUID
     * itself, and stores it in its own order (MariaDB 10.7+). */
    const char *k16 = my(db)->uuid_column ? "UUID" : "BINARY(16)";
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (id %s PRIMARY KEY, n BIGINT NOT NULL) ENGINE=InnoDB", table,
             key_bytes == 8 ? "BIGINT" : key_bytes == 16 ? k16 : "BINARY(20)");
    return my_exec(db, sql, err);
}

/* Sends the statement built in s->sql (len bytes). */
static int send_insert(idmb_db *db, const char *table, size_t len, int64_t from, int64_t to,
                       idmb_error *err)
{
    MYSQL *c = my(db)->conn;
    if (mysql_real_query(c, my(db)->sql, (unsigned long)len) == 0)
        return IDMB_OK;
    if (mysql_errno(c) == ER_DUP_ENTRY) {
        char why[256];
        idmb__copy_msg(why, sizeof why, mysql_error(c));
        idmb__msg(err,
                  "%s: duplicate key in %s (rows %lld to %lld): the generator under test "
                  "repeated a key (%s)",
                  db->where, table, (long long)from, (long long)to, why);
        return IDMB_EDB;
    }
    return my_fail(db, "INSERT", err);
}

static int my_insert(idmb_db *db, const char *table, int key_bytes, const uint8_t *keys, size_t n,
                     int64_t first_n, idmb_error *err)
{
    my_db *s = my(db);
    int rc = my_exec(db, "START TRANSACTION", err);
    if (rc != IDMB_OK)
        return rc;
    size_t kb = (size_t)key_bytes;
    int head = snprintf(s->sql, 128, "INSERT INTO %s (id, n) VALUES ", table);
    size_t len = (size_t)head;
    int64_t stmt_first = first_n;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *key = keys + i * kb;
        char *p = s->sql + len;
        if (len > (size_t)head)
            *p++ = ',';
        /* A row is at most ",(X'<40 hex>',<20 digits>)": 72 bytes, within
         * the 256 bytes of room after MY_STMT_BYTES. */
        if (key_bytes == 8) {
            p += snprintf(p, 64, "(%lld,%lld)", (long long)idmb__key_i64(key),
                          (long long)(first_n + (int64_t)i));
        } else {
            *p++ = '(';
            *p++ = 'X';
            *p++ = '\'';
            idmb__hex(p, key, kb);
            p += 2 * kb;
            p += snprintf(p, 64, "',%lld)", (long long)(first_n + (int64_t)i));
        }
        len = (size_t)(p - s->sql);
        if (len >= MY_STMT_BYTES || i + 1 == n) {
            rc = send_insert(db, table, len, stmt_first, first_n + (int64_t)i, err);
            if (rc != IDMB_OK)
                break;
            len = (size_t)head;
            stmt_first = first_n + (int64_t)i + 1;
        }
    }
    if (rc == IDMB_OK)
        rc = my_exec(db, "COMMIT", err);
    if (rc != IDMB_OK)
        (void)mysql_query(s->conn, "ROLLBACK");
    return rc;
}

static int64_t parse_i64(const char *v)
{
    if (v == NULL)
        return -1;
    char *end = NULL;
    long long x = strtoll(v, &end, 10);
    return end != v && *end == '\0' && x >= 0 ? (int64_t)x : -1;
}

/* Runs sql, a query of rows (NAME, VALUE), and calls fn for each. */
static int name_values(idmb_db *db, const char *sql, void (*fn)(void *ctx, const char *name,
                                                                 int64_t v),
                       void *ctx, idmb_error *err)
{
    MYSQL *c = my(db)->conn;
    if (mysql_query(c, sql) != 0)
        return my_fail(db, sql, err);
    MYSQL_RES *res = mysql_store_result(c);
    if (res == NULL)
        return my_fail(db, sql, err);
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res)) != NULL)
        if (row[0] != NULL)
            fn(ctx, row[0], parse_i64(row[1]));
    mysql_free_result(res);
    return IDMB_OK;
}

static void counter(void *ctx, const char *name, int64_t v)
{
    idmb_counters *out = ctx;
    if (strcmp(name, "Innodb_os_log_written") == 0)
        out->wal_bytes = v;
    else if (strcmp(name, "Innodb_buffer_pool_reads") == 0)
        out->buffer_reads = v;
    else if (strcmp(name, "Innodb_buffer_pool_pages_flushed") == 0)
        out->buffer_writes = v;
}

static int my_counters(idmb_db *db, idmb_counters *out, idmb_error *err)
{
    return name_values(db,
                       "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_os_log_written', "
                       "'Innodb_buffer_pool_reads', 'Innodb_buffer_pool_pages_flushed')",
                       counter, out, err);
}

typedef struct my_stat {
    int64_t n_leaf_pages, size, page_bytes, data_bytes;
} my_stat;

static void stat_row(void *ctx, const char *name, int64_t v)
{
    my_stat *st = ctx;
    if (strcmp(name, "n_leaf_pages") == 0)
        st->n_leaf_pages = v;
    else if (strcmp(name, "size") == 0)
        st->size = v;
    else if (strcmp(name, "page") == 0)
        st->page_bytes = v;
    else if (strcmp(name, "data") == 0)
        st->data_bytes = v;
}

static int my_stats(idmb_db *db, const char *table, idmb_stats *out, idmb_error *err)
{
    MYSQL *c = my(db)->conn;
    char sql[512];
    snprintf(sql, sizeof sql, "ANALYZE TABLE %s", table);
    /* ANALYZE answers with rows, an error among them for a missing table. */
    if (mysql_query(c, sql) != 0)
        return my_fail(db, sql, err);
    MYSQL_RES *res = mysql_store_result(c);
    if (res == NULL)
        return my_fail(db, sql, err);
    MYSQL_ROW row;
    char problem[256] = "";
    while ((row = mysql_fetch_row(res)) != NULL) {
        if (mysql_num_fields(res) >= 4 && row[2] != NULL && strcmp(row[2], "Error") == 0)
            idmb__copy_msg(problem, sizeof problem, row[3]);
    }
    mysql_free_result(res);
    if (problem[0] != '\0') {
        idmb__msg(err, "%s: ANALYZE TABLE %s: %s", db->where, table, problem);
        return IDMB_EDB;
    }
    my_stat st = {-1, -1, -1, -1};
    int rc = name_values(db, "SELECT 'page', @@innodb_page_size", stat_row, &st, err);
    if (rc != IDMB_OK)
        return rc;
    snprintf(sql, sizeof sql,
             "SELECT stat_name, stat_value FROM mysql.innodb_index_stats WHERE database_name = "
             "DATABASE() AND table_name = '%s' AND index_name = 'PRIMARY' AND stat_name IN "
             "('n_leaf_pages', 'size')",
             table);
    rc = name_values(db, sql, stat_row, &st, err);
    if (rc != IDMB_OK && mysql_errno(c) != ER_TABLEACCESS_DENIED_ERROR)
        return rc;
    if (rc != IDMB_OK || st.size < 0) {
        /* No access to (or no row in) innodb_index_stats: the clustered
         * index's size as the data dictionary gives it. */
        snprintf(sql, sizeof sql,
                 "SELECT 'data', DATA_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA "
                 "= DATABASE() AND TABLE_NAME = '%s'",
                 table);
        st.n_leaf_pages = -1;
        rc = name_values(db, sql, stat_row, &st, err);
        if (rc != IDMB_OK)
            return rc;
        if (st.data_bytes < 0) {
            idmb__msg(err, "%s: no table %s", db->where, table);
            return IDMB_EDB;
        }
    }
    out->page_bytes = st.page_bytes;
    out->leaf_pages = st.n_leaf_pages;
    if (st.size >= 0 && st.page_bytes > 0)
        out->index_bytes = st.size * st.page_bytes;
    else
        out->index_bytes = st.data_bytes;
    out->table_bytes = out->index_bytes;
    return IDMB_OK;
}
/* idmb_scan: streamed (mysql_use_result); binary strings (the binary
 * character set, 63: BINARY, VARBINARY, BLOB) as bytes, everything else
 * as the text the protocol sends (integers in decimal, MariaDB's UUID
 * type in its text form). */
static int my_scan(idmb_db *db, const char *sql, idmb_row_fn fn, void *ctx, idmb_error *err)
{
    MYSQL *c = my(db)->conn;
    if (mysql_query(c, sql) != 0)
        return my_fail(db, sql, err);
    MYSQL_RES *res = mysql_use_result(c);
    if (res == NULL)
        return my_fail(db, sql, err);
    MYSQL_FIELD *f = mysql_fetch_field_direct(res, 0);
    bool binary = f != NULL && f->charsetnr == 63 &&
                  (f->type == MYSQL_TYPE_STRING || f->type == MYSQL_TYPE_VAR_STRING ||
                   f->type == MYSQL_TYPE_VARCHAR || f->type == MYSQL_TYPE_BLOB ||
                   f->type == MYSQL_TYPE_TINY_BLOB || f->type == MYSQL_TYPE_MEDIUM_BLOB ||
                   f->type == MYSQL_TYPE_LONG_BLOB);
    int ret = IDMB_OK;
    MYSQL_ROW row;
    while ((row = mysql_fetch_row(res)) != NULL) {
        unsigned long *lens = mysql_fetch_lengths(res);
        int stop = row[0] == NULL ? fn(ctx, NULL, 0, false)
                                  : fn(ctx, row[0], lens != NULL ? lens[0] : 0, binary);
        if (stop != 0) {
            idmb__msg(err, "%s: stopped by the caller", db->where);
            ret = IDMB_EABORTED;
            break;
        }
    }
    if (ret == IDMB_OK && mysql_errno(c) != 0)
        ret = my_fail(db, sql, err);
    mysql_free_result(res); /* reads and drops what a stop left */
    return ret;
}

static const idmb_ops mysql_ops = {
    .kind = IDMB_MYSQL,
    .open = my_open,
    .close = my_close,
    .create_table = my_create,
    .insert = my_insert,
    .drop_table = my_drop,
    .read_counters = my_counters,
    .read_stats = my_stats,
    .scan = my_scan,
};

const idmb_ops *const idmb__mysql_ops = &mysql_ops;
