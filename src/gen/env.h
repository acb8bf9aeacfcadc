/*
 * gen/env.h - the generator core: resolved clock, entropy, allocator, and the byte pool (src/gen).
 * Not installed, not API: names here are idm__ (libuv's uv__ convention).
 */
#ifndef IDM_GEN_ENV_H
#define IDM_GEN_ENV_H

#include "base.h"

/* ---- generator core (src/gen) -------------------------------------------- */

/* What every generator runs on: a resolved clock, entropy and allocator. */
struct idm_env {
    idm_clock clock;
    idm_entropy entropy;
    idm_allocator allocator;
};

/* Resolves defaults and validates cfg (which may be NULL). */
int idm__env_init(struct idm_env *env, const idm_gen_config *cfg, idm_error *err);
/* The same for objects that take only a clock and an allocator (the HLC,
 * the mark): zeroed members are the OS's. */
int idm__env_init_clock(struct idm_env *env, idm_clock clock, idm_allocator allocator,
                        idm_error *err);
/* size bytes aligned to align (a power of two: the _Alignof of the object,
 * some of which are 64-byte aligned), or NULL. A pointer the injected
 * allocator returns misaligned is given back and counts as NULL. */
void *idm__env_alloc(const struct idm_env *env, size_t size, size_t align);
void idm__env_free(const struct idm_env *env, void *p);

/* Reads the clock as Unix milliseconds (floor) or nanoseconds. IDM_ECLOCK
 * on failure, IDM_ETIME_RANGE before 1970. */
int idm__env_now_ms(const struct idm_env *env, int64_t *unix_ms, idm_error *err);
int idm__env_now_ns(const struct idm_env *env, int64_t *unix_ns, idm_error *err);

/* A buffer of random bytes refilled IDM_ENTROPY_POOL_BYTES at a time.
 * pos == IDM_ENTROPY_POOL_BYTES means empty. Wiped when discarded. */
struct idm_pool {
    size_t pos;
    uint8_t bytes[IDM_ENTROPY_POOL_BYTES];
};

void idm__pool_init(struct idm_pool *pool);
void idm__pool_discard(struct idm_pool *pool);
/* Copies n random bytes into dst, consuming them; refills from src as
 * needed. wipe: zero the consumed pool bytes at once (for secrets; other
 * consumed bytes are overwritten at the next refill or wiped on discard). */
int idm__pool_take(struct idm_pool *pool, const idm_entropy *src, void *dst, size_t n, bool wipe,
                   idm_error *err);

#endif
