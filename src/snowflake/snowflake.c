/*
 * snowflake.c - the snowflake generator: one node's strictly increasing
 * 64-bit IDs under a layout (layout.c).
 *
 * State (struct idm_sf_states), inside the generator or, for a host-wide
 * generator, in a state file mapped by every process that mints for this
 * layout and node:
 *   last_ms  the latest clock reading used (Unix ms): the high-water mark
 *            that rewinds are measured against and that callers persist;
 *   state    (tick << seq_bits | seq) + 1 of the last ID minted, 0 = none.
 * The state word fits in 64 bits because time and seq take at most 63 of
 * them (the node takes at least one). A call reserves as many sequence
 * numbers of one unit as it needs with one compare-and-swap; no lock is
 * held, so a process killed at any instant leaves the state consistent
 * (at worst a reserved range goes unused).
 *
 * An ID is tick << shift[time] | node << shift[node] | seq << shift[seq].
 * With the node fixed per generator, IDs increase exactly when (tick, seq)
 * does, provided the time field sits above the sequence field; _new refuses
 * layouts where it does not.
 *
 * One clock read per call, plus one more each time a unit's sequence runs
 * out. Waits (exhausted sequence, small rewind) go through clock.sleep_ns.
 * A thread whose clock reading is older than a unit another thread has
 * already moved to simply continues in that unit: the state never goes
 * back.
 *
 * Causal minting (idm_snowflake_observe): a seen ID (tick T, node N,
 * seq S) from another node must be followed by IDs that sort after it. With
 * this generator's node n fixed, the first position after seen depends on
 * where the node field sits:
 *   node between time and seq (twitter):  n > N: (T, any seq), so the word
 *       becomes (T, 0) - 1 + 1, the last ID of unit T - 1; n == N: (T, S + 1);
 *       n < N: unit T + 1, so the word is T's last sequence number (used up);
 *   seq above node (sonyflake):  n > N: (T, S); n <= N: (T, S + 1);
 *   node above time:  n > N: any ID sorts after seen, nothing moves;
 *       n == N: (T, S + 1); n < N: none can (IDM_EUNSUPPORTED).
 * The word is raised (compare-and-swap max) to that position, and last_ms
 * to the start of unit T when it is later: check_state's invariant (the
 * word's unit never starts after last_ms) holds, and
 * idm_snowflake_high_water_ms, which owners persist as their durable mark,
 * covers the lead. last_ms is raised to T's start, never to T + 1's: no
 * unit is claimed that neither the clock nor an observed ID has reached.
 * Writes go observed_ms, then last_ms, then the word; readers load the
 * word and last_ms with acquire order, so a last_ms raised by an
 * observation is seen together with its observed_ms.
 *
 * The lead makes the clock read behind last_ms, which minting would take
 * for a rewind. observed_ms (the latest unit start an observation raised
 * last_ms to) and observed_offset_ms (the largest max_offset_ms such an
 * observation was checked against) tell the two apart: when now < last,
 * last <= observed_ms and last - now <= observed_offset_ms, the lead comes
 * from an observation, and minting goes on as if the clock read last
 * (continuing in that unit; no rewind wait, no refusal). Beyond that bound
 * a clock step back is a rewind as before, so a real step after an
 * observation is still refused past max_rewind_ms. Once the lead unit's
 * sequence is used up, minting waits (or the try_ calls stop with
 * IDM_EAGAIN) for the clock to reach the next unit's start: the exhaustion
 * wait accepts a clock behind last_ms when the observation covers it
 * (otherwise the loop would find the unit used up again and spin). Both
 * fields sit in the 64-byte state block beside the word, so host-wide
 * files keep their size and layout (zero in files written before them:
 * no lead).
 *
 * Left out on purpose: borrowing future time units when the sequence runs
 * out (Sonyflake and Baidu's CachedUidGenerator do) - an ID would then
 * claim a time that has not happened, and a restart could repeat it.
 */
#include "sf_layout.h"

#include <assert.h>
#include <stdatomic.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The largest offset bound an observation stores (2^48 - 1 ms, about
 * 8,900 years: idmintd's and the CLI's --max-offset range); INT64_MAX, no
 * limit, is stored as it. */
#define OBSERVED_OFFSET_MAX_MS ((INT64_C(1) << 48) - 1)

