/*
 * ulid_text.c - ULID text form and timestamp (https://github.com/ulid/spec).
 *
 * 26 characters of Crockford base32: 10 for the 48-bit Unix milliseconds,
 * 16 for the 80 random bits. Parsing is case-insensitive; output is the
 * canonical uppercase form.
 *
 * Deliberately left out: Crockford aliases (I, L, O, U are rejected, see
 * codec/base32.c) and minting, which lives in ulid_gen.c.
 */
#include "internal.h"

int idm_ulid_parse(const char *text, size_t len, idm_ulid *out, idm_error *err)
{
    if (len != IDM_ULID_STRLEN)
        return idm__fail(err, IDM_EPARSE, len < IDM_ULID_STRLEN ? len : IDM_ULID_STRLEN,
                         "ULID must be %d characters, got %zu", IDM_ULID_STRLEN, len);
    idm_ulid value;
    int rc = idm__base32_decode128(text, value.bytes, false, "ULID", err);
    if (rc != IDM_OK)
        return rc;
    *out = value;
    return IDM_OK;
}

int idm_ulid_format(const idm_ulid *u, char *dst, size_t cap)
{
    if (cap < IDM_ULID_STRLEN + 1)
        return IDM_ENOSPC;
    idm__base32_encode128(u->bytes, dst, false);
    dst[IDM_ULID_STRLEN] = '\0';
    return IDM_OK;
}

int64_t idm_ulid_unix_ms(const idm_ulid *u)
{
    return (int64_t)idm__get_be48(u->bytes);
}
