/*
 * segment.c - Leaf-style segment allocation for one tag (segment.h): two
 * buffers of leased ranges and the dynamic step, with no I/O.
 *
 * Invariants, kept by every call:
 *   - cur empty implies nxt empty: whenever cur runs out, nxt moves up at
 *     once, so a supplied range always lands behind every ID still held;
 *   - every range supplied lies above `high`, the last ID of the range
 *     supplied before it, so IDs increase from cur through nxt and across
 *     ranges, and what a take_run skipped can never come back;
 *   - a buffer's IDs lie in 0 .. INT64_MAX and its stride in 1 ..
 *     INT64_MAX, so `next + stride` never wraps a uint64_t, even past the
 *     last ID.
 *
 * The step follows Meituan Leaf's SegmentIDGenImpl.updateSegmentFromDb:
 * the time between two supplies below grow_below_ms doubles it (here
 * capped at max_step, where Leaf keeps it when doubling would pass its
 * bound), above shrink_above_ms halves it (not below min_step).
 *
 * Left out on purpose: locks (one owner thread, idmintd's loop), I/O and
 * timers (the owner fetches), and any persistence (the store's next_id is
 * the durable state: what was leased and not handed out is lost, never
 * reused).
 */
#include "base.h"
#include "gen/env.h"
#include "os/os.h"

#include <inttypes.h>
#include <stdlib.h>

#define DEFAULT_STEP             1000
#define DEFAULT_MAX_STEP         1000000
#define DEFAULT_PREFETCH_PERCENT 10
#define DEFAULT_GROW_BELOW_MS    (15 * 60 * 1000)
#define DEFAULT_SHRINK_ABOVE_MS  (30 * 60 * 1000)
#define ID_MAX                   ((uint64_t)INT64_MAX) /* a store's BIGINT */

/* What is left of one leased range. left == 0 means empty (all zero). */
struct seg_buf {
    uint64_t next; /* the next ID to hand out */
    uint64_t left; /* IDs left: next, next + stride, ... */
    uint64_t stride;
    uint64_t want_left; /* the next range is wanted once left <= want_left */
};

struct idm_segment {
    struct seg_buf cur, nxt;
    uint64_t step, min_step, max_step;
    uint64_t need; /* the longest take_run that failed, 0 = none */
    uint64_t high; /* the last ID of the latest range supplied (if supplied) */
    bool supplied; /* a range was ever supplied: high is valid */
    bool fetching;
    bool timed; /* last_supply_ns holds the previous supply's time */
    uint32_t prefetch_percent;
    int64_t grow_below_ms, shrink_above_ms;
    int64_t last_supply_ns;
    idm_clock clock;
    struct idm_env env; /* only its allocator */
};

static void *malloc_alloc(void *ctx, size_t size, size_t align)
{
    (void)ctx;
    (void)align; /* malloc aligns for any standard type, all this needs */
    return malloc(size);
}

static void malloc_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

