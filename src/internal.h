/*
 * internal.h - declarations shared across libidmint's components.
 * Not installed, not API: names here are idm__ (libuv's uv__ convention).
 */
#ifndef IDM_INTERNAL_H
#define IDM_INTERNAL_H

#include <idmint/idmint.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>

#if defined(__GNUC__)
#define IDM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define IDM_LIKELY(x) __builtin_expect(!!(x), 1)
#define IDM_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define IDM_PRINTF(a, b)
#define IDM_LIKELY(x) (x)
#define IDM_UNLIKELY(x) (x)
#endif

/* ---- errors (src/error.c) ------------------------------------------------ */

/* Fills err (if not NULL) with code, offset and a formatted reason, and
 * returns code, so that callers can write `return idm__fail(...)`. */
int idm__fail(idm_error *err, int code, size_t offset, const char *fmt, ...) IDM_PRINTF(4, 5);

/* ---- codecs (src/codec) -------------------------------------------------- */

/* Lowercase hex of n bytes into dst[0..2n-1]; no NUL. */
void idm__hex_encode(const uint8_t *src, size_t n, char *dst);
/* The value of a hex digit (either case), or -1. */
int idm__hex_value(unsigned char c);

/* Crockford base32 of 128 bits as 26 characters (2 zero pad bits on top),
 * upper or lower case; no NUL. */
void idm__base32_encode128(const uint8_t src[16], char dst[26], bool lowercase);
/* Decodes 26 Crockford base32 characters (case-insensitive unless
 * lowercase_only) into 128 bits. Returns IDM_OK or IDM_EPARSE via err with
 * the offset of the bad character, or offset 0 and an "exceeds 128 bits"
 * reason when the first character is above 7. what names the format in
 * messages ("ULID", "TypeID suffix"). */
int idm__base32_decode128(const char src[26], uint8_t dst[16], bool lowercase_only, const char *what,
                          idm_error *err);

/* Base62 (0-9A-Za-z) of an n-byte big-endian number into exactly out_len
 * characters, zero-padded on the left; no NUL. out_len must be enough. */
void idm__base62_encode(const uint8_t *src, size_t n, char *dst, size_t out_len);
/* Decodes len base62 characters into an n-byte big-endian number. Returns
 * IDM_OK, or IDM_EPARSE via err (bad character with its offset, or a value
 * that does not fit in n bytes). what names the format in messages. */
int idm__base62_decode(const char *src, size_t len, uint8_t *dst, size_t n, const char *what,
                       idm_error *err);

/* Big-endian helpers. */
static inline void idm__put_be48(uint8_t *p, uint64_t v)
{
    for (int i = 5; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}
static inline uint64_t idm__get_be48(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 6; i++)
        v = v << 8 | p[i];
    return v;
}
static inline void idm__put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static inline uint32_t idm__get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t idm__get_be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

/* Adds one to an n-byte big-endian number; returns true on overflow (the
 * number wrapped to zero). */
static inline bool idm__increment_be(uint8_t *p, size_t n)
{
    for (size_t i = n; i-- > 0;) {
        if (++p[i] != 0)
            return false;
    }
    return true;
}

/* ---- OS boundary (src/os/linux) ------------------------------------------ */

int idm__os_clock_now_ns(void *ctx, int64_t *unix_ns);
void idm__os_sleep_ns(void *ctx, int64_t ns);
/* Wipes memory in a way the compiler may not elide. */
void idm__wipe(void *p, size_t n);
/* Registers (once per process) the pthread_atfork handler behind
 * idm__fork_generation. IDM_OK or IDM_ENOMEM. Every generator's _new calls
 * it before reading the generation. */
int idm__fork_watch(void);
/* A counter that increases in every child process after fork(); one
 * relaxed load. */
uint64_t idm__fork_generation(void);

/* ---- generator core (src/gen) -------------------------------------------- */

/* What every generator runs on: a resolved clock, entropy and allocator. */
struct idm_env {
    idm_clock clock;
    idm_entropy entropy;
    idm_allocator allocator;
};

/* Resolves defaults and validates cfg (which may be NULL). */
int idm__env_init(struct idm_env *env, const idm_gen_config *cfg, idm_error *err);
void *idm__env_alloc(const struct idm_env *env, size_t size);
void idm__env_free(const struct idm_env *env, void *p);

/* Reads the clock as Unix milliseconds (floor). IDM_ECLOCK on failure,
 * IDM_ETIME_RANGE before 1970. */
int idm__env_now_ms(const struct idm_env *env, int64_t *unix_ms, idm_error *err);

/* A buffer of random bytes refilled IDM_ENTROPY_POOL_BYTES at a time.
 * pos == IDM_ENTROPY_POOL_BYTES means empty. Wiped when discarded. */
struct idm_pool {
    size_t pos;
    uint8_t bytes[IDM_ENTROPY_POOL_BYTES];
};

void idm__pool_init(struct idm_pool *pool);
void idm__pool_discard(struct idm_pool *pool);
/* Copies n random bytes into dst, consuming them (and wiping the consumed
 * pool bytes); refills from src as needed. */
int idm__pool_take(struct idm_pool *pool, const idm_entropy *src, void *dst, size_t n, idm_error *err);

/* The monotonic state of a "timestamp + random part" format (ULID, KSUID):
 * the last tick minted (-1: none yet) and its random part. */
struct idm_mono {
    int64_t tick;
    bool reseed; /* set in a forked child, see idm__gen_lock */
    uint8_t rand[16];
};

struct idm_gen {
    struct idm_env env;
    pthread_mutex_t lock;  /* guards everything below */
    uint64_t fork_gen;     /* idm__fork_generation() when last checked */
    struct idm_pool pool;
    /* UUIDv7: unix_ms << 16 | counter; 0 = nothing minted yet. */
    uint64_t v7_state;
    struct idm_mono ulid;  /* ticks are Unix ms, 10 random bytes */
    struct idm_mono ksuid; /* ticks are KSUID-epoch seconds, 16 random bytes */
};

/* Locks g and handles a fork since the last call (discarding buffered
 * randomness and re-randomising ULID/KSUID state). */
void idm__gen_lock(idm_gen *g);
void idm__gen_unlock(idm_gen *g);

/* Advances m to the next value after reading the clock as now_tick (g
 * locked): a later tick draws a fresh random part of rand_len bytes; the
 * same or an earlier tick increments the random part, and its overflow
 * moves to the next tick with a fresh one. IDM_ETIME_RANGE (naming `what`)
 * when the tick would pass max_tick; IDM_ENOENTROPY. */
int idm__mono_next(idm_gen *g, struct idm_mono *m, size_t rand_len, int64_t now_tick, int64_t max_tick,
                   const char *what, idm_error *err);

#endif
