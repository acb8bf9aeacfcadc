/*
 * test_token.c - opaque tokens and W3C traceparent values
 * (src/token/token.c), with a scripted randomness source and the
 * traceparent cases in tests/vectors/traceparent.txt.
 */
#include "testlib.h"

#include "vecfile.h"

#include "internal.h"

/* A randomness source that hands out zero_bytes zeros, then fill_byte
 * forever; or fails when failing is set. */
struct scripted_entropy {
    size_t zero_bytes;
    uint8_t fill_byte;
    int failing;
    long calls;
};

static int scripted_fill(void *ctx, void *buf, size_t len)
{
    struct scripted_entropy *s = ctx;
    uint8_t *p = buf;
    s->calls++;
    if (s->failing)
        return IDM_ENOENTROPY;
    for (size_t i = 0; i < len; i++) {
        if (s->zero_bytes > 0) {
            p[i] = 0;
            s->zero_bytes--;
        } else {
            p[i] = s->fill_byte;
        }
    }
    return IDM_OK;
}

static idm_gen *scripted_gen(struct scripted_entropy *s)
{
    idm_gen_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.entropy.fill = scripted_fill;
    cfg.entropy.ctx = s;
    idm_gen *g = NULL;
    idm_error err;
    if (idm_gen_new(&g, &cfg, &err) != IDM_OK) {
        fprintf(stderr, "idm_gen_new: %s\n", err.msg);
        abort();
    }
    return g;
}

/* ---- errors first ------------------------------------------------------------ */

static void token_next_rejects_bad_prefix(void)
{
    struct scripted_entropy s = {0, 0x42, 0, 0};
    idm_gen *g = scripted_gen(&s);
    char buf[IDM_TOKEN_STRLEN_MAX + 1];
    idm_error err;
    memset(buf, '#', sizeof buf);
    ASSERT_EQ_INT(idm_token_next(g, "Sk", 2, buf, sizeof buf, &err), IDM_EINVAL);
    ASSERT_EQ_INT(err.offset, 0);
    ASSERT_EQ_STR(err.msg, "token prefix must be lowercase ('S' at position 1)");
    ASSERT_EQ_INT(idm_token_next(g, "sk_", 3, buf, sizeof buf, &err), IDM_EINVAL);
    ASSERT_EQ_INT(err.offset, 2);
    ASSERT_EQ_INT(idm_token_next(g, "s1", 2, buf, sizeof buf, &err), IDM_EINVAL);
    ASSERT_EQ_INT(err.offset, 1);
    char long_prefix[64];
    memset(long_prefix, 'a', sizeof long_prefix);
    ASSERT_EQ_INT(idm_token_next(g, long_prefix, 64, buf, sizeof buf, &err), IDM_EINVAL);
    ASSERT_EQ_INT(buf[0], '#');
    ASSERT_EQ_INT(s.calls, 0); /* nothing drawn for a refused call */
    idm_gen_free(g);
}

static void token_check_prefix_names_the_token(void)
{
    idm_error err;
    ASSERT_EQ_INT(idm_token_check_prefix("sk", 2, &err), IDM_OK);
    ASSERT_EQ_INT(idm_token_check_prefix("", 0, &err), IDM_OK);
    ASSERT_EQ_INT(idm_token_check_prefix("a\nb", 3, &err), IDM_EINVAL);
    ASSERT_EQ_INT(err.offset, 1);
    ASSERT_EQ_STR(err.msg, "token prefix has an invalid character byte 0x0a at position 2 "
                           "(expected a-z or '_')");
}

static void token_next_needs_exact_room(void)
{
    struct scripted_entropy s = {0, 0x42, 0, 0};
    idm_gen *g = scripted_gen(&s);
    char buf[IDM_TOKEN_STRLEN_MAX + 1];
    idm_error err;
    memset(buf, '#', sizeof buf);
    /* "sk_" + 22 + NUL = 26 bytes; no prefix: 22 + NUL. */
    ASSERT_EQ_INT(idm_token_next(g, "sk", 2, buf, 25, &err), IDM_ENOSPC);
    ASSERT_EQ_INT(buf[0], '#');
    ASSERT_OK(idm_token_next(g, "sk", 2, buf, 26, &err), &err);
    ASSERT_EQ_INT(strlen(buf), 25);
    ASSERT_EQ_INT(idm_token_next(g, NULL, 0, buf, 22, &err), IDM_ENOSPC);
    ASSERT_OK(idm_token_next(g, NULL, 0, buf, 23, &err), &err);
    ASSERT_EQ_INT(strlen(buf), 22);
    char longest[IDM_TOKEN_STRLEN_MAX + 1];
    char prefix[64];
    memset(prefix, 'p', 63);
    ASSERT_OK(idm_token_next(g, prefix, 63, longest, sizeof longest, &err), &err);
    ASSERT_EQ_INT(strlen(longest), IDM_TOKEN_STRLEN_MAX);
    idm_gen_free(g);
}

