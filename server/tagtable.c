/*
 * tagtable.c - the table of segment tag names (tagtable.h).
 */
#include "tagtable.h"

#include <stdlib.h>
#include <string.h>

/* ---- SipHash-2-4 (Aumasson and Bernstein) ------------------------------- */

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

#define SIPROUND                                                                                   \
    do {                                                                                           \
        v0 += v1;                                                                                  \
        v1 = ROTL(v1, 13);                                                                         \
        v1 ^= v0;                                                                                  \
        v0 = ROTL(v0, 32);                                                                         \
        v2 += v3;                                                                                  \
        v3 = ROTL(v3, 16);                                                                         \
        v3 ^= v2;                                                                                  \
        v0 += v3;                                                                                  \
        v3 = ROTL(v3, 21);                                                                         \
        v3 ^= v0;                                                                                  \
        v2 += v1;                                                                                  \
        v1 = ROTL(v1, 17);                                                                         \
        v1 ^= v2;                                                                                  \
        v2 = ROTL(v2, 32);                                                                         \
    } while (0)

static uint64_t load_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

uint64_t idms_tag_hash(const uint64_t key[2], const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    uint64_t v0 = key[0] ^ UINT64_C(0x736f6d6570736575);
    uint64_t v1 = key[1] ^ UINT64_C(0x646f72616e646f6d);
    uint64_t v2 = key[0] ^ UINT64_C(0x6c7967656e657261);
    uint64_t v3 = key[1] ^ UINT64_C(0x7465646279746573);
    size_t whole = len - len % 8;
    for (size_t i = 0; i < whole; i += 8) {
        uint64_t m = load_le64(p + i);
        v3 ^= m;
        SIPROUND;
        SIPROUND;
        v0 ^= m;
    }
    uint64_t b = (uint64_t)len << 56;
    for (size_t i = whole; i < len; i++)
        b |= (uint64_t)p[i] << (8 * (i - whole));
    v3 ^= b;
    SIPROUND;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

/* ---- the lists ---------------------------------------------------------- */

static void unlink_entry(idms_tag_entry *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->prev = e->next = NULL;
}

static void push_front(idms_tag_entry *head, idms_tag_entry *e)
{
    e->prev = head;
    e->next = head->next;
    head->next->prev = e;
    head->next = e;
}

/* Takes e out of its bucket and its list. */
static void remove_entry(idms_tagtable *t, idms_tag_entry *e)
{
    idms_tag_entry **pp = &t->buckets[e->hash & t->mask];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    e->hnext = NULL;
    unlink_entry(e);
    if (e->pinned)
        t->n_pinned--;
    else
        t->n_cached--;
}

/* Evicts the least recently used cached entries beyond cache_max. The
 * entry just added or unpinned is the most recently used, so it is never
 * the one evicted (cache_max >= 1). */
static void trim(idms_tagtable *t)
{
    while (t->n_cached > t->cache_max) {
        idms_tag_entry *e = t->cached.prev;
        remove_entry(t, e);
        t->evicted++;
        t->evict(t->ctx, e);
    }
}

int idms_tagtable_init(idms_tagtable *t, size_t capacity, size_t cache_max, const uint64_t key[2],
                       idms_tag_evict_fn *evict, void *ctx)
{
    memset(t, 0, sizeof *t);
    size_t n = 16;
    while (n < capacity && n < ((size_t)1 << 30))
        n <<= 1;
    t->buckets = calloc(n, sizeof *t->buckets);
    if (t->buckets == NULL)
        return -1;
    t->mask = n - 1;
    t->key[0] = key[0];
    t->key[1] = key[1];
    t->pinned.prev = t->pinned.next = &t->pinned;
    t->cached.prev = t->cached.next = &t->cached;
    t->cache_max = cache_max > 0 ? cache_max : 1;
    t->evict = evict;
    t->ctx = ctx;
    return 0;
}

void idms_tagtable_destroy(idms_tagtable *t)
{
    if (t->buckets == NULL)
        return;
    idms_tag_entry *heads[2] = {&t->pinned, &t->cached};
    for (int h = 0; h < 2; h++)
        while (heads[h]->next != heads[h]) {
            idms_tag_entry *e = heads[h]->next;
            remove_entry(t, e);
            t->evict(t->ctx, e);
        }
    free(t->buckets);
    t->buckets = NULL;
}

idms_tag_entry *idms_tagtable_find(idms_tagtable *t, const char *name, size_t len)
{
    uint64_t h = idms_tag_hash(t->key, name, len);
    for (idms_tag_entry *e = t->buckets[h & t->mask]; e != NULL; e = e->hnext) {
        if (e->hash != h || e->len != len || memcmp(e->name, name, len) != 0)
            continue;
        if (!e->pinned) {
            unlink_entry(e);
            push_front(&t->cached, e);
        }
        return e;
    }
    return NULL;
}

void idms_tagtable_add(idms_tagtable *t, idms_tag_entry *e, const char *name, size_t len)
{
    if (len > IDMS_TAG_NAME_MAX)
        len = IDMS_TAG_NAME_MAX;
    memcpy(e->name, name, len);
    e->name[len] = '\0';
    e->len = len;
    e->hash = idms_tag_hash(t->key, name, len);
    e->pinned = false;
    idms_tag_entry **b = &t->buckets[e->hash & t->mask];
    e->hnext = *b;
    *b = e;
    push_front(&t->cached, e);
    t->n_cached++;
    trim(t);
}

void idms_tagtable_pin(idms_tagtable *t, idms_tag_entry *e, bool pinned)
{
    if (e->pinned == pinned)
        return;
    unlink_entry(e);
    e->pinned = pinned;
    if (pinned) {
        t->n_cached--;
        t->n_pinned++;
        push_front(&t->pinned, e);
        return;
    }
    t->n_pinned--;
    t->n_cached++;
    push_front(&t->cached, e);
    trim(t);
}
