/*
 * testlib.h - the unit-test runner: tests registered in a list, assertions
 * that print both operands, a non-zero exit on any failure.
 *
 *   static void test_ulid_roundtrip(void) { ASSERT_EQ_INT(1, 1); }
 *   static const struct test_case tests[] = { TEST(test_ulid_roundtrip), {0} };
 *   int main(int argc, char **argv) { return test_main(argc, argv, tests); }
 *
 * argv[1], when given, is the vectors directory (test_vectors_dir()), which
 * vecfile.h reads. test_rng_next and test_exact_copy supply test data;
 * test_check_bad_bytes is a parser check that several formats share.
 * A single test can be run by name: prog VECTORS_DIR test_name.
 */
#ifndef IDM_TESTLIB_H
#define IDM_TESTLIB_H

#include <idmint/error.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct test_case {
    const char *name;
    void (*fn)(void);
};
#define TEST(fn)                                                                                   \
    {                                                                                              \
#fn, fn                                                                                    \
    }

static int test_failures_;
static const char *test_current_;
static const char *test_vectors_dir_ = "tests/vectors";

static inline const char *test_vectors_dir(void)
{
    return test_vectors_dir_;
}

/* Reports a failure of the current test and goes on, for helpers that are
 * not tests themselves (they return a value that the test then checks). */
#define TEST_REPORT_(...)                                                                          \
    do {                                                                                           \
        fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, test_current_);                         \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        test_failures_++;                                                                          \
    } while (0)

/* Reports a failure and ends the current test. */
#define TEST_FAIL_(...)                                                                            \
    do {                                                                                           \
        TEST_REPORT_(__VA_ARGS__);                                                                 \
        return;                                                                                    \
    } while (0)

#define ASSERT_TRUE(c)                                                                             \
    do {                                                                                           \
        if (!(c))                                                                                  \
            TEST_FAIL_("expected true: %s", #c);                                                   \
    } while (0)

#define ASSERT_EQ_INT(a, b)                                                                        \
    do {                                                                                           \
        long long a_ = (long long)(a), b_ = (long long)(b);                                        \
        if (a_ != b_)                                                                              \
            TEST_FAIL_("%s == %s: %lld != %lld", #a, #b, a_, b_);                                  \
    } while (0)

#define ASSERT_EQ_U64(a, b)                                                                        \
    do {                                                                                           \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);             \
        if (a_ != b_)                                                                              \
            TEST_FAIL_("%s == %s: %llu != %llu", #a, #b, a_, b_);                                  \
    } while (0)

#define ASSERT_EQ_STR(a, b)                                                                        \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0)                                       \
            TEST_FAIL_("%s == %s: \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)",                   \
                       b_ ? b_ : "(null)");                                                        \
    } while (0)

#define ASSERT_EQ_MEM(a, b, n)                                                                     \
    do {                                                                                           \
        if (memcmp((a), (b), (n)) != 0)                                                            \
            TEST_FAIL_("%s == %s: %zu bytes differ", #a, #b, (size_t)(n));                         \
    } while (0)

/* Asserts that a call returned IDM_OK, printing the error message if not. */
#define ASSERT_OK(call, errp)                                                                      \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        const idm_error *e_ = (errp);                                                              \
        if (rc_ != 0)                                                                              \
            TEST_FAIL_("%s returned %d: %s", #call, rc_, e_ ? e_->msg : "");                       \
    } while (0)

/* splitmix64 (Steele, Lea and Flood 2014): deterministic test data from a
 * seed in *state, which it advances; no real randomness needed. Each test
 * program keeps its own state and seed. */
static inline uint64_t test_rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* The bytes of a test vector's hex text (an even number of digits, as
 * the specs print them) into out; returns how many. */
static inline size_t test_from_hex(const char *hex, uint8_t *out)
{
    size_t n = strlen(hex) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned byte = 0;
        sscanf(hex + 2 * i, "%2x", &byte);
        out[i] = (uint8_t)byte;
    }
    return n;
}

/* A copy of text[0..len-1] in its own allocation of exactly len bytes (one
 * when len is 0), so that ASan catches a parser reading past len. The
 * caller frees it. Aborts when out of memory. */
static inline char *test_exact_copy(const char *text, size_t len)
{
    char *copy = malloc(len ? len : 1);
    if (copy == NULL)
        abort();
    memcpy(copy, text, len);
    return copy;
}

/* A parser under test: parses text[0..len-1] into out (of the type the
 * test knows) and returns an IDM_ code. */
typedef int (*test_parse_fn)(const char *text, size_t len, void *out, idm_error *err);

/* Checks that parse rejects every byte outside alphabet (and NUL) placed in
 * turn at every position of the valid text[0..len-1], with IDM_EPARSE and
 * err->offset at that position. Returns 1, or 0 after reporting the first
 * failure (TEST_REPORT_). */
static inline int test_check_bad_bytes(test_parse_fn parse, void *out, const char *valid,
                                       size_t len, const char *alphabet)
{
    char *text = test_exact_copy(valid, len);
    int ok = 1;
    for (size_t pos = 0; pos < len && ok; pos++) {
        for (int c = 0; c < 256 && ok; c++) {
            if (c != 0 && strchr(alphabet, c) != NULL)
                continue;
            text[pos] = (char)c;
            idm_error err;
            memset(&err, 0, sizeof err);
            int rc = parse(text, len, out, &err);
            if (rc != IDM_EPARSE || err.offset != pos) {
                TEST_REPORT_("byte 0x%02x at %zu: rc %d offset %zu", c, pos, rc, err.offset);
                ok = 0;
            }
        }
        text[pos] = valid[pos];
    }
    free(text);
    return ok;
}

/* Counts failed tests, not failed assertions: a test that reports through
 * a helper (TEST_REPORT_) and then fails a check of its own fails once. */
static inline int test_main(int argc, char **argv, const struct test_case *tests)
{
    int ran = 0, failed = 0;
    if (argc > 1)
        test_vectors_dir_ = argv[1];
    for (const struct test_case *t = tests; t->name; t++) {
        if (argc > 2 && strcmp(argv[2], t->name) != 0)
            continue;
        int before = test_failures_;
        test_current_ = t->name;
        t->fn();
        ran++;
        if (test_failures_ != before)
            failed++;
        printf("%s %s\n", test_failures_ == before ? "ok  " : "FAIL", t->name);
    }
    printf("%d passed, %d failed\n", ran - failed, failed);
    return failed ? 1 : (ran ? 0 : 1);
}

#endif
