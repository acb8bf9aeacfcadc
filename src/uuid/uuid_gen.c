/*
 * uuid_gen.c - minting UUIDv4 and UUIDv7 (RFC 9562 sections 5.4, 5.7, 6.2).
 *
 * The UUIDv7 bit layout and the counter method are described in
 * include/idmint/uuid.h. The monotonic state is one 64-bit word,
 * unix_ms << 16 | counter, which is also a plain number: the UUID after
 * (ms, 0xFFFF) is (ms + 1, 0), so a counter overflow borrows the next
 * millisecond by simple addition. A call for n UUIDs reserves
 * [start, start + n) with one compare-and-swap, where start is the larger
 * of previous + 1 and (now_ms, 15 random bits) - RFC 9562's counter
 * rollover guard: a fresh millisecond starts in the lower half.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <string.h>

#define V7_MAX_MS ((UINT64_C(1) << 48) - 1)

static int check_args(idm_gen *g, const void *out, size_t n, idm_error *err)
{
    if (g == NULL || (out == NULL && n > 0))
        return idm__fail(err, IDM_EINVAL, 0, "generator and output must not be NULL");
    return idm__gen_enter(g, err);
}

int idm_uuidv4_next_n(idm_gen *g, idm_uuid *out, size_t n, idm_error *err)
{
    int rc = check_args(g, out, n, err);
    if (rc != IDM_OK)
        return rc;
    rc = idm__randsrc_take(&g->rand, out, n * sizeof *out, err);
    if (rc != IDM_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        out[i].bytes[6] = (uint8_t)(0x40 | (out[i].bytes[6] & 0x0F)); /* version 4 */
        out[i].bytes[8] = (uint8_t)(0x80 | (out[i].bytes[8] & 0x3F)); /* variant 10 */
    }
    return IDM_OK;
}

