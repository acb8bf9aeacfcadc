/*
 * typeid.c - TypeIDs, spec v0.3
 * (https://github.com/jetify-com/typeid/blob/main/spec/README.md).
 *
 * PREFIX "_" SUFFIX, or a bare SUFFIX for the empty prefix. The prefix is
 * at most 63 of [a-z_], starting and ending with a letter; the suffix is a
 * UUID's 128 bits in 26 lowercase Crockford base32 characters (first one
 * 0-7). Parsing splits at the last '_', since the prefix may contain '_'
 * and the suffix never does.
 *
 * Deliberately left out: checking that the suffix holds a UUIDv7. The spec
 * asks generators for v7 but lets decoders accept any 128 bits, and
 * `idmint convert` relies on that.
 */
#include "internal.h"

#include "codec/charname.h"
#include "typeid/prefix.h"

#include <string.h>

int idm__prefix_check(const char *prefix, size_t len, int code, const char *what, idm_error *err)
{
    if (len > IDM_TYPEID_PREFIX_MAX)
        return idm__fail(err, code, IDM_TYPEID_PREFIX_MAX,
                         "%s must be at most %d characters, got %zu", what, IDM_TYPEID_PREFIX_MAX,
                         len);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)prefix[i];
        if (c >= 'a' && c <= 'z')
            continue;
        if (c == '_') {
            if (i == 0)
                return idm__fail(err, code, i, "%s must not start with '_'", what);
            if (i == len - 1)
                return idm__fail(err, code, i, "%s must not end with '_'", what);
            continue;
        }
        char name[IDM__CHARNAME_CAP];
        idm__char_name(c, name);
        if (c >= 'A' && c <= 'Z')
            return idm__fail(err, code, i, "%s must be lowercase (%s at position %zu)", what, name,
                             i + 1);
        return idm__fail(err, code, i,
                         "%s has an invalid character %s at position %zu (expected a-z or '_')",
                         what, name, i + 1);
    }
    return IDM_OK;
}

int idm_typeid_check_prefix(const char *prefix, size_t len, idm_error *err)
{
    return idm__prefix_check(prefix, len, IDM_EINVAL, "TypeID prefix", err);
}

int idm_typeid_parse(const char *text, size_t len, idm_typeid *out, idm_error *err)
{
    size_t sep = len; /* the last '_', or len when there is none */
    for (size_t i = len; i-- > 0;) {
        if (text[i] == '_') {
            sep = i;
            break;
        }
    }

    size_t suffix_start = 0;
    size_t prefix_len = 0;
    if (sep < len) {
        if (sep == 0)
            return idm__fail(err, IDM_EPARSE, 0,
                             "TypeID has a '_' separator but no prefix (without a prefix, "
                             "write the 26-character suffix alone)");
        int rc = idm__prefix_check(text, sep, IDM_EPARSE, "TypeID prefix", err);
        if (rc != IDM_OK)
            return rc;
        prefix_len = sep;
        suffix_start = sep + 1;
    }

    size_t suffix_len = len - suffix_start;
    if (suffix_len != IDM_TYPEID_SUFFIX_LEN) {
        size_t offset = suffix_start +
                        (suffix_len < IDM_TYPEID_SUFFIX_LEN ? suffix_len : IDM_TYPEID_SUFFIX_LEN);
        return idm__fail(err, IDM_EPARSE, offset, "TypeID suffix must be %d characters, got %zu",
                         IDM_TYPEID_SUFFIX_LEN, suffix_len);
    }

    idm_uuid bits;
    int rc = idm__base32_decode128(text + suffix_start, bits.bytes, true, "TypeID suffix", err);
    if (rc != IDM_OK) {
        /* The codec counts from the start of the suffix. */
        if (err != NULL)
            err->offset += suffix_start;
        return rc;
    }

    memcpy(out->prefix, text, prefix_len);
    out->prefix[prefix_len] = '\0';
    out->prefix_len = prefix_len;
    out->uuid = bits;
    return IDM_OK;
}

int idm_typeid_format(const char *prefix, size_t prefix_len, const idm_uuid *u, char *dst,
                      size_t cap, idm_error *err)
{
    int rc = idm_typeid_check_prefix(prefix, prefix_len, err);
    if (rc != IDM_OK)
        return rc;
    size_t separator = prefix_len > 0 ? 1 : 0;
    size_t need = prefix_len + separator + IDM_TYPEID_SUFFIX_LEN + 1;
    if (cap < need)
        return idm__fail(err, IDM_ENOSPC, 0,
                         "a %zu-byte buffer cannot hold this TypeID (%zu bytes)", cap, need);
    if (prefix_len > 0) {
        memcpy(dst, prefix, prefix_len);
        dst[prefix_len] = '_';
    }
    idm__base32_encode128(u->bytes, dst + prefix_len + separator, true);
    dst[need - 1] = '\0';
    return IDM_OK;
}
