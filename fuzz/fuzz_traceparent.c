/*
 * fuzz/fuzz_traceparent.c - idm_traceparent_parse on arbitrary bytes.
 *
 * Properties, for every input the parser accepts: it is exactly
 * "00-" 32 lowercase hex "-" 16 lowercase hex "-" 2 lowercase hex (W3C
 * Trace Context level 1, version 00), the parsed fields written back in
 * that shape give the input byte for byte, and neither id is all zeros.
 * Refusals fill the error record.
 */
#include "harness.h"

static void put_hex(char *dst, const uint8_t *src, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        dst[2 * i] = digits[src[i] >> 4];
        dst[2 * i + 1] = digits[src[i] & 15];
    }
}

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != 0) {
            return 0;
        }
    }
    return 1;
}

static void check_accepted(const fuzz_input *in, const idm_traceparent *tp)
{
    FUZZ_CHECK(in->len == IDM_TRACEPARENT_STRLEN);
    FUZZ_CHECK(tp->version == 0);
    FUZZ_CHECK(!all_zero(tp->trace_id, sizeof tp->trace_id));
    FUZZ_CHECK(!all_zero(tp->parent_id, sizeof tp->parent_id));

    char text[IDM_TRACEPARENT_STRLEN];
    put_hex(text, &tp->version, 1);
    text[2] = '-';
    put_hex(text + 3, tp->trace_id, sizeof tp->trace_id);
    text[35] = '-';
    put_hex(text + 36, tp->parent_id, sizeof tp->parent_id);
    text[52] = '-';
    put_hex(text + 53, &tp->flags, 1);
    FUZZ_CHECK(memcmp(text, in->text, IDM_TRACEPARENT_STRLEN) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in;
    fuzz_input_new(&in, data, size);
    idm_traceparent tp;
    idm_error err;
    fuzz_error_init(&err);
    int rc = idm_traceparent_parse(in.text, in.len, &tp, &err);
    if (rc == IDM_OK) {
        check_accepted(&in, &tp);
    } else {
        FUZZ_CHECK(rc == IDM_EPARSE);
        fuzz_check_error(rc, &err, in.len);
        FUZZ_CHECK(idm_traceparent_parse(in.text, in.len, &tp, NULL) == rc);
    }
    fuzz_input_free(&in);
    return 0;
}
