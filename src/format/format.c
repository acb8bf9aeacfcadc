/*
 * format.c - the format table (format.h): lookups, and the dispatch of the
 * entry points after the checks every format shares.
 *
 * The table lists each format's row once, in the order front ends show
 * formats (time-ordered UUIDv7 first, as `idmint gen`'s help and
 * idmintd's metrics do); the rows themselves, with their facts and entry
 * points, live in the formats' folders. Adding a format is its folder, one
 * line here, and its tests (docs/design.md, "The format table").
 */
#include "format/format_row.h"

#include <string.h>

static const idm__format_row *const rows[] = {
    &idm__format_uuidv7,    &idm__format_uuidv4, &idm__format_ulid,  &idm__format_ksuid,
    &idm__format_snowflake, &idm__format_typeid, &idm__format_token, &idm__format_traceparent,
};

#define ROW_COUNT (sizeof rows / sizeof rows[0])

static const idm__format_row *row_of(const idm_format *f)
{
    return (const idm__format_row *)f;
}

size_t idm_format_count(void)
{
    return ROW_COUNT;
}

const idm_format *idm_format_at(size_t i)
{
    return i < ROW_COUNT ? &rows[i]->pub : NULL;
}

const idm_format *idm_format_by_id(int id)
{
    for (size_t i = 0; i < ROW_COUNT; i++) {
        if (rows[i]->pub.id == id)
            return &rows[i]->pub;
    }
    return NULL;
}

const idm_format *idm_format_by_name(const char *name, size_t len)
{
    if (name == NULL || len == 0)
        return NULL; /* no format has an empty name */
    for (size_t i = 0; i < ROW_COUNT; i++) {
        const char *n = rows[i]->pub.name;
        if (n[0] == name[0] && strlen(n) == len && memcmp(n, name, len) == 0)
            return &rows[i]->pub;
    }
    return NULL;
}

size_t idm_format_text_len(const idm_format *f, size_t prefix_len)
{
    if (f == NULL)
        return 0;
    if (prefix_len == 0)
        return f->text_len;
    if (f->prefix == IDM_PREFIX_NONE || f->text_len + prefix_len + 1 > f->text_max)
        return 0;
    return prefix_len + 1 + f->text_len;
}

int idm_format_check_prefix(const idm_format *f, const char *prefix, size_t len, idm_error *err)
{
    if (f == NULL || (prefix == NULL && len > 0))
        return idm__fail(err, IDM_EINVAL, 0, "format and prefix must not be NULL");
    if (len > 0 && f->prefix == IDM_PREFIX_NONE)
        return idm__fail(err, IDM_EINVAL, 0, "%s takes no prefix", f->name);
    if (prefix == NULL && f->prefix == IDM_PREFIX_REQUIRED)
        return idm__fail(err, IDM_EINVAL, 0, "%s needs a prefix", f->name);
    if (len == 0)
        return IDM_OK;
    return row_of(f)->check_prefix(prefix, len, err);
}

int idm_format_next_text_n(const idm_format *f, idm_gen *g, const char *prefix, size_t prefix_len,
                           char *dst, size_t cap, size_t n, uint32_t flags, size_t *len,
                           idm_error *err)
{
    if (len != NULL)
        *len = 0;
    if (f == NULL || g == NULL || len == NULL || (dst == NULL && n > 0))
        return idm__fail(err, IDM_EINVAL, 0, "format, generator and output must not be NULL");
    if (flags & ~(uint32_t)IDM_TEXT_NEWLINE)
        return idm__fail(err, IDM_EINVAL, 0, "unknown flags 0x%x", (unsigned)flags);
    const idm__format_row *r = row_of(f);
    if (r->mint == NULL)
        return idm__fail(err, IDM_EUNSUPPORTED, 0,
                         "%s IDs are minted by their own generator, not an idm_gen", f->name);
    int rc = idm_format_check_prefix(f, prefix, prefix_len, err);
    if (rc != IDM_OK)
        return rc;
    bool nl = (flags & IDM_TEXT_NEWLINE) != 0;
    size_t stride = idm_format_text_len(f, prefix_len) + (nl ? 1 : 0);
    if (n > cap / stride)
        return idm__fail(err, IDM_ENOSPC, 0, "%zu IDs need %zu bytes, the buffer has %zu", n,
                         n * stride, cap);
    if (n == 0)
        return IDM_OK;
    return r->mint(f, g, prefix, prefix_len, dst, n, nl, len, err);
}

int idm_format_parse(const idm_format *f, const char *text, size_t len, idm_format_value *out,
                     idm_error *err)
{
    if (f == NULL || out == NULL || (text == NULL && len > 0))
        return idm__fail(err, IDM_EINVAL, 0, "format, text and output must not be NULL");
    memset(out, 0, sizeof *out);
    out->format = f->id;
    return row_of(f)->parse(f, text != NULL ? text : "", len, out, err);
}

int idm_format_observe(const idm_format *f, idm_gen *g, const idm_format_value *seen,
                       int64_t max_offset_ms, idm_error *err)
{
    if (f == NULL || g == NULL || seen == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "format, generator and seen ID must not be NULL");
    const idm__format_row *r = row_of(f);
    if (r->observe == NULL)
        return idm__fail(err, IDM_EUNSUPPORTED, 0,
                         f->time_ordered ? "%s IDs are observed by their own generator"
                                         : "%s is not time-ordered: there is nothing to observe",
                         f->name);
    if (seen->format != f->id)
        return idm__fail(err, IDM_EINVAL, 0, "the seen ID is not a %s", f->name);
    return r->observe(g, seen, max_offset_ms, err);
}

int idm__format_value_set(idm_format_value *out, int rc, const uint8_t *bytes, size_t n)
{
    if (rc == IDM_OK) {
        memcpy(out->bytes, bytes, n);
        out->len = n;
    }
    return rc;
}

int idm__format_mint_each(size_t n, size_t one, bool nl, char *dst, size_t *len,
                          int (*next)(void *ctx, idm_gen *g, char *buf, size_t cap, idm_error *err),
                          void *ctx, idm_gen *g, idm_error *err)
{
    char last[IDM_FORMAT_TEXT_MAX + 1];
    char *p = dst;
    int rc = IDM_OK;
    for (size_t i = 0; i < n && rc == IDM_OK; i++) {
        /* Written in place, its NUL on the next ID's first byte or the
         * newline, but for the last ID without a newline, which has no
         * byte after it in dst. */
        bool in_place = nl || i + 1 < n;
        rc = next(ctx, g, in_place ? p : last, one + 1, err);
        if (rc == IDM_OK) {
            if (!in_place)
                memcpy(p, last, one);
            p += one;
            if (nl)
                *p++ = '\n';
        }
    }
    idm__wipe(last, sizeof last); /* tokens are secrets */
    *len = (size_t)(p - dst);
    return rc;
}