/* The shared part: in the generator, or in the state file. */
struct idm_sf_states {
    _Alignas(64) _Atomic uint64_t state; /* (tick << seq_bits | seq) + 1; 0 = none */
    _Atomic int64_t last_ms;
    /* The latest unit start an observation led to (0 = none), and the
     * largest max_offset_ms such a lead was checked against. */
    _Atomic int64_t observed_ms;
    _Atomic int64_t observed_offset_ms;
};
/* The state file's block: adding the observation fields kept its size. */
_Static_assert(sizeof(struct idm_sf_states) == 64, "struct idm_sf_states must stay 64 bytes");

struct idm_snowflake {
    struct idm_env env;
    idm_sf_layout layout;
    /* Derived from the configuration; read-only after _new. */
    uint64_t fork_gen;  /* idm__fork_generation() at _new */
    uint64_t node_part; /* node << shift[node] */
    uint64_t max_tick;  /* 2^time_bits - 1 */
    uint64_t seq_max;   /* 2^seq_bits - 1, also the mask of seq in state */
    uint64_t start_mask; /* 2^w - 1 (seq_start_bits): random starts lie in 0..start_mask */
    size_t rand_bytes;  /* bytes of randomness one random start needs */
    int64_t max_rewind_ms;
    int64_t last_valid_ms; /* the latest Unix ms the layout can represent */
    unsigned seq_bits, time_shift, seq_shift;
    bool seq_random;
    struct idm_randsrc rand;
    struct idm_state_map map; /* host-wide only */
    struct idm_sf_states *st; /* -> own or into map */
    struct idm_sf_states own;
    /* The ceiling (idm_snowflake_set_ceiling): IDs only in units that start
     * at or before it. Process-local even for a host-wide generator: it is
     * its owner's promise, not the host's. INT64_MAX = none. */
    _Atomic int64_t ceiling_ms;
    idm_ceiling_fn on_ceiling; /* idm_snowflake_set_ceiling_handler, or NULL */
    void *on_ceiling_ctx;
};

static int load_state(idm_snowflake *g, uint64_t *word, int64_t *last, idm_error *err);

/* The random start's window: 2^w values with w = seq_bits - 5, at most 7
 * (a thirty-second of the range, at most 128: 0..127 of twitter's 4096,
 * 0..7 of sonyflake's 256; none below 6 sequence bits). At saturation a
 * unit then loses at most 1/32 of its IDs (1/64 on average), where the
 * lower half of the range, the window before, lost a quarter on average:
 * idmintd's whole-server default must not cost its peak rate. */
static unsigned seq_start_bits(unsigned seq_bits)
{
    if (seq_bits <= 5)
        return 0;
    return seq_bits - 5 < 7 ? seq_bits - 5 : 7;
}


