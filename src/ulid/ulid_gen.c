/*
 * ulid_gen.c - minting monotonic ULIDs (ulid/spec, "Monotonicity").
 *
 * A new millisecond draws 80 fresh random bits; the same millisecond (or a
 * clock that stands still or steps back) increments the previous random
 * part by one. On overflow of the 80 bits the spec fails; we advance the
 * timestamp by a millisecond and draw afresh, so minting never fails for
 * that reason.
 */
#include "internal.h"

#include <string.h>

#define ULID_MAX_MS ((INT64_C(1) << 48) - 1)

int idm_ulid_next_n(idm_gen *g, idm_ulid *out, size_t n, idm_error *err)
{
    if (g == NULL || (out == NULL && n > 0))
        return idm__fail(err, IDM_EINVAL, 0, "generator and output must not be NULL");
    int64_t now_ms;
    int rc = idm__env_now_ms(&g->env, &now_ms, err);
    if (rc != IDM_OK)
        return rc;
    if (now_ms > ULID_MAX_MS)
        return idm__fail(err, IDM_ETIME_RANGE, 0, "the clock reads past ULID's 48-bit millisecond range");

    idm__gen_lock(g);
    for (size_t i = 0; i < n; i++) {
        rc = idm__mono_next(g, &g->ulid, 10, now_ms, ULID_MAX_MS, "ULID's 48-bit millisecond", err);
        if (rc != IDM_OK)
            break;
        idm__put_be48(out[i].bytes, (uint64_t)g->ulid.tick);
        memcpy(out[i].bytes + 6, g->ulid.rand, 10);
    }
    idm__gen_unlock(g);
    return rc;
}
