/*
 * token_format.c - the token and traceparent rows of the format table
 * (format.h). Both are random, minted one at a time (idm_token_next,
 * idm_traceparent_next). A token's parse only checks its shape - an
 * optional prefix by the TypeID rule and "_", then 22 base62 characters of
 * at most 128 bits - and keeps the prefix: a token is compared, never
 * decoded (token.c), so its bits are not handed out.
 */
#include "format/format_row.h"

#include "typeid/prefix.h"

#include <string.h>

static int token_one(void *ctx, idm_gen *g, char *buf, size_t cap, idm_error *err)
{
    const idm_format_value *pre = ctx;
    return idm_token_next(g, pre->prefix, pre->prefix_len, buf, cap, err);
}

static int token_mint(const idm_format *f, idm_gen *g, const char *prefix, size_t prefix_len,
                      char *dst, size_t n, bool nl, size_t *len, idm_error *err)
{
    (void)f;
    idm_format_value pre; /* only the prefix, for token_one */
    if (prefix_len > 0)
        memcpy(pre.prefix, prefix, prefix_len);
    pre.prefix[prefix_len] = '\0';
    pre.prefix_len = prefix_len;
    return idm__format_mint_each(n, idm_format_text_len(f, prefix_len), nl, dst, len, token_one,
                                 &pre, g, err);
}

static int token_parse(const idm_format *f, const char *text, size_t len, idm_format_value *out,
                       idm_error *err)
{
    (void)f;
    if (len < IDM_TOKEN_BODY_LEN)
        return idm__fail(err, IDM_EPARSE, len, "token must be at least %d characters, got %zu",
                         IDM_TOKEN_BODY_LEN, len);
    size_t body = len - IDM_TOKEN_BODY_LEN;
    if (body > 0) {
        if (text[body - 1] != '_')
            return idm__fail(err, IDM_EPARSE, body - 1,
                             "token must be [PREFIX_] and %d base62 characters",
                             IDM_TOKEN_BODY_LEN);
        if (body == 1)
            return idm__fail(err, IDM_EPARSE, 0, "token has a separator but no prefix");
        int rc = idm__prefix_check(text, body - 1, IDM_EPARSE, "token prefix", err);
        if (rc != IDM_OK)
            return rc;
        memcpy(out->prefix, text, body - 1);
        out->prefix[body - 1] = '\0';
        out->prefix_len = body - 1;
    }
    uint8_t bits[16];
    int rc = idm__base62_decode(text + body, IDM_TOKEN_BODY_LEN, bits, sizeof bits, "token", err);
    idm__wipe(bits, sizeof bits);
    if (rc != IDM_OK && err != NULL)
        err->offset += body;
    return rc;
}

static int traceparent_one(void *ctx, idm_gen *g, char *buf, size_t cap, idm_error *err)
{
    (void)ctx;
    return idm_traceparent_next(g, buf, cap, err);
}

static int traceparent_mint(const idm_format *f, idm_gen *g, const char *prefix, size_t prefix_len,
                            char *dst, size_t n, bool nl, size_t *len, idm_error *err)
{
    (void)f;
    (void)prefix;
    (void)prefix_len;
    return idm__format_mint_each(n, IDM_TRACEPARENT_STRLEN, nl, dst, len, traceparent_one, NULL, g,
                                 err);
}

static int traceparent_parse(const idm_format *f, const char *text, size_t len,
                             idm_format_value *out, idm_error *err)
{
    (void)f;
    idm_traceparent t;
    int rc = idm_traceparent_parse(text, len, &t, err);
    if (rc != IDM_OK)
        return rc;
    out->bytes[0] = t.version;
    memcpy(out->bytes + 1, t.trace_id, sizeof t.trace_id);
    memcpy(out->bytes + 17, t.parent_id, sizeof t.parent_id);
    out->bytes[25] = t.flags;
    out->len = 26;
    return IDM_OK;
}

const idm__format_row idm__format_token = {{IDM_FORMAT_TOKEN, "token", 128, IDM_TOKEN_BODY_LEN,
                                            IDM_TOKEN_STRLEN_MAX, 0, IDM_PREFIX_OPTIONAL, 0,
                                            IDM_FORMAT_BY_GEN},
                                           idm_token_check_prefix,
                                           token_mint,
                                           token_parse,
                                           NULL};

const idm__format_row idm__format_traceparent = {{IDM_FORMAT_TRACEPARENT, "traceparent", 208,
                                                  IDM_TRACEPARENT_STRLEN, IDM_TRACEPARENT_STRLEN, 0,
                                                  IDM_PREFIX_NONE, 0, IDM_FORMAT_BY_GEN},
                                                 NULL,
                                                 traceparent_mint,
                                                 traceparent_parse,
                                                 NULL};
