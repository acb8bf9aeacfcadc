/*
 * test_ksuid_text.c - KSUID text form and timestamp (src/ksuid/ksuid_text.c)
 * against segmentio/ksuid's published examples (tests/vectors/ksuid.txt).
 */
#include "testlib.h"

#include "vecfile.h"

#include <idmint/idmint.h>

/* The seed of this program's test data (test_rng_next). */
static uint64_t rng_state = 0xa4093822299f31d0u;

/* idm_ksuid_parse on a copy of exactly len bytes (test_exact_copy); out is an
 * idm_ksuid. A test_parse_fn. */
static int parse_exact(const char *text, size_t len, void *out, idm_error *err)
{
    char *copy = test_exact_copy(text, len);
    int rc = idm_ksuid_parse(copy, len, out, err);
    free(copy);
    return rc;
}

static void ksuid_parse_rejects_bad_input_at_its_offset(void)
{
    struct vec_file v;
    idm_ksuid k;
    int bad = vec_check_bad(&v, "ksuid.txt", 1, parse_exact, &k, sizeof k);
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
    idm_ksuid k;
    ASSERT_TRUE(test_check_bad_bytes(parse_exact, &k, "0ujtsYcgvSTl8PAuAdqWYSMnLOv", 27, alphabet));
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

/* ok INPUT RAW TIMESTAMP UNIX_MS TIME (ksuid.txt) */
static void check_published_example(const struct vec_file *v)
{
    idm_ksuid k;
    idm_error err;
    unsigned char raw[20];
    if (parse_exact(v->fields[1].s, v->fields[1].len, &k, &err) != IDM_OK)
        TEST_FAIL_("%s", err.msg);
    ASSERT_TRUE(vec_hex(v, 2, raw, sizeof raw));
    ASSERT_EQ_MEM(k.bytes, raw, 20);
    uint32_t seconds =
        (uint32_t)raw[0] << 24 | (uint32_t)raw[1] << 16 | (uint32_t)raw[2] << 8 | raw[3];
    ASSERT_EQ_INT(seconds, vec_ll(v, 3));
    ASSERT_EQ_INT(idm_ksuid_unix_ms(&k), vec_ll(v, 4));
    char t[IDM_RFC3339_CAP], text[IDM_KSUID_STRLEN + 1];
    ASSERT_OK(idm_time_format(idm_ksuid_unix_ms(&k), t, sizeof t), (idm_error *)NULL);
    ASSERT_EQ_STR(t, v->fields[5].s);
    ASSERT_OK(idm_ksuid_format(&k, text, sizeof text), (idm_error *)NULL);
    ASSERT_EQ_STR(text, v->fields[1].s);
}

static void ksuid_matches_published_examples(void)
{
    struct vec_file v;
    int ok = vec_each(&v, "ksuid.txt", "ok", 6, "bad", check_published_example);
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
            k.bytes[j] = (uint8_t)test_rng_next(&rng_state);
        if (i % 5 == 0)
            memset(k.bytes, i % 10 == 0 ? 0x00 : 0xff,
                   4 + (size_t)(test_rng_next(&rng_state) % 17));
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