static void time_text(int64_t unix_ms, char *dst, size_t cap)
{
    if (idm_time_format(unix_ms, dst, cap) != IDM_OK)
        snprintf(dst, cap, "Unix ms %" PRId64, unix_ms);
}

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
    int64_t end_ms = idm__sf_layout_end_ms(l);
    int64_t last_valid_ms = end_ms == INT64_MAX ? INT64_MAX : end_ms - 1;
    if (last_valid_ms < 0) {
        /* An epoch so early that the whole range lies before 1970. */
        char end_text[IDM_RFC3339_CAP + 16], epoch_text[IDM_RFC3339_CAP + 16];
        time_text(end_ms, end_text, sizeof end_text);
        time_text(l->epoch_ms, epoch_text, sizeof epoch_text);
        return idm__fail(err, IDM_EINVAL, 0,
                         "the layout's time range ends at %s, before 1970: its epoch %s is too "
                         "early for a %u-bit time field of %" PRId64 " ms units; choose a later epoch",
                         end_text, epoch_text, (unsigned)l->bits[IDM_SF_TIME], l->unit_ms);
    }
    if (cfg->resume_unix_ms > last_valid_ms)
        return idm__fail(err, IDM_EINVAL, 0,
                         "resume_unix_ms %" PRId64 " is past the layout's last time unit",
                         cfg->resume_unix_ms);

    struct idm_env env;
    rc = idm__env_init(&env, &cfg->gen, err);
    if (rc != IDM_OK)
        return rc;
    idm_snowflake *g = idm__env_alloc(&env, sizeof *g, _Alignof(idm_snowflake));
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
    unsigned w = seq_start_bits(g->seq_bits);
    g->start_mask = ((uint64_t)1 << w) - 1;
    g->rand_bytes = (w + 7) / 8;
    g->max_rewind_ms = cfg->max_rewind_ms;
    g->last_valid_ms = last_valid_ms;
    atomic_init(&g->ceiling_ms, INT64_MAX);
    g->seq_random = cfg->seq_start == IDM_SF_SEQ_START_RANDOM;

    g->st = &g->own;
    rc = idm__randsrc_init(&g->rand, &env, false, err);
    if (rc != IDM_OK) {
        idm__env_free(&env, g);
        return rc;
    }
    if (cfg->gen.state_path != NULL) {
        struct idm_state_header want = {0};
        want.version = IDM_STATE_VERSION;
        want.kind = IDM_STATE_KIND_SNOWFLAKE;
        want.node = cfg->node;
        want.size = sizeof want + sizeof(struct idm_sf_states);
        /* The canonical spec, not the preset name: a preset and the spec it
         * stands for lay IDs out alike and may share a file. */
        idm_sf_layout unnamed = *l;
        unnamed.name[0] = '\0';
        rc = idm_sf_layout_format(&unnamed, want.layout, sizeof want.layout);
        if (rc == IDM_OK)
            rc = idm__state_open(cfg->gen.state_path, &want, &g->map, err);
        if (rc != IDM_OK) {
            idm__randsrc_destroy(&g->rand);
            idm__env_free(&env, g);
            return rc;
        }
        g->st = (struct idm_sf_states *)((char *)g->map.base + sizeof want);
        uint64_t word;
        int64_t last;
        rc = load_state(g, &word, &last, err);
        if (rc != IDM_OK) {
            idm_snowflake_free(g);
            return rc;
        }
    }

    /* resume_unix_ms: the clock must not read earlier than it (beyond the
     * tolerance), and its own unit counts as used up to the last sequence
     * number, so the first ID falls in a later unit. Both only move the
     * shared state forward. */
    if (cfg->resume_unix_ms > 0) {
        int64_t seen = atomic_load(&g->st->last_ms);
        while (seen < cfg->resume_unix_ms &&
               !atomic_compare_exchange_weak(&g->st->last_ms, &seen, cfg->resume_unix_ms))
            ;
        if (cfg->resume_unix_ms >= l->epoch_ms) {
            uint64_t tick =
                ((uint64_t)cfg->resume_unix_ms - (uint64_t)l->epoch_ms) / (uint64_t)l->unit_ms;
            if (tick > g->max_tick)
                tick = g->max_tick;
            uint64_t want_state = (tick << g->seq_bits | g->seq_max) + 1;
            uint64_t cur = atomic_load(&g->st->state);
            while (cur < want_state && !atomic_compare_exchange_weak(&g->st->state, &cur, want_state))
                ;
        }
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
    idm__randsrc_destroy(&g->rand);
    idm__state_close(&g->map);
    idm__env_free(&env, g);
}

const idm_sf_layout *idm_snowflake_layout(const idm_snowflake *g)
{
    return g ? &g->layout : NULL;
}

int64_t idm_snowflake_high_water_ms(idm_snowflake *g)
{
    if (g == NULL || (g->map.base != NULL && idm__state_check(&g->map, NULL) != IDM_OK))
        return 0;
    return atomic_load(&g->st->last_ms);
}

static int64_t ms_to_ns(int64_t ms)
{
    return ms > INT64_MAX / 1000000 ? INT64_MAX : ms * 1000000;
}

/* Writes unix_ms as RFC 3339, or as plain Unix ms if the year is too far. */

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
/* Whole units from the epoch to ms (>= the epoch). Most layouts count
 * milliseconds: no 64-bit division (tens of cycles) on every call then. */
static inline uint64_t units_since_epoch(const idm_snowflake *g, int64_t ms)
{
    /* ms >= epoch, so the difference fits in uint64 even for a negative epoch. */
    uint64_t d = (uint64_t)ms - (uint64_t)g->layout.epoch_ms;
    return g->layout.unit_ms == 1 ? d : d / (uint64_t)g->layout.unit_ms;
}

static int tick_of(const idm_snowflake *g, int64_t now_ms, uint64_t *tick, idm_error *err)
{
    if (now_ms < g->layout.epoch_ms)
        return fail_time_range(g, now_ms, err);
    uint64_t t = units_since_epoch(g, now_ms);
    if (t > g->max_tick)
        return fail_time_range(g, now_ms, err);
    *tick = t;
    return IDM_OK;
}

