/*
 * env.c - what every generator runs on: the clock, the randomness source
 * and the allocator, with the OS defaults filled in.
 *
 * The default randomness is OpenSSL's public DRBG (RAND_bytes): seeded from
 * the OS CSPRNG, reseeded by OpenSSL after fork, and measured here at about
 * 7 ns per 16 bytes when drawn 4 KiB at a time, against 45 ns for
 * getrandom(2). Generators therefore draw IDM_ENTROPY_POOL_BYTES per call
 * into a pool (pool.c) and hand out slices.
 */
#include "internal.h"

#include <assert.h>
#include <limits.h>
#include <openssl/rand.h>
#include <stdint.h>
#include <stdlib.h>

static int openssl_fill(void *ctx, void *buf, size_t len)
{
    (void)ctx;
    uint8_t *p = buf;
    int rc = IDM_OK;
    /* Inside the fork gate (os.h): a fork waits until this thread has left
     * OpenSSL, whose locks would otherwise stay held in the child. */
    idm__fork_gate_enter();
    while (len > 0 && rc == IDM_OK) {
        int chunk = len > INT_MAX ? INT_MAX : (int)len;
        if (RAND_bytes(p, chunk) != 1)
            rc = IDM_ENOENTROPY;
        p += chunk;
        len -= (size_t)chunk;
    }
    idm__fork_gate_leave();
    return rc;
}

/* posix_memalign rather than C11's aligned_alloc: the latter may refuse a
 * size that is not a multiple of the alignment. posix_memalign wants at
 * least the alignment of a pointer. */
static void *aligned_malloc(void *ctx, size_t size, size_t align)
{
    (void)ctx;
    if (align < sizeof(void *))
        align = sizeof(void *);
    void *p = NULL;
    if (posix_memalign(&p, align, size > 0 ? size : 1) != 0)
        return NULL;
    return p;
}

static void malloc_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

idm_clock idm_clock_system(void)
{
    idm_clock c = {idm__os_clock_now_ns, idm__os_sleep_ns, NULL};
    return c;
}

idm_entropy idm_entropy_system(void)
{
    idm_entropy e = {openssl_fill, NULL};
    return e;
}

int idm__env_init(struct idm_env *env, const idm_gen_config *cfg, idm_error *err)
{
    idm_gen_config defaults = {0};
    if (cfg == NULL)
        cfg = &defaults;
    if (cfg->flags != 0)
        return idm__fail(err, IDM_EINVAL, 0, "flags must be 0, got %u", (unsigned)cfg->flags);
    if ((cfg->clock.now_ns == NULL) != (cfg->clock.sleep_ns == NULL))
        return idm__fail(err, IDM_EINVAL, 0, "a clock needs both now_ns and sleep_ns");
    if ((cfg->allocator.alloc == NULL) != (cfg->allocator.free == NULL))
        return idm__fail(err, IDM_EINVAL, 0, "an allocator needs both alloc and free");
    env->clock = cfg->clock.now_ns ? cfg->clock : idm_clock_system();
    env->entropy = cfg->entropy.fill ? cfg->entropy : idm_entropy_system();
    if (cfg->allocator.alloc) {
        env->allocator = cfg->allocator;
    } else {
        idm_allocator a = {aligned_malloc, malloc_free, NULL};
        env->allocator = a;
    }
    int rc = idm__fork_watch();
    if (rc != IDM_OK)
        return idm__fail(err, rc, 0, "cannot register the fork handler");
    return IDM_OK;
}

int idm__env_init_clock(struct idm_env *env, idm_clock clock, idm_allocator allocator,
                        idm_error *err)
{
    idm_gen_config gc;
    memset(&gc, 0, sizeof gc);
    gc.clock = clock;
    gc.allocator = allocator;
    return idm__env_init(env, &gc, err);
}

void *idm__env_alloc(const struct idm_env *env, size_t size, size_t align)
{
    assert(align > 0 && (align & (align - 1)) == 0);
    void *p = env->allocator.alloc(env->allocator.ctx, size, align);
    if (p != NULL && ((uintptr_t)p & (align - 1)) != 0) {
        /* The injected allocator broke its contract: objects with
         * _Alignas members must not live at a misaligned address. */
        env->allocator.free(env->allocator.ctx, p);
        return NULL;
    }
    return p;
}

void idm__env_free(const struct idm_env *env, void *p)
{
    if (p != NULL)
        env->allocator.free(env->allocator.ctx, p);
}

int idm__env_now_ns(const struct idm_env *env, int64_t *unix_ns, idm_error *err)
{
    int64_t ns;
    int rc = env->clock.now_ns(env->clock.ctx, &ns);
    if (rc != IDM_OK)
        return idm__fail(err, IDM_ECLOCK, 0, "the clock could not be read");
    if (ns < 0)
        return idm__fail(err, IDM_ETIME_RANGE, 0, "the clock reads before 1970 (%lld ns)", (long long)ns);
    *unix_ns = ns;
    return IDM_OK;
}

int idm__env_now_ms(const struct idm_env *env, int64_t *unix_ms, idm_error *err)
{
    int64_t ns = 0;
    int rc = idm__env_now_ns(env, &ns, err);
    if (rc == IDM_OK)
        *unix_ms = ns / 1000000;
    return rc;
}
