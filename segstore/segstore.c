/*
 * segstore.c - segment store URLs, the checks every store call shares
 * (tag names, a tag's values, counts), and the SQL both backends run;
 * segstore_sqlite.c and segstore_pg.c do the talking (segstore_backend.h).
 *
 * The checks live here so that the two databases cannot disagree about
 * what a valid tag is: a backend only ever sees a spec with its defaults
 * applied, first rounded up to offset modulo stride, and every value
 * within a BIGINT.
 */
#include "backend.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char idmseg__sql_create_table[] =
    "CREATE TABLE IF NOT EXISTS idmint_segments ("
    "tag TEXT PRIMARY KEY, next_id BIGINT NOT NULL, step BIGINT NOT NULL, "
    "stride BIGINT NOT NULL, \"offset\" BIGINT NOT NULL, max_step BIGINT NOT NULL, "
    "leases BIGINT NOT NULL, created_ms BIGINT NOT NULL, updated_ms BIGINT NOT NULL)";

const char idmseg__sql_insert[] =
    "INSERT INTO idmint_segments (tag, next_id, step, max_step, stride, \"offset\", leases, "
    "created_ms, updated_ms) VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $7) "
    "ON CONFLICT (tag) DO NOTHING";

/* The guard keeps next_id within a BIGINT without computing anything that
 * could overflow: count <= (MAX - next_id) / stride (integer division)
 * means next_id + count * stride <= MAX. A row it refuses is left as it
 * was; the caller then tells a used-up tag from a missing one. */
const char idmseg__sql_lease[] =
    "UPDATE idmint_segments SET next_id = next_id + $2 * stride, leases = leases + 1, "
    "updated_ms = $3 WHERE tag = $1 AND $2 <= (9223372036854775807 - next_id) / stride "
    "RETURNING next_id - $2 * stride, stride";

const char idmseg__sql_select[] = IDMSEG_SQL_COLUMNS " WHERE tag = $1";
/* Byte order: SQLite's BINARY collation (segstore_pg.c has its own). */
const char idmseg__sql_list[] = IDMSEG_SQL_COLUMNS " ORDER BY tag";

#ifndef IDMSEG_HAVE_SQLITE
const idmseg__ops *const idmseg__sqlite_ops = NULL;
#endif
#ifndef IDMSEG_HAVE_PG
const idmseg__ops *const idmseg__pg_ops = NULL;
#endif

#define TAG_RULE "(only A-Z, a-z, 0-9 and _ . - : @ { } | + ~)"

void idmseg__msg(idmseg_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

const char *idmseg_strerror(int code)
{
    switch (code) {
    case IDMSEG_OK:
        return "success";
    case IDMSEG_EDB:
        return "the database could not be reached or failed";
    case IDMSEG_EUSAGE:
        return "a bad URL, tag name or value";
    case IDMSEG_ENOTAG:
        return "no such tag in the store";
    case IDMSEG_EEXISTS:
        return "the tag exists already";
    case IDMSEG_EREADONLY:
        return "the store cannot be written";
    }
    return "unknown error";
}

/* Every public call works on a record of its own and hands it to the
 * caller only when it fails, with the code, so that a successful call
 * leaves the caller's record as it was (a backend may write a message and
 * then recover, as a reconnect does). */
static int finish(int rc, idmseg_error *mine, idmseg_error *err)
{
    if (rc == IDMSEG_OK || err == NULL)
        return rc;
    mine->code = rc;
    *err = *mine;
    return rc;
}

/* The tag rule (<idmint/segstore.h>): letters of either case (Leaf's
 * biz_tag is a free varchar, "Orders" included), digits, and the
 * punctuation Redis users put in keys ("order:id", "{user}:seq",
 * "a|b", "v1.2~x"). Nothing that JSON, a Prometheus label value or a URL
 * path segment would have to escape: no quote, backslash, '/', '?', '%',
 * '#', space or control byte, so a tag is written back unescaped
 * everywhere (/metrics, JSON replies, logs) and can be typed in a path. */
static bool tag_byte_ok(unsigned char ch)
{
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'))
        return true;
    return ch != '\0' && strchr("_.-:@{}|+~", ch) != NULL;
}

static bool tag_check(const char *tag, size_t len, idmseg_error *err)
{
    if (len == 0) {
        idmseg__msg(err, "a tag name cannot be empty");
        return false;
    }
    if (len > IDMSEG_TAG_MAX) {
        idmseg__msg(err, "a tag name has at most %d bytes, got %zu", IDMSEG_TAG_MAX, len);
        return false;
    }
    /* Every byte, a NUL too: the name is never quoted back (it may hold
     * anything), only the first byte outside the rule and where it is. */
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)tag[i];
        if (tag_byte_ok(ch))
            continue;
        if (ch >= 0x21 && ch < 0x7f)
            idmseg__msg(err, "byte 0x%02x ('%c') at %zu is not allowed " TAG_RULE, ch, ch, i);
        else
            idmseg__msg(err, "byte 0x%02x at %zu is not allowed " TAG_RULE, ch, i);
        return false;
    }
    return true;
}

