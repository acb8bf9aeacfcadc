/*
 * formats.c - see formats.h. The table is the only list of formats; the
 * front ends' messages are built from it (idmx_format_list), and
 * tests/unit/test_formats.c checks that each entry sits at its id.
 */
#include "formats.h"

#include <idmint/idmint.h>

#include <stdio.h>
#include <string.h>

#define SNOWFLAKE_DIGITS_MAX 20 /* 18446744073709551615 */

/* clang-format off */
const idmx_format idmx_formats[IDMX_FMT_COUNT] = {
    {IDMX_FMT_UUIDV7, "uuidv7", IDM_FORMAT_UUIDV7, IDM_UUID_STRLEN, IDM_UUID_STRLEN, true,
     IDMX_PREFIX_NONE},
    {IDMX_FMT_UUIDV4, "uuidv4", IDM_FORMAT_UUIDV4, IDM_UUID_STRLEN, IDM_UUID_STRLEN, false,
     IDMX_PREFIX_NONE},
    {IDMX_FMT_ULID, "ulid", IDM_FORMAT_ULID, IDM_ULID_STRLEN, IDM_ULID_STRLEN, true,
     IDMX_PREFIX_NONE},
    {IDMX_FMT_KSUID, "ksuid", IDM_FORMAT_KSUID, IDM_KSUID_STRLEN, IDM_KSUID_STRLEN, true,
     IDMX_PREFIX_NONE},
    {IDMX_FMT_SNOWFLAKE, "snowflake", 0, SNOWFLAKE_DIGITS_MAX, SNOWFLAKE_DIGITS_MAX, true,
     IDMX_PREFIX_NONE},
    {IDMX_FMT_TYPEID, "typeid", 0, IDM_TYPEID_SUFFIX_LEN, IDM_TYPEID_STRLEN_MAX, true,
     IDMX_PREFIX_REQUIRED},
    {IDMX_FMT_TOKEN, "token", 0, IDM_TOKEN_BODY_LEN, IDM_TOKEN_STRLEN_MAX, false,
     IDMX_PREFIX_OPTIONAL},
    {IDMX_FMT_TRACEPARENT, "traceparent", 0, IDM_TRACEPARENT_STRLEN, IDM_TRACEPARENT_STRLEN,
     false, IDMX_PREFIX_NONE},
};
/* clang-format on */

const idmx_format *idmx_format_by_name(const char *s, size_t len)
{
    if (s == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < IDMX_FMT_COUNT; i++) {
        const char *name = idmx_formats[i].name;
        if (strlen(name) == len && memcmp(name, s, len) == 0) {
            return &idmx_formats[i];
        }
    }
    return NULL;
}

static bool selected(const idmx_format *f, unsigned flags)
{
    if ((flags & IDMX_LIST_PREFIXED) != 0 && f->prefix == IDMX_PREFIX_NONE) {
        return false;
    }
    if ((flags & IDMX_LIST_TIME_ORDERED) != 0 && !f->time_ordered) {
        return false;
    }
    return true;
}

size_t idmx_format_list(char *dst, size_t cap, unsigned flags, const char *conj)
{
    size_t n = 0, k = 0, len = 0;
    if (cap == 0) {
        return (size_t)-1;
    }
    dst[0] = '\0';
    for (size_t i = 0; i < IDMX_FMT_COUNT; i++) {
        n += selected(&idmx_formats[i], flags);
    }
    for (size_t i = 0; i < IDMX_FMT_COUNT; i++) {
        if (!selected(&idmx_formats[i], flags)) {
            continue;
        }
        k++;
        const char *sep = k == 1 ? "" : k < n ? ", " : " ";
        const char *word = k > 1 && k == n ? conj : "";
        int w = snprintf(dst + len, cap - len, "%s%s%s%s", sep, word, word[0] != '\0' ? " " : "",
                         idmx_formats[i].name);
        if (w < 0 || (size_t)w >= cap - len) {
            dst[0] = '\0';
            return (size_t)-1;
        }
        len += (size_t)w;
    }
    return len;
}
