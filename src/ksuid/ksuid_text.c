/*
 * ksuid_text.c - KSUID text form and timestamp
 * (https://github.com/segmentio/ksuid).
 *
 * 20 bytes (32-bit seconds since 1400000000, 128-bit payload) as exactly
 * 27 base62 characters, case-sensitive. The largest value, 2^160 - 1, is
 * aWgEPTl1tmebfsQzFP4bxwgy80V; anything above it is rejected rather than
 * wrapped.
 *
 * Deliberately left out: the binary/raw hex forms segmentio's CLI prints
 * (inspect renders those) and minting, which lives in ksuid_gen.c.
 */
#include "internal.h"

#define KSUID_MAX_TEXT "aWgEPTl1tmebfsQzFP4bxwgy80V"

int idm_ksuid_parse(const char *text, size_t len, idm_ksuid *out, idm_error *err)
{
    if (len != IDM_KSUID_STRLEN)
        return idm__fail(err, IDM_EPARSE, len < IDM_KSUID_STRLEN ? len : IDM_KSUID_STRLEN,
                         "KSUID must be %d characters, got %zu", IDM_KSUID_STRLEN, len);
    idm_ksuid value;
    int rc = idm__base62_decode(text, len, value.bytes, sizeof value.bytes, "KSUID", err);
    if (rc != IDM_OK) {
        /* The codec checks every character before the value, so a failure
         * at offset 0 with a valid first character is an overflow; name
         * the limit, which a reader cannot work out from "160 bits". */
        unsigned char c = (unsigned char)text[0];
        bool first_ok = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
        if (err != NULL && err->offset == 0 && first_ok)
            return idm__fail(err, IDM_EPARSE, 0, "KSUID exceeds 160 bits (the largest is %s)",
                             KSUID_MAX_TEXT);
        return rc;
    }
    *out = value;
    return IDM_OK;
}

int idm_ksuid_format(const idm_ksuid *k, char *dst, size_t cap)
{
    if (cap < IDM_KSUID_STRLEN + 1)
        return IDM_ENOSPC;
    idm__base62_encode(k->bytes, sizeof k->bytes, dst, IDM_KSUID_STRLEN);
    dst[IDM_KSUID_STRLEN] = '\0';
    return IDM_OK;
}

int64_t idm_ksuid_unix_ms(const idm_ksuid *k)
{
    return ((int64_t)idm__get_be32(k->bytes) + IDM_KSUID_EPOCH_S) * 1000;
}