/* The first sequence number of a new unit: 0, or with seq_start RANDOM a
 * uniform value below a window of 2^seq_start_bits() (Leaf's trick, which
 * starts at 0..99 of 4096: at low traffic id % N still spreads evenly for
 * N up to the window). The window is a power of two, so masking random
 * bits is unbiased. */
static int first_seq(idm_snowflake *g, uint64_t *seq, idm_error *err)
{
    *seq = 0;
    if (!g->seq_random || g->rand_bytes == 0)
        return IDM_OK;
    uint8_t b[8] = {0};
    int rc = idm__randsrc_take(&g->rand, b, g->rand_bytes, err);
    if (rc != IDM_OK)
        return rc;
    uint64_t r = 0;
    for (size_t i = 0; i < g->rand_bytes; i++)
        r = r << 8 | b[i];
    *seq = r & g->start_mask;
    return IDM_OK;
}

/* Raises last_ms to now unless it is already later. */
static void raise_last_ms(struct idm_sf_states *st, int64_t now)
{
    int64_t seen = atomic_load_explicit(&st->last_ms, memory_order_relaxed);
    while (seen < now && !atomic_compare_exchange_weak_explicit(&st->last_ms, &seen, now,
                                                                memory_order_relaxed,
                                                                memory_order_relaxed))
        ;
}

/* Checks a state word against last_ms and the layout. Every state this
 * library writes satisfies it: last_ms is a clock reading inside the
 * layout's range (or resume_unix_ms, checked likewise), and a unit is
 * reserved only after last_ms has reached it, so the word's tick never
 * lies beyond the tick of last_ms. A host-wide file can be damaged or
 * written by someone else, and a word that breaks these rules would give
 * IDs outside the layout (bits above the time field), a unit in the far
 * future to wait for, or a sequence to fill past a caller's array. */
static int check_state(const idm_snowflake *g, uint64_t word, int64_t last, idm_error *err)
{
    if (last < 0 || last > g->last_valid_ms)
        return idm__fail(err, IDM_ESTATE, 0,
                         "the snowflake state file is damaged: its latest time used (Unix ms %" PRId64
                         ") lies outside the layout's range; remove the file only if no process mints "
                         "with it",
                         last);
    if (word == 0)
        return IDM_OK;
    uint64_t tick = (word - 1) >> g->seq_bits;
    if (tick > g->max_tick)
        return idm__fail(err, IDM_ESTATE, 0,
                         "the snowflake state file is damaged: its sequence word 0x%016" PRIx64
                         " has a time unit past the layout's last one",
                         word);
    /* tick <= max_tick: the unit's start is representable (layout check). */
    int64_t unit_start = g->layout.epoch_ms + (int64_t)(tick * (uint64_t)g->layout.unit_ms);
    if (unit_start > last)
        return idm__fail(err, IDM_ESTATE, 0,
                         "the snowflake state file is damaged: its sequence word is in a time unit "
                         "after its latest time used (Unix ms %" PRId64 ")",
                         last);
    return IDM_OK;
}

/* Reads the state word, then last_ms (the word with acquire order, so that
 * the last_ms raised before it was written is seen), and checks them. */
static int load_state(idm_snowflake *g, uint64_t *word, int64_t *last, idm_error *err)
{
    *word = atomic_load_explicit(&g->st->state, memory_order_acquire);
    *last = atomic_load_explicit(&g->st->last_ms, memory_order_acquire);
    int rc = check_state(g, *word, *last, err);
    if (rc != IDM_OK)
        return rc;
    /* The observation fields: a unit start inside the layout's range and a
     * bound of at most OBSERVED_OFFSET_MAX_MS (observe stores no more),
     * else a lead of any size would pass for an observation's. */
    int64_t observed = atomic_load_explicit(&g->st->observed_ms, memory_order_relaxed);
    int64_t bound = atomic_load_explicit(&g->st->observed_offset_ms, memory_order_relaxed);
    if (observed < 0 || observed > g->last_valid_ms || bound < 0 || bound > OBSERVED_OFFSET_MAX_MS)
        return idm__fail(err, IDM_ESTATE, 0,
                         "the snowflake state file is damaged: its observed time (Unix ms %" PRId64
                         ") or offset bound (%" PRId64 " ms) is out of range; remove the file only "
                         "if no process mints with it",
                         observed, bound);
    return IDM_OK;
}

