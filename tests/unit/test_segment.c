/*
 * test_segment.c - the Leaf-style segment allocator (segment.h), on the
 * fake clock: configuration errors, supply validation, take across the
 * buffer switch with strides, prefetch thresholds, take_run and its
 * skips, the dynamic step, and strict order against a simulated store.
 */
#include "fakeclock.h"
#include "testlib.h"

#include <idmint/idmint.h>
#include <time.h>

#include "os/os.h"

#define MIN_MS (60 * 1000)

static idm_segment *new_seg(const idm_segment_config *cfg)
{
    idm_segment *s = NULL;
    idm_error err = {0};
    if (idm_segment_new(&s, cfg, &err) != IDM_OK)
        fprintf(stderr, "idm_segment_new: %s\n", err.msg);
    return s;
}

static int supply(idm_segment *s, uint64_t first, uint64_t count, uint64_t stride)
{
    idm_seg_range r = {first, count, stride};
    idm_error err = {0};
    int rc = idm_segment_supply(s, &r, &err);
    if (rc != IDM_OK)
        fprintf(stderr, "supply %llu+%llu*%llu: %s\n", (unsigned long long)first,
                (unsigned long long)count, (unsigned long long)stride, err.msg);
    return rc;
}

/* Takes n IDs, expecting exactly rc and want_got of them. */
static int take(idm_segment *s, uint64_t *dst, size_t n, size_t want_got, int want_rc)
{
    size_t got = (size_t)-1;
    idm_error err = {0};
    int rc = idm_segment_take(s, dst, n, &got, &err);
    if (rc != want_rc || got != want_got) {
        TEST_REPORT_("take %zu: rc %d got %zu, want rc %d got %zu (%s)", n, rc, got, want_rc,
                     want_got, err.msg);
        return 0;
    }
    return 1;
}

/* ---- errors first ---------------------------------------------------------- */

