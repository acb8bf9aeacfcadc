/*
 * fuzz/fuzz_time.c - RFC 3339 times: idm_time_parse and idm_time_format.
 *
 * Properties:
 *  - text the parser accepts formats (unless its instant lies beyond the
 *    six-digit years, which an offset can push it to) into the
 *    toISOString shape: 24 characters for years 0000-9999, else 27 with a
 *    sign; the formatted text parses back to the same millisecond and
 *    formats to the same text;
 *  - the first 8 input bytes, as a millisecond count, format and parse
 *    back unchanged whenever they format at all (IDM_ETIME_RANGE only
 *    beyond the six-digit years);
 *  - a buffer one byte too small is IDM_ENOSPC.
 * Refusals fill the error record.
 */
#include "harness.h"

/* Unix ms of 0000-01-01T00:00:00Z and 10000-01-01T00:00:00Z. */
#define YEAR0_MS     (-62167219200000LL)
#define YEAR10000_MS 253402300800000LL
/* Comfortably inside +-999999-xx-xx: closer to the limits, the range
 * error is allowed. */
#define SIX_DIGIT_SAFE_MS 31000000000000000LL

static void check_format_round_trip(int64_t ms)
{
    char text[IDM_RFC3339_CAP];
    int rc = idm_time_format(ms, text, sizeof text);
    if (rc == IDM_ETIME_RANGE) {
        FUZZ_CHECK(ms > SIX_DIGIT_SAFE_MS || ms < -SIX_DIGIT_SAFE_MS);
        return;
    }
    FUZZ_CHECK(rc == IDM_OK);
    size_t len = strlen(text);
    if (ms >= YEAR0_MS && ms < YEAR10000_MS) {
        FUZZ_CHECK(len == 24);
        FUZZ_CHECK(text[0] >= '0' && text[0] <= '9');
    } else {
        FUZZ_CHECK(len == 27);
        FUZZ_CHECK(text[0] == '+' || text[0] == '-');
    }
    FUZZ_CHECK(text[len - 1] == 'Z' && text[len - 5] == '.');

    int64_t back = 0;
    idm_error err;
    fuzz_error_init(&err);
    rc = idm_time_parse(text, len, &back, &err);
    if (rc != IDM_OK) {
        fprintf(stderr, "formatted %s does not parse: %s\n", text, err.msg);
    }
    FUZZ_CHECK(rc == IDM_OK);
    FUZZ_CHECK(back == ms);

    char again[IDM_RFC3339_CAP];
    FUZZ_CHECK(idm_time_format(back, again, sizeof again) == IDM_OK);
    FUZZ_CHECK(strcmp(again, text) == 0);
    FUZZ_CHECK(idm_time_format(ms, again, len) == IDM_ENOSPC);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in;
    fuzz_input_new(&in, data, size);
    int64_t ms = 0;
    idm_error err;
    fuzz_error_init(&err);
    int rc = idm_time_parse(in.text, in.len, &ms, &err);
    if (rc == IDM_OK) {
        check_format_round_trip(ms);
    } else {
        FUZZ_CHECK(rc == IDM_EPARSE || rc == IDM_ETIME_RANGE);
        fuzz_check_error(rc, &err, in.len);
    }

    if (size >= 8) {
        uint64_t raw = 0;
        for (int i = 0; i < 8; i++) {
            raw = raw << 8 | data[i];
        }
        /* Mostly small magnitudes, so that ordinary dates get exercised. */
        int64_t v = (int64_t)raw;
        if (data[0] & 1) {
            v = (int64_t)(raw % 600000000000000ULL) - 300000000000000LL;
        }
        check_format_round_trip(v);
    }
    fuzz_input_free(&in);
    return 0;
}
