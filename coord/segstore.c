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
#include "segstore_backend.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char idmc_sql_create_table[] =
    "CREATE TABLE IF NOT EXISTS idmint_segments ("
    "tag TEXT PRIMARY KEY, next_id BIGINT NOT NULL, step BIGINT NOT NULL, "
    "stride BIGINT NOT NULL, \"offset\" BIGINT NOT NULL, max_step BIGINT NOT NULL, "
    "leases BIGINT NOT NULL, created_ms BIGINT NOT NULL, updated_ms BIGINT NOT NULL)";

const char idmc_sql_insert[] =
    "INSERT INTO idmint_segments (tag, next_id, step, max_step, stride, \"offset\", leases, "
    "created_ms, updated_ms) VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $7) "
    "ON CONFLICT (tag) DO NOTHING";

/* The guard keeps next_id within a BIGINT without computing anything that
 * could overflow: count <= (MAX - next_id) / stride (integer division)
 * means next_id + count * stride <= MAX. A row it refuses is left as it
 * was; the caller then tells a used-up tag from a missing one. */
const char idmc_sql_lease[] =
    "UPDATE idmint_segments SET next_id = next_id + $2 * stride, leases = leases + 1, "
    "updated_ms = $3 WHERE tag = $1 AND $2 <= (9223372036854775807 - next_id) / stride "
    "RETURNING next_id - $2 * stride, stride";

const char idmc_sql_select[] = IDMC_SQL_COLUMNS " WHERE tag = $1";
/* Byte order: SQLite's BINARY collation (segstore_pg.c has its own). */
const char idmc_sql_list[] = IDMC_SQL_COLUMNS " ORDER BY tag";

#ifndef IDMC_HAVE_SQLITE
const idmc_store_ops *const idmc_sqlite_store_ops = NULL;
#endif
#ifndef IDMC_HAVE_PG
const idmc_store_ops *const idmc_pg_store_ops = NULL;
#endif

#define TAG_RULE "(only a-z, 0-9, '_', '.', '-')"

static void set_msg(char *msg, size_t cap, const char *s)
{
    if (cap > 0)
        snprintf(msg, cap, "%s", s);
}

bool idmc_tag_valid(const char *tag, size_t len, char *msg, size_t cap)
{
    if (len == 0) {
        set_msg(msg, cap, "a tag name cannot be empty");
        return false;
    }
    if (len > IDMC_TAG_MAX) {
        snprintf(msg, cap, "a tag name has at most %d bytes, got %zu", IDMC_TAG_MAX, len);
        return false;
    }
    /* Every byte, a NUL too: the name is never quoted back (it may hold
     * anything), only the first byte outside the rule and where it is. */
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)tag[i];
        if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
            ch == '-')
            continue;
        if (ch >= 0x21 && ch < 0x7f)
            snprintf(msg, cap, "byte 0x%02x ('%c') at %zu is not allowed " TAG_RULE, ch, ch, i);
        else
            snprintf(msg, cap, "byte 0x%02x at %zu is not allowed " TAG_RULE, ch, i);
        return false;
    }
    return true;
}