int64_t idmseg__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int idmseg__tag_info_fill(idmseg_tag_info *out, const char *tag, const int64_t v[8])
{
    memset(out, 0, sizeof *out);
    size_t len = strlen(tag);
    if (len > IDMSEG_TAG_MAX)
        return -1;
    memcpy(out->tag, tag, len + 1);
    for (int i = 0; i < 6; i++)
        if (v[i] < 0)
            return -1;
    out->next_id = (uint64_t)v[0];
    out->step = (uint64_t)v[1];
    out->max_step = (uint64_t)v[2];
    out->stride = (uint64_t)v[3];
    out->offset = (uint64_t)v[4];
    out->leases = (uint64_t)v[5];
    out->created_ms = v[6];
    out->updated_ms = v[7];
    return out->stride == 0 ? -1 : 0;
}

int idmseg__used_up(const char *tag, uint64_t next_id, uint64_t count, uint64_t stride,
                    idmseg_error *err)
{
    idmseg__msg(err,
                "tag %s is used up: %" PRIu64 " more IDs (stride %" PRIu64 ") from %" PRIu64
                " would pass 2^63 - 1",
                tag, count, stride, next_id);
    return IDMSEG_EUSAGE;
}

/* "sqlite:PATH" or a libpq URI. */
static int do_store_open(const char *url, idmseg_store **out, idmseg_error *err)
{
    *out = NULL;
    const idmseg__ops *ops = NULL;
    const char *target = NULL;
    if (strncmp(url, "sqlite:", 7) == 0) {
        ops = idmseg__sqlite_ops;
        target = url + 7;
        if (ops == NULL) {
            idmseg__msg(err, "this build has no SQLite store (configure with libsqlite3-dev)");
            return IDMSEG_EUSAGE;
        }
        if (*target == '\0') {
            idmseg__msg(err, "sqlite: needs a file's path (sqlite:PATH)");
            return IDMSEG_EUSAGE;
        }
    } else if (strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0) {
        ops = idmseg__pg_ops;
        target = url;
        if (ops == NULL) {
            idmseg__msg(err, "this build has no PostgreSQL store (configure with libpq-dev)");
            return IDMSEG_EUSAGE;
        }
    } else {
        /* Not echoed whole: a URL may carry a password. */
        idmseg__msg(err,
                    "'%.*s...' is not a segment store URL (sqlite:PATH or "
                    "postgresql://USER@HOST:PORT/DB)",
                    (int)strcspn(url, ":@"), url);
        return IDMSEG_EUSAGE;
    }
    idmseg_store *st = calloc(1, sizeof *st);
    if (st == NULL) {
        idmseg__msg(err, "out of memory");
        return IDMSEG_EDB;
    }
    st->ops = ops;
    int rc = ops->open(st, target, err);
    if (rc != 0) {
        free(st);
        return rc;
    }
    *out = st;
    return 0;
}

const char *idmseg_store_kind(const idmseg_store *st)
{
    return st->ops->kind;
}

void idmseg_store_close(idmseg_store *st)
{
    if (st == NULL)
        return;
    st->ops->close(st);
    free(st);
}

