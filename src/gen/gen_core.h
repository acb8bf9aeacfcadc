/*
 * gen/gen_core.h - the idm_gen handle and its monotonic states (src/gen/gen.c and the format minting files).
 * Not installed, not API: names here are idm__ (libuv's uv__ convention).
 */
#ifndef IDM_GEN_CORE_H
#define IDM_GEN_CORE_H

#include "gen/atomic128.h"
#include "gen/env.h"
#include "gen/randsrc.h"
#include "gen/statefile.h"

/* ---- the idm_gen handle -------------------------------------------------- */

/* Monotonic states, each on its own cache line. They live inside the
 * generator, or in a mapped state file for host-wide generators (so only
 * fixed-width, pointer-free fields).
 *   v7:    unix_ms << 16 | counter (RFC 9562 Method 1), 0 = none yet
 *   ulid:  the last ULID as a 128-bit number, 0 = none yet
 *   ksuid: the first 128 bits of the last KSUID (seconds << 96 | the
 *          payload's counting 96 bits), 0 = none yet */
struct idm_gen_states {
    _Alignas(64) _Atomic uint64_t v7;
    _Alignas(64) idm_u128 ulid;
    _Alignas(64) idm_u128 ksuid;
};

struct idm_gen {
    struct idm_env env;
    struct idm_randsrc rand;
    bool unshared;
    struct idm_gen_states *states; /* -> own_states or into the state file */
    struct idm_state_map map;      /* host-wide only */
    /* fork(): fork_seen is the generation this generator has adapted to;
     * fork_done is set when that adaptation is complete. */
    _Atomic uint64_t fork_seen;
    _Atomic uint64_t fork_done;
    /* The ceiling (idm_gen_set_ceiling): no time-ordered ID with a later
     * timestamp, in Unix ms. INT64_MAX = none. Process-local. */
    _Atomic int64_t ceiling_ms;
    int64_t shift_us;          /* idm_gen_set_clock_shift_us; 0 = the clock itself */
    idm_ceiling_fn on_ceiling; /* idm_gen_set_ceiling_handler, or NULL */
    void *on_ceiling_ctx;
    struct idm_gen_states own_states;
};

/* The ceiling as a tick of a format whose ticks are unit_ms long from
 * epoch_ms: the last tick whose start is at or before it. False when the
 * ceiling allows no tick at all; *tick = UINT64_MAX when there is none. */
static inline bool idm__gen_cap_tick(idm_gen *g, int64_t epoch_ms, int64_t unit_ms, uint64_t *tick)
{
    int64_t c = atomic_load_explicit(&g->ceiling_ms, memory_order_acquire);
    if (c == INT64_MAX) {
        *tick = UINT64_MAX;
        return true;
    }
    if (c < epoch_ms)
        return false;
    *tick = ((uint64_t)c - (uint64_t)epoch_ms) / (uint64_t)unit_ms;
    return true;
}

/* After a minting call that returned *rc: true when it reached the
 * ceiling and the handler raised it (make the call again); otherwise false,
 * with *rc the handler's error if it failed. */
static inline bool idm__gen_again(idm_gen *g, int *rc, idm_error *err)
{
    if (IDM_LIKELY(*rc != IDM_ECEILING) || g == NULL || g->on_ceiling == NULL)
        return false;
    int h = g->on_ceiling(g->on_ceiling_ctx, atomic_load(&g->ceiling_ms), err);
    if (h == IDM_OK)
        return true;
    *rc = h;
    return false;
}

/* Call at the start of every minting call: adapts a generator inherited
 * across fork() (process-local ULID/KSUID states jump one tick ahead with a
 * fresh random part, so the child never increments into the parent's next
 * IDs). One relaxed load when nothing happened. */
int idm__gen_after_fork(idm_gen *g, idm_error *err);
static inline int idm__gen_enter(idm_gen *g, idm_error *err)
{
    if (IDM_LIKELY(atomic_load_explicit(&g->fork_done, memory_order_relaxed) ==
                   atomic_load_explicit(&idm__fork_generation_counter, memory_order_relaxed)))
        return IDM_OK;
    return idm__gen_after_fork(g, err);
}

/* The start of every time-ordered minting call: checks the arguments,
 * adapts after fork, and reads the clock once (only when n > 0). */
int idm__gen_begin(idm_gen *g, const void *out, size_t n, int64_t *now_ms, idm_error *err);

/* len (<= 16) random bytes as a big-endian number. */
int idm__gen_random_number(idm_gen *g, size_t len, idm_u128 *out, idm_error *err);

/* Reserves up to n consecutive values of a 128-bit monotonic state, all
 * in one tick: the first is max(previous + 1, fresh), where fresh =
 * now_tick << rand_bits | random (rand_bits of randomness given in
 * fresh_rand); a carry out of the random part moves to the next tick with
 * the fresh random part. *first receives the first value, *got how many
 * were reserved (fewer than n when the tick's random part runs out: the
 * caller reserves the rest with fresh random bits). IDM_ETIME_RANGE
 * (naming what) past max_tick, IDM_ECEILING past cap_tick (UINT64_MAX:
 * no ceiling), reserving nothing. */
int idm__reserve128(idm_gen *g, idm_u128 *state, size_t n, uint64_t now_tick, unsigned rand_bits,
                    idm_u128 fresh_rand, uint64_t max_tick, uint64_t cap_tick, const char *what,
                    idm_u128 *first, size_t *got, idm_error *err);

/* Raise a monotonic state to at least want (compare-and-swap max; plain
 * stores in an UNSHARED generator), never lowering it. */
void idm__raise128(idm_gen *g, idm_u128 *state, idm_u128 want);
void idm__raise64(idm_gen *g, _Atomic uint64_t *state, uint64_t want);

/* The start of every *_observe call (causal minting): checks the
 * arguments, adapts after fork like the minting calls, checks a host-wide
 * file, reads the clock and refuses with IDM_EOFFSET (naming what, the
 * lead and the limit) a seen ID whose time seen_ms lies more than
 * max_offset_ms ahead of it. Changes no state. */
int idm__gen_observe_begin(idm_gen *g, const void *seen, int64_t seen_ms, int64_t max_offset_ms,
                           const char *what, idm_error *err);

/* IDM_ECEILING with a message naming the ceiling and the format. */
int idm__gen_fail_ceiling(idm_gen *g, const char *what, idm_error *err);

#endif
