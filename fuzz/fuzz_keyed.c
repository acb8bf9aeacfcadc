/*
 * fuzz/fuzz_keyed.c - idm_key_parse, idm_reveal and idm_stoken_verify
 * (keyed.h) on arbitrary bytes, under a fixed key.
 *
 * Properties:
 *  - idm_key_parse accepts exactly "idmint-key-v1 ", 64 hex digits and an
 *    optional "\n" or "\r\n"; an accepted key formats back to the input
 *    (lowercased, with "\n"), and a refusal fills the error record;
 *  - a reveal that succeeds re-obfuscates to the input byte for byte (every
 *    accepted text is the one canonical text of its ID), and a refused one
 *    is IDM_EPARSE or IDM_EFORGED with the record filled;
 *  - a signed token that verifies (or has expired) names an expiry in
 *    1 .. IDM_STOKEN_MAX_EXPIRY, verifies again identically, and expires
 *    exactly at that second; a refused one is IDM_EPARSE or IDM_EFORGED.
 */
#include "harness.h"

static idm_key *fixed_key(void)
{
    static idm_key *k;
    if (k == NULL) {
        uint8_t master[IDM_KEY_BYTES];
        for (size_t i = 0; i < sizeof master; i++)
            master[i] = (uint8_t)(i * 7 + 1);
        FUZZ_CHECK(idm_key_new(&k, master, NULL, NULL) == IDM_OK);
    }
    return k;
}

static void check_key_parse(const fuzz_input *in)
{
    uint8_t master[IDM_KEY_BYTES];
    idm_error err;
    fuzz_error_init(&err);
    int rc = idm_key_parse(in->text, in->len, master, &err);
    if (rc != IDM_OK) {
        FUZZ_CHECK(rc == IDM_EPARSE);
        fuzz_check_error(rc, &err, in->len);
        return;
    }
    FUZZ_CHECK(in->len >= IDM_KEY_TEXT_LEN - 1 && in->len <= IDM_KEY_TEXT_LEN + 1);
    char text[IDM_KEY_TEXT_LEN + 1];
    FUZZ_CHECK(idm_key_format(master, text, sizeof text) == IDM_OK);
    for (size_t i = 0; i < IDM_KEY_TEXT_LEN - 1; i++)
        FUZZ_CHECK(fuzz_lower((unsigned char)in->text[i]) == text[i]);
}

static void check_reveal(const fuzz_input *in, const idm_key *k)
{
    uint64_t id = 0;
    idm_error err;
    fuzz_error_init(&err);
    int rc = idm_reveal(k, in->text, in->len, &id, &err);
    if (rc != IDM_OK) {
        FUZZ_CHECK(rc == IDM_EPARSE || rc == IDM_EFORGED);
        fuzz_check_error(rc, &err, in->len);
        return;
    }
    const char *sep = NULL;
    for (size_t i = in->len; i-- > 0;)
        if (in->text[i] == '_') {
            sep = in->text + i;
            break;
        }
    size_t plen = sep != NULL ? (size_t)(sep - in->text) : 0;
    char again[IDM_OBF_STRLEN_MAX + 1];
    FUZZ_CHECK(idm_obfuscate(k, id, in->text, plen, again, sizeof again, NULL) == IDM_OK);
    FUZZ_CHECK(strlen(again) == in->len);
    FUZZ_CHECK(memcmp(again, in->text, in->len) == 0);
}

static void check_stoken(const fuzz_input *in, const idm_key *k)
{
    int64_t exp = -1;
    idm_error err;
    fuzz_error_init(&err);
    int rc = idm_stoken_verify(k, in->text, in->len, 0, &exp, &err);
    if (rc != IDM_OK && rc != IDM_EEXPIRED) {
        FUZZ_CHECK(rc == IDM_EPARSE || rc == IDM_EFORGED);
        fuzz_check_error(rc, &err, in->len);
        FUZZ_CHECK(exp == -1);
        return;
    }
    FUZZ_CHECK(exp >= 0 && exp <= IDM_STOKEN_MAX_EXPIRY);
    int64_t again = -1;
    FUZZ_CHECK(idm_stoken_verify(k, in->text, in->len, exp, &again, NULL) == IDM_EEXPIRED);
    FUZZ_CHECK(again == exp);
    if (exp > 0)
        FUZZ_CHECK(idm_stoken_verify(k, in->text, in->len, exp - 1, NULL, NULL) == IDM_OK);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in;
    fuzz_input_new(&in, data, size);
    const idm_key *k = fixed_key();
    check_key_parse(&in);
    check_reveal(&in, k);
    check_stoken(&in, k);
    fuzz_input_free(&in);
    return 0;
}