static void token_next_reports_entropy_failure(void)
{
    struct scripted_entropy s = {0, 0x42, 1, 0};
    idm_gen *g = scripted_gen(&s);
    char buf[IDM_TOKEN_STRLEN_MAX + 1];
    idm_error err;
    ASSERT_EQ_INT(idm_token_next(g, "sk", 2, buf, sizeof buf, &err), IDM_ENOENTROPY);
    ASSERT_EQ_INT(idm_traceparent_next(g, buf, sizeof buf, &err), IDM_ENOENTROPY);
    idm_gen_free(g);
}

/* ---- known answers ----------------------------------------------------------- */

static void token_next_encodes_128_random_bits(void)
{
    char buf[IDM_TOKEN_STRLEN_MAX + 1];
    idm_error err;
    struct scripted_entropy ones = {0, 0xff, 0, 0};
    idm_gen *g = scripted_gen(&ones);
    ASSERT_OK(idm_token_next(g, "sk", 2, buf, sizeof buf, &err), &err);
    ASSERT_EQ_STR(buf, "sk_7n42DGM5Tflk9n8mt7Fhc7"); /* 2^128 - 1 */
    idm_gen_free(g);

    struct scripted_entropy zeros = {1u << 20, 0xff, 0, 0};
    g = scripted_gen(&zeros);
    ASSERT_OK(idm_token_next(g, "", 0, buf, sizeof buf, &err), &err);
    ASSERT_EQ_STR(buf, "0000000000000000000000");
    idm_gen_free(g);

    /* 15 zero bytes then 0x3e (62): the last two digits are "10". */
    struct scripted_entropy sixty_two = {15, 0x3e, 0, 0};
    g = scripted_gen(&sixty_two);
    ASSERT_OK(idm_token_next(g, "a", 1, buf, sizeof buf, &err), &err);
    ASSERT_EQ_STR(buf, "a_0000000000000000000010");
    idm_gen_free(g);
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(a, b);
}

static void token_next_is_unique_and_decodes(void)
{
    idm_gen *g = NULL;
    idm_error err;
    ASSERT_OK(idm_gen_new(&g, NULL, &err), &err);
    enum { N = 20000 };
    static char tokens[N][IDM_TOKEN_BODY_LEN + 4];
    for (int i = 0; i < N; i++) {
        ASSERT_OK(idm_token_next(g, "sk", 2, tokens[i], sizeof tokens[i], &err), &err);
        ASSERT_TRUE(memcmp(tokens[i], "sk_", 3) == 0);
        uint8_t bits[16];
        ASSERT_OK(
            idm__base62_decode(tokens[i] + 3, IDM_TOKEN_BODY_LEN, bits, sizeof bits, "token", &err),
            &err);
    }
    qsort(tokens, N, sizeof tokens[0], compare_strings);
    for (int i = 1; i < N; i++)
        ASSERT_TRUE(strcmp(tokens[i - 1], tokens[i]) != 0);
    idm_gen_free(g);
}

static void token_equal_compares_every_byte(void)
{
    const char *a = "sk_3ZbQ9xAbCdEfGhIjKlMnOp";
    size_t n = strlen(a);
    char b[64];
    ASSERT_EQ_INT(idm_token_equal(a, n, a, n), 1);
    memcpy(b, a, n);
    ASSERT_EQ_INT(idm_token_equal(a, n, b, n), 1);
    for (size_t i = 0; i < n; i++) {
        for (int bit = 0; bit < 8; bit++) {
            memcpy(b, a, n);
            b[i] = (char)(b[i] ^ (1 << bit));
            if (idm_token_equal(a, n, b, n) != 0)
                TEST_FAIL_("difference at byte %zu bit %d not seen", i, bit);
        }
    }
    ASSERT_EQ_INT(idm_token_equal(a, n, a, n - 1), 0);
    ASSERT_EQ_INT(idm_token_equal(a, n - 1, a, n), 0);
    ASSERT_EQ_INT(idm_token_equal(NULL, 0, NULL, 0), 1);
    ASSERT_EQ_INT(idm_token_equal("", 0, a, n), 0);
}

/* ---- traceparent ------------------------------------------------------------- */

/* idm_traceparent_parse on a copy of exactly len bytes (test_exact_copy);
 * out is an idm_traceparent. A test_parse_fn. */
static int traceparent_parse_exact(const char *text, size_t len, void *out, idm_error *err)
{
    char *copy = test_exact_copy(text, len);
    int rc = idm_traceparent_parse(copy, len, out, err);
    free(copy);
    return rc;
}

