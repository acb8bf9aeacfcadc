/*
 * ulid_gen.c - minting monotonic ULIDs (ulid/spec, "Monotonicity").
 *
 * The state is the last ULID as a 128-bit number. A new millisecond starts
 * from 80 fresh random bits; the same millisecond (or a clock that stands
 * still or steps back) continues at the previous ULID + 1, as the spec
 * says. Where the spec fails on overflow of the 80 bits, the carry moves
 * the timestamp one millisecond ahead and the random part is drawn afresh,
 * so minting never fails for that reason. A call for n ULIDs reserves n
 * consecutive values with one 128-bit compare-and-swap.
 */
#include "internal.h"

#define ULID_MAX_MS ((INT64_C(1) << 48) - 1)

static int ulid_next_n_once(idm_gen *g, idm_ulid *out, size_t n, idm_error *err)
{
    int64_t now_ms = 0;
    int rc = idm__gen_begin(g, out, n, &now_ms, err);
    if (rc != IDM_OK || n == 0)
        return rc;
    if (now_ms > ULID_MAX_MS)
        return idm__fail(err, IDM_ETIME_RANGE, 0, "the clock reads past ULID's 48-bit millisecond range");
    uint64_t cap = 0;
    if (!idm__gen_cap_tick(g, 0, 1, &cap))
        return idm__gen_fail_ceiling(g, "ULID", err);
    /* One reservation per tick: a carry out of the 80 random bits continues
     * in the next millisecond from fresh random bits. */
    for (size_t i = 0; i < n;) {
        idm_u128 fresh = 0;
        rc = idm__gen_random_number(g, 10, &fresh, err);
        if (rc != IDM_OK)
            return rc;
        idm_u128 v = 0;
        size_t got = 0;
        rc = idm__reserve128(g, &g->states->ulid, n - i, (uint64_t)now_ms, 80, fresh,
                             (uint64_t)ULID_MAX_MS, cap, "ULID's 48-bit millisecond", &v, &got, err);
        if (rc != IDM_OK)
            return rc;
        for (size_t end = i + got; i < end; i++, v++) {
            idm__put_be64(out[i].bytes, (uint64_t)(v >> 64));
            idm__put_be64(out[i].bytes + 8, (uint64_t)v);
        }
    }
    return IDM_OK;
}

/* Causal minting (ulid.h): the state is the last ULID as a number, so
 * raising it to the seen ULID makes the next one seen + 1 (a carry out of
 * the 80 random bits moves to the next millisecond with fresh bits, as in
 * minting). */
int idm_ulid_observe(idm_gen *g, const idm_ulid *seen, int64_t max_offset_ms, idm_error *err)
{
    idm_u128 v = 0;
    if (seen != NULL)
        v = (idm_u128)idm__get_be64(seen->bytes) << 64 | idm__get_be64(seen->bytes + 8);
    int rc =
        idm__gen_observe_begin(g, seen, (int64_t)(uint64_t)(v >> 80), max_offset_ms, "ULID", err);
    if (rc != IDM_OK)
        return rc;
    if (v == ~(idm_u128)0)
        return idm__fail(err, IDM_ETIME_RANGE, 0, "the ULID seen is the largest ULID");
    idm__raise128(g, &g->states->ulid, v);
    return IDM_OK;
}

/* A call that reaches the ceiling is made again once the handler raised
 * it (gen_core.h): the IDs of the failed attempt are never handed out. */
int idm_ulid_next_n(idm_gen *g, idm_ulid *out, size_t n, idm_error *err)
{
    int rc;
    do
        rc = ulid_next_n_once(g, out, n, err);
    while (idm__gen_again(g, &rc, err));
    return rc;
}
