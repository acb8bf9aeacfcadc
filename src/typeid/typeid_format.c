/*
 * typeid_format.c - the typeid row of the format table (format.h): a
 * required prefix (the rule of typeid.h) and a UUIDv7 in base32. Minted in
 * chunks of UUIDv7s (one clock read and one state reservation each), so
 * TypeIDs sort with the generator's UUIDv7s; parsed by idm_typeid_parse,
 * of a UUIDv7 only; observed as their UUIDv7.
 */
#include "format/format_row.h"

#include <string.h>

#define CHUNK 128

static int mint(const idm_format *f, idm_gen *g, const char *prefix, size_t prefix_len, char *dst,
                size_t n, bool nl, size_t *len, idm_error *err)
{
    idm_uuid chunk[CHUNK];
    char buf[IDM_TYPEID_STRLEN_MAX + 1];
    size_t one = idm_format_text_len(f, prefix_len);
    char *p = dst;
    int rc = IDM_OK;
    for (size_t done = 0; done < n && rc == IDM_OK;) {
        size_t k = n - done < CHUNK ? n - done : CHUNK;
        rc = idm_uuidv7_next_n(g, chunk, k, err);
        for (size_t i = 0; i < k && rc == IDM_OK; i++) {
            rc = idm_typeid_format(prefix, prefix_len, &chunk[i], buf, sizeof buf, err);
            if (rc == IDM_OK) {
                memcpy(p, buf, one);
                p += one;
                if (nl)
                    *p++ = '\n';
            }
        }
        done += k;
    }
    *len = (size_t)(p - dst);
    return rc;
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