/* The last tick the ceiling allows; false when it allows none. */
static bool ceiling_tick(idm_snowflake *g, uint64_t *tick)
{
    int64_t c = atomic_load_explicit(&g->ceiling_ms, memory_order_acquire);
    if (c == INT64_MAX || c >= g->last_valid_ms) {
        *tick = g->max_tick;
        return true;
    }
    if (c < g->layout.epoch_ms)
        return false;
    uint64_t t = units_since_epoch(g, c);
    *tick = t < g->max_tick ? t : g->max_tick;
    return true;
}

static int fail_ceiling(const idm_snowflake *g, int64_t now_ms, idm_error *err)
{
    char limit[IDM_RFC3339_CAP + 16], now_text[IDM_RFC3339_CAP + 16];
    time_text(atomic_load(&g->ceiling_ms), limit, sizeof limit);
    time_text(now_ms, now_text, sizeof now_text);
    return idm__fail(err, IDM_ECEILING, 0,
                     "the generator's ceiling %s is reached (the clock reads %s): no ID may be "
                     "minted past it until its owner raises it",
                     limit, now_text);
}

/* Where mint() would sleep: with nowait it stops instead, saying when to
 * call again. */
static int wait_or_stop(idm_snowflake *g, bool nowait, int64_t until_ns, int64_t now_ns,
                        int64_t *retry_ns, const char *why, idm_error *err)
{
    if (nowait) {
        if (retry_ns != NULL)
            *retry_ns = until_ns;
        return idm__fail(err, IDM_EAGAIN, 0, "%s", why);
    }
    g->env.clock.sleep_ns(g->env.clock.ctx, until_ns - now_ns);
    return IDM_OK;
}

/* Whether a clock reading now behind last (the latest time used) is an
 * observation's lead rather than a clock step back (see the file comment). */
static bool observed_lead(const struct idm_sf_states *st, int64_t last, int64_t now)
{
    if (now >= last)
        return false;
    int64_t observed = atomic_load_explicit(&st->observed_ms, memory_order_acquire);
    int64_t bound = atomic_load_explicit(&st->observed_offset_ms, memory_order_acquire);
    return last <= observed && last - now <= bound;
}

