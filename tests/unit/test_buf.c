/*
 * test_buf.c - idmintd's reply buffers (server/buf.c): a reservation always
 * gives room or NULL for a failure, an empty buffer included. A reserve of 0
 * bytes on a buffer that had no memory yet used to compute NULL + 0
 * (undefined: UBSan aborted idmintd under load, when a part of a reply
 * minted nothing) and to return NULL, which callers take for a failed
 * allocation.
 */
#include "testlib.h"

#include "buf.h"

static void test_reserve_zero_on_empty(void)
{
    idms_buf b;
    idms_buf_init(&b);
    char *p = idms_buf_reserve(&b, 0);
    ASSERT_TRUE(p != NULL);
    ASSERT_TRUE(!b.failed);
    ASSERT_TRUE(b.len == 0);
    idms_buf_free(&b);
}

static void test_append_nothing_to_empty(void)
{
    idms_buf b;
    idms_buf_init(&b);
    idms_buf_append(&b, "", 0);
    idms_buf_puts(&b, "");
    ASSERT_TRUE(!b.failed);
    ASSERT_TRUE(b.len == 0);
    idms_buf_puts(&b, "abc");
    ASSERT_TRUE(b.len == 3 && memcmp(b.data, "abc", 3) == 0);
    idms_buf_free(&b);
}

static void test_growth_keeps_contents(void)
{
    idms_buf b;
    idms_buf_init(&b);
    for (int i = 0; i < 10000; i++)
        idms_buf_printf(&b, "%d\n", i);
    ASSERT_TRUE(!b.failed);
    ASSERT_TRUE(b.cap >= b.len);
    ASSERT_TRUE(memcmp(b.data, "0\n1\n2\n", 6) == 0);
    ASSERT_TRUE(memcmp(b.data + b.len - 5, "9999\n", 5) == 0);
    idms_buf_free(&b);
}

static const struct test_case tests[] = {
    TEST(test_reserve_zero_on_empty),
    TEST(test_append_nothing_to_empty),
    TEST(test_growth_keeps_contents),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
