/*
 * fuzz/fuzz_mark.c - idm_mark_decode (mark.h) on arbitrary bytes: what a
 * mark file may hold after a crash, a torn write or someone's editor.
 *
 * Properties, for every input:
 *  - the result is IDM_OK or IDM_ESTATE (damaged), nothing else, and a
 *    refusal fills the error record;
 *  - an accepted mark is within 0 .. 2^48 - 1; sequence 0 (no slot) means
 *    mark 0, and happens only for an empty or all-zero input;
 *  - a write after any accepted state wins: the next slot (sequence + 1)
 *    encoded into the older slot's place makes the decoder return exactly
 *    that slot's mark and sequence, whatever the other slot holds.
 */
#include "harness.h"

#include "mark/markfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in;
    fuzz_input_new(&in, data, size);
    int64_t mark = -1, written = 0;
    uint64_t seq = 0;
    idm_error err;
    fuzz_error_init(&err);
    int rc = idm_mark_decode(in.text, in.len, &mark, &seq, &written, &err);
    FUZZ_CHECK(rc == IDM_OK || rc == IDM_ESTATE);
    bool zero = true;
    for (size_t i = 0; i < in.len && zero; i++) {
        zero = in.text[i] == 0;
    }
    if (rc != IDM_OK) {
        fuzz_check_error(rc, &err, in.len);
        FUZZ_CHECK(!zero);
    } else {
        FUZZ_CHECK(mark >= 0 && mark < (INT64_C(1) << 48));
        FUZZ_CHECK(seq != 0 || (mark == 0 && zero));
        if (seq < UINT64_MAX) {
            uint8_t file[IDM_MARK_FILE_BYTES] = {0};
            memcpy(file, in.text, in.len < sizeof file ? in.len : sizeof file);
            struct idm_mark_slot next = {seq + 1, (mark + 1) % (INT64_C(1) << 48), written, 1, {0}};
            idm__mark_slot_encode(&next, file + ((seq + 1) % 2) * IDM_MARK_SLOT_STRIDE);
            int64_t m2 = -1;
            uint64_t s2 = 0;
            FUZZ_CHECK(idm_mark_decode(file, sizeof file, &m2, &s2, NULL, NULL) == IDM_OK);
            FUZZ_CHECK(m2 == next.mark_ms && s2 == next.seq);
        }
    }
    fuzz_input_free(&in);
    return 0;
}
