/*
 * fuzz/fuzz_uuid.c - idm_uuid_parse on arbitrary bytes.
 *
 * Properties, for every input the parser accepts:
 *  - formatting gives 36 characters, canonical 8-4-4-4-12 lowercase, whose
 *    32 hex digits are the input's hex digits, lowercased (the accepted
 *    forms differ only in hyphens, braces and the urn:uuid: prefix);
 *  - parsing the formatted text, and its uppercase, gives the same bytes;
 *  - version and variant agree with the bytes (RFC 9562 section 4.1), and
 *    decoding never fails;
 *  - a buffer one byte too small is IDM_ENOSPC.
 * And for every input it refuses: the error record is filled.
 */
#include "harness.h"

static const char urn_prefix[] = "urn:uuid:";

/* 1 when t[0..len) is 8-4-4-4-12 hex (with_hyphens) or 32 hex digits. */
static int plain_form(const char *t, size_t len, int with_hyphens)
{
    if (len != (with_hyphens ? IDM_UUID_STRLEN : IDM_UUID_HEXLEN)) {
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        int hyphen = with_hyphens && (i == 8 || i == 13 || i == 18 || i == 23);
        if (hyphen ? t[i] != '-' : !fuzz_is_hex((unsigned char)t[i])) {
            return 0;
        }
    }
    return 1;
}

/* The forms uuid.h lists: canonical, 32 hex, either in braces, or
 * "urn:uuid:" + canonical (prefix in any case). */
static int accepted_form(const char *t, size_t len, size_t urn_len)
{
    if (urn_len > 0) {
        return plain_form(t + urn_len, len - urn_len, 1);
    }
    if (len >= 2 && t[0] == '{' && t[len - 1] == '}') {
        t++;
        len -= 2;
    }
    return plain_form(t, len, 1) || plain_form(t, len, 0);
}

static void check_accepted(const fuzz_input *in, const idm_uuid *u)
{
    char text[IDM_UUID_STRLEN + 1];
    FUZZ_CHECK(idm_uuid_format(u, text, sizeof text) == IDM_OK);
    FUZZ_CHECK(strlen(text) == IDM_UUID_STRLEN);
    for (size_t i = 0; i < IDM_UUID_STRLEN; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            FUZZ_CHECK(text[i] == '-');
        } else {
            FUZZ_CHECK((text[i] >= '0' && text[i] <= '9') || (text[i] >= 'a' && text[i] <= 'f'));
        }
    }

    /* The input's hex digits, lowercased, after the optional urn: prefix. */
    size_t start = 0;
    size_t plen = sizeof urn_prefix - 1;
    if (in->len >= plen) {
        size_t k = 0;
        while (k < plen && fuzz_lower((unsigned char)in->text[k]) == urn_prefix[k]) {
            k++;
        }
        if (k == plen) {
            start = plen;
        }
    }
    FUZZ_CHECK(accepted_form(in->text, in->len, start));
    char digits[IDM_UUID_HEXLEN];
    size_t n = 0;
    for (size_t i = start; i < in->len; i++) {
        int c = (unsigned char)in->text[i];
        if (fuzz_is_hex(c)) {
            FUZZ_CHECK(n < IDM_UUID_HEXLEN);
            digits[n++] = (char)fuzz_lower(c);
        } else {
            FUZZ_CHECK(c == '-' || c == '{' || c == '}');
        }
    }
    FUZZ_CHECK(n == IDM_UUID_HEXLEN);
    n = 0;
    for (size_t i = 0; i < IDM_UUID_STRLEN; i++) {
        if (text[i] != '-') {
            FUZZ_CHECK(text[i] == digits[n]);
            n++;
        }
    }

    /* Round trips. */
    idm_uuid again;
    idm_error err;
    fuzz_error_init(&err);
    FUZZ_CHECK(idm_uuid_parse(text, IDM_UUID_STRLEN, &again, &err) == IDM_OK);
    FUZZ_CHECK(memcmp(again.bytes, u->bytes, sizeof u->bytes) == 0);
    char upper[IDM_UUID_STRLEN];
    for (size_t i = 0; i < IDM_UUID_STRLEN; i++) {
        upper[i] = (char)fuzz_upper((unsigned char)text[i]);
    }
    FUZZ_CHECK(idm_uuid_parse(upper, IDM_UUID_STRLEN, &again, NULL) == IDM_OK);
    FUZZ_CHECK(memcmp(again.bytes, u->bytes, sizeof u->bytes) == 0);

    /* Fields. */
    int version = idm_uuid_version(u);
    FUZZ_CHECK(version == u->bytes[6] >> 4);
    int variant = idm_uuid_variant(u);
    int v8 = u->bytes[8];
    int want_variant = (v8 & 0x80) == 0      ? IDM_UUID_VARIANT_NCS
                       : (v8 & 0xC0) == 0x80 ? IDM_UUID_VARIANT_RFC9562
                       : (v8 & 0xE0) == 0xC0 ? IDM_UUID_VARIANT_MICROSOFT
                                             : IDM_UUID_VARIANT_FUTURE;
    FUZZ_CHECK(variant == want_variant);
    idm_uuid_fields f;
    idm_uuid_decode(u, &f);
    FUZZ_CHECK(f.version == version);
    FUZZ_CHECK(f.variant == variant);
    if (variant == IDM_UUID_VARIANT_RFC9562 && version == 7) {
        int64_t ms = 0;
        for (int i = 0; i < 6; i++) {
            ms = ms << 8 | u->bytes[i];
        }
        FUZZ_CHECK(f.has_time == 1);
        FUZZ_CHECK(f.unix_ms == ms);
    }
    if (f.has_node) {
        FUZZ_CHECK(f.node <= 0xFFFFFFFFFFFFull);
        FUZZ_CHECK(f.clock_seq <= 0x3FFF);
    }

    char small[IDM_UUID_STRLEN];
    FUZZ_CHECK(idm_uuid_format(u, small, sizeof small) == IDM_ENOSPC);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in;
    fuzz_input_new(&in, data, size);
    idm_uuid u;
    idm_error err;
    fuzz_error_init(&err);
    int rc = idm_uuid_parse(in.text, in.len, &u, &err);
    if (rc == IDM_OK) {
        check_accepted(&in, &u);
    } else {
        FUZZ_CHECK(rc == IDM_EPARSE);
        fuzz_check_error(rc, &err, in.len);
        /* A NULL error record must be accepted as well. */
        FUZZ_CHECK(idm_uuid_parse(in.text, in.len, &u, NULL) == rc);
    }
    fuzz_input_free(&in);
    return 0;
}
