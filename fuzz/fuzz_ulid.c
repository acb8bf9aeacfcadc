/*
 * fuzz/fuzz_ulid.c - idm_ulid_parse on arbitrary bytes.
 *
 * Properties, for every input the parser accepts:
 *  - it is 26 characters of Crockford base32 (either case, no I L O U),
 *    the first at most '7';
 *  - formatting gives the input in uppercase (there are no aliases, so the
 *    canonical form is the input's uppercase), and parsing that, or its
 *    lowercase, gives the same bytes;
 *  - idm_ulid_unix_ms is the first 48 bits;
 *  - a buffer one byte too small is IDM_ENOSPC.
 * And for every input it refuses: the error record is filled.
 */
#include "harness.h"

static const char crockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

static void check_accepted(const fuzz_input *in, const idm_ulid *u)
{
    FUZZ_CHECK(in->len == IDM_ULID_STRLEN);
    FUZZ_CHECK(in->text[0] >= '0' && in->text[0] <= '7');
    for (size_t i = 0; i < in->len; i++) {
        int c = fuzz_upper((unsigned char)in->text[i]);
        FUZZ_CHECK(c != 0 && strchr(crockford, c) != NULL);
    }

    char text[IDM_ULID_STRLEN + 1];
    FUZZ_CHECK(idm_ulid_format(u, text, sizeof text) == IDM_OK);
    FUZZ_CHECK(strlen(text) == IDM_ULID_STRLEN);
    for (size_t i = 0; i < IDM_ULID_STRLEN; i++) {
        FUZZ_CHECK(text[i] == fuzz_upper((unsigned char)in->text[i]));
    }

    idm_ulid again;
    FUZZ_CHECK(idm_ulid_parse(text, IDM_ULID_STRLEN, &again, NULL) == IDM_OK);
    FUZZ_CHECK(memcmp(again.bytes, u->bytes, sizeof u->bytes) == 0);
    char lower[IDM_ULID_STRLEN];
    for (size_t i = 0; i < IDM_ULID_STRLEN; i++) {
        lower[i] = (char)fuzz_lower((unsigned char)text[i]);
    }
    FUZZ_CHECK(idm_ulid_parse(lower, IDM_ULID_STRLEN, &again, NULL) == IDM_OK);
    FUZZ_CHECK(memcmp(again.bytes, u->bytes, sizeof u->bytes) == 0);

    int64_t ms = 0;
    for (int i = 0; i < 6; i++) {
        ms = ms << 8 | u->bytes[i];
    }
    FUZZ_CHECK(idm_ulid_unix_ms(u) == ms);

    char small[IDM_ULID_STRLEN];
    FUZZ_CHECK(idm_ulid_format(u, small, sizeof small) == IDM_ENOSPC);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in;
    fuzz_input_new(&in, data, size);
    idm_ulid u;
    idm_error err;
    fuzz_error_init(&err);
    int rc = idm_ulid_parse(in.text, in.len, &u, &err);
    if (rc == IDM_OK) {
        check_accepted(&in, &u);
    } else {
        FUZZ_CHECK(rc == IDM_EPARSE);
        fuzz_check_error(rc, &err, in.len);
        FUZZ_CHECK(idm_ulid_parse(in.text, in.len, &u, NULL) == rc);
    }
    fuzz_input_free(&in);
    return 0;
}
