/*
 * tagtable.h - the segment service's table of tag names (segments.c): a
 * hash table keyed by a name's bytes (length and memcmp: "a\0b" is not
 * "a"), hashed with SipHash-2-4 under a key drawn at start (names are the
 * clients' choice: a fixed hash would let them fill one bucket), and two
 * lists that every entry is on one of:
 *
 *   pinned   entries the caller holds (segments.c: a tag with a live
 *            allocator, or with a job at the store thread): never evicted;
 *   cached   the rest (names the store said it has not, lookups that
 *            failed), most recently used first: when there are more than
 *            cache_max of them, the least recently used is evicted (the
 *            caller's evict function frees it).
 *
 * So the cache is bounded by itself and a flood of names can only push
 * other cached names out, never a pinned one; how many entries may be
 * pinned is the caller's bound (--segment-tags). Every call is O(1) but
 * idms_tagtable_destroy: no scan of the table per request.
 *
 * The caller allocates the entries, with an idms_tag_entry as their first
 * member, and frees them in evict. No libuv, no allocation but the buckets;
 * one thread (the loop). Not installed; tests/unit/test_tagtable.c.
 */
#ifndef IDMS_TAGTABLE_H
#define IDMS_TAGTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IDMS_TAG_NAME_MAX 128 /* bytes of a name (IDMSEG_TAG_MAX) */

typedef struct idms_tag_entry {
    struct idms_tag_entry *hnext;       /* in its bucket */
    struct idms_tag_entry *prev, *next; /* in the pinned or the cached list */
    uint64_t hash;
    bool pinned;
    size_t len;
    char name[IDMS_TAG_NAME_MAX + 1]; /* len bytes, then a NUL */
} idms_tag_entry;

typedef void idms_tag_evict_fn(void *ctx, idms_tag_entry *e);

typedef struct idms_tagtable {
    idms_tag_entry **buckets;
    size_t mask;           /* buckets - 1 (a power of two) */
    uint64_t key[2];       /* the hash's */
    idms_tag_entry pinned; /* the lists' heads (pinned.next: the first) */
    idms_tag_entry cached; /* cached.next: the most recently used */
    size_t n_pinned, n_cached;
    size_t cache_max; /* at least 1 */
    uint64_t evicted; /* cached entries evicted so far */
    idms_tag_evict_fn *evict;
    void *ctx;
} idms_tagtable;

/* capacity: the most entries expected (pinned and cached), which sizes the
 * buckets; cache_max: the most cached entries kept (at least 1); key: the
 * hash's 128-bit key. 0, or -1 when out of memory. */
int idms_tagtable_init(idms_tagtable *t, size_t capacity, size_t cache_max, const uint64_t key[2],
                       idms_tag_evict_fn *evict, void *ctx);
/* Hands every entry to evict, and frees the buckets. */
void idms_tagtable_destroy(idms_tagtable *t);

/* The entry named by the len bytes at name, or NULL. A cached entry found
 * becomes the most recently used. */
idms_tag_entry *idms_tagtable_find(idms_tagtable *t, const char *name, size_t len);
/* Adds e (not in the table; no entry has its name) under name (len at
 * most IDMS_TAG_NAME_MAX), cached and the most recently used; then evicts
 * the least recently used while there are more than cache_max (never e). */
void idms_tagtable_add(idms_tagtable *t, idms_tag_entry *e, const char *name, size_t len);
/* Moves e to the pinned list, or back to the cached one (the most recently
 * used, and the least recently used evicted while there are too many;
 * never e). */
void idms_tagtable_pin(idms_tagtable *t, idms_tag_entry *e, bool pinned);

/* SipHash-2-4 of the len bytes at s under key. */
uint64_t idms_tag_hash(const uint64_t key[2], const char *s, size_t len);

#endif
