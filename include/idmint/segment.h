/*
 * idmint/segment.h - Leaf-style segment allocation for one tag: dense,
 * increasing integers handed out from ranges leased from a store, with no
 * clock in the IDs. docs/segments.md has the design.
 *
 * A store (a database row per tag: idmint_segstore's <idmint/segstore.h>, or
 * anything else) leases ranges with one atomic update; this object holds
 * two of them, the current and the next, and hands out IDs from the
 * current. It never does I/O itself: it tells its owner when to fetch the
 * next range (idm_segment_wants) and of what size, and the owner supplies
 * it when it arrives (idm_segment_supply), so that a request never waits on
 * the store while a buffer has IDs, and the store's latency never sits on
 * the owner's hot path (idmintd fetches on its thread pool).
 *
 * A range is first, first + stride, ..., first + (count - 1) * stride: a
 * tag created with a stride K and an offset R (Flickr's ticket servers)
 * only ever gets IDs congruent to R modulo K, so that K independent stores
 * never collide.
 *
 * The step (how many IDs the next lease asks for) adapts as Leaf's does:
 * when the previous range lasted less than grow_below_ms (default 15
 * minutes) the step doubles, up to max_step; when it lasted more than
 * shrink_above_ms (default 30 minutes) it halves, down to min_step.
 * How long a range lasted is the time between the supply of one range and
 * the next (Leaf measures between its database updates), in whole
 * milliseconds.
 *
 * Every ID handed out (by idm_segment_take and idm_segment_take_run
 * together) is greater than every ID handed out before it. IDs can be
 * skipped (the rest of a range a take_run jumps over, a range the owner
 * drops), never repeated.
 *
 * Thread-safety: none; one owner thread at a time (idmintd's loop). The
 * fetch itself runs wherever the owner wants.
 */
#ifndef IDMINT_SEGMENT_H
#define IDMINT_SEGMENT_H

#include <stdbool.h>

#include "common.h"
#include "error.h"
#include "gen.h"

IDM_BEGIN_DECLS

/* A range leased from a store. Its IDs lie in 0 .. INT64_MAX (a store's
 * BIGINT column): first + (count - 1) * stride must not pass INT64_MAX. */
typedef struct idm_seg_range {
    uint64_t first;  /* the first ID */
    uint64_t count;  /* how many: first, first + stride, ... (>= 1) */
    uint64_t stride; /* the distance between two IDs (1 .. INT64_MAX) */
} idm_seg_range;

/* Zero-initialise it, then set what you need: a zero member selects its
 * default. */
typedef struct idm_segment_config {
    /* The first lease's size and the bounds of the dynamic step. Zero:
     * step 1000, min_step = step, max_step = 1,000,000 (at least step).
     * Must satisfy 1 <= min_step <= step <= max_step <= INT64_MAX. */
    uint64_t step, min_step, max_step;
    /* The next range is wanted once this percentage of the current one is
     * handed out (Leaf: 10): with a range of count IDs, once
     * ceil(count * prefetch_percent / 100) of them are. Zero: 10. At most
     * 100 (wanted only when the current range is empty). */
    uint32_t prefetch_percent;
    /* Zero: 15 minutes and 30 minutes. Not negative, and grow_below_ms <=
     * shrink_above_ms. */
    int64_t grow_below_ms, shrink_above_ms;
    /* The clock that times how long a range lasted (zero members: the
     * operating system's CLOCK_MONOTONIC, not the wall clock: the step
     * must not react to a clock step). Only now_ns is called, from
     * idm_segment_supply, and its origin does not matter; sleep_ns may be
     * NULL. A read that fails, or that is earlier than the one before,
     * leaves the step as it is. */
    idm_clock clock;
    idm_allocator alloc; /* zero members: malloc/free */
} idm_segment_config;

typedef struct idm_segment idm_segment;

/* Makes an empty allocator (no range yet: it wants one of step IDs at
 * once). cfg may be NULL (all defaults). The one allocation is made here,
 * through cfg->alloc. IDM_OK (*out owns the allocator: idm_segment_free
 * it), IDM_EINVAL (a value outside the bounds above, an allocator with
 * only one of alloc and free) or IDM_ENOMEM, with *out set to NULL.
 * Thread-safe: yes (creates a new object). */