/* Reserves n consecutive v7 states; *first receives the first. */
static int reserve_v7(idm_gen *g, size_t n, uint64_t now_ms, uint64_t fresh_counter, uint64_t *first,
                      idm_error *err)
{
    _Atomic uint64_t *state = &g->states->v7;
    const uint64_t fresh = now_ms << 16 | fresh_counter;
    uint64_t cap = 0;
    if (!idm__gen_cap_tick(g, 0, 1, &cap))
        return idm__gen_fail_ceiling(g, "UUIDv7", err);
    uint64_t old = atomic_load_explicit(state, memory_order_relaxed);
    if (!g->unshared && cap == UINT64_MAX && old != 0 && (old >> 16) >= now_ms) {
        /* The common case under load: the millisecond has not moved on, so
         * previous + 1 is the start whatever other threads do meanwhile. A
         * fetch-and-add cannot fail, unlike a compare-and-swap that
         * contending threads would retry. */
        uint64_t prev = atomic_fetch_add_explicit(state, n, memory_order_relaxed);
        if ((prev + n) >> 16 > V7_MAX_MS || prev + n < prev)
            return idm__fail(err, IDM_ETIME_RANGE, 0, "UUIDv7's 48-bit millisecond range is exhausted");
        *first = prev + 1;
        return IDM_OK;
    }
    for (;;) {
        uint64_t start = old == 0 || (old >> 16) < now_ms ? fresh : old + 1;
        uint64_t last = start + (n - 1);
        if (last >> 16 > V7_MAX_MS || last < start)
            return idm__fail(err, IDM_ETIME_RANGE, 0, "UUIDv7's 48-bit millisecond range is exhausted");
        /* With a ceiling, the whole call or nothing: the last UUID's
         * millisecond (a counter overflow borrows later ones) must be in. */
        if (last >> 16 > cap)
            return idm__gen_fail_ceiling(g, "UUIDv7", err);
        if (g->unshared) {
            atomic_store_explicit(state, last, memory_order_relaxed);
            *first = start;
            return IDM_OK;
        }
        if (atomic_compare_exchange_weak_explicit(state, &old, last, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            *first = start;
            return IDM_OK;
        }
    }
}

static int uuidv7_next_n_once(idm_gen *g, idm_uuid *out, size_t n, idm_error *err)
{
    int64_t now_ms = 0;
    int rc = idm__gen_begin(g, out, n, &now_ms, err);
    if (rc != IDM_OK || n == 0)
        return rc;
    if ((uint64_t)now_ms > V7_MAX_MS)
        return idm__fail(err, IDM_ETIME_RANGE, 0, "the clock reads past UUIDv7's 48-bit millisecond range");
    uint8_t seed[2];
    rc = idm__randsrc_take(&g->rand, seed, sizeof seed, err);
    if (rc != IDM_OK)
        return rc;
    uint64_t v = 0;
    rc = reserve_v7(g, n, (uint64_t)now_ms, ((uint64_t)seed[0] << 8 | seed[1]) & 0x7FFF, &v, err);
    if (rc != IDM_OK)
        return rc;

    /* Fill: bytes 0-5 the millisecond, then version and the counter's top
     * 12 bits (one big-endian word), then variant, the counter's low 4 bits
     * and 58 random bits. Random bytes come in chunks from the pool. */
    enum { CHUNK = 256 };
    uint8_t rnd[CHUNK * 8];
    for (size_t i = 0; i < n; i += CHUNK) {
        size_t k = n - i < CHUNK ? n - i : CHUNK;
        rc = idm__randsrc_take(&g->rand, rnd, k * 8, err);
        if (IDM_UNLIKELY(rc != IDM_OK))
            return rc;
        for (size_t j = 0; j < k; j++, v++) {
            uint8_t *b = out[i + j].bytes;
            unsigned counter = (unsigned)(v & 0xFFFF);
            idm__put_be64(b, (v >> 16) << 16 | 0x7000 | counter >> 4);
            memcpy(b + 8, rnd + 8 * j, 8);
            b[8] = (uint8_t)(0x80 | (counter & 0x0F) << 2 | (b[8] & 0x03));
        }
    }
    return IDM_OK;
}

int idm_uuidv7_at(int64_t unix_ms, const uint8_t *rand, idm_uuid *out, idm_error *err)
{
    if (out == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "out must not be NULL");
    if (unix_ms < 0 || (uint64_t)unix_ms > V7_MAX_MS)
        return idm__fail(err, IDM_ETIME_RANGE, 0,
                         "Unix ms %" PRId64
                         " is outside UUIDv7's 48-bit millisecond range (0 to %" PRIu64 ")",
                         unix_ms, V7_MAX_MS);
    uint8_t *b = out->bytes;
    idm__put_be64(b, (uint64_t)unix_ms << 16);
    if (rand != NULL)
        memcpy(b + 6, rand, 10);
    else
        memset(b + 6, 0, 10);
    b[6] = (uint8_t)(0x70 | (b[6] & 0x0F)); /* version 7 */
    b[8] = (uint8_t)(0x80 | (b[8] & 0x3F)); /* variant 10 */
    return IDM_OK;
}

/* Causal minting (uuid.h): the seen UUID's position is its state word,
 * unix_ms << 16 | the 16 counter bits as idm_uuidv7_next_n fills them (the
 * 12 bits of rand_a, then the 4 bits after the variant). Raising the state
 * to it makes the next UUID state + 1: the same millisecond with a larger
 * counter, or, after counter 0xFFFF, the next millisecond. The 58 random
 * bits play no part: a larger counter (or time) sorts after whatever they
 * hold. */
int idm_uuidv7_observe(idm_gen *g, const idm_uuid *seen, int64_t max_offset_ms, idm_error *err)
{
    uint64_t word = 0;
    if (seen != NULL) {
        const uint8_t *b = seen->bytes;
        if (b[6] >> 4 != 7)
            return idm__fail(err, IDM_EINVAL, 0, "the UUID seen is version %d, not 7", b[6] >> 4);
        uint64_t counter =
            ((uint64_t)(b[6] & 0x0F) << 8 | b[7]) << 4 | (uint64_t)(b[8] >> 2 & 0x0F);
        word = idm__get_be64(b) >> 16 << 16 | counter;
    }
    int rc = idm__gen_observe_begin(g, seen, (int64_t)(word >> 16), max_offset_ms, "UUIDv7", err);
    if (rc != IDM_OK)
        return rc;
    if (word == UINT64_MAX)
        return idm__fail(err, IDM_ETIME_RANGE, 0,
                         "the UUIDv7 seen is the last one of the 48-bit millisecond range");
    idm__raise64(g, &g->states->v7, word);
    return IDM_OK;
}

/* A call that reaches the ceiling is made again once the handler raised
 * it (gen_core.h): the IDs of the failed attempt are never handed out. */
int idm_uuidv7_next_n(idm_gen *g, idm_uuid *out, size_t n, idm_error *err)
{
    int rc;
    do
        rc = uuidv7_next_n_once(g, out, n, err);
    while (idm__gen_again(g, &rc, err));
    return rc;
}
