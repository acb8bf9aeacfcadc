/*
 * ksuid_gen.c - minting strictly increasing KSUIDs.
 *
 * Segment's reference generator draws a random payload per KSUID, which
 * orders KSUIDs of the same second randomly. Ours treats the payload like a
 * ULID's random part: fresh at each new second, incremented by one within
 * the same second (or while the clock stands still or steps back), and on
 * overflow the timestamp moves one second ahead.
 */
#include "internal.h"

#include <string.h>

#define KSUID_MAX_S INT64_C(0xFFFFFFFF)

int idm_ksuid_next_n(idm_gen *g, idm_ksuid *out, size_t n, idm_error *err)
{
    if (g == NULL || (out == NULL && n > 0))
        return idm__fail(err, IDM_EINVAL, 0, "generator and output must not be NULL");
    int64_t now_ms;
    int rc = idm__env_now_ms(&g->env, &now_ms, err);
    if (rc != IDM_OK)
        return rc;
    int64_t now_s = now_ms / 1000 - IDM_KSUID_EPOCH_S;
    if (now_s < 0)
        return idm__fail(err, IDM_ETIME_RANGE, 0, "the clock reads before the KSUID epoch (2014-05-13T16:53:20Z)");
    if (now_s > KSUID_MAX_S)
        return idm__fail(err, IDM_ETIME_RANGE, 0, "the clock reads past KSUID's 32-bit second range");

    idm__gen_lock(g);
    for (size_t i = 0; i < n; i++) {
        rc = idm__mono_next(g, &g->ksuid, 16, now_s, KSUID_MAX_S, "KSUID's 32-bit second", err);
        if (rc != IDM_OK)
            break;
        idm__put_be32(out[i].bytes, (uint32_t)g->ksuid.tick);
        memcpy(out[i].bytes + 4, g->ksuid.rand, 16);
    }
    idm__gen_unlock(g);
    return rc;
}