/* ok TEXT TRACE_ID PARENT_ID FLAGS (traceparent.txt) */
static void check_good_value(const struct vec_file *v)
{
    idm_traceparent tp;
    idm_error err;
    unsigned char trace[16], parent[8], flags;
    memset(&err, 0, sizeof err);
    if (traceparent_parse_exact(v->fields[1].s, v->fields[1].len, &tp, &err) != IDM_OK)
        TEST_FAIL_("%s", err.msg);
    ASSERT_TRUE(vec_hex(v, 2, trace, 16) && vec_hex(v, 3, parent, 8) && vec_hex(v, 4, &flags, 1));
    ASSERT_EQ_INT(tp.version, 0);
    ASSERT_EQ_MEM(tp.trace_id, trace, 16);
    ASSERT_EQ_MEM(tp.parent_id, parent, 8);
    ASSERT_EQ_INT(tp.flags, flags);
}

static void traceparent_parse_rejects_bad_values_at_their_offset(void)
{
    struct vec_file v;
    idm_traceparent tp;
    int bad = vec_check_bad(&v, "traceparent.txt", 1, traceparent_parse_exact, &tp, sizeof tp);
    ASSERT_TRUE(bad >= 10);
    /* And accepts the good ones. */
    int ok = vec_each(&v, "traceparent.txt", "ok", 5, "bad", check_good_value);
    ASSERT_TRUE(ok >= 4);
}

static void traceparent_next_needs_room(void)
{
    struct scripted_entropy s = {0, 0x42, 0, 0};
    idm_gen *g = scripted_gen(&s);
    char buf[IDM_TRACEPARENT_STRLEN + 1];
    idm_error err;
    memset(buf, '#', sizeof buf);
    ASSERT_EQ_INT(idm_traceparent_next(g, buf, IDM_TRACEPARENT_STRLEN, &err), IDM_ENOSPC);
    ASSERT_EQ_INT(buf[0], '#');
    ASSERT_OK(idm_traceparent_next(g, buf, sizeof buf, &err), &err);
    ASSERT_EQ_STR(buf, "00-42424242424242424242424242424242-4242424242424242-01");
    idm_gen_free(g);
}

static void traceparent_next_redraws_all_zero_ids(void)
{
    char buf[IDM_TRACEPARENT_STRLEN + 1];
    idm_error err;
    /* The first trace-id draw is all zeros, the next is not. */
    struct scripted_entropy s = {16, 0xab, 0, 0};
    idm_gen *g = scripted_gen(&s);
    ASSERT_OK(idm_traceparent_next(g, buf, sizeof buf, &err), &err);
    ASSERT_EQ_STR(buf, "00-abababababababababababababababab-abababababababab-01");
    idm_gen_free(g);
    /* A trace-id that is zero except its last byte is fine. */
    struct scripted_entropy t = {15, 0x01, 0, 0};
    g = scripted_gen(&t);
    ASSERT_OK(idm_traceparent_next(g, buf, sizeof buf, &err), &err);
    ASSERT_EQ_STR(buf, "00-00000000000000000000000000000001-0101010101010101-01");
    idm_gen_free(g);
    /* A source that only ever gives zeros is reported, not spun on. */
    struct scripted_entropy z = {(size_t)1 << 30, 0, 0, 0};
    g = scripted_gen(&z);
    ASSERT_EQ_INT(idm_traceparent_next(g, buf, sizeof buf, &err), IDM_ENOENTROPY);
    ASSERT_TRUE(strstr(err.msg, "all-zero trace-id") != NULL);
    idm_gen_free(g);
}

static void traceparent_next_roundtrips_through_parse(void)
{
    idm_gen *g = NULL;
    idm_error err;
    ASSERT_OK(idm_gen_new(&g, NULL, &err), &err);
    for (int i = 0; i < 10000; i++) {
        char buf[IDM_TRACEPARENT_STRLEN + 1];
        idm_traceparent tp;
        ASSERT_OK(idm_traceparent_next(g, buf, sizeof buf, &err), &err);
        ASSERT_EQ_INT(strlen(buf), IDM_TRACEPARENT_STRLEN);
        ASSERT_OK(idm_traceparent_parse(buf, IDM_TRACEPARENT_STRLEN, &tp, &err), &err);
        ASSERT_EQ_INT(tp.version, 0);
        ASSERT_EQ_INT(tp.flags, 1);
        char hex[33];
        idm__hex_encode(tp.trace_id, 16, hex);
        ASSERT_TRUE(memcmp(hex, buf + 3, 32) == 0);
        idm__hex_encode(tp.parent_id, 8, hex);
        ASSERT_TRUE(memcmp(hex, buf + 36, 16) == 0);
    }
    idm_gen_free(g);
}

static const struct test_case tests[] = {
    TEST(token_next_rejects_bad_prefix),
    TEST(token_check_prefix_names_the_token),
    TEST(token_next_needs_exact_room),
    TEST(token_next_reports_entropy_failure),
    TEST(token_next_encodes_128_random_bits),
    TEST(token_next_is_unique_and_decodes),
    TEST(token_equal_compares_every_byte),
    TEST(traceparent_parse_rejects_bad_values_at_their_offset),
    TEST(traceparent_next_needs_room),
    TEST(traceparent_next_redraws_all_zero_ids),
    TEST(traceparent_next_roundtrips_through_parse),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
