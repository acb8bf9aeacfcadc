/*
 * dbbench.c - the databases of `idmint bench btree` (idmint_dbbench.h):
 * URL kinds and redaction, the mysql:// parser, the checks every call
 * shares (table names, key widths, counts), and the dispatch to the
 * backends (dbb_backend.h): dbb_sqlite.c, dbb_pg.c, dbb_mysql.c, each
 * built when its client library is.
 *
 * The checks live here so that the three databases cannot disagree about
 * what a valid table is; a backend only sees names it may splice into SQL.
 *
 * Redaction is deliberately over-cautious: the password is taken to run
 * from the first ':' after "//" to the last '@' before the query, so a
 * password holding an unencoded '/', '?' or '@' is still hidden, and any
 * "password=" query value is hidden too (libpq accepts one there).
 *
 * Left out: libpq's key=value connection strings ("host=... dbname=...")
 * are not accepted as URLs, so their passwords need no redaction here.
 */
#include "dbb_backend.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef IDMB_HAVE_SQLITE
const idmb_ops *const idmb__sqlite_ops = NULL;
#endif
#ifndef IDMB_HAVE_PG
const idmb_ops *const idmb__pg_ops = NULL;
#endif
#ifndef IDMB_HAVE_MYSQL
const idmb_ops *const idmb__mysql_ops = NULL;
#endif

void idmb__msg(idmb_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

const char *idmb_strerror(int code)
{
    switch (code) {
    case IDMB_OK:
        return "success";
    case IDMB_EUSAGE:
        return "a bad URL, table name or argument";
    case IDMB_EUNSUPPORTED:
        return "this build has no client for that kind of database";
    case IDMB_EDB:
        return "the database failed or could not be reached";
    case IDMB_EMISSING:
        return "the database lacks what a figure needs";
    }
    return "unknown error";
}

/* Every public call works on a record of its own (a backend may write a
 * message and then recover) and hands it to the caller only when it
 * fails, with the code, so that a successful call leaves the caller's
 * record as it was. */
static int finish(int rc, idmb_error *mine, idmb_error *err)
{
    if (rc == IDMB_OK || err == NULL)
        return rc;
    mine->code = rc;
    *err = *mine;
    return rc;
}

void idmb__copy_msg(char *dst, size_t cap, const char *src)
{
    if (dst == NULL || cap == 0)
        return;
    size_t n = 0;
    for (; src != NULL && *src != '\0' && n + 1 < cap; src++) {
        unsigned char c = (unsigned char)*src;
        if (c == '\n' || c == '\t' || c == '\r')
            c = ' ';
        else if (c < 0x20 || c >= 0x7f)
            c = '?';
        dst[n++] = (char)c;
    }
    while (n > 0 && dst[n - 1] == ' ')
        n--;
    dst[n] = '\0';
}

int64_t idmb__key_i64(const uint8_t *key)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | key[i];
    /* Two's complement, without the implementation-defined conversion. */
    if (v <= (uint64_t)INT64_MAX)
        return (int64_t)v;
    return -(int64_t)(~v) - 1;
}

void idmb__hex(char *dst, const uint8_t *src, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        dst[2 * i] = digits[src[i] >> 4];
        dst[2 * i + 1] = digits[src[i] & 15];
    }
    dst[2 * len] = '\0';
}

/* ---- URLs ------------------------------------------------------------- */

static bool starts(const char *s, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(s, prefix, n) == 0;
}

idmb_kind idmb_url_kind(const char *url)
{
    if (url == NULL)
        return 0;
    size_t len = strlen(url);
    if (starts(url, len, "sqlite:"))
        return IDMB_SQLITE;
    if (starts(url, len, "postgresql://") || starts(url, len, "postgres://"))
        return IDMB_POSTGRESQL;
    if (starts(url, len, "mysql://") || starts(url, len, "mariadb://"))
        return IDMB_MYSQL;
    return 0;
}