/* Applies the checks of idmseg_store_create to *spec; rounds first up. */
static int check_spec(const char *tag, idmseg_tag_spec *spec, idmseg_error *err)
{
    const uint64_t max = IDMSEG_BIGINT_MAX;
    if (spec->stride == 0 || spec->stride > max) {
        idmseg__msg(err, "tag %s: the stride must be 1 to 2^63 - 1, got %" PRIu64, tag,
                    spec->stride);
        return IDMSEG_EUSAGE;
    }
    if (spec->offset >= spec->stride) {
        idmseg__msg(err, "tag %s: the offset must be below the stride (%" PRIu64 "), got %" PRIu64,
                    tag, spec->stride, spec->offset);
        return IDMSEG_EUSAGE;
    }
    if (spec->max_step == 0 || spec->max_step > max) {
        idmseg__msg(err, "tag %s: the maximum step must be 1 to 2^63 - 1, got %" PRIu64, tag,
                    spec->max_step);
        return IDMSEG_EUSAGE;
    }
    if (spec->step == 0 || spec->step > spec->max_step) {
        idmseg__msg(err,
                    "tag %s: the step must be 1 to the maximum step (%" PRIu64 "), got %" PRIu64,
                    tag, spec->max_step, spec->step);
        return IDMSEG_EUSAGE;
    }
    if (spec->first > max) {
        idmseg__msg(err, "tag %s: the first ID must be at most 2^63 - 1, got %" PRIu64, tag,
                    spec->first);
        return IDMSEG_EUSAGE;
    }
    /* Rounded up to the tag's residue, so that every ID it hands out is
     * offset modulo stride (an odd store never meets an even one). */
    uint64_t up = (spec->offset + spec->stride - spec->first % spec->stride) % spec->stride;
    if (up > max - spec->first) {
        idmseg__msg(err,
                    "tag %s: the first ID %" PRIu64 " rounded up to %" PRIu64 " modulo %" PRIu64
                    " passes 2^63 - 1",
                    tag, spec->first, spec->offset, spec->stride);
        return IDMSEG_EUSAGE;
    }
    spec->first += up;
    return 0;
}

static int do_store_create(idmseg_store *st, const char *tag, const idmseg_tag_spec *spec,
                           idmseg_error *err)
{
    if (!tag_check(tag, strlen(tag), err))
        return IDMSEG_EUSAGE;
    idmseg_tag_spec s = IDMSEG_TAG_SPEC_DEFAULTS;
    if (spec != NULL)
        s = *spec;
    int rc = check_spec(tag, &s, err);
    if (rc != 0)
        return rc;
    return st->ops->create(st, tag, &s, idmseg__now_ms(), err);
}

static int do_store_lease(idmseg_store *st, const char *tag, uint64_t count, uint64_t *first,
                          uint64_t *stride, idmseg_error *err)
{
    if (!tag_check(tag, strlen(tag), err))
        return IDMSEG_EUSAGE;
    if (count == 0) {
        idmseg__msg(err, "tag %s: a lease of 0 IDs", tag);
        return IDMSEG_EUSAGE;
    }
    if (count > IDMSEG_BIGINT_MAX) {
        idmseg__msg(err, "tag %s: a lease of %" PRIu64 " IDs passes 2^63 - 1", tag, count);
        return IDMSEG_EUSAGE;
    }
    return st->ops->lease(st, tag, count, idmseg__now_ms(), first, stride, err);
}

static int do_store_show(idmseg_store *st, const char *tag, idmseg_tag_info *out, idmseg_error *err)
{
    if (!tag_check(tag, strlen(tag), err))
        return IDMSEG_EUSAGE;
    return st->ops->show(st, tag, out, err);
}

static int do_store_list(idmseg_store *st, void (*fn)(void *ctx, const idmseg_tag_info *tag),
                         void *ctx, idmseg_error *err)
{
    return st->ops->list(st, fn, ctx, err);
}

/* ---- the public calls: each on a record of its own (finish) ---------------- */

bool idmseg_tag_valid(const char *tag, size_t len, idmseg_error *err)
{
    idmseg_error mine = {0};
    bool ok = tag_check(tag, len, &mine);
    if (!ok)
        (void)finish(IDMSEG_EUSAGE, &mine, err);
    return ok;
}

int idmseg_store_open(const char *url, idmseg_store **out, idmseg_error *err)
{
    idmseg_error mine = {0};
    return finish(do_store_open(url, out, &mine), &mine, err);
}

int idmseg_store_create(idmseg_store *st, const char *tag, const idmseg_tag_spec *spec,
                        idmseg_error *err)
{
    idmseg_error mine = {0};
    return finish(do_store_create(st, tag, spec, &mine), &mine, err);
}

int idmseg_store_lease(idmseg_store *st, const char *tag, uint64_t count, uint64_t *first,
                       uint64_t *stride, idmseg_error *err)
{
    idmseg_error mine = {0};
    return finish(do_store_lease(st, tag, count, first, stride, &mine), &mine, err);
}

int idmseg_store_show(idmseg_store *st, const char *tag, idmseg_tag_info *out, idmseg_error *err)
{
    idmseg_error mine = {0};
    return finish(do_store_show(st, tag, out, &mine), &mine, err);
}

int idmseg_store_list(idmseg_store *st, void (*fn)(void *ctx, const idmseg_tag_info *tag),
                      void *ctx, idmseg_error *err)
{
    idmseg_error mine = {0};
    int n = do_store_list(st, fn, ctx, &mine);
    if (n < 0)
        (void)finish(IDMSEG_EDB, &mine, err);
    return n;
}
