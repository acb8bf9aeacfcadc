/*
 * fuzz/fuzz_ksuid.c - idm_ksuid_parse on arbitrary bytes.
 *
 * Properties, for every input the parser accepts:
 *  - it is 27 base62 characters, and formatting gives it back byte for
 *    byte (base62 is case-sensitive and fixed-width, so the text is
 *    canonical); parsing the formatted text gives the same bytes;
 *  - the value is at most the 160-bit maximum, so formatting the largest
 *    KSUID gives "aWgEPTl1tmebfsQzFP4bxwgy80V";
 *  - idm_ksuid_unix_ms is (first 32 bits + 1400000000) * 1000;
 *  - a buffer one byte too small is IDM_ENOSPC.
 * And for every input it refuses: the error record is filled.
 */
#include "harness.h"

static int is_base62(int c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static void check_accepted(const fuzz_input *in, const idm_ksuid *k)
{
    FUZZ_CHECK(in->len == IDM_KSUID_STRLEN);
    for (size_t i = 0; i < in->len; i++) {
        FUZZ_CHECK(is_base62((unsigned char)in->text[i]));
    }
    /* Base62 text of equal length orders like the value ('0' < 'A' < 'a'). */
    FUZZ_CHECK(memcmp(in->text, "aWgEPTl1tmebfsQzFP4bxwgy80V", IDM_KSUID_STRLEN) <= 0);

    char text[IDM_KSUID_STRLEN + 1];
    FUZZ_CHECK(idm_ksuid_format(k, text, sizeof text) == IDM_OK);
    FUZZ_CHECK(strlen(text) == IDM_KSUID_STRLEN);
    FUZZ_CHECK(memcmp(text, in->text, IDM_KSUID_STRLEN) == 0);

    idm_ksuid again;
    FUZZ_CHECK(idm_ksuid_parse(text, IDM_KSUID_STRLEN, &again, NULL) == IDM_OK);
    FUZZ_CHECK(memcmp(again.bytes, k->bytes, sizeof k->bytes) == 0);

    int64_t s = (int64_t)((uint32_t)k->bytes[0] << 24 | (uint32_t)k->bytes[1] << 16 |
                          (uint32_t)k->bytes[2] << 8 | k->bytes[3]);
    FUZZ_CHECK(idm_ksuid_unix_ms(k) == (s + IDM_KSUID_EPOCH_S) * 1000);

    char small[IDM_KSUID_STRLEN];
    FUZZ_CHECK(idm_ksuid_format(k, small, sizeof small) == IDM_ENOSPC);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in;
    fuzz_input_new(&in, data, size);
    idm_ksuid k;
    idm_error err;
    fuzz_error_init(&err);
    int rc = idm_ksuid_parse(in.text, in.len, &k, &err);
    if (rc == IDM_OK) {
        check_accepted(&in, &k);
    } else {
        FUZZ_CHECK(rc == IDM_EPARSE);
        fuzz_check_error(rc, &err, in.len);
        FUZZ_CHECK(idm_ksuid_parse(in.text, in.len, &k, NULL) == rc);
    }

    /* The all-ones KSUID formats as the documented maximum (checked once). */
    static int max_checked;
    if (!max_checked) {
        idm_ksuid max;
        memset(max.bytes, 0xFF, sizeof max.bytes);
        char text[IDM_KSUID_STRLEN + 1];
        FUZZ_CHECK(idm_ksuid_format(&max, text, sizeof text) == IDM_OK);
        FUZZ_CHECK(strcmp(text, "aWgEPTl1tmebfsQzFP4bxwgy80V") == 0);
        max_checked = 1;
    }

    fuzz_input_free(&in);
    return 0;
}
