/*
 * inspect.c - recognise an ID's kind from its text, decode it, and read
 * any 128-bit text form (for `idmint inspect` and `idmint convert`).
 *
 * Recognition (include/idmint/inspect.h, idmint(1) "inspect") looks only at
 * the shape of the text, then hands it to that kind's strict parser, whose
 * error names what is wrong. One refinement of the header's order: text
 * containing '_' goes to the TypeID parser before the 26/27-character
 * rules. No ULID or KSUID contains '_', so valid IDs are classified the
 * same, but "user_" plus a 21-character suffix is reported as a bad TypeID
 * suffix rather than as a ULID with a stray '_'. Likewise, text with a '-'
 * at offset 8 goes to the UUID parser whatever its length, so that a UUID
 * missing a digit is told so.
 *
 * Deliberately left out: guessing between kinds that share a shape (a
 * 26-character text is a ULID even when it would also be a bare TypeID
 * suffix; both carry the same 128 bits), and snowflake layouts other than
 * the one passed in.
 */
#include "internal.h"

#include <stdbool.h>
#include <string.h>

#define SNOWFLAKE_MAX_DIGITS 20 /* 2^64 - 1 = 18446744073709551615 */

static const char *const kind_names[] = {
    [IDM_KIND_UUID] = "uuid",     [IDM_KIND_ULID] = "ulid",           [IDM_KIND_KSUID] = "ksuid",
    [IDM_KIND_TYPEID] = "typeid", [IDM_KIND_SNOWFLAKE] = "snowflake",
};

const char *idm_kind_name(int kind)
{
    if (kind < IDM_KIND_UUID || kind > IDM_KIND_SNOWFLAKE)
        return NULL;
    return kind_names[kind];
}

int idm_kind_from_name(const char *name, size_t len)
{
    for (int kind = IDM_KIND_UUID; kind <= IDM_KIND_SNOWFLAKE; kind++) {
        if (strlen(kind_names[kind]) == len && memcmp(kind_names[kind], name, len) == 0)
            return kind;
    }
    return -1;
}

static bool all_of(const char *text, size_t len, bool (*pred)(unsigned char))
{
    for (size_t i = 0; i < len; i++) {
        if (!pred((unsigned char)text[i]))
            return false;
    }
    return true;
}

static bool is_hex(unsigned char c)
{
    return idm__hex_value(c) >= 0;
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static bool is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

static bool starts_with_urn_uuid(const char *text, size_t len)
{
    static const char urn[] = "urn:uuid:";
    if (len < sizeof urn - 1)
        return false;
    for (size_t i = 0; i < sizeof urn - 1; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c + ('a' - 'A'));
        if (c != (unsigned char)urn[i])
            return false;
    }
    return true;
}

/* The kind the text's shape suggests, or IDM_KIND_AUTO for none. */
static int recognise(const char *text, size_t len)
{
    bool has_underscore = len > 0 && memchr(text, '_', len) != NULL;
    if (!has_underscore) {
        if (len == IDM_UUID_STRLEN)
            return IDM_KIND_UUID;
        /* A hyphen where the canonical form has its first one: a UUID of
         * the wrong length, best explained by the UUID parser. No other
         * kind contains '-'. */
        if (len > 8 && text[8] == '-')
            return IDM_KIND_UUID;
        if (len == IDM_UUID_HEXLEN && all_of(text, len, is_hex))
            return IDM_KIND_UUID;
        if (len > 0 && text[0] == '{')
            return IDM_KIND_UUID;
        if (starts_with_urn_uuid(text, len))
            return IDM_KIND_UUID;
    }
    if (has_underscore)
        return IDM_KIND_TYPEID;
    if (len == IDM_ULID_STRLEN)
        return IDM_KIND_ULID;
    if (len == IDM_KSUID_STRLEN)
        return IDM_KIND_KSUID;
    if (len >= 1 && len <= SNOWFLAKE_MAX_DIGITS && all_of(text, len, is_digit))
        return IDM_KIND_SNOWFLAKE;
    return IDM_KIND_AUTO;
}

/* The error for text that fits no kind: say why as precisely as the
 * shape allows. */
static int unrecognised(const char *text, size_t len, idm_error *err)
{
    if (len == 0)
        return idm__fail(err, IDM_EPARSE, 0, "empty input is not an ID");
    if (is_space((unsigned char)text[0]))
        return idm__fail(err, IDM_EPARSE, 0, "not a recognised ID: it starts with whitespace");
    if (is_space((unsigned char)text[len - 1]))
        return idm__fail(err, IDM_EPARSE, len - 1, "not a recognised ID: it ends with whitespace");
    if (all_of(text, len, is_digit))
        return idm__fail(
            err, IDM_EPARSE, SNOWFLAKE_MAX_DIGITS,
            "not a recognised ID: %zu digits are too many for a snowflake (at most %d)", len,
            SNOWFLAKE_MAX_DIGITS);
    return idm__fail(err, IDM_EPARSE, 0,
                     "not a recognised ID: %zu characters fit no format (UUID: 36, or 32 hex "
                     "digits; ULID: 26; KSUID: 27; TypeID: prefix_suffix; snowflake: 1-20 digits)",
                     len);
}

