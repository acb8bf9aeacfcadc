/*
 * gen.c - the idm_gen handle: lifecycle, locking, fork handling and raw
 * random bytes. The formats' minting lives beside their codecs
 * (src/uuid/uuid_gen.c, src/ulid/ulid_gen.c, src/ksuid/ksuid_gen.c).
 *
 * Concurrency: one mutex per generator, taken once per batch call, so a
 * bulk call costs one lock round-trip however many IDs it mints.
 */
#include "internal.h"

#include <string.h>

int idm_gen_new(idm_gen **out, const idm_gen_config *cfg, idm_error *err)
{
    if (out == NULL)
        return idm__fail(err, IDM_EINVAL, 0, "out must not be NULL");
    *out = NULL;
    struct idm_env env;
    int rc = idm__env_init(&env, cfg, err);
    if (rc != IDM_OK)
        return rc;
    idm_gen *g = idm__env_alloc(&env, sizeof *g);
    if (g == NULL)
        return idm__fail(err, IDM_ENOMEM, 0, "out of memory allocating a generator");
    memset(g, 0, sizeof *g);
    g->env = env;
    if (pthread_mutex_init(&g->lock, NULL) != 0) {
        idm__env_free(&env, g);
        return idm__fail(err, IDM_ENOMEM, 0, "cannot create the generator's mutex");
    }
    g->fork_gen = idm__fork_generation();
    idm__pool_init(&g->pool);
    g->v7_state = 0;
    g->ulid.tick = -1;
    g->ksuid.tick = -1;
    *out = g;
    return IDM_OK;
}

void idm_gen_free(idm_gen *g)
{
    if (g == NULL)
        return;
    struct idm_env env = g->env;
    pthread_mutex_destroy(&g->lock);
    idm__wipe(g, sizeof *g);
    idm__env_free(&env, g);
}

void idm__gen_lock(idm_gen *g)
{
    pthread_mutex_lock(&g->lock);
    uint64_t now_gen = idm__fork_generation();
    if (IDM_UNLIKELY(now_gen != g->fork_gen)) {
        /* We are a child of fork(): the pool holds the parent's future
         * random bytes, and the ULID/KSUID states would be incremented to
         * the very values the parent mints next. */
        g->fork_gen = now_gen;
        idm__pool_discard(&g->pool);
        g->ulid.reseed = g->ulid.tick >= 0;
        g->ksuid.reseed = g->ksuid.tick >= 0;
    }
}

void idm__gen_unlock(idm_gen *g)
{
    pthread_mutex_unlock(&g->lock);
}

int idm_gen_random(idm_gen *g, void *buf, size_t len, idm_error *err)
{
    if (g == NULL || (buf == NULL && len > 0))
        return idm__fail(err, IDM_EINVAL, 0, "generator and buffer must not be NULL");
    idm__gen_lock(g);
    int rc = idm__pool_take(&g->pool, &g->env.entropy, buf, len, err);
    idm__gen_unlock(g);
    return rc;
}

int idm__mono_next(idm_gen *g, struct idm_mono *m, size_t rand_len, int64_t now_tick, int64_t max_tick,
                   const char *what, idm_error *err)
{
    int rc = IDM_OK;
    if (IDM_UNLIKELY(m->reseed)) {
        /* In a forked child: step one tick past the parent's last value
         * with a fresh random part (see idm__gen_lock), then carry on. */
        m->reseed = false;
        m->tick++;
        rc = idm__pool_take(&g->pool, &g->env.entropy, m->rand, rand_len, err);
    }
    if (rc != IDM_OK)
        return rc;
    if (now_tick > m->tick) {
        m->tick = now_tick;
        rc = idm__pool_take(&g->pool, &g->env.entropy, m->rand, rand_len, err);
    } else if (idm__increment_be(m->rand, rand_len)) {
        m->tick++;
        rc = idm__pool_take(&g->pool, &g->env.entropy, m->rand, rand_len, err);
    }
    if (rc == IDM_OK && m->tick > max_tick)
        rc = idm__fail(err, IDM_ETIME_RANGE, 0, "%s's range is exhausted", what);
    return rc;
}
