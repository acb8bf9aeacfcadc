/*
 * snowflake.c - the snowflake generator: one node's strictly increasing
 * 64-bit IDs under a layout (layout.c).
 *
 * State, guarded by a mutex held once per batch:
 *   last_ms  the latest clock reading used (Unix ms): the high-water mark
 *            that rewinds are measured against and that callers persist;
 *   state    tick << seq_bits | seq of the last ID minted, or STATE_NONE.
 * The state word fits in 64 bits because time and seq take at most 63 of
 * them (the node takes at least one), so a later lock-free version can CAS
 * it as one word.
 *
 * An ID is tick << shift[time] | node << shift[node] | seq << shift[seq].
 * With the node fixed per generator, IDs increase exactly when (tick, seq)
 * does, provided the time field sits above the sequence field; _new refuses
 * layouts where it does not.
 *
 * One clock read per batch, plus one more each time a unit's sequence runs
 * out. Waits (exhausted sequence, small rewind) go through clock.sleep_ns
 * with the mutex held: other threads would have to wait for the same time
 * anyway, and it keeps their IDs ordered.
 *
 * Left out on purpose: borrowing future time units when the sequence runs
 * out (Sonyflake and Baidu's CachedUidGenerator do) - an ID would then
 * claim a time that has not happened, and a restart could repeat it.
 */
#include "sf_layout.h"

#include <assert.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define STATE_NONE UINT64_MAX

struct idm_snowflake {
    struct idm_env env;
    idm_sf_layout layout;
    /* Derived from the configuration; read-only after _new. */
    uint64_t fork_gen;  /* idm__fork_generation() at _new */
    uint64_t node_part; /* node << shift[node] */
    uint64_t max_tick;  /* 2^time_bits - 1 */
    uint64_t seq_max;   /* 2^seq_bits - 1, also the mask of seq in state */
    uint64_t half_mask; /* 2^(seq_bits - 1) - 1: random starts lie in 0..half_mask */
    size_t rand_bytes;  /* bytes of randomness one random start needs */
    int64_t max_rewind_ms;
    unsigned seq_bits, time_shift, seq_shift;
    bool seq_random;

    pthread_mutex_t lock; /* guards everything below */
    int64_t last_ms;
    uint64_t state;
    struct idm_pool pool;
};

void idm_snowflake_config_init(idm_snowflake_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    int rc = idm_sf_layout_preset(&cfg->layout, "twitter", 7, NULL);
    assert(rc == IDM_OK);
    (void)rc;
    cfg->node = 0;
    cfg->max_rewind_ms = IDM_SF_DEFAULT_MAX_REWIND_MS;
    cfg->seq_start = IDM_SF_SEQ_START_ZERO;
    cfg->resume_unix_ms = 0;
}

