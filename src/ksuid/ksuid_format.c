/*
 * ksuid_format.c - the ksuid row of the format table (format.h): minted by
 * idm_gen_next_text_n, parsed by idm_ksuid_parse, observed by
 * idm_ksuid_observe.
 */
#include "format/format_row.h"

#include <string.h>

static int parse(const idm_format *f, const char *text, size_t len, idm_format_value *out,
                 idm_error *err)
{
    (void)f;
    idm_ksuid k;
    return idm__format_value_set(out, idm_ksuid_parse(text, len, &k, err), k.bytes, sizeof k.bytes);
}

static int observe(idm_gen *g, const idm_format_value *seen, int64_t max_offset_ms, idm_error *err)
{
    idm_ksuid k;
    memcpy(k.bytes, seen->bytes, sizeof k.bytes);
    return idm_ksuid_observe(g, &k, max_offset_ms, err);
}

const idm__format_row idm__format_ksuid = {{IDM_FORMAT_KSUID, "ksuid", 160, IDM_KSUID_STRLEN,
                                            IDM_KSUID_STRLEN, 1, IDM_PREFIX_NONE, IDM_KIND_KSUID,
                                            IDM_FORMAT_BY_GEN},
                                           NULL,
                                           idm__format_gen_mint,
                                           parse,
                                           observe};
