/*
 * text.c - bulk minting straight into text (idm_gen_next_text_n).
 *
 * Mints in chunks of CHUNK binary IDs on the stack (one clock read and one
 * state reservation per chunk), then formats each into dst with the
 * codecs. Used by the CLI's gen path and the coming server.
 */
#include "internal.h"

#include <string.h>

#define CHUNK 512

static size_t text_len(int format)
{
    switch (format) {
    case IDM_FORMAT_UUIDV4:
    case IDM_FORMAT_UUIDV7:
        return IDM_UUID_STRLEN;
    case IDM_FORMAT_ULID:
        return IDM_ULID_STRLEN;
    case IDM_FORMAT_KSUID:
        return IDM_KSUID_STRLEN;
    default:
        return 0;
    }
}

static void uuid_text(const uint8_t *b, char *p)
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *p++ = '-';
        *p++ = hex[b[i] >> 4];
        *p++ = hex[b[i] & 15];
    }
}

int idm_gen_next_text_n(idm_gen *g, int format, char *dst, size_t cap, size_t n, uint32_t flags,
                        size_t *len, idm_error *err)
{
    if (len != NULL)
        *len = 0;
    size_t one = text_len(format);
    if (one == 0)
        return idm__fail(err, IDM_EINVAL, 0, "unknown format %d", format);
    if (flags & ~(uint32_t)IDM_TEXT_NEWLINE)
        return idm__fail(err, IDM_EINVAL, 0, "unknown flags 0x%x", (unsigned)flags);
    if (g == NULL || (dst == NULL && n > 0))
        return idm__fail(err, IDM_EINVAL, 0, "generator and output must not be NULL");
    size_t stride = one + ((flags & IDM_TEXT_NEWLINE) ? 1 : 0);
    if (n > cap / stride)
        return idm__fail(err, IDM_ENOSPC, 0, "%zu IDs need %zu bytes, the buffer has %zu", n, n * stride, cap);

    union {
        idm_uuid uuid[CHUNK];
        idm_ulid ulid[CHUNK];
        idm_ksuid ksuid[CHUNK];
    } bin;
    char *p = dst;
    for (size_t done = 0; done < n;) {
        size_t k = n - done < CHUNK ? n - done : CHUNK;
        int rc;
        switch (format) {
        case IDM_FORMAT_UUIDV4:
            rc = idm_uuidv4_next_n(g, bin.uuid, k, err);
            break;
        case IDM_FORMAT_UUIDV7:
            rc = idm_uuidv7_next_n(g, bin.uuid, k, err);
            break;
        case IDM_FORMAT_ULID:
            rc = idm_ulid_next_n(g, bin.ulid, k, err);
            break;
        default:
            rc = idm_ksuid_next_n(g, bin.ksuid, k, err);
            break;
        }
        if (rc != IDM_OK) {
            if (len != NULL)
                *len = (size_t)(p - dst);
            return rc;
        }
        for (size_t i = 0; i < k; i++) {
            switch (format) {
            case IDM_FORMAT_UUIDV4:
            case IDM_FORMAT_UUIDV7:
                uuid_text(bin.uuid[i].bytes, p);
                break;
            case IDM_FORMAT_ULID:
                idm__base32_encode128(bin.ulid[i].bytes, p, false);
                break;
            default:
                idm__base62_encode(bin.ksuid[i].bytes, sizeof bin.ksuid[i].bytes, p, IDM_KSUID_STRLEN);
                break;
            }
            p += one;
            if (flags & IDM_TEXT_NEWLINE)
                *p++ = '\n';
        }
        done += k;
    }
    idm__wipe(&bin, sizeof bin);
    if (len != NULL)
        *len = (size_t)(p - dst);
    return IDM_OK;
}