/* Appends src[0..len-1] to dst (*used bytes so far), truncating silently:
 * only for the display copy, whose end is then marked with "...". */
static void append(char *dst, size_t cap, size_t *used, const char *src, size_t len)
{
    if (*used + 1 >= cap)
        return;
    size_t room = cap - 1 - *used;
    if (len > room)
        len = room;
    memcpy(dst + *used, src, len);
    *used += len;
    dst[*used] = '\0';
}

void idmb_url_redact(const char *url, char *dst, size_t cap)
{
    if (dst == NULL || cap == 0)
        return;
    dst[0] = '\0';
    if (url == NULL)
        return;
    size_t used = 0;
    size_t len = strlen(url);
    const char *slashes = strstr(url, "//");
    size_t query = strcspn(url, "?");
    size_t pos = 0;
    if (slashes != NULL && (size_t)(slashes - url) < query) {
        size_t auth = (size_t)(slashes - url) + 2;
        /* The last '@' before the query ends the user information. */
        size_t at = SIZE_MAX;
        for (size_t i = auth; i < query; i++)
            if (url[i] == '@')
                at = i;
        if (at != SIZE_MAX) {
            const char *colon = memchr(url + auth, ':', at - auth);
            if (colon != NULL) {
                size_t c = (size_t)(colon - url);
                append(dst, cap, &used, url, c + 1);
                append(dst, cap, &used, "***", 3);
                pos = at;
            }
        }
    }
    /* The rest, with each password=VALUE of the query hidden. */
    while (pos < len) {
        if (pos > query && (url[pos - 1] == '?' || url[pos - 1] == '&') &&
            strncmp(url + pos, "password=", 9) == 0) {
            append(dst, cap, &used, "password=***", 12);
            pos += 9;
            pos += strcspn(url + pos, "&");
            continue;
        }
        append(dst, cap, &used, url + pos, 1);
        pos++;
    }
    if (used + 1 >= cap && cap > 4 && len > 0)
        memcpy(dst + cap - 4, "...", 4);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* %-decodes s[0..len-1] into dst (cap bytes, NUL-terminated); -1 when too
 * long, -2 for a bad or NUL escape (or a raw NUL). */
static int decode(char *dst, size_t cap, const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= len)
                return -2;
            int hi = hexval(s[i + 1]), lo = hexval(s[i + 2]);
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                return -2;
            c = (char)(hi << 4 | lo);
            i += 2;
        } else if (c == '\0') {
            return -2;
        }
        if (n + 1 >= cap)
            return -1;
        dst[n++] = c;
    }
    dst[n] = '\0';
    return 0;
}

static int field(char *dst, size_t cap, const char *s, size_t len, const char *what,
                 idmb_error *err)
{
    int rc = decode(dst, cap, s, len);
    if (rc == -1)
        idmb__msg(err, "mysql URL: the %s is longer than %zu bytes", what, cap - 1);
    else if (rc == -2)
        idmb__msg(err, "mysql URL: the %s has a bad %%-escape (%%XX, not %%00)", what);
    return rc == 0 ? IDMB_OK : IDMB_EUSAGE;
}

static const char mysql_form[] = "(mysql://USER[:PASS]@HOST[:PORT]/DB[?socket=PATH][&key=uuid])";

