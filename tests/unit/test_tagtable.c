/*
 * test_tagtable.c - idmintd's table of segment tag names (server/tagtable.c):
 * names are bytes (a NUL inside is part of the name, so "a\0b" is never
 * "a"), pinned entries are never evicted, cached ones are evicted least
 * recently used first beyond their bound, and the hash is SipHash-2-4.
 */
#include "testlib.h"

#include "tagtable.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct item {
    idms_tag_entry entry; /* first */
    int id;
} item;

static int evictions;
static int last_evicted;

static void on_evict(void *ctx, idms_tag_entry *e)
{
    (void)ctx;
    evictions++;
    last_evicted = ((item *)e)->id;
    free(e);
}

static const uint64_t fixed_key[2] = {UINT64_C(0x0706050403020100), UINT64_C(0x0f0e0d0c0b0a0908)};

static item *add(idms_tagtable *t, const char *name, size_t len, int id)
{
    item *it = calloc(1, sizeof *it);
    if (it == NULL)
        abort();
    it->id = id;
    idms_tagtable_add(t, &it->entry, name, len);
    return it;
}

/* A table under the fixed key, the eviction count at 0. */
static void start(idms_tagtable *t, size_t capacity, size_t cache_max)
{
    evictions = 0;
    ASSERT_EQ_INT(idms_tagtable_init(t, capacity, cache_max, fixed_key, on_evict, NULL), 0);
}

static int id_of(idms_tagtable *t, const char *name, size_t len)
{
    idms_tag_entry *e = idms_tagtable_find(t, name, len);
    return e == NULL ? -1 : ((item *)e)->id;
}

/* The reference vectors (the SipHash paper, appendix A, and its
 * vectors.h): key 00..0f, message 00..len-1. */
static void test_siphash_vectors(void)
{
    char msg[15];
    for (int i = 0; i < 15; i++)
        msg[i] = (char)i;
    ASSERT_EQ_U64(idms_tag_hash(fixed_key, msg, 0), UINT64_C(0x726fdb47dd0e0e31));
    ASSERT_EQ_U64(idms_tag_hash(fixed_key, msg, 1), UINT64_C(0x74f839c593dc67fd));
    ASSERT_EQ_U64(idms_tag_hash(fixed_key, msg, 15), UINT64_C(0xa129ca6149be45e5));
}

static void test_names_are_bytes(void)
{
    idms_tagtable t;
    start(&t, 16, 8);
    add(&t, "a\0b", 3, 1);
    ASSERT_EQ_INT(id_of(&t, "a", 1), -1);
    ASSERT_EQ_INT(id_of(&t, "a\0b", 3), 1);
    ASSERT_EQ_INT(id_of(&t, "a\0c", 3), -1);
    add(&t, "a", 1, 2);
    ASSERT_EQ_INT(id_of(&t, "a", 1), 2);
    ASSERT_EQ_INT(id_of(&t, "a\0b", 3), 1);
    ASSERT_EQ_U64(t.n_cached, 2);
    idms_tagtable_destroy(&t);
}

static void test_cached_are_evicted_least_recently_used_first(void)
{
    idms_tagtable t;
    start(&t, 16, 3);
    add(&t, "one", 3, 1);
    add(&t, "two", 3, 2);
    add(&t, "three", 5, 3);
    ASSERT_EQ_INT(evictions, 0);
    /* "one" used again: "two" is now the least recently used. */
    ASSERT_EQ_INT(id_of(&t, "one", 3), 1);
    add(&t, "four", 4, 4);
    ASSERT_EQ_INT(evictions, 1);
    ASSERT_EQ_INT(last_evicted, 2);
    ASSERT_EQ_INT(id_of(&t, "two", 3), -1);
    ASSERT_EQ_INT(id_of(&t, "one", 3), 1);
    ASSERT_EQ_INT(id_of(&t, "four", 4), 4);
    ASSERT_EQ_U64(t.n_cached, 3);
    ASSERT_EQ_U64(t.evicted, 1);
    idms_tagtable_destroy(&t);
}

static void test_pinned_are_never_evicted(void)
{
    idms_tagtable t;
    start(&t, 64, 4);
    item *live = add(&t, "live", 4, 100);
    idms_tagtable_pin(&t, &live->entry, true);
    item *busy = add(&t, "busy", 4, 101);
    idms_tagtable_pin(&t, &busy->entry, true);
    char name[16];
    for (int i = 0; i < 5000; i++) {
        int n = snprintf(name, sizeof name, "junk%d", i);
        add(&t, name, (size_t)n, i);
    }
    ASSERT_EQ_INT(id_of(&t, "live", 4), 100);
    ASSERT_EQ_INT(id_of(&t, "busy", 4), 101);
    ASSERT_EQ_U64(t.n_pinned, 2);
    ASSERT_EQ_U64(t.n_cached, 4);
    ASSERT_EQ_INT(evictions, 4996);
    ASSERT_EQ_INT(id_of(&t, "junk4999", 8), 4999);
    ASSERT_EQ_INT(id_of(&t, "junk4995", 8), -1);
    /* Unpinned: the most recently used, and the oldest cached goes. */
    idms_tagtable_pin(&t, &busy->entry, false);
    ASSERT_EQ_INT(evictions, 4997);
    ASSERT_EQ_INT(last_evicted, 4996);
    ASSERT_EQ_INT(id_of(&t, "busy", 4), 101);
    ASSERT_EQ_U64(t.n_pinned, 1);
    ASSERT_EQ_U64(t.n_cached, 4);
    /* Pinning twice, unpinning twice: no change. */
    idms_tagtable_pin(&t, &live->entry, true);
    idms_tagtable_pin(&t, &busy->entry, false);
    ASSERT_EQ_U64(t.n_pinned, 1);
    ASSERT_EQ_U64(t.n_cached, 4);
    idms_tagtable_destroy(&t);
    ASSERT_EQ_INT(evictions, 5002);
}

/* Far more entries than buckets: long chains still find each name. */
static void test_many_in_few_buckets(void)
{
    idms_tagtable t;
    start(&t, 1, 100000);
    ASSERT_EQ_U64(t.mask, 15);
    char name[16];
    for (int i = 0; i < 2000; i++) {
        int n = snprintf(name, sizeof name, "t%d", i);
        item *it = add(&t, name, (size_t)n, i);
        if (i % 2 == 0)
            idms_tagtable_pin(&t, &it->entry, true);
    }
    for (int i = 0; i < 2000; i++) {
        int n = snprintf(name, sizeof name, "t%d", i);
        if (id_of(&t, name, (size_t)n) != i)
            TEST_FAIL_("%s not found", name);
    }
    ASSERT_EQ_INT(id_of(&t, "t2000", 5), -1);
    ASSERT_EQ_INT(evictions, 0);
    idms_tagtable_destroy(&t);
    ASSERT_EQ_INT(evictions, 2000);
}

static const struct test_case tests[] = {
    TEST(test_siphash_vectors),
    TEST(test_names_are_bytes),
    TEST(test_cached_are_evicted_least_recently_used_first),
    TEST(test_pinned_are_never_evicted),
    TEST(test_many_in_few_buckets),
    {0},
};

int main(int argc, char **argv)
{
    return test_main(argc, argv, tests);
}
