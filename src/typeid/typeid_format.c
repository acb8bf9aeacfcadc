/*
 * typeid_format.c - the typeid row of the format table (format.h): a
 * required prefix (the rule of typeid.h) and a UUIDv7 in base32. Minted in
 * chunks of UUIDv7s (one clock read and one state reservation each), so
 * TypeIDs sort with the generator's UUIDv7s; parsed by idm_typeid_parse,
 * of a UUIDv7 only; observed as their UUIDv7.
 */
#include "format/format_row.h"

#include <string.h>

#define CHUNK 512

/* The UUIDv7s behind the TypeIDs: drawn a chunk at a time. */
typedef struct typeid_chunk {
    const char *prefix;
    size_t prefix_len;
    size_t left; /* IDs still to mint, this chunk's included */
    size_t i, k; /* the next of this chunk's k UUIDs */
    idm_uuid uuid[CHUNK];
} typeid_chunk;

static int next(void *ctx, idm_gen *g, char *buf, size_t cap, idm_error *err)
{
    typeid_chunk *c = ctx;
    if (c->i == c->k) {
        c->k = c->left < CHUNK ? c->left : CHUNK;
        c->i = 0;
        int rc = idm_uuidv7_next_n(g, c->uuid, c->k, err);
        if (rc != IDM_OK)
            return rc;
    }
    c->left--;
    return idm_typeid_format(c->prefix, c->prefix_len, &c->uuid[c->i++], buf, cap, err);
}

static int mint(const idm_format *f, idm_gen *g, const char *prefix, size_t prefix_len, char *dst,
                size_t n, bool nl, size_t *len, idm_error *err)
{
    typeid_chunk c;
    c.prefix = prefix;
    c.prefix_len = prefix_len;
    c.left = n;
    c.i = c.k = 0;
    return idm__format_mint_each(n, idm_format_text_len(f, prefix_len), nl, dst, len, next, &c, g,
                                 err);
}

static int parse(const idm_format *f, const char *text, size_t len, idm_format_value *out,
                 idm_error *err)
{
    (void)f;
    idm_typeid t;
    int rc = idm__format_value_set(out, idm_typeid_parse(text, len, &t, err), t.uuid.bytes,
                                   sizeof t.uuid.bytes);
    if (rc != IDM_OK)
        return rc;
    memcpy(out->prefix, t.prefix, t.prefix_len + 1);
    out->prefix_len = t.prefix_len;
    return idm__format_uuid_version_check(out, 7, err);
}

const idm__format_row idm__format_typeid = {
    {IDM_FORMAT_TYPEID, "typeid", 128, IDM_TYPEID_SUFFIX_LEN, IDM_TYPEID_STRLEN_MAX, 1,
     IDM_PREFIX_REQUIRED, IDM_KIND_TYPEID, IDM_FORMAT_BY_GEN},
    idm_typeid_check_prefix,
    mint,
    parse,
    idm__format_uuidv7_observe};