static int mysql_url_parse(const char *url, size_t len, idmb_mysql_url *out, idmb_error *err)
{
    if (out == NULL || (url == NULL && len > 0)) {
        idmb__msg(err, "mysql URL: no URL or no place for it");
        return IDMB_EUSAGE;
    }
    memset(out, 0, sizeof *out);
    size_t pos;
    if (starts(url, len, "mysql://"))
        pos = 8;
    else if (starts(url, len, "mariadb://"))
        pos = 10;
    else {
        idmb__msg(err, "not a mysql:// or mariadb:// URL %s", mysql_form);
        return IDMB_EUSAGE;
    }
    const char *q = memchr(url + pos, '?', len - pos);
    size_t end = q != NULL ? (size_t)(q - url) : len;
    /* The user information ends at the last '@' before the query. */
    size_t at = SIZE_MAX;
    for (size_t i = pos; i < end; i++)
        if (url[i] == '@')
            at = i;
    if (at == SIZE_MAX) {
        idmb__msg(err, "mysql URL: no USER@ %s", mysql_form);
        return IDMB_EUSAGE;
    }
    const char *colon = memchr(url + pos, ':', at - pos);
    size_t user_end = colon != NULL ? (size_t)(colon - url) : at;
    if (user_end == pos) {
        idmb__msg(err, "mysql URL: the user is empty %s", mysql_form);
        return IDMB_EUSAGE;
    }
    if (field(out->user, sizeof out->user, url + pos, user_end - pos, "user", err) != 0)
        goto fail;
    if (colon != NULL &&
        field(out->password, sizeof out->password, url + user_end + 1, at - user_end - 1,
              "password", err) != 0)
        goto fail;
    /* HOST[:PORT]/DB */
    pos = at + 1;
    const char *slash = memchr(url + pos, '/', end - pos);
    if (slash == NULL) {
        idmb__msg(err, "mysql URL: no /DB after the host %s", mysql_form);
        goto fail;
    }
    size_t host_end = (size_t)(slash - url);
    size_t port_at = SIZE_MAX; /* the ':' before the port */
    if (pos < host_end && url[pos] == '[') {
        const char *rb = memchr(url + pos, ']', host_end - pos);
        if (rb == NULL) {
            idmb__msg(err, "mysql URL: an IPv6 host needs its closing ']'");
            goto fail;
        }
        size_t r = (size_t)(rb - url);
        if (r + 1 < host_end) {
            if (url[r + 1] != ':') {
                idmb__msg(err, "mysql URL: after ']' only :PORT may follow");
                goto fail;
            }
            port_at = r + 1;
        }
        if (r - pos - 1 == 0 || r - pos - 1 >= sizeof out->host) {
            idmb__msg(err, "mysql URL: the IPv6 host is empty or too long");
            goto fail;
        }
        for (size_t i = pos + 1; i < r; i++) {
            char c = url[i];
            if (hexval(c) < 0 && c != ':' && c != '.') {
                idmb__msg(err, "mysql URL: an IPv6 host has only hex digits, ':' and '.'");
                goto fail;
            }
        }
        memcpy(out->host, url + pos + 1, r - pos - 1);
        out->host[r - pos - 1] = '\0';
    } else {
        const char *pc = memchr(url + pos, ':', host_end - pos);
        size_t hend = pc != NULL ? (size_t)(pc - url) : host_end;
        if (pc != NULL)
            port_at = hend;
        if (hend - pos >= sizeof out->host) {
            idmb__msg(err, "mysql URL: the host is longer than %zu bytes",
                      sizeof out->host - 1);
            goto fail;
        }
        for (size_t i = pos; i < hend; i++) {
            unsigned char c = (unsigned char)url[i];
            if (c <= 0x20 || c >= 0x7f || c == '%' || c == '@' || c == '[' || c == ']') {
                idmb__msg(err, "mysql URL: byte 0x%02x is not allowed in a host name", c);
                goto fail;
            }
        }
        memcpy(out->host, url + pos, hend - pos);
        out->host[hend - pos] = '\0';
    }
    if (port_at != SIZE_MAX) {
        size_t p = port_at + 1;
        unsigned port = 0;
        if (p == host_end) {
            idmb__msg(err, "mysql URL: an empty port after ':'");
            goto fail;
        }
        for (; p < host_end; p++) {
            if (url[p] < '0' || url[p] > '9' || port > 65535) {
                idmb__msg(err, "mysql URL: the port must be a number from 1 to 65535");
                goto fail;
            }
            port = port * 10 + (unsigned)(url[p] - '0');
        }
        if (port == 0 || port > 65535) {
            idmb__msg(err, "mysql URL: the port must be a number from 1 to 65535");
            goto fail;
        }
        out->port = port;
    }
    if (host_end + 1 == end) {
        idmb__msg(err, "mysql URL: the database name after '/' is empty %s", mysql_form);
        goto fail;
    }
    if (memchr(url + host_end + 1, '/', end - host_end - 1) != NULL) {
        idmb__msg(err, "mysql URL: a database name has no '/' (%%2F if it must)");
        goto fail;
    }
    if (field(out->db, sizeof out->db, url + host_end + 1, end - host_end - 1, "database name",
              err) != 0)
        goto fail;
    /* Parameters, joined by '&': socket=PATH, and key=uuid (a MariaDB UUID
     * column for 16-byte keys instead of BINARY(16)). */
    size_t qs = end;
    while (q != NULL && qs < len) {
        qs++;
        const char *amp = memchr(url + qs, '&', len - qs);
        size_t pend = amp != NULL ? (size_t)(amp - url) : len;
        if (pend - qs == 8 && starts(url + qs, len - qs, "key=uuid")) {
            out->uuid_column = true;
        } else if (starts(url + qs, pend - qs, "socket=")) {
            if (pend - qs == 7) {
                idmb__msg(err, "mysql URL: ?socket= needs a path");
                goto fail;
            }
            if (field(out->socket, sizeof out->socket, url + qs + 7, pend - qs - 7,
                      "socket path", err) != 0)
                goto fail;
        } else {
            idmb__msg(err, "mysql URL: the parameters are socket=PATH and key=uuid");
            goto fail;
        }
        qs = pend;
    }
    if (out->socket[0] != '\0') {
        if (out->port != 0 || (out->host[0] != '\0' && strcmp(out->host, "localhost") != 0)) {
            idmb__msg(err,
                      "mysql URL: with ?socket= the host is empty or localhost, without a port");
            goto fail;
        }
        out->host[0] = '\0';
    } else if (out->host[0] == '\0') {
        idmb__msg(err, "mysql URL: the host is empty (or give ?socket=PATH) %s", mysql_form);
        goto fail;
    }
    return IDMB_OK;
fail:
    /* Nothing of a half-parsed URL is kept, the password least of all. */
    memset(out, 0, sizeof *out);
    return IDMB_EUSAGE;
}

