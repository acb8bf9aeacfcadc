/*
 * uuid_text.c - UUID text forms and field decoding (RFC 9562).
 *
 * Specs: RFC 9562 section 4 (string format, variant and version fields),
 * sections 5.1, 5.6 and 5.7 (the v1, v6 and v7 timestamps), and RFC 9562
 * section 4 / RFC 8141 for the "urn:uuid:" form, whose scheme and namespace
 * parts are matched case-insensitively.
 *
 * Accepted text: 8-4-4-4-12 hex, 32 hex digits, either of those in "{}",
 * and "urn:uuid:" + 8-4-4-4-12; hex in either case; nothing before or after.
 * Output is always canonical lowercase 8-4-4-4-12.
 *
 * Deliberately left out: Microsoft's mixed-endian GUID byte order, "{urn:
 * uuid:...}", surrounding whitespace, and v1/v6 clock sequence semantics
 * beyond reporting the 14 bits. Minting lives in uuid_gen.c.
 */
#include "internal.h"

#include "codec/charname.h"

#include <stdbool.h>
#include <string.h>

/* 100-ns intervals from the Gregorian epoch (1582-10-15T00:00Z) to the Unix
 * epoch, RFC 9562 Appendix A. */
#define GREGORIAN_TO_UNIX_100NS INT64_C(122192928000000000)

/* parse_body's "the input ended inside the UUID" result; err untouched. */
#define BODY_TOO_SHORT (-1)

static bool is_hyphen_position(size_t i)
{
    return i == 8 || i == 13 || i == 18 || i == 23;
}

/* Parses the 36- (hyphens) or 32-character body at text[start]. Reports the
 * first offending byte, by its offset in the whole text; returns
 * BODY_TOO_SHORT without touching err when the text ends early. */
static int parse_body(const char *text, size_t len, size_t start, bool hyphens, idm_uuid *out,
                      idm_error *err)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t body_len = hyphens ? IDM_UUID_STRLEN : IDM_UUID_HEXLEN;
    uint8_t bytes[16];
    size_t nibbles = 0;
    char name[IDM__CHARNAME_CAP];

    for (size_t i = 0; i < body_len; i++) {
        size_t pos = start + i;
        if (pos >= len)
            return BODY_TOO_SHORT;
        if (hyphens && is_hyphen_position(i)) {
            if (s[pos] != '-')
                return idm__fail(err, IDM_EPARSE, pos,
                                 "UUID has %s at position %zu where '-' belongs",
                                 idm__char_name(s[pos], name), pos + 1);
            continue;
        }
        int v = idm__hex_value(s[pos]);
        if (v < 0)
            return idm__fail(
                err, IDM_EPARSE, pos,
                "UUID has an invalid character %s at position %zu (expected a hex digit)",
                idm__char_name(s[pos], name), pos + 1);
        if (nibbles % 2 == 0)
            bytes[nibbles / 2] = (uint8_t)(v << 4);
        else
            bytes[nibbles / 2] |= (uint8_t)v;
        nibbles++;
    }
    memcpy(out->bytes, bytes, sizeof bytes);
    return IDM_OK;
}

static bool starts_with_nocase(const char *text, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    if (len < n)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c + ('a' - 'A'));
        if (c != (unsigned char)prefix[i])
            return false;
    }
    return true;
}

int idm_uuid_parse(const char *text, size_t len, idm_uuid *out, idm_error *err)
{
    static const char urn_prefix[] = "urn:uuid:";
    const size_t urn_len = sizeof urn_prefix - 1;

    if (len == 0)
        return idm__fail(err, IDM_EPARSE, 0, "UUID is empty");

    size_t start = 0;
    bool braced = false;
    bool urn = false;
    if (text[0] == '{') {
        braced = true;
        start = 1;
    } else if (starts_with_nocase(text, len, urn_prefix)) {
        urn = true;
        start = urn_len;
    }
    /* The URN form is always hyphenated; otherwise the ninth body character
     * tells the two forms apart. */
    bool hyphens = urn || (len > start + 8 && text[start + 8] == '-');
    size_t expected = start + (hyphens ? IDM_UUID_STRLEN : IDM_UUID_HEXLEN) + (braced ? 1 : 0);

    idm_uuid value = {{0}};
    int rc = parse_body(text, len, start, hyphens, &value, err);
    size_t pos = start + (hyphens ? IDM_UUID_STRLEN : IDM_UUID_HEXLEN);
    if (rc == IDM_OK && braced && pos < len) {
        if (text[pos] != '}') {
            char name[IDM__CHARNAME_CAP];
            return idm__fail(err, IDM_EPARSE, pos, "UUID has %s at position %zu where '}' belongs",
                             idm__char_name((unsigned char)text[pos], name), pos + 1);
        }
        pos++;
    }
    if (rc == BODY_TOO_SHORT || (rc == IDM_OK && len != expected)) {
        size_t offset = len < expected ? len : expected;
        if (urn)
            return idm__fail(err, IDM_EPARSE, offset,
                             "UUID in urn:uuid: form must be %zu characters, got %zu", expected,
                             len);
        if (braced)
            return idm__fail(err, IDM_EPARSE, offset,
                             "UUID in braces must be 38 characters (34 without hyphens), got %zu",
                             len);
        return idm__fail(err, IDM_EPARSE, offset,
                         "UUID must be 36 characters (32 without hyphens), got %zu", len);
    }
    if (rc != IDM_OK)
        return rc;
    *out = value;
    return IDM_OK;
}