IDM_API IDM_NODISCARD int idm_segment_new(idm_segment **out, const idm_segment_config *cfg,
                                          idm_error *err);
/* Releases the allocator (the IDs it still holds are never handed out).
 * NULL is ignored. Thread-safe: no (one thread per object). */
IDM_API void idm_segment_free(idm_segment *s);

/* Hands out up to n IDs into dst, in increasing order, continuing from the
 * next range when the current runs out. IDM_OK with *got == n (n may be
 * 0), or IDM_EAGAIN with *got < n (dst[0 .. *got - 1] are handed out: the
 * caller keeps them) when both buffers ran dry: a range must be supplied.
 * IDM_EINVAL when got is NULL, or dst is NULL and n is not 0. Never
 * blocks. Thread-safe: no (one thread per object). */
IDM_API IDM_NODISCARD int idm_segment_take(idm_segment *s, uint64_t *dst, size_t n, size_t *got,
                                           idm_error *err);

/* Hands out n IDs that are consecutive in the tag's sequence (Redis's
 * INCRBY: *last is the last of them, *last - (n - 1) * *stride the first),
 * all from one range. When the current range has fewer than n left and a
 * next range is there, the rest of the current one is skipped (never
 * handed out) and the next one is used. IDM_OK, or IDM_EAGAIN with nothing
 * handed out when no buffer holds n: the owner supplies a range of at
 * least n (idm_segment_wants asks for one; if the next range was there but
 * also too short, the current one has been skipped to make room). stride
 * may be NULL. IDM_EINVAL when n is 0 or above INT64_MAX, or last is NULL.
 * Thread-safe: no (one thread per object). */
IDM_API IDM_NODISCARD int idm_segment_take_run(idm_segment *s, uint64_t n, uint64_t *last,
                                               uint64_t *stride, idm_error *err);

/* Whether the owner should fetch a range now, and of what size: when no
 * fetch is in flight, the next buffer is empty, and the current one is at
 * least prefetch_percent used (or empty, or too short for a take_run that
 * failed since the last range of that size was supplied). *count (count
 * may be NULL) always receives the size to ask for: the step, or the
 * longest such run when that is more. Thread-safe: no (one thread per
 * object). */
IDM_API bool idm_segment_wants(const idm_segment *s, uint64_t *count);
/* The owner started a fetch (idm_segment_wants is false until it ends).
 * Thread-safe: no (one thread per object). */
IDM_API void idm_segment_fetch_started(idm_segment *s);
/* A fetch ended with a range: it becomes the next buffer (the current when
 * that is empty), and the step is recomputed from how long the previous
 * range lasted (not at the first supply). The fetch counts as ended even
 * when the range is refused. IDM_EINVAL, with the buffers unchanged, for
 * r NULL, a range of count 0, stride 0 or above INT64_MAX, or IDs past
 * INT64_MAX; a range that does not lie above every range supplied before
 * (so above every ID handed out and both buffers: a store that went
 * back); or both buffers still holding IDs (nobody asked for it).
 * Thread-safe: no (one thread per object). */
IDM_API IDM_NODISCARD int idm_segment_supply(idm_segment *s, const idm_seg_range *r,
                                             idm_error *err);
/* A fetch ended without a range: the owner may try again.
 * Thread-safe: no (one thread per object). */
IDM_API void idm_segment_fetch_failed(idm_segment *s);

/* The step the next fetch asks for. Thread-safe: no (one thread per
 * object). */
IDM_API uint64_t idm_segment_step(const idm_segment *s);
/* IDs left in both buffers. Thread-safe: no (one thread per object). */
IDM_API uint64_t idm_segment_available(const idm_segment *s);
/* Whether a fetch is in flight. Thread-safe: no (one thread per object). */
IDM_API bool idm_segment_fetching(const idm_segment *s);

IDM_END_DECLS

#endif