/* ---- handles and checks -------------------------------------------------- */

bool idmb_have(idmb_kind kind)
{
    switch (kind) {
    case IDMB_SQLITE:
        return idmb__sqlite_ops != NULL;
    case IDMB_POSTGRESQL:
        return idmb__pg_ops != NULL;
    case IDMB_MYSQL:
        return idmb__mysql_ops != NULL;
    }
    return false;
}

static int db_open(const char *url, bool reader, idmb_db **out, idmb_error *err)
{
    if (out == NULL) {
        idmb__msg(err, "idmb_open: no place for the handle");
        return IDMB_EUSAGE;
    }
    *out = NULL;
    idmb_kind kind = idmb_url_kind(url);
    const idmb_ops *ops = NULL;
    static const char *const names[] = {"", "SQLite", "PostgreSQL", "MySQL/MariaDB"};
    static const char *const pkgs[] = {"", "libsqlite3-dev", "libpq-dev", "libmariadb-dev"};
    switch (kind) {
    case IDMB_SQLITE:
        ops = idmb__sqlite_ops;
        break;
    case IDMB_POSTGRESQL:
        ops = idmb__pg_ops;
        break;
    case IDMB_MYSQL:
        ops = idmb__mysql_ops;
        break;
    default: {
        char shown[IDMB_WHERE_CAP];
        idmb_url_redact(url, shown, sizeof shown);
        idmb__msg(err,
                  "'%s' is not a database URL (sqlite:PATH, postgresql://USER@HOST:PORT/DB or "
                  "mysql://USER:PASS@HOST:PORT/DB)",
                  shown);
        return IDMB_EUSAGE;
    }
    }
    if (ops == NULL) {
        idmb__msg(err, "this build has no %s client (configure with %s)",
                  names[kind], pkgs[kind]);
        return IDMB_EUNSUPPORTED;
    }
    const char *target = url;
    if (kind == IDMB_SQLITE) {
        target = url + 7;
        if (*target == '\0') {
            idmb__msg(err, "sqlite: needs a file's path (sqlite:PATH)");
            return IDMB_EUSAGE;
        }
    }
    idmb_db *db = calloc(1, sizeof *db);
    if (db == NULL) {
        idmb__msg(err, "out of memory");
        return IDMB_EDB;
    }
    db->ops = ops;
    db->reader = reader;
    idmb_url_redact(url, db->where, sizeof db->where);
    int rc = ops->open(db, target, err);
    if (rc != IDMB_OK) {
        free(db);
        return rc;
    }
    *out = db;
    return IDMB_OK;
}

