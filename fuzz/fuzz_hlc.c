/*
 * fuzz/fuzz_hlc.c - idm_hlc_parse on arbitrary bytes.
 *
 * Properties, for every input the parser accepts:
 *  - it is exactly 16 lowercase hex digits;
 *  - formatting the stamp gives the input back byte for byte (one text per
 *    stamp), and parsing that gives the same stamp;
 *  - decode and encode are inverses on it;
 *  - a buffer one byte too small is IDM_ENOSPC.
 * And for every input it refuses: IDM_EPARSE, the error record filled,
 * and the offset names a byte that is not a lowercase hex digit or, when
 * every byte up to it is one, the length.
 */
#include "harness.h"

static int is_lower_hex(int c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static void check_accepted(const fuzz_input *in, uint64_t stamp)
{
    FUZZ_CHECK(in->len == IDM_HLC_STRLEN);
    for (size_t i = 0; i < in->len; i++) {
        FUZZ_CHECK(is_lower_hex((unsigned char)in->text[i]));
    }
    char text[IDM_HLC_STRLEN + 1];
    FUZZ_CHECK(idm_hlc_format(stamp, text, sizeof text) == IDM_OK);
    FUZZ_CHECK(strlen(text) == IDM_HLC_STRLEN);
    FUZZ_CHECK(memcmp(text, in->text, IDM_HLC_STRLEN) == 0);
    uint64_t again = 0;
    FUZZ_CHECK(idm_hlc_parse(text, IDM_HLC_STRLEN, &again, NULL) == IDM_OK);
    FUZZ_CHECK(again == stamp);

    int64_t wall = -1;
    uint16_t logical = 0;
    idm_hlc_decode(stamp, &wall, &logical);
    FUZZ_CHECK(wall >= 0 && wall <= IDM_HLC_MAX_WALL_MS);
    uint64_t joined = 0;
    FUZZ_CHECK(idm_hlc_encode(wall, logical, &joined, NULL) == IDM_OK);
    FUZZ_CHECK(joined == stamp);

    char small[IDM_HLC_STRLEN];
    FUZZ_CHECK(idm_hlc_format(stamp, small, sizeof small) == IDM_ENOSPC);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in;
    fuzz_input_new(&in, data, size);
    uint64_t stamp = 0;
    idm_error err;
    fuzz_error_init(&err);
    int rc = idm_hlc_parse(in.text, in.len, &stamp, &err);
    if (rc == IDM_OK) {
        check_accepted(&in, stamp);
    } else {
        FUZZ_CHECK(rc == IDM_EPARSE);
        fuzz_check_error(rc, &err, in.len);
        size_t at = err.offset;
        for (size_t i = 0; i < at && i < in.len; i++) {
            FUZZ_CHECK(is_lower_hex((unsigned char)in.text[i]));
        }
        if (at < in.len && at < IDM_HLC_STRLEN) {
            FUZZ_CHECK(!is_lower_hex((unsigned char)in.text[at]));
        } else {
            FUZZ_CHECK(in.len != IDM_HLC_STRLEN);
        }
        FUZZ_CHECK(idm_hlc_parse(in.text, in.len, &stamp, NULL) == rc);
    }
    fuzz_input_free(&in);
    return 0;
}