static void free_only(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static void test_segment_new_rejects_bad_config(void)
{
    idm_segment *s = (idm_segment *)&s; /* must be reset to NULL */
    idm_error err = {0};
    idm_segment_config cfg = {0};

    ASSERT_EQ_INT(idm_segment_new(NULL, &cfg, &err), IDM_EINVAL);

    cfg.min_step = 5000;
    cfg.max_step = 4000;
    cfg.step = 4000;
    ASSERT_EQ_INT(idm_segment_new(&s, &cfg, &err), IDM_EINVAL);
    ASSERT_TRUE(s == NULL);
    ASSERT_EQ_STR(err.msg, "min_step 5000 is above max_step 4000");

    cfg = (idm_segment_config){0};
    cfg.min_step = 2000; /* above the default step */
    ASSERT_EQ_INT(idm_segment_new(&s, &cfg, &err), IDM_EINVAL);
    ASSERT_EQ_STR(err.msg, "step 1000 is outside min_step .. max_step (2000 .. 1000000)");

    cfg = (idm_segment_config){0};
    cfg.step = 5000;
    cfg.max_step = 4000;
    ASSERT_EQ_INT(idm_segment_new(&s, &cfg, &err), IDM_EINVAL);

    cfg = (idm_segment_config){0};
    cfg.max_step = (uint64_t)INT64_MAX + 1;
    ASSERT_EQ_INT(idm_segment_new(&s, &cfg, &err), IDM_EINVAL);

    cfg = (idm_segment_config){0};
    cfg.prefetch_percent = 101;
    ASSERT_EQ_INT(idm_segment_new(&s, &cfg, &err), IDM_EINVAL);
    ASSERT_EQ_STR(err.msg, "prefetch_percent must be at most 100, got 101");

    cfg = (idm_segment_config){0};
    cfg.grow_below_ms = -1;
    ASSERT_EQ_INT(idm_segment_new(&s, &cfg, &err), IDM_EINVAL);
    cfg = (idm_segment_config){0};
    cfg.shrink_above_ms = -1;
    ASSERT_EQ_INT(idm_segment_new(&s, &cfg, &err), IDM_EINVAL);
    cfg = (idm_segment_config){0};
    cfg.grow_below_ms = 40 * MIN_MS; /* above the default 30 minutes */
    ASSERT_EQ_INT(idm_segment_new(&s, &cfg, &err), IDM_EINVAL);
    ASSERT_EQ_STR(err.msg, "grow_below_ms 2400000 is above shrink_above_ms 1800000");

    cfg = (idm_segment_config){0};
    cfg.alloc.free = free_only;
    ASSERT_EQ_INT(idm_segment_new(&s, &cfg, &err), IDM_EINVAL);
    ASSERT_EQ_INT(err.code, IDM_EINVAL);
    ASSERT_TRUE(s == NULL);

    /* The bounds themselves are accepted. */
    cfg = (idm_segment_config){0};
    cfg.step = cfg.min_step = cfg.max_step = (uint64_t)INT64_MAX;
    cfg.prefetch_percent = 100;
    cfg.grow_below_ms = cfg.shrink_above_ms = 5;
    ASSERT_OK(idm_segment_new(&s, &cfg, &err), &err);
    idm_segment_free(s);
    idm_segment_free(NULL);
}

static void test_segment_supply_rejects_bad_ranges(void)
{
    idm_segment *s = new_seg(NULL);
    ASSERT_TRUE(s != NULL);
    idm_error err = {0};
    idm_seg_range r = {1, 0, 1};
    ASSERT_EQ_INT(idm_segment_supply(s, &r, &err), IDM_EINVAL);
    ASSERT_EQ_STR(err.msg, "the range is empty (count 0)");
    r = (idm_seg_range){1, 10, 0};
    ASSERT_EQ_INT(idm_segment_supply(s, &r, &err), IDM_EINVAL);
    r = (idm_seg_range){1, 1, (uint64_t)INT64_MAX + 1};
    ASSERT_EQ_INT(idm_segment_supply(s, &r, &err), IDM_EINVAL);
    ASSERT_EQ_INT(idm_segment_supply(s, NULL, &err), IDM_EINVAL);
    /* Past INT64_MAX: the last ID would be INT64_MAX + 1. */
    r = (idm_seg_range){(uint64_t)INT64_MAX - 5, 3, 3};
    ASSERT_EQ_INT(idm_segment_supply(s, &r, &err), IDM_EINVAL);
    ASSERT_EQ_STR(err.msg, "the range of 3 IDs from 9223372036854775802 by 3 passes the largest "
                           "ID (9223372036854775807)");
    /* Past UINT64_MAX, where a careless first + (count - 1) * stride wraps
     * to a small number. */
    r = (idm_seg_range){4, 5, (uint64_t)1 << 62};
    ASSERT_EQ_INT(idm_segment_supply(s, &r, &err), IDM_EINVAL);
    r = (idm_seg_range){(uint64_t)INT64_MAX + 1, 1, 1};
    ASSERT_EQ_INT(idm_segment_supply(s, &r, &err), IDM_EINVAL);
    ASSERT_EQ_U64(idm_segment_available(s), 0);
    ASSERT_EQ_U64(idm_segment_step(s), 1000); /* no supply was timed */

    /* Up to INT64_MAX exactly is fine. */
    idm_segment_free(s);
    s = new_seg(NULL);
    ASSERT_OK(supply(s, (uint64_t)INT64_MAX - 6, 3, 3), NULL);
    uint64_t ids[3];
    ASSERT_TRUE(take(s, ids, 3, 3, IDM_OK));
    ASSERT_EQ_U64(ids[2], (uint64_t)INT64_MAX);
    idm_segment_free(s);
}

static void test_segment_supply_rejects_a_store_that_went_back(void)
{
    idm_segment *s = new_seg(NULL);
    ASSERT_TRUE(s != NULL);
    idm_error err = {0};
    uint64_t ids[4];
    ASSERT_OK(supply(s, 100, 10, 1), NULL); /* 100 .. 109 */
    ASSERT_TRUE(take(s, ids, 3, 3, IDM_OK));

    /* Below what was handed out. */
    idm_seg_range r = {50, 10, 1};
    ASSERT_EQ_INT(idm_segment_supply(s, &r, &err), IDM_EINVAL);
    ASSERT_EQ_STR(err.msg, "the store went back: the range starts at 50, not above 109, the end "
                           "of the range supplied before");
    /* Above what was handed out but inside the buffer. */
    r = (idm_seg_range){105, 10, 1};
    ASSERT_EQ_INT(idm_segment_supply(s, &r, &err), IDM_EINVAL);
    /* At the buffer's last ID. */
    r = (idm_seg_range){109, 1, 1};
    ASSERT_EQ_INT(idm_segment_supply(s, &r, &err), IDM_EINVAL);
    ASSERT_EQ_U64(idm_segment_available(s), 7); /* unchanged */

    ASSERT_OK(supply(s, 110, 10, 1), NULL);
    /* Both buffers hold IDs: nobody asked for this one. */
    r = (idm_seg_range){200, 10, 1};
    ASSERT_EQ_INT(idm_segment_supply(s, &r, &err), IDM_EINVAL);
    ASSERT_EQ_U64(idm_segment_available(s), 17);
    /* Below the next buffer's end. */
    ASSERT_TRUE(take(s, ids, 4, 4, IDM_OK)); /* 103 .. 106 */
    ASSERT_EQ_U64(ids[3], 106);
    r = (idm_seg_range){115, 1, 1};
    ASSERT_EQ_INT(idm_segment_supply(s, &r, &err), IDM_EINVAL);
    ASSERT_TRUE(strstr(err.msg, "went back") != NULL);
    idm_segment_free(s);
}

static void test_segment_take_rejects_null(void)
{
    idm_segment *s = new_seg(NULL);
    ASSERT_TRUE(s != NULL);
    idm_error err = {0};
    uint64_t id;
    size_t got = 0;
    ASSERT_OK(supply(s, 1, 10, 1), NULL);
    ASSERT_EQ_INT(idm_segment_take(s, &id, 1, NULL, &err), IDM_EINVAL);
    ASSERT_EQ_INT(idm_segment_take(s, NULL, 1, &got, &err), IDM_EINVAL);
    ASSERT_OK(idm_segment_take(s, NULL, 0, &got, &err), &err);
    ASSERT_EQ_U64(got, 0);
    ASSERT_EQ_U64(idm_segment_available(s), 10);
    idm_segment_free(s);
}

/* ---- take ------------------------------------------------------------------ */

static void test_segment_empty_wants_a_step_at_once(void)
{
    idm_segment_config cfg = {0};
    cfg.step = 250;
    idm_segment *s = new_seg(&cfg);
    ASSERT_TRUE(s != NULL);
    uint64_t count = 0;
    ASSERT_TRUE(idm_segment_wants(s, &count));
    ASSERT_EQ_U64(count, 250);
    ASSERT_TRUE(idm_segment_wants(s, NULL));
    ASSERT_EQ_U64(idm_segment_available(s), 0);
    ASSERT_EQ_U64(idm_segment_step(s), 250);
    ASSERT_TRUE(!idm_segment_fetching(s));
    idm_segment_free(s);

    s = new_seg(NULL);
    ASSERT_TRUE(idm_segment_wants(s, &count));
    ASSERT_EQ_U64(count, 1000);
    idm_segment_free(s);
}

static void test_segment_take_hands_out_ranges_in_order(void)
{
    idm_segment *s = new_seg(NULL);
    ASSERT_TRUE(s != NULL);
    uint64_t ids[16];
    ASSERT_OK(supply(s, 100, 5, 1), NULL);
    ASSERT_EQ_U64(idm_segment_available(s), 5);
    ASSERT_TRUE(take(s, ids, 3, 3, IDM_OK));
    ASSERT_EQ_U64(ids[0], 100);
    ASSERT_EQ_U64(ids[1], 101);
    ASSERT_EQ_U64(ids[2], 102);
    /* A strided range with an offset (1000 = 1 mod 3) as the next buffer. */
    ASSERT_OK(supply(s, 1000, 4, 3), NULL);
    ASSERT_EQ_U64(idm_segment_available(s), 6);
    /* Across the switch in one call. */
    ASSERT_TRUE(take(s, ids, 5, 5, IDM_OK));
    const uint64_t want[5] = {103, 104, 1000, 1003, 1006};
    for (int i = 0; i < 5; i++)
        ASSERT_EQ_U64(ids[i], want[i]);
    ASSERT_EQ_U64(idm_segment_available(s), 1);
    /* The next buffer became the current one: a range can be supplied. */
    ASSERT_TRUE(idm_segment_wants(s, NULL));
    ASSERT_OK(supply(s, 1010, 3, 10), NULL);
    ASSERT_TRUE(take(s, ids, 4, 4, IDM_OK));
    ASSERT_EQ_U64(ids[0], 1009);
    ASSERT_EQ_U64(ids[1], 1010);
    ASSERT_EQ_U64(ids[2], 1020);
    ASSERT_EQ_U64(ids[3], 1030);
    ASSERT_EQ_U64(idm_segment_available(s), 0);
    idm_segment_free(s);
}

static void test_segment_take_exactly_drains_into_next(void)
{
    /* A take that ends exactly at the current range's end moves the next
     * range up, so that a range supplied afterwards lands behind it. */
    idm_segment *s = new_seg(NULL);
    ASSERT_TRUE(s != NULL);
    uint64_t ids[8];
    ASSERT_OK(supply(s, 1, 3, 1), NULL);
    ASSERT_OK(supply(s, 10, 3, 1), NULL);
    ASSERT_TRUE(take(s, ids, 3, 3, IDM_OK));
    ASSERT_EQ_U64(ids[2], 3);
    ASSERT_EQ_U64(idm_segment_available(s), 3);
    ASSERT_TRUE(!idm_segment_wants(s, NULL)); /* 10 .. 12 is current, unused */
    /* Room for a next range at once, before the promoted one is touched. */
    ASSERT_OK(supply(s, 20, 2, 1), NULL);
    ASSERT_TRUE(take(s, ids, 5, 5, IDM_OK));
    const uint64_t want[5] = {10, 11, 12, 20, 21};
    for (int i = 0; i < 5; i++)
        ASSERT_EQ_U64(ids[i], want[i]);
    idm_segment_free(s);
}

static void test_segment_take_eagain_keeps_partial_results(void)
{
    idm_segment *s = new_seg(NULL);
    ASSERT_TRUE(s != NULL);
    uint64_t ids[8] = {0};
    idm_error err = {0};
    size_t got = 99;
    ASSERT_EQ_INT(idm_segment_take(s, ids, 2, &got, &err), IDM_EAGAIN);
    ASSERT_EQ_U64(got, 0);
    ASSERT_EQ_INT(err.code, IDM_EAGAIN);
    ASSERT_EQ_STR(err.msg, "the segment ran dry after 0 of 2 IDs: a range must be supplied");

    ASSERT_OK(supply(s, 7, 2, 10), NULL);
    ASSERT_OK(supply(s, 40, 1, 1), NULL);
    ASSERT_EQ_INT(idm_segment_take(s, ids, 8, &got, &err), IDM_EAGAIN);
    ASSERT_EQ_U64(got, 3);
    ASSERT_EQ_U64(ids[0], 7);
    ASSERT_EQ_U64(ids[1], 17);
    ASSERT_EQ_U64(ids[2], 40);
    ASSERT_EQ_U64(ids[3], 0); /* nothing written past got */
    ASSERT_EQ_U64(idm_segment_available(s), 0);
    /* Dry now: more supplied later continues above. */
    ASSERT_OK(supply(s, 41, 2, 1), NULL);
    ASSERT_TRUE(take(s, ids, 2, 2, IDM_OK));
    ASSERT_EQ_U64(ids[0], 41);
    ASSERT_EQ_U64(ids[1], 42);
    idm_segment_free(s);
}

/* ---- prefetch and fetch state ---------------------------------------------- */

/* Takes one ID at a time from a fresh range of count until wants turns
 * true; returns how many were taken then (0 if never). */
static uint64_t used_when_wanted(uint32_t percent, uint64_t count)
{
    idm_segment_config cfg = {0};
    cfg.prefetch_percent = percent;
    idm_segment *s = new_seg(&cfg);
    uint64_t used = 0;
    if (s == NULL || supply(s, 1, count, 1) != IDM_OK) {
        idm_segment_free(s);
        return 0;
    }
    while (!idm_segment_wants(s, NULL) && used < count) {
        uint64_t id;
        size_t got = 0;
        if (idm_segment_take(s, &id, 1, &got, NULL) != IDM_OK)
            break;
        used++;
    }
    if (!idm_segment_wants(s, NULL))
        used = 0;
    idm_segment_free(s);
    return used;
}

static void test_segment_prefetch_at_ten_percent(void)
{
    ASSERT_EQ_U64(used_when_wanted(0, 1000), 100); /* the default */
    ASSERT_EQ_U64(used_when_wanted(10, 1000), 100);
    ASSERT_EQ_U64(used_when_wanted(10, 1001), 101); /* ceil(100.1) */
    ASSERT_EQ_U64(used_when_wanted(10, 5), 1);      /* ceil(0.5) */
    ASSERT_EQ_U64(used_when_wanted(10, 1), 1);

    /* Not a moment before: 99 used out of 1000 does not want. */
    idm_segment *s = new_seg(NULL);
    ASSERT_TRUE(s != NULL);
    uint64_t ids[100];
    ASSERT_OK(supply(s, 1, 1000, 1), NULL);
    ASSERT_TRUE(!idm_segment_wants(s, NULL));
    ASSERT_TRUE(take(s, ids, 99, 99, IDM_OK));
    ASSERT_TRUE(!idm_segment_wants(s, NULL));
    ASSERT_TRUE(take(s, ids, 1, 1, IDM_OK));
    uint64_t count = 0;
    ASSERT_TRUE(idm_segment_wants(s, &count));
    ASSERT_EQ_U64(count, 1000);
    idm_segment_free(s);
}

static void test_segment_prefetch_at_custom_percent(void)
{
    ASSERT_EQ_U64(used_when_wanted(25, 8), 2);
    ASSERT_EQ_U64(used_when_wanted(33, 10), 4); /* ceil(3.3) */
    ASSERT_EQ_U64(used_when_wanted(50, 1000), 500);
    ASSERT_EQ_U64(used_when_wanted(1, 1000), 10);
    ASSERT_EQ_U64(used_when_wanted(100, 7), 7); /* only when empty */
    /* Large counts: no overflow of count * percent. */
    ASSERT_EQ_U64(used_when_wanted(99, 300), 297);
}

static void test_segment_prefetch_percent_on_huge_range(void)
{
    idm_segment_config cfg = {0};
    cfg.prefetch_percent = 90;
    idm_segment *s = new_seg(&cfg);
    ASSERT_TRUE(s != NULL);
    uint64_t count = (uint64_t)INT64_MAX; /* 0 .. INT64_MAX - 1 */
    ASSERT_OK(supply(s, 0, count, 1), NULL);
    ASSERT_TRUE(!idm_segment_wants(s, NULL));
    /* 90% of it is not reachable by taking, but the threshold must not
     * have wrapped to "wanted at once". */
    uint64_t ids[1000];
    ASSERT_TRUE(take(s, ids, 1000, 1000, IDM_OK));
    ASSERT_TRUE(!idm_segment_wants(s, NULL));
    idm_segment_free(s);
}

static void test_segment_wants_false_while_fetching(void)
{
    idm_segment *s = new_seg(NULL);
    ASSERT_TRUE(s != NULL);
    ASSERT_TRUE(idm_segment_wants(s, NULL));
    idm_segment_fetch_started(s);
    ASSERT_TRUE(idm_segment_fetching(s));
    ASSERT_TRUE(!idm_segment_wants(s, NULL));
    idm_segment_fetch_failed(s);
    ASSERT_TRUE(!idm_segment_fetching(s));
    ASSERT_TRUE(idm_segment_wants(s, NULL));

    /* A supply ends the fetch; the fresh range is not yet 10% used. */
    idm_segment_fetch_started(s);
    ASSERT_OK(supply(s, 1, 100, 1), NULL);
    ASSERT_TRUE(!idm_segment_fetching(s));
    ASSERT_TRUE(!idm_segment_wants(s, NULL));
    uint64_t ids[10];
    ASSERT_TRUE(take(s, ids, 10, 10, IDM_OK));
    ASSERT_TRUE(idm_segment_wants(s, NULL));
    idm_segment_fetch_started(s);
    ASSERT_TRUE(!idm_segment_wants(s, NULL));

    /* A refused supply ends the fetch too. */
    idm_seg_range bad = {1, 10, 1};
    idm_error err = {0};
    ASSERT_EQ_INT(idm_segment_supply(s, &bad, &err), IDM_EINVAL);
    ASSERT_TRUE(!idm_segment_fetching(s));
    ASSERT_TRUE(idm_segment_wants(s, NULL));

    /* With the next buffer full, nothing is wanted however used. */
    ASSERT_OK(supply(s, 200, 100, 1), NULL);
    ASSERT_TRUE(take(s, ids, 10, 10, IDM_OK));
    ASSERT_EQ_U64(idm_segment_available(s), 180);
    ASSERT_TRUE(!idm_segment_wants(s, NULL));
    idm_segment_free(s);
}

/* ---- take_run -------------------------------------------------------------- */

static void test_segment_take_run_rejects_bad_n(void)
{
    idm_segment *s = new_seg(NULL);
    ASSERT_TRUE(s != NULL);
    idm_error err = {0};
    uint64_t last = 0, stride = 0;
    ASSERT_OK(supply(s, 1, 10, 1), NULL);
    ASSERT_EQ_INT(idm_segment_take_run(s, 0, &last, &stride, &err), IDM_EINVAL);
    ASSERT_EQ_STR(err.msg, "a run must be 1 to 9223372036854775807 IDs, got 0");
    ASSERT_EQ_INT(idm_segment_take_run(s, (uint64_t)INT64_MAX + 1, &last, &stride, &err),
                  IDM_EINVAL);
    ASSERT_EQ_INT(idm_segment_take_run(s, 1, NULL, &stride, &err), IDM_EINVAL);
    ASSERT_EQ_U64(idm_segment_available(s), 10);
    idm_segment_free(s);
}

static void test_segment_take_run_within_a_range(void)
{
    idm_segment *s = new_seg(NULL);
    ASSERT_TRUE(s != NULL);
    idm_error err = {0};
    uint64_t last = 0, stride = 0, id = 0;
    ASSERT_OK(supply(s, 3, 10, 5), NULL); /* 3, 8, ..., 48 */
    ASSERT_OK(idm_segment_take_run(s, 4, &last, &stride, &err), &err);
    ASSERT_EQ_U64(last, 18); /* 3, 8, 13, 18 */
    ASSERT_EQ_U64(stride, 5);
    ASSERT_TRUE(take(s, &id, 1, 1, IDM_OK));
    ASSERT_EQ_U64(id, 23);
    ASSERT_OK(idm_segment_take_run(s, 1, &last, NULL, &err), &err);
    ASSERT_EQ_U64(last, 28);
    /* The rest exactly. */
    ASSERT_OK(idm_segment_take_run(s, 4, &last, &stride, &err), &err);
    ASSERT_EQ_U64(last, 48);
    ASSERT_EQ_U64(idm_segment_available(s), 0);
    idm_segment_free(s);
}

static void test_segment_take_run_skips_a_short_remainder(void)
{
    idm_segment *s = new_seg(NULL);
    ASSERT_TRUE(s != NULL);
    idm_error err = {0};
    uint64_t ids[64], last = 0, stride = 0;
    ASSERT_OK(supply(s, 1, 10, 1), NULL);
    ASSERT_TRUE(take(s, ids, 5, 5, IDM_OK)); /* 1 .. 5 */
    ASSERT_OK(supply(s, 100, 10, 1), NULL);
    ASSERT_OK(idm_segment_take_run(s, 6, &last, &stride, &err), &err);
    ASSERT_EQ_U64(last, 105); /* 100 .. 105: 6 .. 10 skipped */
    ASSERT_EQ_U64(stride, 1);
    ASSERT_EQ_U64(idm_segment_available(s), 4);
    /* The skipped IDs never appear: not from take, nor from a store that
     * hands them out again. */
    ASSERT_TRUE(take(s, ids, 4, 4, IDM_OK));
    ASSERT_EQ_U64(ids[0], 106);
    ASSERT_EQ_U64(ids[3], 109);
    idm_seg_range back = {6, 5, 1};
    ASSERT_EQ_INT(idm_segment_supply(s, &back, &err), IDM_EINVAL);
    ASSERT_OK(supply(s, 110, 20, 1), NULL);
    ASSERT_TRUE(take(s, ids, 20, 20, IDM_OK));
    for (int i = 0; i < 20; i++)
        ASSERT_TRUE(ids[i] < 6 || ids[i] > 10);
    idm_segment_free(s);
}

static void test_segment_take_run_eagain_asks_for_enough(void)
{
    idm_segment_config cfg = {0};
    cfg.step = 10;
    cfg.prefetch_percent = 100; /* only need or emptiness make it want */
    idm_segment *s = new_seg(&cfg);
    ASSERT_TRUE(s != NULL);
    idm_error err = {0};
    uint64_t ids[8], last = 77, stride = 77, count = 0;
    ASSERT_OK(supply(s, 1, 10, 1), NULL);
    ASSERT_TRUE(take(s, ids, 5, 5, IDM_OK));
    ASSERT_TRUE(!idm_segment_wants(s, &count));
    ASSERT_EQ_U64(count, 10);

    /* 8 do not fit in the 5 left, and there is no next range. */
    ASSERT_EQ_INT(idm_segment_take_run(s, 8, &last, &stride, &err), IDM_EAGAIN);
    ASSERT_EQ_STR(err.msg, "no range holds a run of 8 IDs: one must be supplied");
    ASSERT_EQ_U64(last, 77); /* nothing handed out */
    ASSERT_EQ_U64(stride, 77);
    ASSERT_EQ_U64(idm_segment_available(s), 5);
    ASSERT_TRUE(idm_segment_wants(s, &count));
    ASSERT_EQ_U64(count, 10); /* the step holds 8 */

    /* More than the step: wants asks for the run. */
    ASSERT_EQ_INT(idm_segment_take_run(s, 25, &last, &stride, &err), IDM_EAGAIN);
    ASSERT_TRUE(idm_segment_wants(s, &count));
    ASSERT_EQ_U64(count, 25);
    /* Plain take still serves the current range meanwhile. */
    ASSERT_TRUE(take(s, ids, 1, 1, IDM_OK));
    ASSERT_EQ_U64(ids[0], 6);
    idm_segment_fetch_started(s);
    ASSERT_TRUE(!idm_segment_wants(s, NULL));
    ASSERT_OK(supply(s, 1000, 25, 2), NULL);
    /* Satisfied: the ask falls back to the step. */
    idm_segment_wants(s, &count);
    ASSERT_EQ_U64(count, idm_segment_step(s));
    ASSERT_OK(idm_segment_take_run(s, 25, &last, &stride, &err), &err);
    ASSERT_EQ_U64(last, 1048); /* 1000 + 24 * 2; 7 .. 10 skipped */
    ASSERT_EQ_U64(stride, 2);
    ASSERT_EQ_U64(idm_segment_available(s), 0);
    idm_segment_free(s);
}

static void test_segment_take_run_both_buffers_short(void)
{
    /* The current and the next range are both too short: the current one
     * is skipped so that there is room for a range long enough. */
    idm_segment_config cfg = {0};
    cfg.step = 4;
    cfg.max_step = 4; /* the ask is the run, not a grown step */
    cfg.prefetch_percent = 100;
    idm_segment *s = new_seg(&cfg);
    ASSERT_TRUE(s != NULL);
    idm_error err = {0};
    uint64_t ids[8], last = 0, count = 0;
    ASSERT_OK(supply(s, 1, 4, 1), NULL);
    ASSERT_OK(supply(s, 10, 4, 1), NULL);
    ASSERT_TRUE(!idm_segment_wants(s, NULL));
    ASSERT_EQ_INT(idm_segment_take_run(s, 6, &last, NULL, &err), IDM_EAGAIN);
    ASSERT_EQ_U64(idm_segment_available(s), 4);
    ASSERT_TRUE(idm_segment_wants(s, &count));
    ASSERT_EQ_U64(count, 6);
    ASSERT_OK(supply(s, 20, 6, 1), NULL);
    ASSERT_OK(idm_segment_take_run(s, 6, &last, NULL, &err), &err);
    ASSERT_EQ_U64(last, 25);
    ASSERT_EQ_INT(idm_segment_take(s, ids, 1, &(size_t){0}, &err), IDM_EAGAIN);
    idm_segment_free(s);
}

static void test_segment_take_run_short_supply_keeps_asking(void)
{
    /* A store that leases less than asked: the need stays. */
    idm_segment_config cfg = {0};
    cfg.step = 4;
    idm_segment *s = new_seg(&cfg);
    ASSERT_TRUE(s != NULL);
    idm_error err = {0};
    uint64_t last = 0, count = 0;
    ASSERT_EQ_INT(idm_segment_take_run(s, 9, &last, NULL, &err), IDM_EAGAIN);
    ASSERT_TRUE(idm_segment_wants(s, &count));
    ASSERT_EQ_U64(count, 9);
    ASSERT_OK(supply(s, 1, 5, 1), NULL);
    idm_segment_wants(s, &count);
    ASSERT_EQ_U64(count, 9);
    ASSERT_TRUE(idm_segment_wants(s, NULL)); /* 5 < 9 */
    idm_segment_free(s);
}

/* ---- the dynamic step ------------------------------------------------------ */

static idm_segment *timed_seg(struct fake_clock *fc, uint64_t step, uint64_t min_step,
                              uint64_t max_step)
{
    idm_segment_config cfg = {0};
    cfg.step = step;
    cfg.min_step = min_step;
    cfg.max_step = max_step;
    cfg.clock = fake_clock_as_clock(fc);
    return new_seg(&cfg);
}

/* Supplies the next range (above every earlier one) after ms more. */
struct feeder {
    idm_segment *s;
    struct fake_clock *fc;
    uint64_t next;
};

static uint64_t feed_after_ns(struct feeder *f, int64_t ns)
{
    atomic_fetch_add(&f->fc->now_ns, ns);
    uint64_t ids[2];
    size_t got;
    /* Empty both buffers, so that a supply is always accepted. */
    while (idm_segment_available(f->s) > 0)
        if (idm_segment_take(f->s, ids, 2, &got, NULL) != IDM_OK)
            break;
    if (supply(f->s, f->next, 1, 1) != IDM_OK)
        return 0;
    f->next++;
    return idm_segment_step(f->s);
}

static uint64_t feed_after_ms(struct feeder *f, int64_t ms)
{
    return feed_after_ns(f, ms * 1000000);
}

static void test_segment_step_doubles_when_fast(void)
{
    struct fake_clock fc = {0};
    fake_clock_set_ms(&fc, 5000);
    struct feeder f = {timed_seg(&fc, 1000, 0, 6000), &fc, 1};
    ASSERT_TRUE(f.s != NULL);
    ASSERT_EQ_U64(feed_after_ms(&f, 0), 1000); /* the first: only timed */
    ASSERT_EQ_U64(feed_after_ms(&f, MIN_MS), 2000);
    ASSERT_EQ_U64(feed_after_ms(&f, 0), 4000);
    ASSERT_EQ_U64(feed_after_ms(&f, 14 * MIN_MS), 6000); /* capped */
    ASSERT_EQ_U64(feed_after_ms(&f, 1), 6000);
    uint64_t count = 0;
    idm_segment_wants(f.s, &count);
    ASSERT_EQ_U64(count, 6000);
    idm_segment_free(f.s);

    /* Just under 15 minutes still counts as fast. */
    fake_clock_set_ms(&fc, 0);
    f = (struct feeder){timed_seg(&fc, 1000, 0, 0), &fc, 1};
    ASSERT_EQ_U64(feed_after_ms(&f, 0), 1000);
    ASSERT_EQ_U64(feed_after_ns(&f, (int64_t)15 * MIN_MS * 1000000 - 1), 2000);
    idm_segment_free(f.s);
}

static void test_segment_step_halves_when_slow(void)
{
    struct fake_clock fc = {0};
    struct feeder f = {timed_seg(&fc, 8000, 1500, 0), &fc, 1};
    ASSERT_TRUE(f.s != NULL);
    ASSERT_EQ_U64(feed_after_ms(&f, 0), 8000);
    ASSERT_EQ_U64(feed_after_ms(&f, 31 * MIN_MS), 4000);
    ASSERT_EQ_U64(feed_after_ms(&f, 30 * MIN_MS + 1), 2000);
    ASSERT_EQ_U64(feed_after_ms(&f, 24 * 60 * MIN_MS), 1500); /* not below min_step */
    ASSERT_EQ_U64(feed_after_ms(&f, 24 * 60 * MIN_MS), 1500);
    /* And it grows again when the traffic comes back. */
    ASSERT_EQ_U64(feed_after_ms(&f, 1), 3000);
    idm_segment_free(f.s);
}

static void test_segment_step_unchanged_between(void)
{
    struct fake_clock fc = {0};
    struct feeder f = {timed_seg(&fc, 4000, 1000, 16000), &fc, 1};
    ASSERT_TRUE(f.s != NULL);
    ASSERT_EQ_U64(feed_after_ms(&f, 0), 4000);
    ASSERT_EQ_U64(feed_after_ms(&f, 15 * MIN_MS), 4000); /* not under 15 minutes */
    ASSERT_EQ_U64(feed_after_ms(&f, 20 * MIN_MS), 4000);
    ASSERT_EQ_U64(feed_after_ms(&f, 30 * MIN_MS), 4000); /* not over 30 minutes */
    ASSERT_EQ_U64(feed_after_ns(&f, (int64_t)30 * MIN_MS * 1000000 + 999999), 4000);
    idm_segment_free(f.s);
}

static void test_segment_step_custom_bounds_of_time(void)
{
    struct fake_clock fc = {0};
    idm_segment_config cfg = {0};
    cfg.clock = fake_clock_as_clock(&fc);
    cfg.grow_below_ms = 100;
    cfg.shrink_above_ms = 200;
    cfg.min_step = 1;
    cfg.step = 16;
    struct feeder f = {new_seg(&cfg), &fc, 1};
    ASSERT_TRUE(f.s != NULL);
    ASSERT_EQ_U64(feed_after_ms(&f, 0), 16);
    ASSERT_EQ_U64(feed_after_ms(&f, 99), 32);
    ASSERT_EQ_U64(feed_after_ms(&f, 100), 32);
    ASSERT_EQ_U64(feed_after_ms(&f, 200), 32);
    ASSERT_EQ_U64(feed_after_ms(&f, 201), 16);
    idm_segment_free(f.s);
}

static void test_segment_step_ignores_a_failed_or_backward_clock(void)
{
    struct fake_clock fc = {0};
    fake_clock_set_ms(&fc, 100 * MIN_MS);
    struct feeder f = {timed_seg(&fc, 1000, 1, 0), &fc, 1};
    ASSERT_TRUE(f.s != NULL);
    ASSERT_EQ_U64(feed_after_ms(&f, 0), 1000);
    /* A failed read: the range is accepted, the step kept, and the next
     * supply is timed afresh (not measured from the one before). */
    fc.fail_reads = 1;
    ASSERT_EQ_U64(feed_after_ms(&f, 1), 1000);
    ASSERT_EQ_INT(fc.fail_reads, 0);
    ASSERT_EQ_U64(feed_after_ms(&f, 60 * MIN_MS), 1000); /* not halved */
    ASSERT_EQ_U64(feed_after_ms(&f, 1), 2000);
    /* A clock that went back: no change. */
    ASSERT_EQ_U64(feed_after_ms(&f, -50 * MIN_MS), 2000);
    ASSERT_EQ_U64(feed_after_ms(&f, 1), 4000);
    idm_segment_free(f.s);
}

static void test_segment_step_default_clock(void)
{
    /* The OS's monotonic clock by default: two supplies in a row are fast. */
    idm_segment *s = new_seg(NULL);
    ASSERT_TRUE(s != NULL);
    ASSERT_OK(supply(s, 1, 1, 1), NULL);
    ASSERT_EQ_U64(idm_segment_step(s), 1000);
    uint64_t id;
    ASSERT_TRUE(take(s, &id, 1, 1, IDM_OK));
    ASSERT_OK(supply(s, 2, 1, 1), NULL);
    ASSERT_EQ_U64(idm_segment_step(s), 2000);
    idm_segment_free(s);

    /* That clock is CLOCK_MONOTONIC, not the wall clock. */
    struct timespec mono, real;
    int64_t ns = -1;
    ASSERT_EQ_INT(clock_gettime(CLOCK_MONOTONIC, &mono), 0);
    ASSERT_EQ_INT(idm__os_monotonic_ns(NULL, &ns), IDM_OK);
    ASSERT_EQ_INT(clock_gettime(CLOCK_REALTIME, &real), 0);
    int64_t mono_ns = (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec;
    int64_t real_ns = (int64_t)real.tv_sec * 1000000000 + real.tv_nsec;
    ASSERT_TRUE(ns >= mono_ns && ns - mono_ns < 1000000000);
    ASSERT_TRUE(real_ns - ns > 1000000000); /* unless booted in 1970 */

    /* The default max_step is at least the step. */
    idm_segment_config cfg = {0};
    cfg.step = 3000000;
    s = new_seg(&cfg);
    ASSERT_TRUE(s != NULL);
    ASSERT_OK(supply(s, 1, 1, 1), NULL);
    ASSERT_TRUE(take(s, &id, 1, 1, IDM_OK));
    ASSERT_OK(supply(s, 2, 1, 1), NULL);
    ASSERT_EQ_U64(idm_segment_step(s), 3000000);
    idm_segment_free(s);
}

/* ---- allocation and properties --------------------------------------------- */

struct counting_alloc {
    long allocs, frees;
};

static void *counting_alloc_fn(void *ctx, size_t size, size_t align)
{
    struct counting_alloc *c = ctx;
    (void)align;
    c->allocs++;
    return malloc(size);
}

static void counting_free_fn(void *ctx, void *p)
{
    struct counting_alloc *c = ctx;
    c->frees++;
    free(p);
}

static void test_segment_uses_the_given_allocator(void)
{
    struct counting_alloc c = {0};
    idm_segment_config cfg = {0};
    cfg.alloc = (idm_allocator){counting_alloc_fn, counting_free_fn, &c};
    idm_segment *s = new_seg(&cfg);
    ASSERT_TRUE(s != NULL);
    ASSERT_EQ_INT(c.allocs, 1);
    uint64_t ids[100];
    for (uint64_t i = 0; i < 10; i++) {
        ASSERT_OK(supply(s, 1 + i * 100, 100, 1), NULL);
        ASSERT_TRUE(take(s, ids, 100, 100, IDM_OK));
    }
    ASSERT_EQ_INT(c.allocs, 1); /* nothing after _new */
    ASSERT_EQ_INT(c.frees, 0);
    idm_segment_free(s);
    ASSERT_EQ_INT(c.frees, 1);
}

/* A store as Leaf's table: next_id per tag, leased count * stride at a
 * time. Random takes, runs, fetch failures and late supplies: every ID
 * handed out is greater than the one before, runs are consecutive, and
 * ranges are leased only when wanted. */
static void test_segment_strictly_increasing_against_a_store(void)
{
    struct fake_clock fc = {0};
    idm_segment_config cfg = {0};
    cfg.step = 50;
    cfg.min_step = 10;
    cfg.max_step = 400;
    cfg.clock = fake_clock_as_clock(&fc);
    idm_segment *s = new_seg(&cfg);
    ASSERT_TRUE(s != NULL);
    uint64_t rng = 10;
    const uint64_t stride = 3;
    uint64_t store_next = 2; /* offset 2 mod 3 */
    uint64_t prev = 0, handed = 0, leases = 0;
    bool any = false, in_flight = false;
    uint64_t asked = 0;
    uint64_t ids[64];
    for (int round = 0; round < 20000; round++) {
        atomic_fetch_add(&fc.now_ns, (int64_t)(test_rng_next(&rng) % 200) * 1000000000);
        uint64_t count = 0;
        if (!in_flight && idm_segment_wants(s, &count)) {
            idm_segment_fetch_started(s);
            in_flight = true;
            asked = count;
        }
        uint64_t dice = test_rng_next(&rng) % 8;
        if (in_flight && dice == 0) {
            idm_segment_fetch_failed(s);
            in_flight = false;
        } else if (in_flight && dice < 4) {
            ASSERT_OK(supply(s, store_next, asked, stride), NULL);
            store_next += asked * stride;
            leases++;
            in_flight = false;
        }
        size_t n = (size_t)(test_rng_next(&rng) % 64);
        if (test_rng_next(&rng) % 4 == 0 && n > 0) {
            uint64_t last = 0, st = 0;
            int rc = idm_segment_take_run(s, n, &last, &st, NULL);
            if (rc == IDM_OK) {
                uint64_t first = last - (n - 1) * st;
                ASSERT_EQ_U64(st, stride);
                ASSERT_TRUE(!any || first > prev);
                ASSERT_EQ_U64(first % stride, 2);
                prev = last;
                any = true;
                handed += n;
            } else {
                ASSERT_EQ_INT(rc, IDM_EAGAIN);
            }
        } else {
            size_t got = 0;
            int rc = idm_segment_take(s, ids, n, &got, NULL);
            ASSERT_TRUE(rc == IDM_OK || (rc == IDM_EAGAIN && got < n));
            for (size_t i = 0; i < got; i++) {
                ASSERT_TRUE(!any || ids[i] > prev);
                ASSERT_EQ_U64(ids[i] % stride, 2);
                prev = ids[i];
                any = true;
            }
            handed += got;
        }
    }
    ASSERT_TRUE(handed > 100000);
    ASSERT_TRUE(leases > 100);
    ASSERT_TRUE(prev < store_next);
    idm_segment_free(s);
}

static const struct test_case tests[] = {
    TEST(test_segment_new_rejects_bad_config),
    TEST(test_segment_supply_rejects_bad_ranges),
    TEST(test_segment_supply_rejects_a_store_that_went_back),
    TEST(test_segment_take_rejects_null),
    TEST(test_segment_take_run_rejects_bad_n),
    TEST(test_segment_empty_wants_a_step_at_once),
    TEST(test_segment_take_hands_out_ranges_in_order),
    TEST(test_segment_take_exactly_drains_into_next),
    TEST(test_segment_take_eagain_keeps_partial_results),
    TEST(test_segment_prefetch_at_ten_percent),
    TEST(test_segment_prefetch_at_custom_percent),
    TEST(test_segment_prefetch_percent_on_huge_range),
    TEST(test_segment_wants_false_while_fetching),
    TEST(test_segment_take_run_within_a_range),
    TEST(test_segment_take_run_skips_a_short_remainder),
    TEST(test_segment_take_run_eagain_asks_for_enough),
    TEST(test_segment_take_run_both_buffers_short),
    TEST(test_segment_take_run_short_supply_keeps_asking),
    TEST(test_segment_step_doubles_when_fast),
    TEST(test_segment_step_halves_when_slow),
    TEST(test_segment_step_unchanged_between),
    TEST(test_segment_step_custom_bounds_of_time),
    TEST(test_segment_step_ignores_a_failed_or_backward_clock),
    TEST(test_segment_step_default_clock),
    TEST(test_segment_uses_the_given_allocator),
    TEST(test_segment_strictly_increasing_against_a_store),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
