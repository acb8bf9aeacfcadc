/*
 * test_codec.c - the hex, Crockford base32 and base62 codecs (src/codec),
 * against slow bit-by-bit reference encoders written here from the specs.
 */
#include "testlib.h"

#include "internal.h"

#include <stdbool.h>

/* The seed of this program's test data (test_rng_next). */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static void rng_fill(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)test_rng_next(&rng_state);
    /* Bias towards the edges, where carries and pads go wrong. */
    uint64_t shape = test_rng_next(&rng_state) % 8;
    if (shape == 0)
        memset(p, 0, n);
    else if (shape == 1)
        memset(p, 0xff, n);
    else if (shape == 2)
        memset(p, 0, n / 2);
}

static const char crockford_upper[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
static const char base62_alphabet[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/* Base32 by definition: 2 zero bits, then the 128 bits, 5 at a time. */
static void ref_base32(const uint8_t src[16], char dst[26])
{
    for (int i = 0; i < 26; i++) {
        int v = 0;
        for (int b = 0; b < 5; b++) {
            int bit = 5 * i + b - 2; /* index into the 128 bits, MSB first */
            int set = bit >= 0 && (src[bit / 8] >> (7 - bit % 8)) & 1;
            v = v << 1 | set;
        }
        dst[i] = crockford_upper[v];
    }
}

/* Base62 by schoolbook division of the byte string by 62. */
static void ref_base62(const uint8_t *src, size_t n, char *dst, size_t out_len)
{
    uint8_t num[64];
    memcpy(num, src, n);
    for (size_t out = out_len; out-- > 0;) {
        unsigned rem = 0;
        for (size_t i = 0; i < n; i++) {
            unsigned cur = rem << 8 | num[i];
            num[i] = (uint8_t)(cur / 62);
            rem = cur % 62;
        }
        dst[out] = base62_alphabet[rem];
    }
}

/* The fewest base62 digits that hold any n-byte number. */
static size_t base62_width(size_t n)
{
    uint8_t ones[64];
    memset(ones, 0xff, n);
    size_t digits = 0;
    bool nonzero = true;
    while (nonzero) {
        unsigned rem = 0;
        nonzero = false;
        for (size_t i = 0; i < n; i++) {
            unsigned cur = rem << 8 | ones[i];
            ones[i] = (uint8_t)(cur / 62);
            rem = cur % 62;
            nonzero = nonzero || ones[i] != 0;
        }
        digits++;
    }
    return digits;
}

/* ---- hex -------------------------------------------------------------------- */

static void codec_hex_value_rejects_every_non_digit(void)
{
    for (int c = 0; c < 256; c++) {
        const char *digits = "0123456789abcdef";
        const char *found = c != 0 ? strchr(digits, c >= 'A' && c <= 'F' ? c + 32 : c) : NULL;
        int expected = found != NULL ? (int)(found - digits) : -1;
        if (idm__hex_value((unsigned char)c) != expected)
            TEST_FAIL_("byte 0x%02x: %d != %d", c, idm__hex_value((unsigned char)c), expected);
    }
}

static void codec_hex_encode_is_lowercase(void)
{
    const uint8_t bytes[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
    char out[13] = {0};
    idm__hex_encode(bytes, sizeof bytes, out);
    ASSERT_EQ_STR(out, "00017f80abff");
    char untouched[3] = "zz";
    idm__hex_encode(bytes, 0, untouched);
    ASSERT_EQ_STR(untouched, "zz");
}

/* ---- base32 ----------------------------------------------------------------- */

static void codec_base32_rejects_first_character_above_7(void)
{
    char text[26];
    uint8_t out[16];
    idm_error err;
    for (const char *first = "89ABCDEFGHJKMNPQRSTVWXYZabcdefghjkmnpqrstvwxyz"; *first; first++) {
        memset(text, '0', sizeof text);
        text[0] = *first;
        memset(&err, 0, sizeof err);
        ASSERT_EQ_INT(idm__base32_decode128(text, out, false, "ULID", &err), IDM_EPARSE);
        ASSERT_EQ_INT(err.code, IDM_EPARSE);
        ASSERT_EQ_INT(err.offset, 0);
        ASSERT_EQ_STR(err.msg, "ULID exceeds 128 bits (first character above 7)");
    }
    memset(text, 'Z', sizeof text);
    text[0] = '7';
    ASSERT_OK(idm__base32_decode128(text, out, false, "ULID", &err), &err);
}

static void codec_base32_rejects_every_bad_byte_at_every_position(void)
{
    char text[26];
    uint8_t out[16];
    idm_error err;
    for (int c = 0; c < 256; c++) {
        bool valid = c != 0 && strchr(crockford_upper, c >= 'a' && c <= 'z' ? c - 32 : c) != NULL;
        if (valid)
            continue;
        for (size_t pos = 0; pos < 26; pos++) {
            memset(text, '1', sizeof text);
            text[pos] = (char)c;
            memset(&err, 0, sizeof err);
            int rc = idm__base32_decode128(text, out, false, "ULID", &err);
            if (rc != IDM_EPARSE || err.offset != pos)
                TEST_FAIL_("byte 0x%02x at %zu: rc %d offset %zu", c, pos, rc, err.offset);
        }
    }
}

static void codec_base32_names_the_bad_character(void)
{
    char text[27] = "01ARZ3NDEKTSV4RRFFQ69G5FAU";
    uint8_t out[16];
    idm_error err;
    ASSERT_EQ_INT(idm__base32_decode128(text, out, false, "ULID", &err), IDM_EPARSE);
    ASSERT_EQ_INT(err.offset, 25);
    ASSERT_TRUE(strstr(err.msg, "'U' at position 26") != NULL);
    ASSERT_TRUE(strstr(err.msg, "no I, L, O or U") != NULL);
    ASSERT_TRUE(strstr(err.msg, "01ARZ") == NULL); /* never the input */

    text[3] = '\x01';
    ASSERT_EQ_INT(idm__base32_decode128(text, out, false, "ULID", &err), IDM_EPARSE);
    ASSERT_EQ_INT(err.offset, 3);
    ASSERT_TRUE(strstr(err.msg, "byte 0x01 at position 4") != NULL);

    /* NULL err is allowed. */
    ASSERT_EQ_INT(idm__base32_decode128(text, out, false, "ULID", NULL), IDM_EPARSE);
}

static void codec_base32_lowercase_only_rejects_uppercase(void)
{
    char text[26];
    uint8_t out[16];
    idm_error err;
    for (size_t pos = 1; pos < 26; pos++) {
        memset(text, 'a', sizeof text);
        text[0] = '0';
        text[pos] = 'A';
        memset(&err, 0, sizeof err);
        ASSERT_EQ_INT(idm__base32_decode128(text, out, true, "TypeID suffix", &err), IDM_EPARSE);
        ASSERT_EQ_INT(err.offset, pos);
        ASSERT_TRUE(strstr(err.msg, "TypeID suffix must be lowercase") != NULL);
        text[pos] = 'a';
        ASSERT_OK(idm__base32_decode128(text, out, true, "TypeID suffix", &err), &err);
    }
}

static void codec_base32_known_values(void)
{
    uint8_t bytes[16] = {0};
    char text[27] = {0};
    idm__base32_encode128(bytes, text, false);
    ASSERT_EQ_STR(text, "00000000000000000000000000");
    bytes[15] = 1;
    idm__base32_encode128(bytes, text, false);
    ASSERT_EQ_STR(text, "00000000000000000000000001");
    memset(bytes, 0xff, sizeof bytes);
    idm__base32_encode128(bytes, text, false);
    ASSERT_EQ_STR(text, "7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
    idm__base32_encode128(bytes, text, true);
    ASSERT_EQ_STR(text, "7zzzzzzzzzzzzzzzzzzzzzzzzz");
    /* The character that straddles the two 64-bit halves (index 13). */
    memset(bytes, 0, sizeof bytes);
    bytes[7] = 0x01;
    bytes[8] = 0xf0;
    idm__base32_encode128(bytes, text, false);
    ASSERT_EQ_STR(text, "0000000000000Z000000000000");
}

static void codec_base32_roundtrips_random_values(void)
{
    uint8_t bytes[16], back[16];
    char text[26], expected[26], lower[26];
    idm_error err;
    for (int i = 0; i < 200000; i++) {
        rng_fill(bytes, sizeof bytes);
        idm__base32_encode128(bytes, text, false);
        ref_base32(bytes, expected);
        if (memcmp(text, expected, 26) != 0)
            TEST_FAIL_("encode %d: %.26s != %.26s", i, text, expected);
        ASSERT_OK(idm__base32_decode128(text, back, false, "ULID", &err), &err);
        ASSERT_EQ_MEM(back, bytes, 16);

        idm__base32_encode128(bytes, lower, true);
        for (int k = 0; k < 26; k++) {
            char want = expected[k] >= 'A' ? (char)(expected[k] + 32) : expected[k];
            if (lower[k] != want)
                TEST_FAIL_("lowercase encode %d at %d", i, k);
        }
        ASSERT_OK(idm__base32_decode128(lower, back, true, "TypeID suffix", &err), &err);
        ASSERT_EQ_MEM(back, bytes, 16);

        /* Decoding ignores case: flip random letters. */
        uint64_t flips = test_rng_next(&rng_state);
        for (int k = 0; k < 26; k++) {
            if ((flips >> k & 1) && text[k] >= 'A')
                text[k] = (char)(text[k] + 32);
        }
        ASSERT_OK(idm__base32_decode128(text, back, false, "ULID", &err), &err);
        ASSERT_EQ_MEM(back, bytes, 16);
    }
}

/* ---- base62 ----------------------------------------------------------------- */

static void codec_base62_rejects_every_bad_byte_at_every_position(void)
{
    char text[27];
    uint8_t out[20];
    idm_error err;
    for (int c = 0; c < 256; c++) {
        if (c != 0 && strchr(base62_alphabet, c) != NULL)
            continue;
        for (size_t pos = 0; pos < sizeof text; pos++) {
            memset(text, '0', sizeof text);
            text[pos] = (char)c;
            memset(&err, 0, sizeof err);
            int rc = idm__base62_decode(text, sizeof text, out, sizeof out, "KSUID", &err);
            if (rc != IDM_EPARSE || err.offset != pos)
                TEST_FAIL_("byte 0x%02x at %zu: rc %d offset %zu", c, pos, rc, err.offset);
        }
    }
    memcpy(text, "0ujtsYcgvSTl8PAuAdqWYSMnL-v", 27);
    ASSERT_EQ_INT(idm__base62_decode(text, 27, out, 20, "KSUID", &err), IDM_EPARSE);
    ASSERT_TRUE(strstr(err.msg, "KSUID has an invalid character '-' at position 26") != NULL);
}

static void codec_base62_rejects_overflow(void)
{
    uint8_t out[20];
    idm_error err;
    /* One above 2^160 - 1, and the largest 27-digit value. */
    ASSERT_EQ_INT(idm__base62_decode("aWgEPTl1tmebfsQzFP4bxwgy80W", 27, out, 20, "KSUID", &err),
                  IDM_EPARSE);
    ASSERT_EQ_INT(err.offset, 0);
    ASSERT_TRUE(strstr(err.msg, "exceeds 160 bits") != NULL);
    ASSERT_EQ_INT(idm__base62_decode("zzzzzzzzzzzzzzzzzzzzzzzzzzz", 27, out, 20, "KSUID", &err),
                  IDM_EPARSE);
    /* 128 bits: 2^128 is 7n42DGM5Tflk9n8mt7Fhc8 in 22 digits. */
    ASSERT_OK(idm__base62_decode("7n42DGM5Tflk9n8mt7Fhc7", 22, out, 16, "token", &err), &err);
    ASSERT_EQ_INT(idm__base62_decode("7n42DGM5Tflk9n8mt7Fhc8", 22, out, 16, "token", &err),
                  IDM_EPARSE);
    ASSERT_TRUE(strstr(err.msg, "token exceeds 128 bits") != NULL);
    /* A width that is not a whole number of 32-bit limbs: 5 bytes. */
    uint8_t five[5];
    char text[8] = {0};
    memset(five, 0xff, sizeof five);
    idm__base62_encode(five, 5, text, 7);
    ASSERT_EQ_STR(text, "JMAIjoV");
    ASSERT_OK(idm__base62_decode(text, 7, five, 5, "x", &err), &err);
    ASSERT_EQ_INT(idm__base62_decode("JMAIjoW", 7, five, 5, "x", &err), IDM_EPARSE);
    ASSERT_TRUE(strstr(err.msg, "exceeds 40 bits") != NULL);
}

static void codec_base62_known_values(void)
{
    uint8_t bytes[20];
    char text[28] = {0};
    memset(bytes, 0, sizeof bytes);
    idm__base62_encode(bytes, 20, text, 27);
    ASSERT_EQ_STR(text, "000000000000000000000000000");
    bytes[19] = 61;
    idm__base62_encode(bytes, 20, text, 27);
    ASSERT_EQ_STR(text, "00000000000000000000000000z");
    bytes[19] = 62;
    idm__base62_encode(bytes, 20, text, 27);
    ASSERT_EQ_STR(text, "000000000000000000000000010");
    memset(bytes, 0xff, sizeof bytes);
    idm__base62_encode(bytes, 20, text, 27);
    ASSERT_EQ_STR(text, "aWgEPTl1tmebfsQzFP4bxwgy80V");
    /* Leading digits come out as zeros when out_len is wider than needed. */
    char wide[31] = {0};
    idm__base62_encode(bytes, 20, wide, 30);
    ASSERT_EQ_STR(wide, "000aWgEPTl1tmebfsQzFP4bxwgy80V");
}

static void codec_base62_roundtrips_random_values(void)
{
    static const size_t widths[] = {1, 2, 3, 4, 5, 7, 8, 15, 16, 20, 31, 32};
    uint8_t bytes[32], back[32];
    char text[64], expected[64];
    idm_error err;
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        size_t n = widths[w];
        size_t digits = base62_width(n);
        for (int i = 0; i < 20000; i++) {
            rng_fill(bytes, n);
            idm__base62_encode(bytes, n, text, digits);
            ref_base62(bytes, n, expected, digits);
            if (memcmp(text, expected, digits) != 0)
                TEST_FAIL_("n=%zu encode %d: %.*s != %.*s", n, i, (int)digits, text, (int)digits,
                           expected);
            ASSERT_OK(idm__base62_decode(text, digits, back, n, "x", &err), &err);
            ASSERT_EQ_MEM(back, bytes, n);
        }
    }
}

static const struct test_case tests[] = {
    TEST(codec_hex_value_rejects_every_non_digit),
    TEST(codec_hex_encode_is_lowercase),
    TEST(codec_base32_rejects_first_character_above_7),
    TEST(codec_base32_rejects_every_bad_byte_at_every_position),
    TEST(codec_base32_names_the_bad_character),
    TEST(codec_base32_lowercase_only_rejects_uppercase),
    TEST(codec_base32_known_values),
    TEST(codec_base32_roundtrips_random_values),
    TEST(codec_base62_rejects_every_bad_byte_at_every_position),
    TEST(codec_base62_rejects_overflow),
    TEST(codec_base62_known_values),
    TEST(codec_base62_roundtrips_random_values),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