void idmb_close(idmb_db *db)
{
    if (db == NULL)
        return;
    db->ops->close(db);
    free(db);
}

idmb_kind idmb_db_kind(const idmb_db *db)
{
    return db->ops->kind;
}

const char *idmb_db_version(const idmb_db *db)
{
    return db->version;
}

/* IDMB_TABLE_PREFIX, then a-z, 0-9 and '_', IDMB_TABLE_MAX bytes at most:
 * a name every backend takes unquoted, in any case folding. */
static int check_table(const idmb_db *db, const char *table, idmb_error *err)
{
    if (db == NULL) {
        idmb__msg(err, "no database handle");
        return IDMB_EUSAGE;
    }
    if (table == NULL) {
        idmb__msg(err, "no table name");
        return IDMB_EUSAGE;
    }
    size_t plen = strlen(IDMB_TABLE_PREFIX);
    size_t len = strlen(table);
    if (len <= plen || strncmp(table, IDMB_TABLE_PREFIX, plen) != 0) {
        idmb__msg(err,
                  "table '%.80s': idmint only creates and drops tables named " IDMB_TABLE_PREFIX
                  "NAME",
                  table);
        return IDMB_EUSAGE;
    }
    if (len > IDMB_TABLE_MAX) {
        idmb__msg(err, "table '%.80s...': at most %d bytes, got %zu", table, IDMB_TABLE_MAX,
                  len);
        return IDMB_EUSAGE;
    }
    for (size_t i = plen; i < len; i++) {
        char c = table[i];
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')
            continue;
        idmb__msg(err, "table '%.80s': byte 0x%02x at %zu is not allowed (a-z, 0-9, '_')",
                  table, (unsigned char)c, i);
        return IDMB_EUSAGE;
    }
    return IDMB_OK;
}

static int check_width(int key_bytes, idmb_error *err)
{
    if (key_bytes == 8 || key_bytes == 16 || key_bytes == 20)
        return IDMB_OK;
    idmb__msg(err, "keys are 8, 16 or 20 bytes, got %d", key_bytes);
    return IDMB_EUSAGE;
}

static int do_create_table(idmb_db *db, const char *table, int key_bytes, idmb_error *err)
{
    int rc = check_table(db, table, err);
    if (rc == IDMB_OK)
        rc = check_width(key_bytes, err);
    if (rc != IDMB_OK)
        return rc;
    return db->ops->create_table(db, table, key_bytes, err);
}

