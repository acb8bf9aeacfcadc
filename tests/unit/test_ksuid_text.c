/*
 * test_ksuid_text.c - KSUID text form and timestamp (src/ksuid/ksuid_text.c)
 * against segmentio/ksuid's published examples (tests/vectors/ksuid.txt).
 */
#include "testlib.h"

#include "../vectors/vecfile.h"

#include <idmint/idmint.h>

static uint64_t rng_state = 0xa4093822299f31d0u;
static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static int parse_exact(const char *text, size_t len, idm_ksuid *out, idm_error *err)
{
    char *copy = malloc(len ? len : 1);
    if (copy == NULL)
        abort();
    memcpy(copy, text, len);
    int rc = idm_ksuid_parse(copy, len, out, err);
    free(copy);
    return rc;
}

static void ksuid_parse_rejects_bad_input_at_its_offset(void)
{
    struct vec_file v;
    if (!vec_open(&v, "ksuid.txt"))
        TEST_FAIL_("cannot open %s", v.path);
    int bad = 0, n;
    for (n = vec_next(&v); n > 0; n = vec_next(&v)) {
        if (!vec_is(&v, 0, "bad"))
            continue;
        if (n != 3)
            TEST_FAIL_("%s:%d: malformed record", v.path, v.line_no);
        idm_ksuid k;
        idm_error err;
        memset(&err, 0, sizeof err);
        int rc = parse_exact(v.fields[1].s, v.fields[1].len, &k, &err);
        if (rc != IDM_EPARSE || err.code != IDM_EPARSE || (long long)err.offset != vec_ll(&v, 2))
            TEST_FAIL_("%s:%d: rc %d offset %zu: %s", v.path, v.line_no, rc, err.offset, err.msg);
        bad++;
    }
    ASSERT_TRUE(n == 0);
    vec_close(&v);
    ASSERT_TRUE(bad >= 10);
}

static void ksuid_parse_explains_the_error(void)
{
    idm_ksuid k;
    idm_error err;
    ASSERT_EQ_INT(idm_ksuid_parse("aWgEPTl1tmebfsQzFP4bxwgy80W", 27, &k, &err), IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "KSUID exceeds 160 bits (the largest is aWgEPTl1tmebfsQzFP4bxwgy80V)");
    ASSERT_EQ_INT(idm_ksuid_parse("0ujtsYcgvSTl8PAuAdqWYSMnLO", 26, &k, &err), IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "KSUID must be 27 characters, got 26");
    ASSERT_EQ_INT(idm_ksuid_parse("-ujtsYcgvSTl8PAuAdqWYSMnLOv", 27, &k, &err), IDM_EPARSE);
    ASSERT_EQ_INT(err.offset, 0);
    ASSERT_TRUE(strstr(err.msg, "invalid character '-' at position 1") != NULL);
    memset(&k, 0xaa, sizeof k);
    ASSERT_EQ_INT(idm_ksuid_parse("aWgEPTl1tmebfsQzFP4bxwgy80W", 27, &k, NULL), IDM_EPARSE);
    ASSERT_EQ_INT(k.bytes[0], 0xaa);
}

