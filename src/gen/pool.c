/*
 * pool.c - a buffer of CSPRNG bytes, refilled 4 KiB at a time.
 *
 * Every randomness source costs far more per call than per byte (a system
 * call or a fork check is about 1 us here), so generators draw a whole pool
 * at once and hand out slices. Bytes drawn for secrets (tokens) are wiped
 * from the pool at once, so a memory dump does not reveal them; other
 * consumed bytes are already in the IDs handed out and are simply
 * overwritten at the next refill.
 * Unconsumed bytes are wiped when the pool is discarded (after fork, or
 * when the generator is freed).
 */
#include "internal.h"

#include <string.h>

void idm__pool_init(struct idm_pool *pool)
{
    pool->pos = IDM_ENTROPY_POOL_BYTES;
}

void idm__pool_discard(struct idm_pool *pool)
{
    idm__wipe(pool->bytes, sizeof pool->bytes);
    pool->pos = IDM_ENTROPY_POOL_BYTES;
}

int idm__pool_take(struct idm_pool *pool, const idm_entropy *src, void *dst, size_t n, bool wipe,
                   idm_error *err)
{
    uint8_t *out = dst;
    while (n > 0) {
        if (pool->pos == IDM_ENTROPY_POOL_BYTES) {
            int rc = src->fill(src->ctx, pool->bytes, sizeof pool->bytes);
            if (rc != IDM_OK)
                return idm__fail(err, IDM_ENOENTROPY, 0, "the randomness source failed");
            pool->pos = 0;
        }
        size_t avail = IDM_ENTROPY_POOL_BYTES - pool->pos;
        size_t chunk = n < avail ? n : avail;
        memcpy(out, pool->bytes + pool->pos, chunk);
        if (wipe)
            idm__wipe(pool->bytes + pool->pos, chunk);
        pool->pos += chunk;
        out += chunk;
        n -= chunk;
    }
    return IDM_OK;
}
