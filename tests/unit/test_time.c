/*
 * test_time.c - RFC 3339 formatting and parsing (src/time/rfc3339.c)
 * against tests/vectors/time.txt, with the C library's gmtime_r as an
 * independent oracle for years 1 to 9999.
 */
#include "testlib.h"

#include "vecfile.h"

#include <idmint/idmint.h>

#include <stdbool.h>
#include <time.h>

#define TIME_MIN_MS (-31619087596800000LL) /* -999999-01-01T00:00:00.000Z */
#define TIME_MAX_MS 31494784780799999LL    /* +999999-12-31T23:59:59.999Z */

/* The seed of this program's test data (test_rng_next). */
static uint64_t rng_state = 0x452821e638d01377u;

/* idm_time_parse on a copy of exactly len bytes (test_exact_copy); out is an
 * int64_t. A test_parse_fn. */
static int parse_exact(const char *text, size_t len, void *out, idm_error *err)
{
    char *copy = test_exact_copy(text, len);
    int rc = idm_time_parse(copy, len, out, err);
    free(copy);
    return rc;
}

/* ---- errors first ------------------------------------------------------------ */

static void time_parse_rejects_bad_input_at_its_offset(void)
{
    struct vec_file v;
    int64_t ms; /* vec_check_bad checks that a failed parse leaves it alone */
    int bad = vec_check_bad(&v, "time.txt", 1, parse_exact, &ms, sizeof ms);
    ASSERT_TRUE(bad >= 25);
}

static void time_parse_explains_the_error(void)
{
    int64_t ms;
    idm_error err;
    ASSERT_EQ_INT(idm_time_parse("2022-02-29T00:00:00Z", 20, &ms, &err), IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "time has day 29 at position 9, but that month has 28 days");
    ASSERT_EQ_INT(idm_time_parse("2022-13-01T00:00:00Z", 20, &ms, &err), IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "time has month 13 at position 6 (expected 01-12)");
    ASSERT_EQ_INT(idm_time_parse("2022-02-22", 10, &ms, &err), IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "time ends early at position 11 (expected 'T')");
    ASSERT_EQ_INT(idm_time_parse("2022-02-22T19:22:22.000+05", 26, &ms, &err), IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "time ends early at position 27 (expected ':')");
    ASSERT_EQ_INT(idm_time_parse("2016-12-31T23:59:60Z", 20, &ms, &err), IDM_EPARSE);
    ASSERT_TRUE(strstr(err.msg, "leap second") != NULL);
    ASSERT_EQ_INT(idm_time_parse("2022-02-22T19:22:22.000Z\n", 25, &ms, &err), IDM_EPARSE);
    ASSERT_EQ_STR(err.msg, "time has byte 0x0a at position 25 after its end");
    ASSERT_EQ_INT(idm_time_parse("2022-02-22T19:22:22Z", 20, &ms, NULL), IDM_OK);
}

static void time_format_refuses_what_it_cannot_write(void)
{
    char buf[IDM_RFC3339_CAP];
    memset(buf, '#', sizeof buf);
    /* Four-digit years need 24 characters and a NUL, six-digit ones 27. */
    ASSERT_EQ_INT(idm_time_format(0, buf, 24), IDM_ENOSPC);
    ASSERT_EQ_INT(buf[0], '#');
    ASSERT_EQ_INT(idm_time_format(0, buf, 25), IDM_OK);
    ASSERT_EQ_STR(buf, "1970-01-01T00:00:00.000Z");
    ASSERT_EQ_INT(idm_time_format(253402300800000, buf, 27), IDM_ENOSPC);
    ASSERT_EQ_INT(idm_time_format(253402300800000, buf, 28), IDM_OK);
    ASSERT_EQ_STR(buf, "+010000-01-01T00:00:00.000Z");
    ASSERT_EQ_INT(idm_time_format(-62167219200001, buf, 27), IDM_ENOSPC);

    struct vec_file v;
    if (!vec_open(&v, "time.txt"))
        TEST_FAIL_("cannot open %s", v.path);
    int ranges = 0, n;
    for (n = vec_next(&v); n > 0; n = vec_next(&v)) {
        if (!vec_is(&v, 0, "range"))
            continue;
        ASSERT_EQ_INT(idm_time_format((int64_t)vec_ll(&v, 1), buf, sizeof buf), IDM_ETIME_RANGE);
        ranges++;
    }
    ASSERT_TRUE(n == 0);
    vec_close(&v);
    ASSERT_TRUE(ranges >= 4);
}

/* ---- vectors ----------------------------------------------------------------- */

