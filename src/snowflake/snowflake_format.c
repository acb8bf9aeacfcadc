/*
 * snowflake_format.c - the snowflake row of the format table (format.h).
 * A snowflake needs a layout and a node, so it is minted and observed by
 * its own handle (snowflake.h), not an idm_gen: the row has no mint or
 * observe entry. Its parse takes the decimal form of any layout.
 */
#include "format/format_row.h"

#define SNOWFLAKE_DIGITS_MAX 20 /* 18446744073709551615 */

static int parse(const idm_format *f, const char *text, size_t len, idm_format_value *out,
                 idm_error *err)
{
    (void)f;
    int rc = idm_sf_parse_decimal(text, len, &out->number, err);
    idm__put_be64(out->bytes, out->number);
    out->len = 8;
    return rc;
}

const idm__format_row idm__format_snowflake = {
    {IDM_FORMAT_SNOWFLAKE, "snowflake", 64, SNOWFLAKE_DIGITS_MAX, SNOWFLAKE_DIGITS_MAX, 1,
     IDM_PREFIX_NONE, IDM_KIND_SNOWFLAKE, IDM_FORMAT_BY_SNOWFLAKE},
    NULL,
    NULL,
    parse,
    NULL};
