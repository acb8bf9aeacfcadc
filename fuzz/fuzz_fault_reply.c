/*
 * fuzz/fuzz_fault_reply.c - the fault harness's reply parsers
 * (tests/faults/reply.c: fr_http, fr_resp, fr_next_id, fr_node_json) on
 * arbitrary bytes. The first byte picks the parser (even: HTTP, odd:
 * RESP); all of the input goes to fr_node_json too.
 *
 * Properties:
 *  - a reply's length is within the input, its body inside that length
 *    (HTTP: ending where the reply ends), its status 100..999 (HTTP) or
 *    200/503 (RESP);
 *  - the reply less its last byte is FR_MORE (short of the header limit);
 *  - fr_next_id advances and stays within the body, and ends;
 *  - fr_node_json leaves a NUL-terminated state.
 */
#include "harness.h"

#include "../tests/faults/reply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    int resp = data[0] & 1;
    fuzz_input in;
    fuzz_input_new(&in, data + 1, size - 1);
    fr_reply r;
    long n = resp ? fr_resp(in.text, in.len, &r) : fr_http(in.text, in.len, &r);
    FUZZ_CHECK(n == FR_MORE || n == FR_BAD || (n > 0 && (size_t)n <= in.len));
    if (n > 0) {
        FUZZ_CHECK(r.body >= in.text && r.body + r.body_len <= in.text + n);
        if (resp) {
            FUZZ_CHECK(r.status == 200 || r.status == 503);
        } else {
            FUZZ_CHECK(r.status >= 100 && r.status <= 999);
            FUZZ_CHECK(r.body + r.body_len == in.text + n);
        }
        if ((size_t)n - 1 <= FR_MAX_HEAD) {
            fr_reply r2;
            long m = resp ? fr_resp(in.text, (size_t)n - 1, &r2) : fr_http(in.text, (size_t)n - 1, &r2);
            FUZZ_CHECK(m == FR_MORE);
        }
        size_t pos = 0, prev = 0, count = 0;
        uint64_t id;
        int k = fr_next_id(&r, resp, &pos, &id);
        for (; k == 1; k = fr_next_id(&r, resp, &pos, &id)) {
            FUZZ_CHECK(pos > prev && pos <= r.body_len);
            prev = pos;
            count++;
            FUZZ_CHECK(count <= r.body_len);
        }
        FUZZ_CHECK(k == 0 || k == FR_BAD);
    }
    fr_node nd;
    if (fr_node_json(in.text, in.len, &nd) == 0)
        FUZZ_CHECK(memchr(nd.state, '\0', sizeof nd.state) != NULL);
    fuzz_input_free(&in);
    return 0;
}