static int do_insert(idmb_db *db, const char *table, int key_bytes, const uint8_t *keys, size_t n,
                int64_t first_n, idmb_error *err)
{
    int rc = check_table(db, table, err);
    if (rc == IDMB_OK)
        rc = check_width(key_bytes, err);
    if (rc != IDMB_OK)
        return rc;
    if (n == 0)
        return IDMB_OK;
    if (keys == NULL) {
        idmb__msg(err, "idmb_insert: no keys");
        return IDMB_EUSAGE;
    }
    if (n > SIZE_MAX / 64 || n > (size_t)INT32_MAX) {
        idmb__msg(err, "idmb_insert: %zu rows in one batch are too many", n);
        return IDMB_EUSAGE;
    }
    if (first_n < 0 || (uint64_t)first_n > (uint64_t)INT64_MAX - n) {
        idmb__msg(err, "idmb_insert: row numbers from %lld do not fit a BIGINT",
                  (long long)first_n);
        return IDMB_EUSAGE;
    }
    return db->ops->insert(db, table, key_bytes, keys, n, first_n, err);
}

static int do_drop_table(idmb_db *db, const char *table, idmb_error *err)
{
    int rc = check_table(db, table, err);
    if (rc != IDMB_OK)
        return rc;
    return db->ops->drop_table(db, table, err);
}

static int do_read_counters(idmb_db *db, idmb_counters *out, idmb_error *err)
{
    if (db == NULL || out == NULL) {
        idmb__msg(err, "idmb_read_counters: no handle or no place for the counters");
        return IDMB_EUSAGE;
    }
    out->wal_bytes = -1;
    out->bytes_written = -1;
    out->buffer_reads = -1;
    out->buffer_writes = -1;
    return db->ops->read_counters(db, out, err);
}

static int do_read_stats(idmb_db *db, const char *table, idmb_stats *out, idmb_error *err)
{
    int rc = check_table(db, table, err);
    if (rc != IDMB_OK)
        return rc;
    if (out == NULL) {
        idmb__msg(err, "idmb_read_stats: no place for the stats");
        return IDMB_EUSAGE;
    }
    out->index_bytes = -1;
    out->leaf_pages = -1;
    out->leaf_density = -1;
    out->leaf_fragmentation = -1;
    out->table_bytes = -1;
    out->page_bytes = -1;
    return db->ops->read_stats(db, table, out, err);
}

/* ---- the public calls: each on a record of its own (finish) ---------------- */

int idmb_mysql_url_parse(const char *url, size_t len, idmb_mysql_url *out, idmb_error *err)
{
    idmb_error mine = {0};
    return finish(mysql_url_parse(url, len, out, &mine), &mine, err);
}

int idmb_open(const char *url, idmb_db **out, idmb_error *err)
{
    idmb_error mine = {0};
    return finish(db_open(url, false, out, &mine), &mine, err);
}

int idmb_create_table(idmb_db *db, const char *table, int key_bytes, idmb_error *err)
{
    idmb_error mine = {0};
    return finish(do_create_table(db, table, key_bytes, &mine), &mine, err);
}

int idmb_insert(idmb_db *db, const char *table, int key_bytes, const uint8_t *keys, size_t n,
                int64_t first_n, idmb_error *err)
{
    idmb_error mine = {0};
    return finish(do_insert(db, table, key_bytes, keys, n, first_n, &mine), &mine, err);
}

int idmb_drop_table(idmb_db *db, const char *table, idmb_error *err)
{
    idmb_error mine = {0};
    return finish(do_drop_table(db, table, &mine), &mine, err);
}

int idmb_read_counters(idmb_db *db, idmb_counters *out, idmb_error *err)
{
    idmb_error mine = {0};
    return finish(do_read_counters(db, out, &mine), &mine, err);
}

int idmb_read_stats(idmb_db *db, const char *table, idmb_stats *out, idmb_error *err)
{
    idmb_error mine = {0};
    return finish(do_read_stats(db, table, out, &mine), &mine, err);
}

/* ---- reading a column (idmint audit) --------------------------------------- */

int idmb_open_reader(const char *url, idmb_db **out, idmb_error *err)
{
    idmb_error mine = {0};
    return finish(db_open(url, true, out, &mine), &mine, err);
}

