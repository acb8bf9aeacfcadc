/*
 * store_test.c - the segment stores (segstore/segstore_sqlite.c,
 * segstore/segstore_pg.c) against a real database, through the public API of
 * <idmint/segstore.h> only. tests/coord/test_stores.sh makes the databases
 * and runs it.
 *
 *   store_test URL [TEST_NAME]
 *       every API test (or one) against URL (sqlite:PATH or
 *       postgresql://...): creates with defaults and custom values,
 *       IDMSEG_EEXISTS, bad names and values, leases disjoint and increasing,
 *       strides and offsets, IDMSEG_ENOTAG, show and list, a tag used up near
 *       2^63 - 1, an unreachable database. Tags are named after the PID,
 *       so runs on one database never meet.
 *   store_test URL concurrent N M TAG
 *       N forked processes, each with a store of its own, lease M ranges
 *       of TAG (made here): the ranges are disjoint and tile the IDs from
 *       the first, and next_id ends at their sum.
 *   store_test URL setup TAG
 *       creates TAG (stride 1) and leases one range (for readonly).
 *   store_test URL readonly TAG
 *       the store cannot be written (a read-only file or role): open
 *       succeeds, show and list work, create and lease are IDMSEG_EREADONLY.
 *       With TAG "-", opening itself must be IDMSEG_EREADONLY (no table).
 *   store_test URL busy
 *       the database is locked by another process for longer than the
 *       busy timeout: a lease fails with IDMSEG_EDB in bounded time.
 *   store_test URL restart
 *       driven over stdin by test_stores.sh: leases, prints "leased HIGH"
 *       (the end of everything leased); on "down" (the server is stopped)
 *       tries a lease and prints "down RC MS"; on "up" leases until it
 *       succeeds (at most one IDMSEG_EDB allowed) and checks that the
 *       ranges go on above HIGH.
 *
 * Lines starting with "# " report measurements (round trips, times to
 * fail); they are judged only by the bounds asserted. The exit status is
 * non-zero when any test failed.
 */
#include "testlib.h"
#include <idmint/segstore.h>