int idm_snowflake_new(idm_snowflake **out, const idm_snowflake_config *cfg, idm_error *err)
{
    if (out == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no place to store the generator");
    *out = NULL;
    idm_snowflake_config defaults;
    if (cfg == NULL) {
        idm_snowflake_config_init(&defaults);
        cfg = &defaults;
    }
    const idm_sf_layout *l = &cfg->layout;
    int rc = idm__sf_layout_check(l, err);
    if (rc != IDM_OK)
        return rc;
    if (l->shift[IDM_SF_SEQ] > l->shift[IDM_SF_TIME])
        return idm__fail(err, IDM_EINVAL, 0,
                         "the layout puts seq above time, so its IDs could not increase; "
                         "put time first");
    uint64_t max_node = idm_sf_layout_max_node(l);
    if (cfg->node > max_node) {
        char name[IDM_SF_SPEC_CAP];
        if (idm_sf_layout_format(l, name, sizeof name) != IDM_OK)
            name[0] = '\0';
        return idm__fail(err, IDM_EINVAL, 0,
                         "node %" PRIu64 " is out of range for layout %s (0 to %" PRIu64 ")",
                         cfg->node, name, max_node);
    }
    if (cfg->max_rewind_ms < 0)
        return idm__fail(err, IDM_EINVAL, 0, "max_rewind_ms must be 0 or more, got %" PRId64,
                         cfg->max_rewind_ms);
    if (cfg->seq_start != IDM_SF_SEQ_START_ZERO && cfg->seq_start != IDM_SF_SEQ_START_RANDOM)
        return idm__fail(err, IDM_EINVAL, 0, "seq_start must be IDM_SF_SEQ_START_ZERO or _RANDOM");
    if (cfg->resume_unix_ms < 0)
        return idm__fail(err, IDM_EINVAL, 0,
                         "resume_unix_ms must be 0 or a Unix time, got %" PRId64,
                         cfg->resume_unix_ms);

    struct idm_env env;
    rc = idm__env_init(&env, &cfg->gen, err);
    if (rc != IDM_OK)
        return rc;
    idm_snowflake *g = idm__env_alloc(&env, sizeof *g);
    if (g == NULL)
        return idm__fail(err, IDM_ENOMEM, 0, "out of memory for a snowflake generator");
    memset(g, 0, sizeof *g);
    g->env = env;
    g->layout = *l;
    unsigned time_bits = l->bits[IDM_SF_TIME];
    g->seq_bits = l->bits[IDM_SF_SEQ];
    g->time_shift = l->shift[IDM_SF_TIME];
    g->seq_shift = l->shift[IDM_SF_SEQ];
    g->node_part = cfg->node << l->shift[IDM_SF_NODE];
    g->max_tick = ((uint64_t)1 << time_bits) - 1;
    g->seq_max = ((uint64_t)1 << g->seq_bits) - 1;
    /* The lower half of 0 .. 2^bits - 1 is 0 .. 2^(bits-1) - 1. */
    g->half_mask = ((uint64_t)1 << (g->seq_bits - 1)) - 1;
    g->rand_bytes = (g->seq_bits - 1 + 7) / 8;
    g->max_rewind_ms = cfg->max_rewind_ms;
    g->seq_random = cfg->seq_start == IDM_SF_SEQ_START_RANDOM;

    /* resume_unix_ms: the clock must not read earlier than it (beyond the
     * tolerance), and its own unit counts as used up to the last sequence
     * number, so the first ID falls in a later unit. */
    g->last_ms = cfg->resume_unix_ms;
    g->state = STATE_NONE;
    if (cfg->resume_unix_ms > 0 && cfg->resume_unix_ms >= l->epoch_ms) {
        uint64_t tick =
            ((uint64_t)cfg->resume_unix_ms - (uint64_t)l->epoch_ms) / (uint64_t)l->unit_ms;
        if (tick > g->max_tick)
            tick = g->max_tick;
        g->state = tick << g->seq_bits | g->seq_max;
    }
    idm__pool_init(&g->pool);
    if (pthread_mutex_init(&g->lock, NULL) != 0) {
        idm__env_free(&env, g);
        return idm__fail(err, IDM_ENOMEM, 0, "cannot create the generator's mutex");
    }
    /* idm__env_init registered the fork handler, so a fork from now on
     * changes the generation. */
    g->fork_gen = idm__fork_generation();
    *out = g;
    return IDM_OK;
}

void idm_snowflake_free(idm_snowflake *g)
{
    if (g == NULL)
        return;
    struct idm_env env = g->env;
    idm__pool_discard(&g->pool);
    pthread_mutex_destroy(&g->lock);
    idm__env_free(&env, g);
}

const idm_sf_layout *idm_snowflake_layout(const idm_snowflake *g)
{
    return g ? &g->layout : NULL;
}

int64_t idm_snowflake_high_water_ms(idm_snowflake *g)
{
    if (g == NULL)
        return 0;
    pthread_mutex_lock(&g->lock);
    int64_t ms = g->last_ms;
    pthread_mutex_unlock(&g->lock);
    return ms;
}

static int64_t ms_to_ns(int64_t ms)
{
    return ms > INT64_MAX / 1000000 ? INT64_MAX : ms * 1000000;
}

/* Writes unix_ms as RFC 3339, or as plain Unix ms if the year is too far. */
static void time_text(int64_t unix_ms, char *dst, size_t cap)
{
    if (idm_time_format(unix_ms, dst, cap) != IDM_OK)
        snprintf(dst, cap, "Unix ms %" PRId64, unix_ms);
}

static int fail_time_range(const idm_snowflake *g, int64_t now_ms, idm_error *err)
{
    char now_text[IDM_RFC3339_CAP + 16], limit[IDM_RFC3339_CAP + 16];
    time_text(now_ms, now_text, sizeof now_text);
    if (now_ms < g->layout.epoch_ms) {
        time_text(g->layout.epoch_ms, limit, sizeof limit);
        return idm__fail(err, IDM_ETIME_RANGE, 0,
                         "the clock reads %s, before the layout's epoch %s", now_text, limit);
    }
    time_text(idm__sf_layout_end_ms(&g->layout), limit, sizeof limit);
    return idm__fail(err, IDM_ETIME_RANGE, 0,
                     "layout's %u-bit time field ran out at %s (the clock reads %s); "
                     "move the epoch to mint",
                     (unsigned)g->layout.bits[IDM_SF_TIME], limit, now_text);
}

/* The time unit now_ms falls in, or IDM_ETIME_RANGE outside the layout. */
static int tick_of(const idm_snowflake *g, int64_t now_ms, uint64_t *tick, idm_error *err)
{
    if (now_ms < g->layout.epoch_ms)
        return fail_time_range(g, now_ms, err);
    /* now >= epoch, so the difference fits in uint64 even for a negative epoch. */
    uint64_t t = ((uint64_t)now_ms - (uint64_t)g->layout.epoch_ms) / (uint64_t)g->layout.unit_ms;
    if (t > g->max_tick)
        return fail_time_range(g, now_ms, err);
    *tick = t;
    return IDM_OK;
}

/* The first sequence number of a new unit: 0, or with seq_start RANDOM a
 * uniform value in the lower half of the range (Leaf's trick: at low
 * traffic id % N still spreads evenly, and a full upper half is left). The
 * half is a power of two, so masking random bits is unbiased. */
static int first_seq(idm_snowflake *g, uint64_t *seq, idm_error *err)
{
    *seq = 0;
    if (!g->seq_random || g->rand_bytes == 0)
        return IDM_OK;
    uint8_t b[8] = {0};
    int rc = idm__pool_take(&g->pool, &g->env.entropy, b, g->rand_bytes, err);
    if (rc != IDM_OK)
        return rc;
    uint64_t r = 0;
    for (size_t i = 0; i < g->rand_bytes; i++)
        r = r << 8 | b[i];
    *seq = r & g->half_mask;
    return IDM_OK;
}

static int mint_locked(idm_snowflake *g, uint64_t *out, size_t n, size_t *done, idm_error *err)
{
    const int64_t epoch = g->layout.epoch_ms, unit = g->layout.unit_ms;
    size_t i = 0;
    int64_t now;
    int rc = idm__env_now_ms(&g->env, &now, err);
    while (rc == IDM_OK) {
        /* idm__env_now_ms never returns a time before 1970, and last_ms is
         * such a reading or resume_unix_ms >= 0: the difference cannot wrap. */
        if (now < g->last_ms) {
            int64_t back = g->last_ms - now;
            if (back > g->max_rewind_ms) {
                rc = idm__fail(err, IDM_ECLOCK_REWIND, 0,
                               "clock moved back by %" PRId64 " ms (tolerance %" PRId64
                               " ms); refusing to mint",
                               back, g->max_rewind_ms);
                if (err != NULL)
                    err->rewind_ms = back;
                break;
            }
            g->env.clock.sleep_ns(g->env.clock.ctx, ms_to_ns(back));
            rc = idm__env_now_ms(&g->env, &now, err);
            continue;
        }
        g->last_ms = now;
        uint64_t tick = 0;
        rc = tick_of(g, now, &tick, err);
        if (rc != IDM_OK)
            break;

        uint64_t seq;
        if (g->state == STATE_NONE || tick > g->state >> g->seq_bits) {
            rc = first_seq(g, &seq, err);
            if (rc != IDM_OK)
                break;
        } else {
            /* The state's tick never exceeds that of last_ms <= now; should
             * it ever, staying in the state's tick keeps IDs increasing. */
            assert(tick == g->state >> g->seq_bits);
            tick = g->state >> g->seq_bits;
            seq = (g->state & g->seq_max) + 1; /* seq_max + 1 means used up */
        }

        const uint64_t base = g->node_part | tick << g->time_shift;
        const size_t first = i;
        while (i < n && seq <= g->seq_max) {
            out[i++] = base | seq << g->seq_shift;
            seq++;
        }
        if (i > first)
            g->state = tick << g->seq_bits | (seq - 1);
        if (i == n)
            break;

        /* This unit's sequence is used up: wait for the next unit. */
        if (tick == g->max_tick) {
            char limit[IDM_RFC3339_CAP + 16];
            time_text(idm__sf_layout_end_ms(&g->layout), limit, sizeof limit);
            rc = idm__fail(err, IDM_ETIME_RANGE, 0,
                           "layout's %u-bit time field ran out at %s (its last unit's sequence is "
                           "used up); move the epoch to mint",
                           (unsigned)g->layout.bits[IDM_SF_TIME], limit);
            break;
        }
        /* Cannot wrap: tick + 1 <= max_tick, whose time the layout check
         * proved representable. */
        const int64_t next_ms = epoch + (int64_t)((tick + 1) * (uint64_t)unit);
        rc = idm__env_now_ms(&g->env, &now, err);
        if (rc == IDM_OK && now >= g->last_ms && now < next_ms) {
            g->env.clock.sleep_ns(g->env.clock.ctx, ms_to_ns(next_ms - now));
            rc = idm__env_now_ms(&g->env, &now, err);
        }
    }
    *done = i;
    return rc;
}

int idm_snowflake_next_n(idm_snowflake *g, uint64_t *out, size_t n, size_t *done, idm_error *err)
{
    size_t written = 0;
    if (done != NULL)
        *done = 0;
    if (g == NULL || (out == NULL && n > 0))
        return idm__fail(err, IDM_EINVAL, 0, "no generator or no output array");
    /* Checked before taking the mutex, which a fork may have left locked by
     * a thread that does not exist in the child. */
    if (IDM_UNLIKELY(idm__fork_generation() != g->fork_gen))
        return idm__fail(err, IDM_EFORKED, 0,
                         "generator was inherited across fork(): parent and child would share "
                         "its node and mint duplicate IDs; create a new generator with its own "
                         "node in the child");
    if (n == 0)
        return IDM_OK;
    pthread_mutex_lock(&g->lock);
    int rc = mint_locked(g, out, n, &written, err);
    pthread_mutex_unlock(&g->lock);
    if (done != NULL)
        *done = written;
    return rc;
}