int idm_uuid_format(const idm_uuid *u, char *dst, size_t cap)
{
    if (cap < IDM_UUID_STRLEN + 1)
        return IDM_ENOSPC;
    const uint8_t *b = u->bytes;
    idm__hex_encode(b, 4, dst);
    dst[8] = '-';
    idm__hex_encode(b + 4, 2, dst + 9);
    dst[13] = '-';
    idm__hex_encode(b + 6, 2, dst + 14);
    dst[18] = '-';
    idm__hex_encode(b + 8, 2, dst + 19);
    dst[23] = '-';
    idm__hex_encode(b + 10, 6, dst + 24);
    dst[36] = '\0';
    return IDM_OK;
}

int idm_uuid_version(const idm_uuid *u)
{
    return u->bytes[6] >> 4;
}

int idm_uuid_variant(const idm_uuid *u)
{
    /* RFC 9562 section 4.1, Table 1: the leading bits of octet 8. */
    uint8_t b = u->bytes[8];
    if ((b & 0x80) == 0)
        return IDM_UUID_VARIANT_NCS;
    if ((b & 0x40) == 0)
        return IDM_UUID_VARIANT_RFC9562;
    if ((b & 0x20) == 0)
        return IDM_UUID_VARIANT_MICROSOFT;
    return IDM_UUID_VARIANT_FUTURE;
}

/* Floor division, so that times before an epoch round towards the past. */
static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

/* A 60-bit count of 100-ns intervals since 1582-10-15 as Unix ms. The
 * subtraction cannot overflow: the count is below 2^60. */
static int64_t gregorian_100ns_to_unix_ms(uint64_t ticks)
{
    return floor_div((int64_t)ticks - GREGORIAN_TO_UNIX_100NS, 10000);
}

void idm_uuid_decode(const idm_uuid *u, idm_uuid_fields *out)
{
    const uint8_t *b = u->bytes;
    memset(out, 0, sizeof *out);
    out->version = idm_uuid_version(u);
    out->variant = idm_uuid_variant(u);
    /* The version nibble only means something in the RFC 9562 variant. */
    if (out->variant != IDM_UUID_VARIANT_RFC9562)
        return;

    uint64_t time_hi12 = (uint64_t)(b[6] & 0x0f) << 8 | b[7];
    switch (out->version) {
    case 1: {
        /* RFC 9562 section 5.1: time_low (32), time_mid (16), then the
         * version nibble and time_high (12). */
        uint64_t time_mid = (uint64_t)b[4] << 8 | b[5];
        uint64_t ticks = time_hi12 << 48 | time_mid << 32 | idm__get_be32(b);
        out->has_time = 1;
        out->unix_ms = gregorian_100ns_to_unix_ms(ticks);
        out->has_node = 1;
        break;
    }
    case 6: {
        /* RFC 9562 section 5.6: the same 60 bits, most significant first:
         * time_high (32), time_mid (16), version, time_low (12). */
        uint64_t time_mid = (uint64_t)b[4] << 8 | b[5];
        uint64_t ticks = (uint64_t)idm__get_be32(b) << 28 | time_mid << 12 | time_hi12;
        out->has_time = 1;
        out->unix_ms = gregorian_100ns_to_unix_ms(ticks);
        out->has_node = 1;
        break;
    }
    case 7:
        /* RFC 9562 section 5.7: 48-bit big-endian Unix milliseconds. */
        out->has_time = 1;
        out->unix_ms = (int64_t)idm__get_be48(b);
        break;
    default:
        break;
    }
    if (out->has_node) {
        out->clock_seq = (uint16_t)((b[8] & 0x3f) << 8 | b[9]);
        out->node = idm__get_be48(b + 10);
    }
}