#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A call that fails for want of a database must give up within this (ms):
 * a bound on a hang (the stores' own timeouts are 5 s), not a figure. */
#define HANG_BOUND_MS 12000

static const char *url; /* argv[1] */
static bool is_sqlite;  /* url is sqlite:... */
static idmseg_store *st; /* opened on url by main */
static char prefix[32]; /* "tPID-", the tags of this run */
static idmseg_error err;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* This run's name for tag NAME. */
static const char *tagname(const char *name)
{
    static char buf[4][IDMSEG_TAG_MAX + 1];
    static int next;
    char *b = buf[next++ % 4];
    snprintf(b, sizeof buf[0], "%s%s", prefix, name);
    return b;
}

#define ASSERT_RC(call, want)                                                                      \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != (want))                                                                         \
            TEST_FAIL_("%s returned %d, expected %d: %s", #call, rc_, (int)(want), err.msg);       \
    } while (0)

/* ---- the API ------------------------------------------------------------- */

static void test_create_defaults(void)
{
    const char *tag = tagname("defaults");
    int64_t before = wall_ms();
    ASSERT_RC(idmseg_store_create(st, tag, NULL, &err), 0);
    int64_t after = wall_ms();
    idmseg_tag_info info;
    ASSERT_RC(idmseg_store_show(st, tag, &info, &err), 0);
    ASSERT_EQ_STR(info.tag, tag);
    ASSERT_EQ_U64(info.next_id, 1);
    ASSERT_EQ_U64(info.step, 1000);
    ASSERT_EQ_U64(info.max_step, 1000000);
    ASSERT_EQ_U64(info.stride, 1);
    ASSERT_EQ_U64(info.offset, 0);
    ASSERT_EQ_U64(info.leases, 0);
    ASSERT_TRUE(info.created_ms >= before && info.created_ms <= after);
    ASSERT_EQ_INT(info.updated_ms, info.created_ms);

    /* A second create changes nothing. */
    idmseg_tag_spec spec = IDMSEG_TAG_SPEC_DEFAULTS;
    spec.first = 500;
    ASSERT_RC(idmseg_store_create(st, tag, &spec, &err), IDMSEG_EEXISTS);
    ASSERT_TRUE(strstr(err.msg, tag) != NULL);
    ASSERT_RC(idmseg_store_create(st, tag, NULL, &err), IDMSEG_EEXISTS);
    idmseg_tag_info again;
    ASSERT_RC(idmseg_store_show(st, tag, &again, &err), 0);
    ASSERT_EQ_U64(again.next_id, 1);
    ASSERT_EQ_INT(again.created_ms, info.created_ms);
}

static void test_create_custom(void)
{
    const char *tag = tagname("custom");
    idmseg_tag_spec spec = {
        .first = 1000001, .step = 50, .max_step = 5000, .stride = 10, .offset = 3};
    ASSERT_RC(idmseg_store_create(st, tag, &spec, &err), 0);
    idmseg_tag_info info;
    ASSERT_RC(idmseg_store_show(st, tag, &info, &err), 0);
    /* Rounded up to 3 modulo 10. */
    ASSERT_EQ_U64(info.next_id, 1000003);
    ASSERT_EQ_U64(info.step, 50);
    ASSERT_EQ_U64(info.max_step, 5000);
    ASSERT_EQ_U64(info.stride, 10);
    ASSERT_EQ_U64(info.offset, 3);

    /* Already congruent: kept. first 0 is a value like any other. */
    const char *tag2 = tagname("custom2");
    idmseg_tag_spec s2 = {.first = 13, .step = 1, .max_step = 1, .stride = 10, .offset = 3};
    ASSERT_RC(idmseg_store_create(st, tag2, &s2, &err), 0);
    ASSERT_RC(idmseg_store_show(st, tag2, &info, &err), 0);
    ASSERT_EQ_U64(info.next_id, 13);
    const char *tag3 = tagname("custom3");
    idmseg_tag_spec s3 = {.first = 0, .step = 7, .max_step = 7, .stride = 1, .offset = 0};
    ASSERT_RC(idmseg_store_create(st, tag3, &s3, &err), 0);
    ASSERT_RC(idmseg_store_show(st, tag3, &info, &err), 0);
    ASSERT_EQ_U64(info.next_id, 0);
    /* The largest stride. */
    const char *tag4 = tagname("custom4");
    idmseg_tag_spec s4 = {
        .first = 5, .step = 1, .max_step = 1, .stride = (uint64_t)INT64_MAX, .offset = 9};
    ASSERT_RC(idmseg_store_create(st, tag4, &s4, &err), 0);
    ASSERT_RC(idmseg_store_show(st, tag4, &info, &err), 0);
    ASSERT_EQ_U64(info.next_id, 9);
}

static void test_bad_names(void)
{
    /* Nothing JSON, a Prometheus label or a URL path segment must escape,
     * nor a byte outside ASCII. */
    static const char *const bad[] = {
        "",    "with space", "semi;colon",  "quo'te", "quo\"te", "back\\slash", "sl/ash",
        "q?x", "h#sh",       "caf\xc3\xa9", "tab\t",  "x%",      "a*b",         "a,b",
        "a=b", "a&b",        "a!b",         "a$b",    "(a)",     "[a]",         "a<b>",
        "a^b", "a`b",        "del\x7f",     NULL};
    for (int i = 0; bad[i] != NULL; i++) {
        err.msg[0] = '\0';
        if (idmseg_tag_valid(bad[i], strlen(bad[i]), &err))
            TEST_FAIL_("'%s' was accepted as a tag", bad[i]);
        ASSERT_TRUE(err.msg[0] != '\0');
        ASSERT_RC(idmseg_store_create(st, bad[i], NULL, &err), IDMSEG_EUSAGE);
        uint64_t first, stride;
        ASSERT_RC(idmseg_store_lease(st, bad[i], 1, &first, &stride, &err), IDMSEG_EUSAGE);
        idmseg_tag_info info;
        ASSERT_RC(idmseg_store_show(st, bad[i], &info, &err), IDMSEG_EUSAGE);
    }
    char longest[IDMSEG_TAG_MAX + 2];
    memset(longest, 'a', sizeof longest);
    longest[IDMSEG_TAG_MAX] = '\0';
    ASSERT_TRUE(idmseg_tag_valid(longest, IDMSEG_TAG_MAX, &err));
    ASSERT_TRUE(!idmseg_tag_valid(longest, IDMSEG_TAG_MAX + 1, &err));
    ASSERT_TRUE(strstr(err.msg, "128") != NULL);
    ASSERT_TRUE(idmseg_tag_valid("a-z.0_9", 7, &err));
    /* Leaf's upper-case names and Redis users' key styles (issue 23). */
    static const char *const good[] = {"Upper",   "Orders",   "order:id", "{user}:seq",
                                       "a|b+c~d", "x@y.Z-_1", "~",        NULL};
    for (int i = 0; good[i] != NULL; i++)
        if (!idmseg_tag_valid(good[i], strlen(good[i]), &err))
            TEST_FAIL_("'%s' was refused as a tag: %s", good[i], err.msg);
    /* Bytes, not a C string: a NUL inside is refused where it is, and the
     * refusal names the byte and its position, never the name. */
    ASSERT_TRUE(!idmseg_tag_valid("a\0b", 3, &err));
    ASSERT_TRUE(strstr(err.msg, "byte 0x00 at 1 ") != NULL);
    ASSERT_TRUE(idmseg_tag_valid("a\0b", 1, &err));
    ASSERT_TRUE(!idmseg_tag_valid("okay\r\nX", 7, &err));
    ASSERT_TRUE(strstr(err.msg, "byte 0x0d at 4 ") != NULL);
    ASSERT_TRUE(strchr(err.msg, '\r') == NULL && strchr(err.msg, '\n') == NULL);
    ASSERT_TRUE(!idmseg_tag_valid("Up/per", 6, &err));
    ASSERT_TRUE(strstr(err.msg, "byte 0x2f ('/') at 2 ") != NULL);
    ASSERT_TRUE(!idmseg_tag_valid("", 0, &err));
    /* An SQL-looking name is refused before any SQL runs; were it not,
     * bound parameters would still keep it a value. */
    ASSERT_RC(idmseg_store_create(st, "x'); DROP TABLE idmint_segments; --", NULL, &err),
              IDMSEG_EUSAGE);
}

static void test_bad_values(void)
{
    const char *tag = tagname("badvalues");
    const uint64_t big = (uint64_t)INT64_MAX + 1;
    idmseg_tag_spec bad[] = {
        {.first = 1, .step = 10, .max_step = 100, .stride = 0, .offset = 0},
        {.first = 1, .step = 10, .max_step = 100, .stride = 4, .offset = 4},
        {.first = 1, .step = 10, .max_step = 100, .stride = 4, .offset = 9},
        {.first = 1, .step = 0, .max_step = 100, .stride = 1, .offset = 0},
        {.first = 1, .step = 101, .max_step = 100, .stride = 1, .offset = 0},
        {.first = 1, .step = 1, .max_step = 0, .stride = 1, .offset = 0},
        {.first = big, .step = 1, .max_step = 1, .stride = 1, .offset = 0},
        {.first = UINT64_MAX, .step = 1, .max_step = 1, .stride = 1, .offset = 0},
        {.first = 1, .step = 1, .max_step = big, .stride = 1, .offset = 0},
        {.first = 1, .step = 1, .max_step = 1, .stride = big, .offset = 0},
        /* 2^63 - 1 is odd: rounding it up to even passes the BIGINT. */
        {.first = (uint64_t)INT64_MAX, .step = 1, .max_step = 1, .stride = 2, .offset = 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err.msg[0] = '\0';
        int rc = idmseg_store_create(st, tag, &bad[i], &err);
        if (rc != IDMSEG_EUSAGE)
            TEST_FAIL_("bad spec #%zu: %d, expected IDMSEG_EUSAGE: %s", i, rc, err.msg);
        ASSERT_TRUE(strstr(err.msg, tag) != NULL);
    }
    idmseg_tag_info info;
    ASSERT_RC(idmseg_store_show(st, tag, &info, &err), IDMSEG_ENOTAG);
    /* The edges that are fine. */
    idmseg_tag_spec ok = {.first = (uint64_t)INT64_MAX,
                          .step = (uint64_t)INT64_MAX,
                          .max_step = (uint64_t)INT64_MAX,
                          .stride = 2,
                          .offset = 1};
    ASSERT_RC(idmseg_store_create(st, tag, &ok, &err), 0);
    ASSERT_RC(idmseg_store_show(st, tag, &info, &err), 0);
    ASSERT_EQ_U64(info.next_id, (uint64_t)INT64_MAX);
    ASSERT_EQ_U64(info.step, (uint64_t)INT64_MAX);
    uint64_t first, stride;
    ASSERT_RC(idmseg_store_lease(st, tag, 0, &first, &stride, &err), IDMSEG_EUSAGE);
}

static void test_notag(void)
{
    const char *tag = tagname("missing");
    uint64_t first = 77, stride = 77;
    ASSERT_RC(idmseg_store_lease(st, tag, 10, &first, &stride, &err), IDMSEG_ENOTAG);
    ASSERT_TRUE(strstr(err.msg, tag) != NULL);
    ASSERT_EQ_U64(first, 77);
    idmseg_tag_info info;
    ASSERT_RC(idmseg_store_show(st, tag, &info, &err), IDMSEG_ENOTAG);
    /* The failed lease made no row. */
    ASSERT_RC(idmseg_store_show(st, tag, &info, &err), IDMSEG_ENOTAG);
}

static void test_lease_ranges(void)
{
    const char *tag = tagname("ranges");
    ASSERT_RC(idmseg_store_create(st, tag, NULL, &err), 0);
    uint64_t expect = 1, total = 0;
    int64_t before = wall_ms();
    for (uint64_t i = 1; i <= 50; i++) {
        uint64_t first = 0, stride = 0, count = i * 37 % 1000 + 1;
        ASSERT_RC(idmseg_store_lease(st, tag, count, &first, &stride, &err), 0);
        ASSERT_EQ_U64(stride, 1);
        /* Each range starts where the last one ended: disjoint, rising. */
        ASSERT_EQ_U64(first, expect);
        expect += count;
        total += count;
    }
    idmseg_tag_info info;
    ASSERT_RC(idmseg_store_show(st, tag, &info, &err), 0);
    ASSERT_EQ_U64(info.next_id, 1 + total);
    ASSERT_EQ_U64(info.leases, 50);
    ASSERT_TRUE(info.updated_ms >= before && info.updated_ms >= info.created_ms);
    ASSERT_TRUE(info.updated_ms <= wall_ms());
    /* The step is not the store's to change. */
    ASSERT_EQ_U64(info.step, 1000);
}

/* Odd and even tags, as two stores of Flickr's ticket servers would hold
 * them: every ID of a range is the tag's residue, and the two never meet. */
static void test_strides(void)
{
    const char *odd = tagname("odd"), *even = tagname("even"), *three = tagname("mod5r3");
    idmseg_tag_spec so = {.first = 1, .step = 100, .max_step = 1000, .stride = 2, .offset = 1};
    idmseg_tag_spec se = {.first = 1, .step = 100, .max_step = 1000, .stride = 2, .offset = 0};
    idmseg_tag_spec s3 = {.first = 100, .step = 100, .max_step = 1000, .stride = 5, .offset = 3};
    ASSERT_RC(idmseg_store_create(st, odd, &so, &err), 0);
    ASSERT_RC(idmseg_store_create(st, even, &se, &err), 0);
    ASSERT_RC(idmseg_store_create(st, three, &s3, &err), 0);
    static bool seen[20000];
    memset(seen, 0, sizeof seen);
    uint64_t next_odd = 1, next_even = 2, next3 = 103;
    for (int i = 0; i < 40; i++) {
        uint64_t count = (uint64_t)(i % 7) * 11 + 3, first, stride;
        const char *tag = i % 2 ? odd : even;
        ASSERT_RC(idmseg_store_lease(st, tag, count, &first, &stride, &err), 0);
        ASSERT_EQ_U64(stride, 2);
        ASSERT_EQ_U64(first % 2, i % 2 ? 1 : 0);
        ASSERT_EQ_U64(first, i % 2 ? next_odd : next_even);
        for (uint64_t k = 0; k < count; k++) {
            uint64_t id = first + k * stride;
            ASSERT_TRUE(id < sizeof seen);
            if (seen[id])
                TEST_FAIL_("ID %llu leased twice", (unsigned long long)id);
            seen[id] = true;
        }
        if (i % 2)
            next_odd = first + count * stride;
        else
            next_even = first + count * stride;
        ASSERT_RC(idmseg_store_lease(st, three, count, &first, &stride, &err), 0);
        ASSERT_EQ_U64(stride, 5);
        ASSERT_EQ_U64(first, next3);
        ASSERT_EQ_U64(first % 5, 3);
        next3 += count * 5;
    }
    idmseg_tag_info info;
    ASSERT_RC(idmseg_store_show(st, odd, &info, &err), 0);
    ASSERT_EQ_U64(info.next_id, next_odd);
    ASSERT_EQ_U64(info.next_id % 2, 1);
    ASSERT_RC(idmseg_store_show(st, three, &info, &err), 0);
    ASSERT_EQ_U64(info.next_id, next3);
}

static void test_used_up(void)
{
    const char *tag = tagname("nearmax");
    const uint64_t max = (uint64_t)INT64_MAX;
    idmseg_tag_spec spec = {.first = max - 10, .step = 5, .max_step = 5, .stride = 1, .offset = 0};
    ASSERT_RC(idmseg_store_create(st, tag, &spec, &err), 0);
    uint64_t first, stride;
    ASSERT_RC(idmseg_store_lease(st, tag, 5, &first, &stride, &err), 0);
    ASSERT_EQ_U64(first, max - 10);
    /* Up to next_id = 2^63 - 1 exactly: the last leased ID is 2^63 - 2. */
    ASSERT_RC(idmseg_store_lease(st, tag, 5, &first, &stride, &err), 0);
    ASSERT_EQ_U64(first, max - 5);
    ASSERT_RC(idmseg_store_lease(st, tag, 1, &first, &stride, &err), IDMSEG_EUSAGE);
    ASSERT_TRUE(strstr(err.msg, "used up") != NULL);
    ASSERT_TRUE(strstr(err.msg, tag) != NULL);
    idmseg_tag_info info;
    ASSERT_RC(idmseg_store_show(st, tag, &info, &err), 0);
    ASSERT_EQ_U64(info.next_id, max);
    ASSERT_EQ_U64(info.leases, 2);

    /* A count whose product with the stride passes 2^64 is refused
     * without overflowing inside the database. */
    const char *wide = tagname("widestride");
    idmseg_tag_spec sw = {.first = 1, .step = 1, .max_step = 1, .stride = 1000, .offset = 1};
    ASSERT_RC(idmseg_store_create(st, wide, &sw, &err), 0);
    ASSERT_RC(idmseg_store_lease(st, wide, (uint64_t)1 << 62, &first, &stride, &err),
              IDMSEG_EUSAGE);
    ASSERT_TRUE(strstr(err.msg, "used up") != NULL);
    ASSERT_RC(idmseg_store_lease(st, wide, max, &first, &stride, &err), IDMSEG_EUSAGE);
    ASSERT_RC(idmseg_store_lease(st, wide, max + 1, &first, &stride, &err), IDMSEG_EUSAGE);
    /* The largest lease that fits: (2^63 - 1 - 1) / 1000 IDs. */
    uint64_t fit = (max - 1) / 1000;
    ASSERT_RC(idmseg_store_lease(st, wide, fit, &first, &stride, &err), 0);
    ASSERT_EQ_U64(first, 1);
    ASSERT_RC(idmseg_store_show(st, wide, &info, &err), 0);
    ASSERT_EQ_U64(info.next_id, 1 + fit * 1000);
    ASSERT_RC(idmseg_store_lease(st, wide, 1, &first, &stride, &err), IDMSEG_EUSAGE);
}

struct collect {
    int n, mine;
    char last[IDMSEG_TAG_MAX + 1];
    bool ordered;
    idmseg_tag_info custom;
    bool got_custom;
};

static void collect_fn(void *ctx, const idmseg_tag_info *t)
{
    struct collect *c = ctx;
    if (c->n > 0 && strcmp(c->last, t->tag) >= 0)
        c->ordered = false;
    snprintf(c->last, sizeof c->last, "%s", t->tag);
    c->n++;
    if (strncmp(t->tag, prefix, strlen(prefix)) == 0)
        c->mine++;
    if (strcmp(t->tag, tagname("list.b")) == 0) {
        c->custom = *t;
        c->got_custom = true;
    }
}

static void test_list(void)
{
    /* Names whose byte order differs from a locale's ('-' < '.' < '_'). */
    static const char *const names[] = {"list_a", "list.b", "list-c", "list.a", "list0",
                                        "listZ",  "list:x", "list~",  "listA",  "list{b}"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        ASSERT_RC(idmseg_store_create(st, tagname(names[i]), NULL, &err), 0);
    idmseg_tag_spec spec = {.first = 40, .step = 3, .max_step = 9, .stride = 4, .offset = 2};
    ASSERT_RC(idmseg_store_create(st, tagname("list.b"), &spec, &err), IDMSEG_EEXISTS);
    uint64_t first, stride;
    ASSERT_RC(idmseg_store_lease(st, tagname("list.b"), 6, &first, &stride, &err), 0);
    struct collect c = {.ordered = true};
    int n = idmseg_store_list(st, collect_fn, &c, &err);
    if (n < 0)
        TEST_FAIL_("idmseg_store_list: %s", err.msg);
    ASSERT_EQ_INT(n, c.n);
    ASSERT_TRUE(c.ordered);
    ASSERT_TRUE(c.got_custom);
    ASSERT_EQ_U64(c.custom.next_id, 7);
    ASSERT_EQ_U64(c.custom.leases, 1);
    ASSERT_EQ_U64(c.custom.step, 1000);
    idmseg_tag_info shown;
    ASSERT_RC(idmseg_store_show(st, tagname("list.b"), &shown, &err), 0);
    ASSERT_EQ_MEM(&shown, &c.custom, sizeof shown);
    /* Every tag this run made so far is listed (the tests before this one
     * made the rest: at least the five here). */
    ASSERT_TRUE(c.mine >= 5);
}

/* The names the wider rule lets in (issue 23) are stored as they are,
 * case-sensitive: "Orders" and "orders" are two tags with ranges of their
 * own, and the longest name (IDMSEG_TAG_MAX bytes) round-trips. */
static void test_wide_names(void)
{
    static const char *const names[] = {"Orders", "orders", "order:id", "{user}:seq", "a|b+c~d@e"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *tag = tagname(names[i]);
        idmseg_tag_spec spec = IDMSEG_TAG_SPEC_DEFAULTS;
        spec.first = 100 * (i + 1);
        ASSERT_RC(idmseg_store_create(st, tag, &spec, &err), 0);
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *tag = tagname(names[i]);
        uint64_t first = 0, stride = 0;
        ASSERT_RC(idmseg_store_lease(st, tag, 3, &first, &stride, &err), 0);
        ASSERT_EQ_U64(first, 100 * (i + 1));
        idmseg_tag_info info;
        ASSERT_RC(idmseg_store_show(st, tag, &info, &err), 0);
        ASSERT_TRUE(strcmp(info.tag, tag) == 0);
        ASSERT_EQ_U64(info.next_id, 100 * (i + 1) + 3);
    }
    char longest[IDMSEG_TAG_MAX + 1];
    int n = snprintf(longest, sizeof longest, "%s", tagname("L:"));
    memset(longest + n, 'Z', sizeof longest - 1 - (size_t)n);
    longest[IDMSEG_TAG_MAX] = '\0';
    ASSERT_RC(idmseg_store_create(st, longest, NULL, &err), 0);
    uint64_t first = 0, stride = 0;
    ASSERT_RC(idmseg_store_lease(st, longest, 1, &first, &stride, &err), 0);
    idmseg_tag_info info;
    ASSERT_RC(idmseg_store_show(st, longest, &info, &err), 0);
    ASSERT_TRUE(strcmp(info.tag, longest) == 0);
    ASSERT_EQ_U64(info.leases, 1);
}

/* The round trip of one lease, as the allocator pays it per range. */
static void test_lease_timing(void)
{
    const char *tag = tagname("timing");
    ASSERT_RC(idmseg_store_create(st, tag, NULL, &err), 0);
    enum { N = 200 };
    static int64_t us[N];
    for (int i = 0; i < N; i++) {
        uint64_t first, stride;
        int64_t t0 = now_us();
        ASSERT_RC(idmseg_store_lease(st, tag, 1000, &first, &stride, &err), 0);
        us[i] = now_us() - t0;
        ASSERT_EQ_U64(first, 1 + (uint64_t)i * 1000);
    }
    for (int i = 1; i < N; i++)
        for (int j = i; j > 0 && us[j - 1] > us[j]; j--) {
            int64_t t = us[j];
            us[j] = us[j - 1];
            us[j - 1] = t;
        }
    printf("# %s: a lease round trip (%d in a row): median %lld us, p99 %lld us, max %lld us\n",
           idmseg_store_kind(st), N, (long long)us[N / 2], (long long)us[N * 99 / 100],
           (long long)us[N - 1]);
}

static void test_bad_urls(void)
{
    static const char *const bad[] = {
        "", "sqlite:", "mysql://x/y", "sqlite", "postgresq://x", "file:/tmp/x", NULL};
    for (int i = 0; bad[i] != NULL; i++) {
        idmseg_store *s = (idmseg_store *)1;
        err.msg[0] = '\0';
        int rc = idmseg_store_open(bad[i], &s, &err);
        if (rc != IDMSEG_EUSAGE || s != NULL)
            TEST_FAIL_("'%s': %d, expected IDMSEG_EUSAGE: %s", bad[i], rc, err.msg);
        ASSERT_TRUE(err.msg[0] != '\0');
    }
    /* A password in a URL is not repeated in a message. */
    idmseg_store *s = NULL;
    ASSERT_RC(idmseg_store_open("mysql://u:sekrit@h/db", &s, &err), IDMSEG_EUSAGE);
    ASSERT_TRUE(strstr(err.msg, "sekrit") == NULL);
    ASSERT_RC(idmseg_store_open("postgresql://u:sekrit@127.0.0.1:1/db?bogus=1", &s, &err),
              IDMSEG_EUSAGE);
    ASSERT_TRUE(strstr(err.msg, "sekrit") == NULL);
    idmseg_store_close(NULL);
}

/* A port with nothing behind it, and a listener that never answers:
 * IDMSEG_EDB, within the connect timeout. */
static void test_unreachable(void)
{
    if (is_sqlite) {
        idmseg_store *s = NULL;
        int64_t t0 = now_ms();
        ASSERT_RC(idmseg_store_open("sqlite:/nonexistent-dir/idmint/x.db", &s, &err), IDMSEG_EDB);
        ASSERT_TRUE(s == NULL);
        ASSERT_TRUE(strstr(err.msg, "/nonexistent-dir/idmint/x.db") != NULL);
        printf("# sqlite: a file in a missing directory: IDMSEG_EDB in %lld ms (%s)\n",
               (long long)(now_ms() - t0), err.msg);
        return;
    }
    /* A closed port: a socket bound and closed again (not reused soon). */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_TRUE(fd >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    ASSERT_TRUE(bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    ASSERT_TRUE(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
    int port = ntohs(sa.sin_port);
    close(fd);
    char u[128];
    snprintf(u, sizeof u, "postgresql://postgres@127.0.0.1:%d/postgres", port);
    idmseg_store *s = NULL;
    int64_t t0 = now_ms();
    ASSERT_RC(idmseg_store_open(u, &s, &err), IDMSEG_EDB);
    int64_t ms = now_ms() - t0;
    ASSERT_TRUE(s == NULL);
    ASSERT_TRUE(ms < HANG_BOUND_MS);
    printf("# postgresql: a closed port: IDMSEG_EDB in %lld ms (%s)\n", (long long)ms, err.msg);

    /* A listener that accepts (the kernel does) and never says a word:
     * only connect_timeout (5 s, the store's default) ends the wait. */
    fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_TRUE(fd >= 0);
    sa.sin_port = 0;
    len = sizeof sa;
    ASSERT_TRUE(bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    ASSERT_TRUE(listen(fd, 8) == 0);
    ASSERT_TRUE(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
    snprintf(u, sizeof u, "postgresql://postgres@127.0.0.1:%d/postgres", ntohs(sa.sin_port));
    t0 = now_ms();
    int rc = idmseg_store_open(u, &s, &err);
    ms = now_ms() - t0;
    close(fd);
    ASSERT_EQ_INT(rc, IDMSEG_EDB);
    ASSERT_TRUE(s == NULL);
    ASSERT_TRUE(ms >= 4000 && ms < HANG_BOUND_MS);
    printf("# postgresql: a silent listener: IDMSEG_EDB in %lld ms (%s)\n", (long long)ms, err.msg);
}

static const struct test_case api_tests[] = {TEST(test_bad_urls),      TEST(test_create_defaults),
                                             TEST(test_create_custom), TEST(test_bad_names),
                                             TEST(test_bad_values),    TEST(test_notag),
                                             TEST(test_lease_ranges),  TEST(test_strides),
                                             TEST(test_used_up),       TEST(test_list),
                                             TEST(test_wide_names),    TEST(test_lease_timing),
                                             TEST(test_unreachable),   {0}};

/* ---- several processes on one tag ---------------------------------------- */

static int conc_n, conc_m;
static const char *conc_tag;

/* One child: M leases on a store of its own, a line per range to fd. */
static int conc_child(int fd, int index)
{
    idmseg_store *s = NULL;
    idmseg_error m;
    int rc = idmseg_store_open(url, &s, &m);
    if (rc != 0) {
        fprintf(stderr, "child %d: open: %d: %s\n", index, rc, m.msg);
        return 1;
    }
    int status = 0;
    for (int j = 0; j < conc_m; j++) {
        uint64_t count = (uint64_t)((index * 131 + j * 17) % 97 + 1), first, stride;
        rc = idmseg_store_lease(s, conc_tag, count, &first, &stride, &m);
        if (rc != 0) {
            fprintf(stderr, "child %d: lease %d: %d: %s\n", index, j, rc, m.msg);
            status = 1;
            break;
        }
        char line[96];
        int len = snprintf(line, sizeof line, "%llu %llu %llu\n", (unsigned long long)first,
                           (unsigned long long)count, (unsigned long long)stride);
        /* Shorter than PIPE_BUF: the children's lines never interleave. */
        if (write(fd, line, (size_t)len) != len) {
            status = 1;
            break;
        }
    }
    idmseg_store_close(s);
    return status;
}

struct range {
    uint64_t first, count, stride;
};

static int cmp_range(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

static void test_concurrent(void)
{
    idmseg_tag_spec spec = {.first = 1001, .step = 10, .max_step = 100, .stride = 3, .offset = 2};
    ASSERT_RC(idmseg_store_create(st, conc_tag, &spec, &err), 0);
    idmseg_tag_info info;
    ASSERT_RC(idmseg_store_show(st, conc_tag, &info, &err), 0);
    const uint64_t start = info.next_id;
    ASSERT_EQ_U64(start, 1001);
    int pipefd[2];
    ASSERT_TRUE(pipe(pipefd) == 0);
    fflush(NULL);
    pid_t *pids = calloc((size_t)conc_n, sizeof *pids);
    ASSERT_TRUE(pids != NULL);
    int64_t t0 = now_ms();
    for (int i = 0; i < conc_n; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            close(pipefd[0]);
            int status = conc_child(pipefd[1], i);
            close(pipefd[1]);
            idmseg_store_close(st);
            free(pids);
            exit(status);
        }
        if (pids[i] < 0)
            TEST_REPORT_("fork: %s", strerror(errno));
    }
    close(pipefd[1]);
    size_t cap = (size_t)conc_n * (size_t)conc_m, n = 0;
    struct range *r = calloc(cap + 1, sizeof *r);
    FILE *in = fdopen(pipefd[0], "r");
    unsigned long long a, b, c;
    while (in != NULL && r != NULL && fscanf(in, "%llu %llu %llu", &a, &b, &c) == 3) {
        if (n < cap)
            r[n] = (struct range){a, b, c};
        n++;
    }
    if (in != NULL)
        fclose(in);
    int failed_children = 0;
    for (int i = 0; i < conc_n; i++) {
        int status = 0;
        if (pids[i] > 0 && (waitpid(pids[i], &status, 0) != pids[i] || !WIFEXITED(status) ||
                            WEXITSTATUS(status) != 0))
            failed_children++;
    }
    int64_t ms = now_ms() - t0;
    free(pids);
    if (r == NULL)
        TEST_FAIL_("out of memory");
    if (failed_children != 0 || n != cap) {
        free(r);
        TEST_FAIL_("%d children failed; %zu ranges of %zu", failed_children, n, cap);
    }
    qsort(r, n, sizeof *r, cmp_range);
    uint64_t expect = start, sum = 0;
    for (size_t i = 0; i < n; i++) {
        /* Disjoint, and with every lease applied, tiling without gaps. */
        if (r[i].first != expect || r[i].stride != 3) {
            unsigned long long got = r[i].first;
            free(r);
            TEST_FAIL_("range %zu starts at %llu, expected %llu (overlap or gap)", i, got,
                       (unsigned long long)expect);
        }
        expect += r[i].count * 3;
        sum += r[i].count;
    }
    free(r);
    ASSERT_RC(idmseg_store_show(st, conc_tag, &info, &err), 0);
    ASSERT_EQ_U64(info.next_id, start + sum * 3);
    ASSERT_EQ_U64(info.leases, (uint64_t)conc_n * (uint64_t)conc_m);
    printf("# %s: %d processes x %d leases of one tag in %lld ms (%.0f leases/s), all disjoint, "
           "next_id = %llu\n",
           idmseg_store_kind(st), conc_n, conc_m, (long long)ms,
           ms > 0 ? (double)conc_n * conc_m * 1000.0 / (double)ms : 0.0,
           (unsigned long long)info.next_id);
}

/* ---- read-only and locked stores ----------------------------------------- */

static const char *ro_tag;

static void test_setup(void)
{
    idmseg_tag_spec spec = IDMSEG_TAG_SPEC_DEFAULTS;
    ASSERT_RC(idmseg_store_create(st, ro_tag, &spec, &err), 0);
    uint64_t first, stride;
    ASSERT_RC(idmseg_store_lease(st, ro_tag, 10, &first, &stride, &err), 0);
    ASSERT_EQ_U64(first, 1);
}

static void count_fn(void *ctx, const idmseg_tag_info *t)
{
    (void)t;
    (*(int *)ctx)++;
}

static void test_readonly(void)
{
    idmseg_tag_info info;
    ASSERT_RC(idmseg_store_show(st, ro_tag, &info, &err), 0);
    ASSERT_EQ_U64(info.next_id, 11);
    int n = 0;
    ASSERT_TRUE(idmseg_store_list(st, count_fn, &n, &err) >= 1);
    ASSERT_TRUE(n >= 1);
    uint64_t first = 0, stride = 0;
    ASSERT_RC(idmseg_store_lease(st, ro_tag, 10, &first, &stride, &err), IDMSEG_EREADONLY);
    printf("# %s: a lease on a read-only store: %s\n", idmseg_store_kind(st), err.msg);
    ASSERT_TRUE(strstr(err.msg, "read-only") != NULL);
    ASSERT_RC(idmseg_store_create(st, "ro-new", NULL, &err), IDMSEG_EREADONLY);
    ASSERT_RC(idmseg_store_lease(st, "ro-missing", 1, &first, &stride, &err), IDMSEG_EREADONLY);
    ASSERT_RC(idmseg_store_show(st, ro_tag, &info, &err), 0);
    ASSERT_EQ_U64(info.next_id, 11);
    ASSERT_EQ_U64(info.leases, 1);
}

static void test_busy(void)
{
    uint64_t first, stride;
    int64_t t0 = now_ms();
    int rc = idmseg_store_lease(st, "busy", 1, &first, &stride, &err);
    int64_t ms = now_ms() - t0;
    printf("# %s: a lease on a file locked by another process: %d in %lld ms (%s)\n",
           idmseg_store_kind(st), rc, (long long)ms, err.msg);
    ASSERT_EQ_INT(rc, IDMSEG_EDB);
    ASSERT_TRUE(ms >= 4000 && ms < HANG_BOUND_MS);
}

/* ---- a server restart ---------------------------------------------------- */

static bool read_line(const char *want)
{
    char line[64];
    if (fgets(line, sizeof line, stdin) == NULL)
        return false;
    line[strcspn(line, "\n")] = '\0';
    return strcmp(line, want) == 0;
}

static void test_restart(void)
{
    const char *tag = tagname("restart");
    ASSERT_RC(idmseg_store_create(st, tag, NULL, &err), 0);
    uint64_t first, stride, high = 0;
    for (int i = 0; i < 20; i++) {
        ASSERT_RC(idmseg_store_lease(st, tag, 100, &first, &stride, &err), 0);
        ASSERT_TRUE(first >= high);
        high = first + 100;
    }
    printf("leased %llu\n", (unsigned long long)high);
    fflush(stdout);
    if (!read_line("down"))
        TEST_FAIL_("expected 'down' on stdin");
    int64_t t0 = now_ms();
    int rc = idmseg_store_lease(st, tag, 100, &first, &stride, &err);
    int64_t ms = now_ms() - t0;
    printf("down %d %lld\n", rc, (long long)ms);
    printf("# postgresql: a lease with the server stopped: %d in %lld ms (%s)\n", rc, (long long)ms,
           err.msg);
    fflush(stdout);
    ASSERT_EQ_INT(rc, IDMSEG_EDB);
    ASSERT_TRUE(ms < HANG_BOUND_MS);
    if (!read_line("up"))
        TEST_FAIL_("expected 'up' on stdin");
    /* The first call may report the lost connection once; the next one
     * reconnects. */
    int errors = 0;
    t0 = now_ms();
    for (;;) {
        rc = idmseg_store_lease(st, tag, 100, &first, &stride, &err);
        if (rc != IDMSEG_EDB || errors >= 1)
            break;
        printf("# postgresql: the first lease after the restart: IDMSEG_EDB (%s)\n", err.msg);
        errors++;
    }
    ASSERT_RC(rc, 0);
    printf("# postgresql: after the restart a lease succeeded in %lld ms with %d IDMSEG_EDB "
           "first (%s)\n",
           (long long)(now_ms() - t0), errors,
           errors == 0 ? "a transparent reconnect" : "then a reconnect");
    ASSERT_TRUE(first >= high);
    high = first + 100;
    for (int i = 0; i < 10; i++) {
        ASSERT_RC(idmseg_store_lease(st, tag, 100, &first, &stride, &err), 0);
        ASSERT_TRUE(first >= high);
        high = first + 100;
    }
    idmseg_tag_info info;
    ASSERT_RC(idmseg_store_show(st, tag, &info, &err), 0);
    ASSERT_EQ_U64(info.next_id, high);
    printf("restart-result %d\n", errors);
}

/* 1 to 10000, or -1. */
static int parse_count(const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    return errno != 0 || end == s || *end != '\0' || v < 1 || v > 10000 ? -1 : (int)v;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: store_test URL [TEST | concurrent N M TAG | setup TAG | "
                        "readonly TAG | busy | restart]\n");
        return 2;
    }
    url = argv[1];
    is_sqlite = strncmp(url, "sqlite:", 7) == 0;
    snprintf(prefix, sizeof prefix, "t%ld-", (long)getpid());
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *mode = argc >= 3 ? argv[2] : NULL;
    if (mode != NULL && strcmp(mode, "readonly") == 0 && argc == 4 && strcmp(argv[3], "-") == 0) {
        /* No table and none can be made: opening says so. */
        int rc = idmseg_store_open(url, &st, &err);
        printf("# %s: opening a read-only store without the table: %d (%s)\n",
               is_sqlite ? "sqlite" : "postgresql", rc, err.msg);
        idmseg_store_close(st);
        return rc == IDMSEG_EREADONLY ? 0 : 1;
    }
    int rc = idmseg_store_open(url, &st, &err);
    if (rc != 0) {
        fprintf(stderr, "store_test: cannot open the store: %d: %s\n", rc, err.msg);
        return 1;
    }
    char *args[3] = {argv[0], "-", NULL};
    int status;
    static const struct test_case conc[] = {TEST(test_concurrent), {0}};
    static const struct test_case setup[] = {TEST(test_setup), {0}};
    static const struct test_case ro[] = {TEST(test_readonly), {0}};
    static const struct test_case busy[] = {TEST(test_busy), {0}};
    static const struct test_case restart[] = {TEST(test_restart), {0}};
    if (mode != NULL && strcmp(mode, "concurrent") == 0 && argc == 6) {
        conc_n = parse_count(argv[3]);
        conc_m = parse_count(argv[4]);
        conc_tag = argv[5];
        if (conc_n <= 0 || conc_m <= 0) {
            fprintf(stderr, "store_test: N and M are 1 to 10000\n");
            idmseg_store_close(st);
            return 2;
        }
        status = test_main(2, args, conc);
    } else if (mode != NULL && strcmp(mode, "setup") == 0 && argc == 4) {
        ro_tag = argv[3];
        status = test_main(2, args, setup);
    } else if (mode != NULL && strcmp(mode, "readonly") == 0 && argc == 4) {
        ro_tag = argv[3];
        status = test_main(2, args, ro);
    } else if (mode != NULL && strcmp(mode, "busy") == 0) {
        status = test_main(2, args, busy);
    } else if (mode != NULL && strcmp(mode, "restart") == 0) {
        status = test_main(2, args, restart);
    } else {
        args[2] = argc >= 3 ? argv[2] : NULL;
        status = test_main(argc >= 3 ? 3 : 2, args, api_tests);
    }
    idmseg_store_close(st);
    return status;
}
