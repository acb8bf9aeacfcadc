/*
 * ulid_format.c - the ulid row of the format table (format.h): minted by
 * idm_gen_next_text_n, parsed by idm_ulid_parse, observed by
 * idm_ulid_observe.
 */
#include "format/format_row.h"

#include <string.h>

static int parse(const idm_format *f, const char *text, size_t len, idm_format_value *out,
                 idm_error *err)
{
    (void)f;
    idm_ulid u;
    return idm__format_value_set(out, idm_ulid_parse(text, len, &u, err), u.bytes, sizeof u.bytes);
}

static int observe(idm_gen *g, const idm_format_value *seen, int64_t max_offset_ms, idm_error *err)
{
    idm_ulid u;
    memcpy(u.bytes, seen->bytes, sizeof u.bytes);
    return idm_ulid_observe(g, &u, max_offset_ms, err);
}

const idm__format_row idm__format_ulid = {{IDM_FORMAT_ULID, "ulid", 128, IDM_ULID_STRLEN,
                                           IDM_ULID_STRLEN, 1, IDM_PREFIX_NONE, IDM_KIND_ULID,
                                           IDM_FORMAT_BY_GEN},
                                          NULL,
                                          idm__format_gen_mint,
                                          parse,
                                          observe};
