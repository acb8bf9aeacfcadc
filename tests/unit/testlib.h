/*
 * testlib.h - the unit-test runner: tests registered in a list, assertions
 * that print both operands, a non-zero exit on any failure.
 *
 *   static void test_ulid_roundtrip(void) { ASSERT_EQ_INT(1, 1); }
 *   static const struct test_case tests[] = { TEST(test_ulid_roundtrip), {0} };
 *   int main(int argc, char **argv) { return test_main(argc, argv, tests); }
 *
 * argv[1], when given, is the vectors directory (test_vectors_dir()).
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
#define TEST(fn) {#fn, fn}

static int test_failures_;
static const char *test_current_;
static const char *test_vectors_dir_ = "tests/vectors";

static inline const char *test_vectors_dir(void)
{
    return test_vectors_dir_;
}

#define TEST_FAIL_(...)                                                                            \
    do {                                                                                           \
        fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, test_current_);                        \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        test_failures_++;                                                                          \
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

static inline int test_main(int argc, char **argv, const struct test_case *tests)
{
    int ran = 0;
    if (argc > 1)
        test_vectors_dir_ = argv[1];
    for (const struct test_case *t = tests; t->name; t++) {
        if (argc > 2 && strcmp(argv[2], t->name) != 0)
            continue;
        int before = test_failures_;
        test_current_ = t->name;
        t->fn();
        ran++;
        printf("%s %s\n", test_failures_ == before ? "ok  " : "FAIL", t->name);
    }
    printf("%d passed, %d failed\n", ran - test_failures_, test_failures_);
    return test_failures_ ? 1 : (ran ? 0 : 1);
}

#endif