static int mint(idm_snowflake *g, uint64_t *out, size_t n, size_t *done, bool nowait,
                int64_t *retry_ns, idm_error *err)
{
    const int64_t epoch = g->layout.epoch_ms, unit = g->layout.unit_ms;
    struct idm_sf_states *st = g->st;
    size_t i = 0;
    int64_t now;
    int fresh_reads = 0;
    int rc = idm__env_now_ms(&g->env, &now, err);
    /* A host-wide file truncated under us would fault on the next access:
     * one fstat per clock millisecond turns that into IDM_ESTATE
     * (statefile.h). */
    if (rc == IDM_OK && g->map.base != NULL)
        rc = idm__state_check_at(&g->map, now, err);
    while (rc == IDM_OK) {
        uint64_t old;
        int64_t last;
        rc = load_state(g, &old, &last, err);
        if (rc != IDM_OK)
            break;
        /* idm__env_now_ms never returns a time before 1970, and last_ms is
         * such a reading or resume_unix_ms >= 0: the difference cannot wrap. */
        if (observed_lead(st, last, now)) {
            /* Mint in the unit an observation led to, as if the clock read
             * its start; the exhaustion wait below waits for the next one. */
            now = last;
        } else if (now < last) {
            int64_t back = last - now;
            if (back > g->max_rewind_ms && fresh_reads < 2) {
                /* Another thread or process may have moved last_ms on while
                 * this one was descheduled between reading the clock and
                 * here: only a fresh reading that is still behind proves a
                 * rewind. */
                fresh_reads++;
                rc = idm__env_now_ms(&g->env, &now, err);
                continue;
            }
            if (back > g->max_rewind_ms) {
                rc = idm__fail(err, IDM_ECLOCK_REWIND, 0,
                               "clock moved back by %" PRId64 " ms (tolerance %" PRId64
                               " ms); refusing to mint",
                               back, g->max_rewind_ms);
                if (err != NULL)
                    err->rewind_ms = back;
                break;
            }
            rc = wait_or_stop(g, nowait, ms_to_ns(last), ms_to_ns(now), retry_ns,
                              "the clock is behind the latest time used, within the tolerance",
                              err);
            if (rc == IDM_OK)
                rc = idm__env_now_ms(&g->env, &now, err);
            continue;
        }
        uint64_t now_tick = 0;
        rc = tick_of(g, now, &now_tick, err);
        if (rc != IDM_OK)
            break;
        raise_last_ms(st, now);
        uint64_t cap_tick = 0;
        bool allowed = ceiling_tick(g, &cap_tick);

        /* Reserve up to n - i sequence numbers of one unit. */
        bool have_first = false, exhausted = false, capped = false;
        uint64_t first = 0, tick = 0, start = 0, end = 0;
        for (;;) {
            if (old == 0 || (old - 1) >> g->seq_bits < now_tick) {
                if (!have_first) {
                    rc = first_seq(g, &first, err);
                    if (rc != IDM_OK)
                        break;
                    have_first = true;
                }
                tick = now_tick;
                start = tick << g->seq_bits | first;
            } else {
                /* The same unit, or a later one another thread (or process)
                 * has already moved to: continue after its last ID. */
                tick = (old - 1) >> g->seq_bits;
                start = old; /* (old - 1) + 1 */
                if ((start & g->seq_max) == 0) {
                    exhausted = true; /* that unit's sequence is used up */
                    break;
                }
            }
            if (!allowed || tick > cap_tick) {
                capped = true;
                break;
            }
            uint64_t avail = g->seq_max - (start & g->seq_max) + 1;
            uint64_t take = n - i < avail ? n - i : avail;
            end = start + take - 1;
            if (atomic_compare_exchange_weak_explicit(&st->state, &old, end + 1, memory_order_release,
                                                      memory_order_acquire))
                break;
            /* Someone else moved the word: check what they wrote. */
            last = atomic_load_explicit(&st->last_ms, memory_order_relaxed);
            rc = check_state(g, old, last, err);
            if (rc != IDM_OK)
                break;
        }
        if (rc != IDM_OK)
            break;
        if (capped) {
            rc = fail_ceiling(g, now, err);
            if (retry_ns != NULL)
                *retry_ns = 0;
            break;
        }
        if (!exhausted) {
            const uint64_t base = g->node_part | tick << g->time_shift;
            for (uint64_t v = start; v <= end; v++)
                out[i++] = base | (v & g->seq_max) << g->seq_shift;
            if (i == n)
                break;
        }

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
        int64_t now_ns = 0;
        rc = idm__env_now_ns(&g->env, &now_ns, err);
        now = now_ns / 1000000;
        int64_t last_now = atomic_load_explicit(&st->last_ms, memory_order_acquire);
        if (rc == IDM_OK && now < next_ms &&
            (now >= last_now || observed_lead(st, last_now, now))) {
            /* Sleep to the boundary itself, measured in nanoseconds: a
             * whole-millisecond sleep from a rounded-down reading wakes up
             * to a millisecond late, and at full speed that loses a tenth
             * of the layout's ceiling. */
            rc = wait_or_stop(g, nowait, ms_to_ns(next_ms), now_ns, retry_ns,
                              "the time unit's sequence is used up until the next unit", err);
            if (rc == IDM_OK)
                rc = idm__env_now_ms(&g->env, &now, err);
        }
    }
    *done = i;
    return rc;
}

/* A blocking call that reached the ceiling goes on once the ceiling
 * handler has raised it (gen.h's idm_ceiling_fn); the IDs minted so far
 * (*written of out) are kept. Out of line: the non-blocking path, a
 * server's every request, stays small. */
static IDM_NOINLINE int past_ceiling(idm_snowflake *g, uint64_t *out, size_t n, size_t *written,
                                     idm_error *err)
{
    int rc = IDM_ECEILING;
    while (rc == IDM_ECEILING) {
        rc = g->on_ceiling(g->on_ceiling_ctx, atomic_load(&g->ceiling_ms), err);
        if (rc != IDM_OK)
            break;
        size_t more = 0;
        rc = mint(g, out + *written, n - *written, &more, false, NULL, err);
        *written += more;
    }
    return rc;
}

static int next_n(idm_snowflake *g, uint64_t *out, size_t n, size_t *done, bool nowait,
                  int64_t *retry_ns, idm_error *err)
{
    size_t written = 0;
    if (done != NULL)
        *done = 0;
    if (retry_ns != NULL)
        *retry_ns = 0;
    if (g == NULL || (out == NULL && n > 0))
        return idm__fail(err, IDM_EINVAL, 0, "no generator or no output array");
    /* A host-wide generator's state is shared with the parent on purpose; a
     * process-local one would mint the parent's IDs again. */
    if (IDM_UNLIKELY(idm__fork_generation() != g->fork_gen) && g->map.base == NULL)
        return idm__fail(err, IDM_EFORKED, 0,
                         "generator was inherited across fork(): parent and child would share "
                         "its node and mint duplicate IDs; create a new generator with its own "
                         "node in the child, or use a host-wide state file");
    if (n == 0)
        return IDM_OK;
    int rc = mint(g, out, n, &written, nowait, retry_ns, err);
    if (IDM_UNLIKELY(rc == IDM_ECEILING) && !nowait && g->on_ceiling != NULL)
        rc = past_ceiling(g, out, n, &written, err);
    if (done != NULL)
        *done = written;
    return rc;
}

