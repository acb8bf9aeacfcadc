/*
 * ksuid_gen.c - minting strictly increasing KSUIDs.
 *
 * Segment's reference generator draws a random payload per KSUID, which
 * orders KSUIDs of the same second randomly. Ours keeps the first 128 bits
 * of the last KSUID (32-bit seconds and the payload's first 96 bits) as a
 * number that counts up by one per KSUID within a second, starting from 96
 * fresh random bits at each new second (a carry moves to the next second
 * with fresh bits); the payload's last 32 bits are fresh random bits for
 * every KSUID. The counting part alone makes the order strict, and fits one
 * 128-bit compare-and-swap.
 */
#include "internal.h"

#include <string.h>

#define KSUID_MAX_S UINT64_C(0xFFFFFFFF)

static int ksuid_next_n_once(idm_gen *g, idm_ksuid *out, size_t n, idm_error *err)
{
    int64_t now_ms = 0;
    int rc = idm__gen_begin(g, out, n, &now_ms, err);
    if (rc != IDM_OK || n == 0)
        return rc;
    int64_t now_s = now_ms / 1000 - IDM_KSUID_EPOCH_S;
    if (now_s < 0)
        return idm__fail(err, IDM_ETIME_RANGE, 0, "the clock reads before the KSUID epoch (2014-05-13T16:53:20Z)");
    if ((uint64_t)now_s > KSUID_MAX_S)
        return idm__fail(err, IDM_ETIME_RANGE, 0, "the clock reads past KSUID's 32-bit second range");
    uint64_t cap = 0;
    if (!idm__gen_cap_tick(g, (int64_t)IDM_KSUID_EPOCH_S * 1000, 1000, &cap))
        return idm__gen_fail_ceiling(g, "KSUID", err);
    enum { CHUNK = 256 };
    uint8_t tail[CHUNK * 4];
    /* One reservation per second: a carry out of the 96 counting bits
     * continues in the next second from fresh random bits. */
    for (size_t i = 0; i < n;) {
        idm_u128 fresh = 0;
        rc = idm__gen_random_number(g, 12, &fresh, err);
        if (rc != IDM_OK)
            return rc;
        idm_u128 v = 0;
        size_t got = 0;
        rc = idm__reserve128(g, &g->states->ksuid, n - i, (uint64_t)now_s, 96, fresh, KSUID_MAX_S,
                             cap, "KSUID's 32-bit second", &v, &got, err);
        if (rc != IDM_OK)
            return rc;
        for (size_t end = i + got; i < end;) {
            size_t chunk = end - i < CHUNK ? end - i : CHUNK;
            rc = idm__randsrc_take(&g->rand, tail, chunk * 4, err);
            if (rc != IDM_OK)
                return rc;
            for (size_t j = 0; j < chunk; j++, i++, v++) {
                uint8_t *b = out[i].bytes;
                idm__put_be64(b, (uint64_t)(v >> 64));
                idm__put_be64(b + 8, (uint64_t)v);
                memcpy(b + 16, tail + j * 4, 4);
            }
        }
    }
    return IDM_OK;
}

/* Causal minting (ksuid.h): the state holds the first 128 bits of the last
 * KSUID (seconds << 96 | the payload's counting 96 bits); raising it to the
 * seen KSUID's makes the next one's first 128 bits larger, so it sorts
 * after seen whatever the last 32 bits of either hold. The time compared
 * with the clock is the start of seen's second. */
int idm_ksuid_observe(idm_gen *g, const idm_ksuid *seen, int64_t max_offset_ms, idm_error *err)
{
    idm_u128 v = 0;
    int64_t seen_ms = 0;
    if (seen != NULL) {
        v = (idm_u128)idm__get_be64(seen->bytes) << 64 | idm__get_be64(seen->bytes + 8);
        seen_ms = ((int64_t)(uint64_t)(v >> 96) + IDM_KSUID_EPOCH_S) * 1000;
    }
    int rc = idm__gen_observe_begin(g, seen, seen_ms, max_offset_ms, "KSUID", err);
    if (rc != IDM_OK)
        return rc;
    if (v == ~(idm_u128)0)
        return idm__fail(err, IDM_ETIME_RANGE, 0,
                         "the KSUID seen is the last one of the 32-bit second range");
    idm__raise128(g, &g->states->ksuid, v);
    return IDM_OK;
}

/* A call that reaches the ceiling is made again once the handler raised
 * it (gen_core.h): the IDs of the failed attempt are never handed out. */
int idm_ksuid_next_n(idm_gen *g, idm_ksuid *out, size_t n, idm_error *err)
{
    int rc;
    do
        rc = ksuid_next_n_once(g, out, n, err);
    while (idm__gen_again(g, &rc, err));
    return rc;
}
