/*
 * token.c - opaque public tokens and W3C traceparent values.
 *
 * A token is an optional prefix (the TypeID prefix rule, typeid/prefix.h)
 * and "_", then 128 CSPRNG bits as 22 fixed-width base62 characters. It is
 * a secret: the random bytes are wiped from the stack after encoding, and
 * idm_token_equal compares in time that depends only on the lengths.
 *
 * A traceparent follows W3C Trace Context level 1, section 3.2
 * (https://www.w3.org/TR/trace-context/#traceparent-header):
 * "00-" 32 hex trace-id "-" 16 hex parent-id "-" 2 hex flags, lowercase,
 * neither id all zeros.
 *
 * Deliberately left out: token parsing (a token is compared, never
 * decoded), tracestate, and traceparent versions above 00 (whose parsers
 * must accept longer values; this library only speaks 00).
 */
#include "internal.h"

#include "codec/charname.h"
#include "typeid/prefix.h"

#include <string.h>

#define TOKEN_RANDOM_BYTES 16
/* Drawing an all-zero id from a working CSPRNG is a 2^-64 event; seeing it
 * this often means the source is broken, so stop instead of spinning. */
#define TRACEPARENT_MAX_DRAWS 8

int idm_token_check_prefix(const char *prefix, size_t len, idm_error *err)
{
    return idm__prefix_check(prefix, len, IDM_EINVAL, "token prefix", err);
}

int idm_token_next(idm_gen *g, const char *prefix, size_t prefix_len, char *dst, size_t cap,
                   idm_error *err)
{
    int rc = idm_token_check_prefix(prefix, prefix_len, err);
    if (rc != IDM_OK)
        return rc;
    size_t separator = prefix_len > 0 ? 1 : 0;
    size_t need = prefix_len + separator + IDM_TOKEN_BODY_LEN + 1;
    if (cap < need)
        return idm__fail(err, IDM_ENOSPC, 0, "a %zu-byte buffer cannot hold this token (%zu bytes)",
                         cap, need);

    uint8_t secret[TOKEN_RANDOM_BYTES];
    rc = idm_gen_random(g, secret, sizeof secret, err);
    if (rc != IDM_OK) {
        idm__wipe(secret, sizeof secret);
        return rc;
    }
    if (prefix_len > 0) {
        memcpy(dst, prefix, prefix_len);
        dst[prefix_len] = '_';
    }
    idm__base62_encode(secret, sizeof secret, dst + prefix_len + separator, IDM_TOKEN_BODY_LEN);
    dst[need - 1] = '\0';
    idm__wipe(secret, sizeof secret);
    return IDM_OK;
}

int idm_token_equal(const char *a, size_t a_len, const char *b, size_t b_len)
{
    if (a_len != b_len)
        return 0;
    /* Accumulate every difference; the volatile store keeps the compiler
     * from turning the loop into an early-exit memcmp. */
    volatile unsigned char diff = 0;
    for (size_t i = 0; i < a_len; i++)
        diff = (unsigned char)(diff | ((unsigned char)a[i] ^ (unsigned char)b[i]));
    return diff == 0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
    uint8_t acc = 0;
    for (size_t i = 0; i < n; i++)
        acc |= p[i];
    return acc == 0;
}

/* Fills id with random bytes that are not all zero (W3C Trace Context
 * section 3.2.2.3 and 3.2.2.4 forbid all-zero ids). */
static int draw_nonzero_id(idm_gen *g, uint8_t *id, size_t n, const char *what, idm_error *err)
{
    for (int attempt = 0; attempt < TRACEPARENT_MAX_DRAWS; attempt++) {
        int rc = idm_gen_random(g, id, n, err);
        if (rc != IDM_OK)
            return rc;
        if (!all_zero(id, n))
            return IDM_OK;
    }
    return idm__fail(err, IDM_ENOENTROPY, 0,
                     "the randomness source returned an all-zero %s %d times in a row", what,
                     TRACEPARENT_MAX_DRAWS);
}