int idm_snowflake_next_n(idm_snowflake *g, uint64_t *out, size_t n, size_t *done, idm_error *err)
{
    return next_n(g, out, n, done, false, NULL, err);
}

int idm_snowflake_try_next_n(idm_snowflake *g, uint64_t *out, size_t n, size_t *done,
                             int64_t *retry_unix_ns, idm_error *err)
{
    return next_n(g, out, n, done, true, retry_unix_ns, err);
}

static int text_n(idm_snowflake *g, char *dst, size_t cap, size_t n, uint32_t flags, size_t *len,
                  bool nowait, int64_t *retry_ns, idm_error *err)
{
    if (len != NULL)
        *len = 0;
    if (retry_ns != NULL)
        *retry_ns = 0;
    if (flags & ~(uint32_t)IDM_TEXT_NEWLINE)
        return idm__fail(err, IDM_EINVAL, 0, "unknown flags 0x%x", (unsigned)flags);
    if (g == NULL || (dst == NULL && n > 0))
        return idm__fail(err, IDM_EINVAL, 0, "no generator or no output buffer");
    /* Up to 20 digits per ID, and room for the NUL the decimal formatter
     * writes after the last one. */
    size_t stride = 20 + ((flags & IDM_TEXT_NEWLINE) ? 1 : 0);
    if (n > 0 && (cap == 0 || n > (cap - 1) / stride))
        return idm__fail(err, IDM_ENOSPC, 0, "%zu IDs may need %zu bytes, the buffer has %zu", n,
                         n * stride, cap);
    enum { CHUNK = 512 };
    uint64_t ids[CHUNK];
    char *p = dst;
    int rc = IDM_OK;
    for (size_t got = 0; got < n && rc == IDM_OK;) {
        size_t k = n - got < CHUNK ? n - got : CHUNK, minted = 0;
        rc = next_n(g, ids, k, &minted, nowait, retry_ns, err);
        for (size_t j = 0; j < minted; j++) {
            p += idm_sf_format_decimal(ids[j], p, 21);
            if (flags & IDM_TEXT_NEWLINE)
                *p++ = '\n';
        }
        got += minted;
    }
    if (len != NULL)
        *len = (size_t)(p - dst);
    return rc;
}

int idm_snowflake_next_text_n(idm_snowflake *g, char *dst, size_t cap, size_t n, uint32_t flags,
                              size_t *len, idm_error *err)
{
    return text_n(g, dst, cap, n, flags, len, false, NULL, err);
}

int idm_snowflake_try_next_text_n(idm_snowflake *g, char *dst, size_t cap, size_t n, uint32_t flags,
                                  size_t *len, int64_t *retry_unix_ns, idm_error *err)
{
    return text_n(g, dst, cap, n, flags, len, true, retry_unix_ns, err);
}

void idm_snowflake_set_ceiling(idm_snowflake *g, int64_t ceiling_unix_ms)
{
    if (g != NULL)
        atomic_store_explicit(&g->ceiling_ms, ceiling_unix_ms, memory_order_release);
}

void idm_snowflake_set_ceiling_handler(idm_snowflake *g, idm_ceiling_fn fn, void *ctx)
{
    if (g != NULL) {
        g->on_ceiling = fn;
        g->on_ceiling_ctx = fn != NULL ? ctx : NULL;
    }
}

int64_t idm_snowflake_ceiling(const idm_snowflake *g)
{
    return g ? atomic_load_explicit(&((idm_snowflake *)g)->ceiling_ms, memory_order_acquire)
             : INT64_MAX;
}

/* Raises an int64 to at least want, never lowering it. */
static void raise_i64(_Atomic int64_t *p, int64_t want)
{
    int64_t seen = atomic_load(p);
    while (seen < want && !atomic_compare_exchange_weak(p, &seen, want))
        ;
}

