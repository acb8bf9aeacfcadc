/*
 * test_lease_deadline.c - the lease's margin and deadline as every holder
 * counts them (coord/lease_time.c: idmc_lease_margin_ms,
 * idmc_lease_deadline, which cli/nodelease.c and server/lease.c call): a
 * fifth of the TTL, never less than 500 ms, taken off the TTL from the
 * start of the last confirmed call; the same figures as the two copies it
 * replaced; a TTL at or below the floor gives a deadline at or before the
 * confirmation; negative TTLs count as 0; no wrap-around at the ends of
 * int64_t.
 */
#include "idmint_coord.h"
#include "testlib.h"

#include <stdint.h>

/* What cli/nodelease.c and server/lease.c each computed before. */
static int64_t old_deadline(int64_t confirmed, int64_t ttl)
{
    int64_t m = ttl / 5;
    m = m < 500 ? 500 : m;
    return confirmed + ttl - m;
}

static void test_lease_margin_floor_and_fifth(void)
{
    ASSERT_EQ_INT(IDMC_LEASE_MARGIN_MIN_MS, 500);
    ASSERT_EQ_INT(idmc_lease_margin_ms(0), 500);
    ASSERT_EQ_INT(idmc_lease_margin_ms(-7), 500);
    ASSERT_EQ_INT(idmc_lease_margin_ms(2000), 500); /* the shortest TTL idmc_open takes */
    ASSERT_EQ_INT(idmc_lease_margin_ms(2504), 500);
    ASSERT_EQ_INT(idmc_lease_margin_ms(2505), 501); /* the fifth takes over */
    ASSERT_EQ_INT(idmc_lease_margin_ms(10000), 2000);
    ASSERT_EQ_INT(idmc_lease_margin_ms(INT64_MAX), INT64_MAX / 5);
}

static void test_lease_deadline_is_ttl_less_margin(void)
{
    ASSERT_EQ_INT(idmc_lease_deadline(1000, 10000), 9000);
    ASSERT_EQ_INT(idmc_lease_deadline(1000, 2000), 2500);
    ASSERT_EQ_INT(idmc_lease_deadline(0, 2505), 2004);
    /* Negative monotonic readings are just readings. */
    ASSERT_EQ_INT(idmc_lease_deadline(-5000, 10000), 3000);
}

static void test_lease_deadline_same_as_before(void)
{
    const int64_t confirmed[] = {0, 1, 123456789, -42, (int64_t)1 << 40};
    for (size_t i = 0; i < sizeof confirmed / sizeof confirmed[0]; i++) {
        for (int64_t ttl = 0; ttl <= 20000; ttl += 7) {
            int64_t got = idmc_lease_deadline(confirmed[i], ttl);
            int64_t want = old_deadline(confirmed[i], ttl);
            if (got != want)
                TEST_FAIL_("confirmed %" PRId64 " ttl %" PRId64 ": %" PRId64 " != %" PRId64,
                           confirmed[i], ttl, got, want);
        }
    }
    ASSERT_EQ_INT(idmc_lease_deadline(77, 3600000), old_deadline(77, 3600000));
}

static void test_lease_deadline_short_ttls(void)
{
    /* A TTL no longer than the floor is not counted on at all: the
     * deadline is at or before the confirmation itself. */
    ASSERT_EQ_INT(idmc_lease_deadline(1000, 500), 1000);
    ASSERT_EQ_INT(idmc_lease_deadline(1000, 300), 800);
    ASSERT_EQ_INT(idmc_lease_deadline(1000, 0), 500);
    ASSERT_EQ_INT(idmc_lease_deadline(1000, -1), 500);
    ASSERT_EQ_INT(idmc_lease_deadline(1000, INT64_MIN), 500);
    /* Always short of the TTL, by at least the floor. */
    for (int64_t ttl = 0; ttl <= 5000; ttl++) {
        if (idmc_lease_deadline(0, ttl) > ttl - IDMC_LEASE_MARGIN_MIN_MS)
            TEST_FAIL_("ttl %" PRId64 ": deadline %" PRId64, ttl, idmc_lease_deadline(0, ttl));
    }
}

static void test_lease_deadline_never_falls_as_ttl_grows(void)
{
    int64_t prev = idmc_lease_deadline(0, 0);
    for (int64_t ttl = 1; ttl <= 50000; ttl++) {
        int64_t d = idmc_lease_deadline(0, ttl);
        if (d < prev)
            TEST_FAIL_("ttl %" PRId64 ": %" PRId64 " < %" PRId64, ttl, d, prev);
        prev = d;
    }
}

static void test_lease_deadline_saturates(void)
{
    ASSERT_EQ_INT(idmc_lease_deadline(INT64_MAX - 10, 10000), INT64_MAX);
    ASSERT_EQ_INT(idmc_lease_deadline(INT64_MAX, INT64_MAX), INT64_MAX);
    ASSERT_EQ_INT(idmc_lease_deadline(INT64_MAX - 8000, 10000), INT64_MAX);
    ASSERT_EQ_INT(idmc_lease_deadline(INT64_MAX - 8001, 10000), INT64_MAX - 1);
    ASSERT_EQ_INT(idmc_lease_deadline(0, INT64_MAX), INT64_MAX - INT64_MAX / 5);
    ASSERT_EQ_INT(idmc_lease_deadline(INT64_MIN, 0), INT64_MIN);
    ASSERT_EQ_INT(idmc_lease_deadline(INT64_MIN + 499, 0), INT64_MIN);
    ASSERT_EQ_INT(idmc_lease_deadline(INT64_MIN + 500, 0), INT64_MIN);
    ASSERT_EQ_INT(idmc_lease_deadline(INT64_MIN + 501, 0), INT64_MIN + 1);
    ASSERT_EQ_INT(idmc_lease_deadline(INT64_MIN, 10000), INT64_MIN + 8000);
}

static const struct test_case tests[] = {
    TEST(test_lease_margin_floor_and_fifth),
    TEST(test_lease_deadline_is_ttl_less_margin),
    TEST(test_lease_deadline_same_as_before),
    TEST(test_lease_deadline_short_ttls),
    TEST(test_lease_deadline_never_falls_as_ttl_grows),
    TEST(test_lease_deadline_saturates),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