int idm_traceparent_next(idm_gen *g, char *dst, size_t cap, idm_error *err)
{
    if (cap < IDM_TRACEPARENT_STRLEN + 1)
        return idm__fail(err, IDM_ENOSPC, 0,
                         "a %zu-byte buffer cannot hold a traceparent (%d bytes)", cap,
                         IDM_TRACEPARENT_STRLEN + 1);
    uint8_t trace_id[16];
    uint8_t parent_id[8];
    int rc = draw_nonzero_id(g, trace_id, sizeof trace_id, "trace-id", err);
    if (rc != IDM_OK)
        return rc;
    rc = draw_nonzero_id(g, parent_id, sizeof parent_id, "parent-id", err);
    if (rc != IDM_OK)
        return rc;

    memcpy(dst, "00-", 3);
    idm__hex_encode(trace_id, sizeof trace_id, dst + 3);
    dst[35] = '-';
    idm__hex_encode(parent_id, sizeof parent_id, dst + 36);
    memcpy(dst + 52, "-01", 4); /* the sampled flag, and the NUL */
    return IDM_OK;
}

/* Field layout of a version-00 traceparent: offsets of the hyphens. */
static bool traceparent_hyphen_at(size_t i)
{
    return i == 2 || i == 35 || i == 52;
}

int idm_traceparent_parse(const char *text, size_t len, idm_traceparent *out, idm_error *err)
{
    const unsigned char *s = (const unsigned char *)text;
    uint8_t raw[27]; /* version, 16 trace-id, 8 parent-id, flags, and slack */
    size_t nibbles = 0;
    char name[IDM__CHARNAME_CAP];

    for (size_t i = 0; i < len && i < IDM_TRACEPARENT_STRLEN; i++) {
        if (traceparent_hyphen_at(i)) {
            if (s[i] != '-')
                return idm__fail(err, IDM_EPARSE, i,
                                 "traceparent has %s at position %zu where '-' belongs",
                                 idm__char_name(s[i], name), i + 1);
            continue;
        }
        int v = idm__hex_value(s[i]);
        if (v < 0 || (s[i] >= 'A' && s[i] <= 'F'))
            return idm__fail(err, IDM_EPARSE, i,
                             "traceparent has %s at position %zu (expected a lowercase hex digit)",
                             idm__char_name(s[i], name), i + 1);
        if (nibbles % 2 == 0)
            raw[nibbles / 2] = (uint8_t)(v << 4);
        else
            raw[nibbles / 2] |= (uint8_t)v;
        nibbles++;
        if (i == 1 && raw[0] != 0) {
            /* Version ff is forbidden outright; other versions may carry
             * more fields, which this parser does not know. */
            if (raw[0] == 0xff)
                return idm__fail(err, IDM_EPARSE, 0, "traceparent version ff is invalid");
            return idm__fail(err, IDM_EPARSE, 0, "traceparent version must be 00, got %02x",
                             (unsigned)raw[0]);
        }
    }
    if (len != IDM_TRACEPARENT_STRLEN)
        return idm__fail(err, IDM_EPARSE,
                         len < IDM_TRACEPARENT_STRLEN ? len : IDM_TRACEPARENT_STRLEN,
                         "traceparent must be %d characters, got %zu", IDM_TRACEPARENT_STRLEN, len);
    if (all_zero(raw + 1, 16))
        return idm__fail(err, IDM_EPARSE, 3, "traceparent trace-id must not be all zeros");
    if (all_zero(raw + 17, 8))
        return idm__fail(err, IDM_EPARSE, 36, "traceparent parent-id must not be all zeros");

    out->version = raw[0];
    memcpy(out->trace_id, raw + 1, 16);
    memcpy(out->parent_id, raw + 17, 8);
    out->flags = raw[25];
    return IDM_OK;
}