static int decode_snowflake(const char *text, size_t len, const idm_sf_layout *layout,
                            idm_inspection *out, idm_error *err)
{
    idm_sf_layout twitter;
    if (layout == NULL) {
        int rc = idm_sf_layout_preset(&twitter, "twitter", strlen("twitter"), err);
        if (rc != IDM_OK)
            return rc;
        layout = &twitter;
    }
    int rc = idm_sf_parse_decimal(text, len, &out->snowflake, err);
    if (rc != IDM_OK)
        return rc;
    rc = idm_sf_decode(layout, out->snowflake, &out->parts, err);
    if (rc != IDM_OK)
        return rc;
    out->has_time = 1;
    out->unix_ms = out->parts.unix_ms;
    return IDM_OK;
}

int idm_inspect(const char *text, size_t len, int kind, const idm_sf_layout *layout,
                idm_inspection *out, idm_error *err)
{
    if (kind == IDM_KIND_AUTO) {
        kind = recognise(text, len);
        if (kind == IDM_KIND_AUTO)
            return unrecognised(text, len, err);
    }

    idm_inspection result;
    memset(&result, 0, sizeof result);
    result.kind = kind;
    int rc;
    switch (kind) {
    case IDM_KIND_UUID:
        rc = idm_uuid_parse(text, len, &result.uuid, err);
        if (rc != IDM_OK)
            return rc;
        idm_uuid_decode(&result.uuid, &result.fields);
        result.has_time = result.fields.has_time;
        result.unix_ms = result.fields.unix_ms;
        break;
    case IDM_KIND_ULID: {
        idm_ulid ulid;
        rc = idm_ulid_parse(text, len, &ulid, err);
        if (rc != IDM_OK)
            return rc;
        memcpy(result.uuid.bytes, ulid.bytes, sizeof ulid.bytes);
        result.has_time = 1;
        result.unix_ms = idm_ulid_unix_ms(&ulid);
        break;
    }
    case IDM_KIND_KSUID:
        rc = idm_ksuid_parse(text, len, &result.ksuid, err);
        if (rc != IDM_OK)
            return rc;
        result.has_time = 1;
        result.unix_ms = idm_ksuid_unix_ms(&result.ksuid);
        break;
    case IDM_KIND_TYPEID:
        /* A TypeID follows the rules of the UUID it holds (idmint(1)). */
        rc = idm_typeid_parse(text, len, &result.typeid, err);
        if (rc != IDM_OK)
            return rc;
        result.uuid = result.typeid.uuid;
        idm_uuid_decode(&result.uuid, &result.fields);
        result.has_time = result.fields.has_time;
        result.unix_ms = result.fields.unix_ms;
        break;
    case IDM_KIND_SNOWFLAKE:
        rc = decode_snowflake(text, len, layout, &result, err);
        if (rc != IDM_OK)
            return rc;
        break;
    default:
        return idm__fail(err, IDM_EINVAL, 0, "unknown ID kind %d", kind);
    }
    *out = result;
    return IDM_OK;
}

int idm_parse_128(const char *text, size_t len, idm_uuid *out, int *kind_out, idm_error *err)
{
    if (kind_out != NULL)
        *kind_out = IDM_KIND_AUTO;
    int kind = recognise(text, len);
    if (kind == IDM_KIND_AUTO)
        return unrecognised(text, len, err);
    if (kind_out != NULL)
        *kind_out = kind;

    int rc;
    switch (kind) {
    case IDM_KIND_UUID:
        return idm_uuid_parse(text, len, out, err);
    case IDM_KIND_ULID: {
        idm_ulid ulid;
        rc = idm_ulid_parse(text, len, &ulid, err);
        if (rc != IDM_OK)
            return rc;
        memcpy(out->bytes, ulid.bytes, sizeof ulid.bytes);
        return IDM_OK;
    }
    case IDM_KIND_TYPEID: {
        idm_typeid typeid;
        rc = idm_typeid_parse(text, len, &typeid, err);
        if (rc != IDM_OK)
            return rc;
        *out = typeid.uuid;
        return IDM_OK;
    }
    case IDM_KIND_KSUID: {
        /* Parse first, so that text that merely has 27 characters gets
         * the parser's reason rather than a lecture on bit widths. */
        idm_ksuid ksuid;
        rc = idm_ksuid_parse(text, len, &ksuid, err);
        if (rc != IDM_OK)
            return rc;
        return idm__fail(err, IDM_EUNSUPPORTED, 0,
                         "a KSUID has 160 bits, so it cannot be written as a 128-bit UUID, ULID "
                         "or TypeID");
    }
    default: {
        uint64_t id;
        rc = idm_sf_parse_decimal(text, len, &id, err);
        if (rc != IDM_OK)
            return rc;
        return idm__fail(err, IDM_EUNSUPPORTED, 0,
                         "a snowflake is a 64-bit integer, not a 128-bit UUID, ULID or TypeID");
    }
    }
}