static void time_matches_vectors(void)
{
    struct vec_file v;
    if (!vec_open(&v, "time.txt"))
        TEST_FAIL_("cannot open %s", v.path);
    int both = 0, parses = 0, n;
    for (n = vec_next(&v); n > 0; n = vec_next(&v)) {
        idm_error err;
        int64_t ms;
        if (vec_is(&v, 0, "both")) {
            char buf[IDM_RFC3339_CAP];
            ASSERT_EQ_INT(n, 3);
            ASSERT_OK(idm_time_format((int64_t)vec_ll(&v, 1), buf, sizeof buf), (idm_error *)NULL);
            if (strcmp(buf, v.fields[2].s) != 0)
                TEST_FAIL_("%s:%d: %s != %s", v.path, v.line_no, buf, v.fields[2].s);
            if (parse_exact(v.fields[2].s, v.fields[2].len, &ms, &err) != IDM_OK)
                TEST_FAIL_("%s:%d: %s", v.path, v.line_no, err.msg);
            ASSERT_EQ_INT(ms, vec_ll(&v, 1));
            both++;
        } else if (vec_is(&v, 0, "parse")) {
            ASSERT_EQ_INT(n, 3);
            if (parse_exact(v.fields[1].s, v.fields[1].len, &ms, &err) != IDM_OK)
                TEST_FAIL_("%s:%d: %s", v.path, v.line_no, err.msg);
            if (ms != vec_ll(&v, 2))
                TEST_FAIL_("%s:%d: %lld != %lld", v.path, v.line_no, (long long)ms, vec_ll(&v, 2));
            parses++;
        } else if (!vec_is(&v, 0, "range") && !vec_is(&v, 0, "bad")) {
            TEST_FAIL_("%s:%d: unknown record", v.path, v.line_no);
        }
    }
    ASSERT_TRUE(n == 0);
    vec_close(&v);
    ASSERT_TRUE(both >= 20);
    ASSERT_TRUE(parses >= 10);
}

/* ---- properties -------------------------------------------------------------- */

static void time_agrees_with_gmtime_r_for_years_1_to_9999(void)
{
    const int64_t lo = -62135596800000LL; /* 0001-01-01 */
    const int64_t hi = 253402300799999LL; /* 9999-12-31T23:59:59.999 */
    for (int i = 0; i < 200000; i++) {
        int64_t ms = lo + (int64_t)(test_rng_next(&rng_state) % (uint64_t)(hi - lo + 1));
        time_t secs = (time_t)(ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000));
        struct tm tm;
        if (gmtime_r(&secs, &tm) == NULL)
            TEST_FAIL_("gmtime_r failed for %lld", (long long)secs);
        char want[64], got[IDM_RFC3339_CAP];
        snprintf(want, sizeof want, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                 (int)(ms - (int64_t)secs * 1000));
        ASSERT_OK(idm_time_format(ms, got, sizeof got), (idm_error *)NULL);
        if (strcmp(got, want) != 0)
            TEST_FAIL_("%lld: %s != %s", (long long)ms, got, want);
    }
}

static void time_roundtrips_across_the_whole_range(void)
{
    idm_error err;
    for (int i = 0; i < 200000; i++) {
        int64_t ms = TIME_MIN_MS + (int64_t)(test_rng_next(&rng_state) %
                                             (uint64_t)(TIME_MAX_MS - TIME_MIN_MS + 1));
        if (i < 2000)
            ms = (int64_t)(test_rng_next(&rng_state) % 4000000) - 2000000; /* around the epoch */
        char buf[IDM_RFC3339_CAP];
        ASSERT_OK(idm_time_format(ms, buf, sizeof buf), (idm_error *)NULL);
        int64_t back;
        if (idm_time_parse(buf, strlen(buf), &back, &err) != IDM_OK)
            TEST_FAIL_("%s: %s", buf, err.msg);
        ASSERT_EQ_INT(back, ms);
    }
}

static bool leap(long long y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static void time_format_advances_one_day_at_a_time(void)
{
    /* Walk midnight to midnight from -000400-01-01 (0000-01-01 minus one
     * 400-year cycle of 146097 days) to about 2400, checking every date
     * against a plain calendar walk. */
    long long y = -400;
    int m = 1, d = 1;
    int64_t ms = -62167219200000LL - 146097LL * 86400000LL;
    static const int lengths[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    for (long day = 0; day < 2800L * 366; day++) {
        char buf[IDM_RFC3339_CAP], want[80];
        if (y >= 0 && y <= 9999)
            snprintf(want, sizeof want, "%04lld-%02d-%02dT00:00:00.000Z", y, m, d);
        else
            snprintf(want, sizeof want, "%c%06lld-%02d-%02dT00:00:00.000Z", y < 0 ? '-' : '+',
                     y < 0 ? -y : y, m, d);
        ASSERT_OK(idm_time_format(ms, buf, sizeof buf), (idm_error *)NULL);
        if (strcmp(buf, want) != 0)
            TEST_FAIL_("%lld: %s != %s", (long long)ms, buf, want);
        int64_t back;
        idm_error err;
        ASSERT_OK(idm_time_parse(buf, strlen(buf), &back, &err), &err);
        ASSERT_EQ_INT(back, ms);

        int month_len = m == 2 && leap(y) ? 29 : lengths[m - 1];
        d++;
        if (d > month_len) {
            d = 1;
            m++;
        }
        if (m > 12) {
            m = 1;
            y++;
        }
        ms += 86400000LL;
    }
}

static const struct test_case tests[] = {
    TEST(time_parse_rejects_bad_input_at_its_offset),
    TEST(time_parse_explains_the_error),
    TEST(time_format_refuses_what_it_cannot_write),
    TEST(time_matches_vectors),
    TEST(time_agrees_with_gmtime_r_for_years_1_to_9999),
    TEST(time_roundtrips_across_the_whole_range),
    TEST(time_format_advances_one_day_at_a_time),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