int idm_snowflake_observe(idm_snowflake *g, uint64_t seen, int64_t max_offset_ms, idm_error *err)
{
    if (g == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "no generator");
    if (max_offset_ms < 0)
        return idm__fail(err, IDM_EINVAL, 0, "max_offset_ms must be 0 or more, got %" PRId64,
                         max_offset_ms);
    if (IDM_UNLIKELY(idm__fork_generation() != g->fork_gen) && g->map.base == NULL)
        return idm__fail(err, IDM_EFORKED, 0,
                         "generator was inherited across fork(): parent and child would share "
                         "its node; create a new generator with its own node in the child");
    if (g->map.base != NULL) {
        int rc = idm__state_check(&g->map, err);
        if (rc != IDM_OK)
            return rc;
    }
    idm_sf_parts p;
    int rc = idm_sf_decode(&g->layout, seen, &p, err);
    if (rc != IDM_OK)
        return rc;
    int64_t now = 0;
    rc = idm__env_now_ms(&g->env, &now, err);
    if (rc != IDM_OK)
        return rc;
    /* p.unix_ms is seen's unit start (representable: layout check); now is
     * a clock reading after 1970, so when p.unix_ms > now the difference
     * cannot wrap. */
    if (p.unix_ms > now && p.unix_ms - now > max_offset_ms)
        return idm__fail(err, IDM_EOFFSET, 0,
                         "the snowflake seen is %" PRId64 " ms ahead of the local clock, more "
                         "than the limit of %" PRId64 " ms",
                         p.unix_ms - now, max_offset_ms);

    /* The first position after seen this node can take (file comment), as
     * a state word: the word is (tick << seq_bits | seq) + 1 of the last ID,
     * so the next ID is at the word itself, or in the next unit when the
     * word's sequence part is 0. */
    const uint64_t my_node = g->node_part >> g->layout.shift[IDM_SF_NODE];
    const unsigned node_shift = g->layout.shift[IDM_SF_NODE];
    const uint64_t pos = p.time_units << g->seq_bits | p.sequence; /* seen's (tick, seq) */
    uint64_t want;
    if (node_shift > g->time_shift) {
        /* Node above time. */
        if (my_node > p.node)
            return IDM_OK; /* every ID of this node sorts after seen */
        if (my_node < p.node)
            return idm__fail(err, IDM_EUNSUPPORTED, 0,
                             "the layout puts the node above the time, and node %" PRIu64
                             " of the ID seen is greater than this generator's %" PRIu64
                             ": none of its IDs can sort after it",
                             p.node, my_node);
        want = pos + 1;
    } else if (node_shift > g->seq_shift) {
        /* Node between time and seq. */
        if (my_node > p.node)
            want = p.time_units << g->seq_bits; /* any seq of unit T */
        else if (my_node == p.node)
            want = pos + 1;
        else
            want = (p.time_units << g->seq_bits | g->seq_max) + 1; /* unit T + 1 */
    } else {
        /* Seq above node. */
        want = my_node > p.node ? pos : pos + 1;
    }
    /* A word whose sequence part is 0 leads to the unit want >> seq_bits. */
    if ((want & g->seq_max) == 0 && want >> g->seq_bits > g->max_tick)
        return idm__fail(err, IDM_ETIME_RANGE, 0,
                         "the snowflake seen is in the layout's last time unit and no later "
                         "position is left for node %" PRIu64,
                         my_node);

    struct idm_sf_states *st = g->st;
    int64_t last = atomic_load_explicit(&st->last_ms, memory_order_acquire);
    if (p.unix_ms > last) {
        /* Seen's unit starts after every time used. When it is also ahead
         * of the clock, that is a lead: recorded before last_ms moves, so
         * that minting that sees the new last_ms knows it for an
         * observation's (observed_lead). */
        if (p.unix_ms > now) {
            raise_i64(&st->observed_offset_ms, max_offset_ms < OBSERVED_OFFSET_MAX_MS
                                                   ? max_offset_ms
                                                   : OBSERVED_OFFSET_MAX_MS);
            raise_i64(&st->observed_ms, p.unix_ms);
        }
        raise_i64(&st->last_ms, p.unix_ms);
    }
    /* want's unit starts at or before seen's (want - 1 is in unit T or
     * before), so the word never gets ahead of last_ms. */
    uint64_t cur = atomic_load(&st->state);
    while (cur < want && !atomic_compare_exchange_weak_explicit(
                             &st->state, &cur, want, memory_order_release, memory_order_relaxed))
        ;
    return IDM_OK;
}
