/*
 * uuid_gen.c - minting UUIDv4 and UUIDv7 (RFC 9562 sections 5.4, 5.7, 6.2).
 *
 * The UUIDv7 bit layout and the counter method are described in
 * include/idmint/uuid.h. The monotonic state is one 64-bit word,
 * unix_ms << 16 | counter, so that a later lock-free or shared-memory
 * generator can advance it with a single compare-and-swap.
 */
#include "internal.h"

#include <string.h>

#define V7_MAX_MS ((UINT64_C(1) << 48) - 1)
#define V4_BATCH 64

int idm_uuidv4_next_n(idm_gen *g, idm_uuid *out, size_t n, idm_error *err)
{
    if (g == NULL || (out == NULL && n > 0))
        return idm__fail(err, IDM_EINVAL, 0, "generator and output must not be NULL");
    int rc = IDM_OK;
    idm__gen_lock(g);
    for (size_t i = 0; i < n && rc == IDM_OK; i += V4_BATCH) {
        size_t chunk = n - i < V4_BATCH ? n - i : V4_BATCH;
        rc = idm__pool_take(&g->pool, &g->env.entropy, out + i, chunk * sizeof *out, err);
    }
    idm__gen_unlock(g);
    if (rc != IDM_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        out[i].bytes[6] = (uint8_t)(0x40 | (out[i].bytes[6] & 0x0F)); /* version 4 */
        out[i].bytes[8] = (uint8_t)(0x80 | (out[i].bytes[8] & 0x3F)); /* variant 10 */
    }
    return IDM_OK;
}

/* A fresh counter for a new millisecond: 15 random bits, top bit zero
 * (RFC 9562 section 6.2, "Counter Rollover Guards"). */
static int fresh_counter(idm_gen *g, uint64_t *counter, idm_error *err)
{
    uint8_t r[2];
    int rc = idm__pool_take(&g->pool, &g->env.entropy, r, sizeof r, err);
    if (rc != IDM_OK)
        return rc;
    *counter = ((uint64_t)r[0] << 8 | r[1]) & 0x7FFF;
    return IDM_OK;
}

int idm_uuidv7_next_n(idm_gen *g, idm_uuid *out, size_t n, idm_error *err)
{
    if (g == NULL || (out == NULL && n > 0))
        return idm__fail(err, IDM_EINVAL, 0, "generator and output must not be NULL");
    int64_t now_ms;
    int rc = idm__env_now_ms(&g->env, &now_ms, err);
    if (rc != IDM_OK)
        return rc;
    if ((uint64_t)now_ms > V7_MAX_MS)
        return idm__fail(err, IDM_ETIME_RANGE, 0, "the clock reads past UUIDv7's 48-bit millisecond range");

    idm__gen_lock(g);
    uint64_t ms = g->v7_state >> 16;
    uint64_t counter = g->v7_state & 0xFFFF;
    for (size_t i = 0; i < n; i++) {
        if ((uint64_t)now_ms > ms || g->v7_state == 0) {
            ms = (uint64_t)now_ms > ms ? (uint64_t)now_ms : ms;
            rc = fresh_counter(g, &counter, err);
        } else if (counter == 0xFFFF) {
            /* Counter exhausted within this millisecond: borrow the next
             * one rather than fail or stall. */
            ms++;
            rc = fresh_counter(g, &counter, err);
        } else {
            counter++;
        }
        if (rc == IDM_OK && ms > V7_MAX_MS)
            rc = idm__fail(err, IDM_ETIME_RANGE, 0, "UUIDv7's 48-bit millisecond range is exhausted");
        uint8_t rnd[8];
        if (rc == IDM_OK)
            rc = idm__pool_take(&g->pool, &g->env.entropy, rnd, sizeof rnd, err);
        if (rc != IDM_OK)
            break;
        uint8_t *b = out[i].bytes;
        idm__put_be48(b, ms);
        b[6] = (uint8_t)(0x70 | (counter >> 12));
        b[7] = (uint8_t)(counter >> 4);
        b[8] = (uint8_t)(0x80 | (counter & 0x0F) << 2 | (rnd[0] & 0x03));
        memcpy(b + 9, rnd + 1, 7);
        g->v7_state = ms << 16 | counter;
    }
    idm__gen_unlock(g);
    return rc;
}
