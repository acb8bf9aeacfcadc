/*
 * uuid_format.c - the uuidv7 and uuidv4 rows of the format table
 * (format.h): minted by idm_gen_next_text_n, parsed by idm_uuid_parse in
 * any of its forms, of the row's version only; UUIDv7s are observed by
 * idm_uuidv7_observe (which TypeIDs share).
 */
#include "format/format_row.h"

#include <string.h>

int idm__format_uuid_version_check(const idm_format_value *v, int want, idm_error *err)
{
    int version = v->bytes[6] >> 4;
    if (version != want)
        return idm__fail(err, IDM_EUNSUPPORTED, 0, "its UUID is version %d, not %d", version, want);
    return IDM_OK;
}

int idm__format_uuidv7_observe(idm_gen *g, const idm_format_value *seen, int64_t max_offset_ms,
                               idm_error *err)
{
    idm_uuid u;
    memcpy(u.bytes, seen->bytes, sizeof u.bytes);
    return idm_uuidv7_observe(g, &u, max_offset_ms, err);
}

static int parse(const idm_format *f, const char *text, size_t len, idm_format_value *out,
                 idm_error *err)
{
    idm_uuid u;
    int rc =
        idm__format_value_set(out, idm_uuid_parse(text, len, &u, err), u.bytes, sizeof u.bytes);
    if (rc != IDM_OK)
        return rc;
    return idm__format_uuid_version_check(out, f->id == IDM_FORMAT_UUIDV7 ? 7 : 4, err);
}

const idm__format_row idm__format_uuidv7 = {{IDM_FORMAT_UUIDV7, "uuidv7", 128, IDM_UUID_STRLEN,
                                             IDM_UUID_STRLEN, 1, IDM_PREFIX_NONE, IDM_KIND_UUID,
                                             IDM_FORMAT_BY_GEN},
                                            NULL,
                                            idm__format_gen_mint,
                                            parse,
                                            idm__format_uuidv7_observe};

const idm__format_row idm__format_uuidv4 = {{IDM_FORMAT_UUIDV4, "uuidv4", 128, IDM_UUID_STRLEN,
                                             IDM_UUID_STRLEN, 0, IDM_PREFIX_NONE, IDM_KIND_UUID,
                                             IDM_FORMAT_BY_GEN},
                                            NULL,
                                            idm__format_gen_mint,
                                            parse,
                                            NULL};