static bool ident_part(const char *s, size_t len)
{
    if (len == 0 || len > IDMB_TABLE_MAX || (s[0] >= '0' && s[0] <= '9') || s[0] == '$')
        return false;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '$';
        if (!ok)
            return false;
    }
    return true;
}

static int ident_check(const char *what, const char *name, bool dotted, idmb_error *err)
{
    if (name == NULL) {
        idmb__msg(err, "no %s name", what);
        return IDMB_EUSAGE;
    }
    size_t len = strlen(name);
    const char *dot = dotted ? memchr(name, '.', len) : NULL;
    bool ok = dot == NULL ? ident_part(name, len)
                          : ident_part(name, (size_t)(dot - name)) &&
                                ident_part(dot + 1, len - (size_t)(dot - name) - 1);
    if (!ok) {
        char shown[IDMB_TABLE_MAX * 2 + 8];
        idmb__copy_msg(shown, sizeof shown, name);
        idmb__msg(err,
                  "%s '%s%s': expected letters, digits, '_' and '$', not starting with a "
                  "digit, at most %d bytes%s",
                  what, shown, len > IDMB_TABLE_MAX * 2 ? "..." : "", IDMB_TABLE_MAX,
                  dotted ? " (or SCHEMA.NAME)" : "");
        return IDMB_EUSAGE;
    }
    return IDMB_OK;
}

int idmb_ident_check(const char *what, const char *name, bool dotted, idmb_error *err)
{
    idmb_error mine = {0};
    return finish(ident_check(what != NULL ? what : "name", name, dotted, &mine), &mine, err);
}

/* Appends text to the SQL being built in dst (cap bytes). */
static void sql_add(char *dst, size_t cap, const char *text)
{
    size_t o = strlen(dst);
    snprintf(dst + o, cap - o, "%s", text);
}

/* Appends a checked name, each part quoted with q. */
static void sql_add_ident(char *dst, size_t cap, char q, const char *name)
{
    size_t o = strlen(dst);
    /* A checked name is at most 2 x IDMB_TABLE_MAX + 1 bytes: room is
     * made by the caller's buffer; stop short rather than overrun. */
    if (o + 2 * strlen(name) + 8 > cap)
        return;
    dst[o++] = q;
    for (const char *p = name; *p != '\0'; p++) {
        if (*p == '.') {
            dst[o++] = q;
            dst[o++] = '.';
            dst[o++] = q;
        } else {
            dst[o++] = *p;
        }
    }
    dst[o++] = q;
    dst[o] = '\0';
}

static int scan(idmb_db *db, const char *table, const char *column, const char *order_by,
                idmb_row_fn fn, void *ctx, idmb_error *err)
{
    if (db == NULL || fn == NULL) {
        idmb__msg(err, "idmb_scan: no database handle or callback");
        return IDMB_EUSAGE;
    }
    int rc = ident_check("table", table, true, err);
    if (rc == IDMB_OK)
        rc = ident_check("column", column, false, err);
    if (rc == IDMB_OK && order_by != NULL)
        rc = ident_check("column", order_by, false, err);
    if (rc != IDMB_OK)
        return rc;
    /* Three quoted names of at most 2 x 63 bytes each fit. */
    char sql[1024] = "SELECT ";
    char q = db->ops->kind == IDMB_MYSQL ? '`' : '"';
    sql_add_ident(sql, sizeof sql, q, column);
    sql_add(sql, sizeof sql, " FROM ");
    sql_add_ident(sql, sizeof sql, q, table);
    if (order_by != NULL) {
        sql_add(sql, sizeof sql, " ORDER BY ");
        sql_add_ident(sql, sizeof sql, q, order_by);
    }
    return db->ops->scan(db, sql, fn, ctx, err);
}

int idmb_scan(idmb_db *db, const char *table, const char *column, const char *order_by,
              idmb_row_fn fn, void *ctx, idmb_error *err)
{
    idmb_error mine = {0};
    return finish(scan(db, table, column, order_by, fn, ctx, &mine), &mine, err);
}