int64_t idmc_store_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int idmc_tag_info_fill(idmc_tag_info *out, const char *tag, const int64_t v[8])
{
    memset(out, 0, sizeof *out);
    size_t len = strlen(tag);
    if (len > IDMC_TAG_MAX)
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

int idmc_used_up(const char *tag, uint64_t next_id, uint64_t count, uint64_t stride, char *msg,
                 size_t cap)
{
    snprintf(msg, cap,
             "tag %s is used up: %" PRIu64 " more IDs (stride %" PRIu64 ") from %" PRIu64
             " would pass 2^63 - 1",
             tag, count, stride, next_id);
    return IDMC_USAGE;
}

/* "sqlite:PATH" or a libpq URI. */
int idmc_store_open(const char *url, idmc_store **out, char *msg, size_t cap)
{
    *out = NULL;
    msg[0] = '\0';
    const idmc_store_ops *ops = NULL;
    const char *target = NULL;
    if (strncmp(url, "sqlite:", 7) == 0) {
        ops = idmc_sqlite_store_ops;
        target = url + 7;
        if (ops == NULL) {
            set_msg(msg, cap, "this build has no SQLite store (configure with libsqlite3-dev)");
            return IDMC_USAGE;
        }
        if (*target == '\0') {
            set_msg(msg, cap, "sqlite: needs a file's path (sqlite:PATH)");
            return IDMC_USAGE;
        }
    } else if (strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0) {
        ops = idmc_pg_store_ops;
        target = url;
        if (ops == NULL) {
            set_msg(msg, cap, "this build has no PostgreSQL store (configure with libpq-dev)");
            return IDMC_USAGE;
        }
    } else {
        /* Not echoed whole: a URL may carry a password. */
        snprintf(msg, cap,
                 "'%.*s...' is not a segment store URL (sqlite:PATH or "
                 "postgresql://USER@HOST:PORT/DB)",
                 (int)strcspn(url, ":@"), url);
        return IDMC_USAGE;
    }
    idmc_store *st = calloc(1, sizeof *st);
    if (st == NULL) {
        set_msg(msg, cap, "out of memory");
        return IDMC_ERROR;
    }
    st->ops = ops;
    int rc = ops->open(st, target, msg, cap);
    if (rc != 0) {
        free(st);
        return rc;
    }
    *out = st;
    return 0;
}

const char *idmc_store_kind(const idmc_store *st)
{
    return st->ops->kind;
}

void idmc_store_close(idmc_store *st)
{
    if (st == NULL)
        return;
    st->ops->close(st);
    free(st);
}

/* Applies the checks of idmc_store_create to *spec; rounds first up. */
static int check_spec(const char *tag, idmc_tag_spec *spec, char *msg, size_t cap)
{
    const uint64_t max = IDMC_BIGINT_MAX;
    if (spec->stride == 0 || spec->stride > max) {
        snprintf(msg, cap, "tag %s: the stride must be 1 to 2^63 - 1, got %" PRIu64, tag,
                 spec->stride);
        return IDMC_USAGE;
    }
    if (spec->offset >= spec->stride) {
        snprintf(msg, cap,
                 "tag %s: the offset must be below the stride (%" PRIu64 "), got %" PRIu64, tag,
                 spec->stride, spec->offset);
        return IDMC_USAGE;
    }
    if (spec->max_step == 0 || spec->max_step > max) {
        snprintf(msg, cap, "tag %s: the maximum step must be 1 to 2^63 - 1, got %" PRIu64, tag,
                 spec->max_step);
        return IDMC_USAGE;
    }
    if (spec->step == 0 || spec->step > spec->max_step) {
        snprintf(msg, cap,
                 "tag %s: the step must be 1 to the maximum step (%" PRIu64 "), got %" PRIu64, tag,
                 spec->max_step, spec->step);
        return IDMC_USAGE;
    }
    if (spec->first > max) {
        snprintf(msg, cap, "tag %s: the first ID must be at most 2^63 - 1, got %" PRIu64, tag,
                 spec->first);
        return IDMC_USAGE;
    }
    /* Rounded up to the tag's residue, so that every ID it hands out is
     * offset modulo stride (an odd store never meets an even one). */
    uint64_t up = (spec->offset + spec->stride - spec->first % spec->stride) % spec->stride;
    if (up > max - spec->first) {
        snprintf(msg, cap,
                 "tag %s: the first ID %" PRIu64 " rounded up to %" PRIu64 " modulo %" PRIu64
                 " passes 2^63 - 1",
                 tag, spec->first, spec->offset, spec->stride);
        return IDMC_USAGE;
    }
    spec->first += up;
    return 0;
}

int idmc_store_create(idmc_store *st, const char *tag, const idmc_tag_spec *spec, char *msg,
                      size_t cap)
{
    msg[0] = '\0';
    if (!idmc_tag_valid(tag, strlen(tag), msg, cap))
        return IDMC_USAGE;
    idmc_tag_spec s = IDMC_TAG_SPEC_DEFAULTS;
    if (spec != NULL)
        s = *spec;
    int rc = check_spec(tag, &s, msg, cap);
    if (rc != 0)
        return rc;
    return st->ops->create(st, tag, &s, idmc_store_now_ms(), msg, cap);
}

int idmc_store_lease(idmc_store *st, const char *tag, uint64_t count, uint64_t *first,
                     uint64_t *stride, char *msg, size_t cap)
{
    msg[0] = '\0';
    if (!idmc_tag_valid(tag, strlen(tag), msg, cap))
        return IDMC_USAGE;
    if (count == 0) {
        snprintf(msg, cap, "tag %s: a lease of 0 IDs", tag);
        return IDMC_USAGE;
    }
    if (count > IDMC_BIGINT_MAX) {
        snprintf(msg, cap, "tag %s: a lease of %" PRIu64 " IDs passes 2^63 - 1", tag, count);
        return IDMC_USAGE;
    }
    return st->ops->lease(st, tag, count, idmc_store_now_ms(), first, stride, msg, cap);
}

int idmc_store_show(idmc_store *st, const char *tag, idmc_tag_info *out, char *msg, size_t cap)
{
    msg[0] = '\0';
    if (!idmc_tag_valid(tag, strlen(tag), msg, cap))
        return IDMC_USAGE;
    return st->ops->show(st, tag, out, msg, cap);
}

int idmc_store_list(idmc_store *st, void (*fn)(void *ctx, const idmc_tag_info *tag), void *ctx,
                    char *msg, size_t cap)
{
    msg[0] = '\0';
    return st->ops->list(st, fn, ctx, msg, cap);
}