static void ksuid_parse_rejects_every_bad_byte_at_every_position(void)
{
    static const char alphabet[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    char text[27];
    for (size_t pos = 0; pos < 27; pos++) {
        for (int c = 0; c < 256; c++) {
            if (c != 0 && strchr(alphabet, c) != NULL)
                continue;
            memcpy(text, "0ujtsYcgvSTl8PAuAdqWYSMnLOv", 27);
            text[pos] = (char)c;
            idm_ksuid k;
            idm_error err;
            memset(&err, 0, sizeof err);
            int rc = parse_exact(text, 27, &k, &err);
            if (rc != IDM_EPARSE || err.offset != pos)
                TEST_FAIL_("byte 0x%02x at %zu: rc %d offset %zu", c, pos, rc, err.offset);
        }
    }
}

static void ksuid_format_needs_room_for_the_nul(void)
{
    idm_ksuid k;
    memset(&k, 0xff, sizeof k);
    char buf[IDM_KSUID_STRLEN + 1];
    memset(buf, '#', sizeof buf);
    ASSERT_EQ_INT(idm_ksuid_format(&k, buf, IDM_KSUID_STRLEN), IDM_ENOSPC);
    ASSERT_EQ_INT(buf[0], '#');
    ASSERT_EQ_INT(idm_ksuid_format(&k, buf, sizeof buf), IDM_OK);
    ASSERT_EQ_STR(buf, "aWgEPTl1tmebfsQzFP4bxwgy80V");
}

static void ksuid_matches_published_examples(void)
{
    struct vec_file v;
    if (!vec_open(&v, "ksuid.txt"))
        TEST_FAIL_("cannot open %s", v.path);
    int ok = 0, n;
    for (n = vec_next(&v); n > 0; n = vec_next(&v)) {
        if (vec_is(&v, 0, "bad"))
            continue;
        if (!vec_is(&v, 0, "ok") || n != 6)
            TEST_FAIL_("%s:%d: malformed record", v.path, v.line_no);
        idm_ksuid k;
        idm_error err;
        unsigned char raw[20];
        if (parse_exact(v.fields[1].s, v.fields[1].len, &k, &err) != IDM_OK)
            TEST_FAIL_("%s:%d: %s", v.path, v.line_no, err.msg);
        ASSERT_TRUE(vec_hex(&v, 2, raw, sizeof raw));
        ASSERT_EQ_MEM(k.bytes, raw, 20);
        uint32_t seconds =
            (uint32_t)raw[0] << 24 | (uint32_t)raw[1] << 16 | (uint32_t)raw[2] << 8 | raw[3];
        ASSERT_EQ_INT(seconds, vec_ll(&v, 3));
        ASSERT_EQ_INT(idm_ksuid_unix_ms(&k), vec_ll(&v, 4));
        char t[IDM_RFC3339_CAP], text[IDM_KSUID_STRLEN + 1];
        ASSERT_OK(idm_time_format(idm_ksuid_unix_ms(&k), t, sizeof t), (idm_error *)NULL);
        ASSERT_EQ_STR(t, v.fields[5].s);
        ASSERT_OK(idm_ksuid_format(&k, text, sizeof text), (idm_error *)NULL);
        ASSERT_EQ_STR(text, v.fields[1].s);
        ok++;
    }
    ASSERT_TRUE(n == 0);
    vec_close(&v);
    ASSERT_TRUE(ok >= 9);
}

static void ksuid_roundtrips_and_sorts_like_its_bytes(void)
{
    idm_ksuid prev;
    char prev_text[IDM_KSUID_STRLEN + 1] = {0};
    for (int i = 0; i < 100000; i++) {
        idm_ksuid k, back;
        idm_error err;
        for (int j = 0; j < 20; j++)
            k.bytes[j] = (uint8_t)rng_next();
        if (i % 5 == 0)
            memset(k.bytes, i % 10 == 0 ? 0x00 : 0xff, 4 + (size_t)(rng_next() % 17));
        char text[IDM_KSUID_STRLEN + 1];
        ASSERT_OK(idm_ksuid_format(&k, text, sizeof text), &err);
        ASSERT_EQ_INT(strlen(text), IDM_KSUID_STRLEN);
        ASSERT_OK(parse_exact(text, IDM_KSUID_STRLEN, &back, &err), &err);
        ASSERT_EQ_MEM(back.bytes, k.bytes, 20);
        if (i > 0) {
            int by_bytes = memcmp(prev.bytes, k.bytes, 20);
            int by_text = strcmp(prev_text, text);
            ASSERT_TRUE((by_bytes < 0) == (by_text < 0) && (by_bytes == 0) == (by_text == 0));
        }
        prev = k;
        memcpy(prev_text, text, sizeof text);
    }
}

static const struct test_case tests[] = {
    TEST(ksuid_parse_rejects_bad_input_at_its_offset),
    TEST(ksuid_parse_explains_the_error),
    TEST(ksuid_parse_rejects_every_bad_byte_at_every_position),
    TEST(ksuid_format_needs_room_for_the_nul),
    TEST(ksuid_matches_published_examples),
    TEST(ksuid_roundtrips_and_sorts_like_its_bytes),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