int idm_segment_new(idm_segment **out, const idm_segment_config *cfg, idm_error *err)
{
    if (out == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no place to store the segment allocator");
    *out = NULL;
    idm_segment_config defaults = {0};
    if (cfg == NULL)
        cfg = &defaults;

    uint64_t step = cfg->step ? cfg->step : DEFAULT_STEP;
    uint64_t min_step = cfg->min_step ? cfg->min_step : step;
    uint64_t max_step = cfg->max_step ? cfg->max_step : DEFAULT_MAX_STEP;
    if (cfg->max_step == 0 && max_step < step)
        max_step = step;
    uint32_t percent = cfg->prefetch_percent ? cfg->prefetch_percent : DEFAULT_PREFETCH_PERCENT;
    int64_t grow_ms = cfg->grow_below_ms ? cfg->grow_below_ms : DEFAULT_GROW_BELOW_MS;
    int64_t shrink_ms = cfg->shrink_above_ms ? cfg->shrink_above_ms : DEFAULT_SHRINK_ABOVE_MS;

    if (min_step > max_step)
        return idm__fail(err, IDM_EINVAL, 0, "min_step %" PRIu64 " is above max_step %" PRIu64,
                         min_step, max_step);
    if (step < min_step || step > max_step)
        return idm__fail(err, IDM_EINVAL, 0,
                         "step %" PRIu64 " is outside min_step .. max_step (%" PRIu64 " .. %" PRIu64
                         ")",
                         step, min_step, max_step);
    if (max_step > ID_MAX)
        return idm__fail(err, IDM_EINVAL, 0,
                         "max_step %" PRIu64 " is above the largest ID (%" PRIu64 ")", max_step,
                         ID_MAX);
    if (percent > 100)
        return idm__fail(err, IDM_EINVAL, 0, "prefetch_percent must be at most 100, got %" PRIu32,
                         percent);
    if (grow_ms < 0 || shrink_ms < 0)
        return idm__fail(err, IDM_EINVAL, 0,
                         "grow_below_ms and shrink_above_ms must not be negative, got %" PRId64
                         " and %" PRId64,
                         grow_ms, shrink_ms);
    if (grow_ms > shrink_ms)
        return idm__fail(err, IDM_EINVAL, 0,
                         "grow_below_ms %" PRId64 " is above shrink_above_ms %" PRId64, grow_ms,
                         shrink_ms);
    if ((cfg->alloc.alloc == NULL) != (cfg->alloc.free == NULL))
        return idm__fail(err, IDM_EINVAL, 0, "an allocator needs both alloc and free");

    struct idm_env env = {0};
    if (cfg->alloc.alloc != NULL) {
        env.allocator = cfg->alloc;
    } else {
        idm_allocator a = {malloc_alloc, malloc_free, NULL};
        env.allocator = a;
    }
    idm_segment *s = idm__env_alloc(&env, sizeof *s, _Alignof(idm_segment));
    if (s == NULL)
        return idm__fail(err, IDM_ENOMEM, 0, "out of memory for a segment allocator");
    memset(s, 0, sizeof *s);
    s->env = env;
    s->step = step;
    s->min_step = min_step;
    s->max_step = max_step;
    s->prefetch_percent = percent;
    s->grow_below_ms = grow_ms;
    s->shrink_above_ms = shrink_ms;
    if (cfg->clock.now_ns != NULL) {
        s->clock = cfg->clock;
    } else {
        idm_clock c = {idm__os_monotonic_ns, NULL, NULL};
        s->clock = c;
    }
    *out = s;
    return IDM_OK;
}

void idm_segment_free(idm_segment *s)
{
    if (s != NULL)
        idm__env_free(&s->env, s);
}

/* Moves nxt up when cur is empty (the first invariant). */
static void settle(idm_segment *s)
{
    if (s->cur.left == 0) {
        s->cur = s->nxt;
        memset(&s->nxt, 0, sizeof s->nxt);
    }
}

int idm_segment_take(idm_segment *s, uint64_t *dst, size_t n, size_t *got, idm_error *err)
{
    if (IDM_UNLIKELY(got == NULL || (dst == NULL && n > 0)))
        return idm__fail(err, IDM_EINVAL, 0, "no place to store the IDs");
    size_t done = 0;
    /* At most two rounds: cur, then what was nxt. */
    while (done < n && s->cur.left > 0) {
        uint64_t k = s->cur.left < n - done ? s->cur.left : (uint64_t)(n - done);
        uint64_t v = s->cur.next;
        uint64_t stride = s->cur.stride;
        uint64_t *d = dst + done;
        for (size_t i = 0; i < (size_t)k; i++) {
            d[i] = v;
            v += stride;
        }
        s->cur.next = v;
        s->cur.left -= k;
        done += (size_t)k;
        settle(s);
    }
    *got = done;
    if (IDM_UNLIKELY(done < n))
        return idm__fail(err, IDM_EAGAIN, 0,
                         "the segment ran dry after %zu of %zu IDs: a range must be supplied", done,
                         n);
    return IDM_OK;
}

int idm_segment_take_run(idm_segment *s, uint64_t n, uint64_t *last, uint64_t *stride,
                         idm_error *err)
{
    if (n == 0 || n > ID_MAX)
        return idm__fail(err, IDM_EINVAL, 0, "a run must be 1 to %" PRIu64 " IDs, got %" PRIu64,
                         ID_MAX, n);
    if (last == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no place to store the last ID");
    if (s->cur.left < n && s->nxt.left > 0) {
        /* Skip the rest of cur: a run never spans two ranges, whose IDs
         * need not be consecutive. */
        s->cur = s->nxt;
        memset(&s->nxt, 0, sizeof s->nxt);
    }
    if (s->cur.left < n) {
        if (n > s->need)
            s->need = n;
        return idm__fail(err, IDM_EAGAIN, 0,
                         "no range holds a run of %" PRIu64 " IDs: one must be supplied", n);
    }
    uint64_t v = s->cur.next + (n - 1) * s->cur.stride;
    *last = v;
    if (stride != NULL)
        *stride = s->cur.stride;
    s->cur.next = v + s->cur.stride;
    s->cur.left -= n;
    settle(s);
    return IDM_OK;
}

bool idm_segment_wants(const idm_segment *s, uint64_t *count)
{
    if (count != NULL)
        *count = s->need > s->step ? s->need : s->step;
    return !s->fetching && s->nxt.left == 0 &&
           (s->cur.left <= s->cur.want_left || s->need > s->cur.left);
}

void idm_segment_fetch_started(idm_segment *s)
{
    s->fetching = true;
}

void idm_segment_fetch_failed(idm_segment *s)
{
    s->fetching = false;
}

/* The left count at which the next range is wanted: once ceil(count *
 * percent / 100) IDs are used, computed without overflowing count * 100. */
static uint64_t want_left_of(uint64_t count, uint32_t percent)
{
    uint64_t used = count / 100 * percent + ((count % 100) * percent + 99) / 100;
    return count - used;
}

/* Leaf's dynamic step, from the time since the previous supply. */
static void adapt_step(idm_segment *s)
{
    int64_t now = 0;
    if (s->clock.now_ns(s->clock.ctx, &now) != IDM_OK) {
        /* Unknown duration: keep the step, and time the next range anew. */
        s->timed = false;
        return;
    }
    bool was_timed = s->timed;
    int64_t prev = s->last_supply_ns;
    s->timed = true;
    s->last_supply_ns = now;
    if (!was_timed || now < prev)
        return;
    uint64_t lasted_ms = ((uint64_t)now - (uint64_t)prev) / 1000000;
    if (lasted_ms < (uint64_t)s->grow_below_ms) {
        s->step = s->step > s->max_step / 2 ? s->max_step : s->step * 2;
    } else if (lasted_ms > (uint64_t)s->shrink_above_ms) {
        s->step = s->step / 2 < s->min_step ? s->min_step : s->step / 2;
    }
}

int idm_segment_supply(idm_segment *s, const idm_seg_range *r, idm_error *err)
{
    s->fetching = false;
    if (r == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no range");
    if (r->count == 0)
        return idm__fail(err, IDM_EINVAL, 0, "the range is empty (count 0)");
    if (r->stride == 0 || r->stride > ID_MAX)
        return idm__fail(err, IDM_EINVAL, 0,
                         "the range's stride must be 1 to %" PRIu64 ", got %" PRIu64, ID_MAX,
                         r->stride);
    if (r->first > ID_MAX || (r->count - 1) > (ID_MAX - r->first) / r->stride)
        return idm__fail(err, IDM_EINVAL, 0,
                         "the range of %" PRIu64 " IDs from %" PRIu64 " by %" PRIu64
                         " passes the largest ID (%" PRIu64 ")",
                         r->count, r->first, r->stride, ID_MAX);
    if (s->supplied && r->first <= s->high)
        return idm__fail(err, IDM_EINVAL, 0,
                         "the store went back: the range starts at %" PRIu64 ", not above %" PRIu64
                         ", the end of the range supplied before",
                         r->first, s->high);
    if (s->nxt.left > 0)
        return idm__fail(err, IDM_EINVAL, 0,
                         "both buffers still hold IDs: a range is supplied only when wanted");

    struct seg_buf b = {r->first, r->count, r->stride, want_left_of(r->count, s->prefetch_percent)};
    if (s->cur.left == 0)
        s->cur = b;
    else
        s->nxt = b;
    s->high = r->first + (r->count - 1) * r->stride;
    s->supplied = true;
    if (r->count >= s->need)
        s->need = 0;
    adapt_step(s);
    return IDM_OK;
}

uint64_t idm_segment_step(const idm_segment *s)
{
    return s->step;
}

uint64_t idm_segment_available(const idm_segment *s)
{
    return s->cur.left + s->nxt.left;
}

bool idm_segment_fetching(const idm_segment *s)
{
    return s->fetching;
}
