/*
 * fuzz/fuzz_sqlite_uuid.c - idmint_sqlite's UUID text reader
 * (sqlite/uuid_text.c: the grammar of SQLite's uuid.c and sqlean) on
 * arbitrary bytes.
 *
 * Properties, for every input it accepts:
 *  - written out independently: the input is an optional '{', 16 pairs of
 *    hex digits each after at most one '-', an optional '}', then its end
 *    or a NUL; the UUID's bytes are those pairs;
 *  - the canonical text of the UUID is read back to the same bytes.
 * And every input the grammar above describes is accepted.
 */
#include "harness.h"

#include "../sqlite/uuid_text.h"

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The grammar, written out again: 1 with the bytes, or 0. */
static int grammar(const char *z, size_t len, uint8_t out[16])
{
    size_t i = 0;
    size_t end = 0;
    while (end < len && z[end] != '\0')
        end++;
    if (i < end && z[i] == '{')
        i++;
    for (int b = 0; b < 16; b++) {
        if (i < end && z[i] == '-')
            i++;
        int hi = i < end ? hexval((unsigned char)z[i]) : -1;
        int lo = i + 1 < end ? hexval((unsigned char)z[i + 1]) : -1;
        if (hi < 0 || lo < 0)
            return 0;
        out[b] = (uint8_t)(hi << 4 | lo);
        i += 2;
    }
    if (i < end && z[i] == '}')
        i++;
    return i == end;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input in;
    fuzz_input_new(&in, data, size);
    idm_uuid u;
    uint8_t want[16];
    int ok = idmsq_uuid_text_read(in.text, in.len, &u) == 0;
    FUZZ_CHECK(ok == grammar(in.text, in.len, want));
    if (ok) {
        FUZZ_CHECK(memcmp(u.bytes, want, 16) == 0);
        char text[IDM_UUID_STRLEN + 1];
        FUZZ_CHECK(idm_uuid_format(&u, text, sizeof text) == IDM_OK);
        idm_uuid back;
        FUZZ_CHECK(idmsq_uuid_text_read(text, IDM_UUID_STRLEN, &back) == 0);
        FUZZ_CHECK(memcmp(back.bytes, u.bytes, 16) == 0);
    }
    fuzz_input_free(&in);
    return 0;
}
